//! The lighting stage: one global light-transport bake over the level-0 terrain, then per tile the
//! irradiance at its vertices (every LOD level) and its slice of the irradiance volume.
//!
//! Light transport is global: a tile's lighting reads the geometry of the whole world (its "halo" is
//! the world), because sky light entering a cave mouth several tiles away still reaches it. The bake
//! is cached as a whole per (level-0 geometry, lighting settings, seed) and per tile as section bytes.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_formats::sections::{IrradianceGrid, TerrainMesh, VertexIrradiance};
use kiln_formats::{FormatError, Section, SectionKind};
use rayon::prelude::*;

use super::engine::{KeyCtx, TileCtx, WorldCtx};
use super::inputs::settings_hash;
use super::product::{OccluderMesh, RawSection, TileOutput, TileProduct, WorldProduct, WorldValue};
use super::stage_cache::StageInputs;
use super::BakeError;

use super::lod::{TileId, Tiling};
use super::transport_parts::CachedParts;
use crate::le::{LeReader, LeWriter};
use crate::lighting::{
    bake_lookup_in_parts, AllPathsHere, IrradianceVolume, LightLookup, LightingError, Occluders, Parking, PathParts, PreparedScene, SceneMesh,
    VolumeDesc, LOOKUP_LAYOUT,
};

/// Version of light transport's and the per-tile lighting's algorithm: bump it whenever its output for the same inputs changes, so stale
/// cache entries are never used (and re-pin `tests/tests/golden.rs`).
const LIGHTING_VERSION: u32 = 13;

/// Irradiance-volume cells are this many voxels on a side (0.25 world units at the default voxel size).
pub const VOLUME_CELL_VOXELS: usize = 4;

/// Why lighting failed.
#[derive(Debug, thiserror::Error)]
pub enum LightingStageError {
    #[error("lighting: {0}")]
    Bake(#[from] LightingError),
    #[error("lighting: tile {id}: {source}")]
    Tile { id: TileId, source: FormatError },
}

/// The world's irradiance volume: world bounds, cells of [`VOLUME_CELL_VOXELS`].
pub fn volume_desc(tiling: &Tiling) -> VolumeDesc {
    let dims = tiling.dims.map(|d| d.div_ceil(VOLUME_CELL_VOXELS).max(1));
    let cell = VOLUME_CELL_VOXELS as f32 * tiling.voxel_size;
    VolumeDesc { min: [0.0; 3], max: dims.map(|d| d as f32 * cell), dims }
}

/// The world's light transport and where each level-0 tile's vertices sit in the mesh it was
/// baked over.
pub struct WorldLighting {
    /// What the tiles and the trees read of the bake (the tracer is dropped once it is done).
    pub lookup: LightLookup,
    /// Level-0 tile → index of its first vertex in the baked mesh.
    first_vertex: HashMap<TileId, u32>,
}

/// What light transport makes: the lookup, each level-0 tile's first vertex in the baked mesh (in
/// level-0 order) and how many occluder triangles it traced against (for the report).
struct Made {
    lookup: LightLookup,
    firsts: Vec<u32>,
    occluder_triangles: usize,
}

impl Made {
    /// The little-endian form shards that share a machine store (see [`crate::le`]).
    fn to_bytes(&self) -> Vec<u8> {
        let mut w = LeWriter::with_capacity(16 + 4 * self.firsts.len() + self.lookup.byte_len());
        w.u32s(&self.firsts);
        w.u64(self.occluder_triangles as u64);
        self.lookup.write(&mut w);
        w.finish()
    }

