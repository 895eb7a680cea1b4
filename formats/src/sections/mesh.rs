//! The terrain mesh section (`TMSH`): positions quantised to a global lattice, octahedral normals,
//! delta-coded indices, every stream split into byte planes so zstd sees runs of similar bytes.

use super::ByteReader;
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::Section;

/// The global quantisation lattice of a mesh's positions.
///
/// A position is stored as the integer `origin + q` (q a u16 per axis) and decoded as
/// `(origin + q) as f32 * step()`. Because the lattice is global (not per tile), a vertex on a border
/// shared by two tiles of the same level decodes to bit-identical floats from both packs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lattice {
    /// World units per voxel.
    pub voxel_size: f32,
    /// The lattice step is `voxel_size / 2^shift`.
    pub shift: u8,
    /// The tile's first lattice point, per axis.
    pub origin: [i32; 3],
}

/// Largest allowed lattice shift (2^20 steps per voxel is far below f32 precision anyway).
pub const MAX_LATTICE_SHIFT: u8 = 20;
/// Largest absolute lattice index: keeps `index as f32` exact and snapping reversible.
pub const MAX_LATTICE_INDEX: i64 = 1 << 22;

impl Lattice {
    /// World units between neighbouring lattice points (exact: a power-of-two division).
    pub fn step(&self) -> f32 {
        self.voxel_size / (1u32 << self.shift) as f32
    }
    /// The lattice index nearest to world coordinate `v`.
    pub fn index_of(&self, v: f32) -> i64 {
        (v / self.step()).round() as i64
    }
    /// The world coordinate of lattice index `i`.
    pub fn coord(&self, i: i64) -> f32 {
        i as f32 * self.step()
    }
    /// `p` moved to its nearest lattice point: what a round trip through a pack gives back.
    pub fn snap(&self, p: [f32; 3]) -> [f32; 3] {
        p.map(|v| self.coord(self.index_of(v)))
    }
}

/// A tile's terrain mesh, decoded. Triangles `[0, main_index_count)` are the surface proper;
/// the rest are skirts that hide cracks against coarser neighbours.
#[derive(Clone, Debug, PartialEq)]
pub struct TerrainMesh {
    /// The lattice the positions lie on.
    pub lattice: Lattice,
    /// World units; encode snaps them to `lattice`.
    pub positions: Vec<[f32; 3]>,
    /// Unit vectors pointing toward air.
    pub normals: Vec<[f32; 3]>,
    /// Triangle list (three indices into `positions` per triangle): the surface, then the skirts.
    pub indices: Vec<u32>,
    /// Indices of the surface proper, a multiple of 3; those after it are skirts.
    pub main_index_count: usize,
}

const HEADER_BYTES: usize = 32;

impl TerrainMesh {
    /// Triangles of the surface proper (skirts excluded).
    pub fn main_triangles(&self) -> impl Iterator<Item = [u32; 3]> + '_ {
        self.indices[..self.main_index_count].chunks_exact(3).map(|t| [t[0], t[1], t[2]])
    }
    /// Axis-aligned bounds of all vertices, or `None` if empty.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(lo, hi), p| {
            ([lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])], [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])])
        }))
    }
    pub(crate) fn summary(&self) -> super::Summary {
        let (lo, hi) = self.bounds().unwrap_or(([0.0; 3], [0.0; 3]));
        vec![
            ("vertices", self.positions.len().to_string()),
            ("triangles", (self.main_index_count / 3).to_string()),
            ("skirt_triangles", ((self.indices.len() - self.main_index_count) / 3).to_string()),
            ("bounds", format!("{lo:?}..{hi:?}")),
            ("lattice_step", format!("{}", self.lattice.step())),
        ]
    }
}

/// Octahedral encoding of a unit vector into two snorm16 values.
pub fn oct_encode(n: [f32; 3]) -> [i16; 2] {
    let l1 = n[0].abs() + n[1].abs() + n[2].abs();
    // NaN fails `is_finite`, so this also catches a NaN component.
    if !l1.is_finite() || l1 <= 0.0 {
        return [0, 0]; // decodes to +Z; a zero normal carries no direction to keep
    }
    let (mut x, mut y) = (n[0] / l1, n[1] / l1);
    if n[2] < 0.0 {
        let (ox, oy) = (x, y);
        x = (1.0 - oy.abs()) * ox.signum();
        y = (1.0 - ox.abs()) * oy.signum();
    }
    [(x.clamp(-1.0, 1.0) * 32767.0).round() as i16, (y.clamp(-1.0, 1.0) * 32767.0).round() as i16]
}

