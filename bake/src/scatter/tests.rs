//! Placement on small worlds a person can picture: a gentle hill, a slab with a cave, a mushroom
//! overhang, ridges too steep to hold trees.

use super::*;

const VS: f32 = 0.25;

/// A 32 × 32 × 8 unit world (129 × 129 × 33 samples at 0.25) from a signed distance to the
/// ground surface (positive inside), scaled to one voxel and clipped like the density stage.
fn world(sdf: impl Fn(f32, f32, f32) -> f32) -> DensityVolume {
    DensityVolume::from_fn([129, 129, 33], |i, j, k| (sdf(i as f32 * VS, j as f32 * VS, k as f32 * VS) / VS).clamp(-1.0, 1.0))
}

fn hill(x: f32, y: f32) -> f32 {
    1.3 + 0.4 * (x * 0.3).sin() * (y * 0.25).cos()
}

/// Inside-positive distance-like value of an axis-aligned box `[lo, hi]`.
fn cuboid(p: [f32; 3], lo: [f32; 3], hi: [f32; 3]) -> f32 {
    (0..3).map(|a| (p[a] - lo[a]).min(hi[a] - p[a])).fold(f32::INFINITY, f32::min)
}

fn rule(min_spacing: f32, density: f32) -> ScatterRule {
    ScatterRule {
        min_spacing,
        density,
        max_slope_deg: 35.0,
        height_band: [f32::NEG_INFINITY, f32::INFINITY],
        density_image: None,
        scale: [0.8, 1.2],
        tint_variation: 0.1,
        support_radius: 0.15,
    }
}

fn min_distance(a: &[Placement], b: &[Placement]) -> f32 {
    let mut best = f32::INFINITY;
    for p in a {
        for q in b {
            if p != q {
                let (dx, dy) = (p.position[0] - q.position[0], p.position[1] - q.position[1]);
                best = best.min((dx * dx + dy * dy).sqrt());
            }
        }
    }
    best
}

#[test]
fn on_a_gentle_hill_spacing_count_and_surface_hold() {
    let v = world(|x, y, z| hill(x, y) - z);
    for &(density, seed) in &[(0.15f32, 1u64), (0.3, 2), (0.5, 3)] {
        let r = rule(0.8, density);
        let placed = scatter(&v, VS, std::slice::from_ref(&r), seed).unwrap();
        assert!(min_distance(&placed, &placed) >= 0.8, "spacing {}", min_distance(&placed, &placed));
        // The support ring keeps trunks one radius inside the world's edge.
        let side = 32.0 - 2.0 * r.support_radius;
        let expected = density * side * side;
        let n = placed.len() as f32;
        assert!((n - expected).abs() <= 0.1 * expected, "density {density}: {n} instances, expected {expected}");
        for p in &placed {
            let [x, y, z] = p.position;
            assert!((z - hill(x, y)).abs() <= 0.5 * VS, "base {z} vs surface {} at ({x}, {y})", hill(x, y));
            assert!((p.normal.iter().map(|c| c * c).sum::<f32>() - 1.0).abs() < 1e-4 && p.normal[2] > 0.9);
            assert!((0.0..std::f32::consts::TAU).contains(&p.yaw) && (0.8..=1.2).contains(&p.scale));
            assert!(p.tint.iter().all(|t| (0.9..=1.1).contains(t)));
        }
        let keys: std::collections::BTreeSet<u64> = placed.iter().map(|p| p.key).collect();
        assert_eq!(keys.len(), placed.len(), "keys are distinct");
        assert!(placed.windows(2).all(|w| (w[0].position[1], w[0].position[0]) <= (w[1].position[1], w[1].position[0])), "sorted by (y, x)");
    }
}

