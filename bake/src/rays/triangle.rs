//! The watertight ray/triangle test of Woop, Benthin and Wald (JCGT 2013).
//!
//! The ray is mapped to the +z axis through the origin by an axis permutation and a shear; each
//! vertex is transformed the same way whichever triangle it belongs to, so the 2D edge functions
//! of neighbouring triangles agree exactly and a ray can never slip between them.

use super::{Hit, Ray};
use glam::{Vec3A, Vec4};

/// A triangle with its index in the input mesh: the one-at-a-time form of the test, which the
/// block test reproduces lane by lane (and the tests use as their reference).
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tri {
    pub(crate) v: [[f32; 3]; 3],
    pub(crate) id: u32,
}

/// Triangles tested together: the width of a [`TriBlock`].
pub(crate) const BLOCK: usize = 4;

/// Four triangles of a leaf as indices of their corners in the tree's vertex array, one lane per
/// triangle: 64 bytes, one cache line, where the corners themselves would take 160. Triangles of
/// a terrain share their corners about six times over, so indexing a shared array stores about
/// 2.5 times less than copying corners into blocks (ARCHITECTURE.md, "Memory"). Lanes past a
/// leaf's triangle count repeat the first lane's corners and are never reported (see
/// [`RayPre::intersect4`]'s `lanes`).
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub(crate) struct TriBlock {
    /// `corner[c][l]`: the vertex index of corner `c` of the triangle in lane `l`.
    pub(crate) corner: [[u32; BLOCK]; 3],
    /// Input triangle index per lane (`u32::MAX` in unused lanes), in the same cache line as the
    /// corner indices the test has just read rather than in a table of its own.
    pub(crate) ids: [u32; BLOCK],
}

impl TriBlock {
    /// A block of the given `(corner vertex indices, input index)` triangles (at most [`BLOCK`]).
    pub(crate) fn new(tris: &[([u32; 3], u32)]) -> TriBlock {
        debug_assert!((1..=BLOCK).contains(&tris.len()));
        let lane = |l: usize| &tris[l.min(tris.len() - 1)].0;
        TriBlock {
            corner: std::array::from_fn(|c| std::array::from_fn(|l| lane(l)[c])),
            ids: std::array::from_fn(|l| tris.get(l).map_or(u32::MAX, |t| t.1)),
        }
    }

    /// The block's corners read from `positions`, lane by lane, for [`RayPre::intersect4`].
    #[inline(always)]
    pub(crate) fn lanes(&self, positions: &[Vec4]) -> Lanes {
        let row = |c: usize, l: usize| positions[self.corner[c][l] as usize];
        Lanes { v: std::array::from_fn(|c| transpose([row(c, 0), row(c, 1), row(c, 2), row(c, 3)])) }
    }

    /// Starts loading the corners of the block's triangles.
    #[inline(always)]
    pub(crate) fn prefetch_corners(&self, positions: &[Vec4]) {
        for &i in self.corner.as_flattened() {
            if let Some(p) = positions.get(i as usize) {
                crate::mem::prefetch_all(std::slice::from_ref(p));
            }
        }
    }
}

/// Four points' (x, y, z, _) as the four x, the four y and the four z (exact: moves only).
#[inline(always)]
fn transpose(rows: [Vec4; 4]) -> [Vec4; 3] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128, _mm_movehl_ps, _mm_movelh_ps, _mm_unpackhi_ps, _mm_unpacklo_ps};
        let [a, b, c, d]: [__m128; 4] = rows.map(Into::into);
        // SAFETY: SSE is part of x86-64's baseline; these are register moves.
        unsafe {
            let ab_lo = _mm_unpacklo_ps(a, b); // a.x b.x a.y b.y
            let cd_lo = _mm_unpacklo_ps(c, d); // c.x d.x c.y d.y
            let ab_hi = _mm_unpackhi_ps(a, b); // a.z b.z ..
            let cd_hi = _mm_unpackhi_ps(c, d); // c.z d.z ..
            [_mm_movelh_ps(ab_lo, cd_lo).into(), _mm_movehl_ps(cd_lo, ab_lo).into(), _mm_movelh_ps(ab_hi, cd_hi).into()]
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::array::from_fn(|a| Vec4::new(rows[0][a], rows[1][a], rows[2][a], rows[3][a]))
    }
}

/// Four triangles' corners in structure-of-arrays form, `v[corner][axis]` with one lane per
/// triangle, so one ray is tested against all four with 4-lane arithmetic.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lanes {
    pub(crate) v: [[Vec4; 3]; 3],
}

