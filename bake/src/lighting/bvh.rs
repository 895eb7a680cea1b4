//! A bounding volume hierarchy over triangles with closest-hit and any-hit queries.
//!
//! Build: top-down binned SAH (16 bins on centroids, all three axes), subtrees built in parallel
//! with `rayon::join` and flattened depth-first afterwards, so the layout never depends on the
//! thread count. Nodes are 64-byte cache lines holding *both* children's boxes, so one fetch tests
//! two boxes; triangles are copied into leaf order so a leaf's triangles are contiguous.
//!
//! Triangles are intersected with the watertight test of Woop, Benthin and Wald (JCGT 2013): a ray
//! through a shared edge or vertex hits at least one of the triangles sharing it. Both windings
//! hit; [`Hit::front`] says which side was struck (front = the side the counter-clockwise normal
//! points to).

use super::LightingError;
use glam::Vec3A;

/// Largest triangle count a leaf may hold (3 bits of the child word).
const MAX_LEAF: usize = 8;
const BINS: usize = 16;
/// Beyond this depth nodes split at the median, which bounds the depth (and the traversal stack).
const SAH_MAX_DEPTH: u32 = 40;
const STACK: usize = 96;
const LEAF_FLAG: u32 = 1 << 31;
/// Subtrees with more triangles than this are built on another rayon task.
const PARALLEL_THRESHOLD: usize = 16 * 1024;

/// A ray with a parametric range `[tmin, tmax]`; `dir` need not be normalised (t is in its units).
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    pub origin: Vec3A,
    pub dir: Vec3A,
    pub tmin: f32,
    pub tmax: f32,
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

#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Node {
    /// `lo[axis][child]`, `hi[axis][child]`: the two children's boxes.
    lo: [[f32; 2]; 3],
    hi: [[f32; 2]; 3],
    /// Interior: node index. Leaf: `LEAF_FLAG | first << 3 | (count - 1)`.
    child: [u32; 2],
}

#[derive(Clone, Copy, Debug)]
struct Tri {
    v: [[f32; 3]; 3],
    id: u32,
}

/// A BVH over a triangle mesh. Immutable once built; queries are `&self` and thread-safe.
#[derive(Debug)]
pub struct Bvh {
    nodes: Vec<Node>,
    tris: Vec<Tri>,
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

enum BuildNode {
    Leaf { start: u32, count: u32 },
    Inner { boxes: [Aabb; 2], kids: Box<[BuildNode; 2]> },
}

struct BuildInput<'a> {
    boxes: &'a [Aabb],
    centroids: &'a [Vec3A],
}

impl Bvh {
    /// Builds the hierarchy over `indices.len() / 3` triangles of `positions`.
    pub fn build(positions: &[[f32; 3]], indices: &[u32]) -> Result<Bvh, LightingError> {
        if indices.len() % 3 != 0 {
            return Err(LightingError::Mesh(format!("index count {} is not a multiple of 3", indices.len())));
        }
        let tri_count = indices.len() / 3;
        if tri_count >= (1 << 28) {
            return Err(LightingError::Mesh(format!("{tri_count} triangles exceed the 2^28 limit")));
        }
        if let Some(p) = positions.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Err(LightingError::Mesh(format!("position {p} is not finite")));
        }
        if let Some(i) = indices.iter().position(|&i| i as usize >= positions.len()) {
            return Err(LightingError::Mesh(format!(
                "index {i} refers to vertex {} of {}",
                indices[i],
                positions.len()
            )));
        }
        let corner = |t: usize, k: usize| Vec3A::from(positions[indices[3 * t + k] as usize]);
        let boxes: Vec<Aabb> = (0..tri_count)
            .map(|t| {
                let mut b = Aabb::EMPTY;
                (0..3).for_each(|k| b.grow_point(corner(t, k)));
                b
            })
            .collect();
        let centroids: Vec<Vec3A> = boxes.iter().map(|b| (b.lo + b.hi) * 0.5).collect();
        let mut ids: Vec<u32> = (0..tri_count as u32).collect();
        let mut bounds = Aabb::EMPTY;
        boxes.iter().for_each(|b| bounds.grow(b));
        let input = BuildInput { boxes: &boxes, centroids: &centroids };
        let tree = build_node(&input, &mut ids, 0, 0);

