//! One tile of one LOD level: what the manifest records about it, and its finished pack.

use kiln_formats::FormatError;
use thiserror::Error;

use super::lod::TileId;
use crate::mc::MarchError;

/// Why a tile could not be baked.
#[derive(Debug, Error)]
pub enum TileError {
    #[error("tile {id}: meshing: {source}")]
    Mesh { id: TileId, source: MarchError },
    #[error("tile {id}: ambient occlusion: {source}")]
    Ao { id: TileId, source: crate::ao::AoError },
    #[error("tile {id}: packing: {source}")]
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
    pub(crate) const BYTES: usize = 36;
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        for v in self.bounds.0.iter().chain(&self.bounds.1).chain(std::iter::once(&self.own_error)) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.vertex_count.to_le_bytes());
        out.extend_from_slice(&self.triangle_count.to_le_bytes());
    }
    pub(crate) fn read(b: &[u8]) -> Option<Self> {
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

/// A finished tile pack with its summary, as cached and as written.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedTile {
    pub id: TileId,
    pub summary: TileSummary,
    pub pack: Vec<u8>,
}

/// What the manifest records of a finished tile pack once the pack itself is written.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedTile {
    pub id: TileId,
    pub summary: TileSummary,
    /// xxh3-64 of the pack's bytes.
    pub content_hash: u64,
    pub file_len: u64,
}

impl BakedTile {
    /// What the manifest records of this pack.
    pub fn record(&self) -> PackedTile {
        PackedTile { id: self.id, summary: self.summary, content_hash: xxhash_rust::xxh3::xxh3_64(&self.pack), file_len: self.pack.len() as u64 }
    }

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
