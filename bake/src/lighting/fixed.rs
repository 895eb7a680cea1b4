//! Exact light sums: every deposit and every volume crossing is rounded once to an integer
//! number of fixed units and summed in `i64`. Integer addition is associative, so the sums are
//! the same whatever order the paths are traced and added in: one process tracing every path, or
//! many processes each tracing a part of them ([`super::PathParts`]), give the same bytes.
//!
//! The unit is a power of two chosen from the sources' total power, so that it converts without
//! rounding and a whole bake's power fits with 2^19 of headroom: a photon of a bake with 15 M
//! paths carries about 2^20 units, one of a bake with 10^10 paths still about 2^10, and the
//! rounding (to the nearest unit, once per deposit) is far below the photon-count noise.

use super::volume::{VolumeAccumulator, BINS};

/// The sources' total power (per channel, summed over sources) maps to at most 2^44 units.
const TOTAL_BITS: i32 = 44;

/// Units per unit of power on surfaces, and per unit of power × length in the volume.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Fixed {
    surface: f32,
    volume: f32,
}

/// The power of two `2^e` with `2^e >= x` (for `x > 0`), `e` clamped to ±100; from the float's
/// bits, so it is the same on every machine.
fn exponent_at_least(x: f64) -> i32 {
    if x.is_nan() || x <= 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let exact = bits & ((1u64 << 52) - 1) == 0;
    (if exact { e } else { e + 1 }).clamp(-100, 100)
}

fn pow2(e: i32) -> f32 {
    (2.0f64).powi(e) as f32
}

impl Fixed {
    /// Units for a bake whose sources emit `total_power` (the largest channel of their summed
    /// power) inside a box whose longest side is `extent`: segments in the volume are power ×
    /// length, so their unit is smaller by the box's size.
    pub(crate) fn for_scene(total_power: f64, extent: f32) -> Fixed {
        let e = TOTAL_BITS - exponent_at_least(total_power);
        let ext = exponent_at_least(extent.max(1.0) as f64);
        Fixed { surface: pow2(e.clamp(-120, 120)), volume: pow2((e - ext).clamp(-120, 120)) }
    }

    /// `x` in surface units, rounded to the nearest (ties to even).
    #[inline]
    pub(crate) fn surface(&self, x: f32) -> i64 {
        round(x * self.surface)
    }

    /// Scales power × length into volume units (before [`Fixed::round`]).
    #[inline]
    pub(crate) fn volume_scale(&self) -> f32 {
        self.volume
    }

    /// Surface sums back to power.
    pub(crate) fn surface_value(&self, units: i64) -> f32 {
        (units as f64 / self.surface as f64) as f32
    }

    /// Volume sums back to power × length.
    pub(crate) fn volume_value(&self, units: i64) -> f32 {
        (units as f64 / self.volume as f64) as f32
    }
}

/// A value already in units, rounded to the nearest (ties to even), for |x| < 2^51. Adding
/// 1.5 · 2^52 in double precision leaves the rounded integer in the low bits of the sum: three
/// branch-free instructions, where `as i64` saturates (compares and branches around NaN and
/// overflow) and took 9 % of a default-world bake in the volume walk. Out of range (which the
/// units' headroom rules out) it wraps, still the same on every machine.
#[inline]
pub(crate) fn round(x: f32) -> i64 {
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    ((x as f64 + SHIFT).to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64)
}

/// What light transport adds up: power per welded vertex (the ambient map's RGB and, in a scene
/// with static lights, the direct-lights map's), the volume's sums per cell, and the flights
/// traced.
#[derive(Clone, Debug, PartialEq)]
pub struct LightSums {
    /// The ambient map: sky light and every bounce of every source.
    pub(crate) ambient: Vec<[i64; 3]>,
    /// The direct-lights map (the static lights' first landings): empty in a scene without
    /// static lights, where it would be zero everywhere.
    pub(crate) lights: Vec<[i64; 3]>,
    pub(crate) volume: VolumeAccumulator,
    pub(crate) flights: u64,
}

/// Exact per-vertex power sums as floats, for the filter.
pub(crate) fn power_values(exact: &[[i64; 3]], fixed: &Fixed) -> Vec<[f32; 3]> {
    use rayon::prelude::*;
    exact.par_iter().map(|p| p.map(|u| fixed.surface_value(u))).collect()
}

const SUMS_MAGIC: &[u8; 8] = b"KILNLS02";
/// Bytes before the sums in [`LightSums::to_bytes`]: magic, vertex count, cell count, flights.
pub const SUMS_HEADER_LEN: usize = 32;

impl LightSums {
    /// Zero sums over `vertices` welded vertices (with a direct-lights map if `lights`) and the
    /// volume of `volume`.
    pub(crate) fn zeroed(vertices: usize, lights: bool, volume: VolumeAccumulator) -> LightSums {
        let map = |n: usize| {
            let mut sums = crate::mem::huge_vec(n);
            sums.resize(n, [0i64; 3]);
            sums
        };
        LightSums { ambient: map(vertices), lights: map(if lights { vertices } else { 0 }), volume, flights: 0 }
    }

