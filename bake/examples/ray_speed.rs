//! Ray-tracing speed: Kiln's BVH (and obvhs, with the feature) on the same mesh and rays. The
//! lighting bake's time and accuracy on the default world are `lighting_accuracy.rs`.
//!
//! ```text
//! cargo run --release -p kiln-bake --example ray_speed [-- --bake out/ice_caves]                        # Kiln's BVH
//! cargo run --release -p kiln-bake --example ray_speed --features bench-obvhs [-- --bake out/ice_caves] # + obvhs
//! ```
//!
//! Builds a ~300k-triangle noise heightfield (the kind of mesh the issue's Embree figures were
//! measured on), shoots incoherent cosine-hemisphere rays from random surface points and prints
//! closest-hit and any-hit Mrays/s on one thread for each BVH: for Kiln, one ray at a time (what
//! Embree's `rtcIntersect1` / `rtcOccluded1` do) and streamed (`Bvh::intersect_stream`, the
//! interleaved walks the lighting stage uses). With `--bake DIR` it does the same
//! on the level-0 terrain of that bake (what the lighting stage traces: every level-0 tile's
//! surface triangles, skirts excluded), read from its packs. `--dump DIR` also writes each mesh and
//! its rays as raw little-endian arrays (`NAME.positions.f32`, `NAME.indices.u32`, `NAME.rays.f32`:
//! origin and direction per ray), which `scripts/embree_speed.py DIR` traces with Embree (the
//! `embreex` package), so the two are compared on the same mesh and rays.

use glam::Vec3A;
use kiln_bake::rays::{Bvh, Cull, Ray, STREAM};
use kiln_formats::sections::{Manifest, TerrainMesh};
use kiln_formats::Pack;
use noise::{Fbm, MultiFractal, NoiseFn, Perlin};
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut bake, mut dump) = (None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bake" => bake = Some(args.next().unwrap_or_else(|| fail("--bake needs a directory"))),
            "--dump" => dump = Some(std::path::PathBuf::from(args.next().unwrap_or_else(|| fail("--dump needs a directory")))),
            _ => fail(&format!("unknown argument {a}")),
        }
    }
    let (pos, idx) = heightfield(388);
    println!("heightfield: {} vertices, {} triangles", pos.len(), idx.len() / 3);
    ray_speed(&pos, &idx, dump.as_deref().map(|d| (d, "heightfield")));
    if let Some(dir) = bake {
        let (pos, idx) = level0_terrain(Path::new(&dir));
        println!("{dir}, level-0 terrain: {} vertices, {} triangles", pos.len(), idx.len() / 3);
        ray_speed(&pos, &idx, dump.as_deref().map(|d| (d, "level0")));
    }
}

/// Writes `pos`, `idx` and `rays` under `dir` as `name.positions.f32`, `name.indices.u32` and
/// `name.rays.f32` (little-endian).
fn dump(dir: &Path, name: &str, pos: &[[f32; 3]], idx: &[u32], rays: &[(Vec3A, Vec3A)]) {
    let write = |suffix: &str, bytes: Vec<u8>| {
        let path = dir.join(format!("{name}.{suffix}"));
        std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, bytes)).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    };
    write("positions.f32", pos.iter().flatten().flat_map(|v| v.to_le_bytes()).collect());
    write("indices.u32", idx.iter().flat_map(|v| v.to_le_bytes()).collect());
    write("rays.f32", rays.iter().flat_map(|(o, d)| [o.x, o.y, o.z, d.x, d.y, d.z]).flat_map(|v| v.to_le_bytes()).collect());
}

fn fail(msg: &str) -> ! {
    eprintln!("ray_speed: {msg}");
    std::process::exit(2)
}

/// Every level-0 tile's surface triangles (skirts excluded) from the packs of the bake in `dir`,
/// in one mesh, as the lighting stage gathers them.
fn level0_terrain(dir: &Path) -> (Vec<[f32; 3]>, Vec<u32>) {
    let open = |path: &Path| Pack::open(path).unwrap_or_else(|e| fail(&e.to_string()));
    let path = dir.join("manifest.kpack");
    let manifest: Manifest = open(&path).require().unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    let (mut pos, mut idx) = (Vec::new(), Vec::new());
    for node in manifest.nodes.iter().filter(|n| n.level == 0) {
        let path = dir.join(&node.path);
        let mesh: TerrainMesh = open(&path).require().unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
        let base = pos.len() as u32;
        idx.extend(mesh.indices[..mesh.main_index_count].iter().map(|i| i + base));
        pos.extend_from_slice(&mesh.positions);
    }
    if idx.is_empty() {
        fail(&format!("{}: no level-0 triangles", dir.display()));
    }
    (pos, idx)
}

