//! The ray engine: a bounding volume hierarchy over triangles with closest-hit and any-hit queries.
//!
//! It knows triangles and rays only, nothing of what they stand for: light transport uses it
//! today, and impostor capture, caustics and fog volumes are meant to use it the same way. It
//! depends on no other module of the baker but the memory hints (`crate::mem`), so that none of
//! those users has to depend on light transport (ARCHITECTURE.md, "Dependency rules").
//! The measurements behind the choices below are in BENCHMARKS.md ("Lighting").
//!
//! Build: top-down binned SAH (16 bins on centroids, all three axes; big nodes binned in parallel),
//! subtrees built in parallel with `rayon::join`, then collapsed into 8-wide nodes and flattened
//! depth-first, so the layout never depends on the thread count. A node holds its eight
//! children's boxes in structure-of-arrays form (four cache lines), tested as two 4-lane halves.
//! Eight-wide nodes beat four-wide ones on incoherent rays: fewer levels, so fewer dependent
//! fetches of nodes not in cache.
//! A leaf holds one or two blocks of four triangles, and a ray meets a block's four triangles in
//! one 4-lane test; the SAH counts a leaf's cost in blocks, so leaves fill their blocks; that
//! traces faster than one triangle at a time with leaves of about two. A block names its
//! triangles' corners by index (64 bytes, one cache line) in the tree's own vertex array, numbered
//! in the order the leaves first use them, so a leaf's corners lie together; a walk gathers
//! them into structure-of-arrays lanes. Corners copied into the blocks (160 bytes a block) took
//! about 2.5 times the memory, where a bake's memory peaks, and traced about a fifth faster alone
//! but only 3 % faster within the lighting stage (BENCHMARKS.md, "Memory of a whole bake").
//! Streamed walks visit a leaf in two steps: the first reads its corner indices and starts
//! loading the corners, the second tests them.
//!
//! Walks (`walk.rs`) go nearest child first for closest hits and in node order for any hit, and
//! start loading the children they put aside. On a mesh far larger than the caches a walk waits on
//! memory at nearly every node, so the streamed queries ([`Bvh::intersect_stream`],
//! [`Bvh::occluded_stream`]) interleave [`STREAM`] walks on one thread, each step fetching what
//! that walk's next step reads, so that one walk's wait for memory overlaps the others' work.
//! The lighting stage traces its flights in streams.
//!
//! Triangles are intersected with a watertight test (see `triangle.rs`): a ray through a shared
//! edge or vertex hits at least one of the triangles sharing it. Both windings hit;
//! [`Hit::front`] says which side was struck (front = the side the counter-clockwise normal
//! points to).

mod build;
mod scratch;
#[cfg(test)]
mod test_rng;
mod triangle;
mod walk;

use std::borrow::Cow;

pub use scratch::WrittenBvh;

use glam::{Vec3A, Vec4};
use triangle::{TriBlock, BLOCK};
use walk::{Query, Walk};

/// Why [`Bvh::build`] refused a mesh.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The index buffer does not hold whole triangles.
    #[error("index count {0} is not a multiple of 3")]
    IndexCount(usize),
    /// More triangles than a leaf word can address.
    #[error("{0} triangles exceed the 2^28 limit")]
    TooManyTriangles(usize),
    /// A vertex position (by index) has an infinite or NaN coordinate.
    #[error("position {0} is not finite")]
    NotFinite(usize),
    /// An index refers to a vertex past the end of the positions.
    #[error("index {index} refers to vertex {vertex} of {vertices}")]
    BadIndex {
        /// Where in the index buffer.
        index: usize,
        /// The vertex it names.
        vertex: u32,
        /// How many vertices there are.
        vertices: usize,
    },
    /// More vertices than a corner index can name.
    #[error("{0} vertices exceed the 2^32 limit")]
    TooManyVertices(usize),
    /// The cluster sizes given to [`Bvh::build_clustered`] do not add up to the triangle count.
    #[error("clusters hold {clustered} triangles of {triangles}")]
    Clusters {
        /// Triangles the clusters claim.
        clustered: u64,
        /// Triangles the mesh has.
        triangles: usize,
    },
}

