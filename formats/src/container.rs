//! The pack container: header, section table, aligned payloads. Byte layout in `formats/SPEC.md`.

use std::fmt;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::FormatError;

/// The 8 magic bytes. The high-bit first byte catches 7-bit transfers, CR LF catches a text-mode
/// newline conversion, 0x1a stops a DOS `type`, and the final LF catches LF -> CR LF conversion.
pub const MAGIC: [u8; 8] = [0x89, b'K', b'P', b'K', b'\r', b'\n', 0x1a, b'\n'];
/// The format major version this crate writes and reads.
pub const FORMAT_MAJOR: u16 = 1;
/// The format minor version this crate writes (it reads any minor of [`FORMAT_MAJOR`]).
pub const FORMAT_MINOR: u16 = 3;
/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 48;
/// Bytes in one section-table entry.
pub const ENTRY_LEN: usize = 48;
/// Every section payload starts at a multiple of this.
pub const ALIGN: u64 = 16;
/// No section may decode to more than this many bytes; keeps a hostile header from making the
/// reader allocate unbounded memory.
pub const MAX_RAW_SECTION_LEN: u64 = 1 << 30;
/// A pack's sections together may decode to at most `RAW_ALLOWANCE + MAX_EXPANSION × file_len`
/// bytes. zstd itself can expand a frame about 32000-fold (a run-length block of 128 KiB costs
/// 4 bytes), so without this a 50 KB pack could make a reader allocate gigabytes; real tiles
/// compress 2–4×, and a writer that would break the rule stores every section raw instead.
pub const MAX_EXPANSION: u64 = 32;
/// The part of a pack's raw budget that does not depend on its size (see [`MAX_EXPANSION`]).
pub const RAW_ALLOWANCE: u64 = 16 << 20;
/// Largest pack file a reader opens; larger files are refused before they are read.
pub const MAX_PACK_LEN: u64 = 1 << 34;
/// At most this many sections in one pack.
pub const MAX_SECTIONS: u32 = 4096;
/// Section-table flag: a reader that does not know this section's kind must refuse the pack.
pub const FLAG_REQUIRED: u16 = 1;

/// A section's kind: four ASCII bytes (a FourCC such as `TMSH`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SectionKind(pub [u8; 4]);

impl fmt::Display for SectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in &self.0 {
            if b.is_ascii_graphic() {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for SectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SectionKind({self})")
    }
}

/// How a section's payload is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// Stored as is.
    Raw,
    /// One zstd frame at the given compression level (the level is not stored).
    Zstd(i32),
}

impl Codec {
    /// The byte written in the section table.
    pub fn id(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Zstd(_) => 1,
        }
    }
    /// Human-readable name, as `kiln inspect` prints it.
    pub fn name_of(id: u8) -> &'static str {
        match id {
            0 => "raw",
            1 => "zstd",
            _ => "unknown",
        }
    }
}

/// Sections of at least this many raw bytes are compressed by zstd's multithreaded mode, on as many
/// workers as the calling thread's rayon pool has threads, at most [`MAX_ZSTD_WORKERS`]. That
/// mode's frame is the same bytes for any number of workers (zstd's own guarantee, for streamed
/// input) but not the bytes of the one-thread mode, so smaller sections (every tile's) keep the
/// one-thread frames they always had. Either way the payload is one frame that declares its
/// content size, as readers require.
pub const PARALLEL_SECTION_LEN: usize = 8 << 20;

/// Each zstd worker holds a job's input and output (8 MiB each at the default level): more than this
/// many would raise a bake's peak memory for little speed on the few large sections of a pack (the
/// trees pack's atlases, compressed while the prototypes are all held, were the peak of a bake on
/// 8 threads with 8 workers).
pub const MAX_ZSTD_WORKERS: usize = 4;

/// The bytes fed to zstd's multithreaded mode per call.
const FEED: usize = 1 << 20;

