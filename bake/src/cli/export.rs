//! `kiln export`: a tile's mesh as glTF binary or PLY, or its density samples as raw f32 + JSON.

use std::path::Path;

use kiln_formats::sections::{Manifest, TerrainMesh};
use kiln_formats::{Pack, Section, TileContents};
use serde_json::json;

use super::CliError;

/// Mesh file formats `kiln export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MeshFormat {
    /// glTF 2.0 binary; custom attributes `_AO` (float) and `_IRRADIANCE` (vec3). Positions in world units (Z up) under a root
    /// node that turns them Y-up, as glTF viewers expect.
    Glb,
    /// Binary little-endian PLY with x y z nx ny nz ao irradiance_r irradiance_g irradiance_b per vertex.
    Ply,
}

/// The mesh and per-vertex attributes of one tile, as exported.
pub struct ExportMesh {
    /// Vertex positions in world units, Z up.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals pointing toward air.
    pub normals: Vec<[f32; 3]>,
    /// Ambient occlusion per vertex in [0, 1], 1 fully open (all 1 when the pack has no `VXAO`).
    pub ao: Vec<f32>,
    /// Baked irradiance (sky, bounces, static lights; sun and moon direct light excluded), RGB.
    pub irradiance: Vec<[f32; 3]>,
    /// Triangle list, three indices into the vertex arrays per triangle; every vertex is used.
    pub indices: Vec<u32>,
}

/// Loads tile (`x`, `y`) of `level` from a bake directory: its surface triangles (and its skirts with
/// `skirts`) and the vertices they use.
pub fn load_tile(bake_dir: &Path, level: u32, x: u32, y: u32, skirts: bool) -> Result<ExportMesh, CliError> {
    let manifest_path = bake_dir.join("manifest.kpack");
    let manifest: Manifest = Pack::open(&manifest_path)?.require().map_err(|e| CliError::Failed(format!("{}: {e}", manifest_path.display())))?;
    let node = manifest.node(level, x, y).ok_or_else(|| {
        let [tx, ty] = manifest.tiles_at_level(level.min(manifest.levels.saturating_sub(1)));
        CliError::Usage(format!(
            "{}: no tile L{level} ({x},{y}); level {level} has {tx}x{ty} tiles and the bake has levels 0..{}",
            bake_dir.display(),
            manifest.levels.saturating_sub(1)
        ))
    })?;
    let path = bake_dir.join(&node.path);
    let pack = Pack::open(&path)?;
    let at = |e: kiln_formats::FormatError| CliError::Failed(format!("{}: {e}", path.display()));
    // One cross-section check (per-vertex counts against the mesh, finite values) for every reader.
    let tile = TileContents::read(&pack).map_err(at)?;
    let mesh = tile.mesh.ok_or_else(|| at(kiln_formats::FormatError::MissingSection { section: TerrainMesh::KIND }))?;
    let ao = tile.ao.map(|a| (0..a.0.len()).map(|i| a.value(i)).collect()).unwrap_or_else(|| vec![1.0; mesh.positions.len()]);
    let irradiance = tile.irradiance.map(|v| v.0).unwrap_or_else(|| vec![[0.0; 3]; mesh.positions.len()]);
    let kept = if skirts { mesh.indices.len() } else { mesh.main_index_count };
    let full = ExportMesh { positions: mesh.positions, normals: mesh.normals, ao, irradiance, indices: mesh.indices };
    Ok(full.keep_triangles(kept))
}

