//! Times tree placement on a world's density (default: worlds/ice_caves.toml).
//!
//! `cargo run --release -p kiln-bake --example scatter_speed [-- WORLD.toml [REPEATS]]`
//!
//! Builds the density volume (not timed), then prints the best of REPEATS (default 5) runs of
//! `scatter` with one tree rule (spacing 0.8 at full density: ~500 trees on the default world) and with that rule plus a
//! dense bush rule, and what they placed, so a slow ground query or a grid blow-up shows at once.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use kiln_bake::density::generate;
use kiln_bake::scatter::{scatter_with_stats, Placement, RuleStats, ScatterRule};
use kiln_bake::world::load_world;

type Placed = (Vec<Placement>, Vec<RuleStats>);

fn best(repeats: usize, mut f: impl FnMut() -> Placed) -> (Duration, Placed) {
    let mut out = (Vec::new(), Vec::new());
    let mut best = Duration::MAX;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed());
    }
    (best, out)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../worlds/ice_caves.toml"));
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let world = match load_world(&path) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let [nx, ny, nz] = world.dims();
    let vs = world.voxel_size() as f32;
    let t = Instant::now();
    let volume = generate(&world);
    println!(
        "{}: {nx} x {ny} x {nz} samples at {vs} ({:.1} x {:.1} units), density built in {:.0} ms, {} rayon threads",
        path.display(),
        (nx - 1) as f32 * vs,
        (ny - 1) as f32 * vs,
        t.elapsed().as_secs_f64() * 1e3,
        rayon::current_num_threads()
    );

    let trees = ScatterRule {
        min_spacing: 0.8,
        density: 1.0,
        max_slope_deg: 40.0,
        height_band: [f32::NEG_INFINITY, f32::INFINITY],
        density_image: None,
        scale: [0.8, 1.2],
        tint_variation: 0.1,
        support_radius: 0.15,
    };
    let bushes = ScatterRule { min_spacing: 0.25, density: 4.0, support_radius: 0.05, ..trees.clone() };
    for (name, rules) in [("trees", vec![trees.clone()]), ("trees + bushes", vec![trees, bushes])] {
        let (time, (_, stats)) = best(repeats, || match scatter_with_stats(&volume, vs, &rules, world.spec.seed) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        });
        println!("  {name:16} {:8.1} ms", time.as_secs_f64() * 1e3);
        for (r, s) in stats.iter().enumerate() {
            println!(
                "    rule {r}: {:5} placed of {:6} reserved (thinned {}, no ground {}, height band {}, slope {}, support {})",
                s.placed, s.reserved, s.thinned, s.no_ground, s.band, s.slope, s.support
            );
        }
    }
}
