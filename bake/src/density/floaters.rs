//! Connectivity clean-up: floater removal and sealed-air filling.
//!
//! Both are 6-connected flood fills over the whole volume (connectivity is global, so a tile
//! baked alone must see this stage's result rather than recompute it). They work on *runs*:
//! maximal spans of matching samples along X within one row `(y, z)`. Two runs are face-adjacent
//! when their rows are neighbours in Y or Z and their X spans overlap. A 512×512×64 cave volume
//! has a few hundred thousand runs instead of 16.8 M voxels, which makes the fill cheap; run
//! extraction and the final rewrite are parallel over Z slices, the fill itself is a sequential
//! depth-first search whose result (a set) does not depend on visiting order.
//!
//! "Solid" means density > 0 (positive is solid; an exact 0 counts as air).

use rayon::prelude::*;

use super::DensityVolume;

/// Runs of matching samples, grouped by row `r = y + ny * z` in ascending X.
struct Runs {
    /// Runs of row `r` are `spans[row_start[r]..row_start[r + 1]]`.
    row_start: Vec<u32>,
    /// `[x0, x1)` per run.
    spans: Vec<[u32; 2]>,
}

impl Runs {
    fn extract(vol: &DensityVolume, matches: impl Fn(f32) -> bool + Sync) -> Runs {
        let [nx, ny, _] = vol.dims;
        let per_slice: Vec<(Vec<u32>, Vec<[u32; 2]>)> = vol
            .data
            .par_chunks(nx * ny)
            .map(|slice| {
                let mut counts = Vec::with_capacity(ny);
                let mut spans = Vec::new();
                for row in slice.chunks_exact(nx) {
                    let before = spans.len();
                    let mut x = 0;
                    while x < nx {
                        if matches(row[x]) {
                            let start = x;
                            while x < nx && matches(row[x]) {
                                x += 1;
                            }
                            spans.push([start as u32, x as u32]);
                        } else {
                            x += 1;
                        }
                    }
                    counts.push((spans.len() - before) as u32);
                }
                (counts, spans)
            })
            .collect();
        let total: usize = per_slice.iter().map(|(_, s)| s.len()).sum();
        let mut row_start = Vec::with_capacity(per_slice.len() * ny + 1);
        let mut spans = Vec::with_capacity(total);
        row_start.push(0);
        for (counts, slice_spans) in per_slice {
            for c in counts {
                let last = *row_start.last().expect("row_start starts non-empty");
                row_start.push(last + c);
            }
            spans.extend_from_slice(&slice_spans);
        }
        Runs { row_start, spans }
    }

    fn row(&self, r: usize) -> std::ops::Range<usize> {
        self.row_start[r] as usize..self.row_start[r + 1] as usize
    }

    /// Marks every run reachable from a seed run; `is_seed(row, span)`.
    fn flood(&self, dims: [usize; 3], is_seed: impl Fn(usize, [u32; 2]) -> bool) -> Vec<bool> {
        let rows = dims[1] * dims[2];
        let mut reached = vec![false; self.spans.len()];
        // Row of each run, needed when a run is popped from the stack.
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for r in 0..rows {
            for i in self.row(r) {
                if is_seed(r, self.spans[i]) {
                    reached[i] = true;
                    stack.push((i as u32, r as u32));
                }
            }
        }
        while let Some((i, r)) = stack.pop() {
            let [a, b] = self.spans[i as usize];
            self.for_each_neighbour(dims, r as usize, [a, b], |j, q| {
                if !reached[j] {
                    reached[j] = true;
                    stack.push((j as u32, q as u32));
                }
            });
        }
        reached
    }

    /// Calls `f(run, row)` for every run face-adjacent to the run `span` of row `r`.
    fn for_each_neighbour(&self, dims: [usize; 3], r: usize, [a, b]: [u32; 2], mut f: impl FnMut(usize, usize)) {
        let [_, ny, nz] = dims;
        let (y, z) = (r % ny, r / ny);
        let neighbours = [(y > 0).then(|| r - 1), (y + 1 < ny).then(|| r + 1), (z > 0).then(|| r - ny), (z + 1 < nz).then(|| r + ny)];
        for q in neighbours.into_iter().flatten() {
            let range = self.row(q);
            let row = &self.spans[range.clone()];
            // First run ending after `a`; runs are sorted and disjoint.
            let first = row.partition_point(|s| s[1] <= a);
            for (k, s) in row.iter().enumerate().skip(first) {
                if s[0] >= b {
                    break;
                }
                f(range.start + k, q);
            }
        }
    }

