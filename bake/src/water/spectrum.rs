//! The ocean spectra and the wave amplitudes `h0(k)` on the patch's discrete wave vectors
//! `k = 2π(n, m)/L`, `n, m ∈ [−R/2, R/2)`. All physics in metres and seconds (f64, `libm` for every
//! transcendental so the bytes are the same on every machine); amplitudes leave in world units.
//!
//! Decisions, each for a reason:
//! - A wave whose deep-water frequency `ω = √(g|k|)` rounds down to 0 (slower than one cycle per
//!   loop) is dropped: kept static it would be a frozen bump that never travels. So are the mean
//!   (`k = 0`, the mean level stays 0) and the Nyquist row and column (`n` or `m` = −R/2), whose
//!   partner `−k` aliases onto itself, so that `h̃(−k) = conj h̃(k)` holds exactly and the field is real.
//! - Waves travel with the wind only: JONSWAP's spreading is a one-sided `(2/π)·cos²θ` around the
//!   wind, and Phillips' `(k̂·ŵ)²` is kept on the downwind half-plane (Tessendorf's option), both
//!   normalised so that the directional spectrum integrates to the omnidirectional one.
//! - Each wave's Gaussian pair is drawn from `Rng::keyed(seed, "water-waves", key(n, m))`, keyed by
//!   the signed wave index: the same long waves at every resolution and in any evaluation order.

use crate::rng::Rng;

use super::fft::Complex;
use super::{Spectrum, WaveSpec};

/// Gravitational acceleration, m/s².
pub const GRAVITY: f64 = 9.81;

/// Phillips' equilibrium-range constant (the saturation level α of `S(ω) = α g² ω⁻⁵`).
const PHILLIPS_ALPHA: f64 = 0.0081;

/// Small waves are damped by `exp(−k²l²)` with `l` this fraction of the Phillips length `U²/g`
/// (Tessendorf's suggestion of `l ≪ L`).
const PHILLIPS_DAMPING: f64 = 1.0e-3;

/// JONSWAP's peak angular frequency (rad/s) for wind speed `u` (m/s) and fetch (m):
/// `ω_p = 22·(g²/(U·F))^(1/3)`, i.e. the dimensionless `ω_p·U/g = 22·(gF/U²)^(−1/3)`. The cube root is
/// the erratum of Horvath 2015 (its printed formula lacks it, and so do ports copied from it).
pub fn jonswap_peak_frequency(u: f64, fetch: f64) -> f64 {
    22.0 * libm::cbrt(GRAVITY * GRAVITY / (u * fetch))
}

/// JONSWAP's frequency spectrum `S(ω)` (m²·s) at angular frequency `omega` for wind `u` (m/s) and
/// fetch (m): `α g² ω⁻⁵ exp(−5/4 (ω_p/ω)⁴) γ^r`, `α = 0.076 (U²/(F g))^0.22`, `γ = 3.3`,
/// `r = exp(−(ω − ω_p)²/(2σ²ω_p²))`, `σ = 0.07` below the peak and `0.09` above.
pub fn jonswap(omega: f64, u: f64, fetch: f64) -> f64 {
    if omega <= 0.0 || u <= 0.0 {
        return 0.0;
    }
    let alpha = 0.076 * libm::pow(u * u / (fetch * GRAVITY), 0.22);
    let wp = jonswap_peak_frequency(u, fetch);
    let sigma = if omega <= wp { 0.07 } else { 0.09 };
    let r = libm::exp(-(omega - wp) * (omega - wp) / (2.0 * sigma * sigma * wp * wp));
    let x = wp / omega;
    alpha * GRAVITY * GRAVITY / omega.powi(5) * libm::exp(-1.25 * x * x * x * x) * libm::pow(3.3, r)
}

/// The directional wavenumber spectrum `Ψ(k_x, k_y)` (m⁴) at wave vector `k` (rad/m) of `|k| = k`,
/// with `cos_wind = k̂·ŵ`; `Ψ·Δk²` is the height variance of the waves in a `Δk²` cell.
fn directional(spec: &WaveSpec, k: f64, cos_wind: f64) -> f64 {
    if cos_wind <= 0.0 {
        return 0.0;
    }
    let u = spec.wind_speed as f64;
    match spec.spectrum {
        Spectrum::Jonswap => {
            // S(ω) dω = F(k) dk with dω/dk = g/(2ω) (deep water); F(k) = k ∫ Ψ dθ.
            let omega = (GRAVITY * k).sqrt();
            let spread = 2.0 / std::f64::consts::PI * cos_wind * cos_wind;
            jonswap(omega, u, spec.fetch as f64) * GRAVITY / (2.0 * omega) / k * spread
        }
        Spectrum::Phillips => {
            let l = u * u / GRAVITY;
            let damp = PHILLIPS_DAMPING * l;
            // Ψ = (α/π) k⁻⁴ cos²θ on the downwind half-plane: its F(k) is Phillips' α/(2k³).
            PHILLIPS_ALPHA / std::f64::consts::PI * libm::exp(-1.0 / (k * l * k * l)) / (k * k * k * k)
                * cos_wind
                * cos_wind
                * libm::exp(-k * k * damp * damp)
        }
    }
}

