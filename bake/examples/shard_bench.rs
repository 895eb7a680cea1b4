//! `make bench` part (issue 20): the default world's bake on 1, 2, 4, … threads (the scaling
//! curve); the machine's own ceiling for it (as many one-thread bakes at once as there are cores:
//! how much work the cores do together, in units of one core alone, which no one process can
//! beat); then as N local shards sharing the machine's threads (`kiln bake --local-shards N`,
//! each from an empty cache), against one process with every thread; each sharded output is
//! checked to be the one-process bytes.
//!
//! Usage: `cargo run --release -p kiln-bake --example shard_bench [-- worlds/x.toml]`; runs the
//! `kiln` binary built beside this example (`cargo build --release -p kiln-bake` first).

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use support::{files, kiln, world_name};

/// Runs one bake; returns its wall time and peak memory line.
fn bake(args: &[&str]) -> f64 {
    let t = Instant::now();
    let o = Command::new(kiln()).args(args).output().unwrap_or_else(|e| panic!("{}: {e}", kiln().display()));
    if !o.status.success() {
        eprintln!("shard bench: kiln {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        std::process::exit(2);
    }
    t.elapsed().as_secs_f64()
}

fn main() {
    let world = std::env::args().nth(1).unwrap_or_else(|| "worlds/ice_caves.toml".into());
    let name = world_name("shard bench", &world);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scratch = std::env::temp_dir().join(format!("kiln-shard-bench-{}", std::process::id()));
    let s = |p: &str| scratch.join(p).to_str().unwrap().to_owned();
    println!("shard bench: {name}, {cores} cores");
    let mut threads: Vec<usize> = std::iter::successors(Some(1), |&t| (t * 2 < cores).then_some(t * 2)).collect();
    threads.push(cores);
    threads.dedup();
    let mut one = 0.0;
    let mut all = 0.0;
    for &j in &threads {
        let wall = bake(&["bake", &world, "--out", &s(&format!("jobs{j}")), "--no-cache", "--quiet", "--jobs", &j.to_string()]);
        if j == 1 {
            one = wall;
        }
        all = wall;
        println!("  one process, {j:>3} threads  {wall:7.2} s  ({:.2}x one thread)", one / wall);
    }
    // The ceiling: every core running a one-thread bake of its own, against `one` alone.
    let t = Instant::now();
    let copies: Vec<_> = (0..cores)
        .map(|k| {
            let args = ["bake", &world, "--out", &s(&format!("copy{k}")), "--no-cache", "--quiet", "--jobs", "1"];
            Command::new(kiln()).args(args).spawn().unwrap_or_else(|e| panic!("{}: {e}", kiln().display()))
        })
        .collect();
    for mut c in copies {
        if !c.wait().is_ok_and(|s| s.success()) {
            eprintln!("shard bench: a one-thread copy failed");
            std::process::exit(2);
        }
    }
    let wall = t.elapsed().as_secs_f64();
    let ceiling = cores as f64 * one / wall;
    println!(
        "  {cores} one-thread bakes at once {wall:7.2} s  (the cores' ceiling: {ceiling:.2}x one thread; one process with {cores} threads reaches {:.0} % of it)",
        100.0 * one / all / ceiling
    );
    let reference = files(&scratch.join(format!("jobs{cores}")).join(&name));
    let mut shards: Vec<usize> = std::iter::successors(Some(2), |&n| (n * 2 <= cores).then_some(n * 2)).collect();
    if shards.is_empty() || cores < 2 {
        shards = vec![2];
    }
    for n in shards {
        let out = s(&format!("shards{n}"));
        let wall = bake(&["bake", &world, "--out", &out, "--cache", &s(&format!("cache{n}")), "--quiet", "--local-shards", &n.to_string()]);
        let same = files(&Path::new(&out).join(&name)) == reference;
        println!(
            "  {n:>3} local shards       {wall:7.2} s  ({:.2}x one process with {cores} threads){}",
            wall / all,
            if same { "" } else { "  OUTPUT DIFFERS" }
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
