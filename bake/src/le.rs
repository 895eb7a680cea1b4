//! Little-endian byte forms of a value's plain arrays, for what a bake stores in its stage cache
//! to share between processes (light transport's lookup): the same bytes on every machine, and
//! a reader that refuses a short, long or oversized form with a message instead of panicking.
//! Arrays are written with their length first. Arrays of plain 4-byte words (numbers, vectors
//! and blocks of them: any [`bytemuck::Pod`] type whose size and alignment are multiples of 4)
//! are copied whole on little-endian machines, where their memory is already their form.

use bytemuck::Pod;

/// Writes numbers and length-prefixed arrays of them, little-endian.
#[derive(Default)]
pub(crate) struct LeWriter(Vec<u8>);

impl LeWriter {
    /// A writer with room for `bytes` bytes.
    pub(crate) fn with_capacity(bytes: usize) -> LeWriter {
        LeWriter(Vec::with_capacity(bytes))
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// `v`'s length, then its elements.
    pub(crate) fn u32s(&mut self, v: &[u32]) {
        self.pod(v);
    }

    /// `v`'s length, then its elements.
    pub(crate) fn f32s(&mut self, v: &[f32]) {
        self.pod(v);
    }

    /// `v`'s length in 4-byte words, then its words: the form [`LeReader::pod`] reads.
    pub(crate) fn pod<T: Pod>(&mut self, v: &[T]) {
        let words: &[u32] = bytemuck::cast_slice(v);
        self.u64(words.len() as u64);
        self.put_words(words);
    }

    fn put_words(&mut self, words: &[u32]) {
        if cfg!(target_endian = "little") {
            self.0.extend_from_slice(bytemuck::cast_slice(words));
        } else {
            words.iter().for_each(|w| self.0.extend_from_slice(&w.to_le_bytes()));
        }
    }

    /// [`LeWriter::f32s`] of the `len` numbers `v` gives, without gathering them first.
    pub(crate) fn f32_iter(&mut self, len: usize, v: impl Iterator<Item = f32>) {
        self.words(len, v.map(f32::to_le_bytes));
    }

    /// `len`, then the words; `words` must give exactly `len` of them.
    fn words(&mut self, len: usize, words: impl Iterator<Item = [u8; 4]>) {
        self.u64(len as u64);
        let start = self.0.len();
        self.0.resize(start + 4 * len, 0);
        let mut given = 0;
        for (out, w) in self.0[start..].chunks_exact_mut(4).zip(words) {
            out.copy_from_slice(&w);
            given += 1;
        }
        assert_eq!(given, len, "an array written with a length it does not have");
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// Reads what a [`LeWriter`] wrote, in the same order.
pub(crate) struct LeReader<'a>(&'a [u8]);

impl<'a> LeReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> LeReader<'a> {
        LeReader(bytes)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err(format!("truncated: {n} bytes wanted, {} left", self.0.len()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    pub(crate) fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// An array's bytes: its length (at most what is left), then `size` bytes per element.
    fn array(&mut self, size: usize) -> Result<&'a [u8], String> {
        let len = self.u64()?;
        let bytes = usize::try_from(len).ok().and_then(|l| l.checked_mul(size)).filter(|&b| b <= self.0.len());
        let bytes = bytes.ok_or_else(|| format!("an array of {len} elements of {size} bytes, {} bytes left", self.0.len()))?;
        self.take(bytes)
    }

    pub(crate) fn u32s(&mut self) -> Result<Vec<u32>, String> {
        self.pod()
    }

    pub(crate) fn f32s(&mut self) -> Result<Vec<f32>, String> {
        self.pod()
    }

    /// What [`LeWriter::pod`] wrote, as whole `T`s.
    pub(crate) fn pod<T: Pod>(&mut self) -> Result<Vec<T>, String> {
        let bytes = self.array(4)?;
        let size = std::mem::size_of::<T>();
        if !bytes.len().is_multiple_of(size) {
            return Err(format!("{} words are not whole elements of {} words", bytes.len() / 4, size / 4));
        }
        let n = bytes.len() / size;
        let mut v = vec![T::zeroed(); n];
        bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
        from_le_words(&mut v);
        Ok(v)
    }

    /// Succeeds if everything was read.
    pub(crate) fn end(self) -> Result<(), String> {
        match self.0.len() {
            0 => Ok(()),
            n => Err(format!("{n} bytes after the end")),
        }
    }
}

/// Turns words read in their little-endian form into this machine's (nothing to do on
/// little-endian machines).
fn from_le_words<T: Pod>(v: &mut [T]) {
    if cfg!(target_endian = "big") {
        bytemuck::cast_slice_mut::<T, u32>(v).iter_mut().for_each(|w| *w = u32::from_le(*w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_round_trip_and_bad_forms_are_refused() {
        let mut w = LeWriter::default();
        w.u64(7);
        w.f64(-0.5);
        w.u32s(&[1, u32::MAX]);
        w.f32s(&[f32::MIN_POSITIVE, -0.0, 3.5]);
        let bytes = w.finish();
        assert_eq!(&bytes[..8], &[7, 0, 0, 0, 0, 0, 0, 0], "little-endian");
        let mut r = LeReader::new(&bytes);
        assert_eq!(r.u64().unwrap(), 7);
        assert_eq!(r.f64().unwrap(), -0.5);
        assert_eq!(r.u32s().unwrap(), [1, u32::MAX]);
        let f = r.f32s().unwrap();
        assert_eq!(f.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), [f32::MIN_POSITIVE, -0.0, 3.5].map(f32::to_bits));
        r.end().unwrap();

        for cut in [0, 5, 20, bytes.len() - 1] {
            let mut r = LeReader::new(&bytes[..cut]);
            let read = (|| -> Result<(), String> {
                r.u64()?;
                r.f64()?;
                r.u32s()?;
                r.f32s()?;
                Ok(())
            })();
            assert!(read.is_err(), "cut at {cut}");
        }
        let mut huge = LeWriter::default();
        huge.u64(u64::MAX);
        assert!(LeReader::new(&huge.finish()).u32s().unwrap_err().contains("elements"), "a length past the end is refused");
        let mut extra = bytes.clone();
        extra.push(0);
        let mut r = LeReader::new(&extra);
        let _ = (r.u64().unwrap(), r.f64().unwrap(), r.u32s().unwrap(), r.f32s().unwrap());
        assert!(r.end().is_err(), "trailing bytes are refused");

        let mut w = LeWriter::default();
        w.u32s(&[1, 2, 3, 4, 5, 6, (-2.5f32).to_bits()]);
        let bytes = w.finish();
        let mut r = LeReader::new(&bytes);
        assert!(r.pod::<[u32; 2]>().unwrap_err().contains("whole"), "7 words are not pairs");
        let mut w = LeWriter::default();
        w.pod(&[[1u32, 2], [3, 4], [5, 6]]);
        let pairs = w.finish();
        let mut w = LeWriter::default();
        w.u32s(&[1, 2, 3, 4, 5, 6]);
        assert_eq!(pairs, w.finish(), "the form of the words");
        assert_eq!(LeReader::new(&pairs).pod::<[u32; 2]>().unwrap(), [[1, 2], [3, 4], [5, 6]]);
        assert!(LeReader::new(&bytes[..bytes.len() - 1]).u32s().is_err(), "a short array is refused");
        let mut w = LeWriter::default();
        w.f32s(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(LeReader::new(&w.finish()).pod::<[f32; 2]>().unwrap(), [[1.0, 2.0], [3.0, 4.0]]);
    }
}
