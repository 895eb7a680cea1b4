//! Poisson-disk sampling on a global grid, independent of any tiling.
//!
//! The world rectangle `[0, W] × [0, H]` is cut into square cells of side `r / √2` anchored at the
//! world origin, so a cell holds at most one point of a set with spacing `r`. Each attempt round
//! gives every empty cell one candidate, uniform in the cell and drawn from
//! `Rng::keyed(seed, "scatter.position", candidate_index(rule, attempt, cell))`; candidates are
//! tried in a fixed global order (attempt-major, then cells row-major, Y rows then X) and kept
//! when no kept point of this rule and no `blocker` lies closer than `r`. After
//! [`ATTEMPTS`] rounds the set is close to jammed (random sequential adsorption): its density is
//! [`JAMMED_DENSITY`]` / r²` on open ground, which the caller thins to the density asked for.
//!
//! Every draw is keyed by position in the global grid, never by thread or tile, and the loop is
//! sequential in that fixed order (it is a few milliseconds for a world's trees), so the set is a
//! pure function of (extent, spacing, seed, rule, blockers).

use crate::rng::Rng;

/// Candidate rounds per cell. 24 rounds fill a cell grid to within ~2 % of the jammed limit.
pub const ATTEMPTS: u32 = 24;

/// Points per `r²` of the set after [`ATTEMPTS`] rounds on an unobstructed rectangle (measured by
/// `jammed_density_matches_the_constant` below; the infinite-time RSA limit is 0.547·4/π ≈ 0.697).
pub const JAMMED_DENSITY: f32 = 0.66;

/// The most cells one rule's grid may have (keeps memory bounded for absurd spacings; 16 M cells
/// is a spacing of 0.011 units over a 32 × 32 world).
pub const MAX_CELLS: u64 = 1 << 24;

/// One point of the set: its position and the index keying every random decision about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// World `(x, y)`.
    pub position: [f32; 2],
    /// The key of the candidate's streams: rule, attempt and cell (see [`candidate_index`]).
    pub index: u64,
}

/// The stream index of the candidate of `rule` in `cell` (row-major over the rule's grid) at
/// `attempt`: rule in the top 16 bits, attempt in the next 8, the cell in the low 40.
pub fn candidate_index(rule: u16, attempt: u32, cell: u64) -> u64 {
    (u64::from(rule) << 48) | (u64::from(attempt & 0xFF) << 40) | (cell & ((1 << 40) - 1))
}

/// The cell grid of spacing `r` over `extent`: cell side and cells along X and Y.
pub fn grid(extent: [f32; 2], r: f32) -> (f32, usize, usize) {
    let side = r * std::f32::consts::FRAC_1_SQRT_2;
    let cells = |w: f32| ((w / side).ceil() as usize).max(1);
    (side, cells(extent[0]), cells(extent[1]))
}

/// Points sorted into the cells of a grid (compressed rows), for neighbour queries.
struct Buckets {
    nx: usize,
    ny: usize,
    start: Vec<u32>,
    points: Vec<[f32; 2]>,
}

