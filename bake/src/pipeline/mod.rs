//! The bake: world → density volume → occupancy → every tile of every LOD level → packs.
//!
//! Every stage is a pure function of the world and upstream results. Tiles are baked in parallel but
//! collected in (level, y, x) order, and nothing depends on the thread count, so the output bytes are
//! the same for any `--jobs`.

mod engine;
mod error;
mod failpoint;
mod grass;
mod hit_check;
mod inputs;
mod lighting;
mod lod;
mod machine_once;
mod output;
pub mod product;
pub mod progress;
mod registry;
mod role;
mod skirts;
mod stage_cache;
mod terrain;
mod tile;
mod transport_parts;
mod trees;
mod volume;
mod water;

use std::path::PathBuf;

use kiln_cache::store::Store;
use kiln_formats::sections::{EmbeddedFiles, Manifest, PackInfo, PackKind, SharedPack, SharedPacks, TileNode};
use kiln_formats::PackBuilder;
use xxhash_rust::xxh3::xxh3_64;

pub use engine::StageStatus;
use engine::{Engine, Plan};
pub use error::BakeError;
pub use failpoint::ENV as FAILPOINT_VARIABLE;
pub use lod::{TileId, Tiling};
use output::{OutputFiles, Staging};
use progress::{NoProgress, Progress};
pub use registry::Registry;
pub use role::BakeRole;
pub use stage_cache::{StageCache, StageInputs, Tally};
use tile::PackedTile;

use crate::world::World;

/// Version of pack assembly (the pack key's stage): bump it when a tile's pack bytes change for the
/// same product outputs. Each product keeps the version of its own algorithm beside it.
const PACK_VERSION: u32 = 6;

/// The largest `--jobs` accepted.
pub const MAX_JOBS: usize = 256;

/// How to run a bake.
#[derive(Clone, Debug)]
pub struct BakeOptions {
    /// The bake goes to `out_root/<world name>/`.
    pub out_root: PathBuf,
    /// Worker threads, 1 to [`MAX_JOBS`] (no more than the cores are started); `None` uses every
    /// core. The output does not depend on it.
    pub jobs: Option<usize>,
    /// The stage cache's directory; `None` bakes without a cache.
    pub cache: Option<PathBuf>,
    /// Record and report why each recomputed item missed the cache.
    pub explain: bool,
    /// What the bake keeps in memory between its steps, and whether it bakes the world file's own
    /// products alongside the others.
    pub memory: MemoryUse,
    /// How many bake processes share this machine's cores (`--local-shards` gives its shards its
    /// N): shards that share one make a world-wide step that each needs whole only once, on all
    /// of the machine's threads (see `machine_once.rs`).
    pub machine_share: u32,
}

impl BakeOptions {
    /// A bake into `out_root` on every core, without a stage cache, in the least memory; set the
    /// other fields with struct update syntax (`BakeOptions { cache, ..BakeOptions::new(out) }`).
    pub fn new(out_root: PathBuf) -> BakeOptions {
        BakeOptions { out_root, jobs: None, cache: None, explain: false, memory: MemoryUse::Least, machine_share: 1 }
    }
}

/// What a bake keeps in memory from one step to the next, and whether it may spend memory to keep
/// cores busy. The output is the same bytes either way (ARCHITECTURE.md, "Memory").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryUse {
    /// Let go of what the cache can give back (stored world values, tile outputs) before the steps
    /// that need much memory of their own, and read it back when it is asked for again: the least
    /// memory, for the read-backs' time (which runs on few threads).
    #[default]
    Least,
    /// Keep what the bake made until nothing later reads it, as a bake without a cache does (the
    /// cache is still written), and bake the products that read only the world file alongside the
    /// others, on the cores these leave idle: their peaks then add to the others'.
    Hold,
}

/// Wall time and work of one stage.
#[derive(Clone, Debug)]
pub struct StageTiming {
    /// The stage's report name.
    pub name: &'static str,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Processor time of every thread of the process during the stage, seconds: over `seconds`,
    /// how many cores the stage kept busy on average.
    pub cpu_seconds: f64,
    /// What the stage did (counts, sizes), one line.
    pub detail: String,
}

