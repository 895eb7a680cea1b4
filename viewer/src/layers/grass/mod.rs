//! The grass product: blades instanced from the bake's shared grass pack (`GPAT`: unique patches
//! with their LOD chains) over each level-0 tile's patch instances (`GRSS`), chosen per blade each
//! frame on the GPU, and a ground tint over every resident tile's grass map.
//!
//! - [`assets`]: the shared pack → one array of blades of every (patch, level), parents as absolute
//!   indices, flowers, the tint (once, at start);
//! - [`decode`]: the tile decoder (loader threads): `GRSS` → ground samples and instances;
//! - [`select`]: the per-blade LOD rule (switch distances, staggered thresholds, cutoff), the CPU's
//!   per-instance candidate choice and a CPU mirror of the compute shader's selection (tests);
//! - [`layer`], [`gpu`]: the layer, its compute and draw pipelines and per-frame buffers.

pub mod assets;
pub mod decode;
pub mod gpu;
pub mod layer;
pub mod select;

use super::Product;

/// The product's name: its shared pack's `product` (the bake names shared packs
/// `shared/<product>.kpack`, so the grass pack's product is `grass-patches`, as the trees' is
/// `tree-prototypes`).
pub const NAME: &str = "grass-patches";

/// The grass's registration in [`super::PRODUCTS`].
pub const PRODUCT: Product = Product {
    name: NAME,
    decoder: |shared| Box::new(decode::GrassDecoder::new(shared)),
    shared: Some(assets::decode_shared),
    layer: |init| Box::new(layer::GrassLayer::new(init)),
};
