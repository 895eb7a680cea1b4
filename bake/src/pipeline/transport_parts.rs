//! Light transport shared by the shards of a bake. Each phase's paths are split into one part per
//! shard; each part's sums are stored in the stage cache as N slices (ranges of the sums), shard `j`
//! adds up slice `j` of every part and stores that total, and every shard reads the N totals: a
//! reduce-scatter, then an all-gather. A shard so reads about two parts' worth of sums per phase
//! whatever N is, where reading every other part whole grows with N (BENCHMARKS.md, "What a shard
//! repeats"). The sums are exact (`lighting::LightSums`), so the total is the same bytes as one
//! process tracing every path.
//!
//! Shards that share a machine split no paths: one of them makes light transport whole on the
//! machine's threads, as one process would, and the others read its lookup (`lighting.rs`).
//! Parts would only add the exchange, and wait for the slowest part where one process's threads
//! take each other's work.
//!
//! A shard traces its own part first. A part or a slice total that is missing when needed is
//! claimed: if another process holds the claim, the shard waits for it and reads what it stored; if
//! its holder died without storing it, the shard computes it (tracing the part) itself.

use std::io::Write;

use kiln_cache::store::Claim;
use rayon::prelude::*;

use super::failpoint;
use super::role::BakeRole;
use super::stage_cache::{StageCache, StageInputs, TryClaim, Waited};
use crate::lighting::{LightSums, LightingError, PathParts, PhaseWork};

/// zstd level of stored slices: sums of nearby vertices share their high bytes. Level 1 makes
/// them as small as level 3 in about 60 % of its time, and a shard compresses its whole part
/// while the others wait for it (BENCHMARKS.md, "Where a local shard still loses time").
const PART_COMPRESSION: i32 = 1;

/// Version of a stored slice's layout ([`encode_slice`]), in its cache key.
const SLICE_LAYOUT: u128 = 3;

/// The parts of light transport in the stage cache, seen from shard `index` of `count`.
pub(super) struct CachedParts<'a> {
    pub(super) cache: &'a StageCache,
    /// The transport's cache key (every input of light transport).
    pub(super) transport: u128,
    pub(super) version: u32,
    pub(super) role: BakeRole,
}

/// One slice of sums: the flights of the paths it sums (whole parts' flights), and one range of
/// [`LightSums::words_to_bytes`] (see [`slice_range`]).
struct Slice {
    flights: u64,
    sums: Vec<u8>,
}

/// A stored slice: its flights (8 bytes, little-endian), then its sums as one zstd frame. The
/// sums come in `pieces`, each compressed as it is made, so that no raw copy of a whole slice is
/// held (a part's slices are encoded side by side).
fn encode_slice<P: AsRef<[u8]>>(flights: u64, pieces: impl Iterator<Item = P>) -> Result<Vec<u8>, LightingError> {
    let failed = |e: std::io::Error| LightingError::Parts(format!("compressing: {e}"));
    let mut encoder = zstd::stream::Encoder::new(flights.to_le_bytes().to_vec(), PART_COMPRESSION).map_err(failed)?;
    for piece in pieces {
        encoder.write_all(piece.as_ref()).map_err(failed)?;
    }
    encoder.finish().map_err(failed)
}

impl Slice {
    fn to_bytes(&self) -> Result<Vec<u8>, LightingError> {
        encode_slice(self.flights, std::iter::once(&self.sums))
    }

    fn from_bytes(bytes: &[u8], words: usize) -> Result<Slice, String> {
        let (flights, frame) = bytes.split_at_checked(8).ok_or("truncated")?;
        let sums = zstd::bulk::decompress(frame, 8 * words).map_err(|e| format!("decompressing: {e}"))?;
        if sums.len() != 8 * words {
            return Err(format!("{} bytes of sums, expected {}", sums.len(), 8 * words));
        }
        Ok(Slice { flights: u64::from_le_bytes(flights.try_into().expect("8 bytes")), sums })
    }

    /// Adds `other` (a slice of the same range) to this one, word by word.
    fn add(&mut self, other: &Slice) {
        self.flights += other.flights;
        self.add_words(0, &other.sums);
    }

