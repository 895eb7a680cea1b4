//! Building the hierarchy: top-down binned SAH over triangle records, subtrees in parallel, then
//! collapsed into 8-wide nodes (see the parent module for the layout).

use super::triangle::{TriBlock, BLOCK};
use super::BuildError;
use super::{Aabb, Bvh, IndexedMesh, MAX_LEAF};
use crate::mem::huge_vec;
use glam::{Vec3A, Vec4};
use rayon::prelude::*;
use std::borrow::Cow;

const BINS: usize = 16;
/// Cost of testing one triangle block, relative to one node visit (measured: nearby values trace
/// as fast, twice this slower).
const BLOCK_COST: f32 = 1.0;
/// Beyond this depth nodes split at the median, which bounds the depth (and the traversal stack).
const SAH_MAX_DEPTH: u32 = 40;
/// Subtrees with more triangles than this are built on another rayon task.
const PARALLEL_THRESHOLD: usize = 16 * 1024;

#[path = "build_flatten.rs"]
mod flatten;
#[path = "build_tree.rs"]
mod tree;
use tree::{BuildNode, NodeRef};

/// A triangle during the build: its box and id in one 28-byte record, partitioned in place (the
/// centroid is recomputed where needed), about half the bytes of ids into separate box and
/// centroid arrays: the build is where a bake's memory peaks.
#[derive(Clone, Copy)]
struct Prim {
    lo: [f32; 3],
    id: u32,
    hi: [f32; 3],
}

impl Prim {
    #[inline]
    fn aabb(&self) -> Aabb {
        Aabb { lo: Vec3A::from(self.lo), hi: Vec3A::from(self.hi) }
    }
    #[inline]
    fn centroid(&self) -> Vec3A {
        (Vec3A::from(self.lo) + Vec3A::from(self.hi)) * 0.5
    }
}

impl Bvh {
    /// Builds the hierarchy over `indices.len() / 3` triangles of `positions`.
    pub fn build(positions: &[[f32; 3]], indices: &[u32]) -> Result<Bvh, BuildError> {
        Bvh::build_clustered(positions, indices, &[])
    }

    /// [`Bvh::build`] for a mesh whose triangles come in spatially compact runs (a terrain's
    /// tiles): `clusters[i]` triangles in run `i`, in order (empty: one run). Each run gets its
    /// own subtree, built in parallel, and the runs are joined by an SAH tree over their boxes.
    /// That skips binning every triangle at the top levels, where the split planes would fall on
    /// the tile edges anyway, and balances the threads, with no change in tracing speed.
    pub fn build_clustered(positions: &[[f32; 3]], indices: &[u32], clusters: &[u32]) -> Result<Bvh, BuildError> {
        Bvh::build_meshes(vec![IndexedMesh::new(positions, indices)], clusters)
    }

    /// [`Bvh::build_clustered`] over several meshes as one: triangle ids count through the first
    /// mesh's triangles, then the next's. Callers with geometry of several kinds (terrain and the
    /// trees that occlude it) need not copy it into one buffer, which would double it where the
    /// bake's memory peaks.
    pub fn build_meshes(meshes: Vec<IndexedMesh>, clusters: &[u32]) -> Result<Bvh, BuildError> {
        Bvh::build_meshes_numbered(meshes, clusters).map(|(bvh, _)| bvh)
    }

