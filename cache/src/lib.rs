//! Kiln's caches, both generic over what they hold.
//!
//! - [`store`]: a content-addressed, checksummed artifact store on disk, shared safely by concurrent
//!   bakes, with least-recently-used garbage collection (bake side); on a directory or, through
//!   [`s3`], an S3-compatible bucket shared by many machines.
//! - [`residency`]: which built items (GPU meshes, for the viewer) stay resident under a byte budget,
//!   which get built this frame, and which get evicted, after the four-set scheme of the
//!   planet-renderer text (`shared/seeds/002`).
//!
//! Nothing here knows about packs, tiles or GPUs: keys are plain values and sizes are bytes.

pub mod residency;
pub mod s3;
pub mod store;
