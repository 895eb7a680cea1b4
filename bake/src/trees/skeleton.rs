//! The skeleton pass: every random decision of a tree is made here, before any meshing (ez-tree
//! v2's rule), so every LOD of the mesh shares one silhouette.
//!
//! Each decision kind draws from its own keyed stream (`trees.trunk`, `trees.branch` per branch,
//! `trees.leaf` per cylinder, `trees.root` per root), so adding a leaf never moves a branch.

use glam::Vec3;

use super::species::{Form, SpeciesParams};
use crate::rng::Rng;

/// One tapered cylinder of a branch, in generator units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    /// Centre of the base.
    pub p0: Vec3,
    /// Centre of the top.
    pub p1: Vec3,
    /// Radius at `p0`.
    pub r0: f32,
    /// Radius at `p1`.
    pub r1: f32,
}

/// A chain of cylinders: the trunk, a branch or a root.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    /// 0 = trunk (and roots), 1..4 = branch order.
    pub level: u8,
    /// The branch it grows from (`None` for the trunk and roots).
    pub parent: Option<u32>,
    /// The cylinders from base to tip, each starting where the previous ended.
    pub cylinders: Vec<Cylinder>,
}

/// A leaf (or needle card): a rectangle with its stem at the attachment point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leaf {
    /// Centre of the quad.
    pub centre: Vec3,
    /// Unit facing of the quad's front.
    pub normal: Vec3,
    /// Unit direction from stem to tip, perpendicular to `normal`.
    pub axis: Vec3,
    /// Stem-to-tip length.
    pub length: f32,
    /// Width across.
    pub width: f32,
    /// Index of the branch it hangs on.
    pub branch: u32,
}

/// A grown tree before meshing.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// Trunk first, then branches in growth order (the mesher sorts by level).
    pub branches: Vec<Branch>,
    /// Leaves in placement order (the mesher orders them for LODs).
    pub leaves: Vec<Leaf>,
}

/// Rotates `v` about the unit `axis` by `angle` radians (Rodrigues; libm for bit-stable results).
pub(crate) fn rotate(v: Vec3, axis: Vec3, angle: f32) -> Vec3 {
    let (s, c) = (libm::sinf(angle), libm::cosf(angle));
    v * c + axis.cross(v) * s + axis * axis.dot(v) * (1.0 - c)
}

/// A unit vector perpendicular to unit `v`.
pub(crate) fn perpendicular(v: Vec3) -> Vec3 {
    let other = if v.x.abs() < 0.6 { Vec3::X } else { Vec3::Y };
    v.cross(other).normalize()
}

fn uniform(rng: &mut Rng, range: [f32; 2]) -> f32 {
    rng.range(f64::from(range[0]), f64::from(range[1])) as f32
}

fn count(rng: &mut Rng, range: [u32; 2]) -> u32 {
    if range[1] <= range[0] {
        return range[0];
    }
    range[0] + (rng.next_u64() % u64::from(range[1] - range[0] + 1)) as u32
}

/// Tilts `dir` by a random angle up to `max_deg` in a random plane.
fn wander(rng: &mut Rng, dir: Vec3, max_deg: f32) -> Vec3 {
    let az = uniform(rng, [0.0, std::f32::consts::TAU]);
    let axis = rotate(perpendicular(dir), dir, az);
    rotate(dir, axis, uniform(rng, [0.0, max_deg.to_radians()])).normalize()
}

/// The point and radius a fraction `t` along a chain of cylinders, with the local direction.
fn along(cylinders: &[Cylinder], t: f32) -> (Vec3, f32, Vec3) {
    let x = (t.clamp(0.0, 1.0) * cylinders.len() as f32).min(cylinders.len() as f32 - 1e-3);
    let c = &cylinders[x as usize];
    let f = x - x.floor();
    (c.p0.lerp(c.p1, f), c.r0 + (c.r1 - c.r0) * f, (c.p1 - c.p0).normalize())
}

struct Grower<'a> {
    p: &'a SpeciesParams,
    seed: u64,
    branches: Vec<Branch>,
}

