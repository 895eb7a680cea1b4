//! The bake engine: one demand-driven loop over the registry, for a whole world or one tile.
//!
//! Lookups go coarse to fine: every tile's pack first (its key folds in every product's key), then,
//! for the packs that missed, each tile product in registry order. An item that misses the cache is
//! computed after what it declares it reads: world products are computed once, when first needed,
//! and the tile outputs a world product reads (light transport reads every level-0 tile's geometry)
//! are resolved the same way. So an unchanged world loads nothing but its packs, and a changed AO
//! setting never regenerates the density volume.
//!
//! World products and keys are only ever resolved on the driving thread, never inside a parallel
//! loop: a product's [`TileProduct::bake`] can read only what is already resolved (through
//! [`TileCtx`]), which is why products declare their needs. The one exception: a bake that holds
//! what it makes resolves the world products that read only the world file on a second driving
//! thread, in a pool that runs only on idle cores ([`Engine::resolve_alongside`]); each world
//! product's gate lets one thread compute it while another that asks for it waits.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};

use rayon::prelude::*;

use super::inputs::settings_hash;
use super::lod::{TileId, Tiling};
use super::product::{AnyValue, OccluderMesh, TileOutput, TileProduct, WorldProduct, WorldValue};
use super::progress::{Progress, StageProgress};
use super::registry::{Entry, Registry};
use super::role::BakeRole;
use super::stage_cache::{StageCache, StageInputs, Waited};
use super::{writer_version, PACK_VERSION};
use super::{BakeError, MemoryUse};
use crate::lighting::WaterMedium;
use crate::world::World;

/// Receives a world-wide pack: its product's name and the pack's bytes.
pub type SharedPackSink<'a> = dyn FnMut(&'static str, &[u8]) -> Result<(), BakeError> + 'a;

/// What every product shares about the world being baked.
pub struct Plan<'a> {
    pub world: &'a World,
    pub tiling: Tiling,
    /// Every tile of every level, in (level, y, x) order: the order packs are baked and listed in.
    pub tiles: Vec<TileId>,
}

impl<'a> Plan<'a> {
    pub fn new(world: &'a World) -> Self {
        let spec = &world.spec;
        let tiling = Tiling::new(world.dims(), spec.volume.tile_size, spec.volume.voxel_size as f32);
        Plan { world, tiling, tiles: tiling.all_tiles() }
    }

    /// The world's name, as errors of its bake name it.
    pub fn world_name(&self) -> String {
        self.world.spec.name.clone()
    }

    /// A broken contract between the engine and a product in this world's bake (a bug, not bad
    /// input); `what` says where.
    pub fn internal(&self, what: impl std::fmt::Display) -> BakeError {
        BakeError::Internal(format!("{}: {what}", self.world.spec.name))
    }
}

#[path = "engine_clock.rs"]
mod clock;
#[path = "engine_memory.rs"]
mod memory;
#[path = "engine_packs.rs"]
mod packs;
#[path = "engine_shards.rs"]
mod shards;
use clock::Clock;
pub(crate) use clock::{driven_by, driver};
pub use shards::StageStatus;

/// The engine's state for one bake; products read it through the context types below.
pub struct Engine<'a> {
    plan: &'a Plan<'a>,
    registry: &'a Registry,
    cache: &'a StageCache,
    progress: &'a dyn Progress,
    role: BakeRole,
    /// Only reads the cache: a stored world product that misses is an error, not computed.
    read_only: bool,
    /// Keeps what the cache could give back (see [`MemoryUse::Hold`]).
    hold: bool,
    /// The threads of every bake process sharing this machine, where there are several
    /// ([`super::BakeOptions::machine_share`]); 0 otherwise.
    machine_threads: usize,
    world_keys: Vec<OnceLock<StageInputs>>,
    /// Resolved world values; a stored one may be released ([`Engine::release_stored_values`])
    /// and is then read from the cache again when next asked for.
    world_values: Vec<Mutex<Option<Arc<AnyValue>>>>,
    /// How many times each world product was computed (not read from the cache) in this bake.
    computed: Vec<AtomicU32>,
    /// Held while a world product is resolved: one thread computes it, another that asks waits.
    gates: Vec<Mutex<()>>,
    /// The pool that resolves products alongside the driving thread, while it does.
    background: Mutex<Option<Arc<crate::threads::Background>>>,
    tile_keys: Vec<OnceLock<Vec<StageInputs>>>,
    /// Resolved tile outputs per tile product and tile; released like stored world values.
    outputs: Vec<Vec<Mutex<Option<Arc<TileOutput>>>>>,
    clock: Mutex<Clock>,
}

