//! Photon deposits on the mesh and their conversion to per-vertex irradiance.
//!
//! Each surface hit of a light path deposits its power on the three corners of the triangle it
//! struck (barycentric weights). A vertex's irradiance is power over area, and the estimate is
//! smoothed with a *mesh* filter: `smoothing` Jacobi iterations that average each vertex with its
//! edge neighbours, weighted by normal agreement max(0, n_i·n_j)². The same linear filter is
//! applied to deposited power and to vertex area, and irradiance is their ratio, so the result
//! is an unbiased estimate of the area-weighted mean irradiance over the filter footprint (its
//! only approximation is that blur). Because the filter follows mesh connectivity it never
//! mixes the two sides of a wall, a cave floor with the ground above it, or surfaces meeting at
//! a sharp crease; after k iterations nothing reaches further than k edges.
//!
//! Vertices at identical positions are welded first, so seams between separately meshed tiles
//! do not stop the filter.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use glam::Vec3A;
use rayon::prelude::*;

use super::fixed::{Fixed, MAP_BLOCK_VERTICES};
use super::surface_build::{list_blocks, offsets, BLOCK};
use super::words::{SplitWords, WordsMut};

/// The welded mesh: where deposits land, and the filter over its connectivity. A bake never holds
/// it whole: it builds and parks it array by array (`ParkedSurface::build`) and unparks only the
/// arrays each step reads; the whole is what the tests compare those with.
#[cfg_attr(test, derive(Debug, PartialEq))]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Surface {
    /// Input vertex → welded vertex.
    pub(crate) weld: Vec<u32>,
    pub(crate) pos: Vec<Vec3A>,
    pub(crate) filter: MeshFilter,
    /// Total area of all triangles.
    pub(crate) total_area: f64,
    pub(crate) mean_edge: f32,
}

impl Surface {
    #[cfg(test)]
    pub(crate) fn new(positions: &[[f32; 3]], indices: &[u32]) -> Surface {
        let super::surface_build::Built { weld, pos, normal, area, adj_start, adj, total_area, mean_edge } =
            super::surface_build::build(positions, indices);
        Surface { weld, pos, filter: MeshFilter { normal, area, adj_start, adj }, total_area, mean_edge }
    }

    /// Adds the deposits of every part to the ambient map (`maps[0]`, deposits of map 0) and the
    /// direct-lights map (`maps[1]`, map 1; empty in a scene without static lights): each part's
    /// corners listed by range, then each range filled, in parallel over parts and then over
    /// ranges. Light transport does the same steps itself, spread over its own work items (see
    /// `transport.rs`).
    #[cfg(test)]
    pub(crate) fn apply(maps: [&mut SplitWords; 2], parts: &[&[Deposit]], fixed: &Fixed) {
        let ranges = DepositRanges::new(maps[0].len() / 3);
        let lists: Vec<CornerLists> = parts.par_iter().map(|part| ranges.list(part)).collect();
        for (map, sums) in maps.into_iter().enumerate() {
            ranges.split(sums).into_par_iter().enumerate().for_each(|(r, mut words)| {
                for (part, list) in parts.iter().zip(&lists) {
                    ranges.add(r, &mut words, map, part, list, fixed);
                }
            });
        }
    }

    /// Bytes of its arrays.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        let f = &self.filter;
        4 * (self.weld.len() + f.area.len() + f.adj_start.len() + f.adj.len()) + 16 * (self.pos.len() + f.normal.len())
    }
}

/// The welded mesh's smoothing filter: each vertex's normal and area, and its edge neighbours.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(crate) struct MeshFilter {
    pub(crate) normal: Vec<Vec3A>,
    pub(crate) area: Vec<f32>,
    pub(crate) adj_start: Vec<u32>,
    pub(crate) adj: Vec<u32>,
}

impl MeshFilter {
    /// Runs the filter over `power` (one map's RGB per welded vertex) and returns the irradiance
    /// per welded vertex. Takes `power` so that it is freed before the filter's buffers are made.
    /// The filter treats every channel alike and apart, so filtering one map at a time gives the
    /// bits of filtering them together.
    pub(crate) fn irradiance(&self, power: Vec<[f32; 3]>, iterations: u32) -> Vec<[f32; 3]> {
        let values = power.iter().zip(&self.area).map(|(p, &a)| [p[0], p[1], p[2], a]).collect();
        drop(power);
        self.filter::<4>(values, iterations)
            .iter()
            .map(|x| {
                let inv = if x[3] > 0.0 { 1.0 / x[3] } else { 0.0 };
                [x[0] * inv, x[1] * inv, x[2] * inv]
            })
            .collect()
    }

