//! Owen-scrambled Sobol points for the first random decisions of every light path.
//!
//! A light path's first few draws (which face or point it leaves from, in which direction, and its
//! first bounce) decide most of where its power lands. Drawing them from one low-discrepancy
//! sequence per source, point `i` for path `i`, spreads the paths of a source evenly over those
//! decisions jointly instead of leaving clumps and gaps as independent draws do, so direct sky and
//! sun light and the first bounce land with far less photon-count noise.
//!
//! Each dimension is scrambled by a hash-based nested uniform (Owen) scramble (Burley 2020,
//! "Practical Hash-based Owen Scrambling"). That keeps the sequence's stratification and makes
//! every point uniformly distributed, so the estimate stays unbiased. The scramble is keyed by the
//! world seed, the source and the dimension; the point by the path's index. Nothing depends on the
//! thread that draws it.

/// How many of a path's draws come from its Sobol point; later draws come from its [`Rng`].
///
/// [`Rng`]: super::rng::Rng
pub(crate) const DIMS: usize = 8;

/// Primitive polynomial degree `s`, its coefficients `a` and initial direction numbers `m` of
/// dimensions 2.. (Joe and Kuo's `new-joe-kuo-6.21201` table); dimension 1 is the van der Corput
/// sequence.
const JOE_KUO: [(u32, u32, [u32; 5]); DIMS - 1] = [
    (1, 0, [1, 0, 0, 0, 0]),
    (2, 1, [1, 3, 0, 0, 0]),
    (3, 1, [1, 3, 1, 0, 0]),
    (3, 2, [1, 1, 1, 0, 0]),
    (4, 1, [1, 1, 3, 3, 0]),
    (4, 4, [1, 3, 5, 13, 0]),
    (5, 2, [1, 1, 5, 5, 17]),
];

/// The 32 direction numbers (generator matrix columns, most significant bit first) of every
/// dimension.
const fn direction_numbers() -> [[u32; 32]; DIMS] {
    let mut v = [[0u32; 32]; DIMS];
    let mut k = 0;
    while k < 32 {
        v[0][k] = 1 << (31 - k);
        k += 1;
    }
    let mut d = 1;
    while d < DIMS {
        let (s, a, m) = JOE_KUO[d - 1];
        let s = s as usize;
        let mut k = 0;
        while k < 32 {
            v[d][k] = if k < s {
                m[k] << (31 - k)
            } else {
                let mut x = v[d][k - s] ^ (v[d][k - s] >> s);
                let mut j = 1;
                while j < s {
                    if (a >> (s - 1 - j)) & 1 == 1 {
                        x ^= v[d][k - j];
                    }
                    j += 1;
                }
                x
            };
            k += 1;
        }
        d += 1;
    }
    v
}

/// Per dimension and per byte of the index, the XOR of the direction numbers its set bits select:
/// a point is then four table lookups per dimension.
const fn byte_tables() -> [[[u32; 256]; 4]; DIMS] {
    let v = direction_numbers();
    let mut t = [[[0u32; 256]; 4]; DIMS];
    let mut d = 0;
    while d < DIMS {
        let mut byte = 0;
        while byte < 4 {
            let mut value = 0;
            while value < 256 {
                let mut x = 0;
                let mut bit = 0;
                while bit < 8 {
                    if (value >> bit) & 1 == 1 {
                        x ^= v[d][byte * 8 + bit];
                    }
                    bit += 1;
                }
                t[d][byte][value] = x;
                value += 1;
            }
            byte += 1;
        }
        d += 1;
    }
    t
}

static TABLES: [[[u32; 256]; 4]; DIMS] = byte_tables();

/// Coordinate `dim` (< [`DIMS`]) of Sobol point `index`, unscrambled, as a 32-bit fraction.
#[inline]
fn sobol(dim: usize, index: u32) -> u32 {
    let t = &TABLES[dim];
    let b = index.to_le_bytes();
    t[0][b[0] as usize] ^ t[1][b[1] as usize] ^ t[2][b[2] as usize] ^ t[3][b[3] as usize]
}

/// Nested uniform scramble of a 32-bit fraction: each bit is flipped by a hash of the bits above
/// it, which permutes every dyadic stratum's sub-strata at random and so keeps the strata.
#[inline]
fn owen_scramble(x: u32, seed: u32) -> u32 {
    // Burley's Laine–Karras-style hash works on bit-reversed values: there each bit may depend only
    // on the bits below it, which multiplication and addition guarantee.
    let mut x = x.reverse_bits();
    x ^= x.wrapping_mul(0x3d20_adea);
    x = x.wrapping_add(seed);
    x = x.wrapping_mul((seed >> 16) | 1);
    x ^= x.wrapping_mul(0x0552_6c56);
    x ^= x.wrapping_mul(0x53a2_2864);
    x.reverse_bits()
}

/// Coordinate `dim` of scrambled point `index` under the per-dimension `seed`, uniform in [0, 1)
/// with 24 bits (like [`Rng::next_f32`](super::rng::Rng::next_f32)).
#[inline]
pub(crate) fn sample(dim: usize, index: u32, seed: u32) -> f32 {
    (owen_scramble(sobol(dim, index), seed) >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Index of the dyadic interval of width 2^-bits holding fraction `x`.
    fn cell(x: u32, bits: u32) -> usize {
        if bits == 0 {
            0
        } else {
            (x >> (32 - bits)) as usize
        }
    }

    #[test]
    fn every_dimension_stratifies_each_power_of_two_prefix() {
        for dim in 0..DIMS {
            for m in 0..=10u32 {
                let mut seen = vec![false; 1 << m];
                for i in 0..1u32 << m {
                    let c = cell(owen_scramble(sobol(dim, i), 0x1234_5678 + dim as u32), m);
                    assert!(!seen[c], "dimension {dim}: two of the first 2^{m} points share a stratum");
                    seen[c] = true;
                }
            }
        }
    }

    #[test]
    fn the_first_two_dimensions_form_a_zero_net() {
        // Every elementary box of area 2^-m (2^a by 2^(m-a) strata) holds exactly one of the
        // first 2^m points, scrambled or not: the property that makes emission positions even.
        for seed in [0u32, 0xDEAD_BEEF] {
            let m = 8;
            for a in 0..=m {
                let mut seen = vec![false; 1 << m];
                for i in 0..1u32 << m {
                    let x = cell(owen_scramble(sobol(0, i), seed), a);
                    let y = cell(owen_scramble(sobol(1, i), seed ^ 0x9E37), m - a);
                    let c = (x << (m - a)) | y;
                    assert!(!seen[c], "box {a}x{}: two points in one box", m - a);
                    seen[c] = true;
                }
            }
        }
    }

    #[test]
    fn scrambled_points_are_uniform_and_seed_dependent() {
        // Over 4096 points the mean is 1/2 within far less than random sampling's σ ≈ 0.0045.
        for dim in 0..DIMS {
            let mean = (0..4096).map(|i| sample(dim, i, 77 + dim as u32) as f64).sum::<f64>() / 4096.0;
            assert!((mean - 0.5).abs() < 0.001, "dimension {dim}: mean {mean}");
            assert_ne!(sample(dim, 5, 1), sample(dim, 5, 2));
        }
    }
}
