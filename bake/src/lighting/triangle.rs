//! The watertight ray/triangle test of Woop, Benthin and Wald (JCGT 2013).
//!
//! The ray is mapped to the +z axis through the origin by an axis permutation and a shear; each
//! vertex is transformed the same way whichever triangle it belongs to, so the 2D edge functions
//! of neighbouring triangles agree exactly and a ray can never slip between them.

use super::bvh::{Hit, Ray};
use glam::Vec3A;

/// A triangle copied into leaf order, with its index in the input mesh.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tri {
    pub(crate) v: [[f32; 3]; 3],
    pub(crate) id: u32,
}

/// Per-ray constants of the watertight test: the axis permutation and shear that map the ray to
/// the +z axis through the origin.
pub(crate) struct RayPre {
    k: [usize; 3],
    s: [f32; 3],
    org: [f32; 3],
    pub(crate) inv: Vec3A,
}

impl RayPre {
    pub(crate) fn new(ray: &Ray) -> Self {
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

