//! Finding packs on disk.

use std::path::{Path, PathBuf};

/// Every `*.kpack` file under `path` (or `path` itself if it is a file), sorted for stable output.
pub fn find_packs(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let meta = std::fs::metadata(path)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a file or directory"));
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let p = entry.path();
            // Not following directory links keeps a link to a parent from looping forever; linked
            // files are still listed, and opening them checks what they point to.
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
