//! Water, end to end: a small world with a sea, dry land and two brushed bunkers on the sea floor
//! (one sealed, one with a shaft through its roof), baked through the CLI and read back: the sealed
//! cave stays dry and the open one floods (the flood fill run on the density the tiles export), every
//! tile's depth agrees with the ground re-derived from that density and neighbouring tiles agree on
//! their shared borders, the wave pack's caustics keep their energy in every frame and at every depth,
//! trees and grass stay out of the water, and the bytes are the same whatever the threads, the run or
//! the cache, and pinned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kiln_bake::density::DensityVolume;
use kiln_e2e::{exported_density, files_under, kiln, manifest, scratch, tile_contents};
use kiln_formats::sections::{GrassTile, SharedPacks, WaterTile, WaterWaves};
use kiln_formats::{Pack, TileId};

const LEVEL: f32 = 1.75;
const VOXEL: f32 = 0.25;

/// 64 × 64 × 32 samples of 0.25 in 4 × 4 tiles of 16: a pure floor (no cave noise) from 0.5 to 3.0,
/// so part of it is land above the level.
const WORLD: &str = r#"
name = "lagoon"
seed = 3

[volume]
size = [64, 64, 32]
voxel_size = 0.25
tile_size = 16

[noise]
amplitude = 0.0

[floor]
kind = "noise"
height = 0.5
amplitude = 2.5
frequency = 0.08
fade_start = 0.0
fade = 0.0

[floaters]
remove = true
fill_sealed_air_below = 0

[brushes]
file = "lagoon.brushes.toml"

[lighting]
paths_per_area = 50.0

[ao]
radius_voxels = 8.0

[grass]
density = 200.0
patches = 2

[water]
level = 1.75

[water.waves]
frames = 8
resolution = 32
patch_size = 4.0
wind_speed = 6.0

[water.caustics]
depths = [0.25, 0.5, 1.0]
"#;

/// A pit over x, y in [1, 7] down to z ≈ 0.1 (so the sea there is deep whatever the floor), and in
/// it two bunkers of solid, roofs at z = 1.5 below the level, each with a 3 × 3 × 3-sample chamber at
/// z 0.5–1.0: A at (2.5, 4) sealed, B at (5.5, 4) with a shaft through its roof.
const BRUSHES: &str = r#"
[[stroke]]
shape = "cube"
radius = 3.0
weight = -2.0
position = [4.0, 4.0, 3.25]
[[stroke]]
shape = "cube"
radius = 0.75
weight = 3.0
position = [2.5, 4.0, 0.75]
[[stroke]]
shape = "cube"
radius = 0.75
weight = 3.0
position = [5.5, 4.0, 0.75]
[[stroke]]
shape = "cube"
radius = 0.25
weight = -3.0
position = [2.5, 4.0, 0.75]
[[stroke]]
shape = "cube"
radius = 0.25
weight = -3.0
position = [5.5, 4.0, 0.75]
to = [5.5, 4.0, 1.75]
spacing = 0.25
"#;

/// Bakes the lagoon into a scratch directory of its own, `label` (tests run in parallel).
fn bake(label: &str, extra: &[&str]) -> PathBuf {
    let dir = scratch(&format!("water-{label}"));
    let world = dir.join("lagoon.toml");
    std::fs::write(&world, WORLD).unwrap();
    std::fs::write(dir.join("lagoon.brushes.toml"), BRUSHES).unwrap();
    let out = dir.join("out");
    let mut args = vec!["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(extra);
    assert_eq!(kiln(&args), 0, "bake lagoon");
    out.join("lagoon")
}

/// The lagoon baked once per test binary, without a cache.
fn lagoon() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| bake("shared", &["--no-cache"]))
}

fn water_tiles(dir: &Path) -> BTreeMap<TileId, WaterTile> {
    manifest(dir)
        .nodes
        .iter()
        .map(|n| {
            let id = TileId::new(n.level, n.x, n.y);
            (id, tile_contents(dir, id).water.expect("every tile of a world with water has WTIL"))
        })
        .collect()
}

fn waves(dir: &Path) -> (WaterWaves, u64) {
    let shared: SharedPacks = Pack::open(&dir.join("manifest.kpack")).unwrap().require().unwrap();
    let entry = shared.get("water-waves").expect("SHRD lists the water pack");
    assert_eq!(entry.path, "shared/water-waves.kpack");
    let bytes = std::fs::read(dir.join(&entry.path)).unwrap();
    assert_eq!(xxhash_rust::xxh3::xxh3_64(&bytes), entry.content_hash);
    (Pack::from_bytes(bytes).unwrap().require().unwrap(), entry.content_hash)
}

/// The density of the whole world, put together from `kiln export --density` of every level-0 tile
/// (exported into a scratch directory of `label`'s: tests run in parallel).
fn density(dir: &Path, label: &str) -> DensityVolume {
    let (dims, data) = exported_density(dir, &format!("water-density-{label}"));
    DensityVolume { dims, data }
}

