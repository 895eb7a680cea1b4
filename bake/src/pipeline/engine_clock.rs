//! The bake report's clock: wall and processor time per report stage, each step counted once.
//!
//! Steps nest (light transport resolves the tiles it reads, each a step of its own stage), and a
//! step's own time excludes the steps nested in it. Nesting follows the driving thread; a step
//! that runs on the machine's threads for the shards that share it
//! ([`super::machine_once::MachineOnce::run`]) carries its caller as its driving thread.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::thread::ThreadId;

use super::{Engine, Entry};
use crate::pipeline::StageTiming;

/// Wall time per report stage, each step counted once (a step's time excludes the nested steps it
/// resolved first).
#[derive(Default)]
pub(super) struct Clock {
    /// Per report stage: wall and processor seconds, steps nested in others excluded.
    seconds: BTreeMap<&'static str, [f64; 2]>,
    details: BTreeMap<&'static str, Vec<Detail>>,
    /// Per driving thread, per open step: the wall and processor seconds of the steps nested in it.
    nested: HashMap<ThreadId, Vec<[f64; 2]>>,
}

/// A line about a stage's work in the bake report.
enum Detail {
    Text(String),
    /// Tiles of a tile product computed: one line for the tiles of consecutive passes (a world
    /// product that reads tiles a chunk at a time computes the missing ones chunk by chunk).
    Computed {
        product: &'static str,
        tiles: usize,
    },
}

impl std::fmt::Display for Detail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Detail::Text(t) => f.write_str(t),
            Detail::Computed { product, tiles } => write!(f, "{tiles} {product} computed"),
        }
    }
}

thread_local! {
    /// The thread whose steps this thread's steps nest in, where it runs work on another's behalf.
    static DRIVER: Cell<Option<ThreadId>> = const { Cell::new(None) };
}

/// The driving thread of the steps timed on this thread.
pub(crate) fn driver() -> ThreadId {
    DRIVER.with(|d| d.get()).unwrap_or_else(|| std::thread::current().id())
}

/// Runs `f` with its steps nested in `driver`'s open step (for `f` run on another thread on
/// `driver`'s behalf, while `driver` waits for it).
pub(crate) fn driven_by<R>(driver: ThreadId, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<ThreadId>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DRIVER.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DRIVER.with(|d| d.replace(Some(driver))));
    f()
}

impl Engine<'_> {
    /// Runs `f` as a step of report stage `stage`.
    pub(super) fn timed<R>(&self, stage: &'static str, f: impl FnOnce() -> R) -> R {
        let thread = driver();
        self.clock.lock().expect("clock").nested.entry(thread).or_default().push([0.0; 2]);
        self.progress.step(stage, true);
        let watch = crate::Stopwatch::start();
        let r = f();
        crate::mem::return_freed_memory();
        self.progress.step(stage, false);
        let total = watch.read();
        let mut c = self.clock.lock().expect("clock");
        let open = c.nested.entry(thread).or_default();
        let nested = open.pop().unwrap_or_default();
        if let Some(parent) = open.last_mut() {
            for k in 0..2 {
                parent[k] += total[k];
            }
        }
        let own = c.seconds.entry(stage).or_default();
        for k in 0..2 {
            own[k] += total[k] - nested[k];
        }
        r
    }

    /// Adds a line about the work of `stage` to the report.
    pub(super) fn note(&self, stage: &'static str, detail: String) {
        self.clock.lock().expect("clock").details.entry(stage).or_default().push(Detail::Text(detail));
    }

    /// Adds `tiles` tiles of tile product `product` computed to the report's line about `stage`.
    pub(super) fn note_computed(&self, stage: &'static str, product: &'static str, tiles: usize) {
        let mut c = self.clock.lock().expect("clock");
        let lines = c.details.entry(stage).or_default();
        match lines.last_mut() {
            Some(Detail::Computed { product: last, tiles: count }) if *last == product => *count += tiles,
            _ => lines.push(Detail::Computed { product, tiles }),
        }
    }

    /// Wall time, processor time and work per report stage, in registry order, then `packs`.
    pub fn timings(&self) -> Vec<StageTiming> {
        let c = self.clock.lock().expect("clock");
        let mut names: Vec<&'static str> = Vec::new();
        for e in self.registry.entries() {
            let s = match e {
                Entry::World(p) => p.report_stage(),
                Entry::Tile(p) => p.report_stage(),
            };
            if !names.contains(&s) {
                names.push(s);
            }
        }
        names.push("packs");
        names
            .into_iter()
            .map(|name| {
                let mut detail = c.details.get(name).map(|d| d.iter().map(Detail::to_string).collect::<Vec<_>>().join("; ")).unwrap_or_default();
                if detail.is_empty() {
                    detail = "unchanged (cached)".into();
                }
                for p in self.registry.tile_products().filter(|p| p.report_stage() == name) {
                    if let Some(extra) = p.report_detail() {
                        detail = format!("{detail}; {extra}");
                    }
                }
                let [seconds, cpu_seconds] = c.seconds.get(name).copied().unwrap_or_default();
                StageTiming { name, seconds, cpu_seconds, detail }
            })
            .collect()
    }
}
