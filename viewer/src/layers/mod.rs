//! Viewer layers: one decoder and one layer per baked product, driven by a framework that owns the
//! device, the frame and everything shared between products.
//!
//! A product (terrain today; trees, grass and water later) brings two halves:
//! - a [`Decoder`], run on the loader threads: its sections of a tile pack → CPU-side data
//!   ([`Decoded`]), ready for upload, with everything costly (checks, packing, reordering) done
//!   there, off the render thread;
//! - a [`Layer`], run on the render thread: uploads and evicts its tiles' GPU buffers, tells the
//!   framework each resident tile's bounds and triangle count, and records draws for the
//!   [`Phase`]s it takes part in.
//!
//! The framework (`renderer`, `streaming`) does the rest once for all layers: the loader reads
//! and verifies a pack (its tile identity and content hash) and hands it to every decoder; the
//! residency budget counts the sum of every product's GPU bytes; the renderer frustum-culls each
//! layer's tiles against the view and the sun, counts drawn tiles and triangles over all layers for
//! the HUD and `--stats`, schedules the shadow map's redraws over every layer's casters, times the
//! passes on the GPU, and draws the shared passes itself: the sky (phase [`Phase::Sky`]), the tile
//! boxes of the bounds mode and the HUD (phase [`Phase::Overlay`] and after).
//!
//! Adding a product: a module here with its decoder and layer (and its shader in `shaders/`), and
//! one line in [`PRODUCTS`].

pub mod grass;
pub mod terrain;
pub mod trees;
pub mod water;

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use glam::Vec3;
use kiln_formats::{Pack, TileContents};

use crate::passes::Layouts;
use crate::renderer::uniforms::FrameUniforms;
use crate::streaming::TileId;
use crate::view_mode::ViewMode;

/// The phases of a frame, in drawing order. [`Phase::Shadow`] is recorded into the sun's shadow
/// map (depth only, its own render pass, possibly spread over frames); the others into the main
/// pass (colour, tile id, reverse-Z depth), one after the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Depth from the sun, for the shadow map.
    Shadow,
    /// Opaque surfaces, writing depth and the tile id.
    Opaque,
    /// The sky, where no opaque surface was drawn (the framework draws it; layers may add to it).
    Sky,
    /// Blended surfaces (water), over the opaque ones and the sky.
    Transparent,
    /// Participating media (fog volumes).
    Volumetric,
    /// Lines and markers over the finished scene (the wireframe, the bounds mode's boxes).
    Overlay,
}

impl Phase {
    /// The phases of the main pass, in order.
    pub const MAIN: [Phase; 5] = [Phase::Opaque, Phase::Sky, Phase::Transparent, Phase::Volumetric, Phase::Overlay];
}

/// One product's CPU-side data for one tile, made by its [`Decoder`] and consumed by its
/// [`Layer::upload`] (which downcasts it to its own type).
pub trait Decoded: Any + Send {
    /// GPU bytes it will occupy once uploaded: what counts against the residency budget.
    fn gpu_bytes(&self) -> u64;
}

/// A product's decoder, run on the loader threads.
pub trait Decoder: Send + Sync {
    /// Decodes this product's part of a tile pack. `tile` is the pack read once by
    /// [`TileContents::read`] (its sections known to `kiln-formats`, checked against each other;
    /// `tile.id()` already checked to be the tile asked for); `pack` gives a product its own
    /// sections beyond those. `Ok(None)`: the pack holds none of this product. An error is one line
    /// without the path (the loader adds it), and fails the whole tile: its ancestor is drawn instead.
    fn decode(&self, pack: &Pack, tile: &TileContents) -> Result<Option<Box<dyn Decoded>>, String>;

    /// GPU bytes this product's part of a tile will likely take, from the manifest's record of it,
    /// before the tile was ever decoded (the LOD selection's budget check uses it).
    fn estimate_bytes(&self, node: &kiln_formats::sections::TileNode) -> u64;
}

