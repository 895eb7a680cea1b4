//! Properties of baked terrain that would catch real bugs: determinism, seams, watertightness,
//! LOD bookkeeping, and a tile baked alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use kiln_e2e::{kiln, manifest, repo_root, scratch, tile, tiny_bake};

fn all_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn bakes_are_byte_identical_across_thread_counts() {
    let world = repo_root().join("worlds/tiny.toml");
    let a = scratch("jobs1");
    let b = scratch("jobs2");
    assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", a.to_str().unwrap(), "--jobs", "1", "--quiet", "--no-cache"]), 0);
    assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", b.to_str().unwrap(), "--jobs", "2", "--quiet", "--no-cache"]), 0);
    let (fa, fb) = (all_files(&a.join("tiny")), all_files(&b.join("tiny")));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (k, v) in &fa {
        assert!(v == &fb[k], "{k} differs between --jobs 1 and --jobs 2");
    }
    assert_eq!(fa, all_files(tiny_bake()), "a repeated bake differs");
}

type P = [u32; 3];
fn key(p: [f32; 3]) -> P {
    p.map(f32::to_bits)
}

#[test]
fn shared_tile_borders_are_bit_identical_at_every_level() {
    let dir = tiny_bake();
    let m = manifest(dir);
    for level in 0..m.levels {
        let [tx, ty] = m.tiles_at_level(level);
        let span = (m.tile_voxels << level) as f32 * m.voxel_size;
        for y in 0..ty {
            for x in 0..tx {
                let (a, _) = tile(dir, level, x, y);
                let on = |mesh: &kiln_formats::sections::TerrainMesh, axis: usize, at: f32| -> BTreeSet<P> {
                    let main: BTreeSet<u32> = mesh.indices[..mesh.main_index_count].iter().copied().collect();
                    main.iter().map(|&i| mesh.positions[i as usize]).filter(|p| p[axis] == at).map(key).collect()
                };
                if x + 1 < tx {
                    let (b, _) = tile(dir, level, x + 1, y);
                    let at = (x + 1) as f32 * span;
                    let (sa, sb) = (on(&a, 0, at), on(&b, 0, at));
                    assert!(!sa.is_empty() || !sb.is_empty() || level > 0, "no surface crosses the L{level} border x={at}");
                    assert_eq!(sa, sb, "L{level} border between ({x},{y}) and ({},{y})", x + 1);
                }
                if y + 1 < ty {
                    let (b, _) = tile(dir, level, x, y + 1);
                    let at = (y + 1) as f32 * span;
                    assert_eq!(on(&a, 1, at), on(&b, 1, at), "L{level} border between ({x},{y}) and ({x},{})", y + 1);
                }
            }
        }
    }
}

#[test]
fn level_zero_surface_is_watertight_and_clean() {
    let dir = tiny_bake();
    let m = manifest(dir);
    let mut vertex_ids: BTreeMap<P, u32> = BTreeMap::new();
    let mut edges: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut boundary_vertex: Vec<bool> = Vec::new();
    let max = m.bounds_max;
    let [tx, ty] = m.tiles_at_level(0);
    let mut triangles = 0;
    for y in 0..ty {
        for x in 0..tx {
            let (mesh, ao) = tile(dir, 0, x, y);
            assert_eq!(ao.0.len(), mesh.positions.len());
            for t in mesh.main_triangles() {
                assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2], "repeated index in {t:?}");
                let p = t.map(|i| mesh.positions[i as usize]);
                let e1 = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
                let e2 = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
                let c = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
                assert!(c.iter().any(|v| *v != 0.0), "zero-area triangle {p:?}");
                let ids = p.map(|q| {
                    let next = vertex_ids.len() as u32;
                    *vertex_ids.entry(key(q)).or_insert_with(|| {
                        let eps = 1e-4;
                        boundary_vertex.push((0..3).any(|a| q[a] <= eps || (a < 2 && q[a] >= max[a] - m.voxel_size - eps)));
                        next
                    })
                });
                for (a, b) in [(ids[0], ids[1]), (ids[1], ids[2]), (ids[2], ids[0])] {
                    *edges.entry((a.min(b), a.max(b))).or_default() += 1;
                }
                triangles += 1;
            }
        }
    }
    assert!(triangles > 1000, "tiny world has a real surface ({triangles} triangles)");
    let mut open = 0;
    for (&(a, b), &n) in &edges {
        let on_boundary = boundary_vertex[a as usize] && boundary_vertex[b as usize];
        assert!(n <= 2, "edge used by {n} triangles");
        if n != 2 && !on_boundary {
            open += 1;
        }
    }
    assert_eq!(open, 0, "{open} open edges away from the volume boundary");
}

#[test]
fn lod_quadtree_is_complete_and_errors_grow_toward_the_root() {
    let dir = tiny_bake();
    let m = manifest(dir);
    assert!(m.levels >= 2);
    for n in &m.nodes {
        assert!(n.geometric_error >= 0.0);
        for c in n.id().children().into_iter().flatten() {
            let c = m.tile(c).expect("child");
            assert!(n.geometric_error >= c.geometric_error);
        }
        let (mesh, ao) = tile(dir, n.level, n.x, n.y);
        assert_eq!(mesh.positions.len() as u32, n.vertex_count);
        assert!(ao.0.iter().any(|&v| v < 255) && ao.0.iter().any(|&v| v > 200) || mesh.positions.is_empty());
        for p in &mesh.positions {
            for (a, &v) in p.iter().enumerate() {
                assert!(v >= n.bounds_min[a] && v <= n.bounds_max[a]);
            }
        }
    }
    let root = m.node(m.levels - 1, 0, 0).unwrap();
    assert!(root.geometric_error > 0.0, "a coarse root must report some error");
    let l0 = m.nodes.iter().filter(|n| n.level == 0).map(|n| n.triangle_count).sum::<u32>();
    assert!(root.triangle_count * 4 < l0, "the root ({}) is much coarser than level 0 ({l0})", root.triangle_count);
}

#[test]
fn a_tile_baked_alone_equals_the_whole_world_bake() {
    let dir = tiny_bake();
    let world = kiln_bake::world::load_world(&repo_root().join("worlds/tiny.toml")).unwrap();
    let m = manifest(dir);
    for n in [&m.nodes[5], m.nodes.last().unwrap()] {
        let id = n.id();
        let alone = kiln_bake::pipeline::bake_single_tile(&world, id).unwrap();
        assert!(alone == fs::read(dir.join(&n.path)).unwrap(), "tile {id} baked alone differs");
    }
}