    /// Adds `other` (sums of the same shape) to these.
    pub fn merge(&mut self, other: &LightSums) {
        use rayon::prelude::*;
        for (mine, theirs) in [(&mut self.ambient, &other.ambient), (&mut self.lights, &other.lights)] {
            mine.par_iter_mut().zip(theirs).for_each(|(a, b)| {
                for c in 0..3 {
                    a[c] = a[c].wrapping_add(b[c]);
                }
            });
        }
        self.volume.merge(&other.volume);
        self.flights += other.flights;
    }

    /// The luminance of the power per welded vertex (both maps), for the pilot's filter.
    pub(crate) fn luminance(&self, fixed: &Fixed) -> Vec<f32> {
        use rayon::prelude::*;
        let value = |p: &[i64; 3]| p.map(|u| fixed.surface_value(u));
        self.ambient
            .par_iter()
            .enumerate()
            .map(|(v, a)| {
                let (a, l) = (value(a), self.lights.get(v).map_or([0.0; 3], value));
                super::luminance([a[0] + l[0], a[1] + l[1], a[2] + l[2]])
            })
            .collect()
    }

    /// How many sums [`LightSums::to_bytes`] writes after its header ([`SUMS_HEADER_LEN`] bytes).
    pub fn word_count(&self) -> usize {
        3 * (self.ambient.len() + self.lights.len()) + 2 * self.volume.cells() * BINS * 3
    }

    /// Little-endian bytes: magic, vertex count, cell count, flights, then the sums: the ambient
    /// map, the direct-lights map (if any), the volume.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(SUMS_HEADER_LEN + 8 * self.word_count());
        out.extend_from_slice(SUMS_MAGIC);
        out.extend_from_slice(&(self.ambient.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.volume.cells() as u64).to_le_bytes());
        out.extend_from_slice(&self.flights.to_le_bytes());
        for v in self.ambient.iter().chain(&self.lights).flatten().chain(self.volume.values()) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Every sum, in [`LightSums::to_bytes`]' order.
    fn words_mut(&mut self) -> impl Iterator<Item = &mut i64> {
        self.ambient.iter_mut().chain(&mut self.lights).flatten().chain(self.volume.values_mut())
    }

    /// Reads sums of the shape of `self` (zeroed or not: they are replaced) from
    /// [`LightSums::to_bytes`]' output; a mismatch of shape or length is an error.
    pub fn read_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let cells = self.volume.cells();
        let word = |i: usize| bytes.get(8 * i..8 * i + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        if bytes.get(..8) != Some(&SUMS_MAGIC[..]) {
            return Err("not light sums (bad magic)".into());
        }
        let (Some(vertices), Some(stored_cells), Some(flights)) = (word(1), word(2), word(3)) else {
            return Err("truncated header".into());
        };
        if vertices != self.ambient.len() as u64 || stored_cells != cells as u64 {
            return Err(format!("sums of {vertices} vertices and {stored_cells} cells, expected {} and {cells}", self.ambient.len()));
        }
        let expected = SUMS_HEADER_LEN + 8 * self.word_count();
        if bytes.len() != expected {
            return Err(format!("{} bytes, expected {expected}", bytes.len()));
        }
        let values = bytes[SUMS_HEADER_LEN..].chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")));
        self.words_mut().zip(values).for_each(|(w, v)| *w = v);
        self.flights = flights;
        Ok(())
    }

    /// Adds sums given as little-endian bytes in [`LightSums::to_bytes`]' order after its header,
    /// cut into `pieces` anywhere between words, and `flights`: what [`LightSums::merge`] does with
    /// sums read from bytes, without making them first. A length other than
    /// [`LightSums::word_count`] words is an error, and then nothing is added.
    pub fn add_bytes(&mut self, pieces: &[&[u8]], flights: u64) -> Result<(), String> {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        if len != 8 * self.word_count() || pieces.iter().any(|p| p.len() % 8 != 0) {
            return Err(format!(
                "{len} bytes of sums in pieces of {:?} bytes, expected {}",
                pieces.iter().map(|p| p.len()).collect::<Vec<_>>(),
                8 * self.word_count()
            ));
        }
        let values = pieces.iter().flat_map(|p| p.chunks_exact(8)).map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")));
        self.words_mut().zip(values).for_each(|(w, v)| *w = w.wrapping_add(v));
        self.flights += flights;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_powers_of_two_that_fit_the_total_with_headroom() {
        let f = Fixed::for_scene(1000.0, 100.0);
        // 1000 → 2^10, so 2^34 units per unit of power; the volume 2^7 less (100 → 2^7).
        assert_eq!(f.surface, 2f32.powi(34));
        assert_eq!(f.volume, 2f32.powi(27));
        assert_eq!(f.surface(1000.0), 1000 << 34);
        assert_eq!(f.surface_value(f.surface(3.25)), 3.25);
        assert_eq!([round(2.5), round(3.5), round(-3.7), round(0.49), round(1e9)], [2, 4, -4, 0, 1_000_000_000]);
        assert_eq!(exponent_at_least(1024.0), 10);
        assert_eq!(exponent_at_least(1025.0), 11);
        assert_eq!(exponent_at_least(0.75), 0);
        assert_eq!(exponent_at_least(0.0), 0);
    }
}
