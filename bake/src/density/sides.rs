//! Closing the world's four sides: a wall below the surface, so the world seen from outside its
//! footprint is a block of ground rather than a cut through its caves.
//!
//! The wall lies inside the volume, so every later stage (tiles, skirts, LOD levels, AO, light
//! transport) sees it as ordinary density:
//! - the outermost ring of samples (`x = 0`, `x = nx - 1`, `y = 0`, `y = ny - 1`) becomes air
//!   (`-a`) everywhere;
//! - the next `band` rings become solid below each column's surface (every sample under the
//!   column's highest solid sample), with a linear ramp in the distance `d` from the outer ring.
//!   Caves that reached the side end `band` samples inside it; the column's surface sample itself
//!   keeps its value, so the top of the terrain does not move.
//!
//! The ramps put the wall in the same place at every LOD level, so neighbouring tiles of
//! different levels meet without a gap in the wall. `band` is the coarsest level's stride, so a
//! level of stride `s` always interpolates between the air ring and a ramp sample:
//! - near sides (`x = 0`, `y = 0`): ramp `a · (2d - 1)`. A level interpolates between `x = 0`
//!   and `x = s`, and the linear ramp crosses 0 at `x = 0.5` for every `s`.
//! - far sides: the last cell corner lies one sample beyond the volume and reads the air ring
//!   again (the volume's edge is replicated), so a level interpolates between distance `s - 1`
//!   and the ring. The ramp `a · ((d + 1) / FAR - 1)` puts that crossing `FAR` samples inside
//!   the last cell corner for every `s >= 2`; level 0 (between `d = 1` and the ring) lands within
//!   0.05 samples of it.

use super::DensityVolume;

/// Walls the four sides of `vol` below its surface with solid samples `band` deep (at least 1)
/// behind an outer ring of air. Returns the number of samples changed.
pub fn close_sides(vol: &mut DensityVolume, band: usize) -> usize {
    let [nx, ny, nz] = vol.dims;
    let band = band.max(1);
    // The ramps stay below 1 across the band, inside the [-1, 1] range of every other density.
    let a = 1.0 / (2 * band) as f32;
    let mut changed = 0;
    for y in 0..ny {
        for x in 0..nx {
            let (near, far) = (x.min(y), (nx - 1 - x).min(ny - 1 - y));
            let d = near.min(far);
            if d > band {
                continue;
            }
            let ramp = if near <= far { a * ((2 * d) as f32 - 1.0) } else { a * ((d + 1) as f32 / FAR - 1.0) };
            let column = |z: usize| x + nx * (y + ny * z);
            let top = (0..nz).rev().find(|&z| vol.data[column(z)] > 0.0);
            for z in 0..nz {
                let v = &mut vol.data[column(z)];
                let below = top.is_some_and(|t| z < t);
                let new = if d == 0 {
                    if below || top == Some(z) {
                        -a
                    } else {
                        v.min(-a)
                    }
                } else if below {
                    ramp
                } else {
                    *v
                };
                if new.to_bits() != v.to_bits() {
                    *v = new;
                    changed += 1;
                }
            }
        }
    }
    changed
}

/// Where the far sides' wall crosses 0, in samples inside the last cell corner (one sample beyond
/// the volume): just short of 2, where level 0 (which must cross between the last two samples)
/// and the coarser levels (which cross between distance `s - 1` and the ring) nearly agree.
const FAR: f32 = 1.9;

/// The band [`close_sides`] needs for a world of `dims` samples in level-0 tiles of `tile_size`
/// columns: the stride of its coarsest LOD level (see `pipeline::Tiling::levels`), so every
/// level's first sample inside the outer ring is solid below the surface.
pub fn side_band(dims: [usize; 3], tile_size: u32) -> usize {
    let t = tile_size.max(1) as usize;
    let tiles = (dims[0] / t).max(dims[1] / t).max(1);
    1 << tiles.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_get_an_air_ring_and_a_solid_band_below_the_surface() {
        // Ground up to z = 5 with a cave through the whole volume along X at z = 2..=3.
        let dims = [20, 16, 10];
        let mut vol = DensityVolume::from_fn(dims, |_, y, z| if z <= 5 && !((6..=9).contains(&y) && (2..=3).contains(&z)) { 0.5 } else { -0.5 });
        let before = vol.clone();
        let band = 4;
        let changed = close_sides(&mut vol, band);
        assert!(changed > 0);
        let a = 1.0 / 8.0;
        // Outer ring: air at every height.
        for z in 0..10 {
            assert!(vol.get(0, 8, z) < 0.0 && vol.get(19, 8, z) < 0.0 && vol.get(8, 0, z) < 0.0 && vol.get(8, 15, z) < 0.0);
        }
        // The band seals the cave's ends below the surface with the ramps, and leaves the
        // surface sample and the air above it alone.
        for d in 1..=band {
            assert_eq!(vol.get(d, 8, 2), a * ((2 * d) as f32 - 1.0));
            assert_eq!(vol.get(19 - d, 8, 3), a * ((d + 1) as f32 / FAR - 1.0));
            assert!(vol.get(19 - d, 8, 3) > 0.0);
            assert_eq!(vol.get(d, 8, 5), 0.5);
            assert_eq!(vol.get(d, 8, 6), -0.5);
        }
        assert_eq!(vol.get(band + 1, 8, 2), -0.5, "the cave stays open past the band");
        // The interior is untouched.
        for z in 0..10 {
            for y in band + 1..16 - band - 1 {
                for x in band + 1..20 - band - 1 {
                    assert_eq!(vol.get(x, y, z), before.get(x, y, z));
                }
            }
        }
        // Idempotent.
        let again = vol.clone();
        assert_eq!(close_sides(&mut vol, band), 0);
        assert_eq!(vol, again);
    }

    #[test]
    fn the_wall_crosses_zero_in_one_place_at_every_stride() {
        let n = 40;
        let mut vol = DensityVolume::from_fn([n, n, 8], |_, _, z| if z <= 5 { 0.5 } else { -0.5 });
        close_sides(&mut vol, 16);
        for s in [1, 2, 4, 8, 16] {
            // Near side: between corners 0 and s.
            let (lo, hi) = (vol.get(0, 20, 2), vol.get(s, 20, 2));
            let x = lo / (lo - hi) * s as f32;
            assert!((x - 0.5).abs() < 1e-6, "stride {s}: the near wall crosses at x = {x}");
            // Far side: between corners n - s and n, which reads sample n - 1.
            let (inside, outside) = (vol.get(n - s.max(2), 20, 2), vol.get(n - 1, 20, 2));
            let first = if s == 1 { n - 2 } else { n - s };
            let step = if s == 1 { 1.0 } else { s as f32 };
            let x = first as f32 + inside / (inside - outside) * step;
            assert!((n as f32 - x - FAR).abs() < 0.06, "stride {s}: the far wall crosses at x = {x}");
        }
    }

    #[test]
    fn band_is_the_coarsest_stride() {
        assert_eq!(side_band([512, 512, 64], 32), 16);
        assert_eq!(side_band([64, 64, 32], 16), 4);
        assert_eq!(side_band([96, 64, 32], 16), 2);
        assert_eq!(side_band([32, 32, 32], 32), 1);
    }
}
