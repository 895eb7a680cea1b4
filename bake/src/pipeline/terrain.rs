//! The terrain product: each tile's surface (marching cubes at the level's stride, skirts against
//! coarser neighbours, quantised to the level's lattice) with per-vertex ambient occlusion, as the
//! `TMSH` and `VXAO` sections.

use std::cell::RefCell;
use std::sync::Mutex;

use kiln_formats::sections::{TerrainMesh, VertexAo};
use kiln_formats::{Section, SectionKind};

use super::engine::{KeyCtx, TileCtx};
use super::inputs::{settings_hash, TileInputHashes};
use super::lod::{surface_deviation, TileId, Tiling};
use super::product::{RawSection, TileOutput, TileProduct};
use super::skirts::{add_skirts, BorderPlane};
use super::stage_cache::StageInputs;
use super::tile::{TileError, TileSummary};
use super::volume::Volume;
use super::BakeError;
use crate::ao::{ambient_occlusion, AoSettings, OccupancyField};
use crate::density::DensityVolume;
use crate::mc::{march_into, CellRange, IsoMesh};

/// Version of a tile's geometry's (mesh, skirts, AO, quantisation) algorithm: bump it whenever its output for the same inputs changes, so stale
/// cache entries are never used (and re-pin `tests/tests/golden.rs`).
const GEOMETRY_VERSION: u32 = 3;

/// `geometry`: one tile's mesh and AO. Keeps the CPU time of each step for the bake report.
#[derive(Default)]
pub struct TerrainProduct {
    timings: Mutex<TileTimings>,
}

thread_local! {
    /// Marching cubes' buffers, reused by the tiles one worker thread meshes in turn (a job stolen
    /// while one is out finds the default, empty buffers).
    static SCRATCH: RefCell<IsoMesh> = RefCell::new(IsoMesh::default());
}

impl TileProduct for TerrainProduct {
    fn name(&self) -> &'static str {
        "geometry"
    }
    fn report_stage(&self) -> &'static str {
        "tiles"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let plan = keys.plan();
        let id = plan.tiles[tile];
        let t = &plan.tiling;
        let h = keys.world::<Vec<TileInputHashes>>("tile-inputs")?[tile];
        Ok(StageInputs::new("geometry", GEOMETRY_VERSION)
            .with("tile", settings_hash(&(id.level, id.x, id.y, t.tile_voxels, t.voxel_size.to_bits())))
            .with("density", h.density)
            .with("occupancy", h.occupancy)
            .with("ao settings", settings_hash(&plan.world.spec.ao)))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["volume"]
    }
    fn bake(&self, tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let plan = ctx.plan();
        let v = ctx.world::<Volume>("volume")?;
        let inputs = GeometryInputs { tiling: plan.tiling, volume: &v.density, occupancy: &v.occupancy, ao: &plan.world.spec.ao };
        let mut t = TileTimings::default();
        // The buffers are taken out for the call rather than borrowed through it: a worker waiting
        // inside this tile's parallel AO may steal another tile's job on the same thread.
        let mut scratch = SCRATCH.with(RefCell::take);
        let out = bake_geometry(&inputs, plan.tiles[tile], &mut scratch, &mut t);
        SCRATCH.with(|s| s.replace(scratch));
        let out = out.map_err(|source| BakeError::Tile { world: plan.world_name(), source })?;
        let mut sum = self.timings.lock().expect("timings lock");
        *sum = TileTimings { mesh: sum.mesh + t.mesh, ao: sum.ao + t.ao, encode: sum.encode + t.encode };
        Ok(out)
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[TerrainMesh::KIND, VertexAo::KIND]
    }
    fn check_packed(&self, vertices: u64, raw_len: &dyn Fn(SectionKind) -> u64) -> Result<(), String> {
        match raw_len(VertexAo::KIND) {
            n if n == vertices => Ok(()),
            n => Err(format!("VXAO holds {n} bytes for {vertices} vertices")),
        }
    }
    /// A cached geometry must decode, agree with its summary, and lie on this tile's own lattice
    /// (another tile's geometry is well-formed too).
    fn validate(&self, tile: usize, output: &TileOutput, keys: &KeyCtx) -> Result<(), String> {
        let plan = keys.plan();
        let summary = output.summary.ok_or("no tile summary")?;
        let mesh = TerrainMesh::decode(output.section(TerrainMesh::KIND).ok_or("no TMSH section")?).map_err(|e| format!("mesh: {e}"))?;
        let ao = VertexAo::decode(output.section(VertexAo::KIND).ok_or("no VXAO section")?).map_err(|e| format!("ambient occlusion: {e}"))?;
        let lattice = plan.tiling.lattice(plan.tiles[tile]);
        if mesh.lattice != lattice {
            return Err(format!("mesh lies on lattice {:?}, not this tile's {lattice:?}", mesh.lattice));
        }
        let (v, t) = (mesh.positions.len(), mesh.main_index_count / 3);
        if v != summary.vertex_count as usize || t != summary.triangle_count as usize || ao.0.len() != v {
            return Err(format!(
                "mesh has {v} vertices and {t} triangles, AO {} values, summary says {} vertices and {} triangles",
                ao.0.len(),
                summary.vertex_count,
                summary.triangle_count
            ));
        }
        if mesh.positions.iter().flatten().any(|c| !c.is_finite()) || !summary.own_error.is_finite() {
            return Err("non-finite position or error".into());
        }
        Ok(())
    }
    fn report_detail(&self) -> Option<String> {
        let t = self.timings.lock().expect("timings lock");
        Some(format!("cpu: mesh {:.2}s, ao {:.2}s, encode {:.2}s", t.mesh, t.ao, t.encode))
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
pub fn bake_geometry(inputs: &GeometryInputs, id: TileId, scratch: &mut IsoMesh, timings: &mut TileTimings) -> Result<TileOutput, TileError> {
    let clock = std::time::Instant::now();
    let tiling = &inputs.tiling;
    let stride = Tiling::stride(id.level);
    let (min, cells) = tiling.cell_range(id);
    let block = inputs.volume.block(min.map(|v| v - stride), cells.map(|c| c + 3), stride);
    march_into(&block, &CellRange { min, cells }, tiling.edge_steps(id), scratch).map_err(|source| TileError::Mesh { id, source })?;

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
    let summary = TileSummary { bounds, own_error, vertex_count: mesh.positions.len() as u32, triangle_count: (main_index_count / 3) as u32 };
    let output = TileOutput {
        sections: vec![
            RawSection { kind: TerrainMesh::KIND, required: TerrainMesh::REQUIRED, bytes: mesh.encode().map_err(pack_err)? },
            RawSection { kind: VertexAo::KIND, required: VertexAo::REQUIRED, bytes: VertexAo::from_f32(&ao).encode().map_err(pack_err)? },
        ],
        summary: Some(summary),
    };
    timings.encode += clock.elapsed().as_secs_f64();
    Ok(output)
}
