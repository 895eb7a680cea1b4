//! Skeleton → [`TreeMesh`]: tapered cylinder rings per branch, leaf quads, and the LOD order
//! (bark by branch level, leaves outer-first) that makes every LOD a prefix of the index buffers.

use glam::Vec3;

use super::skeleton::{perpendicular, Skeleton};
use super::species::SpeciesParams;
use super::{Lod, TreeMesh};
use crate::rng::Rng;

/// Branch levels the reduced-branch LOD keeps (LOD1) and the coarsest LOD keeps (LOD2).
const LOD_BARK_LEVELS: [u8; 2] = [2, 1];

/// Leaves the coarse LODs keep, as divisors of the full count (50 %, 25 %).
const LOD_LEAF_DIVISORS: [usize; 2] = [2, 4];

/// One ring of bark vertices (`sides + 1` of them, the last repeating the first for the UV seam).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ring {
    /// Its first vertex.
    pub first: u32,
    /// Its vertex count.
    pub count: u32,
    /// The branch level it belongs to.
    pub level: u8,
    /// The ring's centre on the branch axis (scaled like the positions).
    pub centre: [f32; 3],
}

/// Meshes `skeleton`, scaled so that its highest vertex is at `height`, with its bark rings (for
/// AO). AO is left at 1 (open).
pub fn build(p: &SpeciesParams, seed: u64, skeleton: &Skeleton, height: f32) -> (TreeMesh, Vec<Ring>) {
    let mut m = TreeMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        uvs: Vec::new(),
        ao: Vec::new(),
        bark_indices: Vec::new(),
        leaf_indices: Vec::new(),
        lods: [Lod { bark_index_count: 0, leaf_index_count: 0 }; 3],
    };
    let mut rings = bark(p, skeleton, &mut m);
    leaves(seed, skeleton, &mut m);
    let top = m.positions.iter().map(|q| q[2]).fold(f32::MIN, f32::max);
    let scale = if top > 0.0 { height / top } else { 1.0 };
    for q in &mut m.positions {
        *q = q.map(|c| c * scale);
    }
    for r in &mut rings {
        r.centre = r.centre.map(|c| c * scale);
    }
    m.ao = vec![1.0; m.positions.len()];
    (m, rings)
}

/// Rings around each branch, branches in level order, so a prefix of `bark_indices` is every
/// branch up to some level.
fn bark(p: &SpeciesParams, skeleton: &Skeleton, m: &mut TreeMesh) -> Vec<Ring> {
    let mut rings = Vec::new();
    let mut order: Vec<usize> = (0..skeleton.branches.len()).collect();
    order.sort_by_key(|&i| skeleton.branches[i].level);
    let mut level_end = [0u32; 6];
    for &bi in &order {
        let b = &skeleton.branches[bi];
        let sides = p.sides[usize::from(b.level).min(4)].max(3);
        let trig: Vec<(f32, f32)> = (0..=sides)
            .map(|k| {
                let a = std::f32::consts::TAU * k as f32 / sides as f32;
                (libm::cosf(a), libm::sinf(a))
            })
            .collect();
        let cyl = &b.cylinders;
        let dirs: Vec<Vec3> = cyl.iter().map(|c| (c.p1 - c.p0).normalize_or(Vec3::Z)).collect();
        let mut u = perpendicular(dirs[0]);
        // Bark texels stay square: the 64×128 texture spans one circumference across and two along.
        let v_per_unit = 1.0 / (2.0 * std::f32::consts::TAU * cyl[0].r0.max(1e-4));
        let mut along = 0.0f32;
        let first = m.positions.len() as u32;
        for j in 0..=cyl.len() {
            // Joints take the mean of the two cylinders' directions, so rings do not pinch at bends.
            let d = match j {
                0 => dirs[0],
                j if j == cyl.len() => dirs[j - 1],
                j => (dirs[j - 1] + dirs[j]).normalize_or(dirs[j]),
            };
            u = (u - d * u.dot(d)).normalize_or(perpendicular(d));
            let v = d.cross(u);
            let (centre, r) = if j < cyl.len() { (cyl[j].p0, cyl[j].r0) } else { (cyl[j - 1].p1, cyl[j - 1].r1) };
            if j > 0 {
                along += (cyl[j - 1].p1 - cyl[j - 1].p0).length();
            }
            rings.push(Ring { first: m.positions.len() as u32, count: sides + 1, level: b.level, centre: centre.to_array() });
            for (k, &(c, s)) in trig.iter().enumerate() {
                let n = u * c + v * s;
                m.positions.push((centre + n * r).to_array());
                m.normals.push(n.to_array());
                m.uvs.push([k as f32 / sides as f32, along * v_per_unit]);
            }
        }
        let ring = sides + 1;
        for j in 0..cyl.len() as u32 {
            for k in 0..sides {
                let a = first + j * ring + k;
                let (b, c, d) = (a + 1, a + ring + 1, a + ring);
                m.bark_indices.extend_from_slice(&[a, b, c, a, c, d]);
            }
        }
        level_end[usize::from(b.level).min(5)] = m.bark_indices.len() as u32;
    }
    // Levels with no branch end where the level below ends.
    for l in 1..level_end.len() {
        level_end[l] = level_end[l].max(level_end[l - 1]);
    }
    let total = m.bark_indices.len() as u32;
    m.lods[0].bark_index_count = total;
    for (lod, &lv) in LOD_BARK_LEVELS.iter().enumerate() {
        m.lods[lod + 1].bark_index_count = level_end[usize::from(lv)];
    }
    rings
}

