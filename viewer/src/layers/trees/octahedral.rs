//! The impostor atlas's direction maps and three-frame blend, mirrored from the bake
//! (`bake/src/impostor/octahedral.rs`) expression for expression; `shaders/trees.wgsl` carries the
//! same functions in WGSL. The tests pin this copy to the bake's values, so a change on either
//! side that the other does not follow fails here. Directions point from the object toward the
//! viewer; frame `(i, j)` is column `i`, row `j` (row 0 at the top), at grid uv `(i, j)/(grid-1)`.

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
