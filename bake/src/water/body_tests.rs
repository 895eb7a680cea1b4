//! The flood fill on hand-made volumes whose answer is known: a bowl (depth is the exact linear root),
//! a sealed cave below the level (dry), the same cave with a tunnel to the sea floor (flooded), an
//! overhang over the water (flooded but not open water), the shore distance against a straight
//! shore, and refused input.

use super::*;

/// A volume of `dims` with ground at height `ground(x, y)` (world units, voxel size `vs`): density
/// `ground − z` clamped to [-1, 1], linear in z near the surface so the root is exact.
fn terrain(dims: [usize; 3], vs: f32, ground: impl Fn(usize, usize) -> f32) -> DensityVolume {
    DensityVolume::from_fn(dims, |x, y, z| (ground(x, y) - z as f32 * vs).clamp(-1.0, 1.0))
}

#[test]
fn a_bowl_floods_below_the_level_with_the_exact_depth() {
    let vs = 0.5;
    // A bowl: ground at 1.0 + 0.02·r² around the centre (16, 16).
    let ground = |x: usize, y: usize| 1.0 + 0.02 * ((x as f32 - 16.0).powi(2) + (y as f32 - 16.0).powi(2));
    let v = terrain([33, 33, 16], vs, ground);
    let level = 3.2;
    let body = flood(&v, vs, level, false).unwrap();
    assert_eq!(body.dims, [33, 33, 7], "layers at z = 0, 0.5 … 3.0");
    for y in 0..33 {
        for x in 0..33 {
            let g = ground(x, y);
            let d = body.depth[y * 33 + x];
            if g < 3.0 {
                // Under open water: depth is level − ground (the density is linear in z here).
                assert!((d - (level - g)).abs() < 1e-4, "({x}, {y}): depth {d}, ground {g}");
            } else if g > level {
                assert_eq!(d, 0.0, "({x}, {y}) is dry land");
            }
            // Every air sample at or below the level in a flooded column is water; none above ground is missed.
            for k in 0..7 {
                let z = k as f32 * vs;
                assert_eq!(body.is_flooded(x, y, k), z >= g && d > 0.0, "({x}, {y}, {k})");
            }
        }
    }
    let grid = body.grid(1);
    assert_eq!(grid.n, [34, 34]);
    // The centre is far from the shore; dry land has distance 0; open water at least 1.
    assert!(grid.shore[16 * 34 + 16] >= 5);
    for (s, d) in grid.shore.iter().zip(&grid.depth) {
        assert_eq!(*s == 0, *d == 0.0);
    }
}

/// Flat sea floor at z = 1 under a level of 3, and a box cave inside a solid mound.
fn cave_world(tunnel: bool) -> DensityVolume {
    let dims = [24, 24, 16];
    let vs = 0.5;
    DensityVolume::from_fn(dims, |x, y, z| {
        let zf = z as f32 * vs;
        // A mound over x, y in 8..16 up to z = 5 (above the level), solid through.
        let mound = (8..16).contains(&x) && (8..16).contains(&y) && zf <= 5.0;
        // The cave: samples 10..14 in x and y, z 1.5..2.5, below the level, inside the mound.
        let cave = (10..14).contains(&x) && (10..14).contains(&y) && (3..=5).contains(&z);
        // The tunnel: from the cave out through the mound's side at z = 2.
        let tunnel = tunnel && y == 12 && x >= 13 && z == 4;
        let solid = zf <= 1.0 || (mound && !cave && !tunnel);
        if solid {
            1.0
        } else {
            -1.0
        }
    })
}

#[test]
fn a_sealed_cave_below_the_level_stays_dry_and_a_tunnel_to_the_sea_floods_it() {
    let sealed = flood(&cave_world(false), 0.5, 3.0, false).unwrap();
    let open = flood(&cave_world(true), 0.5, 3.0, false).unwrap();
    for (x, y, k) in [(10, 10, 3), (13, 13, 5), (11, 12, 4)] {
        assert!(!sealed.is_flooded(x, y, k), "sealed cave at ({x}, {y}, {k})");
        assert!(open.is_flooded(x, y, k), "connected cave at ({x}, {y}, {k})");
    }
    // The sea floods in both; the mound's top is dry land; the cave adds samples but no open water.
    assert!(sealed.is_flooded(2, 2, 3) && open.is_flooded(2, 2, 3));
    assert_eq!(sealed.depth, open.depth);
    assert_eq!(sealed.depth[12 * 24 + 12], 0.0);
    // The floor's root lies between sample 2 (solid, 1.0) and 3 (air, −1.0): z = 1.25, depth 1.75.
    assert!((sealed.depth[2 * 24 + 2] - 1.75).abs() < 1e-6, "{}", sealed.depth[50]);
    let cave = 4 * 4 * 3;
    assert_eq!(open.flooded_count(), sealed.flooded_count() + cave + 2, "cave plus the tunnel's samples x = 14 and 15");
}

