//! Times growing grass patches (blades, the merge chain, flowers) at the default spec.
//!
//! `cargo run --release -p kiln-bake --example grass_speed [-- PATCHES [REPEATS]]`
//!
//! Prints the best of REPEATS (default 5) runs of growing PATCHES (default 24, as `[grass] patches`)
//! default patches in parallel (rayon, collected in order), then the same at the density a 40° slope
//! limit asks of the pipeline (`density / cos(40°)`), with ms per patch and blades per level, so a
//! merge that stops halving or a search that goes quadratic shows at once.

use std::time::{Duration, Instant};

use kiln_bake::grass::{grow_patch, merge_radius, tint, Patch, PatchSpec};
use rayon::prelude::*;

fn best(repeats: usize, mut f: impl FnMut() -> Vec<Patch>) -> (Duration, Vec<Patch>) {
    let mut out = Vec::new();
    let mut best = Duration::MAX;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed());
    }
    (best, out)
}

fn report(name: &str, spec: &PatchSpec, count: u32, repeats: usize) {
    if let Err(e) = spec.validate() {
        eprintln!("{e}");
        std::process::exit(1);
    }
    let (time, patches) = best(repeats, || (0..count).into_par_iter().map(|i| grow_patch(spec, 1, i)).collect());
    let levels = patches[0].levels.len();
    let mean: Vec<f64> = (0..levels).map(|k| patches.iter().map(|p| p.levels[k].blades.len() as f64).sum::<f64>() / f64::from(count)).collect();
    let falls: Vec<String> = mean.windows(2).map(|w| format!("{:.0}%", 100.0 * (1.0 - w[1] / w[0]))).collect();
    let blades: usize = patches.iter().map(|p| p.levels.iter().map(|l| l.blades.len()).sum::<usize>()).sum();
    println!(
        "{name}: {count} patches of {} blades (density {:.0}/unit², merge radius {:.4}) in {:.2} ms, {:.3} ms per patch ({} blades over all levels)",
        patches[0].levels[0].blades.len(),
        spec.density,
        merge_radius(spec),
        time.as_secs_f64() * 1e3,
        time.as_secs_f64() * 1e3 / f64::from(count),
        blades
    );
    println!("  mean blades per level: {}", mean.iter().map(|m| format!("{m:.0}")).collect::<Vec<_>>().join(" → "));
    println!("  fall per level: {}", falls.join(", "));
    let t = tint(&patches);
    println!("  tint (linear): [{:.4}, {:.4}, {:.4}]", t[0], t[1], t[2]);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let count: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(24);
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    println!("{} rayon threads", rayon::current_num_threads());
    let spec = PatchSpec::default();
    report("default", &spec, count, repeats);
    let slope = PatchSpec { density: spec.density / libm::cosf(40f32.to_radians()), ..spec.clone() };
    report("slope-compensated (40°)", &slope, count, repeats);
    report("8 levels", &PatchSpec { levels: 8, ..spec }, count, repeats);
}