impl std::fmt::Display for StageTiming {
    /// One aligned report line: `name  seconds  cores busy  detail`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let busy = if self.seconds > 0.0 { self.cpu_seconds / self.seconds } else { 0.0 };
        write!(f, "{:<13} {:>8.3} s {busy:>5.1} cores  {}", self.name, self.seconds, self.detail)
    }
}

/// What a bake did.
#[derive(Clone, Debug)]
pub struct BakeReport {
    /// The directory that holds the packs.
    pub out_dir: PathBuf,
    /// Timings, in the order the stages ran.
    pub stages: Vec<StageTiming>,
    /// Per cached stage: items taken from the cache and items computed.
    pub tallies: Vec<(&'static str, Tally)>,
    /// Per cached stage: seconds spent claiming its items ([`StageCache::waits`]); in a shard,
    /// the time it waited for other processes.
    pub waits: Vec<(&'static str, f64)>,
    /// `--explain`: why each computed item missed the cache.
    pub explanations: Vec<String>,
    /// Problems with the cache (the bake went on without it).
    pub cache_warnings: Vec<String>,
    /// False when the output directory already held exactly these packs and was left untouched.
    pub wrote_output: bool,
    /// Tile packs, all levels.
    pub tiles: usize,
    /// Vertices over all tiles, all levels.
    pub vertices: u64,
    /// Triangles over all tiles, all levels.
    pub triangles: u64,
    /// Bytes of the tile packs and the manifest (also when the output was left untouched).
    pub bytes_written: u64,
    /// Samples of the density volume.
    pub voxels: u64,
}

/// The Kiln version written into every pack's header.
pub fn writer_version() -> [u16; 3] {
    let v = |s: &str| s.parse::<u16>().unwrap_or(0);
    [v(env!("CARGO_PKG_VERSION_MAJOR")), v(env!("CARGO_PKG_VERSION_MINOR")), v(env!("CARGO_PKG_VERSION_PATCH"))]
}

/// Bakes `world` into `opts.out_root/<name>/`, reporting progress to `progress`. On any error
/// nothing is left behind and an earlier bake in that place is untouched.
pub fn bake(world: &World, opts: &BakeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    bake_as(world, opts, BakeRole::Whole, progress)
}

/// [`bake`] doing `role`'s share (see [`BakeRole`]): a shard computes its share into the cache
/// (which it needs) and writes no output; an assembly writes the output from the cache alone.
pub fn bake_as(world: &World, opts: &BakeOptions, role: BakeRole, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    if role != BakeRole::Whole && opts.cache.is_none() {
        return Err(BakeError::BadOption("a sharded bake and its assembly share their work through the cache: give them one (no --no-cache)".into()));
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(worker_threads(opts.jobs)?).build().map_err(BakeError::Threads)?;
    pool.install(|| match role {
        BakeRole::Shard { .. } => bake_shard(world, opts, role, progress),
        _ => bake_in_pool(world, opts, role, progress),
    })
}

/// The worker threads a bake with `jobs` starts: `jobs` (1 to [`MAX_JOBS`]) but never more than the
/// cores, since workers beyond them add no speed and rayon's idle workers spin (a thousand threads on
/// two cores made a bake dozens of times slower); every core without `jobs`.
pub fn worker_threads(jobs: Option<usize>) -> Result<usize, BakeError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match jobs {
        None => Ok(cores),
        Some(j) if (1..=MAX_JOBS).contains(&j) => Ok(j.min(cores)),
        Some(j) => Err(BakeError::BadOption(format!("--jobs {j}: must be 1 to {MAX_JOBS}"))),
    }
}

fn open_cache(world: &World, opts: &BakeOptions) -> Result<StageCache, BakeError> {
    let store = match &opts.cache {
        Some(dir) => Some(Store::open(dir)?),
        None => None,
    };
    Ok(StageCache::new(store, &world.spec.name, opts.explain))
}

/// How much of `world`'s bake the cache of `opts` holds, without computing anything: per stored
/// product and for the packs.
pub fn status(world: &World, opts: &BakeOptions) -> Result<Vec<StageStatus>, BakeError> {
    if opts.cache.is_none() {
        return Err(BakeError::BadOption("--status reads the cache: give one (no --no-cache)".into()));
    }
    let cache = open_cache(world, opts)?;
    let plan = Plan::new(world);
    let registry = Registry::standard();
    let engine = Engine::new(&plan, &registry, &cache, &NoProgress).with_role(BakeRole::Assemble).read_only();
    Ok(engine.status())
}

/// A shard's bake: its own tiles' packs and every stored world product, into the cache.
fn bake_shard(world: &World, opts: &BakeOptions, role: BakeRole, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let cache = open_cache(world, opts)?;
    let plan = Plan::new(world);
    let registry = Registry::standard();
    let engine = Engine::new(&plan, &registry, &cache, progress).with_role(role).with_memory(opts.memory).with_machine_share(opts.machine_share);
    let own: Vec<usize> = (0..plan.tiles.len()).filter(|&t| role.owns(t)).collect();
    // A shard's packs go to the cache only.
    let tiles = engine.packs_into(&own, &|_| Ok(()))?;
    engine.shared_packs_into(&mut |_, _| Ok(()))?;
    if let Some((count, first)) = cache.unstored() {
        return Err(BakeError::Unstored { count, first });
    }
    let dims = world.dims();
    Ok(BakeReport {
        out_dir: opts.out_root.join(&world.spec.name),
        stages: engine.timings(),
        tallies: cache.tallies().into_iter().collect(),
        waits: cache.waits().into_iter().collect(),
        explanations: cache.notes(),
        cache_warnings: cache.warnings(),
        wrote_output: false,
        tiles: tiles.len(),
        vertices: tiles.iter().map(|b| b.summary.vertex_count as u64).sum(),
        triangles: tiles.iter().map(|b| b.summary.triangle_count as u64).sum(),
        bytes_written: 0,
        voxels: (dims[0] * dims[1] * dims[2]) as u64,
    })
}

fn bake_in_pool(world: &World, opts: &BakeOptions, role: BakeRole, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let spec = &world.spec;
    let cache = open_cache(world, opts)?;
    // Before any work: an unwritable or non-directory --out, a bad name or a concurrent bake of
    // this world fails now, not after minutes of baking.
    let staging = Staging::new(&opts.out_root, &spec.name)?;
    let plan = Plan::new(world);
    let registry = Registry::standard();
    let engine = Engine::new(&plan, &registry, &cache, progress).with_role(role).with_memory(opts.memory).with_machine_share(opts.machine_share);
    let all: Vec<usize> = (0..plan.tiles.len()).collect();
    // Each pack goes to the output as soon as it is made (compared with the previous bake's).
    let output = OutputFiles::new(staging);
    let tiles = engine.packs_into(&all, &|baked| output.put(&baked.id.pack_path(), &baked.pack))?;
    let mut stages = engine.timings();
    let vertices: u64 = tiles.iter().map(|b| b.summary.vertex_count as u64).sum();
    let triangles: u64 = tiles.iter().map(|b| b.summary.triangle_count as u64).sum();
    if let Some(s) = stages.iter_mut().find(|s| s.name == "packs") {
        s.detail = format!("{} tiles, {vertices} vertices, {triangles} triangles; {}", tiles.len(), s.detail);
    }

    let watch = crate::Stopwatch::start();
    let mut shared = Vec::new();
    engine.shared_packs_into(&mut |name, bytes| {
        let path = format!("shared/{name}.kpack");
        output.put(&path, bytes)?;
        shared.push(SharedPack { product: name.to_owned(), path, content_hash: xxh3_64(bytes), file_len: bytes.len() as u64 });
        Ok(())
    })?;
    output.put("manifest.kpack", &manifest_pack(&plan, &tiles, shared)?)?;
    let (files, bytes_written) = output.totals();
    let dest = output.dest().to_owned();
    let committed = output.finish()?;
    let wrote_output = committed.is_some();
    let out_dir = committed.unwrap_or(dest);
    let [seconds, cpu_seconds] = watch.read();
    stages.push(StageTiming {
        name: "write",
        seconds,
        cpu_seconds,
        detail: if wrote_output { format!("{files} packs, {:.1} MB", bytes_written as f64 / 1e6) } else { "output already up to date".into() },
    });
    let dims = world.dims();
    Ok(BakeReport {
        out_dir,
        stages,
        tallies: cache.tallies().into_iter().collect(),
        waits: cache.waits().into_iter().collect(),
        explanations: cache.notes(),
        cache_warnings: cache.warnings(),
        wrote_output,
        tiles: tiles.len(),
        vertices,
        triangles,
        bytes_written,
        voxels: (dims[0] * dims[1] * dims[2]) as u64,
    })
}

/// The manifest pack: `PINF`, `MNFT`, `SRCF` and, when products wrote world-wide packs
/// (`shared`), `SHRD` listing them with their hashes.
fn manifest_pack(plan: &Plan, tiles: &[PackedTile], shared: Vec<SharedPack>) -> Result<Vec<u8>, BakeError> {
    let spec = &plan.world.spec;
    let dims = plan.world.dims();
    let world_hash = world_hash(plan.world);
    let manifest = Manifest {
        world_name: spec.name.clone(),
        world_hash,
        baker_version: env!("CARGO_PKG_VERSION").to_owned(),
        voxel_size: plan.tiling.voxel_size,
        volume_dims: dims.map(|d| d as u32),
        tile_voxels: plan.tiling.tile_voxels,
        tiles_per_axis: plan.tiling.tiles,
        levels: plan.tiling.levels(),
        bounds_min: [0.0; 3],
        bounds_max: dims.map(|d| d as f32 * plan.tiling.voxel_size),
        nodes: quadtree_nodes(tiles),
    };
    let mut pack = PackBuilder::new(writer_version());
    let pack_err = |source| BakeError::Pack { world: plan.world_name(), what: "encoding the manifest".into(), source };
    pack.add(&PackInfo { kind: PackKind::Manifest, world_name: spec.name.clone(), inputs_hash: world_hash }).map_err(pack_err)?;
    pack.add(&manifest).map_err(pack_err)?;
    pack.add(&plan.world.embedded_sources()).map_err(pack_err)?;
    if !shared.is_empty() {
        pack.add(&SharedPacks(shared)).map_err(pack_err)?;
    }
    pack.to_bytes().map_err(pack_err)
}

/// Manifest nodes in tile order, with geometric errors made monotonic (a parent's error is at least
/// its children's) so a viewer refining by screen-space error never refines into a coarser surface.
fn quadtree_nodes(tiles: &[PackedTile]) -> Vec<TileNode> {
    let mut error: std::collections::BTreeMap<TileId, f32> = std::collections::BTreeMap::new();
    for t in tiles {
        // Tiles come sorted by level, so children are done before their parent.
        let children = if t.id.level == 0 {
            0.0
        } else {
            t.id.children().into_iter().flatten().map(|c| error.get(&c).copied().unwrap_or(0.0)).fold(0.0f32, f32::max)
        };
        error.insert(t.id, t.summary.own_error.max(children));
    }
    tiles
        .iter()
        .map(|t| TileNode {
            level: t.id.level,
            x: t.id.x,
            y: t.id.y,
            bounds_min: t.summary.bounds.0,
            bounds_max: t.summary.bounds.1,
            geometric_error: error[&t.id],
            path: t.id.pack_path(),
            content_hash: t.content_hash,
            file_len: t.file_len,
            vertex_count: t.summary.vertex_count,
            triangle_count: t.summary.triangle_count,
        })
        .collect()
}

/// Hash of everything the bake reads: the world's canonical definition and its embedded files.
pub fn world_hash(world: &World) -> u64 {
    let files: EmbeddedFiles = world.embedded_sources();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    for f in &files.files {
        h.update(f.name.as_bytes());
        h.update(&(f.bytes.len() as u64).to_le_bytes());
        h.update(&f.bytes);
    }
    h.digest()
}

/// Bakes one tile on its own, without any cache, and returns its pack bytes: byte-identical to the
/// same tile of a whole-world bake. It runs the same products over that one tile; its lighting
/// still needs every level-0 tile's geometry, since light transport reads the whole world.
pub fn bake_single_tile(world: &World, id: TileId) -> Result<Vec<u8>, BakeError> {
    let plan = Plan::new(world);
    let Some(index) = plan.tiles.iter().position(|&t| t == id) else {
        return Err(BakeError::BadOption(format!("{}: no tile {id}", world.spec.name)));
    };
    let cache = StageCache::new(None, &world.spec.name, false);
    let registry = Registry::standard();
    let engine = Engine::new(&plan, &registry, &cache, &NoProgress);
    let mut packs = engine.packs(&[index])?;
    Ok(packs.pop().expect("one pack for one tile").pack)
}
