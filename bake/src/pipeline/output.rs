//! Writing a bake's output directory so that `OUT/<name>` is, at every instant, either the previous
//! complete bake or the new complete bake.
//!
//! A bake takes an advisory lock (`OUT/.<name>.lock`, held until it ends) so two bakes of one world
//! into one place never clean up each other's files; the second fails at once with a message. Packs
//! go to a staging directory beside the destination (`.<name>.staging-<pid>`), created before any
//! work so an unwritable `--out` fails at once. When every pack is written and synced:
//! - no previous bake: the staging directory is renamed into place;
//! - a previous bake: on Linux the two directories are swapped in one `renameat2(RENAME_EXCHANGE)`,
//!   and the old bake, now under the staging name, is removed (its manifest first, so a half-removed
//!   old bake never looks complete);
//! - where the exchange is not supported (another OS, or a file system answering EINVAL): the old
//!   bake is renamed aside to `.<name>.old-<pid>` and the new one into place. A kill between those
//!   two renames leaves no `OUT/<name>` for a moment; the next bake of that world puts the old bake
//!   back before anything else.
//!
//! Leftovers of killed bakes (`.<name>.staging-<pid>`, `.<name>.old-<pid>`) are removed by the next
//! bake of the same world, under the lock, so never while their bake still runs.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::failpoint;
use super::BakeError;

/// A directory being filled; dropped without [`Staging::commit`], it removes itself.
pub struct Staging {
    dir: PathBuf,
    dest: PathBuf,
    /// Held (flock) until the bake ends; the file is removed just before the lock is released.
    _lock: fs::File,
    lock_path: PathBuf,
    committed: bool,
}

/// Refuses a bake name that is not a world name (`world::name_problem`, the rule the world loader
/// applies): the bake must land in a direct child of `--out` whatever built the spec, and this is
/// the last line before anything is deleted.
fn check_name(out_root: &Path, name: &str) -> Result<(), BakeError> {
    match crate::world::name_problem(name) {
        None => Ok(()),
        Some(problem) => Err(BakeError::BadOption(format!("{}: world name {name:?} {problem}", out_root.display()))),
    }
}

/// `.<name>.<what>-<digits>`: a leftover of this world's bakes (and not of a world whose name
/// merely starts the same way).
fn is_leftover(file: &str, name: &str, what: &str) -> bool {
    file.strip_prefix('.')
        .and_then(|f| f.strip_prefix(name))
        .and_then(|f| f.strip_prefix('.'))
        .and_then(|f| f.strip_prefix(what))
        .and_then(|f| f.strip_prefix('-'))
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Puts back a previous bake left aside by a killed fallback commit, then removes every leftover.
fn recover_leftovers(out_root: &Path, name: &str, dest: &Path) -> Result<(), BakeError> {
    let mut staging = Vec::new();
    let mut old = Vec::new();
    for e in fs::read_dir(out_root).map_err(|e| BakeError::io(out_root, e))?.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        if is_leftover(&file, name, "staging") {
            staging.push(e.path());
        } else if is_leftover(&file, name, "old") {
            old.push(e.path());
        }
    }
    if !old.is_empty() && matches!(fs::symlink_metadata(dest), Err(e) if e.kind() == io::ErrorKind::NotFound) {
        // Only a kill between the fallback's two renames leaves an old bake and no bake in place.
        // The newest aside copy is the one that was in place last.
        old.sort_by_key(|p| fs::symlink_metadata(p).and_then(|m| m.modified()).ok());
        let newest = old.pop().expect("not empty");
        if newest.join("manifest.kpack").is_file() {
            fs::rename(&newest, dest).map_err(|e| BakeError::io(dest, e))?;
        } else {
            old.push(newest);
        }
    }
    for p in staging.iter().chain(&old) {
        remove_bake(p).map_err(|e| BakeError::io(p, e))?;
    }
    Ok(())
}

/// Removes a bake directory: its manifest first, so that an interrupted removal never leaves
/// something that looks like a complete bake.
fn remove_bake(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return fs::remove_file(dir),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    match fs::remove_file(dir.join("manifest.kpack")) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    failpoint::hit("commit:during-remove");
    fs::remove_dir_all(dir)
}

/// An existing `OUT/<name>` must be an earlier bake (or an empty directory): anything else there is
/// the user's and is not replaced.
fn check_dest(dest: &Path) -> Result<(), BakeError> {
    let meta = match fs::symlink_metadata(dest) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(BakeError::io(dest, e)),
    };
    let is_bake = meta.is_dir() && (dest.join("manifest.kpack").is_file() || fs::read_dir(dest).is_ok_and(|mut d| d.next().is_none()));
    if !is_bake {
        return Err(BakeError::BadOption(format!(
            "{}: exists and is not a Kiln bake (no manifest.kpack); not replacing it: move it away or choose another --out",
            dest.display()
        )));
    }
    Ok(())
}

