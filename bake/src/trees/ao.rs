//! Per-vertex self ambient occlusion of a tree, traced with the ray engine.
//!
//! Bark and leaves both occlude, from either side (no culling: leaves are two-sided; the bark
//! vertices this darkens are the ones buried inside a parent branch, which nobody sees). The ray
//! engine has no alpha test, so each leaf occludes as an opaque quad scaled about its centre by
//! √(texture coverage): the same occluding area as the alpha-tested leaf (and only the 50 % leaf
//! LOD occludes, each at twice that area).
//!
//! Trunk and first-order bark vertices cast a cosine-weighted hemisphere about their normal.
//! Leaves and finer branches read a grid of probes over the crown, each casting over the whole
//! sphere (the ray engine traces about a million rays a second per core on a tree, and the
//! trees stage has a few seconds for a hundred prototypes). A leaf keeps its brighter face: the
//! face a viewer outside the crown sees is the one that faces out.

use glam::{Vec3, Vec3A};

use super::mesh::{first_leaf_vertex, Ring};
use super::skeleton::perpendicular;
use super::TreeMesh;
use crate::rays::{Bvh, Cull, Ray};
use crate::rng::Rng;

/// Rays per bark vertex and per probe.
pub const RAYS: usize = 16;

/// Reach of an AO ray as a fraction of the tree's height: farther hits do not darken. Short
/// rays also end their walks early, which is most of the cost (measured: 0.6 → 0.35 of the
/// height is about 1.5 × faster).
const REACH: f32 = 0.35;

/// Branch levels from which bark AO is read from the crown's probes rather than traced per
/// vertex: twigs are a few pixels wide and hidden among the leaves.
const RING_LEVEL: u8 = 2;

/// A fixed cosine-weighted spiral of [`RAYS`] directions about +Z: stratified in both the polar
/// and azimuthal directions, so 16 rays give a smooth estimate; each vertex turns it by a random
/// angle about its normal.
fn hemisphere() -> [[f32; 3]; RAYS] {
    std::array::from_fn(|i| {
        let u = (i as f32 + 0.5) / RAYS as f32;
        let r = u.sqrt();
        let phi = i as f32 * 2.399_963;
        [r * libm::cosf(phi), r * libm::sinf(phi), (1.0 - u).max(0.0).sqrt()]
    })
}

/// A Fibonacci spiral of [`RAYS`] directions over the whole sphere.
fn sphere() -> [[f32; 3]; RAYS] {
    std::array::from_fn(|i| {
        let z = 1.0 - 2.0 * (i as f32 + 0.5) / RAYS as f32;
        let r = (1.0 - z * z).max(0.0).sqrt();
        let phi = i as f32 * 2.399_963;
        [r * libm::cosf(phi), r * libm::sinf(phi), z]
    })
}

