//! Writing a bake's output directory so that a failed bake leaves nothing half-written.
//!
//! Packs go to a staging directory beside the destination (`.<name>.staging-<pid>`); only when every
//! pack is written and synced is the staging directory renamed into place (the previous bake, if any,
//! is moved aside first and removed afterwards). A crash leaves either the old bake or the new one,
//! plus at worst a stale staging directory that the next bake removes.

use std::fs;
use std::path::{Path, PathBuf};

use crate::cli::CliError;

/// A directory being filled; dropped without [`Staging::commit`], it removes itself.
pub struct Staging {
    dir: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl Staging {
    /// Prepares a staging directory for `dest` (which need not exist).
    pub fn new(dest: &Path) -> Result<Self, CliError> {
        let parent = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(|e| CliError::io(parent, e))?;
        let name = dest.file_name().ok_or_else(|| CliError::Usage(format!("{}: not a directory name", dest.display())))?;
        let name = name.to_string_lossy();
        // Remove stale staging directories of earlier, interrupted bakes of this destination.
        if let Ok(entries) = fs::read_dir(parent) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&format!(".{name}.staging-")) || n.starts_with(&format!(".{name}.old-")) {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = parent.join(format!(".{name}.staging-{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| CliError::io(&dir, e))?;
        Ok(Staging { dir, dest: dest.to_owned(), committed: false })
    }

    /// Where to write files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` to `relative` inside the staging directory (fsynced).
    pub fn write(&self, relative: &str, bytes: &[u8]) -> Result<(), CliError> {
        let path = self.dir.join(relative);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(|e| CliError::io(p, e))?;
        }
        kiln_formats::write_atomic(&path, bytes).map_err(CliError::Pack)
    }

    /// Moves the finished directory into place, replacing any previous bake.
    pub fn commit(mut self) -> Result<PathBuf, CliError> {
        let old = self.dest.with_file_name(format!(
            ".{}.old-{}",
            self.dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            std::process::id()
        ));
        let had_old = self.dest.exists();
        if had_old {
            fs::rename(&self.dest, &old).map_err(|e| CliError::io(&self.dest, e))?;
        }
        if let Err(e) = fs::rename(&self.dir, &self.dest) {
            if had_old {
                let _ = fs::rename(&old, &self.dest);
            }
            return Err(CliError::io(&self.dest, e));
        }
        self.committed = true;
        if had_old {
            let _ = fs::remove_dir_all(&old);
        }
        Ok(self.dest.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}
