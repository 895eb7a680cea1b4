//! A tile pack's sections decoded together, with every invariant that ties them to each other.

use crate::error::{bad, FormatError};
use crate::pack::{Pack, PackBuilder, Section};
use crate::sections::{
    GrassTile, IrradianceGrid, PackInfo, PackKind, TerrainMesh, TileNode, TreeInstances, TreeLighting, VertexAo, VertexIrradiance, WaterTile,
};
use crate::tile_id::TileId;

/// Everything a tile pack holds, decoded and checked across sections: what `kiln verify` checks, and
/// what a loader (the viewer, `kiln export`) can use without checking anything again.
///
/// Section decoders check each section on its own (counts against lengths, indices < vertex count,
/// whole triangles, finite lattice positions, non-zero and non-overflowing volume dimensions);
/// [`TileContents::read`] adds what needs two sections: per-vertex streams have one value per mesh
/// vertex, and the pack says it is a tile.
#[derive(Clone, Debug, PartialEq)]
pub struct TileContents {
    /// The pack's identity; its kind is always [`PackKind::Tile`].
    pub info: PackInfo,
    /// The terrain mesh, if the tile has one.
    pub mesh: Option<TerrainMesh>,
    /// Per-vertex ambient occlusion, one value per mesh vertex.
    pub ao: Option<VertexAo>,
    /// Per-vertex irradiance, one value per mesh vertex.
    pub irradiance: Option<VertexIrradiance>,
    /// The tile's irradiance volume.
    pub volume: Option<IrradianceGrid>,
    /// The trees whose trunk base lies in the tile's footprint.
    pub trees: Option<TreeInstances>,
    /// Baked lighting of those trees, one entry per instance.
    pub tree_lighting: Option<TreeLighting>,
    /// The ground under the tile's grass and (level 0) its patch instances.
    pub grass: Option<GrassTile>,
    /// The water over the tile's footprint.
    pub water: Option<WaterTile>,
}

impl TileContents {
    /// Decodes every known section of a tile pack and checks the invariants between them; the first
    /// problem found is the error. Memory is bounded by the pack's raw budget (see
    /// [`crate::container::MAX_EXPANSION`]): each section is decoded once, one at a time.
    pub fn read(pack: &Pack) -> Result<Self, FormatError> {
        let info: PackInfo = pack.require()?;
        if !matches!(info.kind, PackKind::Tile { .. }) {
            return Err(bad(PackInfo::KIND, format!("{:?} pack is not a tile", info.kind)));
        }
        let mesh: Option<TerrainMesh> = pack.get()?;
        let ao: Option<VertexAo> = pack.get()?;
        let irradiance: Option<VertexIrradiance> = pack.get()?;
        let volume: Option<IrradianceGrid> = pack.get()?;
        let vertices = mesh.as_ref().map(|m| m.positions.len());
        let per_vertex = [(VertexAo::KIND, ao.as_ref().map(|a| a.0.len())), (VertexIrradiance::KIND, irradiance.as_ref().map(|v| v.0.len()))];
        for (kind, count) in per_vertex {
            match (count, vertices) {
                (Some(_), None) => return Err(bad(kind, "per-vertex values without a TMSH mesh")),
                (Some(c), Some(v)) if c != v => return Err(bad(kind, format!("{c} values for {v} mesh vertices"))),
                _ => {}
            }
        }
        if let Some(m) = &mesh {
            // Decoders guarantee these; checked again because a loader relies on them for indexing.
            if m.normals.len() != m.positions.len() || m.main_index_count > m.indices.len() {
                return Err(bad(TerrainMesh::KIND, "inconsistent stream lengths"));
            }
            if let Some(p) = m.positions.iter().find(|p| !p.iter().all(|c| c.is_finite())) {
                return Err(bad(TerrainMesh::KIND, format!("non-finite position {p:?}")));
            }
        }
        if let Some(v) = &irradiance {
            if let Some(i) = v.0.iter().position(|c| !c.iter().all(|x| x.is_finite() && *x >= 0.0)) {
                return Err(bad(VertexIrradiance::KIND, format!("vertex {i} has irradiance {:?}", v.0[i])));
            }
        }
        if let Some(g) = &volume {
            if g.ambient.len() != g.cells() || g.direct.len() != g.cells() {
                return Err(bad(IrradianceGrid::KIND, format!("{:?} cells but {} / {} values", g.dims, g.ambient.len(), g.direct.len())));
            }
        }
        let trees: Option<TreeInstances> = pack.get()?;
        let tree_lighting: Option<TreeLighting> = pack.get()?;
        match (&trees, &tree_lighting) {
            (None, Some(_)) => return Err(bad(TreeLighting::KIND, "tree lighting without TINS instances")),
            (Some(t), Some(l)) if t.instances.len() != l.0.len() => {
                return Err(bad(TreeLighting::KIND, format!("{} values for {} tree instances", l.0.len(), t.instances.len())))
            }
            _ => {}
        }
        if let Some(l) = &tree_lighting {
            if let Some(i) = l.0.iter().position(|c| !c.iter().flatten().all(|x| x.is_finite() && *x >= 0.0)) {
                return Err(bad(TreeLighting::KIND, format!("instance {i} has irradiance {:?}", l.0[i])));
            }
        }
        let grass: Option<GrassTile> = pack.get()?;
        if let (Some(g), PackKind::Tile { level, .. }) = (&grass, &info.kind) {
            if *level > 0 && !g.instances.is_empty() {
                return Err(bad(GrassTile::KIND, format!("{} patch instances in a level-{level} tile (only level 0 lists them)", g.instances.len())));
            }
        }
        let water: Option<WaterTile> = pack.get()?;
        Ok(TileContents { info, mesh, ao, irradiance, volume, trees, tree_lighting, grass, water })
    }

