//! Procedural bark and leaf textures: integer-hash value noise and analytic leaf outlines, so
//! the bytes are the same on every machine. RGB is sRGB-encoded colour, alpha linear.

use super::species::{BarkStyle, LeafShape, SpeciesParams};
use crate::impostor::Image;
use crate::rng::mix64;

/// Bark texture size: one circumference across, two along the branch (square texels on the bark).
pub const BARK_SIZE: [u32; 2] = [64, 128];
/// Leaf texture size.
pub const LEAF_SIZE: u32 = 64;
/// Alpha samples per texel edge (4 × 4 per texel), so alpha is the covered fraction and mips keep coverage.
const SUPERSAMPLE: u32 = 4;

/// A hash of lattice point `(x, y)` in stream `salt`, in `[0, 1)`.
fn hash(x: i64, y: i64, salt: u64) -> f32 {
    let h = mix64(salt ^ mix64((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (y as u64)));
    (h >> 40) as f32 / (1u64 << 24) as f32
}

/// Smooth value noise on a lattice with period `(px, py)` cells, so a texture of the same period tiles.
fn vnoise(x: f32, y: f32, px: i64, py: i64, salt: u64) -> f32 {
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (sx, sy) = (fx * fx * (3.0 - 2.0 * fx), fy * fy * (3.0 - 2.0 * fy));
    let (ix, iy) = (x0 as i64, y0 as i64);
    let h = |dx: i64, dy: i64| hash((ix + dx).rem_euclid(px), (iy + dy).rem_euclid(py), salt);
    let top = h(0, 0) + (h(1, 0) - h(0, 0)) * sx;
    let bottom = h(0, 1) + (h(1, 1) - h(0, 1)) * sx;
    top + (bottom - top) * sy
}

fn shade(c: [u8; 3], k: f32) -> [u8; 3] {
    c.map(|v| (f32::from(v) * k).round().clamp(0.0, 255.0) as u8)
}

/// The species' bark: tileable in both directions, u around the branch, v along it.
pub fn bark(p: &SpeciesParams) -> Image {
    let [w, h] = BARK_SIZE;
    let mut img = Image::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
            let fine = vnoise(u * 16.0, v * 32.0, 16, 32, 1);
            let c = match p.bark_style {
                BarkStyle::Furrowed => {
                    // Ridges: noise stretched along the branch, folded so the furrows are narrow and dark.
                    let n = vnoise(u * 8.0 + 0.6 * vnoise(u * 4.0, v * 8.0, 4, 8, 3), v * 3.0, 8, 3, 2);
                    let ridge = 1.0 - (2.0 * n - 1.0).abs();
                    shade(p.bark_colour, 0.45 + 0.55 * ridge * ridge + 0.25 * (fine - 0.5))
                }
                BarkStyle::Birch => {
                    let row = (v * 24.0).floor();
                    let col = (u * 4.0).floor();
                    let cell = hash(col as i64, row as i64, 7);
                    let in_row = (v * 24.0).fract();
                    let along = (u * 4.0).fract();
                    let dash = cell < 0.55 && (in_row - 0.5).abs() < 0.12 && (along - 0.5).abs() < 0.15 + 0.3 * cell;
                    let patch = vnoise(u * 4.0, v * 6.0, 4, 6, 8) < 0.22;
                    if dash || patch {
                        shade([0x3a, 0x34, 0x30], 0.8 + 0.4 * fine)
                    } else {
                        shade(p.bark_colour, 0.92 + 0.16 * fine)
                    }
                }
                BarkStyle::Plated => {
                    let n = vnoise(u * 5.0, v * 5.0, 5, 5, 4);
                    let crack = (n - 0.5).abs() < 0.05 || (vnoise(u * 10.0, v * 4.0, 10, 4, 5) - 0.5).abs() < 0.03;
                    if crack {
                        shade(p.bark_colour, 0.3)
                    } else {
                        shade(p.bark_colour, 0.8 + 0.4 * vnoise(u * 5.0, v * 5.0, 5, 5, 6) + 0.15 * (fine - 0.5))
                    }
                }
                BarkStyle::Ringed => {
                    let ring = (v * 8.0).fract();
                    let scar = ring < 0.06 || (ring < 0.14 && (u * 6.0).fract() < 0.25);
                    shade(p.bark_colour, if scar { 0.55 } else { 0.9 + 0.2 * (fine - 0.5) })
                }
            };
            img.set(x, y, [c[0], c[1], c[2], 255]);
        }
    }
    img
}

