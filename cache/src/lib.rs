//! Kiln's caches, both generic over what they hold.
//!
//! - [`residency`]: which built items (GPU meshes, for the viewer) stay resident under a byte budget,
//!   which get built this frame, and which get evicted, after the four-set scheme of the
//!   planet-renderer text (`shared/seeds/002`).
//! - The bake side's content-addressed store of stage outputs has its place beside it, as `cache::store`.
//!
//! Nothing here knows about packs, tiles or GPUs: keys are any `Ord + Copy` value and sizes are bytes.

pub mod residency;
