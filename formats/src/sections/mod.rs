//! The typed sections Kiln packs hold. Each kind's byte layout is in `formats/SPEC.md`.

mod codec;
mod files;
mod grass;
mod info;
mod manifest;
mod mesh;
pub mod rgb9e5;
mod shared;
mod table;
mod trees;
mod vertex_attrs;
mod volume;
mod water;

pub use files::{EmbeddedFile, EmbeddedFiles};
pub use grass::{
    patch_point_to_world, Flower, GrassBlade, GrassInstance, GrassLevel, GrassPatch, GrassPatches, GrassTile, MAX_BLADE_SEGMENTS, MAX_GRASS_LEVELS,
    MAX_GRASS_MAP, NO_PARENT,
};
pub use info::{PackInfo, PackKind};
pub use manifest::{Manifest, TileNode, MAX_TILES_PER_AXIS};
pub use mesh::{Lattice, TerrainMesh};
pub use shared::{SharedPack, SharedPacks};
pub use trees::{
    AtlasLevel, ImpostorAtlas, ImpostorLayout, Rgba8Level, SpeciesTextures, TreeCard, TreeCards, TreeImpostors, TreeInstance, TreeInstances,
    TreeLighting, TreeLod, TreePrototype, TreePrototypeCards, TreePrototypes, TreeTextures,
};
pub use vertex_attrs::{VertexAo, VertexIrradiance};
pub use volume::{IrradianceGrid, MAX_VOLUME_CELLS};
pub use water::{WaterTile, WaterWaves, MAX_CAUSTIC_DEPTHS, MAX_WATER_MAP, MAX_WAVE_FRAMES, WAVE_RESOLUTION};

use crate::container::SectionKind;
use crate::error::{bad, FormatError};

pub use table::{section_type, SectionType, Summary, SECTION_TYPES};

/// bincode settings for metadata sections: fixed, little-endian, varint, and a hard size limit so
/// a hostile length prefix cannot make the decoder allocate without bound.
const BINCODE_LIMIT: usize = 64 << 20;
fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard().with_little_endian().with_variable_int_encoding().with_limit::<BINCODE_LIMIT>()
}

pub(crate) fn encode_bincode<T: serde::Serialize>(kind: SectionKind, value: &T) -> Result<Vec<u8>, FormatError> {
    bincode::serde::encode_to_vec(value, bincode_config()).map_err(|e| FormatError::Encode { section: kind, reason: e.to_string() })
}

pub(crate) fn decode_bincode<T: serde::de::DeserializeOwned>(kind: SectionKind, raw: &[u8]) -> Result<T, FormatError> {
    let (value, used): (T, usize) = bincode::serde::decode_from_slice(raw, bincode_config()).map_err(|e| bad(kind, e.to_string()))?;
    if used != raw.len() {
        return Err(bad(kind, format!("{} trailing bytes after the metadata", raw.len() - used)));
    }
    Ok(value)
}

/// Reads little-endian fields from a section's raw bytes with bounds checks.
pub(crate) struct ByteReader<'a> {
    kind: SectionKind,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ByteReader<'a> {
    pub(crate) fn new(kind: SectionKind, bytes: &'a [u8]) -> Self {
        ByteReader { kind, bytes, at: 0 }
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| bad(self.kind, format!("needs {n} more bytes at offset {}, only {} left", self.at, self.bytes.len() - self.at)))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub(crate) fn u32(&mut self) -> Result<u32, FormatError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub(crate) fn i32(&mut self) -> Result<i32, FormatError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub(crate) fn f32(&mut self) -> Result<f32, FormatError> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub(crate) fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn kind(&self) -> SectionKind {
        self.kind
    }
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
}
