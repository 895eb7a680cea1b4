//! Checks that a cache hit is a well-formed artifact of its stage before the bake uses it.
//!
//! The store's own checksum only proves that an entry is what was written under its key; an entry
//! written by a buggy or hostile process, or copied from another key, passes it. So every payload is
//! parsed and checked against what the stage expects. The checks of a cached pack are the cheap ones
//! that an unchanged world's rebake (every pack a hit) can afford: the container layout, every
//! section's checksum, the section kinds, the `PINF` naming this tile, world and inputs, and section
//! lengths that agree with the vertex count — not a full decode, which would cost more than the
//! whole no-op rebake. Geometry and lighting payloads, read only when something changed, are decoded.

use kiln_formats::container::{check_section, parse_layout};
use kiln_formats::sections::{
    IrradianceGrid, Lattice, PackInfo, PackKind, TerrainMesh, VertexAo, VertexIrradiance,
};
use kiln_formats::Section;
use xxhash_rust::xxh3::xxh3_64;

use super::inputs::TileInputHashes;
use super::lighting::TileLighting;
use super::tile::{BakedTile, TileGeometry};
use super::TileId;

/// What a cached pack must be: the tile's, of this world, made from these inputs.
pub struct PackIdentity<'a> {
    pub id: TileId,
    pub world_name: &'a str,
    pub inputs_hash: u64,
}

/// The sections of a tile pack, in the order the writer adds them.
const TILE_SECTIONS: [[u8; 4]; 5] = [*b"PINF", *b"TMSH", *b"VXAO", *b"VXIR", *b"IRVL"];

/// Parses and checks a cached pack (see the module documentation for what is checked).
pub fn pack(bytes: &[u8], want: &PackIdentity) -> Result<BakedTile, String> {
    let tile = BakedTile::from_bytes(want.id, bytes).ok_or("shorter than a tile summary")?;
    let (_, entries) = parse_layout(&tile.pack).map_err(|e| format!("pack: {e}"))?;
    let kinds: Vec<[u8; 4]> = entries.iter().map(|e| e.kind.0).collect();
    if kinds != TILE_SECTIONS {
        let names: Vec<String> = kinds
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        return Err(format!(
            "pack holds sections [{}], not a tile's",
            names.join(", ")
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        // parse_layout has checked that every section lies inside the file.
        let stored = &tile.pack[e.offset as usize..(e.offset + e.stored_len) as usize];
        if xxh3_64(stored) != e.checksum {
            return Err(format!(
                "pack: section {i} ({}) fails its checksum",
                String::from_utf8_lossy(&e.kind.0)
            ));
        }
    }
    let info = check_section(&tile.pack, 0, &entries[0])
        .and_then(|raw| PackInfo::decode(&raw))
        .map_err(|e| format!("pack: {e}"))?;
    let expected = PackKind::Tile {
        level: want.id.level,
        x: want.id.x,
        y: want.id.y,
    };
    if info.kind != expected
        || info.world_name != want.world_name
        || info.inputs_hash != want.inputs_hash
    {
        return Err(format!(
            "pack is {:?} of world {:?} (inputs {:016x}), not {expected:?} of {:?} (inputs {:016x})",
            info.kind, info.world_name, info.inputs_hash, want.world_name, want.inputs_hash
        ));
    }
    let v = tile.summary.vertex_count as u64;
    let raw = |k: &[u8; 4]| {
        entries
            .iter()
            .find(|e| &e.kind.0 == k)
            .map_or(0, |e| e.raw_len)
    };
    if raw(b"VXAO") != v || raw(b"VXIR") != 4 * v {
        return Err(format!(
            "pack: VXAO holds {} bytes and VXIR {} for {v} vertices",
            raw(b"VXAO"),
            raw(b"VXIR")
        ));
    }
    if raw(b"IRVL") < 36 || (raw(b"IRVL") - 36) % 48 != 0 {
        return Err(format!(
            "pack: IRVL holds {} bytes, not 36 + 48·N",
            raw(b"IRVL")
        ));
    }
    Ok(tile)
}

/// Parses a cached geometry payload and checks that its mesh and AO decode, agree with its summary,
/// and lie on `lattice`, the tile's own (another tile's geometry is well-formed too).
pub fn geometry(bytes: &[u8], lattice: Lattice) -> Result<TileGeometry, String> {
    let g = TileGeometry::from_bytes(bytes).ok_or("truncated geometry payload")?;
    let mesh = TerrainMesh::decode(&g.mesh_raw).map_err(|e| format!("mesh: {e}"))?;
    let ao = VertexAo::decode(&g.ao_raw).map_err(|e| format!("ambient occlusion: {e}"))?;
    if mesh.lattice != lattice {
        return Err(format!(
            "mesh lies on lattice {:?}, not this tile's {lattice:?}",
            mesh.lattice
        ));
    }
    let (v, t) = (mesh.positions.len(), mesh.main_index_count / 3);
    if v != g.summary.vertex_count as usize
        || t != g.summary.triangle_count as usize
        || ao.0.len() != v
    {
        return Err(format!(
            "mesh has {v} vertices and {t} triangles, AO {} values, summary says {} vertices and {} triangles",
            ao.0.len(),
            g.summary.vertex_count,
            g.summary.triangle_count
        ));
    }
    if mesh.positions.iter().flatten().any(|c| !c.is_finite()) || !g.summary.own_error.is_finite() {
        return Err("non-finite position or error".into());
    }
    Ok(g)
}

/// Parses a cached lighting payload and checks that both sections decode and that the volume slice
/// has the tile's box and dimensions (`slice`: min, max, dims). Its vertex count is compared with
/// the tile's geometry by [`lighting_fits`] once that is known.
pub fn lighting(
    bytes: &[u8],
    slice: ([f32; 3], [f32; 3], [u32; 3]),
) -> Result<TileLighting, String> {
    let l = TileLighting::from_bytes(bytes).ok_or("truncated lighting payload")?;
    VertexIrradiance::decode(&l.vertex_raw).map_err(|e| format!("vertex irradiance: {e}"))?;
    let grid =
        IrradianceGrid::decode(&l.volume_raw).map_err(|e| format!("irradiance volume: {e}"))?;
    if (grid.min, grid.max, grid.dims) != slice {
        return Err(format!(
            "irradiance volume spans {:?}..{:?} in {:?} cells, not this tile's {:?}..{:?} in {:?}",
            grid.min, grid.max, grid.dims, slice.0, slice.1, slice.2
        ));
    }
    Ok(l)
}

/// Whether cached lighting has one value per vertex of the geometry it will be packed with.
pub fn lighting_fits(l: &TileLighting, g: &TileGeometry) -> Result<(), String> {
    let v = g.summary.vertex_count as usize;
    if l.vertex_raw.len() != 4 * v {
        return Err(format!(
            "vertex irradiance holds {} bytes for {v} vertices",
            l.vertex_raw.len()
        ));
    }
    Ok(())
}

/// A cached density volume: `expected` bytes of finite f32 samples.
pub fn volume(bytes: &[u8], expected: usize) -> Result<Vec<f32>, String> {
    if bytes.len() != expected {
        return Err(format!(
            "{} bytes, not the {expected} of this world's volume",
            bytes.len()
        ));
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
        return Err(format!(
            "{} bytes, not {expected} for {tiles} tiles",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(TileInputHashes::BYTES)
        .map(TileInputHashes::from_bytes)
        .collect())
}
