//! Kiln's caches, both generic over what they hold:
//! - [`store`]: a content-addressed, checksummed artifact store on disk, shared safely by concurrent
//!   bakes, with least-recently-used garbage collection (bake side);

pub mod store;