/// Whether leaf-space point `(x, y)` (x across in [-1, 1], y stem to tip in [0, 1]) is on the
/// leaf, and how strongly it lies on a vein (0..1).
fn leaf_at(shape: LeafShape, x: f32, y: f32) -> (bool, f32) {
    let stem = 0.08;
    let petiole = y < stem && x.abs() < 0.05;
    let yl = (y - stem) / (1.0 - stem);
    let oval = |yl: f32| if (0.0..1.0).contains(&yl) { 2.47 * libm::powf(yl, 0.6) * libm::powf(1.0 - yl, 0.8) } else { 0.0 };
    let pinnate_vein = |w: f32| {
        let mid = if x.abs() < 0.05 { 1.0 } else { 0.0 };
        let side = if ((yl - x.abs() * 0.45) * 7.0).fract() < 0.09 && x.abs() < w * 0.85 { 0.6 } else { 0.0 };
        f32::max(mid, side)
    };
    match shape {
        LeafShape::Oval | LeafShape::Lobed | LeafShape::Serrated => {
            let mut w = oval(yl);
            if shape == LeafShape::Lobed {
                w *= 0.68 + 0.32 * libm::fabsf(libm::sinf(std::f32::consts::PI * 4.5 * yl));
            }
            if shape == LeafShape::Serrated {
                w *= 1.0 - 0.12 * (yl * 12.0).fract();
            }
            (petiole || x.abs() < w, pinnate_vein(w))
        }
        LeafShape::Palmate | LeafShape::DeepPalmate => {
            let (lobes, base, reach, sharp, cy) = match shape {
                LeafShape::Palmate => (2.5, 0.2, 0.3, 0.7, 0.42),
                _ => (3.5, 0.1, 0.4, 1.4, 0.45),
            };
            let (px, py) = (x * 0.5, y - cy);
            let r = (px * px + py * py).sqrt();
            let theta = libm::atan2f(px, py);
            let open = theta.abs() < 2.6;
            let rmax = base + reach * libm::powf(libm::fabsf(libm::cosf(lobes * theta)), sharp);
            let vein = if libm::fabsf(libm::sinf(lobes * theta)) * r < 0.012 && libm::fabsf(libm::cosf(lobes * theta)) > 0.5 { 1.0 } else { 0.0 };
            (y < cy && x.abs() < 0.04 || open && r < rmax, vein)
        }
        LeafShape::Needles => {
            // A twig up the middle with needles slanting out and up from both sides.
            let (px, py) = (x * 0.5, y);
            if px.abs() < 0.018 && py < 0.97 {
                return (true, 1.0);
            }
            let (sa, ca) = (0.62f32, 0.78f32);
            let near = (0..18).any(|k| {
                let y0 = 0.02 + k as f32 * 0.053;
                let (dx, dy) = (px.abs(), py - y0);
                let t = (dx * sa + dy * ca).clamp(0.0, 0.5 - 0.2 * y0);
                let (ex, ey) = (dx - sa * t, dy - ca * t);
                ex * ex + ey * ey < 0.011 * 0.011
            });
            (near, 0.0)
        }
    }
}

/// The species' leaf (or needle spray): shape in alpha (the 4 × 4 supersampled covered
/// fraction), colour mottled by noise, veins lighter; uncovered texels carry the leaf colour so
/// filtering never bleeds black.
pub fn leaf(p: &SpeciesParams) -> Image {
    let n = LEAF_SIZE;
    let mut img = Image::new(n, n);
    let to_leaf = |sx: f32, sy: f32| (2.0 * sx / n as f32 - 1.0, 1.0 - sy / n as f32);
    for ty in 0..n {
        for tx in 0..n {
            let mut covered = 0;
            for sy in 0..SUPERSAMPLE {
                for sx in 0..SUPERSAMPLE {
                    let (x, y) = to_leaf(tx as f32 + (sx as f32 + 0.5) / SUPERSAMPLE as f32, ty as f32 + (sy as f32 + 0.5) / SUPERSAMPLE as f32);
                    covered += u32::from(leaf_at(p.leaf_shape, x, y).0);
                }
            }
            let (x, y) = to_leaf(tx as f32 + 0.5, ty as f32 + 0.5);
            let vein = leaf_at(p.leaf_shape, x, y).1;
            let mottle = vnoise(tx as f32 / 8.0, ty as f32 / 8.0, 8, 8, 11) - 0.5;
            let k = 0.9 + (0.6 + 3.0 * p.colour_var) * 0.25 * mottle + 0.25 * vein;
            let c = shade(p.leaf_colour, k);
            let alpha = (covered * 255 + SUPERSAMPLE * SUPERSAMPLE / 2) / (SUPERSAMPLE * SUPERSAMPLE);
            img.set(tx, ty, [c[0], c[1], c[2], alpha as u8]);
        }
    }
    img
}

/// The fraction of the leaf texture a 0.5 alpha test keeps, estimated on a 32 × 32 grid (cheap
/// enough for every prototype; self-AO shrinks leaf occluders by its square root).
pub fn leaf_coverage(p: &SpeciesParams) -> f32 {
    const G: u32 = 32;
    let inside = (0..G * G)
        .filter(|i| {
            let (gx, gy) = ((i % G) as f32 + 0.5, (i / G) as f32 + 0.5);
            leaf_at(p.leaf_shape, 2.0 * gx / G as f32 - 1.0, 1.0 - gy / G as f32).0
        })
        .count();
    inside as f32 / (G * G) as f32
}