/// The concatenation of `pieces` as one zstd frame at `level`, declaring its content size; a
/// large section is never joined into one buffer first.
fn compress(pieces: &[Vec<u8>], level: i32) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let len: usize = pieces.iter().map(Vec::len).sum();
    if len < PARALLEL_SECTION_LEN {
        return match pieces {
            [one] => zstd::bulk::compress(one, level),
            _ => zstd::bulk::compress(&pieces.concat(), level),
        };
    }
    let mut encoder = zstd::stream::Encoder::new(Vec::with_capacity(len / 2), level)?;
    encoder.multithread(rayon::current_num_threads().clamp(1, MAX_ZSTD_WORKERS) as u32)?;
    encoder.include_contentsize(true)?;
    encoder.set_pledged_src_size(Some(len as u64))?;
    // Fed in pieces, not as one final block: zstd promises worker-independent output for streamed
    // input. The pieces fed are FEED bytes of the whole each, however the section was cut, so
    // the calls, and the frame, do not depend on the cut.
    let mut chunk = Vec::with_capacity(FEED.min(len));
    for piece in pieces {
        let mut rest = piece.as_slice();
        while !rest.is_empty() {
            let take = (FEED - chunk.len()).min(rest.len());
            chunk.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if chunk.len() == FEED {
                encoder.write_all(&chunk)?;
                chunk.clear();
            }
        }
    }
    if !chunk.is_empty() {
        encoder.write_all(&chunk)?;
    }
    encoder.finish()
}

/// `pieces` joined (moved, when there is one).
fn join(mut pieces: Vec<Vec<u8>>) -> Vec<u8> {
    if pieces.len() == 1 {
        pieces.pop().unwrap_or_default()
    } else {
        pieces.concat()
    }
}

/// The default zstd level for bakes: the high levels cost far more time than the little size they
/// save (see BENCHMARKS.md, "Pack container").
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

/// One entry of the section table, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionEntry {
    /// The section's kind.
    pub kind: SectionKind,
    /// Bit flags; only [`FLAG_REQUIRED`] is defined.
    pub flags: u16,
    /// The [`Codec::id`] the payload is stored with (0 raw, 1 zstd).
    pub codec: u8,
    /// Byte offset of the stored payload from the start of the file, a multiple of [`ALIGN`].
    pub offset: u64,
    /// Length in bytes of the payload as stored (compressed, if the codec compresses).
    pub stored_len: u64,
    /// Length in bytes of the payload once decoded; equals `stored_len` for raw sections.
    pub raw_len: u64,
    /// xxh3-64 of the stored (possibly compressed) bytes.
    pub checksum: u64,
}

impl SectionEntry {
    /// Whether a reader that does not know this kind must refuse the pack.
    pub fn required(&self) -> bool {
        self.flags & FLAG_REQUIRED != 0
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.kind.0);
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.push(self.codec);
        out.push(0);
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.stored_len.to_le_bytes());
        out.extend_from_slice(&self.raw_len.to_le_bytes());
        out.extend_from_slice(&self.checksum.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
    }

    fn read(b: &[u8]) -> Self {
        SectionEntry {
            kind: SectionKind([b[0], b[1], b[2], b[3]]),
            flags: u16_at(b, 4),
            codec: b[6],
            offset: u64_at(b, 8),
            stored_len: u64_at(b, 16),
            raw_len: u64_at(b, 24),
            checksum: u64_at(b, 32),
        }
    }
}

/// The fixed header, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format major version; a reader refuses any other than [`FORMAT_MAJOR`].
    pub major: u16,
    /// The format minor version; a newer minor only adds optional sections or gives meaning to reserved fields.
    pub minor: u16,
    /// The version of the program that wrote the pack (major, minor, patch).
    pub writer_version: [u16; 3],
    /// Entries in the section table, at most [`MAX_SECTIONS`].
    pub section_count: u32,
    /// The whole file's length in bytes, so truncation and appended data are caught.
    pub file_len: u64,
    /// xxh3-64 of the section table's bytes.
    pub table_checksum: u64,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn align_up(x: u64) -> u64 {
    x.div_ceil(ALIGN) * ALIGN
}

/// A section ready to be laid out: its kind, flags, and its payload as stored (compressed when
/// added, so that a pack of many large sections never holds them all uncompressed at once).
struct PendingSection {
    kind: SectionKind,
    flags: u16,
    /// The codec of `stored`: the one asked for, or raw where compression did not shrink it.
    codec: Codec,
    stored: Vec<u8>,
    raw_len: u64,
}