/// What products may ask while their keys are computed: world products' keys and values (resolved
/// on demand) and earlier tile products' keys.
pub type KeyCtx<'a> = Engine<'a>;
/// What a world product's computation may ask: the same as for keys, plus resolved tile outputs.
pub type WorldCtx<'a> = Engine<'a>;

/// What a tile product's bake may read: its declared world products and its tile's declared
/// earlier outputs, all resolved before the parallel loop starts.
pub struct TileCtx<'e, 'a> {
    engine: &'e Engine<'a>,
    tile: usize,
}

impl TileCtx<'_, '_> {
    /// The bake's shared facts.
    pub fn plan(&self) -> &Plan<'_> {
        self.engine.plan
    }
    /// The tile being baked.
    pub fn id(&self) -> TileId {
        self.engine.plan.tiles[self.tile]
    }
    /// A world product's value; it must be among the product's [`TileProduct::world_needs`].
    pub fn world<T: 'static>(&self, name: &str) -> Result<Held<T>, BakeError> {
        let i = self.engine.registry.index(name)?;
        Held::new(name, self.engine.value(i).ok_or_else(|| undeclared(name))?)
    }
    /// This tile's output of an earlier tile product named in [`TileProduct::tile_needs`].
    pub fn output(&self, product: &str) -> Result<Arc<TileOutput>, BakeError> {
        self.engine.tile_output(product, self.tile)
    }
}

fn undeclared(name: &str) -> BakeError {
    BakeError::Internal(format!("internal error: {name} was read without being declared as a need"))
}

/// A world product's value as its readers hold it: shared with the engine, so that the engine
/// can release its own reference while a reader still uses the value.
pub struct Held<T> {
    value: Arc<AnyValue>,
    of: PhantomData<fn() -> T>,
}

impl<T: 'static> Held<T> {
    fn new(name: &str, value: Arc<AnyValue>) -> Result<Held<T>, BakeError> {
        if !value.is::<T>() {
            return Err(BakeError::Internal(format!("internal error: {name} has another type")));
        }
        Ok(Held { value, of: PhantomData })
    }
}

impl<T: 'static> std::ops::Deref for Held<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.downcast_ref::<T>().expect("the type was checked when the handle was made")
    }
}

impl<'a> Engine<'a> {
    pub fn new(plan: &'a Plan<'a>, registry: &'a Registry, cache: &'a StageCache, progress: &'a dyn Progress) -> Self {
        let n = registry.entries().len();
        Engine {
            plan,
            registry,
            cache,
            progress,
            role: BakeRole::Whole,
            read_only: false,
            hold: false,
            machine_threads: 0,
            world_keys: (0..n).map(|_| OnceLock::new()).collect(),
            world_values: (0..n).map(|_| Mutex::new(None)).collect(),
            computed: (0..n).map(|_| AtomicU32::new(0)).collect(),
            gates: (0..n).map(|_| Mutex::new(())).collect(),
            background: Mutex::new(None),
            tile_keys: (0..n).map(|_| OnceLock::new()).collect(),
            outputs: (0..n).map(|_| (0..plan.tiles.len()).map(|_| Mutex::new(None)).collect()).collect(),
            clock: Mutex::default(),
        }
    }

