//! Mip chains whose alpha-tested coverage matches level 0's (Castaño 2010, "alpha-to-coverage
//! preserving mips"): a box filter thins cut-out foliage as it shrinks (texels of partial cover
//! fall under the test), so each level's alpha is scaled until as large a fraction of its texels
//! passes the test as at level 0. The scale is found exactly, not by bisection: the texels that
//! should pass are the k most covered, so the threshold goes midway between the k-th and the
//! (k+1)-th alpha. Colour is averaged in linear light, weighted by coverage, so the colour under
//! the visible texels is the leaves', not the dilated fill's.

use super::capture::{linear_to_srgb8, srgb_lut, unorm8, ViewMaps};
use super::image::Image;
use glam::Vec3A;

/// The smallest byte that passes an alpha test at `alpha_ref` (`byte / 255 >= alpha_ref`).
fn pass_byte(alpha_ref: f32) -> u32 {
    (0..=255u32).find(|&b| b as f32 / 255.0 >= alpha_ref).unwrap_or(256)
}

/// Alpha bytes for `alpha` (in [0,1]) scaled so that `target` of them pass a test at `alpha_ref`
/// (as near as ties allow).
fn scaled_alpha(alpha: &[f32], target: usize, alpha_ref: f32) -> Vec<u8> {
    let pass = pass_byte(alpha_ref) as f32;
    let mut sorted: Vec<f32> = alpha.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let target = target.min(sorted.len());
    // The threshold alpha in the scaled image: midway between the last texel in and the first
    // out. Texels of equal alpha pass or fail together: the tie group at the boundary goes in or
    // out, whichever lands nearer the target.
    let threshold = match target {
        0 => sorted.first().map_or(1.0, |a| a * 1.001 + 1e-6),
        k => {
            let v = sorted[k - 1];
            let above = sorted.partition_point(|&a| a > v);
            let at_or_above = sorted.partition_point(|&a| a >= v);
            if above > 0 && target - above < at_or_above - target {
                0.5 * (sorted[above - 1] + v)
            } else if at_or_above < sorted.len() {
                0.5 * (v + sorted[at_or_above])
            } else {
                v
            }
        }
    };
    if threshold <= 0.0 {
        return alpha.iter().map(|&a| unorm8(a)).collect();
    }
    // byte = round(a·s·255) passes iff a·s·255 ≥ pass − 0.5, i.e. a ≥ threshold.
    let s = (pass - 0.5) / 255.0 / threshold;
    alpha.iter().map(|&a| ((a * s * 255.0).min(255.0) + 0.5) as u8).collect()
}

/// How many of `alpha` bytes pass a test at `alpha_ref`.
pub fn passing(alpha: impl Iterator<Item = u8>, alpha_ref: f32) -> usize {
    let b = pass_byte(alpha_ref);
    alpha.filter(|&a| a as u32 >= b).count()
}

/// The 2×2 texels under texel `(x, y)` of the half-size level of a `w`×`h` image (clamped at odd edges).
fn quad(w: u32, h: u32, x: u32, y: u32) -> [usize; 4] {
    let (x0, y0) = (2 * x, 2 * y);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    [(y0, x0), (y0, x1), (y1, x0), (y1, x1)].map(|(yy, xx)| (yy * w + xx) as usize)
}

/// Weights of a quad's texels: their alphas, or equal when none is covered.
fn weights(alpha: [f32; 4]) -> [f32; 4] {
    let sum: f32 = alpha.iter().sum();
    if sum > 0.0 {
        alpha.map(|a| a / sum)
    } else {
        [0.25; 4]
    }
}

/// Halves sRGB colour with coverage-weighted averaging in linear light; returns colour bytes and
/// the mean alpha in [0,1] per texel.
fn halve_colour(src: &[[u8; 4]], w: u32, h: u32, lut: &[f32; 256]) -> (Vec<[u8; 3]>, Vec<f32>, u32, u32) {
    let (w2, h2) = ((w / 2).max(1), (h / 2).max(1));
    let mut rgb = Vec::with_capacity((w2 * h2) as usize);
    let mut alpha = Vec::with_capacity((w2 * h2) as usize);
    for y in 0..h2 {
        for x in 0..w2 {
            let q = quad(w, h, x, y);
            let a = q.map(|i| src[i][3] as f32 / 255.0);
            let wt = weights(a);
            rgb.push(std::array::from_fn(|c| {
                let lin: f32 = (0..4).map(|k| wt[k] * lut[src[q[k]][c] as usize]).sum();
                linear_to_srgb8(lin)
            }));
            alpha.push(a.iter().sum::<f32>() / 4.0);
        }
    }
    (rgb, alpha, w2, h2)
}

/// A mip chain of `img` (level 0 = `img` itself, then halving down to 1×1) whose alpha-tested
/// coverage at `alpha_ref` stays that of level 0: colour averaged in linear light weighted by
/// alpha (RGB sRGB-encoded), alpha scaled per level (Castaño 2010).
pub fn coverage_preserving_mips(img: &Image, alpha_ref: f32) -> Vec<Image> {
    let lut = *srgb_lut();
    let mut levels = vec![img.clone()];
    if img.width == 0 || img.height == 0 {
        return levels;
    }
    let texels = |i: &Image| i.rgba.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect::<Vec<[u8; 4]>>();
    let fraction0 = passing(img.rgba.chunks_exact(4).map(|c| c[3]), alpha_ref) as f64 / (img.width * img.height) as f64;
    while levels.last().is_some_and(|l| l.width > 1 || l.height > 1) {
        let prev = levels.last().unwrap();
        let (rgb, alpha, w2, h2) = halve_colour(&texels(prev), prev.width, prev.height, &lut);
        let target = (fraction0 * (w2 * h2) as f64).round() as usize;
        let a8 = scaled_alpha(&alpha, target, alpha_ref);
        let mut next = Image::new(w2, h2);
        for (i, (c, a)) in rgb.iter().zip(a8).enumerate() {
            next.rgba[4 * i..4 * i + 4].copy_from_slice(&[c[0], c[1], c[2], a]);
        }
        levels.push(next);
    }
    levels
}