    /// Adds `bytes` (words as [`LightSums::words_to_bytes`] gives them) to the words from word
    /// `at` on.
    fn add_words(&mut self, at: usize, bytes: &[u8]) {
        self.sums[8 * at..8 * at + bytes.len()].par_chunks_exact_mut(8).zip(bytes.par_chunks_exact(8)).for_each(|(a, b)| {
            let sum = i64::from_le_bytes(a.try_into().expect("8 bytes")).wrapping_add(i64::from_le_bytes(b.try_into().expect("8 bytes")));
            a.copy_from_slice(&sum.to_le_bytes());
        });
    }
}

/// Word range of slice `j` of `n` over `words` sums.
fn slice_range(words: usize, j: u32, n: u32) -> std::ops::Range<usize> {
    let at = |j: u32| (words as u128 * j as u128 / n as u128) as usize;
    at(j)..at(j + 1)
}

/// Words of sums made into bytes at a time for compression (1 MiB).
const PIECE_WORDS: usize = 1 << 17;

impl CachedParts<'_> {
    fn split(&self) -> (u32, u32) {
        match self.role {
            BakeRole::Shard { index, count } => (index, count),
            _ => (0, 1),
        }
    }

    fn phase_key(&self, stage: &'static str, work: &PhaseWork, n: u32) -> StageInputs {
        StageInputs::new(stage, self.version)
            .with("slice layout", SLICE_LAYOUT)
            .with("transport", self.transport)
            .with("phase", work.phase as u128)
            .with("parts", n as u128)
    }

    /// Part `k`'s key (its claim) and the key of its slice `j`.
    fn part_key(&self, work: &PhaseWork, k: u32, n: u32) -> StageInputs {
        self.phase_key("transport part", work, n).with("part", k as u128)
    }
    fn slice_key(&self, work: &PhaseWork, k: u32, j: u32, n: u32) -> StageInputs {
        self.part_key(work, k, n).with("slice", j as u128)
    }
    /// The key of slice `j`'s total over every part.
    fn total_key(&self, work: &PhaseWork, j: u32, n: u32) -> StageInputs {
        self.phase_key("transport sum", work, n).with("slice", j as u128)
    }

    fn read(&self, label: String, key: &StageInputs, words: usize) -> Option<Slice> {
        self.cache.lookup(&label, key, |bytes| Slice::from_bytes(&bytes, words))
    }

    /// Traces part `k` and stores its slices (the last one last, so that a stored last slice means
    /// a whole part); returns what `keep` takes of the part's sums before they are let go.
    fn trace<T>(&self, work: &PhaseWork, k: u32, n: u32, words: usize, keep: impl FnOnce(&LightSums) -> T) -> Result<T, LightingError> {
        let mut part = work.zeroed();
        work.trace(k, n, &mut part);
        let flights = part.flights;
        // A piece at a time: the part's bytes whole would be another copy of its sums beside it.
        let pieces = |j: u32| {
            let (r, part) = (slice_range(words, j, n), &part);
            (r.start..r.end).step_by(PIECE_WORDS).map(move |at| part.words_to_bytes(at..(at + PIECE_WORDS).min(r.end)))
        };
        // Each slice is stored as soon as it is encoded, but the last, which is stored last.
        let store = |j: u32, bytes: &[u8]| {
            self.cache.computed(&format!("{} part {k}/{n} slice {j}", work.phase.name()), &self.slice_key(work, k, j, n), bytes)
        };
        (0..n - 1).into_par_iter().try_for_each(|j| encode_slice(flights, pieces(j)).map(|bytes| store(j, &bytes)))?;
        let last = encode_slice(flights, pieces(n - 1))?;
        let kept = keep(&part);
        drop(part);
        store(n - 1, &last);
        if let Some(point) = self.role.failpoint("transport-part") {
            failpoint::hit(&point);
        }
        Ok(kept)
    }

    /// Traces part `k` unless it is stored or another process is tracing it.
    fn trace_unless_held(&self, work: &PhaseWork, k: u32, n: u32, words: usize) -> Result<(), LightingError> {
        if self.cache.contains(&self.slice_key(work, k, n - 1, n)) {
            return Ok(());
        }
        if let TryClaim::Taken(claim) = self.cache.try_claim(&self.part_key(work, k, n)) {
            if !self.cache.contains(&self.slice_key(work, k, n - 1, n)) {
                self.trace(work, k, n, words, |_| ())?;
            }
            drop(claim);
        }
        Ok(())
    }

    /// Adds slice `j` of part `k` to `total`: read, else waited for while another process traces
    /// the part, else traced here (and added from the part's sums a piece at a time: a copy of
    /// the slice beside them was a large world's highest point).
    fn add_part_slice(&self, work: &PhaseWork, k: u32, j: u32, n: u32, words: usize, total: &mut Slice) -> Result<(), LightingError> {
        let range = slice_range(words, j, n);
        let len = range.len();
        let label = || format!("{} part {k}/{n} slice {j}", work.phase.name());
        let slice_key = self.slice_key(work, k, j, n);
        let read = || self.read(label(), &slice_key, len);
        // The part's last slice is stored last: once it is there, the whole part is.
        let claim: Option<Claim> = match self.cache.read_or_claim(&self.part_key(work, k, n), &self.slice_key(work, k, n - 1, n), read) {
            Waited::Read(s) => {
                total.add(&s);
                return Ok(());
            }
            Waited::Claimed(claim) => claim,
        };
        self.trace(work, k, n, words, |part| {
            total.flights += part.flights;
            for at in range.clone().step_by(PIECE_WORDS) {
                total.add_words(at - range.start, &part.words_to_bytes(at..(at + PIECE_WORDS).min(range.end)));
            }
        })?;
        drop(claim);
        Ok(())
    }

    /// Slice `j`'s total over every part: read, else waited for while another process adds it up,
    /// else added up here (and stored).
    fn total(&self, work: &PhaseWork, j: u32, n: u32, words: usize) -> Result<Slice, LightingError> {
        let len = slice_range(words, j, n).len();
        let label = || format!("{} total {j}/{n}", work.phase.name());
        let key = self.total_key(work, j, n);
        let read = || self.read(label(), &key, len);
        let claim = match self.cache.read_or_claim(&key, &key, read) {
            Waited::Read(s) => return Ok(s),
            Waited::Claimed(claim) => claim,
        };
        let mut total = Slice { flights: 0, sums: vec![0; 8 * len] };
        for k in self.role.rotate(&(0..n).collect::<Vec<_>>()) {
            self.add_part_slice(work, k, j, n, words, &mut total)?;
        }
        self.cache.computed(&label(), &key, &total.to_bytes()?);
        drop(claim);
        Ok(total)
    }
}

