//! Typed errors for everything that can be wrong with a pack.

use std::path::PathBuf;

use crate::SectionKind;

/// What is wrong with a pack's bytes. Every check the reader makes has a variant here; the reader
/// never panics and never allocates from a length it has not checked.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum FormatError {
    #[error("not a Kiln pack: bad magic {found:02x?} (expected 89 4b 50 4b 0d 0a 1a 0a; a text-mode copy or another file type?)")]
    BadMagic { found: Vec<u8> },
    #[error("truncated: {what} needs {needed} bytes but only {available} are present")]
    Truncated { what: String, needed: u64, available: u64 },
    #[error("file length is {actual} bytes but the header says {declared} (truncated download or appended data)")]
    LengthMismatch { declared: u64, actual: u64 },
    #[error("unsupported format version {}.{} (this Kiln reads {}.x up to {}.{}); bake again with this version or upgrade Kiln", found.0, found.1, supported.0, supported.0, supported.1)]
    UnsupportedVersion { found: (u16, u16), supported: (u16, u16) },
    #[error("header checksum mismatch (the header is corrupt)")]
    HeaderChecksum,
    #[error("section table checksum mismatch (the table is corrupt)")]
    TableChecksum,
    #[error("section {section} (#{index}): checksum mismatch (stored payload is corrupt)")]
    ChecksumMismatch { section: SectionKind, index: usize },
    #[error("section {section} (#{index}): {reason}")]
    BadLayout { section: SectionKind, index: usize, reason: String },
    #[error("non-zero padding byte at offset {offset} (corrupt file)")]
    BadPadding { offset: u64 },
    #[error("section {section} (#{index}): unknown codec {codec}")]
    UnknownCodec { section: SectionKind, index: usize, codec: u8 },
    #[error("unknown required section {section}: written by a newer Kiln? this reader cannot use the pack")]
    UnknownRequiredSection { section: SectionKind },
    #[error("section {section} appears more than once")]
    DuplicateSection { section: SectionKind },
    #[error("required section {section} is missing")]
    MissingSection { section: SectionKind },
    #[error("section {section}: decompression failed: {reason}")]
    Decompress { section: SectionKind, reason: String },
    #[error("section {section}: invalid contents: {reason}")]
    BadSection { section: SectionKind, reason: String },
    #[error("cannot encode section {section}: {reason}")]
    Encode { section: SectionKind, reason: String },
}

/// A [`FormatError`] or an I/O failure, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum PackFileError {
    #[error("{}: {source}", path.display())]
    Format { path: PathBuf, source: FormatError },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl PackFileError {
    /// The file this error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            PackFileError::Format { path, .. } | PackFileError::Io { path, .. } => path,
        }
    }
}

/// Shorthand used by section decoders.
pub(crate) fn bad(section: SectionKind, reason: impl Into<String>) -> FormatError {
    FormatError::BadSection { section, reason: reason.into() }
}
