//! Random rays and triangles for the ray engine's own tests, so that they need nothing of light
//! transport. The sequence is the one `lighting::rng::Rng::new(seed, 0, 0)` draws past its Sobol
//! dimensions (plain SplitMix64), so the tests keep the cases they were written against.

use glam::Vec3A;
use std::f32::consts::TAU;

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64 seeded like light transport's generator for stream 0, path 0.
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        let k = mix64(mix64(seed ^ 0x4B49_4C4E_4C49_4748));
        Rng { state: mix64(k) }
    }

    /// Uniform in [0, 1), 24 bits.
    pub(crate) fn next_f32(&mut self) -> f32 {
        self.state = self.state.wrapping_add(GOLDEN);
        (mix64(self.state) >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }
}

/// A uniformly distributed unit vector.
pub(crate) fn uniform_sphere(u1: f32, u2: f32) -> Vec3A {
    let z = 1.0 - 2.0 * u1;
    let r = (1.0 - z * z).max(0.0).sqrt();
    let phi = TAU * u2;
    Vec3A::new(r * phi.cos(), r * phi.sin(), z)
}