    /// [`Bvh::build_meshes`], with the source of each of the tree's vertices (see
    /// [`Bvh::slot_corner_ids`]): its index in the meshes' positions one after another. Vertices
    /// no triangle uses are left out of the tree's numbering. A mesh that owns its arrays is let go
    /// of as the build stops reading it (its indices once the leaf blocks are made, its positions
    /// once the vertices are numbered): a large world's build peaks at its end.
    pub(crate) fn build_meshes_numbered(mut meshes: Vec<IndexedMesh>, clusters: &[u32]) -> Result<(Bvh, Vec<u32>), BuildError> {
        let mut first_triangle = Vec::with_capacity(meshes.len() + 1);
        first_triangle.push(0usize);
        let mut first_vertex = Vec::with_capacity(meshes.len());
        let mut index_base = 0;
        let mut vertex_base = 0usize;
        for m in &meshes {
            if !m.indices.len().is_multiple_of(3) {
                return Err(BuildError::IndexCount(index_base + m.indices.len()));
            }
            if let Some(p) = m.positions.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
                return Err(BuildError::NotFinite(p));
            }
            if let Some(i) = m.indices.iter().position(|&i| i as usize >= m.positions.len()) {
                return Err(BuildError::BadIndex { index: index_base + i, vertex: m.indices[i], vertices: m.positions.len() });
            }
            index_base += m.indices.len();
            first_triangle.push(index_base / 3);
            first_vertex.push(vertex_base);
            vertex_base += m.positions.len();
        }
        if vertex_base > u32::MAX as usize {
            return Err(BuildError::TooManyVertices(vertex_base));
        }
        let tri_count = index_base / 3;
        if tri_count >= (1 << 28) {
            return Err(BuildError::TooManyTriangles(tri_count));
        }
        let vertex = |t: usize, k: usize| -> (usize, u32) {
            let m = first_triangle.partition_point(|&f| f <= t) - 1;
            (m, meshes[m].indices[3 * (t - first_triangle[m]) + k])
        };
        let position = |t: usize, k: usize| -> [f32; 3] {
            let (m, v) = vertex(t, k);
            meshes[m].positions[v as usize]
        };
        let corner = |t: usize, k: usize| Vec3A::from(position(t, k));
        let prims_of = |triangles: std::ops::Range<usize>| {
            let mut prims: Vec<Prim> = huge_vec(triangles.len());
            prims.par_extend(triangles.into_par_iter().map(|t| {
                let mut b = Aabb::EMPTY;
                (0..3).for_each(|k| b.grow_point(corner(t, k)));
                Prim { lo: b.lo.into(), id: t as u32, hi: b.hi.into() }
            }));
            prims
        };
        let clustered: u64 = clusters.iter().map(|&c| c as u64).sum();
        if !clusters.is_empty() && clustered != tri_count as u64 {
            return Err(BuildError::Clusters { clustered, triangles: tri_count });
        }
        let mut ids = vec![0u32; tri_count];
        let (tree, root_bounds) = build_runs(&prims_of, clusters, &mut ids);
        let bounds = root_bounds.boxes;

        // Each leaf starts a new block: number the blocks in leaf order.
        let mut leaves = Vec::new();
        NodeRef::Boxed(&tree).collect_leaves(&mut leaves);
        leaves.sort_unstable_by_key(|l| l.0);
        let mut first_block = vec![0u32; tri_count + 1];
        let mut block_count = 0u32;
        for &(start, count) in &leaves {
            first_block[start as usize] = block_count;
            block_count += count.div_ceil(BLOCK as u32);
        }
        // One after the other, each freeing what it alone reads, so that the largest arrays are
        // never live at once: the leaf blocks (which alone read the leaf order and the meshes'
        // indices), then the wide nodes (which read the tree), then the vertices' numbering.
        // Zeroing a type aligned to a cache line writes every page, so the blocks take their
        // memory when they are made.
        let mut blocks: Vec<TriBlock> = bytemuck::allocation::zeroed_vec(block_count as usize);
        crate::mem::advise_huge_pages(&blocks);
        let corners = |t: u32| {
            [0, 1, 2].map(|k| {
                let (m, v) = vertex(t as usize, k);
                (first_vertex[m] + v as usize) as u32
            })
        };
        // Written in place by groups of leaves, each group's blocks a slice of their own: collected
        // through rayon's lists, the blocks were held twice.
        const LEAF_GROUP: usize = 4096;
        let mut groups = Vec::with_capacity(leaves.len().div_ceil(LEAF_GROUP));
        let mut rest: &mut [TriBlock] = &mut blocks;
        for group in leaves.chunks(LEAF_GROUP) {
            let n: usize = group.iter().map(|&(_, count)| count.div_ceil(BLOCK as u32) as usize).sum();
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(n);
            groups.push((group, mine));
            rest = tail;
        }
        groups.into_par_iter().for_each(|(group, out)| {
            let mut out = out.iter_mut();
            for &(start, count) in group {
                for chunk in ids[start as usize..(start + count) as usize].chunks(BLOCK) {
                    let mut tris = [([0u32; 3], 0u32); BLOCK];
                    chunk.iter().zip(&mut tris).for_each(|(&t, slot)| *slot = (corners(t), t));
                    *out.next().expect("a block for each run of BLOCK triangles") = TriBlock::new(&tris[..chunk.len()]);
                }
            }
        });
        drop((leaves, ids));
        meshes.iter_mut().for_each(|m| drop(std::mem::replace(&mut m.indices, Cow::Borrowed(&[]))));
        let (nodes, root) = flatten::flatten(NodeRef::Boxed(&tree), &first_block);
        drop((tree, first_block));
        // A tile's subtree is an array of a few hundred kilobytes, freed in the allocator's arenas,
        // which the arrays below are too large to reuse: give them back.
        crate::mem::return_freed_memory();
        let (lo, hi) = if tri_count == 0 { ([0.0; 3], [0.0; 3]) } else { (bounds.lo.into(), bounds.hi.into()) };
        let (positions, sources) = number_vertices_by_first_use(&mut blocks, &meshes, &first_vertex, vertex_base);
        drop(meshes);
        Ok((Bvh { nodes, blocks, positions, tri_count, root, lo, hi }, sources))
    }
}

