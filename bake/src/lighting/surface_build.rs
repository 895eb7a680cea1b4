//! Building the welded surface: the weld, and the filling and sorting of every vertex's neighbour
//! list, on every thread; the sums over the triangles (normals, areas, list lengths) in one walk in
//! triangle order, a scattered add per corner, which is cheaper than the per-vertex corner lists
//! a parallel sum in that order would need. The result is the bits of one walk over the whole
//! mesh (`tests` keeps that walk as the reference), whatever the thread count.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use glam::Vec3A;
use rayon::prelude::*;

/// Vertices (or grid cells) per block of the parallel steps.
pub(super) const BLOCK: usize = 1 << 14;

/// What [`super::surface::Surface`] is made of (the bake parks each array as it is made, see
/// `ParkedSurface::build`).
#[cfg(test)]
pub(super) struct Built {
    pub(super) weld: Vec<u32>,
    pub(super) pos: Vec<Vec3A>,
    pub(super) normal: Vec<Vec3A>,
    pub(super) area: Vec<f32>,
    pub(super) adj_start: Vec<u32>,
    pub(super) adj: Vec<u32>,
    pub(super) total_area: f64,
    pub(super) mean_edge: f32,
}

/// Welded positions: for every input vertex its welded index, and for every welded index the
/// last input vertex welded to it (whose position it keeps, as `+0` and `-0` weld together).
struct Weld {
    ids: Vec<u32>,
    last: Vec<u32>,
}

/// Maps every vertex to a welded index: vertices with bit-identical positions (±0 equal) share
/// one, numbered in order of their first occurrence.
fn weld(positions: &[[f32; 3]]) -> Weld {
    let n = positions.len();
    let key = |v: u32| positions[v as usize].map(|c| (c + 0.0).to_bits());
    // Sorted by position bits (±0 as +0), then index: a total order, so the unstable parallel
    // sort is deterministic, and a run of equal positions is in index order. (Keys read in place:
    // sorting copies of them took four times the memory and was no faster.)
    let mut order: Vec<u32> = (0..n as u32).into_par_iter().collect();
    order.par_sort_unstable_by_key(|&v| (key(v), v));
    // Its first vertex represents a run, its last gives the position.
    let rep: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    let last: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    order.par_chunk_by(|&a, &b| key(a) == key(b)).for_each(|run| {
        let first = run[0];
        run.iter().for_each(|&v| rep[v as usize].store(first, Relaxed));
        last[first as usize].store(run[run.len() - 1], Relaxed);
    });
    drop(order);
    let rep: Vec<u32> = rep.into_par_iter().map(AtomicU32::into_inner).collect();
    // A representative is its run's first occurrence: the welded ids count representatives.
    let starts: Vec<u32> = rep.par_iter().enumerate().map(|(v, &r)| u32::from(r as usize == v)).collect();
    let id = offsets(&starts);
    let last: Vec<u32> = last.into_par_iter().zip(starts).filter(|(_, s)| *s == 1).map(|(l, _)| l.into_inner()).collect();
    let ids = rep.par_iter().map(|&r| id[r as usize]).collect();
    Weld { ids, last }
}

/// The exclusive prefix sums of `counts`, with their total appended, in blocks on every thread.
pub(super) fn offsets(counts: &[u32]) -> Vec<u32> {
    let block_sums: Vec<u32> = counts.par_chunks(BLOCK).map(|c| c.iter().sum()).collect();
    let mut base = Vec::with_capacity(block_sums.len());
    let mut total = 0u32;
    for s in block_sums {
        base.push(total);
        total += s;
    }
    let mut out = vec![0u32; counts.len() + 1];
    out[..counts.len()].par_chunks_mut(BLOCK).zip(counts.par_chunks(BLOCK)).zip(base).for_each(|((out, counts), mut at)| {
        for (o, &c) in out.iter_mut().zip(counts) {
            *o = at;
            at += c;
        }
    });
    out[counts.len()] = total;
    out
}

/// `items` cut at the lists of every [`BLOCK`] of lists (list `i` at `start[i]..start[i + 1]`),
/// so that the blocks' lists can be worked on each on a thread of its own.
pub(super) fn list_blocks<'a>(items: &'a mut [u32], start: &[u32]) -> Vec<&'a mut [u32]> {
    let count = start.len() - 1;
    let mut blocks = Vec::with_capacity(count.div_ceil(BLOCK));
    let mut rest = items;
    for b in 0..count.div_ceil(BLOCK) {
        let len = (start[((b + 1) * BLOCK).min(count)] - start[b * BLOCK]) as usize;
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        blocks.push(head);
        rest = tail;
    }
    blocks
}

/// What one walk over the triangles adds up.
struct TriangleSums {
    /// Area-weighted, not normalised.
    normal: Vec<Vec3A>,
    area: Vec<f32>,
    /// Neighbour-list slots of each welded vertex (two per corner).
    degree: Vec<u32>,
    total_area: f64,
    edge_sum: f64,
}

