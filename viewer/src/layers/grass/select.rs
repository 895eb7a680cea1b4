//! The per-blade LOD rule of the grass (the contract's "Viewer LOD rule"), shared by the CPU's
//! per-instance choice of candidates and mirrored blade by blade from `grass_select.wgsl`, so tests
//! can pin the GPU against it.
//!
//! Switch distances are geometric below the grass distance `D`: `d_k = D · 0.6^(L−k)` for
//! k = 1..L−1 (L levels), so each level covers 1/0.6 ≈ 1.67× the distance of the one before and
//! blades per pixel stay about constant. Each blade of level k ≥ 1 switches at its own
//! `T = d_k · (1 + 0.3·(2u − 1))`, the cutoff at `D · (1 + 0.1·(2u − 1))`.

use glam::{Vec3, Vec4};

use super::assets::GrassAssets;
use super::decode::{Instance, TileGrass};
use crate::renderer::culling;

/// Relative spread of the per-blade switch thresholds (±30 %).
pub const STAGGER: f32 = 0.3;
/// Relative spread of the per-blade cutoff (±10 %).
pub const CUT_STAGGER: f32 = 0.1;
/// A drawn blade morphs toward its parent over the last 15 % before the parent's switch.
pub const MORPH_BAND: f32 = 0.15;
/// Ratio of consecutive switch distances.
pub const SWITCH_RATIO: f32 = 0.6;
/// Height difference between neighbouring ground samples, in sample spacings, taken as a cliff: a
/// blade between them would hang in the air, so none is kept there (`CLIFF` in `grass_common.wgsl`).
pub const CLIFF: f32 = 4.0;
/// Default grass distance `D` (world units): the reference engine's.
pub const DEFAULT_DISTANCE: f32 = 16.8;
/// Hash salts: the keep test, the switch thresholds and the cutoff draw independent numbers.
pub const SALT_THRESHOLD: u32 = 0x68bc_21eb;
/// See [`SALT_THRESHOLD`].
pub const SALT_CUTOFF: u32 = 0x02e5_be93;
/// Key offset of flowers in the threshold hash (they switch off with level 0).
pub const FLOWER_KEY: u32 = 0x4000_0000;

/// One 32-bit finaliser step (murmur3's), as `grass_common.wgsl` has it.
fn fmix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// A stable hash of three words (identical in `grass_common.wgsl`).
pub fn hash3(a: u32, b: u32, c: u32) -> u32 {
    fmix(fmix(fmix(a ^ 0x9e37_79b9) ^ b.wrapping_mul(0x27d4_eb2f)) ^ c.wrapping_mul(0x1656_67b1))
}

/// A hash as a number in [0, 1) (24 bits, exact in f32).
pub fn unit(h: u32) -> f32 {
    (h >> 8) as f32 / 16_777_216.0
}

/// The distances of the rule, for `levels` levels.
#[derive(Clone, Debug, PartialEq)]
pub struct Lod {
    /// The grass distance `D`.
    pub distance: f32,
    /// `d_1 … d_{L−1}` (index k − 1).
    pub switches: Vec<f32>,
    /// Relative spread of the thresholds ([`STAGGER`]; 0 in tests, to show a ring).
    pub stagger: f32,
    /// Draw every blade at this level (tests), or choose by distance.
    pub force: Option<u32>,
}

impl Lod {
    /// The rule for grass distance `distance` and `levels` levels.
    pub fn new(distance: f32, levels: usize, force: Option<u32>) -> Self {
        let l = levels as i32;
        let switches = (1..l).map(|k| distance * SWITCH_RATIO.powi(l - k)).collect();
        Lod { distance, switches, stagger: STAGGER, force }
    }

    /// Levels of the chain.
    pub fn levels(&self) -> usize {
        self.switches.len() + 1
    }

    /// `d_k` (k ≥ 1).
    pub fn switch(&self, k: usize) -> f32 {
        self.switches[k - 1]
    }

