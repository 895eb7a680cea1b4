//! Impostor capture (placeholder until the impostor helper's module merges: only the shared image type).

mod image;
pub use image::Image;
