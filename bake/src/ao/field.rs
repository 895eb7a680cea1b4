//! The occupancy volume and its Chebyshev distance field, the acceleration structure of the AO march.

use rayon::prelude::*;

use super::AoError;

/// Largest accepted volume dimension. Bounds the field's memory and keeps every coordinate a ray
/// can reach exactly representable in `f32` and far from `i32` overflow.
pub const MAX_DIM: usize = 4096;

/// Distances saturate here (they are stored in a `u8`); a capped distance is still a valid lower
/// bound, so it only shortens a skip, never breaks it.
const DIST_CAP: u8 = u8::MAX;

/// Solid/air occupancy of a whole volume plus its Chebyshev distance field for empty-space skipping.
///
/// One byte per voxel: the L∞ distance to the nearest solid voxel or to the ground plane `z = −1`,
/// capped at 255; 0 means solid. The 512×512×64 default world takes 16 MiB.
///
/// Stored tiled rather than X-fastest, because AO rays leave in every direction: 4×4×4 bricks
/// of one 64-byte cache line each, grouped 4×4×4 into 4 KiB pages, so a ray's next samples are
/// usually in a line or page it already touched. The index is a sum of per-axis table entries, so
/// it costs no more than the linear one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OccupancyField {
    dims: [usize; 3],
    /// `axis_offset[a][c]`: the contribution of coordinate `c < dims[a]` on axis `a` to a voxel's
    /// index in `dist`, which covers the dims rounded up to whole pages.
    axis_offset: [Vec<usize>; 3],
    dist: Vec<u8>,
}

/// Voxels per brick and per page edge.
const LEVELS: usize = 2;
const PAGE: usize = 1 << (2 * LEVELS);

impl OccupancyField {
    /// The field of a `dims`-sized volume whose voxel `(x, y, z)` is solid iff
    /// `densities[x + nx·(y + ny·z)] > 0` (NaN is air). Builds the distance field in O(N).
    pub fn from_densities(dims: [usize; 3], densities: &[f32]) -> Result<Self, AoError> {
        Self::from_solid(dims, densities, |d| *d > 0.0)
    }

    /// Like [`from_densities`](Self::from_densities) with an explicit per-voxel solid flag.
    pub fn from_occupancy(dims: [usize; 3], solid: &[bool]) -> Result<Self, AoError> {
        Self::from_solid(dims, solid, |s| *s)
    }

    fn from_solid<T: Sync>(dims: [usize; 3], data: &[T], solid: impl Fn(&T) -> bool + Sync) -> Result<Self, AoError> {
        if dims.iter().any(|&n| n == 0 || n > MAX_DIM) {
            return Err(AoError::BadDims { dims });
        }
        let expected = dims[0] * dims[1] * dims[2];
        if data.len() != expected {
            return Err(AoError::DensityCount { dims, expected, actual: data.len() });
        }
        let linear = chebyshev_transform(dims, |i| solid(&data[i]));
        Ok(Self::tile(dims, &linear))
    }

    /// Reorders an X-fastest distance volume into the tiled layout, one page per rayon task.
    fn tile(dims: [usize; 3], linear: &[u8]) -> Self {
        let pages = dims.map(|n| n.div_ceil(PAGE));
        let page_stride = [PAGE * PAGE * PAGE, PAGE * PAGE * PAGE * pages[0], PAGE * PAGE * PAGE * pages[0] * pages[1]];
        let axis_offset: [Vec<usize>; 3] = std::array::from_fn(|a| {
            (0..dims[a])
                .map(|c| {
                    let in_page: usize = (0..LEVELS).map(|l| ((c >> (2 * l)) & 3) << (6 * l + 2 * a)).sum();
                    in_page + (c / PAGE) * page_stride[a]
                })
                .collect()
        });
        let [nx, ny, nz] = dims;
        let mut dist = vec![0u8; page_stride[2] * pages[2]];
        dist.par_chunks_mut(PAGE * PAGE * PAGE).enumerate().for_each(|(p, page)| {
            let origin = [p % pages[0], (p / pages[0]) % pages[1], p / (pages[0] * pages[1])].map(|c| c * PAGE);
            for z in origin[2]..(origin[2] + PAGE).min(nz) {
                for y in origin[1]..(origin[1] + PAGE).min(ny) {
                    let row = &linear[nx * (y + ny * z)..];
                    // Offsets of the first PAGE coordinates are exactly the in-page parts.
                    let base = axis_offset[1][y - origin[1]] + axis_offset[2][z - origin[2]];
                    for x in origin[0]..(origin[0] + PAGE).min(nx) {
                        page[base + axis_offset[0][x - origin[0]]] = row[x];
                    }
                }
            }
        });
        OccupancyField { dims, axis_offset, dist }
    }

    /// The volume size in voxels.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Whether voxel `(x, y, z)` is solid. Outside the volume, everything below `z = 0` is solid
    /// ground and everything else is air.
    pub fn is_solid(&self, x: i32, y: i32, z: i32) -> bool {
        z < 0 || self.index([x, y, z]).is_some_and(|i| self.dist[i] == 0)
    }

    /// The L∞ distance from voxel `(x, y, z)` to the nearest solid voxel or the ground, capped at
    /// 255 (0 = solid); `None` outside the volume.
    pub fn chebyshev_distance(&self, x: i32, y: i32, z: i32) -> Option<u8> {
        self.index([x, y, z]).map(|i| self.dist[i])
    }

