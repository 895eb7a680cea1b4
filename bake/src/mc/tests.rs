use std::collections::BTreeMap;

use super::table::{share_face, CASES, EDGE_START, MAX_TRIS};
use super::*;

// ---------------------------------------------------------------- helpers

fn mesh_of(range: CellRange, stride: i32, f: impl Fn(f64, f64, f64) -> f64) -> IsoMesh {
    let block = DensityBlock::from_fn(range.block_origin(stride).unwrap(), range.block_dims().unwrap(), stride, |x, y, z| {
        f(f64::from(x), f64::from(y), f64::from(z)) as f32
    });
    march(&block, &range).unwrap()
}

fn sphere(c: [f64; 3], r: f64) -> impl Fn(f64, f64, f64) -> f64 {
    move |x, y, z| {
        let d = ((x - c[0]).powi(2) + (y - c[1]).powi(2) + (z - c[2]).powi(2)).sqrt();
        ((r - d) / 4.0).clamp(-1.0, 1.0)
    }
}

/// A smooth cave-like field: a sum of skewed sines, solid where positive.
fn sines(x: f64, y: f64, z: f64) -> f64 {
    let v = (0.21 * x + 0.05 * z).sin() + (0.17 * y - 0.07 * x).sin() + (0.19 * z + 0.11 * y).sin() - 0.4;
    (v / 2.0).clamp(-1.0, 1.0)
}

