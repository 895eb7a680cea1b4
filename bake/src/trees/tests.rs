use glam::Vec3;
use xxhash_rust::xxh3::xxh3_64;

use super::species::Form;
use super::*;

const HEIGHT: f32 = 1.2;

fn mesh_hash(m: &TreeMesh) -> u64 {
    let mut bytes = Vec::new();
    bytes.extend(m.positions.iter().flatten().flat_map(|v| v.to_le_bytes()));
    bytes.extend(m.normals.iter().flatten().flat_map(|v| v.to_le_bytes()));
    bytes.extend(m.uvs.iter().flatten().flat_map(|v| v.to_le_bytes()));
    bytes.extend(m.ao.iter().flat_map(|v| v.to_le_bytes()));
    bytes.extend(m.bark_indices.iter().flat_map(|v| v.to_le_bytes()));
    bytes.extend(m.leaf_indices.iter().flat_map(|v| v.to_le_bytes()));
    for l in &m.lods {
        bytes.extend(l.bark_index_count.to_le_bytes());
        bytes.extend(l.leaf_index_count.to_le_bytes());
    }
    xxh3_64(&bytes)
}

fn all() -> impl Iterator<Item = SpeciesParams> {
    PRESETS.iter().map(|n| preset(n).unwrap())
}

#[test]
fn presets_are_named_and_unknown_names_are_refused() {
    for name in PRESETS {
        assert_eq!(preset(name).unwrap().name, *name);
    }
    assert!(preset("baobab").is_none());
    assert!(PRESETS.len() >= 4);
}

/// Pinned per preset for seed 1: any change of output changes these (and must be deliberate).
const PINNED: &[(&str, u64)] = &[
    ("oak", 0xa843e4299560786c),
    ("maple", 0x41104a8be312202a),
    ("birch", 0x9bffaf9098bcd400),
    ("pine", 0xff6b976ffada7c2f),
    ("live_oak", 0xe11620434ff6216a),
    ("papaya", 0xdd99b8468e193e25),
];

#[test]
fn growth_is_deterministic_and_seeded() {
    for p in all() {
        let a = grow(&p, 1, HEIGHT);
        let b = grow(&p, 1, HEIGHT);
        assert_eq!(a, b, "{}", p.name);
        let h = mesh_hash(&a.mesh);
        println!("(\"{}\", 0x{h:016x}),", p.name);
        if let Some((_, pinned)) = PINNED.iter().find(|(n, _)| *n == p.name) {
            assert_eq!(h, *pinned, "{} changed", p.name);
        }
        assert_ne!(h, mesh_hash(&grow(&p, 2, HEIGHT).mesh), "{}: seeds 1 and 2 grew the same tree", p.name);
        let t = textures(&p);
        assert_eq!(t, textures(&p));
    }
}

#[test]
fn branch_counts_stay_in_the_reference_ranges() {
    for p in all() {
        for seed in 0..6 {
            let s = skeleton::grow(&p, seed);
            let children = |parent: usize| s.branches.iter().filter(|b| b.parent == Some(parent as u32)).count();
            let first = children(0);
            assert!(first <= 8 * p.whorls.max(1) as usize, "{}: {first} first-order", p.name);
            if p.form == Form::Deciduous {
                assert!((p.branches[0][0] as usize..=8).contains(&first), "{}: {first} first-order", p.name);
            }
            for (i, b) in s.branches.iter().enumerate() {
                let n = children(i);
                let level = usize::from(b.level);
                if b.parent.is_none() || level >= 4 {
                    continue;
                }
                let [lo, hi] = p.branches[level];
                assert!((lo as usize..=hi as usize).contains(&n), "{}: level {level} branch has {n} children", p.name);
                match level {
                    1 if hi > 0 => assert!((4..=6).contains(&n), "{}: second order {n}", p.name),
                    2 if hi > 0 => assert!((6..=10).contains(&n), "{}: third order {n}", p.name),
                    _ => {}
                }
            }
            assert!(!s.leaves.is_empty(), "{}", p.name);
        }
    }
}

