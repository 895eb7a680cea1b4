//! The ground open to the sky: where a vertical line through world `(x, y)`, walked down from the
//! top of the volume, first enters solid, on the trilinearly interpolated density (the same
//! field marching cubes contours, so an instance stands on the surface the viewer draws).
//!
//! Along a vertical line the trilinear interpolant is piecewise linear in `z` (bilinear in x, y
//! at each sample level, linear between levels), so the crossing inside its cell is the exact
//! linear root: no bisection error. Only the topmost air→solid crossing counts, so cave floors
//! and the ground under an overhang are never returned. A column whose top sample is already
//! solid has no sky above it inside the volume and has no ground.

use crate::density::DensityVolume;

/// A point of the ground open to the sky.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundHit {
    /// World height of the surface.
    pub z: f32,
    /// Unit outward normal: the normalised negative gradient of the interpolated density.
    pub normal: [f32; 3],
}

/// Unit directions of the support ring (every 45°), exact constants so no transcendental runs.
const RING: [[f32; 2]; 8] = {
    const H: f32 = std::f32::consts::FRAC_1_SQRT_2;
    [[1.0, 0.0], [H, H], [0.0, 1.0], [-H, H], [-1.0, 0.0], [-H, -H], [0.0, -1.0], [H, -H]]
};

/// Ground queries on a density volume sampled every `voxel_size` world units.
#[derive(Clone, Copy, Debug)]
pub struct Ground<'a> {
    volume: &'a DensityVolume,
    voxel_size: f32,
}

