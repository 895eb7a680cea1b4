//! The bake: world → density volume → occupancy → every tile of every LOD level → packs.
//!
//! Every stage is a pure function of the world and upstream results. Tiles are baked in parallel but
//! collected in (level, y, x) order, and nothing depends on the thread count, so the output bytes are
//! the same for any `--jobs`.

mod lod;
mod output;
mod skirts;
mod tile;

use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kiln_formats::sections::{EmbeddedFiles, Manifest, PackInfo, PackKind, TileNode};
use kiln_formats::PackBuilder;
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

pub use lod::{TileId, Tiling};
use output::Staging;
use tile::{bake_tile, BakedTile, TileInputs, TileTimings};

use crate::ao::OccupancyField;
use crate::cli::CliError;
use crate::mc::IsoMesh;
use crate::world::World;

/// How to run a bake.
#[derive(Clone, Debug)]
pub struct BakeOptions {
    /// The bake goes to `out_root/<world name>/`.
    pub out_root: PathBuf,
    /// Worker threads; `None` uses every core. The output does not depend on it.
    pub jobs: Option<usize>,
    /// No progress bars.
    pub quiet: bool,
}

/// Wall time and work of one stage.
#[derive(Clone, Debug)]
pub struct StageTiming {
    pub name: &'static str,
    pub seconds: f64,
    pub detail: String,
}

/// What a bake did.
#[derive(Clone, Debug)]
pub struct BakeReport {
    pub out_dir: PathBuf,
    pub stages: Vec<StageTiming>,
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
        builder = builder.num_threads(j.max(1));
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

fn bake_in_pool(world: &World, opts: &BakeOptions) -> Result<BakeReport, CliError> {
    let spec = &world.spec;
    let dims = world.dims();
    let voxel_size = spec.volume.voxel_size as f32;
    let tiling = Tiling::new(dims, spec.volume.tile_size, voxel_size);
    let world_hash = world_hash(world);
    let dest = opts.out_root.join(&spec.name);
    let staging = Staging::new(&dest)?;
    let mut stages = Vec::new();
    let voxels = (dims[0] * dims[1] * dims[2]) as u64;

    let clock = Instant::now();
    let volume = crate::density::generate(world);
    let secs = clock.elapsed().as_secs_f64();
    stages.push(StageTiming { name: "density", seconds: secs, detail: format!("{:.0} Mvoxels/s (noise, floor, brushes, floaters)", voxels as f64 / secs / 1e6) });

    let clock = Instant::now();
    let occupancy = OccupancyField::from_densities(dims, &volume.data).map_err(|e| CliError::Failed(format!("{}: occupancy: {e}", spec.name)))?;
    stages.push(StageTiming { name: "occupancy", seconds: clock.elapsed().as_secs_f64(), detail: "solid bits + distance field for AO".into() });

    let clock = Instant::now();
    let inputs = TileInputs {
        world_name: &spec.name,
        world_hash,
        tiling,
        volume: &volume,
        occupancy: &occupancy,
        ao: &spec.ao,
        writer_version: writer_version(),
    };
    let ids = tiling.all_tiles();
    let pb = bar(opts, ids.len() as u64, "tiles");
    let results: Vec<(BakedTile, TileTimings)> = ids
        .par_iter()
        .map_init(IsoMesh::default, |scratch, &id| {
            let mut t = TileTimings::default();
            let r = bake_tile(&inputs, id, scratch, &mut t).map(|b| (b, t));
            pb.inc(1);
            r
        })
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::Failed(format!("{}: {e}", spec.name)))?;
    pb.finish_and_clear();
    let cpu = results.iter().fold(TileTimings::default(), |a, (_, t)| TileTimings { mesh: a.mesh + t.mesh, ao: a.ao + t.ao, encode: a.encode + t.encode });
    let tiles_secs = clock.elapsed().as_secs_f64();
    let vertices: u64 = results.iter().map(|(b, _)| b.vertex_count as u64).sum();
    let triangles: u64 = results.iter().map(|(b, _)| b.triangle_count as u64).sum();
    stages.push(StageTiming {
        name: "tiles",
        seconds: tiles_secs,
        detail: format!(
            "{} tiles, {vertices} vertices, {triangles} triangles; cpu: mesh {:.2}s, ao {:.2}s, encode {:.2}s",
            results.len(),
            cpu.mesh,
            cpu.ao,
            cpu.encode
        ),
    });

