//! Marching cubes: density blocks to welded, indexed triangle meshes.
//!
//! Conventions (see `grid.rs`): positive density is solid, the isolevel is 0. A corner is
//! **solid when `d > 0`** and air otherwise, so a sample exactly at the isolevel, and NaN, count
//! as air. Output is in global voxel units; multiply by the voxel size for world units.
//!
//! Properties the rest of the baker relies on:
//! - **Watertight.** The 256-case table (derived in `table.rs`) resolves ambiguous faces by a rule that
//!   reads only the face's four corner signs (solid diagonals connect), so cubes sharing a
//!   face agree on it, inside a range and across ranges.
//! - **Seamless tiles.** A vertex is computed only from its edge's two endpoints, always from
//!   the endpoint with the lower global coordinate, with the same float operations whatever
//!   range meshes it. Two tiles sharing a border produce bit-identical border vertices and
//!   normals, and the union of two adjacent ranges' triangles is exactly the triangles of
//!   their union.
//! - **Welded.** One vertex per crossed edge of the range, shared through a per-slice edge
//!   cache; vertices are numbered in first-use order during the sweep (Z, then Y, then X).
//! - **No degenerate triangles, also after quantisation.** Each triangle's three vertices sit on
//!   three different cube edges and the interpolation parameter is clamped to
//!   `[1/steps, 1 - 1/steps]`, where `steps` is the number of steps of the output lattice along
//!   one cell edge ([`march_into`]'s `edge_steps`). So vertices never coincide with a corner or
//!   with each other, and the table's fans never put three vertices on a line (proof in
//!   `table.rs`, which needs only each vertex strictly inside its edge). Because the margin is
//!   one whole lattice step and rounding to the nearest lattice point is monotonic, a clamped
//!   vertex rounds to a point at least one step inside its edge, never onto the corner: the
//!   promise holds for the quantised positions a pack stores, not only for these floats. In f32
//!   the margin survives while global coordinates stay below `2^23 / steps * stride` in
//!   magnitude (the f32 spacing there is one lattice step).
//! - **Winding and normals.** Triangles are counter-clockwise seen from air. Normals are the
//!   negated density gradient (central differences at both edge endpoints, interpolated with
//!   the vertex's parameter), so they point toward air; where that gradient vanishes or is not
//!   finite, the normal is the edge direction from its solid to its air endpoint.

mod table;
#[cfg(test)]
mod tests;

use crate::grid::DensityBlock;
use table::{CASES, EDGE_START};

/// An indexed triangle mesh in global voxel units (multiply by the voxel size for world units).
///
/// Triangles are `indices` in threes, counter-clockwise seen from air; `normals[i]` is the unit
/// normal of `positions[i]`, pointing toward air.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsoMesh {
    /// Vertex positions, global voxel units.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals toward air, one per position.
    pub normals: Vec<[f32; 3]>,
    /// Triangle list: three indices into `positions` per triangle.
    pub indices: Vec<u32>,
}

impl IsoMesh {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the mesh has no triangles.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// The cells to mesh: `cells` cubes along each axis, the first one's first corner at global
/// voxel `min`. The cube edge is the block's stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellRange {
    /// The first cell's lowest corner, global voxels.
    pub min: [i32; 3],
    /// Cells along X, Y and Z.
    pub cells: [usize; 3],
}

impl CellRange {
    /// The `origin` of the block [`march`] needs for this range at `stride`: one halo sample
    /// before `min` on every axis. `None` if that leaves the `i32` coordinate range.
    pub fn block_origin(&self, stride: i32) -> Option<[i32; 3]> {
        let o = |m: i32| m.checked_sub(stride);
        Some([o(self.min[0])?, o(self.min[1])?, o(self.min[2])?])
    }

    /// The `dims` of the block [`march`] needs: `cells + 1` corners plus one halo sample on
    /// each side. `None` on overflow.
    pub fn block_dims(&self) -> Option<[usize; 3]> {
        let d = |c: usize| c.checked_add(3);
        Some([d(self.cells[0])?, d(self.cells[1])?, d(self.cells[2])?])
    }
}

/// Why a block cannot be meshed over a range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MarchError {
    /// The block's stride (the cube edge, voxels) is zero or negative.
    #[error("block stride must be positive, got {0}")]
    BadStride(i32),
    /// The block does not start one halo sample before the range.
    #[error("block origin {found:?} must be range.min - stride = {expected:?}")]
    OriginMismatch {
        /// `range.min - stride`, global voxels.
        expected: [i64; 3],
        /// The block's origin.
        found: [i32; 3],
    },
    /// The block's sample counts are not the range's cells plus corners and halo.
    #[error("block dims {found:?} must be range.cells + 3 = {expected:?}")]
    DimsMismatch {
        /// `range.cells + 3` per axis.
        expected: [usize; 3],
        /// The block's dims.
        found: [usize; 3],
    },
    /// The block's sample buffer does not match its dims.
    #[error("block holds {found} samples but its dims need {expected}")]
    DataLength {
        /// The product of the block's dims.
        expected: usize,
        /// The samples it holds.
        found: usize,
    },
    /// The range's coordinates or its vertex count would overflow.
    #[error("range too large: its coordinates or vertex count overflow")]
    TooLarge,
    /// `edge_steps` is not a power of two of at least 2.
    #[error("lattice steps per cell edge must be a power of two of at least 2, got {0}")]
    BadEdgeSteps(u32),
}