    /// [`MeshFilter::irradiance`] of the luminance of every map's power (`luminance`), filtering
    /// only that and the area (the filter is linear, so this is the same value for a third of
    /// the work).
    pub(crate) fn luminance(&self, luminance: Vec<f32>, iterations: u32) -> Vec<f32> {
        let values = luminance.iter().zip(&self.area).map(|(&l, &a)| [l, a]).collect();
        drop(luminance);
        self.filter::<2>(values, iterations).iter().map(|x| if x[1] > 0.0 { x[0] / x[1] } else { 0.0 }).collect()
    }

    /// `iterations` rounds of the normal-weighted neighbour average over every channel of
    /// `values` (power channels with the area last).
    fn filter<const N: usize>(&self, mut cur: Vec<[f32; N]>, iterations: u32) -> Vec<[f32; N]> {
        if iterations == 0 {
            return cur;
        }
        // Edge weights are made as they are read: stored, they took 4 bytes per edge (six per
        // vertex), more than the values filtered, at the peak of a large world's bake.
        let weight = |n: Vec3A, j: u32| {
            let c = n.dot(self.normal[j as usize]).max(0.0);
            c * c
        };
        let mut next = cur.clone();
        for _ in 0..iterations {
            next.par_iter_mut().enumerate().for_each(|(i, out)| {
                let n = self.normal[i];
                let mut acc = cur[i];
                let mut wsum = 1.0f32;
                for &j in self.neighbours(i) {
                    let w = weight(n, j);
                    let x = &cur[j as usize];
                    for c in 0..N {
                        acc[c] += w * x[c];
                    }
                    wsum += w;
                }
                let inv = 1.0 / wsum;
                *out = acc.map(|v| v * inv);
            });
            std::mem::swap(&mut cur, &mut next);
        }
        cur
    }

    fn neighbours(&self, i: usize) -> &[u32] {
        &self.adj[self.adj_start[i] as usize..self.adj_start[i + 1] as usize]
    }
}

/// Welded-vertex ranges the deposits are added in. A fixed count, so the work never depends on
/// the thread count; a range's sums (1–2 MB on the default world) stay in cache while it is filled.
const RANGES: usize = 64;

/// How deposits are added in pieces: the maps' welded vertices in [`RANGES`] ranges of whole
/// blocks of words, each range filled on its own from the corners listed in it. The sums are
/// exact, so they are the same for any split of the deposits into parts and any order.
#[derive(Clone, Copy)]
pub(crate) struct DepositRanges {
    vertices: usize,
    /// Blocks of [`MAP_BLOCK_VERTICES`] vertices per range.
    range_blocks: usize,
}

impl DepositRanges {
    /// The ranges of maps of `vertices` welded vertices (three words each).
    pub(crate) fn new(vertices: usize) -> DepositRanges {
        DepositRanges { vertices, range_blocks: vertices.div_ceil(RANGES * MAP_BLOCK_VERTICES).max(1) }
    }

    fn range_len(&self) -> usize {
        self.range_blocks * MAP_BLOCK_VERTICES
    }

    /// Lists the corners of `deposits` by range.
    pub(crate) fn list(&self, deposits: &[Deposit]) -> CornerLists {
        CornerLists::of(deposits, self.range_len())
    }

    /// `map`'s words, one piece per range (none for an empty map).
    pub(crate) fn split<'a>(&self, map: &'a mut SplitWords) -> Vec<WordsMut<'a>> {
        map.pieces_mut(self.range_blocks).collect()
    }

    /// Adds to `words`, range `r`'s piece of map `map`, the corners that `lists` lists in range
    /// `r` of those of `deposits` that land on that map.
    pub(crate) fn add(&self, r: usize, words: &mut WordsMut, map: usize, deposits: &[Deposit], lists: &CornerLists, fixed: &Fixed) {
        let range_len = self.range_len();
        for &corner in lists.range(r) {
            let (d, k) = (&deposits[corner as usize / 3], corner as usize % 3);
            if d.map as usize != map {
                continue;
            }
            let Some(v) = (d.verts[k] as usize).checked_sub(r * range_len).filter(|&v| v < range_len && r * range_len + v < self.vertices) else {
                continue;
            };
            for (c, p) in d.power.into_iter().enumerate() {
                words.add(3 * v + c, fixed.surface(p * d.weights[k]));
            }
        }
    }
}

