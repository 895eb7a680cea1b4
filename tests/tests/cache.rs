//! Incremental bakes through the stage cache: hits, misses, corruption, concurrency, and output
//! that is byte-identical with or without the cache.

use std::fs;
use std::path::{Path, PathBuf};

use kiln_bake::pipeline::{bake, BakeOptions, BakeReport};
use kiln_bake::world::load_world;
use kiln_e2e::{files_under, kiln, repo_root, scratch};

fn run(world: &Path, out: &Path, cache: Option<&Path>) -> BakeReport {
    let w = load_world(world).unwrap();
    let opts = BakeOptions { cache: cache.map(Path::to_owned), explain: true, ..BakeOptions::new(out.to_owned()) };
    bake(&w, &opts, &kiln_bake::pipeline::progress::NoProgress).unwrap()
}

fn computed(r: &BakeReport, stage: &str) -> usize {
    r.tallies.iter().find(|(s, _)| *s == stage).map_or(0, |(_, t)| t.computed)
}

fn total_computed(r: &BakeReport) -> usize {
    r.tallies.iter().map(|(_, t)| t.computed).sum()
}

/// A copy of tiny.toml with a short AO radius (so a brush stroke's influence stays local) and a
/// brush file with one stroke at `at`.
fn brushed_world(dir: &Path, at: [f32; 3]) -> PathBuf {
    let tiny = fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    fs::write(
        dir.join("strokes.toml"),
        format!("[[stroke]]\nshape = \"sphere\"\nfalloff = \"linear\"\nradius = 0.5\nweight = -1.0\nposition = [{}, {}, {}]\n", at[0], at[1], at[2]),
    )
    .unwrap();
    let world = dir.join("brushed.toml");
    let tiny = tiny.replace("radius_voxels = 16.0", "radius_voxels = 8.0");
    assert!(tiny.contains("radius_voxels = 8.0"), "tiny.toml sets an AO radius");
    fs::write(&world, format!("{tiny}\n[brushes]\nfile = \"strokes.toml\"\n")).unwrap();
    world
}

#[test]
fn an_unchanged_rebake_computes_nothing_and_matches_an_uncached_bake() {
    let dir = scratch("cache-noop");
    let world = repo_root().join("worlds/tiny.toml");
    let cache = dir.join("cache");
    let cold = run(&world, &dir.join("a"), Some(&cache));
    assert!(computed(&cold, "geometry") > 0);
    let warm = run(&world, &dir.join("a"), Some(&cache));
    assert_eq!(total_computed(&warm), 0, "{:?}", warm.tallies);
    assert!(!warm.wrote_output, "an up-to-date output is left alone");
    // The same cache, a fresh output directory: every pack from the cache.
    let warm_elsewhere = run(&world, &dir.join("b"), Some(&cache));
    assert_eq!(total_computed(&warm_elsewhere), 0);
    run(&world, &dir.join("c"), None);
    let (a, b, c) = (files_under(&dir.join("a/tiny")), files_under(&dir.join("b/tiny")), files_under(&dir.join("c/tiny")));
    assert!(a == c && b == c, "cached and uncached bakes differ");
}

#[test]
fn changing_ao_settings_reuses_the_density_and_recomputes_tiles() {
    let dir = scratch("cache-ao");
    let cache = dir.join("cache");
    let tiny = fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    let world = dir.join("tiny.toml");
    fs::write(&world, &tiny).unwrap();
    run(&world, &dir.join("out"), Some(&cache));
    fs::write(&world, tiny.replace("[ao]\n", "[ao]\npower = 2.0\n")).unwrap();
    let r = run(&world, &dir.join("out"), Some(&cache));
    assert_eq!(computed(&r, "density"), 0);
    assert_eq!(computed(&r, "tile-inputs"), 0, "AO power does not change what AO reads");
    assert_eq!(computed(&r, "geometry"), 21);
    assert!(r.explanations.iter().filter(|e| e.starts_with("geometry")).all(|e| e.contains("changed: ao settings")), "{:#?}", r.explanations);
}

#[test]
fn one_brush_stroke_recomputes_only_the_tiles_it_touches() {
    let dir = scratch("cache-brush");
    let cache = dir.join("cache");
    // Tiny's tiles are 16 voxels of 0.25 units = 4 units; (6, 6) is the middle of tile (1, 1).
    let world = brushed_world(&dir, [6.0, 6.0, 2.5]);
    run(&world, &dir.join("out"), Some(&cache));
    let world = brushed_world(&dir, [6.5, 6.0, 2.5]);
    let r = run(&world, &dir.join("out"), Some(&cache));
    let geometry: Vec<&String> = r.explanations.iter().filter(|e| e.starts_with("geometry")).collect();
    assert!(!geometry.is_empty() && computed(&r, "geometry") == geometry.len());
    assert!(computed(&r, "geometry") < 21 / 2, "recomputed {:#?}", geometry);
    assert!(geometry.iter().any(|e| e.contains("L0 (1,1)")), "{geometry:#?}");
    assert!(!geometry.iter().any(|e| e.contains("L0 (3,3)") || e.contains("L0 (3,0)")), "{geometry:#?}");
    // And the incremental result is exactly a clean bake of the edited world.
    run(&world, &dir.join("clean"), None);
    assert!(files_under(&dir.join("out/tiny")) == files_under(&dir.join("clean/tiny")));
}

