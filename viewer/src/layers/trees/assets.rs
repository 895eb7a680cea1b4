//! The trees' shared pack (`TPRO`, `TTEX`, `TIMP`) → [`TreeAssets`], decoded once at start and
//! shared by the tile decoder (prototype count and sizes) and the layer (uploaded once).

use std::any::Any;
use std::sync::Arc;

use kiln_formats::sections::{ImpostorLayout, Rgba8Level, TreeImpostors, TreePrototypes, TreeTextures};
use kiln_formats::{Pack, Section};

use super::octahedral::Layout;
use crate::layers::terrain::vertex::f16_bits;

/// One tree-mesh vertex as the GPU reads it (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TreeVertex {
    /// Object space (Z up, trunk base at the origin).
    pub position: [f32; 3],
    /// Unit normal as snorm16 (w unused).
    pub normal: [i16; 4],
    /// Texture coordinates (bark or leaf texture).
    pub uv: [f32; 2],
    /// Self-AO as unorm8 in x.
    pub ao: [u8; 4],
}

/// A prototype's place in the shared buffers and its size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProtoInfo {
    /// Index into the species textures.
    pub species: usize,
    /// First index of its bark triangles in [`TreeAssets::indices`] (absolute vertex numbers).
    pub bark_first: u32,
    /// First index of its leaf triangles.
    pub leaf_first: u32,
    /// Per LOD: bark and leaf index counts (prefixes).
    pub lods: [[u32; 2]; 3],
    /// Bounding sphere in object space: centre and radius (the atlas's when it has one).
    pub center: [f32; 3],
    /// See `center`.
    pub radius: f32,
}

/// One mip level of an impostor atlas, ready for upload.
pub struct AtlasMip {
    /// Side in texels.
    pub size: u32,
    /// RGBA8 sRGB albedo, alpha = coverage.
    pub albedo: Vec<u8>,
    /// RGBA8 object-space normal ·0.5+0.5, alpha = AO.
    pub normal: Vec<u8>,
    /// Depth as f16 bits (0 = −radius toward the viewer, 1 = +radius).
    pub depth: Vec<u16>,
}

/// A prototype's impostor atlas.
pub struct Atlas {
    /// Direction map.
    pub layout: Layout,
    /// Views per side.
    pub grid: u32,
    /// Texels per view side at level 0.
    pub view_px: u32,
    /// Mips, level 0 first.
    pub mips: Vec<AtlasMip>,
}

/// Everything the shared trees pack holds, checked and in GPU layouts.
pub struct TreeAssets {
    /// Every prototype's vertices, concatenated.
    pub vertices: Vec<TreeVertex>,
    /// Every prototype's bark then leaf indices, absolute.
    pub indices: Vec<u32>,
    /// Per prototype.
    pub prototypes: Vec<ProtoInfo>,
    /// Per species: bark and leaf mip chains.
    pub textures: Vec<(Vec<Rgba8Level>, Vec<Rgba8Level>)>,
    /// Per prototype, when the pack has impostors (`TIMP`).
    pub atlases: Vec<Atlas>,
}

impl TreeAssets {
    /// GPU bytes of everything (not counted against the tile budget: uploaded once).
    pub fn gpu_bytes(&self) -> u64 {
        let tex: usize = self.textures.iter().flat_map(|(b, l)| b.iter().chain(l)).map(|l| l.rgba.len()).sum();
        let atlas: usize = self.atlases.iter().flat_map(|a| &a.mips).map(|m| m.albedo.len() + m.normal.len() + 2 * m.depth.len()).sum();
        (self.vertices.len() * 32 + self.indices.len() * 4 + tex + atlas) as u64
    }
}

/// The registered shared decoder of the trees product.
pub fn decode_shared(pack: &Pack) -> Result<Arc<dyn Any + Send + Sync>, String> {
    decode(pack).map(|a| Arc::new(a) as Arc<dyn Any + Send + Sync>)
}

