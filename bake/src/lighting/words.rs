//! Exact `i64` sums in about half the memory. Each word keeps its low 32 bits in one array and
//! its high 32 bits in a table per block of words, made the first time a word of the block needs
//! them. A part's light sums mostly stay below 2^32 units (see `fixed.rs`: a bake's whole power
//! is 2^44 units, spread over millions of vertices and cells), so most blocks never make one.
//!
//! Adding `d` adds its low half to the low word, and its high half plus the carry out of the low
//! word to the high word: `i64` addition done in two halves, so the sums wrap as `i64` sums do
//! and stay exact in any order.

use rayon::prelude::*;

/// `len` `i64` words, stored split (see the module's text).
#[derive(Clone, Debug)]
pub(crate) struct SplitWords {
    low: Vec<u32>,
    /// The high halves of block `b`'s words, once one of them has been non-zero.
    high: Vec<Option<Box<[i32]>>>,
    block: usize,
}

impl SplitWords {
    /// `len` zero words in blocks of `block` (writers split the words at block boundaries, and
    /// runs read with [`SplitWords::run`] must not cross one). The low words are zero pages
    /// until written.
    pub(crate) fn zeroed(len: usize, block: usize) -> SplitWords {
        let block = block.max(1);
        SplitWords { low: crate::mem::huge_zeroed(0u32, len), high: vec![None; len.div_ceil(block)], block }
    }

    pub(crate) fn len(&self) -> usize {
        self.low.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.low.is_empty()
    }

    /// Word `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> i64 {
        self.run::<1>(i)[0]
    }

    /// Words `start..start + N`, which lie in one block.
    #[inline]
    pub(crate) fn run<const N: usize>(&self, start: usize) -> [i64; N] {
        let (b, at) = (start / self.block, start % self.block);
        debug_assert!(at + N <= self.block);
        let low: &[u32; N] = self.low[start..start + N].try_into().expect("N words");
        match &self.high[b] {
            None => low.map(i64::from),
            Some(high) => std::array::from_fn(|k| join(high[at + k], low[k])),
        }
    }

    /// Words `range` in order.
    pub(crate) fn values(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = i64> + '_ {
        let blocks = range.start / self.block..range.end.div_ceil(self.block);
        blocks.flat_map(move |b| {
            let (first, end) = ((b * self.block).max(range.start), ((b + 1) * self.block).min(range.end));
            let high = self.high[b].as_deref();
            self.low[first..end].iter().enumerate().map(move |(k, &low)| high.map_or(low as i64, |h| join(h[first + k - b * self.block], low)))
        })
    }

    /// The words in pieces of `blocks` blocks each, to write in parallel.
    pub(crate) fn pieces_mut(&mut self, blocks: usize) -> impl IndexedParallelIterator<Item = WordsMut<'_>> {
        let (block, blocks) = (self.block, blocks.max(1));
        self.low.par_chunks_mut(block * blocks).zip(self.high.par_chunks_mut(blocks)).map(move |(low, high)| WordsMut { low, high, block })
    }

    /// Adds `values` to words `start..start + values.len()` (a few blocks' worth at a time, in
    /// parallel).
    pub(crate) fn add_from(&mut self, start: usize, values: impl Fn(usize) -> i64 + Sync, count: usize) {
        let end = start + count;
        let piece_blocks = (1usize << 16).div_ceil(self.block);
        let piece = piece_blocks * self.block;
        let (first, last) = (start / piece, end.div_ceil(piece));
        self.pieces_mut(piece_blocks).enumerate().skip(first).take(last.saturating_sub(first)).for_each(|(p, mut words)| {
            let base = p * piece;
            for i in start.max(base)..end.min(base + piece) {
                words.add(i - base, values(i - start));
            }
        });
    }

    /// Adds `other`'s words (as many as these) to these.
    pub(crate) fn add_all(&mut self, other: &SplitWords) {
        debug_assert_eq!(self.len(), other.len());
        self.add_from(0, |i| other.get(i), self.len().min(other.len()));
    }

    /// Bytes held (the high tables made so far included).
    pub(crate) fn bytes(&self) -> usize {
        4 * self.low.len() + self.high.iter().flatten().map(|h| 4 * h.len()).sum::<usize>()
    }
}