/// What [`RayPre::intersect4`] found: the lanes hit within the range, and per lane the hit
/// parameter, barycentrics and side (only meaningful in `mask`'s lanes).
pub(crate) struct BlockHits {
    /// Bit `l` set: lane `l` is hit with `t` in range.
    pub(crate) mask: u32,
    /// Bit `l` set: lane `l` was struck from its front (see [`Hit::front`]).
    pub(crate) front: u32,
    pub(crate) t: Vec4,
    u: Vec4,
    v: Vec4,
}

impl BlockHits {
    /// The nearest hit among `mask`'s lanes; on equal `t` the last lane, as testing the lanes
    /// one at a time with an inclusive range would report.
    pub(crate) fn nearest(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for l in 0..BLOCK {
            if self.mask & (1 << l) != 0 && best.is_none_or(|b| self.t[l] <= self.t[b]) {
                best = Some(l);
            }
        }
        best
    }

    /// The hit in `lane` (which must be in `mask`), for the triangle with input index `id`.
    pub(crate) fn hit(&self, lane: usize, id: u32) -> Hit {
        Hit { t: self.t[lane], tri: id, u: self.u[lane], v: self.v[lane], front: self.front & (1 << lane) != 0 }
    }
}

/// Per-ray constants of the watertight test: the axis permutation and shear that map the ray to
/// the +z axis through the origin.
pub(crate) struct RayPre {
    k: [usize; 3],
    s: [f32; 3],
    org: [f32; 3],
    pub(crate) inv: Vec3A,
}

/// `a·b - c·d` per lane, evaluated as the scalar test writes it (no fused multiply-add), so
/// every lane's result is bit-identical to [`RayPre::intersect`]'s.
#[inline(always)]
fn cross2(a: Vec4, b: Vec4, c: Vec4, d: Vec4) -> Vec4 {
    a * b - c * d
}