/// Tiny deterministic generator for the benchmark's random rays.
struct Lcg(u64);
impl Lcg {
    fn f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn heightfield(n: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
    let fbm = Fbm::<Perlin>::new(7).set_octaves(5).set_frequency(1.0 / 8.0);
    let size = 32.0;
    let mut pos = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let (x, y) = (i as f64 * size / (n - 1) as f64, j as f64 * size / (n - 1) as f64);
            pos.push([x as f32, y as f32, (2.0 + 2.5 * fbm.get([x, y])) as f32]);
        }
    }
    let mut idx = Vec::new();
    for j in 0..n as u32 - 1 {
        for i in 0..n as u32 - 1 {
            let a = j * n as u32 + i;
            let r = n as u32;
            idx.extend_from_slice(&[a, a + 1, a + r + 1, a, a + r + 1, a + r]);
        }
    }
    (pos, idx)
}

/// Random points on random triangles with cosine directions about the face normal. Triangles
/// without a normal (zero area: marching cubes makes a few) are skipped: their rays would have no
/// direction, and a NaN direction sends Embree and obvhs through the whole tree.
fn surface_rays(pos: &[[f32; 3]], idx: &[u32], count: usize) -> Vec<(Vec3A, Vec3A)> {
    let mut rng = Lcg(12345);
    let tris = idx.len() / 3;
    (0..count)
        .map(|_| {
            let (p, n) = loop {
                let t = ((rng.f32() * tris as f32) as usize).min(tris - 1);
                let p = [0, 1, 2].map(|k| Vec3A::from(pos[idx[3 * t + k] as usize]));
                let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
                if n != Vec3A::ZERO {
                    break (p, n);
                }
            };
            let (mut u, mut v) = (rng.f32(), rng.f32());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            let o = p[0] + (p[1] - p[0]) * u + (p[2] - p[0]) * v + n * 1e-3;
            let (r, phi) = (rng.f32().sqrt(), std::f32::consts::TAU * rng.f32());
            let (a, b) = n.any_orthonormal_pair();
            let d = (a * (r * phi.cos()) + b * (r * phi.sin()) + n * (1.0 - r * r).max(0.0).sqrt()).normalize();
            (o, d)
        })
        .collect()
}

/// Rays per second of wall time and per second of this thread's CPU time (the latter is what
/// matters on a machine shared with other work).
struct Clock(Instant, f64);
impl Clock {
    fn start() -> Self {
        Clock(Instant::now(), thread_cpu_seconds())
    }
    fn rate(&self, count: usize) -> String {
        let (wall, cpu) = (self.0.elapsed().as_secs_f64(), thread_cpu_seconds() - self.1);
        format!("{:.3} Mrays/s ({:.3} per CPU-s)", count as f64 / wall / 1e6, count as f64 / cpu.max(1e-9) / 1e6)
    }
}

/// CPU time of the calling thread (Linux `/proc/thread-self/stat`, 100 ticks per second).
fn thread_cpu_seconds() -> f64 {
    proc_cpu_seconds("/proc/thread-self/stat")
}

