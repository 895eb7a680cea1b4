use serde::{Deserialize, Serialize};

use super::{decode_bincode, encode_bincode};
use crate::container::SectionKind;
use crate::error::FormatError;
use crate::pack::Section;

/// One source file carried inside a pack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddedFile {
    /// The file's name relative to the world file.
    pub name: String,
    /// The file's contents, byte for byte.
    pub bytes: Vec<u8>,
}

/// The inputs a bake was made from (the resolved world definition, brush and heightmap files), so
/// that tools can reproduce or explain a bake from its output alone (`SRCF`, optional).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddedFiles {
    /// The embedded files, the world definition first, in the order the baker embedded them.
    pub files: Vec<EmbeddedFile>,
}

impl EmbeddedFiles {
    /// The file called `name`, if embedded.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files.iter().find(|f| f.name == name).map(|f| f.bytes.as_slice())
    }
    pub(crate) fn summary(&self) -> super::Summary {
        let list = self.files.iter().map(|f| format!("{} ({} B)", f.name, f.bytes.len())).collect::<Vec<_>>().join(", ");
        vec![("files", list)]
    }
}

impl Section for EmbeddedFiles {
    const KIND: SectionKind = SectionKind(*b"SRCF");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        encode_bincode(Self::KIND, self)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        decode_bincode(Self::KIND, raw)
    }
}
