//! The bake's use of the content-addressed store: named stage inputs, hit/miss tallies per stage,
//! corrupt entries reported once, and `--explain` notes saying why an item was recomputed.

use std::collections::BTreeMap;
use std::sync::Mutex;

use kiln_cache::store::{Claim, Key, KeyHasher, Lookup, Store};

/// The inputs of one stage item, by name. The cache key is the hash of the stage, its version and
/// every named input; the names let `--explain` say which input changed.
#[derive(Clone, Debug)]
pub struct StageInputs {
    stage: &'static str,
    version: u32,
    parts: Vec<(&'static str, u128)>,
    absent: bool,
}

impl StageInputs {
    /// No inputs yet for an item of `stage` at `version`; bumping the version misses every old entry.
    pub fn new(stage: &'static str, version: u32) -> Self {
        StageInputs { stage, version, parts: Vec::new(), absent: false }
    }
    /// The key of an item of a product the world does not have (trees in a world without
    /// `[trees]`): its output is empty whatever the product's version or the world, and a tile's pack
    /// key leaves it out, so adding a product never changes the packs of worlds without it.
    pub fn absent(stage: &'static str) -> Self {
        StageInputs { absent: true, ..StageInputs::new(stage, 0) }
    }
    /// Whether this is an [`StageInputs::absent`] key.
    pub fn is_absent(&self) -> bool {
        self.absent
    }
    /// Adds a named input by its hash.
    pub fn with(mut self, name: &'static str, hash: u128) -> Self {
        self.parts.push((name, hash));
        self
    }
    /// Adds a named input when there is one (an absent input leaves the key as it was).
    pub fn with_some(self, name: &'static str, hash: Option<u128>) -> Self {
        match hash {
            Some(h) => self.with(name, h),
            None => self,
        }
    }
    /// The cache key.
    pub fn key(&self) -> Key {
        let mut h = KeyHasher::default();
        h.str(self.stage).u64(self.version as u64);
        for (name, v) in &self.parts {
            h.str(name).bytes(&v.to_le_bytes());
        }
        h.finish()
    }
    fn record(&self) -> String {
        self.parts.iter().map(|(n, v)| format!("{n}={v:032x}\n")).collect()
    }
}

/// How many items of a stage came from the cache and how many were computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Items read from the cache.
    pub cached: usize,
    /// Items computed (missed, or no cache).
    pub computed: usize,
}

/// What [`StageCache::try_claim`] found.
#[derive(Debug)]
pub enum TryClaim {
    /// Nobody else holds the item: compute it. `None` without a store (or when the claim could not
    /// be taken for an I/O reason, already reported): nobody can share the work anyway.
    Taken(Option<Claim>),
    /// Another process (or thread) holds it and is computing it.
    Busy,
}

/// What [`StageCache::claim_or_read`] found once the claim was free.
#[derive(Debug)]
pub enum Waited<T> {
    /// The holder stored the item: read, the claim let go.
    Read(T),
    /// Nobody stored it: compute it under this claim (see [`TryClaim::Taken`] for `None`).
    Claimed(Option<Claim>),
}

/// The store (or none, with `--no-cache`) plus this bake's bookkeeping.
pub struct StageCache {
    store: Option<Store>,
    scope: String,
    explain: bool,
    tallies: Mutex<BTreeMap<&'static str, Tally>>,
    /// Keys this bake has computed or already counted a hit of: finding one again is reading back
    /// what the bake let go of (see `Engine::release_stored_values`), not a hit.
    seen: Mutex<std::collections::HashSet<Key>>,
    /// How many lookups found an entry this bake had already computed or counted.
    read_backs: std::sync::atomic::AtomicUsize,
    notes: Mutex<Vec<String>>,
    warnings: Mutex<Vec<String>>,
    /// Items whose store failed: how many, and the first failure.
    unstored: Mutex<(usize, Option<String>)>,
    /// Seconds spent in [`StageCache::claim`] per stage, summed over threads.
    waits: Mutex<BTreeMap<&'static str, f64>>,
}

