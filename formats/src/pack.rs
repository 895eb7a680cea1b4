//! Typed access to packs: [`Pack`] reads, [`PackBuilder`] writes.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::container::{self, Codec, ContainerWriter, Header, SectionEntry, SectionKind};
use crate::error::{FormatError, PackFileError};
use crate::sections;

/// A typed section: how one kind of data is turned into a section's raw bytes and back.
///
/// `decode` must check every count and length against `raw` before allocating or indexing, and
/// return [`FormatError::BadSection`] (never panic) on anything inconsistent.
pub trait Section: Sized {
    /// The section's FourCC.
    const KIND: SectionKind;
    /// Whether a reader that does not know this kind must refuse the pack.
    const REQUIRED: bool;
    /// The raw (uncompressed) bytes of this section.
    fn encode(&self) -> Result<Vec<u8>, FormatError>;
    /// Parses raw bytes produced by [`Section::encode`].
    fn decode(raw: &[u8]) -> Result<Self, FormatError>;
}

/// An opened pack: its header and section table are checked; payloads are checked when read.
pub struct Pack {
    bytes: Vec<u8>,
    header: Header,
    entries: Vec<SectionEntry>,
}

impl Pack {
    /// Checks the layout of `bytes` and that every required section is one this reader knows.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, FormatError> {
        let (header, entries) = container::parse_layout(&bytes)?;
        if let Some(e) = entries.iter().find(|e| e.required() && sections::section_type(e.kind).is_none()) {
            return Err(FormatError::UnknownRequiredSection { section: e.kind });
        }
        Ok(Pack { bytes, header, entries })
    }

    /// Reads and opens the pack at `path`; errors name the file.
    pub fn open(path: &Path) -> Result<Self, PackFileError> {
        let bytes = read_pack_file(path)?;
        Pack::from_bytes(bytes).map_err(|source| PackFileError::Format { path: path.to_owned(), source })
    }

    /// The checked header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The section table, in file order.
    pub fn sections(&self) -> &[SectionEntry] {
        &self.entries
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The raw bytes of section `index` (checksum verified, decompressed).
    pub fn raw_section(&self, index: usize) -> Result<Vec<u8>, FormatError> {
        let e = self.entries.get(index).ok_or(FormatError::MissingSection { section: SectionKind(*b"????") })?;
        container::check_section(&self.bytes, index, e)
    }

    /// The section of type `T`, if the pack has one.
    pub fn get<T: Section>(&self) -> Result<Option<T>, FormatError> {
        match self.entries.iter().position(|e| e.kind == T::KIND) {
            None => Ok(None),
            Some(i) => T::decode(&self.raw_section(i)?).map(Some),
        }
    }

    /// The section of type `T` of the pack `bytes`, if it has one (the layout and that section's
    /// checksum checked), read where the bytes lie: for a reader that holds a large pack and
    /// wants one section of it, where [`Pack::from_bytes`] would take the whole file.
    pub fn section_in<T: Section>(bytes: &[u8]) -> Result<Option<T>, FormatError> {
        let (_, entries) = container::parse_layout(bytes)?;
        match entries.iter().position(|e| e.kind == T::KIND) {
            None => Ok(None),
            Some(i) => T::decode(&container::check_section(bytes, i, &entries[i])?).map(Some),
        }
    }

    /// The section of type `T`; [`FormatError::MissingSection`] if absent.
    pub fn require<T: Section>(&self) -> Result<T, FormatError> {
        self.get::<T>()?.ok_or(FormatError::MissingSection { section: T::KIND })
    }

    /// Checks every section's checksum and decodes every section of a known kind.
    /// Returns one error per bad section (empty when the pack is sound).
    pub fn verify(&self) -> Vec<FormatError> {
        let mut problems = Vec::new();
        for i in 0..self.entries.len() {
            match self.raw_section(i) {
                Ok(raw) => {
                    if let Some(Err(e)) = sections::section_type(self.entries[i].kind).map(|t| (t.summarize)(&raw)) {
                        problems.push(e);
                    }
                }
                Err(e) => problems.push(e),
            }
        }
        problems
    }
}

