//! What the benches that run the `kiln` binary share (`#[path = "support/mod.rs"] mod support;`).

use std::path::{Path, PathBuf};

/// The `kiln` binary built beside the running example (`cargo build --release -p kiln-bake`).
pub fn kiln() -> PathBuf {
    let exe = std::env::current_exe().expect("the example's own path");
    let release = exe.parent().and_then(Path::parent).expect("target/release/examples/..");
    release.join("kiln")
}

/// The name of the world in `world`, or the bench ends with the world file's error.
pub fn world_name(bench: &str, world: &str) -> String {
    match kiln_bake::world::load_world(Path::new(world)) {
        Ok(w) => w.spec.name,
        Err(e) => {
            eprintln!("{bench}: {e}");
            std::process::exit(2);
        }
    }
}

/// Every file under `dir` (none if it does not exist) with its bytes, by relative path.
pub fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((p.strip_prefix(dir).unwrap().to_owned(), bytes));
            }
        }
    }
    out.sort();
    out
}
