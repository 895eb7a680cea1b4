//! The impostor atlas's direction maps and three-frame blend, mirrored from the bake
//! (`bake/src/impostor/octahedral.rs`) expression for expression; `shaders/trees.wgsl` carries the
//! same functions in WGSL. The tests pin this copy to the bake's values, so a change on either
//! side that the other does not follow fails here. Directions point from the object toward the
//! viewer; frame `(i, j)` is column `i`, row `j` (row 0 at the top), at grid uv `(i, j)/(grid-1)`.
//! The reconstruction (ray march over each frame's depth field, three frames blended) is
//! mirrored the same way from `bake/src/impostor/march.rs`.

/// Which part of the sphere of view directions an atlas covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The whole sphere.
    Octahedral,
    /// The upper hemisphere (views from below use the horizon's frames).
    HemiOctahedral,
}

/// +1 for `x >= 0`, else −1 (WGSL: `select(-1.0, 1.0, x >= 0.0)`).
pub fn sign_nz(x: f32) -> f32 {
    if x >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if l > 0.0 {
        [v[0] / l, v[1] / l, v[2] / l]
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// Direction → uv on the full octahedral map.
pub fn oct_encode(d: [f32; 3]) -> [f32; 2] {
    let l1 = d[0].abs() + d[1].abs() + d[2].abs();
    let (mut a, mut b) = (d[0] / l1, d[1] / l1);
    if d[2] < 0.0 {
        let (fa, fb) = ((1.0 - b.abs()) * sign_nz(a), (1.0 - a.abs()) * sign_nz(b));
        a = fa;
        b = fb;
    }
    [a * 0.5 + 0.5, b * 0.5 + 0.5]
}

/// uv on the full octahedral map → unit direction.
pub fn oct_decode(uv: [f32; 2]) -> [f32; 3] {
    let (mut a, mut b) = (uv[0] * 2.0 - 1.0, uv[1] * 2.0 - 1.0);
    let z = 1.0 - a.abs() - b.abs();
    if z < 0.0 {
        let (fa, fb) = ((1.0 - b.abs()) * sign_nz(a), (1.0 - a.abs()) * sign_nz(b));
        a = fa;
        b = fb;
    }
    normalize([a, b, z])
}

/// Direction → uv on the hemi-octahedral map (below the horizon maps to the horizon).
pub fn hemi_encode(d: [f32; 3]) -> [f32; 2] {
    let z = d[2].max(0.0);
    let l1 = d[0].abs() + d[1].abs() + z;
    let (x, y) = (d[0] / l1, d[1] / l1);
    [(x + y) * 0.5 + 0.5, (x - y) * 0.5 + 0.5]
}

/// uv on the hemi-octahedral map → unit direction.
pub fn hemi_decode(uv: [f32; 2]) -> [f32; 3] {
    let (a, b) = (uv[0] * 2.0 - 1.0, uv[1] * 2.0 - 1.0);
    let (x, y) = ((a + b) * 0.5, (a - b) * 0.5);
    normalize([x, y, 1.0 - x.abs() - y.abs()])
}

/// Encode by layout.
pub fn encode(layout: Layout, d: [f32; 3]) -> [f32; 2] {
    match layout {
        Layout::Octahedral => oct_encode(d),
        Layout::HemiOctahedral => hemi_encode(d),
    }
}

/// Decode by layout.
pub fn decode(layout: Layout, uv: [f32; 2]) -> [f32; 3] {
    match layout {
        Layout::Octahedral => oct_decode(uv),
        Layout::HemiOctahedral => hemi_decode(uv),
    }
}

/// The view direction of frame `(i, j)`.
pub fn frame_direction(layout: Layout, grid: u32, i: u32, j: u32) -> [f32; 3] {
    let n = (grid - 1) as f32;
    decode(layout, [i as f32 / n, j as f32 / n])
}

/// A frame's image axes: `right` = Z × d (horizontal), `up` = d × right; +X straight up or down.
pub fn frame_basis(d: [f32; 3]) -> ([f32; 3], [f32; 3]) {
    let h = d[0] * d[0] + d[1] * d[1];
    let right = if h > 1e-12 {
        let l = h.sqrt();
        [-d[1] / l, d[0] / l, 0.0]
    } else {
        [1.0, 0.0, 0.0]
    };
    let up = [d[1] * right[2] - d[2] * right[1], d[2] * right[0] - d[0] * right[2], d[0] * right[1] - d[1] * right[0]];
    (right, up)
}

/// The three frames around a view direction and their weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameBlend {
    /// `(i, j)` of each frame.
    pub frames: [[u32; 2]; 3],
    /// `min(1−fx, 1−fy)`, `|fx−fy|`, `min(fx, fy)`.
    pub weights: [f32; 3],
}

/// The three frames around view direction `d` (`grid` ≥ 2).
pub fn select_frames(layout: Layout, grid: u32, d: [f32; 3]) -> FrameBlend {
    let n = (grid - 1) as f32;
    let uv = encode(layout, d);
    let g = [(uv[0] * n).clamp(0.0, n), (uv[1] * n).clamp(0.0, n)];
    let cell = [g[0].floor().min(n - 1.0), g[1].floor().min(n - 1.0)];
    let (fx, fy) = (g[0] - cell[0], g[1] - cell[1]);
    let (ci, cj) = (cell[0] as u32, cell[1] as u32);
    let second = if fx > fy { [ci + 1, cj] } else { [ci, cj + 1] };
    FrameBlend { frames: [[ci, cj], second, [ci + 1, cj + 1]], weights: [(1.0 - fx).min(1.0 - fy), (fx - fy).abs(), fx.min(fy)] }
}

// ---- reconstruction: mirror of `bake/src/impostor/march.rs` (WGSL: `frame_hit`, `impostor_hit`) ----

/// The reconstruction's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct March {
    /// Equal steps of the march across the bounding sphere.
    pub steps: u32,
    /// Bisection steps after the march.
    pub refine: u32,
    /// A texel is a surface where its coverage is at least this.
    pub min_coverage: f32,
    /// When set, frames whose surface point lies this far (atlas units along the view) behind
    /// the nearest frame's are left out of colour and depth (measured in the bake, never drawn here).
    pub nearest: Option<f32>,
}

