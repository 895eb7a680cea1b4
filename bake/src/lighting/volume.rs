//! The irradiance volume: directional irradiance over a grid, for lighting things that are not
//! part of the mesh (trees, grass, moving objects).
//!
//! Estimator: every free-space segment of every light path adds `power · length · max(0, -d·n)`
//! to each cell it crosses, for the six axis normals n (track-length estimator). Divided by the
//! cell's *air* volume this is, in expectation, the irradiance a small surface with normal n
//! would receive, averaged over the air in the cell. Cells that are mostly rock (less than
//! [`MIN_AIR`] air) take the mean of their valid neighbours instead, so interpolation next to
//! walls reads light from the open side rather than black.

use super::fixed::{self, Fixed};
use super::words::{SplitWords, WordsMut};
use crate::rays::{Bvh, Ray};
use glam::Vec3A;
use rayon::prelude::*;

/// Cells with a smaller air fraction are filled from neighbours.
pub const MIN_AIR: f32 = 0.2;
/// Vertical sample lines per cell column, per axis (2 → 4 lines).
const LINES: usize = 2;
/// Where the sample lines sit in their share of the column. Not 0.5: with cells of four voxels
/// that would put every line on the voxel lattice, through the mesh's vertices and edges, and
/// whether a line through an edge struck the front or the back of the rock then depended on
/// which of the edge's triangles the BVH tested first (a different tree gave a different air
/// fraction in some columns).
const LINE_OFFSET: f32 = 0.3618;
/// Per bin order: +X, -X, +Y, -Y, +Z, -Z (the normal of the receiving surface).
pub(crate) const BINS: usize = 6;
/// Slabs of Y rows the accumulation is split into (at most). A segment pays a clip and a walk
/// set-up in every slab it crosses: 16 slabs took 10 % less time than 32 on the default world
/// (two cores), although a slab then outgrows the L2 cache. A walk restarts at each slab's
/// edge, so the slab count moves cell sums by rounding (it depends on the grid, never on threads).
const SLABS: usize = 16;

/// Where the volume lies and how finely it is divided.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct VolumeDesc {
    /// World-space corner with the lowest coordinates.
    pub min: [f32; 3],
    /// World-space corner with the highest coordinates.
    pub max: [f32; 3],
    /// Cells per axis; a zero anywhere means "no volume".
    pub dims: [usize; 3],
}

/// Directional irradiance per cell, stored X fastest, then Y, then Z.
///
/// For each cell, six RGB values: the irradiance received by a surface facing +X, -X, +Y, -Y,
/// +Z, -Z (in that order), averaged over the cell's air. [`IrradianceVolume::sample`]
/// interpolates and evaluates any normal as Σ n_a²·E(±a) ("ambient cube").
#[derive(Clone, Debug, PartialEq)]
pub struct IrradianceVolume {
    /// World-space corner with the lowest coordinates, as in its [`VolumeDesc`].
    pub min: [f32; 3],
    /// World-space corner with the highest coordinates.
    pub max: [f32; 3],
    /// Cells per axis; each per-cell vector holds their product of entries.
    pub dims: [usize; 3],
    /// Sky light and every bounce (what a renderer cannot do dynamically).
    pub ambient: Vec<[[f32; 3]; 6]>,
    /// Light straight from the sun, moon and static lights (unshadowed paths only); empty in a
    /// volume that keeps only the ambient part, which then has no direct light.
    pub direct: Vec<[[f32; 3]; 6]>,
    /// Fraction of each cell that is air, in [0, 1], from vertical sample lines.
    pub air: Vec<f32>,
}

/// A recorded free-space segment of a light path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub(crate) origin: Vec3A,
    /// Unit direction.
    pub(crate) dir: Vec3A,
    /// End parameter (infinite when the path leaves the scene).
    pub(crate) t_end: f32,
    pub(crate) power: [f32; 3],
    /// 0 = ambient, 1 = direct.
    pub(crate) class: u8,
}

/// Per-cell sums in fixed units (see `fixed.rs`), one array per class, cells stored Y-major
/// (`x + nx·(z + nz·y)`), each cell's words `[bin][channel]`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VolumeAccumulator {
    desc: VolumeDesc,
    cell: Vec3A,
    fixed: Fixed,
    /// `sums[class]`, for class 0 (ambient) and 1 (direct), in blocks of one Y row of cells (the
    /// accumulation writes whole slabs of rows).
    sums: [SplitWords; 2],
}