impl PendingSection {
    /// This section stored raw.
    fn into_raw(self) -> Result<PendingSection, FormatError> {
        if matches!(self.codec, Codec::Raw) {
            return Ok(self);
        }
        let raw = zstd::bulk::decompress(&self.stored, self.raw_len as usize)
            .map_err(|e| FormatError::Encode { section: self.kind, reason: e.to_string() })?;
        Ok(PendingSection { codec: Codec::Raw, stored: raw, ..self })
    }
}

/// Lays out sections into pack bytes. Sections keep the order in which they were added.
pub struct ContainerWriter {
    writer_version: [u16; 3],
    sections: Vec<PendingSection>,
}

impl ContainerWriter {
    /// A writer that records `writer_version` (the baker's version) in the header.
    pub fn new(writer_version: [u16; 3]) -> Self {
        ContainerWriter { writer_version, sections: Vec::new() }
    }

    /// Adds a section of raw bytes, compressing it now with `codec` (the output depends only on
    /// the inputs: see [`PARALLEL_SECTION_LEN`]). Fails if a section of that kind is already present.
    pub fn add_raw(&mut self, kind: SectionKind, required: bool, codec: Codec, raw: Vec<u8>) -> Result<(), FormatError> {
        self.add_pieces(kind, required, codec, vec![raw])
    }

    /// [`ContainerWriter::add_raw`] for a section given as pieces whose concatenation is its raw
    /// bytes: the same stored bytes, without the joined copy (a large section's encoder can free
    /// each part of its source as it encodes it).
    pub fn add_pieces(&mut self, kind: SectionKind, required: bool, codec: Codec, pieces: Vec<Vec<u8>>) -> Result<(), FormatError> {
        if self.sections.iter().any(|s| s.kind == kind) {
            return Err(FormatError::DuplicateSection { section: kind });
        }
        let raw_len = pieces.iter().map(|p| p.len() as u64).sum::<u64>();
        if raw_len > MAX_RAW_SECTION_LEN {
            return Err(FormatError::Encode {
                section: kind,
                reason: format!("{raw_len} bytes exceeds the {MAX_RAW_SECTION_LEN}-byte section limit"),
            });
        }
        let flags = if required { FLAG_REQUIRED } else { 0 };
        let (codec, stored) = match codec {
            Codec::Raw => (Codec::Raw, join(pieces)),
            Codec::Zstd(level) => {
                let z = compress(&pieces, level).map_err(|e| FormatError::Encode { section: kind, reason: e.to_string() })?;
                // Tiny or incompressible sections are stored as they are rather than grown.
                if (z.len() as u64) < raw_len {
                    (codec, z)
                } else {
                    (Codec::Raw, join(pieces))
                }
            }
        };
        self.sections.push(PendingSection { kind, flags, codec, stored, raw_len });
        Ok(())
    }

    /// The finished pack as bytes.
    pub fn finish(self) -> Result<Vec<u8>, FormatError> {
        let bytes = self.lay_out();
        if within_raw_budget(self.sections.iter().map(|s| s.raw_len), bytes.len() as u64) {
            return Ok(bytes);
        }
        // Compression so good that readers would refuse the pack: raw storage always fits the budget.
        drop(bytes);
        let sections = self.sections.into_iter().map(PendingSection::into_raw).collect::<Result<Vec<_>, _>>()?;
        Ok(ContainerWriter { sections, ..self }.lay_out())
    }

    fn lay_out(&self) -> Vec<u8> {
        let n = self.sections.len();
        let table_end = (HEADER_LEN + n * ENTRY_LEN) as u64;
        let mut entries = Vec::with_capacity(n);
        let mut cursor = align_up(table_end);
        for s in &self.sections {
            entries.push(SectionEntry {
                kind: s.kind,
                flags: s.flags,
                codec: s.codec.id(),
                offset: cursor,
                stored_len: s.stored.len() as u64,
                raw_len: s.raw_len,
                checksum: xxh3_64(&s.stored),
            });
            cursor = align_up(cursor + s.stored.len() as u64);
        }
        // The file ends right after the last payload: no trailing padding.
        let file_len = entries.last().map_or(table_end, |e| e.offset + e.stored_len);
        let mut table = Vec::with_capacity(n * ENTRY_LEN);
        for e in &entries {
            e.write(&mut table);
        }
        let mut out = Vec::with_capacity(file_len as usize);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_MAJOR.to_le_bytes());
        out.extend_from_slice(&FORMAT_MINOR.to_le_bytes());
        for v in self.writer_version {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&file_len.to_le_bytes());
        out.extend_from_slice(&xxh3_64(&table).to_le_bytes());
        let header_checksum = xxh3_64(&out[..40]);
        out.extend_from_slice(&header_checksum.to_le_bytes());
        out.extend_from_slice(&table);
        for (e, s) in entries.iter().zip(&self.sections) {
            out.resize(e.offset as usize, 0);
            out.extend_from_slice(&s.stored);
        }
        debug_assert_eq!(out.len() as u64, file_len);
        out
    }
}