#[test]
fn water_under_an_overhang_is_flooded_but_not_open() {
    let vs = 1.0;
    // Sea floor at 0.5, a roof slab at z 5..6 over x < 4, level 3.
    let v = DensityVolume::from_fn([12, 4, 10], |x, _, z| if z == 0 || (x < 4 && (5..=6).contains(&z)) { 1.0 } else { -1.0 });
    let body = flood(&v, vs, 3.0, false).unwrap();
    for x in 0..12 {
        assert!(body.is_flooded(x, 1, 2), "x {x}: the water reaches under the roof");
        assert_eq!(body.depth[12 + x] > 0.0, x >= 4, "x {x}: open water only where the sky is");
    }
    // Ground is the root between sample 0 (1.0) and 1 (−1.0): z = 0.5, depth 2.5.
    assert!((body.depth[12 + 6] - 2.5).abs() < 1e-6);
}

#[test]
fn the_shore_distance_grows_away_from_a_straight_shore_and_saturates() {
    // Dry for x < 3, wet beyond: distance x − 2 along a row.
    let n = [300, 5];
    let wet: Vec<bool> = (0..n[0] * n[1]).map(|i| i % n[0] >= 3).collect();
    let dry: Vec<bool> = wet.iter().map(|w| !w).collect();
    let d = shore_distance(&wet, &dry, n);
    for x in 0..n[0] {
        let want = if x < 3 { 0 } else { (x - 2).min(255) as u8 };
        for y in 0..n[1] {
            assert_eq!(d[y * n[0] + x], want, "({x}, {y})");
        }
    }
    // A diagonal step costs 4/3 of a straight one; nothing dry anywhere: saturated.
    let mut corner = vec![true; 100];
    corner[0] = false;
    let dry: Vec<bool> = corner.iter().map(|w| !w).collect();
    let d = shore_distance(&corner, &dry, [10, 10]);
    assert_eq!(d[11], 1);
    assert_eq!(d[99], ((9 * 4 + 1) / 3) as u8);
    assert!(shore_distance(&[true; 16], &[false; 16], [4, 4]).iter().all(|&v| v == 255));
}

#[test]
fn coarser_grids_sample_every_stride_and_repeat_the_last_column() {
    let vs = 0.25;
    let v = terrain([32, 16, 8], vs, |x, _| if x < 10 { 0.2 } else { 1.2 });
    let body = flood(&v, vs, 0.8, false).unwrap();
    let g = body.grid(4);
    assert_eq!(g.n, [9, 5]);
    for j in 0..5 {
        for i in 0..9 {
            let x = (i * 4).min(31);
            let y = (j * 4).min(15);
            assert_eq!(g.depth[j * 9 + i], body.depth[y * 32 + x]);
        }
        // x = 0, 4, 8 wet (ground 0.2), 12.. dry: one grid sample from the shore at x = 8.
        assert_eq!(&g.shore[j * 9..j * 9 + 4], &[3, 2, 1, 0]);
    }
}

#[test]
fn bad_input_is_refused_and_a_level_below_the_volume_floods_nothing() {
    let v = terrain([4, 4, 4], 1.0, |_, _| 1.5);
    assert!(flood(&v, 1.0, f32::NAN, false).is_err());
    assert!(flood(&v, 0.0, 1.0, false).is_err());
    let short = DensityVolume { dims: [4, 4, 5], data: v.data.clone() };
    assert!(flood(&short, 1.0, 1.0, false).is_err());
    let below = flood(&v, 1.0, -2.0, false).unwrap();
    assert_eq!((below.dims[2], below.flooded_count()), (0, 0));
    assert!(below.depth.iter().all(|&d| d == 0.0));
    // A level above the top floods every air sample of open columns.
    let above = flood(&v, 1.0, 100.0, false).unwrap();
    assert_eq!(above.dims[2], 4);
    assert_eq!(above.flooded_count(), 4 * 4 * 2);
}

#[test]
fn the_ring_outside_closed_sides_holds_no_water_and_is_no_shore() {
    // Sea floor at 0.5 everywhere, level 2: with closed sides the outer ring stays dry and the
    // shore distance grows from the one island at the centre only.
    let v = terrain([16, 16, 8], 0.5, |x, y| if (7..9).contains(&x) && (7..9).contains(&y) { 3.0 } else { 0.5 });
    let open = flood(&v, 0.5, 2.0, false).unwrap();
    let closed = flood(&v, 0.5, 2.0, true).unwrap();
    assert!(open.depth[0] > 0.0 && open.is_flooded(0, 5, 2));
    for c in 0..16 {
        for (x, y) in [(c, 0), (0, c), (c, 15), (15, c)] {
            assert_eq!(closed.depth[y * 16 + x], 0.0, "({x}, {y})");
            assert!(!closed.is_flooded(x, y, 2));
        }
    }
    assert!(closed.is_flooded(1, 5, 2) && closed.depth[5 * 16 + 1] == open.depth[5 * 16 + 1]);
    let (g_open, g_closed) = (open.grid(1), closed.grid(1));
    // Next to the ring: far from the island in the closed world; with water in the ring, as far.
    assert_eq!(g_closed.shore[17 * 1 + 1], g_open.shore[17 + 1]);
    assert!(g_closed.shore[17 + 1] >= 5, "{}", g_closed.shore[18]);
    assert_eq!(g_closed.shore[0], 0);
}