/// Whether the open `file` is still the one at `path`: a bake removes its lock file before releasing
/// the lock, so a lock taken on a file that has since been removed (or replaced) protects nothing.
fn still_at(file: &fs::File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        // Elsewhere an open file cannot be removed, so it is still there.
        let _ = (file, path);
        true
    }
}

fn lock(out_root: &Path, name: &str, dest: &Path) -> Result<(fs::File, PathBuf), BakeError> {
    let path = out_root.join(format!(".{name}.lock"));
    loop {
        let file = fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(|e| BakeError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) if still_at(&file, &path) => return Ok((file, path)),
            // The previous holder removed it between our open and our lock: take the new one.
            Ok(()) => continue,
            Err(fs::TryLockError::WouldBlock) => {
                return Err(BakeError::Locked { dest: dest.to_owned(), lock: path });
            }
            Err(fs::TryLockError::Error(e)) => return Err(BakeError::io(&path, e)),
        }
    }
}

impl Staging {
    /// Locks `out_root/name`, cleans up after killed bakes of it, and creates the staging directory.
    /// Fails at once (naming the path) if `out_root` is not a writable directory, if `name` is not a
    /// plain directory name, or if another bake of the same world into `out_root` is running.
    pub fn new(out_root: &Path, name: &str) -> Result<Self, BakeError> {
        check_name(out_root, name)?;
        match fs::metadata(out_root) {
            Ok(m) if !m.is_dir() => {
                return Err(BakeError::BadOption(format!("{}: --out is not a directory", out_root.display())));
            }
            Ok(_) => {}
            Err(_) => fs::create_dir_all(out_root).map_err(|e| BakeError::io(out_root, e))?,
        }
        let dest = out_root.join(name);
        let (lock, lock_path) = lock(out_root, name, &dest)?;
        let dir = out_root.join(format!(".{name}.staging-{}", std::process::id()));
        let prepared = recover_leftovers(out_root, name, &dest)
            .and_then(|()| check_dest(&dest))
            .and_then(|()| fs::create_dir(&dir).map_err(|e| BakeError::io(&dir, e)));
        if let Err(e) = prepared {
            // Still locked: remove the lock file before the lock goes (see `still_at`).
            let _ = fs::remove_file(&lock_path);
            return Err(e);
        }
        Ok(Staging { dir, dest, _lock: lock, lock_path, committed: false })
    }