/// Bounds of a set of primitives: their boxes and their centroids.
#[derive(Clone, Copy)]
struct Bounds {
    boxes: Aabb,
    centroids: Aabb,
}

impl Bounds {
    const EMPTY: Bounds = Bounds { boxes: Aabb::EMPTY, centroids: Aabb::EMPTY };
    fn of(prims: &[Prim]) -> Bounds {
        let mut b = Bounds::EMPTY;
        for p in prims {
            b.boxes.grow(&p.aabb());
            b.centroids.grow_point(p.centroid());
        }
        b
    }
    fn grow(&mut self, o: &Bounds) {
        self.boxes.grow(&o.boxes);
        self.centroids.grow(&o.centroids);
    }
}

/// Renumbers the vertices the blocks name in the order the blocks first use them, and returns
/// their positions and sources (index in the meshes' positions one after another) in that order: a
/// leaf's corners then lie in one or two cache lines next to
/// those of the leaves beside it in the tree, instead of wherever their tile's mesher put them.
/// Vertices no triangle uses are left out.
fn number_vertices_by_first_use(
    blocks: &mut [TriBlock],
    meshes: &[IndexedMesh],
    first_vertex: &[usize],
    vertex_count: usize,
) -> (Vec<Vec4>, Vec<u32>) {
    const UNUSED: u32 = u32::MAX;
    let mut number = vec![UNUSED; vertex_count];
    let mut order: Vec<u32> = Vec::with_capacity(vertex_count);
    for block in blocks.iter_mut() {
        for l in 0..BLOCK {
            for c in 0..3 {
                let v = block.corner[c][l] as usize;
                if number[v] == UNUSED {
                    number[v] = order.len() as u32;
                    order.push(v as u32);
                }
                block.corner[c][l] = number[v];
            }
        }
    }
    drop(number);
    let position = |v: u32| {
        let m = first_vertex.partition_point(|&f| f <= v as usize) - 1;
        Vec3A::from(meshes[m].positions[v as usize - first_vertex[m]]).extend(0.0)
    };
    let mut positions: Vec<Vec4> = huge_vec(order.len());
    positions.par_extend(order.par_iter().map(|&v| position(v)));
    (positions, order)
}

