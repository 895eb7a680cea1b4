//! Checks that a cache hit is a well-formed artifact of its stage before the bake uses it.
//!
//! The store's own checksum only proves that an entry is what was written under its key; an entry
//! written by a buggy or hostile process, or copied from another key, passes it. So every payload is
//! parsed and checked against what the stage expects. The checks of a cached pack are the cheap ones
//! that an unchanged world's rebake (every pack a hit) can afford: the container layout, every
//! section's checksum, the section kinds, the `PINF` naming this tile, world and inputs, and section
//! lengths that agree with the vertex count — not a full decode, which would cost more than the
//! whole no-op rebake. Geometry and lighting payloads, read only when something changed, are decoded.

use kiln_formats::container::{check_section, parse_layout, SectionEntry};
use kiln_formats::sections::{PackInfo, PackKind};
use kiln_formats::{Section, SectionKind};
use xxhash_rust::xxh3::xxh3_64;

use super::inputs::TileInputHashes;
use super::product::TileProduct;
use super::tile::BakedTile;
use super::TileId;

/// What a cached pack must be: the tile's, of this world, made from these inputs, holding the
/// sections of `products` after its `PINF`.
pub struct PackIdentity<'a> {
    pub id: TileId,
    pub world_name: &'a str,
    pub inputs_hash: u64,
    pub products: &'a [&'a dyn TileProduct],
}

/// Parses and checks a cached pack (see the module documentation for what is checked).
pub fn pack(bytes: &[u8], want: &PackIdentity) -> Result<BakedTile, String> {
    let tile = BakedTile::from_bytes(want.id, bytes).ok_or("shorter than a tile summary")?;
    let entries = sound_sections(&tile.pack)?;
    let kinds: Vec<SectionKind> = entries.iter().map(|e| e.kind).collect();
    let expected: Vec<SectionKind> = std::iter::once(PackInfo::KIND).chain(want.products.iter().flat_map(|p| p.sections().iter().copied())).collect();
    // Products whose sections are optional add all of them or none (trees in a world without any).
    let mut rest = kinds.strip_prefix(&[PackInfo::KIND][..]).unwrap_or(&[]);
    let mut fits = kinds.first() == Some(&PackInfo::KIND);
    for p in want.products {
        match rest.strip_prefix(p.sections()) {
            Some(after) => rest = after,
            None if p.sections_optional() => {}
            None => fits = false,
        }
    }
    if !fits || !rest.is_empty() {
        let names = |k: &[SectionKind]| k.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
        return Err(format!("pack holds sections [{}], not a tile's [{}]", names(&kinds), names(&expected)));
    }
    let info = check_section(&tile.pack, 0, &entries[0]).and_then(|raw| PackInfo::decode(&raw)).map_err(|e| format!("pack: {e}"))?;
    let expected = PackKind::Tile { level: want.id.level, x: want.id.x, y: want.id.y };
    if info.kind != expected || info.world_name != want.world_name || info.inputs_hash != want.inputs_hash {
        return Err(format!(
            "pack is {:?} of world {:?} (inputs {:016x}), not {expected:?} of {:?} (inputs {:016x})",
            info.kind, info.world_name, info.inputs_hash, want.world_name, want.inputs_hash
        ));
    }
    let raw_len = |k: SectionKind| entries.iter().find(|e| e.kind == k).map_or(0, |e| e.raw_len);
    for p in want.products {
        p.check_packed(u64::from(tile.summary.vertex_count), &raw_len).map_err(|e| format!("pack: {e}"))?;
    }
    Ok(tile)
}

/// The section table of a pack whose layout is sound and whose every section matches its checksum.
fn sound_sections(pack: &[u8]) -> Result<Vec<SectionEntry>, String> {
    let (_, entries) = parse_layout(pack).map_err(|e| format!("pack: {e}"))?;
    for (i, e) in entries.iter().enumerate() {
        // parse_layout has checked that every section lies inside the file.
        let stored = &pack[e.offset as usize..(e.offset + e.stored_len) as usize];
        if xxh3_64(stored) != e.checksum {
            return Err(format!("pack: section {i} ({}) fails its checksum", e.kind));
        }
    }
    Ok(entries)
}

/// Checks a cached shared pack as cheaply as a cached tile pack: its layout, every section's
/// checksum, exactly the section kinds `kinds` after its `PINF`, and the `PINF` naming `kind` of
/// world `world_name`. Its sections are decoded only when a computation reads them.
pub fn shared_pack(bytes: &[u8], kind: &PackKind, world_name: &str, kinds: &[SectionKind]) -> Result<(), String> {
    let entries = sound_sections(bytes)?;
    let found: Vec<SectionKind> = entries.iter().map(|e| e.kind).collect();
    if found.first() != Some(&PackInfo::KIND) || found[1..] != *kinds {
        return Err(format!("pack holds sections {found:?}, not PINF and {kinds:?}"));
    }
    let info = check_section(bytes, 0, &entries[0]).and_then(|raw| PackInfo::decode(&raw)).map_err(|e| format!("pack: {e}"))?;
    if info.kind != *kind || info.world_name != world_name {
        return Err(format!("pack is {:?} of world {:?}, not {kind:?} of {world_name:?}", info.kind, info.world_name));
    }
    Ok(())
}

/// A cached density volume: `expected` bytes of finite f32 samples.
pub fn volume(bytes: &[u8], expected: usize) -> Result<Vec<f32>, String> {
    if bytes.len() != expected {
        return Err(format!("{} bytes, not the {expected} of this world's volume", bytes.len()));
    }
    let data: Vec<f32> = bytemuck::pod_collect_to_vec(bytes);
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(format!("sample {i} is not finite"));
    }
    Ok(data)
}

/// A cached list of per-tile input hashes: one per tile. (Their values cannot be checked without
/// the density volume they summarise, which this entry exists to avoid loading.)
pub fn tile_inputs(bytes: &[u8], tiles: usize) -> Result<Vec<TileInputHashes>, String> {
    let expected = tiles * TileInputHashes::BYTES;
    if bytes.len() != expected {
        return Err(format!("{} bytes, not {expected} for {tiles} tiles", bytes.len()));
    }
    Ok(bytes.chunks_exact(TileInputHashes::BYTES).map(TileInputHashes::from_bytes).collect())
}