/// Words of a cell's sums of one class.
const CELL_WORDS: usize = BINS * 3;

impl VolumeAccumulator {
    pub(crate) fn new(desc: VolumeDesc, fixed: Fixed) -> Self {
        let n = desc.dims.iter().product::<usize>();
        let cell = (Vec3A::from(desc.max) - Vec3A::from(desc.min)) / Vec3A::from(desc.dims.map(|d| d.max(1) as f32));
        let row = desc.dims[0] * desc.dims[2] * CELL_WORDS;
        let sums = [0, 1].map(|_| SplitWords::zeroed(n * CELL_WORDS, row));
        VolumeAccumulator { desc, cell, fixed, sums }
    }

    /// Cells of the volume.
    pub(crate) fn cells(&self) -> usize {
        self.sums[0].len() / CELL_WORDS
    }

    /// The sums of each class: ambient cells, then direct cells.
    pub(crate) fn sums(&self) -> [&SplitWords; 2] {
        let [ambient, direct] = &self.sums;
        [ambient, direct]
    }

    /// [`VolumeAccumulator::sums`], to write.
    pub(crate) fn sums_mut(&mut self) -> [&mut SplitWords; 2] {
        let [ambient, direct] = &mut self.sums;
        [ambient, direct]
    }

    /// Cell `i`'s sums of class `class`, `[bin][channel]`.
    fn cell_sums(&self, class: usize, i: usize) -> [[i64; 3]; BINS] {
        let w = self.sums[class].run::<CELL_WORDS>(i * CELL_WORDS);
        std::array::from_fn(|b| [w[3 * b], w[3 * b + 1], w[3 * b + 2]])
    }

    /// Where the slabs of Y rows lie, to list segments by slab (see [`VolumeSlab`]).
    pub(crate) fn slab_layout(&self) -> SlabLayout {
        let ny = self.desc.dims[1];
        let rows = ny.div_ceil(SLABS).max(1);
        let slabs = if self.sums[0].is_empty() { 0 } else { ny.div_ceil(rows) };
        SlabLayout { desc: self.desc, cell: self.cell, rows, slabs }
    }

