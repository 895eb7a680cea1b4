//! `make bench` part: the default world's full bake, stage by stage, in a release build.
//!
//! Usage: `cargo run --release -p kiln-bake --example bake_bench [-- worlds/x.toml]`.

use std::time::Instant;

fn main() {
    let world_path = std::env::args().nth(1).unwrap_or_else(|| "worlds/ice_caves.toml".into());
    let world = match kiln_bake::world::load_world(std::path::Path::new(&world_path)) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("bake bench: {e}");
            std::process::exit(2);
        }
    };
    let out = std::env::temp_dir().join(format!("kiln-bake-bench-{}", std::process::id()));
    let opts = kiln_bake::pipeline::BakeOptions::new(out.clone());
    let clock = Instant::now();
    let report = match kiln_bake::pipeline::bake(&world, &opts, &kiln_bake::pipeline::progress::NoProgress) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bake bench: {e}");
            std::process::exit(2);
        }
    };
    let wall = clock.elapsed().as_secs_f64();
    println!("bake bench: {} ({} voxels, {} threads)", world.spec.name, report.voxels, rayon::current_num_threads());
    for s in &report.stages {
        println!("  {s}");
    }
    println!(
        "  {:<10} {:>7.3} s  {:.1} Mvoxels/s, {} tiles, {} vertices, {} triangles, {:.1} MB of packs",
        "total",
        wall,
        report.voxels as f64 / wall / 1e6,
        report.tiles,
        report.vertices,
        report.triangles,
        report.bytes_written as f64 / 1e6
    );
    println!("  peak memory {}", kiln_bake::peak_memory().map_or("unknown".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0)));
    let _ = std::fs::remove_dir_all(&out);
}
