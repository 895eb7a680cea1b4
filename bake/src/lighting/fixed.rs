//! Exact light sums: every deposit and every volume crossing is rounded once to an integer
//! number of fixed units and summed in `i64`. Integer addition is associative, so the sums are
//! the same whatever order the paths are traced and added in: one process tracing every path, or
//! many processes each tracing a part of them ([`super::PathParts`]), give the same bytes.
//!
//! The unit is a power of two chosen from the sources' total power, so that it converts without
//! rounding and a whole bake's power fits with 2^19 of headroom: a photon of a bake with 15 M
//! paths carries about 2^20 units, one of a bake with 10^10 paths still about 2^10, and the
//! rounding (to the nearest unit, once per deposit) is far below the photon-count noise.

use super::volume::VolumeAccumulator;
use super::words::SplitWords;

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
/// traced. Every sum is an `i64` word, stored split (see `words.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct LightSums {
    /// The ambient map: sky light and every bounce of every source, three words per vertex.
    pub(crate) ambient: SplitWords,
    /// The direct-lights map (the static lights' first landings): empty in a scene without
    /// static lights, where it would be zero everywhere.
    pub(crate) lights: SplitWords,
    pub(crate) volume: VolumeAccumulator,
    pub(crate) flights: u64,
}

/// Vertices per block of a map's words: the maps are added to in ranges of whole blocks.
pub(crate) const MAP_BLOCK_VERTICES: usize = 1024;

/// Exact per-vertex power sums (three words per vertex) as floats, for the filter.
pub(crate) fn power_values(exact: &SplitWords, fixed: &Fixed) -> Vec<[f32; 3]> {
    use rayon::prelude::*;
    (0..exact.len() / 3).into_par_iter().map(|v| exact.run::<3>(3 * v).map(|u| fixed.surface_value(u))).collect()
}

impl LightSums {
    /// Zero sums over `vertices` welded vertices (with a direct-lights map if `lights`) and the
    /// volume of `volume`.
    pub(crate) fn zeroed(vertices: usize, lights: bool, volume: VolumeAccumulator) -> LightSums {
        let map = |n: usize| SplitWords::zeroed(3 * n, 3 * MAP_BLOCK_VERTICES);
        LightSums { ambient: map(vertices), lights: map(if lights { vertices } else { 0 }), volume, flights: 0 }
    }

    /// Adds `other` (sums of the same shape) to these.
    pub fn merge(&mut self, other: &LightSums) {
        for (mine, theirs) in self.word_arrays_mut().into_iter().zip(other.word_arrays()) {
            mine.add_all(theirs);
        }
        self.flights += other.flights;
    }

    /// The luminance of the power per welded vertex (both maps), for the pilot's filter.
    pub(crate) fn luminance(&self, fixed: &Fixed) -> Vec<f32> {
        use rayon::prelude::*;
        let value = |p: [i64; 3]| p.map(|u| fixed.surface_value(u));
        (0..self.ambient.len() / 3)
            .into_par_iter()
            .map(|v| {
                let a = value(self.ambient.run::<3>(3 * v));
                let l = if self.lights.is_empty() { [0.0; 3] } else { value(self.lights.run::<3>(3 * v)) };
                super::luminance([a[0] + l[0], a[1] + l[1], a[2] + l[2]])
            })
            .collect()
    }

    /// How many sums there are: the words of [`LightSums::words_to_bytes`].
    pub fn word_count(&self) -> usize {
        self.word_arrays().iter().map(|a| a.len()).sum()
    }

    /// Bytes the sums hold in memory.
    pub fn bytes(&self) -> usize {
        self.word_arrays().iter().map(|a| a.bytes()).sum()
    }

    /// The sums as word arrays, in the order of their words: the ambient map, the direct-lights
    /// map (if any), the volume's two classes.
    fn word_arrays(&self) -> [&SplitWords; 4] {
        let [ambient_cells, direct_cells] = self.volume.sums();
        [&self.ambient, &self.lights, ambient_cells, direct_cells]
    }

    fn word_arrays_mut(&mut self) -> [&mut SplitWords; 4] {
        let [ambient_cells, direct_cells] = self.volume.sums_mut();
        [&mut self.ambient, &mut self.lights, ambient_cells, direct_cells]
    }

    /// Words `range` (within [`LightSums::word_count`]) of the sums, in the order of the ambient
    /// map, the direct-lights map (if any) and the volume's two classes, as little-endian bytes:
    /// how a part's sums travel between processes, a slice at a time.
    pub fn words_to_bytes(&self, range: std::ops::Range<usize>) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * range.len());
        let mut at = 0;
        for array in self.word_arrays() {
            let (lo, hi) = (range.start.clamp(at, at + array.len()), range.end.clamp(at, at + array.len()));
            out.extend(array.values(lo - at..hi - at).flat_map(i64::to_le_bytes));
            at += array.len();
        }
        out
    }

    /// Adds sums given as little-endian bytes of words `start..` (a slice of sums of the same
    /// shape, [`LightSums::words_to_bytes`]), and nothing else: flights are the caller's to add.
    /// Bytes that are not whole words, or words past [`LightSums::word_count`], are an error, and
    /// then nothing is added.
    pub fn add_words(&mut self, start: usize, bytes: &[u8]) -> Result<(), String> {
        let end = start + bytes.len() / 8;
        if !bytes.len().is_multiple_of(8) || end > self.word_count() {
            return Err(format!("{} bytes of sums from word {start}, of {} words", bytes.len(), self.word_count()));
        }
        let mut at = 0;
        for array in self.word_arrays_mut() {
            let first = at;
            at += array.len();
            let (lo, hi) = (start.clamp(first, at), end.clamp(first, at));
            if lo == hi {
                continue;
            }
            let from = &bytes[8 * (lo - start)..8 * (hi - start)];
            let word = |k: usize| i64::from_le_bytes(from[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            array.add_from(lo - first, word, hi - lo);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_cut_into_slices_anywhere_add_up_to_the_whole() {
        use super::super::volume::VolumeDesc;
        let volume = VolumeDesc { min: [0.0; 3], max: [1.0; 3], dims: [2, 1, 1] };
        let fixed = Fixed::for_scene(1.0, 1.0);
        let mut sums = LightSums::zeroed(5, true, VolumeAccumulator::new(volume, fixed));
        let words = sums.word_count();
        assert_eq!(words, 3 * 5 * 2 + 2 * 2 * super::super::volume::BINS * 3);
        let mut i = 0;
        for array in sums.word_arrays_mut() {
            let n = array.len();
            array.add_from(0, |k| ((i + k) as i64 - 40).wrapping_mul(0x1234_5678_9abc), n);
            i += n;
        }
        sums.flights = 9;
        // Cuts inside each array and on the borders between them (30 words of maps, then cells).
        for cuts in [vec![0, words], vec![0, 7, 15, 30, 31, 66, words], vec![0, 30, 30, 102, words]] {
            let mut added = LightSums::zeroed(5, true, VolumeAccumulator::new(volume, fixed));
            for w in cuts.windows(2) {
                let bytes = sums.words_to_bytes(w[0]..w[1]);
                assert_eq!(bytes.len(), 8 * (w[1] - w[0]));
                added.add_words(w[0], &bytes).unwrap();
            }
            added.flights = sums.flights;
            assert_eq!(added, sums, "cut at {cuts:?}");
        }
    }

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
