//! A residency policy: which items to build (upload) this frame, which to keep, which to evict.
//!
//! After the planet renderer's mesh manager (`shared/seeds/002`), every key the caller cares about
//! is in one of four sets:
//!
//! | set | meaning |
//! | --- | --- |
//! | visible | built, and needed this frame (drawn, or kept as a stand-in for something drawn) |
//! | visible-to-build | needed this frame, not built yet |
//! | cached | built, not needed this frame; evicted least-recently-used once the total exceeds the budget |
//! | cache-to-build | not needed yet but likely soon (prefetch candidates), not built |
//!
//! Each frame the caller calls [`Residency::begin_frame`] with what it needs and what it expects to
//! need, [`Residency::next_builds`] to learn which of the loaded items to build now,
//! [`Residency::mark_built`] for each one it built, then [`Residency::evictions`] for the items it
//! must free. The rules, and why:
//!
//! - Visible builds come first, in the caller's priority order. A per-frame byte budget spreads a
//!   burst of loads over several frames so that no frame hitches; the first build of a frame is
//!   always allowed, so an item larger than that budget still gets built.
//! - At most one prefetch build per frame, and only in a frame where no visible build ran: building
//!   is the expensive part, and a prefetch must never delay what is needed now.
//! - A build is refused when the visible items plus it would exceed the residency budget (only
//!   the cached items can be evicted to make room), unless nothing visible is built yet, so that
//!   something can always be drawn. The caller keeps drawing a stand-in for a refused item, and the
//!   resident total stays within the budget whenever the visible items alone fit.
//! - Visible items are never evicted. An item that stops being visible goes to the cached set as its
//!   most recently used entry; a cached item named as a prefetch candidate is touched as well,
//!   since it is about to be needed.
//!
//! Everything is ordered (B-trees and explicit frame stamps, ties broken by key), so the same calls
//! give the same answers on every run.

use std::collections::{BTreeMap, BTreeSet};

/// Counters and set sizes, for a HUD or a test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResidencyStats {
    /// Items built and needed this frame.
    pub visible: usize,
    /// Items needed this frame and not built.
    pub visible_to_build: usize,
    /// Items built and not needed this frame.
    pub cached: usize,
    /// Prefetch candidates not built.
    pub cache_to_build: usize,
    /// Bytes of all built items.
    pub resident_bytes: u64,
    /// Bytes of the visible items.
    pub visible_bytes: u64,
    /// Largest `resident_bytes` seen after [`Residency::evictions`].
    pub peak_resident_bytes: u64,
    /// The residency budget.
    pub budget_bytes: u64,
    /// Builds recorded by [`Residency::mark_built`] since creation.
    pub builds: u64,
    /// Of those, builds of prefetch candidates.
    pub prefetch_builds: u64,
    /// Bytes recorded by [`Residency::mark_built`] since creation.
    pub bytes_built: u64,
    /// Items evicted since creation.
    pub evictions: u64,
    /// Ready visible items the last [`Residency::next_builds`] refused because they would not fit the budget.
    pub deferred_over_budget: usize,
}

/// What to build this frame, from [`Residency::next_builds`]: `(key, bytes)` pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Builds<K> {
    /// Visible items, in the caller's priority order.
    pub visible: Vec<(K, u64)>,
    /// One prefetch candidate, only when `visible` is empty.
    pub prefetch: Option<(K, u64)>,
}

impl<K: Copy> Builds<K> {
    /// Whether there is nothing to build.
    pub fn is_empty(&self) -> bool {
        self.visible.is_empty() && self.prefetch.is_none()
    }
    /// Every build, visible ones first.
    pub fn iter(&self) -> impl Iterator<Item = (K, u64)> + '_ {
        self.visible.iter().copied().chain(self.prefetch)
    }
    /// Total bytes of the builds.
    pub fn bytes(&self) -> u64 {
        self.iter().map(|(_, b)| b).sum()
    }
}

struct Entry {
    bytes: u64,
    /// When this item was last visible, named as a prefetch candidate, or built: see [`Residency::stamp`].
    last_used: u64,
}

/// The four-set residency policy over keys `K`. See the module documentation for the rules.
pub struct Residency<K> {
    budget_bytes: u64,
    frame_upload_bytes: u64,
    frame: u64,
    /// Every built item.
    built: BTreeMap<K, Entry>,
    /// Built items needed this frame.
    visible: BTreeSet<K>,
    /// Built items not needed this frame, least recently used first: `(last_used, key)`.
    lru: BTreeSet<(u64, K)>,
    /// Unbuilt items needed this frame, in priority order.
    visible_to_build: Vec<K>,
    /// Unbuilt prefetch candidates, in priority order.
    cache_to_build: Vec<K>,
    resident_bytes: u64,
    visible_bytes: u64,
    peak_resident_bytes: u64,
    builds: u64,
    prefetch_builds: u64,
    bytes_built: u64,
    evictions: u64,
    deferred_over_budget: usize,
}

