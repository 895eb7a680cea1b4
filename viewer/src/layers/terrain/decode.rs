//! The terrain decoder: a pack's mesh, AO and irradiance sections → [`TerrainData`], on the loader
//! threads.

use kiln_formats::sections::{TerrainMesh, TileNode};
use kiln_formats::{Pack, Section, TileContents};

use super::vertex::{pack_vertices, TerrainVertex, GPU_VERTEX_BYTES};
use super::vertex_cache;
use crate::layers::{Decoded, Decoder};

/// GPU bytes per index (u32).
pub const INDEX_BYTES: u64 = 4;

/// A tile's terrain, ready for upload: the vertex streams already interleaved into the GPU layout
/// and the indices checked against them, so the render thread only copies bytes (packing them
/// there made frames hitch).
pub struct TerrainData {
    /// GPU vertices: position, normal, AO, baked irradiance (w = 0 where the pack has none).
    pub vertices: Vec<TerrainVertex>,
    /// Counter-clockwise seen from the air side; every index is below `vertices.len()`, and the
    /// count is a non-zero multiple of three.
    pub indices: Vec<u32>,
    /// Indices `[0, main_index_count)` are the surface; the rest are the pack's crack-hiding skirts,
    /// which the bake writes with both windings so that they show from both sides under back-face
    /// culling (the viewer adds no copies).
    pub main_index_count: u32,
}

impl Decoded for TerrainData {
    fn gpu_bytes(&self) -> u64 {
        self.vertices.len() as u64 * GPU_VERTEX_BYTES + self.indices.len() as u64 * INDEX_BYTES
    }
}

/// Decodes the terrain sections of a tile pack.
pub struct TerrainDecoder;

impl Decoder for TerrainDecoder {
    fn decode(&self, _pack: &Pack, tile: &TileContents) -> Result<Option<Box<dyn Decoded>>, String> {
        decode(tile).map(|d| Some(Box::new(d) as Box<dyn Decoded>))
    }

    /// From the manifest's counts, skirts not counted there: a slight underestimate that the
    /// residency's budget check catches once the tile is decoded.
    fn estimate_bytes(&self, node: &TileNode) -> u64 {
        u64::from(node.vertex_count) * GPU_VERTEX_BYTES + 3 * u64::from(node.triangle_count) * INDEX_BYTES
    }
}

/// Every tile has terrain: a pack without a mesh is an error, not an empty tile. [`TileContents::read`]
/// has checked the streams against each other (indices in range and whole triangles, one AO and
/// irradiance value per vertex); what is left is what the GPU needs beyond that.
pub fn decode(tile: &TileContents) -> Result<TerrainData, String> {
    let mesh = tile.mesh.as_ref().ok_or_else(|| format!("required section {} is missing", TerrainMesh::KIND))?;
    let vertex_count = mesh.positions.len();
    // An empty draw would be a tile that hides its ancestor yet shows nothing.
    if mesh.indices.is_empty() {
        return Err("the mesh has no triangles".to_string());
    }
    let ao: Vec<f32> = match &tile.ao {
        Some(ao) => ao.0.iter().map(|&v| f32::from(v) / 255.0).collect(),
        // Without baked occlusion every vertex is fully open.
        None => vec![1.0; vertex_count],
    };
    let irradiance = tile.irradiance.as_ref().map(|v| v.0.as_slice());
    let main_index_count = u32::try_from(mesh.main_index_count).map_err(|_| "too many indices".to_string())?;
    u32::try_from(vertex_count).map_err(|_| "too many vertices".to_string())?;
    let mut vertices = pack_vertices(&mesh.positions, &mesh.normals, &ao, irradiance);
    let mut indices = mesh.indices.clone();
    // Ordered for the GPU's vertex reuse here, off the render thread, which must not pay for it.
    // Surface and skirts separately: the skirts stay after `main_index_count`. The pack's skirts
    // are already double-sided (the bake owns that, SPEC.md): drawn as stored, so each skirt
    // triangle is drawn once per side and counted once against the budget.
    let (surface, skirts) = indices.split_at_mut(mesh.main_index_count);
    vertex_cache::reorder_triangles(surface, vertices.len());
    vertex_cache::reorder_triangles(skirts, vertices.len());
    vertex_cache::reorder_vertices(&mut vertices, &mut indices);
    Ok(TerrainData { vertices, indices, main_index_count })
}