    /// Reads [`Made::to_bytes`]' form of a world with `tiles` level-0 tiles.
    fn from_bytes(bytes: &[u8], tiles: usize) -> Result<Made, String> {
        let mut r = LeReader::new(bytes);
        let firsts = r.u32s()?;
        if firsts.len() != tiles {
            return Err(format!("first vertices of {} tiles, expected {tiles}", firsts.len()));
        }
        let occluder_triangles = usize::try_from(r.u64()?).map_err(|e| e.to_string())?;
        let lookup = LightLookup::read(&mut r)?;
        r.end()?;
        Ok(Made { lookup, firsts, occluder_triangles })
    }
}

/// The hash of every product's light occluders (trees), `None` when there are none, so worlds
/// without any keep the key they had.
fn occluders_key(keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
    let all = keys.light_occluder_keys()?;
    Ok((!all.is_empty()).then(|| settings_hash(&all)))
}

/// The hash of the light medium's key (water), `None` without one, so worlds without water keep
/// the key they had.
fn medium_key(keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
    let all = keys.light_medium_keys()?;
    Ok((!all.is_empty()).then(|| settings_hash(&all)))
}

/// The scene light transport traces over the level-0 surfaces (main triangles, skirts excluded):
/// the tiles' meshes joined in their order, and the occluders, which block and reflect light;
/// with the first vertex of each tile in the joined mesh.
fn prepare_scene(
    level0: Vec<(TileId, Arc<TileOutput>)>,
    occluders: &OccluderMesh,
    parking: Parking,
) -> Result<(PreparedScene, Vec<u32>), LightingStageError> {
    let mut clusters = Vec::with_capacity(level0.len());
    let mut first_vertex = Vec::with_capacity(level0.len());
    // The joined mesh lives only while the scene is prepared from it.
    let scene = {
        // Decoded on every thread (a tile at a time was a one-thread step of the stage), joined in
        // tile order.
        let decoded: Vec<(TileId, TerrainMesh)> = level0
            .into_par_iter()
            .map(|(id, geometry)| match TerrainMesh::decode(geometry.section(TerrainMesh::KIND).unwrap_or_default()) {
                Ok(mesh) => Ok((id, mesh)),
                Err(source) => Err(LightingStageError::Tile { id, source }),
            })
            .collect::<Result<_, _>>()?;
        let vertex_count = decoded.iter().map(|(_, m)| m.positions.len()).sum();
        let index_count = decoded.iter().map(|(_, m)| m.main_index_count).sum();
        // Each tile copied into its place on any thread (fresh zero pages until written).
        let (mut positions, mut indices) = (vec![[0.0f32; 3]; vertex_count], vec![0u32; index_count]);
        let (mut pos_rest, mut idx_rest) = (positions.as_mut_slice(), indices.as_mut_slice());
        let mut places = Vec::with_capacity(decoded.len());
        for (_, mesh) in &decoded {
            let base = (vertex_count - pos_rest.len()) as u32;
            first_vertex.push(base);
            clusters.push((mesh.main_index_count / 3) as u32);
            let (pos, rest) = std::mem::take(&mut pos_rest).split_at_mut(mesh.positions.len());
            let (idx, rest_idx) = std::mem::take(&mut idx_rest).split_at_mut(mesh.main_index_count);
            (pos_rest, idx_rest) = (rest, rest_idx);
            places.push((pos, idx, mesh, base));
        }
        places.into_par_iter().for_each(|(pos, idx, mesh, base)| {
            pos.copy_from_slice(&mesh.positions);
            idx.iter_mut().zip(&mesh.indices[..mesh.main_index_count]).for_each(|(out, &i)| *out = i + base);
        });
        drop(decoded);
        // The tiles' decoded meshes were small allocations of the allocator's arenas, freed
        // there but not given back to the OS: the scene's build would not reuse them.
        crate::mem::return_freed_memory();
        let occluders = (!occluders.indices.is_empty()).then_some(Occluders {
            positions: &occluders.positions,
            indices: &occluders.indices,
            albedo: &occluders.albedo,
            clusters: &occluders.clusters,
        });
        // Given, not lent: the scene lets go of the joined mesh while the BVH is built.
        let mesh = SceneMesh { positions: positions.into(), indices: indices.into(), materials: None, clusters: &clusters, occluders };
        PreparedScene::new(mesh, parking)?
    };
    Ok((scene, first_vertex))
}

/// One tile's lighting from the world bake: `ambient + lights` at every vertex (sun and moon direct
/// light is left to the renderer, which draws it with shadows), and the volume cells over the
/// tile's footprint (one cell of margin), taking every 2^level-th cell in X and Y.
pub fn tile_lighting(world: &WorldLighting, tiling: &Tiling, id: TileId, mesh_raw: &[u8]) -> Result<TileOutput, LightingStageError> {
    let err = |source| LightingStageError::Tile { id, source };
    let baked = &world.lookup;
    let mesh = TerrainMesh::decode(mesh_raw).map_err(err)?;
    // Skirt vertices hang below the surface (inside the rock), where the bake has no light to
    // give: only the surface is queried, and skirts take the irradiance of the border vertex they
    // hang from, as they take its AO.
    let skirts = skirt_sources(&mesh.positions, &mesh.indices, mesh.main_index_count);
    let mut is_skirt = vec![false; mesh.positions.len()];
    skirts.iter().for_each(|&(s, _)| is_skirt[s as usize] = true);
    let surface: Vec<u32> = (0..mesh.positions.len() as u32).filter(|&v| !is_skirt[v as usize]).collect();
    let positions: Vec<[f32; 3]> = surface.iter().map(|&v| mesh.positions[v as usize]).collect();
    let normals: Vec<[f32; 3]> = surface.iter().map(|&v| mesh.normals[v as usize]).collect();
    // A level-0 tile's vertices are the baked mesh's own: read them without a search.
    let lit = match world.first_vertex.get(&id) {
        Some(&first) => baked.filtered_at_baked_vertices(&positions, &normals, &surface.iter().map(|&v| first + v).collect::<Vec<_>>())?,
        None => baked.filtered_at(&positions, &normals)?,
    };
    let mut vertex = vec![[0.0f32; 3]; mesh.positions.len()];
    for (&v, i) in surface.iter().zip(lit) {
        vertex[v as usize] = [0, 1, 2].map(|c| i.ambient[c] + i.lights[c]);
    }
    for (skirt, source) in skirts {
        vertex[skirt as usize] = vertex[source as usize];
    }
    let vertex = VertexIrradiance(vertex);
    let grid = slice_volume(baked.volume(), tiling, id);
    Ok(TileOutput {
        sections: vec![
            RawSection { kind: VertexIrradiance::KIND, required: VertexIrradiance::REQUIRED, bytes: vertex.encode().map_err(err)? },
            RawSection { kind: IrradianceGrid::KIND, required: IrradianceGrid::REQUIRED, bytes: grid.encode().map_err(err)? },
        ],
        summary: None,
    })
}

/// `transport`: light transport over the whole world's level-0 surfaces. Not stored in the cache
/// (its photon records are hundreds of megabytes); each tile's lighting, which reads it, is.
pub struct TransportProduct;

/// Indices of the level-0 tiles, whose surfaces light travels over.
fn level0(keys: &KeyCtx) -> Vec<usize> {
    let tiles = &keys.plan().tiles;
    (0..tiles.len()).filter(|&i| tiles[i].level == 0).collect()
}

impl WorldProduct for TransportProduct {
    fn name(&self) -> &'static str {
        "transport"
    }
    fn reads_light_inputs(&self) -> bool {
        true
    }
    fn report_stage(&self) -> &'static str {
        "lighting"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let plan = keys.plan();
        let spec = &plan.world.spec;
        let geometry = keys.tile_keys("geometry")?;
        let mut h = kiln_cache::store::KeyHasher::default();
        for i in level0(keys) {
            h.key(geometry[i].key());
        }
        Ok(StageInputs::new("lighting", LIGHTING_VERSION)
            .with("level-0 geometry", h.finish().0)
            .with("lighting settings", settings_hash(&spec.lighting))
            .with("seed", settings_hash(&spec.seed))
            .with("volume", settings_hash(&volume_desc(&plan.tiling)))
            .with_some("light occluders", occluders_key(keys)?)
            .with_some("light medium", medium_key(keys)?))
    }
    fn tile_needs(&self, keys: &KeyCtx) -> Vec<(&'static str, Vec<usize>)> {
        vec![("geometry", level0(keys))]
    }
    fn resolves_its_tiles(&self) -> bool {
        true
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let plan = ctx.plan();
        let spec = &plan.world.spec;
        let failed = |source| BakeError::Lighting { world: plan.world_name(), source };
        let level0 = level0(ctx);
        let ids: Vec<TileId> = level0.iter().map(|&i| plan.tiles[i]).collect();
        // The light tracer's seed: derived from the world seed for this stage only.
        let seed = kiln_cache::store::KeyHasher::default().str("lighting").u64(spec.seed).u64(spec.lighting.noise_seed).finish().0 as u64;
        let water = ctx.light_medium()?;
        let transport = ctx.world_key("transport")?.key().0;
        // What the scene is made of is read only where the transport is made.
        let make = |parts: &dyn PathParts| -> Result<Made, BakeError> {
            let meshes = ctx.resolved_tile_outputs("geometry", &level0)?;
            if meshes.iter().any(|m| m.section(TerrainMesh::KIND).is_none()) {
                return Err(plan.internal("a level-0 tile has no mesh"));
            }
            let occluders = ctx.light_occluders()?;
            // Transport holds its own copies of all it reads from here on, and is where a bake
            // peaks: the density volume and the trees pack are read back from the cache by later
            // steps.
            ctx.release_stored_values();
            // A bake asking for the least memory parks what tracing does not read on disk.
            let parking = if ctx.saves_memory() { Parking::InTempFile } else { Parking::InMemory };
            let (scene, firsts) = prepare_scene(ids.iter().copied().zip(meshes).collect(), &occluders, parking).map_err(failed)?;
            // The scene holds what it needs of them (the trees' crowns: millions of triangles).
            drop(occluders);
            let occluder_triangles = scene.occluder_triangles();
            let desc = volume_desc(&plan.tiling);
            let lookup = bake_lookup_in_parts(scene, (desc.min, desc.max), &desc, &spec.lighting, seed, water.as_ref(), parts)
                .map_err(|e| failed(e.into()))?;
            Ok(Made { lookup, firsts, occluder_triangles })
        };
        // Shards on machines of their own trace a part of each phase each and add up everyone's
        // parts from the cache. Shards that share a machine make transport once, on the machine's
        // threads, tracing every path there as one process would; the others wait and read its
        // lookup.
        let Made { lookup, firsts, occluder_triangles } = match ctx.machine_once() {
            None if ctx.role().is_shard() => make(&CachedParts { cache: ctx.cache(), transport, version: LIGHTING_VERSION, role: ctx.role() })?,
            None => make(&AllPathsHere)?,
            Some(once) => {
                let key = StageInputs::new("lighting lookup", LIGHTING_VERSION).with("layout", LOOKUP_LAYOUT as u128).with("transport", transport);
                let made = once.make("lighting lookup", &key, || make(&AllPathsHere), Made::to_bytes, |b| Made::from_bytes(&b, level0.len()))?;
                // A shard that read the lookup lets go of what it holds as its maker did.
                ctx.release_stored_values();
                made
            }
        };
        let first_vertex = ids.into_iter().zip(firsts).collect();
        let world = WorldLighting { lookup, first_vertex };
        let s = world.lookup.stats();
        let mut detail = format!("{} paths, {} rays over {:.0} square units", s.paths.iter().sum::<u64>(), s.flights, s.area);
        if occluder_triangles > 0 {
            detail += &format!(", {occluder_triangles} occluder triangles");
        }
        if let Some(w) = &water {
            detail += &format!(", through water at z = {}", w.level);
        }
        Ok((Box::new(world), detail))
    }
}