#[test]
fn leaves_hang_on_level_two_or_finer_branches() {
    for p in all() {
        let s = skeleton::grow(&p, 3);
        for l in &s.leaves {
            let b = &s.branches[l.branch as usize];
            assert!(b.level >= 2, "{}: leaf on level {}", p.name, b.level);
            let stem = l.centre - l.axis * l.length * 0.5;
            // The stem touches the branch's surface: within its radius of some cylinder's axis.
            let touches = b.cylinders.iter().any(|c| {
                let d = c.p1 - c.p0;
                let t = ((stem - c.p0).dot(d) / d.length_squared()).clamp(0.0, 1.0);
                (stem - (c.p0 + d * t)).length() <= c.r0.max(c.r1) * 1.01 + 1e-6
            });
            assert!(touches, "{}: a leaf floats", p.name);
            assert!((l.normal.length() - 1.0).abs() < 1e-4 && l.normal.dot(l.axis).abs() < 1e-4);
        }
    }
}

#[test]
fn meshes_are_finite_sized_and_within_the_triangle_budget() {
    for p in all() {
        for seed in [1, 7] {
            let t = grow(&p, seed, HEIGHT);
            let m = &t.mesh;
            let n = m.positions.len();
            assert!(n == m.normals.len() && n == m.uvs.len() && n == m.ao.len());
            assert!(m.positions.iter().flatten().chain(m.normals.iter().flatten()).chain(m.uvs.iter().flatten()).all(|v| v.is_finite()));
            assert!((t.height - HEIGHT).abs() <= 0.05 * HEIGHT, "{}: height {}", p.name, t.height);
            assert!(t.radius > 0.1 * HEIGHT && t.radius < 1.5 * HEIGHT, "{}: radius {}", p.name, t.radius);
            let tris = (m.bark_indices.len() + m.leaf_indices.len()) / 3;
            // A deciduous tree ~3–8 k triangles at full LOD, a pine fewer (papaya is a sparse palm-like crown).
            let budget = match (p.form, p.name.as_str()) {
                (Form::Conifer, _) => 1000..=5000,
                (_, "papaya") => 300..=3000,
                _ => 3000..=8000,
            };
            assert!(budget.contains(&tris), "{}: {tris} triangles", p.name);
            for tri in m.bark_indices.chunks_exact(3).chain(m.leaf_indices.chunks_exact(3)) {
                let [a, b, c] = [0, 1, 2].map(|k| Vec3::from(m.positions[tri[k] as usize]));
                let area2 = (b - a).cross(c - a).length();
                assert!(area2 > 1e-9 * HEIGHT * HEIGHT, "{}: degenerate triangle {tri:?}", p.name);
            }
            for nrm in &m.normals {
                assert!((Vec3::from(*nrm).length() - 1.0).abs() < 1e-3);
            }
        }
    }
}

#[test]
fn lods_are_nested_prefixes() {
    for p in all() {
        let s = skeleton::grow(&p, 5);
        let (m, _) = mesh::build(&p, 5, &s, HEIGHT);
        let [full, lod1, lod2] = m.lods;
        assert_eq!(full.bark_index_count as usize, m.bark_indices.len());
        assert_eq!(full.leaf_index_count as usize, m.leaf_indices.len());
        assert!(lod2.bark_index_count <= lod1.bark_index_count && lod1.bark_index_count <= full.bark_index_count);
        assert!(lod2.bark_index_count > 0 && lod2.bark_index_count % 3 == 0 && lod1.bark_index_count % 3 == 0);
        let leaves = s.leaves.len() as u32;
        assert_eq!(full.leaf_index_count, 6 * leaves);
        assert_eq!(lod1.leaf_index_count, 6 * leaves.div_ceil(2));
        assert_eq!(lod2.leaf_index_count, 6 * leaves.div_ceil(4));
        // The bark prefixes hold exactly the branches up to the LOD's level.
        let tris_to = |max: u8| -> u32 {
            s.branches.iter().filter(|b| b.level <= max).map(|b| 6 * p.sides[usize::from(b.level)].max(3) * b.cylinders.len() as u32).sum()
        };
        assert_eq!(lod1.bark_index_count, tris_to(2), "{}", p.name);
        assert_eq!(lod2.bark_index_count, tris_to(1), "{}", p.name);
        // The coarse leaf sets lean outwards: their mean distance from the crown's centre exceeds the full set's.
        let first = mesh::first_leaf_vertex(&m);
        let centre = |k: usize| (0..4).map(|c| Vec3::from(m.positions[first + 4 * k + c])).sum::<Vec3>() / 4.0;
        let all_c: Vec<Vec3> = (0..leaves as usize).map(centre).collect();
        let mid = all_c.iter().sum::<Vec3>() / all_c.len() as f32;
        let mean = |n: usize| all_c[..n].iter().map(|c| (*c - mid).length()).sum::<f32>() / n as f32;
        assert!(mean(leaves.div_ceil(4) as usize) > mean(leaves as usize), "{}", p.name);
    }
}

