//! Octahedral and hemi-octahedral maps between view directions and the atlas grid, and the
//! three-frame blend (wojtekpil's Godot impostors): a grid cell is cut along its diagonal and a
//! view direction is blended from the three frames at the corners of its half, with barycentric
//! weights, so the image changes continuously as the camera moves across frames.
//!
//! The viewer's WGSL mirrors these functions expression for expression, so they are small pure
//! functions on `f32` arrays. Where WGSL's `sign(0)` would give 0, [`sign_nz`] gives +1 (WGSL:
//! `select(-1.0, 1.0, x >= 0.0)`). Directions point from the object toward the viewer; object
//! space is Z up. Frame `(i, j)` is column `i`, row `j` of the atlas (row 0 at the top) and sits
//! at grid uv `(i, j) / (grid - 1)`: frames lie on the grid's vertices, so the border frames of
//! the full octahedron repeat the folded edge and every direction has three frames around it.

/// Which part of the sphere of view directions the atlas covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The whole sphere (views from below too).
    Octahedral,
    /// The upper hemisphere only (views from below use the horizon's frames): twice the views'
    /// density where a ground-standing object is seen from.
    HemiOctahedral,
}

/// +1 for `x >= 0` (also for -0.0's sibling +0.0), else -1.
#[inline]
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

/// A direction (any length but zero) to uv in \[0,1\]² on the full octahedral map: the upper
/// hemisphere fills the centre diamond, the lower one the four corners.
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

/// The unit direction at uv of the full octahedral map ([`oct_encode`] undone).
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

/// A direction to uv in \[0,1\]² on the hemi-octahedral map: the upper hemisphere's diamond
/// turned 45° to fill the square. Directions below the horizon map to the horizon.
pub fn hemi_encode(d: [f32; 3]) -> [f32; 2] {
    let z = d[2].max(0.0);
    // Straight down has no heading: it maps to the top view (max keeps 0/0 out).
    let l1 = (d[0].abs() + d[1].abs() + z).max(f32::MIN_POSITIVE);
    let (x, y) = (d[0] / l1, d[1] / l1);
    [(x + y) * 0.5 + 0.5, (x - y) * 0.5 + 0.5]
}

/// The unit direction at uv of the hemi-octahedral map ([`hemi_encode`] undone).
pub fn hemi_decode(uv: [f32; 2]) -> [f32; 3] {
    let (a, b) = (uv[0] * 2.0 - 1.0, uv[1] * 2.0 - 1.0);
    let (x, y) = ((a + b) * 0.5, (a - b) * 0.5);
    normalize([x, y, 1.0 - x.abs() - y.abs()])
}

/// [`oct_encode`] or [`hemi_encode`] by layout.
pub fn encode(layout: Layout, d: [f32; 3]) -> [f32; 2] {
    match layout {
        Layout::Octahedral => oct_encode(d),
        Layout::HemiOctahedral => hemi_encode(d),
    }
}

/// [`oct_decode`] or [`hemi_decode`] by layout.
pub fn decode(layout: Layout, uv: [f32; 2]) -> [f32; 3] {
    match layout {
        Layout::Octahedral => oct_decode(uv),
        Layout::HemiOctahedral => hemi_decode(uv),
    }
}

/// The grid uv of frame `(i, j)`: the frames sit on the grid's vertices.
pub fn frame_uv(grid: u32, i: u32, j: u32) -> [f32; 2] {
    let n = (grid - 1) as f32;
    [i as f32 / n, j as f32 / n]
}

/// The view direction (object toward viewer) of frame `(i, j)` of a `grid`×`grid` atlas.
pub fn frame_direction(layout: Layout, grid: u32, i: u32, j: u32) -> [f32; 3] {
    decode(layout, frame_uv(grid, i, j))
}

/// The image plane axes of a frame seen from direction `d` (unit): `right` is horizontal
/// (Z × d), `up` = d × right, so horizontal views stand upright; straight up or down, right = +X.
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

/// The three frames a view direction blends and their weights (summing to 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameBlend {
    /// `(i, j)` of each frame: the cell's corner, the corner across the half's edge, the far corner.
    pub frames: [[u32; 2]; 3],
    /// Barycentric weights: `min(1−fx, 1−fy)`, `|fx−fy|`, `min(fx, fy)`.
    pub weights: [f32; 3],
}