/// Inverse of [`oct_encode`]; always returns a unit vector.
pub fn oct_decode(e: [i16; 2]) -> [f32; 3] {
    let (mut x, mut y) = (e[0] as f32 / 32767.0, e[1] as f32 / 32767.0);
    let z = 1.0 - x.abs() - y.abs();
    if z < 0.0 {
        let (ox, oy) = (x, y);
        x = (1.0 - oy.abs()) * if ox >= 0.0 { 1.0 } else { -1.0 };
        y = (1.0 - ox.abs()) * if oy >= 0.0 { 1.0 } else { -1.0 };
    }
    let len = (x * x + y * y + z * z).sqrt();
    [x / len, y / len, z / len]
}

/// Appends `values` (already delta-coded) as byte planes: all byte 0s, then all byte 1s, ...
fn push_planes_u16(out: &mut Vec<u8>, values: &[u16]) {
    out.extend(values.iter().map(|v| *v as u8));
    out.extend(values.iter().map(|v| (*v >> 8) as u8));
}

fn delta_u16(values: impl Iterator<Item = u16>) -> Vec<u16> {
    let mut prev = 0u16;
    values
        .map(|v| {
            let d = v.wrapping_sub(prev);
            prev = v;
            d
        })
        .collect()
}

/// Positions and normals from their delta-coded byte planes, in one pass over the vertices.
fn decode_vertices(pos: &[u8], oct: &[u8], n: usize, lattice: &Lattice) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let step = lattice.step();
    let o = lattice.origin;
    fn plane(bytes: &[u8], k: usize, n: usize) -> &[u8] {
        &bytes[2 * k * n..2 * (k + 1) * n]
    }
    let (px, py, pz) = (plane(pos, 0, n), plane(pos, 1, n), plane(pos, 2, n));
    let (ox, oy) = (plane(oct, 0, n), plane(oct, 1, n));
    let at = |p: &[u8], i: usize| p[i] as u16 | (p[n + i] as u16) << 8;
    let mut positions = Vec::with_capacity(n);
    let mut normals = Vec::with_capacity(n);
    let (mut qx, mut qy, mut qz, mut ex, mut ey) = (0u16, 0u16, 0u16, 0u16, 0u16);
    for i in 0..n {
        qx = qx.wrapping_add(at(px, i));
        qy = qy.wrapping_add(at(py, i));
        qz = qz.wrapping_add(at(pz, i));
        positions.push([(o[0] + qx as i32) as f32 * step, (o[1] + qy as i32) as f32 * step, (o[2] + qz as i32) as f32 * step]);
        ex = ex.wrapping_add(at(ox, i));
        ey = ey.wrapping_add(at(oy, i));
        normals.push(oct_decode([ex as i16, ey as i16]));
    }
    (positions, normals)
}

/// Indices from zigzag-delta byte planes; checks every index against the vertex count.
fn decode_indices(bytes: &[u8], planes: usize, count: usize, vertices: usize) -> Result<Vec<u32>, FormatError> {
    // Missing high planes read as zero.
    let zeros = vec![0u8; if planes < 4 { count } else { 0 }];
    let plane = |k: usize| if k < planes { &bytes[k * count..(k + 1) * count] } else { &zeros[..] };
    let (b0, b1, b2, b3) = (plane(0), plane(1), plane(2), plane(3));
    let mut out = Vec::with_capacity(count);
    let mut prev = 0i32;
    let mut out_of_range = false;
    for i in 0..count {
        let z = b0[i] as u32 | (b1[i] as u32) << 8 | (b2[i] as u32) << 16 | (b3[i] as u32) << 24;
        prev = prev.wrapping_add((z >> 1) as i32 ^ -((z & 1) as i32));
        // Checked without a branch per index; reported after the loop.
        out_of_range |= prev as u32 >= vertices as u32;
        out.push(prev as u32);
    }
    if out_of_range {
        let (i, v) = out.iter().enumerate().find(|(_, &v)| v as usize >= vertices).map(|(i, &v)| (i, v)).unwrap_or((0, 0));
        return Err(bad(TerrainMesh::KIND, format!("index #{i} = {} out of range for {vertices} vertices", v as i32)));
    }
    Ok(out)
}