impl Grower<'_> {
    /// A chain of `n` cylinders from `start` along `dir`, bending at random and towards +Z.
    fn chain(&self, rng: &mut Rng, start: Vec3, mut dir: Vec3, length: f32, radii: [f32; 2], n: u32) -> Vec<Cylinder> {
        let n = n.max(1);
        let step = length / n as f32;
        let mut p0 = start;
        (0..n)
            .map(|i| {
                if i > 0 {
                    dir = wander(rng, dir, self.p.wander_deg);
                }
                dir = (dir + Vec3::Z * self.p.upwardness).normalize();
                let p1 = p0 + dir * step;
                let r = |k: u32| radii[0] + (radii[1] - radii[0]) * k as f32 / n as f32;
                let c = Cylinder { p0, p1, r0: r(i), r1: r(i + 1) };
                p0 = p1;
                c
            })
            .collect()
    }

    /// Grows branch `level` (≥ 1) and its descendants; returns nothing (branches accumulate).
    fn branch(&mut self, parent: u32, level: u8, start: Vec3, dir: Vec3, length: f32, radius: f32) {
        let id = self.branches.len() as u64;
        let mut rng = Rng::keyed(self.seed, "trees.branch", id);
        let n = self.p.branch_cylinders[level as usize - 1];
        let tip = (radius * 0.3).max(length * 0.004);
        let cylinders = self.chain(&mut rng, start, dir, length, [radius, tip.min(radius)], n);
        self.branches.push(Branch { level, parent: Some(parent), cylinders });
        if level as usize >= 4 {
            return;
        }
        let children = count(&mut rng, self.p.branches[level as usize]);
        let child_len = self.p.branch_length[level as usize];
        if children == 0 || child_len <= 0.0 {
            return;
        }
        let start_t = 0.25;
        let az0 = uniform(&mut rng, [0.0, std::f32::consts::TAU]);
        for j in 0..children {
            let t = start_t + (1.0 - start_t) * (j as f32 + uniform(&mut rng, [0.2, 0.8])) / children as f32;
            let parent = &self.branches[id as usize].cylinders;
            let (at, r_at, local) = along(parent, t);
            // Successive children alternate around the parent (golden angle), so the crown fills evenly.
            let az = az0 + j as f32 * 2.399_963 + uniform(&mut rng, [-0.4, 0.4]);
            let axis = rotate(perpendicular(local), local, az);
            let dir = rotate(local, axis, uniform(&mut rng, self.p.deflection_deg).to_radians()).normalize();
            let len = length * child_len * uniform(&mut rng, [self.p.length_var, 1.0]) * (1.0 - 0.45 * t);
            let r = r_at * self.p.radius_ratio * uniform(&mut rng, [self.p.radius_var, 1.0]);
            self.branch(id as u32, level + 1, at, dir, len, r);
        }
    }

    fn trunk(&mut self) {
        let p = self.p;
        let mut rng = Rng::keyed(self.seed, "trees.trunk", 0);
        let base_r = p.trunk_radius;
        let straight = matches!(p.form, Form::Conifer);
        let mut cylinders = Vec::new();
        let mut dir = Vec3::Z;
        let step = 1.0 / p.trunk_cylinders.max(1) as f32;
        let mut p0 = Vec3::ZERO;
        for i in 0..p.trunk_cylinders.max(1) {
            if !straight && i > 0 {
                dir = (wander(&mut rng, dir, p.wander_deg * 0.4) + Vec3::Z * 0.3).normalize();
            }
            let r = |k: u32| base_r * (1.0 + (p.trunk_taper - 1.0) * k as f32 * step);
            let p1 = p0 + dir * step;
            cylinders.push(Cylinder { p0, p1, r0: r(i), r1: r(i + 1) });
            p0 = p1;
        }
        self.branches.push(Branch { level: 0, parent: None, cylinders });
        match p.form {
            Form::Deciduous => self.crown(&mut rng),
            Form::Conifer => self.whorls(&mut rng),
        }
        if p.roots {
            self.roots();
        }
    }

    fn crown(&mut self, rng: &mut Rng) {
        let p = self.p;
        let n = count(rng, p.branches[0]).min(8);
        let az0 = uniform(rng, [0.0, std::f32::consts::TAU]);
        for j in 0..n {
            let t = p.branch_start + (1.0 - p.branch_start) * (j as f32 + uniform(rng, [0.3, 1.0])) / n as f32;
            let (at, r_at, _) = along(&self.branches[0].cylinders, t);
            let az = az0 + j as f32 * 2.399_963 + uniform(rng, [-0.3, 0.3]);
            let out = Vec3::new(libm::cosf(az), libm::sinf(az), 0.0);
            let tilt = uniform(rng, p.first_angle_deg).to_radians();
            let dir = Vec3::Z * libm::cosf(tilt) + out * libm::sinf(tilt);
            let len = p.branch_length[0] * uniform(rng, [p.length_var, 1.0]) * (1.15 - 0.4 * t);
            let r = r_at * p.radius_ratio.max(0.45) * uniform(rng, [p.radius_var.max(0.8), 1.0]);
            self.branch(0, 1, at, dir, len, r);
        }
    }

    fn whorls(&mut self, rng: &mut Rng) {
        let p = self.p;
        for w in 0..p.whorls {
            let h = p.branch_start + (0.97 - p.branch_start) * (w as f32 + uniform(rng, [0.0, 0.4])) / p.whorls as f32;
            let (at, r_at, _) = along(&self.branches[0].cylinders, h);
            let n = count(rng, p.branches[0]).min(8);
            let az0 = uniform(rng, [0.0, std::f32::consts::TAU]);
            // A cone: branch length falls linearly with height.
            let len = p.branch_length[0] * (1.0 - h) / (1.0 - p.branch_start) * uniform(rng, [p.length_var, 1.0]) + 0.03;
            for j in 0..n {
                let az = az0 + std::f32::consts::TAU * j as f32 / n as f32 + uniform(rng, [-0.25, 0.25]);
                let out = Vec3::new(libm::cosf(az), libm::sinf(az), 0.0);
                let tilt = uniform(rng, p.first_angle_deg).to_radians();
                let dir = Vec3::Z * libm::cosf(tilt) + out * libm::sinf(tilt);
                self.branch(0, 1, at, dir, len * uniform(rng, [0.9, 1.0]), (r_at * p.radius_ratio).max(0.004));
            }
        }
    }

    fn roots(&mut self) {
        let p = self.p;
        let mut rng = Rng::keyed(self.seed, "trees.root", 0);
        let n = count(&mut rng, [10, 12]);
        for j in 0..n {
            let mut r = Rng::keyed(self.seed, "trees.root", 1 + u64::from(j));
            let az = std::f32::consts::TAU * (j as f32 + uniform(&mut r, [0.0, 0.7])) / n as f32;
            let out = Vec3::new(libm::cosf(az), libm::sinf(az), 0.0);
            let dir = (out - Vec3::Z * uniform(&mut r, [0.15, 0.35])).normalize();
            let start = Vec3::Z * p.trunk_radius * 0.8;
            let len = p.trunk_radius * uniform(&mut r, [2.0, 3.2]);
            let rad = p.trunk_radius * uniform(&mut r, [0.25, 0.35]);
            let mut c = self.chain(&mut r, start, dir, len, [rad, rad * 0.25], 3);
            // Roots follow the ground, not the light.
            for cyl in &mut c {
                cyl.p1.z = cyl.p1.z.max(-p.trunk_radius);
            }
            for k in 1..c.len() {
                c[k].p0 = c[k - 1].p1;
            }
            self.branches.push(Branch { level: 0, parent: None, cylinders: c });
        }
    }
}

