//! `kiln verify`: every checksum and every cross-reference of a pack or a bake directory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kiln_formats::sections::{Manifest, PackInfo, PackKind, TerrainMesh, VertexAo};
use kiln_formats::Pack;
use xxhash_rust::xxh3::xxh3_64;

use super::packs::find_packs;
use super::CliError;

/// Checks everything under `path`; returns one line per problem (empty when all holds) and the
/// number of packs checked.
pub fn check(path: &Path) -> Result<(Vec<String>, usize), CliError> {
    let files = find_packs(path).map_err(|e| CliError::io(path, e))?;
    if files.is_empty() {
        return Err(CliError::Usage(format!("{}: no .kpack files found", path.display())));
    }
    let mut problems = Vec::new();
    for file in &files {
        match Pack::open(file) {
            Err(e) => problems.push(e.to_string()),
            Ok(pack) => {
                problems.extend(pack.verify().into_iter().map(|e| format!("{}: {e}", file.display())));
                problems.extend(check_pack_consistency(file, &pack));
            }
        }
    }
    if path.is_dir() {
        let manifest_path = path.join("manifest.kpack");
        if manifest_path.is_file() {
            problems.extend(check_manifest(path, &manifest_path, &files));
        }
    }
    Ok((problems, files.len()))
}

/// Prints problems (one per line) and returns the process exit code.
pub fn run(path: &Path) -> Result<i32, CliError> {
    let (problems, n) = check(path)?;
    for p in &problems {
        println!("{p}");
    }
    if problems.is_empty() {
        println!("ok: {n} pack(s) verified under {}", path.display());
        Ok(0)
    } else {
        eprintln!("{} problem(s) in {n} pack(s)", problems.len());
        Ok(1)
    }
}

/// Sections inside one pack that must agree with each other.
fn check_pack_consistency(file: &Path, pack: &Pack) -> Vec<String> {
    let mut out = Vec::new();
    let at = |m: String| format!("{}: {m}", file.display());
    // A PINF that fails to decode was already reported by `Pack::verify`.
    if let Ok(None) = pack.get::<PackInfo>() {
        out.push(at("no PINF pack-info section".into()));
    }
    if let (Ok(Some(mesh)), Ok(Some(ao))) = (pack.get::<TerrainMesh>(), pack.get::<VertexAo>()) {
        if ao.0.len() != mesh.positions.len() {
            out.push(at(format!("VXAO has {} values for {} mesh vertices", ao.0.len(), mesh.positions.len())));
        }
    }
    out
}

fn check_manifest(dir: &Path, manifest_path: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    let manifest = match Pack::open(manifest_path).map(|p| p.require::<Manifest>()) {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => return vec![format!("{}: {e}", manifest_path.display())],
        Err(_) => return out, // already reported
    };
    let mut listed = BTreeSet::new();
    for node in &manifest.nodes {
        let path = dir.join(&node.path);
        listed.insert(path.clone());
        let at = |m: String| format!("{}: {m}", path.display());
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                out.push(format!("{}: listed in the manifest as L{} ({},{}) but cannot be read: {e}", path.display(), node.level, node.x, node.y));
                continue;
            }
        };
        if bytes.len() as u64 != node.file_len || xxh3_64(&bytes) != node.content_hash {
            out.push(at(format!(
                "content does not match the manifest (hash {:016x}, {} bytes; manifest says {:016x}, {} bytes)",
                xxh3_64(&bytes),
                bytes.len(),
                node.content_hash,
                node.file_len
            )));
        }
        let Ok(pack) = Pack::from_bytes(bytes) else { continue };
        match pack.get::<PackInfo>() {
            Ok(Some(info)) => {
                let expected = PackKind::Tile { level: node.level, x: node.x, y: node.y };
                if info.kind != expected {
                    out.push(at(format!("pack says it is {:?}, manifest lists it as {expected:?}", info.kind)));
                }
                if info.world_name != manifest.world_name {
                    out.push(at(format!("pack belongs to world {:?}, the manifest to {:?}", info.world_name, manifest.world_name)));
                }
            }
            _ => continue,
        }
        if let Ok(Some(mesh)) = pack.get::<TerrainMesh>() {
            let tris = (mesh.main_index_count / 3) as u32;
            if mesh.positions.len() as u32 != node.vertex_count || tris != node.triangle_count {
                out.push(at(format!(
                    "mesh has {} vertices / {tris} triangles, manifest says {} / {}",
                    mesh.positions.len(),
                    node.vertex_count,
                    node.triangle_count
                )));
            }
        }
    }
    for level in 0..manifest.levels {
        let [tx, ty] = manifest.tiles_at_level(level);
        for y in 0..ty {
            for x in 0..tx {
                if manifest.node(level, x, y).is_none() {
                    out.push(format!("{}: tile L{level} ({x},{y}) is missing from the quadtree", manifest_path.display()));
                }
            }
        }
    }
    for f in files {
        if f != manifest_path && !listed.contains(f) {
            out.push(format!("{}: pack is not listed in the manifest", f.display()));
        }
    }
    out
}