    /// This engine doing `role`'s share of the bake (see `role.rs`).
    pub fn with_role(self, role: BakeRole) -> Self {
        Engine { role, ..self }
    }

    /// This engine keeping or letting go of what the cache can give back.
    pub fn with_memory(self, memory: MemoryUse) -> Self {
        Engine { hold: memory == MemoryUse::Hold, ..self }
    }

    /// This engine as one of `processes` bakes sharing the machine's cores, each with as many
    /// threads as the current pool.
    pub fn with_machine_share(self, processes: u32) -> Self {
        let threads = if processes > 1 { rayon::current_num_threads() * processes as usize } else { 0 };
        Engine { machine_threads: threads, ..self }
    }

    /// This engine reading the cache only (see [`Engine::status`]).
    pub fn read_only(self) -> Self {
        Engine { read_only: true, ..self }
    }

    /// This process's share of the bake.
    pub fn role(&self) -> BakeRole {
        self.role
    }

    /// The bake's shared facts.
    pub fn plan(&self) -> &Plan<'a> {
        self.plan
    }

    /// The stage cache (for products with cache entries of their own inside one computation).
    pub fn cache(&self) -> &StageCache {
        self.cache
    }

    fn world_product(&self, i: usize) -> &dyn WorldProduct {
        match &self.registry.entries()[i] {
            Entry::World(p) => p.as_ref(),
            Entry::Tile(_) => unreachable!("index of a world product"),
        }
    }

    pub(super) fn tile_product(&self, i: usize) -> &dyn TileProduct {
        match &self.registry.entries()[i] {
            Entry::Tile(p) => p.as_ref(),
            Entry::World(_) => unreachable!("index of a tile product"),
        }
    }

    /// The cache key inputs of world product `name`.
    pub fn world_key(&self, name: &str) -> Result<&StageInputs, BakeError> {
        let i = self.registry.index(name)?;
        if self.world_keys[i].get().is_none() {
            let key = self.world_product(i).inputs(self)?;
            let _ = self.world_keys[i].set(key);
        }
        Ok(self.world_keys[i].get().expect("just set"))
    }

    /// The value of world product `name`, from the cache or computed now.
    pub fn world<T: 'static>(&self, name: &str) -> Result<Held<T>, BakeError> {
        let i = self.registry.index(name)?;
        Held::new(name, self.resolve_world(i)?)
    }

    /// World product `i`'s value if it is resolved and held.
    fn value(&self, i: usize) -> Option<Arc<AnyValue>> {
        self.world_values[i].lock().expect("world values").clone()
    }

    /// Every tile's cache key inputs for tile product `name`.
    pub fn tile_keys(&self, name: &str) -> Result<&[StageInputs], BakeError> {
        let i = self.registry.index(name)?;
        if self.tile_keys[i].get().is_none() {
            let p = self.tile_product(i);
            let keys = (0..self.plan.tiles.len()).map(|t| p.inputs(t, self)).collect::<Result<Vec<_>, _>>()?;
            let _ = self.tile_keys[i].set(keys);
        }
        Ok(self.tile_keys[i].get().expect("just set"))
    }

    /// A resolved tile output (see [`WorldProduct::tile_needs`] and [`TileProduct::tile_needs`]).
    pub fn tile_output(&self, product: &str, tile: usize) -> Result<Arc<TileOutput>, BakeError> {
        let i = self.registry.index(product)?;
        self.output_of(i, tile).ok_or_else(|| undeclared(product))
    }

    /// Tile product `product`'s outputs for `tiles`, in their order, resolved now where not held
    /// (read from the cache, else computed): what a world product that
    /// [resolves its own tiles](WorldProduct::resolves_its_tiles) reads.
    pub fn resolved_tile_outputs(&self, product: &str, tiles: &[usize]) -> Result<Vec<Arc<TileOutput>>, BakeError> {
        let i = self.registry.index(product)?;
        self.resolve_tiles(i, tiles)?;
        tiles
            .iter()
            .map(|&t| self.output_of(i, t).ok_or_else(|| self.plan.internal(format_args!("{product} was released while it was read"))))
            .collect()
    }

    /// Tile product `i`'s output for `tile`, if resolved and held.
    fn output_of(&self, i: usize, tile: usize) -> Option<Arc<TileOutput>> {
        self.outputs[i][tile].lock().expect("tile outputs").clone()
    }

    pub(super) fn set_output(&self, i: usize, tile: usize, output: TileOutput) {
        *self.outputs[i][tile].lock().expect("tile outputs") = Some(Arc::new(output));
    }

    fn resolve_world(&self, i: usize) -> Result<Arc<AnyValue>, BakeError> {
        if let Some(v) = self.value(i) {
            return Ok(v);
        }
        let _gate = match self.gates[i].try_lock() {
            Ok(gate) => gate,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                // Another thread resolves it, perhaps one that runs only on idle cores: what it
                // makes is needed now.
                if let Some(pool) = self.background.lock().expect("background").as_ref() {
                    pool.promote();
                }
                self.gates[i].lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        match self.value(i) {
            Some(v) => Ok(v),
            None => self.make_world(i),
        }
    }

    /// Resolves each world product that reads only the world file and is not held yet (see
    /// [`WorldProduct::reads_only_the_world_file`]), in registry order, on the calling thread's
    /// pool; one that another thread is resolving is left to it.
    fn resolve_alongside(&self) -> Result<(), BakeError> {
        for (i, e) in self.registry.entries().iter().enumerate() {
            let Entry::World(p) = e else { continue };
            if !p.reads_only_the_world_file() {
                continue;
            }
            let _gate = match self.gates[i].try_lock() {
                Ok(gate) => gate,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                Err(TryLockError::WouldBlock) => continue,
            };
            let before = self.computed[i].load(Ordering::Relaxed);
            let computed = self.value(i).is_none() && self.make_world(i).map(|_| self.computed[i].load(Ordering::Relaxed) > before)?;
            // Noted where it makes a shared pack: one the world does not have (no trees) is
            // computed too, as nothing.
            if computed && p.writes_shared_pack(self) {
                self.note(p.report_stage(), format!("{} baked alongside on idle cores (its time overlaps the other stages)", p.name()));
            }
        }
        Ok(())
    }

    /// World product `i`'s value, read from the cache or computed (the caller holds its gate).
    fn make_world(&self, i: usize) -> Result<Arc<AnyValue>, BakeError> {
        let p = self.world_product(i);
        let key = self.world_key(p.name())?.clone();
        let value = self.timed(p.report_stage(), || -> Result<WorldValue, BakeError> {
            if let Some(v) = self.cache.lookup(p.name(), &key, |b| p.decode(self, b)) {
                return Ok(v);
            }
            if self.read_only && p.stored() {
                return Err(BakeError::Incomplete(format!("{} is not in the cache yet", p.name())));
            }
            for (j, e) in self.registry.entries().iter().enumerate() {
                if matches!(e, Entry::World(q) if q.made_before().contains(&p.name())) {
                    self.resolve_world(j)?;
                }
            }
            // Shards claim a stored product once what it reads is resolved: one computes it, the
            // others wait only for that, and then read it. One whose items they split is claimed
            // once each has done its share, if it has that step.
            for need in p.world_needs() {
                self.resolve_world(self.registry.index(need)?)?;
            }
            if !p.resolves_its_tiles() {
                for (product, tiles) in p.tile_needs(self) {
                    self.resolve_tiles(self.registry.index(product)?, &tiles)?;
                }
            }
            let claimed = self.role.is_shard() && p.stored() && (!p.splits_its_work() || p.share(self)?);
            let _claim = match claimed {
                true => match self.cache.claim_or_read(&key, &key, || self.cache.lookup(p.name(), &key, |b| p.decode(self, b))) {
                    Waited::Read(v) => return Ok(v),
                    Waited::Claimed(claim) => claim,
                },
                false => None,
            };
            // The others wait while a shard makes what it claimed: on a shared machine, it does so
            // on all of the machine's threads.
            let (v, detail) = match (claimed, self.machine_once()) {
                (true, Some(once)) => once.run(|| p.compute(self))?,
                _ => p.compute(self)?,
            };
            self.computed[i].fetch_add(1, Ordering::Relaxed);
            let bytes =
                p.encode(v.as_ref()).map_err(|e| self.plan.internal(format_args!("{} could not put its value in its cache form: {e}", p.name())))?;
            if bytes.is_some() != p.stored() {
                return Err(self.plan.internal(format_args!("{} encodes its value exactly when it says it is stored", p.name())));
            }
            if let Some(bytes) = bytes {
                self.cache.computed(p.name(), &key, &bytes);
            }
            self.note(p.report_stage(), detail);
            Ok(v)
        })?;
        let value: Arc<AnyValue> = Arc::from(value);
        *self.world_values[i].lock().expect("world values") = Some(value.clone());
        Ok(value)
    }

    /// Makes the outputs of tile product `i` for `tiles` available: from the cache where a sound
    /// entry exists, else computed in parallel after everything the product reads.
    fn resolve_tiles(&self, i: usize, tiles: &[usize]) -> Result<(), BakeError> {
        let todo: Vec<usize> = tiles.iter().copied().filter(|&t| self.output_of(i, t).is_none()).collect();
        if todo.is_empty() {
            return Ok(());
        }
        let p = self.tile_product(i);
        let keys = self.tile_keys(p.name())?;
        // What a tile reads of earlier products comes first: cache hits are validated against it.
        for need in p.tile_needs() {
            self.resolve_tiles(self.registry.index(need)?, &todo)?;
        }
        self.timed(p.report_stage(), || -> Result<(), BakeError> {
            let found: Vec<Option<TileOutput>> = todo
                .par_iter()
                .map(|&t| {
                    self.cache.lookup(&self.plan.tiles[t].label(), &keys[t], |b| {
                        let o = TileOutput::from_bytes(&b).ok_or("not a well-formed product output")?;
                        p.validate(t, &o, self).map(|()| o)
                    })
                })
                .collect();
            let mut missing = Vec::new();
            for (&t, o) in todo.iter().zip(found) {
                match o {
                    Some(o) => self.set_output(i, t, o),
                    None => missing.push(t),
                }
            }
            if missing.is_empty() {
                return Ok(());
            }
            if self.role == BakeRole::Assemble {
                return Err(BakeError::Incomplete(format!(
                    "{}: the cache lacks {} of {} tiles' {} (first {}): bake every shard into this cache before assembling",
                    self.plan.world_name(),
                    missing.len(),
                    todo.len(),
                    p.name(),
                    self.plan.tiles[missing[0]].label()
                )));
            }
            self.hold_needs(p, &missing)?;
            let bar = self.progress.start(p.report_stage(), missing.len() as u64);
            let computed =
                if self.role.is_shard() { self.bake_shared_tiles(i, &missing, bar.as_ref())? } else { self.bake_tiles(i, &missing, bar.as_ref())? };
            let count = computed.len();
            for (t, o) in computed {
                self.set_output(i, t, o);
            }
            self.note_computed(p.report_stage(), p.name(), count);
            Ok(())
        })
    }

    /// Computes tile product `i` for `tiles`, storing each output.
    fn bake_tiles(&self, i: usize, tiles: &[usize], bar: &dyn StageProgress) -> Result<Vec<(usize, TileOutput)>, BakeError> {
        tiles.par_iter().map(|&t| Ok((t, self.bake_tile(i, t, bar)?))).collect()
    }

    pub(super) fn bake_tile(&self, i: usize, t: usize, bar: &dyn StageProgress) -> Result<TileOutput, BakeError> {
        let p = self.tile_product(i);
        let out = p.bake(t, &TileCtx { engine: self, tile: t })?;
        self.cache.computed(&self.plan.tiles[t].label(), &self.tile_keys(p.name())?[t], &out.to_bytes());
        bar.advance(1);
        Ok(out)
    }

    /// The key of tile `t`'s pack: every tile product's key in registry order (but the products the
    /// world does not have), the world's name and the writer's version. Its low 64 bits are the pack's `inputs_hash`.
    pub(super) fn pack_key(&self, t: usize) -> Result<StageInputs, BakeError> {
        let mut key = StageInputs::new("pack", PACK_VERSION);
        for p in self.registry.tile_products() {
            let item = &self.tile_keys(p.name())?[t];
            if !item.is_absent() {
                key = key.with(p.name(), item.key().0);
            }
        }
        Ok(key.with("world name", settings_hash(&self.plan.world.spec.name)).with("writer", settings_hash(&writer_version())))
    }

    /// The light-occluder keys of every world product that adds occluders to light transport, in
    /// registry order (see [`WorldProduct::light_occluder_key`]).
    pub fn light_occluder_keys(&self) -> Result<Vec<u128>, BakeError> {
        let mut keys = Vec::new();
        for e in self.registry.entries() {
            if let Entry::World(p) = e {
                keys.extend(p.light_occluder_key(self)?);
            }
        }
        Ok(keys)
    }

    /// Every product's light occluders together, in registry order.
    pub fn light_occluders(&self) -> Result<OccluderMesh, BakeError> {
        let mut all = OccluderMesh::default();
        for e in self.registry.entries() {
            if let Entry::World(p) = e {
                if p.light_occluder_key(self)?.is_some() {
                    all.append(p.light_occluders(self)?);
                }
            }
        }
        Ok(all)
    }

    /// The light-medium keys of every world product that puts light transport in a medium, in
    /// registry order (see [`WorldProduct::light_medium_key`]).
    pub fn light_medium_keys(&self) -> Result<Vec<u128>, BakeError> {
        let mut keys = Vec::new();
        for e in self.registry.entries() {
            if let Entry::World(p) = e {
                keys.extend(p.light_medium_key(self)?);
            }
        }
        Ok(keys)
    }

    /// The medium light transport runs in, if a product gives one; two products giving one is
    /// a broken contract between them.
    pub fn light_medium(&self) -> Result<Option<WaterMedium>, BakeError> {
        let mut found: Option<(&'static str, WaterMedium)> = None;
        for e in self.registry.entries() {
            let Entry::World(p) = e else { continue };
            if p.light_medium_key(self)?.is_none() {
                continue;
            }
            if let Some(m) = p.light_medium(self)? {
                if let Some((other, _)) = &found {
                    return Err(self.plan.internal(format_args!("both {other} and {} give light transport a medium", p.name())));
                }
                found = Some((p.name(), m));
            }
        }
        Ok(found.map(|f| f.1))
    }

    /// Hands every world-wide pack the bake writes to `sink` as (product name, pack bytes), in
    /// registry order, where the engine holds them (a pack is tens of megabytes).
    pub fn shared_packs_into(&self, sink: &mut SharedPackSink) -> Result<(), BakeError> {
        for (i, e) in self.registry.entries().iter().enumerate() {
            let Entry::World(p) = e else { continue };
            if !p.writes_shared_pack(self) {
                continue;
            }
            let value = self.resolve_world(i)?;
            let bytes = p
                .shared_pack(value.as_ref())
                .ok_or_else(|| self.plan.internal(format_args!("{} said it writes a shared pack and gave none", p.name())))?;
            sink(p.name(), bytes)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