/// One part's deposit corners by vertex range (a counting sort): corner `k` of deposit `i` is
/// listed as `3i + k` in `items[start[r]..start[r + 1]]`, `r` the range of its vertex.
#[derive(Default)]
pub(crate) struct CornerLists {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl CornerLists {
    fn of(deposits: &[Deposit], range_len: usize) -> CornerLists {
        // A vertex past the last range (none in a sound surface) is listed in it and then skipped.
        let range = |v: u32| (v as usize / range_len).min(RANGES - 1);
        let mut start = vec![0u32; RANGES + 1];
        for d in deposits {
            for v in d.verts {
                start[range(v) + 1] += 1;
            }
        }
        for r in 1..start.len() {
            start[r] += start[r - 1];
        }
        let mut next = start.clone();
        let mut items = vec![0u32; 3 * deposits.len()];
        for (i, d) in deposits.iter().enumerate() {
            for (k, v) in d.verts.into_iter().enumerate() {
                let slot = &mut next[range(v)];
                items[*slot as usize] = (3 * i + k) as u32;
                *slot += 1;
            }
        }
        CornerLists { start, items }
    }

    fn range(&self, r: usize) -> &[u32] {
        self.start.get(r..r + 2).map_or(&[], |s| &self.items[s[0] as usize..s[1] as usize])
    }
}

/// One surface hit: power landing on a triangle, spread over its welded corners.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deposit {
    pub(crate) verts: [u32; 3],
    pub(crate) weights: [f32; 3],
    pub(crate) power: [f32; 3],
    /// 0 = ambient map, 1 = direct-lights map.
    pub(crate) map: u8,
}

/// A uniform grid over the welded vertices for nearest-vertex queries.
pub(crate) struct VertexGrid {
    lo: Vec3A,
    cell: f32,
    dims: [usize; 3],
    start: Vec<u32>,
    items: Vec<u32>,
}

impl VertexGrid {
    /// The grid of cells of side `cell` (grown where the cell count would pass 2^24) over `pos`,
    /// each cell listing its vertices in index order. Built on every thread: the cells are counted
    /// and filled with atomic counters, then each cell's list is sorted, which gives the order of
    /// one walk over the vertices.
    pub(crate) fn new(pos: &[Vec3A], cell: f32) -> VertexGrid {
        let (lo, hi) = pos
            .par_iter()
            .fold(|| (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY)), |(lo, hi), p| (lo.min(*p), hi.max(*p)))
            .reduce(|| (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY)), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        let (lo, hi) = if pos.is_empty() { (Vec3A::ZERO, Vec3A::ZERO) } else { (lo, hi) };
        // Keep the cell count bounded (≤ 2^24) whatever the mesh's spread.
        let ext = (hi - lo).max(Vec3A::splat(1e-6));
        let mut cell = cell.max(1e-6);
        while (ext / cell).ceil().element_product() > (1 << 24) as f32 {
            cell *= 2.0;
        }
        let dims = ((ext / cell).ceil().max(Vec3A::ONE)).to_array().map(|d| d as usize);
        let index = |p: Vec3A| {
            let c = ((p - lo) / cell).floor();
            let c = [0, 1, 2].map(|a| (c[a].max(0.0) as usize).min(dims[a] - 1));
            c[0] + dims[0] * (c[1] + dims[1] * c[2])
        };
        let cells = dims[0] * dims[1] * dims[2];
        let counts: Vec<AtomicU32> = (0..cells).into_par_iter().map(|_| AtomicU32::new(0)).collect();
        pos.par_iter().for_each(|p| {
            counts[index(*p)].fetch_add(1, Relaxed);
        });
        let start = offsets(&counts.into_iter().map(AtomicU32::into_inner).collect::<Vec<u32>>());
        // Each cell's next free slot; the slots a cell gets are its own, in whatever order.
        let fill: Vec<AtomicU32> = start[..cells].par_iter().map(|&s| AtomicU32::new(s)).collect();
        let items: Vec<AtomicU32> = (0..pos.len()).into_par_iter().map(|_| AtomicU32::new(0)).collect();
        pos.par_iter().enumerate().for_each(|(v, p)| {
            let slot = fill[index(*p)].fetch_add(1, Relaxed);
            items[slot as usize].store(v as u32, Relaxed);
        });
        drop(fill);
        let mut items: Vec<u32> = items.into_iter().map(AtomicU32::into_inner).collect();
        sort_each_cell(&mut items, &start);
        VertexGrid { lo, cell, dims, start, items }
    }

    /// Calls `f` for every vertex in the cells overlapping the ball (q, r).
    pub(crate) fn for_each_near(&self, q: Vec3A, r: f32, mut f: impl FnMut(u32)) {
        let a = ((q - Vec3A::splat(r) - self.lo) / self.cell).floor();
        let b = ((q + Vec3A::splat(r) - self.lo) / self.cell).floor();
        let clamp = |v: f32, a: usize| (v.max(0.0) as usize).min(self.dims[a] - 1);
        for a2 in 0..3 {
            if b[a2] < 0.0 || a[a2] > (self.dims[a2] - 1) as f32 {
                return;
            }
        }
        for z in clamp(a.z, 2)..=clamp(b.z, 2) {
            for y in clamp(a.y, 1)..=clamp(b.y, 1) {
                let row = self.dims[0] * (y + self.dims[1] * z);
                let (s, e) = (row + clamp(a.x, 0), row + clamp(b.x, 0) + 1);
                for &v in &self.items[self.start[s] as usize..self.start[e] as usize] {
                    f(v);
                }
            }
        }
    }
}