/// Whether sections of these raw lengths may live in a pack of `file_len` bytes (see [`MAX_EXPANSION`]).
pub fn within_raw_budget(raw_lens: impl IntoIterator<Item = u64>, file_len: u64) -> bool {
    let total = raw_lens.into_iter().try_fold(0u64, |acc, l| acc.checked_add(l));
    total.is_some_and(|t| t <= raw_budget(file_len))
}

/// The most bytes the sections of a pack of `file_len` bytes may decode to.
pub fn raw_budget(file_len: u64) -> u64 {
    RAW_ALLOWANCE.saturating_add(MAX_EXPANSION.saturating_mul(file_len))
}

/// Parses and checks the header, the table and the layout of `bytes`. Payload checksums are not
/// checked here (see [`check_section`]), so opening a pack stays cheap.
pub fn parse_layout(bytes: &[u8]) -> Result<(Header, Vec<SectionEntry>), FormatError> {
    let len = bytes.len() as u64;
    if bytes.len() < MAGIC.len() || bytes[..8] != MAGIC {
        // A short file that starts like a pack is truncated rather than foreign.
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            return Err(FormatError::Truncated { what: "magic".into(), needed: 8, available: len });
        }
        return Err(FormatError::BadMagic { found: bytes[..bytes.len().min(8)].to_vec() });
    }
    if bytes.len() < HEADER_LEN {
        return Err(FormatError::Truncated { what: "header".into(), needed: HEADER_LEN as u64, available: len });
    }
    if xxh3_64(&bytes[..40]) != u64_at(bytes, 40) {
        return Err(FormatError::HeaderChecksum);
    }
    let header = Header {
        major: u16_at(bytes, 8),
        minor: u16_at(bytes, 10),
        writer_version: [u16_at(bytes, 12), u16_at(bytes, 14), u16_at(bytes, 16)],
        section_count: u32_at(bytes, 20),
        file_len: u64_at(bytes, 24),
        table_checksum: u64_at(bytes, 32),
    };
    if header.major != FORMAT_MAJOR {
        return Err(FormatError::UnsupportedVersion { found: (header.major, header.minor), supported: (FORMAT_MAJOR, FORMAT_MINOR) });
    }
    if header.file_len != len {
        if header.file_len > len {
            return Err(FormatError::Truncated { what: "file".into(), needed: header.file_len, available: len });
        }
        return Err(FormatError::LengthMismatch { declared: header.file_len, actual: len });
    }
    if header.section_count > MAX_SECTIONS {
        return Err(FormatError::BadLayout {
            section: SectionKind(*b"----"),
            index: 0,
            reason: format!("{} sections exceeds the limit of {MAX_SECTIONS}", header.section_count),
        });
    }
    let table_end = HEADER_LEN as u64 + header.section_count as u64 * ENTRY_LEN as u64;
    if table_end > len {
        return Err(FormatError::Truncated { what: "section table".into(), needed: table_end, available: len });
    }
    let table = &bytes[HEADER_LEN..table_end as usize];
    if xxh3_64(table) != header.table_checksum {
        return Err(FormatError::TableChecksum);
    }
    let entries: Vec<SectionEntry> = table.chunks_exact(ENTRY_LEN).map(SectionEntry::read).collect();
    let mut cursor = table_end;
    for (index, e) in entries.iter().enumerate() {
        let layout = |reason: String| FormatError::BadLayout { section: e.kind, index, reason };
        if e.offset % ALIGN != 0 {
            return Err(layout(format!("offset {} is not {ALIGN}-byte aligned", e.offset)));
        }
        if e.offset < cursor {
            return Err(layout(format!("offset {} overlaps the table or the previous section (ends at {cursor})", e.offset)));
        }
        let end = e.offset.checked_add(e.stored_len).ok_or_else(|| layout("offset + length overflows".into()))?;
        if end > len {
            return Err(FormatError::Truncated { what: format!("section {} (#{index})", e.kind), needed: end, available: len });
        }
        if e.raw_len > MAX_RAW_SECTION_LEN {
            return Err(layout(format!("raw length {} exceeds the {MAX_RAW_SECTION_LEN}-byte limit", e.raw_len)));
        }
        match e.codec {
            0 if e.raw_len != e.stored_len => {
                return Err(layout(format!("raw section stores {} bytes but declares {}", e.stored_len, e.raw_len)));
            }
            0 | 1 => {}
            codec => return Err(FormatError::UnknownCodec { section: e.kind, index, codec }),
        }
        if let Some(at) = bytes[cursor as usize..e.offset as usize].iter().position(|&b| b != 0) {
            return Err(FormatError::BadPadding { offset: cursor + at as u64 });
        }
        if entries[..index].iter().any(|p| p.kind == e.kind) {
            return Err(FormatError::DuplicateSection { section: e.kind });
        }
        cursor = end;
    }
    if cursor != len {
        return Err(FormatError::LengthMismatch { declared: cursor, actual: len });
    }
    // Each raw_len is at most 2^30 and there are at most 4096 of them: the sum cannot overflow.
    let total: u64 = entries.iter().map(|e| e.raw_len).sum();
    if !within_raw_budget([total], len) {
        return Err(FormatError::BadLayout {
            section: SectionKind(*b"----"),
            index: 0,
            reason: format!(
                "sections declare {total} raw bytes, more than the {} a {len}-byte pack may hold ({RAW_ALLOWANCE} + {MAX_EXPANSION} x file length; a decompression bomb?)",
                raw_budget(len)
            ),
        });
    }
    Ok((header, entries))
}

