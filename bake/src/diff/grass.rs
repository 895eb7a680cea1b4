//! Grass comparisons of `kiln diff`: the shared pack's patches and their LOD chains (`GPAT`), and a
//! tile's ground maps and patch instances (`GRSS`).
//!
//! Blades are matched by position when their order does not explain them: for each blade of one side
//! the nearest blade of the other in the same patch and level (a grid search, both directions), so a
//! regenerated patch whose blades were reordered reads as a small distance rather than as a different
//! list; blades that kept their order are compared with their namesakes.

use std::collections::BTreeMap;

use kiln_formats::sections::{rgb9e5, Flower, GrassBlade, GrassPatches, GrassTile};
use kiln_formats::{FormatError, Section};
use serde_json::json;

use super::kinds::{exceeds, Context, Judged};

/// Cells per side a nearest-point grid may have, whatever the spread of its points.
const MAX_GRID: usize = 1024;

/// Points in the plane bucketed on a uniform grid, for nearest-point queries.
struct Grid<'a> {
    points: &'a [[f32; 2]],
    min: [f64; 2],
    cell: f64,
    dims: [usize; 2],
    /// `start[c]..start[c + 1]` indexes `items` for cell `c` (x fastest).
    start: Vec<u32>,
    items: Vec<u32>,
}

impl<'a> Grid<'a> {
    fn new(points: &'a [[f32; 2]]) -> Self {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in points {
            for k in 0..2 {
                lo[k] = lo[k].min(f64::from(p[k]));
                hi[k] = hi[k].max(f64::from(p[k]));
            }
        }
        if points.is_empty() {
            (lo, hi) = ([0.0; 2], [0.0; 2]);
        }
        let extent = [(hi[0] - lo[0]).max(1e-9), (hi[1] - lo[1]).max(1e-9)];
        // About two points per cell.
        let cell = (2.0 * extent[0] * extent[1] / points.len().max(1) as f64).sqrt().max(extent[0].max(extent[1]) / MAX_GRID as f64);
        let dims = extent.map(|e| ((e / cell) as usize + 1).min(MAX_GRID));
        let mut grid = Grid { points, min: lo, cell, dims, start: vec![0; dims[0] * dims[1] + 1], items: vec![0; points.len()] };
        let cells: Vec<usize> = points.iter().map(|p| grid.cell_of(*p)).collect();
        for &c in &cells {
            grid.start[c + 1] += 1;
        }
        for c in 0..dims[0] * dims[1] {
            grid.start[c + 1] += grid.start[c];
        }
        let mut fill = grid.start.clone();
        for (i, &c) in cells.iter().enumerate() {
            grid.items[fill[c] as usize] = i as u32;
            fill[c] += 1;
        }
        grid
    }

    fn coords(&self, p: [f32; 2]) -> [usize; 2] {
        [0, 1].map(|k| (((f64::from(p[k]) - self.min[k]) / self.cell).max(0.0) as usize).min(self.dims[k] - 1))
    }

    fn cell_of(&self, p: [f32; 2]) -> usize {
        let [x, y] = self.coords(p);
        y * self.dims[0] + x
    }

    /// The nearest point to `q` and its distance; `None` without points.
    fn nearest(&self, q: [f32; 2]) -> Option<(usize, f64)> {
        if self.points.is_empty() {
            return None;
        }
        let [cx, cy] = self.coords(q).map(|c| c as isize);
        let mut best: Option<(usize, f64)> = None;
        for ring in 0..=self.dims[0].max(self.dims[1]) as isize {
            for y in cy - ring..=cy + ring {
                for x in cx - ring..=cx + ring {
                    let on_ring = (y - cy).abs() == ring || (x - cx).abs() == ring;
                    if !on_ring || x < 0 || y < 0 || x >= self.dims[0] as isize || y >= self.dims[1] as isize {
                        continue;
                    }
                    let c = y as usize * self.dims[0] + x as usize;
                    for &i in &self.items[self.start[c] as usize..self.start[c + 1] as usize] {
                        let d = dist2(q, self.points[i as usize]);
                        if best.is_none_or(|(j, e)| d < e || (d == e && (i as usize) < j)) {
                            best = Some((i as usize, d));
                        }
                    }
                }
            }
            // Cells beyond this ring are at least `ring` cells from q's (clamped) cell.
            if best.is_some_and(|(_, d)| d.sqrt() <= ring as f64 * self.cell) {
                break;
            }
        }
        best.map(|(i, d)| (i, d.sqrt()))
    }
}