/// Places leaves (needle cards for conifers) on every branch of level ≥ 2.
fn leaves(p: &SpeciesParams, seed: u64, branches: &[Branch]) -> Vec<Leaf> {
    let mut out = Vec::new();
    let mut carry = 0.0f32;
    for (bi, b) in branches.iter().enumerate() {
        if b.level < 2 {
            continue;
        }
        for (ci, c) in b.cylinders.iter().enumerate() {
            let mut rng = Rng::keyed(seed, "trees.leaf", (bi as u64) << 8 | ci as u64);
            carry += p.leaves_per_cylinder * uniform(&mut rng, [0.7, 1.3]);
            let dir = (c.p1 - c.p0).normalize();
            while carry >= 1.0 {
                carry -= 1.0;
                let t = uniform(&mut rng, [0.1, 1.0]);
                let around = rotate(perpendicular(dir), dir, uniform(&mut rng, [0.0, std::f32::consts::TAU]));
                let attach = c.p0.lerp(c.p1, t) + around * (c.r0 + (c.r1 - c.r0) * t);
                let size = p.leaf_size * uniform(&mut rng, [0.7, 1.0]);
                let (axis, normal) = match p.form {
                    Form::Conifer => {
                        // Needle cards lie along the twig, roughly horizontal, tilted at random.
                        let axis = (dir + around * 0.3).normalize();
                        let flat = (Vec3::Z - axis * axis.dot(Vec3::Z)).normalize_or(perpendicular(axis));
                        (axis, rotate(flat, axis, uniform(&mut rng, [-0.5, 0.5])))
                    }
                    Form::Deciduous => {
                        let axis = wander(&mut rng, (around * 0.8 + dir * 0.6 + Vec3::Z * 0.15).normalize(), 25.0);
                        let up = (Vec3::Z - axis * axis.dot(Vec3::Z)).normalize_or(perpendicular(axis));
                        (axis, rotate(up, axis, uniform(&mut rng, [-0.8, 0.8])))
                    }
                };
                let length = size;
                out.push(Leaf { centre: attach + axis * length * 0.5, normal, axis, length, width: length * p.leaf_aspect, branch: bi as u32 });
            }
        }
    }
    out
}

/// Grows the skeleton of one tree of species `p` from `seed`, in generator units (trunk length 1).
pub fn grow(p: &SpeciesParams, seed: u64) -> Skeleton {
    let mut g = Grower { p, seed, branches: Vec::new() };
    g.trunk();
    let leaves = leaves(p, seed, &g.branches);
    Skeleton { branches: g.branches, leaves }
}