impl PartialEq for SplitWords {
    /// Equal words (whichever high tables each has made).
    fn eq(&self, other: &SplitWords) -> bool {
        self.len() == other.len() && self.values(0..self.len()).eq(other.values(0..other.len()))
    }
}

/// A piece of a [`SplitWords`] to add to, words numbered from the piece's first.
pub(crate) struct WordsMut<'a> {
    low: &'a mut [u32],
    high: &'a mut [Option<Box<[i32]>>],
    block: usize,
}

impl WordsMut<'_> {
    /// Adds `d` to word `i` of the piece.
    #[inline]
    pub(crate) fn add(&mut self, i: usize, d: i64) {
        let (sum, carry) = self.low[i].overflowing_add(d as u32);
        self.low[i] = sum;
        let high = ((d >> 32) as i32).wrapping_add(carry as i32);
        if high != 0 {
            self.add_high(i, high);
        }
    }

    #[cold]
    fn add_high(&mut self, i: usize, high: i32) {
        let block = self.block;
        let table = self.high[i / block].get_or_insert_with(|| vec![0; block].into_boxed_slice());
        table[i % block] = table[i % block].wrapping_add(high);
    }
}

#[inline]
fn join(high: i32, low: u32) -> i64 {
    ((high as i64) << 32) | low as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `d` to word `i` through the piece of `blocks` blocks that holds it.
    fn add_in_piece(words: &mut SplitWords, blocks: usize, i: usize, d: i64) {
        let piece = blocks * words.block;
        words.pieces_mut(blocks).enumerate().for_each(|(p, mut w)| {
            if p == i / piece {
                w.add(i % piece, d)
            }
        });
    }

    #[test]
    fn split_words_add_up_as_i64_words_do() {
        // Values that carry, borrow, wrap past i64's ends and fill whole high halves, added in
        // pieces of every size against plain i64 sums.
        let len = 1000;
        let mut rng = crate::lighting::rng::Rng::new(3, 0, 0);
        let mut expected = vec![0i64; len];
        let mut words = SplitWords::zeroed(len, 24);
        for round in 0..6000 {
            let i = (rng.next_f32() * len as f32) as usize % len;
            let d = match round % 6 {
                0 => (rng.next_f32() * 1000.0) as i64,
                1 => u32::MAX as i64 - 3,
                2 => -((rng.next_f32() * 5e9) as i64),
                3 => i64::MAX - 7,
                4 => i64::MIN + (rng.next_f32() * 1e6) as i64,
                _ => ((rng.next_f32() * 4e9) as i64) << 20,
            };
            expected[i] = expected[i].wrapping_add(d);
            add_in_piece(&mut words, [1, 2, 7][round % 3], i, d);
        }
        assert!(expected.iter().enumerate().all(|(i, &e)| words.get(i) == e));
        assert!(words.values(5..997).eq(expected[5..997].iter().copied()));
        assert_eq!(words.run::<3>(27), [expected[27], expected[28], expected[29]]);
        // Added to themselves through `add_from`, from any start.
        let mut twice = words.clone();
        twice.add_all(&words);
        twice.add_from(333, |k| -expected[333 + k], 400);
        for (i, e) in expected.iter().enumerate() {
            let want = if (333..733).contains(&i) { *e } else { e.wrapping_mul(2) };
            assert_eq!(twice.get(i), want, "word {i}");
        }
    }

    #[test]
    fn small_sums_make_no_high_tables() {
        let mut words = SplitWords::zeroed(4096, 64);
        for i in 0..4096 {
            add_in_piece(&mut words, 1 << 20, i, 1 << 20);
        }
        assert_eq!(words.bytes(), 4 * 4096);
        // One word over 2^32 makes one block's table, and words compare by value.
        let mut other = words.clone();
        add_in_piece(&mut other, 1, 645, 1 << 40);
        add_in_piece(&mut other, 1, 645, -(1 << 40));
        assert_eq!(other.bytes(), 4 * 4096 + 4 * 64);
        assert!(other == words);
    }
}
