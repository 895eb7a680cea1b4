//! Water (issue #19): where the water is (`body`: a flood fill of the density volume's air below the
//! level). The wave spectrum, frames and caustics join this module from their own branch.

pub mod body;