fn dist2(a: [f32; 2], b: [f32; 2]) -> f64 {
    (0..2).map(|k| (f64::from(a[k]) - f64::from(b[k])).powi(2)).sum()
}

fn max_abs_of(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs()).fold(0.0, nan_max)
}

/// `f64::max` that keeps a NaN: an unmeasurable difference must count as the largest.
fn nan_max(m: f64, v: f64) -> f64 {
    if m.is_nan() || v.is_nan() {
        f64::NAN
    } else {
        m.max(v)
    }
}

fn relative(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

/// Nearest-blade statistics of one side against the other, accumulated over patches and levels.
#[derive(Default)]
struct BladeStats {
    /// Largest base distance, both directions.
    distance_max: f64,
    /// Sum and count of A→B base distances, for the mean.
    distance_sum: f64,
    matched: usize,
    /// Largest width or length difference of matched blades (world units).
    size_max: f64,
    /// Largest colour channel difference of matched blades.
    color_max: f64,
    /// Largest direction, normal or bend component difference of matched blades.
    shape_max: f64,
    /// Patch levels matched in index order and by nearest blade.
    in_order: usize,
    nearest: usize,
}

impl BladeStats {
    /// Matches one patch level's blades and accumulates the differences of the matched pairs. Equal
    /// counts are matched in index order when that explains the blades as well as nearest matching
    /// does (the worst in-order distance within the tolerance, or at most twice the worst nearest
    /// one): in dense grass, or where merged blades overlap, a blade's nearest neighbour on the other
    /// side is often another blade, and its colour and shape differences would be noise.
    fn add(&mut self, a: &[GrassBlade], b: &[GrassBlade], tol: f32) {
        let (pa, pb): (Vec<[f32; 2]>, Vec<[f32; 2]>) = (a.iter().map(|x| x.position).collect(), b.iter().map(|x| x.position).collect());
        let (ga, gb) = (Grid::new(&pa), Grid::new(&pb));
        let nearest: Vec<Option<(usize, f64)>> = pa.iter().map(|&p| gb.nearest(p)).collect();
        // Symmetric: a blade of B far from every blade of A counts too.
        let back = pb.iter().filter_map(|&p| ga.nearest(p)).map(|(_, d)| d).fold(0.0, nan_max);
        let nearest_worst = nearest.iter().flatten().map(|&(_, d)| d).fold(back, nan_max);
        let in_order = (a.len() == b.len()).then(|| pa.iter().zip(&pb).map(|(p, q)| dist2(*p, *q).sqrt()).fold(0.0, nan_max));
        let pairs: Vec<(usize, usize, f64)> = match in_order {
            Some(worst) if !exceeds(worst, tol) || worst <= 2.0 * nearest_worst => {
                self.in_order += 1;
                self.distance_max = nan_max(self.distance_max, worst);
                (0..a.len()).map(|i| (i, i, dist2(pa[i], pb[i]).sqrt())).collect()
            }
            _ => {
                self.nearest += 1;
                self.distance_max = nan_max(self.distance_max, nearest_worst);
                nearest.iter().enumerate().filter_map(|(i, m)| m.map(|(j, d)| (i, j, d))).collect()
            }
        };
        for (i, j, d) in pairs {
            let (x, y) = (&a[i], &b[j]);
            self.distance_sum += d;
            self.matched += 1;
            self.size_max = nan_max(self.size_max, max_abs_of(&[x.width, x.length], &[y.width, y.length]));
            self.color_max = nan_max(self.color_max, max_abs_of(&x.color, &y.color));
            let shape = |v: &GrassBlade| [v.direction[0], v.direction[1], v.direction[2], v.normal[0], v.normal[1], v.normal[2], v.bend];
            self.shape_max = nan_max(self.shape_max, max_abs_of(&shape(x), &shape(y)));
        }
    }
}

fn flower_stats(a: &[Flower], b: &[Flower]) -> (f64, f64) {
    let pb: Vec<[f32; 2]> = b.iter().map(|f| f.position).collect();
    let grid = Grid::new(&pb);
    let (mut distance, mut color) = (0f64, 0f64);
    for f in a {
        let Some((j, d)) = grid.nearest(f.position) else { continue };
        let g = &b[j];
        distance = nan_max(distance, d.max(max_abs_of(&[f.height, f.radius], &[g.height, g.radius])));
        color = nan_max(color, max_abs_of(&f.color, &g.color));
    }
    (distance, color)
}

/// `GPAT`: patch and level counts, each level's blade count and segments must match (structure);
/// per level the total area's relative difference; blades matched in order or to their nearest in the
/// same patch and level (see `BladeStats::add`): base distance (max both ways, mean), width/length
/// differences (distances), colour, direction/normal/bend differences (fields), parent changes (in
/// index order); flowers by nearest. Distances are judged against `distance`, colour, shape and
/// relative area against `field_max`.
pub(super) fn patches(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (GrassPatches::decode(x)?, GrassPatches::decode(y)?);
    let mut details = BTreeMap::new();
    let mut structure = Vec::new();
    details.insert("patches".into(), json!([a.patches.len(), b.patches.len()]));
    details.insert("levels".into(), json!([a.levels(), b.levels()]));
    if a.patches.len() != b.patches.len() {
        structure.push("patch count".to_owned());
    }
    if a.levels() != b.levels() {
        structure.push("level count".to_owned());
    }
    let levels = a.levels().min(b.levels());
    let pairs: Vec<_> = a.patches.iter().zip(&b.patches).collect();
    let (mut area_rel, mut stats, mut parents) = (0f64, BladeStats::default(), 0usize);
    let mut per_level = Vec::new();
    for k in 0..levels {
        let count = |s: &GrassPatches| s.patches.iter().map(|p| p.levels[k].blades.len()).sum::<usize>();
        let area = |s: &GrassPatches| s.patches.iter().flat_map(|p| &p.levels[k].blades).map(|b| f64::from(b.area())).sum::<f64>();
        let (ca, cb, aa, ab) = (count(&a), count(&b), area(&a), area(&b));
        area_rel = nan_max(area_rel, relative(aa, ab));
        per_level.push(json!({ "blades": [ca, cb], "area": [aa, ab] }));
        for (i, (p, q)) in pairs.iter().enumerate() {
            let (lp, lq) = (&p.levels[k], &q.levels[k]);
            if lp.blades.len() != lq.blades.len() {
                structure.push(format!("patch {i} level {k}: {} vs {} blades", lp.blades.len(), lq.blades.len()));
            } else {
                parents += lp.blades.iter().zip(&lq.blades).filter(|(s, t)| s.parent != t.parent).count();
            }
            if lp.segments != lq.segments {
                structure.push(format!("patch {i} level {k}: {} vs {} segments", lp.segments, lq.segments));
            }
            stats.add(&lp.blades, &lq.blades, cx.tol.distance);
        }
    }
    let (mut flower_distance, mut flower_color) = (0f64, 0f64);
    for (i, (p, q)) in pairs.iter().enumerate() {
        if p.flowers.len() != q.flowers.len() {
            structure.push(format!("patch {i}: {} vs {} flowers", p.flowers.len(), q.flowers.len()));
        }
        let (d, c) = flower_stats(&p.flowers, &q.flowers);
        let (d2, c2) = flower_stats(&q.flowers, &p.flowers);
        flower_distance = nan_max(flower_distance, d.max(d2));
        flower_color = nan_max(flower_color, c.max(c2));
    }
    let tint = max_abs_of(&a.tint, &b.tint);
    let patch_size = (f64::from(a.patch_size) - f64::from(b.patch_size)).abs();
    details.insert("per_level".into(), json!(per_level));
    details.insert("area_max_relative".into(), json!(area_rel));
    details.insert("blade_distance_max".into(), json!(stats.distance_max));
    details.insert("matching".into(), json!({ "in_order": stats.in_order, "nearest": stats.nearest }));
    details.insert("blade_distance_mean".into(), json!(stats.distance_sum / stats.matched.max(1) as f64));
    details.insert("blade_size_max".into(), json!(stats.size_max));
    details.insert("blade_color_max".into(), json!(stats.color_max));
    details.insert("blade_shape_max".into(), json!(stats.shape_max));
    details.insert("parent_changes".into(), json!(parents));
    details.insert("flower_distance_max".into(), json!(flower_distance));
    details.insert("flower_color_max".into(), json!(flower_color));
    details.insert("tint_max".into(), json!(tint));
    details.insert("patch_size".into(), json!([a.patch_size, b.patch_size]));
    if !structure.is_empty() {
        details.insert("structure".into(), json!(structure.iter().take(20).collect::<Vec<_>>()));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    let distance = [stats.distance_max, stats.size_max, flower_distance, patch_size].into_iter().fold(0.0, nan_max);
    let field = [area_rel, stats.color_max, stats.shape_max, flower_color, tint].into_iter().fold(0.0, nan_max);
    let beyond = parents > 0 || exceeds(distance, cx.tol.distance) || exceeds(field, cx.tol.field_max);
    Ok(Judged { beyond, magnitude: nan_max(distance, field), details })
}

/// `GRSS`: map size must match (structure); origin, spacing and heights (max |Δz|) are distances;
/// keep (max and mean |Δ| in [0, 1]; max against `field_max`, RMS against `field_rms`); light by its
/// largest difference relative to the brighter sample (rgb9e5 keeps ~0.2 % of the brightest channel,
/// so an absolute bound means nothing across brightnesses), against `field_max`; instances: equal
/// counts, the largest origin difference (distance), height-scale difference (field), and any rotation
/// or patch id change is beyond.
pub(super) fn tile(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (GrassTile::decode(x)?, GrassTile::decode(y)?);
    let mut details = BTreeMap::new();
    details.insert("map".into(), json!([format!("{0}×{0}", a.size), format!("{0}×{0}", b.size)]));
    details.insert("instances".into(), json!([a.instances.len(), b.instances.len()]));
    if a.patches_hash != b.patches_hash {
        details.insert("patches_pack".into(), json!([format!("{:016x}", a.patches_hash), format!("{:016x}", b.patches_hash)]));
    }
    let mut structure = Vec::new();
    if a.size != b.size {
        structure.push(format!("map of {} vs {} samples per side", a.size, b.size));
    }
    if a.instances.len() != b.instances.len() {
        structure.push("instance counts differ".to_owned());
    }
    if !structure.is_empty() {
        details.insert("structure".into(), json!(structure));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    let placement = max_abs_of(&[a.origin[0], a.origin[1], a.spacing], &[b.origin[0], b.origin[1], b.spacing]);
    let z = |t: &GrassTile| t.heights.iter().map(|&h| t.height_min + f32::from(h) * t.height_step).collect::<Vec<f32>>();
    let heights = max_abs_of(&z(&a), &z(&b));
    let (mut keep_max, mut keep_sum, mut keep_sq) = (0f64, 0f64, 0f64);
    for (p, q) in a.keep.iter().zip(&b.keep) {
        let d = f64::from(p.abs_diff(*q)) / 255.0;
        keep_max = keep_max.max(d);
        keep_sum += d;
        keep_sq += d * d;
    }
    let samples = a.keep.len().max(1) as f64;
    let (mut light_rel, mut light_abs) = (0f64, 0f64);
    for (p, q) in a.light.iter().zip(&b.light) {
        if p == q {
            continue;
        }
        let (p, q) = (rgb9e5::decode(*p), rgb9e5::decode(*q));
        let peak = p.iter().chain(&q).fold(0f32, |m, v| m.max(*v));
        let d = max_abs_of(&p, &q);
        light_abs = nan_max(light_abs, d);
        light_rel = nan_max(light_rel, if peak > 0.0 { d / f64::from(peak) } else { 0.0 });
    }
    let (mut origin, mut scale, mut turned, mut repatched) = (0f64, 0f64, 0usize, Vec::new());
    for (i, (p, q)) in a.instances.iter().zip(&b.instances).enumerate() {
        origin = nan_max(origin, dist2(p.origin, q.origin).sqrt());
        scale = nan_max(scale, (f64::from(p.height_scale) - f64::from(q.height_scale)).abs());
        turned += usize::from(p.rotation != q.rotation);
        if p.patch != q.patch {
            repatched.push(i);
        }
    }
    details.insert("placement_max".into(), json!(placement));
    details.insert("height_max".into(), json!(heights));
    details.insert("keep_max".into(), json!(keep_max));
    details.insert("keep_mean".into(), json!(keep_sum / samples));
    details.insert("light_max_relative".into(), json!(light_rel));
    details.insert("light_max_abs".into(), json!(light_abs));
    details.insert("instance_distance_max".into(), json!(origin));
    details.insert("height_scale_max".into(), json!(scale));
    details.insert("rotation_changes".into(), json!(turned));
    details.insert("patch_changes".into(), json!(repatched.len()));
    if !repatched.is_empty() {
        details.insert("changed_patch_instances".into(), json!(repatched.iter().take(20).collect::<Vec<_>>()));
    }
    let distance = [placement, heights, origin].into_iter().fold(0.0, nan_max);
    let field = [keep_max, light_rel, scale].into_iter().fold(0.0, nan_max);
    let beyond = turned > 0
        || !repatched.is_empty()
        || exceeds(distance, cx.tol.distance)
        || exceeds(field, cx.tol.field_max)
        || exceeds((keep_sq / samples).sqrt(), cx.tol.field_rms);
    Ok(Judged { beyond, magnitude: nan_max(distance, field), details })
}

#[cfg(test)]
#[path = "grass_tests.rs"]
mod tests;
