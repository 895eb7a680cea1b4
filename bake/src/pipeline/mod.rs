//! The bake: world → density volume → occupancy → every tile of every LOD level → packs.
//!
//! Every stage is a pure function of the world and upstream results. Tiles are baked in parallel but
//! collected in (level, y, x) order, and nothing depends on the thread count, so the output bytes are
//! the same for any `--jobs`.

mod failpoint;
mod hit_check;
mod inputs;
mod lighting;
mod lod;
mod output;
mod skirts;
mod stage_cache;
mod tile;

use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kiln_cache::store::Store;
use kiln_formats::sections::{EmbeddedFiles, Manifest, PackInfo, PackKind, TileNode};
use kiln_formats::PackBuilder;
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use inputs::{density_hash, raw_density_hash, settings_hash, tile_input_hashes, TileInputHashes};
pub use lod::{TileId, Tiling};
use output::Staging;
pub use stage_cache::{StageCache, StageInputs, Tally};
use lighting::TileLighting;
use tile::{assemble_pack, bake_geometry, BakedTile, GeometryInputs, PackContext, TileGeometry, TileTimings};

use crate::ao::OccupancyField;
use crate::cli::CliError;
use crate::density::DensityVolume;
use crate::mc::IsoMesh;
use crate::world::World;

/// Versions of each stage's algorithm: bump one when its output for the same inputs changes, so
/// stale cache entries are never used.
mod stage_version {
    pub const DENSITY: u32 = 1;
    pub const TILE_INPUTS: u32 = 1;
    pub const GEOMETRY: u32 = 2;
    pub const PACK: u32 = 4;
    pub const LIGHTING: u32 = 11;
}

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
    /// No progress bars.
    pub quiet: bool,
    /// The stage cache's directory; `None` bakes without a cache.
    pub cache: Option<PathBuf>,
    /// Record and report why each recomputed item missed the cache.
    pub explain: bool,
}

/// Wall time and work of one stage.
#[derive(Clone, Debug)]
pub struct StageTiming {
    pub name: &'static str,
    pub seconds: f64,
    pub detail: String,
}

impl std::fmt::Display for StageTiming {
    /// One aligned report line: `name  seconds  detail`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:<10} {:>8.3} s  {}", self.name, self.seconds, self.detail)
    }
}

/// What a bake did.
#[derive(Clone, Debug)]
pub struct BakeReport {
    pub out_dir: PathBuf,
    pub stages: Vec<StageTiming>,
    /// Per cached stage: items taken from the cache and items computed.
    pub tallies: Vec<(&'static str, Tally)>,
    /// `--explain`: why each computed item missed the cache.
    pub explanations: Vec<String>,
    /// Problems with the cache (the bake went on without it).
    pub cache_warnings: Vec<String>,
    /// False when the output directory already held exactly these packs and was left untouched.
    pub wrote_output: bool,
    pub tiles: usize,
    pub vertices: u64,
    pub triangles: u64,
    pub bytes_written: u64,
    pub voxels: u64,
}

/// The Kiln version written into every pack's header.
pub fn writer_version() -> [u16; 3] {
    let v = |s: &str| s.parse::<u16>().unwrap_or(0);
    [v(env!("CARGO_PKG_VERSION_MAJOR")), v(env!("CARGO_PKG_VERSION_MINOR")), v(env!("CARGO_PKG_VERSION_PATCH"))]
}

/// Bakes `world` into `opts.out_root/<name>/`. On any error nothing is left behind and an earlier
/// bake in that place is untouched.
pub fn bake(world: &World, opts: &BakeOptions) -> Result<BakeReport, CliError> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(j) = opts.jobs {
        if !(1..=MAX_JOBS).contains(&j) {
            return Err(CliError::Usage(format!("--jobs {j}: must be 1 to {MAX_JOBS}")));
        }
        // Workers beyond the cores add no speed, and rayon's idle workers spin: 1000 threads on
        // two cores made a 0.5 s bake take 20-40 s, nearly all of it user time in idle workers.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        builder = builder.num_threads(j.min(cores));
    }
    let pool = builder.build().map_err(|e| CliError::Failed(format!("cannot start worker threads: {e}")))?;
    pool.install(|| bake_in_pool(world, opts))
}

fn bar(opts: &BakeOptions, len: u64, stage: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len), if opts.quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() });
    pb.set_style(ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {elapsed}").expect("valid template").progress_chars("=> "));
    pb.set_prefix(stage.to_owned());
    pb
}

