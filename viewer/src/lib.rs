//! `kiln-view`: streams baked packs from disk and renders them.

pub mod streaming;
