//! Light transport's large arrays kept compressed while nothing reads them. A bake holds the BVH,
//! the welded surface and the light sums of the whole world; tracing reads only the BVH and
//! writes only one phase's sums, so the welded surface (about a third of the scene) and an earlier
//! phase's sums wait here, in a fraction of their size, until the filter needs them
//! (BENCHMARKS.md, "The welded surface compressed while the light is traced"). A bake that asks
//! for the least memory parks them in a temporary file instead ([`Parking::InTempFile`]), where
//! they take no memory at all while the paths are traced.
//!
//! Every array is cut into frames that are compressed on every thread; each frame's bytes are
//! first regrouped by their place in the word (all first bytes, then all second bytes, …), so the
//! slowly varying high bytes of nearby floats and indices sit together, and index arrays are
//! stored as differences from the word before. It is lossless: unparking gives the same bits.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

use glam::Vec3A;
use rayon::prelude::*;

use super::surface::MeshFilter;
#[cfg(test)]
use super::surface::Surface;
use super::surface_build::{self, Vertices};
use super::{IrradianceVolume, LightSums, LightingError};
use crate::rays::{Bvh, WrittenBvh};

/// zstd level of parked frames: level 1 packs them about as small as level 3 in well under half
/// the time, and a shard parks and unparks in the middle of its bake.
const LEVEL: i32 = 1;

/// Values of one frame of a packed array (1 MiB of 4-byte words per word of a value).
const FRAME_VALUES: usize = 1 << 18;

/// Words of one frame of parked sums (8 MiB).
const SUMS_FRAME_WORDS: usize = 1 << 20;

/// Most frames of parked sums unpacked at once (8 MiB each), however many threads there are.
const UNPACKED_SUMS_FRAMES: usize = 4;

fn failed(what: &str, e: impl std::fmt::Display) -> LightingError {
    LightingError::Parts(format!("{what} parked memory: {e}"))
}

/// Where parked arrays wait (see the module's text). Either way unparking gives the same bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Parking {
    /// Compressed, in memory.
    #[default]
    InMemory,
    /// Compressed, in an unnamed temporary file in the OS's temporary directory (`TMPDIR`), which
    /// the OS removes when the bake ends or dies: no memory, for writing and reading each array
    /// once more.
    InTempFile,
}

/// Where one parked value keeps its frames: with it, or in a temporary file of its own.
struct Shelf {
    /// The file and how many bytes have been written to it.
    file: Option<Mutex<(File, u64)>>,
}

/// One compressed frame, held or in the shelf's file.
enum Frame {
    Held(Vec<u8>),
    Filed { at: u64, len: usize },
}

impl Shelf {
    fn new(parking: Parking) -> Result<Shelf, LightingError> {
        let file = match parking {
            Parking::InMemory => None,
            Parking::InTempFile => Some(Mutex::new((tempfile::tempfile().map_err(|e| in_file("making", e))?, 0))),
        };
        Ok(Shelf { file })
    }

    /// Keeps `bytes`: moved into the frame, or written to the file and let go of.
    fn put(&self, bytes: Vec<u8>) -> Result<Frame, LightingError> {
        let Some(file) = &self.file else { return Ok(Frame::Held(bytes)) };
        let mut guard = file.lock().map_err(|_| in_file("writing", "a writer panicked"))?;
        let (f, end) = &mut *guard;
        let at = *end;
        f.seek(SeekFrom::Start(at)).and_then(|_| f.write_all(&bytes)).map_err(|e| in_file("writing", e))?;
        *end += bytes.len() as u64;
        Ok(Frame::Filed { at, len: bytes.len() })
    }

    /// A frame's bytes, read back from the file if they are there.
    fn get<'a>(&self, frame: &'a Frame) -> Result<Cow<'a, [u8]>, LightingError> {
        match (frame, &self.file) {
            (Frame::Held(bytes), _) => Ok(Cow::Borrowed(bytes)),
            (&Frame::Filed { at, len }, Some(file)) => {
                let mut bytes = vec![0; len];
                let mut guard = file.lock().map_err(|_| in_file("reading", "a writer panicked"))?;
                guard.0.seek(SeekFrom::Start(at)).and_then(|_| guard.0.read_exact(&mut bytes)).map_err(|e| in_file("reading", e))?;
                Ok(Cow::Owned(bytes))
            }
            (Frame::Filed { .. }, None) => Err(failed("reading", "a filed frame without its file")),
        }
    }

    #[cfg(test)]
    fn bytes(&self, frames: &[Frame]) -> usize {
        frames
            .iter()
            .map(|f| match f {
                Frame::Held(b) => b.len(),
                Frame::Filed { len, .. } => *len,
            })
            .sum()
    }
}

