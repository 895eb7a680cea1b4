//! Light transport's large arrays kept compressed in memory while nothing reads them. A bake holds
//! the BVH, the welded surface and the light sums of the whole world; tracing reads only the BVH
//! and writes only one phase's sums, so the welded surface (about a third of the scene) and an
//! earlier phase's sums wait here, in a fraction of their size, until the filter needs them
//! (BENCHMARKS.md, "The welded surface compressed while the light is traced").
//!
//! Every array is cut into frames that are compressed on every thread; each frame's bytes are
//! first regrouped by their place in the word (all first bytes, then all second bytes, …), so the
//! slowly varying high bytes of nearby floats and indices sit together, and index arrays are
//! stored as differences from the word before. It is lossless: unparking gives the same bits.

use glam::Vec3A;
use rayon::prelude::*;

use super::surface::{MeshFilter, Surface};
use super::{LightSums, LightingError};

/// zstd level of parked frames: level 1 packs them about as small as level 3 in well under half
/// the time, and a shard parks and unparks in the middle of its bake.
const LEVEL: i32 = 1;

/// Values of one frame of a packed array (1 MiB of 4-byte words per word of a value).
const FRAME_VALUES: usize = 1 << 18;

/// Words of one frame of parked sums (8 MiB).
const SUMS_FRAME_WORDS: usize = 1 << 20;

fn failed(what: &str, e: impl std::fmt::Display) -> LightingError {
    LightingError::Parts(format!("{what} parked memory: {e}"))
}

/// How a frame's words are turned before compression.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Words {
    /// As they are (floats).
    Plain,
    /// Each word minus the one before it in the frame (indices, offsets).
    Differences,
}

/// An array of values, each a few 4-byte words, as compressed frames of [`FRAME_VALUES`] values.
struct Frames {
    values: usize,
    words: Words,
    frames: Vec<Vec<u8>>,
}

/// Byte `k` of every word, for `k` = 0 to 3 in turn.
fn regroup(words: &[u32]) -> Vec<u8> {
    let n = words.len();
    let mut out = vec![0u8; 4 * n];
    for (i, w) in words.iter().enumerate() {
        for (k, b) in w.to_le_bytes().into_iter().enumerate() {
            out[k * n + i] = b;
        }
    }
    out
}

/// The inverse of [`regroup`].
fn ungroup(grouped: &[u8]) -> Vec<u32> {
    let n = grouped.len() / 4;
    (0..n).map(|i| u32::from_le_bytes([grouped[i], grouped[n + i], grouped[2 * n + i], grouped[3 * n + i]])).collect()
}

impl Frames {
    /// Packs `values`, each written as `per_value` words by `put`.
    fn pack<T: Sync>(values: &[T], words: Words, per_value: usize, put: impl Fn(&T, &mut Vec<u32>) + Sync) -> Result<Frames, LightingError> {
        let frames = values
            .par_chunks(FRAME_VALUES)
            .map(|chunk| {
                let mut w = Vec::with_capacity(chunk.len() * per_value);
                chunk.iter().for_each(|v| put(v, &mut w));
                if words == Words::Differences {
                    let mut previous = 0u32;
                    for x in &mut w {
                        (*x, previous) = (x.wrapping_sub(previous), *x);
                    }
                }
                zstd::bulk::compress(&regroup(&w), LEVEL).map_err(|e| failed("compressing", e))
            })
            .collect::<Result<_, _>>()?;
        Ok(Frames { values: values.len(), words, frames })
    }

    /// The values again, each made by `get` from its `per_value` words.
    fn unpack<T: Clone + Send + Sync>(&self, per_value: usize, zero: T, get: impl Fn(&[u32]) -> T + Sync) -> Result<Vec<T>, LightingError> {
        let mut values = vec![zero; self.values];
        values.par_chunks_mut(FRAME_VALUES).zip(&self.frames).try_for_each(|(out, frame)| {
            let bytes = 4 * per_value * out.len();
            let grouped = zstd::bulk::decompress(frame, bytes).map_err(|e| failed("decompressing", e))?;
            if grouped.len() != bytes {
                return Err(failed("decompressing", format!("a frame of {} bytes, expected {bytes}", grouped.len())));
            }
            let mut w = ungroup(&grouped);
            if self.words == Words::Differences {
                let mut value = 0u32;
                for x in &mut w {
                    value = value.wrapping_add(*x);
                    *x = value;
                }
            }
            out.iter_mut().zip(w.chunks_exact(per_value)).for_each(|(v, w)| *v = get(w));
            Ok(())
        })?;
        Ok(values)
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.frames.iter().map(Vec::len).sum()
    }