impl Section for TerrainMesh {
    const KIND: SectionKind = SectionKind(*b"TMSH");
    const REQUIRED: bool = false;

    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let err = |r: String| FormatError::Encode { section: Self::KIND, reason: r };
        let n = self.positions.len();
        if self.normals.len() != n {
            return Err(err(format!("{} normals for {n} positions", self.normals.len())));
        }
        if !self.indices.len().is_multiple_of(3) || !self.main_index_count.is_multiple_of(3) || self.main_index_count > self.indices.len() {
            return Err(err(format!("index count {} / main {} is not whole triangles", self.indices.len(), self.main_index_count)));
        }
        if let Some(i) = self.indices.iter().find(|&&i| i as usize >= n) {
            return Err(err(format!("index {i} out of range for {n} vertices")));
        }
        let l = &self.lattice;
        if l.shift > MAX_LATTICE_SHIFT || !(l.voxel_size.is_finite() && l.voxel_size > 0.0) {
            return Err(err(format!("bad lattice {l:?}")));
        }
        let mut q: [Vec<u16>; 3] = std::array::from_fn(|_| Vec::with_capacity(n));
        for p in &self.positions {
            for a in 0..3 {
                let offset = l.index_of(p[a]) - l.origin[a] as i64;
                if !(0..=u16::MAX as i64).contains(&offset) {
                    return Err(err(format!("position {p:?} lies outside the u16 range of lattice {l:?}")));
                }
                q[a].push(offset as u16);
            }
        }
        let mut out = Vec::with_capacity(HEADER_BYTES + 10 * n + 4 * self.indices.len());

        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&(self.indices.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.main_index_count as u32).to_le_bytes());
        // Indices: zigzag of the difference to the previous index, as byte planes; only as many planes
        // as the largest value needs (most tiles need two), so zstd has less to chew through.
        let mut prev = 0i32;
        let zz: Vec<u32> = self
            .indices
            .iter()
            .map(|&i| {
                let d = (i as i32).wrapping_sub(prev);
                prev = i as i32;
                ((d << 1) ^ (d >> 31)) as u32
            })
            .collect();
        let max = zz.iter().copied().max().unwrap_or(0);
        let index_planes = (4 - max.leading_zeros() / 8).max(1) as u8;
        out.extend_from_slice(&[l.shift, index_planes, 0, 0]);
        out.extend_from_slice(&l.voxel_size.to_le_bytes());
        for o in l.origin {
            out.extend_from_slice(&o.to_le_bytes());
        }
        for axis in &q {
            push_planes_u16(&mut out, &delta_u16(axis.iter().copied()));
        }
        let oct: Vec<[i16; 2]> = self.normals.iter().map(|&n| oct_encode(n)).collect();
        for c in 0..2 {
            push_planes_u16(&mut out, &delta_u16(oct.iter().map(|e| e[c] as u16)));
        }
        for b in 0..index_planes as usize {
            out.extend(zz.iter().map(|v| (v >> (8 * b)) as u8));
        }
        Ok(out)
    }

    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let kind = Self::KIND;
        let mut r = ByteReader::new(kind, raw);
        let n = r.u32()? as usize;
        let index_count = r.u32()? as usize;
        let main_index_count = r.u32()? as usize;
        let shift = r.u8()?;
        let index_planes = r.u8()? as usize;
        r.take(2)?;
        let voxel_size = r.f32()?;
        let origin = [r.i32()?, r.i32()?, r.i32()?];
        if !(1..=4).contains(&index_planes) {
            return Err(bad(kind, format!("index plane count {index_planes} is not 1..=4")));
        }
        let expected = HEADER_BYTES as u64 + 10 * n as u64 + index_planes as u64 * index_count as u64;
        if expected != raw.len() as u64 {
            return Err(bad(kind, format!("{n} vertices and {index_count} indices need {expected} bytes, section has {}", raw.len())));
        }
        if !index_count.is_multiple_of(3) || !main_index_count.is_multiple_of(3) || main_index_count > index_count {
            return Err(bad(kind, format!("index count {index_count} / main {main_index_count} is not whole triangles")));
        }
        if shift > MAX_LATTICE_SHIFT || !(voxel_size.is_finite() && voxel_size > 0.0) {
            return Err(bad(kind, format!("bad lattice: shift {shift}, voxel size {voxel_size}")));
        }
        if origin.iter().any(|&o| (o as i64).abs() > MAX_LATTICE_INDEX) {
            return Err(bad(kind, format!("lattice origin {origin:?} out of range")));
        }
        let lattice = Lattice { voxel_size, shift, origin };
        // The farthest point the header allows must be a finite float, so every position is.
        let reach = origin.iter().map(|&o| (o as i64).abs() + u16::MAX as i64).max().unwrap_or(0);
        if !(reach as f32 * lattice.step()).is_finite() {
            return Err(bad(kind, format!("lattice voxel size {voxel_size} makes positions non-finite")));
        }
        let pos_planes = r.take(6 * n)?;
        let oct_planes = r.take(4 * n)?;
        let index_bytes = r.take(index_planes * index_count)?;
        // Vertices and indices are independent streams: decode them on two threads for big meshes.
        let (vertices, indices) = if n + index_count > 1 << 16 {
            std::thread::scope(|s| {
                let idx = s.spawn(|| decode_indices(index_bytes, index_planes, index_count, n));
                let v = decode_vertices(pos_planes, oct_planes, n, &lattice);
                (v, idx.join().unwrap_or_else(|_| Err(bad(kind, "index decoder failed"))))
            })
        } else {
            (decode_vertices(pos_planes, oct_planes, n, &lattice), decode_indices(index_bytes, index_planes, index_count, n))
        };
        let (positions, normals) = vertices;
        let indices = indices?;
        debug_assert_eq!(r.remaining(), 0);
        Ok(TerrainMesh { lattice, positions, normals, indices, main_index_count })
    }
}
