//! Loader threads: read a tile pack, verify it, and run every product's decoder on it
//! ([`crate::layers::Decoder`]) into a [`DecodedTile`], off the render thread.
//!
//! The queue is a shared priority list that the render thread replaces every frame (not a FIFO
//! channel), so a tile the camera no longer wants is dropped before any thread spends time on it,
//! and a newly urgent tile jumps the queue. Finished loads wait in the shared state until the
//! render thread collects them; a load is removed from `busy` and its result stored in one critical
//! section, so the render thread always sees a key as queued, busy or done, never none of these.

use std::collections::{BTreeSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kiln_formats::{Pack, TileContents};

use super::{DecodedTile, TileId};
use crate::layers::Decoder;

/// One tile to load, with what the manifest promises about it.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub(crate) key: TileId,
    pub(crate) path: PathBuf,
    pub(crate) content_hash: u64,
    pub(crate) bounds_min: [f32; 3],
    pub(crate) bounds_max: [f32; 3],
}

/// A finished load: the decoded tile, or the problem, already prefixed with the file's path.
pub(crate) struct Outcome {
    pub(crate) key: TileId,
    pub(crate) result: Result<DecodedTile, String>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    busy: BTreeSet<TileId>,
    done: Vec<Outcome>,
    shutdown: bool,
    /// Every job started, in order (tests check the load order with it).
    #[cfg(test)]
    started: Vec<TileId>,
}

struct Shared {
    state: Mutex<State>,
    /// Every product's decoder, run on each pack in turn.
    decoders: Arc<[Box<dyn Decoder>]>,
    /// Signalled when jobs arrive or on shutdown.
    work: Condvar,
    /// Signalled when a load finishes.
    finished: Condvar,
}

impl Shared {
    /// The state, even if a thread panicked while holding the lock: every update to it is a single
    /// push, pop or insert, so it is never left half-changed.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A pool of loader threads; dropping it stops them after their current load.
pub(crate) struct Loader {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Loader {
    /// Starts `threads` loader threads, decoding with `decoders`.
    pub(crate) fn spawn(threads: usize, decoders: Arc<[Box<dyn Decoder>]>) -> std::io::Result<Self> {
        let shared = Arc::new(Shared { state: Mutex::new(State::default()), decoders, work: Condvar::new(), finished: Condvar::new() });
        let mut loader = Loader { shared, threads: Vec::with_capacity(threads) };
        for i in 0..threads {
            let shared = Arc::clone(&loader.shared);
            // On failure `loader` is dropped, which stops the threads already started.
            let handle = std::thread::Builder::new().name(format!("kiln-loader-{i}")).spawn(move || run(&shared))?;
            loader.threads.push(handle);
        }
        Ok(loader)
    }

    /// Replaces the queued (not started) jobs with `jobs`, in priority order, leaving out keys that
    /// are being loaded or whose result is waiting to be collected.
    pub(crate) fn set_queue(&self, jobs: Vec<Job>) {
        let mut state = self.shared.lock();
        let done: BTreeSet<TileId> = state.done.iter().map(|o| o.key).collect();
        state.queue = jobs.into_iter().filter(|j| !state.busy.contains(&j.key) && !done.contains(&j.key)).collect();
        if !state.queue.is_empty() {
            self.shared.work.notify_all();
        }
    }

    /// Takes the finished loads, without blocking.
    pub(crate) fn collect(&self) -> Vec<Outcome> {
        std::mem::take(&mut self.shared.lock().done)
    }

    /// Loads queued or running.
    pub(crate) fn in_flight(&self) -> usize {
        let state = self.shared.lock();
        state.queue.len() + state.busy.len()
    }

    /// Every job started so far, in order.
    #[cfg(test)]
    pub(crate) fn started(&self) -> Vec<TileId> {
        self.shared.lock().started.clone()
    }

    /// Blocks until a finished load waits to be collected, no load is queued or running, or
    /// `timeout` passes; returns whether one of the first two happened.
    pub(crate) fn wait_progress(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while state.done.is_empty() && !(state.queue.is_empty() && state.busy.is_empty()) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self.shared.finished.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        true
    }

    /// Blocks until no load is queued or running, or `timeout` passes; returns whether it got idle.
    pub(crate) fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while !(state.queue.is_empty() && state.busy.is_empty()) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self.shared.finished.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        true
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.shutdown = true;
            state.queue.clear();
        }
        self.shared.work.notify_all();
        for t in self.threads.drain(..) {
            // A loader thread that panicked has nothing left to clean up.
            let _ = t.join();
        }
    }
}

/// Streaming is background work: on a machine with few cores (two, with a CPU rasteriser) loader
/// threads at normal priority took the cores from the render thread and the driver's rasteriser
/// threads, and the first frame waited for tiles it did not need. At a lower priority they run
/// in whatever time rendering leaves, which on a many-core machine is all of it.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread; no memory is shared with them. Failure
    // (e.g. a sandbox forbidding it) only leaves the priority unchanged.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

fn run(shared: &Shared) {
    lower_priority();
    loop {
        let job = {
            let mut state = shared.lock();
            loop {
                if state.shutdown {
                    return;
                }
                if let Some(job) = state.queue.pop_front() {
                    state.busy.insert(job.key);
                    #[cfg(test)]
                    state.started.push(job.key);
                    break job;
                }
                state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
            }
        };
        // The decoder must not panic on bad bytes; if it ever does, the tile fails instead of
        // staying `busy` forever with its thread gone.
        let result = catch_unwind(AssertUnwindSafe(|| load_tile(&job, &shared.decoders)))
            .unwrap_or_else(|_| Err(format!("{}: the decoder panicked", job.path.display())));
        let mut state = shared.lock();
        state.busy.remove(&job.key);
        state.done.push(Outcome { key: job.key, result });
        drop(state);
        shared.finished.notify_all();
    }
}

/// Reads, verifies and decodes one tile pack with every product's decoder. The pack's layout is
/// checked on open, each section's checksum as it is read, and the sections against each other by
/// [`TileContents::read`], which the decoders then share; the whole file must also hash to the
/// manifest's content hash, which catches a sound pack from another bake as well as damage in
/// sections no decoder reads.
pub(crate) fn load_tile(job: &Job, decoders: &[Box<dyn Decoder>]) -> Result<DecodedTile, String> {
    let pack = Pack::open(&job.path).map_err(|e| e.to_string())?;
    let at = |e: String| format!("{}: {e}", job.path.display());
    let tile = TileContents::read(&pack).map_err(|e| at(e.to_string()))?;
    if tile.id() != job.key {
        return Err(at(format!("the pack holds {:?}, not tile {}", tile.info.kind, job.key)));
    }
    let products = decoders.iter().map(|d| d.decode(&pack, &tile)).collect::<Result<Vec<_>, _>>().map_err(at)?;
    let content_hash = xxhash_rust::xxh3::xxh3_64(pack.bytes());
    if content_hash != job.content_hash {
        return Err(at(format!(
            "content hash {content_hash:016x} differs from the manifest's {:016x} (a pack from another bake, or damaged)",
            job.content_hash
        )));
    }
    Ok(DecodedTile {
        key: job.key,
        products,
        bounds_min: job.bounds_min,
        bounds_max: job.bounds_max,
        pack_bytes: pack.bytes().len() as u64,
        inputs_hash: tile.info.inputs_hash,
        content_hash,
    })
}