    /// Marks as `reached` every connected set of unreached runs holding `limit` samples or more,
    /// so only the smaller ones stay unreached.
    fn reach_large_components(&self, dims: [usize; 3], reached: &mut [bool], limit: usize) {
        let rows = dims[1] * dims[2];
        let mut seen = reached.to_vec();
        let mut stack: Vec<(u32, u32)> = Vec::new();
        let mut component: Vec<u32> = Vec::new();
        for r in 0..rows {
            for i in self.row(r) {
                if seen[i] {
                    continue;
                }
                seen[i] = true;
                stack.push((i as u32, r as u32));
                component.clear();
                let mut samples = 0usize;
                while let Some((i, r)) = stack.pop() {
                    component.push(i);
                    let span = self.spans[i as usize];
                    samples += (span[1] - span[0]) as usize;
                    self.for_each_neighbour(dims, r as usize, span, |j, q| {
                        if !seen[j] {
                            seen[j] = true;
                            stack.push((j as u32, q as u32));
                        }
                    });
                }
                if samples >= limit {
                    for &i in &component {
                        reached[i as usize] = true;
                    }
                }
            }
        }
    }

    /// Applies `f` to every sample of every run not `reached`; returns how many samples changed.
    fn rewrite_unreached(&self, vol: &mut DensityVolume, reached: &[bool], f: impl Fn(f32) -> f32 + Sync) -> usize {
        let [nx, ny, _] = vol.dims;
        vol.data
            .par_chunks_mut(nx * ny)
            .enumerate()
            .map(|(z, slice)| {
                let mut changed = 0;
                for y in 0..ny {
                    let row = &mut slice[y * nx..(y + 1) * nx];
                    for i in self.row(y + ny * z) {
                        if !reached[i] {
                            let [a, b] = self.spans[i];
                            for d in &mut row[a as usize..b as usize] {
                                *d = f(*d);
                            }
                            changed += (b - a) as usize;
                        }
                    }
                }
                changed
            })
            .sum()
    }
}

#[inline]
fn is_solid(d: f32) -> bool {
    d > 0.0
}

/// Turns every solid sample that is not 6-connected through solid samples to the ground into
/// air, mirroring its density about the isolevel (`d → -d`) so the field stays as smooth as it
/// was. Ground is every solid sample at z = 0, plus, per column `x + nx * y`, the solid samples
/// with `z < ground_layers[column]` (samples below the floor surface, see
/// [`FloorMap::ground_layers`](super::FloorMap::ground_layers)). Returns the number of samples
/// removed.
pub fn remove_floaters(vol: &mut DensityVolume, ground_layers: Option<&[u32]>) -> usize {
    let [nx, ny, _] = vol.dims;
    let runs = Runs::extract(vol, is_solid);
    let reached = runs.flood(vol.dims, |r, [a, b]| {
        let (y, z) = (r % ny, r / ny);
        z == 0 || ground_layers.is_some_and(|g| (a..b).any(|x| (z as u32) < g[x as usize + nx * y]))
    });
    runs.rewrite_unreached(vol, &reached, |d| -d)
}

