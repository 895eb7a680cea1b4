//! Impostor baking (placeholder root, replaced below).
pub mod image;
pub mod octahedral;
