//! Why a bake failed. The engine, the products and the output writer return [`BakeError`], so the
//! pipeline never depends on the command line: the CLI wraps it, and a cluster worker can report it
//! its own way. Each error displays as one line naming the world or the file; the underlying error
//! stays reachable through [`std::error::Error::source`].

use std::path::{Path, PathBuf};

use kiln_formats::FormatError;

use super::lighting::LightingStageError;
use super::tile::TileError;

/// Why a bake failed.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    /// A bad option or request, the user's to fix: `--jobs` out of range, an `--out` that is not a
    /// directory or holds something else than a bake, a world name that is no plain directory
    /// name, a tile the world does not have.
    #[error("{0}")]
    BadOption(String),
    /// Reading or writing a file or directory of the output failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The stage cache could not be opened.
    #[error(transparent)]
    Cache(#[from] kiln_cache::store::StoreError),
    /// Another bake of the same world into the same place holds its lock.
    #[error("{}: another kiln bake of this world is writing here (it holds {}); wait for it to finish", dest.display(), lock.display())]
    Locked {
        /// The bake's destination, `OUT/<name>`.
        dest: PathBuf,
        /// The lock file the other bake holds.
        lock: PathBuf,
    },
    /// The worker thread pool could not be started.
    #[error("cannot start worker threads: {0}")]
    Threads(#[source] rayon::ThreadPoolBuildError),
    /// Meshing, ambient occlusion or packing of one tile failed.
    #[error("{world}: {source}")]
    Tile {
        /// The world's name.
        world: String,
        /// Which tile and what failed.
        #[source]
        source: TileError,
    },
    /// Light transport, or lighting one tile, failed.
    #[error("{world}: {source}")]
    Lighting {
        /// The world's name.
        world: String,
        /// What failed.
        #[source]
        source: LightingStageError,
    },
    /// The occupancy field could not be derived from the density volume.
    #[error("{world}: occupancy: {source}")]
    Occupancy {
        /// The world's name.
        world: String,
        /// What failed.
        #[source]
        source: crate::ao::AoError,
    },
    /// Encoding a pack failed.
    #[error("{world}: {what}: {source}")]
    Pack {
        /// The world's name.
        world: String,
        /// Which pack, e.g. `tile L0_1_2: packing` or `encoding the manifest`.
        what: String,
        /// What the pack writer said.
        #[source]
        source: FormatError,
    },
    /// A product's own error, for products whose errors have no variant above (a new product
    /// need not edit this file).
    #[error("{world}: {product}: {source}")]
    Product {
        /// The world's name.
        world: String,
        /// The product's registered name.
        product: &'static str,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A product broke the engine's contract (read a need it did not declare, produced no
    /// summary, ...): a bug in the baker, not bad input. The message says where.
    #[error("{0}")]
    Internal(String),
    /// An assembling bake (`--assemble`) found an item missing from the cache; it computes nothing.
    #[error("{0}")]
    Incomplete(String),
    /// A shard could not store all it computed (a full disk, an unwritable bucket): its work is
    /// what it stores, so it fails rather than report a bake the assembly would not find.
    #[error("{count} item(s) of this shard could not be stored in the cache (the first, {first}); free room in the cache and run the shard again: what it stored is kept")]
    Unstored {
        /// How many items failed to store.
        count: usize,
        /// The first failure: its item and the store's error (which names the file).
        first: String,
    },
}

impl BakeError {
    /// An I/O failure on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        BakeError::Io { path: path.to_owned(), source }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

impl From<crate::density::BlockError> for BakeError {
    /// Every label the bake joins was made or checked against its own block, so a failed join
    /// is the bake's own fault.
    fn from(e: crate::density::BlockError) -> BakeError {
        BakeError::Internal(format!("joining the density clean-up's blocks: {e}"))
    }
}