/// `lighting`: a tile's irradiance at its vertices (`VXIR`) and its slice of the irradiance
/// volume (`IRVL`), read from the world's transport.
pub struct LightingProduct;

impl TileProduct for LightingProduct {
    fn name(&self) -> &'static str {
        "lighting"
    }
    fn report_stage(&self) -> &'static str {
        "lighting"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new("tile lighting", LIGHTING_VERSION)
            .with("lighting", keys.world_key("transport")?.key().0)
            .with("geometry", keys.tile_keys("geometry")?[tile].key().0))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["transport"]
    }
    fn tile_needs(&self) -> &'static [&'static str] {
        &["geometry"]
    }
    fn bake(&self, tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let plan = ctx.plan();
        let geometry = ctx.output("geometry")?;
        let mesh = geometry.section(TerrainMesh::KIND).ok_or_else(|| plan.internal("the tile has no mesh"))?;
        let world = ctx.world::<WorldLighting>("transport")?;
        tile_lighting(&world, &plan.tiling, plan.tiles[tile], mesh).map_err(|source| BakeError::Lighting { world: plan.world_name(), source })
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[VertexIrradiance::KIND, IrradianceGrid::KIND]
    }
    fn check_packed(&self, vertices: u64, raw_len: &dyn Fn(SectionKind) -> u64) -> Result<(), String> {
        let (vertex, grid) = (raw_len(VertexIrradiance::KIND), raw_len(IrradianceGrid::KIND));
        if vertex != 4 * vertices {
            return Err(format!("VXIR holds {vertex} bytes for {vertices} vertices"));
        }
        if grid < 36 || (grid - 36) % 48 != 0 {
            return Err(format!("IRVL holds {grid} bytes, not 36 + 48·N"));
        }
        Ok(())
    }
    /// Cached lighting must decode, its volume slice must have this tile's box and dimensions, and
    /// it must hold one value per vertex of the geometry it is packed with.
    fn validate(&self, tile: usize, output: &TileOutput, keys: &KeyCtx) -> Result<(), String> {
        let plan = keys.plan();
        let vertex = VertexIrradiance::decode(output.section(VertexIrradiance::KIND).ok_or("no VXIR section")?)
            .map_err(|e| format!("vertex irradiance: {e}"))?;
        let grid =
            IrradianceGrid::decode(output.section(IrradianceGrid::KIND).ok_or("no IRVL section")?).map_err(|e| format!("irradiance volume: {e}"))?;
        let slice = slice_box(&plan.tiling, plan.tiles[tile]);
        if (grid.min, grid.max, grid.dims) != slice {
            return Err(format!(
                "irradiance volume spans {:?}..{:?} in {:?} cells, not this tile's {:?}..{:?} in {:?}",
                grid.min, grid.max, grid.dims, slice.0, slice.1, slice.2
            ));
        }
        let vertices = keys.tile_output("geometry", tile).map_err(|e| e.to_string())?.summary.map_or(0, |s| s.vertex_count as usize);
        if vertex.0.len() != vertices {
            return Err(format!("{} irradiance values for {vertices} vertices", vertex.0.len()));
        }
        Ok(())
    }
}

