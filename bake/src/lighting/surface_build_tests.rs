//! The parallel build against one walk over the mesh in index order: the same bits.

use super::*;
use crate::lighting::rng::Rng;

/// The surface as one walk over the vertices and triangles in index order built it.
fn one_walk(positions: &[[f32; 3]], indices: &[u32]) -> Built {
    let weld = one_walk_weld(positions);
    let count = weld.iter().map(|&w| w as usize + 1).max().unwrap_or(0);
    let mut pos = vec![Vec3A::ZERO; count];
    for (v, &w) in weld.iter().enumerate() {
        pos[w as usize] = positions[v].into();
    }
    // The sums are the walk's own code (`build` calls it too).
    let TriangleSums { mut normal, area, degree, total_area, edge_sum } = triangle_sums(&weld, &pos, indices);
    normal.iter_mut().for_each(|n| *n = n.normalize_or_zero());
    let mut start = vec![0u32; count + 1];
    for i in 0..count {
        start[i + 1] = start[i] + degree[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![0u32; start[count] as usize];
    for t in indices.chunks_exact(3) {
        let w = [weld[t[0] as usize], weld[t[1] as usize], weld[t[2] as usize]];
        for k in 0..3 {
            let i = w[k] as usize;
            (adj[fill[i] as usize], adj[fill[i] as usize + 1]) = (w[(k + 1) % 3], w[(k + 2) % 3]);
            fill[i] += 2;
        }
    }
    let mut adj_start = vec![0u32; count + 1];
    let mut out = 0usize;
    for i in 0..count {
        let list = &mut adj[start[i] as usize..start[i + 1] as usize];
        list.sort_unstable();
        let mut last = u32::MAX;
        let begin = out;
        for k in start[i] as usize..start[i + 1] as usize {
            let j = adj[k];
            if j != last && j as usize != i {
                adj[out] = j;
                out += 1;
                last = j;
            }
        }
        adj_start[i] = begin as u32;
        adj_start[i + 1] = out as u32;
    }
    adj.truncate(out);
    // About half the slots were duplicates; a mapped block shrinks in place.
    adj.shrink_to_fit();
    let edges = (indices.len()).max(1) as f64;
    Built { weld, pos, normal, area, adj_start, adj, total_area, mean_edge: (edge_sum / edges) as f32 }
}

fn one_walk_weld(positions: &[[f32; 3]]) -> Vec<u32> {
    let key = |v: usize| positions[v].map(|c| (c + 0.0).to_bits());
    let mut order: Vec<u32> = (0..positions.len() as u32).collect();
    // Index as the last key makes the order total, so the unstable parallel sort is deterministic.
    order.par_sort_unstable_by_key(|&v| (key(v as usize), v));
    let mut rep = vec![0u32; positions.len()];
    let mut run_start = 0;
    for k in 0..order.len() {
        if k == 0 || key(order[k] as usize) != key(order[k - 1] as usize) {
            run_start = k;
        }
        rep[order[k] as usize] = order[run_start];
    }
    let mut id = vec![u32::MAX; positions.len()];
    let mut next = 0u32;
    let mut weld = vec![0u32; positions.len()];
    for v in 0..positions.len() {
        let r = rep[v] as usize;
        if id[r] == u32::MAX {
            id[r] = next;
            next += 1;
        }
        weld[v] = id[r];
    }
    weld
}

/// A jittered grid of quads cut into tiles whose border vertices are repeated (as separately
/// meshed tiles repeat them), with some `-0.0` coordinates, repeated triangles, triangles with
/// a repeated corner, and vertices no triangle uses.
fn tiled_mesh(side: usize, tile: usize, seed: u64) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0, 0);
    let height: Vec<f32> = (0..(side + 1) * (side + 1)).map(|_| rng.next_f32() * 0.3).collect();
    let (mut positions, mut indices) = (Vec::new(), Vec::new());
    for ty in (0..side).step_by(tile) {
        for tx in (0..side).step_by(tile) {
            let base = positions.len() as u32;
            let n = tile + 1;
            for y in ty..=ty + tile {
                for x in tx..=tx + tile {
                    let z = height[y * (side + 1) + x];
                    // Every other row of tiles has -0 where the others have +0: their shared
                    // border vertices weld across the sign.
                    let x = if x == 0 && (ty / tile) % 2 == 1 { -0.0 } else { x as f32 };
                    positions.push([x, y as f32, z]);
                }
            }
            positions.push([1e6, 1e6, 0.0]);
            for y in 0..tile as u32 {
                for x in 0..tile as u32 {
                    let (a, b, c, d) =
                        (base + y * n as u32 + x, base + y * n as u32 + x + 1, base + (y + 1) * n as u32 + x + 1, base + (y + 1) * n as u32 + x);
                    indices.extend_from_slice(&[a, b, c, a, c, d]);
                    match rng.next_f32() {
                        r if r < 0.02 => indices.extend_from_slice(&[a, b, c]),
                        r if r < 0.04 => indices.extend_from_slice(&[a, a, c]),
                        _ => {}
                    }
                }
            }
        }
    }
    (positions, indices)
}

fn assert_same(got: &Built, want: &Built) {
    let bits = |v: &[Vec3A]| v.iter().flat_map(|p| p.to_array().map(f32::to_bits)).collect::<Vec<_>>();
    assert_eq!(got.weld, want.weld, "weld");
    assert_eq!(bits(&got.pos), bits(&want.pos), "positions");
    assert_eq!(bits(&got.normal), bits(&want.normal), "normals");
    assert_eq!(got.area.iter().map(|a| a.to_bits()).collect::<Vec<_>>(), want.area.iter().map(|a| a.to_bits()).collect::<Vec<_>>(), "areas");
    assert_eq!(got.adj_start, want.adj_start, "adjacency starts");
    assert_eq!(got.adj, want.adj, "adjacency");
    assert_eq!(got.total_area.to_bits(), want.total_area.to_bits(), "total area");
    assert_eq!(got.mean_edge.to_bits(), want.mean_edge.to_bits(), "mean edge");
}

#[test]
fn welding_merges_identical_positions_only() {
    let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [-0.0, 0.0, 0.0], [1.0, 0.0, 1e-7], [1.0, 0.0, 0.0]];
    let w = weld(&p);
    assert_eq!(w.ids, vec![0, 1, 0, 2, 1]);
    // Each welded vertex keeps the position of the last vertex welded to it.
    assert_eq!(w.last, vec![2, 4, 3]);
}

#[test]
fn the_parallel_build_gives_the_bits_of_one_walk_over_the_mesh() {
    // Over several blocks of vertices, on one thread and on several.
    let (positions, indices) = tiled_mesh(256, 16, 3);
    let want = one_walk(&positions, &indices);
    assert!(want.pos.len() > 3 * BLOCK && want.pos.len() < positions.len());
    assert!(want.adj.len() < want.adj_start.len() * 8 && want.total_area > 0.0);
    for threads in [1, 3, 8] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        let got = pool.install(|| build(&positions, &indices));
        assert_same(&got, &want);
    }
    // A dangling index remainder is ignored, and an empty mesh is empty.
    let mut cut = indices.clone();
    cut.truncate(cut.len() - 1);
    assert_same(&build(&positions, &cut), &one_walk(&positions, &cut));
    assert_same(&build(&[], &[]), &one_walk(&[], &[]));
}