/// The density volume and its occupancy field, computed (or loaded) only when some stage needs them.
struct Volume {
    density: DensityVolume,
    occupancy: OccupancyField,
}

/// Everything about the world that every stage shares.
struct Plan<'a> {
    world: &'a World,
    tiling: Tiling,
    tiles: Vec<TileId>,
    world_hash: u64,
    density_inputs: StageInputs,
    ao_hash: u128,
}

impl<'a> Plan<'a> {
    fn new(world: &'a World) -> Self {
        let spec = &world.spec;
        let tiling = Tiling::new(world.dims(), spec.volume.tile_size, spec.volume.voxel_size as f32);
        Plan {
            world,
            tiling,
            tiles: tiling.all_tiles(),
            world_hash: world_hash(world),
            density_inputs: StageInputs::new("density", stage_version::DENSITY).with("world density inputs", density_hash(world)),
            ao_hash: settings_hash(&spec.ao),
        }
    }

    /// The light tracer's seed: derived from the world seed for this stage only.
    fn lighting_seed(&self) -> u64 {
        let spec = &self.world.spec;
        kiln_cache::store::KeyHasher::default().str("lighting").u64(spec.seed).u64(spec.lighting.noise_seed).finish().0 as u64
    }

    fn name(&self) -> &str {
        &self.world.spec.name
    }
    fn failed(&self, what: impl std::fmt::Display) -> CliError {
        CliError::Failed(format!("{}: {what}", self.name()))
    }

    fn tile_inputs_key(&self) -> StageInputs {
        StageInputs::new("tile-inputs", stage_version::TILE_INPUTS)
            .with("density", self.density_inputs.key().0)
            .with("tiling", settings_hash(&(self.tiling.tile_voxels, self.tiling.tiles)))
            .with("ao reach", settings_hash(&self.world.spec.ao.radius_voxels.to_bits()))
    }

    fn geometry_inputs(&self, id: TileId, h: TileInputHashes) -> StageInputs {
        StageInputs::new("geometry", stage_version::GEOMETRY)
            .with("tile", settings_hash(&(id.level, id.x, id.y, self.tiling.tile_voxels, self.tiling.voxel_size.to_bits())))
            .with("density", h.density)
            .with("occupancy", h.occupancy)
            .with("ao settings", self.ao_hash)
    }

    /// The global lighting bake's inputs: every level-0 tile's geometry, the settings, the seed.
    fn lighting_inputs(&self, geometry: &[StageInputs]) -> StageInputs {
        let mut h = kiln_cache::store::KeyHasher::default();
        for (id, g) in self.tiles.iter().zip(geometry) {
            if id.level == 0 {
                h.key(g.key());
            }
        }
        StageInputs::new("lighting", stage_version::LIGHTING)
            .with("level-0 geometry", h.finish().0)
            .with("lighting settings", settings_hash(&self.world.spec.lighting))
            .with("seed", settings_hash(&self.world.spec.seed))
            .with("volume", settings_hash(&format!("{:?}", lighting::volume_desc(&self.tiling))))
    }

    fn tile_lighting_inputs(&self, lighting: &StageInputs, geometry: &StageInputs) -> StageInputs {
        StageInputs::new("tile lighting", stage_version::LIGHTING).with("lighting", lighting.key().0).with("geometry", geometry.key().0)
    }

    fn pack_inputs(&self, geometry: &StageInputs, lighting: &StageInputs) -> StageInputs {
        StageInputs::new("pack", stage_version::PACK)
            .with("geometry", geometry.key().0)
            .with("lighting", lighting.key().0)
            .with("world name", settings_hash(&self.world.spec.name))
            .with("writer", settings_hash(&writer_version()))
    }

