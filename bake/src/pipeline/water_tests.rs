//! The water products' work on a small hand-made world: neighbouring tiles agree on their shared
//! border samples at every level, depths are the flood fill's within half a step, the `WAVE`
//! conversion rounds to binary16 and survives the pack codec, the cached-pack check of `WTIL`, and the
//! caustics' sun.

use kiln_formats::sections::WaterWaves;

use super::*;
use crate::density::DensityVolume;
use crate::lighting::LightingSpec;
use crate::pipeline::lod::{TileId, Tiling};
use crate::water::{Caustics, Spectrum, WaveFrames, WaveSpec};
use crate::world::WaterSpec;

const VS: f32 = 0.25;

/// 64 × 64 × 16 samples: ground a slope in x with a bump, so depths vary along both axes.
fn body() -> (WaterBody, Tiling) {
    let dims = [64, 64, 16];
    let v = DensityVolume::from_fn(dims, |x, y, z| {
        let g = 0.3 + 0.05 * x as f32 + 0.4 * ((y as f32) * 0.2).sin();
        (g - z as f32 * VS).clamp(-1.0, 1.0)
    });
    (body::flood(&v, VS, 2.1, false).unwrap(), Tiling::new(dims, 16, VS))
}

fn spec() -> WaterSpec {
    toml::from_str("level = 2.1").unwrap()
}

#[test]
fn neighbouring_tiles_agree_on_their_shared_borders_at_every_level() {
    let (b, tiling) = body();
    let spec = spec();
    for level in 0..tiling.levels() {
        let grid = b.grid(1 << level);
        let [tx, ty] = tiling.tiles_at(level);
        let tile = |x: u32, y: u32| tile_section(&b, &grid, &tiling, TileId { level, x, y }, &spec, 7);
        let n = tiling.tile_voxels as usize + 1;
        for y in 0..ty {
            for x in 0..tx {
                let t = tile(x, y);
                assert_eq!(t.size as usize, n);
                assert_eq!(t.spacing, VS * (1 << level) as f32);
                assert_eq!(t.origin, [x as f32 * 16.0 * t.spacing, y as f32 * 16.0 * t.spacing]);
                if x + 1 < tx {
                    let r = tile(x + 1, y);
                    for j in 0..n {
                        assert_eq!(t.depth[j * n + n - 1], r.depth[j * n], "level {level} tile ({x}, {y}) row {j}");
                        assert_eq!(t.shore[j * n + n - 1], r.shore[j * n]);
                    }
                }
                if y + 1 < ty {
                    let u = tile(x, y + 1);
                    assert_eq!(t.depth[(n - 1) * n..], u.depth[..n], "level {level} tile ({x}, {y}) top row");
                    assert_eq!(t.shore[(n - 1) * n..], u.shore[..n]);
                }
            }
        }
    }
}

#[test]
fn tile_depths_are_the_flood_fills_within_half_a_step_and_the_maps_decode() {
    let (b, tiling) = body();
    let grid = b.grid(1);
    let t = tile_section(&b, &grid, &tiling, TileId { level: 0, x: 1, y: 2 }, &spec(), 42);
    assert_eq!(t.depth_step, depth_step(2.1, VS));
    let (mut wet, mut dry) = (0, 0);
    for j in 0..17 {
        for i in 0..17 {
            let d = b.depth[(32 + j) * 64 + 16 + i];
            assert!((t.depth_at(i, j) - d).abs() <= 0.5 * t.depth_step + 1e-6, "({i}, {j}): {} vs {d}", t.depth_at(i, j));
            assert_eq!(t.is_water(i, j), d > 0.0);
            if d > 0.0 {
                wet += 1
            } else {
                dry += 1
            }
        }
    }
    assert!(wet > 0 && dry > 0, "the tile holds a shore: {wet} wet, {dry} dry");
    let back = WaterTile::decode(&t.encode().unwrap()).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.waves_hash, 42);
    assert_eq!(back.absorption, spec().absorption_per_unit().map(|a| a as f32));
    // Raw length: header and three bytes per sample; anything else is refused by the cached-pack check.
    let len = t.encode().unwrap().len() as u64;
    assert_eq!(len, WTIL_HEADER + 3 * 17 * 17);
    let check = |l: u64| WaterProduct.check_packed(0, &|k| if k == WTIL { l } else { 0 });
    assert!(check(len).is_ok() && check(0).is_ok());
    assert!(check(len + 3).is_err() && check(len - 1).is_err() && check(10).is_err());
}

#[test]
fn a_deep_world_keeps_every_depth_in_sixteen_bits() {
    // 4096 voxels of 1 unit: a 256th of a voxel would overflow u16 at 256 units of depth.
    let step = depth_step(4000.0, 1.0);
    assert!(4000.0 / step <= 65535.0);
    assert_eq!(depth_step(2.1, VS), VS / 256.0);
}

#[test]
fn wave_frames_convert_to_binary16_rounding_to_nearest_even() {
    let waves = WaveSpec {
        spectrum: Spectrum::Jonswap,
        wind_speed: 5.0,
        wind_direction: 0.0,
        fetch: 1000.0,
        choppiness: 1.0,
        amplitude: 1.0,
        metres_per_unit: 1.0,
        patch_size: 4.0,
        period: 8.0,
        frames: 2,
        resolution: 16,
        seed: 1,
    };
    let n = 2 * 256;
    // Values chosen between binary16 neighbours: 1 + 2⁻¹¹ is a tie and rounds to even (1.0).
    let tie = 1.0 + 2f32.powi(-11);
    let frames = WaveFrames {
        spec: waves,
        surface: (0..n).map(|i| [i as f32 * 1e-3, -0.1, tie, 0.9]).collect(),
        normals: (0..n).map(|_| [0.6, 0.0, 0.8]).collect(),
    };
    let caustics = Caustics { depths: vec![0.5, 1.5], flat_transmittance: 0.97, maps: (0..2 * n).map(|i| 0.5 + (i % 7) as f32 * 0.1).collect() };
    let cast = caustic_spec(&spec(), &LightingSpec::default());
    let w = waves_section(&frames, &cast, &caustics);
    assert_eq!(w.surface[0][2], half::f16::ONE.to_bits(), "a tie rounds to even");
    assert_eq!(w.surface[5][0], half::f16::from_f32(5e-3).to_bits());
    assert_eq!(w.normals[3], [half::f16::from_f32(0.6).to_bits(), 0]);
    assert_eq!((w.frames, w.resolution, w.depths.len(), w.caustics.len()), (2, 16, 2, 2 * n));
    assert_eq!(w.sun_direction, cast.sun_direction);
    let back = WaterWaves::decode(&w.encode().unwrap()).unwrap();
    assert_eq!(back, w);
    for (a, b) in back.caustic_map(1, 1).iter().zip(&caustics.maps[3 * 256..4 * 256]) {
        assert!((a - b).abs() <= b * 1e-3);
    }
}

#[test]
fn the_caustics_are_cast_by_the_worlds_sun_or_a_high_one_at_night() {
    let day = LightingSpec::default();
    let sun = day.sun.direction_at(day.time_of_day).unwrap();
    assert_eq!(sun_direction(&day), sun);
    let night = LightingSpec { time_of_day: 23.0, ..LightingSpec::default() };
    assert_eq!(sun_direction(&night), build::FALLBACK_SUN);
    let len: f32 = build::FALLBACK_SUN.iter().map(|c| c * c).sum::<f32>().sqrt();
    assert!((len - 1.0).abs() < 1e-6);
}
