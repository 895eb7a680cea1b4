//! The merge that builds level k from level k − 1, keeping the total blade area exact.
//!
//! **The rule.** Walk the blades in index order; an unused blade `a` seeds an output blade and
//! takes its nearest *unused* blade `b` (XY distance of bases, ties to the lower index) within the
//! level's bound; both are then used, and `a` is used even when it found nobody. The output blade
//! has width `wa + wb` and length `(wa·la + wb·lb) / (wa + wb)`, so `w·l` is the sum (area exact to
//! one rounding of the length); position, direction, normal, colour and bend are area-weighted
//! means (direction renormalised, normal re-orthogonalised to it). A blade with no partner is
//! copied. Because a used blade is never a candidate again, no blade is merged twice (the
//! reference's search skipped only the seed's partner, so a blade could go into two outputs and
//! area grew).
//!
//! **The bound.** `radius · 2^k` (see [`merge_radius`] for `radius`). **Widening:** if that pass
//! made fewer than [`WIDEN_BELOW`] · n pairs (counts would fall by less than 45 %), the
//! blades left alone are walked again in index order with the bound doubled, pass after pass,
//! each pairing only blades that are still single, until enough pairs form (or the bound spans all
//! the blades). At the default spec the first pass suffices at every level but the sparse last ones. The output keeps
//! the order of each group's lowest index, so index order stays spatially coherent for the next level.

use super::{Blade, PatchSpec};

/// A level whose first pass leaves counts above this fraction of the previous level's gets
/// widened passes (counts then fall by 45–50 %, within the 40–60 %).
pub const WIDEN_BELOW: f64 = 0.45;

/// The level-0 merge radius: level k's bound is `merge_radius · 2^k`.
///
/// The reference's bound is `2.5 · grass_width · 2^k` with `grass_width` 0.002 at 120 blades per
/// 0.0625-unit mesh cell (30 720 blades/unit², spacing 1/√density ≈ 0.0057), so its level-1 bound,
/// 0.01, is 1.75 blade spacings: `2.5 · w` = 0.875 spacing. Kiln's default blades are 1.5× as wide
/// but 15× sparser (0.003 at 2000/unit², spacing 0.022): `2.5 · w` would be 0.34 spacing and level 1
/// would find a partner for few blades. So the radius is the larger of `2.5 · w_mean` and
/// `0.875 / √density`: the reference's bound-to-spacing ratio wherever blades are sparser than
/// its, its own formula where they are denser. At the default it is 0.0196, giving level 1 a bound
/// of 0.039 (1.75 spacings) and counts falling by ~45 % per level on the first pass alone.
pub fn merge_radius(spec: &PatchSpec) -> f32 {
    let spacing = 1.0 / f64::from(spec.density).sqrt();
    (2.5 * f64::from(spec.blade_width)).max(0.875 * spacing) as f32
}

const NONE: u32 = u32::MAX;