/// Walks one thread interleaves in [`Bvh::intersect_stream`].
pub const STREAM: usize = 8;

/// Largest triangle count a leaf may hold (3 bits of the child word): two blocks.
const MAX_LEAF: usize = 2 * BLOCK;
/// Traversal stack entries: up to 7 pushes per 8-wide level, and each wide level spans at least one
/// binary level of the build, of which a path crosses at most 84: the tile runs' top tree (at
/// most 2·28 deep for 2^28 runs) or the SAH's bound of 40, whichever is deeper, then median
/// splits of at most 2^28 triangles.
const STACK: usize = 7 * 84 + 1;
const LEAF_FLAG: u32 = 1 << 31;

/// The child word of a leaf of `count` triangles from block `first_block` on (see [`Node::child`]).
fn leaf_word(first_block: u32, count: u32) -> u32 {
    debug_assert!((1..=MAX_LEAF as u32).contains(&count));
    LEAF_FLAG | (first_block << 3) | (count - 1)
}

/// A leaf's child word as its first block and its triangle count ([`leaf_word`] undone).
#[inline(always)]
fn leaf_range(word: u32) -> (usize, usize) {
    (((word & !LEAF_FLAG) >> 3) as usize, (word & 7) as usize + 1)
}

/// A triangle mesh as the BVH build reads it: positions and three indices per triangle,
/// borrowed, or owned so that the build lets go of them once it has read them.
#[derive(Clone, Debug)]
pub struct IndexedMesh<'a> {
    /// Vertex positions.
    pub positions: Cow<'a, [[f32; 3]]>,
    /// Three vertex indices per triangle.
    pub indices: Cow<'a, [u32]>,
}

impl<'a> IndexedMesh<'a> {
    /// A mesh of borrowed arrays.
    pub fn new(positions: &'a [[f32; 3]], indices: &'a [u32]) -> IndexedMesh<'a> {
        IndexedMesh { positions: Cow::Borrowed(positions), indices: Cow::Borrowed(indices) }
    }
}

/// A ray with a parametric range `[tmin, tmax]`; `dir` need not be normalised (t is in its units).
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    /// Where the ray starts (`t = 0`), in the mesh's units.
    pub origin: Vec3A,
    /// Direction; its length is the unit of `t`.
    pub dir: Vec3A,
    /// Nearest parameter that counts as a hit.
    pub tmin: f32,
    /// Farthest parameter that counts as a hit.
    pub tmax: f32,
}

/// What a [`Bvh`] holds, in bytes ([`Bvh::memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BvhMemory {
    /// Interior nodes.
    pub nodes: usize,
    /// Leaf blocks of four triangles.
    pub blocks: usize,
    /// The vertex positions the blocks name.
    pub positions: usize,
}

impl BvhMemory {
    /// All of it.
    pub fn total(&self) -> usize {
        self.nodes + self.blocks + self.positions
    }
}

/// The closest intersection found by [`Bvh::intersect`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Ray parameter of the hit.
    pub t: f32,
    /// Index of the triangle in the input index buffer (triangle `i` = indices `3i..3i+3`).
    pub tri: u32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// True when the ray travels against the triangle's geometric (counter-clockwise) normal.
    pub front: bool,
}

/// Which hits an occlusion query counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cull {
    /// Every triangle occludes.
    None,
    /// Only triangles seen from their front side occlude: a ray leaving a solid through its
    /// surface passes. Lets points slightly inside a closed surface see out.
    BackFaces,
}

/// An 8-wide node: the boxes of up to eight children in structure-of-arrays form, so two 4-lane
/// operations per slab plane test all of them. Unused slots hold an inverted box that no ray
/// enters.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Node {
    /// `lo[axis][h]` / `hi[axis][h]`: lane i of half h belongs to child 4h + i.
    lo: [[Vec4; HALVES]; 3],
    hi: [[Vec4; HALVES]; 3],
    /// Interior: node index. Leaf: `LEAF_FLAG | first block << 3 | (triangle count - 1)`.
    child: [u32; WIDTH],
    /// The rest of the fourth cache line, named so that a node is plain bytes (see `scratch.rs`).
    unused: [u32; 8],
}

