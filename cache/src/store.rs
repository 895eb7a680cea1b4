//! A content-addressed artifact store on disk.
//!
//! Each entry lives in `<root>/objects/<first two hex digits>/<32 hex digits>.entry` and holds a small
//! header (magic, key, payload length, xxh3-64 of the payload) and the payload. Writers create a
//! uniquely named temporary file in the same directory and rename it into place, so two processes
//! writing the same key at once both succeed and readers only ever see complete entries. A reader
//! checks magic, key, length and checksum; a bad entry is reported to the caller once and removed,
//! so the caller rebuilds it. Hits refresh the entry's modification time, which `gc` uses as the
//! least-recently-used order.
//!
//! Many bakes may share one store (shards of one world on a shared volume). A writer that is about
//! to compute an item can first *claim* its key ([`Store::claim`], [`Store::try_claim`]): an
//! advisory lock on `<root>/claims/<key>.lock` that the kernel releases when its holder exits or is
//! killed, so a dead shard never blocks the others. Claims only save duplicated work: two holders of
//! one key (possible when `gc` removes a lock file at the moment another process opens it) compute
//! the same bytes and both `put` them atomically.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use xxhash_rust::xxh3::xxh3_64;

use crate::s3::{S3Client, S3Config};

const MAGIC: [u8; 8] = *b"KILNCAC1";
const HEADER: usize = 8 + 16 + 8 + 8;

/// A 128-bit content key (the hash of everything an artifact was computed from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub u128);

impl Key {
    /// The key's 32-digit hex form, as used in file names and `--explain` output.
    pub fn hex(self) -> String {
        format!("{:032x}", self.0)
    }
}

/// A streaming builder for [`Key`]s: feed it every input, in a fixed order.
#[derive(Clone)]
pub struct KeyHasher(xxhash_rust::xxh3::Xxh3);

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher(xxhash_rust::xxh3::Xxh3::new())
    }
}

impl KeyHasher {
    /// Feeds raw bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }
    /// Feeds a string (length-prefixed, so "ab"+"c" differs from "a"+"bc").
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
    /// Feeds an integer.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.update(&v.to_le_bytes());
        self
    }
    /// Feeds another key.
    pub fn key(&mut self, k: Key) -> &mut Self {
        self.0.update(&k.0.to_le_bytes());
        self
    }
    /// The key of everything fed so far.
    pub fn finish(&self) -> Key {
        Key(self.0.digest128())
    }
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    /// The entry is present and intact: its payload, without the entry header.
    Hit(Vec<u8>),
    /// No entry under this key.
    Miss,
    /// The entry existed but was damaged (named reason); it has been removed.
    Corrupt(String),
}

/// An I/O failure of the store, naming the path.
#[derive(Debug, thiserror::Error)]
#[error("cache {}: {source}", path.display())]
pub struct StoreError {
    /// The store directory or entry file the operation was on.
    pub path: PathBuf,
    /// The operating system's error.
    pub source: io::Error,
}

/// Entry count and size of a store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Number of entry files.
    pub entries: u64,
    /// Their total size on disk in bytes, entry headers included.
    pub bytes: u64,
}

/// What a garbage collection removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Entries this collection deleted (not those another process deleted meanwhile).
    pub removed: u64,
    /// Bytes on disk those entries held.
    pub freed_bytes: u64,
    /// What the store holds afterwards, at most the requested limit.
    pub kept: Stats,
}

/// A held claim on a key (see the module documentation); released when dropped, or when the
/// process dies (by the kernel for a directory store, by the lease for an S3 store).
#[derive(Debug)]
pub struct Claim {
    _held: Held,
}

/// Held for what dropping it does (unlock, or stop the heartbeat and delete the claim).
#[derive(Debug)]
#[allow(dead_code)]
enum Held {
    File(fs::File),
    S3(crate::s3::Heartbeat),
}

/// A content-addressed store rooted at a directory, or at an S3-compatible bucket and prefix
/// (`s3://bucket/prefix`, see [`crate::s3`]).
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    s3: Option<S3Client>,
}