impl<K: Ord + Copy> Residency<K> {
    /// An empty residency that keeps at most `budget_bytes` built (see the module rules for the one
    /// exception), with no per-frame build budget.
    pub fn new(budget_bytes: u64) -> Self {
        Residency {
            budget_bytes,
            frame_upload_bytes: u64::MAX,
            frame: 0,
            built: BTreeMap::new(),
            visible: BTreeSet::new(),
            lru: BTreeSet::new(),
            visible_to_build: Vec::new(),
            cache_to_build: Vec::new(),
            resident_bytes: 0,
            visible_bytes: 0,
            peak_resident_bytes: 0,
            builds: 0,
            prefetch_builds: 0,
            bytes_built: 0,
            evictions: 0,
            deferred_over_budget: 0,
        }
    }

    /// Limits the bytes [`Residency::next_builds`] hands out per frame (the first build of a frame is
    /// always allowed).
    pub fn with_frame_upload_budget(mut self, bytes: u64) -> Self {
        self.frame_upload_bytes = bytes;
        self
    }

    /// Changes the residency budget; the next [`Residency::evictions`] applies it.
    pub fn set_budget_bytes(&mut self, bytes: u64) {
        self.budget_bytes = bytes;
    }

    /// Starts a frame: `visible` is what must be resident now and `prefetch` what will likely be
    /// needed soon, each in priority order (duplicates and keys of `prefetch` also in `visible` are
    /// ignored). Built items drop out of the to-build sets, so a cached item that becomes visible
    /// again is never rebuilt.
    pub fn begin_frame(&mut self, visible: &[K], prefetch: &[K]) {
        self.frame += 1;
        let now = self.stamp(false);
        let mut wanted = BTreeSet::new();
        let mut next_visible = BTreeSet::new();
        self.visible_to_build.clear();
        for &k in visible {
            if !wanted.insert(k) {
                continue;
            }
            match self.built.get_mut(&k) {
                Some(e) => {
                    if !self.visible.contains(&k) {
                        self.lru.remove(&(e.last_used, k));
                    }
                    e.last_used = now;
                    next_visible.insert(k);
                }
                None => self.visible_to_build.push(k),
            }
        }
        // What stops being visible becomes cached, stamped with the last frame it was used.
        for k in std::mem::take(&mut self.visible) {
            if !next_visible.contains(&k) {
                if let Some(e) = self.built.get(&k) {
                    self.lru.insert((e.last_used, k));
                }
            }
        }
        self.cache_to_build.clear();
        for &k in prefetch {
            if !wanted.insert(k) {
                continue;
            }
            match self.built.get_mut(&k) {
                Some(e) => {
                    // Cached and about to be needed: keep it over older cached items.
                    self.lru.remove(&(e.last_used, k));
                    e.last_used = now;
                    self.lru.insert((now, k));
                }
                None => self.cache_to_build.push(k),
            }
        }
        self.visible_bytes = next_visible.iter().filter_map(|k| self.built.get(k)).map(|e| e.bytes).sum();
        self.visible = next_visible;
    }

    /// Which items to build this frame. `ready(key)` gives the bytes an item will occupy once built,
    /// or `None` if it cannot be built yet (still loading, failed). Nothing changes until the caller
    /// reports each build with [`Residency::mark_built`].
    pub fn next_builds(&mut self, mut ready: impl FnMut(K) -> Option<u64>) -> Builds<K> {
        let mut builds = Builds { visible: Vec::new(), prefetch: None };
        let mut frame_bytes = 0u64;
        let mut visible_bytes = self.visible_bytes;
        let mut deferred = 0;
        for &k in &self.visible_to_build {
            let Some(bytes) = ready(k) else { continue };
            // The frame's upload budget only postpones a build; a smaller later item may still fit.
            if !builds.visible.is_empty() && frame_bytes.saturating_add(bytes) > self.frame_upload_bytes {
                continue;
            }
            let nothing_to_draw = visible_bytes == 0 && builds.visible.is_empty();
            if visible_bytes.saturating_add(bytes) > self.budget_bytes && !nothing_to_draw {
                deferred += 1;
                continue;
            }
            frame_bytes = frame_bytes.saturating_add(bytes);
            visible_bytes = visible_bytes.saturating_add(bytes);
            builds.visible.push((k, bytes));
        }
        if builds.visible.is_empty() {
            // A prefetch that cannot stay resident next to the visible items would be evicted at once.
            builds.prefetch = self
                .cache_to_build
                .iter()
                .filter_map(|&k| ready(k).map(|bytes| (k, bytes)))
                .find(|&(_, bytes)| self.visible_bytes.saturating_add(bytes) <= self.budget_bytes);
        }
        self.deferred_over_budget = deferred;
        builds
    }

