//! Synthetic water for the fixture world, written with `kiln-formats` alone: a shared water pack
//! (`WAVE`) of a few analytic sine waves that tile the patch and loop in time, caustics from the
//! surface's curvature (a flat surface gives the flat transmittance everywhere), and each tile's
//! `WTIL` from the world's height function: wet where the ground lies below the level.
//!
//! Shared by the integration tests and `examples/synth_water.rs` (via `#[path]`).

use std::f32::consts::TAU;
use std::path::Path;

use kiln_formats::sections::{Manifest, PackInfo, PackKind, SharedPack, SharedPacks, WaterTile, WaterWaves};
use kiln_formats::{write_atomic, Pack, PackBuilder, TileContents};

use super::synth::Synth;

/// Side of the wave patch in world units.
pub const PATCH: f32 = 16.0;
/// Seconds of one loop.
pub const PERIOD: f32 = 4.0;
/// Frames of the loop.
pub const FRAMES: u32 = 8;
/// Texels per side.
pub const RES: u32 = 32;
/// Depths of the caustic planes.
pub const DEPTHS: [f32; 2] = [1.0, 3.0];
/// Fresnel transmittance of the flat surface (the caustics' mean).
pub const FLAT: f32 = 0.97;
/// Absorption per world unit (red most, as sea water).
pub const ABSORPTION: [f32; 3] = [0.35, 0.08, 0.05];
/// World units per depth step of `WTIL`.
pub const DEPTH_STEP: f32 = 1.0 / 64.0;

/// (cycles across the patch in x, in y, amplitude, cycles per loop): whole numbers of cycles, so
/// the surface tiles the patch and loops.
const WAVES: [(f32, f32, f32, f32); 3] = [(3.0, 1.0, 0.08, 1.0), (-1.0, 4.0, 0.05, 2.0), (5.0, -2.0, 0.03, 3.0)];

/// Height, gradient and Laplacian of the surface at patch point (u, v) ∈ [0, 1)² and loop phase s ∈ [0, 1).
fn wave(u: f32, v: f32, s: f32) -> (f32, [f32; 2], f32) {
    let (mut h, mut g, mut lap) = (0.0, [0.0; 2], 0.0);
    for (mx, my, a, c) in WAVES {
        let ph = TAU * (mx * u + my * v - c * s);
        let (kx, ky) = (TAU * mx / PATCH, TAU * my / PATCH);
        h += a * ph.sin();
        g[0] += a * kx * ph.cos();
        g[1] += a * ky * ph.cos();
        lap -= a * (kx * kx + ky * ky) * ph.sin();
    }
    (h, g, lap)
}

fn f16(v: f32) -> u16 {
    half::f16::from_f32(v).to_bits()
}

/// The viewer's default sun (azimuth 135°, elevation 35°): the caustics are cast for it.
pub fn sun() -> [f32; 3] {
    let (az, el) = (135f32.to_radians(), 35f32.to_radians());
    [el.cos() * az.cos(), el.cos() * az.sin(), el.sin()]
}

/// The `WAVE` section: `FRAMES` frames of `RES²` texels, caustics on `DEPTHS` (intensity
/// `FLAT · (1 − 1.5 · depth · ∇²h)`: bright under crests' focusing troughs, mean `FLAT`).
pub fn waves() -> WaterWaves {
    let n = (RES * RES) as usize;
    let (mut surface, mut normals, mut caustics) = (Vec::new(), Vec::new(), Vec::new());
    let mut lap_maps = Vec::new();
    for f in 0..FRAMES {
        let s = f as f32 / FRAMES as f32;
        let mut laps = Vec::with_capacity(n);
        for y in 0..RES {
            for x in 0..RES {
                let (h, g, lap) = wave(x as f32 / RES as f32, y as f32 / RES as f32, s);
                let l = (g[0] * g[0] + g[1] * g[1] + 1.0).sqrt();
                surface.push([f16(0.0), f16(0.0), f16(h), f16(1.0)]);
                normals.push([f16(-g[0] / l), f16(-g[1] / l)]);
                laps.push(lap);
            }
        }
        lap_maps.push(laps);
    }
    for laps in &lap_maps {
        for d in DEPTHS {
            caustics.extend(laps.iter().map(|&lap| f16(FLAT * (1.0 - 1.5 * d * lap).max(0.05))));
        }
    }
    WaterWaves {
        patch_size: PATCH,
        period: PERIOD,
        resolution: RES,
        frames: FRAMES,
        sun_direction: sun(),
        ior: 1.333,
        flat_transmittance: FLAT,
        depths: DEPTHS.to_vec(),
        surface,
        normals,
        caustics,
    }
}

