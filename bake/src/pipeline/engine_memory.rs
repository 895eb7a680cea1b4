//! What the engine holds while a bake runs, and when it lets go (ARCHITECTURE.md, "Memory"):
//! stored items released once light transport has read its inputs, world values released once no
//! later tile product may read them, and a tile product's needs held again before it bakes.

use std::sync::atomic::Ordering;

use super::{Engine, Entry};
use crate::pipeline::product::TileProduct;
use crate::pipeline::BakeError;

impl Engine<'_> {
    /// Whether this bake lets go of what its cache can give back ([`crate::pipeline::MemoryUse::Least`]
    /// with a store).
    fn lets_go(&self) -> bool {
        self.cache.has_store() && !self.hold
    }

    /// Whether this bake asks for the least memory, trading time for it ([`MemoryUse::Least`](crate::pipeline::MemoryUse::Least)
    /// with a store to read back from): a computation's own large idle data then waits on disk
    /// rather than in memory.
    pub fn saves_memory(&self) -> bool {
        self.lets_go()
    }

    /// Releases every world value and tile output the cache can give back (stored products'
    /// values and every tile output, when the bake has a store), for a computation that has read
    /// all it needs and is about to need much memory of its own (light transport); what is asked
    /// for later is read from the cache again.
    pub fn release_stored_values(&self) {
        if !self.lets_go() {
            return;
        }
        for (i, e) in self.registry.entries().iter().enumerate() {
            match e {
                Entry::World(p) if p.stored() => drop(self.world_values[i].lock().expect("world values").take()),
                Entry::World(_) => {}
                Entry::Tile(_) => self.outputs[i].iter().for_each(|o| drop(o.lock().expect("tile outputs").take())),
            }
        }
        // What was freed is mostly in the allocator's arenas, which large arrays (mapped on their
        // own) would not reuse.
        crate::mem::return_freed_memory();
    }

    /// Releases the world values that no tile product after registry entry `i` reads (through its
    /// declared world needs and theirs), but those a shared pack is made from when the bake has no
    /// store to read them back from. Light transport goes once the tiles that read it are lit.
    pub(super) fn release_unread_after(&self, i: usize) {
        let entries = self.registry.entries();
        let mut needed = vec![false; entries.len()];
        for (k, e) in entries.iter().enumerate().skip(i + 1) {
            if let Entry::Tile(_) = e {
                self.mark_tile_needs(k, &mut needed);
            }
        }
        for (j, e) in entries.iter().enumerate() {
            let Entry::World(p) = e else { continue };
            let shared_pack_kept = p.writes_shared_pack(self) && !(p.stored() && self.lets_go());
            if !needed[j] && !shared_pack_kept {
                self.world_values[j].lock().expect("world values").take();
            }
        }
    }

    /// Releases, when the bake has a store, the tile outputs of products up to registry entry `i`
    /// that nothing after it reads: no later tile product, and no world product a later tile
    /// product needs that is not made yet (the grass ground map reads the level-0 tiles' light).
    /// The packs read them back a few tiles at a time ([`Engine::packs_into`]).
    pub(super) fn release_tile_outputs_unread_after(&self, i: usize) {
        if !self.lets_go() {
            return;
        }
        let entries = self.registry.entries();
        let mut read_later = vec![false; entries.len()];
        let mut world_needed = vec![false; entries.len()];
        let mut mark = |names: &mut dyn Iterator<Item = &str>| names.filter_map(|n| self.registry.index(n).ok()).for_each(|j| read_later[j] = true);
        for (k, e) in entries.iter().enumerate().skip(i + 1) {
            if let Entry::Tile(p) = e {
                self.mark_tile_needs(k, &mut world_needed);
                mark(&mut p.tile_needs().iter().copied());
            }
        }
        for (j, e) in entries.iter().enumerate() {
            if let Entry::World(w) = e {
                if world_needed[j] && self.value(j).is_none() {
                    mark(&mut w.tile_needs(self).into_iter().map(|(n, _)| n));
                }
            }
        }
        for (j, e) in entries.iter().enumerate().take(i + 1) {
            if matches!(e, Entry::Tile(_)) && !read_later[j] {
                self.outputs[j].iter().for_each(|o| drop(o.lock().expect("tile outputs").take()));
            }
        }
    }

    /// Lets go, when the bake lets go of what its cache can give back, of tile product `product`'s
    /// outputs for `tiles` and of those of the tile products it reads (resolved to bake them): a
    /// world product that [resolves its own tiles](crate::pipeline::product::WorldProduct::resolves_its_tiles)
    /// has read them, and a later reader reads them back (the grass ground map reads every
    /// level-0 tile's light a chunk at a time).
    pub fn let_go_of_tile_outputs(&self, product: &str, tiles: &[usize]) -> Result<(), BakeError> {
        let i = self.registry.index(product)?;
        let Entry::Tile(p) = &self.registry.entries()[i] else {
            return Err(self.plan.internal(format_args!("{product} is not a tile product")));
        };
        if self.lets_go() {
            tiles.iter().for_each(|&t| drop(self.outputs[i][t].lock().expect("tile outputs").take()));
            for need in p.tile_needs() {
                self.let_go_of_tile_outputs(need, tiles)?;
            }
        }
        Ok(())
    }

    /// Releases, when the bake has a store, every tile product's output for `tiles` (their packs
    /// are made).
    pub(super) fn release_tile_outputs(&self, tiles: &[usize]) {
        if !self.lets_go() {
            return;
        }
        for (j, e) in self.registry.entries().iter().enumerate() {
            if matches!(e, Entry::Tile(_)) {
                tiles.iter().for_each(|&t| drop(self.outputs[j][t].lock().expect("tile outputs").take()));
            }
        }
    }

    /// Marks the world products that baking tile product `k` may read: its declared world needs,
    /// and those of the earlier tile products it reads (a shard may still lack their outputs).
    fn mark_tile_needs(&self, k: usize, needed: &mut [bool]) {
        let p = self.tile_product(k);
        for n in p.world_needs() {
            self.mark_needed(n, needed);
        }
        for n in p.tile_needs() {
            if let Ok(j) = self.registry.index(n) {
                self.mark_tile_needs(j, needed);
            }
        }
    }

    /// Marks world product `name` and every world product it declares it reads, itself or through
    /// the tile outputs it reads.
    fn mark_needed(&self, name: &str, needed: &mut [bool]) {
        let Ok(j) = self.registry.index(name) else { return };
        if std::mem::replace(&mut needed[j], true) {
            return;
        }
        let p = self.world_product(j);
        for n in p.world_needs() {
            self.mark_needed(n, needed);
        }
        for (n, _) in p.tile_needs(self) {
            if let Ok(k) = self.registry.index(n) {
                self.mark_tile_needs(k, needed);
            }
        }
        if p.reads_light_inputs() {
            for e in self.registry.entries() {
                let Entry::World(q) = e else { continue };
                // A key that cannot be computed keeps the value: releasing is only ever a saving.
                let provides = |k: Result<Option<u128>, BakeError>| !matches!(k, Ok(None));
                if provides(q.light_occluder_key(self)) || provides(q.light_medium_key(self)) {
                    self.mark_needed(q.name(), needed);
                }
            }
        }
    }

    /// How many times each world product was computed in this bake (not read from the cache),
    /// by name, in registry order.
    pub fn computed_counts(&self) -> Vec<(&'static str, u32)> {
        let mut out = Vec::new();
        for (i, e) in self.registry.entries().iter().enumerate() {
            if let Entry::World(p) = e {
                out.push((p.name(), self.computed[i].load(Ordering::Relaxed)));
            }
        }
        out
    }

    /// Resolves what tile product `p` reads for `tiles`: its world products, then its tiles' earlier
    /// outputs. Computing one may release what the cache holds (light transport does, see
    /// [`Engine::release_stored_values`]), even what was just resolved for `p`; that is read back,
    /// and transport is computed once, so a second round finds everything held.
    pub(super) fn hold_needs(&self, p: &dyn TileProduct, tiles: &[usize]) -> Result<(), BakeError> {
        for _ in 0..3 {
            for need in p.world_needs() {
                self.resolve_world(self.registry.index(need)?)?;
            }
            for need in p.tile_needs() {
                self.resolve_tiles(self.registry.index(need)?, tiles)?;
            }
            let world_held = p.world_needs().iter().all(|n| self.registry.index(n).is_ok_and(|j| self.value(j).is_some()));
            let tiles_held =
                p.tile_needs().iter().all(|n| self.registry.index(n).is_ok_and(|j| tiles.iter().all(|&t| self.output_of(j, t).is_some())));
            if world_held && tiles_held {
                return Ok(());
            }
        }
        Err(self.plan.internal(format_args!("what {} reads was released again and again while it was resolved", p.name())))
    }
}