/// Height bands over which a leaf's distance from the trunk axis is normalised.
const BANDS: usize = 8;

/// Leaf quads ordered so a prefix keeps the outer leaves (the reference "removes centre leaves
/// first"): each leaf scores its distance from the trunk axis over the widest leaf's in its
/// height band (so the flanks of a cone count as outer at every height), or its height in the
/// crown's upper half if larger (the top is outer too), plus a random jitter that keeps some
/// inner leaves in every LOD so a thinned crown is not a hollow shell. Outermost first.
fn leaves(seed: u64, skeleton: &Skeleton, m: &mut TreeMesh) {
    let leaves = &skeleton.leaves;
    let n = leaves.len();
    if n == 0 {
        return;
    }
    let (z_lo, z_hi) = leaves.iter().fold((f32::MAX, f32::MIN), |(lo, hi), l| (lo.min(l.centre.z), hi.max(l.centre.z)));
    let span = (z_hi - z_lo).max(1e-4);
    let band = |z: f32| (((z - z_lo) / span * BANDS as f32) as usize).min(BANDS - 1);
    let radial = |c: Vec3| (c.x * c.x + c.y * c.y).sqrt();
    let mut widest = [1e-4f32; BANDS];
    for l in leaves {
        let b = band(l.centre.z);
        widest[b] = widest[b].max(radial(l.centre));
    }
    let mut rng = Rng::keyed(seed, "trees.leaf_order", 0);
    let mut keyed: Vec<(f32, usize)> = leaves
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let side = radial(l.centre) / widest[band(l.centre.z)];
            let top = 2.0 * (l.centre.z - z_lo) / span - 1.0;
            (side.max(top) + 0.35 * rng.unit() as f32, i)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in &keyed {
        let l = &leaves[i];
        let side = l.axis.cross(l.normal);
        let (ha, hs) = (l.axis * l.length * 0.5, side * l.width * 0.5);
        let base = m.positions.len() as u32;
        // Stem at the bottom of the texture (v = 1), tip at the top (v = 0); CCW about `normal`.
        let corners = [(-ha - hs, [0.0, 1.0]), (-ha + hs, [1.0, 1.0]), (ha + hs, [1.0, 0.0]), (ha - hs, [0.0, 0.0])];
        for (off, uv) in corners {
            m.positions.push((l.centre + off).to_array());
            m.normals.push(l.normal.to_array());
            m.uvs.push(uv);
        }
        m.leaf_indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    m.lods[0].leaf_index_count = (6 * n) as u32;
    for (lod, &div) in LOD_LEAF_DIVISORS.iter().enumerate() {
        m.lods[lod + 1].leaf_index_count = (6 * n.div_ceil(div)) as u32;
    }
}

/// Index of the first leaf vertex: leaf `i` (in LOD order) owns vertices `first + 4i .. first + 4i + 4`.
pub fn first_leaf_vertex(m: &TreeMesh) -> usize {
    m.leaf_indices.first().map_or(m.positions.len(), |&i| i as usize)
}