    /// The heap memory the field holds, in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.dist.len() + self.axis_offset.iter().map(|t| t.len() * std::mem::size_of::<usize>()).sum::<usize>()
    }

    #[inline]
    fn index(&self, v: [i32; 3]) -> Option<usize> {
        // The tables are exactly dims long, so their lookups are the bounds check; negative
        // coordinates wrap to huge unsigned values and fail it too.
        let [tx, ty, tz] = &self.axis_offset;
        Some(tx.get(v[0] as u32 as usize)? + ty.get(v[1] as u32 as usize)? + tz.get(v[2] as u32 as usize)?)
    }

    /// The storage index of a voxel known to lie inside the volume.
    #[inline]
    pub(crate) fn index_inside(&self, v: [i32; 3]) -> usize {
        let [tx, ty, tz] = &self.axis_offset;
        tx[v[0] as usize] + ty[v[1] as usize] + tz[v[2] as usize]
    }

    /// The distance stored at an index from [`index_inside`](Self::index_inside) (0 = solid).
    #[inline]
    pub(crate) fn distance_at(&self, index: usize) -> u8 {
        self.dist[index]
    }
}

/// The exact L∞ distance to the nearest solid voxel or the ground (a solid layer at `z = −1`),
/// capped at 255, by two raster passes of the 26-neighbour mask (Rosenfeld & Pfaltz).
///
/// Why two passes are exact: between a source `s` and a voxel `t` there is a 26-connected path of
/// `L∞(t − s)` unit steps whose per-axis components all have the sign of `t − s` (or are 0), so
/// it stays inside their bounding box, hence inside the volume. Every nonzero step is either
/// forward or backward in raster order (Z, then Y, then X), and steps commute, so the forward
/// steps can all come first: the forward pass finds the best path made of forward steps, and the
/// backward pass extends those by backward steps. Saturating at 255 commutes with the `min`s.
///
/// Each voxel costs a few byte ops; all but the final in-row scan (`d[x]` needs `d[x ∓ 1]`)
/// vectorise. The passes are inherently sequential, but at ~1 ns per voxel and pass this is
/// several times faster on one core than separable max-min passes (Meijster et al.) on two.
fn chebyshev_transform(dims: [usize; 3], solid: impl Fn(usize) -> bool) -> Vec<u8> {
    let [nx, ny, nz] = dims;
    let slice = nx * ny;
    let mut dist = vec![0u8; slice * nz];
    // `near[y·nx + x]`: min over the 3×3 neighbours of (x, y) in the previous slice of the pass.
    // Before the first forward slice that slice is the ground, all zeros.
    let mut near = vec![0u8; slice];
    let mut rows3 = vec![0u8; slice];
    let mut m = vec![0u8; nx];
    for z in 0..nz {
        let cur = &mut dist[z * slice..(z + 1) * slice];
        for y in 0..ny {
            let (before, row) = cur.split_at_mut(y * nx);
            let row = &mut row[..nx];
            m.copy_from_slice(&near[y * nx..(y + 1) * nx]);
            if y > 0 {
                min3_into(&before[(y - 1) * nx..], &mut m);
            }
            let base = z * slice + y * nx;
            let mut left = DIST_CAP;
            for (x, (d, &mx)) in row.iter_mut().zip(&m).enumerate() {
                *d = if solid(base + x) { 0 } else { mx.min(left).saturating_add(1) };
                left = *d;
            }
        }
        neighbourhood_min(cur, nx, &mut rows3, &mut near);
    }
    // Nothing solid lies above the volume.
    near.fill(DIST_CAP);
    for z in (0..nz).rev() {
        let cur = &mut dist[z * slice..(z + 1) * slice];
        for y in (0..ny).rev() {
            let (row, after) = cur.split_at_mut((y + 1) * nx);
            let row = &mut row[y * nx..];
            m.copy_from_slice(&near[y * nx..(y + 1) * nx]);
            if y + 1 < ny {
                min3_into(&after[..nx], &mut m);
            }
            let mut right = DIST_CAP;
            for (d, &mx) in row.iter_mut().zip(&m).rev() {
                *d = (*d).min(mx.min(right).saturating_add(1));
                right = *d;
            }
        }
        neighbourhood_min(cur, nx, &mut rows3, &mut near);
    }
    dist
}

/// `m[x] = min(m[x], src[x − 1], src[x], src[x + 1])`, ignoring neighbours outside the row.
fn min3_into(src: &[u8], m: &mut [u8]) {
    let n = m.len();
    let src = &src[..n];
    if n == 1 {
        m[0] = m[0].min(src[0]);
        return;
    }
    m[0] = m[0].min(src[0]).min(src[1]);
    m[n - 1] = m[n - 1].min(src[n - 2]).min(src[n - 1]);
    for (((d, &a), &b), &c) in m[1..n - 1].iter_mut().zip(&src[..n - 2]).zip(&src[1..n - 1]).zip(&src[2..]) {
        *d = (*d).min(a).min(b).min(c);
    }
}

/// `out[y·nx + x]` = min of `plane` over the 3×3 neighbourhood of (x, y) clipped to the plane.
fn neighbourhood_min(plane: &[u8], nx: usize, rows3: &mut [u8], out: &mut [u8]) {
    rows3.fill(DIST_CAP);
    for (src, dst) in plane.chunks_exact(nx).zip(rows3.chunks_exact_mut(nx)) {
        min3_into(src, dst);
    }
    let ny = plane.len() / nx;
    for y in 0..ny {
        let dst = &mut out[y * nx..(y + 1) * nx];
        dst.copy_from_slice(&rows3[y * nx..(y + 1) * nx]);
        for ny_ in [y.wrapping_sub(1), y + 1] {
            if ny_ < ny {
                for (d, &s) in dst.iter_mut().zip(&rows3[ny_ * nx..(ny_ + 1) * nx]) {
                    *d = (*d).min(s);
                }
            }
        }
    }
}