fn proc_cpu_seconds(path: &str) -> f64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn ray_speed(pos: &[[f32; 3]], idx: &[u32], dump_to: Option<(&Path, &str)>) {
    let rays = surface_rays(pos, idx, 1_000_000);
    if let Some((dir, name)) = dump_to {
        dump(dir, name, pos, idx, &rays);
    }

    let t = Instant::now();
    let bvh = Bvh::build(pos, idx).expect("valid mesh");
    println!("kiln bvh: build {:.3} s (rayon, {} threads)", t.elapsed().as_secs_f64(), rayon::current_num_threads());
    let m = bvh.memory();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    println!(
        "kiln bvh: {:.1} MiB (nodes {:.1}, leaf blocks {:.1}, positions {:.1}), {:.1} MiB per million triangles",
        mib(m.total()),
        mib(m.nodes),
        mib(m.blocks),
        mib(m.positions),
        mib(m.total()) * 1e6 / bvh.triangle_count().max(1) as f64
    );
    let batch: Vec<Ray> = rays.iter().map(|(o, d)| Ray { origin: *o, dir: *d, tmin: 0.0, tmax: f32::INFINITY }).collect();
    let clock = Clock::start();
    let hits = batch.iter().filter(|r| bvh.intersect(r).is_some()).count();
    let closest = clock.rate(rays.len());
    let clock = Clock::start();
    let occluded = batch.iter().filter(|r| bvh.occluded(r, Cull::None)).count();
    let any = clock.rate(rays.len());
    assert_eq!(hits, occluded, "closest-hit and any-hit disagree");
    println!("kiln bvh, 1 thread: closest-hit {closest}, any-hit {any} ({:.1} % of rays hit)", 100.0 * hits as f64 / rays.len() as f64);
    // The same rays through the streamed queries, which interleave STREAM walks on one thread.
    let clock = Clock::start();
    let mut found = vec![None; batch.len()];
    bvh.intersect_stream(&batch, &mut found);
    let closest = clock.rate(rays.len());
    let clock = Clock::start();
    let mut blocked = vec![false; batch.len()];
    bvh.occluded_stream(&batch, Cull::None, &mut blocked);
    let any = clock.rate(rays.len());
    assert_eq!(found.iter().filter(|h| h.is_some()).count(), hits, "streamed closest-hit disagrees");
    assert_eq!(blocked.iter().filter(|&&b| b).count(), hits, "streamed any-hit disagrees");
    println!("kiln bvh, 1 thread, {STREAM} interleaved walks: closest-hit {closest}, any-hit {any}");
    let t = Instant::now();
    let par_hits: usize = batch
        .par_chunks(4096)
        .map(|chunk| {
            let mut found = vec![None; chunk.len()];
            bvh.intersect_stream(chunk, &mut found);
            found.iter().filter(|h| h.is_some()).count()
        })
        .sum();
    assert_eq!(par_hits, hits);
    println!(
        "kiln bvh, {} threads, streamed: closest-hit {:.3} Mrays/s wall",
        rayon::current_num_threads(),
        rays.len() as f64 / t.elapsed().as_secs_f64() / 1e6
    );

    #[cfg(feature = "bench-obvhs")]
    obvhs_speed(pos, idx, &rays, hits);
}

#[cfg(feature = "bench-obvhs")]
fn obvhs_speed(pos: &[[f32; 3]], idx: &[u32], rays: &[(Vec3A, Vec3A)], kiln_hits: usize) {
    use glam034::Vec3A as V;
    use obvhs::{cwbvh::builder::build_cwbvh_from_tris, ray::RayHit, triangle::Triangle, BvhBuildParams};
    let v = |i: u32| V::from(pos[i as usize]);
    let tris: Vec<Triangle> = idx.chunks_exact(3).map(|t| Triangle { v0: v(t[0]), v1: v(t[1]), v2: v(t[2]) }).collect();
    let to = |a: Vec3A| V::new(a.x, a.y, a.z);
    for (name, params) in [("fast_build", BvhBuildParams::fast_build()), ("medium_build", BvhBuildParams::medium_build())] {
        let t = Instant::now();
        let bvh = build_cwbvh_from_tris(&tris, params, &mut std::time::Duration::default());
        let build = t.elapsed().as_secs_f64();
        // Leaf order copy, as the obvhs examples do, so the intersection needs no indirection.
        let ordered: Vec<Triangle> = bvh.primitive_indices.iter().map(|&i| tris[i as usize]).collect();
        let clock = Clock::start();
        let mut hits = 0usize;
        for (o, d) in rays {
            let ray = obvhs::ray::Ray::new_inf(to(*o), to(*d));
            let mut hit = RayHit::none();
            hits += bvh.ray_traverse(ray, &mut hit, |r, id| ordered[id].intersect(r)) as usize;
        }
        let closest = clock.rate(rays.len());
        let clock = Clock::start();
        let mut occluded = 0usize;
        for (o, d) in rays {
            let ray = obvhs::ray::Ray::new_inf(to(*o), to(*d));
            occluded += !bvh.ray_traverse_miss(ray, |r, id| ordered[id].intersect(r)) as usize;
        }
        let any = clock.rate(rays.len());
        println!("obvhs cwbvh {name}: build {build:.3} s; 1 thread: closest-hit {closest}, any-hit {any} (hits {hits}/{occluded}, kiln {kiln_hits})");
    }
}
