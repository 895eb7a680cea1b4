use serde::{Deserialize, Serialize};

use super::{decode_bincode, encode_bincode};
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::{PackBuilder, Section};
use crate::sections::{PackInfo, PackKind};
use crate::tile_id::TileId;

/// One node of the tile quadtree: a tile pack at some LOD level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileNode {
    /// LOD level: 0 is the finest; level k covers 2^k × 2^k level-0 tiles at 1/2^k resolution.
    pub level: u32,
    /// Column of the tile among the tiles of its level.
    pub x: u32,
    /// Row of the tile among the tiles of its level.
    pub y: u32,
    /// World-space bounds of the tile's geometry (including skirts).
    pub bounds_min: [f32; 3],
    /// Upper corner of those bounds; each axis at least `bounds_min`'s.
    pub bounds_max: [f32; 3],
    /// Largest distance (world units) between this node's surface and the full-resolution surface.
    pub geometric_error: f32,
    /// The pack's path relative to the output directory, with `/` separators.
    pub path: String,
    /// xxh3-64 of the pack file's bytes.
    pub content_hash: u64,
    /// Length of the pack file in bytes.
    pub file_len: u64,
    /// Vertices of the tile's mesh, skirt vertices included.
    pub vertex_count: u32,
    /// Triangles of the surface proper (skirts excluded).
    pub triangle_count: u32,
}

impl TileNode {
    /// The tile this node lists.
    pub fn id(&self) -> TileId {
        TileId::new(self.level, self.x, self.y)
    }
}

/// Most level-0 tiles along one axis a manifest may declare (a world axis of 2^16 tiles is far beyond
/// the baker's own limits), so a quadtree walk is bounded before it starts.
pub const MAX_TILES_PER_AXIS: u32 = 1 << 16;

/// The world manifest (`MNFT`, in `manifest.kpack`): what a viewer needs before any tile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The world's name, from its world file.
    pub world_name: String,
    /// xxh3-64 of the baker version and the world's embedded source files: changes whenever any input of
    /// the bake does; the manifest's `PINF` inputs hash.
    pub world_hash: u64,
    /// The Kiln version that baked it.
    pub baker_version: String,
    /// World units between neighbouring samples.
    pub voxel_size: f32,
    /// Samples of the density volume along X, Y and Z.
    pub volume_dims: [u32; 3],
    /// Level-0 tile edge in voxels.
    pub tile_voxels: u32,
    /// Level-0 tiles along X and Y (powers of two).
    pub tiles_per_axis: [u32; 2],
    /// Number of LOD levels; level `levels - 1` is the root.
    pub levels: u32,
    /// Lower corner of the world's volume in world units (the origin, as baked).
    pub bounds_min: [f32; 3],
    /// Upper corner of the world's volume: `volume_dims × voxel_size`.
    pub bounds_max: [f32; 3],
    /// Every tile of every level, sorted by (level, y, x).
    pub nodes: Vec<TileNode>,
}

impl Manifest {
    /// The node at (level, x, y), if baked.
    pub fn node(&self, level: u32, x: u32, y: u32) -> Option<&TileNode> {
        self.tile(TileId::new(level, x, y))
    }

    /// A `manifest.kpack` holding this manifest: `PINF` (kind manifest, inputs hash the world hash)
    /// and `MNFT`, the pack writer of tests and tools that make bakes without the baker (the baker
    /// also embeds the world's source files).
    pub fn to_pack(&self, writer_version: [u16; 3]) -> Result<Vec<u8>, FormatError> {
        let mut b = PackBuilder::new(writer_version);
        b.add(&PackInfo { kind: PackKind::Manifest, world_name: self.world_name.clone(), inputs_hash: self.world_hash })?;
        b.add(self)?;
        b.to_bytes()
    }

    /// The node of tile `id`, if baked.
    pub fn tile(&self, id: TileId) -> Option<&TileNode> {
        self.nodes.iter().find(|n| n.id() == id)
    }