    fn pack_words(values: &[u32], words: Words) -> Result<Frames, LightingError> {
        Frames::pack(values, words, 1, |&v, w| w.push(v))
    }
    fn unpack_words(&self) -> Result<Vec<u32>, LightingError> {
        self.unpack(1, 0, |w| w[0])
    }
    fn pack_floats(values: &[f32]) -> Result<Frames, LightingError> {
        Frames::pack(values, Words::Plain, 1, |&v, w| w.push(v.to_bits()))
    }
    fn unpack_floats(&self) -> Result<Vec<f32>, LightingError> {
        self.unpack(1, 0.0, |w| f32::from_bits(w[0]))
    }
    /// Vectors as their three lanes (the fourth is padding).
    fn pack_vectors(values: &[Vec3A]) -> Result<Frames, LightingError> {
        Frames::pack(values, Words::Plain, 3, |v, w| w.extend(v.to_array().map(f32::to_bits)))
    }
    fn unpack_vectors(&self) -> Result<Vec<Vec3A>, LightingError> {
        self.unpack(3, Vec3A::ZERO, |w| Vec3A::new(f32::from_bits(w[0]), f32::from_bits(w[1]), f32::from_bits(w[2])))
    }
}

/// A [`Surface`] while light is traced: its arrays compressed, its totals at hand.
pub(crate) struct ParkedSurface {
    weld: Frames,
    pos: Frames,
    normal: Frames,
    area: Frames,
    adj_start: Frames,
    adj: Frames,
    /// Welded vertices.
    pub(crate) vertices: usize,
    /// Total area of the triangles.
    pub(crate) total_area: f64,
    pub(crate) mean_edge: f32,
}

impl ParkedSurface {
    /// Compresses `surface`, letting go of each array as soon as it is packed.
    pub(crate) fn park(surface: Surface) -> Result<ParkedSurface, LightingError> {
        let Surface { weld, pos, filter, total_area, mean_edge } = surface;
        let vertices = pos.len();
        let weld = Frames::pack_words(&weld, Words::Differences)?;
        let pos = Frames::pack_vectors(&pos)?;
        let MeshFilter { normal, area, adj_start, adj } = filter;
        let normal = Frames::pack_vectors(&normal)?;
        let area = Frames::pack_floats(&area)?;
        let adj_start = Frames::pack_words(&adj_start, Words::Differences)?;
        let adj = Frames::pack_words(&adj, Words::Differences)?;
        Ok(ParkedSurface { weld, pos, normal, area, adj_start, adj, vertices, total_area, mean_edge })
    }

    /// Input vertex → welded vertex (as [`Surface::weld`]).
    pub(crate) fn weld(&self) -> Result<Vec<u32>, LightingError> {
        self.weld.unpack_words()
    }

    /// The surface's filter alone (the pilot's brightness needs nothing else), unpacked.
    pub(crate) fn filter(&self) -> Result<MeshFilter, LightingError> {
        Ok(MeshFilter {
            normal: self.normal.unpack_vectors()?,
            area: self.area.unpack_floats()?,
            adj_start: self.adj_start.unpack_words()?,
            adj: self.adj.unpack_words()?,
        })
    }

    /// The whole surface again, the same bits as parked.
    pub(crate) fn unpark(self) -> Result<Surface, LightingError> {
        let filter = self.filter()?;
        Ok(Surface { weld: self.weld()?, pos: self.pos.unpack_vectors()?, filter, total_area: self.total_area, mean_edge: self.mean_edge })
    }

    /// Compressed bytes held.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        [&self.weld, &self.pos, &self.normal, &self.area, &self.adj_start, &self.adj].iter().map(|p| p.bytes()).sum()
    }
}