impl RayPre {
    pub(crate) fn new(ray: &Ray) -> Self {
        let d = ray.dir;
        let a = d.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let mut kx = (kz + 1) % 3;
        let mut ky = (kx + 1) % 3;
        if d[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky); // keeps the permuted frame's handedness
        }
        let inv = Vec3A::new(safe_inv(d.x), safe_inv(d.y), safe_inv(d.z));
        RayPre { k: [kx, ky, kz], s: [d[kx] / d[kz], d[ky] / d[kz], 1.0 / d[kz]], org: ray.origin.into(), inv }
    }

    #[cfg(test)]
    pub(crate) fn intersect(&self, tri: &Tri, tmin: f32, tmax: f32) -> Option<Hit> {
        // Indices masked with 3 into 4-wide arrays: provably in bounds, so no checks in the loop.
        let [kx, ky, kz] = self.k.map(|k| k & 3);
        let [sx, sy, sz] = self.s;
        let rel = |v: &[f32; 3]| [v[0] - self.org[0], v[1] - self.org[1], v[2] - self.org[2], 0.0];
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
        // det > 0 exactly when dot(dir, (v1-v0)×(v2-v0)) < 0 (checked by the bvh tests).
        Some(Hit { t, tri: tri.id, u: v * rcp, v: w * rcp, front: det > 0.0 })
    }

    /// [`RayPre::intersect`] on the lanes of `block` set in `lanes`, four at a time: the same
    /// arithmetic in the same order, so each lane's answer is bit-identical to the scalar test's.
    #[inline]
    pub(crate) fn intersect4(&self, block: &Lanes, lanes: u32, tmin: f32, tmax: f32) -> BlockHits {
        let [kx, ky, kz] = self.k.map(|k| k.min(2));
        let [sx, sy, sz] = self.s.map(Vec4::splat);
        let org = self.org.map(Vec4::splat);
        // Corner c's coordinates along the permuted axes, relative to the ray origin.
        let rel = |c: usize, k: usize| block.v[c][k] - org[k];
        let (az, bz, cz) = (rel(0, kz), rel(1, kz), rel(2, kz));
        let ax = rel(0, kx) - sx * az;
        let ay = rel(0, ky) - sy * az;
        let bx = rel(1, kx) - sx * bz;
        let by = rel(1, ky) - sy * bz;
        let cx = rel(2, kx) - sx * cz;
        let cy = rel(2, ky) - sy * cz;
        let mut u = cross2(cx, by, cy, bx);
        let mut v = cross2(ax, cy, ay, cx);
        let mut w = cross2(bx, ay, by, ax);
        let zero = Vec4::ZERO;
        let on_edge = (u.cmpeq(zero) | v.cmpeq(zero) | w.cmpeq(zero)).bitmask() & lanes;
        if on_edge != 0 {
            // Rare: decide those lanes in double precision, as the scalar test does.
            let (mut ua, mut va, mut wa) = (u.to_array(), v.to_array(), w.to_array());
            for l in (0..BLOCK).filter(|l| on_edge & (1 << l) != 0) {
                let [ax, ay, bx, by, cx, cy] = [ax[l], ay[l], bx[l], by[l], cx[l], cy[l]].map(|x| x as f64);
                ua[l] = (cx * by - cy * bx) as f32;
                va[l] = (ax * cy - ay * cx) as f32;
                wa[l] = (bx * ay - by * ax) as f32;
            }
            (u, v, w) = (Vec4::from_array(ua), Vec4::from_array(va), Vec4::from_array(wa));
        }
        let negative = u.cmplt(zero) | v.cmplt(zero) | w.cmplt(zero);
        let positive = u.cmpgt(zero) | v.cmpgt(zero) | w.cmpgt(zero);
        let det = u + v + w;
        let t_scaled = u * (sz * az) + v * (sz * bz) + w * (sz * cz);
        let rcp = Vec4::ONE / det;
        let t = t_scaled * rcp;
        // NaN parameters (from a zero determinant) fail both range comparisons.
        let inside = !(negative & positive) & det.cmpne(zero) & t.cmpge(Vec4::splat(tmin)) & t.cmple(Vec4::splat(tmax));
        BlockHits { mask: inside.bitmask() & lanes, front: det.cmpgt(zero).bitmask(), t, u: v * rcp, v: w * rcp }
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
    use crate::rays::test_rng::{uniform_sphere, Rng};

    #[test]
    fn block_test_answers_like_the_scalar_test_lane_by_lane() {
        // Triangles of a small grid (shared edges and vertices, so many rays hit exactly on an
        // edge and take the double-precision path) and random ones, in blocks of four.
        let mut rng = Rng::new(17);
        let mut tris = Vec::new();
        for y in 0..4 {
            for x in 0..4 {
                let p = |i: i32, j: i32| [(x + i) as f32 * 0.5, (y + j) as f32 * 0.5, ((x + i) * (y + j) % 3) as f32 * 0.1];
                tris.push([p(0, 0), p(1, 0), p(1, 1)]);
                tris.push([p(0, 0), p(1, 1), p(0, 1)]);
            }
        }
        for _ in 0..32 {
            let c = [0, 1, 2].map(|_| rng.next_f32() * 2.0);
            tris.push([0, 1, 2].map(|_| [0, 1, 2].map(|a| c[a] + rng.next_f32() - 0.5)));
        }
        let (mut hits, mut edges) = (0, 0);
        for i in 0..4000 {
            let target = if i % 2 == 0 {
                // A grid vertex or edge midpoint.
                [(rng.next_f32() * 8.0).floor() * 0.25, (rng.next_f32() * 8.0).floor() * 0.25, 0.1]
            } else {
                [0, 1, 2].map(|_| rng.next_f32() * 2.0)
            };
            let dir = uniform_sphere(rng.next_f32(), rng.next_f32());
            let ray = Ray { origin: Vec3A::from(target) - dir * 2.0, dir, tmin: 0.0, tmax: if i % 3 == 0 { 1.9 } else { 4.0 } };
            let pre = RayPre::new(&ray);
            for (b, chunk) in tris.chunks(BLOCK).enumerate() {
                let positions: Vec<Vec4> = chunk.iter().flatten().map(|p| Vec3A::from(*p).extend(0.0)).collect();
                let tris: Vec<([u32; 3], u32)> = (0..chunk.len() as u32).map(|t| ([3 * t, 3 * t + 1, 3 * t + 2], 9)).collect();
                let block = TriBlock::new(&tris).lanes(&positions);
                let lanes = if b % 5 == 0 { 0b0111 } else { 0b1111 };
                let found = pre.intersect4(&block, lanes, ray.tmin, ray.tmax);
                for (l, v) in chunk.iter().enumerate() {
                    let scalar = pre.intersect(&Tri { v: *v, id: 9 }, ray.tmin, ray.tmax);
                    let lane_used = lanes & (1 << l) != 0;
                    assert_eq!(found.mask & (1 << l) != 0, lane_used && scalar.is_some(), "ray {i} block {b} lane {l}");
                    if let (true, Some(h)) = (lane_used, scalar) {
                        assert_eq!(found.hit(l, 9), h, "ray {i} block {b} lane {l}");
                        hits += 1;
                        edges += (h.u == 0.0 || h.v == 0.0 || h.u + h.v == 1.0) as usize;
                    }
                }
            }
        }
        assert!(hits > 1000 && edges > 10, "degenerate test: {hits} hits, {edges} on edges");
    }
}