/// A uniform grid over the blades of one pass (CSR: cell starts, then items in index order).
struct Grid {
    origin: [f32; 2],
    cell: f32,
    side: [usize; 2],
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Grid {
    fn build(blades: &[Blade], candidates: &[u32], bound: f32) -> Grid {
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for &i in candidates {
            let p = blades[i as usize].position;
            (0..2).for_each(|a| {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            });
        }
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(f32::MIN_POSITIVE);
        // About one candidate per cell at most: a tiny bound over a big patch must not make a huge grid.
        let most = (candidates.len() as f32).sqrt().ceil().max(1.0);
        let cell = bound.max(extent / most);
        let side = [0, 1].map(|a| (((hi[a] - lo[a]) / cell) as usize + 1).min(most as usize + 1));
        let mut grid = Grid { origin: lo, cell, side, starts: vec![0; side[0] * side[1] + 1], items: vec![0; candidates.len()] };
        for &i in candidates {
            let c = grid.cell_of(blades[i as usize].position);
            grid.starts[c + 1] += 1;
        }
        for c in 1..grid.starts.len() {
            grid.starts[c] += grid.starts[c - 1];
        }
        let mut fill = grid.starts.clone();
        for &i in candidates {
            let c = grid.cell_of(blades[i as usize].position);
            grid.items[fill[c] as usize] = i;
            fill[c] += 1;
        }
        grid
    }

    fn coords(&self, p: [f32; 2]) -> [usize; 2] {
        [0, 1].map(|a| (((p[a] - self.origin[a]) / self.cell).max(0.0) as usize).min(self.side[a] - 1))
    }

    fn cell_of(&self, p: [f32; 2]) -> usize {
        let [x, y] = self.coords(p);
        y * self.side[0] + x
    }

    /// The nearest blade not yet used within `bound` of blade `a`, ties to the lower index.
    fn nearest_unused(&self, blades: &[Blade], used: &[bool], a: usize, bound: f32) -> Option<usize> {
        let p = blades[a].position;
        let reach = (bound / self.cell).ceil() as usize;
        let [cx, cy] = self.coords(p);
        let mut best: Option<(f32, usize)> = None;
        for y in cy.saturating_sub(reach)..=(cy + reach).min(self.side[1] - 1) {
            for x in cx.saturating_sub(reach)..=(cx + reach).min(self.side[0] - 1) {
                let c = y * self.side[0] + x;
                for &j in &self.items[self.starts[c] as usize..self.starts[c + 1] as usize] {
                    let j = j as usize;
                    if j == a || used[j] {
                        continue;
                    }
                    let q = blades[j].position;
                    let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
                    let d2 = dx * dx + dy * dy;
                    if d2 <= bound * bound && best.is_none_or(|(bd, bj)| d2 < bd || (d2 == bd && j < bj)) {
                        best = Some((d2, j));
                    }
                }
            }
        }
        best.map(|(_, j)| j)
    }
}

/// One pass in index order over `candidates`: each one not yet used seeds a group and takes its
/// nearest unused candidate within `bound`. Returns the pairs made.
fn pass(prev: &[Blade], candidates: &[u32], bound: f32, used: &mut [bool], partner: &mut [u32]) -> usize {
    let grid = Grid::build(prev, candidates, bound);
    let mut pairs = 0;
    for &a in candidates {
        let a = a as usize;
        if used[a] {
            continue;
        }
        used[a] = true;
        if let Some(b) = grid.nearest_unused(prev, used, a, bound) {
            used[b] = true;
            partner[a] = b as u32;
            partner[b] = a as u32;
            pairs += 1;
        }
    }
    pairs
}

/// Builds level `level` (≥ 1) from `prev` (level `level − 1`) by the rule above with the bound
/// `radius · 2^level` (widened when too few pairs form), and sets each `prev[i].parent` to the index
/// of the output blade it went into. Each output blade has one or two children.
pub fn merge_level(prev: &mut [Blade], level: usize, radius: f32) -> Vec<Blade> {
    let n = prev.len();
    let mut used = vec![false; n];
    let mut partner = vec![NONE; n];
    if n == 0 {
        return Vec::new();
    }
    let mut bound = radius * libm::exp2f(level as f32);
    let all: Vec<u32> = (0..n as u32).collect();
    let mut pairs = pass(prev, &all, bound, &mut used, &mut partner);
    // Once the bound spans every blade, a pass pairs all the singles but one: the loop ends there.
    let reach_all = diagonal(prev);
    // 64 doublings cover any f32 range; the cap only guards a zero or NaN radius.
    for _ in 0..64 {
        if (pairs as f64) >= WIDEN_BELOW * n as f64 || bound.is_nan() || bound > reach_all {
            break;
        }
        let singles: Vec<u32> = all.iter().copied().filter(|&i| partner[i as usize] == NONE).collect();
        if singles.len() < 2 {
            break;
        }
        singles.iter().for_each(|&i| used[i as usize] = false);
        bound = (2.0 * bound).max(reach_all / 1024.0);
        pairs += pass(prev, &singles, bound, &mut used, &mut partner);
    }

    let mut out = Vec::with_capacity(n - pairs);
    for a in 0..n {
        let b = partner[a];
        if b != NONE && (b as usize) < a {
            continue;
        }
        let id = out.len() as u32;
        prev[a].parent = id;
        if b == NONE {
            out.push(Blade { parent: NONE, ..prev[a] });
        } else {
            prev[b as usize].parent = id;
            out.push(merge_pair(&prev[a], &prev[b as usize]));
        }
    }
    out
}

/// The diagonal of the blades' bounding box (0 for one blade).
fn diagonal(blades: &[Blade]) -> f32 {
    let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
    for b in blades {
        (0..2).for_each(|a| {
            lo[a] = lo[a].min(b.position[a]);
            hi[a] = hi[a].max(b.position[a]);
        });
    }
    let (dx, dy) = (hi[0] - lo[0], hi[1] - lo[1]);
    (dx * dx + dy * dy).sqrt()
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn unit(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = dot(v, v).sqrt();
    (n > 1e-12).then(|| v.map(|x| x / n))
}

/// `n` made ⟂ `d` and unit; falls back to any unit vector ⟂ `d` when `n` is (nearly) along it.
fn orthonormal(n: [f64; 3], d: [f64; 3]) -> [f64; 3] {
    let k = dot(n, d);
    unit([n[0] - k * d[0], n[1] - k * d[1], n[2] - k * d[2]]).unwrap_or_else(|| {
        let axis = if d[0].abs() < 0.9 { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
        let k = dot(axis, d);
        unit([axis[0] - k * d[0], axis[1] - k * d[1], axis[2] - k * d[2]]).unwrap_or([0.0, 0.0, 1.0])
    })
}

/// Two blades as one: widths add, `w·l` is the sum of theirs, the rest area-weighted.
fn merge_pair(a: &Blade, b: &Blade) -> Blade {
    // Products of two f32 are exact in f64, so `total` is the exact area sum (× 2) before one rounding.
    let (wa, wb) = (f64::from(a.width), f64::from(b.width));
    let (aa, ab) = (wa * f64::from(a.length), wb * f64::from(b.length));
    let total = aa + ab;
    let width = (wa + wb) as f32;
    let length = (total / f64::from(width)) as f32;
    let mean = |x: f32, y: f32| (f64::from(x) * aa + f64::from(y) * ab) / total;
    let mean3 = |x: [f32; 3], y: [f32; 3]| [0, 1, 2].map(|c| mean(x[c], y[c]));
    let da = a.direction.map(f64::from);
    let d = unit(mean3(a.direction, b.direction)).unwrap_or(da);
    let n = orthonormal(mean3(a.normal, b.normal), d);
    // The f64 mean exceeds the larger input by a few f64 ulps at most, which rounds back to that
    // f32 input: the merged base stays between its children's, so inside the patch.
    Blade {
        position: [mean(a.position[0], b.position[0]) as f32, mean(a.position[1], b.position[1]) as f32],
        direction: d.map(|x| x as f32),
        normal: n.map(|x| x as f32),
        length,
        width,
        bend: mean(a.bend, b.bend) as f32,
        color: mean3(a.color, b.color).map(|x| x as f32),
        parent: NONE,
    }
}