/// Meshes the isosurface `density = 0` over `range`.
///
/// `block` must hold the range's cell corners plus one halo sample on every side (used for
/// gradients): `block.origin == range.min - stride` and `block.dims == range.cells + 3`
/// ([`CellRange::block_origin`], [`CellRange::block_dims`]). Anything else is an error, never
/// a panic. Deterministic: the same inputs give the same mesh, bit for bit.
pub fn march(block: &DensityBlock, range: &CellRange) -> Result<IsoMesh, MarchError> {
    let mut mesh = IsoMesh::default();
    march_into(block, range, DEFAULT_EDGE_STEPS, &mut mesh)?;
    Ok(mesh)
}

/// The lattice [`march`] keeps its vertices clear of: 1024 steps per cell edge.
pub const DEFAULT_EDGE_STEPS: u32 = 1024;

/// [`march`] into `mesh`, replacing its contents but keeping its allocations, with vertices kept
/// at least one step of a lattice of `edge_steps` steps per cell edge (a power of two, at least
/// 2) away from both ends of their edge, so rounding them onto that lattice keeps every triangle's
/// area and every vertex distinct.
///
/// For loops over many tiles: reusing one mesh per worker avoids growing and page-faulting
/// fresh output buffers for every tile, which costs as much as the meshing itself on large
/// ranges. On error `mesh` is left empty.
pub fn march_into(block: &DensityBlock, range: &CellRange, edge_steps: u32, mesh: &mut IsoMesh) -> Result<(), MarchError> {
    mesh.positions.clear();
    mesh.normals.clear();
    mesh.indices.clear();
    validate(block, range)?;
    if edge_steps < 2 || !edge_steps.is_power_of_two() {
        return Err(MarchError::BadEdgeSteps(edge_steps));
    }
    if range.cells.contains(&0) {
        return Ok(());
    }
    let mut sweep = Sweep::new(range.cells);
    // A power of two, so the margin and `1 - margin` are exact in f32.
    let mut emit = Emitter::new(block, range, 1.0 / edge_steps as f32, mesh);
    sweep.run(block, &mut emit);
    Ok(())
}

fn validate(block: &DensityBlock, range: &CellRange) -> Result<(), MarchError> {
    let stride = block.stride;
    if stride <= 0 {
        return Err(MarchError::BadStride(stride));
    }
    let expected_dims = range.block_dims().ok_or(MarchError::TooLarge)?;
    if block.dims != expected_dims {
        return Err(MarchError::DimsMismatch { expected: expected_dims, found: block.dims });
    }
    let samples = expected_dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or(MarchError::TooLarge)?;
    if block.data.len() != samples {
        return Err(MarchError::DataLength { expected: samples, found: block.data.len() });
    }
    let expected_origin = range.min.map(|m| i64::from(m) - i64::from(stride));
    if block.origin.map(i64::from) != expected_origin {
        return Err(MarchError::OriginMismatch { expected: expected_origin, found: block.origin });
    }
    // Every sample's global coordinate must be an i32 (the origin is, so check the far end).
    for (&o, &d) in block.origin.iter().zip(&block.dims) {
        let last = i64::from(o) + (d as i64 - 1) * i64::from(stride);
        if last > i64::from(i32::MAX) {
            return Err(MarchError::TooLarge);
        }
    }
    // Vertex ids are u32 and `u32::MAX` marks an empty cache slot: bound the edge count.
    let corners = range.cells.iter().try_fold(1u64, |n, &c| n.checked_mul(c as u64 + 1)).ok_or(MarchError::TooLarge)?;
    if corners.saturating_mul(3) >= u64::from(u32::MAX) {
        return Err(MarchError::TooLarge);
    }
    Ok(())
}

/// Empty edge-cache slot.
const NO_VERTEX: u32 = u32::MAX;

/// The per-cell case codes, computed one corner slice at a time.
///
/// Each corner's sign is classified once per slice; cells then combine neighbouring signs with
/// byte-wise shifts and ORs (auto-vectorised), and a 4-bit code of a slice is reused for the
/// cell layers on both sides of it.
struct Sweep {
    cells: [usize; 3],
    /// Corner signs of one slice, `(cells.x + 1) * (cells.y + 1)`, 1 = solid.
    signs: Vec<u8>,
    /// 4-bit codes of the cells' bottom (`lo`) and top (`hi`) corner squares, `cells.x * cells.y`.
    quad_lo: Vec<u8>,
    quad_hi: Vec<u8>,
    /// Case codes of one row of cells.
    case_row: Vec<u8>,
}

