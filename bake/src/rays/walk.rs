//! Walking the tree: one ray's traversal as a state machine that advances one node or leaf at a
//! time, so one thread can interleave several walks and fetch each one's next node while it
//! works on the others (see [`Bvh::intersect_stream`]).

use super::triangle::{RayPre, BLOCK};
use super::{leaf_range, Bvh, Cull, Hit, Node, Ray, HALVES, LEAF_FLAG, STACK, WIDTH};
use crate::mem::prefetch_all;
use glam::Vec4;
use std::mem::MaybeUninit;

/// `Walk::cur` once the walk has nothing left to visit: neither a leaf nor a node index (those
/// stay below 2^28).
const DONE: u32 = !LEAF_FLAG;

/// What a walk is looking for.
#[derive(Clone, Copy)]
pub(super) enum Query {
    /// The nearest hit: children are visited nearest first, and the walk goes on after a hit
    /// with the range shortened to it.
    Closest,
    /// Any hit subject to the cull: children are visited in node order (larger boxes first,
    /// see the build's `flatten`), which finds some hit sooner than nearest-first (fewer nodes
    /// visited on the default world's terrain), and the walk stops at the first one.
    Any(Cull),
}

/// One ray's walk through a [`Bvh`]: the ray's constants, the range still searched, the node or
/// leaf to visit next and the ones put aside for later (each with the distance at which the ray
/// enters its box, so an entry beyond a hit found since is dropped without fetching it).
pub(super) struct Walk {
    ray: Ray,
    pre: RayPre,
    inv4: [Vec4; 3],
    org4: [Vec4; 3],
    /// A negative direction enters each slab through its upper plane.
    neg: [bool; 3],
    /// Upper end of the range: the ray's, then the nearest hit's.
    tmax: f32,
    /// The nearest hit so far and its leaf slot (closest-hit), or any hit (any-hit).
    pub(super) best: Option<(Hit, usize)>,
    cur: u32,
    /// The current leaf's corners have been asked for (streamed walks visit a leaf in two steps:
    /// the first reads its blocks' corner indices and starts loading the corners, the second,
    /// after the other walks' steps, tests the triangles).
    corners_fetched: bool,
    sp: usize,
    /// Entries below `sp` are initialised; the rest are never read (zeroing 4.7 kB per ray would
    /// cost more than a short walk).
    stack: [MaybeUninit<(u32, f32)>; STACK],
}

/// Box tests are widened by a few ulps so rounding never culls a box the ray grazes.
const WIDEN: f32 = 1.0 + 4.0 * f32::EPSILON;

impl Walk {
    pub(super) fn new(bvh: &Bvh, ray: &Ray) -> Walk {
        // Placeholders that `restart` overwrites (the optimiser drops the dead stores).
        let mut walk = Walk {
            ray: *ray,
            pre: RayPre::new(ray),
            inv4: [Vec4::ZERO; 3],
            org4: [Vec4::ZERO; 3],
            neg: [false; 3],
            tmax: 0.0,
            best: None,
            cur: DONE,
            corners_fetched: false,
            sp: 0,
            stack: [const { MaybeUninit::uninit() }; STACK],
        };
        walk.restart(bvh, ray);
        walk
    }

    /// Starts this walk over for `ray`, keeping its stack's storage.
    pub(super) fn restart(&mut self, bvh: &Bvh, ray: &Ray) {
        let pre = RayPre::new(ray);
        let inv = pre.inv;
        self.ray = *ray;
        self.inv4 = [inv.x, inv.y, inv.z].map(Vec4::splat);
        self.org4 = [0, 1, 2].map(|a| Vec4::splat(ray.origin[a] * inv[a]));
        self.neg = [inv.x < 0.0, inv.y < 0.0, inv.z < 0.0];
        self.pre = pre;
        self.tmax = ray.tmax;
        self.best = None;
        self.cur = if bvh.tri_count == 0 { DONE } else { bvh.root };
        self.corners_fetched = false;
        self.sp = 0;
    }

    /// Whether the walk has finished.
    #[inline]
    pub(super) fn done(&self) -> bool {
        self.cur == DONE
    }

