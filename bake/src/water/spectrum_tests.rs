//! JONSWAP's peak and energy, and the keyed amplitudes.

use super::frames_tests::test_spec;
use super::spectrum::{amplitudes, signed};
use super::{bake_waves, jonswap, jonswap_peak_frequency, Spectrum, WaveSpec, GRAVITY};

#[test]
fn jonswap_peak_uses_the_cube_root_of_the_dimensionless_fetch() {
    // U = 10 m/s over 100 km: ω_p = 22·(g²/(U·F))^(1/3) ≈ 1.009 rad/s, a 6.2 s peak period. The
    // erratum's formula without the cube root, 22·g²/(U·F), would give 0.0021 rad/s (a 50-minute wave).
    let wp = jonswap_peak_frequency(10.0, 100_000.0);
    assert!((wp - 1.0087).abs() < 1.0e-3, "ω_p = {wp}");
    let without_cube_root = 22.0 * GRAVITY * GRAVITY / (10.0 * 100_000.0);
    assert!(without_cube_root < 0.01 && (wp / without_cube_root) > 100.0);
    // The dimensionless form ω_p·U/g = 22·(gF/U²)^(−1/3), and 8× the fetch halves ω_p.
    for (u, f) in [(5.0, 10_000.0), (10.0, 100_000.0), (20.0, 400_000.0)] {
        let dimless = 22.0 * (GRAVITY * f / (u * u)).powf(-1.0 / 3.0);
        assert!((jonswap_peak_frequency(u, f) * u / GRAVITY - dimless).abs() < 1.0e-9);
        assert!((jonswap_peak_frequency(u, 8.0 * f) * 2.0 - jonswap_peak_frequency(u, f)).abs() < 1.0e-9);
    }
    // The spectrum's maximum lies at ω_p.
    let (u, f) = (12.0, 50_000.0);
    let wp = jonswap_peak_frequency(u, f);
    let best = (1..4000).map(|i| i as f64 * 1.0e-3).max_by(|a, b| jonswap(*a, u, f).total_cmp(&jonswap(*b, u, f))).unwrap();
    assert!((best - wp).abs() < 2.0e-3, "argmax {best} vs ω_p {wp}");
    assert_eq!(jonswap(1.0, 0.0, f), 0.0, "no wind, no waves");
}

#[test]
fn baked_height_variance_is_the_spectrum_integral() {
    // A 1 km patch at 256² resolves JONSWAP's peak (60 m waves) and its tail to 2.8 rad/s; the
    // heights' variance must be ∫S(ω)dω over that band (within the sampling noise of 32k waves).
    let spec = WaveSpec {
        spectrum: Spectrum::Jonswap,
        wind_speed: 10.0,
        wind_direction: 30.0,
        fetch: 100_000.0,
        choppiness: 0.0,
        amplitude: 1.0,
        metres_per_unit: 2.0,
        patch_size: 500.0,
        period: 1000.0,
        frames: 1,
        resolution: 256,
        seed: 5,
    };
    // Averaged over four seeds: a few hundred waves near the peak hold most of the energy, so one
    // seed's variance scatters by ~6 %.
    let var = (0..4)
        .map(|seed| {
            let frames = bake_waves(&WaveSpec { seed, ..spec.clone() }).unwrap();
            frames.surface.iter().map(|s| (s[2] as f64 * 2.0).powi(2)).sum::<f64>() / frames.surface.len() as f64
        })
        .sum::<f64>()
        / 4.0;
    let frames = bake_waves(&spec).unwrap();
    let dk = 2.0 * std::f64::consts::PI / 1000.0;
    let (w_lo, w_hi) = ((GRAVITY * dk).sqrt(), (GRAVITY * dk * 127.0).sqrt());
    let steps = 200_000;
    let dw = (w_hi - w_lo) / steps as f64;
    let m0: f64 = (0..steps).map(|i| jonswap(w_lo + (i as f64 + 0.5) * dw, 10.0, 100_000.0) * dw).sum();
    assert!((var / m0 - 1.0).abs() < 0.08, "height variance {var} m² vs ∫S dω = {m0} m² (Hs = {} m)", 4.0 * m0.sqrt());
    // Doubling the amplitude doubles the heights.
    let twice = bake_waves(&WaveSpec { amplitude: 2.0, ..spec }).unwrap();
    assert!((twice.surface[1234][2] - 2.0 * frames.surface[1234][2]).abs() < 1.0e-5);
}

#[test]
fn amplitudes_are_keyed_by_the_wave_not_by_the_resolution() {
    let small = test_spec(32, 4);
    let large = WaveSpec { resolution: 64, ..small.clone() };
    let (a, b) = (amplitudes(&small), amplitudes(&large));
    let mut compared = 0;
    for i in 0..32 * 32 {
        let (n, m) = (signed(i % 32, 32), signed(i / 32, 32));
        if n == -16 || m == -16 {
            continue;
        }
        let j = (m.rem_euclid(64) * 64 + n.rem_euclid(64)) as usize;
        assert_eq!((a.h0[i], a.cycles[i]), (b.h0[j], b.cycles[j]), "wave ({n}, {m})");
        compared += (a.cycles[i] > 0) as usize;
    }
    assert!(compared > 500, "only {compared} waves were compared");
    // Another seed draws other waves.
    let c = amplitudes(&WaveSpec { seed: small.seed + 1, ..small });
    assert_ne!(a.h0, c.h0);
}

#[test]
fn waves_travel_with_the_wind_at_their_looped_frequency() {
    // Every kept wave has a whole number of cycles per loop, its frequency at most √(gk), and
    // upwind waves carry nothing.
    let spec = test_spec(32, 4);
    let a = amplitudes(&spec);
    let dk = 2.0 * std::f64::consts::PI / (spec.patch_size as f64 * spec.metres_per_unit as f64);
    let dir = (spec.wind_direction as f64).to_radians();
    for i in 0..32 * 32 {
        let (n, m) = (signed(i % 32, 32) as f64, signed(i / 32, 32) as f64);
        let k = (n * n + m * m).sqrt() * dk;
        let q = a.cycles[i] as f64;
        let w = (GRAVITY * k).sqrt();
        let w0 = 2.0 * std::f64::consts::PI / spec.period as f64;
        if a.h0[i] != Default::default() {
            assert!(q * w0 <= w && w < (q + 1.0) * w0, "wave ({n}, {m}): {q} cycles, ω = {w}");
            assert!(n * dir.cos() + m * dir.sin() > 0.0, "an upwind wave ({n}, {m})");
        }
    }
}