/// The topmost air→solid crossing of column `(i, j)` (linear root between samples), if its top is air.
fn ground(v: &DensityVolume, i: usize, j: usize) -> Option<f32> {
    let mut above = v.get(i, j, v.dims[2] - 1);
    if above > 0.0 {
        return None;
    }
    for k in (0..v.dims[2] - 1).rev() {
        let here = v.get(i, j, k);
        if here > 0.0 {
            return Some((k as f32 + here / (here - above)) * VOXEL);
        }
        above = here;
    }
    Some(0.0)
}

#[test]
fn the_sealed_cave_stays_dry_and_the_cave_with_a_shaft_floods() {
    let dir = lagoon();
    let v = density(dir, "caves");
    let body = kiln_bake::water::body::flood(&v, VOXEL, LEVEL, true).unwrap();
    // Chamber samples: x ± 1 around 10 (A) and 22 (B), y 15..=17, z 2..=4.
    for k in 2..=4 {
        for j in 15..=17 {
            for di in 0..3 {
                let (a, b) = (9 + di, 21 + di);
                assert!(v.get(a, j, k) <= 0.0 && v.get(b, j, k) <= 0.0, "the chambers are air at ({a}/{b}, {j}, {k})");
                assert!(!body.is_flooded(a, j, k), "the sealed chamber is dry at ({a}, {j}, {k})");
                assert!(body.is_flooded(b, j, k), "the open chamber floods at ({b}, {j}, {k})");
            }
        }
    }
    // The tile's map over each: A's roof (z 1.625, depth 0.125), B's shaft down to the chamber floor
    // (z 0.375, depth 1.375).
    let t = tile_contents(dir, TileId::new(0, 0, 0)).water.unwrap();
    assert!((t.depth_at(10, 16) - 0.125).abs() < 0.01, "over the sealed bunker: {}", t.depth_at(10, 16));
    let t1 = tile_contents(dir, TileId::new(0, 1, 0)).water.unwrap();
    assert!((t1.depth_at(22 - 16, 16) - 1.375).abs() < 0.01, "down the shaft: {}", t1.depth_at(6, 16));
}

#[test]
fn tile_depths_follow_the_ground_and_neighbours_agree_on_their_borders() {
    let dir = lagoon();
    let v = density(dir, "depths");
    let tiles = water_tiles(dir);
    let m = manifest(dir);
    let n = (m.tile_voxels + 1) as usize;
    let (mut wet, mut dry) = (0, 0);
    for (id, t) in &tiles {
        assert_eq!(t.size as usize, n);
        assert_eq!(t.level, LEVEL);
        if id.level == 0 {
            for j in 0..n {
                for i in 0..n {
                    let (x, y) = ((id.x as usize * 16 + i).min(63), (id.y as usize * 16 + j).min(63));
                    // The ring outside the closed sides is never water.
                    let ring = x == 0 || y == 0 || x == 63 || y == 63;
                    let g = ground(&v, x, y).filter(|_| !ring);
                    match g {
                        Some(g) if g < LEVEL - VOXEL => {
                            assert!(t.is_water(i, j), "{id} ({i}, {j}): ground {g} well below the level is water");
                            assert!(
                                (t.depth_at(i, j) - (LEVEL - g)).abs() <= t.depth_step + 1e-4,
                                "{id} ({i}, {j}): {} vs {}",
                                t.depth_at(i, j),
                                LEVEL - g
                            );
                            wet += 1;
                        }
                        Some(g) if g > LEVEL => {
                            assert!(!t.is_water(i, j), "{id} ({i}, {j}): ground {g} above the level is dry");
                            dry += 1;
                        }
                        _ => {}
                    }
                    if t.is_water(i, j) {
                        assert!(t.shore[j * n + i] >= 1);
                    }
                }
            }
        }
        let right = TileId::new(id.level, id.x + 1, id.y);
        if let Some(r) = tiles.get(&right) {
            for j in 0..n {
                assert_eq!((t.depth[j * n + n - 1], t.shore[j * n + n - 1]), (r.depth[j * n], r.shore[j * n]), "{id} | {right} row {j}");
            }
        }
        let up = TileId::new(id.level, id.x, id.y + 1);
        if let Some(u) = tiles.get(&up) {
            assert_eq!(t.depth[(n - 1) * n..], u.depth[..n], "{id} / {up}");
            assert_eq!(t.shore[(n - 1) * n..], u.shore[..n], "{id} / {up}");
        }
    }
    assert!(wet > 500 && dry > 500, "{wet} wet and {dry} dry level-0 samples");
}