impl Sweep {
    fn new(cells: [usize; 3]) -> Self {
        let [cx, cy, _] = cells;
        Sweep { cells, signs: vec![0; (cx + 1) * (cy + 1)], quad_lo: vec![0; cx * cy], quad_hi: vec![0; cx * cy], case_row: vec![0; cx] }
    }

    /// Fills `quad` with the codes of corner slice `k`: bit 0 = corner (x, y), bit 1 = (x+1, y),
    /// bit 2 = (x, y+1), bit 3 = (x+1, y+1), matching the cube corner numbering.
    fn quad_codes(signs: &mut [u8], quad: &mut [u8], block: &DensityBlock, cells: [usize; 3], k: usize) {
        let cx = cells[0];
        let (w, nx, ny) = (cx + 1, block.dims[0], block.dims[1]);
        for (y, row) in signs.chunks_exact_mut(w).enumerate() {
            // Corner (x, y, k) is block sample (x + 1, y + 1, k + 1): skip the halo.
            let start = 1 + nx * ((y + 1) + ny * (k + 1));
            for (s, &d) in row.iter_mut().zip(&block.data[start..start + w]) {
                *s = u8::from(d > 0.0);
            }
        }
        for (y, out) in quad.chunks_exact_mut(cx).enumerate() {
            let (a, b) = (&signs[y * w..(y + 1) * w], &signs[(y + 1) * w..(y + 2) * w]);
            let corners = a[..cx].iter().zip(&a[1..]).zip(b[..cx].iter().zip(&b[1..]));
            for (q, ((&c0, &c1), (&c2, &c3))) in out.iter_mut().zip(corners) {
                *q = c0 | (c1 << 1) | (c2 << 2) | (c3 << 3);
            }
        }
    }

    fn run(&mut self, block: &DensityBlock, emit: &mut Emitter) {
        let [cx, cy, cz] = self.cells;
        Self::quad_codes(&mut self.signs, &mut self.quad_lo, block, self.cells, 0);
        for z in 0..cz {
            Self::quad_codes(&mut self.signs, &mut self.quad_hi, block, self.cells, z + 1);
            emit.begin_layer(z);
            for y in 0..cy {
                let (lo, hi) = (&self.quad_lo[y * cx..(y + 1) * cx], &self.quad_hi[y * cx..(y + 1) * cx]);
                for (c, (&l, &h)) in self.case_row.iter_mut().zip(lo.iter().zip(hi)) {
                    *c = l | (h << 4);
                }
                // Skip runs of 8 cells that are all air or all solid with one compare each.
                let chunks = self.case_row.chunks_exact(8);
                let tail_start = cx - chunks.remainder().len();
                for (i, chunk) in chunks.enumerate() {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(chunk);
                    let word = u64::from_ne_bytes(bytes);
                    if word == 0 || word == u64::MAX {
                        continue;
                    }
                    for (j, &case) in chunk.iter().enumerate() {
                        if case != 0 && case != 0xFF {
                            emit.cell(i * 8 + j, y, z, case);
                        }
                    }
                }
                for (x, &case) in self.case_row.iter().enumerate().skip(tail_start) {
                    if case != 0 && case != 0xFF {
                        emit.cell(x, y, z, case);
                    }
                }
            }
            emit.end_layer(z);
            std::mem::swap(&mut self.quad_lo, &mut self.quad_hi);
        }
    }
}

/// Creates welded vertices and triangles for the cells the sweep hands it.
struct Emitter<'a> {
    data: &'a [f32],
    /// Block sample steps along x, y, z.
    step: [usize; 3],
    min: [i32; 3],
    stride: i32,
    /// Edge parameters are kept this far from either endpoint (one output lattice step), so no
    /// vertex lands or rounds onto a corner.
    t_margin: f32,
    /// Corners per row of a slice (`cells.x + 1`) and per slice.
    row: usize,
    plane: usize,
    /// Vertex ids of crossed edges, five planes of corner slices: x-edges of the two slices
    /// bounding the current layer (by slice parity), y-edges likewise, and the layer's z-edges.
    cache: Vec<u32>,
    /// Per local edge, the cache offset of the current layer's plane plus the edge's corner offset.
    edge_slot: [usize; 12],
    mesh: &'a mut IsoMesh,
}