    /// A level-k blade's own switch distance, `u` its hash.
    pub fn threshold(&self, k: usize, u: f32) -> f32 {
        self.switch(k) * (1.0 + self.stagger * (2.0 * u - 1.0))
    }

    /// A last-level blade's own cutoff, `u` its hash.
    pub fn cutoff(&self, u: f32) -> f32 {
        self.distance * (1.0 + CUT_STAGGER * (2.0 * u - 1.0))
    }

    /// Bit k set: some blade of an instance whose bases lie between `dmin` and `dmax` from the camera
    /// may be drawn at level k. Conservative: the compute shader decides per blade.
    pub fn candidate_levels(&self, dmin: f32, dmax: f32) -> u32 {
        if dmin >= self.distance * (1.0 + CUT_STAGGER) {
            return 0;
        }
        if let Some(k) = self.force {
            return if (k as usize) < self.levels() { 1 << k } else { 0 };
        }
        let (lo, hi) = (1.0 - self.stagger, 1.0 + self.stagger);
        let l = self.levels();
        (0..l).filter(|&k| (k == 0 || dmax >= lo * self.switch(k)) && (k + 1 == l || dmin < hi * self.switch(k + 1))).fold(0, |m, k| m | 1 << k)
    }
}

/// World xy of patch-local point `p` of an instance (the format's rule: quarter turns about the patch centre).
pub fn world_xy(ins: &Instance, p: [f32; 2], patch_size: f32) -> [f32; 2] {
    kiln_formats::sections::patch_point_to_world(ins.origin, ins.rotation as u8, p, patch_size)
}

/// The nearest and farthest distance from `eye` to an instance's bounds (every blade base of every
/// level lies in the patch square, between the ground's lowest and highest z).
pub fn instance_range(ins: &Instance, patch_size: f32, eye: Vec3) -> (f32, f32) {
    let lo = Vec3::new(ins.origin[0], ins.origin[1], ins.z_range[0]);
    let hi = Vec3::new(ins.origin[0] + patch_size, ins.origin[1] + patch_size, ins.z_range[1]);
    let near = eye.clamp(lo, hi).distance(eye);
    let far = Vec3::new(
        if eye.x * 2.0 < lo.x + hi.x { hi.x } else { lo.x },
        if eye.y * 2.0 < lo.y + hi.y { hi.y } else { lo.y },
        if eye.z * 2.0 < lo.z + hi.z { hi.z } else { lo.z },
    )
    .distance(eye);
    (near, far)
}

/// Whether an instance on a slope facing away from the camera can be skipped: the camera lies
/// below the ground plane at the patch by more than its blades (and half the patch) can reach.
pub fn back_facing(ins: &Instance, patch_size: f32, max_length: f32, eye: Vec3) -> bool {
    let c = Vec3::new(ins.origin[0] + 0.5 * patch_size, ins.origin[1] + 0.5 * patch_size, 0.5 * (ins.z_range[0] + ins.z_range[1]));
    Vec3::from(ins.normal).dot(eye - c) < -(max_length * ins.height_scale + 0.5 * (ins.z_range[1] - ins.z_range[0]) + 0.05 * patch_size)
}

/// Whether a level-0 tile's grass may hold candidates: within the largest cutoff and in the view.
pub fn tile_in_reach(lod: &Lod, tile: &TileGrass, eye: Vec3, planes: &[Vec4; 6]) -> bool {
    let (lo, hi) = (Vec3::from(tile.bounds.0), Vec3::from(tile.bounds.1));
    eye.clamp(lo, hi).distance(eye) < lod.distance * (1.0 + CUT_STAGGER) && culling::intersects(planes, lo, hi)
}