/// The three frames around view direction `d` and their weights (`grid` ≥ 2).
pub fn select_frames(layout: Layout, grid: u32, d: [f32; 3]) -> FrameBlend {
    let n = (grid - 1) as f32;
    let uv = encode(layout, d);
    let g = [(uv[0] * n).clamp(0.0, n), (uv[1] * n).clamp(0.0, n)];
    // The last vertex belongs to the cell before it (fraction 1), so every cell has a far corner.
    let cell = [g[0].floor().min(n - 1.0), g[1].floor().min(n - 1.0)];
    let (fx, fy) = (g[0] - cell[0], g[1] - cell[1]);
    let (ci, cj) = (cell[0] as u32, cell[1] as u32);
    let second = if fx > fy { [ci + 1, cj] } else { [ci, cj + 1] };
    FrameBlend { frames: [[ci, cj], second, [ci + 1, cj + 1]], weights: [(1.0 - fx).min(1.0 - fy), (fx - fy).abs(), fx.min(fy)] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Directions spread over the sphere (Fibonacci), with the poles and axes added.
    fn directions(n: usize) -> Vec<[f32; 3]> {
        let mut out: Vec<[f32; 3]> = (0..n)
            .map(|k| {
                let z = 1.0 - 2.0 * (k as f32 + 0.5) / n as f32;
                let r = (1.0 - z * z).max(0.0).sqrt();
                let a = k as f32 * 2.399_963;
                [r * libm::cosf(a), r * libm::sinf(a), z]
            })
            .collect();
        out.extend([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.6, 0.8, 0.0]]);
        out
    }

    fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    }

    #[test]
    fn maps_round_trip() {
        for d in directions(2000) {
            let back = oct_decode(oct_encode(d));
            assert!(dist(back, d) < 1e-5, "{d:?} -> {back:?}");
            let uv = oct_encode(d);
            assert!(uv.iter().all(|c| (0.0..=1.0).contains(c)));
            if d[2] >= 0.0 {
                let back = hemi_decode(hemi_encode(d));
                assert!(dist(back, d) < 1e-5, "hemi {d:?} -> {back:?}");
            } else if d[0] != 0.0 || d[1] != 0.0 {
                // Below the horizon: the horizon direction with the same heading.
                let back = hemi_decode(hemi_encode(d));
                assert!(back[2].abs() < 1e-6 && back[0] * d[0] + back[1] * d[1] > 0.0, "{d:?} -> {back:?}");
            }
        }
        for layout in [Layout::Octahedral, Layout::HemiOctahedral] {
            for k in 0..=20 {
                for l in 0..=20 {
                    let uv = [k as f32 / 20.0, l as f32 / 20.0];
                    let d = decode(layout, uv);
                    let again = decode(layout, encode(layout, d));
                    assert!(dist(d, again) < 1e-5, "{layout:?} {uv:?}");
                }
            }
        }
        assert_eq!(oct_encode([0.0, 0.0, 1.0]), [0.5, 0.5]);
        assert_eq!(hemi_encode([0.0, 0.0, 1.0]), [0.5, 0.5]);
    }

    #[test]
    fn frame_bases_are_orthonormal_and_upright() {
        for d in directions(300) {
            let (r, u) = frame_basis(d);
            let dot = |a: [f32; 3], b: [f32; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
            assert!(dot(r, d).abs() < 1e-5 && dot(u, d).abs() < 1e-5 && dot(r, u).abs() < 1e-5);
            assert!((dot(r, r) - 1.0).abs() < 1e-5 && (dot(u, u) - 1.0).abs() < 1e-5);
            assert!(u[2] >= -1e-6, "up points up or sideways: {u:?}");
        }
    }

    /// Frame weights keyed by frame direction (frames repeated on the fold share one key).
    fn weight_map(layout: Layout, grid: u32, d: [f32; 3]) -> BTreeMap<[i32; 3], f32> {
        let blend = select_frames(layout, grid, d);
        let mut map = BTreeMap::new();
        for (f, w) in blend.frames.iter().zip(blend.weights) {
            let dir = frame_direction(layout, grid, f[0], f[1]);
            *map.entry(dir.map(|c| (c * 1000.0).round() as i32)).or_insert(0.0) += w;
        }
        map
    }

    #[test]
    fn weights_sum_to_one_and_select_nearby_frames() {
        for layout in [Layout::Octahedral, Layout::HemiOctahedral] {
            for grid in [2, 8, 12] {
                for d in directions(1500) {
                    let b = select_frames(layout, grid, d);
                    let sum: f32 = b.weights.iter().sum();
                    assert!((sum - 1.0).abs() < 1e-5 && b.weights.iter().all(|w| *w >= 0.0), "{d:?} {b:?}");
                    assert!(b.frames.iter().all(|f| f[0] < grid && f[1] < grid));
                    // The heaviest frame is within about a cell diagonal of the view (the map stretches up to ~2x).
                    let k = (0..3).max_by(|&a, &c| b.weights[a].total_cmp(&b.weights[c])).unwrap();
                    let fd = frame_direction(layout, grid, b.frames[k][0], b.frames[k][1]);
                    let seen = if layout == Layout::HemiOctahedral { decode(layout, encode(layout, d)) } else { d };
                    assert!(dist(fd, seen) < 5.0 / (grid - 1) as f32, "{layout:?} {grid} {d:?} {}", dist(fd, seen) * (grid - 1) as f32);
                }
            }
            // A view straight along a frame's direction uses that frame alone.
            for (i, j) in [(0, 0), (3, 7), (11, 11), (5, 11)] {
                let d = frame_direction(layout, 12, i, j);
                let w = weight_map(layout, 12, d);
                let key = d.map(|c| (c * 1000.0).round() as i32);
                assert!((w[&key] - 1.0).abs() < 1e-4, "{layout:?} ({i},{j}) {w:?}");
            }
        }
    }

    #[test]
    fn weights_change_continuously_with_the_view() {
        for layout in [Layout::Octahedral, Layout::HemiOctahedral] {
            for d in directions(3000) {
                // A step of about 0.06° in a fixed sideways direction.
                let e = normalize([d[0] + 0.001 * d[2] + 0.0007, d[1] - 0.0009, d[2] - 0.001 * d[0]]);
                if layout == Layout::HemiOctahedral && (d[2] < 0.01 || e[2] < 0.01) {
                    continue;
                }
                let (a, b) = (weight_map(layout, 12, d), weight_map(layout, 12, e));
                let mut change = 0.0;
                for (k, w) in &a {
                    change += (w - b.get(k).copied().unwrap_or(0.0)).abs();
                }
                for (k, w) in &b {
                    change += if a.contains_key(k) { 0.0 } else { *w };
                }
                assert!(change < 0.05, "{layout:?} {d:?}: weights jump by {change}: {a:?} {b:?}");
            }
        }
    }
}
