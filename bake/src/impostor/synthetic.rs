//! A synthetic two-material "tree" (an opaque bark cylinder and alpha-tested, two-sided leaf
//! quads scattered in a sphere), for the impostor tests and the speed example. It stands in for
//! the tree generator's meshes, which this module must not depend on.

use super::{CaptureMesh, Image, Material};

/// SplitMix64: a small local generator; the fixture's bytes only need to be stable.
struct Mix(u64);
impl Mix {
    fn f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The synthetic tree's buffers and textures.
#[derive(Clone, Debug)]
pub struct SyntheticTree {
    /// Vertex positions (Z up, trunk base at the origin).
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates.
    pub uvs: Vec<[f32; 2]>,
    /// Per-vertex AO.
    pub ao: Vec<f32>,
    /// Triangles.
    pub indices: Vec<u32>,
    /// Per triangle: 0 = bark, 1 = leaf.
    pub materials: Vec<u8>,
    /// Opaque bark texture.
    pub bark: Image,
    /// Leaf texture: an elliptic cut-out.
    pub leaf: Image,
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-12);
    v.map(|c| c / l)
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

impl SyntheticTree {
    /// A trunk 5 units tall and a crown of `leaves` quads in a sphere of radius 2.5 around (0, 0, 5.5).
    pub fn new(leaves: usize, seed: u64) -> SyntheticTree {
        let mut rng = Mix(seed);
        let mut t = SyntheticTree {
            positions: Vec::new(),
            normals: Vec::new(),
            uvs: Vec::new(),
            ao: Vec::new(),
            indices: Vec::new(),
            materials: Vec::new(),
            bark: Image::new(32, 32),
            leaf: Image::new(32, 32),
        };
        for y in 0..32 {
            for x in 0..32 {
                let n = rng.f32();
                t.bark.set(x, y, [(90.0 + 40.0 * n) as u8, (60.0 + 25.0 * n) as u8, (40.0 + 10.0 * n) as u8, 255]);
                let (u, v) = ((x as f32 + 0.5) / 16.0 - 1.0, (y as f32 + 0.5) / 16.0 - 1.0);
                let inside = u * u + 0.6 * v * v < 0.8;
                let vein = (u.abs() < 0.08) as u8 as f32;
                t.leaf.set(
                    x,
                    y,
                    [
                        (50.0 + 40.0 * n + 60.0 * vein) as u8,
                        (110.0 + 60.0 * n + 40.0 * vein) as u8,
                        (30.0 + 20.0 * n) as u8,
                        if inside { 255 } else { 0 },
                    ],
                );
            }
        }
        // Trunk: 12 sides, 6 rings, one-sided outward.
        let (sides, rings, radius, height) = (12u32, 6u32, 0.25f32, 5.0f32);
        for ring in 0..=rings {
            let z = height * ring as f32 / rings as f32;
            for s in 0..=sides {
                let a = s as f32 / sides as f32 * std::f32::consts::TAU;
                let (c, sn) = (libm::cosf(a), libm::sinf(a));
                let taper = 1.0 - 0.4 * ring as f32 / rings as f32;
                t.positions.push([radius * taper * c, radius * taper * sn, z]);
                t.normals.push([c, sn, 0.0]);
                t.uvs.push([s as f32 / sides as f32, z / 2.0]);
                t.ao.push(0.6 + 0.08 * ring as f32 / rings as f32 * 5.0);
            }
        }
        for ring in 0..rings {
            for s in 0..sides {
                let i = ring * (sides + 1) + s;
                let j = i + sides + 1;
                t.indices.extend_from_slice(&[i, i + 1, j + 1, i, j + 1, j]);
                t.materials.extend_from_slice(&[0, 0]);
            }
        }
        // Leaves: quads of side 0.35 at random points of the crown, random orientation.
        let centre = [0.0, 0.0, 5.5];
        let crown = 2.5f32;
        for _ in 0..leaves {
            let p = loop {
                let p = [rng.f32() * 2.0 - 1.0, rng.f32() * 2.0 - 1.0, rng.f32() * 2.0 - 1.0];
                if p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= 1.0 {
                    break p;
                }
            };
            let n = normalize([rng.f32() * 2.0 - 1.0, rng.f32() * 2.0 - 1.0, rng.f32() * 2.0 - 0.7]);
            let a = normalize(cross(n, if n[2].abs() < 0.9 { [0.0, 0.0, 1.0] } else { [1.0, 0.0, 0.0] }));
            let b = cross(n, a);
            let half = 0.175;
            let c = [0, 1, 2].map(|k| centre[k] + p[k] * crown);
            let ao = 0.45 + 0.55 * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            let base = t.positions.len() as u32;
            for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                t.positions.push([0, 1, 2].map(|k| c[k] + (a[k] * su + b[k] * sv) * half));
                t.normals.push(n);
                t.uvs.push([(su + 1.0) * 0.5, (1.0 - sv) * 0.5]);
                t.ao.push(ao);
            }
            t.indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
            t.materials.extend_from_slice(&[1, 1]);
        }
        t
    }

    /// The two materials: bark (opaque, one-sided), leaf (alpha-tested at 0.5, two-sided).
    pub fn materials(&self) -> [Material<'_>; 2] {
        [
            Material { texture: &self.bark, alpha_test: None, two_sided: false },
            Material { texture: &self.leaf, alpha_test: Some(0.5), two_sided: true },
        ]
    }

    /// The tree as a capture mesh over `materials` (from [`SyntheticTree::materials`]).
    pub fn mesh<'a>(&'a self, materials: &'a [Material<'a>]) -> CaptureMesh<'a> {
        CaptureMesh {
            positions: &self.positions,
            normals: &self.normals,
            uvs: &self.uvs,
            ao: &self.ao,
            indices: &self.indices,
            materials: &self.materials,
            textures: materials,
        }
    }
}
