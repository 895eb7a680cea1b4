//! The viewer's error type: each variant prints as one line that says what failed and what to do.

use std::path::PathBuf;

use crate::streaming::StreamError;

/// Everything that stops `kiln-view`. A single bad tile is *not* here: it is reported in the HUD
/// and once on stderr, and the viewer keeps going.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// The bake directory or its manifest cannot be used.
    #[error("{0}")]
    Stream(#[from] StreamError),
    /// No GPU adapter (not even a software one).
    #[error("no usable GPU adapter ({0}); install a Vulkan driver (without a GPU: apt-get install mesa-vulkan-drivers)")]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("cannot create a GPU device on {adapter}: {reason}")]
    Device {
        /// The adapter's name as the driver reports it.
        adapter: String,
        /// The driver's message.
        reason: String,
    },
    /// The GPU reported a validation or out-of-memory error while rendering.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// There is no display to open a window on.
    #[error("no display: {0} (set DISPLAY, or render offscreen with --headless)")]
    NoDisplay(String),
    /// Window or surface creation failed.
    #[error("cannot open a window: {0}")]
    Window(String),
    /// A file the viewer reads or writes.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong, for the user.
        reason: String,
    },
    /// A bad line in a `--fly` camera path.
    #[error("{}:{line}: {reason}", path.display())]
    FlyPath {
        /// The camera-path file.
        path: PathBuf,
        /// 1-based line of the bad row, or 0 when the file as a whole is at fault (no rows).
        line: usize,
        /// What is wrong with the row.
        reason: String,
    },
    /// Contradictory or incomplete command-line options.
    #[error("{0}")]
    Usage(String),
    /// The headless view did not finish streaming in time.
    #[error("the view did not complete within {seconds} s ({building} tiles still loading); raise --timeout-s")]
    Incomplete {
        /// The time allowed (`--timeout-s`), in seconds.
        seconds: f64,
        /// Tiles still being loaded when it ran out.
        building: usize,
    },
}