impl March {
    /// What the viewer draws with (`trees.wgsl`: MARCH_STEPS, REFINE_STEPS, MIN_COVERAGE).
    pub const VIEWER: March = March { steps: 12, refine: 4, min_coverage: 0.01, nearest: None };
}

/// What one frame's depth field gives for a ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameHit {
    /// Colour (whatever the sampler returns) and coverage, 0 where the ray meets no surface.
    pub albedo: [f32; 4],
    /// The surface point (atlas units).
    pub pos: [f32; 3],
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn along(o: [f32; 3], d: [f32; 3], s: f32) -> [f32; 3] {
    [o[0] + d[0] * s, o[1] + d[1] * s, o[2] + d[2] * s]
}

/// View-local uv in \[0,1\]² of point `p` in the frame with axes `right`, `up` (row 0 at the top).
pub fn view_uv(right: [f32; 3], up: [f32; 3], p: [f32; 3]) -> [f32; 2] {
    [0.5 + 0.5 * dot(p, right), 0.5 - 0.5 * dot(p, up)]
}

/// The parameter range `[s0, s1]` of the ray `o + s·d` (`d` unit) inside the unit sphere, `s0 ≥ 0`;
/// `None` when it misses.
pub fn sphere_span(o: [f32; 3], d: [f32; 3]) -> Option<[f32; 2]> {
    let b = dot(o, d);
    let c = dot(o, o) - 1.0;
    let disc = b * b - c;
    if disc <= 0.0 {
        return None;
    }
    let root = disc.sqrt();
    let s1 = -b + root;
    if s1 <= 0.0 {
        return None;
    }
    Some([(-b - root).max(0.0), s1])
}