        let mut nodes = Vec::with_capacity(tri_count.max(1));
        let root = flatten(&tree, &mut nodes);
        let tris = ids
            .iter()
            .map(|&t| Tri {
                v: [0, 1, 2].map(|k| positions[indices[3 * t as usize + k] as usize]),
                id: t,
            })
            .collect();
        let (lo, hi) = if tri_count == 0 { ([0.0; 3], [0.0; 3]) } else { (bounds.lo.into(), bounds.hi.into()) };
        Ok(Bvh { nodes, tris, root, lo, hi })
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.tris.len()
    }

    /// The box around every triangle (zero box when empty).
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        (self.lo, self.hi)
    }

    /// The closest hit with `t` in `[ray.tmin, ray.tmax]`, either winding.
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        if self.tris.is_empty() {
            return None;
        }
        let pre = RayPre::new(ray);
        let mut best: Option<Hit> = None;
        let mut tmax = ray.tmax;
        self.traverse(ray, &pre, &mut tmax, |tri, tmax| {
            if let Some(h) = pre.intersect(tri, ray.tmin, *tmax) {
                *tmax = h.t;
                best = Some(h);
            }
            false
        });
        best
    }

    /// Whether any triangle (subject to `cull`) is hit with `t` in `[ray.tmin, ray.tmax]`.
    pub fn occluded(&self, ray: &Ray, cull: Cull) -> bool {
        if self.tris.is_empty() {
            return false;
        }
        let pre = RayPre::new(ray);
        let mut tmax = ray.tmax;
        let mut found = false;
        self.traverse(ray, &pre, &mut tmax, |tri, tmax| {
            found = pre.intersect(tri, ray.tmin, *tmax).is_some_and(|h| cull == Cull::None || h.front);
            found
        });
        found
    }

    /// Walks the nodes whose boxes the ray enters within `[tmin, *tmax]`, nearer child first, and
    /// calls `leaf_fn` per triangle; `leaf_fn` may shrink `tmax` and returns true to stop.
    #[inline]
    fn traverse(&self, ray: &Ray, pre: &RayPre, tmax: &mut f32, mut leaf_fn: impl FnMut(&Tri, &mut f32) -> bool) {
        let inv = pre.inv;
        let oi = ray.origin * inv;
        // Slab planes picked by direction sign, so each axis needs no min/max.
        let near = [(inv.x < 0.0) as usize, (inv.y < 0.0) as usize, (inv.z < 0.0) as usize];
        let mut stack = [0u32; STACK];
        let mut sp = 0usize;
        let mut cur = self.root;
        loop {
            if cur & LEAF_FLAG != 0 {
                let first = ((cur & !LEAF_FLAG) >> 3) as usize;
                let count = (cur & 7) as usize + 1;
                for tri in &self.tris[first..first + count] {
                    if leaf_fn(tri, tmax) {
                        return;
                    }
                }
            } else {
                let n = &self.nodes[cur as usize];
                let mut t_near = [0.0f32; 2];
                let mut hit = [false; 2];
                for c in 0..2 {
                    let bx = [[n.lo[0][c], n.hi[0][c]], [n.lo[1][c], n.hi[1][c]], [n.lo[2][c], n.hi[2][c]]];
                    let tx0 = bx[0][near[0]] * inv.x - oi.x;
                    let tx1 = bx[0][1 - near[0]] * inv.x - oi.x;
                    let ty0 = bx[1][near[1]] * inv.y - oi.y;
                    let ty1 = bx[1][1 - near[1]] * inv.y - oi.y;
                    let tz0 = bx[2][near[2]] * inv.z - oi.z;
                    let tz1 = bx[2][1 - near[2]] * inv.z - oi.z;
                    let t0 = tx0.max(ty0).max(tz0).max(ray.tmin);
                    // Widened by a few ulps so rounding never culls a box the ray grazes.
                    let t1 = tx1.min(ty1).min(tz1).min(*tmax) * (1.0 + 4.0 * f32::EPSILON);
                    t_near[c] = t0;
                    hit[c] = t0 <= t1;
                }
                match (hit[0], hit[1]) {
                    (true, true) => {
                        let (a, b) = if t_near[0] <= t_near[1] { (0, 1) } else { (1, 0) };
                        stack[sp] = n.child[b];
                        sp += 1;
                        cur = n.child[a];
                        continue;
                    }
                    (true, false) => {
                        cur = n.child[0];
                        continue;
                    }
                    (false, true) => {
                        cur = n.child[1];
                        continue;
                    }
                    (false, false) => {}
                }
            }
            if sp == 0 {
                return;
            }
            sp -= 1;
            cur = stack[sp];
        }
    }
}