    /// Level-`level` tiles along X and Y.
    pub fn tiles_at_level(&self, level: u32) -> [u32; 2] {
        TileId::tiles_at(self.tiles_per_axis, level)
    }

    /// How many nodes a complete quadtree of this manifest's tiling has. Bounded by the limits that
    /// decoding enforces (at most about 1.4 × [`MAX_TILES_PER_AXIS`]²), so callers can compare it
    /// with `nodes.len()` before looping over the grid.
    pub fn expected_node_count(&self) -> u64 {
        (0..self.levels.min(33))
            .map(|l| {
                let [x, y] = self.tiles_at_level(l);
                x as u64 * y as u64
            })
            .sum()
    }

    fn validate(&self) -> Result<(), FormatError> {
        let err = |r: String| Err(bad(Self::KIND, r));
        if !(self.voxel_size.is_finite() && self.voxel_size > 0.0) {
            return err(format!("voxel_size {} is not a positive number", self.voxel_size));
        }
        if let Some(t) = self.tiles_per_axis.iter().find(|&&t| t == 0 || t > MAX_TILES_PER_AXIS || !t.is_power_of_two()) {
            return err(format!("{t} tiles per axis is not a power of two in 1..={MAX_TILES_PER_AXIS}"));
        }
        // The baker's rule: level k has tiles >> k per axis, down to a single root tile.
        let levels = self.tiles_per_axis[0].max(self.tiles_per_axis[1]).trailing_zeros() + 1;
        if self.levels != levels {
            return err(format!("levels {} does not match {:?} tiles per axis (needs {levels})", self.levels, self.tiles_per_axis));
        }
        // The tiles cover the volume's columns exactly, and a volume has at least two samples of height.
        let columns = self.tiles_per_axis.map(|t| u64::from(t) * u64::from(self.tile_voxels));
        let [nx, ny, nz] = self.volume_dims;
        if self.tile_voxels == 0 || columns != [u64::from(nx), u64::from(ny)] || nz < 2 {
            return err(format!(
                "volume {:?} does not match {:?} tiles of {} voxels per axis",
                self.volume_dims, self.tiles_per_axis, self.tile_voxels
            ));
        }
        if !self.bounds_min.iter().chain(&self.bounds_max).all(|v| v.is_finite()) {
            return err(format!("bounds {:?}..{:?} are not finite", self.bounds_min, self.bounds_max));
        }
        for n in &self.nodes {
            if !n.bounds_min.iter().chain(&n.bounds_max).chain([&n.geometric_error]).all(|v| v.is_finite()) {
                return err(format!("node {} has non-finite bounds or error", n.id()));
            }
            let [tx, ty] = self.tiles_at_level(n.level);
            if n.level >= self.levels || n.x >= tx || n.y >= ty {
                return err(format!("node {} lies outside the {}-level quadtree", n.id(), self.levels));
            }
            if n.path.is_empty() || n.path.starts_with('/') || n.path.split('/').any(|c| c == ".." || c.is_empty()) {
                return err(format!("node {} has an unsafe path {:?}", n.id(), n.path));
            }
        }
        Ok(())
    }

    pub(crate) fn summary(&self) -> super::Summary {
        vec![
            ("world", self.world_name.clone()),
            ("world_hash", format!("{:016x}", self.world_hash)),
            ("baker", self.baker_version.clone()),
            ("volume", format!("{:?} voxels of {}", self.volume_dims, self.voxel_size)),
            ("tiles", format!("{}x{} of {} voxels, {} levels", self.tiles_per_axis[0], self.tiles_per_axis[1], self.tile_voxels, self.levels)),
            ("nodes", self.nodes.len().to_string()),
            ("bounds", format!("{:?}..{:?}", self.bounds_min, self.bounds_max)),
        ]
    }
}

impl Section for Manifest {
    const KIND: SectionKind = SectionKind(*b"MNFT");
    const REQUIRED: bool = true;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        encode_bincode(Self::KIND, self)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let m: Manifest = decode_bincode(Self::KIND, raw)?;
        m.validate()?;
        Ok(m)
    }
}
