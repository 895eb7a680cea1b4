//! Ray-tracing speed and lighting-bake budget checks.
//!
//! ```text
//! cargo run --release -p kiln-bake --example ray_speed                        # Kiln's BVH
//! cargo run --release -p kiln-bake --example ray_speed --features bench-obvhs # + obvhs
//! cargo run --release -p kiln-bake --example ray_speed -- bake [paths_per_area] [ref_factor] [volume_cells_xy] [smoothing]
//! ```
//!
//! The default mode builds a ~300k-triangle noise heightfield, shoots incoherent cosine-hemisphere
//! rays from random surface points and prints closest-hit and any-hit Mrays/s on one thread for
//! each BVH. `bake` meshes a 512×512×64-voxel cave terrain (32×32×4 world units, surface nets),
//! bakes its lighting with the default spec and a volume of `volume_cells_xy`² × `/8` cells
//! (default 128), times it (wall and CPU seconds: on a shared machine the CPU figure is the
//! meaningful one), and compares per-vertex irradiance with a bake of `ref_factor` (default 16)
//! times the paths. `KILN_REF_CACHE=file` keeps that slow reference for later runs.

use glam::Vec3A;
use kiln_bake::lighting::{bake_lighting, Bvh, Cull, Irradiance, LightingSpec, Ray, SceneMesh, VolumeDesc};
use noise::{Fbm, MultiFractal, NoiseFn, Perlin};
use rayon::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("bake") {
        let paths = args.get(2).and_then(|a| a.parse().ok());
        let factor = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(16.0);
        let cells = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(128);
        let smoothing = args.get(5).and_then(|a| a.parse().ok());
        bake_check(paths, factor, cells, smoothing);
    } else {
        ray_speed();
    }
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