    /// The sums in slabs of Y rows, each added to on its own (the accumulator is stored Y-major,
    /// so a slab is contiguous and stays in cache while its segments are walked).
    pub(crate) fn slabs_mut(&mut self) -> Vec<VolumeSlab<'_>> {
        let layout = self.slab_layout();
        if layout.slabs == 0 {
            return Vec::new();
        }
        let (ny, scale) = (self.desc.dims[1], self.fixed.volume_scale());
        let [ambient, direct] = &mut self.sums;
        ambient
            .pieces_mut(layout.rows)
            .zip(direct.pieces_mut(layout.rows))
            .enumerate()
            .map(|(slab, (ambient, direct))| {
                let rows = (slab * layout.rows, ((slab + 1) * layout.rows).min(ny));
                VolumeSlab { slab, rows, layout, scale, ambient, direct }
            })
            .collect()
    }

    /// Adds the segments of every part: each part listed by slab, then each slab's segments
    /// walked, in parallel over parts and then over slabs. Light transport does the same steps
    /// itself, spread over its own work items (see `transport.rs`).
    #[cfg(test)]
    pub(crate) fn add(&mut self, parts: &[&[Segment]]) {
        let layout = self.slab_layout();
        let lists: Vec<SlabLists> = parts.par_iter().map(|p| layout.list(p)).collect();
        self.slabs_mut().into_par_iter().for_each(|mut slab| {
            for (part, lists) in parts.iter().zip(&lists) {
                slab.add(part, lists);
            }
        });
    }

    /// Normalises by air volume and fills rock cells. `top` is a height above all geometry.
    /// Takes the sums so that they are freed before the rock cells are filled from copies.
    pub(crate) fn finish(self, bvh: &Bvh, lit_triangles: u32, top: f32, eps: f32) -> IrradianceVolume {
        let desc = self.desc;
        let air = air_fraction(&desc, self.cell, bvh, lit_triangles, top, eps);
        let volume = self.cell.element_product();
        let n = self.cells();
        let mut ambient = vec![[[0.0f32; 3]; 6]; n];
        let mut direct = vec![[[0.0f32; 3]; 6]; n];
        let mut valid: Vec<bool> = air.par_iter().map(|&a| a >= MIN_AIR).collect();
        let [nx, ny, nz] = desc.dims;
        // Every cell on its own, on every thread: the same arithmetic per cell as one walk.
        ambient.par_iter_mut().zip(direct.par_iter_mut()).enumerate().filter(|&(i, _)| valid[i]).for_each(|(i, (ambient, direct))| {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            let j = x + nx * (z + nz * y);
            let inv = 1.0 / (volume * air[i]);
            let (a, d) = (self.cell_sums(0, j), self.cell_sums(1, j));
            for b in 0..BINS {
                for c in 0..3 {
                    ambient[b][c] = self.fixed.volume_value(a[b][c]) * inv;
                    direct[b][c] = self.fixed.volume_value(d[b][c]) * inv;
                }
            }
        });
        drop(self.sums);
        // Two rounds of filling reach every cell that trilinear interpolation at an air point
        // can touch; deeper rock stays zero. Each round reads only the one before.
        for _ in 0..2 {
            let mut next_valid = valid.clone();
            let (amb_prev, dir_prev) = (ambient.clone(), direct.clone());
            let cells = ambient.par_iter_mut().zip(direct.par_iter_mut()).zip(next_valid.par_iter_mut());
            cells.enumerate().filter(|&(i, _)| !valid[i]).for_each(|(i, ((ambient, direct), next_valid))| {
                let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
                let mut count = 0.0f32;
                let (mut a, mut d) = ([[0.0f32; 3]; 6], [[0.0f32; 3]; 6]);
                let neighbours = [
                    (x > 0).then(|| i - 1),
                    (x + 1 < nx).then(|| i + 1),
                    (y > 0).then(|| i - nx),
                    (y + 1 < ny).then(|| i + nx),
                    (z > 0).then(|| i - nx * ny),
                    (z + 1 < nz).then(|| i + nx * ny),
                ];
                for j in neighbours.into_iter().flatten().filter(|&j| valid[j]) {
                    count += 1.0;
                    for b in 0..BINS {
                        for c in 0..3 {
                            a[b][c] += amb_prev[j][b][c];
                            d[b][c] += dir_prev[j][b][c];
                        }
                    }
                }
                if count > 0.0 {
                    *ambient = a.map(|v| v.map(|x| x / count));
                    *direct = d.map(|v| v.map(|x| x / count));
                    *next_valid = true;
                }
            });
            valid = next_valid;
        }
        IrradianceVolume { min: desc.min, max: desc.max, dims: desc.dims, ambient, direct, air }
    }
}

/// Adds `v` rounded to words `at..at + 3`.
#[inline]
fn add_rounded(out: &mut WordsMut, at: usize, v: Vec3A) {
    for c in 0..3 {
        out.add(at + c, fixed::round(v[c]));
    }
}

/// Per-axis reciprocal of a direction, ±1e30 for components too small to divide by: those
/// axes then never bound the range nor step (their crossings lie beyond any clipped end).
#[inline]
fn recip(d: Vec3A) -> Vec3A {
    let tiny = d.abs().cmplt(Vec3A::splat(1e-12));
    Vec3A::select(tiny, Vec3A::splat(1e30).copysign(d), Vec3A::ONE / d)
}

/// The segment's parameter range inside the box of `desc` restricted to Y rows
/// `[rows.0, rows.1)`, or `None` when it misses. `inv` is `recip(s.dir)`.
#[inline]
fn clip(desc: &VolumeDesc, cell: Vec3A, s: &Segment, inv: Vec3A, rows: (usize, usize)) -> Option<(f32, f32)> {
    let mut box_lo = Vec3A::from(desc.min);
    let mut box_hi = Vec3A::from(desc.max);
    box_lo.y = desc.min[1] + rows.0 as f32 * cell.y;
    if rows.1 < desc.dims[1] {
        box_hi.y = desc.min[1] + rows.1 as f32 * cell.y;
    }
    let (t0, t1) = ((box_lo - s.origin) * inv, (box_hi - s.origin) * inv);
    let ta = t0.min(t1).max_element().max(0.0);
    let tb = t0.max(t1).min_element().min(s.t_end);
    (ta < tb).then_some((ta, tb))
}