/// The levels (bit k) whose blades of `ins` the compute shader evaluates: none for an instance beyond
/// the cutoff, outside the view or on a slope facing away; else those its distances allow.
pub fn instance_mask(assets: &GrassAssets, lod: &Lod, ins: &Instance, eye: Vec3, planes: &[Vec4; 6]) -> u32 {
    let s = assets.patch_size;
    let (dmin, dmax) = instance_range(ins, s, eye);
    let mask = lod.candidate_levels(dmin, dmax);
    if mask == 0 || back_facing(ins, s, assets.max_length, eye) {
        return 0;
    }
    // Blades lean and droop up to their length beyond the patch square.
    let reach = assets.max_length * ins.height_scale;
    let lo = Vec3::new(ins.origin[0], ins.origin[1], ins.z_range[0]) - Vec3::splat(reach);
    let hi = Vec3::new(ins.origin[0] + s, ins.origin[1] + s, ins.z_range[1]) + Vec3::splat(reach);
    if culling::intersects(planes, lo, hi) {
        mask
    } else {
        0
    }
}

/// Whether a sphere touches the volume of `planes`.
pub fn sphere_visible(planes: &[Vec4; 6], c: Vec3, r: f32) -> bool {
    planes.iter().all(|p| p.truncate().dot(c) + p.w >= -r * p.truncate().length())
}

/// One blade the rule draws, as the CPU mirror reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    /// The drawn level.
    pub level: u32,
    /// Index of the blade within its patch's level.
    pub blade: u32,
    /// Distance from the camera to its base.
    pub distance: f32,
}

/// The fraction of blades kept at world `(x, y)`: the map's bilinear keep, 0 between samples across
/// a cliff (as `ground` in `grass_select.wgsl`).
pub fn keep_at(tile: &TileGrass, x: f32, y: f32) -> f32 {
    let m = &tile.map;
    let n = m.size as usize;
    let last = (n - 1) as f32;
    let u = ((x - m.origin[0]) / m.spacing).clamp(0.0, last);
    let v = ((y - m.origin[1]) / m.spacing).clamp(0.0, last);
    let (i, j) = ((u as usize).min(n - 2), (v as usize).min(n - 2));
    let h = |a: usize, b: usize| m.height_min + f32::from(m.heights[b * n + a]) * m.height_step;
    let hs = [h(i, j), h(i + 1, j), h(i, j + 1), h(i + 1, j + 1)];
    let (lo, hi) = hs.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &z| (a.min(z), b.max(z)));
    if hi - lo > CLIFF * m.spacing {
        0.0
    } else {
        m.keep_at(x, y)
    }
}

/// The world base of blade `g` (absolute index) of `ins` on `tile`'s ground.
pub fn blade_base(assets: &GrassAssets, tile: &TileGrass, ins: &Instance, g: u32) -> Vec3 {
    let b = &assets.blades[g as usize];
    let q = world_xy(ins, [b.base[0], b.base[1]], assets.patch_size);
    Vec3::new(q[0], q[1], tile.map.height_at(q[0], q[1]))
}

