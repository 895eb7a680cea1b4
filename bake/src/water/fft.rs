//! A deterministic radix-2 complex FFT in f32: iterative (bit reversal, then butterflies), twiddles
//! precomputed once from f64 `libm` sines and cosines, plain scalar arithmetic (no runtime SIMD
//! dispatch, no fused multiply-add), so its bytes are the same on every x86-64.

use std::ops::{Add, Mul, Sub};

/// A complex number in f32.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Complex {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

impl Complex {
    pub const fn new(re: f32, im: f32) -> Complex {
        Complex { re, im }
    }

    /// `i·self`.
    #[inline]
    pub fn times_i(self) -> Complex {
        Complex::new(-self.im, self.re)
    }

    /// `self·s` for a real `s`.
    #[inline]
    pub fn scale(self, s: f32) -> Complex {
        Complex::new(self.re * s, self.im * s)
    }

    /// The complex conjugate.
    #[inline]
    pub fn conj(self) -> Complex {
        Complex::new(self.re, -self.im)
    }
}

impl Add for Complex {
    type Output = Complex;
    #[inline]
    fn add(self, o: Complex) -> Complex {
        Complex::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for Complex {
    type Output = Complex;
    #[inline]
    fn sub(self, o: Complex) -> Complex {
        Complex::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Complex {
    type Output = Complex;
    #[inline]
    fn mul(self, o: Complex) -> Complex {
        Complex::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
}

/// `e^{i·2π·j/n}` for `j` in `0..count`, from f64 `libm` (the same bits everywhere).
pub(crate) fn unit_roots(n: usize, count: usize, sign: f64) -> Vec<Complex> {
    (0..count)
        .map(|j| {
            let a = sign * 2.0 * std::f64::consts::PI * j as f64 / n as f64;
            Complex::new(libm::cos(a) as f32, libm::sin(a) as f32)
        })
        .collect()
}

/// The plan of an inverse (unnormalised, `e^{+2πi jk/n}`) FFT of one power-of-two length.
pub(crate) struct Fft {
    n: usize,
    twiddles: Vec<Complex>,
    reversed: Vec<u32>,
}

impl Fft {
    /// The plan for length `n` (a power of two ≥ 2).
    pub fn new(n: usize) -> Fft {
        assert!(n.is_power_of_two() && n >= 2, "FFT length {n} is not a power of two ≥ 2");
        let bits = n.trailing_zeros();
        let reversed = (0..n as u32).map(|i| i.reverse_bits() >> (32 - bits)).collect();
        Fft { n, twiddles: unit_roots(n, n / 2, 1.0), reversed }
    }

    /// `data[j] ← Σ_k data[k]·e^{+2πi jk/n}` in place.
    pub fn inverse(&self, data: &mut [Complex]) {
        let n = self.n;
        debug_assert_eq!(data.len(), n);
        for (i, &r) in self.reversed.iter().enumerate() {
            let r = r as usize;
            if i < r {
                data.swap(i, r);
            }
        }
        let mut half = 1;
        while half < n {
            let stride = n / (2 * half);
            for block in data.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for (j, (a, b)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    let t = self.twiddles[j * stride] * *b;
                    let u = *a;
                    *a = u + t;
                    *b = u - t;
                }
            }
            half *= 2;
        }
    }

    /// The 2-D inverse transform of an `n × n` row-major grid (rows, then columns), `column` a
    /// scratch of `n`: `out[y][x] = Σ_{m,k} in[m][k]·e^{+2πi (kx + my)/n}`.
    pub fn inverse_2d(&self, grid: &mut [Complex], column: &mut [Complex]) {
        let n = self.n;
        for row in grid.chunks_exact_mut(n) {
            self.inverse(row);
        }
        for x in 0..n {
            for (y, c) in column.iter_mut().enumerate() {
                *c = grid[y * n + x];
            }
            self.inverse(column);
            for (y, c) in column.iter().enumerate() {
                grid[y * n + x] = *c;
            }
        }
    }
}
