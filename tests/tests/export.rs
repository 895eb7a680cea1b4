//! `kiln export` writes exactly the tile's triangles and the vertices they use: without `--skirts`
//! the skirt faces and their vertices go, with it every face stays, and no vertex is a loose point.

use std::collections::BTreeSet;
use std::fs;

use kiln_e2e::{kiln, manifest, scratch, tiny_bake};

/// A parsed binary PLY as `kiln export` writes it: per vertex x y z nx ny nz ao r g b, triangles.
struct Ply {
    vertices: Vec<[f32; 10]>,
    faces: Vec<[u32; 3]>,
}

fn read_ply(bytes: &[u8]) -> Ply {
    let end = bytes.windows(11).position(|w| w == b"end_header\n").expect("PLY header") + 11;
    let header = std::str::from_utf8(&bytes[..end]).unwrap();
    let count =
        |element: &str| -> usize { header.lines().find_map(|l| l.strip_prefix(&format!("element {element} "))).expect(element).parse().unwrap() };
    let (nv, nf) = (count("vertex"), count("face"));
    let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let vertices = (0..nv).map(|v| std::array::from_fn(|c| f32_at(end + v * 40 + c * 4))).collect();
    let faces_at = end + nv * 40;
    assert_eq!(bytes.len(), faces_at + nf * 13, "PLY length");
    let faces = (0..nf)
        .map(|f| {
            let at = faces_at + f * 13;
            assert_eq!(bytes[at], 3);
            std::array::from_fn(|c| u32_at(at + 1 + c * 4))
        })
        .collect();
    Ply { vertices, faces }
}

/// The triangles of a mesh as position triples, for comparing exports with the pack whatever the
/// vertex numbering.
fn triangles(positions: impl Fn(u32) -> [f32; 3], faces: impl Iterator<Item = [u32; 3]>) -> Vec<[[u32; 3]; 3]> {
    let mut out: Vec<[[u32; 3]; 3]> = faces.map(|t| t.map(|i| positions(i).map(f32::to_bits))).collect();
    out.sort();
    out
}

#[test]
fn exports_have_no_loose_vertices_with_or_without_skirts() {
    let dir = tiny_bake();
    let out = scratch("export-compact");
    let d = dir.to_str().unwrap();
    let m = manifest(dir);
    let mut tiles_with_skirt_only_vertices = 0;
    for node in m.nodes.iter().filter(|n| n.level <= 1) {
        let (mesh, ao) = kiln_e2e::tile(dir, node.level, node.x, node.y);
        let tile = format!("{},{}", node.x, node.y);
        let level = node.level.to_string();
        for skirts in [false, true] {
            let ply = out.join(format!("L{}_{}_{}_{skirts}.ply", node.level, node.x, node.y));
            let mut args = vec!["export", d, "--tile", &tile, "--level", &level, "--format", "ply", "--out", ply.to_str().unwrap()];
            if skirts {
                args.push("--skirts");
            }
            assert_eq!(kiln(&args), 0, "{args:?}");
            let p = read_ply(&fs::read(&ply).unwrap());
            let used: BTreeSet<u32> = p.faces.iter().flatten().copied().collect();
            assert_eq!(used.len(), p.vertices.len(), "L{} ({},{}) skirts={skirts}: loose vertices", node.level, node.x, node.y);
            assert!(used.iter().all(|&i| (i as usize) < p.vertices.len()));

            let kept = if skirts { mesh.indices.len() } else { mesh.main_index_count };
            let pack_faces = mesh.indices[..kept].chunks_exact(3).map(|t| [t[0], t[1], t[2]]);
            let pack_used: BTreeSet<u32> = mesh.indices[..kept].iter().copied().collect();
            assert_eq!(p.vertices.len(), pack_used.len());
            // The same triangles, winding included, over the same positions.
            let expected = triangles(|i| mesh.positions[i as usize], pack_faces);
            let got = triangles(|i| std::array::from_fn(|c| p.vertices[i as usize][c]), p.faces.iter().copied());
            assert_eq!(got, expected, "L{} ({},{}) skirts={skirts}", node.level, node.x, node.y);
            // Attributes travel with their vertex.
            for (new, &old) in pack_used.iter().enumerate() {
                assert_eq!(p.vertices[new][6], ao.value(old as usize));
            }
            if !skirts && pack_used.len() < mesh.positions.len() {
                tiles_with_skirt_only_vertices += 1;
            }
        }
    }
    // Otherwise the test would not exercise the compaction.
    assert!(tiles_with_skirt_only_vertices > 0, "no tile has skirt-only vertices");
}

#[test]
fn glb_counts_match_the_exported_triangles() {
    let dir = tiny_bake();
    let glb = scratch("export-glb").join("t.glb");
    let d = dir.to_str().unwrap();
    let (mesh, _) = kiln_e2e::tile(dir, 0, 1, 1);
    for skirts in [false, true] {
        let mut args = vec!["export", d, "--tile", "1,1", "--format", "glb", "--out", glb.to_str().unwrap()];
        if skirts {
            args.push("--skirts");
        }
        assert_eq!(kiln(&args), 0);
        let bytes = fs::read(&glb).unwrap();
        let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let doc: serde_json::Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
        let kept = if skirts { mesh.indices.len() } else { mesh.main_index_count };
        let used: BTreeSet<u32> = mesh.indices[..kept].iter().copied().collect();
        for a in 0..4 {
            assert_eq!(doc["accessors"][a]["count"].as_u64().unwrap() as usize, used.len(), "accessor {a}, skirts={skirts}");
        }
        assert_eq!(doc["accessors"][4]["count"].as_u64().unwrap() as usize, kept);
    }
}
