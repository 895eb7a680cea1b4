//! Impostor baking: a textured triangle mesh captured from N×N view directions laid out on an
//! octahedral (or hemi-octahedral) grid, each view an orthographic G-buffer (albedo + coverage,
//! normal + AO, depth) traced through the ray engine, dilated and mip-mapped so that no level
//! bleeds the background and every level keeps level 0's alpha-tested coverage.
//!
//! The baker knows textured triangle meshes and rays, nothing of trees. `octahedral` holds the
//! direction maps the viewer mirrors; `reconstruct` renders an impostor on the CPU the way the
//! viewer does, for the fidelity tests.

#[cfg(test)]
mod bleed_tests;
pub mod capture;
pub mod dilate;
pub mod image;
pub mod march;
pub mod mips;
pub mod octahedral;
mod raster;
pub mod reconstruct;
pub mod synthetic;
#[cfg(test)]
mod tests;

use capture::{OrthoCamera, Scene, ViewMaps};
pub use image::Image;
pub use octahedral::Layout;
use rayon::prelude::*;

/// A textured triangle mesh to capture (borrowed; the tree generator's mesh converts to it).
#[derive(Clone, Copy, Debug)]
pub struct CaptureMesh<'a> {
    /// Object space, Z up, trunk base at the origin.
    pub positions: &'a [[f32; 3]],
    /// Unit shading normals, one per vertex.
    pub normals: &'a [[f32; 3]],
    /// Texture coordinates, one per vertex.
    pub uvs: &'a [[f32; 2]],
    /// Per-vertex self AO in \[0,1\] (1 = open).
    pub ao: &'a [f32],
    /// Triangles, counter-clockwise front.
    pub indices: &'a [u32],
    /// Per triangle: index into `textures`.
    pub materials: &'a [u8],
    /// The materials.
    pub textures: &'a [Material<'a>],
}

/// A surface's texture and how it is drawn.
#[derive(Clone, Copy, Debug)]
pub struct Material<'a> {
    /// sRGB colour, alpha linear (the cut-out shape where `alpha_test` is set).
    pub texture: &'a Image,
    /// Texels whose alpha is below this are holes.
    pub alpha_test: Option<f32>,
    /// Seen from both sides: the normal turns toward the viewer.
    pub two_sided: bool,
}

/// How to bake an impostor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImpostorSettings {
    /// Which directions the atlas covers.
    pub layout: Layout,
    /// Views per atlas side (`grid`² views), at least 2.
    pub grid: u32,
    /// Wanted world size of a texel: a view's side is the next power of two at or above
    /// `2·radius / texel`, clamped to `[min_px, max_px]`.
    pub texel: f32,
    /// Smallest view side in texels.
    pub min_px: u32,
    /// Largest view side in texels.
    pub max_px: u32,
    /// Also bake the two cards (leaf card, branch card) seen from +Y.
    pub cards: bool,
    /// Rays per texel side (`supersample`² per texel): coverage is the fraction that hit.
    pub supersample: u32,
    /// Smallest view side of the mip chain's last level.
    pub min_mip_px: u32,
}

impl Default for ImpostorSettings {
    fn default() -> Self {
        ImpostorSettings { layout: Layout::Octahedral, grid: 12, texel: 0.35, min_px: 16, max_px: 64, cards: false, supersample: 2, min_mip_px: 4 }
    }
}

/// One level of the atlas: `size`×`size` texels, views in a `grid`×`grid` layout (view `(i, j)`
/// at column `i`, row `j`), rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtlasLevel {
    /// Side in texels.
    pub size: u32,
    /// RGBA8: sRGB colour, A = coverage.
    pub albedo: Vec<u8>,
    /// RGBA8: object-space normal `xyz*0.5+0.5`, A = AO.
    pub normal: Vec<u8>,
    /// Depth toward the viewer from the centre, `[-radius, radius]` → `[0, 65535]`.
    pub depth: Vec<u16>,
}

/// One card of the two-card layout: the mesh's part seen from +Y across its bounding box.
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    /// Texels across (X) and down (Z).
    pub width: u32,
    /// Texels down.
    pub height: u32,
    /// The box the card spans (object space): X across, Z up; Y is the depth axis.
    pub lo: [f32; 3],
    /// Upper corner of the box.
    pub hi: [f32; 3],
    /// RGBA8: sRGB colour, A = coverage.
    pub albedo: Vec<u8>,
    /// RGBA8: object-space normal `xyz*0.5+0.5`, A = AO.
    pub normal: Vec<u8>,
}