/// White noise in [-1, 1], with about 1 in 8 samples exactly 0 (the isolevel).
fn noise(x: f64, y: f64, z: f64) -> f64 {
    let mut h = (x as i64 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (y as i64 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (z as i64 as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    if h.is_multiple_of(8) {
        0.0
    } else {
        (h >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f64; 3] {
    [0, 1, 2].map(|k| f64::from(a[k]) - f64::from(b[k]))
}
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn triangles(m: &IsoMesh) -> impl Iterator<Item = [u32; 3]> + '_ {
    m.indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]])
}

/// Geometric normal `(b - a) × (c - a)`.
fn face_normal(m: &IsoMesh, t: [u32; 3]) -> [f64; 3] {
    let p = t.map(|i| m.positions[i as usize]);
    cross(sub(p[1], p[0]), sub(p[2], p[0]))
}

/// How often each directed edge occurs.
fn directed_edges(m: &IsoMesh) -> BTreeMap<(u32, u32), u32> {
    let mut map = BTreeMap::new();
    for t in triangles(m) {
        for k in 0..3 {
            *map.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    map
}

/// Closed and consistently oriented: every directed edge once, its reverse present.
fn assert_closed(m: &IsoMesh) {
    assert!(!m.is_empty());
    let edges = directed_edges(m);
    for (&(a, b), &n) in &edges {
        assert_eq!(n, 1, "directed edge {a}->{b} used {n} times");
        assert!(edges.contains_key(&(b, a)), "edge {a}-{b} is a hole");
    }
}

fn area_volume(m: &IsoMesh) -> (f64, f64) {
    let (mut area, mut vol) = (0.0, 0.0);
    for t in triangles(m) {
        area += dot(face_normal(m, t), face_normal(m, t)).sqrt() / 2.0;
        let p = t.map(|i| m.positions[i as usize].map(f64::from));
        vol += dot(p[0], cross(p[1], p[2])) / 6.0;
    }
    (area, vol)
}

/// Non-degenerate (distinct ids, non-zero f32 area), normals unit length and agreeing with
/// the winding on at least `min_agree` of the triangles.
fn assert_well_formed(m: &IsoMesh, min_agree: f64) {
    assert_eq!(m.positions.len(), m.normals.len());
    assert!(m.indices.iter().all(|&i| (i as usize) < m.positions.len()));
    for n in &m.normals {
        let l = n.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((l - 1.0).abs() < 1e-5, "normal {n:?} is not unit");
    }
    let mut agree = 0;
    for t in triangles(m) {
        assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2], "repeated index in {t:?}");
        // The area test is done in f32, as a renderer would see it.
        let p = t.map(|i| m.positions[i as usize]);
        let (u, v) = ([0, 1, 2].map(|k| p[1][k] - p[0][k]), [0, 1, 2].map(|k| p[2][k] - p[0][k]));
        let c = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
        assert!(c != [0.0; 3], "zero-area triangle {p:?}");
        let n = t.map(|i| m.normals[i as usize].map(f64::from));
        let nsum = [0, 1, 2].map(|k| n[0][k] + n[1][k] + n[2][k]);
        agree += usize::from(dot(face_normal(m, t), nsum) > 0.0);
    }
    let frac = agree as f64 / m.triangle_count() as f64;
    assert!(frac >= min_agree, "normals agree with winding on only {frac:.4} of triangles");
}

/// Fraction of vertices whose normal points to lower density (toward air).
fn fraction_toward_air(m: &IsoMesh, f: impl Fn(f64, f64, f64) -> f64) -> f64 {
    let ok = m
        .positions
        .iter()
        .zip(&m.normals)
        .filter(|(p, n)| {
            let at = |s: f64| [0, 1, 2].map(|k| f64::from(p[k]) + s * f64::from(n[k]));
            let (a, b) = (at(0.5), at(-0.5));
            f(a[0], a[1], a[2]) < f(b[0], b[1], b[2])
        })
        .count();
    ok as f64 / m.positions.len() as f64
}

/// Triangles as position bit patterns, sorted: comparable across separately meshed ranges.
fn triangle_set(m: &IsoMesh) -> Vec<[[u32; 3]; 3]> {
    let mut v: Vec<_> = triangles(m).map(|t| t.map(|i| m.positions[i as usize].map(f32::to_bits))).collect();
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------- table

fn is_crossed(case: usize, e: usize) -> bool {
    let a = usize::from(EDGE_START[e]);
    let b = a | (1 << (e / 4));
    (case >> a) & 1 != (case >> b) & 1
}

/// Directed triangle edges of a case that occur once: the case's loop boundaries.
fn case_boundary(case: usize) -> Vec<(usize, usize)> {
    let c = &CASES[case];
    let mut count = BTreeMap::new();
    for t in &c.tris[..usize::from(c.ntris)] {
        for k in 0..3 {
            *count.entry((usize::from(t[k]), usize::from(t[(k + 1) % 3]))).or_insert(0) += 1;
        }
    }
    let keys: Vec<_> = count.keys().copied().collect();
    keys.into_iter().filter(|&(a, b)| !count.contains_key(&(b, a))).collect()
}

/// Position of an edge's midpoint in doubled units.
fn edge_mid2(e: usize) -> [usize; 3] {
    let s = usize::from(EDGE_START[e]);
    let mut p = [2 * (s & 1), 2 * ((s >> 1) & 1), 2 * (s >> 2)];
    p[e / 4] += 1;
    p
}

#[test]
fn table_vertices_are_exactly_the_crossed_edges() {
    let mut max_tris = 0;
    for (case, c) in CASES.iter().enumerate() {
        for e in 0..12 {
            assert_eq!(c.edges >> e & 1 == 1, is_crossed(case, e), "case {case} edge {e}");
        }
        let mut used = 0u16;
        for t in &c.tris[..usize::from(c.ntris)] {
            assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2]);
            used |= t.iter().fold(0, |m, &e| m | 1 << e);
        }
        assert_eq!(used, c.edges, "case {case} leaves a crossed edge unused");
        // Loops visit every vertex once, and a loop of n vertices fans into n - 2 triangles.
        let e = c.edges.count_ones() as usize;
        assert_eq!(case_boundary(case).len(), e, "case {case}");
        let loops2 = e - usize::from(c.ntris);
        assert!(loops2.is_multiple_of(2) && (loops2 > 0) == (e > 0), "case {case}");
        // Diagonals (edges inside a loop, used in both directions) never run along a face.
        let boundary = case_boundary(case);
        for t in &c.tris[..usize::from(c.ntris)] {
            for k in 0..3 {
                let (a, b) = (usize::from(t[k]), usize::from(t[(k + 1) % 3]));
                if !boundary.contains(&(a, b)) {
                    assert!(!share_face(a, b), "case {case}: diagonal {a}-{b} lies on a face");
                }
            }
        }
        max_tris = max_tris.max(usize::from(c.ntris));
    }
    assert_eq!(max_tris, MAX_TRIS, "MAX_TRIS should be tight");
    assert!(CASES[0].edges == 0 && CASES[255].edges == 0);
}

