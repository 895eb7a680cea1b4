//! Holding a bake to a memory budget by measurement. The pre-bake estimate ([`crate::budget`]) is
//! an upper bound from the world file alone, loose where the world decides what is made (how many
//! trees grow is known only once the terrain is); a budget between what a world certainly needs
//! and that bound is kept by watching instead: a thread of its own reads the process's peak
//! resident memory every [`MemoryWatch::PERIOD`] and reports the first look that finds it over.
//! The peak is the kernel's high-water mark (Linux: `VmHWM`), so a spike between two looks is not
//! missed, only seen up to one period late; the watch takes a last look when it is stopped, so a
//! spike in a bake's last moments (or in a short bake on a machine too busy to run the watch's
//! thread on time) is reported too.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running watch; dropping it stops the thread.
#[must_use = "the watch stops when dropped"]
pub struct MemoryWatch {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl MemoryWatch {
    /// How often the peak is read (a read of `/proc/self/status` costs microseconds).
    pub const PERIOD: Duration = Duration::from_millis(5);

    /// Starts watching: `over` runs once, on the watch's thread, with the peak in bytes, when the
    /// process's peak resident memory passes `limit` bytes. `None` where the platform does not
    /// report peak memory (nothing can be watched there).
    pub fn start(limit: u64, over: impl FnOnce(u64) + Send + 'static) -> Option<MemoryWatch> {
        crate::peak_memory()?;
        Self::every(Self::PERIOD, limit, crate::peak_memory, over)
    }

    /// [`MemoryWatch::start`], reading the peak with `peak` every `period`.
    fn every(
        period: Duration,
        limit: u64,
        peak: impl Fn() -> Option<u64> + Send + 'static,
        over: impl FnOnce(u64) + Send + 'static,
    ) -> Option<MemoryWatch> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("kiln-memory-watch".into())
            .spawn(move || {
                let (lock, wake) = &*flag;
                let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    let last = *stopped;
                    if let Some(peak) = peak().filter(|&p| p > limit) {
                        drop(stopped);
                        over(peak);
                        return;
                    }
                    if last {
                        return;
                    }
                    stopped = wake.wait_timeout(stopped, period).unwrap_or_else(|e| e.into_inner()).0;
                }
            })
            .ok()?;
        Some(MemoryWatch { stop, thread: Some(thread) })
    }
}

impl Drop for MemoryWatch {
    /// Stops the watch after a last look, which reports a peak first passed since the one before.
    fn drop(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_peak_over_the_limit_is_reported_once_and_one_under_it_never() {
        let now = crate::peak_memory().unwrap();
        let (tx, rx) = mpsc::channel();
        let quiet = MemoryWatch::start(now + (1 << 40), move |peak| tx.send(peak).unwrap()).unwrap();
        std::thread::sleep(MemoryWatch::PERIOD * 4);
        drop(quiet);
        assert!(rx.try_recv().is_err(), "a peak under the limit was reported");

        // Over what is resident now (the high-water mark may be higher still, left by other tests
        // in this process: then the report comes at once, as it should).
        let (tx, rx) = mpsc::channel();
        let limit = crate::process_status_bytes("VmRSS:").unwrap() + (64 << 20);
        let watch = MemoryWatch::start(limit, move |peak| tx.send(peak).unwrap()).unwrap();
        // 256 MiB touched page by page: resident at once, so the high-water mark passes the limit
        // even if other tests free up to 192 MiB meanwhile.
        let block = vec![1u8; 256 << 20];
        std::hint::black_box(&block);
        drop(block);
        let peak = rx.recv_timeout(Duration::from_secs(10)).expect("the peak over the limit was not reported");
        assert!(peak > limit, "{peak} <= {limit}");
        drop(watch);
        assert!(rx.try_recv().is_err(), "reported twice");
    }

    #[test]
    fn a_peak_passed_just_before_the_watch_stops_is_still_reported() {
        use std::sync::atomic::{AtomicU64, Ordering};
        // The peak as the watch reads it, set by the test: the process's own high-water mark is
        // shared with the tests running beside this one.
        let peak = Arc::new(AtomicU64::new(100));
        let (looked, first_look) = mpsc::channel();
        let read = {
            let peak = Arc::clone(&peak);
            move || {
                let read = peak.load(Ordering::SeqCst);
                let _ = looked.send(());
                Some(read)
            }
        };
        let (tx, rx) = mpsc::channel();
        // Past the limit after the first look, and stopped long before the next.
        let watch = MemoryWatch::every(Duration::from_secs(60), 200, read, move |p| tx.send(p).unwrap()).unwrap();
        first_look.recv().expect("a first look");
        peak.store(300, Ordering::SeqCst);
        drop(watch);
        assert_eq!(rx.try_recv(), Ok(300), "the last look reports the peak");
    }
}
