//! The trees product: instanced trees from the bake's shared trees pack (prototype meshes,
//! species textures, impostor atlases) and each tile's instances (`TINS`, lit by `TILT`).
//!
//! - [`assets`]: the shared pack → GPU-ready prototypes, textures and atlases (once, at start);
//! - [`decode`]: the tile decoder (loader threads): instances → GPU trees sorted by prototype;
//! - [`classify`]: per frame, each tree's representation (mesh LOD 0/1/2 or impostor) and the
//!   dithered cross-fade between neighbours;
//! - [`layer`], [`pipelines`], [`gpu`]: the layer, its pipelines and world-wide GPU resources;
//! - [`octahedral`]: the atlas's direction maps, mirrored from the bake (and in `trees.wgsl`).

pub mod assets;
pub mod classify;
pub mod decode;
pub mod gpu;
pub mod layer;
pub mod octahedral;
pub mod pipelines;

use super::Product;

/// The product's name (its shared pack's `product`).
pub const NAME: &str = "tree-prototypes";

/// The trees' registration in [`super::PRODUCTS`].
pub const PRODUCT: Product = Product {
    name: NAME,
    decoder: |shared| Box::new(decode::TreesDecoder::new(shared)),
    shared: Some(assets::decode_shared),
    layer: |init| Box::new(layer::TreesLayer::new(init)),
};