impl<'a> Ground<'a> {
    /// Queries on `volume`; `None` if it has fewer than two samples along an axis or the voxel size
    /// is not a positive finite number (there is no cell to interpolate in).
    pub fn new(volume: &'a DensityVolume, voxel_size: f32) -> Option<Ground<'a>> {
        let ok = volume.dims.iter().all(|&n| n >= 2)
            && volume.data.len() == volume.dims[0] * volume.dims[1] * volume.dims[2]
            && voxel_size.is_finite()
            && voxel_size > 0.0;
        ok.then_some(Ground { volume, voxel_size })
    }

    /// The world rectangle the volume covers: `[0, extent[0]] × [0, extent[1]]`.
    pub fn extent(&self) -> [f32; 2] {
        [(self.volume.dims[0] - 1) as f32 * self.voxel_size, (self.volume.dims[1] - 1) as f32 * self.voxel_size]
    }

    /// The cell index and fraction along one horizontal axis, or `None` outside the volume.
    fn locate(&self, w: f32, axis: usize) -> Option<(usize, f32)> {
        let u = w / self.voxel_size;
        let last = (self.volume.dims[axis] - 1) as f32;
        if !(0.0..=last).contains(&u) {
            return None;
        }
        let i = (u as usize).min(self.volume.dims[axis] - 2);
        Some((i, u - i as f32))
    }

    /// The topmost air→solid crossing of the interpolated density on the vertical line through
    /// world `(x, y)`, or `None` outside the volume, when the column has no solid, when its top
    /// sample is solid, or where the gradient vanishes (no normal).
    pub fn surface(&self, x: f32, y: f32) -> Option<GroundHit> {
        let (i, fx) = self.locate(x, 0)?;
        let (j, fy) = self.locate(y, 1)?;
        let v = self.volume;
        let bilinear = |k: usize| {
            let a = v.get(i, j, k) + (v.get(i + 1, j, k) - v.get(i, j, k)) * fx;
            let b = v.get(i, j + 1, k) + (v.get(i + 1, j + 1, k) - v.get(i, j + 1, k)) * fx;
            a + (b - a) * fy
        };
        let nz = v.dims[2];
        let mut above = bilinear(nz - 1);
        if above > 0.0 {
            return None;
        }
        for k in (0..nz - 1).rev() {
            let here = bilinear(k);
            if here > 0.0 {
                // Linear root between level k (solid, `here`) and k + 1 (air, `above`).
                let t = here / (here - above);
                let normal = self.normal_in_cell([i, j, k], [fx, fy, t])?;
                return Some(GroundHit { z: (k as f32 + t) * self.voxel_size, normal });
            }
            above = here;
        }
        None
    }

    /// The normalised negative gradient of the trilinear interpolant in cell `c` at fractions `f`.
    fn normal_in_cell(&self, c: [usize; 3], f: [f32; 3]) -> Option<[f32; 3]> {
        let v = self.volume;
        let s = |dx: usize, dy: usize, dz: usize| v.get(c[0] + dx, c[1] + dy, c[2] + dz);
        let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
        // Differences along each axis, interpolated over the other two.
        let gx =
            lerp(lerp(s(1, 0, 0) - s(0, 0, 0), s(1, 1, 0) - s(0, 1, 0), f[1]), lerp(s(1, 0, 1) - s(0, 0, 1), s(1, 1, 1) - s(0, 1, 1), f[1]), f[2]);
        let gy =
            lerp(lerp(s(0, 1, 0) - s(0, 0, 0), s(1, 1, 0) - s(1, 0, 0), f[0]), lerp(s(0, 1, 1) - s(0, 0, 1), s(1, 1, 1) - s(1, 0, 1), f[0]), f[2]);
        let gz =
            lerp(lerp(s(0, 0, 1) - s(0, 0, 0), s(1, 0, 1) - s(1, 0, 0), f[0]), lerp(s(0, 1, 1) - s(0, 1, 0), s(1, 1, 1) - s(1, 1, 0), f[0]), f[1]);
        let len = (gx * gx + gy * gy + gz * gz).sqrt();
        (len > 0.0 && len.is_finite()).then(|| [-gx / len, -gy / len, -gz / len])
    }

    /// Whether a trunk of `radius` at `(x, y)` on ground at height `z` stands on solid ground:
    /// the ground open to the sky at 8 points of the ring of that radius (every 45°) must exist
    /// and lie within `tolerance` of `z`. This rejects sites at cliff edges and on overhang lips
    /// (a ring point drops to the lower ground), on the lower ground beside an overhang (a ring
    /// point rises to the overhang's top), and within `radius` of the world's edge. A radius of 0
    /// accepts every site.
    pub fn supported(&self, x: f32, y: f32, z: f32, radius: f32, tolerance: f32) -> bool {
        if radius <= 0.0 {
            return true;
        }
        RING.iter().all(|d| self.surface(x + d[0] * radius, y + d[1] * radius).is_some_and(|h| (h.z - z).abs() <= tolerance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VS: f32 = 0.25;

    /// A linear ground `h(x, y) = h0 + a·x + b·y`, density = (h - z) / voxel clipped to [-1, 1].
    fn plane(dims: [usize; 3], h0: f32, a: f32, b: f32) -> DensityVolume {
        DensityVolume::from_fn(dims, |i, j, k| {
            let (x, y, z) = (i as f32 * VS, j as f32 * VS, k as f32 * VS);
            ((h0 + a * x + b * y - z) / VS).clamp(-1.0, 1.0)
        })
    }

    #[test]
    fn flat_and_tilted_planes_are_found_exactly_with_their_normals() {
        let v = plane([16, 16, 16], 1.3, 0.0, 0.0);
        let g = Ground::new(&v, VS).unwrap();
        for &(x, y) in &[(0.0, 0.0), (1.1, 2.7), (3.75, 3.75), (2.0, 0.3)] {
            let h = g.surface(x, y).unwrap();
            assert!((h.z - 1.3).abs() < 1e-5, "z {} at ({x}, {y})", h.z);
            assert!((h.normal[2] - 1.0).abs() < 1e-6, "{:?}", h.normal);
        }
        // 0.5 rise per unit along x: normal (-0.5, 0, 1) / |…|.
        let v = plane([16, 16, 24], 1.0, 0.5, 0.0);
        let g = Ground::new(&v, VS).unwrap();
        let h = g.surface(2.1, 1.9).unwrap();
        assert!((h.z - 2.05).abs() < 1e-5, "{}", h.z);
        let n = 1.0 / 1.25f32.sqrt();
        assert!((h.normal[0] + 0.5 * n).abs() < 1e-5 && h.normal[1].abs() < 1e-6 && (h.normal[2] - n).abs() < 1e-5, "{:?}", h.normal);
        assert_eq!(g.surface(-0.1, 1.0), None, "outside the volume");
        assert_eq!(g.surface(1.0, 3.76), None, "outside the volume");
    }

    #[test]
    fn only_the_topmost_crossing_counts_and_a_solid_top_has_no_sky() {
        // Solid up to z = 1, a cave (air) from 1.25 to 2.25, a roof from 2.5 to 2.75, air above.
        let v = DensityVolume::from_fn([8, 8, 20], |_, _, k| {
            let z = k as f32 * VS;
            if z < 1.2 || (z > 2.4 && z < 2.9) {
                1.0
            } else {
                -1.0
            }
        });
        let g = Ground::new(&v, VS).unwrap();
        let h = g.surface(0.6, 0.6).unwrap();
        assert!((h.z - 2.875).abs() < 1e-6, "the roof's top, not the cave floor: {}", h.z);
        let solid_top = DensityVolume::from_fn([4, 4, 4], |_, _, _| 1.0);
        assert_eq!(Ground::new(&solid_top, VS).unwrap().surface(0.3, 0.3), None);
        let all_air = DensityVolume::from_fn([4, 4, 4], |_, _, _| -1.0);
        assert_eq!(Ground::new(&all_air, VS).unwrap().surface(0.3, 0.3), None);
        assert!(Ground::new(&all_air, 0.0).is_none() && Ground::new(&DensityVolume::from_fn([1, 4, 4], |_, _, _| 0.0), VS).is_none());
    }

    #[test]
    fn support_fails_at_a_step_and_holds_on_flat_ground() {
        // Ground at 1.0 for x < 2, at 2.0 beyond: a cliff at x = 2.
        let v = DensityVolume::from_fn([24, 24, 16], |i, _, k| {
            let h = if (i as f32) * VS < 2.0 { 1.0 } else { 2.0 };
            ((h - k as f32 * VS) / VS).clamp(-1.0, 1.0)
        });
        let g = Ground::new(&v, VS).unwrap();
        let at = |x: f32, y: f32, r: f32| {
            let h = g.surface(x, y).unwrap();
            g.supported(x, y, h.z, r, 0.1)
        };
        assert!(at(1.0, 3.0, 0.3), "flat ground, ring inside");
        assert!(!at(1.6, 3.0, 0.3), "ring reaches up the cliff");
        assert!(!at(2.15, 3.0, 0.3), "ring reaches down the cliff");
        assert!(at(2.5, 3.0, 0.3), "upper ground, ring inside");
        assert!(at(1.6, 3.0, 0.0), "no radius, no check");
        assert!(!at(0.1, 3.0, 0.3), "ring beyond the world's edge");
    }
}
