//! Distances between two triangle meshes: symmetric point-to-surface distance on a vertex sample.

/// A uniform grid over a mesh's triangles for nearest-triangle queries.
pub struct TriangleGrid<'a> {
    positions: &'a [[f32; 3]],
    triangles: Vec<[u32; 3]>,
    min: [f32; 3],
    cell: f32,
    dims: [usize; 3],
    /// Triangle ids per cell, CSR layout.
    starts: Vec<u32>,
    items: Vec<u32>,
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Squared distance from `p` to triangle (a, b, c) (Ericson, Real-Time Collision Detection 5.1.5).
pub fn point_triangle_dist2(p: [f32; 3], a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f32 {
    let ab = sub(b, a);
    let ac = sub(c, a);
    let ap = sub(p, a);
    let d1 = dot(ab, ap);
    let d2 = dot(ac, ap);
    let closest = |q: [f32; 3]| {
        let d = sub(p, q);
        dot(d, d)
    };
    let lerp = |u: [f32; 3], v: [f32; 3], t: f32| [u[0] + (v[0] - u[0]) * t, u[1] + (v[1] - u[1]) * t, u[2] + (v[2] - u[2]) * t];
    if d1 <= 0.0 && d2 <= 0.0 {
        return closest(a);
    }
    let bp = sub(p, b);
    let d3 = dot(ab, bp);
    let d4 = dot(ac, bp);
    if d3 >= 0.0 && d4 <= d3 {
        return closest(b);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return closest(lerp(a, b, d1 / (d1 - d3)));
    }
    let cp = sub(p, c);
    let d5 = dot(ab, cp);
    let d6 = dot(ac, cp);
    if d6 >= 0.0 && d5 <= d6 {
        return closest(c);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return closest(lerp(a, c, d2 / (d2 - d6)));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return closest(lerp(b, c, (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    closest([a[0] + ab[0] * v + ac[0] * w, a[1] + ab[1] * v + ac[1] * w, a[2] + ab[2] * v + ac[2] * w])
}

impl<'a> TriangleGrid<'a> {
    /// Builds the grid; `None` for a mesh without triangles.
    pub fn new(positions: &'a [[f32; 3]], indices: &[u32]) -> Option<Self> {
        let triangles: Vec<[u32; 3]> = indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        if triangles.is_empty() {
            return None;
        }
        let (mut min, mut max) = ([f32::MAX; 3], [f32::MIN; 3]);
        for t in &triangles {
            for &i in t {
                let p = positions[i as usize];
                for a in 0..3 {
                    min[a] = min[a].min(p[a]);
                    max[a] = max[a].max(p[a]);
                }
            }
        }
        // About two triangles per occupied cell: cell edge from the surface area estimate.
        let extent = sub(max, min).map(|e| e.max(1e-6));
        let cell = ((extent[0] * extent[1] + extent[1] * extent[2] + extent[0] * extent[2]) / triangles.len() as f32).sqrt().max(1e-6) * 2.0;
        let mut dims = extent.map(|e| ((e / cell) as usize + 1).min(512));
        let grid_cell = |dims: [usize; 3]| (0..3).map(|a| extent[a] / dims[a] as f32).fold(0.0f32, f32::max).max(1e-6);
        let cell_in =
            |p: [f32; 3], cell: f32, dims: [usize; 3]| -> [usize; 3] { [0, 1, 2].map(|a| (((p[a] - min[a]) / cell) as usize).min(dims[a] - 1)) };
        // Memory stays linear in the triangles: a hostile mesh (huge triangles, or few of them over a
        // large box) would otherwise fill billions of cell slots. Coarsen until cells and the
        // triangle-cell pairs fit a budget; one cell always does.
        let budget = 8 * triangles.len() as u64 + 4096;
        loop {
            let cell = grid_cell(dims);
            let cells = dims.iter().map(|&d| d as u64).product::<u64>();
            let pairs: u64 = triangles
                .iter()
                .map(|t| {
                    let ps = t.map(|i| positions[i as usize]);
                    let lo = cell_in([0, 1, 2].map(|a| ps[0][a].min(ps[1][a]).min(ps[2][a])), cell, dims);
                    let hi = cell_in([0, 1, 2].map(|a| ps[0][a].max(ps[1][a]).max(ps[2][a])), cell, dims);
                    (0..3).map(|a| (hi[a] - lo[a] + 1) as u64).product::<u64>()
                })
                .sum();
            if (cells <= budget && pairs <= budget) || dims == [1, 1, 1] {
                break;
            }
            dims = dims.map(|d| d.div_ceil(2));
        }
        let cell = grid_cell(dims);
        let cell_of = |p: [f32; 3]| -> [usize; 3] { cell_in(p, cell, dims) };
        let n_cells = dims[0] * dims[1] * dims[2];
        let mut counts = vec![0u32; n_cells + 1];
        let mut spans = Vec::with_capacity(triangles.len());
        for t in &triangles {
            let ps = t.map(|i| positions[i as usize]);
            let lo = cell_of([0, 1, 2].map(|a| ps[0][a].min(ps[1][a]).min(ps[2][a])));
            let hi = cell_of([0, 1, 2].map(|a| ps[0][a].max(ps[1][a]).max(ps[2][a])));
            spans.push((lo, hi));
            for z in lo[2]..=hi[2] {
                for y in lo[1]..=hi[1] {
                    for x in lo[0]..=hi[0] {
                        counts[x + dims[0] * (y + dims[1] * z)] += 1;
                    }
                }
            }
        }
        let mut starts = vec![0u32; n_cells + 1];
        for i in 0..n_cells {
            starts[i + 1] = starts[i] + counts[i];
        }
        let mut fill = starts.clone();
        let mut items = vec![0u32; starts[n_cells] as usize];
        for (ti, (lo, hi)) in spans.iter().enumerate() {
            for z in lo[2]..=hi[2] {
                for y in lo[1]..=hi[1] {
                    for x in lo[0]..=hi[0] {
                        let c = x + dims[0] * (y + dims[1] * z);
                        items[fill[c] as usize] = ti as u32;
                        fill[c] += 1;
                    }
                }
            }
        }
        Some(TriangleGrid { positions, triangles, min, cell, dims, starts, items })
    }

    /// Distance from `p` to the nearest triangle.
    pub fn distance(&self, p: [f32; 3]) -> f32 {
        let c = [0, 1, 2].map(|a| (((p[a] - self.min[a]) / self.cell).floor() as i64).clamp(0, self.dims[a] as i64 - 1));
        let mut best = f32::MAX;
        let max_ring = self.dims.iter().copied().max().unwrap_or(1) as i64;
        for ring in 0..=max_ring {
            // Every cell at Chebyshev ring `ring` around c.
            for z in c[2] - ring..=c[2] + ring {
                for y in c[1] - ring..=c[1] + ring {
                    for x in c[0] - ring..=c[0] + ring {
                        let on_ring = (x - c[0]).abs() == ring || (y - c[1]).abs() == ring || (z - c[2]).abs() == ring;
                        if !on_ring || x < 0 || y < 0 || z < 0 || x >= self.dims[0] as i64 || y >= self.dims[1] as i64 || z >= self.dims[2] as i64 {
                            continue;
                        }
                        let cell = x as usize + self.dims[0] * (y as usize + self.dims[1] * z as usize);
                        for &ti in &self.items[self.starts[cell] as usize..self.starts[cell + 1] as usize] {
                            let t = self.triangles[ti as usize].map(|i| self.positions[i as usize]);
                            best = best.min(point_triangle_dist2(p, t[0], t[1], t[2]));
                        }
                    }
                }
            }
            // Anything in rings further out is at least `ring * cell` away (minus p's offset in its cell).
            let reach = ring as f32 * self.cell;
            if best.is_finite() && best.sqrt() <= reach {
                break;
            }
        }
        best.sqrt()
    }
}

/// Max and mean of the symmetric point-to-surface distance between two meshes, measured from up to
/// `sample` evenly spaced vertices of each onto the other's triangles.
pub fn symmetric_distance(a_pos: &[[f32; 3]], a_idx: &[u32], b_pos: &[[f32; 3]], b_idx: &[u32], sample: usize) -> (f32, f32) {
    let one_way = |from: &[[f32; 3]], from_idx: &[u32], to: Option<&TriangleGrid>| -> Vec<f32> {
        let used: std::collections::BTreeSet<u32> = from_idx.iter().copied().collect();
        let used: Vec<u32> = used.into_iter().collect();
        if used.is_empty() {
            return Vec::new();
        }
        let step = (used.len() / sample.max(1)).max(1);
        used.iter().step_by(step).map(|&i| to.map_or(f32::INFINITY, |g| g.distance(from[i as usize]))).collect()
    };
    let ga = TriangleGrid::new(a_pos, a_idx);
    let gb = TriangleGrid::new(b_pos, b_idx);
    let mut d = one_way(a_pos, a_idx, gb.as_ref());
    d.extend(one_way(b_pos, b_idx, ga.as_ref()));
    if d.is_empty() {
        return (0.0, 0.0);
    }
    let max = d.iter().copied().fold(0.0, f32::max);
    let mean = d.iter().map(|&v| v as f64).sum::<f64>() / d.len() as f64;
    (max, mean as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid_mesh(n: usize, z: impl Fn(f32, f32) -> f32) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut p = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, y) = (i as f32 / n as f32, j as f32 / n as f32);
                p.push([x, y, z(x, y)]);
            }
        }
        let mut idx = Vec::new();
        let w = n as u32 + 1;
        for j in 0..n as u32 {
            for i in 0..n as u32 {
                let a = j * w + i;
                idx.extend_from_slice(&[a, a + 1, a + w + 1, a, a + w + 1, a + w]);
            }
        }
        (p, idx)
    }

    #[test]
    fn point_triangle_distance_cases() {
        let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        assert_eq!(point_triangle_dist2([0.2, 0.2, 3.0], a, b, c), 9.0);
        assert_eq!(point_triangle_dist2([-1.0, 0.0, 0.0], a, b, c), 1.0);
        assert!((point_triangle_dist2([1.0, 1.0, 0.0], a, b, c) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn a_raised_copy_is_exactly_that_far_and_tessellation_does_not_matter() {
        let (pa, ia) = grid_mesh(20, |_, _| 0.0);
        let (pb, ib) = grid_mesh(7, |_, _| 0.25);
        let (max, mean) = symmetric_distance(&pa, &ia, &pb, &ib, 500);
        assert!((max - 0.25).abs() < 1e-5 && (mean - 0.25).abs() < 1e-5, "{max} {mean}");
        let (pc, ic) = grid_mesh(13, |_, _| 0.0);
        let (max, _) = symmetric_distance(&pa, &ia, &pc, &ic, 500);
        assert!(max < 1e-6, "same plane, other tessellation: {max}");
    }
}