#[test]
fn table_loop_boundaries_lie_on_faces_and_match_across_shared_faces() {
    // Boundary segment (a, b) of `case` on face (axis, side), as face-local edge midpoints.
    let on_face = |case: usize, axis: usize, side: usize| -> Vec<([usize; 3], [usize; 3])> {
        let mut v: Vec<_> = case_boundary(case)
            .into_iter()
            .map(|(a, b)| (edge_mid2(a), edge_mid2(b)))
            .filter(|(p, q)| p[axis] == 2 * side && q[axis] == 2 * side)
            .map(|(mut p, mut q)| {
                p[axis] = 0;
                q[axis] = 0;
                (p, q)
            })
            .collect();
        v.sort_unstable();
        v
    };
    for case in 0..256 {
        // Every boundary segment lies on some face (its endpoints share a face plane).
        for (a, b) in case_boundary(case) {
            let (p, q) = (edge_mid2(a), edge_mid2(b));
            assert!((0..3).any(|k| p[k] == q[k] && p[k] != 1), "case {case}: segment {a}-{b} crosses the cube");
        }
    }
    for axis in 0..3 {
        let bit = 1 << axis;
        for lo in 0..256usize {
            // Every case of the cube beyond `lo`'s face `axis = 1` that shares that face's corners.
            let face_bits = (0..8).filter(|c| c & bit != 0).fold(0, |m, c| m | ((lo >> c) & 1) << (c ^ bit));
            let face_mask = (0..8).filter(|c| c & bit == 0).fold(0, |m, c| m | 1 << c);
            let mine = on_face(lo, axis, 1);
            for hi in (0..256usize).filter(|hi| hi & face_mask == face_bits) {
                // The neighbour draws the same segments on the shared face, in opposite direction.
                let theirs: Vec<_> = on_face(hi, axis, 0).into_iter().map(|(p, q)| (q, p)).collect();
                let mut theirs = theirs;
                theirs.sort_unstable();
                assert_eq!(mine, theirs, "axis {axis}: cases {lo} and {hi} disagree on their shared face");
            }
        }
    }
}

// ---------------------------------------------------------------- meshes

#[test]
fn sphere_is_closed_with_accurate_area_and_volume() {
    let r = 20.0;
    let range = CellRange { min: [-24, -23, -25], cells: [48, 48, 49] };
    let f = sphere([0.37, -0.21, 0.13], r);
    let m = mesh_of(range, 1, &f);
    assert_closed(&m);
    assert_well_formed(&m, 1.0);
    let (area, vol) = area_volume(&m);
    let (a0, v0) = (4.0 * std::f64::consts::PI * r * r, 4.0 / 3.0 * std::f64::consts::PI * r * r * r);
    // Measured: -0.08% and -0.15%; the brief asks for 1%, tighter bounds catch more.
    assert!((area / a0 - 1.0).abs() < 0.005, "area {area} vs {a0}");
    // Positive volume also proves the winding: counter-clockwise seen from air (outside).
    assert!((vol / v0 - 1.0).abs() < 0.005, "volume {vol} vs {v0}");
    assert_eq!(fraction_toward_air(&m, &f), 1.0);
}

#[test]
fn stride_two_sphere_is_closed_and_accurate() {
    let r = 20.0;
    let range = CellRange { min: [-24, -24, -22], cells: [24, 24, 23] };
    let f = sphere([0.37, -0.21, 0.13], r);
    let m = mesh_of(range, 2, &f);
    assert_closed(&m);
    assert_well_formed(&m, 1.0);
    let (area, vol) = area_volume(&m);
    let (a0, v0) = (4.0 * std::f64::consts::PI * r * r, 4.0 / 3.0 * std::f64::consts::PI * r * r * r);
    // Measured: -0.3% and -0.6%.
    assert!((area / a0 - 1.0).abs() < 0.015, "area {area} vs {a0}");
    assert!((vol / v0 - 1.0).abs() < 0.015, "volume {vol} vs {v0}");
    // Vertices lie on stride-2 lattice edges.
    for p in &m.positions {
        assert!(p.iter().filter(|v| v.fract() == 0.0 && (**v as i32) % 2 == 0).count() >= 2, "{p:?}");
    }
}