/// Where the accumulator's slabs of Y rows lie: what listing segments by slab needs, apart from
/// the sums themselves.
#[derive(Clone, Copy)]
pub(crate) struct SlabLayout {
    desc: VolumeDesc,
    cell: Vec3A,
    /// Y rows per slab.
    rows: usize,
    /// Slabs; 0 for an empty volume.
    slabs: usize,
}

impl SlabLayout {
    /// Lists `segments` by the slabs they cross (indices into `segments`). Which slab a crossing
    /// falls in depends on the grid alone.
    pub(crate) fn list(&self, segments: &[Segment]) -> SlabLists {
        let mut lists = vec![Vec::new(); self.slabs];
        if self.slabs > 0 {
            for (k, s) in segments.iter().enumerate() {
                if let Some((r0, r1)) = row_span(&self.desc, self.cell, s) {
                    for list in &mut lists[r0 / self.rows..=r1 / self.rows] {
                        list.push(k as u32);
                    }
                }
            }
        }
        SlabLists(lists)
    }
}

/// A list of segments (indices) per slab, made by [`SlabLayout::list`].
#[derive(Default)]
pub(crate) struct SlabLists(Vec<Vec<u32>>);

/// One slab of Y rows of the accumulator, added to on its own: only the segment indices are
/// buffered between listing and walking, not every cell crossing. The sums are exact, so they
/// are bit-identical for any thread count and any split of the segments into parts.
pub(crate) struct VolumeSlab<'a> {
    slab: usize,
    /// Y rows `[rows.0, rows.1)`.
    rows: (usize, usize),
    layout: SlabLayout,
    scale: f32,
    ambient: WordsMut<'a>,
    direct: WordsMut<'a>,
}

impl VolumeSlab<'_> {
    /// Adds the segments of `segments` that `lists` lists in this slab, each clipped to its rows.
    pub(crate) fn add(&mut self, segments: &[Segment], lists: &SlabLists) {
        let Some(list) = lists.0.get(self.slab) else { return };
        let (desc, cell) = (self.layout.desc, self.layout.cell);
        for &i in list {
            let s = &segments[i as usize];
            let out = if s.class == 0 { &mut self.ambient } else { &mut self.direct };
            // Per axis: the bin the light lands in (moving toward +a lands on surfaces facing -a)
            // and the power per unit length it adds there, in fixed units.
            let power = Vec3A::from(s.power) * self.scale;
            let [(b0, p0), (b1, p1), (b2, p2)] = [0, 1, 2].map(|a| {
                let d = s.dir[a];
                (2 * a + (d > 0.0) as usize, power * d.abs())
            });
            traverse(&desc, cell, s, self.rows, |index, len| {
                let at = index * CELL_WORDS;
                add_rounded(out, at + 3 * b0, p0 * len);
                add_rounded(out, at + 3 * b1, p1 * len);
                add_rounded(out, at + 3 * b2, p2 * len);
            });
        }
    }
}

/// The first and last Y rows the segment crosses inside the box.
fn row_span(desc: &VolumeDesc, cell: Vec3A, s: &Segment) -> Option<(usize, usize)> {
    let (ta, tb) = clip(desc, cell, s, recip(s.dir), (0, desc.dims[1]))?;
    let row = |t: f32| (((s.origin.y + s.dir.y * t - desc.min[1]) / cell.y).floor().max(0.0) as usize).min(desc.dims[1] - 1);
    let (a, b) = (row(ta), row(tb));
    Some((a.min(b), a.max(b)))
}

