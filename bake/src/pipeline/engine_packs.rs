//! The engine's last step: each wanted tile's pack, from the cache or assembled from its products'
//! outputs, handed to a sink as soon as it exists (the output writes it) and then let go, so that
//! a bake never holds every pack of the world at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kiln_formats::sections::{PackInfo, PackKind};
use kiln_formats::PackBuilder;
use rayon::prelude::*;

use super::{BakeRole, Engine, StageInputs};
use crate::pipeline::hit_check;
use crate::pipeline::product::TileProduct;
use crate::pipeline::registry::Entry;
use crate::pipeline::tile::{BakedTile, PackedTile, TileSummary};
use crate::pipeline::{writer_version, BakeError};

/// Tiles whose packs are made together at the end of a bake (their outputs held at once).
const PACK_CHUNK: usize = 64;

/// What receives each finished pack (from any worker thread, in no particular order).
pub type PackSink<'s> = dyn Fn(&BakedTile) -> Result<(), BakeError> + Sync + 's;

impl Engine<'_> {
    /// The packs of `wanted` (indices into the plan's tiles), from the cache or baked, each given
    /// to `sink` once and then dropped; returns what the manifest records of each, in `wanted`'s
    /// order.
    pub fn packs_into(&self, wanted: &[usize], sink: &PackSink) -> Result<Vec<PackedTile>, BakeError> {
        let pack_keys = wanted.iter().map(|&t| self.pack_key(t)).collect::<Result<Vec<_>, _>>()?;
        let products: Vec<&dyn TileProduct> = self.registry.tile_products().collect();
        let mut packs: Vec<Option<PackedTile>> = self.timed("packs", || {
            wanted
                .par_iter()
                .zip(&pack_keys)
                .map(|(&t, key)| {
                    let id = self.plan.tiles[t];
                    let want =
                        hit_check::PackIdentity { id, world_name: &self.plan.world.spec.name, inputs_hash: key.key().0 as u64, products: &products };
                    let hit = self.cache.lookup(&id.label(), key, |b| hit_check::pack(&b, &want));
                    hit.map(|baked| sink(&baked).map(|()| baked.record())).transpose()
                })
                .collect::<Result<_, BakeError>>()
        })?;
        let missing: Vec<usize> = (0..wanted.len()).filter(|&j| packs[j].is_none()).collect();
        // A bake that holds what it makes computes the products that read only the world file
        // beside the tiles' products, on cores that these leave idle in their one-thread steps.
        // A shard's pool claims items other shards may wait for, so it is never held back.
        let background = match self.hold && !missing.is_empty() && self.role != BakeRole::Assemble {
            true => crate::threads::Background::new(rayon::current_num_threads(), !self.role.is_shard()).ok().map(Arc::new),
            false => None,
        };
        *self.background.lock().expect("background") = background.clone();
        let (assembled, beside) = std::thread::scope(|s| {
            let beside = background.as_ref().map(|pool| s.spawn(|| pool.install(|| self.resolve_alongside())));
            let assembled = self.bake_packs(wanted, &pack_keys, &missing, sink);
            // Whatever is left of it is all the bake waits for now.
            if let Some(pool) = &background {
                pool.promote();
            }
            (assembled, beside.map(|b| b.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
        });
        self.background.lock().expect("background").take();
        let assembled = assembled?;
        beside.transpose()?;
        self.note("packs", format!("{} assembled, {} from the cache", missing.len(), wanted.len() - missing.len()));
        for (&j, b) in missing.iter().zip(assembled) {
            packs[j] = Some(b);
        }
        Ok(packs.into_iter().map(|p| p.expect("every pack is present")).collect())
    }

    /// Bakes every tile product for the `missing` entries of `wanted`, then their packs, handed to
    /// `sink`; returns their records in `missing`'s order.
    fn bake_packs(&self, wanted: &[usize], pack_keys: &[StageInputs], missing: &[usize], sink: &PackSink) -> Result<Vec<PackedTile>, BakeError> {
        let missing_tiles: Vec<usize> = missing.iter().map(|&j| wanted[j]).collect();
        for (i, entry) in self.registry.entries().iter().enumerate() {
            if let Entry::Tile(_) = entry {
                self.resolve_tiles(i, &missing_tiles)?;
                self.release_unread_after(i);
                self.release_tile_outputs_unread_after(i);
            }
        }
        // A few tiles at a time: their outputs released along the way are read back, their packs
        // made and handed on, and their outputs let go, so that the packs never hold every
        // tile's outputs at once.
        let mut assembled: Vec<PackedTile> = Vec::with_capacity(missing.len());
        for chunk in missing.chunks(PACK_CHUNK) {
            let tiles: Vec<usize> = chunk.iter().map(|&j| wanted[j]).collect();
            for (i, entry) in self.registry.entries().iter().enumerate() {
                if let Entry::Tile(_) = entry {
                    self.resolve_tiles(i, &tiles)?;
                }
            }
            let packed: Vec<PackedTile> = self.timed("packs", || {
                chunk
                    .par_iter()
                    .map(|&j| {
                        let baked = self.assemble(wanted[j], pack_keys[j].key().0 as u64)?;
                        self.cache.computed(&baked.id.label(), &pack_keys[j], &baked.to_bytes());
                        sink(&baked)?;
                        Ok(baked.record())
                    })
                    .collect::<Result<_, BakeError>>()
            })?;
            assembled.extend(packed);
            self.release_tile_outputs(&tiles);
        }
        Ok(assembled)
    }

    /// [`Engine::packs_into`], keeping every pack: for tests and tools that compare whole bakes.
    pub fn packs(&self, wanted: &[usize]) -> Result<Vec<BakedTile>, BakeError> {
        let kept = Mutex::new(HashMap::with_capacity(wanted.len()));
        let records = self.packs_into(wanted, &|baked| {
            kept.lock().expect("kept packs").insert(baked.id, baked.clone());
            Ok(())
        })?;
        let mut kept = kept.into_inner().expect("kept packs");
        // In `wanted`'s order, as the records are.
        records.iter().map(|r| kept.remove(&r.id).ok_or_else(|| self.plan.internal(format_args!("tile {}: no pack was given", r.id)))).collect()
    }

    fn assemble(&self, t: usize, inputs_hash: u64) -> Result<BakedTile, BakeError> {
        let id = self.plan.tiles[t];
        let pack_err = |source| BakeError::Pack { world: self.plan.world_name(), what: format!("tile {id}: packing"), source };
        let mut pack = PackBuilder::new(writer_version());
        pack.add(&PackInfo {
            kind: PackKind::Tile { level: id.level, x: id.x, y: id.y },
            world_name: self.plan.world.spec.name.clone(),
            inputs_hash,
        })
        .map_err(pack_err)?;
        let mut summary: Option<TileSummary> = None;
        for p in self.registry.tile_products() {
            let out = self.tile_output(p.name(), t)?;
            for s in &out.sections {
                pack.add_raw(s.kind, s.required, s.bytes.clone()).map_err(pack_err)?;
            }
            summary = summary.or(out.summary);
        }
        let summary = summary.ok_or_else(|| self.plan.internal(format_args!("tile {id}: no product summarised it")))?;
        Ok(BakedTile { id, summary, pack: pack.to_bytes().map_err(pack_err)? })
    }
}