/// Every edge away from the range boundary joins exactly two triangles, in opposite directions.
fn assert_interior_watertight(m: &IsoMesh, range: &CellRange, stride: i32) {
    let lo = range.min.map(|v| v as f32);
    let hi = [0, 1, 2].map(|k| (range.min[k] + range.cells[k] as i32 * stride) as f32);
    let on_boundary = |a: u32, b: u32| {
        let (p, q) = (m.positions[a as usize], m.positions[b as usize]);
        (0..3).any(|k| (p[k] == lo[k] && q[k] == lo[k]) || (p[k] == hi[k] && q[k] == hi[k]))
    };
    let edges = directed_edges(m);
    let mut interior = 0;
    for (&(a, b), &n) in &edges {
        assert_eq!(n, 1, "directed edge {a}->{b} used {n} times");
        if !on_boundary(a, b) {
            assert!(edges.contains_key(&(b, a)), "interior edge {a}-{b} has one triangle");
            interior += 1;
        }
    }
    assert!(interior > 100);
}

#[test]
fn noise_field_is_watertight_inside_and_never_degenerate() {
    let range = CellRange { min: [-7, 3, -11], cells: [18, 17, 16] };
    let block = DensityBlock::from_fn(range.block_origin(1).unwrap(), range.block_dims().unwrap(), 1, |x, y, z| {
        noise(f64::from(x), f64::from(y), f64::from(z)) as f32
    });
    // The field must exercise every case, ambiguous ones and exact-isolevel corners included.
    let mut seen = [false; 256];
    for z in 1..=range.cells[2] {
        for y in 1..=range.cells[1] {
            for x in 1..=range.cells[0] {
                let case = (0..8).fold(0, |c, k| c | usize::from(block.at(x + (k & 1), y + (k >> 1 & 1), z + (k >> 2)) > 0.0) << k);
                seen[case] = true;
            }
        }
    }
    assert!(seen.iter().all(|&s| s), "noise misses some cases");
    let m = march(&block, &range).unwrap();
    assert_interior_watertight(&m, &range, 1);
    // White noise has no meaningful gradient, so only non-degeneracy is required of normals here.
    assert_well_formed(&m, 0.0);
    // Welding: one vertex per crossed edge, so no two vertices share a position.
    let mut pos: Vec<_> = m.positions.iter().map(|p| p.map(f32::to_bits)).collect();
    pos.sort_unstable();
    let n = pos.len();
    pos.dedup();
    assert_eq!(pos.len(), n, "duplicate vertices");
}

#[test]
fn smooth_field_normals_face_air_and_match_winding() {
    for stride in [1, 2] {
        let range = CellRange { min: [-20, -15, -10], cells: [36, 30, 28] };
        let m = mesh_of(range, stride, sines);
        assert_interior_watertight(&m, &range, stride);
        assert_well_formed(&m, 1.0);
        let frac = fraction_toward_air(&m, sines);
        assert!(frac > 0.999, "stride {stride}: only {frac} of normals point to air");
    }
}

#[test]
fn adjacent_ranges_mesh_seamlessly() {
    for (stride, axis) in [(1, 0), (1, 1), (1, 2), (2, 0), (2, 2)] {
        let whole = CellRange { min: [-13, -9, -17], cells: [22, 20, 24] };
        let split = [10, 9, 13][axis];
        let mut a = whole;
        a.cells[axis] = split;
        let mut b = whole;
        b.min[axis] += split as i32 * stride;
        b.cells[axis] -= split;
        let (ma, mb, mw) = (mesh_of(a, stride, sines), mesh_of(b, stride, sines), mesh_of(whole, stride, sines));

        let mut union = triangle_set(&ma);
        union.extend(triangle_set(&mb));
        union.sort_unstable();
        assert_eq!(union, triangle_set(&mw), "stride {stride} axis {axis}: halves differ from the whole");

        // Border vertices, with their normals, are bit-identical from both sides.
        let border = b.min[axis] as f32;
        let on_border = |m: &IsoMesh| {
            let mut v: Vec<_> = (0..m.positions.len())
                .filter(|&i| m.positions[i][axis] == border)
                .map(|i| (m.positions[i].map(f32::to_bits), m.normals[i].map(f32::to_bits)))
                .collect();
            v.sort_unstable();
            v
        };
        let (ba, bb) = (on_border(&ma), on_border(&mb));
        assert!(ba.len() > 10, "stride {stride} axis {axis}: the border should be crossed");
        assert_eq!(ba, bb, "stride {stride} axis {axis}: border vertices differ");
    }
}