    /// Where the bake will be once committed.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Writes `bytes` to `relative` inside the staging directory. Nothing is synced here: the
    /// whole directory is made durable once, in [`Staging::commit`], before it becomes visible.
    pub fn write(&self, relative: &str, bytes: &[u8]) -> Result<(), BakeError> {
        let path = self.dir.join(relative);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(|e| BakeError::io(p, e))?;
        }
        fs::write(&path, bytes).map_err(|e| BakeError::io(&path, e))?;
        failpoint::hit("write:after-file");
        Ok(())
    }

    /// Puts the previous bake's file `relative` into the staging directory unchanged: a hard link
    /// (packs are only ever replaced whole, never written in place), else a copy.
    fn keep(&self, relative: &str) -> Result<(), BakeError> {
        let (from, to) = (self.dest.join(relative), self.dir.join(relative));
        if let Some(p) = to.parent() {
            fs::create_dir_all(p).map_err(|e| BakeError::io(p, e))?;
        }
        if fs::hard_link(&from, &to).is_err() {
            fs::copy(&from, &to).map_err(|e| BakeError::io(&from, e))?;
        }
        Ok(())
    }

    /// Makes every file and directory of the staging directory durable, an fsync each on every
    /// thread: the journal commits of concurrent fsyncs are shared, and only the output is
    /// flushed (a `syncfs` also wrote back the stage cache when it lives on the same file system:
    /// 0.28-0.40 s of a 16-thread bake on the H100 host against 0.08-0.13 s, BENCHMARKS.md).
    fn sync_all(&self) -> Result<(), BakeError> {
        let mut paths = Vec::new();
        let mut dirs = vec![self.dir.clone()];
        while let Some(d) = dirs.pop() {
            for e in fs::read_dir(&d).map_err(|e| BakeError::io(&d, e))? {
                let e = e.map_err(|e| BakeError::io(&d, e))?;
                let is_dir = e.file_type().map_err(|err| BakeError::io(&e.path(), err))?.is_dir();
                if is_dir {
                    dirs.push(e.path());
                } else {
                    paths.push((e.path(), false));
                }
            }
            paths.push((d, true));
        }
        // A directory's entries are made durable where the platform can fsync a directory.
        paths.par_iter().try_for_each(|(p, is_dir)| match fs::File::open(p).and_then(|f| f.sync_all()) {
            Err(_) if *is_dir => Ok(()),
            r => r.map_err(|e| BakeError::io(p, e)),
        })
    }

    /// Makes the renames durable (best effort: not every platform can fsync a directory).
    fn sync_parent(&self) {
        if let Some(parent) = self.dest.parent() {
            let _ = fs::File::open(parent).and_then(|d| d.sync_all());
        }
    }

    /// Syncs the finished directory and moves it into place, replacing any previous bake (see the
    /// module documentation for how each step keeps a complete bake at the destination).
    pub fn commit(mut self) -> Result<PathBuf, BakeError> {
        failpoint::hit("commit:before-sync");
        self.sync_all()?;
        failpoint::hit("commit:after-sync");
        let had_old = match fs::symlink_metadata(&self.dest) {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(BakeError::io(&self.dest, e)),
        };
        if !had_old {
            fs::rename(&self.dir, &self.dest).map_err(|e| BakeError::io(&self.dest, e))?;
            self.committed = true;
            self.sync_parent();
            failpoint::hit("commit:after-rename");
            return Ok(self.dest.clone());
        }
        match exchange(&self.dir, &self.dest) {
            Ok(()) => {
                // The staging path now holds the previous bake.
                self.committed = true;
                self.sync_parent();
                failpoint::hit("commit:after-exchange");
                let _ = remove_bake(&self.dir);
                Ok(self.dest.clone())
            }
            Err(e) if exchange_unsupported(&e) => self.commit_by_two_renames(),
            Err(e) => Err(BakeError::io(&self.dest, e)),
        }
    }

    /// The fallback where directories cannot be exchanged atomically (module documentation).
    fn commit_by_two_renames(mut self) -> Result<PathBuf, BakeError> {
        let name = self.dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let old = self.dest.with_file_name(format!(".{name}.old-{}", std::process::id()));
        fs::rename(&self.dest, &old).map_err(|e| BakeError::io(&self.dest, e))?;
        failpoint::hit("commit:after-move-aside");
        if let Err(e) = fs::rename(&self.dir, &self.dest) {
            let _ = fs::rename(&old, &self.dest);
            return Err(BakeError::io(&self.dest, e));
        }
        self.committed = true;
        self.sync_parent();
        failpoint::hit("commit:after-rename");
        let _ = remove_bake(&old);
        Ok(self.dest.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
        // Removed while still locked (the fields drop after this): see `still_at`.
        let _ = fs::remove_file(&self.lock_path);
    }
}

/// Test hook: set, the exchange is reported unsupported so the fallback commit can be tested on a
/// file system that supports it.
pub const NO_EXCHANGE_ENV: &str = "KILN_TEST_NO_EXCHANGE";

/// Swaps two existing directory entries atomically.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    if std::env::var_os(NO_EXCHANGE_ENV).is_some() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput));
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both strings are NUL-terminated and outlive the call; renameat2 only reads them.
    // Called through syscall(2) so that it does not depend on the C library's version.
    let r = unsafe { libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

fn exchange_unsupported(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)) {
        return true;
    }
    e.kind() == io::ErrorKind::Unsupported
}

/// A bake's output files as they are made (packs from many threads, as each is finished): each is
/// compared with the previous bake's file at its path and written into the staging directory only
/// where it differs, so no file waits in memory for the others, and a rebake whose output is
/// unchanged writes nothing.
pub struct OutputFiles {
    staging: Staging,
    /// Every file given so far, and whether it was written (else it is the previous bake's).
    given: std::sync::Mutex<Vec<(String, bool)>>,
    bytes: std::sync::atomic::AtomicU64,
}

impl OutputFiles {
    pub fn new(staging: Staging) -> OutputFiles {
        OutputFiles { staging, given: Default::default(), bytes: Default::default() }
    }

    /// Adds `bytes` as the file `relative` of the output.
    pub fn put(&self, relative: &str, bytes: &[u8]) -> Result<(), BakeError> {
        let path = self.staging.dest.join(relative);
        // Only a plain file of the same length is read (never a link, a device or a FIFO).
        let same = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file() && m.len() == bytes.len() as u64)
            && fs::read(&path).is_ok_and(|b| b == bytes);
        if !same {
            self.staging.write(relative, bytes)?;
        }
        self.given.lock().expect("output files").push((relative.to_owned(), !same));
        self.bytes.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Where the output goes.
    pub fn dest(&self) -> &Path {
        self.staging.dest()
    }

