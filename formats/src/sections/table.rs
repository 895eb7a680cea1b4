//! The one table of section kinds this crate knows: what a reader needs to know about a kind without
//! knowing its type (its name, whether it is required, how to describe it).
//!
//! Adding a section kind is its struct (a [`Section`] with a `summary`) and one [`kind!`] line in
//! [`SECTION_TYPES`]; `Pack::from_bytes`, `Pack::verify`, `kiln inspect` and `kiln verify` read this
//! table. What `kiln diff` compares lives with the baker (`bake/src/diff/kinds.rs`), which tests that
//! every kind here has a comparison.

use super::{
    EmbeddedFiles, GrassPatches, GrassTile, IrradianceGrid, Manifest, PackInfo, SharedPacks, TerrainMesh, TreeCards, TreeImpostors, TreeInstances,
    TreeLighting, TreePrototypes, TreeTextures, VertexAo, VertexIrradiance, WaterTile, WaterWaves,
};
use crate::container::SectionKind;
use crate::error::FormatError;
use crate::pack::Section;

/// A section described for people: a few key/value pairs (what `kiln inspect` prints).
pub type Summary = Vec<(&'static str, String)>;

/// One known section kind.
#[derive(Clone, Copy, Debug)]
pub struct SectionType {
    /// Its FourCC.
    pub kind: SectionKind,
    /// A short name for people, e.g. "terrain mesh".
    pub name: &'static str,
    /// Whether the writer marks it required (a reader that does not know it must refuse the pack).
    pub required: bool,
    /// Decodes raw section bytes (with every check of the kind's decoder) and describes them.
    pub summarize: fn(&[u8]) -> Result<Summary, FormatError>,
}

/// One table entry for a [`Section`] type with an inherent `summary(&self) -> Summary` method.
macro_rules! kind {
    ($t:ty, $name:literal) => {
        SectionType {
            kind: <$t as Section>::KIND,
            name: $name,
            required: <$t as Section>::REQUIRED,
            summarize: |raw| <$t as Section>::decode(raw).map(|s| s.summary()),
        }
    };
}

/// Every section kind this version of the crate understands, in the order `formats/SPEC.md` lists them.
pub static SECTION_TYPES: &[SectionType] = &[
    kind!(PackInfo, "pack info"),
    kind!(Manifest, "world manifest"),
    kind!(EmbeddedFiles, "embedded source files"),
    kind!(TerrainMesh, "terrain mesh"),
    kind!(VertexAo, "vertex ambient occlusion"),
    kind!(VertexIrradiance, "vertex irradiance"),
    kind!(IrradianceGrid, "irradiance volume"),
    kind!(SharedPacks, "shared packs"),
    kind!(TreePrototypes, "tree prototypes"),
    kind!(TreeTextures, "tree textures"),
    kind!(TreeImpostors, "tree impostor atlases"),
    kind!(TreeCards, "tree billboard cards"),
    kind!(TreeInstances, "tree instances"),
    kind!(TreeLighting, "tree lighting"),
    kind!(GrassPatches, "grass patches"),
    kind!(GrassTile, "grass ground and instances"),
    kind!(WaterWaves, "water waves and caustics"),
    kind!(WaterTile, "water surface"),
];

/// The table entry of `kind`; `None` for kinds this reader does not know.
pub fn section_type(kind: SectionKind) -> Option<&'static SectionType> {
    SECTION_TYPES.iter().find(|t| t.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_and_named() {
        for (i, t) in SECTION_TYPES.iter().enumerate() {
            assert!(!t.name.is_empty(), "{} has no name", t.kind);
            assert!(SECTION_TYPES[..i].iter().all(|u| u.kind != t.kind), "{} listed twice", t.kind);
            assert!(std::ptr::eq(section_type(t.kind).unwrap(), t));
        }
        assert!(section_type(SectionKind(*b"TEST")).is_none());
    }

    #[test]
    fn summaries_decode_what_they_describe() {
        let ao = VertexAo(vec![0, 255]).encode().unwrap();
        let t = section_type(VertexAo::KIND).unwrap();
        assert!(!(t.summarize)(&ao).unwrap().is_empty());
        // The summary runs the kind's decoder, so it refuses what the decoder refuses.
        let irr = section_type(VertexIrradiance::KIND).unwrap();
        assert!((irr.summarize)(&[1, 2, 3]).is_err());
    }
}