    fn volume(&self, cache: &StageCache) -> Result<Volume, CliError> {
        let dims = self.world.dims();
        let expected = dims[0] * dims[1] * dims[2] * 4;
        let density = match cache.lookup("volume", &self.density_inputs, |b| hit_check::volume(&b, expected)) {
            Some(data) => DensityVolume { dims, data },
            None => {
                // The raw noise is most of the work and does not change with brushes or floater
                // settings, so it has its own cache entry.
                let field = crate::density::DensityField::new(self.world);
                let raw_inputs = StageInputs::new("raw density", stage_version::DENSITY).with("noise and floor", raw_density_hash(self.world));
                let raw = match cache.lookup("volume", &raw_inputs, |b| hit_check::volume(&b, expected)) {
                    Some(data) => DensityVolume { dims, data },
                    None => {
                        let v = field.volume();
                        cache.computed("volume", &raw_inputs, bytemuck::cast_slice(&v.data));
                        v
                    }
                };
                let (v, _) = crate::density::finish(self.world, &field, raw);
                cache.computed("volume", &self.density_inputs, bytemuck::cast_slice(&v.data));
                v
            }
        };
        let occupancy = OccupancyField::from_densities(dims, &density.data).map_err(|e| self.failed(format_args!("occupancy: {e}")))?;
        Ok(Volume { density, occupancy })
    }
}