#[test]
fn no_tree_in_a_cave_under_an_overhang_or_on_its_lip() {
    const SLAB: ([f32; 3], [f32; 3]) = ([2.0, 2.0, -1.0], [12.0, 30.0, 4.0]);
    const CAVE: ([f32; 3], [f32; 3]) = ([3.0, 3.0, 2.0], [11.0, 29.0, 3.0]);
    const STEM: ([f32; 3], [f32; 3]) = ([21.0, 15.0, -1.0], [23.0, 17.0, 5.0]);
    const CAP: ([f32; 3], [f32; 3]) = ([16.0, 8.0, 4.5], [28.0, 24.0, 5.0]);
    let v = world(|x, y, z| {
        let p = [x, y, z];
        let slab = cuboid(p, SLAB.0, SLAB.1).min(-cuboid(p, CAVE.0, CAVE.1));
        let mushroom = cuboid(p, STEM.0, STEM.1).max(cuboid(p, CAP.0, CAP.1));
        (1.0 - z).max(slab).max(mushroom)
    });
    let mut r = rule(0.5, 1.0);
    r.support_radius = 0.3;
    let placed = scatter(&v, VS, std::slice::from_ref(&r), 9).unwrap();
    let over =
        |p: &Placement, b: &([f32; 3], [f32; 3]), margin: f32| (0..2).all(|a| p.position[a] >= b.0[a] - margin && p.position[a] <= b.1[a] + margin);
    let (mut on_slab, mut on_cap, mut on_ground) = (0, 0, 0);
    for p in &placed {
        let z = p.position[2];
        if over(p, &SLAB, 0.0) {
            assert!((z - 4.0).abs() < 0.5 * VS, "in the slab's footprint only its top: {:?}", p.position);
            on_slab += 1;
        }
        // Under the cap, and beside it within the trunk radius (the ring would reach the cap).
        if over(p, &CAP, 0.9 * r.support_radius) {
            assert!((z - 5.0).abs() < 0.5 * VS, "under or against the overhang: {:?}", p.position);
            on_cap += 1;
        }
        if (z - 1.0).abs() < 0.5 * VS {
            on_ground += 1;
        }
        // The lip: no trunk whose ring would hang over the cap's edge.
        if over(p, &CAP, 0.0) {
            let edge = (0..2).map(|a| (p.position[a] - CAP.0[a]).min(CAP.1[a] - p.position[a])).fold(f32::INFINITY, f32::min);
            assert!(edge >= 0.9 * r.support_radius, "on the lip, {edge} from the edge: {:?}", p.position);
        }
    }
    // The checks above would pass on an empty world: make sure every surface got trees.
    assert!(on_slab > 100 && on_cap > 100 && on_ground > 300, "slab {on_slab}, cap {on_cap}, ground {on_ground}");
}

#[test]
fn steep_ridges_get_none_and_the_height_band_holds() {
    // Triangle-wave ridges along X: 20° for y < 16, 50° beyond.
    let tri = |x: f32| {
        let t = x.rem_euclid(4.0);
        t.min(4.0 - t)
    };
    let v = world(|x, y, z| {
        let s = if y < 16.0 { 20f32.to_radians().tan() } else { 50f32.to_radians().tan() };
        1.0 + s * tri(x) - z
    });
    let placed = scatter(&v, VS, &[rule(0.6, 0.8)], 4).unwrap();
    let cos_limit = 35f32.to_radians().cos();
    assert!(placed.iter().all(|p| p.normal[2] >= cos_limit), "every normal within the limit");
    assert!(placed.iter().all(|p| p.position[1] < 16.5), "none on the 50° side");
    assert!(placed.iter().filter(|p| p.position[1] < 15.0).count() > 150, "the 20° side is planted: {}", placed.len());

    let v = world(|x, y, z| hill(x, y) - z);
    let mut banded = rule(0.6, 0.8);
    banded.height_band = [1.2, 1.5];
    let all = scatter(&v, VS, &[rule(0.6, 0.8)], 4).unwrap();
    let placed = scatter(&v, VS, &[banded], 4).unwrap();
    assert!(placed.iter().all(|p| (1.2..=1.5).contains(&p.position[2])));
    let in_band = all.iter().filter(|p| (1.2..=1.5).contains(&p.position[2])).count();
    assert!(placed.len() > 100 && placed.len() == in_band, "{} placed, {in_band} of the unbanded set in the band", placed.len());
}

#[test]
fn a_density_image_and_a_second_rule_shape_the_set() {
    let v = world(|_, _, z| 1.0 - z);
    // Left half 0, right half full: an 8 × 1 image.
    let mut r = rule(0.8, 0.4);
    r.density_image = Some(DensityImage { width: 8, height: 1, data: vec![0, 0, 0, 0, 255, 255, 255, 255] });
    let placed = scatter(&v, VS, std::slice::from_ref(&r), 5).unwrap();
    assert!(placed.iter().all(|p| p.position[0] > 14.0), "none where the image is black");
    let full = 0.4 * 14.0 * 32.0;
    assert!((placed.len() as f32) > 0.9 * full, "{} on the bright half", placed.len());

    let trees = rule(1.5, 0.2);
    let bushes = rule(0.4, 1.5);
    let both = scatter(&v, VS, &[trees.clone(), bushes], 5).unwrap();
    let (t, b): (Vec<Placement>, Vec<Placement>) = both.iter().partition(|p| p.rule == 0);
    assert_eq!(t, scatter(&v, VS, &[trees], 5).unwrap(), "a later rule never moves an earlier one");
    assert!(min_distance(&t, &t) >= 1.5 && min_distance(&b, &b) >= 0.4 && min_distance(&t, &b) >= 0.4);
    assert!(b.len() > 500, "{} bushes", b.len());
}