/// Checks one section's checksum and returns its raw (decompressed) bytes.
/// `e` normally comes from [`parse_layout`] on the same bytes; any other entry is checked against
/// `bytes` and refused rather than trusted.
pub fn check_section(bytes: &[u8], index: usize, e: &SectionEntry) -> Result<Vec<u8>, FormatError> {
    let len = bytes.len() as u64;
    let stored =
        e.offset.checked_add(e.stored_len).filter(|&end| end <= len).map(|end| &bytes[e.offset as usize..end as usize]).ok_or_else(|| {
            FormatError::Truncated { what: format!("section {} (#{index})", e.kind), needed: e.offset.saturating_add(e.stored_len), available: len }
        })?;
    if e.raw_len > MAX_RAW_SECTION_LEN {
        return Err(FormatError::BadLayout {
            section: e.kind,
            index,
            reason: format!("raw length {} exceeds the {MAX_RAW_SECTION_LEN}-byte limit", e.raw_len),
        });
    }
    if xxh3_64(stored) != e.checksum {
        return Err(FormatError::ChecksumMismatch { section: e.kind, index });
    }
    match e.codec {
        0 => Ok(stored.to_vec()),
        _ => {
            let decompress_err = |reason: String| FormatError::Decompress { section: e.kind, reason };
            // The frame's own content size must agree with the table before anything is allocated.
            match zstd::zstd_safe::get_frame_content_size(stored) {
                Ok(Some(n)) if n == e.raw_len => {}
                Ok(Some(n)) => return Err(decompress_err(format!("frame holds {n} bytes but the table declares {}", e.raw_len))),
                _ => return Err(decompress_err("frame does not declare its content size".into())),
            }
            let mut raw = Vec::with_capacity(e.raw_len as usize);
            zstd::bulk::Decompressor::new()
                .and_then(|mut d| d.decompress_to_buffer(stored, &mut raw))
                .map_err(|err| decompress_err(err.to_string()))?;
            if raw.len() as u64 != e.raw_len {
                return Err(decompress_err(format!("decompressed to {} bytes, table declares {}", raw.len(), e.raw_len)));
            }
            Ok(raw)
        }
    }
}