/// Sorts the list of every cell (`items[start[c]..start[c + 1]]`), blocks of cells on every thread.
fn sort_each_cell(items: &mut [u32], start: &[u32]) {
    let cells = start.len() - 1;
    list_blocks(items, start).into_par_iter().enumerate().for_each(|(b, block)| {
        let first = b * BLOCK;
        for c in first..((b + 1) * BLOCK).min(cells) {
            block[(start[c] - start[first]) as usize..(start[c + 1] - start[first]) as usize].sort_unstable();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deposits_added_by_vertex_range_equal_each_deposit_added_directly() {
        // Corners spread so that deposits touch one, two or three ranges, and both maps.
        let n = 1000usize;
        let mut rng = crate::lighting::rng::Rng::new(9, 0, 0);
        let deposits: Vec<Deposit> = (0..3000)
            .map(|i| {
                let a = (rng.next_f32() * n as f32) as u32 % n as u32;
                let near = |r: f32| (a + (r * 40.0) as u32) % n as u32;
                Deposit {
                    verts: [a, if i % 3 == 0 { a } else { near(rng.next_f32()) }, (rng.next_f32() * n as f32) as u32 % n as u32],
                    weights: [0.2, 0.3, 0.5],
                    power: [rng.next_f32(), 1.0, 0.25],
                    map: (i % 4 == 0) as u8,
                }
            })
            .collect();
        let fixed = Fixed::for_scene(2.0, 4.0);
        let mut expected = [vec![[0i64; 3]; n], vec![[0i64; 3]; n]];
        for d in &deposits {
            for (v, w) in d.verts.iter().zip(d.weights) {
                for (acc, p) in expected[d.map as usize][*v as usize].iter_mut().zip(d.power) {
                    *acc = acc.wrapping_add(fixed.surface(p * w));
                }
            }
        }
        let map = || SplitWords::zeroed(3 * n, 3 * MAP_BLOCK_VERTICES);
        let words = |m: &SplitWords| m.values(0..m.len()).collect::<Vec<i64>>();
        let flat = |e: &[[i64; 3]]| e.as_flattened().to_vec();
        let (mut ambient, mut lights) = (map(), map());
        let parts: Vec<&[Deposit]> = vec![&deposits[..1], &deposits[1..1700], &[], &deposits[1700..]];
        Surface::apply([&mut ambient, &mut lights], &parts, &fixed);
        assert!(words(&ambient) == flat(&expected[0]) && words(&lights) == flat(&expected[1]));
        // Without static lights the direct map is empty and stays so.
        let mut none = SplitWords::zeroed(0, 3 * MAP_BLOCK_VERTICES);
        let mut ambient = map();
        Surface::apply([&mut ambient, &mut none], &parts, &fixed);
        assert!(words(&ambient) == flat(&expected[0]) && none.is_empty());
    }

    /// A strip of `n` unit quads along x, slightly bent so normals vary.
    fn strip(n: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut pos = Vec::new();
        for i in 0..=n {
            let z = (i as f32 * 0.3).sin() * 0.2;
            pos.push([i as f32, 0.0, z]);
            pos.push([i as f32, 1.0, z]);
        }
        let mut idx = Vec::new();
        for i in 0..n as u32 {
            let (a, b, c, d) = (2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1);
            idx.extend_from_slice(&[a, b, c, a, c, d]);
        }
        (pos, idx)
    }

    #[test]
    fn filter_preserves_uniform_irradiance_exactly() {
        let (pos, idx) = strip(12);
        let s = Surface::new(&pos, &idx);
        for expected in [[2.0, 3.0, 4.0], [0.5, 0.0, 1.0]] {
            let power: Vec<[f32; 3]> = s.filter.area.iter().map(|&a| expected.map(|e| e * a)).collect();
            for irradiance in s.filter.irradiance(power, 7) {
                for (x, e) in irradiance.iter().zip(expected) {
                    assert!((x - e).abs() < 1e-5 * e.max(1.0), "{x} vs {e}");
                }
            }
        }
    }

    #[test]
    fn filter_reaches_exactly_k_edges() {
        let (pos, idx) = strip(40);
        let s = Surface::new(&pos, &idx);
        let mut power = vec![[0.0; 3]; s.pos.len()];
        power[0] = [1.0, 1.0, 1.0];
        let e = s.filter.irradiance(power, 10);
        // Vertex 2i sits i quads along the strip, at graph distance i from vertex 0 (vertices 2i
        // and 2i+1 are linked diagonally, so the far side of a quad is no further away).
        for i in 0..=40 {
            let lit = e[2 * i][0] > 0.0;
            assert_eq!(lit, i <= 10, "column {i}: {:?}", e[2 * i]);
        }
        // Total power is conserved up to the filter's normalisation: the filtered field stays
        // within the raw range.
        assert!(e.iter().all(|x| x[0] <= 1.0 / s.filter.area[0] + 1e-4));
    }

    #[test]
    fn grid_finds_vertices_within_radius() {
        let pos: Vec<Vec3A> = (0..1000).map(|i| Vec3A::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32)).collect();
        let grid = VertexGrid::new(&pos, 1.5);
        let q = Vec3A::new(4.2, 5.1, 3.3);
        let mut found = Vec::new();
        grid.for_each_near(q, 1.2, |v| {
            if (pos[v as usize] - q).length() <= 1.2 {
                found.push(v)
            }
        });
        found.sort();
        let expect: Vec<u32> = (0..1000).filter(|&v| (pos[v as usize] - q).length() <= 1.2).collect();
        assert_eq!(found, expect);
    }

    #[test]
    fn grid_cells_list_their_vertices_in_index_order() {
        // Clustered points with repeats, and a spread that makes the grid grow its cells.
        let mut rng = crate::lighting::rng::Rng::new(3, 0, 0);
        let mut pos: Vec<Vec3A> = (0..20_000).map(|_| Vec3A::new(rng.next_f32(), rng.next_f32(), rng.next_f32()) * 40.0).collect();
        pos.extend_from_within(..5000);
        for (cell, far) in [(0.7, 0.0), (0.01, 1e4)] {
            pos[7] = Vec3A::splat(far);
            let grid = VertexGrid::new(&pos, cell);
            // One walk in index order, the way a serial build fills the cells.
            let mut lists = vec![Vec::new(); grid.start.len() - 1];
            for (v, p) in pos.iter().enumerate() {
                let c = ((*p - grid.lo) / grid.cell).floor();
                let c = [0, 1, 2].map(|a| (c[a].max(0.0) as usize).min(grid.dims[a] - 1));
                lists[c[0] + grid.dims[0] * (c[1] + grid.dims[1] * c[2])].push(v as u32);
            }
            assert!(grid.start.len() - 1 <= 1 << 24, "the cell count is bounded");
            let mut at = 0;
            for (c, list) in lists.iter().enumerate() {
                assert_eq!(grid.start[c], at, "cell {c}'s start");
                assert_eq!(&grid.items[at as usize..][..list.len()], list.as_slice(), "cell {c}'s vertices");
                at += list.len() as u32;
            }
            assert_eq!((grid.start[lists.len()], grid.items.len()), (pos.len() as u32, pos.len()));
        }
    }
}
