//! Kiln baker library: world files, bake stages and the `kiln` CLI.

pub mod ao;
pub mod budget;
pub mod cli;
pub mod density;
pub mod diff;
pub mod grass;
pub mod grid;
pub mod impostor;
#[cfg(test)]
mod layering_tests;
mod le;
pub mod lighting;
pub mod mc;
mod mem;
pub mod memory_watch;
pub mod optics;
pub mod pipeline;
pub mod rays;
pub mod rng;
pub mod scatter;
mod threads;
pub mod trees;
pub mod water;
pub mod world;

pub use mem::map_large_allocations_alone;

/// Peak resident memory of this process in bytes (Linux: VmHWM), if the platform tells.
pub fn peak_memory() -> Option<u64> {
    process_status_bytes("VmHWM:")
}

/// A memory figure of this process's `/proc/self/status` (given in kB there), in bytes.
pub(crate) fn process_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Processor time this process has used on all its threads (user and system), in seconds.
fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Wall time and this process's processor time (every thread) since it was started: over a
/// stretch of the bake, how many cores it kept busy.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    wall: std::time::Instant,
    cpu: f64,
}

impl Stopwatch {
    /// Starts both clocks now.
    pub fn start() -> Stopwatch {
        Stopwatch { wall: std::time::Instant::now(), cpu: process_cpu_seconds() }
    }

    /// `[wall, processor]` seconds since [`Stopwatch::start`].
    pub fn read(&self) -> [f64; 2] {
        [self.wall.elapsed().as_secs_f64(), process_cpu_seconds() - self.cpu]
    }
}