impl StageCache {
    /// `scope` (the world's name) keeps `--explain` records of different worlds apart.
    pub fn new(store: Option<Store>, scope: &str, explain: bool) -> Self {
        StageCache {
            store,
            scope: scope.to_owned(),
            explain,
            tallies: Mutex::default(),
            seen: Mutex::default(),
            read_backs: Default::default(),
            notes: Mutex::default(),
            warnings: Mutex::default(),
            unstored: Mutex::default(),
            waits: Mutex::default(),
        }
    }

    fn tally(&self, stage: &'static str, cached: bool) {
        let mut t = self.tallies.lock().expect("tally lock");
        let e = t.entry(stage).or_default();
        if cached {
            e.cached += 1;
        } else {
            e.computed += 1;
        }
    }

    fn warn(&self, w: String) {
        self.warnings.lock().expect("warning lock").push(w);
    }

    fn record_key(&self, inputs: &StageInputs, item: &str) -> Key {
        KeyHasher::default().str("explain-record").str(&self.scope).str(inputs.stage).str(item).finish()
    }

    /// The cached artifact of `item`, if present, sound, and accepted by `check` (which parses the
    /// payload and checks it is a well-formed artifact of its stage). Counts a hit, once per key
    /// (reading back what this bake computed or let go of is not one); a miss is counted when the
    /// caller computes the item ([`StageCache::computed`]), which also overwrites an entry `check`
    /// refused.
    pub fn lookup<T>(&self, item: &str, inputs: &StageInputs, check: impl FnOnce(Vec<u8>) -> Result<T, String>) -> Option<T> {
        let store = self.store.as_ref()?;
        match store.get(inputs.key()) {
            Ok(Lookup::Hit(bytes)) => match check(bytes) {
                Ok(v) => {
                    if self.seen.lock().expect("seen keys").insert(inputs.key()) {
                        self.tally(inputs.stage, true);
                    } else {
                        self.read_backs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Some(v)
                }
                Err(reason) => {
                    self.refused(item, inputs, &reason);
                    None
                }
            },
            Ok(Lookup::Miss) => None,
            Ok(Lookup::Corrupt(reason)) => {
                self.warn(format!("cache entry for {} {item} was corrupt and is rebuilt: {reason}", inputs.stage));
                None
            }
            Err(e) => {
                self.warn(e.to_string());
                None
            }
        }
    }

    /// How many items this bake read back from the cache after computing them or reading them
    /// once (what it let go of to save memory).
    pub fn read_backs(&self) -> usize {
        self.read_backs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Reports a hit that turned out not to be a well-formed artifact of its stage: the caller
    /// rebuilds it (and [`StageCache::computed`] overwrites the entry).
    pub fn refused(&self, item: &str, inputs: &StageInputs, reason: &str) {
        self.warn(format!("cache entry for {} {item} is not a well-formed {} artifact and is rebuilt: {reason}", inputs.stage, inputs.stage));
    }

    /// Records that `item` was computed, stores its payload, and (with `--explain`) notes why it
    /// missed by comparing its inputs with the ones it was last computed from.
    pub fn computed(&self, item: &str, inputs: &StageInputs, payload: &[u8]) {
        self.tally(inputs.stage, false);
        self.seen.lock().expect("seen keys").insert(inputs.key());
        let Some(store) = &self.store else { return };
        if self.explain {
            let why = match store.get(self.record_key(inputs, item)) {
                Ok(Lookup::Hit(prev)) => {
                    let prev: BTreeMap<&str, &str> = std::str::from_utf8(&prev).unwrap_or("").lines().filter_map(|l| l.split_once('=')).collect();
                    let changed: Vec<&str> =
                        inputs.parts.iter().filter(|(n, v)| prev.get(n).is_none_or(|p| *p != format!("{v:032x}"))).map(|(n, _)| *n).collect();
                    if changed.is_empty() {
                        "same inputs as last time, but the entry is gone (evicted, corrupt, or another stage version)".to_owned()
                    } else {
                        format!("changed: {}", changed.join(", "))
                    }
                }
                _ => "never computed with this cache".to_owned(),
            };
            self.notes.lock().expect("notes lock").push(format!("{} {item}: {why}", inputs.stage));
        }
        if let Err(e) = store.put(inputs.key(), payload) {
            let mut unstored = self.unstored.lock().expect("unstored lock");
            unstored.0 += 1;
            unstored.1.get_or_insert_with(|| format!("{item}: {e}"));
            self.warn(format!("{e} (continuing without caching it)"));
        }
        if self.explain {
            let _ = store.put(self.record_key(inputs, item), inputs.record().as_bytes());
        }
    }

    /// Whether `inputs`' item is in the store (unchecked; for progress reports).
    pub fn contains(&self, inputs: &StageInputs) -> bool {
        self.store.as_ref().is_some_and(|s| s.contains(inputs.key()).unwrap_or(false))
    }

    /// Whether there is a store (shards need one to share their work).
    pub fn has_store(&self) -> bool {
        self.store.is_some()
    }

    /// Claims `inputs`' item if nobody holds it (see `kiln_cache::store`'s claims).
    pub fn try_claim(&self, inputs: &StageInputs) -> TryClaim {
        let Some(store) = &self.store else { return TryClaim::Taken(None) };
        match store.try_claim(inputs.key()) {
            Ok(Some(c)) => TryClaim::Taken(Some(c)),
            Ok(None) => TryClaim::Busy,
            Err(e) => {
                self.warn(format!("{e} (computing without a claim)"));
                TryClaim::Taken(None)
            }
        }
    }

    /// Claims `inputs`' item, waiting while another process holds it. The wait is counted
    /// against the item's stage ([`StageCache::waits`]).
    pub fn claim(&self, inputs: &StageInputs) -> Option<Claim> {
        let store = self.store.as_ref()?;
        let watch = crate::Stopwatch::start();
        let claim = store.claim(inputs.key()).map_err(|e| self.warn(format!("{e} (computing without a claim)"))).ok();
        *self.waits.lock().expect("wait lock").entry(inputs.stage).or_default() += watch.read()[0];
        claim
    }

    /// Claims `claim`'s item, waiting while another process holds it; if the holder stored
    /// `stored` meanwhile, lets the claim go before `read` reads it. Every process that waited
    /// for an item then reads it side by side: reading under the claim would pass them through
    /// one at a time (sixteen shards reading a 200 MB scene took five seconds). An entry `read`
    /// refuses is claimed again, to be rebuilt.
    pub fn claim_or_read<T>(&self, claim: &StageInputs, stored: &StageInputs, read: impl Fn() -> Option<T>) -> Waited<T> {
        let held = self.claim(claim);
        if !self.contains(stored) {
            return Waited::Claimed(held);
        }
        drop(held);
        if let Some(v) = read() {
            return Waited::Read(v);
        }
        let held = self.claim(claim);
        match read() {
            Some(v) => Waited::Read(v),
            None => Waited::Claimed(held),
        }
    }

    /// What `read` reads of an item already stored, without claiming it; else
    /// [`StageCache::claim_or_read`].
    pub fn read_or_claim<T>(&self, claim: &StageInputs, stored: &StageInputs, read: impl Fn() -> Option<T>) -> Waited<T> {
        match read() {
            Some(v) => Waited::Read(v),
            None => self.claim_or_read(claim, stored, read),
        }
    }

    /// Seconds this bake's threads spent claiming items, per stage: in a shard, mostly waiting
    /// for items other processes were computing. Summed over threads, so several threads waiting
    /// at once count several times.
    pub fn waits(&self) -> BTreeMap<&'static str, f64> {
        self.waits.lock().expect("wait lock").clone()
    }

    /// Per-stage tallies, by stage name.
    pub fn tallies(&self) -> BTreeMap<&'static str, Tally> {
        self.tallies.lock().expect("tally lock").clone()
    }

