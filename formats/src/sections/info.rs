use serde::{Deserialize, Serialize};

use super::{decode_bincode, encode_bincode};
use crate::container::SectionKind;
use crate::error::FormatError;
use crate::pack::Section;
use crate::tile_id::TileId;

/// What a pack is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PackKind {
    /// The world's manifest: bounds, the tile quadtree, hashes.
    Manifest,
    /// One terrain tile at LOD `level` (0 = finest); `x`, `y` index tiles of that level.
    Tile {
        /// LOD level, 0 the finest.
        level: u32,
        /// Column among the tiles of that level.
        x: u32,
        /// Row among the tiles of that level.
        y: u32,
    },
    /// A product's world-wide pack (tree prototypes and impostors, …), listed in the manifest's `SHRD`.
    Shared {
        /// The product that wrote it.
        product: String,
    },
}

/// Identifies a pack: every pack has one (`PINF`, required).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackInfo {
    /// Whether this is the manifest or which tile it holds.
    pub kind: PackKind,
    /// The name of the world the pack was baked from; every pack of one bake carries the same.
    pub world_name: String,
    /// Hash of exactly the inputs this pack was computed from (its cache key). A tile pack that did
    /// not change between two bakes keeps its bytes, so bake diffs show only real changes; the
    /// manifest's is the world hash.
    pub inputs_hash: u64,
}

impl Section for PackInfo {
    const KIND: SectionKind = SectionKind(*b"PINF");
    const REQUIRED: bool = true;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        encode_bincode(Self::KIND, self)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        decode_bincode(Self::KIND, raw)
    }
}

impl PackKind {
    /// The kind of tile `id`'s pack.
    pub fn tile(id: TileId) -> PackKind {
        PackKind::Tile { level: id.level, x: id.x, y: id.y }
    }

    /// The tile this pack holds, if it is a tile pack.
    pub fn tile_id(&self) -> Option<TileId> {
        match *self {
            PackKind::Tile { level, x, y } => Some(TileId::new(level, x, y)),
            PackKind::Manifest | PackKind::Shared { .. } => None,
        }
    }
}

impl PackInfo {
    pub(crate) fn summary(&self) -> super::Summary {
        let kind = match &self.kind {
            PackKind::Manifest => "manifest".to_string(),
            PackKind::Tile { level, x, y } => format!("tile L{level} ({x},{y})"),
            PackKind::Shared { product } => format!("shared ({product})"),
        };
        vec![("kind", kind), ("world", self.world_name.clone()), ("inputs_hash", format!("{:016x}", self.inputs_hash))]
    }
}