impl PathParts for CachedParts<'_> {
    fn sums(&self, work: &PhaseWork) -> Result<LightSums, LightingError> {
        let (index, n) = self.split();
        let mut into = work.zeroed();
        let words = into.word_count();
        self.trace_unless_held(work, index, n, words)?;
        // This shard's own slice total first, while the others add up theirs; each total is
        // added as it comes and then let go.
        let mut flights = 0;
        for j in self.role.rotate(&(0..n).collect::<Vec<_>>()) {
            let total = self.total(work, j, n, words)?;
            into.add_words(slice_range(words, j, n).start, &total.sums).map_err(|e| LightingError::Parts(format!("adding up slice {j}: {e}")))?;
            // Every slice carries the flights of every part.
            flights = total.flights;
        }
        into.flights += flights;
        Ok(into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_every_sum_once_in_order() {
        for (words, n) in [(0usize, 1u32), (7, 3), (10, 10), (3, 7), (1_234_567, 16)] {
            let ranges: Vec<_> = (0..n).map(|j| slice_range(words, j, n)).collect();
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges.last().unwrap().end, words);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "{words} over {n}: {ranges:?}");
        }
    }

    #[test]
    fn slices_add_up_word_by_word_and_round_trip() {
        let words = |v: &[i64]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
        let mut a = Slice { flights: 3, sums: words(&[1, -2, i64::MAX]) };
        a.add(&Slice { flights: 4, sums: words(&[10, 5, 1]) });
        assert_eq!(a.flights, 7);
        assert_eq!(a.sums, words(&[11, 3, i64::MIN]), "wrapping, as the fixed-point sums are");
        a.add_words(1, &words(&[100, -1]));
        assert_eq!(a.sums, words(&[11, 103, i64::MAX]), "words added from a word on");
        let back = Slice::from_bytes(&a.to_bytes().unwrap(), 3).unwrap();
        assert_eq!((back.flights, back.sums), (7, a.sums.clone()));
        assert!(Slice::from_bytes(&a.to_bytes().unwrap(), 4).is_err(), "a slice of another length is refused");
    }
}