/// `(skirt vertex, border vertex it hangs from)` for every vertex used only by skirt triangles
/// (the indices past `main_index_count`): the nearest main-surface vertex among those sharing a
/// skirt triangle with it, which is its border vertex (the quad's other border corner is a whole
/// edge further away). Ties go to the lower index.
fn skirt_sources(positions: &[[f32; 3]], indices: &[u32], main_index_count: usize) -> Vec<(u32, u32)> {
    let mut on_surface = vec![false; positions.len()];
    for &i in &indices[..main_index_count] {
        on_surface[i as usize] = true;
    }
    let mut nearest: std::collections::BTreeMap<u32, (f32, u32)> = std::collections::BTreeMap::new();
    for tri in indices[main_index_count..].chunks_exact(3) {
        for &s in tri.iter().filter(|&&v| !on_surface[v as usize]) {
            for &m in tri.iter().filter(|&&v| on_surface[v as usize]) {
                let d: f32 = (0..3).map(|a| (positions[s as usize][a] - positions[m as usize][a]).powi(2)).sum();
                let best = nearest.entry(s).or_insert((d, m));
                if (d, m) < *best {
                    *best = (d, m);
                }
            }
        }
    }
    nearest.into_iter().map(|(s, (_, m))| (s, m)).collect()
}

