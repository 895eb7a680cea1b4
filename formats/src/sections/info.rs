use serde::{Deserialize, Serialize};

use super::{decode_bincode, encode_bincode};
use crate::container::SectionKind;
use crate::error::FormatError;
use crate::pack::Section;

/// What a pack is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PackKind {
    /// The world's manifest: bounds, the tile quadtree, hashes.
    Manifest,
    /// One terrain tile at LOD `level` (0 = finest); `x`, `y` index tiles of that level.
    Tile { level: u32, x: u32, y: u32 },
}

/// Identifies a pack: every pack has one (`PINF`, required).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackInfo {
    pub kind: PackKind,
    pub world_name: String,
    /// Hash of the world's resolved definition (world file, brushes, heightmap).
    pub world_hash: u64,
    /// Hash of exactly the inputs this pack was computed from (its cache key).
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

impl PackInfo {
    pub(crate) fn summary(&self) -> Vec<(&'static str, String)> {
        let kind = match &self.kind {
            PackKind::Manifest => "manifest".to_string(),
            PackKind::Tile { level, x, y } => format!("tile L{level} ({x},{y})"),
        };
        vec![
            ("kind", kind),
            ("world", self.world_name.clone()),
            ("world_hash", format!("{:016x}", self.world_hash)),
            ("inputs_hash", format!("{:016x}", self.inputs_hash)),
        ]
    }
}
