//! `kiln-view`: streams a Kiln bake directory (`out/<world>/`) and renders it, in a window or
//! headless.
//!
//! The viewer reads packs only (through `kiln-formats`), never the baker. Its parts:
//! - [`streaming`]: the streamer contract (`notes/viewer_interface.md`): LOD cut, residency, loads;
//! - [`layers`]: one decoder and one layer per baked product (terrain);
//! - [`renderer`] and [`passes`]: the frame framework and its shared passes (shadow, sky, bounds, HUD);
//! - [`camera`]: the fly camera (Z up, reverse-Z projection);
//! - [`exposure`]: manual and metered exposure;
//! - [`session`]: the per-frame glue between streamer and renderer;
//! - [`window`] (winit) and [`headless`] (offscreen screenshots, `--fly` replays): the front ends;
//! - [`cli`]: the command line.

pub mod camera;
pub mod cli;
pub mod error;
pub mod exposure;
pub mod flypath;
pub mod gpu;
pub mod headless;
pub mod hud_text;
pub mod layers;
pub mod passes;
pub mod renderer;
pub mod screenshot;
pub mod session;
pub mod streaming;
pub mod view_mode;
pub mod window;

pub use error::ViewerError;
