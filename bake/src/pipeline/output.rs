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

    /// Writes `bytes` to `relative` inside the staging directory. Nothing is synced here: the
    /// whole directory is made durable once, in [`Staging::commit`], before it becomes visible.
    pub fn write(&self, relative: &str, bytes: &[u8]) -> Result<(), CliError> {
        let path = self.dir.join(relative);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(|e| CliError::io(p, e))?;
        }
        fs::write(&path, bytes).map_err(|e| CliError::io(&path, e))
    }

    /// Makes every file written so far durable: one `syncfs` of the file system on Linux (hundreds of
    /// per-file fsyncs would cost seconds), a per-file fsync elsewhere.
    fn sync_all(&self) -> Result<(), CliError> {
        #[cfg(target_os = "linux")]
        {
            let dir = fs::File::open(&self.dir).map_err(|e| CliError::io(&self.dir, e))?;
            use std::os::fd::AsRawFd;
            // SAFETY: syncfs only reads the descriptor, which `dir` keeps open for the call.
            if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
                return Err(CliError::io(&self.dir, std::io::Error::last_os_error()));
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let mut stack = vec![self.dir.clone()];
            while let Some(d) = stack.pop() {
                for e in fs::read_dir(&d).map_err(|e| CliError::io(&d, e))? {
                    let p = e.map_err(|e| CliError::io(&d, e))?.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        fs::File::open(&p).and_then(|f| f.sync_all()).map_err(|e| CliError::io(&p, e))?;
                    }
                }
            }
            Ok(())
        }
    }

    /// Syncs the finished directory and moves it into place, replacing any previous bake.
    pub fn commit(mut self) -> Result<PathBuf, CliError> {
        self.sync_all()?;
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
