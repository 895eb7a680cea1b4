//! `sine_products` noise: `Σ a · sin(fx·x + px) · sin(fy·y + py) · sin(fz·z + pz)` over
//! `octaves × terms` terms.
//!
//! Each term is separable, so every axis factor is tabulated once (`nx + ny + nz` sines per term)
//! and a row of samples along X is a sum of `coef_t · table_t[x]` with one coefficient per term:
//! pure multiply-adds over contiguous memory that the compiler vectorises. Summation order is
//! fixed (term 0 first), so a row and a single sample give bit-identical results.

use std::f64::consts::TAU;

use crate::rng::Rng;
use crate::world::{NoiseSpec, MAX_OCTAVES, MAX_TERMS};

/// One term's parameters, in world units (angular frequency in radians per world unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SineTerm {
    /// The term's weight before normalisation ([`sine_normalisation`]).
    pub amplitude: f64,
    /// Angular frequency along X, Y and Z, radians per world unit.
    pub omega: [f64; 3],
    /// Phase along X, Y and Z, radians in `[0, 2π)`.
    pub phase: [f64; 3],
}

/// The random terms for `spec` under `seed` (reference parameters: per-term amplitude
/// `gain^o · U(0.2, 1)`, per-axis frequency `frequency · lacunarity^o · U(0.1, 1)`, phases
/// `U(0, 2π)`). Term `j` of octave `o` draws from its own stream, so adding terms or octaves
/// leaves the existing ones unchanged.
pub fn sine_terms(spec: &NoiseSpec, seed: u64) -> Vec<SineTerm> {
    let mut terms = Vec::with_capacity((spec.octaves * spec.terms) as usize);
    for o in 0..spec.octaves {
        let base = spec.frequency * spec.lacunarity().powi(o as i32);
        let gain = spec.gain.powi(o as i32);
        for j in 0..spec.terms {
            let mut rng = Rng::keyed(seed, "density.sine_products", (u64::from(o) << 32) | u64::from(j));
            let amplitude = gain * rng.range(0.2, 1.0);
            let omega = std::array::from_fn(|_| TAU * base * rng.range(0.1, 1.0));
            let phase = std::array::from_fn(|_| rng.range(0.0, TAU));
            terms.push(SineTerm { amplitude, omega, phase });
        }
    }
    terms
}

/// The factor that gives the term sum a standard deviation of 0.5 (times `noise.amplitude`):
/// a product of three sines with independent phases has variance 1/8, so the sum has variance
/// `Σ a² / 8`.
pub fn sine_normalisation(terms: &[SineTerm], amplitude: f64) -> f64 {
    let var: f64 = terms.iter().map(|t| t.amplitude * t.amplitude).sum::<f64>() / 8.0;
    if var > 0.0 {
        amplitude * 0.5 / var.sqrt()
    } else {
        0.0
    }
}

/// Samples per block of the X table. 32 accumulators stay in registers (eight SSE registers:
/// enough independent add chains to hide the add latency) while the term loop runs, so a row
/// costs one table read per term and sample and no accumulator memory traffic.
const LANES: usize = 32;

/// `Σ_t coef[t] · block[t][lane]` for one block, in term order. Returning the accumulators
/// whole (never slicing them) keeps them in registers.
#[inline(always)]
fn block_sum(block: &[f32], coef: &[f32]) -> [f32; LANES] {
    let mut acc = [0f32; LANES];
    for (&c, lanes) in coef.iter().zip(block.chunks_exact(LANES)) {
        for (a, &v) in acc.iter_mut().zip(lanes) {
            *a += c * v;
        }
    }
    acc
}

/// Tabulated sine-product noise over a `dims` grid of spacing `voxel_size`.
#[derive(Clone, Debug)]
pub struct SineProducts {
    dims: [usize; 3],
    count: usize,
    /// X factors (amplitude × normalisation × sin) laid out `[block][term][lane]`, with
    /// `x = block * LANES + lane` (the last block padded), so a row streams through it in order.
    tx: Vec<f32>,
    /// `[y * count + t]`: sin along Y (term-contiguous so a row's coefficients are one pass).
    ty: Vec<f32>,
    /// `[z * count + t]`: sin along Z.
    tz: Vec<f32>,
}

impl SineProducts {
    /// Draws the terms of `spec` under `seed` and tabulates their axis factors over a `dims` grid
    /// of spacing `voxel_size` world units.
    pub fn new(spec: &NoiseSpec, seed: u64, dims: [usize; 3], voxel_size: f64) -> SineProducts {
        let terms = sine_terms(spec, seed);
        let norm = sine_normalisation(&terms, spec.amplitude);
        let count = terms.len();
        let [nx, ny, nz] = dims;
        let axis = |t: &SineTerm, a: usize, i: usize| (t.omega[a] * (i as f64 * voxel_size) + t.phase[a]).sin();
        let blocks = nx.div_ceil(LANES);
        let mut tx = Vec::with_capacity(blocks * count * LANES);
        for b in 0..blocks {
            for t in &terms {
                tx.extend((b * LANES..(b + 1) * LANES).map(|x| (norm * t.amplitude * axis(t, 0, x)) as f32));
            }
        }
        let ty = (0..ny).flat_map(|y| terms.iter().map(move |t| axis(t, 1, y) as f32)).collect();
        let tz = (0..nz).flat_map(|z| terms.iter().map(move |t| axis(t, 2, z) as f32)).collect();
        SineProducts { dims, count, tx, ty, tz }
    }