/// Visits the cells of `desc` in Y rows `[rows.0, rows.1)` crossed by segment `s`, with the
/// length inside each (3D DDA, Amanatides & Woo). Cells are given by their index in the slab
/// stored Y-major from row `rows.0` (`x + nx·(z + nz·(y - rows.0))`).
///
/// Each axis's state lives in its own scalar rather than in arrays indexed by the axis chosen at
/// each step: indexing forced them through memory, and the loop then waited on store-to-load
/// forwarding at every crossing (it was most of the volume's cost). The set-up, paid once per
/// segment and slab, works on all three axes at once with the direction's reciprocal: fifteen
/// scalar divisions per piece were a fifth of the walk's time.
fn traverse(desc: &VolumeDesc, cell: Vec3A, s: &Segment, rows: (usize, usize), mut f: impl FnMut(usize, f32)) {
    let inv = recip(s.dir);
    let Some((ta, tb)) = clip(desc, cell, s, inv, rows) else { return };
    let lo = Vec3A::from(desc.min);
    let p = s.origin + s.dir * ta;
    let lim_lo = [0, rows.0, 0];
    let lim_hi = [desc.dims[0], rows.1, desc.dims[2]];
    let (nx, nz) = (desc.dims[0], desc.dims[2]);
    let stride = [1isize, (nx * nz) as isize, nx as isize];
    let cf = ((p - lo) / cell).floor();
    let c: [usize; 3] = std::array::from_fn(|a| (cf[a].max(lim_lo[a] as f32) as usize).clamp(lim_lo[a], lim_hi[a] - 1));
    let forward = s.dir.cmpgt(Vec3A::splat(1e-12));
    let moving = forward | s.dir.cmplt(Vec3A::splat(-1e-12));
    // The next boundary: the cell's upper face when moving forward, its lower face otherwise.
    let next_face = Vec3A::from(c.map(|v| v as f32)) + Vec3A::select(forward, Vec3A::ONE, Vec3A::ZERO);
    let t_next = Vec3A::select(moving, (lo + next_face * cell - s.origin) * inv, Vec3A::INFINITY);
    let t_delta = Vec3A::select(moving, cell * inv.abs(), Vec3A::INFINITY);
    // Per axis: the index step, and how many cells remain before the limits.
    let forward = forward.bitmask();
    let moving = moving.bitmask();
    let step: [isize; 3] = std::array::from_fn(|a| match (moving >> a & 1, forward >> a & 1) {
        (0, _) => 0,
        (_, 1) => stride[a],
        _ => -stride[a],
    });
    let left: [usize; 3] = std::array::from_fn(|a| if forward >> a & 1 == 1 { lim_hi[a] - 1 - c[a] } else { c[a] - lim_lo[a] });
    let t_next = t_next.to_array();
    let t_delta = t_delta.to_array();
    let mut index = (c[0] + nx * (c[2] + nz * (c[1] - rows.0))) as isize;
    let [mut tx, mut ty, mut tz] = t_next;
    let [dx, dy, dz] = t_delta;
    let [sx, sy, sz] = step;
    let [mut lx, mut ly, mut lz] = left;
    let mut t = ta;
    // One arm per axis; `$t` is the axis's next boundary, `$l` the cells it has left.
    macro_rules! cross {
        ($t:ident, $d:ident, $s:ident, $l:ident) => {{
            let t_exit = $t.min(tb);
            if t_exit > t {
                f(index as usize, t_exit - t);
            }
            if $t >= tb || $l == 0 {
                return;
            }
            $l -= 1;
            index += $s;
            t = t_exit;
            $t += $d;
        }};
    }
    loop {
        if tx <= ty && tx <= tz {
            cross!(tx, dx, sx, lx)
        } else if ty <= tz {
            cross!(ty, dy, sy, ly)
        } else {
            cross!(tz, dz, sz, lz)
        }
    }
}

