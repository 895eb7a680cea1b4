use serde::{Deserialize, Serialize};

use super::{decode_bincode, encode_bincode};
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::Section;

/// One world-wide pack of a product (tree prototypes and their impostors, later grass patches and
/// water frames), which tile packs reference by its content hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedPack {
    /// The product that wrote it (e.g. "trees"); unique within a bake.
    pub product: String,
    /// Path relative to the bake directory, '/'-separated, without `..` (e.g. `shared/trees.kpack`).
    pub path: String,
    /// xxh3-64 of the pack file's bytes.
    pub content_hash: u64,
    /// The pack file's length in bytes.
    pub file_len: u64,
}

/// The bake's shared packs (`SHRD`, optional, in `manifest.kpack`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedPacks(pub Vec<SharedPack>);

impl SharedPacks {
    /// The shared pack of `product`, if the bake has one.
    pub fn get(&self, product: &str) -> Option<&SharedPack> {
        self.0.iter().find(|p| p.product == product)
    }
    pub(crate) fn summary(&self) -> super::Summary {
        self.0.iter().map(|p| ("pack", format!("{} ({}, {} bytes, {:016x})", p.path, p.product, p.file_len, p.content_hash))).collect()
    }
}

impl Section for SharedPacks {
    const KIND: SectionKind = SectionKind(*b"SHRD");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        encode_bincode(Self::KIND, self)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let packs: SharedPacks = decode_bincode(Self::KIND, raw)?;
        for (i, p) in packs.0.iter().enumerate() {
            let safe = !p.path.is_empty()
                && !p.path.starts_with('/')
                && p.path.split('/').all(|c| !c.is_empty() && c != ".." && c != "." && !c.contains('\\'));
            if !safe {
                return Err(bad(Self::KIND, format!("unsafe shared pack path {:?}", p.path)));
            }
            if packs.0[..i].iter().any(|q| q.product == p.product) {
                return Err(bad(Self::KIND, format!("product {:?} listed twice", p.product)));
            }
        }
        Ok(packs)
    }
}