/// A resident tile as the framework sees it: where it is (for culling) and what it costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extent {
    /// World-space lower corner of the tile's bounds (everything it draws, skirts included).
    pub min: Vec3,
    /// World-space upper corner of those bounds.
    pub max: Vec3,
    /// Triangles a draw of it rasterises (counted in the HUD, `--stats` and the shadow budget).
    pub triangles: u64,
}

/// One tile to draw this phase, with the dynamic offset of its `TileUniforms` (group 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawItem {
    /// The tile to draw.
    pub key: TileId,
    /// Dynamic offset, in bytes, of its `TileUniforms` in group 1's buffer.
    pub uniform_offset: u32,
}

/// The shared bind groups a layer draws with. Group 0: frame uniforms (in the shadow phase, the
/// shadow map's own, with its projection); group 1: tile uniforms (dynamic offset per item);
/// group 2: the sampled shadow map and the material noise (not for the shadow phase).
pub struct Bindings<'a> {
    /// Group 0: the frame uniforms of this phase.
    pub frame: &'a wgpu::BindGroup,
    /// Group 1: the tile uniforms, bound at each [`DrawItem::uniform_offset`].
    pub tiles: &'a wgpu::BindGroup,
    /// Group 2: the shadow map and the material noise; layers do not bind it in the shadow phase.
    pub surface: &'a wgpu::BindGroup,
}

/// What a layer is built with.
pub struct LayerInit<'a> {
    /// The device its buffers and pipelines are created on.
    pub device: &'a wgpu::Device,
    /// The shared bind group layouts its pipelines are built against (groups 0–2 of [`Bindings`]).
    pub layouts: &'a Layouts,
    /// The colour target's format.
    pub color: wgpu::TextureFormat,
    /// The view mode the first frame draws: its pipelines are built at once, the others on first use.
    pub mode: ViewMode,
    /// The adapter has `PolygonMode::Line` (and the caller did not ask for the fallback).
    pub polygon_line: bool,
    /// The bake's world-wide data of every product that has some (uploaded once by its layer).
    pub shared: &'a SharedAssets,
    /// The queue, for uploads of shared data (textures) at creation.
    pub queue: &'a wgpu::Queue,
}

/// A product's world-wide data, decoded once at start from its shared pack (the manifest's `SHRD`).
#[derive(Clone)]
pub struct SharedData {
    /// xxh3-64 of the shared pack file (tile packs that index it carry the same hash).
    pub content_hash: u64,
    /// What the product's [`SharedDecode`] made of it.
    pub data: Arc<dyn Any + Send + Sync>,
}

/// Every product's [`SharedData`], by product name. Shared by the decoders (loader threads) and
/// the layers; a product without a shared pack in the bake has no entry.
#[derive(Clone, Default)]
pub struct SharedAssets(pub BTreeMap<String, SharedData>);

impl SharedAssets {
    /// `product`'s data as its own type, with the pack's content hash; `None` when the bake has
    /// no shared pack for it (or, a registration bug, it is of another type).
    pub fn get<T: Any + Send + Sync>(&self, product: &str) -> Option<(Arc<T>, u64)> {
        let s = self.0.get(product)?;
        Arc::clone(&s.data).downcast::<T>().ok().map(|d| (d, s.content_hash))
    }
}

/// Decodes a product's shared pack (its `PackInfo` and content hash already checked) into the
/// data its decoder and layer share. An error is one line without the path (the caller adds it).
pub type SharedDecode = fn(&Pack) -> Result<Arc<dyn Any + Send + Sync>, String>;

/// What a layer learns before each frame ([`Layer::prepare_frame`]).
pub struct FrameContext<'a> {
    /// The device, for buffers that must grow.
    pub device: &'a wgpu::Device,
    /// The queue, for per-frame buffer writes.
    pub queue: &'a wgpu::Queue,
    /// The view mode of this frame.
    pub mode: ViewMode,
    /// The frame's uniforms (camera, viewport, sun, the shadow texel's world size).
    pub uniforms: &'a FrameUniforms,
    /// Pixels per world unit at unit distance: a sphere of radius r at distance d spans about
    /// `2·r·focal_px/d` pixels.
    pub focal_px: f32,
    /// What the user set (grass distance, forced level, the wind's clock).
    pub settings: LayerSettings,
}