/// Air fraction of every cell, measured along `LINES²` vertical lines per column: each line is
/// traced downward from above the scene through every surface, and a surface seen from its
/// front (ray against the normal) means rock below it, from the back air below it.
/// Occluder triangles (index `lit_triangles` on) are thin and two-sided: rays pass them without
/// changing side.
fn air_fraction(desc: &VolumeDesc, cell: Vec3A, bvh: &Bvh, lit_triangles: u32, top: f32, eps: f32) -> Vec<f32> {
    let [nx, ny, nz] = desc.dims;
    let lo = Vec3A::from(desc.min);
    let per_line = 1.0 / (LINES * LINES) as f32 / cell.z;
    let columns: Vec<Vec<f32>> = (0..nx * ny)
        .into_par_iter()
        .map(|col| {
            let (x, y) = (col % nx, col / nx);
            let mut air = vec![0.0f32; nz];
            for sy in 0..LINES {
                for sx in 0..LINES {
                    let px = lo.x + (x as f32 + (sx as f32 + LINE_OFFSET) / LINES as f32) * cell.x;
                    let py = lo.y + (y as f32 + (sy as f32 + LINE_OFFSET) / LINES as f32) * cell.y;
                    let start = top.max(desc.max[2]) + 1.0;
                    let mut ray = Ray { origin: Vec3A::new(px, py, start), dir: -Vec3A::Z, tmin: 0.0, tmax: f32::INFINITY };
                    let mut in_air = true;
                    let mut z_hi = start;
                    // Bounded so a pathological mesh cannot loop forever.
                    for _ in 0..100_000 {
                        let hit = bvh.intersect(&ray);
                        if let Some(h) = hit.filter(|h| h.tri >= lit_triangles) {
                            ray.tmin = h.t + eps;
                            continue;
                        }
                        let z_lo = hit.map_or(f32::NEG_INFINITY, |h| start - h.t);
                        if in_air {
                            add_air(&mut air, lo.z, cell.z, z_lo, z_hi, per_line);
                        }
                        let Some(h) = hit else { break };
                        in_air = !h.front;
                        z_hi = z_lo;
                        ray.tmin = h.t + eps;
                    }
                }
            }
            air
        })
        .collect();
    let mut out = vec![0.0f32; nx * ny * nz];
    for (col, air) in columns.iter().enumerate() {
        for (z, a) in air.iter().enumerate() {
            out[col + nx * ny * z] = a.clamp(0.0, 1.0);
        }
    }
    out
}

/// Adds the overlap of `[z_lo, z_hi]` with each cell row, scaled by `scale`.
fn add_air(air: &mut [f32], z0: f32, dz: f32, z_lo: f32, z_hi: f32, scale: f32) {
    let nz = air.len();
    let first = (((z_lo - z0) / dz).floor().max(0.0) as usize).min(nz);
    let last = ((((z_hi - z0) / dz).ceil()).max(0.0) as usize).min(nz);
    for (k, a) in air.iter_mut().enumerate().take(last).skip(first) {
        let (c0, c1) = (z0 + k as f32 * dz, z0 + (k + 1) as f32 * dz);
        let overlap = z_hi.min(c1) - z_lo.max(c0);
        if overlap > 0.0 {
            *a += overlap * scale;
        }
    }
}

impl IrradianceVolume {
    /// Trilinearly interpolated `(ambient, direct)` irradiance at `p` for a surface with unit
    /// normal `n` (clamped to the volume).
    pub fn sample(&self, p: [f32; 3], n: [f32; 3]) -> ([f32; 3], [f32; 3]) {
        (self.interpolate(&self.ambient, p, n), self.interpolate(&self.direct, p, n))
    }

    /// The ambient part of [`IrradianceVolume::sample`] alone.
    pub fn sample_ambient(&self, p: [f32; 3], n: [f32; 3]) -> [f32; 3] {
        self.interpolate(&self.ambient, p, n)
    }