/// Builds the tree over triangles `0..ids.len()`, split into runs of `runs[i]` triangles (empty:
/// one run), and returns it with its bounds; `ids` gets the triangles in leaf order. Each run's
/// primitives are made by `prims_of` (from a range of triangles, in their order) only while the
/// run is built: the whole scene's at once took 28 bytes a triangle beside the growing tree, where
/// the order kept is 4.
fn build_runs(prims_of: &(dyn Fn(std::ops::Range<usize>) -> Vec<Prim> + Sync), runs: &[u32], ids: &mut [u32]) -> (BuildNode, Bounds) {
    let keep_order = |ids: &mut [u32], prims: &[Prim]| ids.iter_mut().zip(prims).for_each(|(i, p)| *i = p.id);
    let run_count = runs.iter().filter(|&&r| r > 0).count();
    if run_count <= 1 {
        let mut prims = prims_of(0..ids.len());
        let bounds = Bounds::of(&prims);
        let tree = build_subtree(&mut prims, 0, 0, bounds);
        keep_order(ids, &prims);
        return (tree, bounds);
    }
    // The top tree is at most `top_depth` deep (see `join_runs`); the runs' subtrees count from
    // there, so the depth bound of the whole tree still holds.
    let top_depth = 2 * (usize::BITS - (run_count - 1).leading_zeros());
    let mut slices = Vec::with_capacity(run_count);
    let (mut rest, mut offset) = (ids, 0u32);
    for &r in runs.iter().filter(|&&r| r > 0) {
        let (run, tail) = rest.split_at_mut(r as usize);
        slices.push((run, offset));
        rest = tail;
        offset += r;
    }
    let subtrees: Vec<(BuildNode, Bounds, u32)> = slices
        .into_par_iter()
        .map(|(run, offset)| {
            let mut prims = prims_of(offset as usize..offset as usize + run.len());
            let bounds = Bounds::of(&prims);
            let tree = build_subtree(&mut prims, offset, top_depth, bounds);
            keep_order(run, &prims);
            (tree, bounds, run.len() as u32)
        })
        .collect();
    join_runs(subtrees, 0, top_depth)
}

/// Joins subtrees into one by top-down SAH over their boxes (an exact sweep: there are few),
/// ties broken by input order. From depth `max_depth / 2` on, each split halves the items
/// instead, so the top tree is never deeper than `max_depth`, whatever the runs' layout.
fn join_runs(items: Vec<(BuildNode, Bounds, u32)>, depth: u32, max_depth: u32) -> (BuildNode, Bounds) {
    let mut all = Bounds::EMPTY;
    items.iter().for_each(|i| all.grow(&i.1));
    let n = items.len();
    if n == 1 {
        let (node, bounds, _) = items.into_iter().next().expect("one item");
        return (node, bounds);
    }
    // Per axis, the items in order of their box centres; the best split over all axes.
    let mut best: Option<(f32, Vec<usize>, usize)> = None;
    for axis in 0..3 {
        let mut order: Vec<usize> = (0..n).collect();
        let key = |i: usize| (items[i].1.boxes.lo[axis] + items[i].1.boxes.hi[axis], i);
        order.sort_by(|&a, &b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
        let mut right_cost = vec![0.0f32; n];
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0u64);
        for k in (1..n).rev() {
            acc.grow(&items[order[k]].1.boxes);
            cnt += items[order[k]].2 as u64;
            right_cost[k] = acc.half_area() * cnt as f32;
        }
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0u64);
        let mut axis_best: Option<(f32, usize)> = None;
        for k in 1..n {
            acc.grow(&items[order[k - 1]].1.boxes);
            cnt += items[order[k - 1]].2 as u64;
            let cost = if depth < max_depth / 2 {
                acc.half_area() * cnt as f32 + right_cost[k]
            } else {
                // Halving: the split nearest the middle.
                (k as f32 - n as f32 / 2.0).abs()
            };
            if axis_best.is_none_or(|(c, _)| cost < c) {
                axis_best = Some((cost, k));
            }
        }
        if let Some((cost, k)) = axis_best {
            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                best = Some((cost, order, k));
            }
        }
    }
    let (_, order, k) = best.expect("two or more items have a split");
    let mut slots: Vec<Option<(BuildNode, Bounds, u32)>> = items.into_iter().map(Some).collect();
    let mut take = |range: &[usize]| range.iter().map(|&i| slots[i].take().expect("each item once")).collect::<Vec<_>>();
    let (left, right) = (take(&order[..k]), take(&order[k..]));
    let ((l, lb), (r, rb)) = (join_runs(left, depth + 1, max_depth), join_runs(right, depth + 1, max_depth));
    (BuildNode::Inner { boxes: [lb.boxes, rb.boxes], kids: Box::new([l, r]) }, all)
}

/// [`build_node`], storing a subtree built on one thread compactly as soon as it is made.
fn build_subtree(prims: &mut [Prim], offset: u32, depth: u32, bounds: Bounds) -> BuildNode {
    let serial = prims.len() <= PARALLEL_THRESHOLD;
    let node = build_node(prims, offset, depth, bounds);
    if serial {
        node.compact()
    } else {
        node
    }
}