/// Fills `mesh.ao` (`rings` from [`super::mesh::build`]). `leaf_coverage` is the leaf texture's
/// covered fraction; `seed` keys the ray rotations. The ground (z = 0) occludes too: AO here is
/// the sky's visibility, and no sky shows below a tree.
pub fn compute(mesh: &mut TreeMesh, rings: &[Ring], leaf_coverage: f32, seed: u64, height: f32) {
    let leaf_first = first_leaf_vertex(mesh);
    let leaf_count = mesh.leaf_indices.len() / 6;
    // The occluding leaves are the 50 % LOD's, each scaled to twice its covered area: the same
    // occluding area in half the triangles (the hierarchy's build and walks are most of the time).
    let occluders = mesh.lods[1].leaf_index_count as usize / 6;
    let shrink = (leaf_coverage.clamp(0.0, 1.0) * leaf_count as f32 / occluders.max(1) as f32).sqrt();
    // Occluders: bark as meshed, leaves shrunk, a ground square.
    let mut positions = mesh.positions.clone();
    for l in 0..occluders {
        let v = leaf_first + 4 * l;
        let c = quad_centre(&mesh.positions[v..v + 4]);
        for q in &mut positions[v..v + 4] {
            *q = (c + (Vec3::from(*q) - c) * shrink).to_array();
        }
    }
    // Twigs finer than the reduced-branch LOD hardly occlude, and leaving them out makes the
    // hierarchy a third smaller (its build is a quarter of the stage's time).
    let mut indices = mesh.bark_indices[..mesh.lods[1].bark_index_count as usize].to_vec();
    indices.extend_from_slice(&mesh.leaf_indices[..6 * occluders]);
    let g = positions.len() as u32;
    let w = 2.0 * height;
    positions.extend_from_slice(&[[-w, -w, 0.0], [w, -w, 0.0], [w, w, 0.0], [-w, w, 0.0]]);
    indices.extend_from_slice(&[g, g + 1, g + 2, g, g + 2, g + 3]);
    let Ok(bvh) = Bvh::build(&positions, &indices) else {
        // Only non-finite input fails; a tree with no valid occluders is fully open.
        return;
    };
    let (hemi, sph) = (hemisphere(), sphere());
    let eps = height * 1e-4;
    let reach = height * REACH;
    let mut rays = Vec::with_capacity(RAYS * 2);
    let mut hits = [false; RAYS * 2];
    // Casts `dirs` about each of `frames` (origin, normal), turned by a random angle keyed by `key`.
    let mut cast = |frames: &[(Vec3, Vec3)], dirs: &[[f32; 3]; RAYS], key: u64, hits: &mut [bool]| {
        rays.clear();
        let spin = Rng::keyed(seed, "trees.ao", key).unit() as f32 * std::f32::consts::TAU;
        let (s, c) = (libm::sinf(spin), libm::cosf(spin));
        for &(origin, n) in frames {
            let tu = perpendicular(n);
            let tv = n.cross(tu);
            let (a, b) = (tu * c + tv * s, tv * c - tu * s);
            for d in dirs {
                let dir = a * d[0] + b * d[1] + n * d[2];
                rays.push(Ray { origin: Vec3A::from(origin), dir: Vec3A::from(dir), tmin: 0.0, tmax: reach });
            }
        }
        bvh.occluded_stream(&rays, Cull::None, &mut hits[..rays.len()]);
    };
    let mut fine = Vec::new();
    for r in rings {
        let (first, count) = (r.first as usize, r.count as usize);
        if r.level >= RING_LEVEL {
            fine.push(*r);
            continue;
        }
        for v in first..first + count {
            let n = Vec3::from(mesh.normals[v]);
            cast(&[(Vec3::from(mesh.positions[v]) + n * eps, n)], &hemi, v as u64, &mut hits);
            mesh.ao[v] = open_fraction(&hits[..RAYS]);
        }
    }
    // Leaves and twigs read a grid of probes over the crown: its cost does not grow with the leaf
    // count, and it is free of per-leaf noise (which would speckle impostors).
    let mut lo = Vec3::splat(f32::MAX);
    let mut hi = Vec3::splat(f32::MIN);
    for p in mesh.positions[leaf_first..].iter().copied().chain(fine.iter().map(|r| r.centre)) {
        lo = lo.min(Vec3::from(p));
        hi = hi.max(Vec3::from(p));
    }
    if lo.x > hi.x {
        return;
    }
    let grid = Probes::trace(lo, hi, |i, origin| {
        cast(&[(origin, Vec3::Z)], &sph, (1 << 40) | i as u64, &mut hits);
        open_fraction(&hits[..RAYS])
    });
    for r in &fine {
        let open = grid.sample(Vec3::from(r.centre));
        mesh.ao[r.first as usize..(r.first + r.count) as usize].fill(open);
    }
    // A leaf keeps its brighter face: sampled half a cell off either side.
    let off = grid.cell.min_element() * 0.5;
    for l in 0..leaf_count {
        let v = leaf_first + 4 * l;
        let n = Vec3::from(mesh.normals[v]);
        let c = quad_centre(&mesh.positions[v..v + 4]);
        mesh.ao[v..v + 4].fill(grid.sample(c + n * off).max(grid.sample(c - n * off)));
    }
}

/// Probes per axis of the crown's AO grid.
const PROBES: usize = 8;

/// Sky visibility on a [`PROBES`]³ lattice spanning a box, read back trilinearly.
struct Probes {
    lo: Vec3,
    cell: Vec3,
    open: Vec<f32>,
}

impl Probes {
    /// Traces probe `i` (x fastest) at each lattice point with `trace(i, point)`.
    fn trace(lo: Vec3, hi: Vec3, mut trace: impl FnMut(usize, Vec3) -> f32) -> Probes {
        let cell = ((hi - lo) / (PROBES - 1) as f32).max(Vec3::splat(1e-5));
        let open = (0..PROBES * PROBES * PROBES)
            .map(|i| {
                let (x, y, z) = (i % PROBES, i / PROBES % PROBES, i / (PROBES * PROBES));
                trace(i, lo + cell * Vec3::new(x as f32, y as f32, z as f32))
            })
            .collect();
        Probes { lo, cell, open }
    }

    fn sample(&self, p: Vec3) -> f32 {
        let g = ((p - self.lo) / self.cell).clamp(Vec3::ZERO, Vec3::splat((PROBES - 1) as f32 - 1e-3));
        let (i, f) = (g.floor(), g - g.floor());
        let at =
            |dx: usize, dy: usize, dz: usize| self.open[(i.x as usize + dx) + (i.y as usize + dy) * PROBES + (i.z as usize + dz) * PROBES * PROBES];
        let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
        let x00 = lerp(at(0, 0, 0), at(1, 0, 0), f.x);
        let x10 = lerp(at(0, 1, 0), at(1, 1, 0), f.x);
        let x01 = lerp(at(0, 0, 1), at(1, 0, 1), f.x);
        let x11 = lerp(at(0, 1, 1), at(1, 1, 1), f.x);
        lerp(lerp(x00, x10, f.y), lerp(x01, x11, f.y), f.z)
    }
}

fn quad_centre(q: &[[f32; 3]]) -> Vec3 {
    q.iter().map(|&p| Vec3::from(p)).sum::<Vec3>() * 0.25
}

fn open_fraction(hits: &[bool]) -> f32 {
    hits.iter().filter(|&&h| !h).count() as f32 / hits.len() as f32
}