fn bake_in_pool(world: &World, opts: &BakeOptions) -> Result<BakeReport, CliError> {
    let spec = &world.spec;
    let dims = world.dims();
    let store = match &opts.cache {
        Some(dir) => Some(Store::open(dir).map_err(|e| CliError::Failed(e.to_string()))?),
        None => None,
    };
    // Before any work: an unwritable or non-directory --out, a bad name or a concurrent bake of
    // this world fails now, not after minutes of baking.
    let staging = Staging::new(&opts.out_root, &spec.name)?;
    let cache = StageCache::new(store, &spec.name, opts.explain);
    let plan = Plan::new(world);
    let tiling = plan.tiling;
    let mut stages = Vec::new();
    let voxels = (dims[0] * dims[1] * dims[2]) as u64;
    let mut volume: Option<Volume> = None;

    // Per-tile input hashes, cached per density volume so an unchanged world never loads it.
    let clock = Instant::now();
    let tile_inputs_key = plan.tile_inputs_key();
    let hashes: Vec<TileInputHashes> = match cache.lookup("all tiles", &tile_inputs_key, |b| hit_check::tile_inputs(&b, plan.tiles.len())) {
        Some(h) => h,
        None => {
            let v = plan.volume(&cache)?;
            let reach = spec.ao.radius_voxels + spec.ao.start_offset_voxels;
            let h = tile_input_hashes(&v.density, &tiling, &plan.tiles, reach);
            volume = Some(v);
            let bytes: Vec<u8> = h.iter().flat_map(|x| x.to_bytes()).collect();
            cache.computed("all tiles", &tile_inputs_key, &bytes);
            h
        }
    };
    stages.push(StageTiming {
        name: "density",
        seconds: clock.elapsed().as_secs_f64(),
        detail: if volume.is_some() { format!("{voxels} voxels: noise, floor, brushes, floaters; input hashes") } else { "unchanged (cached)".into() },
    });

    // Packs whose inputs are all unchanged come straight from the cache.
    let clock = Instant::now();
    let geometry_keys: Vec<StageInputs> = plan.tiles.iter().zip(&hashes).map(|(&id, &h)| plan.geometry_inputs(id, h)).collect();
    let lighting_key = plan.lighting_inputs(&geometry_keys);
    let light_keys: Vec<StageInputs> = geometry_keys.iter().map(|g| plan.tile_lighting_inputs(&lighting_key, g)).collect();
    let pack_keys: Vec<StageInputs> = geometry_keys.iter().zip(&light_keys).map(|(g, l)| plan.pack_inputs(g, l)).collect();
    let mut packs: Vec<Option<BakedTile>> = plan
        .tiles
        .par_iter()
        .zip(&pack_keys)
        .map(|(&id, key)| {
            let want = hit_check::PackIdentity { id, world_name: &spec.name, inputs_hash: key.key().0 as u64 };
            cache.lookup(&tile_label(id), key, |b| hit_check::pack(&b, &want))
        })
        .collect();
    let missing: Vec<usize> = (0..packs.len()).filter(|&i| packs[i].is_none()).collect();

    // Lighting of the tiles still missing: from the cache, or from a world lighting bake (which needs
    // the geometry of every level-0 tile).
    let mut lights: Vec<Option<TileLighting>> = missing
        .par_iter()
        .map(|&i| cache.lookup(&tile_label(plan.tiles[i]), &light_keys[i], |b| hit_check::lighting(&b, lighting::slice_box(&tiling, plan.tiles[i]))))
        .collect();
    let level0 = || (0..plan.tiles.len()).filter(|&i| plan.tiles[i].level == 0);
    let mut need: Vec<usize> = missing.clone();
    if lights.iter().any(Option::is_none) {
        need.extend(level0());
        need.sort_unstable();
        need.dedup();
    }
    let mut cpu = TileTimings::default();
    let mut geometry = geometry_for(&plan, &cache, &geometry_keys, &need, &mut volume, opts, &mut cpu)?;
    // Cached lighting must have one value per vertex of the geometry it is packed with.
    for (j, &i) in missing.iter().enumerate() {
        if let Some(Err(reason)) = lights[j].as_ref().map(|l| hit_check::lighting_fits(l, &geometry[&i])) {
            cache.refused(&tile_label(plan.tiles[i]), &light_keys[i], &reason);
            cache.unhit(&light_keys[i]);
            lights[j] = None;
        }
    }
    let unlit: Vec<usize> = (0..missing.len()).filter(|&j| lights[j].is_none()).map(|j| missing[j]).collect();
    if !unlit.is_empty() {
        let more: Vec<usize> = level0().filter(|i| !geometry.contains_key(i)).collect();
        geometry.extend(geometry_for(&plan, &cache, &geometry_keys, &more, &mut volume, opts, &mut cpu)?);
    }
    let tiles_secs = clock.elapsed().as_secs_f64();
    let meshed = cache.tallies().get("geometry").map_or(0, |t| t.computed);

    let clock = Instant::now();
    let mut light_detail = "unchanged (cached)".to_owned();
    if !unlit.is_empty() {
        let level0: Vec<(TileId, &TileGeometry)> = (0..plan.tiles.len()).filter(|&i| plan.tiles[i].level == 0).map(|i| (plan.tiles[i], &geometry[&i])).collect();
        let baked = lighting::bake_world(&tiling, &level0, &spec.lighting, plan.lighting_seed()).map_err(|e| plan.failed(e))?;
        let transport_secs = clock.elapsed().as_secs_f64();
        let pb = bar(opts, unlit.len() as u64, "lighting");
        let computed: Vec<TileLighting> = unlit
            .par_iter()
            .map(|&i| {
                let l = lighting::tile_lighting(&baked, &tiling, plan.tiles[i], &geometry[&i])?;
                cache.computed(&tile_label(plan.tiles[i]), &light_keys[i], &l.to_bytes());
                pb.inc(1);
                Ok(l)
            })
            .collect::<Result<_, lighting::LightingStageError>>()
            .map_err(|e| plan.failed(e))?;
        pb.finish_and_clear();
        let mut it = computed.into_iter();
        for (j, &i) in missing.iter().enumerate() {
            if lights[j].is_none() {
                debug_assert!(unlit.contains(&i));
                lights[j] = it.next();
            }
        }
        let s = baked.baked.stats();
        light_detail = format!(
            "{} paths, {} rays over {:.0} square units ({transport_secs:.2} s), {} tiles queried ({:.2} s)",
            s.paths.iter().sum::<u64>(),
            s.flights,
            s.area,
            unlit.len(),
            clock.elapsed().as_secs_f64() - transport_secs
        );
    }
    stages.push(StageTiming { name: "lighting", seconds: clock.elapsed().as_secs_f64(), detail: light_detail });

    let clock = Instant::now();
    let ctx = PackContext { world_name: &spec.name, writer_version: writer_version() };
    let assembled: Vec<BakedTile> = missing
        .par_iter()
        .zip(&lights)
        .map(|(&i, l)| {
            let l = l.as_ref().expect("every missing pack has lighting now");
            let key = &pack_keys[i];
            let baked = assemble_pack(&ctx, plan.tiles[i], &geometry[&i], l, key.key().0 as u64)?;
            cache.computed(&tile_label(plan.tiles[i]), key, &baked.to_bytes());
            Ok(baked)
        })
        .collect::<Result<_, tile::TileError>>()
        .map_err(|e| plan.failed(e))?;
    for (&i, b) in missing.iter().zip(assembled) {
        packs[i] = Some(b);
    }
    let tiles: Vec<BakedTile> = packs.into_iter().map(|p| p.expect("every pack is present")).collect();
    let pack_secs = clock.elapsed().as_secs_f64();
    let vertices: u64 = tiles.iter().map(|b| b.summary.vertex_count as u64).sum();
    let triangles: u64 = tiles.iter().map(|b| b.summary.triangle_count as u64).sum();
    stages.insert(stages.len() - 1, StageTiming {
        name: "tiles",
        seconds: tiles_secs,
        detail: format!(
            "{} tiles ({} meshed), {vertices} vertices, {triangles} triangles; cpu: mesh {:.2}s, ao {:.2}s, encode {:.2}s",
            tiles.len(),
            meshed,
            cpu.mesh,
            cpu.ao,
            cpu.encode
        ),
    });
    stages.push(StageTiming { name: "packs", seconds: pack_secs, detail: format!("{} assembled, {} from the cache", missing.len(), tiles.len() - missing.len()) });

    let clock = Instant::now();
    let manifest_bytes = manifest_pack(&plan, &tiles)?;
    let mut files: Vec<(String, &[u8])> = tiles.iter().map(|t| (tile_path(t.id), t.pack.as_slice())).collect();
    files.push(("manifest.kpack".to_owned(), &manifest_bytes));
    let bytes_written: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let dest = staging.dest().to_owned();
    let wrote_output = !output::matches(&dest, &files);
    let out_dir = if wrote_output {
        let pb = bar(opts, files.len() as u64, "write");
        for (path, bytes) in &files {
            staging.write(path, bytes)?;
            pb.inc(1);
        }
        pb.finish_and_clear();
        staging.commit()?
    } else {
        dest
    };
    stages.push(StageTiming {
        name: "write",
        seconds: clock.elapsed().as_secs_f64(),
        detail: if wrote_output { format!("{} packs, {:.1} MB", files.len(), bytes_written as f64 / 1e6) } else { "output already up to date".into() },
    });

    Ok(BakeReport {
        out_dir,
        stages,
        tallies: cache.tallies().into_iter().collect(),
        explanations: cache.notes(),
        cache_warnings: cache.warnings(),
        wrote_output,
        tiles: tiles.len(),
        vertices,
        triangles,
        bytes_written,
        voxels,
    })
}