fn snorm16(v: f32) -> i16 {
    (v.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

/// Decodes and checks the shared trees pack.
pub fn decode(pack: &Pack) -> Result<TreeAssets, String> {
    let protos = pack.require::<TreePrototypes>().map_err(|e| e.to_string())?;
    let textures =
        pack.get::<TreeTextures>().map_err(|e| e.to_string())?.ok_or_else(|| format!("required section {} is missing", TreeTextures::KIND))?;
    let impostors = pack.get::<TreeImpostors>().map_err(|e| e.to_string())?;
    if textures.species.len() != protos.species.len() {
        return Err(format!("{} species but textures for {}", protos.species.len(), textures.species.len()));
    }
    for (s, t) in textures.species.iter().enumerate() {
        if t.bark.is_empty() || t.leaf.is_empty() {
            return Err(format!("species {s}: a texture without levels"));
        }
    }
    let mut assets = TreeAssets { vertices: Vec::new(), indices: Vec::new(), prototypes: Vec::new(), textures: Vec::new(), atlases: Vec::new() };
    for (i, p) in protos.prototypes.iter().enumerate() {
        let n = p.positions.len();
        if p.normals.len() != n || p.uvs.len() != n || p.ao.len() != n {
            return Err(format!("prototype {i}: vertex streams of different lengths"));
        }
        let base =
            u32::try_from(assets.vertices.len() + n).map(|_| assets.vertices.len() as u32).map_err(|_| "too many tree vertices".to_string())?;
        assets.vertices.extend((0..n).map(|v| TreeVertex {
            position: p.positions[v],
            normal: [snorm16(p.normals[v][0]), snorm16(p.normals[v][1]), snorm16(p.normals[v][2]), 0],
            uv: p.uvs[v],
            ao: [p.ao[v], 0, 0, 0],
        }));
        let bark_first = assets.indices.len() as u32;
        assets.indices.extend(p.bark_indices.iter().map(|&x| x + base));
        let leaf_first = assets.indices.len() as u32;
        assets.indices.extend(p.leaf_indices.iter().map(|&x| x + base));
        let half = p.height * 0.5;
        assets.prototypes.push(ProtoInfo {
            species: usize::from(p.species),
            bark_first,
            leaf_first,
            lods: p.lods.map(|l| [l.bark_index_count, l.leaf_index_count]),
            center: [0.0, 0.0, half],
            radius: (half * half + p.crown_radius * p.crown_radius).sqrt().max(1e-3),
        });
    }
    if let Some(imp) = impostors {
        if imp.atlases.len() != protos.prototypes.len() {
            return Err(format!("{} impostor atlases for {} prototypes", imp.atlases.len(), protos.prototypes.len()));
        }
        for (i, a) in imp.atlases.into_iter().enumerate() {
            let ok_size = |l: usize, s: u32| s == (a.grid * a.view_px) >> l;
            if a.grid < 2 || a.view_px == 0 || a.levels.is_empty() || !(a.radius > 0.0 && a.radius.is_finite()) {
                return Err(format!("atlas {i}: grid {}, {} px per view, {} levels, radius {}", a.grid, a.view_px, a.levels.len(), a.radius));
            }
            let mut mips = Vec::with_capacity(a.levels.len());
            for (l, level) in a.levels.into_iter().enumerate() {
                let texels = level.size as usize * level.size as usize;
                if level.size == 0
                    || !ok_size(l, level.size)
                    || level.albedo.len() != 4 * texels
                    || level.normal.len() != 4 * texels
                    || level.depth.len() != texels
                {
                    return Err(format!("atlas {i}: level {l} of side {} does not match its data", level.size));
                }
                let depth = level.depth.iter().map(|&d| f16_bits(f32::from(d) / 65535.0)).collect();
                mips.push(AtlasMip { size: level.size, albedo: level.albedo, normal: level.normal, depth });
            }
            let proto = &mut assets.prototypes[i];
            proto.center = a.center;
            proto.radius = a.radius;
            let layout = match a.layout {
                ImpostorLayout::Octahedral => Layout::Octahedral,
                ImpostorLayout::HemiOctahedral => Layout::HemiOctahedral,
            };
            assets.atlases.push(Atlas { layout, grid: a.grid, view_px: a.view_px, mips });
        }
    }
    assets.textures = textures.species.into_iter().map(|s| (s.bark, s.leaf)).collect();
    Ok(assets)
}