/// The shared water pack's bytes.
pub fn shared_pack() -> Vec<u8> {
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Shared { product: "water-waves".into() }, world_name: "synth".into(), inputs_hash: 19 }).unwrap();
    b.add(&waves()).unwrap();
    b.to_bytes().unwrap()
}

/// Whether the ground at (x, y) is below `level` (clamped to the world, as the bake's samples are).
fn wet(synth: &Synth, level: f32, x: f32, y: f32) -> bool {
    let w = synth.width();
    synth.height(x.clamp(0.0, w), y.clamp(0.0, w)) < level
}

/// A tile's water map: `cells + 1` samples per side over its footprint.
pub fn tile_water(synth: &Synth, level: f32, lvl: u32, tx: u32, ty: u32, waves_hash: u64) -> Option<WaterTile> {
    let spacing = (1u32 << lvl) as f32;
    let size = synth.cells + 1;
    let origin = [(tx * synth.cells) as f32 * spacing, (ty * synth.cells) as f32 * spacing];
    let at = |i: i32, j: i32| (origin[0] + i as f32 * spacing, origin[1] + j as f32 * spacing);
    let (mut depth, mut shore) = (Vec::new(), Vec::new());
    for j in 0..size as i32 {
        for i in 0..size as i32 {
            let (x, y) = at(i, j);
            if !wet(synth, level, x, y) {
                depth.push(0);
                shore.push(0);
                continue;
            }
            depth.push((((level - synth.height(x, y)) / DEPTH_STEP).round() as u32).clamp(1, u16::MAX as u32) as u16);
            // Distance in samples to the nearest dry sample (the ring it is on), saturated.
            let ring = (1..255)
                .find(|&r: &i32| {
                    (-r..=r).any(|k| {
                        [(k, -r), (k, r), (-r, k), (r, k)].iter().any(|&(di, dj)| {
                            let (x, y) = at(i + di, j + dj);
                            !wet(synth, level, x, y)
                        })
                    })
                })
                .unwrap_or(255);
            shore.push(ring as u8);
        }
    }
    depth.iter().any(|&d| d > 0).then_some(WaterTile {
        waves_hash,
        level,
        absorption: ABSORPTION,
        origin,
        spacing,
        size,
        depth_step: DEPTH_STEP,
        depth,
        shore,
    })
}

/// Adds the shared water pack and every tile's water below `level` to the bake at `dir`; the
/// tiles index `waves_hash` when given (a mismatch, for tests), else the pack's real hash.
pub fn add_water(dir: &Path, synth: &Synth, level: f32, waves_hash: Option<u64>) {
    let shared = shared_pack();
    let hash = xxhash_rust::xxh3::xxh3_64(&shared);
    std::fs::create_dir_all(dir.join("shared")).unwrap();
    write_atomic(&dir.join("shared/water-waves.kpack"), &shared).unwrap();
    let mpack = Pack::open(&dir.join("manifest.kpack")).unwrap();
    let mut manifest: Manifest = mpack.require().unwrap();
    let mut packs: Vec<SharedPack> = mpack.get::<SharedPacks>().unwrap().map(|s| s.0).unwrap_or_default();
    for node in &mut manifest.nodes {
        let Some(water) = tile_water(synth, level, node.level, node.x, node.y, waves_hash.unwrap_or(hash)) else { continue };
        let path = dir.join(&node.path);
        let mut tile = TileContents::read(&Pack::open(&path).unwrap()).unwrap();
        tile.water = Some(water);
        let bytes = tile.to_pack([0, 1, 0]).unwrap();
        write_atomic(&path, &bytes).unwrap();
        node.content_hash = xxhash_rust::xxh3::xxh3_64(&bytes);
        node.file_len = bytes.len() as u64;
    }
    packs.retain(|p| p.product != "water-waves");
    packs.push(SharedPack {
        product: "water-waves".into(),
        path: "shared/water-waves.kpack".into(),
        content_hash: hash,
        file_len: shared.len() as u64,
    });
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Manifest, world_name: manifest.world_name.clone(), inputs_hash: manifest.world_hash }).unwrap();
    b.add(&manifest).unwrap();
    b.add(&SharedPacks(packs)).unwrap();
    write_atomic(&dir.join("manifest.kpack"), &b.to_bytes().unwrap()).unwrap();
}