/// Random points on random triangles with cosine directions about the face normal.
fn surface_rays(pos: &[[f32; 3]], idx: &[u32], count: usize) -> Vec<(Vec3A, Vec3A)> {
    let mut rng = Lcg(12345);
    let tris = idx.len() / 3;
    (0..count)
        .map(|_| {
            let t = ((rng.f32() * tris as f32) as usize).min(tris - 1);
            let p = [0, 1, 2].map(|k| Vec3A::from(pos[idx[3 * t + k] as usize]));
            let (mut u, mut v) = (rng.f32(), rng.f32());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize();
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

fn ray_speed() {
    let (pos, idx) = heightfield(388);
    println!("heightfield: {} vertices, {} triangles", pos.len(), idx.len() / 3);
    let rays = surface_rays(&pos, &idx, 1_000_000);

    let t = Instant::now();
    let bvh = Bvh::build(&pos, &idx).expect("valid mesh");
    println!("kiln bvh: build {:.3} s (rayon, {} threads)", t.elapsed().as_secs_f64(), rayon::current_num_threads());
    let clock = Clock::start();
    let mut hits = 0usize;
    for (o, d) in &rays {
        hits += bvh.intersect(&Ray { origin: *o, dir: *d, tmin: 0.0, tmax: f32::INFINITY }).is_some() as usize;
    }
    let closest = clock.rate(rays.len());
    let clock = Clock::start();
    let mut occluded = 0usize;
    for (o, d) in &rays {
        occluded += bvh.occluded(&Ray { origin: *o, dir: *d, tmin: 0.0, tmax: f32::INFINITY }, Cull::None) as usize;
    }
    let any = clock.rate(rays.len());
    assert_eq!(hits, occluded, "closest-hit and any-hit disagree");
    println!(
        "kiln bvh, 1 thread: closest-hit {closest}, any-hit {any} ({:.1} % of rays hit)",
        100.0 * hits as f64 / rays.len() as f64
    );
    let t = Instant::now();
    let par_hits: usize = rays
        .par_iter()
        .map(|(o, d)| bvh.intersect(&Ray { origin: *o, dir: *d, tmin: 0.0, tmax: f32::INFINITY }).is_some() as usize)
        .sum();
    assert_eq!(par_hits, hits);
    println!(
        "kiln bvh, {} threads: closest-hit {:.3} Mrays/s wall",
        rayon::current_num_threads(),
        rays.len() as f64 / t.elapsed().as_secs_f64() / 1e6
    );

    #[cfg(feature = "bench-obvhs")]
    obvhs_speed(&pos, &idx, &rays, hits);
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
        println!(
            "obvhs cwbvh {name}: build {build:.3} s; 1 thread: closest-hit {closest}, any-hit {any} (hits {hits}/{occluded}, kiln {kiln_hits})"
        );
    }
}

/// Density of the benchmark cave world at world point (x, y, z): positive is rock.
struct Caves {
    height: Fbm<Perlin>,
    tunnels: Fbm<Perlin>,
    tunnels2: Fbm<Perlin>,
}

impl Caves {
    fn new() -> Self {
        Caves {
            height: Fbm::<Perlin>::new(1).set_octaves(4).set_frequency(1.0 / 10.0),
            tunnels: Fbm::<Perlin>::new(2).set_octaves(2).set_frequency(1.0 / 3.0),
            tunnels2: Fbm::<Perlin>::new(3).set_octaves(2).set_frequency(1.0 / 3.0),
        }
    }
    fn density(&self, x: f64, y: f64, z: f64, caves: bool) -> f32 {
        let ground = 2.6 + 0.8 * self.height.get([x, y]) - z;
        let mut d = ground;
        if caves {
            // Tunnels where two noise fields are both near zero; squashed vertically.
            let p = [x, y, z * 2.0];
            let a = self.tunnels.get(p);
            let b = self.tunnels2.get(p);
            d = d.min((a * a + b * b).sqrt() * 8.0 - 0.6);
        }
        d = d.max(0.25 - z); // solid floor
        (d as f32).clamp(-1.0, 1.0)
    }
}

/// Surface nets over the cave density: one vertex per cell with a sign change, one quad per
/// crossing edge, counter-clockwise seen from the air. A ring of air samples closes the mesh.
fn cave_mesh() -> (Vec<[f32; 3]>, Vec<u32>) {
    let (nx, ny, nz) = (512usize, 512usize, 64usize);
    let voxel = 1.0 / 16.0;
    let (sx, sy, sz) = (nx + 3, ny + 3, nz + 3); // samples -1..=n+1
    let caves = Caves::new();
    let samples: Vec<f32> = (0..sz)
        .into_par_iter()
        .flat_map_iter(|k| {
            let caves = &caves;
            (0..sx * sy).map(move |ij| {
                let (i, j) = (ij % sx, ij / sx);
                let (gi, gj, gk) = (i as i64 - 1, j as i64 - 1, k as i64 - 1);
                if gi < 0 || gj < 0 || gk < 0 || gi > nx as i64 || gj > ny as i64 || gk > nz as i64 {
                    return -1.0;
                }
                let border = gi == 0 || gj == 0 || gi == nx as i64 || gj == ny as i64;
                caves.density(gi as f64 * voxel, gj as f64 * voxel, gk as f64 * voxel, !border)
            })
        })
        .collect();
    let s = |i: usize, j: usize, k: usize| samples[i + sx * (j + sy * k)];
    let (cx, cy, cz) = (sx - 1, sy - 1, sz - 1);
    let cell_verts: Vec<Vec<(usize, [f32; 3])>> = (0..cz)
        .into_par_iter()
        .map(|k| {
            let mut out = Vec::new();
            for j in 0..cy {
                for i in 0..cx {
                    let c = [0, 1, 2, 3, 4, 5, 6, 7].map(|b| s(i + (b & 1), j + ((b >> 1) & 1), k + (b >> 2)));
                    if c.iter().all(|&v| v > 0.0) || c.iter().all(|&v| v <= 0.0) {
                        continue;
                    }
                    let mut sum = [0.0f32; 3];
                    let mut n = 0.0;
                    for (a, b) in [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)] {
                        if (c[a] > 0.0) != (c[b] > 0.0) {
                            let t = c[a] / (c[a] - c[b]);
                            for (ax, bit) in [(0, 1), (1, 2), (2, 4)] {
                                let pa = ((a & bit) != 0) as u8 as f32;
                                let pb = ((b & bit) != 0) as u8 as f32;
                                sum[ax] += pa + (pb - pa) * t;
                            }
                            n += 1.0;
                        }
                    }
                    let v = voxel as f32;
                    let p = [(i as f32 - 1.0 + sum[0] / n) * v, (j as f32 - 1.0 + sum[1] / n) * v, (k as f32 - 1.0 + sum[2] / n) * v];
                    out.push((i + cx * j, p));
                }
            }
            out
        })
        .collect();
    let mut index = vec![u32::MAX; cx * cy * cz];
    let mut pos = Vec::new();
    for (k, slice) in cell_verts.iter().enumerate() {
        for &(ij, p) in slice {
            index[ij + cx * cy * k] = pos.len() as u32;
            pos.push(p);
        }
    }
    let cell = |i: usize, j: usize, k: usize| index[i + cx * (j + cy * k)];
    let quads: Vec<Vec<u32>> = (1..sz - 1)
        .into_par_iter()
        .map(|k| {
            let mut out = Vec::new();
            for j in 1..sy - 1 {
                for i in 1..sx - 1 {
                    let here = s(i, j, k) > 0.0;
                    // Edges to +x, +y, +z; the four cells around each, counter-clockwise seen
                    // from +axis (axes cyclic: a → b → c).
                    let edges = [
                        (s(i + 1, j, k) > 0.0, [cell(i, j - 1, k - 1), cell(i, j, k - 1), cell(i, j, k), cell(i, j - 1, k)]),
                        (s(i, j + 1, k) > 0.0, [cell(i - 1, j, k - 1), cell(i - 1, j, k), cell(i, j, k), cell(i, j, k - 1)]),
                        (s(i, j, k + 1) > 0.0, [cell(i - 1, j - 1, k), cell(i, j - 1, k), cell(i, j, k), cell(i - 1, j, k)]),
                    ];
                    for (there, q) in edges {
                        if here == there {
                            continue;
                        }
                        let q = if here { q } else { [q[3], q[2], q[1], q[0]] };
                        out.extend_from_slice(&[q[0], q[1], q[2], q[0], q[2], q[3]]);
                    }
                }
            }
            out
        })
        .collect();
    (pos, quads.concat())
}

fn vertex_normals(pos: &[[f32; 3]], idx: &[u32]) -> Vec<[f32; 3]> {
    let mut n = vec![Vec3A::ZERO; pos.len()];
    for t in idx.chunks_exact(3) {
        let p = [0, 1, 2].map(|k| Vec3A::from(pos[t[k] as usize]));
        let c = (p[1] - p[0]).cross(p[2] - p[0]);
        t.iter().for_each(|&v| n[v as usize] += c);
    }
    n.iter().map(|v| v.normalize_or_zero().into()).collect()
}

/// CPU time of the whole process; unlike wall time it is not inflated by other work sharing
/// the cores.
fn cpu_seconds() -> f64 {
    proc_cpu_seconds("/proc/self/stat")
}

fn bake_check(paths: Option<f32>, factor: f32, cells: usize, smoothing: Option<u32>) {
    let t = Instant::now();
    let (pos, idx) = cave_mesh();
    let normals = vertex_normals(&pos, &idx);
    println!("cave mesh: {} vertices, {} triangles ({:.1} s)", pos.len(), idx.len() / 3, t.elapsed().as_secs_f64());
    let (t, cpu0) = (Instant::now(), cpu_seconds());
    let bvh = Bvh::build(&pos, &idx).expect("valid mesh");
    println!("bvh build alone: {:.2} s wall, {:.2} s CPU", t.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    drop(bvh);
    let mesh = SceneMesh { positions: &pos, indices: &idx, materials: None };
    let bounds = ([0.0, 0.0, 0.0], [32.0, 32.0, 4.0]);
    let volume = VolumeDesc { min: bounds.0, max: bounds.1, dims: [cells, cells, cells / 8] };
    let mut spec = LightingSpec::default();
    if let Some(p) = paths {
        spec.paths_per_area = p;
    }
    if let Some(s) = smoothing {
        spec.smoothing = s;
    }
    let run = |spec: &LightingSpec, seed: u64| {
        let cpu0 = cpu_seconds();
        let t = Instant::now();
        let baked = bake_lighting(&mesh, bounds, &volume, spec, seed).expect("bake");
        let bake = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let e = baked.irradiance_at(&pos, &normals).expect("query");
        let query = t.elapsed().as_secs_f64();
        let paths: u64 = baked.stats().paths.iter().sum();
        println!(
            "paths_per_area {}: {paths} paths, area {:.0}; bake {bake:.2} s + per-vertex query {query:.2} s = {:.2} s wall on {} threads, {:.2} s CPU",
            spec.paths_per_area,
            baked.stats().area,
            bake + query,
            rayon::current_num_threads(),
            cpu_seconds() - cpu0
        );
        e
    };
    let test = run(&spec, 1);
    let mut reference_spec = spec.clone();
    reference_spec.paths_per_area *= factor;
    // KILN_REF_CACHE=file keeps the (slow) reference between runs: it is loaded when the file
    // exists and written otherwise. Only valid while mesh, spec and factor stay the same.
    let cache = std::env::var("KILN_REF_CACHE").ok();
    let cached = cache.as_ref().and_then(|path| std::fs::read(path).ok()).map(|bytes| {
        let f: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        f.chunks_exact(9)
            .map(|c| Irradiance { sun_moon: [c[0], c[1], c[2]], lights: [c[3], c[4], c[5]], ambient: [c[6], c[7], c[8]] })
            .collect::<Vec<_>>()
    });
    let reference = match cached {
        Some(r) if r.len() == test.len() => r,
        _ => {
            let r = run(&reference_spec, 2);
            if let Some(path) = &cache {
                let bytes: Vec<u8> = r
                    .iter()
                    .flat_map(|x| x.sun_moon.into_iter().chain(x.lights).chain(x.ambient))
                    .flat_map(f32::to_le_bytes)
                    .collect();
                std::fs::write(path, bytes).expect("write the reference cache");
            }
            r
        }
    };
    let lum = |c: [f32; 3]| (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) as f64;
    for (name, pick) in [("total", 0usize), ("ambient", 1), ("lights", 2)] {
        let get = |x: &Irradiance| match pick {
            0 => lum(x.total()),
            1 => lum(x.ambient),
            _ => lum(x.lights),
        };
        let (mut num, mut den) = (0.0f64, 0.0f64);
        let mut rel = Vec::new();
        let mean = reference.iter().map(get).sum::<f64>() / reference.len() as f64;
        for (a, b) in test.iter().zip(&reference) {
            let (x, r) = (get(a), get(b));
            num += (x - r).powi(2);
            den += r * r;
            if r > 0.05 * mean {
                rel.push(((x - r) / r).powi(2));
            }
        }
        if den == 0.0 {
            continue;
        }
        let per_vertex = (rel.iter().sum::<f64>() / rel.len().max(1) as f64).sqrt();
        println!(
            "{name}: relative RMS error {:.2} % (energy-weighted), {:.2} % (per-vertex, over {} vertices brighter than 5 % of the mean {mean:.3})",
            100.0 * (num / den).sqrt(),
            100.0 * per_vertex,
            rel.len()
        );
        // Per-vertex relative RMS by reference brightness, to show where the error lives.
        let bands = [(1.0, f64::INFINITY), (0.3, 1.0), (0.1, 0.3), (0.05, 0.1)];
        let text: Vec<String> = bands
            .iter()
            .map(|&(lo, hi)| {
                let errs: Vec<f64> = test
                    .iter()
                    .zip(&reference)
                    .map(|(a, b)| (get(a), get(b)))
                    .filter(|&(_, r)| r >= lo * mean && r < hi * mean)
                    .map(|(x, r)| ((x - r) / r).powi(2))
                    .collect();
                let rms = (errs.iter().sum::<f64>() / errs.len().max(1) as f64).sqrt();
                format!("[{lo}, {hi})×mean: {:.2} % over {}", 100.0 * rms, errs.len())
            })
            .collect();
        println!("    {}", text.join("; "));
    }
}