/// The CPU mirror of `cs_select` for one instance: calls `visit` with every blade of the levels in
/// `mask` that the rule draws from `eye` (`planes`: the per-blade frustum test).
#[allow(clippy::too_many_arguments)]
pub fn select_instance(
    assets: &GrassAssets,
    lod: &Lod,
    tile: &TileGrass,
    ins: &Instance,
    mask: u32,
    eye: Vec3,
    planes: Option<&[Vec4; 6]>,
    mut visit: impl FnMut(Pick),
) {
    let l = lod.levels();
    let ranges = &assets.ranges[ins.patch as usize];
    let dist = |g: u32| blade_base(assets, tile, ins, g).distance(eye);
    for (k, &(first, count)) in ranges.iter().enumerate().take(l) {
        if mask & (1 << k) == 0 {
            continue;
        }
        for local in 0..count {
            let g = first + local;
            let b = &assets.blades[g as usize];
            let base = blade_base(assets, tile, ins, g);
            if unit(hash3(ins.key, k as u32, local)) >= keep_at(tile, base.x, base.y) {
                continue;
            }
            let d = base.distance(eye);
            if lod.force.is_none() && k > 0 && d < lod.threshold(k, unit(hash3(ins.key ^ SALT_THRESHOLD, k as u32, local))) {
                continue;
            }
            // Walk the ancestors: none may have passed its own switch; the last one sets the cutoff.
            let (mut a, mut a_local, mut a_dist, mut drawn) = (b.parent, local, d, true);
            for j in k + 1..l {
                a_local = assets.blades[a as usize].color[3] as u32;
                a_dist = dist(a);
                if lod.force.is_none() && a_dist >= lod.threshold(j, unit(hash3(ins.key ^ SALT_THRESHOLD, j as u32, a_local))) {
                    drawn = false;
                    break;
                }
                a = assets.blades[a as usize].parent;
            }
            if !drawn || a_dist >= lod.cutoff(unit(hash3(ins.key ^ SALT_CUTOFF, (l - 1) as u32, a_local))) {
                continue;
            }
            let reach = b.base[2] * ins.height_scale + b.base[3];
            if planes.is_some_and(|p| !sphere_visible(p, base, reach)) {
                continue;
            }
            visit(Pick { level: k as u32, blade: local, distance: d });
        }
    }
}

/// The drawn level of level-0 blade `local`'s chain seen from `eye`, ignoring the keep test and the
/// cutoff (the "no ring" test follows chains): the coarsest level whose own switch it has passed.
pub fn chain_level(assets: &GrassAssets, lod: &Lod, tile: &TileGrass, ins: &Instance, local: u32, eye: Vec3) -> (u32, f32) {
    let ranges = &assets.ranges[ins.patch as usize];
    let mut g = ranges[0].0 + local;
    let mut drawn = (0, blade_base(assets, tile, ins, g).distance(eye));
    for k in 1..lod.levels() {
        g = assets.blades[g as usize].parent;
        let a_local = assets.blades[g as usize].color[3] as u32;
        let d = blade_base(assets, tile, ins, g).distance(eye);
        if d >= lod.threshold(k, unit(hash3(ins.key ^ SALT_THRESHOLD, k as u32, a_local))) {
            drawn = (k as u32, d);
        }
    }
    drawn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_distances_are_geometric_below_the_grass_distance() {
        let lod = Lod::new(50.0, 6, None);
        assert_eq!(lod.switches.len(), 5);
        assert!((lod.switch(5) - 30.0).abs() < 1e-4);
        for k in 1..5 {
            assert!((lod.switch(k) / lod.switch(k + 1) - SWITCH_RATIO).abs() < 1e-5);
        }
        assert!((lod.threshold(3, 0.0) / lod.switch(3) - 0.7).abs() < 1e-6);
        assert!((lod.cutoff(1.0) - 55.0).abs() < 1e-4);
    }

    #[test]
    fn candidate_levels_cover_every_level_a_blade_could_take() {
        let lod = Lod::new(50.0, 6, None);
        // Near: only level 0 (and 1 once the staggered d_1 may be passed).
        assert_eq!(lod.candidate_levels(0.0, 0.5), 1);
        assert_eq!(lod.candidate_levels(0.0, lod.switch(1) * 0.71), 0b11);
        // Just past d_5 (30): levels 4 and 5 can both be drawn; level 3 only while d_4·1.3 is not passed.
        assert_eq!(lod.candidate_levels(31.0, 32.0), 0b11_0000);
        assert_eq!(lod.candidate_levels(56.0, 57.0), 0);
        assert_eq!(Lod::new(50.0, 6, Some(2)).candidate_levels(40.0, 41.0), 0b100);
    }

    #[test]
    fn hashes_are_stable_and_spread() {
        assert_eq!(hash3(1, 2, 3), hash3(1, 2, 3));
        assert_ne!(hash3(1, 2, 3), hash3(1, 3, 2));
        let mean = (0..10_000).map(|i| unit(hash3(7, 1, i))).sum::<f32>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