impl ExportMesh {
    /// The first `index_count / 3` triangles and only the vertices they use, in the pack's vertex
    /// order, so that no vertex is left as a loose point. The caller's indices are below the vertex
    /// count (the mesh decoder checks them).
    fn keep_triangles(self, index_count: usize) -> ExportMesh {
        let triangles = &self.indices[..index_count.min(self.indices.len()) / 3 * 3];
        let mut remap = vec![u32::MAX; self.positions.len()];
        for &i in triangles {
            remap[i as usize] = 0;
        }
        let kept: Vec<usize> = (0..remap.len()).filter(|&i| remap[i] == 0).collect();
        for (new, &old) in kept.iter().enumerate() {
            remap[old] = new as u32;
        }
        ExportMesh {
            positions: kept.iter().map(|&i| self.positions[i]).collect(),
            normals: kept.iter().map(|&i| self.normals[i]).collect(),
            ao: kept.iter().map(|&i| self.ao[i]).collect(),
            irradiance: kept.iter().map(|&i| self.irradiance[i]).collect(),
            indices: triangles.iter().map(|&i| remap[i as usize]).collect(),
        }
    }
}

/// Writes `mesh` to `out` in `format`, atomically.
pub fn write_mesh(mesh: &ExportMesh, format: MeshFormat, out: &Path) -> Result<(), CliError> {
    let bytes = match format {
        MeshFormat::Glb => glb_bytes(mesh),
        MeshFormat::Ply => ply_bytes(mesh),
    };
    kiln_formats::write_atomic(out, &bytes).map_err(CliError::Pack)
}