/// Builds the subtree over `prims` (whose bounds are `bounds`), placed at `offset` in leaf order.
fn build_node(prims: &mut [Prim], offset: u32, depth: u32, bounds: Bounds) -> BuildNode {
    let n = prims.len();
    if n <= 1 {
        return BuildNode::Leaf { start: offset, count: n as u32 };
    }
    let split = if depth < SAH_MAX_DEPTH { sah_split(prims, &bounds) } else { None };
    let (mid, kid_bounds) = match split {
        Some(Split::Leaf) => return BuildNode::Leaf { start: offset, count: n as u32 },
        Some(Split::Plane { axis, bin, scale, lo, boxes }) => {
            let (mid, centroids) = partition(prims, |c| bin_index(c[axis], lo, scale) < bin);
            (mid, [0, 1].map(|k| Bounds { boxes: boxes[k], centroids: centroids[k] }))
        }
        None if n <= MAX_LEAF => return BuildNode::Leaf { start: offset, count: n as u32 },
        None => {
            // Median split along the widest centroid axis; ties broken by id for determinism.
            let ext = bounds.centroids.hi - bounds.centroids.lo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let key = |p: &Prim| (p.centroid()[axis], p.id);
            prims.select_nth_unstable_by(n / 2, |a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
            let (l, r) = prims.split_at(n / 2);
            (n / 2, [Bounds::of(l), Bounds::of(r)])
        }
    };
    let (left, right) = prims.split_at_mut(mid);
    let roff = offset + mid as u32;
    let [lb, rb] = kid_bounds;
    let (l, r) = if n > PARALLEL_THRESHOLD {
        rayon::join(|| build_subtree(left, offset, depth + 1, lb), || build_subtree(right, roff, depth + 1, rb))
    } else {
        (build_node(left, offset, depth + 1, lb), build_node(right, roff, depth + 1, rb))
    };
    BuildNode::Inner { boxes: [lb.boxes, rb.boxes], kids: Box::new([l, r]) }
}

enum Split {
    Leaf,
    /// Centroids in bins below `bin` go left; `boxes` are the two sides' boxes.
    Plane {
        axis: usize,
        bin: usize,
        scale: f32,
        lo: f32,
        boxes: [Aabb; 2],
    },
}

/// Blocks a leaf of `n` triangles fills: the SAH's leaf cost (a block costs the same however
/// many of its lanes are used).
#[inline]
fn blocks(n: usize) -> f32 {
    n.div_ceil(BLOCK) as f32
}

#[inline]
fn bin_index(c: f32, lo: f32, scale: f32) -> usize {
    (((c - lo) * scale) as usize).min(BINS - 1)
}

/// The primitives whose centroids fall in one bin: their boxes and count. (The children's
/// centroid bounds are gathered by the partition instead, which visits each primitive once
/// rather than once per axis.)
#[derive(Clone, Copy)]
struct Bin {
    boxes: Aabb,
    count: usize,
}

type Bins = [[Bin; BINS]; 3];

/// Bins `prims` on all three axes. Big sets are binned in parallel chunks; merging takes minima,
/// maxima and integer sums, which do not depend on the merge order.
fn bin_all(prims: &[Prim], lo: Vec3A, scale: Vec3A) -> Bins {
    let empty = [[Bin { boxes: Aabb::EMPTY, count: 0 }; BINS]; 3];
    let bin_chunk = |chunk: &[Prim]| {
        let mut bins = empty;
        let last = Vec3A::splat((BINS - 1) as f32);
        for p in chunk {
            let c = p.centroid();
            let b = &p.aabb();
            // `bin_index` on all three axes at once: the offsets are never negative, so clamping
            // before truncation gives the same bins.
            let index = ((c - lo) * scale).min(last).as_uvec3();
            for a in 0..3 {
                let bin = &mut bins[a][index[a] as usize];
                bin.boxes.grow(b);
                bin.count += 1;
            }
        }
        bins
    };
    if prims.len() < 4 * PARALLEL_THRESHOLD {
        return bin_chunk(prims);
    }
    prims.par_chunks(PARALLEL_THRESHOLD).map(bin_chunk).reduce(
        || empty,
        |mut x, y| {
            for a in 0..3 {
                for b in 0..BINS {
                    x[a][b].boxes.grow(&y[a][b].boxes);
                    x[a][b].count += y[a][b].count;
                }
            }
            x
        },
    )
}

/// The best SAH plane among `BINS - 1` per axis, `Leaf` when a leaf is cheaper, or `None` when
/// the centroids cannot be separated by binning.
fn sah_split(prims: &[Prim], bounds: &Bounds) -> Option<Split> {
    let n = prims.len();
    let cb = &bounds.centroids;
    let ext = cb.hi - cb.lo;
    let flat = |a: usize| ext[a] <= f32::EPSILON * cb.lo[a].abs().max(cb.hi[a].abs()).max(1.0);
    if (0..3).all(flat) {
        return None;
    }
    let scale = Vec3A::from([0, 1, 2].map(|a| if flat(a) { 0.0 } else { BINS as f32 / ext[a] }));
    let bins = bin_all(prims, cb.lo, scale);
    let mut best: Option<(f32, usize, usize)> = None;
    for axis in (0..3).filter(|&a| !flat(a)) {
        let bins = &bins[axis];
        // Sweep from the right for suffix areas, then from the left for the costs.
        let mut right_area = [0.0f32; BINS];
        let mut right_count = [0usize; BINS];
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0);
        for b in (1..BINS).rev() {
            acc.grow(&bins[b].boxes);
            cnt += bins[b].count;
            right_area[b] = acc.half_area();
            right_count[b] = cnt;
        }
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0);
        for b in 1..BINS {
            acc.grow(&bins[b - 1].boxes);
            cnt += bins[b - 1].count;
            if cnt == 0 || right_count[b] == 0 {
                continue;
            }
            let cost = acc.half_area() * blocks(cnt) + right_area[b] * blocks(right_count[b]);
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, axis, b));
            }
        }
    }
    let (cost, axis, bin) = best?;
    // Costs in units of one node visit: a split adds a visit, a leaf costs its blocks' tests.
    let split_cost = 1.0 + BLOCK_COST * cost / bounds.boxes.half_area().max(f32::MIN_POSITIVE);
    if n <= MAX_LEAF && split_cost >= BLOCK_COST * blocks(n) {
        return Some(Split::Leaf);
    }
    // The children's boxes are exactly the unions of their bins.
    let mut boxes = [Aabb::EMPTY; 2];
    for (b, item) in bins[axis].iter().enumerate() {
        boxes[(b >= bin) as usize].grow(&item.boxes);
    }
    Some(Split::Plane { axis, bin, scale: scale[axis], lo: cb.lo[axis], boxes })
}