    /// `--explain` notes, sorted (items finish in any order on worker threads).
    pub fn notes(&self) -> Vec<String> {
        let mut n = self.notes.lock().expect("notes lock").clone();
        n.sort();
        n
    }

    /// How many computed items could not be stored, and the first failure (its item and error).
    /// A bake goes on without them; a shard, whose work is what it stores, must fail.
    pub fn unstored(&self) -> Option<(usize, String)> {
        let unstored = self.unstored.lock().expect("unstored lock");
        unstored.1.clone().map(|first| (unstored.0, first))
    }

    /// Problems with the cache itself (each reported once); the bake went on without it.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = self.warnings.lock().expect("warning lock").clone();
        w.sort();
        w.dedup();
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_another_process_holds_counts_its_wait_against_the_stage() {
        let dir = std::env::temp_dir().join(format!("kiln-stage-cache-waits-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = || StageCache::new(Some(Store::open(&dir).expect("a store")), "waits", false);
        let (holder, waiter) = (cache(), cache());
        let item = StageInputs::new("transport sum", 1).with("slice", 3);
        let held = holder.claim(&item).expect("a claim");
        assert!(holder.waits()["transport sum"] < 0.1, "nobody held it: {:?}", holder.waits());
        let (ready, asked) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                ready.send(()).unwrap();
                drop(waiter.claim(&item).expect("a claim once released"));
            });
            asked.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(held);
        });
        let waits = waiter.waits();
        assert!(waits["transport sum"] >= 0.2, "waited for the holder: {waits:?}");
        assert_eq!(waits.len(), 1, "{waits:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn items_that_could_not_be_stored_are_counted_with_the_first_failure() {
        let dir = std::env::temp_dir().join(format!("kiln-stage-cache-unstored-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = StageCache::new(Some(Store::open(&dir).expect("a store")), "unstored", false);
        let item = |n: u128| StageInputs::new("transport part", 1).with("part", n);
        cache.computed("part 0", &item(0), b"stored");
        assert_eq!(cache.unstored(), None);
        // The store's objects become a file: every later put fails, as on a full disk.
        std::fs::remove_dir_all(dir.join("objects")).unwrap();
        std::fs::write(dir.join("objects"), b"").unwrap();
        cache.computed("part 1", &item(1), b"lost");
        cache.computed("part 2", &item(2), b"lost too");
        let (count, first) = cache.unstored().expect("two failures");
        assert_eq!(count, 2);
        assert!(first.starts_with("part 1: ") && first.contains("objects"), "{first}");
        assert_eq!(cache.tallies()["transport part"].computed, 3, "still counted as computed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn processes_that_waited_for_a_stored_item_read_it_side_by_side() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = std::env::temp_dir().join(format!("kiln-stage-cache-side-by-side-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = || StageCache::new(Some(Store::open(&dir).expect("a store")), "side", false);
        let (holder, waiters) = (cache(), [cache(), cache(), cache()]);
        let item = StageInputs::new("lighting scene", 1).with("transport", 7);
        let held = holder.claim(&item).expect("a claim");
        // Each reader stays in its read until all have been in it at once (or 2 s pass): read
        // under the claim, one at a time, no two would ever be in it together.
        let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let read = |c: &StageCache| {
            most.fetch_max(inside.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            let start = std::time::Instant::now();
            while most.load(Ordering::SeqCst) < waiters.len() && start.elapsed().as_secs() < 2 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            inside.fetch_sub(1, Ordering::SeqCst);
            c.lookup("scene", &item, Ok::<_, String>)
        };
        let found: Vec<Option<Vec<u8>>> = std::thread::scope(|s| {
            let running: Vec<_> = waiters
                .iter()
                .map(|w| {
                    s.spawn(|| match w.claim_or_read(&item, &item, || read(w)) {
                        Waited::Read(v) => Some(v),
                        Waited::Claimed(_) => None,
                    })
                })
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(200));
            holder.computed("scene", &item, b"the scene");
            drop(held);
            running.into_iter().map(|r| r.join().expect("a waiter")).collect()
        });
        assert_eq!(found, vec![Some(b"the scene".to_vec()); 3], "each waiter read what the holder stored");
        assert_eq!(most.load(Ordering::SeqCst), 3, "all three read at once");

        // An item nobody stored is claimed without a read; one the reader refuses is claimed too.
        let missing = StageInputs::new("lighting scene", 1).with("transport", 8);
        assert!(matches!(holder.claim_or_read(&missing, &missing, || -> Option<()> { panic!("nothing to read") }), Waited::Claimed(Some(_))));
        assert!(matches!(holder.claim_or_read(&item, &item, || None::<()>), Waited::Claimed(Some(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