    /// `cells` (the ambient or the direct cells) interpolated; an empty array is no light.
    fn interpolate(&self, cells: &[[[f32; 3]; 6]], p: [f32; 3], n: [f32; 3]) -> [f32; 3] {
        let [nx, ny, nz] = self.dims;
        if nx * ny * nz == 0 || cells.is_empty() {
            return [0.0; 3];
        }
        let mut base = [0usize; 3];
        let mut frac = [0.0f32; 3];
        for a in 0..3 {
            let size = (self.max[a] - self.min[a]) / self.dims[a] as f32;
            let f = ((p[a] - self.min[a]) / size - 0.5).clamp(0.0, (self.dims[a] - 1) as f32);
            base[a] = (f.floor() as usize).min(self.dims[a].saturating_sub(2));
            frac[a] = if self.dims[a] > 1 { f - base[a] as f32 } else { 0.0 };
        }
        let weights: [f32; 6] = [0, 1, 2].map(|a| [n[a].max(0.0).powi(2), n[a].min(0.0).powi(2)]).concat().try_into().unwrap_or([0.0; 6]);
        let mut sum = [0.0f32; 3];
        for corner in 0..8 {
            let off = [corner & 1, (corner >> 1) & 1, (corner >> 2) & 1];
            let mut w = 1.0;
            let mut idx = [0usize; 3];
            for a in 0..3 {
                idx[a] = (base[a] + off[a]).min(self.dims[a] - 1);
                w *= if off[a] == 1 { frac[a] } else { 1.0 - frac[a] };
            }
            let i = idx[0] + nx * (idx[1] + ny * idx[2]);
            for (b, wb) in weights.iter().enumerate() {
                for c in 0..3 {
                    sum[c] += w * wb * cells[i][b][c];
                }
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lighting::rng::{uniform_sphere, Rng};

    #[test]
    fn slab_accumulation_matches_one_walk_through_the_whole_grid() {
        let desc = VolumeDesc { min: [-1.0, 0.0, 0.5], max: [3.0, 4.0, 1.5], dims: [8, 64, 4] };
        let mut rng = Rng::new(4, 0, 0);
        let segments: Vec<Segment> = (0..3000)
            .map(|i| Segment {
                origin: Vec3A::new(rng.next_f32() * 6.0 - 2.0, rng.next_f32() * 6.0 - 1.0, rng.next_f32() * 2.0),
                dir: uniform_sphere(rng.next_f32(), rng.next_f32()),
                t_end: if i % 4 == 0 { f32::INFINITY } else { rng.next_f32() * 5.0 },
                power: [1.0, 0.5, 0.25],
                class: (i % 2) as u8,
            })
            .collect();
        let mut acc = VolumeAccumulator::new(desc, Fixed::for_scene(2.0, 4.0));
        acc.add(&[&segments]);
        // The sums are exact in any order: two halves added apart and merged give the same units.
        let mut halves = [0, 1].map(|_| VolumeAccumulator::new(desc, Fixed::for_scene(2.0, 4.0)));
        halves[0].add(&[&segments[2900..], &segments[1700..2900]]);
        halves[1].add(&[&segments[..1700]]);
        let [mut first, second] = halves;
        for (mine, theirs) in first.sums_mut().into_iter().zip(second.sums()) {
            mine.add_all(theirs);
        }
        assert!(first == acc, "merged halves differ from one pass");
        // Reference: each segment walked once through every row, summed in f64.
        let [nx, ny, nz] = desc.dims;
        let mut expected = vec![[0.0f64; 2 * BINS * 3]; nx * ny * nz];
        let mut total_len = 0.0f64;
        for s in &segments {
            // Each piece's midpoint lies in the cell it is credited to, and the pieces follow one
            // another from where the segment enters the grid.
            let mut t = clip(&desc, acc.cell, s, recip(s.dir), (0, ny)).map_or(0.0, |c| c.0);
            traverse(&desc, acc.cell, s, (0, ny), |i, len| {
                let (x, z, y) = (i % nx, (i / nx) % nz, i / (nx * nz));
                let mid = s.origin + s.dir * (t + 0.5 * len);
                let local = (mid - Vec3A::from(desc.min)) / acc.cell;
                for (a, c) in [x, y, z].into_iter().enumerate() {
                    assert!(local[a] > c as f32 - 1e-3 && local[a] < (c + 1) as f32 + 1e-3, "piece at {mid:?} credited to cell {:?}", [x, y, z]);
                }
                t += len;
                total_len += len as f64;
                for a in 0..3 {
                    let bin = 2 * a + (s.dir[a] > 0.0) as usize;
                    for ch in 0..3 {
                        expected[i][s.class as usize * BINS * 3 + bin * 3 + ch] += (s.power[ch] * s.dir[a].abs() * len) as f64;
                    }
                }
            });
        }
        assert!(total_len > 100.0, "the segments must cross the grid");
        for (k, want) in expected.iter().enumerate() {
            let got = acc.cell_sums(0, k).into_iter().chain(acc.cell_sums(1, k));
            for (g, w) in got.flatten().map(|u| acc.fixed.volume_value(u)).zip(want) {
                assert!((g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
            }
        }
    }
}
