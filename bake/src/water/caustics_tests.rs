//! Caustics: still water, energy, tiling, contrast over depth, automatic depths, the photon
//! estimator against the area ratio, determinism and pinned bytes.

use glam::Vec3;

use super::caustics::splat_bilinear;
use super::frames_tests::{test_spec, wrap_and_interior};
use super::{bake_caustics, bake_waves, contrast, CausticDepths, CausticSpec, Caustics, WaterError, WaveFrames, WaveSpec};
use crate::optics::{fresnel_transmittance, refract, WATER_IOR};
use crate::rng::Rng;

fn sun(elevation_deg: f32, azimuth_deg: f32) -> [f32; 3] {
    let (e, a) = (elevation_deg.to_radians(), azimuth_deg.to_radians());
    [e.cos() * a.cos(), e.cos() * a.sin(), e.sin()]
}

fn caustic_spec(sun_direction: [f32; 3], depths: CausticDepths) -> CausticSpec {
    CausticSpec { sun_direction, ior: WATER_IOR, depths }
}

/// The mean transmitted flux of a frame, from the surface alone: per texel the intercepted light
/// `(s·n)·J/n_z` relative to the horizontal irradiance, times Fresnel, when it refracts downward.
fn expected_transmittance(frames: &WaveFrames, f: usize, s: Vec3) -> f64 {
    let n = frames.spec.texels();
    let mut sum = 0.0f64;
    for (t, nm) in frames.surface[f * n..(f + 1) * n].iter().zip(&frames.normals[f * n..(f + 1) * n]) {
        let normal = Vec3::from(*nm);
        let cos = s.dot(normal);
        if t[3] > 0.0 && cos > 0.0 && refract(-s, normal, 1.0, WATER_IOR).is_some_and(|d| d.z < 0.0) {
            sum += (cos * t[3] / normal.z / s.z * fresnel_transmittance(cos, 1.0, WATER_IOR)) as f64;
        }
    }
    sum / n as f64
}

fn map(c: &Caustics, r: usize, f: usize, d: usize) -> &[f32] {
    let n = r * r;
    let at = (f * c.depths.len() + d) * n;
    &c.maps[at..at + n]
}

#[test]
fn still_water_casts_the_flat_transmittance_everywhere() {
    let frames = bake_waves(&WaveSpec { amplitude: 0.0, ..test_spec(32, 2) }).unwrap();
    for s in [sun(90.0, 0.0), sun(60.0, 20.0), sun(25.0, 200.0)] {
        let c = bake_caustics(&frames, &caustic_spec(s, CausticDepths::Fixed(vec![0.3, 2.0, 7.5]))).unwrap();
        let t = fresnel_transmittance(s[2], 1.0, WATER_IOR);
        assert_eq!(c.flat_transmittance, t);
        assert!(
            c.maps.iter().all(|&v| (v - t).abs() < 1.0e-5 * t),
            "sun {s:?}: {:?}",
            c.maps.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)))
        );
    }
    let auto = bake_caustics(&frames, &caustic_spec(sun(60.0, 0.0), CausticDepths::Auto(3))).unwrap();
    assert_eq!(auto.depths.len(), 3);
    assert!(auto.maps.iter().all(|&v| (v - auto.flat_transmittance).abs() < 1.0e-5));
}

#[test]
fn every_map_keeps_the_transmitted_energy() {
    let frames = bake_waves(&test_spec(64, 8)).unwrap();
    for s in [sun(80.0, 10.0), sun(40.0, 130.0)] {
        let c = bake_caustics(&frames, &caustic_spec(s, CausticDepths::Fixed(vec![0.5, 2.0, 6.0, 20.0]))).unwrap();
        let sv = Vec3::from(s);
        for f in 0..8 {
            let want = expected_transmittance(&frames, f, sv);
            // Waves barely change the mean: the intercepted light is the horizontal irradiance.
            assert!((want / c.flat_transmittance as f64 - 1.0).abs() < 0.03, "frame {f}: {want} vs flat {}", c.flat_transmittance);
            for d in 0..4 {
                let m = map(&c, 64, f, d);
                let mean = m.iter().map(|&v| v as f64).sum::<f64>() / m.len() as f64;
                assert!((mean / want - 1.0).abs() < 0.01, "frame {f}, depth {d}: mean {mean} vs {want}");
                assert!(contrast(m) > 0.02, "frame {f}, depth {d}: no pattern");
            }
        }
    }
}

#[test]
fn caustics_tile() {
    let frames = bake_waves(&test_spec(64, 32)).unwrap();
    let c = bake_caustics(&frames, &caustic_spec(sun(55.0, 30.0), CausticDepths::Fixed(vec![1.0, 4.0]))).unwrap();
    for d in 0..2 {
        let maps: Vec<f32> = (0..32).flat_map(|f| map(&c, 64, f, d).to_vec()).collect();
        let (wrap, inner) = wrap_and_interior(64, &maps);
        assert!((wrap / inner - 1.0).abs() < 0.05, "depth {d}: RMS step across the wrap {wrap} vs interior {inner}");
    }
}

