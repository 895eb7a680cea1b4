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
