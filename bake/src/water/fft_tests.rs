//! The FFT against a direct DFT in f64.

use super::fft::{Complex, Fft};
use crate::rng::Rng;

fn random(n: usize, seed: u64) -> Vec<Complex> {
    let mut rng = Rng::keyed(seed, "fft-test", n as u64);
    (0..n).map(|_| Complex::new(rng.range(-1.0, 1.0) as f32, rng.range(-1.0, 1.0) as f32)).collect()
}

/// `Σ_k x[k]·e^{+2πi jk/n}` in f64.
fn dft(x: &[Complex]) -> Vec<(f64, f64)> {
    let n = x.len();
    (0..n)
        .map(|j| {
            x.iter().enumerate().fold((0.0, 0.0), |(re, im), (k, c)| {
                let a = 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                let (cos, sin) = (a.cos(), a.sin());
                (re + c.re as f64 * cos - c.im as f64 * sin, im + c.re as f64 * sin + c.im as f64 * cos)
            })
        })
        .collect()
}

#[test]
fn fft_matches_a_direct_dft() {
    for n in [2, 4, 8, 64, 256] {
        let x = random(n, 7);
        let mut y = x.clone();
        Fft::new(n).inverse(&mut y);
        let want = dft(&x);
        let scale = (n as f64).sqrt();
        for (j, (got, w)) in y.iter().zip(&want).enumerate() {
            let err = ((got.re as f64 - w.0).powi(2) + (got.im as f64 - w.1).powi(2)).sqrt();
            assert!(err < 1.0e-5 * scale * (n as f64).log2().max(1.0), "n = {n}, bin {j}: {got:?} vs {w:?}");
        }
    }
}

#[test]
fn fft_2d_matches_a_direct_dft() {
    let n = 16;
    let x = random(n * n, 3);
    let mut y = x.clone();
    Fft::new(n).inverse_2d(&mut y, &mut vec![Complex::default(); n]);
    for (py, px) in [(0, 0), (1, 0), (0, 5), (7, 11), (15, 15)] {
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for m in 0..n {
            for k in 0..n {
                let a = 2.0 * std::f64::consts::PI * ((k * px + m * py) % n) as f64 / n as f64;
                let c = x[m * n + k];
                re += c.re as f64 * a.cos() - c.im as f64 * a.sin();
                im += c.re as f64 * a.sin() + c.im as f64 * a.cos();
            }
        }
        let got = y[py * n + px];
        assert!((got.re as f64 - re).abs() < 1.0e-4 && (got.im as f64 - im).abs() < 1.0e-4, "({px}, {py}): {got:?} vs ({re}, {im})");
    }
}

#[test]
fn fft_bytes_are_pinned() {
    // An FFT or libm change that moves a single bit of the twiddles shows here.
    let mut y = random(256, 11);
    Fft::new(256).inverse(&mut y);
    let bytes: Vec<u8> = y.iter().flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()]).flatten().collect();
    assert_eq!(xxhash_rust::xxh3::xxh3_64(&bytes), 12657666380870272495);
}