/// The sums over the triangles, in triangle order: a scattered add per corner, cheaper in one walk
/// than the per-vertex corner lists a parallel sum in that order would need.
fn triangle_sums(weld: &[u32], pos: &[Vec3A], indices: &[u32]) -> TriangleSums {
    let count = pos.len();
    let mut normal = vec![Vec3A::ZERO; count];
    let mut area = vec![0.0f32; count];
    let (mut total_area, mut edge_sum) = (0.0f64, 0.0f64);
    let mut degree = vec![0u32; count];
    for t in indices.chunks_exact(3) {
        let w = [weld[t[0] as usize], weld[t[1] as usize], weld[t[2] as usize]];
        let p = w.map(|i| pos[i as usize]);
        let cross = (p[1] - p[0]).cross(p[2] - p[0]);
        let a = 0.5 * cross.length();
        total_area += a as f64;
        edge_sum += ((p[1] - p[0]).length() + (p[2] - p[1]).length() + (p[0] - p[2]).length()) as f64;
        for &i in &w {
            // |cross| = 2·area, so this is the area-weighted normal.
            normal[i as usize] += cross;
            area[i as usize] += a / 3.0;
            degree[i as usize] += 2;
        }
    }
    TriangleSums { normal, area, degree, total_area, edge_sum }
}

/// Each welded vertex's raw neighbour list at `start[v]..start[v + 1]`: at each of its corners a
/// triangle lists its two other corners. The triangles are walked on every thread, so a list's
/// order depends on the scheduling; [`neighbours`] sorts every list, which makes it canonical.
fn corner_lists(weld: &[u32], indices: &[u32], start: &[u32]) -> Vec<u32> {
    let count = start.len() - 1;
    let fill: Vec<AtomicU32> = start[..count].par_iter().map(|&s| AtomicU32::new(s)).collect();
    let adj: Vec<AtomicU32> = (0..start[count] as usize).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    indices.par_chunks_exact(3).for_each(|t| {
        let w = [weld[t[0] as usize], weld[t[1] as usize], weld[t[2] as usize]];
        for k in 0..3 {
            let slot = fill[w[k] as usize].fetch_add(2, Relaxed) as usize;
            adj[slot].store(w[(k + 1) % 3], Relaxed);
            adj[slot + 1].store(w[(k + 2) % 3], Relaxed);
        }
    });
    drop(fill);
    adj.into_iter().map(AtomicU32::into_inner).collect()
}

/// The welded surface of `positions` and `indices` (complete triangles only).
#[cfg(test)]
pub(super) fn build(positions: &[[f32; 3]], indices: &[u32]) -> Built {
    let Vertices { weld, pos, normal, area, degree, total_area, mean_edge } = vertices(positions, indices);
    let (adj_start, adj) = neighbours(&weld, degree, indices);
    Built { weld, pos, normal, area, adj_start, adj, total_area, mean_edge }
}

/// The welded surface but its neighbour lists, with what [`neighbours`] reads.
pub(super) struct Vertices {
    pub(super) weld: Vec<u32>,
    pub(super) pos: Vec<Vec3A>,
    pub(super) normal: Vec<Vec3A>,
    pub(super) area: Vec<f32>,
    /// Neighbour-list slots of each welded vertex before duplicates are removed.
    pub(super) degree: Vec<u32>,
    pub(super) total_area: f64,
    pub(super) mean_edge: f32,
}

/// The first step of [`build`]: the weld, and the sums over the triangles. What it makes can be
/// put away (parked) before the neighbour lists, the build's largest step, are made.
pub(super) fn vertices(positions: &[[f32; 3]], indices: &[u32]) -> Vertices {
    let Weld { ids: weld, last } = weld(positions);
    let pos: Vec<Vec3A> = last.par_iter().map(|&v| positions[v as usize].into()).collect();
    drop(last);
    let TriangleSums { mut normal, area, degree, total_area, edge_sum } = triangle_sums(&weld, &pos, indices);
    normal.par_iter_mut().for_each(|n| *n = n.normalize_or_zero());
    let edges = indices.len().max(1) as f64;
    Vertices { weld, pos, normal, area, degree, total_area, mean_edge: (edge_sum / edges) as f32 }
}

/// The second step of [`build`]: each welded vertex's neighbours, sorted, as list starts and
/// lists, from the weld and the list slots of [`Vertices`].
pub(super) fn neighbours(weld: &[u32], degree: Vec<u32>, indices: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let count = degree.len();
    let start = offsets(&degree);
    drop(degree);
    let mut adj = corner_lists(weld, indices, &start);
    // Each list sorted, without duplicates (an interior edge seen from both its triangles) or
    // self-loops (degenerate triangles), at the front of its block of vertices' lists.
    let lens: Vec<u32> = list_blocks(&mut adj, &start)
        .into_par_iter()
        .enumerate()
        .flat_map_iter(|(b, block)| {
            let first = b * BLOCK;
            let mut out = 0usize;
            let mut lens = Vec::with_capacity(BLOCK);
            for i in first..((b + 1) * BLOCK).min(count) {
                let range = (start[i] - start[first]) as usize..(start[i + 1] - start[first]) as usize;
                block[range.clone()].sort_unstable();
                let begin = out;
                let mut last = u32::MAX;
                for k in range {
                    let j = block[k];
                    if j != last && j as usize != i {
                        block[out] = j;
                        out += 1;
                        last = j;
                    }
                }
                lens.push((out - begin) as u32);
            }
            lens
        })
        .collect();
    let adj_start = offsets(&lens);
    drop(lens);
    // The blocks' lists moved together, in order.
    for b in 0..count.div_ceil(BLOCK) {
        let (from, to) = (start[b * BLOCK] as usize, adj_start[b * BLOCK] as usize);
        let len = (adj_start[((b + 1) * BLOCK).min(count)] - adj_start[b * BLOCK]) as usize;
        adj.copy_within(from..from + len, to);
    }
    adj.truncate(adj_start[count] as usize);
    // About half the slots were duplicates; a mapped block shrinks in place.
    adj.shrink_to_fit();
    (adj_start, adj)
}

#[cfg(test)]
#[path = "surface_build_tests.rs"]
mod tests;
