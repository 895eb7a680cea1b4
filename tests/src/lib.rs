//! Helpers shared by the end-to-end tests: temporary directories, baking shipped worlds once, and
//! reading every tile of a bake back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kiln_formats::sections::{Manifest, TerrainMesh, VertexAo};
use kiln_formats::{Pack, TileContents, TileId};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

/// A fresh, empty directory under the target directory, unique per test name.
pub fn scratch(name: &str) -> PathBuf {
    let dir = repo_root().join("target").join("e2e-scratch").join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs the `kiln` CLI in-process and returns its exit code.
pub fn kiln(args: &[&str]) -> i32 {
    let mut all = vec!["kiln"];
    all.extend_from_slice(args);
    kiln_bake::cli::run(all)
}

/// Bakes `worlds/tiny.toml` once per test binary and returns the bake directory.
pub fn tiny_bake() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = scratch("tiny-shared");
        let world = repo_root().join("worlds/tiny.toml");
        assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]), 0);
        out.join("tiny")
    })
}

/// The manifest of a bake.
pub fn manifest(bake_dir: &Path) -> Manifest {
    Pack::open(&bake_dir.join("manifest.kpack")).unwrap().require().unwrap()
}

/// A tile of a bake, read with every cross-section check the viewer's loader makes.
pub fn tile_contents(bake_dir: &Path, id: TileId) -> TileContents {
    let m = manifest(bake_dir);
    let node = m.tile(id).expect("tile in manifest");
    let pack = Pack::open(&bake_dir.join(&node.path)).unwrap();
    let contents = TileContents::read(&pack).unwrap();
    assert_eq!(contents.id(), id, "{} names its own tile", node.path);
    contents
}

/// A tile's mesh and AO from a bake.
pub fn tile(bake_dir: &Path, level: u32, x: u32, y: u32) -> (TerrainMesh, VertexAo) {
    let t = tile_contents(bake_dir, TileId::new(level, x, y));
    (t.mesh.expect("a tile mesh"), t.ao.expect("per-vertex AO"))
}

/// Copies a directory tree (for corrupting a copy of a bake).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Every file under `dir` (a bake, say) with its bytes, by path relative to `dir`: two bakes are
/// byte-identical when these are equal.
pub fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_owned(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The density of a bake's whole world, put together from `kiln export --density` of every level-0
/// tile (each sample where the tiles' exports, halo included, put it), exported into the scratch
/// directory `label` (tests run in parallel: one label per caller). Returns the volume's sample
/// counts and its samples, X fastest.
pub fn exported_density(bake_dir: &Path, label: &str) -> ([usize; 3], Vec<f32>) {
    let m = manifest(bake_dir);
    let dims = m.volume_dims.map(|d| d as usize);
    let mut data = vec![f32::NAN; dims[0] * dims[1] * dims[2]];
    let out = scratch(label);
    for n in m.nodes.iter().filter(|n| n.level == 0) {
        let raw = out.join(format!("{}_{}.raw", n.x, n.y));
        let tile = format!("{},{}", n.x, n.y);
        assert_eq!(kiln(&["export", bake_dir.to_str().unwrap(), "--tile", &tile, "--density", "--out", raw.to_str().unwrap()]), 0);
        let header: serde_json::Value = serde_json::from_slice(&std::fs::read(raw.with_extension("raw.json")).unwrap()).unwrap();
        let d: Vec<usize> = header["dims"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        let o: Vec<i64> = header["origin_voxel"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        let bytes = std::fs::read(&raw).unwrap();
        for k in 0..d[2] {
            for j in 0..d[1] {
                for i in 0..d[0] {
                    let g = [o[0] + i as i64, o[1] + j as i64, o[2] + k as i64];
                    if (0..3).any(|a| g[a] < 0 || g[a] >= dims[a] as i64) {
                        continue;
                    }
                    let at = 4 * (i + d[0] * (j + d[1] * k));
                    data[g[0] as usize + dims[0] * (g[1] as usize + dims[1] * g[2] as usize)] =
                        f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
                }
            }
        }
    }
    assert!(data.iter().all(|v| v.is_finite()), "the tiles' exports cover the volume");
    (dims, data)
}