/// An error of the temporary file parked frames wait in, naming its directory.
fn in_file(what: &str, e: impl std::fmt::Display) -> LightingError {
    LightingError::Parts(format!("{what} parked memory's temporary file in {}: {e}", std::env::temp_dir().display()))
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
    frames: Vec<Frame>,
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
    fn pack<T: Sync>(
        shelf: &Shelf,
        values: &[T],
        words: Words,
        per_value: usize,
        put: impl Fn(&T, &mut Vec<u32>) + Sync,
    ) -> Result<Frames, LightingError> {
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
                shelf.put(zstd::bulk::compress(&regroup(&w), LEVEL).map_err(|e| failed("compressing", e))?)
            })
            .collect::<Result<_, _>>()?;
        Ok(Frames { values: values.len(), words, frames })
    }

    /// The values again, each made by `get` from its `per_value` words.
    fn unpack<T: Clone + Send + Sync>(
        &self,
        shelf: &Shelf,
        per_value: usize,
        zero: T,
        get: impl Fn(&[u32]) -> T + Sync,
    ) -> Result<Vec<T>, LightingError> {
        let mut values = vec![zero; self.values];
        values.par_chunks_mut(FRAME_VALUES).zip(&self.frames).try_for_each(|(out, frame)| {
            let bytes = 4 * per_value * out.len();
            let grouped = zstd::bulk::decompress(&shelf.get(frame)?, bytes).map_err(|e| failed("decompressing", e))?;
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

    fn pack_words(shelf: &Shelf, values: &[u32], words: Words) -> Result<Frames, LightingError> {
        Frames::pack(shelf, values, words, 1, |&v, w| w.push(v))
    }
    fn unpack_words(&self, shelf: &Shelf) -> Result<Vec<u32>, LightingError> {
        self.unpack(shelf, 1, 0, |w| w[0])
    }
    fn pack_floats(shelf: &Shelf, values: &[f32]) -> Result<Frames, LightingError> {
        Frames::pack(shelf, values, Words::Plain, 1, |&v, w| w.push(v.to_bits()))
    }
    fn unpack_floats(&self, shelf: &Shelf) -> Result<Vec<f32>, LightingError> {
        self.unpack(shelf, 1, 0.0, |w| f32::from_bits(w[0]))
    }
    /// Vectors as their three lanes (the fourth is padding).
    fn pack_vectors(shelf: &Shelf, values: &[Vec3A]) -> Result<Frames, LightingError> {
        Frames::pack(shelf, values, Words::Plain, 3, |v, w| w.extend(v.to_array().map(f32::to_bits)))
    }
    fn unpack_vectors(&self, shelf: &Shelf) -> Result<Vec<Vec3A>, LightingError> {
        self.unpack(shelf, 3, Vec3A::ZERO, |w| Vec3A::new(f32::from_bits(w[0]), f32::from_bits(w[1]), f32::from_bits(w[2])))
    }
}

/// A [`Surface`] while light is traced: its arrays compressed, its totals at hand.
pub(crate) struct ParkedSurface {
    shelf: Shelf,
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
    /// Builds the welded surface of `positions` and `indices` ([`Surface::new`]'s) and parks it,
    /// each array as soon as it is made: the vertices' arrays are put away before the neighbour
    /// lists, the build's largest step, are made.
    pub(crate) fn build(positions: &[[f32; 3]], indices: &[u32], parking: Parking) -> Result<ParkedSurface, LightingError> {
        let Vertices { weld, pos, normal, area, degree, total_area, mean_edge } = surface_build::vertices(positions, indices);
        let vertices = pos.len();
        let shelf = Shelf::new(parking)?;
        // Each array is let go of once packed (a packed array named like it would keep it alive).
        let packed_pos = Frames::pack_vectors(&shelf, &pos)?;
        drop(pos);
        let packed_normal = Frames::pack_vectors(&shelf, &normal)?;
        drop(normal);
        let packed_area = Frames::pack_floats(&shelf, &area)?;
        drop(area);
        let (adj_start, adj) = surface_build::neighbours(&weld, degree, indices);
        let packed_adj = Frames::pack_words(&shelf, &adj, Words::Differences)?;
        drop(adj);
        let packed_adj_start = Frames::pack_words(&shelf, &adj_start, Words::Differences)?;
        let packed_weld = Frames::pack_words(&shelf, &weld, Words::Differences)?;
        Ok(ParkedSurface {
            shelf,
            weld: packed_weld,
            pos: packed_pos,
            normal: packed_normal,
            area: packed_area,
            adj_start: packed_adj_start,
            adj: packed_adj,
            vertices,
            total_area,
            mean_edge,
        })
    }

    /// Input vertex → welded vertex (as [`Surface::weld`]).
    pub(crate) fn weld(&self) -> Result<Vec<u32>, LightingError> {
        self.weld.unpack_words(&self.shelf)
    }

    /// The surface's filter alone (the pilot's brightness needs nothing else), unpacked.
    pub(crate) fn filter(&self) -> Result<MeshFilter, LightingError> {
        Ok(MeshFilter {
            normal: self.normal.unpack_vectors(&self.shelf)?,
            area: self.area.unpack_floats(&self.shelf)?,
            adj_start: self.adj_start.unpack_words(&self.shelf)?,
            adj: self.adj.unpack_words(&self.shelf)?,
        })
    }

    /// The welded positions (as [`Surface::pos`]).
    pub(crate) fn positions(&self) -> Result<Vec<Vec3A>, LightingError> {
        self.pos.unpack_vectors(&self.shelf)
    }

    /// The whole surface again, the same bits as parked.
    #[cfg(test)]
    pub(crate) fn unpark(self) -> Result<Surface, LightingError> {
        let filter = self.filter()?;
        Ok(Surface { weld: self.weld()?, pos: self.positions()?, filter, total_area: self.total_area, mean_edge: self.mean_edge })
    }

    /// Compressed bytes held.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        [&self.weld, &self.pos, &self.normal, &self.area, &self.adj_start, &self.adj].iter().map(|p| self.shelf.bytes(&p.frames)).sum()
    }
}

/// The tracer while light transport's filter runs: held, or written to a temporary file
/// ([`Parking`]), byte for byte.
pub(crate) enum ParkedBvh {
    Held(Bvh),
    Written(File, WrittenBvh),
}

impl ParkedBvh {
    pub(crate) fn park(bvh: Bvh, parking: Parking) -> Result<ParkedBvh, LightingError> {
        if parking == Parking::InMemory {
            return Ok(ParkedBvh::Held(bvh));
        }
        let mut file = tempfile::tempfile().map_err(|e| in_file("making", e))?;
        let written = bvh.write_out(&mut file).map_err(|e| in_file("writing", e))?;
        Ok(ParkedBvh::Written(file, written))
    }

    /// The tracer again, the same bytes as parked.
    pub(crate) fn unpark(self) -> Result<Bvh, LightingError> {
        match self {
            ParkedBvh::Held(bvh) => Ok(bvh),
            ParkedBvh::Written(mut file, written) => {
                file.seek(SeekFrom::Start(0)).map_err(|e| in_file("reading", e))?;
                written.read_back(&mut file).map_err(|e| in_file("reading", e))
            }
        }
    }
}

/// The finished irradiance volume while the surface's filter runs: its two directional maps
/// parked as floats, the rest at hand.
pub(crate) struct ParkedVolume {
    shelf: Shelf,
    ambient: Frames,
    direct: Frames,
    /// The volume with its maps taken out.
    rest: IrradianceVolume,
}

impl ParkedVolume {
    pub(crate) fn park(mut volume: IrradianceVolume, parking: Parking) -> Result<ParkedVolume, LightingError> {
        let shelf = Shelf::new(parking)?;
        let ambient = Frames::pack_floats(&shelf, bytemuck::cast_slice(&std::mem::take(&mut volume.ambient)))?;
        let direct = Frames::pack_floats(&shelf, bytemuck::cast_slice(&std::mem::take(&mut volume.direct)))?;
        Ok(ParkedVolume { shelf, ambient, direct, rest: volume })
    }

    /// The volume again, the same bits as parked.
    pub(crate) fn unpark(self) -> Result<IrradianceVolume, LightingError> {
        let cells = |frames: &Frames| -> Result<Vec<[[f32; 3]; 6]>, LightingError> {
            Ok(bytemuck::allocation::pod_collect_to_vec(&frames.unpack_floats(&self.shelf)?))
        };
        Ok(IrradianceVolume { ambient: cells(&self.ambient)?, direct: cells(&self.direct)?, ..self.rest })
    }
}

/// One phase's [`LightSums`] while the next phase is traced, compressed: the sums of nearby
/// vertices and cells share their high bytes.
pub(crate) struct ParkedSums {
    flights: u64,
    shelf: Shelf,
    /// Each frame with its first word.
    frames: Vec<(usize, Frame)>,
}

impl ParkedSums {
    /// Compresses `sums` and lets go of them.
    pub(crate) fn park(sums: LightSums, parking: Parking) -> Result<ParkedSums, LightingError> {
        let shelf = Shelf::new(parking)?;
        let words = sums.word_count();
        let starts: Vec<usize> = (0..words).step_by(SUMS_FRAME_WORDS).collect();
        let frames = starts
            .into_par_iter()
            .map(|start| {
                let raw = sums.words_to_bytes(start..(start + SUMS_FRAME_WORDS).min(words));
                let frame = zstd::bulk::compress(&raw, LEVEL).map_err(|e| failed("compressing", e))?;
                Ok((start, shelf.put(frame)?))
            })
            .collect::<Result<_, LightingError>>()?;
        Ok(ParkedSums { flights: sums.flights, shelf, frames })
    }

    /// Adds the parked sums (and their flights) to `sums`, of the same shape.
    /// A few frames are unpacked at once, each on a thread of its own, then added in order (on
    /// every thread): unpacking, one thread's work per frame, was most of the time. Sums parked
    /// in a file (a bake asking for the least memory) are unpacked a frame at a time.
    pub(crate) fn add_to(self, sums: &mut LightSums) -> Result<(), LightingError> {
        let batch = match self.shelf.file {
            Some(_) => 1,
            None => rayon::current_num_threads().clamp(1, UNPACKED_SUMS_FRAMES),
        };
        for frames in self.frames.chunks(batch) {
            let unpack =
                |frame: &Frame| zstd::bulk::decompress(&self.shelf.get(frame)?, 8 * SUMS_FRAME_WORDS).map_err(|e| failed("decompressing", e));
            let raws: Vec<Vec<u8>> = frames.par_iter().map(|(_, frame)| unpack(frame)).collect::<Result<_, _>>()?;
            for ((start, _), raw) in frames.iter().zip(raws) {
                sums.add_words(*start, &raw).map_err(|e| failed("adding", e))?;
            }
        }
        sums.flights += self.flights;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Parking; 2] = [Parking::InMemory, Parking::InTempFile];

    #[test]
    fn arrays_unpack_to_the_bits_they_were_packed_from() {
        // Over a frame boundary, with wrapping differences and floats of every kind, in memory and
        // in a file, several arrays on one shelf.
        let n = FRAME_VALUES + 1234;
        let ids: Vec<u32> = (0..n as u32).map(|i| if i % 7 == 0 { u32::MAX - i } else { i / 3 }).collect();
        let floats: Vec<f32> = (0..n).map(|i| [i as f32 * 0.1, -0.0, f32::NAN, 1e-40, f32::INFINITY][i % 5]).collect();
        let vectors: Vec<Vec3A> = floats.chunks_exact(3).map(Vec3A::from_slice).collect();
        let bits = |v: &[Vec3A]| v.iter().flat_map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<u32>>();
        for parking in BOTH {
            let shelf = Shelf::new(parking).unwrap();
            let differences = Frames::pack_words(&shelf, &ids, Words::Differences).unwrap();
            let plain = Frames::pack_words(&shelf, &ids, Words::Plain).unwrap();
            let packed_floats = Frames::pack_floats(&shelf, &floats).unwrap();
            let packed_vectors = Frames::pack_vectors(&shelf, &vectors).unwrap();
            let empty = Frames::pack_words(&shelf, &[], Words::Differences).unwrap();
            assert_eq!(differences.unpack_words(&shelf).unwrap(), ids);
            assert_eq!(plain.unpack_words(&shelf).unwrap(), ids);
            let back = packed_floats.unpack_floats(&shelf).unwrap();
            assert!(back.iter().zip(&floats).all(|(a, b)| a.to_bits() == b.to_bits()));
            assert_eq!(bits(&packed_vectors.unpack_vectors(&shelf).unwrap()), bits(&vectors));
            assert!(empty.unpack_words(&shelf).unwrap().is_empty());
            let filed = [&differences, &plain, &packed_floats].iter().flat_map(|f| &f.frames).all(|f| matches!(f, Frame::Filed { .. }));
            assert_eq!(filed, parking == Parking::InTempFile, "{parking:?} keeps its frames where it says");
        }
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
        for parking in BOTH {
            let parked = ParkedSurface::build(&positions, &indices, parking).unwrap();
            assert!(parked.bytes() < raw / 2, "{} of {raw} bytes", parked.bytes());
            assert_eq!(parked.weld().unwrap(), surface.weld);
            assert!(parked.filter().unwrap() == surface.filter);
            assert!(parked.unpark().unwrap() == surface);
        }
    }

    #[test]
    fn parked_sums_add_back_exactly() {
        use crate::lighting::fixed::Fixed;
        use crate::lighting::volume::{VolumeAccumulator, VolumeDesc};
        let volume = VolumeDesc { min: [0.0; 3], max: [4.0, 4.0, 2.0], dims: [4, 4, 2] };
        let zeroed = || LightSums::zeroed(400_000, true, VolumeAccumulator::new(volume, Fixed::for_scene(1.0, 1.0)));
        // Words of every size, negative ones too, over several frames.
        let mut sums = zeroed();
        let words: Vec<u8> =
            (0..sums.word_count() as u64).flat_map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64 >> (i % 40)).to_le_bytes()).collect();
        sums.add_words(0, &words).unwrap();
        sums.flights = 12345;
        for parking in BOTH {
            let parked = ParkedSums::park(sums.clone(), parking).unwrap();
            let mut back = zeroed();
            parked.add_to(&mut back).unwrap();
            assert_eq!(back, sums, "{parking:?}");
        }
    }

    #[test]
    fn a_parked_tracer_unparks_to_the_same_tracer() {
        use crate::rays::{IndexedMesh, Ray};
        let positions: Vec<[f32; 3]> = (0..400).map(|i| [(i % 20) as f32, (i / 20) as f32, (i % 3) as f32 * 0.2]).collect();
        let indices: Vec<u32> = (0..19 * 19).flat_map(|c| [c / 19 * 20 + c % 19, c / 19 * 20 + c % 19 + 1, c / 19 * 20 + c % 19 + 20]).collect();
        let ray = Ray { origin: Vec3A::new(5.2, 7.1, 3.0), dir: Vec3A::new(0.01, 0.02, -1.0), tmin: 0.0, tmax: f32::INFINITY };
        for parking in BOTH {
            let bvh = crate::rays::Bvh::build_meshes(vec![IndexedMesh::new(&positions, &indices)], &[]).unwrap();
            let (memory, hit) = (bvh.memory(), bvh.intersect(&ray).map(|h| (h.t.to_bits(), h.tri)));
            assert!(hit.is_some());
            let parked = ParkedBvh::park(bvh, parking).unwrap();
            assert_eq!(matches!(parked, ParkedBvh::Written(..)), parking == Parking::InTempFile);
            let back = parked.unpark().unwrap();
            assert_eq!((back.memory(), back.intersect(&ray).map(|h| (h.t.to_bits(), h.tri))), (memory, hit), "{parking:?}");
        }
    }

    #[test]
    fn a_parked_volume_unparks_to_the_same_bits() {
        let cell = |i: usize| std::array::from_fn(|d| std::array::from_fn(|c| (i * 18 + d * 3 + c) as f32 * 0.37 - 5.0));
        let n = 3 * FRAME_VALUES / 18 + 7;
        let volume = IrradianceVolume {
            min: [0.0; 3],
            max: [1.0, 2.0, 3.0],
            dims: [n, 1, 1],
            ambient: (0..n).map(cell).collect(),
            direct: (0..n).map(|i| cell(i + 1)).collect(),
            air: (0..n).map(|i| (i % 3) as f32 / 2.0).collect(),
        };
        for parking in BOTH {
            let back = ParkedVolume::park(volume.clone(), parking).unwrap().unpark().unwrap();
            assert!(back == volume, "{parking:?}");
        }
    }
}
