//! Replaying brush strokes onto a density volume.

use rayon::prelude::*;

use super::DensityVolume;
use crate::world::{BrushShape, BrushStroke};

/// Applies `strokes` in order (see [`apply_stroke`]).
pub fn apply_brushes(vol: &mut DensityVolume, strokes: &[BrushStroke], voxel_size: f64) {
    for stroke in strokes {
        apply_stroke(vol, stroke, voxel_size);
    }
}

/// Inclusive sample range along one axis that can lie within `radius` of `centre`, or `None`.
/// Padded by one sample so rounding in the division never drops a sample; the exact distance
/// test decides membership.
fn axis_range(centre: f64, radius: f64, voxel_size: f64, n: usize) -> Option<(usize, usize)> {
    let lo = ((centre - radius) / voxel_size).floor() - 1.0;
    let hi = ((centre + radius) / voxel_size).ceil() + 1.0;
    let lo = lo.max(0.0);
    let hi = hi.min(n as f64 - 1.0);
    (lo <= hi).then_some((lo as usize, hi as usize))
}

/// `d ← clamp(d + weight · falloff(dist / radius), -1, 1)` for every sample whose distance to
/// the stroke's centre (Euclidean for spheres, Chebyshev for cubes, world units) is at most
/// `radius`; the sum is formed in f64 and rounded to f32 once. Only the stroke's bounding box is
/// visited, slices of it in parallel (each sample is independent, so the result does not depend
/// on the thread count).
pub fn apply_stroke(vol: &mut DensityVolume, stroke: &BrushStroke, voxel_size: f64) {
    let [nx, ny, nz] = vol.dims;
    let p = stroke.position;
    let r = stroke.radius;
    let (Some((x0, x1)), Some((y0, y1)), Some((z0, z1))) =
        (axis_range(p[0], r, voxel_size, nx), axis_range(p[1], r, voxel_size, ny), axis_range(p[2], r, voxel_size, nz))
    else {
        return;
    };
    vol.data.par_chunks_mut(nx * ny).enumerate().skip(z0).take(z1 - z0 + 1).for_each(|(z, slice)| {
        let dz = z as f64 * voxel_size - p[2];
        for y in y0..=y1 {
            let dy = y as f64 * voxel_size - p[1];
            let row = &mut slice[y * nx..(y + 1) * nx];
            for (x, d) in row.iter_mut().enumerate().take(x1 + 1).skip(x0) {
                let dx = x as f64 * voxel_size - p[0];
                let dist = match stroke.shape {
                    BrushShape::Sphere => (dx * dx + dy * dy + dz * dz).sqrt(),
                    BrushShape::Cube => dx.abs().max(dy.abs()).max(dz.abs()),
                };
                if dist <= r {
                    let delta = stroke.weight * stroke.falloff.factor(dist / r);
                    *d = (f64::from(*d) + delta).clamp(-1.0, 1.0) as f32;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Falloff;

    /// Every sample changes by exactly the documented amount inside the shape and not at all
    /// outside, for each shape and falloff.
    #[test]
    fn strokes_change_exactly_the_samples_within_their_radius() {
        let vs = 0.25;
        let dims = [20, 18, 16];
        for shape in [BrushShape::Sphere, BrushShape::Cube] {
            for falloff in [Falloff::Constant, Falloff::Linear, Falloff::Quadratic] {
                let stroke = BrushStroke { shape, falloff, radius: 1.1, weight: 0.6, position: [2.3, 2.0, 1.9] };
                let base = DensityVolume::from_fn(dims, |x, y, z| ((x + 2 * y + 3 * z) % 7) as f32 * 0.1 - 0.4);
                let mut vol = base.clone();
                apply_stroke(&mut vol, &stroke, vs);
                let mut inside = 0;
                for z in 0..dims[2] {
                    for y in 0..dims[1] {
                        for x in 0..dims[0] {
                            let d = [x as f64 * vs - 2.3, y as f64 * vs - 2.0, z as f64 * vs - 1.9];
                            let dist = match shape {
                                BrushShape::Sphere => (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt(),
                                BrushShape::Cube => d.iter().fold(0f64, |m, v| m.max(v.abs())),
                            };
                            let before = f64::from(base.get(x, y, z));
                            let expected = if dist <= 1.1 {
                                inside += 1;
                                let f = match falloff {
                                    Falloff::Constant => 1.0,
                                    Falloff::Linear => 1.0 - dist / 1.1,
                                    Falloff::Quadratic => (1.0 - dist / 1.1).powi(2),
                                };
                                (before + 0.6 * f).clamp(-1.0, 1.0)
                            } else {
                                before
                            };
                            let got = f64::from(vol.get(x, y, z));
                            assert!((got - expected).abs() < 1e-6, "{shape:?} {falloff:?} at {x},{y},{z}: {got} vs {expected}");
                        }
                    }
                }
                let expected_inside = if shape == BrushShape::Cube { 9 * 9 * 9 } else { 300 };
                assert!(inside >= expected_inside * 9 / 10, "{shape:?}: only {inside} samples inside");
            }
        }
    }

    #[test]
    fn strokes_clip_and_ignore_the_outside_world() {
        let mut vol = DensityVolume::from_fn([8, 8, 8], |_, _, _| 0.5);
        let carve = BrushStroke { shape: BrushShape::Cube, falloff: Falloff::Constant, radius: 1.0, weight: -5.0, position: [0.0, 0.0, 0.0] };
        apply_stroke(&mut vol, &carve, 1.0);
        assert_eq!(vol.get(1, 1, 1), -1.0);
        assert_eq!(vol.get(2, 0, 0), 0.5);
        let far = BrushStroke { position: [-100.0, 3.0, 3.0], ..carve };
        let before = vol.clone();
        apply_stroke(&mut vol, &far, 1.0);
        assert_eq!(vol, before);
    }
}
