//! Synthetic grass for the fixture world, written with `kiln-formats` alone: a shared grass pack
//! (`GPAT`: unique patches of random tapered blades with 6-level LOD chains built by the contract's
//! merge rule) and a `GRSS` in every tile pack (ground maps at every level; patch instances in level-0
//! tiles), the manifest rewritten with the new hashes and its `SHRD`.

use std::path::Path;

use kiln_formats::sections::{
    rgb9e5, Flower, GrassBlade, GrassInstance, GrassLevel, GrassPatch, GrassPatches, GrassTile, Manifest, PackInfo, PackKind, SharedPack,
    SharedPacks, NO_PARENT,
};
use kiln_formats::{write_atomic, Pack, PackBuilder, TileContents};

use super::synth::Synth;

/// Levels of every patch.
pub const LEVELS: usize = 6;
/// Segments per level.
pub const SEGMENTS: [u32; LEVELS] = [4, 3, 2, 1, 1, 1];

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-12);
    v.map(|c| c / l)
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// One patch's level 0: `n` blades in `[0, size)²`.
fn blades(rng: &mut Rng, n: usize, size: f32) -> Vec<GrassBlade> {
    (0..n)
        .map(|_| {
            let (a, lean) = (rng.next() * std::f32::consts::TAU, 0.15 + 0.35 * rng.next());
            let d = normalize([lean * a.cos(), lean * a.sin(), 1.0]);
            // The face turned away from the lean by a random angle, made perpendicular to d.
            let f = a + 0.5 + 2.0 * rng.next();
            let h = [f.cos(), f.sin(), 0.0];
            let k = dot(h, d);
            let n = normalize([h[0] - k * d[0], h[1] - k * d[1], h[2] - k * d[2]]);
            let g = rng.next();
            GrassBlade {
                position: [rng.next() * size, rng.next() * size],
                direction: d,
                normal: n,
                length: 0.22 + 0.2 * rng.next(),
                width: 0.025 + 0.015 * rng.next(),
                bend: 0.15 + 0.4 * rng.next(),
                color: [0.05 + 0.05 * g, 0.17 + 0.12 * rng.next(), 0.02 + 0.03 * g],
                parent: NO_PARENT,
            }
        })
        .collect()
}

/// The contract's merge: each unused blade takes its nearest unused neighbour within the bound;
/// area `w·l/2` kept exactly, the rest area-weighted.
fn merge(prev: &mut [GrassBlade], k: u32, w_mean: f32) -> Vec<GrassBlade> {
    let bound = 2.5 * w_mean * (1u32 << k) as f32;
    let mut used = vec![false; prev.len()];
    let mut out = Vec::new();
    for a in 0..prev.len() {
        if used[a] {
            continue;
        }
        used[a] = true;
        let pa = prev[a].position;
        let near = (0..prev.len())
            .filter(|&b| !used[b])
            .map(|b| (b, (prev[b].position[0] - pa[0]).hypot(prev[b].position[1] - pa[1])))
            .filter(|&(_, d)| d <= bound)
            .min_by(|x, y| x.1.total_cmp(&y.1));
        let merged = match near {
            None => GrassBlade { parent: NO_PARENT, ..prev[a] },
            Some((b, _)) => {
                used[b] = true;
                let (x, y) = (prev[a], prev[b]);
                let w = x.width + y.width;
                let l = (x.width * x.length + y.width * y.length) / w;
                let (ax, ay) = (x.area(), y.area());
                let t = ay / (ax + ay);
                let mix2 = |p: [f32; 2], q: [f32; 2]| [p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t];
                let mix3 = |p: [f32; 3], q: [f32; 3]| [0, 1, 2].map(|c| p[c] + (q[c] - p[c]) * t);
                let d = normalize(mix3(x.direction, y.direction));
                let n0 = mix3(x.normal, y.normal);
                let kk = dot(n0, d);
                let n = normalize([n0[0] - kk * d[0], n0[1] - kk * d[1], n0[2] - kk * d[2]]);
                prev[b].parent = out.len() as u32;
                GrassBlade {
                    position: mix2(x.position, y.position),
                    direction: d,
                    normal: n,
                    length: l,
                    width: w,
                    bend: x.bend + (y.bend - x.bend) * t,
                    color: mix3(x.color, y.color),
                    parent: NO_PARENT,
                }
            }
        };
        prev[a].parent = out.len() as u32;
        out.push(merged);
    }
    out
}

/// `patches` unique patches of `blades_per_patch` blades on a `size` square, 6 levels each.
pub fn patches(count: usize, blades_per_patch: usize, size: f32, flowers: bool) -> GrassPatches {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    let (mut area, mut tint) = (0.0f64, [0.0f64; 3]);
    for p in 0..count {
        let mut level = blades(&mut rng, blades_per_patch, size);
        let w_mean = level.iter().map(|b| b.width).sum::<f32>() / level.len() as f32;
        for b in &level {
            area += f64::from(b.area());
            (0..3).for_each(|c| tint[c] += f64::from(b.area() * b.color[c]));
        }
        let mut levels = Vec::new();
        for k in 1..LEVELS as u32 {
            let next = merge(&mut level, k, w_mean);
            levels.push(GrassLevel { segments: SEGMENTS[k as usize - 1], blades: std::mem::replace(&mut level, next) });
        }
        levels.push(GrassLevel { segments: SEGMENTS[LEVELS - 1], blades: level });
        let flowers = if flowers && p % 3 == 0 {
            (0..3)
                .map(|i| Flower {
                    position: [rng.next() * size, rng.next() * size],
                    height: 0.3 + 0.1 * rng.next(),
                    radius: 0.04 + 0.02 * rng.next(),
                    color: if i % 2 == 0 { [0.9, 0.75, 0.05] } else { [0.8, 0.1, 0.3] },
                })
                .collect()
        } else {
            Vec::new()
        };
        out.push(GrassPatch { levels, flowers });
    }
    GrassPatches { patch_size: size, tint: tint.map(|c| (c / area) as f32), patches: out }
}