/// The first surface of frame `(dk, right, up)` (direction toward its viewer, image axes) along the
/// ray `o + s·d` for `s` in `span`. `sample(uv)` reads the frame's view at view-local uv:
/// colour + coverage, and depth in atlas units. A point is behind the surface where its height
/// `dot(p, dk)` is at most the depth there and the coverage there is at least `m.min_coverage`.
pub fn frame_hit(
    m: &March,
    (dk, right, up): ([f32; 3], [f32; 3], [f32; 3]),
    o: [f32; 3],
    d: [f32; 3],
    span: [f32; 2],
    sample: impl Fn([f32; 2]) -> ([f32; 4], f32),
) -> FrameHit {
    let behind = |s: f32| -> bool {
        let p = along(o, d, s);
        let (a, z) = sample(view_uv(right, up, p));
        dot(p, dk) <= z && a[3] >= m.min_coverage
    };
    let step = (span[1] - span[0]) / m.steps as f32;
    let mut lo = span[0];
    let mut hi = -1.0;
    if behind(lo) {
        hi = lo;
    } else {
        for k in 1..=m.steps {
            let s = span[0] + step * k as f32;
            if behind(s) {
                hi = s;
                break;
            }
            lo = s;
        }
    }
    if hi < 0.0 {
        return FrameHit { albedo: [0.0; 4], pos: along(o, d, span[1]) };
    }
    if hi > lo {
        for _ in 0..m.refine {
            let mid = 0.5 * (lo + hi);
            if behind(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
    let p = along(o, d, hi);
    let (albedo, _) = sample(view_uv(right, up, p));
    FrameHit { albedo, pos: p }
}

/// The three frames' hits combined for a ray along `d` (unit, toward the object) with blend
/// weights `w`: coverage `Σ wₖ·αₖ`; colour and point weighted by `wₖ·αₖ` (with `m.nearest`,
/// over the frames whose point is within it of the nearest along the view). Returns colour + coverage and
/// the point (atlas units).
pub fn combine(m: &March, hits: [FrameHit; 3], w: [f32; 3], d: [f32; 3]) -> ([f32; 4], [f32; 3]) {
    let wa = [w[0] * hits[0].albedo[3], w[1] * hits[1].albedo[3], w[2] * hits[2].albedo[3]];
    let h = [-dot(hits[0].pos, d), -dot(hits[1].pos, d), -dot(hits[2].pos, d)];
    // The nearest point among the frames that see a surface (−1e9: none).
    let near = [0, 1, 2].iter().fold(-1e9f32, |acc, &k| if wa[k] > 0.0 { acc.max(h[k]) } else { acc });
    let keep = match m.nearest {
        Some(slack) => [0, 1, 2].map(|k| if h[k] >= near - slack { wa[k] } else { 0.0 }),
        None => wa,
    };
    let sum = keep[0] + keep[1] + keep[2];
    let inv = 1.0 / sum.max(1e-6);
    let mut out = [0.0; 4];
    let mut pos = [0.0; 3];
    for c in 0..3 {
        out[c] = (hits[0].albedo[c] * keep[0] + hits[1].albedo[c] * keep[1] + hits[2].albedo[c] * keep[2]) * inv;
        pos[c] = (hits[0].pos[c] * keep[0] + hits[1].pos[c] * keep[1] + hits[2].pos[c] * keep[2]) * inv;
    }
    out[3] = wa[0] + wa[1] + wa[2];
    (out, pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4)
    }

    /// The bake's pinned values (`bake/src/impostor/octahedral.rs` tests): the pole at the centre
    /// of both maps, frames on the grid's vertices, one frame alone on its own direction.
    #[test]
    fn matches_the_bakes_pinned_values() {
        assert_eq!(oct_encode([0.0, 0.0, 1.0]), [0.5, 0.5]);
        assert_eq!(hemi_encode([0.0, 0.0, 1.0]), [0.5, 0.5]);
        // Corners of the full map fold to straight down; the hemi map's corners are horizontal.
        assert!(close(&oct_decode([0.0, 0.0]), &[0.0, 0.0, -1.0]));
        assert!(close(&hemi_decode([1.0, 0.5]), &[std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::FRAC_1_SQRT_2, 0.0]));
        for layout in [Layout::Octahedral, Layout::HemiOctahedral] {
            for (i, j) in [(0, 0), (3, 7), (11, 11), (5, 11)] {
                let d = frame_direction(layout, 12, i, j);
                let b = select_frames(layout, 12, d);
                let w: f32 =
                    b.frames.iter().zip(b.weights).filter(|(f, _)| close(&frame_direction(layout, 12, f[0], f[1]), &d)).map(|(_, w)| w).sum();
                assert!((w - 1.0).abs() < 1e-4, "{layout:?} ({i},{j}) {b:?}");
            }
        }
        // A direction between frames: (fx, fy) = (0.75, 0.25) of cell (5, 5) on a 12-grid.
        let d = oct_decode([5.75 / 11.0, 5.25 / 11.0]);
        let b = select_frames(Layout::Octahedral, 12, d);
        assert_eq!(b.frames, [[5, 5], [6, 5], [6, 6]]);
        assert!(close(&b.weights, &[0.25, 0.5, 0.25]), "{b:?}");
    }

    /// The bake's pinned case (`bake/src/impostor/march.rs` tests): the same three bumps, weights
    /// and ray give the same colour, coverage and point.
    #[test]
    fn reconstruction_matches_the_bakes_pinned_values() {
        let bump = |c: [f32; 2]| {
            move |uv: [f32; 2]| {
                let r2 = (uv[0] - c[0]).powi(2) + (uv[1] - c[1]).powi(2);
                let a = if r2 <= 0.09 { 1.0 } else { 0.0 };
                ([uv[0], uv[1], 0.0, a], 0.5 - 2.0 * r2)
            }
        };
        let m = March::VIEWER;
        assert_eq!((m.steps, m.refine, m.min_coverage, m.nearest), (12, 4, 0.01, None), "trees.wgsl's constants");
        let view = oct_decode([5.75 / 11.0, 5.25 / 11.0]);
        let d = [-view[0], -view[1], -view[2]];
        let o = [view[0] * 2.0 + 0.1, view[1] * 2.0 - 0.05, view[2] * 2.0 + 0.02];
        let span = sphere_span(o, d).expect("the ray meets the sphere");
        let dirs = [[5.0, 5.0], [6.0, 5.0], [6.0, 6.0]].map(|f: [f32; 2]| oct_decode([f[0] / 11.0, f[1] / 11.0]));
        let centres = [[0.5, 0.5], [0.47, 0.52], [0.55, 0.5]];
        let hits = [0, 1, 2].map(|k| {
            let (right, up) = frame_basis(dirs[k]);
            frame_hit(&m, (dirs[k], right, up), o, d, span, bump(centres[k]))
        });
        let (albedo, pos) = combine(&m, hits, [0.25, 0.5, 0.25], d);
        assert!(close(&albedo, &[0.509_021_4, 0.497_091_77, 0.0, 1.0]), "{albedo:?}");
        assert!(close(&pos, &[0.122_901_25, -0.072_901_27, 0.478_025_47]), "{pos:?}");
        assert!(sphere_span([2.0, 0.0, 2.0], d).is_none());
    }

    #[test]
    fn round_trips_and_bases_are_upright() {
        for k in 0..500 {
            let z = 1.0 - 2.0 * (k as f32 + 0.5) / 500.0;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let a = k as f32 * 2.399_963;
            let d = [r * a.cos(), r * a.sin(), z];
            assert!(close(&oct_decode(oct_encode(d)), &d.map(|c| c)) || oct_decode(oct_encode(d)).iter().zip(d).all(|(x, y)| (x - y).abs() < 1e-5));
            if z >= 0.0 {
                assert!(hemi_decode(hemi_encode(d)).iter().zip(d).all(|(x, y)| (x - y).abs() < 1e-5));
            }
            let (right, up) = frame_basis(d);
            assert!(right[2] == 0.0 && up[2] >= -1e-6);
            let b = select_frames(Layout::Octahedral, 12, d);
            assert!((b.weights.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }
}