#[test]
fn isolevel_samples_count_as_air_and_stay_off_corners() {
    // A plane through lattice points: many samples are exactly 0 and are air.
    let range = CellRange { min: [0, 0, 0], cells: [6, 6, 6] };
    let m = mesh_of(range, 1, |x, y, z| ((3.0 - x - 0.5 * y) / 8.0 + 0.0 * z).clamp(-1.0, 1.0));
    assert_well_formed(&m, 1.0);
    for p in &m.positions {
        // x = 3 - y/2 is solid only for x < 3 - y/2, and vertices never sit on a corner.
        let lattice = p.iter().filter(|v| v.fract() == 0.0).count();
        assert!(lattice <= 2, "vertex {p:?} sits on a lattice corner");
    }
    // Quantised noise has long runs of exact zeros and ties between neighbours.
    let range = CellRange { min: [5, -5, 0], cells: [20, 20, 20] };
    let m = mesh_of(range, 1, |x, y, z| (noise(x, y, z) * 2.0).round() / 2.0);
    assert_interior_watertight(&m, &range, 1);
    assert_well_formed(&m, 0.0);
}

#[test]
fn hostile_densities_give_finite_meshes() {
    let range = CellRange { min: [0, 0, 0], cells: [8, 8, 8] };
    let m = mesh_of(range, 1, |x, y, z| match (x as i64 + 3 * y as i64 + 7 * z as i64) % 5 {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => 0.5,
        _ => -1e-30,
    });
    assert!(!m.is_empty());
    assert_interior_watertight(&m, &range, 1);
    assert!(m.positions.iter().chain(&m.normals).flatten().all(|v| v.is_finite()));
}

#[test]
fn bad_blocks_are_typed_errors() {
    let range = CellRange { min: [4, 5, 6], cells: [3, 4, 5] };
    let good = DensityBlock::from_fn([3, 4, 5], [6, 7, 8], 1, |_, _, _| 0.0);
    assert!(march(&good, &range).unwrap().is_empty());

    let mut b = good.clone();
    b.stride = 0;
    assert_eq!(march(&b, &range), Err(MarchError::BadStride(0)));
    let mut b = good.clone();
    b.origin = [4, 5, 6];
    assert!(matches!(march(&b, &range), Err(MarchError::OriginMismatch { .. })));
    let mut b = good.clone();
    b.dims = [6, 7, 7];
    assert!(matches!(march(&b, &range), Err(MarchError::DimsMismatch { .. })));
    let mut b = good.clone();
    b.data.pop();
    assert!(matches!(march(&b, &range), Err(MarchError::DataLength { .. })));
    // The same block at stride 2 would need origin min - 2.
    let mut b = good.clone();
    b.stride = 2;
    assert!(matches!(march(&b, &range), Err(MarchError::OriginMismatch { .. })));
    // Samples beyond i32 coordinates.
    let far = CellRange { min: [i32::MAX - 3, 0, 0], cells: [3, 1, 1] };
    let b = DensityBlock { origin: [i32::MAX - 4, -1, -1], dims: [6, 4, 4], stride: 1, data: vec![0.0; 96] };
    assert_eq!(march(&b, &far), Err(MarchError::TooLarge));
    assert_eq!(CellRange { min: [i32::MIN, 0, 0], cells: [1; 3] }.block_origin(1), None);

    // An empty range is fine and empty.
    let empty = CellRange { min: [0, 0, 0], cells: [0, 4, 4] };
    let b = DensityBlock::from_fn([-1, -1, -1], [3, 7, 7], 1, |x, _, _| x as f32);
    assert_eq!(march(&b, &empty), Ok(IsoMesh::default()));
}