    let clock = Instant::now();
    let tiles: Vec<BakedTile> = results.into_iter().map(|(b, _)| b).collect();
    let nodes = quadtree_nodes(&tiles);
    let mut bytes_written = 0u64;
    let pb = bar(opts, tiles.len() as u64, "write");
    for (t, node) in tiles.iter().zip(&nodes) {
        staging.write(&node.path, &t.pack)?;
        bytes_written += t.pack.len() as u64;
        pb.inc(1);
    }
    pb.finish_and_clear();
    let manifest = Manifest {
        world_name: spec.name.clone(),
        world_hash,
        baker_version: env!("CARGO_PKG_VERSION").to_owned(),
        voxel_size,
        volume_dims: dims.map(|d| d as u32),
        tile_voxels: tiling.tile_voxels,
        tiles_per_axis: tiling.tiles,
        levels: tiling.levels(),
        bounds_min: [0.0; 3],
        bounds_max: dims.map(|d| d as f32 * voxel_size),
        nodes,
    };
    let mut pack = PackBuilder::new(writer_version());
    let pack_err = |e| CliError::Failed(format!("encoding the manifest of {}: {e}", spec.name));
    pack.add(&PackInfo { kind: PackKind::Manifest, world_name: spec.name.clone(), world_hash, inputs_hash: world_hash }).map_err(pack_err)?;
    pack.add(&manifest).map_err(pack_err)?;
    pack.add(&world.embedded_sources()).map_err(pack_err)?;
    let manifest_bytes = pack.to_bytes().map_err(pack_err)?;
    staging.write("manifest.kpack", &manifest_bytes)?;
    bytes_written += manifest_bytes.len() as u64;
    let out_dir = staging.commit()?;
    stages.push(StageTiming { name: "write", seconds: clock.elapsed().as_secs_f64(), detail: format!("{} packs, {:.1} MB", tiles.len() + 1, bytes_written as f64 / 1e6) });

    Ok(BakeReport { out_dir, stages, tiles: tiles.len(), vertices, triangles, bytes_written, voxels })
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
        error.insert(t.id, t.own_error.max(children));
    }
    tiles
        .iter()
        .map(|t| TileNode {
            level: t.id.level,
            x: t.id.x,
            y: t.id.y,
            bounds_min: t.bounds.0,
            bounds_max: t.bounds.1,
            geometric_error: error[&t.id],
            path: tile_path(t.id),
            content_hash: xxh3_64(&t.pack),
            file_len: t.pack.len() as u64,
            vertex_count: t.vertex_count,
            triangle_count: t.triangle_count,
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

/// Bakes one tile on its own (density, occupancy, then that tile only) and returns its pack bytes:
/// byte-identical to the same tile of a whole-world bake.
pub fn bake_single_tile(world: &World, id: TileId) -> Result<Vec<u8>, CliError> {
    let spec = &world.spec;
    let dims = world.dims();
    let tiling = Tiling::new(dims, spec.volume.tile_size, spec.volume.voxel_size as f32);
    if !tiling.all_tiles().contains(&id) {
        return Err(CliError::Usage(format!("{}: no tile L{} ({},{})", spec.name, id.level, id.x, id.y)));
    }
    let volume = crate::density::generate(world);
    let occupancy = OccupancyField::from_densities(dims, &volume.data).map_err(|e| CliError::Failed(format!("{}: occupancy: {e}", spec.name)))?;
    let inputs = TileInputs {
        world_name: &spec.name,
        world_hash: world_hash(world),
        tiling,
        volume: &volume,
        occupancy: &occupancy,
        ao: &spec.ao,
        writer_version: writer_version(),
    };
    let baked = bake_tile(&inputs, id, &mut IsoMesh::default(), &mut TileTimings::default()).map_err(|e| CliError::Failed(format!("{}: {e}", spec.name)))?;
    Ok(baked.pack)
}
