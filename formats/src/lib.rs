//! Kiln's versioned binary pack container and its typed sections.
//!
//! A pack is one file: a fixed header, a section table, and 16-byte-aligned payloads, each
//! checksummed and optionally zstd-compressed. `formats/SPEC.md` gives the byte layout and the
//! versioning rules; this crate is the reference reader and writer. It depends on neither the
//! baker nor the viewer.
//!
//! ```
//! use kiln_formats::{Pack, PackBuilder, sections::VertexAo};
//! let mut b = PackBuilder::new([0, 1, 0]);
//! b.add(&VertexAo(vec![255, 128])).unwrap();
//! let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
//! assert_eq!(pack.require::<VertexAo>().unwrap().0, vec![255, 128]);
//! ```

pub mod container;
pub mod error;
mod pack;
pub mod sections;
mod tile;
mod tile_id;

pub use container::{Codec, SectionEntry, SectionKind, FORMAT_MAJOR, FORMAT_MINOR};
pub use error::{FormatError, PackFileError};
pub use pack::{find_packs, read_pack_file, write_atomic, Pack, PackBuilder, Section};
pub use tile::TileContents;
pub use tile_id::TileId;