fn s3_error(root: &Path, message: String) -> StoreError {
    StoreError { path: root.to_owned(), source: io::Error::other(message) }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Store {
    /// Opens (creating if needed) the store at `root`: a directory, or `s3://bucket/prefix` (the
    /// bucket must exist; credentials and endpoint from the environment, see [`crate::s3`]).
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        if let Some(uri) = root.to_str().filter(|r| r.starts_with("s3://")) {
            let cfg = S3Config::from_uri(uri).map_err(|m| s3_error(root, m))?;
            return Ok(Store { root: root.to_owned(), s3: Some(S3Client::new(cfg)) });
        }
        let objects = root.join("objects");
        fs::create_dir_all(&objects).map_err(|source| StoreError { path: objects, source })?;
        Ok(Store { root: root.to_owned(), s3: None })
    }

    fn object_name(key: Key) -> String {
        let hex = key.hex();
        format!("objects/{}/{hex}.entry", &hex[..2])
    }

    fn s3_get(&self, s3: &S3Client, key: Key) -> Result<Lookup, StoreError> {
        let name = Store::object_name(key);
        let reply = s3.request("GET", &name, &[], b"").map_err(|m| s3_error(&self.root, m))?;
        match reply.status {
            200 => match check_entry(key, &reply.body[..HEADER.min(reply.body.len())], &reply.body[HEADER.min(reply.body.len())..]) {
                Ok(()) => {
                    let mut bytes = reply.body;
                    bytes.drain(..HEADER);
                    Ok(Lookup::Hit(bytes))
                }
                Err(reason) => {
                    let _ = s3.request("DELETE", &name, &[], b"");
                    Ok(Lookup::Corrupt(format!("{}/{name}: {reason}", self.root.display())))
                }
            },
            404 => Ok(Lookup::Miss),
            code => Err(s3_error(&self.root, format!("GET {name}: HTTP {code}: {}", String::from_utf8_lossy(&reply.body)))),
        }
    }

    /// One attempt at creating the claim object of `key`: `Some` when created, `None` when held by a
    /// live holder; a dead holder's claim (not rewritten for the lease) is removed and retried once.
    fn s3_try_claim(&self, s3: &S3Client, key: Key) -> Result<Option<Claim>, StoreError> {
        let name = format!("claims/{}", key.hex());
        for attempt in 0..2 {
            let reply = s3.request("PUT", &name, &[("if-none-match", "*")], b"held").map_err(|m| s3_error(&self.root, m))?;
            match reply.status {
                200 => return Ok(Some(Claim { _held: Held::S3(crate::s3::Heartbeat::start(s3.clone(), name)) })),
                412 | 409 if attempt == 0 => {
                    let head = s3.request("HEAD", &name, &[], b"").map_err(|m| s3_error(&self.root, m))?;
                    let age = match (&head.last_modified, &head.date) {
                        (Some(modified), Some(now)) => crate::s3::http_age(modified, now),
                        _ => None,
                    };
                    match (head.status, age) {
                        (404, _) => continue,
                        (_, Some(age)) if age > crate::s3::lease().as_secs() as i64 => {
                            let _ = s3.request("DELETE", &name, &[], b"");
                        }
                        _ => return Ok(None),
                    }
                }
                412 | 409 => return Ok(None),
                code => {
                    return Err(s3_error(
                        &self.root,
                        format!(
                            "PUT {name} (If-None-Match: *): HTTP {code}: the server must support conditional writes; {}",
                            String::from_utf8_lossy(&reply.body)
                        ),
                    ))
                }
            }
        }
        Ok(None)
    }

    /// The default location: `$KILN_CACHE`, else `$XDG_CACHE_HOME/kiln`, else `$HOME/.cache/kiln`,
    /// else a `kiln-cache` directory in the system temporary directory.
    pub fn default_root() -> PathBuf {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        var("KILN_CACHE")
            .or_else(|| var("XDG_CACHE_HOME").map(|p| p.join("kiln")))
            .or_else(|| var("HOME").map(|p| p.join(".cache").join("kiln")))
            .unwrap_or_else(|| std::env::temp_dir().join("kiln-cache"))
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, key: Key) -> PathBuf {
        let hex = key.hex();
        self.root.join("objects").join(&hex[..2]).join(format!("{hex}.entry"))
    }

    /// Looks `key` up. A damaged entry is removed and reported as [`Lookup::Corrupt`].
    pub fn get(&self, key: Key) -> Result<Lookup, StoreError> {
        if let Some(s3) = &self.s3 {
            return self.s3_get(s3, key);
        }
        let path = self.path_of(key);
        let (header, payload) = match read_entry(&path) {
            Ok(Some(entry)) => entry,
            Ok(None) => return Ok(Lookup::Miss),
            Err(source) => return Err(StoreError { path, source }),
        };
        match check_entry(key, &header, &payload) {
            Ok(()) => {
                // Refresh the LRU clock; failing to do so only makes gc less precise.
                if let Ok(f) = fs::File::options().write(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                Ok(Lookup::Hit(payload))
            }
            Err(reason) => {
                let _ = fs::remove_file(&path);
                Ok(Lookup::Corrupt(format!("{}: {reason}", path.display())))
            }
        }
    }

    /// Whether an entry for `key` is present (not checked: [`Store::get`] checks what it reads).
    pub fn contains(&self, key: Key) -> Result<bool, StoreError> {
        if let Some(s3) = &self.s3 {
            let name = Store::object_name(key);
            let reply = s3.request("HEAD", &name, &[], b"").map_err(|m| s3_error(&self.root, m))?;
            return match reply.status {
                200 => Ok(true),
                404 => Ok(false),
                code => Err(s3_error(&self.root, format!("HEAD {name}: HTTP {code}"))),
            };
        }
        Ok(self.path_of(key).is_file())
    }

    /// Stores `payload` under `key`, atomically. Concurrent writers of one key both succeed.
    pub fn put(&self, key: Key, payload: &[u8]) -> Result<(), StoreError> {
        if let Some(s3) = &self.s3 {
            let entry = [&entry_header(key, payload)[..], payload].concat();
            let name = Store::object_name(key);
            let reply = s3.request("PUT", &name, &[], &entry).map_err(|m| s3_error(&self.root, m))?;
            return match reply.status {
                200 => Ok(()),
                code => Err(s3_error(&self.root, format!("PUT {name}: HTTP {code}: {}", String::from_utf8_lossy(&reply.body)))),
            };
        }
        let path = self.path_of(key);
        let dir = path.parent().expect("entries live in a subdirectory").to_owned();
        fs::create_dir_all(&dir).map_err(|source| StoreError { path: dir.clone(), source })?;
        let tmp = dir.join(format!(".tmp-{}-{}-{}", key.hex(), std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&entry_header(key, payload))?;
            f.write_all(payload)?;
            drop(f);
            // No fsync: a torn entry after a crash fails its checksum and is rebuilt.
            fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(|source| StoreError { path, source })
    }

    fn claim_path(&self, key: Key) -> Result<PathBuf, StoreError> {
        let dir = self.root.join("claims");
        fs::create_dir_all(&dir).map_err(|source| StoreError { path: dir.clone(), source })?;
        Ok(dir.join(format!("{}.lock", key.hex())))
    }

    fn open_claim(&self, key: Key) -> Result<(fs::File, PathBuf), StoreError> {
        let path = self.claim_path(key)?;
        let file = fs::File::options().create(true).truncate(false).write(true).open(&path);
        file.map(|f| (f, path.clone())).map_err(|source| StoreError { path, source })
    }

    /// Claims `key`, waiting while another process (or another claim in this one) holds it.
    pub fn claim(&self, key: Key) -> Result<Claim, StoreError> {
        if let Some(s3) = &self.s3 {
            // No server-side waiting in S3: poll, well below the lease.
            loop {
                if let Some(c) = self.s3_try_claim(s3, key)? {
                    return Ok(c);
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
        let (file, path) = self.open_claim(key)?;
        file.lock().map_err(|source| StoreError { path, source })?;
        Ok(Claim { _held: Held::File(file) })
    }

    /// Claims `key` if nobody holds it; `None` when somebody does.
    pub fn try_claim(&self, key: Key) -> Result<Option<Claim>, StoreError> {
        if let Some(s3) = &self.s3 {
            return self.s3_try_claim(s3, key);
        }
        let (file, path) = self.open_claim(key)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Claim { _held: Held::File(file) })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(source)) => Err(StoreError { path, source }),
        }
    }

    /// Removes what dead writers left: temporary entry files older than an hour (a writer killed
    /// between create and rename) and lock files nobody holds.
    fn sweep(&self) {
        let stale = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 3600));
        if let Ok(dirs) = fs::read_dir(self.root.join("objects")) {
            for f in dirs.flatten().filter_map(|d| fs::read_dir(d.path()).ok()).flatten().flatten() {
                let p = f.path();
                if f.file_name().to_string_lossy().starts_with(".tmp-") && stale(&p) {
                    let _ = fs::remove_file(&p);
                }
            }
        }
        if let Ok(locks) = fs::read_dir(self.root.join("claims")) {
            for f in locks.flatten() {
                let held = fs::File::options().write(true).open(f.path()).map(|file| file.try_lock().is_err());
                if held.is_ok_and(|held| !held) {
                    let _ = fs::remove_file(f.path());
                }
            }
        }
    }

    fn entries(&self) -> Result<Vec<(PathBuf, u64, SystemTime)>, StoreError> {
        if self.s3.is_some() {
            return Err(s3_error(&self.root, "listing and trimming an S3 store is left to the bucket (expire entries with a lifecycle rule)".into()));
        }
        let objects = self.root.join("objects");
        let mut out = Vec::new();
        let dirs = fs::read_dir(&objects).map_err(|source| StoreError { path: objects.clone(), source })?;
        for d in dirs.flatten() {
            let Ok(files) = fs::read_dir(d.path()) else { continue };
            for f in files.flatten() {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "entry") {
                    if let Ok(m) = f.metadata() {
                        out.push((p, m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.2.cmp(&b.2).then_with(|| a.0.cmp(&b.0)));
        Ok(out)
    }

    /// Entry count and total bytes.
    pub fn stats(&self) -> Result<Stats, StoreError> {
        let e = self.entries()?;
        Ok(Stats { entries: e.len() as u64, bytes: e.iter().map(|x| x.1).sum() })
    }

    /// Removes least-recently-used entries until the store holds at most `max_bytes`.
    /// Also removes stale temporary files and unheld claims.
    pub fn gc(&self, max_bytes: u64) -> Result<GcReport, StoreError> {
        if self.s3.is_none() {
            self.sweep();
        }
        let entries = self.entries()?;
        let mut total: u64 = entries.iter().map(|x| x.1).sum();
        let mut report = GcReport::default();
        for (path, len, _) in &entries {
            if total <= max_bytes {
                break;
            }
            match fs::remove_file(path) {
                Ok(()) => {
                    total -= len;
                    report.removed += 1;
                    report.freed_bytes += len;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => total -= len, // another gc got it
                Err(source) => return Err(StoreError { path: path.clone(), source }),
            }
        }
        report.kept = Stats { entries: entries.len() as u64 - report.removed, bytes: total };
        Ok(report)
    }
}

/// An entry's header: magic, key, payload length, payload checksum (what [`check_entry`] reads).
fn entry_header(key: Key, payload: &[u8]) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[..8].copy_from_slice(&MAGIC);
    h[8..24].copy_from_slice(&key.0.to_le_bytes());
    h[24..32].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    h[32..40].copy_from_slice(&xxh3_64(payload).to_le_bytes());
    h
}

/// Reads the entry at `path` as its header (at most [`HEADER`] bytes) and its payload, each into a
/// buffer of its own, so that a large payload is not moved down over the header after reading.
/// `None` when there is no entry.
fn read_entry(path: &Path) -> io::Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut f = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let mut header = Vec::with_capacity(HEADER);
    (&mut f).take(HEADER as u64).read_to_end(&mut header)?;
    let mut payload = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_sub(HEADER));
    f.read_to_end(&mut payload)?;
    Ok(Some((header, payload)))
}

/// Checks an entry's `header` (all of it that was read, up to [`HEADER`] bytes) against `key`
/// and its `payload`.
fn check_entry(key: Key, header: &[u8], payload: &[u8]) -> Result<(), String> {
    if header.len() < HEADER {
        return Err(format!("truncated entry ({} bytes)", header.len() + payload.len()));
    }
    if header[..8] != MAGIC {
        return Err("bad magic".into());
    }
    let stored_key = u128::from_le_bytes(header[8..24].try_into().expect("16 bytes"));
    if stored_key != key.0 {
        return Err("entry holds another key".into());
    }
    let len = u64::from_le_bytes(header[24..32].try_into().expect("8 bytes"));
    if len != payload.len() as u64 {
        return Err(format!("payload is {} bytes, header says {len}", payload.len()));
    }
    let sum = u64::from_le_bytes(header[32..40].try_into().expect("8 bytes"));
    if xxh3_64(payload) != sum {
        return Err("checksum mismatch".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_store(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("kiln-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        Store::open(&dir).unwrap()
    }

    #[test]
    fn put_get_and_miss() {
        let s = temp_store("basic");
        let k = KeyHasher::default().str("a").u64(1).finish();
        assert!(matches!(s.get(k).unwrap(), Lookup::Miss));
        s.put(k, b"payload").unwrap();
        assert!(matches!(s.get(k).unwrap(), Lookup::Hit(b) if b == b"payload"));
        assert_eq!(s.stats().unwrap(), Stats { entries: 1, bytes: (HEADER + 7) as u64 });
    }

    #[test]
    fn keys_separate_their_inputs() {
        let a = KeyHasher::default().str("ab").str("c").finish();
        let b = KeyHasher::default().str("a").str("bc").finish();
        assert_ne!(a, b);
    }

    #[test]
    fn corrupt_and_truncated_entries_are_reported_once_and_removed() {
        let s = temp_store("corrupt");
        let k = Key(7);
        s.put(k, &[1u8; 100]).unwrap();
        let path = s.path_of(k);
        let mut bytes = fs::read(&path).unwrap();
        bytes[HEADER + 50] ^= 1;
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(s.get(k).unwrap(), Lookup::Corrupt(r) if r.contains("checksum")));
        assert!(matches!(s.get(k).unwrap(), Lookup::Miss), "reported once, then gone");
        s.put(k, &[1u8; 100]).unwrap();
        fs::write(&path, &fs::read(&path).unwrap()[..60]).unwrap();
        assert!(matches!(s.get(k).unwrap(), Lookup::Corrupt(r) if r.contains("header says")));
    }

    #[test]
    fn concurrent_writers_of_one_key_both_succeed() {
        let s = temp_store("concurrent");
        let payload = vec![42u8; 1 << 20];
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..10 {
                        s.put(Key(1), &payload).unwrap();
                        match s.get(Key(1)).unwrap() {
                            Lookup::Hit(b) => assert_eq!(b, payload),
                            other => panic!("{other:?}"),
                        }
                    }
                });
            }
        });
        assert_eq!(s.stats().unwrap().entries, 1);
    }

    #[test]
    fn a_claim_excludes_others_until_dropped_and_gc_sweeps_unheld_claims() {
        let s = temp_store("claims");
        let held = s.try_claim(Key(9)).unwrap().expect("free");
        assert!(s.try_claim(Key(9)).unwrap().is_none(), "held by the first claim");
        assert!(s.try_claim(Key(10)).unwrap().is_some(), "another key is free");
        let waiter = std::thread::spawn({
            let s = s.clone();
            move || s.claim(Key(9)).map(|_| ())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "claim waits while the key is held");
        drop(held);
        waiter.join().unwrap().unwrap();
        let held = s.try_claim(Key(11)).unwrap().unwrap();
        s.gc(u64::MAX).unwrap();
        let left: Vec<_> = fs::read_dir(s.root().join("claims")).unwrap().flatten().map(|f| f.file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from(format!("{}.lock", Key(11).hex()))], "only the held claim stays");
        drop(held);
    }

    #[test]
    fn gc_removes_least_recently_used_first() {
        let s = temp_store("gc");
        for i in 0..5u128 {
            s.put(Key(i), &[0u8; 1000]).unwrap();
            let f = fs::File::options().write(true).open(s.path_of(Key(i))).unwrap();
            f.set_modified(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64)).unwrap();
        }
        // Touch entry 0: it becomes the most recently used.
        assert!(matches!(s.get(Key(0)).unwrap(), Lookup::Hit(_)));
        let r = s.gc(3 * (HEADER as u64 + 1000)).unwrap();
        assert_eq!(r.removed, 2);
        assert!(matches!(s.get(Key(1)).unwrap(), Lookup::Miss));
        assert!(matches!(s.get(Key(2)).unwrap(), Lookup::Miss));
        for k in [0, 3, 4] {
            assert!(matches!(s.get(Key(k)).unwrap(), Lookup::Hit(_)), "{k}");
        }
    }
}
