//! fBm (fractal Brownian motion) of the `noise` crate's Perlin and Simplex generators, for the
//! `perlin` / `simplex` noise kinds and the procedural floor.
//!
//! Each octave has its own generator seed and a random offset, both drawn from the world seed;
//! offsets keep the octaves' lattices from lining up (gradient noise is exactly 0 on lattice
//! points, which would otherwise all coincide at the origin).

use noise::{NoiseFn, Perlin, Simplex};

use crate::rng::Rng;

/// Measured standard deviations of the `noise` 0.9 generators on uniformly random points, used
/// to normalise every kind to the same spread (std 0.5 at amplitude 1).
const PERLIN_3D_STD: f64 = 0.311;
const SIMPLEX_3D_STD: f64 = 0.278;
const PERLIN_2D_STD: f64 = 0.435;

/// Offsets are drawn from this range (lattice cells), far from any symmetry of the generators.
const OFFSET_RANGE: f64 = 4096.0;

#[derive(Clone, Debug)]
enum Generator {
    Perlin(Perlin),
    Simplex(Simplex),
}

#[derive(Clone, Debug)]
struct Octave {
    generator: Generator,
    frequency: f64,
    amplitude: f64,
    offset: [f64; 3],
}

/// Gradient-noise fBm normalised to a standard deviation of `0.5 · amplitude`.
#[derive(Clone, Debug)]
pub struct Fbm {
    octaves: Vec<Octave>,
    norm: f64,
}

/// Which generator an [`Fbm`] sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FbmKind {
    /// The `noise` crate's Perlin gradient noise.
    Perlin,
    /// The `noise` crate's Simplex noise.
    Simplex,
}

/// Parameters of an [`Fbm`]; frequencies are in cycles per world unit.
#[derive(Clone, Copy, Debug)]
pub struct FbmParams {
    /// The generator every octave uses.
    pub kind: FbmKind,
    /// Number of octaves summed; 0 gives a field that is 0 everywhere.
    pub octaves: u32,
    /// Frequency of the first octave, cycles per world unit.
    pub frequency: f64,
    /// Frequency ratio of each octave to the one before it.
    pub lacunarity: f64,
    /// Amplitude ratio of each octave to the one before it.
    pub gain: f64,
    /// Overall scale: the sum is normalised to a standard deviation of `0.5 · amplitude`.
    pub amplitude: f64,
}

impl Fbm {
    /// An fBm whose random choices come from stream `stream` of `seed`. `dims` is 2 or 3 and
    /// selects the normalisation constant.
    pub fn new(params: &FbmParams, seed: u64, stream: &str, dims: usize) -> Fbm {
        let octaves: Vec<Octave> = (0..params.octaves)
            .map(|o| {
                let mut rng = Rng::keyed(seed, stream, u64::from(o));
                let generator = match params.kind {
                    FbmKind::Perlin => Generator::Perlin(Perlin::new(rng.seed_u32())),
                    FbmKind::Simplex => Generator::Simplex(Simplex::new(rng.seed_u32())),
                };
                let offset = std::array::from_fn(|_| rng.range(0.0, OFFSET_RANGE));
                Octave { generator, frequency: params.frequency * params.lacunarity.powi(o as i32), amplitude: params.gain.powi(o as i32), offset }
            })
            .collect();
        let std = match (params.kind, dims) {
            (FbmKind::Perlin, 2) => PERLIN_2D_STD,
            (FbmKind::Perlin, _) => PERLIN_3D_STD,
            // Simplex 2D is not used; the 3D constant is a close stand-in.
            (FbmKind::Simplex, _) => SIMPLEX_3D_STD,
        };
        let sum_sq: f64 = octaves.iter().map(|o| o.amplitude * o.amplitude).sum();
        let norm = if sum_sq > 0.0 { params.amplitude * 0.5 / (std * sum_sq.sqrt()) } else { 0.0 };
        Fbm { octaves, norm }
    }

    /// The normalised fBm at world position `p`.
    pub fn get3(&self, p: [f64; 3]) -> f64 {
        let mut acc = 0.0;
        for o in &self.octaves {
            let q = [p[0] * o.frequency + o.offset[0], p[1] * o.frequency + o.offset[1], p[2] * o.frequency + o.offset[2]];
            let v = match &o.generator {
                Generator::Perlin(g) => g.get(q),
                Generator::Simplex(g) => g.get(q),
            };
            acc += o.amplitude * v;
        }
        acc * self.norm
    }

    /// The normalised 2D fBm at world position `(x, y)`.
    pub fn get2(&self, x: f64, y: f64) -> f64 {
        let mut acc = 0.0;
        for o in &self.octaves {
            let q = [x * o.frequency + o.offset[0], y * o.frequency + o.offset[1]];
            let v = match &o.generator {
                Generator::Perlin(g) => g.get(q),
                Generator::Simplex(g) => g.get(q),
            };
            acc += o.amplitude * v;
        }
        acc * self.norm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kind: FbmKind) -> FbmParams {
        FbmParams { kind, octaves: 5, frequency: 0.7, lacunarity: 1.92, gain: 0.5, amplitude: 1.0 }
    }

    fn spread(f: impl Fn(f64, f64, f64) -> f64) -> f64 {
        let (mut s, mut s2, mut n) = (0.0, 0.0, 0.0);
        for k in 0..8 {
            for j in 0..64 {
                for i in 0..64 {
                    let v = f(i as f64 * 0.37, j as f64 * 0.41, k as f64 * 1.3);
                    s += v;
                    s2 += v * v;
                    n += 1.0;
                }
            }
        }
        (s2 / n - (s / n) * (s / n)).sqrt()
    }

    #[test]
    fn fbm_is_normalised_for_every_kind() {
        for kind in [FbmKind::Perlin, FbmKind::Simplex] {
            let f = Fbm::new(&params(kind), 9, "t", 3);
            let std = spread(|x, y, z| f.get3([x, y, z]));
            assert!((0.35..0.65).contains(&std), "{kind:?}: std {std}");
        }
        let f = Fbm::new(&params(FbmKind::Perlin), 9, "t", 2);
        let std = spread(|x, y, _| f.get2(x, y));
        assert!((0.35..0.65).contains(&std), "2D: std {std}");
    }

    #[test]
    fn seeds_and_streams_change_the_noise() {
        let p = params(FbmKind::Perlin);
        let a = Fbm::new(&p, 1, "a", 3).get3([1.1, 2.2, 3.3]);
        assert_eq!(a, Fbm::new(&p, 1, "a", 3).get3([1.1, 2.2, 3.3]));
        assert_ne!(a, Fbm::new(&p, 2, "a", 3).get3([1.1, 2.2, 3.3]));
        assert_ne!(a, Fbm::new(&p, 1, "b", 3).get3([1.1, 2.2, 3.3]));
        // No octave vanishes at the origin.
        assert_ne!(Fbm::new(&p, 1, "a", 3).get3([0.0; 3]), 0.0);
    }
}
