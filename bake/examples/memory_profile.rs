//! `make bench` part (issue 20, bounded memory): where a whole bake's memory peaks, step by step.
//! A counting allocator follows the live heap; the bake's progress steps (`Progress::step`) cut
//! the run into steps, and each step's peak of live heap is reported with what was already live
//! when it began (what earlier steps still hold). The process's peak resident memory (VmHWM) is
//! printed beside the heap's peak: the difference is the allocator's slack, stacks and code.
//!
//! Usage: `cargo run --release -p kiln-bake --example memory_profile [-- worlds/x.toml [jobs]]`.
//! The bake runs with a stage cache in a fresh temporary directory, as `kiln bake` runs with its
//! own by default (the engine releases values the cache can give back).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use kiln_bake::pipeline::progress::{NoProgress, Progress, StageProgress};

/// The system allocator, counting live bytes and their peak since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Takes the peak since the last call and restarts it at the live heap.
fn take_peak() -> (usize, usize) {
    let live = LIVE.load(Ordering::Relaxed);
    (PEAK.swap(live, Ordering::Relaxed).max(live), live)
}

/// One row per step: its path (the stages open around it, then its own), nesting depth, heap
/// live when it began, its peak.
struct Steps {
    /// The open steps, innermost last, as indices into `rows`.
    open: Mutex<Vec<usize>>,
    rows: Mutex<Vec<(String, usize, usize, usize)>>,
}

impl Progress for Steps {
    fn start(&self, stage: &str, items: u64) -> Box<dyn StageProgress + '_> {
        NoProgress.start(stage, items)
    }
    fn step(&self, stage: &str, begins: bool) {
        let mut open = self.open.lock().expect("open");
        let mut rows = self.rows.lock().expect("rows");
        // The peak since the last event belongs to every open step.
        let (peak, live) = take_peak();
        for &r in open.iter() {
            rows[r].3 = rows[r].3.max(peak);
        }
        if begins {
            let path = match open.last() {
                Some(&parent) => format!("{}/{stage}", rows[parent].0),
                None => stage.to_owned(),
            };
            open.push(rows.len());
            rows.push((path, open.len() - 1, live, live));
        } else {
            open.pop();
        }
    }
}

fn mib(b: usize) -> f64 {
    b as f64 / 1048576.0
}

fn main() {
    // As `kiln` does, so the resident peak printed is the one `kiln bake` would reach.
    kiln_bake::map_large_allocations_alone();
    let mut args = std::env::args().skip(1);
    let world_path = args.next().unwrap_or_else(|| "worlds/ice_caves.toml".into());
    let jobs = args.next().and_then(|j| j.parse().ok());
    let world = match kiln_bake::world::load_world(std::path::Path::new(&world_path)) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memory profile: {e}");
            std::process::exit(2);
        }
    };
    let out = std::env::temp_dir().join(format!("kiln-memory-profile-{}", std::process::id()));
    let opts = kiln_bake::pipeline::BakeOptions { jobs, cache: Some(out.join("cache")), ..kiln_bake::pipeline::BakeOptions::new(out.join("out")) };
    let steps = Steps { open: Mutex::default(), rows: Mutex::default() };
    if let Err(e) = kiln_bake::pipeline::bake(&world, &opts, &steps) {
        eprintln!("memory profile: {e}");
        std::process::exit(2);
    }
    let (peak_end, live_end) = take_peak();
    println!("memory profile: {} (whole bake, empty cache, {} threads)", world.spec.name, kiln_bake::pipeline::worker_threads(jobs).unwrap_or(1));
    println!("  {:<28} {:>12} {:>12}", "step", "held before", "peak heap");
    let rows = steps.rows.lock().expect("rows");
    // Every step of one path is one row, where the path first began (the packs are made a few
    // tiles at a time, reading back each product's outputs under its stage's name): the heap held
    // when it first began and its largest peak.
    let mut merged: Vec<(String, usize, usize, usize)> = Vec::new();
    for r in rows.iter() {
        match merged.iter_mut().find(|m| m.0 == r.0) {
            Some(m) => m.3 = m.3.max(r.3),
            None => merged.push(r.clone()),
        }
    }
    for (path, depth, before, peak) in &merged {
        let name = path.rsplit('/').next().unwrap_or(path);
        println!("  {:<28} {:>8.0} MiB {:>8.0} MiB", format!("{}{name}", "  ".repeat(*depth)), mib(*before), mib(*peak));
    }
    let heap_peak = merged.iter().map(|r| r.3).max().unwrap_or(0).max(peak_end);
    println!("  heap peak {:.0} MiB, live at the end {:.0} MiB", mib(heap_peak), mib(live_end));
    println!("  peak resident memory {}", kiln_bake::peak_memory().map_or("unknown".into(), |b| format!("{:.0} MiB", mib(b as usize))));
    let _ = std::fs::remove_dir_all(&out);
}
