//! Typed errors for everything that can be wrong with a pack.

use std::path::PathBuf;

use crate::SectionKind;

/// What is wrong with a pack's bytes. Every check the reader makes has a variant here; the reader
/// never panics and never allocates from a length it has not checked.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum FormatError {
    #[error("not a Kiln pack: bad magic {found:02x?} (expected 89 4b 50 4b 0d 0a 1a 0a; a text-mode copy or another file type?)")]
    /// The first eight bytes are not the pack magic.
    BadMagic {
        /// The bytes found where the magic belongs (up to eight).
        found: Vec<u8>,
    },
    #[error("truncated: {what} needs {needed} bytes but only {available} are present")]
    /// The file ends before a structure it declares.
    Truncated {
        /// The structure that is cut off: the magic, the header, the whole file, the section table or a section.
        what: String,
        /// The file length in bytes that the structure needs (its end offset).
        needed: u64,
        /// The file's actual length in bytes.
        available: u64,
    },
    #[error("file length is {actual} bytes but the header says {declared} (truncated download or appended data)")]
    /// The file holds bytes beyond what its header, or the end of its last section, accounts for.
    LengthMismatch {
        /// The length in bytes that the pack accounts for.
        declared: u64,
        /// The file's actual length in bytes.
        actual: u64,
    },
    #[error("unsupported format version {}.{} (this Kiln reads {}.x up to {}.{}); bake again with this version or upgrade Kiln", found.0, found.1, supported.0, supported.0, supported.1)]
    /// The pack's major format version is not the one this reader knows.
    UnsupportedVersion {
        /// The pack's (major, minor) format version.
        found: (u16, u16),
        /// The (major, minor) version this reader writes; it reads any minor of that major.
        supported: (u16, u16),
    },
    #[error("header checksum mismatch (the header is corrupt)")]
    /// The header's own checksum does not match its bytes.
    HeaderChecksum,
    #[error("section table checksum mismatch (the table is corrupt)")]
    /// The section table does not match the table checksum in the header.
    TableChecksum,
    #[error("section {section} (#{index}): checksum mismatch (stored payload is corrupt)")]
    /// A section's stored bytes do not match the checksum in its table entry.
    ChecksumMismatch {
        /// The kind of the corrupt section.
        section: SectionKind,
        /// Its position in the section table, from 0.
        index: usize,
    },
    #[error("section {section} (#{index}): {reason}")]
    /// A table entry places its section badly (misaligned, overlapping, over a size limit), or the pack as a
    /// whole breaks a layout limit (then `section` is `----` and `index` 0).
    BadLayout {
        /// The kind of the misplaced section.
        section: SectionKind,
        /// Its position in the section table, from 0.
        index: usize,
        /// What is wrong with the placement, for the user.
        reason: String,
    },
    #[error("non-zero padding byte at offset {offset} (corrupt file)")]
    /// A padding byte between sections is not zero.
    BadPadding {
        /// The byte's offset from the start of the file.
        offset: u64,
    },
    #[error("section {section} (#{index}): unknown codec {codec}")]
    /// A section is stored with a codec id this reader does not know.
    UnknownCodec {
        /// The kind of the section.
        section: SectionKind,
        /// Its position in the section table, from 0.
        index: usize,
        /// The codec id found in the table entry.
        codec: u8,
    },
    #[error("unknown required section {section}: written by a newer Kiln? this reader cannot use the pack")]
    /// The pack holds a section flagged required whose kind this reader does not know.
    UnknownRequiredSection {
        /// The unknown kind.
        section: SectionKind,
    },
    #[error("section {section} appears more than once")]
    /// A section kind appears more than once in the table.
    DuplicateSection {
        /// The repeated kind.
        section: SectionKind,
    },
    #[error("required section {section} is missing")]
    /// A section the caller asked for is absent (a table index past the end reports kind `????`).
    MissingSection {
        /// The absent kind.
        section: SectionKind,
    },
    #[error("section {section}: decompression failed: {reason}")]
    /// A compressed section fails to decompress, or decompresses to a length other than its declared raw length.
    Decompress {
        /// The kind of the section.
        section: SectionKind,
        /// The decoder's message.
        reason: String,
    },
    #[error("section {section}: invalid contents: {reason}")]
    /// A section's payload decodes but breaks one of its own rules or a cross-section rule.
    BadSection {
        /// The kind of the offending section.
        section: SectionKind,
        /// Which rule is broken, for the user.
        reason: String,
    },
    #[error("cannot encode section {section}: {reason}")]
    /// A section cannot be written: over the section size limit, arrays that disagree with its
    /// dimensions, or a compressor failure.
    Encode {
        /// The kind of the section being written.
        section: SectionKind,
        /// Why it cannot be written.
        reason: String,
    },
}

/// A [`FormatError`] or an I/O failure, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum PackFileError {
    #[error("{}: {source}", path.display())]
    /// The file was read but its bytes are not a valid pack.
    Format {
        /// The pack file.
        path: PathBuf,
        /// What is wrong with its bytes.
        source: FormatError,
    },
    #[error("{}: {source}", path.display())]
    /// The file could not be opened, read or written.
    Io {
        /// The pack file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
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