#[test]
fn every_frame_and_depth_of_the_caustics_keeps_the_light_the_surface_lets_through() {
    let (w, hash) = waves(lagoon());
    assert_eq!((w.frames, w.resolution, w.depths.clone()), (8, 32, vec![0.25, 0.5, 1.0]));
    for t in water_tiles(lagoon()).values() {
        assert_eq!(t.waves_hash, hash);
    }
    let means: Vec<f64> = (0..w.frames as usize)
        .flat_map(|f| (0..w.depths.len()).map(move |d| (f, d)))
        .map(|(f, d)| {
            let m = w.caustic_map(f, d);
            m.iter().map(|&v| f64::from(v)).sum::<f64>() / m.len() as f64
        })
        .collect();
    let mean = means.iter().sum::<f64>() / means.len() as f64;
    for (i, m) in means.iter().enumerate() {
        assert!((m - mean).abs() <= 0.01 * mean, "frame {} depth {}: mean {m} against {mean}", i / 3, i % 3);
    }
    // About what a flat surface lets through (the waves tilt it a little either way).
    assert!((mean - f64::from(w.flat_transmittance)).abs() <= 0.05, "{mean} vs flat {}", w.flat_transmittance);
}

#[test]
fn grass_keeps_out_of_the_water() {
    let dir = lagoon();
    for id in water_tiles(dir).keys().filter(|id| id.level == 0) {
        let g: GrassTile = tile_contents(dir, *id).grass.unwrap();
        for j in 0..g.size as usize {
            for i in 0..g.size as usize {
                let (x, y) = (g.origin[0] + i as f32 * g.spacing, g.origin[1] + j as f32 * g.spacing);
                if g.keep[j * g.size as usize + i] > 0 {
                    assert!(g.height_at(x, y) >= LEVEL, "{id}: grass at ({x}, {y}) under water at {}", g.height_at(x, y));
                }
            }
        }
    }
}

#[test]
fn water_bakes_are_byte_identical_across_threads_runs_and_the_cache_and_verify() {
    let files = files_under(lagoon());
    let one = bake("one-thread", &["--no-cache", "--jobs", "1"]);
    assert_eq!(files_under(&one), files, "--jobs 1 against the default");
    let cache = scratch("water-cache");
    let cached = bake("cached", &["--cache", cache.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(files_under(&cached), files, "a cached bake against an uncached one");
    let again = bake("again", &["--cache", cache.to_str().unwrap()]);
    assert_eq!(files_under(&again), files, "a bake read back from the cache");
    let problems = kiln_bake::cli::verify::check(lagoon()).unwrap().0;
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn verify_refuses_a_tile_whose_waves_are_not_the_listed_pack() {
    let copy = scratch("water-verify");
    kiln_e2e::copy_dir(lagoon(), &copy);
    let id = TileId::new(0, 1, 1);
    let mut contents = tile_contents(&copy, id);
    contents.water.as_mut().unwrap().waves_hash ^= 1;
    let path = copy.join(id.pack_path());
    std::fs::write(&path, contents.to_pack([0, 1, 0]).unwrap()).unwrap();
    let problems = kiln_bake::cli::verify::check(&copy).unwrap().0;
    assert!(problems.iter().any(|p| p.contains("its water references waves pack")), "{problems:?}");
}

/// xxh3 of every pack of the lagoon, by path inside the bake (the waves pack and every tile, which
/// names it, follow the wave generator: re-pin with it).
const LAGOON_PACKS: &str = "\
manifest.kpack daad4088cf8ec169
shared/grass-patches.kpack 11f5b28ffd345667
shared/water-waves.kpack 482ad11dffe6f83a
tiles/L0_0_0.kpack 51b8edded6ec0037
tiles/L0_0_1.kpack e7df6971e5eec930
tiles/L0_0_2.kpack c82b5efb6a3bb0e5
tiles/L0_0_3.kpack f65f721a4a7a5167
tiles/L0_1_0.kpack efd17bd69c3a0c87
tiles/L0_1_1.kpack 11ffa625874b9ae2
tiles/L0_1_2.kpack ac97ca94ac943471
tiles/L0_1_3.kpack fdeaa0628f462e03
tiles/L0_2_0.kpack 67b76b7dbd2f53ca
tiles/L0_2_1.kpack 503e4578c579eca6
tiles/L0_2_2.kpack 7f5fdb940eea202d
tiles/L0_2_3.kpack f7c5f29624906c9e
tiles/L0_3_0.kpack 023c81bbddbfa6d9
tiles/L0_3_1.kpack f2b9723e90504dd1
tiles/L0_3_2.kpack e0f93cd00461a4cc
tiles/L0_3_3.kpack 1539b637121513c3
tiles/L1_0_0.kpack ada9d13323318460
tiles/L1_0_1.kpack 7893446a8e24cf46
tiles/L1_1_0.kpack b1615b5b532c26a1
tiles/L1_1_1.kpack 975f864c4136fc0d
tiles/L2_0_0.kpack 0fa97907e1a97d9c
";

#[test]
fn the_water_worlds_packs_are_the_pinned_bytes() {
    let line =
        |(path, bytes): (PathBuf, Vec<u8>)| format!("{} {:016x}\n", path.to_string_lossy().replace('\\', "/"), xxhash_rust::xxh3::xxh3_64(&bytes));
    let actual: String = files_under(lagoon()).into_iter().map(line).collect();
    assert!(actual == LAGOON_PACKS, "the lagoon's packs changed. If that is deliberate, bump the changed product's version and pin:\n{actual}");
}
