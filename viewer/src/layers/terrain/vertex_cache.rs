//! Triangle and vertex order for the GPU's post-transform vertex cache and vertex fetch, applied
//! on the loader threads.
//!
//! Marching cubes emits triangles cell by cell, row by row: neighbours in the row share vertices,
//! but the row above shares them a whole row later, long after a GPU's small reuse window has
//! moved on, so many vertices are shaded two or three times. On a GPU the geometry stages, not the
//! pixels, bound the frame, so fewer vertex shader runs are frame time. The triangle order comes from Tipsify (Sander, Nehab and Barczak,
//! "Fast Triangle Reordering for Vertex Locality and Reduced Overdraw", 2007): linear time, no
//! tuning beyond the cache size. Vertices are then renumbered in first-use order, so fetches walk
//! the vertex buffer forwards.
//!
//! Both steps are pure functions of the mesh: the same pack gives the same buffers everywhere.

/// The reuse window Tipsify plans for. Smaller than most hardware windows: a plan for a small
/// cache still works on a larger one, not the other way round.
pub const CACHE_SIZE: u32 = 16;

/// Reorders the triangles of `indices` (a triangle list over `vertex_count` vertices, every index
/// in range) for vertex reuse. Each triangle keeps its own vertex order (winding and provoking
/// vertex); only the order of triangles changes.
pub fn reorder_triangles(indices: &mut [u32], vertex_count: usize) {
    let tri_count = indices.len() / 3;
    if tri_count < 2 {
        return;
    }
    // Vertex → triangles adjacency, compressed (offsets into one array).
    let mut offsets = vec![0u32; vertex_count + 1];
    for &v in indices.iter() {
        offsets[v as usize + 1] += 1;
    }
    for i in 0..vertex_count {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut adjacency = vec![0u32; indices.len()];
    for (t, tri) in indices.chunks_exact(3).enumerate() {
        for &v in tri {
            adjacency[fill[v as usize] as usize] = t as u32;
            fill[v as usize] += 1;
        }
    }
    let mut live: Vec<u32> = (0..vertex_count).map(|v| offsets[v + 1] - offsets[v]).collect();
    let mut cache_time = vec![0u32; vertex_count];
    let mut emitted = vec![false; tri_count];
    let mut dead_end: Vec<u32> = Vec::new();
    let mut order: Vec<u32> = Vec::with_capacity(tri_count);
    let mut candidates: Vec<u32> = Vec::new();
    let mut time = CACHE_SIZE + 1;
    let mut cursor = 0usize;
    let mut fan = Some(0u32);
    while let Some(f) = fan {
        candidates.clear();
        for &t in &adjacency[offsets[f as usize] as usize..offsets[f as usize + 1] as usize] {
            if emitted[t as usize] {
                continue;
            }
            emitted[t as usize] = true;
            order.push(t);
            for &v in &indices[3 * t as usize..3 * t as usize + 3] {
                dead_end.push(v);
                candidates.push(v);
                live[v as usize] -= 1;
                if time - cache_time[v as usize] > CACHE_SIZE {
                    cache_time[v as usize] = time;
                    time += 1;
                }
            }
        }
        // Next fan: the candidate that will still be in the cache after its remaining triangles
        // are emitted, the oldest such first (it would drop out soonest).
        let mut best: Option<(u32, u32)> = None;
        for &v in &candidates {
            let vi = v as usize;
            if live[vi] == 0 {
                continue;
            }
            let age = time - cache_time[vi];
            if age + 2 * live[vi] <= CACHE_SIZE && best.is_none_or(|(_, a)| age > a) {
                best = Some((v, age));
            }
        }
        fan = match best {
            Some((v, _)) => Some(v),
            // No candidate stays cached: back to a recently used vertex with work left, else the
            // next unfinished vertex in input order.
            None => loop {
                match dead_end.pop() {
                    Some(v) if live[v as usize] > 0 => break Some(v),
                    Some(_) => continue,
                    None => {
                        while cursor < vertex_count && live[cursor] == 0 {
                            cursor += 1;
                        }
                        break (cursor < vertex_count).then_some(cursor as u32);
                    }
                }
            },
        };
    }
    debug_assert_eq!(order.len(), tri_count, "every triangle is emitted once");
    let old: Vec<u32> = indices.to_vec();
    for (slot, &t) in order.iter().enumerate() {
        indices[3 * slot..3 * slot + 3].copy_from_slice(&old[3 * t as usize..3 * t as usize + 3]);
    }
}

/// Renumbers vertices in order of first use by `indices`, rewriting both; vertices no triangle
/// uses keep their relative order after the used ones.
pub fn reorder_vertices<V: Copy>(vertices: &mut [V], indices: &mut [u32]) {
    const UNSET: u32 = u32::MAX;
    let mut remap = vec![UNSET; vertices.len()];
    let mut next = 0u32;
    for i in indices.iter_mut() {
        let r = &mut remap[*i as usize];
        if *r == UNSET {
            *r = next;
            next += 1;
        }
        *i = *r;
    }
    for r in remap.iter_mut().filter(|r| **r == UNSET) {
        *r = next;
        next += 1;
    }
    let old = vertices.to_vec();
    for (o, &n) in remap.iter().enumerate() {
        vertices[n as usize] = old[o];
    }
}

/// Average vertex shader runs per triangle with a FIFO cache of `cache` entries (lower is
/// better; about 0.5 is the floor for a large regular mesh).
pub fn acmr(indices: &[u32], cache: usize) -> f64 {
    let mut fifo: std::collections::VecDeque<u32> = std::collections::VecDeque::with_capacity(cache);
    let mut misses = 0usize;
    for &v in indices {
        if !fifo.contains(&v) {
            misses += 1;
            if fifo.len() == cache {
                fifo.pop_front();
            }
            fifo.push_back(v);
        }
    }
    misses as f64 / (indices.len() / 3).max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w`×`h`-cell grid, two triangles per cell, emitted row by row (the marching-cubes order).
    fn grid(w: u32, h: u32) -> Vec<u32> {
        let mut idx = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let v = |dx: u32, dy: u32| (y + dy) * (w + 1) + x + dx;
                idx.extend([v(0, 0), v(1, 0), v(1, 1), v(0, 0), v(1, 1), v(0, 1)]);
            }
        }
        idx
    }

    fn sorted_triangles(idx: &[u32]) -> Vec<[u32; 3]> {
        let mut t: Vec<[u32; 3]> = idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        t.sort_unstable();
        t
    }

    #[test]
    fn reordering_keeps_every_triangle_and_its_winding() {
        let before = grid(40, 30);
        let mut after = before.clone();
        reorder_triangles(&mut after, 41 * 31);
        assert_eq!(sorted_triangles(&before), sorted_triangles(&after));
    }

    #[test]
    fn reordering_cuts_vertex_shader_runs_on_long_rows() {
        let before = grid(64, 64);
        let mut after = before.clone();
        reorder_triangles(&mut after, 65 * 65);
        let (a, b) = (acmr(&before, 16), acmr(&after, 16));
        assert!(a > 0.95, "row order should miss the cache on every new row: {a}");
        assert!(b < 0.8, "Tipsify order: {b} vertex runs per triangle (row order {a})");
    }

    #[test]
    fn vertex_renumbering_preserves_the_geometry() {
        let mut idx = grid(5, 4);
        reorder_triangles(&mut idx, 30);
        // Positions as vertex payload; one unused vertex at the end must survive too.
        let mut verts: Vec<[u32; 2]> = (0..31).map(|i| [i % 6, i / 6]).collect();
        verts[30] = [99, 99];
        let shapes = |v: &[[u32; 2]], idx: &[u32]| -> Vec<[[u32; 2]; 3]> {
            idx.chunks_exact(3).map(|t| [v[t[0] as usize], v[t[1] as usize], v[t[2] as usize]]).collect()
        };
        let before = shapes(&verts, &idx);
        let mut new_idx = idx.clone();
        reorder_vertices(&mut verts, &mut new_idx);
        assert_eq!(shapes(&verts, &new_idx), before, "each triangle has the same corners, in the same order");
        // First-use order: the indices never jump ahead of the next new vertex.
        let mut seen = 0;
        for &i in &new_idx {
            assert!(i <= seen, "vertex {i} used before {seen}");
            seen = seen.max(i + 1);
        }
        assert_eq!(verts[30], [99, 99]);
    }

    #[test]
    fn tiny_and_disconnected_meshes_are_handled() {
        let mut one = vec![0, 1, 2];
        reorder_triangles(&mut one, 3);
        assert_eq!(one, vec![0, 1, 2]);
        // Two separate triangles and an isolated vertex (index 3 unused).
        let mut two = vec![4, 5, 6, 0, 1, 2];
        reorder_triangles(&mut two, 7);
        assert_eq!(sorted_triangles(&two), sorted_triangles(&[4, 5, 6, 0, 1, 2]));
    }
}