/// Geometry of the tiles `need` (indices into `plan.tiles`): from the cache, or computed (which
/// makes the density volume on first need).
fn geometry_for(
    plan: &Plan,
    cache: &StageCache,
    keys: &[StageInputs],
    need: &[usize],
    volume: &mut Option<Volume>,
    opts: &BakeOptions,
    cpu: &mut TileTimings,
) -> Result<std::collections::BTreeMap<usize, TileGeometry>, CliError> {
    let found: Vec<Option<TileGeometry>> =
        need.par_iter().map(|&i| cache.lookup(&tile_label(plan.tiles[i]), &keys[i], |b| hit_check::geometry(&b, plan.tiling.lattice(plan.tiles[i])))).collect();
    let mut out = std::collections::BTreeMap::new();
    let mut to_compute = Vec::new();
    for (&i, g) in need.iter().zip(found) {
        match g {
            Some(g) => {
                out.insert(i, g);
            }
            None => to_compute.push(i),
        }
    }
    if to_compute.is_empty() {
        return Ok(out);
    }
    if volume.is_none() {
        *volume = Some(plan.volume(cache)?);
    }
    let v = volume.as_ref().expect("volume just made");
    let inputs = GeometryInputs { tiling: plan.tiling, volume: &v.density, occupancy: &v.occupancy, ao: &plan.world.spec.ao };
    let pb = bar(opts, to_compute.len() as u64, "tiles");
    let computed: Vec<(TileGeometry, TileTimings)> = to_compute
        .par_iter()
        .map_init(IsoMesh::default, |scratch, &i| {
            let mut t = TileTimings::default();
            let g = bake_geometry(&inputs, plan.tiles[i], scratch, &mut t)?;
            cache.computed(&tile_label(plan.tiles[i]), &keys[i], &g.to_bytes());
            pb.inc(1);
            Ok((g, t))
        })
        .collect::<Result<_, tile::TileError>>()
        .map_err(|e| plan.failed(e))?;
    pb.finish_and_clear();
    for (i, (g, t)) in to_compute.into_iter().zip(computed) {
        out.insert(i, g);
        *cpu = TileTimings { mesh: cpu.mesh + t.mesh, ao: cpu.ao + t.ao, encode: cpu.encode + t.encode };
    }
    Ok(out)
}

fn tile_label(id: TileId) -> String {
    format!("L{} ({},{})", id.level, id.x, id.y)
}

