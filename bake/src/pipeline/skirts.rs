//! Skirts: crack-hiding strips hung from a tile's border edges.
//!
//! Neighbouring tiles drawn at different LOD levels cut the surface along the same border plane with
//! different polylines, leaving slivers of gap. Each border edge of a tile gets a quad that lies *in the
//! border plane* and extends from the edge into the solid side (the vertex normal with its
//! across-the-border component removed, negated) by `depth`: deep enough to cover the deviation of the
//! next coarser level. The quad is emitted with both windings so back-face culling never removes it,
//! and its vertices copy the normal (and, later, the AO) of the border vertex they hang from, so the
//! skirt shades like the surface it extends.

use std::collections::BTreeMap;

/// Which border plane a vertex lies on, in voxel units: `axis` 0 (X) or 1 (Y), at coordinate `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BorderPlane {
    pub axis: usize,
    pub at: f32,
}

/// Appends skirt vertices and triangles to a mesh whose first `main_index_count` indices are the
/// surface. `planes` are the tile's four border planes (voxel units, matching `positions`).
/// Returns, for each new vertex, the index of the border vertex it copies attributes from.
pub fn add_skirts(
    positions: &mut Vec<[f32; 3]>,
    normals: &mut Vec<[f32; 3]>,
    indices: &mut Vec<u32>,
    planes: &[BorderPlane],
    depth: f32,
) -> Vec<u32> {
    // Only edges with both ends on a border plane can be border edges; they are few, so the map stays small.
    let on_border: Vec<bool> = positions.iter().map(|p| planes.iter().any(|pl| p[pl.axis] == pl.at)).collect();
    // Undirected edge -> (use count, directed version from its first triangle).
    let mut edges: BTreeMap<(u32, u32), (u32, (u32, u32))> = BTreeMap::new();
    for t in indices.chunks_exact(3) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            if !(on_border[a as usize] && on_border[b as usize]) {
                continue;
            }
            let key = (a.min(b), a.max(b));
            edges.entry(key).and_modify(|e| e.0 += 1).or_insert((1, (a, b)));
        }
    }
    let mut skirt_of: BTreeMap<(u32, usize), u32> = BTreeMap::new();
    let mut sources = Vec::new();
    let mut new_tris = Vec::new();
    for (&(_, _), &(count, (a, b))) in &edges {
        if count != 1 {
            continue;
        }
        let (pa, pb) = (positions[a as usize], positions[b as usize]);
        let Some(plane_idx) = planes.iter().position(|p| pa[p.axis] == p.at && pb[p.axis] == p.at) else { continue };
        let plane = planes[plane_idx];
        let mut skirt_vertex = |v: u32| -> u32 {
            *skirt_of.entry((v, plane_idx)).or_insert_with(|| {
                let p = positions[v as usize];
                let n = normals[v as usize];
                let mut dir = [-n[0], -n[1], -n[2]];
                dir[plane.axis] = 0.0;
                let len = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
                let dir = if len > 1e-3 { dir.map(|c| c / len) } else { [0.0, 0.0, -1.0] };
                let mut q = [p[0] + dir[0] * depth, p[1] + dir[1] * depth, p[2] + dir[2] * depth];
                q[plane.axis] = plane.at; // stay exactly in the border plane
                positions.push(q);
                normals.push(n);
                sources.push(v);
                (positions.len() - 1) as u32
            })
        };
        let (a2, b2) = (skirt_vertex(a), skirt_vertex(b));
        // Both windings of the quad (a, b, b2, a2).
        new_tris.extend_from_slice(&[a, a2, b2, a, b2, b, a, b2, a2, a, b, b2]);
    }
    indices.extend_from_slice(&new_tris);
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_border_edge_gets_a_double_sided_quad_in_the_plane() {
        // A single triangle with one edge on the plane x = 0.
        let mut positions = vec![[0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.5, 1.0]];
        let mut normals = vec![[0.0, 0.0, 1.0]; 3];
        let mut indices = vec![0, 2, 1];
        let sources = add_skirts(&mut positions, &mut normals, &mut indices, &[BorderPlane { axis: 0, at: 0.0 }], 2.0);
        assert_eq!(sources, vec![1, 0]);
        assert_eq!(indices.len(), 3 + 12);
        for p in &positions[3..] {
            assert_eq!(p[0], 0.0, "skirt vertices stay in the border plane");
            assert_eq!(p[2], -1.0, "hung into the solid by the depth");
        }
        // No skirt on an edge that is not on a border plane.
        let mut indices2 = vec![0, 2, 1];
        let mut p2 = positions[..3].to_vec();
        let mut n2 = normals[..3].to_vec();
        assert!(add_skirts(&mut p2, &mut n2, &mut indices2, &[BorderPlane { axis: 1, at: 5.0 }], 2.0).is_empty());
    }
}