impl<'a> Emitter<'a> {
    fn new(block: &'a DensityBlock, range: &CellRange, t_margin: f32, mesh: &'a mut IsoMesh) -> Self {
        let (row, plane) = (range.cells[0] + 1, (range.cells[0] + 1) * (range.cells[1] + 1));
        Emitter {
            data: &block.data,
            step: [1, block.dims[0], block.dims[0] * block.dims[1]],
            min: range.min,
            stride: block.stride,
            t_margin,
            row,
            plane,
            cache: vec![NO_VERTEX; 5 * plane],
            edge_slot: [0; 12],
            mesh,
        }
    }

    fn begin_layer(&mut self, z: usize) {
        for (e, slot) in self.edge_slot.iter_mut().enumerate() {
            let s = usize::from(EDGE_START[e]);
            let (dx, dy, dz) = (s & 1, (s >> 1) & 1, s >> 2);
            let plane = match e / 4 {
                0 => (z + dz) & 1,
                1 => 2 + ((z + dz) & 1),
                _ => 4,
            };
            *slot = plane * self.plane + dx + dy * self.row;
        }
    }

    /// Retires corner slice `z` (layer `z + 1` needs slices `z + 1` and `z + 2`) and the
    /// layer's z-edges, so their cache planes can be reused.
    fn end_layer(&mut self, z: usize) {
        let p = self.plane;
        let parity = z & 1;
        self.cache[parity * p..(parity + 1) * p].fill(NO_VERTEX);
        self.cache[(2 + parity) * p..(3 + parity) * p].fill(NO_VERTEX);
        self.cache[4 * p..].fill(NO_VERTEX);
    }

    /// Emits the triangles of cell `(x, y, z)` (range-local) with corner-sign `case`.
    #[inline]
    fn cell(&mut self, x: usize, y: usize, z: usize, case: u8) {
        let case = &CASES[usize::from(case)];
        let corner = x + y * self.row;
        let mut ids = [0u32; 12];
        let mut edges = case.edges;
        while edges != 0 {
            let e = edges.trailing_zeros() as usize;
            edges &= edges - 1;
            let slot = self.edge_slot[e] + corner;
            let mut id = self.cache[slot];
            if id == NO_VERTEX {
                id = self.new_vertex(e, x, y, z);
                self.cache[slot] = id;
            }
            ids[e] = id;
        }
        for t in &case.tris[..usize::from(case.ntris)] {
            self.mesh.indices.extend_from_slice(&[ids[usize::from(t[0])], ids[usize::from(t[1])], ids[usize::from(t[2])]]);
        }
    }

    /// Central-difference gradient at block sample `i` (unscaled: only its direction is used).
    #[inline]
    fn gradient(&self, i: usize) -> [f32; 3] {
        let d = self.data;
        self.step.map(|s| d[i + s] - d[i - s])
    }

    /// Creates the vertex on local edge `e` of cell `(x, y, z)` and returns its id.
    ///
    /// Everything is computed from the edge's lower-coordinate endpoint `a` and its upper
    /// endpoint `b` with a fixed sequence of operations on global values, so any range that
    /// contains the edge produces the same bits.
    fn new_vertex(&mut self, e: usize, x: usize, y: usize, z: usize) -> u32 {
        let s = usize::from(EDGE_START[e]);
        let axis = e / 4;
        let c = [x + (s & 1), y + ((s >> 1) & 1), z + (s >> 2)];
        // Corner c is block sample c + 1 on each axis.
        let ia = (c[0] + 1) * self.step[0] + (c[1] + 1) * self.step[1] + (c[2] + 1) * self.step[2];
        let ib = ia + self.step[axis];
        let (da, db) = (self.data[ia], self.data[ib]);

        // Exactly one endpoint is solid (`d > 0`), so `da - db` is positive unless a NaN is involved.
        let t = da / (da - db);
        let t = if t.is_nan() { 0.5 } else { t.clamp(self.t_margin, 1.0 - self.t_margin) };

        // Validation guarantees these global coordinates fit in i32, so the f32 rounding is the
        // same as for an i32 coordinate.
        let mut pos = [0f32; 3];
        for (k, p) in pos.iter_mut().enumerate() {
            *p = (i64::from(self.min[k]) + c[k] as i64 * i64::from(self.stride)) as f32;
        }
        pos[axis] += t * self.stride as f32;

        let (ga, gb) = (self.gradient(ia), self.gradient(ib));
        let g = [0, 1, 2].map(|k| ga[k] + t * (gb[k] - ga[k]));
        let len2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        let normal = if len2.is_finite() && len2 > 1e-30 {
            let inv = -1.0 / len2.sqrt();
            g.map(|v| v * inv)
        } else {
            // No usable gradient: point along the edge from its solid to its air endpoint.
            let mut n = [0f32; 3];
            n[axis] = if da > 0.0 { 1.0 } else { -1.0 };
            n
        };

        let id = self.mesh.positions.len() as u32;
        self.mesh.positions.push(pos);
        self.mesh.normals.push(normal);
        id
    }
}
