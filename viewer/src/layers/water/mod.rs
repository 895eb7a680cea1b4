//! The water product: the bake's shared water pack (`WAVE`: looping wave frames and the caustics
//! they cast) and each tile's water (`WTIL`: where the water is, how deep, how far from the shore).
//!
//! - [`assets`]: the shared pack → texture arrays ready for upload (once, at start);
//! - [`decode`]: the tile decoder (loader threads): the water map → a grid mesh over the wet samples;
//! - [`layer`]: the layer: the animated surface (Fresnel reflection of the sky and the sun,
//!   refraction of the scene copied after the opaque phases, absorption, foam), caustics on the
//!   terrain under it, underwater fog, and the `caustics` and `water-mask` view modes
//!   (`shaders/water.wgsl`).

pub mod assets;
pub mod decode;
pub mod gpu;
pub mod layer;

use super::Product;

/// The product's name (its shared pack's `product`, the manifest's `SHRD` entry).
pub const NAME: &str = "water-waves";

/// The water's registration in [`super::PRODUCTS`].
pub const PRODUCT: Product = Product {
    name: NAME,
    decoder: |shared| Box::new(decode::WaterDecoder::new(shared)),
    shared: Some(assets::decode_shared),
    layer: |init| Box::new(layer::WaterLayer::new(init)),
};
