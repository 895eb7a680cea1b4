//! Tree prototypes (issue #17): species presets, a skeleton pass that makes every random choice,
//! meshing into bark cylinders and leaf quads ordered so that LODs are index prefixes,
//! procedural bark and leaf textures, and per-vertex self-AO from the ray engine.
//!
//! `grow` is a pure function of (species, seed, height): the same bytes on every machine (libm
//! for transcendentals, keyed random streams).

pub mod ao;
pub mod mesh;
pub mod skeleton;
pub mod species;
#[cfg(test)]
mod tests;
pub mod texture;

pub use species::{preset, SpeciesParams, PRESETS};

use crate::impostor::{CaptureMesh, Image, Material};

/// A tree's mesh: bark and leaves share the vertex arrays; each has its own index buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeMesh {
    /// Object space, Z up, trunk base at the origin.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals (leaf quads: the leaf's front facing).
    pub normals: Vec<[f32; 3]>,
    /// Bark: u around the branch, v along it (repeating); leaves: the unit square, stem at v = 1.
    pub uvs: Vec<[f32; 2]>,
    /// Self AO per vertex (ray engine), 1 = open.
    pub ao: Vec<f32>,
    /// Bark triangles ordered by branch level (trunk and roots, then level 1, 2, …), so that
    /// prefixes are the LODs' branch sets (coarse first).
    pub bark_indices: Vec<u32>,
    /// 6 per leaf quad (2 triangles), ordered so prefixes are leaf LODs (outer leaves first).
    pub leaf_indices: Vec<u32>,
    /// Full; reduced branches (levels ≤ 2) with 50 % of the leaves; levels ≤ 1 with 25 %.
    pub lods: [Lod; 3],
}

/// One LOD: the prefixes of [`TreeMesh::bark_indices`] and [`TreeMesh::leaf_indices`] it draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lod {
    /// Bark indices drawn (a multiple of 3).
    pub bark_index_count: u32,
    /// Leaf indices drawn (a multiple of 6).
    pub leaf_index_count: u32,
}

/// One grown tree, ready for impostor capture and instancing.
#[derive(Clone, Debug, PartialEq)]
pub struct Prototype {
    /// The species' preset name.
    pub species: String,
    /// The seed it grew from.
    pub seed: u64,
    /// Its mesh with LODs and AO.
    pub mesh: TreeMesh,
    /// Highest vertex above the trunk base (the requested height).
    pub height: f32,
    /// Largest horizontal distance of a vertex from the trunk axis.
    pub radius: f32,
}

/// A species' textures: RGBA8, sRGB colour, linear alpha.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpeciesTextures {
    /// Opaque bark, tiling both ways.
    pub bark: Image,
    /// Leaf (or needle spray) with its shape in alpha.
    pub leaf: Image,
}

/// Grows one prototype of species `params` from `seed`, `height` world units tall: skeleton
/// (every random choice), mesh with LOD order, self-AO.
pub fn grow(params: &SpeciesParams, seed: u64, height: f32) -> Prototype {
    let skeleton = skeleton::grow(params, seed);
    let (mut mesh, rings) = mesh::build(params, seed, &skeleton, height);
    ao::compute(&mut mesh, &rings, texture::leaf_coverage(params), seed, height);
    let top = mesh.positions.iter().map(|p| p[2]).fold(0.0f32, f32::max);
    let radius = mesh.positions.iter().map(|p| (p[0] * p[0] + p[1] * p[1]).sqrt()).fold(0.0f32, f32::max);
    Prototype { species: params.name.clone(), seed, mesh, height: top, radius }
}

/// The bark and leaf textures of species `params`.
pub fn textures(params: &SpeciesParams) -> SpeciesTextures {
    SpeciesTextures { bark: texture::bark(params), leaf: texture::leaf(params) }
}

/// Material index of bark triangles in [`TreeMesh::capture_triangles`]: opaque, one-sided.
pub const BARK_MATERIAL: u8 = 0;
/// Material index of leaf triangles in [`TreeMesh::capture_triangles`]: two-sided, alpha-tested at [`LEAF_ALPHA_TEST`].
pub const LEAF_MATERIAL: u8 = 1;
/// The alpha below which a leaf texel is a hole.
pub const LEAF_ALPHA_TEST: f32 = 0.5;

impl TreeMesh {
    /// The triangles of LOD `lod` (0 = full; clamped to 2) for impostor capture: bark then
    /// leaves, with one material per triangle ([`BARK_MATERIAL`], [`LEAF_MATERIAL`]). With the
    /// vertex arrays and the two textures (bark opaque one-sided, leaf alpha-tested two-sided)
    /// they make the impostor's `CaptureMesh`.
    pub fn capture_triangles(&self, lod: usize) -> (Vec<u32>, Vec<u8>) {
        let l = self.lods[lod.min(2)];
        let bark = &self.bark_indices[..l.bark_index_count as usize];
        let leaf = &self.leaf_indices[..l.leaf_index_count as usize];
        let indices = bark.iter().chain(leaf).copied().collect();
        let materials = std::iter::repeat_n(BARK_MATERIAL, bark.len() / 3).chain(std::iter::repeat_n(LEAF_MATERIAL, leaf.len() / 3)).collect();
        (indices, materials)
    }

    /// LOD `lod` as the impostor baker's mesh ([`TreeMesh::capture_triangles`]), with `textures`'
    /// bark (opaque, one-sided) and leaves (alpha-tested at [`LEAF_ALPHA_TEST`], two-sided),
    /// lent to `f`.
    pub fn with_capture_mesh<R>(&self, lod: usize, textures: &SpeciesTextures, f: impl FnOnce(&CaptureMesh) -> R) -> R {
        let (indices, materials) = self.capture_triangles(lod);
        // Indexed by BARK_MATERIAL and LEAF_MATERIAL.
        let looks = [
            Material { texture: &textures.bark, alpha_test: None, two_sided: false },
            Material { texture: &textures.leaf, alpha_test: Some(LEAF_ALPHA_TEST), two_sided: true },
        ];
        f(&CaptureMesh {
            positions: &self.positions,
            normals: &self.normals,
            uvs: &self.uvs,
            ao: &self.ao,
            indices: &indices,
            materials: &materials,
            textures: &looks,
        })
    }

    /// The impostor texel a prototype gets unless its world names one: [`AUTO_TEXELS_PER_DIAMETER`]
    /// across its bounding sphere, and a hair over, so rounding never doubles the view to the
    /// next power of two.
    pub fn auto_impostor_texel(&self) -> f32 {
        2.0 * crate::impostor::capture::bounding_sphere(&self.positions).1 / AUTO_TEXELS_PER_DIAMETER * 1.001
    }
}

/// Impostor texels across a prototype's bounding sphere when the world file leaves
/// `trees.impostor.texel` at 0: views are 32 px whatever the tree's size (12×12 of them: a 384²
/// atlas, about 0.5 MiB stored), and the viewer switches to the impostor where one texel covers
/// one screen pixel.
pub const AUTO_TEXELS_PER_DIAMETER: f32 = 32.0;