fn build_node(input: &BuildInput, ids: &mut [u32], offset: u32, depth: u32) -> BuildNode {
    let n = ids.len();
    if n <= 1 {
        return BuildNode::Leaf { start: offset, count: n as u32 };
    }
    let mut cb = Aabb::EMPTY;
    let mut nb = Aabb::EMPTY;
    for &i in ids.iter() {
        cb.grow_point(input.centroids[i as usize]);
        nb.grow(&input.boxes[i as usize]);
    }
    let split = if depth < SAH_MAX_DEPTH { sah_split(input, ids, &cb, &nb) } else { None };
    let mid = match split {
        Some(Split::Leaf) => return BuildNode::Leaf { start: offset, count: n as u32 },
        Some(Split::Plane { axis, bin, scale, lo }) => {
            let bin_of = |i: u32| bin_index(input.centroids[i as usize][axis], lo, scale);
            partition(ids, |&i| bin_of(i) < bin)
        }
        None if n <= MAX_LEAF => return BuildNode::Leaf { start: offset, count: n as u32 },
        None => {
            // Median split along the widest centroid axis; ties broken by id for determinism.
            let ext = cb.hi - cb.lo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z { 0 } else if ext.y >= ext.z { 1 } else { 2 };
            let key = |i: &u32| (input.centroids[*i as usize][axis], *i);
            ids.select_nth_unstable_by(n / 2, |a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
            n / 2
        }
    };
    let (left, right) = ids.split_at_mut(mid);
    let bounds_of = |s: &[u32]| {
        let mut b = Aabb::EMPTY;
        s.iter().for_each(|&i| b.grow(&input.boxes[i as usize]));
        b
    };
    let boxes = [bounds_of(left), bounds_of(right)];
    let roff = offset + mid as u32;
    let (l, r) = if n > PARALLEL_THRESHOLD {
        rayon::join(|| build_node(input, left, offset, depth + 1), || build_node(input, right, roff, depth + 1))
    } else {
        (build_node(input, left, offset, depth + 1), build_node(input, right, roff, depth + 1))
    };
    BuildNode::Inner { boxes, kids: Box::new([l, r]) }
}

enum Split {
    Leaf,
    Plane { axis: usize, bin: usize, scale: f32, lo: f32 },
}

#[inline]
fn bin_index(c: f32, lo: f32, scale: f32) -> usize {
    (((c - lo) * scale) as usize).min(BINS - 1)
}

/// The best SAH plane among `BINS - 1` per axis, `Leaf` when a leaf is cheaper, or `None` when
/// the centroids cannot be separated by binning.
fn sah_split(input: &BuildInput, ids: &[u32], cb: &Aabb, nb: &Aabb) -> Option<Split> {
    let n = ids.len();
    let mut best: Option<(f32, usize, usize)> = None;
    for axis in 0..3 {
        let (lo, hi) = (cb.lo[axis], cb.hi[axis]);
        if hi - lo <= f32::EPSILON * lo.abs().max(hi.abs()).max(1.0) {
            continue;
        }
        let scale = BINS as f32 / (hi - lo);
        let mut bin_box = [Aabb::EMPTY; BINS];
        let mut bin_count = [0usize; BINS];
        for &i in ids {
            let b = bin_index(input.centroids[i as usize][axis], lo, scale);
            bin_box[b].grow(&input.boxes[i as usize]);
            bin_count[b] += 1;
        }
        // Sweep from the right to get suffix areas, then from the left for the costs.
        let mut right_area = [0.0f32; BINS];
        let mut acc = Aabb::EMPTY;
        let mut cnt = 0;
        let mut right_count = [0usize; BINS];
        for b in (1..BINS).rev() {
            acc.grow(&bin_box[b]);
            cnt += bin_count[b];
            right_area[b] = acc.half_area();
            right_count[b] = cnt;
        }
        let mut acc = Aabb::EMPTY;
        let mut cnt = 0;
        for b in 1..BINS {
            acc.grow(&bin_box[b - 1]);
            cnt += bin_count[b - 1];
            if cnt == 0 || right_count[b] == 0 {
                continue;
            }
            let cost = acc.half_area() * cnt as f32 + right_area[b] * right_count[b] as f32;
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, axis, b));
            }
        }
    }
    let (cost, axis, bin) = best?;
    // Traversal cost of an interior node relative to one triangle test.
    const TRAVERSAL: f32 = 1.0;
    let split_cost = TRAVERSAL + cost / nb.half_area().max(f32::MIN_POSITIVE);
    if n <= MAX_LEAF && split_cost >= n as f32 {
        return Some(Split::Leaf);
    }
    let (lo, hi) = (cb.lo[axis], cb.hi[axis]);
    Some(Split::Plane { axis, bin, scale: BINS as f32 / (hi - lo), lo })
}