#[test]
fn ao_is_darker_under_the_crown_than_at_its_outer_leaves() {
    for p in all() {
        let t = grow(&p, 1, HEIGHT);
        let m = &t.mesh;
        assert!(m.ao.iter().all(|a| (0.0..=1.0).contains(a)), "{}", p.name);
        // The trunk is meshed first: its first two rings are its base.
        let ring = p.sides[0] as usize + 1;
        let base = m.ao[..2 * ring].iter().sum::<f32>() / (2 * ring) as f32;
        // Outer leaves come first in leaf order.
        let first = mesh::first_leaf_vertex(m);
        let outer_n = (m.leaf_indices.len() / 6 / 10).max(1);
        let outer = (0..outer_n).map(|k| m.ao[first + 4 * k]).sum::<f32>() / outer_n as f32;
        assert!(base < outer, "{}: trunk base AO {base} vs outer leaves {outer}", p.name);
        assert!(m.ao.iter().any(|&a| a < 0.9), "{}: no occlusion at all", p.name);
    }
}

#[test]
fn textures_have_leaf_shapes_and_opaque_bark() {
    for p in all() {
        let t = textures(&p);
        assert_eq!((t.bark.width, t.bark.height), (64, 128));
        assert!(t.bark.rgba.chunks_exact(4).all(|c| c[3] == 255));
        let alpha: Vec<u8> = t.leaf.rgba.chunks_exact(4).map(|c| c[3]).collect();
        let covered = alpha.iter().filter(|&&a| a >= 128).count() as f32 / alpha.len() as f32;
        assert!(alpha.contains(&0) && alpha.contains(&255), "{}", p.name);
        assert!((0.15..0.85).contains(&covered), "{}: coverage {covered}", p.name);
        assert!((covered - texture::leaf_coverage(&p)).abs() < 0.05, "{}: coverage estimate off", p.name);
        // Uncovered texels carry leaf colour, not black, so filtering never darkens edges.
        assert!(t.leaf.rgba.chunks_exact(4).all(|c| c[0] as u32 + c[1] as u32 + c[2] as u32 > 30));
    }
}

#[test]
fn growth_does_not_depend_on_the_thread_count() {
    let p = preset("maple").unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| grow(&p, 9, HEIGHT));
    let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap().install(|| grow(&p, 9, HEIGHT));
    assert_eq!(one, four);
}

#[test]
fn capture_triangles_tag_bark_then_leaves() {
    let t = grow(&preset("birch").unwrap(), 4, HEIGHT);
    let m = &t.mesh;
    for lod in 0..3 {
        let (idx, mat) = m.capture_triangles(lod);
        let l = m.lods[lod];
        assert_eq!(idx.len(), (l.bark_index_count + l.leaf_index_count) as usize);
        assert_eq!(mat.len() * 3, idx.len());
        let bark = l.bark_index_count as usize / 3;
        assert!(mat[..bark].iter().all(|&k| k == BARK_MATERIAL) && mat[bark..].iter().all(|&k| k == LEAF_MATERIAL));
        assert_eq!(&idx[bark * 3..], &m.leaf_indices[..l.leaf_index_count as usize]);
    }
}