/// The reference's two-card layout: alpha-tested materials (leaves) on one card, the rest
/// (branches) on the other; `None` where the mesh has no such triangles.
#[derive(Clone, Debug, PartialEq)]
pub struct Cards {
    /// Alpha-tested surfaces.
    pub leaf: Option<Card>,
    /// Opaque surfaces.
    pub branch: Option<Card>,
}

/// A baked impostor.
#[derive(Clone, Debug, PartialEq)]
pub struct Impostor {
    /// Direction layout of the views.
    pub layout: Layout,
    /// Views per side.
    pub grid: u32,
    /// A view's side at level 0.
    pub view_px: u32,
    /// Bounding sphere centre (object space).
    pub center: [f32; 3],
    /// Bounding sphere radius.
    pub radius: f32,
    /// Level 0 first, each level halving the views.
    pub levels: Vec<AtlasLevel>,
    /// The two cards, when asked for.
    pub cards: Option<Cards>,
}

/// Why a mesh could not be baked.
#[derive(Debug, thiserror::Error)]
pub enum ImpostorError {
    /// The ray engine refused the mesh.
    #[error("ray engine: {0}")]
    Bvh(#[from] crate::rays::BuildError),
    /// Per-vertex or per-triangle arrays disagree in length.
    #[error("{what}: {got} entries, expected {expected}")]
    Length {
        /// Which array.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The length it should have.
        expected: usize,
    },
    /// A triangle names a material that does not exist.
    #[error("triangle {triangle} uses material {material} of {materials}")]
    Material {
        /// The triangle.
        triangle: usize,
        /// The material it names.
        material: u8,
        /// How many there are.
        materials: usize,
    },
    /// Settings out of range.
    #[error("settings: {0}")]
    Settings(&'static str),
    /// An index names a vertex past the end of the positions.
    #[error("index {index} names vertex {vertex} of {vertices}")]
    Index {
        /// Where in the index buffer.
        index: usize,
        /// The vertex it names.
        vertex: u32,
        /// How many vertices there are.
        vertices: usize,
    },
    /// A vertex position is infinite or NaN.
    #[error("position {0} is not finite")]
    NotFinite(usize),
    /// The mesh has no triangles.
    #[error("the mesh has no triangles")]
    Empty,
}

fn check(mesh: &CaptureMesh, s: &ImpostorSettings) -> Result<(), ImpostorError> {
    let v = mesh.positions.len();
    for (what, got) in [("normals", mesh.normals.len()), ("uvs", mesh.uvs.len()), ("ao", mesh.ao.len())] {
        if got != v {
            return Err(ImpostorError::Length { what, got, expected: v });
        }
    }
    if !mesh.indices.len().is_multiple_of(3) {
        return Err(ImpostorError::Settings("the index count is not a multiple of 3"));
    }
    if let Some((index, &vertex)) = mesh.indices.iter().enumerate().find(|(_, &i)| i as usize >= v) {
        return Err(ImpostorError::Index { index, vertex, vertices: v });
    }
    if let Some(i) = mesh.positions.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(ImpostorError::NotFinite(i));
    }
    let tris = mesh.indices.len() / 3;
    if mesh.materials.len() != tris {
        return Err(ImpostorError::Length { what: "materials", got: mesh.materials.len(), expected: tris });
    }
    if let Some((triangle, &material)) = mesh.materials.iter().enumerate().find(|(_, &m)| m as usize >= mesh.textures.len()) {
        return Err(ImpostorError::Material { triangle, material, materials: mesh.textures.len() });
    }
    if tris == 0 {
        return Err(ImpostorError::Empty);
    }
    if s.grid < 2 || s.grid > 64 {
        return Err(ImpostorError::Settings("grid must be in 2..=64"));
    }
    if !(s.texel > 0.0 && s.texel.is_finite()) {
        return Err(ImpostorError::Settings("texel must be positive"));
    }
    if s.min_px == 0 || s.min_px > s.max_px || s.max_px > 1024 {
        return Err(ImpostorError::Settings("need 1 <= min_px <= max_px <= 1024"));
    }
    if !(1..=8).contains(&s.supersample) {
        return Err(ImpostorError::Settings("supersample must be in 1..=8"));
    }
    Ok(())
}

/// A view's side for a sphere of `radius`: the next power of two at or above `2·radius/texel`,
/// clamped to `[min_px, max_px]`.
pub fn view_px(radius: f32, s: &ImpostorSettings) -> u32 {
    let want = (2.0 * radius / s.texel).ceil().clamp(1.0, 1_048_576.0) as u32;
    want.next_power_of_two().clamp(s.min_px, s.max_px)
}

/// Bakes `mesh` into an impostor atlas (and cards when asked). Views are traced in parallel and
/// collected in grid order: the bytes do not depend on the thread count.
pub fn bake(mesh: &CaptureMesh, settings: &ImpostorSettings) -> Result<Impostor, ImpostorError> {
    check(mesh, settings)?;
    let scene = Scene::new(mesh);
    let px = view_px(scene.radius, settings);
    let grid = settings.grid;
    let views: Vec<(ViewMaps, Vec<ViewMaps>)> = (0..grid * grid)
        .into_par_iter()
        .map(|k| {
            let dir = octahedral::frame_direction(settings.layout, grid, k % grid, k / grid);
            let mut v = OrthoCamera::new(dir, px, settings.supersample).capture(&scene);
            dilate::dilate_view(&mut v);
            let mips = mips::view_mips(&v, settings.min_mip_px);
            (v, mips)
        })
        .collect();
    let count = 1 + views[0].1.len();
    let levels = (0..count)
        .map(|l| {
            let level_views: Vec<&ViewMaps> = views.iter().map(|(v0, m)| if l == 0 { v0 } else { &m[l - 1] }).collect();
            assemble(&level_views, grid)
        })
        .collect();
    let cards = if settings.cards { Some(bake_cards(&scene, px, settings.supersample)) } else { None };
    Ok(Impostor { layout: settings.layout, grid, view_px: px, center: scene.center.into(), radius: scene.radius, levels, cards })
}

/// Lays views (grid order) into one atlas level.
fn assemble(views: &[&ViewMaps], grid: u32) -> AtlasLevel {
    let px = views[0].px;
    let size = px * grid;
    let n = (size * size) as usize;
    let mut level = AtlasLevel { size, albedo: vec![0; 4 * n], normal: vec![0; 4 * n], depth: vec![0; n] };
    for (k, v) in views.iter().enumerate() {
        let (ox, oy) = ((k as u32 % grid) * px, (k as u32 / grid) * px);
        for y in 0..px {
            for x in 0..px {
                let (s, d) = ((y * px + x) as usize, ((oy + y) * size + ox + x) as usize);
                level.albedo[4 * d..4 * d + 4].copy_from_slice(&v.albedo[s]);
                level.normal[4 * d..4 * d + 4].copy_from_slice(&v.normal[s]);
                level.depth[d] = v.depth[s];
            }
        }
    }
    level
}

/// The leaf and branch cards: each part of the mesh seen from +Y over its own bounding box.
fn bake_cards(scene: &Scene, px: u32, ss: u32) -> Cards {
    let mesh = scene.mesh;
    let card = |leaves: bool| -> Option<Card> {
        let keep = |t: usize| mesh.textures[mesh.materials[t] as usize].alpha_test.is_some() == leaves;
        let indices: Vec<u32> = (0..mesh.indices.len() / 3).filter(|&t| keep(t)).flat_map(|t| mesh.indices[3 * t..3 * t + 3].to_vec()).collect();
        let materials: Vec<u8> = (0..mesh.indices.len() / 3).filter(|&t| keep(t)).map(|t| mesh.materials[t]).collect();
        if indices.is_empty() {
            return None;
        }
        let part = CaptureMesh { indices: &indices, materials: &materials, ..*mesh };
        let sub = Scene::new(&part);
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for &i in &indices {
            let p = mesh.positions[i as usize];
            for c in 0..3 {
                lo[c] = lo[c].min(p[c]);
                hi[c] = hi[c].max(p[c]);
            }
        }
        let (w_world, h_world) = ((hi[0] - lo[0]).max(1e-6), (hi[2] - lo[2]).max(1e-6));
        // The longer side gets 2·px texels (a card is seen close), the other its share.
        let scale = 2.0 * px as f32 / w_world.max(h_world);
        let (width, height) = (((w_world * scale).ceil() as u32).max(1), ((h_world * scale).ceil() as u32).max(1));
        let maps = capture::capture_rect(&sub, lo, hi, width, height, ss);
        Some(Card { width, height, lo, hi, albedo: maps.0, normal: maps.1 })
    };
    Cards { leaf: card(true), branch: card(false) }
}