/// Four-lane halves of a node: children per node = 4 · HALVES.
const HALVES: usize = 2;
const WIDTH: usize = 4 * HALVES;

/// A BVH over a triangle mesh. Immutable once built; queries are `&self` and thread-safe.
#[derive(Debug)]
pub struct Bvh {
    nodes: Vec<Node>,
    /// Leaf triangles, four to a block; a leaf starts a new block.
    blocks: Vec<TriBlock>,
    /// The vertex positions the blocks' corner indices name, in the order the leaves first use
    /// them (vertices no triangle uses are left out). The fourth lane is unused: whole 16-byte
    /// loads make a block's four corners four moves.
    positions: Vec<Vec4>,
    tri_count: usize,
    root: u32,
    lo: [f32; 3],
    hi: [f32; 3],
}

#[derive(Clone, Copy)]
struct Aabb {
    lo: Vec3A,
    hi: Vec3A,
}

impl Aabb {
    const EMPTY: Aabb = Aabb { lo: Vec3A::splat(f32::INFINITY), hi: Vec3A::splat(f32::NEG_INFINITY) };
    fn grow(&mut self, o: &Aabb) {
        self.lo = self.lo.min(o.lo);
        self.hi = self.hi.max(o.hi);
    }
    fn grow_point(&mut self, p: Vec3A) {
        self.lo = self.lo.min(p);
        self.hi = self.hi.max(p);
    }
    fn half_area(&self) -> f32 {
        let d = (self.hi - self.lo).max(Vec3A::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    }
}

impl Bvh {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.tri_count
    }

    /// The bytes the tree holds: its nodes, its leaf blocks and its vertex positions.
    pub fn memory(&self) -> BvhMemory {
        BvhMemory {
            nodes: std::mem::size_of_val(self.nodes.as_slice()),
            blocks: std::mem::size_of_val(self.blocks.as_slice()),
            positions: std::mem::size_of_val(self.positions.as_slice()),
        }
    }