/// Per-frame settings of the layers that the user changes (keys, command line).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerSettings {
    /// The grass distance `D`: blades are drawn up to it, the ground tint beyond (HUD; `G`).
    pub grass_distance: f32,
    /// Draw every grass blade at this level (`--grass-lod`, for tests), not by distance.
    pub grass_lod: Option<u32>,
    /// Seconds on the animation clock (wind); fixed in headless pictures.
    pub time_s: f32,
    /// Read this frame's drawn counts back before returning them (a still picture), rather than
    /// the last finished frame's.
    pub exact_counts: bool,
}

impl Default for LayerSettings {
    fn default() -> Self {
        LayerSettings { grass_distance: grass::select::DEFAULT_DISTANCE, grass_lod: None, time_s: 0.0, exact_counts: false }
    }
}

/// Named counts a layer reports for a frame (e.g. trees drawn as meshes and as impostors), shown
/// by the HUD and written by `--stats`. Fixed capacity so that frame reports stay `Copy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    entries: [(&'static str, u64); Counts::CAPACITY],
    len: usize,
}

impl Counts {
    /// Most entries a frame holds over all layers; more are dropped.
    pub const CAPACITY: usize = 16;

    /// Adds `value` to `name`'s count (a new entry if it has none).
    pub fn add(&mut self, name: &'static str, value: u64) {
        if let Some(e) = self.entries[..self.len].iter_mut().find(|e| e.0 == name) {
            e.1 += value;
        } else if self.len < Self::CAPACITY {
            self.entries[self.len] = (name, value);
            self.len += 1;
        }
    }

    /// Adds every entry of `other`.
    pub fn merge(&mut self, other: &Counts) {
        for &(n, v) in other.iter() {
            self.add(n, v);
        }
    }

    /// The count of `name` (0 when absent).
    pub fn get(&self, name: &str) -> u64 {
        self.iter().find(|e| e.0 == name).map_or(0, |e| e.1)
    }

    /// The entries in the order they were first added.
    pub fn iter(&self) -> std::slice::Iter<'_, (&'static str, u64)> {
        self.entries[..self.len].iter()
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A product's GPU side, run on the render thread.
pub trait Layer {
    /// The product's name (the HUD and error messages use it).
    fn name(&self) -> &'static str;

    /// Builds what drawing in `mode` needs, if it does not exist yet (pipelines are compiled on
    /// first use: a compile is start-up time).
    fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode);

    /// Uploads `data` (from this product's decoder) as tile `key`, replacing an older copy; an
    /// error refuses the tile with a message and leaves the rest of the view unaffected.
    fn upload(&mut self, device: &wgpu::Device, key: TileId, data: Box<dyn Decoded>) -> Result<(), String>;

    /// Frees tile `key` (no-op if it is not resident).
    fn evict(&mut self, key: TileId);

    /// GPU bytes held by its resident tiles.
    fn resident_bytes(&self) -> u64;

    /// The resident tile `key`'s bounds and size; `None` if it is not resident.
    fn extent(&self, key: TileId) -> Option<Extent>;

    /// Called once per frame before anything is recorded, with the tiles it will draw in the view
    /// (`view`, culled): for per-frame work on the CPU such as choosing each instance's level of
    /// detail and writing per-frame buffers. Returns counts for the HUD and `--stats`.
    fn prepare_frame(&mut self, _ctx: &FrameContext<'_>, _view: &[DrawItem]) -> Counts {
        Counts::default()
    }

    /// Records `items` (resident, culled against this phase's volume) for `phase` into `pass`;
    /// returns the triangles drawn. A phase the layer has nothing for draws nothing.
    fn record(&self, phase: Phase, mode: ViewMode, pass: &mut wgpu::RenderPass<'_>, bindings: &Bindings<'_>, items: &[DrawItem]) -> u64;

    /// Writes this layer's part of the frame uniforms (the water level and absorption that the
    /// shared sunlight reads), after the framework filled in the rest; `uniforms.camera_pos` is set.
    fn frame_uniforms(&self, _uniforms: &mut FrameUniforms) {}

    /// Whether this frame needs the scene as the opaque phases and the sky left it (`items`: the
    /// tiles it draws in the view). When any layer does, the main pass is split after
    /// [`Phase::Sky`] and [`Layer::copy_scene`] is called between the halves (refraction reads it).
    /// A frame no layer asks this of is recorded exactly as before.
    fn wants_scene(&self, _mode: ViewMode, _items: &[DrawItem]) -> bool {
        false
    }

    /// Takes what it needs of the scene after the sky phase: `color` (the colour target, with
    /// `COPY_SRC` when `color_copyable`) to copy, and `depth` (the main pass's depth, reverse-Z,
    /// with `TEXTURE_BINDING`), which the rest of the pass only reads and so may be bound as it is.
    /// The phases after [`Phase::Sky`] therefore never write depth.
    fn copy_scene(
        &mut self,
        _device: &wgpu::Device,
        _encoder: &mut wgpu::CommandEncoder,
        _color: &wgpu::Texture,
        _color_copyable: bool,
        _depth: &wgpu::Texture,
    ) {
    }
}