/// The key of wave `(n, m)`: its signed indices, independent of the resolution.
fn wave_key(n: i64, m: i64) -> u64 {
    ((n as i32 as u32 as u64) << 32) | (m as i32 as u32 as u64)
}

/// A standard complex Gaussian pair `(ξr, ξi)` by Box–Muller from the wave's own stream.
fn gaussian_pair(seed: u64, n: i64, m: i64) -> (f64, f64) {
    let mut rng = Rng::keyed(seed, "water-waves", wave_key(n, m));
    let u1 = 1.0 - rng.unit(); // (0, 1]: the logarithm stays finite
    let u2 = rng.unit();
    let r = (-2.0 * libm::log(u1)).sqrt();
    let a = 2.0 * std::f64::consts::PI * u2;
    (r * libm::cos(a), r * libm::sin(a))
}

/// The amplitudes of every wave, indexed like the FFT buffers (`(m mod R)·R + (n mod R)`).
pub(crate) struct Amplitudes {
    /// `h0(k)`, world units.
    pub h0: Vec<Complex>,
    /// `conj h0(−k)`, world units.
    pub h0_minus_conj: Vec<Complex>,
    /// `ω(k)/ω0`: the wave's frequency in cycles per loop (0 for dropped waves).
    pub cycles: Vec<u32>,
}

/// The signed wave index of buffer column (or row) `i` of `r`.
pub(crate) fn signed(i: usize, r: usize) -> i64 {
    if i < r / 2 {
        i as i64
    } else {
        i as i64 - r as i64
    }
}

/// Draws every wave's amplitude and frequency for `spec` (validated).
pub(crate) fn amplitudes(spec: &WaveSpec) -> Amplitudes {
    let r = spec.resolution as usize;
    let mpu = spec.metres_per_unit as f64;
    let dk = 2.0 * std::f64::consts::PI / (spec.patch_size as f64 * mpu); // rad/m between waves
    let omega0 = 2.0 * std::f64::consts::PI / spec.period as f64;
    let dir = (spec.wind_direction as f64).to_radians();
    let (wx, wy) = (libm::cos(dir), libm::sin(dir));
    let still = spec.wind_speed == 0.0 || spec.amplitude == 0.0;
    let zero = Complex::default();
    // h0 per signed index, with its cycles; the Nyquist row/column and dropped waves stay 0.
    let mut h0 = vec![zero; r * r];
    let mut cycles = vec![0u32; r * r];
    for (row, (h_row, c_row)) in h0.chunks_mut(r).zip(cycles.chunks_mut(r)).enumerate() {
        let m = signed(row, r);
        for (col, (h, c)) in h_row.iter_mut().zip(c_row.iter_mut()).enumerate() {
            let n = signed(col, r);
            let nyquist = -(r as i64) / 2;
            if still || (n == 0 && m == 0) || n == nyquist || m == nyquist {
                continue;
            }
            let (kx, ky) = (n as f64 * dk, m as f64 * dk);
            let k = (kx * kx + ky * ky).sqrt();
            let q = ((GRAVITY * k).sqrt() / omega0).floor();
            if q < 1.0 {
                continue;
            }
            let psi = directional(spec, k, (kx * wx + ky * wy) / k);
            let scale = (psi * dk * dk).sqrt() * 0.5 * spec.amplitude as f64 / mpu;
            let (gr, gi) = gaussian_pair(spec.seed, n, m);
            *h = Complex::new((gr * scale) as f32, (gi * scale) as f32);
            *c = q.min(u32::MAX as f64) as u32;
        }
    }
    let h0_minus_conj = (0..r * r)
        .map(|i| {
            let (row, col) = (i / r, i % r);
            let h = h0[((r - row) % r) * r + (r - col) % r];
            Complex::new(h.re, -h.im)
        })
        .collect();
    Amplitudes { h0, h0_minus_conj, cycles }
}
