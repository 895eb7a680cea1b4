//! The terrain product: the baked surface mesh with its per-vertex AO and irradiance.
//!
//! - [`decode`]: the decoder (loader threads): mesh, AO and irradiance sections → GPU vertices
//!   and reordered indices;
//! - [`layer`]: the layer (render thread): GPU buffers per tile; draws the opaque phase (one
//!   pipeline per view mode), the shadow phase and the wireframe overlay;
//! - [`pipelines`], [`vertex`], [`vertex_cache`]: its pipelines, vertex format and triangle order.

pub mod decode;
pub mod layer;
pub mod pipelines;
pub mod vertex;
pub mod vertex_cache;

use super::Product;

pub use decode::{TerrainData, TerrainDecoder};
pub use layer::TerrainLayer;

/// The terrain's registration in [`super::PRODUCTS`].
pub const PRODUCT: Product =
    Product { name: "terrain", decoder: |_| Box::new(TerrainDecoder), shared: None, layer: |init| Box::new(TerrainLayer::new(init)) };
