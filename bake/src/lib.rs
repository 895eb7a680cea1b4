//! Kiln baker library: world files, bake stages and the `kiln` CLI.

pub mod grid;
pub mod lighting;