    /// Files given and their bytes.
    pub fn totals(&self) -> (usize, u64) {
        (self.given.lock().expect("output files").len(), self.bytes.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Finishes the output: `None` if the previous bake holds exactly the files given, with their
    /// bytes, and nothing else (nothing is written); else the files the previous bake already
    /// held are linked (or copied) into the staging directory beside those written, and it is
    /// committed in the previous bake's place.
    pub fn finish(self) -> Result<Option<PathBuf>, BakeError> {
        let given = self.given.into_inner().expect("output files");
        let dest = &self.staging.dest;
        if given.iter().all(|(_, written)| !written) {
            let mut expected: std::collections::BTreeSet<PathBuf> = given.iter().map(|(p, _)| dest.join(p)).collect();
            if kiln_formats::find_packs(dest).is_ok_and(|found| found.len() == expected.len() && found.iter().all(|p| expected.remove(p))) {
                return Ok(None);
            }
        }
        for (relative, _) in given.iter().filter(|(_, written)| !written) {
            self.staging.keep(relative)?;
        }
        self.staging.commit().map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_leave_out_are_refused() {
        let out = Path::new("out");
        for bad in ["", ".", "..", "../x", "/abs", "a/b", "a\\b", ".hidden", "x\0y", &"n".repeat(256)] {
            assert!(check_name(out, bad).is_err(), "{bad:?} accepted");
        }
        for good in ["tiny", "ice_caves", "a.b", "a..b", "x-1"] {
            assert!(check_name(out, good).is_ok(), "{good:?} refused");
        }
    }

    #[test]
    fn only_changed_files_are_written_and_an_unchanged_output_is_left_alone() {
        let out = std::env::temp_dir().join(format!("kiln-output-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        let bake = |files: &[(&str, &[u8])]| {
            let output = OutputFiles::new(Staging::new(&out, "w").unwrap());
            std::thread::scope(|s| {
                for (path, bytes) in files {
                    let output = &output;
                    s.spawn(move || output.put(path, bytes).unwrap());
                }
            });
            assert_eq!(output.totals(), (files.len(), files.iter().map(|f| f.1.len() as u64).sum()));
            output.finish().unwrap()
        };
        let read = |p: &str| fs::read(out.join("w").join(p)).unwrap();
        let first: &[(&str, &[u8])] = &[("manifest.kpack", b"m1"), ("tiles/a.kpack", b"a1"), ("tiles/b.kpack", b"b1")];
        assert!(bake(first).is_some(), "a first bake is written");
        assert!(bake(first).is_none(), "the same files again write nothing");
        let staged = |name: &str| fs::read_dir(&out).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with(name));
        assert!(!staged(".w.staging"), "an unused staging directory is removed");
        // One file changes, one goes: the unchanged file is kept from the previous bake.
        assert!(bake(&[("manifest.kpack", b"m2"), ("tiles/a.kpack", b"a1")]).is_some());
        assert_eq!((read("manifest.kpack"), read("tiles/a.kpack")), (b"m2".to_vec(), b"a1".to_vec()));
        assert!(!out.join("w/tiles/b.kpack").exists(), "a file the new bake lacks is gone");
        // The same files, but the previous bake has one more: the output is rewritten without it.
        fs::write(out.join("w/tiles/c.kpack"), b"c").unwrap();
        assert!(bake(&[("manifest.kpack", b"m2"), ("tiles/a.kpack", b"a1")]).is_some());
        assert!(!out.join("w/tiles/c.kpack").exists());
        assert_eq!(read("tiles/a.kpack"), b"a1");
        // A link in the previous bake is never read nor kept, even to the same bytes elsewhere.
        #[cfg(unix)]
        {
            let outside = out.join("outside.kpack");
            fs::write(&outside, b"a1").unwrap();
            fs::remove_file(out.join("w/tiles/a.kpack")).unwrap();
            std::os::unix::fs::symlink(&outside, out.join("w/tiles/a.kpack")).unwrap();
            assert!(bake(&[("manifest.kpack", b"m2"), ("tiles/a.kpack", b"a1")]).is_some(), "the link is replaced");
            assert!(fs::symlink_metadata(out.join("w/tiles/a.kpack")).unwrap().file_type().is_file());
            assert_eq!(read("tiles/a.kpack"), b"a1");
        }
        let _ = fs::remove_dir_all(&out);
    }

    #[test]
    fn leftovers_are_matched_exactly() {
        assert!(is_leftover(".tiny.staging-123", "tiny", "staging"));
        assert!(is_leftover(".tiny.old-9", "tiny", "old"));
        assert!(!is_leftover(".tiny.staging-", "tiny", "staging"));
        assert!(!is_leftover(".tiny.staging-1.staging-2", "tiny", "staging"));
        assert!(!is_leftover(".tiny2.staging-1", "tiny", "staging"));
        assert!(!is_leftover(".tiny.lock", "tiny", "staging"));
    }
}