fn manifest_pack(plan: &Plan, tiles: &[BakedTile]) -> Result<Vec<u8>, CliError> {
    let spec = &plan.world.spec;
    let dims = plan.world.dims();
    let manifest = Manifest {
        world_name: spec.name.clone(),
        world_hash: plan.world_hash,
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
    let pack_err = |e| plan.failed(format_args!("encoding the manifest: {e}"));
    pack.add(&PackInfo { kind: PackKind::Manifest, world_name: spec.name.clone(), inputs_hash: plan.world_hash })
        .map_err(pack_err)?;
    pack.add(&manifest).map_err(pack_err)?;
    pack.add(&plan.world.embedded_sources()).map_err(pack_err)?;
    pack.to_bytes().map_err(pack_err)
}

/// Manifest nodes in tile order, with geometric errors made monotonic (a parent's error is at least
/// its children's) so a viewer refining by screen-space error never refines into a coarser surface.
fn quadtree_nodes(tiles: &[BakedTile]) -> Vec<TileNode> {
    let mut error: std::collections::BTreeMap<TileId, f32> = std::collections::BTreeMap::new();
    for t in tiles {
        // Tiles come sorted by level, so children are done before their parent.
        let children = if t.id.level == 0 {
            0.0
        } else {
            let mut m = 0.0f32;
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let c = TileId { level: t.id.level - 1, x: t.id.x * 2 + dx, y: t.id.y * 2 + dy };
                m = m.max(error.get(&c).copied().unwrap_or(0.0));
            }
            m
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
            path: tile_path(t.id),
            content_hash: xxh3_64(&t.pack),
            file_len: t.pack.len() as u64,
            vertex_count: t.summary.vertex_count,
            triangle_count: t.summary.triangle_count,
        })
        .collect()
}

/// Where a tile's pack lives inside a bake directory.
pub fn tile_path(id: TileId) -> String {
    format!("tiles/L{}_{}_{}.kpack", id.level, id.x, id.y)
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
/// same tile of a whole-world bake. It meshes that tile alone from the density volume; its lighting
/// still needs every level-0 tile, since light transport reads the whole world.
pub fn bake_single_tile(world: &World, id: TileId) -> Result<Vec<u8>, CliError> {
    let spec = &world.spec;
    let plan = Plan::new(world);
    let tiling = plan.tiling;
    let Some(index) = plan.tiles.iter().position(|&t| t == id) else {
        return Err(CliError::Usage(format!("{}: no tile L{} ({},{})", spec.name, id.level, id.x, id.y)));
    };
    let cache = StageCache::new(None, &spec.name, false);
    let v = plan.volume(&cache)?;
    let reach = spec.ao.radius_voxels + spec.ao.start_offset_voxels;
    let inputs = GeometryInputs { tiling, volume: &v.density, occupancy: &v.occupancy, ao: &spec.ao };
    let geometry = |i: usize| bake_geometry(&inputs, plan.tiles[i], &mut IsoMesh::default(), &mut TileTimings::default()).map_err(|e| plan.failed(e));
    let g = geometry(index)?;
    // Lighting reads the whole world's level-0 geometry (its halo is the world).
    let level0: Vec<usize> = (0..plan.tiles.len()).filter(|&i| plan.tiles[i].level == 0).collect();
    let level0_geometry: Vec<(TileId, TileGeometry)> = level0.par_iter().map(|&i| Ok((plan.tiles[i], geometry(i)?))).collect::<Result<_, CliError>>()?;
    let all_hashes = tile_input_hashes(&v.density, &tiling, &plan.tiles, reach);
    let geometry_keys: Vec<StageInputs> = plan.tiles.iter().zip(&all_hashes).map(|(&t, &h)| plan.geometry_inputs(t, h)).collect();
    let lighting_key = plan.lighting_inputs(&geometry_keys);
    let pack_key = plan.pack_inputs(&geometry_keys[index], &plan.tile_lighting_inputs(&lighting_key, &geometry_keys[index]));
    let level0_refs: Vec<(TileId, &TileGeometry)> = level0_geometry.iter().map(|(id, g)| (*id, g)).collect();
    let baked = lighting::bake_world(&tiling, &level0_refs, &spec.lighting, plan.lighting_seed()).map_err(|e| plan.failed(e))?;
    let light = lighting::tile_lighting(&baked, &tiling, id, &g).map_err(|e| plan.failed(e))?;
    let ctx = PackContext { world_name: &spec.name, writer_version: writer_version() };
    Ok(assemble_pack(&ctx, id, &g, &light, pack_key.key().0 as u64).map_err(|e| plan.failed(e))?.pack)
}
