//! Counter-based random numbers and the sampling routines built on them.
//!
//! Every random decision of the bake is keyed by *what* is being sampled (world seed, stream such
//! as a light index, sample index), never by which thread happens to run it, so results do not
//! depend on the thread count or on scheduling.

use super::qmc;
use glam::Vec3A;
use std::f32::consts::{PI, TAU};

/// SplitMix64's finaliser: a bijective 64-bit mixer with full avalanche.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A tiny counter-based generator: the state is a hash of the key, and each draw hashes the
/// next counter value (SplitMix64). Cheap to create, so one is made per light path or sample.
///
/// A light path's generator ([`Rng::for_path`]) serves its first [`qmc::DIMS`] uniform draws from
/// the path's scrambled Sobol point instead, so the paths of a source cover those decisions evenly.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    state: u64,
    /// Sobol point index of the path.
    point: u32,
    /// The next Sobol dimension to draw; `qmc::DIMS` or more once the point is used up.
    dim: u32,
    /// Scramble key of the path's sequence (world seed and stream).
    scramble: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl Rng {
    /// The generator for sample `index` of `stream` under the world `seed`.
    pub(crate) fn new(seed: u64, stream: u64, index: u64) -> Self {
        let k = mix64(seed ^ 0x4B49_4C4E_4C49_4748); // "KILNLIGH": separates lighting from other stages
        let k = mix64(k ^ stream.wrapping_mul(GOLDEN));
        Rng { state: mix64(k ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03)), point: 0, dim: qmc::DIMS as u32, scramble: k }
    }

    /// The generator for light path `index` of `stream`: like [`Rng::new`], but its first
    /// [`qmc::DIMS`] uniform draws are the coordinates of scrambled Sobol point `index` of the
    /// stream's sequence (indices past 2^32 wrap, which only repeats strata).
    pub(crate) fn for_path(seed: u64, stream: u64, index: u64) -> Self {
        Rng { point: index as u32, dim: 0, ..Rng::new(seed, stream, index) }
    }

    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// An independent generator for child `child` of a split path, keyed by this generator's
    /// next draw: a split's children depend only on the path, never on the thread.
    pub(crate) fn fork(&mut self, child: u64) -> Rng {
        let state = mix64(self.next_u64() ^ child.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        Rng { state, point: 0, dim: qmc::DIMS as u32, scramble: 0 }
    }

    /// Uniform in [0, 1), with 24 bits of resolution (every value exactly representable).
    #[inline]
    pub(crate) fn next_f32(&mut self) -> f32 {
        if (self.dim as usize) < qmc::DIMS {
            let dim = self.dim as usize;
            self.dim += 1;
            let seed = mix64(self.scramble ^ (dim as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407));
            return qmc::sample(dim, self.point, seed as u32);
        }
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }
}

/// An orthonormal basis (t, b) completing unit vector `n` (Duff et al. 2017, branchless).
#[inline]
pub(crate) fn basis(n: Vec3A) -> (Vec3A, Vec3A) {
    let sign = 1.0f32.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    (Vec3A::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x), Vec3A::new(b, sign + n.y * n.y * a, -n.y))
}

/// A cosine-distributed direction in the hemisphere around unit `n` (pdf cos θ / π).
#[inline]
pub(crate) fn cosine_hemisphere(n: Vec3A, u1: f32, u2: f32) -> Vec3A {
    let r = u1.sqrt();
    let phi = TAU * u2;
    let (t, b) = basis(n);
    let z = (1.0 - u1).max(0.0).sqrt();
    (t * (r * phi.cos()) + b * (r * phi.sin()) + n * z).normalize()
}

/// A uniformly distributed unit vector.
#[inline]
pub(crate) fn uniform_sphere(u1: f32, u2: f32) -> Vec3A {
    let z = 1.0 - 2.0 * u1;
    let r = (1.0 - z * z).max(0.0).sqrt();
    let phi = TAU * u2;
    Vec3A::new(r * phi.cos(), r * phi.sin(), z)
}

/// A direction uniform in the cone of half-angle acos(`cos_max`) around unit `axis`; also
/// returns the cosine to the axis.
#[inline]
pub(crate) fn uniform_cone(axis: Vec3A, cos_max: f32, u1: f32, u2: f32) -> (Vec3A, f32) {
    let cos_t = 1.0 - u1 * (1.0 - cos_max);
    let sin_t = (1.0 - cos_t * cos_t).max(0.0).sqrt();
    let phi = TAU * u2;
    let (t, b) = basis(axis);
    ((t * (sin_t * phi.cos()) + b * (sin_t * phi.sin()) + axis * cos_t).normalize(), cos_t)
}

/// A uniform point on the unit disk (concentric mapping keeps strata compact).
#[inline]
pub(crate) fn uniform_disk(u1: f32, u2: f32) -> (f32, f32) {
    let a = 2.0 * u1 - 1.0;
    let b = 2.0 * u2 - 1.0;
    if a == 0.0 && b == 0.0 {
        return (0.0, 0.0);
    }
    let (r, theta) = if a.abs() > b.abs() { (a, PI / 4.0 * (b / a)) } else { (b, PI / 2.0 - PI / 4.0 * (a / b)) };
    (r * theta.cos(), r * theta.sin())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_keyed_and_repeatable() {
        let a: Vec<u64> = (0..4).map(|_| 0).scan(Rng::new(7, 1, 2), |r, _: u64| Some(r.next_u64())).collect();
        let b: Vec<u64> = (0..4).map(|_| 0).scan(Rng::new(7, 1, 2), |r, _: u64| Some(r.next_u64())).collect();
        assert_eq!(a, b);
        assert_ne!(Rng::new(7, 1, 2).next_u64(), Rng::new(7, 2, 1).next_u64());
        assert_ne!(Rng::new(7, 1, 2).next_u64(), Rng::new(8, 1, 2).next_u64());
    }

    #[test]
    fn cosine_hemisphere_has_the_right_mean_cosine() {
        // E[cos θ] = 2/3 for pdf cos θ / π; the sample mean of 20k draws has σ ≈ 0.0017.
        let n = Vec3A::new(0.3, -0.5, 0.8).normalize();
        let mut rng = Rng::new(1, 0, 0);
        let count = 20_000;
        let mut sum = 0.0f64;
        for _ in 0..count {
            let d = cosine_hemisphere(n, rng.next_f32(), rng.next_f32());
            assert!((d.length() - 1.0).abs() < 1e-5);
            let c = d.dot(n);
            assert!(c >= -1e-6);
            sum += c as f64;
        }
        let mean = sum / count as f64;
        assert!((mean - 2.0 / 3.0).abs() < 5.0 * 0.0017, "mean cos {mean}");
    }

    #[test]
    fn cone_and_sphere_samples_stay_in_their_domains() {
        let axis = Vec3A::new(0.0, 1.0, 0.0);
        let mut rng = Rng::new(3, 0, 0);
        let mut mean = Vec3A::ZERO;
        for _ in 0..5000 {
            let (d, c) = uniform_cone(axis, 0.9, rng.next_f32(), rng.next_f32());
            assert!(d.dot(axis) >= 0.9 - 1e-5 && (c - d.dot(axis)).abs() < 1e-4);
            mean += uniform_sphere(rng.next_f32(), rng.next_f32());
            let (x, y) = uniform_disk(rng.next_f32(), rng.next_f32());
            assert!(x * x + y * y <= 1.0 + 1e-5);
        }
        // The mean of 5000 uniform unit vectors has σ ≈ 0.008 per component.
        assert!((mean / 5000.0).abs().max_element() < 0.04, "{mean:?}");
    }
}