#[test]
fn placement_is_deterministic_and_owned_by_exactly_one_tile() {
    let v = world(|x, y, z| hill(x, y) - z);
    let rules = [rule(0.8, 0.4), rule(0.3, 2.0)];
    let a = scatter(&v, VS, &rules, 11).unwrap();
    assert_eq!(a, scatter(&v, VS, &rules, 11).unwrap());
    assert_ne!(a, scatter(&v, VS, &rules, 12).unwrap());
    for tile in [8, 16, 32] {
        let s = tile as f32 * VS;
        let mut tiles: std::collections::BTreeMap<[i32; 2], Vec<Placement>> = Default::default();
        for p in &a {
            let o = owner(p.position, s);
            let inside = |w: f32, t: i32| w >= t as f32 * s && w < (t + 1) as f32 * s;
            assert!(inside(p.position[0], o[0]) && inside(p.position[1], o[1]), "{:?} not in tile {o:?} of size {s}", p.position);
            tiles.entry(o).or_default().push(*p);
        }
        let mut union: Vec<Placement> = tiles.into_values().flatten().collect();
        union.sort_by(|p, q| (p.position[1], p.position[0]).partial_cmp(&(q.position[1], q.position[0])).unwrap());
        assert_eq!(union, a, "the tiles' sets partition the placement for tile size {tile}");
    }
    // Boundaries belong to the tile above them, whatever the quotient's rounding.
    assert_eq!(owner([2.0, 0.0, 0.0], 2.0), [1, 0]);
    assert_eq!(owner([-0.0, -1e-9, 0.0], 2.0), [0, -1]);
    for i in 0..1000 {
        let w = i as f32 * 0.1;
        let t = owner([w, w, 0.0], 0.1)[0];
        assert!(w >= t as f32 * 0.1 && w < (t + 1) as f32 * 0.1, "{w} in tile {t}");
    }
}

#[test]
fn bad_rules_and_volumes_are_errors() {
    let v = world(|_, _, z| 1.0 - z);
    let bad = |f: fn(&mut ScatterRule)| {
        let mut r = rule(0.8, 0.3);
        f(&mut r);
        scatter(&v, VS, &[rule(1.0, 0.1), r], 1)
    };
    assert!(matches!(bad(|r| r.min_spacing = 0.0), Err(ScatterError::Rule { rule: 1, .. })));
    assert!(matches!(bad(|r| r.min_spacing = 1e-4), Err(ScatterError::Rule { .. })), "too many cells");
    assert!(matches!(bad(|r| r.density = f32::NAN), Err(ScatterError::Rule { .. })));
    assert!(matches!(bad(|r| r.max_slope_deg = 91.0), Err(ScatterError::Rule { .. })));
    assert!(matches!(bad(|r| r.height_band = [2.0, 1.0]), Err(ScatterError::Rule { .. })));
    assert!(matches!(bad(|r| r.scale = [0.0, 1.0]), Err(ScatterError::Rule { .. })));
    assert!(matches!(bad(|r| r.tint_variation = 1.0), Err(ScatterError::Rule { .. })));
    assert!(matches!(bad(|r| r.support_radius = -1.0), Err(ScatterError::Rule { .. })));
    assert!(matches!(bad(|r| r.density_image = Some(DensityImage { width: 2, height: 2, data: vec![0; 3] })), Err(ScatterError::Rule { .. })));
    assert!(matches!(scatter(&v, 0.0, &[], 1), Err(ScatterError::Volume { .. })));
    assert_eq!(scatter(&v, VS, &[], 1), Ok(vec![]));
}

#[test]
fn placement_bytes_are_pinned() {
    // A saddle (no transcendental, so the volume itself is bit-identical everywhere). Changing
    // this hash changes every world's trees: do it only on purpose.
    let v = world(|x, y, z| 1.5 + 0.01 * (x - 16.0) * (y - 16.0) - z);
    let placed = scatter(&v, VS, &[rule(0.8, 0.4), rule(0.3, 2.0)], 17).unwrap();
    let mut bytes = Vec::new();
    for p in &placed {
        bytes.extend(p.rule.to_le_bytes());
        for f in p.position.iter().chain(&p.normal).chain(&[p.yaw, p.scale]).chain(&p.tint) {
            bytes.extend(f.to_bits().to_le_bytes());
        }
        bytes.extend(p.key.to_le_bytes());
    }
    assert_eq!((placed.len(), xxhash_rust::xxh3::xxh3_64(&bytes)), (2140, 2392319536745141754));
}