/// The next level of a view (half the side): colour, normal, AO and depth weighted by coverage,
/// coverage scaled so that `target` texels pass the viewer's 0.5 test.
pub(crate) fn halve_view(v: &ViewMaps, target: usize, lut: &[f32; 256]) -> ViewMaps {
    let (rgb, alpha, px2, _) = halve_colour(&v.albedo, v.px, v.px, lut);
    let a8 = scaled_alpha(&alpha, target, 0.5);
    let n = (px2 * px2) as usize;
    let mut out = ViewMaps { px: px2, albedo: Vec::with_capacity(n), normal: Vec::with_capacity(n), depth: Vec::with_capacity(n) };
    for y in 0..px2 {
        for x in 0..px2 {
            let i = (y * px2 + x) as usize;
            let q = quad(v.px, v.px, x, y);
            let wt = weights(q.map(|k| v.albedo[k][3] as f32 / 255.0));
            let (mut sum, mut plain) = (Vec3A::ZERO, Vec3A::ZERO);
            let (mut ao, mut depth) = (0.0, 0.0);
            for k in 0..4 {
                let t = v.normal[q[k]];
                let nk = Vec3A::new(t[0] as f32, t[1] as f32, t[2] as f32) / 127.5 - Vec3A::ONE;
                sum += nk * wt[k];
                plain += nk;
                ao += wt[k] * t[3] as f32;
                depth += wt[k] * v.depth[q[k]] as f32;
            }
            // Opposed normals (two sides of a leaf) can cancel: fall back to the plain sum, then up.
            let nrm = sum.normalize_or(plain.normalize_or(Vec3A::Z));
            out.albedo.push([rgb[i][0], rgb[i][1], rgb[i][2], a8[i]]);
            out.normal.push([unorm8(nrm.x * 0.5 + 0.5), unorm8(nrm.y * 0.5 + 0.5), unorm8(nrm.z * 0.5 + 0.5), (ao + 0.5) as u8]);
            out.depth.push((depth + 0.5) as u16);
        }
    }
    out
}

/// A view's levels below level 0 down to `min_px` per side, each keeping level 0's coverage
/// fraction under the 0.5 test.
pub(crate) fn view_mips(level0: &ViewMaps, min_px: u32) -> Vec<ViewMaps> {
    let lut = *srgb_lut();
    let px0 = level0.px as f64;
    let fraction0 = passing(level0.albedo.iter().map(|a| a[3]), 0.5) as f64 / (px0 * px0);
    let mut out: Vec<ViewMaps> = Vec::new();
    loop {
        let prev = out.last().unwrap_or(level0);
        if prev.px / 2 < min_px.max(1) {
            return out;
        }
        let px2 = (prev.px / 2) as f64;
        let next = halve_view(prev, (fraction0 * px2 * px2).round() as usize, &lut);
        out.push(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A texture of thin leaf-like blobs with soft (anti-aliased) alpha edges, as leaf textures
    /// have: plenty of partial coverage once box-filtered.
    fn foliage(size: u32) -> Image {
        let mut img = Image::new(size, size);
        for y in 0..size {
            for x in 0..size {
                let (u, v) = (x as f32 / size as f32 * std::f32::consts::TAU, y as f32 / size as f32 * std::f32::consts::TAU);
                let f = libm::cosf(3.0 * u + libm::sinf(2.0 * v)) * libm::cosf(5.0 * v - u) + 0.3 * libm::sinf(9.0 * u + 7.0 * v);
                let alpha = ((f - 0.1) * 3.0 + 0.5).clamp(0.0, 1.0);
                let h = (x.wrapping_mul(73_856_093) ^ y.wrapping_mul(19_349_663)) % 97;
                img.set(x, y, [40 + (h % 50) as u8, 120 + (h % 80) as u8, 30, (alpha * 255.0) as u8]);
            }
        }
        img
    }

    #[test]
    fn mips_keep_alpha_tested_coverage_within_five_percent() {
        let img = foliage(64);
        let levels = coverage_preserving_mips(&img, 0.5);
        assert_eq!(levels.len(), 7);
        assert_eq!(levels.last().map(|l| (l.width, l.height)), Some((1, 1)));
        let frac = |i: &Image| passing(i.rgba.chunks_exact(4).map(|c| c[3]), 0.5) as f64 / (i.width * i.height) as f64;
        let f0 = frac(&levels[0]);
        assert!(f0 > 0.2 && f0 < 0.8, "degenerate test image: {f0}");
        for l in &levels[1..5] {
            assert!((frac(l) - f0).abs() <= 0.05 * f0, "{}x{}: {} vs {f0}", l.width, l.height, frac(l));
        }
    }

    #[test]
    fn colour_under_cover_ignores_the_uncovered_texels() {
        let mut img = Image::new(2, 2);
        img.set(0, 0, [255, 0, 0, 255]);
        img.set(1, 0, [0, 0, 255, 0]);
        img.set(0, 1, [0, 0, 255, 0]);
        img.set(1, 1, [0, 0, 255, 0]);
        let levels = coverage_preserving_mips(&img, 0.5);
        assert_eq!(levels[1].texel(0, 0)[..3], [255, 0, 0]);
    }
}