    /// Records that `key` was built and occupies `bytes`. A visible-to-build item becomes visible;
    /// anything else (a prefetch candidate, or an item nobody asked for) becomes cached, most recently
    /// used. Building an item that is already built just updates its size.
    pub fn mark_built(&mut self, key: K, bytes: u64) {
        self.builds += 1;
        self.bytes_built = self.bytes_built.saturating_add(bytes);
        if let Some(e) = self.built.get_mut(&key) {
            self.resident_bytes = self.resident_bytes - e.bytes + bytes;
            if self.visible.contains(&key) {
                self.visible_bytes = self.visible_bytes - e.bytes + bytes;
            }
            e.bytes = bytes;
            return;
        }
        self.resident_bytes += bytes;
        let now = self.stamp(true);
        self.built.insert(key, Entry { bytes, last_used: now });
        if let Some(i) = self.visible_to_build.iter().position(|&k| k == key) {
            self.visible_to_build.remove(i);
            self.visible.insert(key);
            self.visible_bytes += bytes;
        } else {
            if let Some(i) = self.cache_to_build.iter().position(|&k| k == key) {
                self.cache_to_build.remove(i);
                self.prefetch_builds += 1;
            }
            self.lru.insert((now, key));
        }
    }

    /// The LRU stamp of the current frame. Builds count as later than the frame's
    /// [`Residency::begin_frame`] touches, so an item built this frame is evicted after everything
    /// else cached, never before a cached item that was merely named again: otherwise a prefetch
    /// build could be evicted in the very frame it was uploaded.
    fn stamp(&self, build: bool) -> u64 {
        2 * self.frame + u64::from(build)
    }

    /// Forgets a built item (the caller freed it for its own reasons) and returns its bytes. It stays
    /// out of every set until the next [`Residency::begin_frame`] asks for it again.
    pub fn remove(&mut self, key: K) -> Option<u64> {
        let e = self.built.remove(&key)?;
        self.resident_bytes -= e.bytes;
        if self.visible.remove(&key) {
            self.visible_bytes -= e.bytes;
        } else {
            self.lru.remove(&(e.last_used, key));
        }
        Some(e.bytes)
    }

    /// Evicts cached items, least recently used first (ties by key), until the resident total fits
    /// the budget or only visible items are left. Returns them in eviction order: the caller frees them.
    /// Call once per frame after the builds; it also records the peak resident total.
    pub fn evictions(&mut self) -> Vec<K> {
        let mut victims = Vec::new();
        while self.resident_bytes > self.budget_bytes {
            let Some((_, k)) = self.lru.pop_first() else { break };
            if let Some(e) = self.built.remove(&k) {
                self.resident_bytes -= e.bytes;
            }
            victims.push(k);
        }
        self.evictions += victims.len() as u64;
        self.peak_resident_bytes = self.peak_resident_bytes.max(self.resident_bytes);
        victims
    }

    /// Whether `key` is built (visible or cached).
    pub fn is_built(&self, key: K) -> bool {
        self.built.contains_key(&key)
    }
    /// Whether `key` is built and visible this frame.
    pub fn is_visible(&self, key: K) -> bool {
        self.visible.contains(&key)
    }
    /// The bytes of a built item.
    pub fn bytes_of(&self, key: K) -> Option<u64> {
        self.built.get(&key).map(|e| e.bytes)
    }
    /// Built items needed this frame, in key order.
    pub fn visible(&self) -> impl Iterator<Item = K> + '_ {
        self.visible.iter().copied()
    }
    /// Items needed this frame and not built, in priority order.
    pub fn visible_to_build(&self) -> &[K] {
        &self.visible_to_build
    }
    /// Built items not needed this frame, least recently used (next evicted) first.
    pub fn cached(&self) -> impl Iterator<Item = K> + '_ {
        self.lru.iter().map(|&(_, k)| k)
    }
    /// Prefetch candidates not built, in priority order.
    pub fn cache_to_build(&self) -> &[K] {
        &self.cache_to_build
    }
    /// Bytes of all built items.
    pub fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }
    /// Largest resident total seen after [`Residency::evictions`].
    pub fn peak_resident_bytes(&self) -> u64 {
        self.peak_resident_bytes
    }
    /// The residency budget.
    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }
    /// Set sizes and counters.
    pub fn stats(&self) -> ResidencyStats {
        ResidencyStats {
            visible: self.visible.len(),
            visible_to_build: self.visible_to_build.len(),
            cached: self.lru.len(),
            cache_to_build: self.cache_to_build.len(),
            resident_bytes: self.resident_bytes,
            visible_bytes: self.visible_bytes,
            peak_resident_bytes: self.peak_resident_bytes,
            budget_bytes: self.budget_bytes,
            builds: self.builds,
            prefetch_builds: self.prefetch_builds,
            bytes_built: self.bytes_built,
            evictions: self.evictions,
            deferred_over_budget: self.deferred_over_budget,
        }
    }
}

#[cfg(test)]
mod tests;
