//! The looping frames: at `t_f = f·T/F` each wave's coefficient is
//! `h̃(k, t) = h0(k)·e^{−iωt} + conj h0(−k)·e^{+iωt}` (a wave travelling along `k`), with
//! `ω = q·2π/T` for whole `q`, so `ωt = 2π·q·f/F` and the phase is the `(q·f mod F)`-th `F`-th root
//! of unity from one table: frame `F` is frame 0 bit for bit, and no phase drifts with `f`.
//!
//! Eight real fields come from four complex inverse FFTs, two Hermitian spectra `A + iB` per
//! transform (the result is `a + ib`): the displacements `D = λ·(−i k̂) h̃` (x, y), the height `h̃`
//! with `∂Dx/∂y = λ k_x k_y/|k|·h̃`, the slopes `i k h̃` (x, y) and `∂Dx/∂x`, `∂Dy/∂y` (`λ k_x²/|k|·h̃`,
//! `λ k_y²/|k|·h̃`). From them the Jacobian `J = (1 + ∂Dx/∂x)(1 + ∂Dy/∂y) − (∂Dx/∂y)²` and the
//! normal of the displaced surface `∂P/∂x × ∂P/∂y` (z = J), mirrored to point up where J < 0 (a fold:
//! foam, where no single normal exists).

use rayon::prelude::*;

use super::fft::{unit_roots, Complex, Fft};
use super::spectrum::{amplitudes, signed, Amplitudes};
use super::{WaterError, WaveFrames, WaveSpec};

/// Bakes the `F` frames of `spec` (rayon over frames; every frame is computed alone, so the bytes
/// do not depend on the thread count).
pub fn bake_waves(spec: &WaveSpec) -> Result<WaveFrames, WaterError> {
    spec.validate()?;
    let waves = Waves::new(spec);
    let n = spec.texels();
    let mut surface = vec![[0.0f32; 4]; spec.frames as usize * n];
    let mut normals = vec![[0.0f32; 3]; spec.frames as usize * n];
    surface
        .par_chunks_mut(n)
        .zip(normals.par_chunks_mut(n))
        .enumerate()
        .for_each_init(|| Scratch::new(spec.resolution as usize), |scratch, (f, (s, nm))| waves.frame(f as u64, scratch, s, nm));
    Ok(WaveFrames { spec: spec.clone(), surface, normals })
}

/// The per-thread buffers of one frame's transforms.
pub(crate) struct Scratch {
    grids: [Vec<Complex>; 4],
    column: Vec<Complex>,
}

impl Scratch {
    pub fn new(r: usize) -> Scratch {
        let grid = || vec![Complex::default(); r * r];
        Scratch { grids: [grid(), grid(), grid(), grid()], column: vec![Complex::default(); r] }
    }
}

/// Everything frames share: amplitudes, wave vectors, the FFT plan and the phase table.
pub(crate) struct Waves {
    r: usize,
    frames: u64,
    choppiness: f32,
    amps: Amplitudes,
    /// Per buffer index: `(k_x, k_y, 1/|k|)` in radians per world unit (0 at `k = 0`).
    vectors: Vec<[f32; 3]>,
    plan: Fft,
    /// `e^{−2πi j/F}`.
    phases: Vec<Complex>,
}

impl Waves {
    /// Prepares the frames of a validated `spec`.
    pub fn new(spec: &WaveSpec) -> Waves {
        let r = spec.resolution as usize;
        let f = spec.frames as usize;
        let dk = 2.0 * std::f64::consts::PI / spec.patch_size as f64;
        let vectors = (0..r * r)
            .map(|i| {
                let (kx, ky) = (signed(i % r, r) as f64 * dk, signed(i / r, r) as f64 * dk);
                let k = (kx * kx + ky * ky).sqrt();
                [kx as f32, ky as f32, if k > 0.0 { (1.0 / k) as f32 } else { 0.0 }]
            })
            .collect();
        Waves { r, frames: f as u64, choppiness: spec.choppiness, amps: amplitudes(spec), vectors, plan: Fft::new(r), phases: unit_roots(f, f, -1.0) }
    }

    /// Frame `f` (any whole number: `f` and `f + F` give the same bytes) into `surface` and
    /// `normals` (`R²` texels each).
    pub fn frame(&self, f: u64, scratch: &mut Scratch, surface: &mut [[f32; 4]], normals: &mut [[f32; 3]]) {
        let lambda = self.choppiness;
        let [g0, g1, g2, g3] = &mut scratch.grids;
        for i in 0..self.r * self.r {
            let phase = self.phases[((self.amps.cycles[i] as u64 * (f % self.frames)) % self.frames) as usize];
            let h = self.amps.h0[i] * phase + self.amps.h0_minus_conj[i] * phase.conj();
            let [kx, ky, inv_k] = self.vectors[i];
            // −i k̂ h̃ λ (displacement) and λ k_a k_b/|k| h̃ (its derivatives).
            let d = h.times_i().scale(-lambda * inv_k);
            let c = h.scale(lambda * inv_k);
            g0[i] = d.scale(kx) + d.scale(ky).times_i();
            g1[i] = h + c.scale(kx * ky).times_i();
            g2[i] = h.times_i().scale(kx) + h.times_i().scale(ky).times_i();
            g3[i] = c.scale(kx * kx) + c.scale(ky * ky).times_i();
        }
        for g in [g0, g1, g2, g3] {
            self.plan.inverse_2d(g, &mut scratch.column);
        }
        let [g0, g1, g2, g3] = &scratch.grids;
        for (i, (s, nm)) in surface.iter_mut().zip(normals.iter_mut()).enumerate() {
            let (dx, dy) = (g0[i].re, g0[i].im);
            let (h, dxy) = (g1[i].re, g1[i].im);
            let (hx, hy) = (g2[i].re, g2[i].im);
            let (dxx, dyy) = (g3[i].re, g3[i].im);
            let jacobian = (1.0 + dxx) * (1.0 + dyy) - dxy * dxy;
            // ∂P/∂x = (1 + dxx, dxy, hx), ∂P/∂y = (dxy, 1 + dyy, hy) (∂Dy/∂x = ∂Dx/∂y).
            let n = [dxy * hy - hx * (1.0 + dyy), hx * dxy - (1.0 + dxx) * hy, jacobian.abs()];
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            *s = [dx, dy, h, jacobian];
            *nm = if len > 0.0 && len.is_finite() { n.map(|v| v / len) } else { [0.0, 0.0, 1.0] };
        }
    }
}
