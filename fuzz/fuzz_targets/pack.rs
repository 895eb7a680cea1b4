//! The pack reader: any bytes through `Pack::from_bytes`, `verify` and every typed section getter,
//! and the same bytes as the raw payload of every known section kind. Checksums make a mutated
//! payload fail early inside a whole pack, so each section's stored bytes are also decompressed
//! here without the checksum and handed to its decoder, and the whole input is tried as a payload.
#![no_main]

use kiln_formats::sections::{
    section_type, EmbeddedFiles, IrradianceGrid, Manifest, PackInfo, TerrainMesh, VertexAo, VertexIrradiance, SECTION_TYPES,
};
use kiln_formats::{Pack, SectionKind, TileContents};
use libfuzzer_sys::fuzz_target;

/// Decodes `raw` as a section of `kind` through the section table, as `kiln inspect` does.
fn summarize(kind: SectionKind, raw: &[u8]) {
    if let Some(t) = section_type(kind) {
        let _ = (t.summarize)(raw);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(pack) = Pack::from_bytes(data.to_vec()) {
        let _ = pack.verify();
        for i in 0..pack.sections().len() {
            if let Ok(raw) = pack.raw_section(i) {
                summarize(pack.sections()[i].kind, &raw);
            }
        }
        let _ = pack.get::<PackInfo>();
        let _ = pack.get::<TerrainMesh>();
        let _ = pack.get::<VertexAo>();
        let _ = pack.get::<VertexIrradiance>();
        let _ = pack.get::<IrradianceGrid>();
        let _ = pack.get::<Manifest>();
        let _ = pack.get::<EmbeddedFiles>();
        let _ = TileContents::read(&pack);
        for e in pack.sections() {
            let stored =
                usize::try_from(e.offset).ok().zip(usize::try_from(e.stored_len).ok()).and_then(|(at, len)| data.get(at..at.checked_add(len)?));
            let raw = match (stored, e.codec) {
                (Some(s), 0) => Some(s.to_vec()),
                (Some(s), 1) => zstd::bulk::decompress(s, e.raw_len.min(1 << 24) as usize).ok(),
                _ => None,
            };
            if let Some(raw) = raw {
                summarize(e.kind, &raw);
            }
        }
    }
    for t in SECTION_TYPES {
        let _ = (t.summarize)(data);
    }
});
