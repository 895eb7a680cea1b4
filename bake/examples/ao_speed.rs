//! AO speed on a default-sized world: 512×512×64 voxels of sine-product caves.
//!
//! `cargo run --release -p kiln-bake --example ao_speed [threads] [max_points] [repeats]`
//! (defaults: 2 threads, the bake's budget; 1 M surface points; 1 repeat).
//!
//! Surface points are air voxels with a solid 6-neighbour. AO is timed twice: with normals from
//! the neighbour direction sum (axis-aligned or diagonal, so about 9 of the 26 directions are in
//! the hemisphere) and with normals from the density gradient (generic, like a mesher's: 13).

use std::time::Instant;

use kiln_bake::ao::{ambient_occlusion, AoSettings, OccupancyField};
use rayon::prelude::*;

const DIMS: [usize; 3] = [512, 512, 64];

/// Cave-like density: interleaved sine products (tunnels and chambers 10–30 voxels across),
/// solid below z = 4 (the ground).
fn density(x: f32, y: f32, z: f32) -> f32 {
    if z < 3.5 {
        return 1.0;
    }
    let a = (x * 0.11 + 1.3 * (y * 0.067).sin()).sin() * (y * 0.1 + 0.9 * (z * 0.12).sin()).sin();
    let b = (z * 0.21 + x * 0.031).sin() * (y * 0.079 - x * 0.047).cos();
    0.1 + a + 0.6 * b
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut arg = |default: usize| args.next().map_or(default, |a| a.parse().expect("arguments are numbers"));
    let (threads, max_points, repeats) = (arg(2), arg(1_000_000), arg(1));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");

    let [nx, ny, nz] = DIMS;
    let densities: Vec<f32> = pool
        .install(|| (0..nx * ny * nz).into_par_iter().map(|i| density((i % nx) as f32, ((i / nx) % ny) as f32, (i / (nx * ny)) as f32)).collect());
    let solid_frac = densities.iter().filter(|&&d| d > 0.0).count() as f64 / densities.len() as f64;
    println!("volume {nx}x{ny}x{nz}, solid fraction {solid_frac:.3}, {threads} thread(s)");

    let mut field = None;
    for _ in 0..repeats {
        let (t, c) = (Instant::now(), cpu_seconds());
        field = Some(pool.install(|| OccupancyField::from_densities(DIMS, &densities)).expect("field"));
        let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
        println!("field build: {:6.1} ms wall, {:5.0} ms CPU", wall * 1e3, cpu * 1e3);
    }
    let field = field.expect("at least one repeat");
    println!("field memory: {:.1} MiB", field.memory_bytes() as f64 / (1 << 20) as f64);

    let (positions, normals) = surface_points(&field, max_points);
    let gradient_normals: Vec<[f32; 3]> = positions.iter().map(|p| gradient_normal(*p)).collect();
    let settings = AoSettings::default();
    for (name, normals) in [("neighbour-sum normals", &normals), ("gradient normals", &gradient_normals)] {
        for _ in 0..repeats {
            let (t, c) = (Instant::now(), cpu_seconds());
            let ao = pool.install(|| ambient_occlusion(&field, &positions, normals, &settings)).expect("ao");
            let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
            let mean = ao.iter().map(|&a| a as f64).sum::<f64>() / ao.len() as f64;
            println!(
                "AO, {name}: {} vertices in {:6.1} ms wall, {:5.0} ms CPU = {:.2} M vertices/s wall (mean AO {mean:.3})",
                positions.len(),
                wall * 1e3,
                cpu * 1e3,
                positions.len() as f64 / wall / 1e6
            );
        }
    }
    println!("(CPU time counts only while this process ran: on a shared machine wall time inflates)");
}

/// Mesh-like vertices: every air voxel with a solid 6-neighbour, placed half a voxel towards its
/// solid neighbours (where a surface vertex would be), with the normal pointing away from them.
/// Evenly thinned to at most `max_points`.
fn surface_points(field: &OccupancyField, max_points: usize) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let [nx, ny, nz] = field.dims().map(|n| n as i32);
    let mut points = Vec::new();
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                if field.is_solid(x, y, z) {
                    continue;
                }
                let mut sum = [0i32; 3];
                for (a, o) in [[1, 0, 0], [0, 1, 0], [0, 0, 1]].iter().enumerate() {
                    for s in [1, -1] {
                        if field.is_solid(x + s * o[0], y + s * o[1], z + s * o[2]) {
                            sum[a] -= s;
                        }
                    }
                }
                if sum != [0; 3] {
                    let len = ((sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]) as f32).sqrt();
                    let n = sum.map(|c| c as f32 / len);
                    let p = [x as f32 - 0.5 * n[0], y as f32 - 0.5 * n[1], z as f32 - 0.5 * n[2]];
                    points.push((p, n));
                }
            }
        }
    }
    let stride = points.len().div_ceil(max_points.max(1)).max(1);
    println!("{} surface points, taking every {stride}", points.len());
    points.into_iter().step_by(stride).unzip()
}

/// The outward surface normal at `p`: minus the density gradient, by central differences.
fn gradient_normal(p: [f32; 3]) -> [f32; 3] {
    let h = 0.5;
    let d = |a: usize| {
        let (mut lo, mut hi) = (p, p);
        lo[a] -= h;
        hi[a] += h;
        density(lo[0], lo[1], lo[2]) - density(hi[0], hi[1], hi[2])
    };
    [d(0), d(1), d(2)]
}

/// User + system CPU time of this process so far, from `/proc/self/stat` (Linux; 0 elsewhere).
/// Wall time is what the budget is about, but on a shared machine CPU time is the stable measure.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 overall.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return 0.0;
    };
    let ticks: Vec<f64> = rest.split(' ').skip(11).take(2).filter_map(|f| f.parse().ok()).collect();
    // Linux reports in USER_HZ, which is 100 on every mainstream configuration.
    ticks.iter().sum::<f64>() / 100.0
}
