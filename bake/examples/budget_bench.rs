//! `make bench` part (issue 20, bounded memory): the default world baked with `--memory-budget`
//! (512M unless given) against the same bake without one, alternated over two rounds, each from an
//! empty stage cache with every core: wall time, the measured peak, and whether the budget held
//! (a bake past its budget is stopped, and its error is printed). The budgeted output is checked
//! to be the unbudgeted bytes.
//!
//! Usage: `cargo run --release -p kiln-bake --example budget_bench [-- worlds/x.toml [SIZE]]`;
//! runs the `kiln` binary built beside this example (`cargo build --release -p kiln-bake` first).

#[path = "support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Instant;

use support::{files, kiln, world_name};

/// One bake: wall seconds, the peak memory it printed (MiB), and its error line if it failed.
fn bake(args: &[&str]) -> (f64, Option<f64>, Option<String>) {
    let t = Instant::now();
    let o = Command::new(kiln()).args(args).output().unwrap_or_else(|e| panic!("{}: {e}", kiln().display()));
    let wall = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let total = err.lines().find(|l| l.trim_start().starts_with("total"));
    let peak = total.and_then(|l| l.split("peak memory ").nth(1)).and_then(|v| v.trim().trim_end_matches(" MiB").parse().ok());
    let failure = (!o.status.success()).then(|| err.lines().find(|l| l.starts_with("kiln: error")).unwrap_or(err.trim()).to_owned());
    (wall, peak, failure)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let world = args.next().unwrap_or_else(|| "worlds/ice_caves.toml".into());
    let size = args.next().unwrap_or_else(|| "512M".into());
    let name = world_name("budget bench", &world);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scratch = std::env::temp_dir().join(format!("kiln-budget-bench-{}", std::process::id()));
    println!("budget bench: {name}, {cores} threads, --memory-budget {size} against none, each from an empty cache");
    let mut walls = [Vec::new(), Vec::new()];
    for round in 1..=2 {
        for (i, budget) in [None, Some(size.as_str())].into_iter().enumerate() {
            let label = if budget.is_some() { "budget" } else { "none" };
            let dir = scratch.join(format!("{label}-{round}"));
            let (out, cache) = (dir.join("out"), dir.join("cache"));
            let mut a = vec!["bake", world.as_str(), "--out", out.to_str().unwrap(), "--cache", cache.to_str().unwrap()];
            a.extend(budget.map(|b| ["--memory-budget", b]).into_iter().flatten());
            let (wall, peak, failure) = bake(&a);
            let peak = peak.map_or("?".into(), |p| format!("{p:.0} MiB"));
            match failure {
                None => {
                    walls[i].push(wall);
                    println!("  round {round}, {label:<6} {wall:>7.2} s, peak {peak}");
                }
                Some(e) => println!("  round {round}, {label:<6} {wall:>7.2} s, stopped: {e}"),
            }
        }
        let (a, b) = (files(&scratch.join(format!("none-{round}/out/{name}"))), files(&scratch.join(format!("budget-{round}/out/{name}"))));
        if !b.is_empty() {
            println!("  round {round}: the budgeted output is {} the unbudgeted bytes", if a == b { "exactly" } else { "NOT" });
        }
    }
    let best = |w: &[f64]| w.iter().copied().fold(f64::INFINITY, f64::min);
    if walls.iter().all(|w| !w.is_empty()) {
        println!("  time with the budget / without, best of each: {:.2}x (goal <= 1.25x)", best(&walls[1]) / best(&walls[0]));
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