#[test]
fn march_into_replaces_previous_contents() {
    let range = CellRange { min: [-4, -4, -4], cells: [9, 9, 9] };
    let block = DensityBlock::from_fn(range.block_origin(1).unwrap(), range.block_dims().unwrap(), 1, |x, y, z| {
        sphere([0.2, 0.1, -0.3], 3.5)(f64::from(x), f64::from(y), f64::from(z)) as f32
    });
    let expected = march(&block, &range).unwrap();
    let mut mesh = mesh_of(CellRange { min: [0, 0, 0], cells: [24, 24, 24] }, 1, sines);
    assert!(mesh.triangle_count() > expected.triangle_count());
    march_into(&block, &range, DEFAULT_EDGE_STEPS, &mut mesh).unwrap();
    assert_eq!(mesh, expected);
    let mut bad = block.clone();
    bad.data.pop();
    assert!(march_into(&bad, &range, DEFAULT_EDGE_STEPS, &mut mesh).is_err());
    assert!(mesh.is_empty() && mesh.positions.is_empty() && mesh.normals.is_empty());
}

/// Rounds every position to a lattice of `steps` steps per voxel (as a pack does) and counts
/// zero-area triangles and pairs of distinct vertices at one rounded position.
fn defects_after_rounding(m: &IsoMesh, steps: f32) -> (usize, usize) {
    let q: Vec<[f32; 3]> = m.positions.iter().map(|p| p.map(|v| (v * steps).round())).collect();
    let flat = m
        .indices
        .chunks_exact(3)
        .filter(|t| {
            let p = [0, 1, 2].map(|k| q[t[k] as usize]);
            let e1 = [0, 1, 2].map(|a| p[1][a] - p[0][a]);
            let e2 = [0, 1, 2].map(|a| p[2][a] - p[0][a]);
            let c = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
            c == [0.0; 3]
        })
        .count();
    let mut seen = BTreeMap::new();
    let dupes = q.iter().filter(|p| seen.insert(p.map(f32::to_bits), ()).is_some()).count();
    (flat, dupes)
}

#[test]
fn rounding_to_the_output_lattice_keeps_triangles_and_vertices_distinct() {
    // Densities with a tiny solid value next to a large air one put vertices right against
    // their edge's corners, where the clamp decides where they land.
    let f = |x: f64, y: f64, z: f64| {
        let v = noise(x, y, z);
        if v > 0.0 {
            1e-6 * v
        } else {
            v
        }
    };
    let range = CellRange { min: [3, -2, 0], cells: [16, 16, 16] };
    for (stride, edge_steps) in [(1, 2), (1, 8), (1, 512), (2, 1024), (4, 16)] {
        let block = DensityBlock::from_fn(range.block_origin(stride).unwrap(), range.block_dims().unwrap(), stride, |x, y, z| {
            f(f64::from(x), f64::from(y), f64::from(z)) as f32
        });
        let mut m = IsoMesh::default();
        march_into(&block, &range, edge_steps, &mut m).unwrap();
        assert!(m.triangle_count() > 500);
        let steps_per_voxel = edge_steps as f32 / stride as f32;
        assert_eq!(defects_after_rounding(&m, steps_per_voxel), (0, 0), "stride {stride}, {edge_steps} steps per edge");
    }
    // The margin must be a whole output step: half a step (the old fixed 1/1024 of an edge on a
    // 1/512-voxel lattice) rounds clamped vertices onto corners.
    let block = DensityBlock::from_fn(range.block_origin(1).unwrap(), range.block_dims().unwrap(), 1, |x, y, z| {
        f(f64::from(x), f64::from(y), f64::from(z)) as f32
    });
    let (flat, dupes) = defects_after_rounding(&march(&block, &range).unwrap(), 512.0);
    assert!(flat > 0 && dupes > 0, "{flat} flat triangles, {dupes} duplicates");
}

#[test]
fn edge_steps_must_be_a_power_of_two_of_at_least_two() {
    let range = CellRange { min: [0, 0, 0], cells: [2, 2, 2] };
    let block = DensityBlock::from_fn([-1, -1, -1], [5, 5, 5], 1, |x, _, _| 0.9 - x as f32);
    let mut m = IsoMesh::default();
    for bad in [0, 1, 3, 1000] {
        assert_eq!(march_into(&block, &range, bad, &mut m), Err(MarchError::BadEdgeSteps(bad)));
    }
    march_into(&block, &range, 2, &mut m).unwrap();
    assert!(m.positions.iter().all(|p| p[0] == 0.5), "t is clamped to [1/2, 1/2]: {:?}", m.positions);
}