#[test]
fn contrast_peaks_at_a_finite_depth() {
    let frames = bake_waves(&test_spec(64, 2)).unwrap();
    let depths: Vec<f32> = (0..16).map(|i| 0.3 * 2f32.powf(i as f32 * 0.55)).collect();
    let mut k = Vec::new();
    for part in depths.chunks(8) {
        let c = bake_caustics(&frames, &caustic_spec(sun(70.0, 0.0), CausticDepths::Fixed(part.to_vec()))).unwrap();
        k.extend((0..part.len()).map(|d| (contrast(map(&c, 64, 0, d)) + contrast(map(&c, 64, 1, d))) / 2.0));
    }
    let peak = (0..k.len()).max_by(|&a, &b| k[a].total_cmp(&k[b])).unwrap();
    assert!(peak > 0 && peak + 1 < k.len(), "contrast {k:?} over depths {depths:?}");
    assert!(k[0] < 0.2 * k[peak] && k[k.len() - 1] < 0.75 * k[peak], "contrast {k:?} over depths {depths:?}");
    // Rising to the peak, falling after it (allowing one small wobble of the sampled pattern).
    let rises = (0..peak).filter(|&i| k[i + 1] >= k[i]).count();
    let falls = (peak..k.len() - 1).filter(|&i| k[i + 1] <= k[i]).count();
    assert!(rises + 1 >= peak && falls + 2 >= k.len() - 1 - peak, "contrast {k:?}");
}

#[test]
fn automatic_depths_span_the_pattern() {
    let frames = bake_waves(&test_spec(64, 2)).unwrap();
    let s = sun(70.0, 0.0);
    let c = bake_caustics(&frames, &caustic_spec(s, CausticDepths::Auto(4))).unwrap();
    assert_eq!(c.depths.len(), 4);
    assert!(c.depths.windows(2).all(|w| w[0] < w[1]), "{:?}", c.depths);
    let one = bake_caustics(&frames, &caustic_spec(s, CausticDepths::Auto(1))).unwrap();
    // The single plane sits at the sharpest pattern, inside the spread of four.
    assert!(c.depths[0] <= one.depths[0] && one.depths[0] <= c.depths[3], "{:?} vs {:?}", one.depths, c.depths);
    let k: Vec<f32> = (0..4).map(|d| contrast(map(&c, 64, 0, d))).collect();
    let peak = contrast(map(&one, 64, 0, 0));
    // From where the pattern has formed (half its peak) to where it has faded to about half again.
    assert!(k[0] >= 0.45 * peak && k[3] <= 0.7 * peak && k.iter().any(|&v| v > 0.85 * peak), "contrast {k:?}, peak {peak}");
}

/// The other estimator: `photons²` jittered photons per texel cell, each refracting the bilinearly
/// interpolated normal at the interpolated displaced point, splatted with a bilinear tent.
fn photon_map(frames: &WaveFrames, f: usize, s: Vec3, depth: f32, photons: usize) -> Vec<f32> {
    let r = frames.spec.resolution as usize;
    let texel = frames.spec.patch_size / r as f32;
    let n = r * r;
    let (surface, normals) = (&frames.surface[f * n..(f + 1) * n], &frames.normals[f * n..(f + 1) * n]);
    let mut out = vec![0.0f32; n];
    for y in 0..r {
        for x in 0..r {
            let mut rng = Rng::keyed(9, "photons", (y * r + x) as u64);
            let corners = [(0, 0), (1, 0), (0, 1), (1, 1)].map(|(dx, dy)| ((y + dy) % r) * r + (x + dx) % r);
            for j in 0..photons * photons {
                let u = ((j % photons) as f64 + rng.unit()) as f32 / photons as f32;
                let v = ((j / photons) as f64 + rng.unit()) as f32 / photons as f32;
                let w = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
                let mix = |c: &dyn Fn(usize) -> f32| (0..4).map(|k| w[k] * c(corners[k])).sum::<f32>();
                let normal = Vec3::new(mix(&|i| normals[i][0]), mix(&|i| normals[i][1]), mix(&|i| normals[i][2])).normalize();
                let jac = mix(&|i| surface[i][3]);
                let cos = s.dot(normal);
                let Some(t) = refract(-s, normal, 1.0, WATER_IOR).filter(|t| t.z < 0.0 && jac > 0.0 && cos > 0.0) else { continue };
                let flux = cos * jac / normal.z / s.z * fresnel_transmittance(cos, 1.0, WATER_IOR) / (photons * photons) as f32;
                let travel = (depth + mix(&|i| surface[i][2])).max(0.0);
                let px = x as f32 + u + (mix(&|i| surface[i][0]) + t.x / -t.z * travel) / texel;
                let py = y as f32 + v + (mix(&|i| surface[i][1]) + t.y / -t.z * travel) / texel;
                splat_bilinear(&mut out, r, [px, py], flux);
            }
        }
    }
    out
}