/// One phase's [`LightSums`] while the next phase is traced, compressed: the sums of nearby
/// vertices and cells share their high bytes.
pub(crate) struct ParkedSums {
    flights: u64,
    /// Each frame with its first word.
    frames: Vec<(usize, Vec<u8>)>,
}

impl ParkedSums {
    /// Compresses `sums` and lets go of them.
    pub(crate) fn park(sums: LightSums) -> Result<ParkedSums, LightingError> {
        let words = sums.word_count();
        let starts: Vec<usize> = (0..words).step_by(SUMS_FRAME_WORDS).collect();
        let frames = starts
            .into_par_iter()
            .map(|start| {
                let raw = sums.words_to_bytes(start..(start + SUMS_FRAME_WORDS).min(words));
                let frame = zstd::bulk::compress(&raw, LEVEL).map_err(|e| failed("compressing", e))?;
                Ok((start, frame))
            })
            .collect::<Result<_, LightingError>>()?;
        Ok(ParkedSums { flights: sums.flights, frames })
    }

    /// Adds the parked sums (and their flights) to `sums`, of the same shape.
    pub(crate) fn add_to(self, sums: &mut LightSums) -> Result<(), LightingError> {
        for (start, frame) in self.frames {
            let raw = zstd::bulk::decompress(&frame, 8 * SUMS_FRAME_WORDS).map_err(|e| failed("decompressing", e))?;
            sums.add_words(start, &raw).map_err(|e| failed("adding", e))?;
        }
        sums.flights += self.flights;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_unpack_to_the_bits_they_were_packed_from() {
        // Over a frame boundary, with wrapping differences and floats of every kind.
        let n = FRAME_VALUES + 1234;
        let ids: Vec<u32> = (0..n as u32).map(|i| if i % 7 == 0 { u32::MAX - i } else { i / 3 }).collect();
        assert_eq!(Frames::pack_words(&ids, Words::Differences).unwrap().unpack_words().unwrap(), ids);
        assert_eq!(Frames::pack_words(&ids, Words::Plain).unwrap().unpack_words().unwrap(), ids);
        let floats: Vec<f32> = (0..n).map(|i| [i as f32 * 0.1, -0.0, f32::NAN, 1e-40, f32::INFINITY][i % 5]).collect();
        let back = Frames::pack_floats(&floats).unwrap().unpack_floats().unwrap();
        assert!(back.iter().zip(&floats).all(|(a, b)| a.to_bits() == b.to_bits()));
        let vectors: Vec<Vec3A> = floats.chunks_exact(3).map(Vec3A::from_slice).collect();
        let back = Frames::pack_vectors(&vectors).unwrap().unpack_vectors().unwrap();
        let bits = |v: &[Vec3A]| v.iter().flat_map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<u32>>();
        assert_eq!(bits(&back), bits(&vectors));
        assert!(Frames::pack_words(&[], Words::Differences).unwrap().unpack_words().unwrap().is_empty());
    }

    #[test]
    fn a_parked_surface_unparks_to_the_same_surface_in_less_memory() {
        // A bumpy grid, welded across a seam of duplicated vertices.
        let (w, h) = (300usize, 200usize);
        let mut positions = Vec::new();
        for y in 0..h {
            for x in 0..w {
                positions.push([x as f32 * 0.25, y as f32 * 0.25, ((x * 7 + y * 3) % 11) as f32 * 0.01]);
            }
        }
        let mut indices = Vec::new();
        for y in 0..h - 1 {
            for x in 0..w - 1 {
                let v = (y * w + x) as u32;
                indices.extend([v, v + 1, v + w as u32, v + 1, v + w as u32 + 1, v + w as u32]);
            }
        }
        let surface = Surface::new(&positions, &indices);
        let raw = surface.bytes();
        let parked = ParkedSurface::park(Surface::new(&positions, &indices)).unwrap();
        assert!(parked.bytes() < raw / 2, "{} of {raw} bytes", parked.bytes());
        assert_eq!(parked.weld().unwrap(), surface.weld);
        assert!(parked.filter().unwrap() == surface.filter);
        assert!(parked.unpark().unwrap() == surface);
    }
}