/// A product's registration: its name, its decoder and its layer.
pub struct Product {
    /// The product's name, as its [`Layer::name`] gives it.
    pub name: &'static str,
    /// Makes the product's decoder, which every loader thread shares, given the bake's shared data.
    pub decoder: fn(&SharedAssets) -> Box<dyn Decoder>,
    /// Decodes the product's shared pack, for products that have one.
    pub shared: Option<SharedDecode>,
    /// Makes the product's layer on the render thread.
    pub layer: fn(&LayerInit<'_>) -> Box<dyn Layer>,
}

/// Every product the viewer draws, in drawing order within each phase. A tile's decoded data and
/// its layer are matched by their index here.
pub const PRODUCTS: &[Product] = &[terrain::PRODUCT, trees::PRODUCT, grass::PRODUCT, water::PRODUCT];

/// The decoders of [`PRODUCTS`], in order.
pub fn decoders(shared: &SharedAssets) -> Vec<Box<dyn Decoder>> {
    PRODUCTS.iter().map(|p| (p.decoder)(shared)).collect()
}

/// The registered product called `name`.
pub fn product(name: &str) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.name == name)
}

/// The layers of [`PRODUCTS`], in order.
pub fn layers(init: &LayerInit<'_>) -> Vec<Box<dyn Layer>> {
    PRODUCTS.iter().map(|p| (p.layer)(init)).collect()
}

/// Downcasts a product's decoded data to its own type: a layer receives only what its own decoder
/// made, so a mismatch is a registration bug, reported as a refused tile rather than a panic.
pub fn downcast<T: Decoded>(data: Box<dyn Decoded>, layer: &str) -> Result<Box<T>, String> {
    let any: Box<dyn Any> = data;
    any.downcast::<T>().map_err(|_| format!("the {layer} layer was given another product's data"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streaming::DecodedTile;

    /// A second product's data, as trees or water would bring.
    struct Instances(u64);

    impl Decoded for Instances {
        fn gpu_bytes(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn the_budget_counts_every_product_of_a_tile() {
        let terrain = terrain::TerrainData { vertices: Vec::new(), indices: vec![0; 6], main_index_count: 3 };
        let tile = DecodedTile {
            key: TileId { level: 0, x: 0, y: 0 },
            products: vec![Some(Box::new(terrain)), None, Some(Box::new(Instances(1000)))],
            bounds_min: [0.0; 3],
            bounds_max: [1.0; 3],
            pack_bytes: 0,
            inputs_hash: 0,
            content_hash: 0,
        };
        assert_eq!(tile.gpu_bytes(), 6 * terrain::decode::INDEX_BYTES + 1000);
    }

    #[test]
    fn a_layer_given_another_products_data_refuses_it() {
        let data: Box<dyn Decoded> = Box::new(Instances(8));
        let err = downcast::<terrain::TerrainData>(data, "terrain").map(|_| ()).unwrap_err();
        assert!(err.contains("terrain layer"), "{err}");
        assert_eq!(downcast::<Instances>(Box::new(Instances(8)), "trees").map(|d| d.0), Ok(8));
    }
}