/// Turns air samples that are not 6-connected through air to the open top (z = nz - 1) or the
/// four sides into solid, mirroring their density (`d → -d`; an exact 0 becomes the smallest
/// positive value so it really is solid). With `smaller_than = Some(n)` only sealed pockets of
/// fewer than `n` samples are filled (each pocket is one 6-connected set of air samples);
/// `None` fills every sealed pocket. Returns the number of samples filled.
pub fn fill_sealed_air(vol: &mut DensityVolume, smaller_than: Option<usize>) -> usize {
    let [nx, ny, nz] = vol.dims;
    if smaller_than == Some(0) {
        return 0;
    }
    let runs = Runs::extract(vol, |d| !is_solid(d));
    let mut reached = runs.flood(vol.dims, |r, [a, b]| {
        let (y, z) = (r % ny, r / ny);
        z + 1 == nz || y == 0 || y + 1 == ny || a == 0 || b as usize == nx
    });
    if let Some(limit) = smaller_than {
        runs.reach_large_components(vol.dims, &mut reached, limit);
    }
    runs.rewrite_unreached(vol, &reached, |d| if d < 0.0 { -d } else { f32::MIN_POSITIVE })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made field: air everywhere except the boxes listed (inclusive bounds), solid 0.5.
    fn field(dims: [usize; 3], solid_boxes: &[[usize; 6]]) -> DensityVolume {
        DensityVolume::from_fn(dims, |x, y, z| {
            let inside = solid_boxes.iter().any(|b| (b[0]..=b[3]).contains(&x) && (b[1]..=b[4]).contains(&y) && (b[2]..=b[5]).contains(&z));
            if inside {
                0.5
            } else {
                -0.25
            }
        })
    }

    #[test]
    fn floating_blob_is_removed_and_arch_is_kept() {
        let dims = [24, 20, 16];
        let vol0 = field(
            dims,
            &[
                [0, 0, 0, 23, 19, 1],     // ground slab
                [2, 2, 2, 3, 3, 10],      // arch: left pillar
                [12, 2, 2, 13, 3, 10],    // right pillar
                [2, 2, 10, 13, 3, 11],    // lintel joining them
                [6, 10, 6, 9, 13, 9],     // floating blob
                [18, 15, 12, 18, 15, 12], // single floating voxel
                [6, 8, 3, 6, 8, 4],       // a stalk hovering one voxel above the ground
                [14, 4, 12, 14, 4, 12],   // touches the lintel only at a corner: not 6-connected
            ],
        );
        let mut vol = vol0.clone();
        let removed = remove_floaters(&mut vol, None);
        assert_eq!(removed, 4 * 4 * 4 + 1 + 2 + 1);
        assert_eq!(vol.get(7, 11, 7), -0.5, "blob mirrored to air");
        assert_eq!(vol.get(18, 15, 12), -0.5);
        assert_eq!(vol.get(6, 8, 3), -0.5);
        assert_eq!(vol.get(14, 4, 12), -0.5);
        assert_eq!(vol.get(8, 3, 11), 0.5, "arch lintel kept");
        assert_eq!(vol.get(5, 5, 5), -0.25, "air untouched");
        // Idempotent.
        let again = vol.clone();
        assert_eq!(remove_floaters(&mut vol, None), 0);
        assert_eq!(vol, again);
    }

    #[test]
    fn ground_layers_seed_solid_above_z0() {
        // A slab resting on nothing at z = 2..3: floating unless the floor says it is ground.
        let dims = [8, 8, 8];
        let vol0 = field(dims, &[[0, 0, 2, 7, 7, 3]]);
        let mut vol = vol0.clone();
        assert_eq!(remove_floaters(&mut vol, None), 8 * 8 * 2);
        let mut vol = vol0.clone();
        let mut ground = vec![0u32; 64];
        ground[3 + 8 * 4] = 3; // one column's floor reaches z = 2
        assert_eq!(remove_floaters(&mut vol, Some(&ground)), 0);
        assert_eq!(vol, vol0);
    }

    #[test]
    fn sealed_pocket_is_filled_and_open_cave_is_not() {
        let dims = [16, 16, 12];
        let mut vol = field(dims, &[[0, 0, 0, 15, 15, 8]]);
        // Sealed pocket inside the slab.
        for (x, y, z) in [(4, 4, 4), (5, 4, 4), (5, 5, 4)] {
            let i = vol.index(x, y, z);
            vol.data[i] = -0.3;
        }
        // A cave open to the top through a shaft.
        for z in 3..=8 {
            let i = vol.index(10, 10, z);
            vol.data[i] = -0.3;
        }
        // A pocket at the bottom face is sealed too (the bottom is not open).
        let i = vol.index(12, 3, 0);
        vol.data[i] = 0.0;
        let vol0 = vol.clone();
        assert_eq!(fill_sealed_air(&mut vol, None), 4);
        assert_eq!(vol.get(5, 5, 4), 0.3);
        assert_eq!(vol.get(12, 3, 0), f32::MIN_POSITIVE);
        assert_eq!(vol.get(10, 10, 4), -0.3, "open cave stays air");
        assert_eq!(vol.get(0, 0, 10), -0.25);
        // A size limit fills only the pockets below it; 0 fills nothing.
        let mut small = vol0.clone();
        assert_eq!(fill_sealed_air(&mut small, Some(3)), 1, "only the one-sample pocket");
        assert_eq!(small.get(12, 3, 0), f32::MIN_POSITIVE);
        assert_eq!(small.get(5, 5, 4), -0.3, "the three-sample pocket is not below 3");
        let mut both = vol0.clone();
        assert_eq!(fill_sealed_air(&mut both, Some(4)), 4);
        assert_eq!(both, vol);
        let mut none = vol0.clone();
        assert_eq!(fill_sealed_air(&mut none, Some(0)), 0);
        assert_eq!(none, vol0);
    }

    #[test]
    fn pocket_size_counts_samples_across_rows_and_slices() {
        // An L-shaped sealed pocket of 2 + 3 samples over two rows and two slices, and a
        // sealed cavity of 3 x 3 x 3 = 27 samples.
        let dims = [16, 16, 12];
        let mut vol = field(dims, &[[0, 0, 0, 15, 15, 10]]);
        for (x, y, z) in [(3, 3, 3), (4, 3, 3), (4, 4, 3), (4, 4, 4), (5, 4, 4)] {
            let i = vol.index(x, y, z);
            vol.data[i] = -0.3;
        }
        for z in 5..8 {
            for y in 8..11 {
                for x in 8..11 {
                    let i = vol.index(x, y, z);
                    vol.data[i] = -0.3;
                }
            }
        }
        let vol0 = vol.clone();
        assert_eq!(fill_sealed_air(&mut vol, Some(27)), 5);
        let mut all = vol0.clone();
        assert_eq!(fill_sealed_air(&mut all, Some(28)), 5 + 27);
        assert_eq!(all.get(9, 9, 6), 0.3);
        assert_eq!(vol.get(9, 9, 6), -0.3);
    }
}
