//! Test hook: named points in the commit of a bake where the process can be made to die.
//!
//! A timer rarely lands between two renames, so the crash-safety tests name the instant instead:
//! `KILN_FAILPOINT=commit:after-exchange` kills the process (SIGKILL, as `kill -9` would: no
//! destructor, no cleanup) when the commit reaches that point. Several names may be given,
//! separated by commas. Unset (always, outside tests) it costs one environment lookup per bake.

use std::sync::OnceLock;

/// The environment variable naming the armed points.
pub const ENV: &str = "KILN_FAILPOINT";

fn armed() -> &'static [String] {
    static ARMED: OnceLock<Vec<String>> = OnceLock::new();
    ARMED
        .get_or_init(|| std::env::var(ENV).map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()).unwrap_or_default())
}

/// Dies here if `point` is armed.
pub fn hit(point: &str) {
    if armed().iter().any(|p| p == point) {
        die();
    }
}

fn die() -> ! {
    #[cfg(target_os = "linux")]
    // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}
