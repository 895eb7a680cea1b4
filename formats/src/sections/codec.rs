//! Little-endian writing and bounded reading of arrays for the custom binary sections (trees and
//! later products): every count is checked against the bytes left before anything is allocated.

use super::ByteReader;
use crate::error::{bad, FormatError};

/// Appends little-endian values to a section's bytes.
#[derive(Default)]
pub(crate) struct ByteWriter(pub(crate) Vec<u8>);

impl ByteWriter {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f32s(&mut self, v: &[f32]) {
        v.iter().for_each(|&x| self.f32(x));
    }
    /// A count that must fit a u32 (sections are far smaller than 4 G items).
    pub(crate) fn count(&mut self, kind: crate::container::SectionKind, n: usize) -> Result<(), FormatError> {
        let n = u32::try_from(n).map_err(|_| FormatError::Encode { section: kind, reason: format!("{n} items do not fit a u32 count") })?;
        self.u32(n);
        Ok(())
    }
    pub(crate) fn str(&mut self, kind: crate::container::SectionKind, s: &str) -> Result<(), FormatError> {
        self.count(kind, s.len())?;
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
}

impl<'a> ByteReader<'a> {
    pub(crate) fn u16(&mut self) -> Result<u16, FormatError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, FormatError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// A finite f32.
    pub(crate) fn finite(&mut self, what: &str) -> Result<f32, FormatError> {
        let v = self.f32()?;
        if !v.is_finite() {
            return Err(bad(self.kind(), format!("{what} is not finite ({v})")));
        }
        Ok(v)
    }
    /// A count of items of `item_bytes` each that must fit in the bytes left.
    pub(crate) fn count(&mut self, item_bytes: usize, what: &str) -> Result<usize, FormatError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(item_bytes.max(1)) > self.remaining() {
            return Err(bad(self.kind(), format!("{n} {what} cannot fit in the {} bytes left", self.remaining())));
        }
        Ok(n)
    }
    /// `n` items of `N` finite f32 each.
    pub(crate) fn finite_arrays<const N: usize>(&mut self, n: usize, what: &str) -> Result<Vec<[f32; N]>, FormatError> {
        let raw = self.take(n.checked_mul(4 * N).ok_or_else(|| bad(self.kind(), format!("{n} {what} overflow")))?)?;
        let mut out = Vec::with_capacity(n);
        for item in raw.chunks_exact(4 * N) {
            let v: [f32; N] = std::array::from_fn(|k| f32::from_le_bytes(item[4 * k..4 * k + 4].try_into().expect("4 bytes")));
            if !v.iter().all(|c| c.is_finite()) {
                return Err(bad(self.kind(), format!("a non-finite value among the {what}: {v:?}")));
            }
            out.push(v);
        }
        Ok(out)
    }
    /// `n` u32 values.
    pub(crate) fn u32s(&mut self, n: usize) -> Result<Vec<u32>, FormatError> {
        let raw = self.take(n.checked_mul(4).ok_or_else(|| bad(self.kind(), "u32 count overflow"))?)?;
        Ok(raw.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }
    /// `n` u16 values.
    pub(crate) fn u16s(&mut self, n: usize) -> Result<Vec<u16>, FormatError> {
        let raw = self.take(n.checked_mul(2).ok_or_else(|| bad(self.kind(), "u16 count overflow"))?)?;
        Ok(raw.chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().expect("2 bytes"))).collect())
    }
    /// A UTF-8 string of at most `max` bytes.
    pub(crate) fn string(&mut self, max: usize) -> Result<String, FormatError> {
        let n = self.count(1, "string bytes")?;
        if n > max {
            return Err(bad(self.kind(), format!("a {n}-byte string (at most {max})")));
        }
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| bad(self.kind(), "a string is not UTF-8"))
    }
    /// Fails unless every byte was read.
    pub(crate) fn finish(&self) -> Result<(), FormatError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(bad(self.kind(), format!("{n} trailing bytes"))),
        }
    }
}