fn slice_volume(v: &IrradianceVolume, tiling: &Tiling, id: TileId) -> IrradianceGrid {
    let [nx, ny, nz] = v.dims;
    let layout = slice_layout(v.min, v.max, v.dims, tiling, id);
    let mut ambient = Vec::with_capacity(layout.xs.len() * layout.ys.len() * nz);
    let mut direct = Vec::with_capacity(ambient.capacity());
    for z in 0..nz {
        for &y in &layout.ys {
            for &x in &layout.xs {
                let i = x + nx * (y + ny * z);
                ambient.push(v.ambient[i]);
                direct.push(v.direct[i]);
            }
        }
    }
    IrradianceGrid { min: layout.min, max: layout.max, dims: layout.dims, ambient, direct }
}

/// The cells of a volume that a tile's slice takes, and the slice's box and dimensions.
struct SliceLayout {
    xs: Vec<usize>,
    ys: Vec<usize>,
    min: [f32; 3],
    max: [f32; 3],
    dims: [u32; 3],
}

fn slice_layout(vmin: [f32; 3], vmax: [f32; 3], vdims: [usize; 3], tiling: &Tiling, id: TileId) -> SliceLayout {
    let [nx, ny, nz] = vdims;
    let step = 1usize << id.level;
    let (min, cells) = tiling.cell_range(id);
    let span = cells[0] * step; // voxels
    let c0 = |m: i32| (m as usize / VOLUME_CELL_VOXELS).saturating_sub(step);
    let (x0, y0) = (c0(min[0]), c0(min[1]));
    let x1 = ((min[0] as usize + span).div_ceil(VOLUME_CELL_VOXELS) + step).min(nx);
    let y1 = ((min[1] as usize + span).div_ceil(VOLUME_CELL_VOXELS) + step).min(ny);
    let xs: Vec<usize> = (x0..x1).step_by(step).collect();
    let ys: Vec<usize> = (y0..y1).step_by(step).collect();
    let cell = [0, 1, 2].map(|a| (vmax[a] - vmin[a]) / vdims[a].max(1) as f32);
    // The slice's cells keep their centres; the grid box spans them with the stride as cell size.
    let sx = cell[0] * step as f32;
    let sy = cell[1] * step as f32;
    let lo = [vmin[0] + (x0 as f32 + 0.5) * cell[0] - 0.5 * sx, vmin[1] + (y0 as f32 + 0.5) * cell[1] - 0.5 * sy, vmin[2]];
    let max = [lo[0] + xs.len() as f32 * sx, lo[1] + ys.len() as f32 * sy, vmax[2]];
    let dims = [xs.len() as u32, ys.len() as u32, nz as u32];
    SliceLayout { xs, ys, min: lo, max, dims }
}