    /// The per-term coefficients `sin_y · sin_z` of row `(y, z)`.
    #[inline]
    fn coefficients<'a>(&self, y: usize, z: usize, buf: &'a mut [f32; (MAX_OCTAVES * MAX_TERMS) as usize]) -> &'a [f32] {
        let (ty, tz) = (&self.ty[y * self.count..][..self.count], &self.tz[z * self.count..][..self.count]);
        let coef = &mut buf[..self.count];
        for ((c, &a), &b) in coef.iter_mut().zip(ty).zip(tz) {
            *c = a * b;
        }
        coef
    }

    /// Writes the noise for row `(y, z)` into `out` (length `nx`).
    pub fn fill_row(&self, y: usize, z: usize, out: &mut [f32]) {
        debug_assert_eq!(out.len(), self.dims[0]);
        let mut buf = [0f32; (MAX_OCTAVES * MAX_TERMS) as usize];
        let coef = self.coefficients(y, z, &mut buf);
        // One table block per LANES samples; the last block is padded when nx is not a multiple.
        for (block, dst) in self.tx.chunks_exact(self.count * LANES).zip(out.chunks_mut(LANES)) {
            if dst.len() == LANES {
                dst.copy_from_slice(&block_sum(block, coef));
            } else {
                let acc = block_sum(block, coef);
                dst.copy_from_slice(&acc[..dst.len()]);
            }
        }
    }

    /// The noise at one sample, bit-identical to [`fill_row`](Self::fill_row)'s value there
    /// (same products, summed in the same term order).
    pub fn sample(&self, x: usize, y: usize, z: usize) -> f32 {
        let mut buf = [0f32; (MAX_OCTAVES * MAX_TERMS) as usize];
        let coef = self.coefficients(y, z, &mut buf);
        let block = &self.tx[(x / LANES) * self.count * LANES..][..self.count * LANES];
        let mut acc = 0f32;
        for (&c, lanes) in coef.iter().zip(block.chunks_exact(LANES)) {
            acc += c * lanes[x % LANES];
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> NoiseSpec {
        NoiseSpec { lacunarity: Some(2.5), ..NoiseSpec::default() }
    }

    #[test]
    fn tables_match_the_naive_formula() {
        let (dims, vs, seed) = ([40, 24, 16], 0.0625, 17);
        let s = spec();
        let terms = sine_terms(&s, seed);
        assert_eq!(terms.len(), 60);
        let norm = sine_normalisation(&terms, s.amplitude);
        let sp = SineProducts::new(&s, seed, dims, vs);
        let mut row = vec![0f32; dims[0]];
        let mut worst = 0f64;
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                sp.fill_row(y, z, &mut row);
                for (x, &got) in row.iter().enumerate() {
                    let p = [x as f64 * vs, y as f64 * vs, z as f64 * vs];
                    let naive: f64 = terms
                        .iter()
                        .map(|t| {
                            t.amplitude
                                * (t.omega[0] * p[0] + t.phase[0]).sin()
                                * (t.omega[1] * p[1] + t.phase[1]).sin()
                                * (t.omega[2] * p[2] + t.phase[2]).sin()
                        })
                        .sum::<f64>()
                        * norm;
                    worst = worst.max((f64::from(got) - naive).abs());
                    assert_eq!(got.to_bits(), sp.sample(x, y, z).to_bits());
                }
            }
        }
        assert!(worst < 1e-5, "worst deviation {worst}");
    }

    #[test]
    fn terms_follow_the_reference_ranges() {
        let s = spec();
        let terms = sine_terms(&s, 3);
        for (i, t) in terms.iter().enumerate() {
            let o = (i / 12) as i32;
            let base = TAU * s.frequency * 2.5f64.powi(o);
            assert!(t.amplitude >= 0.2 * 0.5f64.powi(o) && t.amplitude < 0.5f64.powi(o));
            assert!(t.omega.iter().all(|&w| w >= 0.1 * base && w < base));
            assert!(t.phase.iter().all(|&p| (0.0..TAU).contains(&p)));
        }
        // More terms per octave keep the existing ones.
        let more = sine_terms(&NoiseSpec { terms: 13, ..s }, 3);
        assert_eq!(more[0], terms[0]);
        assert_eq!(more[13], terms[12]);
    }

    #[test]
    fn normalised_spread_is_about_half() {
        let s = spec();
        let sp = SineProducts::new(&s, 5, [256, 256, 8], 0.25);
        let mut row = vec![0f32; 256];
        let (mut sum, mut sum2, mut n) = (0f64, 0f64, 0f64);
        for z in 0..8 {
            for y in 0..256 {
                sp.fill_row(y, z, &mut row);
                for &v in &row {
                    sum += f64::from(v);
                    sum2 += f64::from(v) * f64::from(v);
                    n += 1.0;
                }
            }
        }
        let std = (sum2 / n - (sum / n) * (sum / n)).sqrt();
        assert!((0.3..0.7).contains(&std), "std {std}");
    }
}
