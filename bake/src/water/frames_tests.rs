//! Wave frames: tiling, looping, still water, the Jacobian, determinism and pinned bytes.

use super::frames::{Scratch, Waves};
use super::{bake_waves, Spectrum, WaterError, WaveFrames, WaveSpec};

/// A small choppy JONSWAP sea on a 20-unit patch (1 unit = 1 m).
pub(crate) fn test_spec(resolution: u32, frames: u32) -> WaveSpec {
    WaveSpec {
        spectrum: Spectrum::Jonswap,
        wind_speed: 8.0,
        wind_direction: 30.0,
        fetch: 20_000.0,
        choppiness: 0.8,
        amplitude: 1.0,
        metres_per_unit: 1.0,
        patch_size: 20.0,
        period: 20.0,
        frames,
        resolution,
        seed: 42,
    }
}

/// Frame `f` of `spec` computed alone (any `f`, also beyond the loop).
fn frame_at(spec: &WaveSpec, f: u64) -> (Vec<[f32; 4]>, Vec<[f32; 3]>) {
    let waves = Waves::new(spec);
    let n = spec.texels();
    let (mut s, mut nm) = (vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
    waves.frame(f, &mut Scratch::new(spec.resolution as usize), &mut s, &mut nm);
    (s, nm)
}

/// RMS of the differences across the wrap edge (x = R−1 → 0 and y = R−1 → 0) and between interior
/// neighbours, over every frame of `maps` (each `R²` values of `value`).
pub(crate) fn wrap_and_interior(r: usize, maps: &[f32]) -> (f64, f64) {
    let (mut wrap, mut nw, mut inner, mut ni) = (0.0f64, 0usize, 0.0f64, 0usize);
    for map in maps.chunks_exact(r * r) {
        for y in 0..r {
            for x in 0..r {
                let v = map[y * r + x] as f64;
                for (nx, ny) in [((x + 1) % r, y), (x, (y + 1) % r)] {
                    let d = (map[ny * r + nx] as f64 - v).powi(2);
                    if (nx == 0 && x == r - 1) || (ny == 0 && y == r - 1) {
                        (wrap, nw) = (wrap + d, nw + 1);
                    } else {
                        (inner, ni) = (inner + d, ni + 1);
                    }
                }
            }
        }
    }
    ((wrap / nw as f64).sqrt(), (inner / ni as f64).sqrt())
}

fn assert_tiles(name: &str, r: usize, maps: &[f32]) {
    let (wrap, inner) = wrap_and_interior(r, maps);
    assert!(inner > 0.0 && (wrap / inner - 1.0).abs() < 0.05, "{name}: RMS step across the wrap {wrap} vs interior {inner}");
}

#[test]
fn frames_tile_in_x_and_y() {
    let spec = test_spec(64, 16);
    let frames = bake_waves(&spec).unwrap();
    for c in 0..4 {
        let m: Vec<f32> = frames.surface.iter().map(|s| s[c]).collect();
        assert_tiles(["dx", "dy", "height", "jacobian"][c], 64, &m);
    }
    for c in 0..2 {
        let m: Vec<f32> = frames.normals.iter().map(|s| s[c]).collect();
        assert_tiles(["normal x", "normal y"][c], 64, &m);
    }
    // A field that does not tile fails the same check.
    let ramp: Vec<f32> = (0..64 * 64).map(|i| (i % 64) as f32).collect();
    let (wrap, inner) = wrap_and_interior(64, &ramp);
    assert!(wrap > 10.0 * inner);
}

fn rms_diff(a: &[[f32; 4]], b: &[[f32; 4]]) -> f64 {
    (a.iter().zip(b).map(|(p, q)| (0..4).map(|c| (p[c] as f64 - q[c] as f64).powi(2)).sum::<f64>()).sum::<f64>() / a.len() as f64).sqrt()
}

#[test]
fn frames_loop_with_the_period() {
    let spec = test_spec(64, 16);
    let frames = bake_waves(&spec).unwrap();
    let n = spec.texels();
    // Frame F, computed at t = T, is frame 0 bit for bit, and so is the baked frame 0.
    let (f0, n0) = frame_at(&spec, 0);
    let (f16, n16) = frame_at(&spec, 16);
    assert_eq!((&f0, &n0), (&f16, &n16));
    assert_eq!(&frames.surface[..n], &f0[..]);
    // Frame F continues frame F−1 as frame 1 continues frame 0: the steps are alike, and alike the
    // mean step of the loop.
    let last = &frames.surface[15 * n..];
    let step_end = rms_diff(last, &f16);
    let step_start = rms_diff(&frames.surface[n..2 * n], &f0);
    let steps: Vec<f64> = (0..15).map(|f| rms_diff(&frames.surface[f * n..(f + 1) * n], &frames.surface[(f + 1) * n..(f + 2) * n])).collect();
    let mean = steps.iter().sum::<f64>() / steps.len() as f64;
    assert!(step_end > 0.0 && (step_end / step_start - 1.0).abs() < 0.1, "step F−1→F {step_end} vs 0→1 {step_start}");
    assert!((step_end / mean - 1.0).abs() < 0.1, "step F−1→F {step_end} vs the mean step {mean}");
    // And the sea moves: a frame halfway through is not frame 0 (16 frames of 1.25 s are longer
    // than most of these short waves' periods, so it is as far as any step).
    assert!(rms_diff(&frames.surface[8 * n..9 * n], &f0) > 0.5 * mean);
}

#[test]
fn still_water_is_flat() {
    for spec in [WaveSpec { amplitude: 0.0, ..test_spec(32, 4) }, WaveSpec { wind_speed: 0.0, ..test_spec(32, 4) }] {
        let frames = bake_waves(&spec).unwrap();
        assert!(frames.surface.iter().all(|s| *s == [0.0, 0.0, 0.0, 1.0]));
        assert!(frames.normals.iter().all(|n| *n == [0.0, 0.0, 1.0]));
    }
}

#[test]
fn jacobian_and_normals_describe_the_displaced_surface() {
    let spec = WaveSpec { choppiness: 1.5, ..test_spec(64, 4) };
    let frames = bake_waves(&spec).unwrap();
    let n = spec.texels();
    for f in 0..4 {
        let s = &frames.surface[f * n..(f + 1) * n];
        // A periodic map's Jacobian averages to 1: its derivative fields fit together.
        let mean_j = s.iter().map(|t| t[3] as f64).sum::<f64>() / n as f64;
        assert!((mean_j - 1.0).abs() < 1.0e-3, "frame {f}: mean Jacobian {mean_j}");
        assert!(s.iter().any(|t| t[3] < 0.9) && s.iter().any(|t| t[3] > 1.1), "the choppy map compresses and stretches");
    }
    assert!(frames.normals.iter().all(|v| ((v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() - 1.0).abs() < 1.0e-5 && v[2] > 0.0));
    // Where the surface rises along +x its normal leans toward −x: correlation of slope and normal.
    let r = 64;
    let mut agree = 0.0f64;
    for y in 0..r {
        for x in 0..r {
            let slope = frames.surface[y * r + (x + 1) % r][2] - frames.surface[y * r + (x + r - 1) % r][2];
            agree += (slope * -frames.normals[y * r + x][0]) as f64;
        }
    }
    assert!(agree > 0.0);
}

#[test]
fn bad_specs_are_refused() {
    let ok = test_spec(32, 4);
    assert_eq!(bake_waves(&WaveSpec { resolution: 48, ..ok.clone() }).unwrap_err(), WaterError::Resolution(48));
    assert_eq!(bake_waves(&WaveSpec { resolution: 8, ..ok.clone() }).unwrap_err(), WaterError::Resolution(8));
    for bad in [
        WaveSpec { frames: 0, ..ok.clone() },
        WaveSpec { patch_size: f32::NAN, ..ok.clone() },
        WaveSpec { wind_speed: -1.0, ..ok.clone() },
        WaveSpec { period: 0.0, ..ok.clone() },
        WaveSpec { fetch: 0.0, ..ok.clone() },
        WaveSpec { metres_per_unit: f32::INFINITY, ..ok.clone() },
    ] {
        assert!(matches!(bake_waves(&bad), Err(WaterError::OutOfRange { .. })), "{bad:?}");
    }
}

pub(crate) fn frames_hash(frames: &WaveFrames) -> u64 {
    let mut bytes = Vec::new();
    frames.surface.iter().flatten().chain(frames.normals.iter().flatten()).for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

#[test]
fn frame_bytes_are_pinned_and_independent_of_threads() {
    let spec = test_spec(32, 6);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| bake_waves(&spec).unwrap());
    let many = rayon::ThreadPoolBuilder::new().num_threads(5).build().unwrap().install(|| bake_waves(&spec).unwrap());
    assert_eq!(one, many);
    assert_eq!(frames_hash(&one), 14958030732218075411);
    let phillips = bake_waves(&WaveSpec { spectrum: Spectrum::Phillips, ..spec }).unwrap();
    assert!(phillips.surface.iter().any(|s| s[2] != 0.0));
    assert_eq!(frames_hash(&phillips), 9650338341969594418);
}
