//! `make bench` part: what grass costs in a bake of a world with grass (the default world), and how
//! many blades it puts where the viewer's shipped flight looks.
//!
//! - the grass stage (patches, the ground map with its AO, every tile's `GRSS`) in a bake where
//!   everything else is cached: the world is baked once into a private cache, then `rounds` times
//!   with `[grass] max_slope` nudged by 1e-3° each round (every grass product recomputes, nothing else);
//! - the blades the bake places: Σ over instances and their level-0 blades of the kept share at the
//!   blade (the viewer keeps a blade iff a hash below it), in all and within `--radius` (16 units)
//!   of the flight's camera (`viewer/paths/<world>.csv`, every 60th frame).
//!
//! Usage: `cargo run --release -p kiln-bake --example grass_bench [-- worlds/x.toml [rounds [radius]]]`
//! (`KILN_BENCH_CACHE=dir` reuses a stage cache instead of a private one, skipping the cold bake's work).

use std::path::{Path, PathBuf};

use kiln_bake::pipeline::{bake, progress::NoProgress, BakeOptions, BakeReport};
use kiln_bake::world::{load_world, World};
use kiln_formats::sections::{GrassPatches, GrassTile, SharedPacks};
use kiln_formats::Pack;

fn run(world: &World, out: &Path, cache: &Path) -> BakeReport {
    let opts = BakeOptions { cache: Some(cache.to_owned()), ..BakeOptions::new(out.to_owned()) };
    bake(world, &opts, &NoProgress).unwrap_or_else(|e| {
        eprintln!("grass bench: {e}");
        std::process::exit(2)
    })
}

/// Camera positions of the flight, every `every`-th frame.
fn flight(path: &Path, every: usize) -> Vec<[f32; 3]> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('t'))
        .step_by(every)
        .filter_map(|l| {
            let v: Vec<f32> = l.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            (v.len() >= 4).then(|| [v[1], v[2], v[3]])
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "worlds/ice_caves.toml".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let radius: f32 = args.next().and_then(|r| r.parse().ok()).unwrap_or(16.0);
    let world = load_world(Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("grass bench: {e}");
        std::process::exit(2)
    });
    if world.spec.grass.is_none() {
        eprintln!("grass bench: {path} has no grass");
        std::process::exit(2);
    }
    let scratch = std::env::temp_dir().join(format!("kiln-grass-bench-{}", std::process::id()));
    let out = scratch.join("out");
    let cache = std::env::var_os("KILN_BENCH_CACHE").map_or_else(|| scratch.join("cache"), PathBuf::from);
    println!("grass bench: {} ({} threads, {rounds} rounds)", world.spec.name, rayon::current_num_threads());
    let first = run(&world, &out, &cache);
    let stage = |r: &BakeReport| r.stages.iter().filter(|s| s.name == "grass").map(|s| s.seconds).sum::<f64>();
    println!("  cold bake     {:>7.3} s grass stage (all stages {:.1} s)", stage(&first), first.stages.iter().map(|s| s.seconds).sum::<f64>());
    let mut times = Vec::new();
    let mut detail = String::new();
    for r in 0..rounds {
        let mut w = world.clone();
        if let Some(g) = w.spec.grass.as_mut() {
            g.max_slope += 1e-3 * (r + 1) as f64;
        }
        let report = run(&w, &out, &cache);
        times.push(stage(&report));
        detail = report.stages.iter().find(|s| s.name == "grass").map(|s| s.detail.clone()).unwrap_or_default();
    }
    times.sort_by(f64::total_cmp);
    println!("  grass stage   {:>7.3} s  (median of {rounds}, the rest cached; last: {detail})", times[times.len() / 2]);

    let bake_dir = out.join(&world.spec.name);
    let manifest = Pack::open(&bake_dir.join("manifest.kpack")).expect("manifest");
    let shared: SharedPacks = manifest.require().expect("SHRD");
    let entry = shared.get("grass-patches").expect("grass pack");
    let gpat: GrassPatches = Pack::open(&bake_dir.join(&entry.path)).expect("grass pack").require().expect("GPAT");
    let cameras = flight(&PathBuf::from(format!("viewer/paths/{}.csv", world.spec.name)), 60);
    let (mut total, mut instances) = (0.0f64, 0usize);
    let mut near = vec![0.0f64; cameras.len()];
    for e in std::fs::read_dir(bake_dir.join("tiles")).expect("tiles") {
        let p = e.expect("entry").path();
        if !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("L0_")) {
            continue;
        }
        let Some(g) = Pack::open(&p).expect("tile").get::<GrassTile>().expect("GRSS") else { continue };
        for inst in &g.instances {
            instances += 1;
            let blades = &gpat.patches[usize::from(inst.patch)].levels[0].blades;
            for b in blades {
                let q = inst.world_xy(b.position, gpat.patch_size);
                let keep = f64::from(g.keep_at(q[0], q[1]));
                if keep == 0.0 {
                    continue;
                }
                total += keep;
                let z = g.height_at(q[0], q[1]);
                for (c, n) in cameras.iter().zip(near.iter_mut()) {
                    let d2 = (q[0] - c[0]).powi(2) + (q[1] - c[1]).powi(2) + (z - c[2]).powi(2);
                    if d2 <= radius * radius {
                        *n += keep;
                    }
                }
            }
        }
    }
    println!("  blades        {:.2} M in {instances} patch instances ({} unique patches)", total / 1e6, gpat.patches.len());
    if !near.is_empty() {
        let mut sorted = near.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "  within {radius} of the flight's camera: min {:.2} M, median {:.2} M, max {:.2} M blades ({} frames)",
            sorted[0] / 1e6,
            sorted[sorted.len() / 2] / 1e6,
            sorted[sorted.len() - 1] / 1e6,
            near.len()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
