//! A pool of background threads: rayon workers that the OS runs only on cores nothing else wants
//! (`SCHED_IDLE` on Linux), so that work which is not yet needed fills the cores a bake's
//! one-thread steps leave idle without slowing the steps that are. Once that work is needed, the
//! pool is promoted to ordinary threads, so that nothing waits on work the OS will not run while
//! other processes keep every core busy. A pool whose work other processes may wait for (a shard's,
//! which claims items the other shards need) starts as ordinary threads: a process cannot promote
//! another's workers, and one held back by the OS would hold the others back with it.

use std::sync::{Arc, Mutex};

/// Rayon workers in the idle scheduling class until [`Background::promote`].
pub(crate) struct Background {
    pool: rayon::ThreadPool,
    /// The workers' thread ids, as the scheduler names them.
    workers: Arc<Mutex<Vec<i32>>>,
}

impl Background {
    /// A pool of `threads` workers at the lowest scheduling class the OS offers (`SCHED_IDLE` on
    /// Linux; elsewhere, or where the class cannot be set, ordinary workers), or, unless `idle`,
    /// ordinary workers from the start. Its work gives the same results as on any other pool:
    /// only when it runs changes.
    pub(crate) fn new(threads: usize, idle: bool) -> Result<Background, rayon::ThreadPoolBuildError> {
        let workers = Arc::new(Mutex::new(Vec::new()));
        let record = workers.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("kiln-background-{i}"))
            .start_handler(move |_| {
                if let Some(id) = idle.then(|| set_class(Class::Idle, 0)).flatten() {
                    record.lock().unwrap_or_else(|e| e.into_inner()).push(id);
                }
            })
            .build()?;
        Ok(Background { pool, workers })
    }

    /// Runs `f` on the pool's workers (rayon's `install`).
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// Puts every worker back in the ordinary class: what they compute is needed now.
    pub(crate) fn promote(&self) {
        for &id in self.workers.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            set_class(Class::Ordinary, id);
        }
    }
}

enum Class {
    Idle,
    Ordinary,
}

/// Sets thread `id`'s scheduling class (0: the calling thread); returns the thread's id where the
/// OS took it (a hint: a failure changes nothing else).
fn set_class(class: Class, id: i32) -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        let policy = match class {
            Class::Idle => libc::SCHED_IDLE,
            Class::Ordinary => libc::SCHED_OTHER,
        };
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param for both policies (priority 0); `id` is 0 (the
        // calling thread) or a worker of this process recorded by its own start handler, whose
        // pool outlives the call.
        let done = unsafe { libc::sched_setscheduler(id, policy, &param) } == 0;
        // SAFETY: gettid has no preconditions.
        done.then(|| if id == 0 { unsafe { libc::gettid() } } else { id })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (class, id);
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The scheduling class of the pool's worker that runs the call.
    fn class_in(pool: &Background) -> i32 {
        // SAFETY: sched_getscheduler(0) reads the calling thread's policy; no preconditions.
        pool.install(|| unsafe { libc::sched_getscheduler(0) })
    }

    #[test]
    fn an_idle_pool_runs_in_the_idle_class_until_promoted_and_a_shards_pool_never_does() {
        let idle = Background::new(1, true).unwrap();
        assert_eq!(class_in(&idle), libc::SCHED_IDLE);
        idle.promote();
        assert_eq!(class_in(&idle), libc::SCHED_OTHER, "promoted");
        let ordinary = Background::new(1, false).unwrap();
        assert_eq!(class_in(&ordinary), libc::SCHED_OTHER);
    }
}
