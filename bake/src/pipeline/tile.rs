//! One tile of one LOD level: mesh, skirts, AO, and its pack.

use kiln_formats::sections::{PackInfo, PackKind, TerrainMesh, VertexAo};
use kiln_formats::{FormatError, PackBuilder};
use thiserror::Error;
use xxhash_rust::xxh3::Xxh3;

use super::lod::{surface_deviation, TileId, Tiling};
use super::skirts::{add_skirts, BorderPlane};
use crate::ao::{ambient_occlusion, AoSettings, OccupancyField};
use crate::density::DensityVolume;
use crate::mc::{march_into, CellRange, IsoMesh, MarchError};

/// Everything a tile bake reads; shared read-only by all tiles.
pub struct TileInputs<'a> {
    pub world_name: &'a str,
    pub world_hash: u64,
    pub tiling: Tiling,
    pub volume: &'a DensityVolume,
    pub occupancy: &'a OccupancyField,
    pub ao: &'a AoSettings,
    pub writer_version: [u16; 3],
}

/// A baked tile: its pack bytes and what the manifest records about it.
pub struct BakedTile {
    pub id: TileId,
    pub pack: Vec<u8>,
    pub bounds: ([f32; 3], [f32; 3]),
    /// Deviation from the full-resolution surface (world units), before the quadtree makes it monotonic.
    pub own_error: f32,
    pub vertex_count: u32,
    pub triangle_count: u32,
    pub inputs_hash: u64,
}

/// Time spent in each step of a tile bake, summed over tiles by the caller.
#[derive(Clone, Copy, Debug, Default)]
pub struct TileTimings {
    pub mesh: f64,
    pub ao: f64,
    pub encode: f64,
}

/// Why a tile could not be baked.
#[derive(Debug, Error)]
pub enum TileError {
    #[error("tile L{} ({},{}): meshing: {source}", id.level, id.x, id.y)]
    Mesh { id: TileId, source: MarchError },
    #[error("tile L{} ({},{}): ambient occlusion: {source}", id.level, id.x, id.y)]
    Ao { id: TileId, source: crate::ao::AoError },
    #[error("tile L{} ({},{}): packing: {source}", id.level, id.x, id.y)]
    Pack { id: TileId, source: FormatError },
}

/// Bakes one tile. Pure: the result depends only on `inputs` and `id`. `scratch` is reused between
/// tiles of one worker to save allocations.
pub fn bake_tile(inputs: &TileInputs, id: TileId, scratch: &mut IsoMesh, timings: &mut TileTimings) -> Result<BakedTile, TileError> {
    let clock = std::time::Instant::now();
    let tiling = &inputs.tiling;
    let stride = Tiling::stride(id.level);
    let (min, cells) = tiling.cell_range(id);
    let block_origin = min.map(|v| v - stride);
    let block_dims = cells.map(|c| c + 3);
    let block = inputs.volume.block(block_origin, block_dims, stride);
    let range = CellRange { min, cells };
    march_into(&block, &range, scratch).map_err(|source| TileError::Mesh { id, source })?;

    // Positions stay in voxel units until packing; the pack lattice decides the final floats.
    let mut positions = scratch.positions.clone();
    let mut normals = scratch.normals.clone();
    let mut indices = scratch.indices.clone();
    let main_index_count = indices.len();
    let span = (tiling.tile_voxels as i32 * stride) as f32;
    let planes = [
        BorderPlane { axis: 0, at: min[0] as f32 },
        BorderPlane { axis: 0, at: min[0] as f32 + span },
        BorderPlane { axis: 1, at: min[1] as f32 },
        BorderPlane { axis: 1, at: min[1] as f32 + span },
    ];
    let skirt_sources = add_skirts(&mut positions, &mut normals, &mut indices, &planes, Tiling::skirt_depth(id.level));
    let main_vertices = positions.len() - skirt_sources.len();
    let own_error = if id.level == 0 {
        0.0
    } else {
        let cap = 2.0 * stride as f32;
        surface_deviation(inputs.volume.dims, &inputs.volume.data, &positions[..main_vertices], cap) * tiling.voxel_size
    };
    timings.mesh += clock.elapsed().as_secs_f64();

    let clock = std::time::Instant::now();
    let mut ao = ambient_occlusion(inputs.occupancy, &positions[..main_vertices], &normals[..main_vertices], inputs.ao).map_err(|source| TileError::Ao { id, source })?;
    let skirt_ao: Vec<f32> = skirt_sources.iter().map(|&s| ao[s as usize]).collect();
    ao.extend(skirt_ao);
    timings.ao += clock.elapsed().as_secs_f64();

    let clock = std::time::Instant::now();
    let lattice = tiling.lattice(id);
    let world_positions: Vec<[f32; 3]> = positions.iter().map(|p| lattice.snap(p.map(|v| v * tiling.voxel_size))).collect();
    let mesh = TerrainMesh { lattice, positions: world_positions, normals, indices, main_index_count };
    let bounds = mesh.bounds().unwrap_or_else(|| {
        let lo = min.map(|v| v as f32 * tiling.voxel_size);
        let hi = [lo[0] + span * tiling.voxel_size, lo[1] + span * tiling.voxel_size, (cells[2] as f32 * stride as f32) * tiling.voxel_size];
        (lo, hi)
    });
    let inputs_hash = hash_tile_inputs(inputs, id, &block.data);
    let pack_err = |source| TileError::Pack { id, source };
    let mut pack = PackBuilder::new(inputs.writer_version);
    pack.add(&PackInfo {
        kind: PackKind::Tile { level: id.level, x: id.x, y: id.y },
        world_name: inputs.world_name.to_owned(),
        world_hash: inputs.world_hash,
        inputs_hash,
    })
    .map_err(pack_err)?;
    pack.add(&mesh).map_err(pack_err)?;
    pack.add(&VertexAo::from_f32(&ao)).map_err(pack_err)?;
    let bytes = pack.to_bytes().map_err(pack_err)?;
    timings.encode += clock.elapsed().as_secs_f64();
    Ok(BakedTile {
        id,
        pack: bytes,
        bounds,
        own_error,
        vertex_count: mesh.positions.len() as u32,
        triangle_count: (main_index_count / 3) as u32,
        inputs_hash,
    })
}

/// Hash of the tile's own inputs: its density block (with halo), its place in the quadtree and the
/// AO settings. (AO also reads occupancy around the tile; the world hash covers that.)
fn hash_tile_inputs(inputs: &TileInputs, id: TileId, block: &[f32]) -> u64 {
    let mut h = Xxh3::new();
    h.update(&inputs.world_hash.to_le_bytes());
    h.update(&[id.level as u8]);
    h.update(&id.x.to_le_bytes());
    h.update(&id.y.to_le_bytes());
    let bytes: Vec<u8> = block.iter().flat_map(|v| v.to_le_bytes()).collect();
    h.update(&bytes);
    h.digest()
}