impl Buckets {
    fn new(side: f32, nx: usize, ny: usize, pts: &[[f32; 2]]) -> Buckets {
        let cell = |p: &[f32; 2]| {
            let cx = ((p[0] / side).max(0.0) as usize).min(nx - 1);
            let cy = ((p[1] / side).max(0.0) as usize).min(ny - 1);
            cx + nx * cy
        };
        let mut start = vec![0u32; nx * ny + 1];
        pts.iter().for_each(|p| start[cell(p) + 1] += 1);
        for i in 0..nx * ny {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut points = vec![[0.0; 2]; pts.len()];
        for p in pts {
            let c = cell(p);
            points[fill[c] as usize] = *p;
            fill[c] += 1;
        }
        Buckets { nx, ny, start, points }
    }

    /// Whether any point lies closer than `r` (`r ≤ 2·side`) to `p` in cell `(cx, cy)`.
    fn any_within(&self, p: [f32; 2], cx: usize, cy: usize, r: f32) -> bool {
        let r2 = r * r;
        for y in cy.saturating_sub(2)..(cy + 3).min(self.ny) {
            for x in cx.saturating_sub(2)..(cx + 3).min(self.nx) {
                let c = x + self.nx * y;
                let pts = &self.points[self.start[c] as usize..self.start[c + 1] as usize];
                if pts.iter().any(|q| dist2(*q, p) < r2) {
                    return true;
                }
            }
        }
        false
    }
}

#[inline]
fn dist2(a: [f32; 2], b: [f32; 2]) -> f32 {
    let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
    dx * dx + dy * dy
}

/// The near-jammed Poisson-disk set of spacing `r` over `[0, extent[0]] × [0, extent[1]]` for
/// `rule`, keeping at least `r` from every point of `blockers` (earlier rules' instances), in
/// acceptance order. The caller checks `r > 0` and the cell count against [`MAX_CELLS`].
pub fn jammed(extent: [f32; 2], r: f32, seed: u64, rule: u16, blockers: &[[f32; 2]]) -> Vec<Candidate> {
    let (side, nx, ny) = grid(extent, r);
    let blocked = Buckets::new(side, nx, ny, blockers);
    let r2 = r * r;
    const EMPTY: u32 = u32::MAX;
    let mut owner = vec![EMPTY; nx * ny];
    let mut out: Vec<Candidate> = Vec::new();
    for attempt in 0..ATTEMPTS {
        for cy in 0..ny {
            for cx in 0..nx {
                let cell = cx + nx * cy;
                if owner[cell] != EMPTY {
                    continue;
                }
                let index = candidate_index(rule, attempt, cell as u64);
                let mut rng = Rng::keyed(seed, "scatter.position", index);
                let x = ((cx as f64 + rng.unit()) * f64::from(side)) as f32;
                let y = ((cy as f64 + rng.unit()) * f64::from(side)) as f32;
                if x > extent[0] || y > extent[1] {
                    continue;
                }
                let p = [x, y];
                // A cell's diagonal is r, so kept points closer than r lie within two cells.
                let near = (cy.saturating_sub(2)..(cy + 3).min(ny)).any(|ny_| {
                    (cx.saturating_sub(2)..(cx + 3).min(nx)).any(|nx_| {
                        let o = owner[nx_ + nx * ny_];
                        o != EMPTY && dist2(out[o as usize].position, p) < r2
                    })
                });
                if near || blocked.any_within(p, cx, cy, r) {
                    continue;
                }
                owner[cell] = out.len() as u32;
                out.push(Candidate { position: p, index });
            }
        }
    }
    out
}

/// Side of the thinning blocks, in cells: counts are exact to within one instance per block.
pub const THIN_BLOCK: usize = 8;

/// Keeps each point of `set` (spacing `r` over `extent`, from [`jammed`]) with probability
/// `keep(point)`, so that the kept count of every block of [`THIN_BLOCK`]² cells is the sum of
/// its probabilities within one. Independent coin flips would leave the count's spread at
/// `√(N·p·(1-p))` (±5 % for a world's trees); instead each block walks its points in a keyed
/// random order from a keyed random start, keeping a point each time the running sum of
/// probabilities crosses an integer (systematic sampling). The random order keeps the choice
/// free of spatial pattern, the block keeps the effect of any change local, and a point's
/// fate depends on its block's points only. Returns the kept points in (block, order) order.
pub fn thin(set: &[Candidate], extent: [f32; 2], r: f32, seed: u64, rule: u16, keep: impl Fn(&Candidate) -> f32) -> Vec<Candidate> {
    let (_, nx, _) = grid(extent, r);
    let bx = nx.div_ceil(THIN_BLOCK) as u64;
    let cell = |c: &Candidate| (c.index & ((1 << 40) - 1)) as usize;
    let block = |c: &Candidate| ((cell(c) / nx / THIN_BLOCK) as u64) * bx + (cell(c) % nx / THIN_BLOCK) as u64;
    let mut order: Vec<(u64, u64, usize)> =
        set.iter().enumerate().map(|(i, c)| (block(c), Rng::keyed(seed, "scatter.thin_order", c.index).next_u64(), i)).collect();
    order.sort_unstable();
    let mut out = Vec::new();
    let mut current = u64::MAX;
    let mut acc = 0.0f64;
    for &(b, _, i) in &order {
        if b != current {
            current = b;
            acc = Rng::keyed(seed, "scatter.thin_start", (u64::from(rule) << 48) | b).unit();
        }
        acc += f64::from(keep(&set[i]).clamp(0.0, 1.0));
        if acc >= 1.0 {
            acc -= 1.0;
            out.push(set[i]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn min_spacing(pts: &[[f32; 2]]) -> f32 {
        let mut best = f32::INFINITY;
        for (i, a) in pts.iter().enumerate() {
            for b in &pts[i + 1..] {
                best = best.min(dist2(*a, *b).sqrt());
            }
        }
        best
    }

    #[test]
    fn jammed_density_matches_the_constant() {
        for &(r, seed) in &[(1.0f32, 1u64), (0.8, 2), (0.5, 3)] {
            let ext = [40.0, 40.0];
            let pts = jammed(ext, r, seed, 0, &[]);
            let density = pts.len() as f32 * r * r / (ext[0] * ext[1]);
            // The border loses a little (no neighbours beyond it), hence the lower slack.
            assert!((density - JAMMED_DENSITY).abs() < 0.03 * JAMMED_DENSITY, "r {r}: {density} points per r²");
            let p: Vec<[f32; 2]> = pts.iter().map(|c| c.position).collect();
            assert!(min_spacing(&p) >= r, "spacing {}", min_spacing(&p));
        }
    }

    #[test]
    fn blockers_keep_their_distance_and_the_set_is_keyed() {
        let blockers: Vec<[f32; 2]> = (0..50).map(|i| [(i % 10) as f32 * 2.0 + 0.5, (i / 10) as f32 * 2.0 + 0.5]).collect();
        let pts = jammed([20.0, 10.0], 0.6, 7, 1, &blockers);
        for c in &pts {
            assert!(blockers.iter().all(|b| dist2(*b, c.position) >= 0.36), "{:?}", c.position);
            assert!(c.position[0] >= 0.0 && c.position[0] <= 20.0 && c.position[1] >= 0.0 && c.position[1] <= 10.0);
        }
        assert_eq!(pts, jammed([20.0, 10.0], 0.6, 7, 1, &blockers));
        assert_ne!(pts, jammed([20.0, 10.0], 0.6, 8, 1, &blockers));
        assert_ne!(pts, jammed([20.0, 10.0], 0.6, 7, 2, &blockers));
    }

    #[test]
    fn thinning_keeps_the_expected_count_closely() {
        let ext = [32.0, 32.0];
        let set = jammed(ext, 0.8, 3, 0, &[]);
        for &p in &[0.1f32, 0.3, 0.5, 0.9] {
            for seed in 0..8 {
                let kept = thin(&set, ext, 0.8, seed, 0, |_| p);
                let expected = p * set.len() as f32;
                // 64 blocks, each within one (sd ≤ ½ each): the total sd is ≤ 4 instances, a binomial one 16.
                assert!((kept.len() as f32 - expected).abs() <= 16.0, "p {p} seed {seed}: {} of {expected}", kept.len());
            }
        }
        // A probability that follows x keeps points where it is high.
        let kept = thin(&set, ext, 0.8, 1, 0, |c| if c.position[0] < 16.0 { 0.0 } else { 1.0 });
        assert!(kept.iter().all(|c| c.position[0] >= 16.0));
        assert_eq!(kept.len(), set.iter().filter(|c| c.position[0] >= 16.0).count());
        assert_ne!(thin(&set, ext, 0.8, 1, 0, |_| 0.5), thin(&set, ext, 0.8, 2, 0, |_| 0.5));
    }
}
