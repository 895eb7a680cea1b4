//! The terrain decoder: a pack's mesh, AO and irradiance sections → [`TerrainData`], on the loader
//! threads.

use kiln_formats::sections::{TerrainMesh, TileNode, VertexAo, VertexIrradiance};
use kiln_formats::Pack;

use super::vertex::{pack_vertices, TerrainVertex, GPU_VERTEX_BYTES};
use super::vertex_cache;
use crate::layers::{Decoded, Decoder};
use crate::streaming::TileKey;

/// GPU bytes per index (u32).
pub const INDEX_BYTES: u64 = 4;

/// A tile's terrain, ready for upload: the vertex streams already interleaved into the GPU layout
/// and the indices checked against them, so the render thread only copies bytes (packing 16 MB on
/// the render thread cost a 1080p frame over 10 ms on an H200).
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
    fn decode(&self, pack: &Pack, _key: TileKey) -> Result<Option<Box<dyn Decoded>>, String> {
        decode(pack).map(|d| Some(Box::new(d) as Box<dyn Decoded>))
    }

    /// From the manifest's counts, skirts not counted there: a slight underestimate that the
    /// residency's budget check catches once the tile is decoded.
    fn estimate_bytes(&self, node: &TileNode) -> u64 {
        u64::from(node.vertex_count) * GPU_VERTEX_BYTES + 3 * u64::from(node.triangle_count) * INDEX_BYTES
    }
}

/// Every tile has terrain: a pack without a mesh is an error, not an empty tile.
pub fn decode(pack: &Pack) -> Result<TerrainData, String> {
    let mesh = pack.require::<TerrainMesh>().map_err(|e| e.to_string())?;
    let vertex_count = mesh.positions.len();
    if mesh.normals.len() != vertex_count {
        return Err(format!("{} normals for {vertex_count} vertices", mesh.normals.len()));
    }
    // Out-of-range indices would read garbage on the GPU; partial triangles would shift every
    // triangle after them.
    if mesh.indices.is_empty()
        || !mesh.indices.len().is_multiple_of(3)
        || !mesh.main_index_count.is_multiple_of(3)
        || mesh.main_index_count > mesh.indices.len()
    {
        return Err(format!("{} indices ({} main) are not whole triangles", mesh.indices.len(), mesh.main_index_count));
    }
    if let Some(i) = mesh.indices.iter().copied().max().filter(|&i| i as usize >= vertex_count) {
        return Err(format!("index {i} out of range for {vertex_count} vertices"));
    }
    let ao: Vec<f32> = match pack.get::<VertexAo>().map_err(|e| e.to_string())? {
        Some(ao) if ao.0.len() == vertex_count => ao.0.iter().map(|&v| f32::from(v) / 255.0).collect(),
        Some(ao) => return Err(format!("{} ambient occlusion values for {vertex_count} vertices", ao.0.len())),
        // Without baked occlusion every vertex is fully open.
        None => vec![1.0; vertex_count],
    };
    let irradiance = match pack.get::<VertexIrradiance>().map_err(|e| e.to_string())? {
        Some(v) if v.0.len() == vertex_count => Some(v.0),
        Some(v) => return Err(format!("{} irradiance values for {vertex_count} vertices", v.0.len())),
        None => None,
    };
    let main_index_count = u32::try_from(mesh.main_index_count).map_err(|_| "too many indices".to_string())?;
    u32::try_from(vertex_count).map_err(|_| "too many vertices".to_string())?;
    let mut vertices = pack_vertices(&mesh.positions, &mesh.normals, &ao, irradiance.as_deref());
    let mut indices = mesh.indices;
    // Ordered for the GPU's vertex reuse here, off the render thread (about 1 ms per 10k triangles).
    // Surface and skirts separately: the skirts stay after `main_index_count`. The pack's skirts
    // are already double-sided (the bake owns that, SPEC.md): drawn as stored, so each skirt
    // triangle is drawn once per side and counted once against the budget.
    let (surface, skirts) = indices.split_at_mut(mesh.main_index_count);
    vertex_cache::reorder_triangles(surface, vertices.len());
    vertex_cache::reorder_triangles(skirts, vertices.len());
    vertex_cache::reorder_vertices(&mut vertices, &mut indices);
    Ok(TerrainData { vertices, indices, main_index_count })
}