/// In-place partition: moves the primitives whose centroid satisfies `pred` first, and returns
/// their count and the centroid bounds of both sides. Deterministic (a fixed sequence of swaps).
fn partition(prims: &mut [Prim], pred: impl Fn(Vec3A) -> bool) -> (usize, [Aabb; 2]) {
    let mut first = 0;
    let mut centroids = [Aabb::EMPTY; 2];
    for i in 0..prims.len() {
        let c = prims[i].centroid();
        if pred(c) {
            centroids[0].grow_point(c);
            prims.swap(first, i);
            first += 1;
        } else {
            centroids[1].grow_point(c);
        }
    }
    (first, centroids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(node: NodeRef) -> u32 {
        node.inner().map_or(0, |[(l, _), (r, _)]| 1 + depth(l).max(depth(r)))
    }

    #[test]
    fn many_runs_in_one_place_keep_the_top_tree_shallow() {
        // 600 one-triangle runs whose boxes nest, each 5 % larger than the last: the SAH over the
        // runs alone builds a lopsided tree (25 deep here), and nothing bounds how lopsided.
        let prims: Vec<Prim> = (0..600u32)
            .map(|k| {
                let r = 1.05f32.powi(k as i32);
                Prim { lo: [-r, -r, -r], id: k, hi: [r, r, r] }
            })
            .collect();
        let (tree, _) = build_runs(&|r| prims[r].to_vec(), &[1; 600], &mut [0; 600]);
        assert!(depth(NodeRef::Boxed(&tree)) <= 20, "top tree {} deep over 600 runs", depth(NodeRef::Boxed(&tree)));
    }
}