/// Stable-order-independent in-place partition: moves elements satisfying `pred` first and
/// returns their count. Deterministic (a fixed sequence of swaps).
fn partition(ids: &mut [u32], pred: impl Fn(&u32) -> bool) -> usize {
    let mut first = 0;
    for i in 0..ids.len() {
        if pred(&ids[i]) {
            ids.swap(first, i);
            first += 1;
        }
    }
    first
}

fn leaf_word(start: u32, count: u32) -> u32 {
    debug_assert!((1..=MAX_LEAF as u32).contains(&count));
    LEAF_FLAG | (start << 3) | (count - 1)
}

/// Appends `node` depth-first and returns its child word.
fn flatten(node: &BuildNode, nodes: &mut Vec<Node>) -> u32 {
    match node {
        BuildNode::Leaf { start, count } => {
            if *count == 0 {
                // Only an empty mesh yields an empty leaf; an inner node with two empty boxes
                // can never be entered.
                nodes.push(Node { lo: [[f32::INFINITY; 2]; 3], hi: [[f32::NEG_INFINITY; 2]; 3], child: [0, 0] });
                return (nodes.len() - 1) as u32;
            }
            leaf_word(*start, *count)
        }
        BuildNode::Inner { boxes, kids } => {
            let index = nodes.len();
            let mut lo = [[0.0; 2]; 3];
            let mut hi = [[0.0; 2]; 3];
            for c in 0..2 {
                for a in 0..3 {
                    lo[a][c] = boxes[c].lo[a];
                    hi[a][c] = boxes[c].hi[a];
                }
            }
            nodes.push(Node { lo, hi, child: [0, 0] });
            let l = flatten(&kids[0], nodes);
            let r = flatten(&kids[1], nodes);
            nodes[index].child = [l, r];
            index as u32
        }
    }
}

/// Per-ray constants of the watertight test: the axis permutation and shear that map the ray to
/// the +z axis through the origin.
struct RayPre {
    k: [usize; 3],
    s: [f32; 3],
    org: [f32; 3],
    inv: Vec3A,
}