/// The bytes of the file at `path`, refusing anything that is not a regular file of at most
/// [`container::MAX_PACK_LEN`] bytes before reading it (a FIFO or `/dev/zero` named `x.kpack` would
/// otherwise be read until memory runs out).
pub fn read_pack_file(path: &Path) -> Result<Vec<u8>, PackFileError> {
    let io_err = |source| PackFileError::Io { path: path.to_owned(), source };
    let file = fs::File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(io_err(std::io::Error::other("not a regular file")));
    }
    if meta.len() > container::MAX_PACK_LEN {
        return Err(io_err(std::io::Error::other(format!("{} bytes exceeds the {}-byte pack limit", meta.len(), container::MAX_PACK_LEN))));
    }
    // The size is only a hint (the file may change while it is read); `take` bounds the read anyway.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(container::MAX_PACK_LEN + 1).read_to_end(&mut bytes).map_err(io_err)?;
    if bytes.len() as u64 > container::MAX_PACK_LEN {
        return Err(io_err(std::io::Error::other("file grew past the pack limit while being read")));
    }
    Ok(bytes)
}

/// Every `*.kpack` file under `path` (or `path` itself if it is a file), sorted for stable output.
///
/// Directory links are not followed, so a link to a parent cannot make the walk loop forever; linked
/// files are listed, and opening them ([`Pack::open`], [`read_pack_file`]) checks what they point to.
pub fn find_packs(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let meta = fs::metadata(path)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a file or directory"));
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let p = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "kpack") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Builds a pack from typed sections.
pub struct PackBuilder {
    writer: ContainerWriter,
    codec: Codec,
}

impl PackBuilder {
    /// A builder recording `writer_version` (the baker's version), compressing with zstd at
    /// [`container::DEFAULT_ZSTD_LEVEL`].
    pub fn new(writer_version: [u16; 3]) -> Self {
        PackBuilder { writer: ContainerWriter::new(writer_version), codec: Codec::Zstd(container::DEFAULT_ZSTD_LEVEL) }
    }

    /// Uses `codec` for the sections added after this call.
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// Adds a typed section.
    pub fn add<T: Section>(&mut self, section: &T) -> Result<&mut Self, FormatError> {
        self.writer.add_raw(T::KIND, T::REQUIRED, self.codec, section.encode()?)?;
        Ok(self)
    }

    /// Adds a section of kind `T` encoded as pieces whose concatenation is `T::encode`'s bytes
    /// (see [`ContainerWriter::add_pieces`]).
    pub fn add_pieces<T: Section>(&mut self, pieces: Vec<Vec<u8>>) -> Result<&mut Self, FormatError> {
        self.writer.add_pieces(T::KIND, T::REQUIRED, self.codec, pieces)?;
        Ok(self)
    }

    /// Adds a section of a kind this crate may not know (tests, tools, future kinds).
    pub fn add_raw(&mut self, kind: SectionKind, required: bool, raw: Vec<u8>) -> Result<&mut Self, FormatError> {
        self.writer.add_raw(kind, required, self.codec, raw)?;
        Ok(self)
    }

    /// The finished pack's bytes.
    pub fn to_bytes(self) -> Result<Vec<u8>, FormatError> {
        self.writer.finish()
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, rename,
/// then fsync of the directory. A crash or a full disk leaves the old file or the new one, never
/// half of either, and no temporary file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PackFileError> {
    let io_err = |source| PackFileError::Io { path: path.to_owned(), source };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| io_err(std::io::Error::other("path has no file name")))?;
    let tmp = dir.join(format!(".{}.tmp-{}-{}", name.to_string_lossy(), std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        // Make the rename itself durable; not every platform can open a directory, so this is best effort.
        if let Ok(d) = fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io_err)
}
