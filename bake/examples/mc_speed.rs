//! Marching-cubes throughput on a cave-like field, single-threaded.
//!
//! `cargo run --release -p kiln-bake --example mc_speed [cells_per_axis] [repeats]`
//!
//! Prints cells (voxels) meshed per second per core, the fraction of intersected cells and the
//! mesh size. Refuses to measure a debug build, whose figures would mislead.

use std::time::Instant;

use kiln_bake::grid::DensityBlock;
use kiln_bake::mc::{march, march_into, CellRange, DEFAULT_EDGE_STEPS};

/// A cave-like field: sums of skewed sines at a few wavelengths, tuned so ~10% of cells are
/// crossed by the surface.
fn caves(x: i32, y: i32, z: i32) -> f32 {
    let (x, y, z) = (x as f32, y as f32, z as f32);
    let a = (0.151 * x + 0.051 * z).sin() + (0.127 * y - 0.071 * x).sin() + (0.137 * z + 0.047 * y).sin();
    let b = (0.37 * x - 0.17 * y).sin() * (0.31 * z + 0.11 * x).cos();
    ((a + 0.5 * b - 0.3) * 0.4).clamp(-1.0, 1.0)
}

fn main() {
    if cfg!(debug_assertions) {
        eprintln!("mc_speed measures only in release: cargo run --release -p kiln-bake --example mc_speed");
        std::process::exit(2);
    }
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(128);
    let repeats: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);

    let range = CellRange { min: [-37, 11, -5], cells: [n; 3] };
    let block = DensityBlock::from_fn(range.block_origin(1).unwrap(), range.block_dims().unwrap(), 1, caves);

    let crossed = (0..n)
        .flat_map(|z| (0..n).flat_map(move |y| (0..n).map(move |x| (x, y, z))))
        .filter(|&(x, y, z)| {
            let solid = (0..8).filter(|k| block.at(x + 1 + (k & 1), y + 1 + (k >> 1 & 1), z + 1 + (k >> 2)) > 0.0).count();
            solid != 0 && solid != 8
        })
        .count();

    // Fresh output buffers per call, as `march` does, and reused ones, as a tile loop with
    // `march_into` and one mesh per worker does.
    let cells = (n * n * n) as f64;
    let mut best_fresh = f64::INFINITY;
    let mut best_reused = f64::INFINITY;
    let mut mesh = march(&block, &range).expect("block matches range");
    for _ in 0..repeats {
        let t = Instant::now();
        let fresh = march(&block, &range).expect("block matches range");
        best_fresh = best_fresh.min(t.elapsed().as_secs_f64());
        drop(fresh);
        let t = Instant::now();
        march_into(&block, &range, DEFAULT_EDGE_STEPS, &mut mesh).expect("block matches range");
        best_reused = best_reused.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{n}^3 cells, {:.1}% intersected: {} vertices, {} triangles; best of {repeats}: \
         {:.2} ms = {:.0} Mvoxels/s per core with fresh output, {:.2} ms = {:.0} Mvoxels/s reusing it",
        100.0 * crossed as f64 / cells,
        mesh.positions.len(),
        mesh.triangle_count(),
        best_fresh * 1e3,
        cells / best_fresh / 1e6,
        best_reused * 1e3,
        cells / best_reused / 1e6,
    );
}