fn ply_bytes(m: &ExportMesh) -> Vec<u8> {
    let header = format!(
        "ply\nformat binary_little_endian 1.0\ncomment Kiln tile export: world units, Z up, ao in [0,1]\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nproperty float ao\nproperty float irradiance_r\nproperty float irradiance_g\nproperty float irradiance_b\nelement face {}\nproperty list uchar uint vertex_indices\nend_header\n",
        m.positions.len(),
        m.indices.len() / 3
    );
    let mut out = header.into_bytes();
    for i in 0..m.positions.len() {
        for v in m.positions[i].iter().chain(&m.normals[i]).chain(std::iter::once(&m.ao[i])).chain(&m.irradiance[i]) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for t in m.indices.chunks_exact(3) {
        out.push(3);
        for i in t {
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
    out
}

fn glb_bytes(m: &ExportMesh) -> Vec<u8> {
    let n = m.positions.len();
    let mut bin = Vec::with_capacity(n * 28 + m.indices.len() * 4);
    let mut views = Vec::new();
    let mut push_view = |bin: &mut Vec<u8>, data: Vec<u8>, target: u32| {
        let offset = bin.len();
        bin.extend_from_slice(&data);
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push(json!({ "buffer": 0, "byteOffset": offset, "byteLength": data.len(), "target": target }));
        views.len() - 1
    };
    let flat = |v: &[[f32; 3]]| v.iter().flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes())).collect::<Vec<u8>>();
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in &m.positions {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    if n == 0 {
        (lo, hi) = ([0.0; 3], [0.0; 3]);
    }
    const ARRAY_BUFFER: u32 = 34962;
    const ELEMENT_ARRAY_BUFFER: u32 = 34963;
    let pos = push_view(&mut bin, flat(&m.positions), ARRAY_BUFFER);
    let nrm = push_view(&mut bin, flat(&m.normals), ARRAY_BUFFER);
    let ao = push_view(&mut bin, m.ao.iter().flat_map(|v| v.to_le_bytes()).collect(), ARRAY_BUFFER);
    let irr = push_view(&mut bin, flat(&m.irradiance), ARRAY_BUFFER);
    let idx = push_view(&mut bin, m.indices.iter().flat_map(|v| v.to_le_bytes()).collect(), ELEMENT_ARRAY_BUFFER);
    const FLOAT: u32 = 5126;
    const UNSIGNED_INT: u32 = 5125;
    let doc = json!({
        "asset": { "version": "2.0", "generator": concat!("kiln ", env!("CARGO_PKG_VERSION")) },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        // Kiln is Z-up; glTF is Y-up: rotate -90 degrees about X at the root, keep world coordinates in the data.
        "nodes": [{ "name": "kiln-world-z-up", "rotation": [-std::f32::consts::FRAC_1_SQRT_2, 0.0, 0.0, std::f32::consts::FRAC_1_SQRT_2], "children": [1] }, { "name": "tile", "mesh": 0 }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "NORMAL": 1, "_AO": 2, "_IRRADIANCE": 3 }, "indices": 4, "mode": 4 }] }],
        "buffers": [{ "byteLength": bin.len() }],
        "bufferViews": views,
        "accessors": [
            { "bufferView": pos, "componentType": FLOAT, "count": n, "type": "VEC3", "min": lo, "max": hi },
            { "bufferView": nrm, "componentType": FLOAT, "count": n, "type": "VEC3" },
            { "bufferView": ao, "componentType": FLOAT, "count": n, "type": "SCALAR" },
            { "bufferView": irr, "componentType": FLOAT, "count": n, "type": "VEC3" },
            { "bufferView": idx, "componentType": UNSIGNED_INT, "count": m.indices.len(), "type": "SCALAR" },
        ],
    });
    let mut json_bytes = serde_json::to_vec(&doc).expect("JSON values serialise");
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json_bytes);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// Writes the density samples that tile (`x`, `y`) of `level` was meshed from — its cell corners
/// plus a one-sample halo on every side — as raw little-endian f32 to `out`, and a JSON header to
/// `out` + `.json`. The samples are recomputed from the world definition embedded in the bake's
/// manifest, with the same code and therefore the same values the bake used.
pub fn export_density(bake_dir: &Path, level: u32, x: u32, y: u32, out: &Path) -> Result<(), CliError> {
    use crate::pipeline::{TileId, Tiling};
    let manifest_path = bake_dir.join("manifest.kpack");
    let pack = Pack::open(&manifest_path)?;
    let at = |e: kiln_formats::FormatError| CliError::Failed(format!("{}: {e}", manifest_path.display()));
    let manifest: Manifest = pack.require().map_err(at)?;
    let sources: kiln_formats::sections::EmbeddedFiles = pack.require().map_err(at)?;
    if manifest.node(level, x, y).is_none() {
        return Err(CliError::Usage(format!("{}: no tile L{level} ({x},{y}) in this bake", bake_dir.display())));
    }
    let world = crate::world::World::from_embedded(&sources, &manifest_path)?;
    let volume = crate::density::generate(&world);
    let tiling = Tiling::new(volume.dims, manifest.tile_voxels, manifest.voxel_size);
    let id = TileId { level, x, y };
    let stride = Tiling::stride(level);
    let (min, cells) = tiling.cell_range(id);
    let origin = min.map(|v| v - stride);
    let dims = cells.map(|c| c + 3);
    let block = volume.block(origin, dims, stride);
    let data: Vec<u8> = block.data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let header = json!({
        "format": "kiln density export v1",
        "world": manifest.world_name,
        "tile": { "level": level, "x": x, "y": y },
        "data_file": out.file_name().map(|n| n.to_string_lossy().into_owned()),
        "sample_type": "f32",
        "byte_order": "little-endian",
        "layout": "x fastest, then y, then z",
        "dims": dims,
        "halo": 1,
        "origin_voxel": origin,
        "stride_voxels": stride,
        "origin_world": origin.map(|v| v as f32 * manifest.voxel_size),
        "sample_spacing_world": stride as f32 * manifest.voxel_size,
        "voxel_size": manifest.voxel_size,
        "isolevel": 0.0,
        "solid": "density > isolevel (positive is solid)",
        "outside_volume": "clamped to the nearest edge sample",
    });
    kiln_formats::write_atomic(out, &data).map_err(CliError::Pack)?;
    let mut header_path = out.as_os_str().to_owned();
    header_path.push(".json");
    let header_bytes = serde_json::to_vec_pretty(&header).expect("JSON values serialise");
    kiln_formats::write_atomic(Path::new(&header_path), &header_bytes).map_err(CliError::Pack)
}