/// The ground maps of a tile at `level` (origin, spacing half a unit at level 0), full grass on
/// open ground, none in the trench (low AO) or on steep slopes.
fn ground(synth: &Synth, level: u32, tx: u32, ty: u32, hash: u64, instances: bool, count: usize) -> GrassTile {
    let step = (1u32 << level) as f32;
    let n = 2 * synth.cells + 1;
    let origin = [(tx * synth.cells) as f32 * step, (ty * synth.cells) as f32 * step];
    let spacing = 0.5 * step;
    let mut z = Vec::new();
    let mut keep = Vec::new();
    let mut light = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let (x, y) = (origin[0] + i as f32 * spacing, origin[1] + j as f32 * spacing);
            let h = synth.height(x, y);
            let e = 0.25;
            let gx = (synth.height(x + e, y) - synth.height(x - e, y)) / (2.0 * e);
            let gy = (synth.height(x, y + e) - synth.height(x, y - e)) / (2.0 * e);
            let nz = 1.0 / (1.0 + gx * gx + gy * gy).sqrt();
            let trench = (x - synth.trench_x()).abs() < 4.0;
            let k = if trench || nz < 0.8 { 0.0 } else { 1.0 };
            z.push(h);
            keep.push((k * 255.0) as u8);
            let sky = if trench { 0.3 } else { 1.0 };
            light.push(rgb9e5::encode([0.35 * sky, 0.42 * sky, 0.55 * sky]));
        }
    }
    let lo = z.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let height_step = ((hi - lo) / 65535.0).max(1e-6);
    let heights = z.iter().map(|&h| ((h - lo) / height_step).round() as u16).collect();
    let mut t = GrassTile { patches_hash: hash, origin, spacing, size: n, height_min: lo, height_step, heights, keep, light, instances: Vec::new() };
    if instances {
        let per = synth.cells as usize; // patch size 1
        for j in 0..per {
            for i in 0..per {
                let o = [origin[0] + i as f32, origin[1] + j as f32];
                let corners = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.5, 0.5)];
                if corners.iter().all(|&(a, b)| t.keep_at(o[0] + a, o[1] + b) == 0.0) {
                    continue;
                }
                let k = (tx as usize * 7919 + ty as usize * 104_729 + j * 131 + i * 31) as u32;
                let k = k.wrapping_mul(0x9e37_79b9) >> 7;
                t.instances.push(GrassInstance {
                    origin: o,
                    rotation: (k % 4) as u8,
                    patch: (k / 4 % count as u32) as u16,
                    height_scale: 0.9 + 0.2 * ((k >> 8) % 16) as f32 / 15.0,
                });
            }
        }
    }
    t
}

/// Adds the shared grass pack `patches` and `GRSS` to every tile of the bake at `dir`.
pub fn add_grass(dir: &Path, synth: &Synth, patches: &GrassPatches) {
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Shared { product: "grass-patches".into() }, world_name: "synth".into(), inputs_hash: 12 }).unwrap();
    b.add(patches).unwrap();
    let shared = b.to_bytes().unwrap();
    let hash = xxhash_rust::xxh3::xxh3_64(&shared);
    std::fs::create_dir_all(dir.join("shared")).unwrap();
    write_atomic(&dir.join("shared/grass-patches.kpack"), &shared).unwrap();
    let mpack = Pack::open(&dir.join("manifest.kpack")).unwrap();
    let mut manifest: Manifest = mpack.require().unwrap();
    let mut shrd: Vec<SharedPack> = mpack.get::<SharedPacks>().unwrap().map(|s| s.0).unwrap_or_default();
    for node in &mut manifest.nodes {
        let path = dir.join(&node.path);
        let mut tile = TileContents::read(&Pack::open(&path).unwrap()).unwrap();
        tile.grass = Some(ground(synth, node.level, node.x, node.y, hash, node.level == 0, patches.patches.len()));
        // Keep any sections the formats crate does not know (none today) by rebuilding from the contents.
        let bytes = tile.to_pack([0, 1, 0]).unwrap();
        write_atomic(&path, &bytes).unwrap();
        node.content_hash = xxhash_rust::xxh3::xxh3_64(&bytes);
        node.file_len = bytes.len() as u64;
    }
    shrd.retain(|s| s.product != "grass-patches");
    shrd.push(SharedPack {
        product: "grass-patches".into(),
        path: "shared/grass-patches.kpack".into(),
        content_hash: hash,
        file_len: shared.len() as u64,
    });
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Manifest, world_name: manifest.world_name.clone(), inputs_hash: manifest.world_hash }).unwrap();
    b.add(&manifest).unwrap();
    b.add(&SharedPacks(shrd)).unwrap();
    write_atomic(&dir.join("manifest.kpack"), &b.to_bytes().unwrap()).unwrap();
}
