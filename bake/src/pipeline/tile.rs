//! One tile of one LOD level: its geometry (mesh, skirts, AO) and its pack.

use kiln_formats::sections::{IrradianceGrid, PackInfo, PackKind, TerrainMesh, VertexAo, VertexIrradiance};
use kiln_formats::{FormatError, PackBuilder, Section};
use thiserror::Error;

use super::lod::{surface_deviation, TileId, Tiling};
use super::skirts::{add_skirts, BorderPlane};
use crate::ao::{ambient_occlusion, AoSettings, OccupancyField};
use crate::density::DensityVolume;
use crate::mc::{march_into, CellRange, IsoMesh, MarchError};

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

/// What the manifest records about a tile, beside its pack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileSummary {
    pub bounds: ([f32; 3], [f32; 3]),
    /// Deviation from the full-resolution surface (world units), before the quadtree makes it monotonic.
    pub own_error: f32,
    pub vertex_count: u32,
    pub triangle_count: u32,
}

impl TileSummary {
    const BYTES: usize = 36;
    fn write(&self, out: &mut Vec<u8>) {
        for v in self.bounds.0.iter().chain(&self.bounds.1).chain(std::iter::once(&self.own_error)) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.vertex_count.to_le_bytes());
        out.extend_from_slice(&self.triangle_count.to_le_bytes());
    }
    fn read(b: &[u8]) -> Option<Self> {
        let f = |i: usize| f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        let u = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        (b.len() >= Self::BYTES).then(|| TileSummary {
            bounds: ([f(0), f(1), f(2)], [f(3), f(4), f(5)]),
            own_error: f(6),
            vertex_count: u(7),
            triangle_count: u(8),
        })
    }
}

/// A tile's geometry: the raw bytes of its `TMSH` and `VXAO` sections and its summary. Kept as
/// section bytes so a cached tile packs byte-identically to a freshly computed one.
#[derive(Clone, Debug, PartialEq)]
pub struct TileGeometry {
    pub summary: TileSummary,
    pub mesh_raw: Vec<u8>,
    pub ao_raw: Vec<u8>,
}

impl TileGeometry {
    /// Serialised form for the stage cache.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TileSummary::BYTES + 8 + self.mesh_raw.len() + self.ao_raw.len());
        self.summary.write(&mut out);
        out.extend_from_slice(&(self.mesh_raw.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.mesh_raw);
        out.extend_from_slice(&self.ao_raw);
        out
    }
    /// Parses [`TileGeometry::to_bytes`]; `None` if inconsistent (then the tile is recomputed).
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let summary = TileSummary::read(b)?;
        let rest = &b[TileSummary::BYTES..];
        let n = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?) as usize;
        let rest = &rest[8..];
        if n > rest.len() {
            return None;
        }
        Some(TileGeometry { summary, mesh_raw: rest[..n].to_vec(), ao_raw: rest[n..].to_vec() })
    }
    /// The decoded mesh (for stages that read geometry, such as lighting).
    pub fn mesh(&self) -> Result<TerrainMesh, FormatError> {
        TerrainMesh::decode(&self.mesh_raw)
    }
}

/// A finished tile pack with its summary, as cached and as written.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedTile {
    pub id: TileId,
    pub summary: TileSummary,
    pub pack: Vec<u8>,
}

impl BakedTile {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TileSummary::BYTES + self.pack.len());
        self.summary.write(&mut out);
        out.extend_from_slice(&self.pack);
        out
    }
    pub fn from_bytes(id: TileId, b: &[u8]) -> Option<Self> {
        Some(BakedTile { id, summary: TileSummary::read(b)?, pack: b.get(TileSummary::BYTES..)?.to_vec() })
    }
}

/// Everything a tile's geometry stage reads; shared read-only by all tiles.
pub struct GeometryInputs<'a> {
    pub tiling: Tiling,
    pub volume: &'a DensityVolume,
    pub occupancy: &'a OccupancyField,
    pub ao: &'a AoSettings,
}

/// Time spent in each step, summed over tiles by the caller.
#[derive(Clone, Copy, Debug, Default)]
pub struct TileTimings {
    pub mesh: f64,
    pub ao: f64,
    pub encode: f64,
}

/// Meshes one tile, adds skirts, computes AO, and encodes the sections. Pure: the result depends
/// only on `inputs` and `id`. `scratch` is reused between tiles of one worker.
pub fn bake_geometry(inputs: &GeometryInputs, id: TileId, scratch: &mut IsoMesh, timings: &mut TileTimings) -> Result<TileGeometry, TileError> {
    let clock = std::time::Instant::now();
    let tiling = &inputs.tiling;
    let stride = Tiling::stride(id.level);
    let (min, cells) = tiling.cell_range(id);
    let block = inputs.volume.block(min.map(|v| v - stride), cells.map(|c| c + 3), stride);
    march_into(&block, &CellRange { min, cells }, scratch).map_err(|source| TileError::Mesh { id, source })?;

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
    let mut ao = ambient_occlusion(inputs.occupancy, &positions[..main_vertices], &normals[..main_vertices], inputs.ao)
        .map_err(|source| TileError::Ao { id, source })?;
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
    let pack_err = |source| TileError::Pack { id, source };
    let geometry = TileGeometry {
        summary: TileSummary { bounds, own_error, vertex_count: mesh.positions.len() as u32, triangle_count: (main_index_count / 3) as u32 },
        mesh_raw: mesh.encode().map_err(pack_err)?,
        ao_raw: VertexAo::from_f32(&ao).encode().map_err(pack_err)?,
    };
    timings.encode += clock.elapsed().as_secs_f64();
    Ok(geometry)
}

/// Identity of the bake a pack belongs to.
pub struct PackContext<'a> {
    pub world_name: &'a str,
    pub writer_version: [u16; 3],
}

/// Assembles a tile's pack from its geometry. `inputs_hash` identifies everything it was made from.
pub fn assemble_pack(ctx: &PackContext, id: TileId, geometry: &TileGeometry, lighting: &super::lighting::TileLighting, inputs_hash: u64) -> Result<BakedTile, TileError> {
    let pack_err = |source| TileError::Pack { id, source };
    let mut pack = PackBuilder::new(ctx.writer_version);
    pack.add(&PackInfo {
        kind: PackKind::Tile { level: id.level, x: id.x, y: id.y },
        world_name: ctx.world_name.to_owned(),
        inputs_hash,
    })
    .map_err(pack_err)?;
    pack.add_raw(TerrainMesh::KIND, TerrainMesh::REQUIRED, geometry.mesh_raw.clone()).map_err(pack_err)?;
    pack.add_raw(VertexAo::KIND, VertexAo::REQUIRED, geometry.ao_raw.clone()).map_err(pack_err)?;
    pack.add_raw(VertexIrradiance::KIND, VertexIrradiance::REQUIRED, lighting.vertex_raw.clone()).map_err(pack_err)?;
    pack.add_raw(IrradianceGrid::KIND, IrradianceGrid::REQUIRED, lighting.volume_raw.clone()).map_err(pack_err)?;
    Ok(BakedTile { id, summary: geometry.summary, pack: pack.to_bytes().map_err(pack_err)? })
}