    /// The tile this pack holds.
    pub fn id(&self) -> TileId {
        // `read` refuses any other kind; a hand-built value without a tile kind reads as the root
        // of level 0 rather than panicking.
        self.info.kind.tile_id().unwrap_or(TileId::new(0, 0, 0))
    }

    /// An empty tile `id` of world `world_name`, for building a pack section by section.
    pub fn new(id: TileId, world_name: &str, inputs_hash: u64) -> Self {
        TileContents {
            info: PackInfo { kind: PackKind::tile(id), world_name: world_name.to_owned(), inputs_hash },
            mesh: None,
            ao: None,
            irradiance: None,
            volume: None,
            trees: None,
            tree_lighting: None,
            grass: None,
            water: None,
        }
    }

    /// The pack bytes of this tile: `PINF` and then each present section in the order the baker
    /// writes them (`TMSH`, `VXAO`, `TINS`, `VXIR`, `IRVL`, `TILT`, `GRSS`, `WTIL`), with the default codec. It is the one pack
    /// writer of tests and tools that make tiles without the baker, so their packs pass the same
    /// [`TileContents::read`] as baked ones; the baker assembles its packs from its products.
    pub fn to_pack(&self, writer_version: [u16; 3]) -> Result<Vec<u8>, FormatError> {
        let mut b = PackBuilder::new(writer_version);
        b.add(&self.info)?;
        if let Some(m) = &self.mesh {
            b.add(m)?;
        }
        if let Some(a) = &self.ao {
            b.add(a)?;
        }
        if let Some(t) = &self.trees {
            b.add(t)?;
        }
        if let Some(v) = &self.irradiance {
            b.add(v)?;
        }
        if let Some(g) = &self.volume {
            b.add(g)?;
        }
        if let Some(l) = &self.tree_lighting {
            b.add(l)?;
        }
        if let Some(g) = &self.grass {
            b.add(g)?;
        }
        if let Some(w) = &self.water {
            b.add(w)?;
        }
        b.to_bytes()
    }

    /// The manifest's node for this tile written as `pack` (the bytes of [`TileContents::to_pack`]):
    /// its path, the pack's hash and length, and the mesh's bounds and counts (zero without a mesh).
    pub fn node(&self, pack: &[u8], geometric_error: f32) -> TileNode {
        let id = self.id();
        let (bounds_min, bounds_max) = self.mesh.as_ref().and_then(|m| m.bounds()).unwrap_or(([0.0; 3], [0.0; 3]));
        TileNode {
            level: id.level,
            x: id.x,
            y: id.y,
            bounds_min,
            bounds_max,
            geometric_error,
            path: id.pack_path(),
            content_hash: xxhash_rust::xxh3::xxh3_64(pack),
            file_len: pack.len() as u64,
            vertex_count: self.mesh.as_ref().map_or(0, |m| m.positions.len() as u32),
            triangle_count: self.mesh.as_ref().map_or(0, |m| (m.main_index_count / 3) as u32),
        }
    }
}