    /// The box around every triangle (zero box when empty).
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        (self.lo, self.hi)
    }

    /// The closest hit with `t` in `[ray.tmin, ray.tmax]`, either winding.
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        self.intersect_slot(ray).map(|(h, _)| h)
    }

    /// [`Bvh::intersect`] plus the hit triangle's leaf slot, for [`Bvh::slot_vertices`] and
    /// [`Bvh::slot_corner_ids`]: the leaf is already in cache after the test, while the input
    /// mesh's index and position arrays would cost several misses per hit.
    pub(crate) fn intersect_slot(&self, ray: &Ray) -> Option<(Hit, usize)> {
        self.intersect_slot_noting(ray, |_| {})
    }

    /// [`Bvh::intersect_slot`], calling `closer(slot)` whenever a closer hit is found, so the
    /// caller can start fetching what it will look up for the final hit while the walk goes on
    /// (the first hit found is usually the final one).
    pub(crate) fn intersect_slot_noting(&self, ray: &Ray, mut closer: impl FnMut(usize)) -> Option<(Hit, usize)> {
        let mut walk = Walk::new(self, ray);
        while !walk.done() {
            walk.step::<false>(self, Query::Closest, &mut closer);
        }
        walk.best
    }

    /// The corner positions of the triangle in leaf slot `slot`, in input winding order.
    #[inline]
    pub(crate) fn slot_vertices(&self, slot: usize) -> [[f32; 3]; 3] {
        let corner = &self.blocks[slot / BLOCK].corner;
        std::array::from_fn(|c| self.positions[corner[c][slot % BLOCK] as usize].truncate().to_array())
    }

    /// The tree's own vertex indices of the corners of the triangle in leaf slot `slot`, in input
    /// winding order: indices into the vertex numbering [`Bvh::build_meshes_numbered`] returns.
    #[inline]
    pub(crate) fn slot_corner_ids(&self, slot: usize) -> [u32; 3] {
        let corner = &self.blocks[slot / BLOCK].corner;
        std::array::from_fn(|c| corner[c][slot % BLOCK])
    }

    /// Whether any triangle (subject to `cull`) is hit with `t` in `[ray.tmin, ray.tmax]`.
    pub fn occluded(&self, ray: &Ray, cull: Cull) -> bool {
        let mut walk = Walk::new(self, ray);
        while !walk.done() {
            walk.step::<false>(self, Query::Any(cull), |_| {});
        }
        walk.best.is_some()
    }

    /// [`Bvh::intersect`] for each of `rays`, into `out` (same length): the same answers, found
    /// faster on one thread by walking [`STREAM`] rays at once, each step of one ray fetching
    /// the node or leaf its next step reads while the others' steps run. A walk through a large
    /// mesh waits on memory at almost every step; interleaved walks wait together.
    ///
    /// Panics when `out` and `rays` differ in length.
    pub fn intersect_stream(&self, rays: &[Ray], out: &mut [Option<Hit>]) {
        self.stream(rays, Query::Closest, out, |walk| walk.best.map(|(h, _)| h), |_| {});
    }

    /// [`Bvh::intersect_stream`] with each hit's leaf slot, calling `closer(slot)` like
    /// [`Bvh::intersect_slot_noting`].
    pub(crate) fn intersect_slot_stream(&self, rays: &[Ray], out: &mut [Option<(Hit, usize)>], closer: impl FnMut(usize)) {
        self.stream(rays, Query::Closest, out, |walk| walk.best, closer);
    }

    /// [`Bvh::occluded`] for each of `rays`, into `out`, interleaved like [`Bvh::intersect_stream`].
    ///
    /// Panics when `out` and `rays` differ in length.
    pub fn occluded_stream(&self, rays: &[Ray], cull: Cull, out: &mut [bool]) {
        self.stream(rays, Query::Any(cull), out, |walk| walk.best.is_some(), |_| {});
    }

    /// Walks `rays` [`STREAM`] at a time, round robin one step each, writing `answer(walk)` to
    /// `out[i]` as ray `i`'s walk ends (rays end out of order) and calling `closer(slot)` like
    /// [`Bvh::intersect_slot_noting`].
    fn stream<T>(&self, rays: &[Ray], query: Query, out: &mut [T], answer: impl Fn(&Walk) -> T, mut closer: impl FnMut(usize)) {
        assert_eq!(out.len(), rays.len(), "one answer per ray");
        if rays.is_empty() {
            return;
        }
        // Every slot starts on a ray (repeating the last when there are fewer than STREAM, to
        // keep the loop simple); `ray_of[k]` is the ray slot k walks, `None` once it is idle.
        let mut walks: [Walk; STREAM] = std::array::from_fn(|k| Walk::new(self, &rays[k.min(rays.len() - 1)]));
        let mut ray_of: [Option<usize>; STREAM] = std::array::from_fn(|k| (k < rays.len()).then_some(k));
        let mut next = STREAM.min(rays.len());
        let mut busy = next;
        while busy > 0 {
            for (walk, ray) in walks.iter_mut().zip(ray_of.iter_mut()) {
                let Some(i) = *ray else { continue };
                // A walk may start finished (an empty tree).
                if !walk.done() {
                    walk.step::<true>(self, query, &mut closer);
                }
                if walk.done() {
                    out[i] = answer(walk);
                    if next < rays.len() {
                        walk.restart(self, &rays[next]);
                        *ray = Some(next);
                        next += 1;
                    } else {
                        *ray = None;
                        busy -= 1;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_rng::{uniform_sphere, Rng};
    use super::triangle::{RayPre, Tri};
    use super::*;

    fn random_soup(count: usize, seed: u64) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut rng = Rng::new(seed);
        let mut pos = Vec::new();
        for _ in 0..count {
            let c = [rng.next_f32() * 10.0, rng.next_f32() * 10.0, rng.next_f32() * 10.0];
            for _ in 0..3 {
                pos.push([0, 1, 2].map(|k| c[k] + (rng.next_f32() - 0.5) * 1.5));
            }
        }
        let idx = (0..pos.len() as u32).collect();
        (pos, idx)
    }

    fn brute(pos: &[[f32; 3]], idx: &[u32], ray: &Ray) -> Option<Hit> {
        let pre = RayPre::new(ray);
        let mut best: Option<Hit> = None;
        for t in 0..idx.len() / 3 {
            let tri = Tri { v: [0, 1, 2].map(|k| pos[idx[3 * t + k] as usize]), id: t as u32 };
            if let Some(h) = pre.intersect(&tri, ray.tmin, best.map_or(ray.tmax, |b| b.t)) {
                best = Some(h);
            }
        }
        best
    }

    #[test]
    fn bvh_matches_brute_force_on_random_rays() {
        let (pos, idx) = random_soup(2000, 5);
        let bvh = Bvh::build(&pos, &idx).unwrap();
        let mut rng = Rng::new(9);
        let mut hits = 0;
        for i in 0..1000 {
            let origin = Vec3A::new(rng.next_f32() * 14.0 - 2.0, rng.next_f32() * 14.0 - 2.0, rng.next_f32() * 14.0 - 2.0);
            let dir = uniform_sphere(rng.next_f32(), rng.next_f32()) * (0.5 + rng.next_f32());
            let tmax = if i % 3 == 0 { f32::INFINITY } else { rng.next_f32() * 8.0 };
            let ray = Ray { origin, dir, tmin: 0.0, tmax };
            let (a, b) = (bvh.intersect(&ray), brute(&pos, &idx, &ray));
            assert_eq!(a.map(|h| h.t), b.map(|h| h.t), "ray {i}");
            hits += a.is_some() as usize;
            assert_eq!(bvh.occluded(&ray, Cull::None), b.is_some(), "ray {i}");
            let front_only = {
                let mut r = ray;
                let mut any = false;
                // Brute-force front-face occlusion: walk every hit along the ray.
                while let Some(h) = brute(&pos, &idx, &r) {
                    if h.front {
                        any = true;
                        break;
                    }
                    r.tmin = h.t.next_up_approx();
                }
                any
            };
            assert_eq!(bvh.occluded(&ray, Cull::BackFaces), front_only, "ray {i}");
        }
        assert!(hits > 200 && hits < 950, "degenerate test: {hits} hits");
    }

    #[test]
    fn streamed_queries_answer_like_one_ray_at_a_time() {
        let (pos, idx) = random_soup(3000, 8);
        let bvh = Bvh::build(&pos, &idx).unwrap();
        let mut rng = Rng::new(4);
        let rays: Vec<Ray> = (0..1500)
            .map(|i| Ray {
                origin: Vec3A::new(rng.next_f32() * 14.0 - 2.0, rng.next_f32() * 14.0 - 2.0, rng.next_f32() * 14.0 - 2.0),
                dir: uniform_sphere(rng.next_f32(), rng.next_f32()),
                tmin: if i % 7 == 0 { 0.5 } else { 0.0 },
                tmax: if i % 3 == 0 { f32::INFINITY } else { rng.next_f32() * 6.0 },
            })
            .collect();
        // Fewer rays than interleaved walks, exactly as many, and many more.
        let all = rays.len();
        for n in [0, 1, STREAM - 1, STREAM, all] {
            let rays = &rays[..n];
            let mut closest = vec![None; n];
            bvh.intersect_stream(rays, &mut closest);
            let mut slots = vec![None; n];
            let mut noted = Vec::new();
            bvh.intersect_slot_stream(rays, &mut slots, |slot| noted.push(slot));
            for cull in [Cull::None, Cull::BackFaces] {
                let mut occluded = vec![true; n];
                bvh.occluded_stream(rays, cull, &mut occluded);
                for (i, ray) in rays.iter().enumerate() {
                    assert_eq!(occluded[i], bvh.occluded(ray, cull), "ray {i} of {n}, {cull:?}");
                }
            }
            for (i, ray) in rays.iter().enumerate() {
                assert_eq!(closest[i], bvh.intersect(ray), "ray {i} of {n}");
                assert_eq!(slots[i], bvh.intersect_slot(ray), "ray {i} of {n}");
                // The last slot noted for a ray is its final hit's: every final hit was noted.
                assert!(slots[i].is_none_or(|(_, slot)| noted.contains(&slot)), "ray {i} of {n}");
            }
            if n == all {
                let hits = closest.iter().filter(|h| h.is_some()).count();
                assert!(hits > n / 5 && hits < n * 19 / 20, "degenerate test: {hits} hits of {n}");
            }
        }
    }

    trait NextUp {
        fn next_up_approx(self) -> f32;
    }
    impl NextUp for f32 {
        fn next_up_approx(self) -> f32 {
            f32::from_bits(self.to_bits() + 1)
        }
    }

    #[test]
    fn front_flag_follows_the_winding_and_barycentrics_reconstruct_the_point() {
        let pos = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]; // normal +z
        let bvh = Bvh::build(&pos, &[0, 1, 2]).unwrap();
        let down = Ray { origin: Vec3A::new(0.2, 0.3, 1.0), dir: Vec3A::new(0.1, 0.0, -1.0), tmin: 0.0, tmax: 10.0 };
        let h = bvh.intersect(&down).unwrap();
        assert!(h.front);
        let p = down.origin + down.dir * h.t;
        assert!((p - Vec3A::new(h.u, h.v, 0.0)).length() < 1e-6, "{p:?} {h:?}");
        let up = Ray { origin: Vec3A::new(0.2, 0.3, -1.0), dir: Vec3A::new(0.0, 0.05, 1.0), tmin: 0.0, tmax: 10.0 };
        assert!(!bvh.intersect(&up).unwrap().front);
        assert!(bvh.occluded(&up, Cull::None) && !bvh.occluded(&up, Cull::BackFaces));
        let short = Ray { tmax: 0.5, ..down };
        assert!(bvh.intersect(&short).is_none());
    }

    #[test]
    fn rays_through_shared_edges_and_vertices_never_slip_through() {
        // A 16x16 grid of quads (two triangles each); aim at every vertex and edge midpoint.
        let n = 16;
        let mut pos = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let h = ((x * 7 + y * 3) % 5) as f32 * 0.01;
                pos.push([x as f32 * 0.37, y as f32 * 0.37, h]);
            }
        }
        let mut idx = Vec::new();
        for y in 0..n {
            for x in 0..n {
                let i = (y * (n + 1) + x) as u32;
                let j = i + n as u32 + 1;
                idx.extend_from_slice(&[i, i + 1, j + 1, i, j + 1, j]);
            }
        }
        let bvh = Bvh::build(&pos, &idx).unwrap();
        let mut rng = Rng::new(2);
        for y in 1..n {
            for x in 1..n {
                for (dx, dy) in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.5, 0.5)] {
                    let target = Vec3A::new((x as f32 + dx) * 0.37, (y as f32 + dy) * 0.37, 0.02);
                    let dir = (uniform_sphere(rng.next_f32(), rng.next_f32()) * 0.3 + Vec3A::Z).normalize();
                    let ray = Ray { origin: target + dir * 3.0, dir: -dir, tmin: 0.0, tmax: f32::INFINITY };
                    assert!(bvh.intersect(&ray).is_some(), "slipped through at {target:?}");
                }
            }
        }
    }

    #[test]
    fn clustered_build_answers_like_brute_force() {
        // Four runs of triangles, each in its own corner of space, plus an empty run.
        let mut pos = Vec::new();
        let mut runs = Vec::new();
        for (k, offset) in [[0.0, 0.0, 0.0], [12.0, 0.0, 0.0], [0.0, 12.0, 0.0], [12.0, 12.0, 3.0]].iter().enumerate() {
            let (p, _) = random_soup(300 + 50 * k, 40 + k as u64);
            pos.extend(p.iter().map(|v| [v[0] + offset[0], v[1] + offset[1], v[2] + offset[2]]));
            runs.push((300 + 50 * k) as u32);
            if k == 1 {
                runs.push(0);
            }
        }
        let idx: Vec<u32> = (0..pos.len() as u32).collect();
        let bvh = Bvh::build_clustered(&pos, &idx, &runs).unwrap();
        let mut rng = Rng::new(3);
        for i in 0..600 {
            let origin = Vec3A::new(rng.next_f32() * 26.0 - 2.0, rng.next_f32() * 26.0 - 2.0, rng.next_f32() * 16.0 - 2.0);
            let dir = uniform_sphere(rng.next_f32(), rng.next_f32());
            let ray = Ray { origin, dir, tmin: 0.0, tmax: if i % 2 == 0 { f32::INFINITY } else { 10.0 } };
            let (a, b) = (bvh.intersect(&ray), brute(&pos, &idx, &ray));
            assert_eq!(a.map(|h| (h.t, h.tri)), b.map(|h| (h.t, h.tri)), "ray {i}");
            assert_eq!(bvh.occluded(&ray, Cull::None), b.is_some(), "ray {i}");
        }
        assert!(Bvh::build_clustered(&pos, &idx, &[1, 2]).is_err(), "runs must cover every triangle");
    }

    #[test]
    fn meshes_built_together_answer_as_their_concatenation() {
        // Two meshes with their own vertex numbering; the second's triangles are numbered after
        // the first's, exactly as in the one mesh that joins them.
        let (pa, ia) = random_soup(400, 50);
        let (pb, ib) = random_soup(250, 51);
        let pb: Vec<[f32; 3]> = pb.iter().map(|v| [v[0] + 3.0, v[1], v[2] + 1.0]).collect();
        let both = Bvh::build_meshes(vec![IndexedMesh::new(&pa, &ia), IndexedMesh::new(&pb, &ib)], &[400, 250]).unwrap();
        let pos: Vec<[f32; 3]> = pa.iter().chain(&pb).copied().collect();
        let idx: Vec<u32> = ia.iter().copied().chain(ib.iter().map(|&i| i + pa.len() as u32)).collect();
        let mut rng = Rng::new(4);
        let mut hits = [0; 2];
        for i in 0..800 {
            let origin = Vec3A::new(rng.next_f32() * 16.0 - 2.0, rng.next_f32() * 14.0 - 2.0, rng.next_f32() * 14.0 - 2.0);
            let ray = Ray { origin, dir: uniform_sphere(rng.next_f32(), rng.next_f32()), tmin: 0.0, tmax: f32::INFINITY };
            let (a, b) = (both.intersect(&ray), brute(&pos, &idx, &ray));
            assert_eq!(a.map(|h| (h.t, h.tri)), b.map(|h| (h.t, h.tri)), "ray {i}");
            if let Some(h) = a {
                hits[(h.tri >= 400) as usize] += 1;
            }
        }
        assert!(hits[0] > 50 && hits[1] > 50, "both meshes are struck: {hits:?}");
        let bad = vec![IndexedMesh::new(&pa, &ia), IndexedMesh::new(&pb[..2], &ib)];
        assert!(matches!(Bvh::build_meshes(bad, &[]), Err(BuildError::BadIndex { .. })), "indices are checked per mesh");
    }

    #[test]
    fn bad_meshes_are_rejected() {
        assert!(Bvh::build(&[[0.0; 3]], &[0, 0]).is_err());
        assert!(Bvh::build(&[[0.0; 3]], &[0, 0, 1]).is_err());
        assert!(Bvh::build(&[[f32::NAN, 0.0, 0.0]], &[0, 0, 0]).is_err());
        let empty = Bvh::build(&[], &[]).unwrap();
        let ray = Ray { origin: Vec3A::ZERO, dir: Vec3A::Z, tmin: 0.0, tmax: 1.0 };
        assert!(empty.intersect(&ray).is_none() && !empty.occluded(&ray, Cull::None));
        let (mut found, mut blocked) = ([Some(Hit { t: 0.0, tri: 0, u: 0.0, v: 0.0, front: true }); 3], [true; 3]);
        empty.intersect_stream(&[ray; 3], &mut found);
        empty.occluded_stream(&[ray; 3], Cull::None, &mut blocked);
        assert_eq!((found, blocked), ([None; 3], [false; 3]));
    }
}
