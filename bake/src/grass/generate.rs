//! Level 0 and the flowers: every random choice of a patch, each kind of decision from its own
//! keyed stream per blade (`Rng::keyed(seed, "grass.<kind>", index · 2³² + i)`), so changing how
//! one kind draws leaves the others' values alone.

use std::f64::consts::TAU;

use super::{Blade, Flower, PatchSpec};
use crate::rng::Rng;

/// The key of item `i` of patch `index`.
fn key(index: u32, i: u64) -> u64 {
    (u64::from(index) << 32) | i
}

/// `x` as f32, inside `[0, side)` (rounding to f32 may land exactly on `side`).
pub(super) fn inside(x: f64, side: f32) -> f32 {
    let v = (x as f32).max(0.0);
    if v < side {
        v
    } else {
        f32::from_bits(side.to_bits() - 1)
    }
}

fn normalize(v: [f64; 3]) -> [f64; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / n, v[1] / n, v[2] / n]
}

/// The cells of a `g × g` grid that hold a blade: `n` of the `g²`, the dropped ones chosen at
/// random (so the missing few are not all in the last row), in row-major order.
fn kept_cells(n: usize, g: usize, seed: u64, index: u32) -> Vec<u32> {
    let mut cells: Vec<u32> = (0..(g * g) as u32).collect();
    let drop = g * g - n;
    let mut rng = Rng::keyed(seed, "grass.cells", u64::from(index));
    // Partial Fisher–Yates from the back: the last `drop` slots end up a uniform random subset.
    for i in 0..drop {
        let last = cells.len() - 1 - i;
        let j = (rng.unit() * (last + 1) as f64) as usize;
        cells.swap(j.min(last), last);
    }
    cells.truncate(n);
    cells.sort_unstable();
    cells
}

/// Level 0: `spec.blade_count()` blades, one per kept cell of a jittered (stratified) grid over
/// `[0, patch_size)²`, in row-major cell order, so that index order is spatially coherent (the
/// merge walks it). Parents are `u32::MAX` until the merge sets them.
pub(super) fn blades(spec: &PatchSpec, seed: u64, index: u32) -> Vec<Blade> {
    let n = spec.blade_count();
    let g = (n as f64).sqrt().ceil() as usize;
    let g = if g * g < n { g + 1 } else { g };
    let cell = f64::from(spec.patch_size) / g as f64;
    let v = f64::from(spec.variation);
    let [r, gr, b] = spec.color.map(f64::from);
    let cv = f64::from(spec.color_variation);
    kept_cells(n, g, seed, index)
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let k = key(index, i as u64);
            let (cx, cy) = ((c as usize % g) as f64, (c as usize / g) as f64);
            let mut jitter = Rng::keyed(seed, "grass.jitter", k);
            let position = [inside((cx + jitter.unit()) * cell, spec.patch_size), inside((cy + jitter.unit()) * cell, spec.patch_size)];

            let mut orient = Rng::keyed(seed, "grass.orient", k);
            let (theta, rad) = (TAU * orient.unit(), orient.unit().sqrt() * f64::from(spec.lean));
            let d = normalize([rad * libm::cos(theta), rad * libm::sin(theta), 1.0]);
            let yaw = TAU * orient.unit();
            let f = [libm::cos(yaw), libm::sin(yaw), 0.0];
            let fd = f[0] * d[0] + f[1] * d[1];
            // d_z > 0.09 for any valid lean, so f is never parallel to d.
            let n = normalize([f[0] - fd * d[0], f[1] - fd * d[1], -fd * d[2]]);

            let mut shape = Rng::keyed(seed, "grass.shape", k);
            let length = f64::from(spec.blade_length) * shape.range(1.0 - v, 1.0 + v);
            let width = f64::from(spec.blade_width) * shape.range(1.0 - v, 1.0 + v);
            let bend = (f64::from(spec.bend) * shape.range(0.5, 1.5)).min(0.95);

            let mut tone = Rng::keyed(seed, "grass.color", k);
            let bright = 1.0 + cv * tone.range(-1.0, 1.0);
            let hue = 0.5 * cv * tone.range(-1.0, 1.0);
            let color = [r * bright * (1.0 + hue), gr * bright, b * bright * (1.0 - hue)];

            Blade {
                position,
                direction: d.map(|x| x as f32),
                normal: n.map(|x| x as f32),
                length: length as f32,
                width: width as f32,
                bend: bend as f32,
                color: color.map(|x| x as f32),
                parent: u32::MAX,
            }
        })
        .collect()
}

/// Flower head colours (linear RGB): white, yellow, violet.
const FLOWER_COLORS: [[f64; 3]; 3] = [[0.85, 0.85, 0.8], [0.9, 0.7, 0.08], [0.4, 0.15, 0.65]];

/// Flowers: `floor(flowers · patch_size² + u)` of them (u uniform, so the mean is exact), uniform
/// over the patch, stems 1.2–1.6 mean blade lengths tall (above the grass), heads 0.06–0.1 of it.
pub(super) fn flowers(spec: &PatchSpec, seed: u64, index: u32) -> Vec<Flower> {
    let s = f64::from(spec.patch_size);
    let mean = f64::from(spec.flowers) * s * s;
    let count = (mean + Rng::keyed(seed, "grass.flower.count", u64::from(index)).unit()).floor() as usize;
    let l = f64::from(spec.blade_length);
    (0..count)
        .map(|j| {
            let mut rng = Rng::keyed(seed, "grass.flower", key(index, j as u64));
            let position = [inside(rng.unit() * s, spec.patch_size), inside(rng.unit() * s, spec.patch_size)];
            let height = (l * rng.range(1.2, 1.6)) as f32;
            let radius = (l * rng.range(0.06, 0.1)) as f32;
            let pick = ((rng.unit() * FLOWER_COLORS.len() as f64) as usize).min(FLOWER_COLORS.len() - 1);
            let bright = rng.range(0.85, 1.0);
            Flower { position, height, radius, color: FLOWER_COLORS[pick].map(|c| (c * bright) as f32) }
        })
        .collect()
}