/// The box and dimensions of a tile's `IRVL` slice, as [`tile_lighting`] makes it: what a cached
/// tile lighting entry must hold.
pub fn slice_box(tiling: &Tiling, id: TileId) -> ([f32; 3], [f32; 3], [u32; 3]) {
    let d = volume_desc(tiling);
    let l = slice_layout(d.min, d.max, d.dims, tiling, id);
    (l.min, l.max, l.dims)
}

#[cfg(test)]
#[path = "lighting_water_tests.rs"]
mod water_tests;

#[cfg(test)]
mod tests {
    use super::super::skirts::{add_skirts, BorderPlane};
    use super::skirt_sources;

    #[test]
    fn skirt_vertices_are_traced_back_to_the_border_vertex_they_hang_from() {
        // A 4x4 grid of unit quads facing up, skirted on all four borders (corners twice).
        let n = 4u32;
        let mut positions: Vec<[f32; 3]> = (0..=n).flat_map(|y| (0..=n).map(move |x| [x as f32, y as f32, 0.0])).collect();
        let mut normals = vec![[0.0, 0.0, 1.0]; positions.len()];
        let mut indices = Vec::new();
        for y in 0..n {
            for x in 0..n {
                let i = y * (n + 1) + x;
                let j = i + n + 1;
                indices.extend_from_slice(&[i, i + 1, j + 1, i, j + 1, j]);
            }
        }
        let (main_vertices, main_index_count) = (positions.len(), indices.len());
        let planes = [0.0, 4.0].into_iter().flat_map(|at| [0, 1].map(|axis| BorderPlane { axis, at })).collect::<Vec<_>>();
        let sources = add_skirts(&mut positions, &mut normals, &mut indices, &planes, 1.0);
        assert_eq!(sources.len(), 4 * 5, "five skirt vertices per border");
        let expected: Vec<(u32, u32)> = sources.iter().enumerate().map(|(k, &s)| ((main_vertices + k) as u32, s)).collect();
        assert_eq!(skirt_sources(&positions, &indices, main_index_count), expected);
    }
}