impl RayPre {
    fn new(ray: &Ray) -> Self {
        let d = ray.dir;
        let a = d.abs();
        let kz = if a.x >= a.y && a.x >= a.z { 0 } else if a.y >= a.z { 1 } else { 2 };
        let mut kx = (kz + 1) % 3;
        let mut ky = (kx + 1) % 3;
        if d[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky); // keeps the permuted frame's handedness
        }
        let inv = Vec3A::new(safe_inv(d.x), safe_inv(d.y), safe_inv(d.z));
        RayPre { k: [kx, ky, kz], s: [d[kx] / d[kz], d[ky] / d[kz], 1.0 / d[kz]], org: ray.origin.into(), inv }
    }

    #[inline]
    fn intersect(&self, tri: &Tri, tmin: f32, tmax: f32) -> Option<Hit> {
        let [kx, ky, kz] = self.k;
        let [sx, sy, sz] = self.s;
        let rel = |v: &[f32; 3]| [v[0] - self.org[0], v[1] - self.org[1], v[2] - self.org[2]];
        let (a, b, c) = (rel(&tri.v[0]), rel(&tri.v[1]), rel(&tri.v[2]));
        let ax = a[kx] - sx * a[kz];
        let ay = a[ky] - sy * a[kz];
        let bx = b[kx] - sx * b[kz];
        let by = b[ky] - sy * b[kz];
        let cx = c[kx] - sx * c[kz];
        let cy = c[ky] - sy * c[kz];
        let mut u = cx * by - cy * bx;
        let mut v = ax * cy - ay * cx;
        let mut w = bx * ay - by * ax;
        if u == 0.0 || v == 0.0 || w == 0.0 {
            // On an edge in single precision: decide it in double so neighbours agree.
            let (ax, ay, bx, by, cx, cy) = (ax as f64, ay as f64, bx as f64, by as f64, cx as f64, cy as f64);
            u = (cx * by - cy * bx) as f32;
            v = (ax * cy - ay * cx) as f32;
            w = (bx * ay - by * ax) as f32;
        }
        if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
            return None;
        }
        let det = u + v + w;
        if det == 0.0 {
            return None;
        }
        let t_scaled = u * (sz * a[kz]) + v * (sz * b[kz]) + w * (sz * c[kz]);
        let rcp = 1.0 / det;
        let t = t_scaled * rcp;
        if !(t >= tmin && t <= tmax) {
            return None;
        }
        // det > 0 exactly when dot(dir, (v1-v0)×(v2-v0)) < 0 (see the module tests).
        Some(Hit { t, tri: tri.id, u: v * rcp, v: w * rcp, front: det > 0.0 })
    }
}

#[inline]
fn safe_inv(x: f32) -> f32 {
    // A zero component gives ±huge rather than ±inf so 0·inf NaNs cannot reach the slab test.
    if x.abs() < 1e-30 {
        1e30f32.copysign(x)
    } else {
        1.0 / x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lighting::rng::{uniform_sphere, Rng};

    fn random_soup(count: usize, seed: u64) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut rng = Rng::new(seed, 0, 0);
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
        let (pos, idx) = random_soup(3000, 5);
        let bvh = Bvh::build(&pos, &idx).unwrap();
        let mut rng = Rng::new(9, 0, 0);
        let mut hits = 0;
        for i in 0..1500 {
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
        assert!(hits > 300 && hits < 1400, "degenerate test: {hits} hits");
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
        let mut rng = Rng::new(2, 0, 0);
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
    fn bad_meshes_are_rejected() {
        assert!(Bvh::build(&[[0.0; 3]], &[0, 0]).is_err());
        assert!(Bvh::build(&[[0.0; 3]], &[0, 0, 1]).is_err());
        assert!(Bvh::build(&[[f32::NAN, 0.0, 0.0]], &[0, 0, 0]).is_err());
        let empty = Bvh::build(&[], &[]).unwrap();
        let ray = Ray { origin: Vec3A::ZERO, dir: Vec3A::Z, tmin: 0.0, tmax: 1.0 };
        assert!(empty.intersect(&ray).is_none() && !empty.occluded(&ray, Cull::None));
    }
}