#[test]
fn corrupt_cache_entries_are_reported_and_rebuilt() {
    let dir = scratch("cache-corrupt");
    let cache = dir.join("cache");
    let world = repo_root().join("worlds/tiny.toml");
    run(&world, &dir.join("a"), Some(&cache));
    let mut entries = 0;
    for sub in fs::read_dir(cache.join("objects")).unwrap() {
        for e in fs::read_dir(sub.unwrap().path()).unwrap() {
            let p = e.unwrap().path();
            let mut b = fs::read(&p).unwrap();
            let last = b.len() - 1;
            b[last] ^= 0x5a;
            fs::write(&p, &b).unwrap();
            entries += 1;
        }
    }
    assert!(entries > 20);
    let r = run(&world, &dir.join("b"), Some(&cache));
    assert!(!r.cache_warnings.is_empty() && r.cache_warnings.iter().all(|w| w.contains("corrupt")), "{:?}", r.cache_warnings);
    assert!(total_computed(&r) > 0);
    let again = run(&world, &dir.join("b"), Some(&cache));
    assert!(again.cache_warnings.is_empty(), "reported once, then rebuilt: {:?}", again.cache_warnings);
    assert_eq!(total_computed(&again), 0);
    assert!(files_under(&dir.join("a/tiny")) == files_under(&dir.join("b/tiny")));
}

#[test]
fn concurrent_bakes_share_one_cache() {
    let dir = scratch("cache-concurrent");
    let cache = dir.join("cache");
    let world = repo_root().join("worlds/tiny.toml");
    std::thread::scope(|s| {
        for name in ["a", "b", "c"] {
            let (dir, cache, world) = (&dir, &cache, &world);
            s.spawn(move || run(world, &dir.join(name), Some(cache)));
        }
    });
    let a = files_under(&dir.join("a/tiny"));
    assert!(a == files_under(&dir.join("b/tiny")) && a == files_under(&dir.join("c/tiny")));
    let r = run(&world, &dir.join("a"), Some(&cache));
    assert_eq!(total_computed(&r), 0);
}

#[test]
fn cache_stats_and_gc() {
    let dir = scratch("cache-gc");
    let cache = dir.join("cache");
    run(&repo_root().join("worlds/tiny.toml"), &dir.join("out"), Some(&cache));
    let store = kiln_cache::store::Store::open(&cache).unwrap();
    let before = store.stats().unwrap();
    assert!(before.entries > 20 && before.bytes > 0);
    let c = cache.to_str().unwrap();
    assert_eq!(kiln(&["cache", "stats", "--cache", c]), 0);
    assert_eq!(kiln(&["cache", "gc", "--max-size", "100K", "--cache", c]), 0);
    assert!(store.stats().unwrap().bytes <= 100 * 1024);
    assert_eq!(kiln(&["cache", "gc", "--max-size", "0", "--cache", c]), 0);
    assert_eq!(store.stats().unwrap().entries, 0);
    assert_eq!(kiln(&["cache", "gc", "--max-size", "lots", "--cache", c]), 2);
}

/// Bakes tiny.toml cold into `dir/a` through a cache, then again into `dir/b` with `lighting`
/// (lines for the `[lighting]` table) added, and checks that only lighting was recomputed.
/// Returns the world file's path.
fn rebake_with_lighting(dir: &Path, lighting: &str) -> PathBuf {
    let cache = dir.join("cache");
    let tiny = fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    let world = dir.join("tiny.toml");
    fs::write(&world, &tiny).unwrap();
    let cold = run(&world, &dir.join("a"), Some(&cache));
    fs::write(&world, tiny.replace("[lighting]\n", &format!("[lighting]\n{lighting}\n"))).unwrap();
    let r = run(&world, &dir.join("b"), Some(&cache));
    for stage in ["density", "raw density", "tile-inputs", "geometry"] {
        assert_eq!(computed(&r, stage), 0, "{stage} recomputed: {:?}", r.tallies);
    }
    assert_eq!(computed(&r, "tile lighting"), cold.tiles);
    assert!(r.explanations.iter().filter(|e| e.starts_with("tile lighting")).all(|e| e.contains("changed: lighting")), "{:#?}", r.explanations);
    world
}

#[test]
fn changing_a_light_recomputes_lighting_only() {
    let dir = scratch("cache-light");
    let world = rebake_with_lighting(&dir, "sky = { color = [0.4, 0.6, 1.0], intensity = 1.5 }");
    run(&world, &dir.join("clean"), None);
    assert!(files_under(&dir.join("b/tiny")) == files_under(&dir.join("clean/tiny")));
}

/// Mean luminance of the level-0 per-vertex irradiance, and every value, of a bake.
fn level0_irradiance(bake_dir: &Path) -> (f64, Vec<[f32; 3]>) {
    let m = kiln_e2e::manifest(bake_dir);
    let values: Vec<[f32; 3]> = m
        .nodes
        .iter()
        .filter(|n| n.level == 0)
        .flat_map(|n| kiln_e2e::tile_contents(bake_dir, n.id()).irradiance.expect("per-vertex irradiance").0)
        .collect();
    let mean = values.iter().map(|c| (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) as f64).sum::<f64>() / values.len() as f64;
    (mean, values)
}

#[test]
fn a_new_lighting_noise_seed_redraws_only_the_lighting() {
    let dir = scratch("cache-noise-seed");
    rebake_with_lighting(&dir, "noise_seed = 7");
    // Another draw of the same light: the vertices' values move, their mean (120 k paths) hardly.
    let ((a, va), (b, vb)) = (level0_irradiance(&dir.join("a/tiny")), level0_irradiance(&dir.join("b/tiny")));
    assert_eq!(va.len(), vb.len());
    let moved = va.iter().zip(&vb).filter(|(x, y)| x != y).count();
    assert!(moved > va.len() / 2, "only {moved} of {} vertices changed", va.len());
    assert!(a > 0.0 && (a - b).abs() < 0.03 * a, "mean irradiance {a} vs {b}");
}