    /// Visits the current node or leaf and moves on to the next one. With `PREFETCH`, starts
    /// loading the next one as well (worth it only when other work comes before it is read).
    #[inline(always)]
    pub(super) fn step<const PREFETCH: bool>(&mut self, bvh: &Bvh, query: Query, mut closer: impl FnMut(usize)) {
        let cur = self.cur;
        if cur & LEAF_FLAG != 0 {
            let (first, count) = leaf_range(cur);
            if PREFETCH && !self.corners_fetched {
                for block in &bvh.blocks[first..first + count.div_ceil(BLOCK)] {
                    block.prefetch_corners(&bvh.positions);
                }
                self.corners_fetched = true;
                return;
            }
            self.corners_fetched = false;
            for k in 0..count.div_ceil(BLOCK) {
                let lanes = (1u32 << (count - k * BLOCK).min(BLOCK)) - 1;
                let b = first + k;
                let hits = self.pre.intersect4(&bvh.blocks[b].lanes(&bvh.positions), lanes, self.ray.tmin, self.tmax);
                let found = match query {
                    Query::Closest => hits.nearest(),
                    Query::Any(Cull::None) => (hits.mask != 0).then(|| hits.mask.trailing_zeros() as usize),
                    Query::Any(Cull::BackFaces) => {
                        let m = hits.mask & hits.front;
                        (m != 0).then(|| m.trailing_zeros() as usize)
                    }
                };
                if let Some(lane) = found {
                    let slot = b * BLOCK + lane;
                    let h = hits.hit(lane, bvh.blocks[b].ids[lane]);
                    self.tmax = h.t;
                    self.best = Some((h, slot));
                    closer(slot);
                    if let Query::Any(_) = query {
                        self.cur = DONE;
                        return;
                    }
                }
            }
        } else {
            let n = &bvh.nodes[cur as usize];
            let (mask, enters) = self.enter(n);
            if mask != 0 {
                match query {
                    Query::Closest => self.push_nearest_first(bvh, n, mask, &enters),
                    Query::Any(_) => self.push_in_order(bvh, n, mask, &enters),
                }
                if PREFETCH {
                    bvh.prefetch(self.cur);
                }
                return;
            }
        }
        self.pop();
        if PREFETCH && !self.done() {
            bvh.prefetch(self.cur);
        }
    }

    /// The children of `n` whose boxes the ray enters within its range (a bit mask) and the
    /// distances at which it enters them.
    #[inline(always)]
    fn enter(&self, n: &Node) -> (u32, [f32; WIDTH]) {
        let mut mask = 0u32;
        let mut enters = [0.0f32; WIDTH];
        for h in 0..HALVES {
            let mut enter = Vec4::splat(self.ray.tmin);
            let mut exit = Vec4::splat(self.tmax);
            for a in 0..3 {
                let (near, far) = if self.neg[a] { (n.hi[a][h], n.lo[a][h]) } else { (n.lo[a][h], n.hi[a][h]) };
                enter = enter.max(near * self.inv4[a] - self.org4[a]);
                exit = exit.min(far * self.inv4[a] - self.org4[a]);
            }
            mask |= enter.cmple(exit * WIDEN).bitmask() << (4 * h);
            enters[4 * h..4 * h + 4].copy_from_slice(&enter.to_array());
        }
        (mask, enters)
    }

    /// Goes to the nearest entered child and puts the others aside, farthest deepest; starts
    /// loading the ones put aside, which will be read after the nearest one's subtree.
    #[inline(always)]
    fn push_nearest_first(&mut self, bvh: &Bvh, n: &Node, mask: u32, enters: &[f32; WIDTH]) {
        let mut hits = [(0.0f32, 0u32); WIDTH];
        let mut count = 0;
        for (c, &enter) in enters.iter().enumerate() {
            if mask & (1 << c) != 0 {
                let mut k = count;
                while k > 0 && hits[k - 1].0 > enter {
                    hits[k] = hits[k - 1];
                    k -= 1;
                }
                hits[k] = (enter, n.child[c]);
                count += 1;
            }
        }
        for h in hits[1..count].iter().rev() {
            self.stack[self.sp].write((h.1, h.0));
            self.sp += 1;
            bvh.prefetch(h.1);
        }
        self.cur = hits[0].1;
    }

    /// Goes to the first entered child in node order and puts the others aside.
    #[inline(always)]
    fn push_in_order(&mut self, bvh: &Bvh, n: &Node, mask: u32, enters: &[f32; WIDTH]) {
        let mut rest = mask & (mask - 1);
        while rest != 0 {
            let c = rest.trailing_zeros() as usize;
            self.stack[self.sp].write((n.child[c], enters[c]));
            self.sp += 1;
            bvh.prefetch(n.child[c]);
            rest &= rest - 1;
        }
        self.cur = n.child[mask.trailing_zeros() as usize];
    }

    /// Takes the next entry put aside that the ray can still reach, or finishes.
    #[inline(always)]
    fn pop(&mut self) {
        while self.sp > 0 {
            self.sp -= 1;
            // SAFETY: every entry below the old `sp` was written by a push.
            let (node, enter) = unsafe { self.stack[self.sp].assume_init() };
            if enter <= self.tmax * WIDEN {
                self.cur = node;
                return;
            }
        }
        self.cur = DONE;
    }
}

impl Bvh {
    /// Starts loading a child's node or leaf blocks into the cache.
    #[inline(always)]
    fn prefetch(&self, child: u32) {
        if child & LEAF_FLAG != 0 {
            let (first, count) = leaf_range(child);
            prefetch_all(&self.blocks[first..first + count.div_ceil(BLOCK)]);
        } else {
            prefetch_all(std::slice::from_ref(&self.nodes[child as usize]));
        }
    }
}