/// A periodic box blur of `radius` texels, twice (close to a Gaussian).
fn blur(map: &[f32], r: usize, radius: usize) -> Vec<f32> {
    let mut a = map.to_vec();
    for _ in 0..2 {
        for axis in 0..2 {
            let b = a.clone();
            for y in 0..r {
                for x in 0..r {
                    let mut sum = 0.0;
                    for o in 0..=2 * radius {
                        let (xx, yy) = if axis == 0 { ((x + r + o - radius) % r, y) } else { (x, (y + r + o - radius) % r) };
                        sum += b[yy * r + xx];
                    }
                    a[y * r + x] = sum / (2 * radius + 1) as f32;
                }
            }
        }
    }
    a
}

#[test]
fn photon_splatting_agrees_with_the_area_ratio() {
    let r = 128;
    let frames = bake_waves(&test_spec(r as u32, 2)).unwrap();
    let s = Vec3::from(sun(65.0, 40.0));
    let depths = vec![1.0, 3.0];
    let c = bake_caustics(&frames, &caustic_spec(s.to_array(), CausticDepths::Fixed(depths.clone()))).unwrap();
    for (d, &depth) in depths.iter().enumerate() {
        let area = blur(map(&c, r, 1, d), r, 2);
        let photons = blur(&photon_map(&frames, 1, s, depth, 6), r, 2);
        let mean = area.iter().map(|&v| v as f64).sum::<f64>() / (r * r) as f64;
        let rms = (area.iter().zip(&photons).map(|(&a, &p)| ((a - p) as f64).powi(2)).sum::<f64>() / (r * r) as f64).sqrt();
        let spread = contrast(&area);
        assert!(rms / mean <= 0.05, "depth {depth}: RMS difference {:.2} % of the mean (blurred contrast {spread})", 100.0 * rms / mean);
        assert!(spread > 0.05, "depth {depth}: the blurred pattern is too faint to compare ({spread})");
    }
}

fn caustics_hash(c: &Caustics) -> u64 {
    let bytes: Vec<u8> = c.depths.iter().chain(&c.maps).flat_map(|v| v.to_le_bytes()).collect();
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

#[test]
#[test]
fn shifting_the_surface_shifts_the_caustics() {
    // The wrap edge is no special place: a surface rolled by (13, 50) texels casts the same caustics
    // rolled by (13, 50), up to the rounding of the texel coordinates.
    let frames = bake_waves(&test_spec(64, 1)).unwrap();
    let (r, sx, sy) = (64usize, 13usize, 50usize);
    let roll = |i: usize| ((i / r + sy) % r) * r + (i % r + sx) % r;
    let mut rolled = frames.clone();
    for i in 0..r * r {
        rolled.surface[roll(i)] = frames.surface[i];
        rolled.normals[roll(i)] = frames.normals[i];
    }
    let spec = caustic_spec(sun(50.0, 300.0), CausticDepths::Fixed(vec![0.7, 5.0]));
    let (a, b) = (bake_caustics(&frames, &spec).unwrap(), bake_caustics(&rolled, &spec).unwrap());
    for d in 0..2 {
        let (ma, mb) = (map(&a, r, 0, d), map(&b, r, 0, d));
        let worst = (0..r * r).map(|i| (ma[i] - mb[roll(i)]).abs()).fold(0.0, f32::max);
        assert!(worst < 2.0e-3, "depth {d}: largest difference {worst}");
    }
}

#[test]
fn caustic_bytes_are_pinned_and_independent_of_threads() {
    let frames = bake_waves(&test_spec(32, 4)).unwrap();
    let spec = caustic_spec(sun(60.0, 45.0), CausticDepths::Auto(3));
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| bake_caustics(&frames, &spec).unwrap());
    let many = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap().install(|| bake_caustics(&frames, &spec).unwrap());
    assert_eq!(one, many);
    assert_eq!(caustics_hash(&one), 9935650864865528595);
}

#[test]
fn bad_caustic_specs_are_refused() {
    let frames = bake_waves(&test_spec(32, 2)).unwrap();
    let ok = caustic_spec(sun(60.0, 0.0), CausticDepths::Fixed(vec![1.0, 2.0]));
    for bad in [
        CausticSpec { sun_direction: [0.0, 0.0, -1.0], ..ok.clone() },
        CausticSpec { sun_direction: [0.0, 0.0, 2.0], ..ok.clone() },
        CausticSpec { ior: f32::NAN, ..ok.clone() },
        CausticSpec { depths: CausticDepths::Fixed(vec![2.0, 1.0]), ..ok.clone() },
        CausticSpec { depths: CausticDepths::Fixed(vec![]), ..ok.clone() },
        CausticSpec { depths: CausticDepths::Auto(9), ..ok.clone() },
    ] {
        assert!(matches!(bake_caustics(&frames, &bad), Err(WaterError::OutOfRange { .. })), "{bad:?}");
    }
    let mut short = frames.clone();
    short.surface.pop();
    assert!(matches!(bake_caustics(&short, &ok), Err(WaterError::FrameSize { .. })));
}
