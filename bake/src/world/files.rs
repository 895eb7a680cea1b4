//! Reading the files a world names. World files arrive in pull requests and are baked in CI, so a
//! world may only read regular files inside its own directory, and never more bytes than a
//! documented limit: no `/etc/passwd`, no `/dev/zero`, no FIFO that blocks forever.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Largest world file read.
pub const MAX_WORLD_FILE_BYTES: u64 = 4 << 20;
/// Largest brush file read.
pub const MAX_BRUSH_FILE_BYTES: u64 = 64 << 20;
/// Largest heightmap file read (an 8192 × 8192 raw 16-bit image is exactly 128 MiB).
pub const MAX_HEIGHTMAP_FILE_BYTES: u64 = 128 << 20;

/// The contents of a regular file, read with a byte limit: a file that grows past `limit` while it
/// is read is refused too, so the limit holds whatever `metadata` said.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > limit {
        return Err(format!("{} bytes, more than the limit of {limit}", meta.len()));
    }
    let file = open_no_block(path).map_err(|e| e.to_string())?;
    // The path may have been swapped for a FIFO or device since `metadata`: check the open file.
    let opened = file.metadata().map_err(|e| e.to_string())?;
    if !opened.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::with_capacity(opened.len().min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("more than the limit of {limit} bytes"));
    }
    Ok(bytes)
}

#[cfg(target_os = "linux")]
fn open_no_block(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Opening a FIFO for reading blocks until a writer appears; O_NONBLOCK makes it return at once
    // so that the regular-file check above can refuse it.
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(target_os = "linux"))]
fn open_no_block(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// Resolves `rel`, a path written in a world file, against `base_dir` (the world file's
/// directory): it must be relative, without `..`, and name a regular file that stays inside
/// `base_dir` once symbolic links are resolved.
pub fn resolve_inside(base_dir: &Path, rel: &str) -> Result<PathBuf, String> {
    if rel.is_empty() {
        return Err("must name a file".into());
    }
    if rel.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    let p = Path::new(rel);
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err("must not contain '..' (files must lie beside the world file)".into()),
            Component::RootDir | Component::Prefix(_) => return Err("must be a path relative to the world file's directory".into()),
        }
    }
    // A drive-relative `C:x` has no prefix component on Unix but would escape on Windows.
    if rel.contains(':') || rel.starts_with('\\') {
        return Err("must be a path relative to the world file's directory".into());
    }
    let dir = if base_dir.as_os_str().is_empty() { Path::new(".") } else { base_dir };
    let full = dir.join(p);
    let canon_dir = dir.canonicalize().map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    let canon = full.canonicalize().map_err(|e| format!("cannot read {}: {e}", full.display()))?;
    if !canon.starts_with(&canon_dir) {
        return Err(format!("resolves to {}, outside the world file's directory {}", canon.display(), canon_dir.display()));
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kiln-files-test-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        dir
    }

    #[test]
    fn paths_outside_the_world_directory_are_refused() {
        let dir = scratch("outside");
        std::fs::write(dir.join("sub/b.toml"), "x").unwrap();
        assert!(resolve_inside(&dir, "sub/b.toml").is_ok());
        assert!(resolve_inside(&dir, "./sub/b.toml").is_ok());
        for (rel, want) in [
            ("/etc/passwd", "relative"),
            ("../x", "'..'"),
            ("sub/../../x", "'..'"),
            ("sub/../sub/b.toml", "'..'"),
            ("", "must name"),
            ("a\0b", "control"),
            ("C:x", "relative"),
            ("\\\\server\\x", "relative"),
            ("missing.toml", "cannot read"),
        ] {
            let e = resolve_inside(&dir, rel).expect_err(rel);
            assert!(e.contains(want), "{rel:?}: {e}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", dir.join("link")).unwrap();
            let e = resolve_inside(&dir, "link").unwrap_err();
            assert!(e.contains("outside the world file's directory"), "{e}");
            std::os::unix::fs::symlink(dir.join("sub/b.toml"), dir.join("inner")).unwrap();
            assert!(resolve_inside(&dir, "inner").is_ok());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_are_bounded_and_regular_files_only() {
        let dir = scratch("limited");
        std::fs::write(dir.join("f"), [7u8; 100]).unwrap();
        assert_eq!(read_limited(&dir.join("f"), 100).unwrap().len(), 100);
        assert!(read_limited(&dir.join("f"), 99).unwrap_err().contains("more than the limit of 99"));
        assert!(read_limited(&dir, 1000).unwrap_err().contains("not a regular file"));
        assert!(read_limited(Path::new("/dev/zero"), 1 << 20).unwrap_err().contains("not a regular file"));
        #[cfg(target_os = "linux")]
        {
            let fifo = dir.join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            assert!(read_limited(&fifo, 1000).unwrap_err().contains("not a regular file"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
