//! The hostile-input suite (issue #15): well over a thousand deterministic hostile inputs — corrupt
//! bakes, malformed world, brush and heightmap files, bad command lines — each run through the
//! `kiln` binary in a fresh directory under a memory limit and a timeout. Every input must end in
//! its documented exit code with one clear error line, with no panic, abort or hang, nothing
//! written outside `--out`, and (when refused) a peak memory within 256 MiB + 10 × its size.
//!
//! `KILN_HOSTILE_FILTER=text` runs only the cases whose name contains `text`.

#[path = "hostile/cli.rs"]
mod cli;
#[path = "hostile/files.rs"]
mod files;
#[path = "hostile/images.rs"]
mod images;
#[path = "hostile/packs.rs"]
mod packs;
#[path = "hostile/rng.rs"]
mod rng;
#[path = "hostile/runner.rs"]
mod runner;
#[path = "hostile/world_text.rs"]
mod world_text;
#[path = "hostile/worlds.rs"]
mod worlds;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use kiln_e2e::{scratch, tiny_bake};

/// The suite's seed: change it to explore other corruptions; failures name the case to rerun.
const SEED: u64 = 0x4b69_6c6e_0015;

/// The `kiln` CLI as a separate process: this crate's copy of it, which cargo builds (and rebuilds)
/// for this test, so the suite never runs a stale `kiln` binary.
fn kiln_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kiln-under-test"))
}

#[test]
fn hostile_inputs_are_refused_cleanly_within_bounds() {
    let kiln = kiln_binary();
    let bake = tiny_bake().to_owned();
    let mut rng = rng::Rng::new(SEED);
    let mut cases = worlds::controls(&bake);
    let controls = cases.len();
    cases.extend(worlds::cases(&bake));
    let non_pack = cases.len() - controls;
    cases.extend(packs::cases(&bake, &mut rng));
    if let Ok(filter) = std::env::var("KILN_HOSTILE_FILTER") {
        cases.retain(|c| c.name.contains(&filter));
    } else {
        assert!(cases.len() - controls >= 1000, "only {} hostile inputs", cases.len() - controls);
    }

    let root = scratch("hostile");
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let max_rss = AtomicUsize::new(0);
    let by_code = Mutex::new(std::collections::BTreeMap::<String, usize>::new());
    let start = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let (outcome, problems) = runner::run_case(&kiln, &root, i, case);
                max_rss.fetch_max(outcome.max_rss as usize, Ordering::Relaxed);
                let key = match (outcome.code, outcome.signal, outcome.timed_out) {
                    (_, _, true) => "hang".to_string(),
                    (Some(c), _, _) => format!("exit {c}"),
                    (None, Some(sig), _) => format!("signal {sig}"),
                    _ => "?".to_string(),
                };
                *by_code.lock().unwrap().entry(key).or_default() += 1;
                if !problems.is_empty() {
                    failures.lock().unwrap().push(format!("[{i:05}] {}: {}", case.name, problems.join("; ")));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    println!(
        "hostile: {} inputs ({} world/brush/heightmap/CLI, {} pack, {} controls) in {:.1} s on {threads} threads: {} passed, {} failed; outcomes {:?}; largest peak RSS {} MiB",
        cases.len(),
        non_pack.min(cases.len()),
        cases.len().saturating_sub(non_pack + controls),
        controls,
        start.elapsed().as_secs_f64(),
        cases.len() - failures.len(),
        failures.len(),
        by_code.into_inner().unwrap(),
        max_rss.load(Ordering::Relaxed) >> 20,
    );
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} hostile inputs broke a promise (each listed above as FAIL; their directories are kept under {})",
        failures.len(),
        cases.len(),
        root.display()
    );
}
