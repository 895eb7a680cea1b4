//! The renderer: the frame framework around the layers ([`crate::layers`]): it owns the targets,
//! the frame's uniforms, the shared passes (shadow map, sky, bounds, HUD), culling, counting and
//! GPU timing, and hands each layer its tiles' uploads and its draws phase by phase.
//!
//! Each frame the caller applies the streamer's plan ([`Renderer::apply`]: free `evict`, upload
//! `uploads`, each product's data to its layer), then renders exactly the plan's `draw` list into
//! a colour target ([`Renderer::render`]). The renderer owns the depth and tile-id targets, sized
//! with [`Renderer::resize`].

pub mod culling;
pub mod gpu_timer;
pub mod meter;
pub mod pick;
pub mod shadow_fit;
mod targets;
pub mod uniforms;

use std::collections::HashMap;

use glam::{Mat4, Vec3};

use crate::camera::Camera;
use crate::error::ViewerError;
use crate::gpu::Gpu;
use crate::layers::{self, Bindings, Counts, DrawItem, FrameContext, Layer, LayerInit, LayerSettings, Phase, SharedAssets};
use crate::passes::bounds::{BoundsPass, BoxLines};
use crate::passes::hud::{HudLine, HudPass};
use crate::passes::noise;
use crate::passes::shadow::{Caster, ShadowPass, SHADOW_MAP_SIZE, SHADOW_MAP_SIZE_CPU};
use crate::passes::sky::SkyPass;
use crate::passes::Layouts;
use crate::streaming::{DecodedTile, TileId};
use crate::view_mode::{lod_color, ViewMode};
use gpu_timer::{GpuTimer, PassMarks, PassTimes, Span};
use meter::Meter;
use pick::PickReadback;
use targets::{depth_and_id, tile_uniforms};
use uniforms::{FrameUniforms, Lighting, TileUniforms, TILE_HIGHLIGHT};

/// What the renderer needs to know about the world (from the manifest).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldInfo {
    /// World-space lower corner of the world's volume (the manifest's `bounds_min`).
    pub min: Vec3,
    /// World-space upper corner of the world's volume.
    pub max: Vec3,
    /// World units between neighbouring samples.
    pub voxel_size: f32,
    /// Lowest and highest surface height, for height-based materials (snow line).
    pub height_range: [f32; 2],
}

/// Everything that varies per frame.
pub struct FrameDesc<'a> {
    /// The camera to draw from.
    pub camera: &'a Camera,
    /// What to show (lit, AO, LOD colours, wireframe, …).
    pub mode: ViewMode,
    /// HUD text; empty draws no HUD.
    pub hud: &'a [HudLine],
    /// The tile to highlight (the one under the cursor).
    pub highlight: Option<TileId>,
    /// Read the tile id at this pixel back (result later through [`Renderer::picked`]).
    pub pick_px: Option<[u32; 2]>,
    /// A still picture: the shadow map must hold exactly this frame's casters. Otherwise its
    /// redraws may be spread over frames ([`crate::passes::shadow`]).
    pub still: bool,
    /// Stops added to the base exposure before tone mapping ([`crate::exposure`]).
    pub exposure_ev: f32,
    /// Meter this frame for automatic exposure (result later through [`Renderer::metered`]).
    pub meter: bool,
    /// The layers' user settings (grass distance, …).
    pub settings: LayerSettings,
}

/// What the HUD shows about a resident tile (from its pack, whatever products it holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileMeta {
    /// Size of the pack file in bytes.
    pub pack_bytes: u64,
    /// The pack's `PackInfo::inputs_hash` (its cache key).
    pub inputs_hash: u64,
    /// xxh3-64 of the pack file.
    pub content_hash: u64,
}

/// A resident tile as the framework keeps it: the manifest's bounds (the bounds mode draws them)
/// and what the HUD shows.
struct TileInfo {
    bounds_min: [f32; 3],
    bounds_max: [f32; 3],
    meta: TileMeta,
}

/// What a frame drew, over every layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameReport {
    /// Tiles of which some layer drew something in the view (after frustum culling).
    pub drawn_tiles: usize,
    /// Triangles drawn in the view, summed over the layers.
    pub drawn_triangles: u64,
    /// Draw-list tiles outside the view frustum (for every layer).
    pub culled: usize,
    /// Draw-list keys that were not resident (a streamer contract violation if non-zero).
    pub missing: usize,
    /// A shadow pass ran (a redraw, or part of one, because casters or projection changed).
    pub shadow_rendered: bool,
    /// Caster triangles drawn into a shadow map.
    pub shadow_triangles: u64,
    /// What the layers counted this frame ([`Layer::prepare_frame`]), e.g. trees by representation.
    pub counts: Counts,
}

/// Triangles per frame, main pass and shadow redraw together, up to which a shadow redraw is
/// drawn in one frame; past it the redraw gets what is left, down to [`SHADOW_MIN_TRIANGLES`],
/// and takes several frames. The geometry front end bounds the frame on a GPU, so most redraws
/// still fit in one frame while the heaviest views no longer pay a whole shadow pass at once.
pub const SHADOW_FRAME_TRIANGLES: u64 = 2_500_000;
/// The least a frame draws of a shadow redraw under way, so that one finishes within a few frames
/// however heavy the view (each caster is a whole tile, so a slice can exceed it by one tile).
pub const SHADOW_MIN_TRIANGLES: u64 = 500_000;

/// Owns every GPU resource of the view.
pub struct Renderer {
    color_format: wgpu::TextureFormat,
    size: [u32; 2],
    frame_buffer: wgpu::Buffer,
    frame_group: wgpu::BindGroup,
    tile_buffer: wgpu::Buffer,
    tile_group: wgpu::BindGroup,
    tile_stride: u32,
    tile_capacity: usize,
    /// The main pass's depth (copyable: a layer that refracts copies it after the sky phase).
    depth: (wgpu::Texture, wgpu::TextureView),
    id: (wgpu::Texture, wgpu::TextureView),
    /// Resident tiles: uploaded to every layer that has data for them.
    tiles: HashMap<TileId, TileInfo>,
    layouts: Layouts,
    sky: SkyPass,
    shadow: ShadowPass,
    /// One per product of [`layers::PRODUCTS`], in order.
    layers: Vec<Box<dyn Layer>>,
    /// Per layer: left out of frames ([`Renderer::hide_layer`]); its tiles still upload.
    hidden: Vec<bool>,
    bounds: BoundsPass,
    hud: HudPass,
    pick: PickReadback,
    meter: Meter,
    world: WorldInfo,
    lighting: Lighting,
    /// Per-pass GPU times, when asked for ([`Renderer::enable_gpu_timing`]).
    timer: Option<GpuTimer>,
    /// Per-draw timestamps inside the main pass, where the device has them and timing is on.
    marks: Option<PassMarks>,
    /// The submission of the last frame (a front end waits for it to bound the frames in flight).
    last_submission: Option<wgpu::SubmissionIndex>,
}

/// A scoped thread's result, its panic passed on.
fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

impl Renderer {
    /// Creates the passes for colour format `color_format` and targets of `size` pixels, with the
    /// pipelines `mode` draws with (others are built when first used).
    /// `force_edge_wireframe` uses the line-list wireframe even where polygon-mode line exists.
    /// `shared` is the bake's world-wide data (the streamer's), uploaded once by the layers.
    pub fn new(
        gpu: &Gpu,
        color_format: wgpu::TextureFormat,
        size: [u32; 2],
        (world, shared): (WorldInfo, &SharedAssets),
        mode: ViewMode,
        force_edge_wireframe: bool,
    ) -> Self {
        let device = &gpu.device;
        let layouts = Layouts::new(device);
        let (frame_buffer, frame_group) = layouts.frame_uniforms(device, "frame uniforms");
        let align = device.limits().min_uniform_buffer_offset_alignment;
        let tile_stride = (std::mem::size_of::<TileUniforms>() as u32).div_ceil(align) * align;
        let tile_capacity = 256;
        let (tile_buffer, tile_group) = tile_uniforms(device, &layouts, tile_stride, tile_capacity);
        let size = [size[0].max(1), size[1].max(1)];
        let (depth, id) = depth_and_id(device, size);
        let shadow_size = if gpu.is_cpu() { SHADOW_MAP_SIZE_CPU } else { SHADOW_MAP_SIZE };
        // The first frame's pipelines compile side by side: a driver compiles each on the calling
        // thread (cold, tens of milliseconds apiece on the H200's driver), and the noise texture is
        // CPU work that needs none of them.
        let (sky, shadow, layers) = std::thread::scope(|s| {
            let sky = s.spawn(|| SkyPass::new(device, &layouts, color_format));
            let shadow = s.spawn(|| ShadowPass::new(device, &layouts, shadow_size, &noise::create(device, &gpu.queue)));
            let init = LayerInit {
                device,
                queue: &gpu.queue,
                layouts: &layouts,
                color: color_format,
                mode,
                polygon_line: gpu.polygon_line && !force_edge_wireframe,
                shared,
            };
            let layers = layers::layers(&init);
            (join(sky), join(shadow), layers)
        });
        // Layers upload their world-wide data (tree atlases: tens of MB) at creation; finish those
        // copies now, at start-up, rather than inside the first frame.
        gpu.queue.submit([]);
        let _ = device.poll(wgpu::PollType::wait_indefinitely());
        Renderer {
            color_format,
            size,
            frame_buffer,
            frame_group,
            tile_buffer,
            tile_group,
            tile_stride,
            tile_capacity,
            depth,
            id,
            tiles: HashMap::new(),
            sky,
            shadow,
            hidden: vec![false; layers.len()],
            layers,
            bounds: BoundsPass::new(&layouts, color_format),
            hud: HudPass::new(color_format),
            pick: PickReadback::new(device),
            meter: Meter::default(),
            layouts,
            world,
            lighting: Lighting::default(),
            timer: None,
            marks: None,
            last_submission: None,
        }
    }

    /// Leaves the layer of product `name` (a [`layers::PRODUCTS`] name) out of every frame, or puts
    /// it back: it writes no uniforms, draws nothing, casts no shadow and asks for no scene copy,
    /// so a view can be compared with and without one product. `false` if no product has that name.
    pub fn hide_layer(&mut self, name: &str, hide: bool) -> bool {
        let Some(i) = layers::PRODUCTS.iter().position(|p| p.name == name) else { return false };
        self.hidden[i] = hide;
        true
    }

    /// Times the shadow and main passes on the GPU from now on, and with `parts` the main pass
    /// draw by draw where the device can (which slows the GPU); false when the adapter cannot time.
    pub fn enable_gpu_timing(&mut self, gpu: &Gpu, parts: bool) -> bool {
        self.timer = GpuTimer::new(gpu);
        self.marks = self.timer.as_ref().filter(|_| parts).and_then(|_| PassMarks::new(gpu));
        self.timer.is_some()
    }

    /// The GPU pass times of the last rendered frame (waits for all submitted work), when timing
    /// is enabled.
    pub fn pass_times(&self, gpu: &Gpu) -> Result<Option<PassTimes>, ViewerError> {
        self.read_times(gpu, 0, None)
    }

    fn read_times(&self, gpu: &Gpu, frames_ago: usize, done: Option<wgpu::SubmissionIndex>) -> Result<Option<PassTimes>, ViewerError> {
        let Some(timer) = &self.timer else { return Ok(None) };
        let mut times = timer.read(gpu, frames_ago, done.clone())?;
        if let Some(marks) = &self.marks {
            times.main_parts = marks.read(gpu, frames_ago, done)?;
        }
        Ok(Some(times))
    }

    /// The GPU pass times of the frame before the last one, which `done` (that frame's
    /// [`Renderer::last_submission`]) carried: waits for that frame only, so the last one can
    /// still be running (at most [`gpu_timer::FRAMES_IN_FLIGHT`] frames in flight).
    pub fn previous_pass_times(&self, gpu: &Gpu, done: wgpu::SubmissionIndex) -> Result<Option<PassTimes>, ViewerError> {
        self.read_times(gpu, 1, Some(done))
    }

    /// The submission that carried the last rendered frame.
    pub fn last_submission(&self) -> Option<wgpu::SubmissionIndex> {
        self.last_submission.clone()
    }

    /// The colour format the passes were built for.
    pub fn color_format(&self) -> wgpu::TextureFormat {
        self.color_format
    }

    /// Current target size in pixels.
    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    /// Recreates the depth and tile-id targets for a new size.
    pub fn resize(&mut self, device: &wgpu::Device, size: [u32; 2]) {
        self.size = [size[0].max(1), size[1].max(1)];
        (self.depth, self.id) = depth_and_id(device, self.size);
    }

    /// Frees `evict`, then uploads `uploads`, each product's data to its layer. Returns one
    /// message per tile refused as malformed (by any layer: a tile is resident whole or not at
    /// all); the rest of the view is unaffected.
    pub fn apply(&mut self, device: &wgpu::Device, uploads: Vec<DecodedTile>, evict: &[TileId]) -> Vec<String> {
        for &k in evict {
            self.evict(k);
        }
        let mut refused = Vec::new();
        for tile in uploads {
            let key = tile.key;
            let mut result = Ok(());
            for (layer, data) in self.layers.iter_mut().zip(tile.products) {
                if let Some(data) = data {
                    result = result.and_then(|()| layer.upload(device, key, data));
                }
            }
            match result {
                Ok(()) => {
                    let meta = TileMeta { pack_bytes: tile.pack_bytes, inputs_hash: tile.inputs_hash, content_hash: tile.content_hash };
                    self.tiles.insert(key, TileInfo { bounds_min: tile.bounds_min, bounds_max: tile.bounds_max, meta });
                }
                Err(e) => {
                    self.evict(key);
                    refused.push(e);
                }
            }
        }
        refused
    }

    fn evict(&mut self, key: TileId) {
        self.tiles.remove(&key);
        for layer in &mut self.layers {
            layer.evict(key);
        }
    }

    /// What the HUD shows about the resident tile `key`.
    pub fn tile_meta(&self, key: TileId) -> Option<TileMeta> {
        self.tiles.get(&key).map(|t| t.meta)
    }

    /// Resident tiles.
    pub fn resident_tiles(&self) -> usize {
        self.tiles.len()
    }

    /// GPU bytes held by the resident tiles of every layer.
    pub fn resident_bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.resident_bytes()).sum()
    }

    /// The latest tile-id readback (polls nothing: call after `device.poll`). `Some(None)` = sky.
    pub fn picked(&mut self) -> Option<Option<TileId>> {
        self.pick.collect();
        self.pick.latest
    }

    /// The newest exposure metering not returned before (polls nothing: call after
    /// `device.poll`): the log-average luminance of a frame drawn with `meter` set, in units of the
    /// base exposure ([`crate::exposure::Exposure::adapt`] takes it).
    pub fn metered(&mut self) -> Option<f32> {
        self.meter.take()
    }

    fn frame_uniforms(&self, camera: &Camera, shadows: bool, exposure_ev: f32) -> FrameUniforms {
        let aspect = self.size[0] as f32 / self.size[1] as f32;
        let view_proj = camera.view_proj(aspect);
        let (wmin, wmax) = (self.world.min, self.world.max);
        let diag = (wmax - wmin).truncate().length().max(1.0);
        let l = &self.lighting;
        let fit = shadow_fit::fit(camera, aspect, l.to_sun, wmin, wmax, 0.6 * diag, self.shadow.size);
        let v4 = |v: Vec3, w: f32| v.extend(w).to_array();
        FrameUniforms {
            view_proj: view_proj.to_cols_array_2d(),
            inv_view_proj: view_proj.inverse().to_cols_array_2d(),
            light_view_proj: if shadows { fit.light_view_proj } else { Mat4::IDENTITY }.to_cols_array_2d(),
            camera_pos: v4(camera.position, 1.0),
            sun_dir: v4(l.to_sun, fit.texel_world),
            sun_color: v4(l.sun_color, l.exposure * exposure_ev.exp2()),
            sky_zenith: v4(l.sky_zenith, 1.0),
            sky_horizon: v4(l.sky_horizon, 1.0),
            ground: v4(l.ground, l.ambient),
            // Fog reaches about 20% at the world's diagonal: a depth cue that never hides the far side.
            fog: [0.3 / diag, 0.0, 0.0, 0.85],
            world: [self.world.height_range[0], self.world.height_range[1], 1.0 / (6.0 * self.world.voxel_size.max(1e-3)), 0.8],
            viewport: [self.size[0] as f32, self.size[1] as f32, 1.0 / self.size[0] as f32, 1.0 / self.size[1] as f32],
            params: [0, self.shadow.size, shadows as u32, 0],
            water: [0.0; 4],
            water_absorption: [0.0; 4],
        }
    }

    /// Renders the tiles of `draw` (the streamer's draw list; keys not resident are skipped and
    /// counted) into `target` (same size as the renderer, format [`Self::color_format`]) and
    /// submits the work.
    pub fn render(&mut self, gpu: &Gpu, target: &wgpu::TextureView, draw: &[TileId], frame: &FrameDesc<'_>) -> FrameReport {
        let (device, queue) = (&gpu.device, &gpu.queue);
        let lit = frame.mode.shadowed();
        let mut uniforms = self.frame_uniforms(frame.camera, lit, frame.exposure_ev);
        for (layer, _) in self.layers.iter().zip(&self.hidden).filter(|(_, &h)| !h) {
            layer.frame_uniforms(&mut uniforms);
        }
        let view_planes = culling::planes(Mat4::from_cols_array_2d(&uniforms.view_proj));
        let light_planes = culling::planes(Mat4::from_cols_array_2d(&uniforms.light_view_proj));

        let resident: Vec<(TileId, &TileInfo)> = draw.iter().filter_map(|&k| self.tiles.get(&k).map(|t| (k, t))).collect();
        let mut report = FrameReport { missing: draw.len() - resident.len(), ..Default::default() };
        if resident.len() > self.tile_capacity {
            self.tile_capacity = resident.len().next_power_of_two();
            (self.tile_buffer, self.tile_group) = tile_uniforms(device, &self.layouts, self.tile_stride, self.tile_capacity);
        }
        let stride = self.tile_stride as usize;
        let mut bytes = vec![0u8; stride * resident.len().max(1)];
        // Per layer: the tiles it draws in the view, and those it casts into the shadow map.
        let mut items: Vec<Vec<DrawItem>> = self.layers.iter().map(|_| Vec::with_capacity(resident.len())).collect();
        let mut casters: Vec<Vec<Caster>> = self.layers.iter().map(|_| Vec::new()).collect();
        let mut boxes = Vec::new();
        for (i, &(key, info)) in resident.iter().enumerate() {
            let highlight = frame.highlight == Some(key);
            let c = lod_color(key.level);
            let u = TileUniforms {
                id: pick::encode(key),
                level: key.level,
                flags: if highlight { TILE_HIGHLIGHT } else { 0 },
                pad: 0,
                color: [c[0], c[1], c[2], 1.0],
            };
            bytes[i * stride..][..std::mem::size_of::<TileUniforms>()].copy_from_slice(bytemuck::bytes_of(&u));
            let item = DrawItem { key, uniform_offset: (i * stride) as u32 };
            let mut visible = false;
            for (l, layer) in self.layers.iter().enumerate().filter(|&(l, _)| !self.hidden[l]) {
                let Some(e) = layer.extent(key) else { continue };
                if lit && culling::intersects(&light_planes, e.min, e.max) {
                    casters[l].push(Caster { layer: l, key, triangles: e.triangles });
                }
                if culling::intersects(&view_planes, e.min, e.max) {
                    items[l].push(item);
                    report.drawn_triangles += e.triangles;
                    visible = true;
                }
            }
            if visible {
                report.drawn_tiles += 1;
                boxes.push(BoxLines { min: info.bounds_min, max: info.bounds_max, level: key.level, highlight });
            } else {
                report.culled += 1;
            }
        }
        // Layer by layer, so each layer records its casters in long runs.
        let casters: Vec<Caster> = casters.concat();
        queue.write_buffer(&self.tile_buffer, 0, &bytes);
        if frame.mode == ViewMode::Bounds {
            self.bounds.prepare(device, queue, &boxes);
        }
        self.hud.prepare(device, queue, frame.hud, self.size);
        let ctx = FrameContext {
            device,
            queue,
            mode: frame.mode,
            uniforms: &uniforms,
            focal_px: self.size[1] as f32 / (2.0 * (frame.camera.fov_y * 0.5).tan()),
            settings: LayerSettings { exact_counts: frame.settings.exact_counts || frame.still, ..frame.settings },
        };
        for (layer, items) in self.layers.iter_mut().zip(&items) {
            layer.prepare(device, frame.mode);
            let counts = layer.prepare_frame(&ctx, items);
            report.counts.merge(&counts);
        }

        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
        if let Some(t) = &mut self.timer {
            t.begin_frame();
        }
        if let Some(m) = &mut self.marks {
            m.begin_frame();
        }
        if lit && self.shadow.prepare(queue, &uniforms, &casters, frame.still) {
            let budget = SHADOW_FRAME_TRIANGLES.saturating_sub(report.drawn_triangles).max(SHADOW_MIN_TRIANGLES);
            let ts = self.timer.as_mut().map(|t| t.pass_writes(Span::Shadow));
            let work = self.shadow.encode(&mut encoder, &self.layers, (frame.mode, &self.tile_group), (!frame.still).then_some(budget), ts);
            report.shadow_rendered = work.ran;
            report.shadow_triangles = work.triangles;
        }
        // Shadows are sampled from the last complete map, through the projection it was drawn with.
        let (shadow_group, shadow_proj) = self.shadow.sampled();
        uniforms.light_view_proj = shadow_proj.filter(|_| lit).unwrap_or(Mat4::IDENTITY.to_cols_array_2d());
        uniforms.params[2] = (lit && shadow_proj.is_some()) as u32;
        queue.write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&uniforms));
        // A layer that refracts the scene (water) reads it as the opaque phases and the sky left it:
        // then the main pass ends after the sky, the layer copies colour and binds depth, and a
        // second pass loads the targets, depth read-only, and draws the rest. A frame without such
        // a layer is one pass.
        let split = self.layers.iter().zip(&items).zip(&self.hidden).any(|((l, it), &hidden)| !hidden && l.wants_scene(frame.mode, it));
        let mut writes = self.timer.as_mut().map(|t| t.pass_writes(Span::Main));
        let main = Phase::MAIN;
        let halves: Vec<&[Phase]> = if split { vec![&main[..2], &main[2..]] } else { vec![&main[..]] };
        for (half, phases) in halves.iter().enumerate() {
            let first = half == 0;
            let last = half + 1 == halves.len();
            if !first {
                let copyable = target.texture().usage().contains(wgpu::TextureUsages::COPY_SRC);
                for (layer, _) in self.layers.iter_mut().zip(&self.hidden).filter(|(_, &h)| !h) {
                    layer.copy_scene(device, &mut encoder, target.texture(), copyable, &self.depth.0);
                }
            }
            // The GPU time of the main pass spans both halves (and the copy between them).
            let timestamp_writes = writes.as_mut().map(|w| wgpu::RenderPassTimestampWrites {
                query_set: w.query_set,
                beginning_of_pass_write_index: if first { w.beginning_of_pass_write_index } else { None },
                end_of_pass_write_index: if last { w.end_of_pass_write_index } else { None },
            });
            // Colour and id are not cleared: the sky, drawn in every mode at the far plane, writes
            // both wherever no opaque surface did, so every pixel is written before it is read.
            // A clear costs as much as a full-screen fill (0.15 ms per 4 bytes a pixel on the
            // H200's few ROPs, BENCHMARKS "Viewer"); the depth clear is the one the sky relies on.
            // SAFETY: as above, no pixel of either target is read before this frame writes it.
            let dont_care = || wgpu::LoadOp::DontCare(unsafe { wgpu::LoadOpDontCare::enabled() });
            let load_color = if first { dont_care() } else { wgpu::LoadOp::Load };
            let load_id = if first { dont_care() } else { wgpu::LoadOp::Load };
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("main"),
                color_attachments: &[
                    Some(wgpu::RenderPassColorAttachment {
                        view: target,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations { load: load_color, store: wgpu::StoreOp::Store },
                    }),
                    Some(wgpu::RenderPassColorAttachment {
                        view: &self.id.1,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations { load: load_id, store: wgpu::StoreOp::Store },
                    }),
                ],
                // The second half only reads depth (its pipelines write none), so the layer that
                // asked for the scene binds this texture instead of copying it.
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.depth.1,
                    depth_ops: first.then_some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(0.0),
                        store: if last { wgpu::StoreOp::Discard } else { wgpu::StoreOp::Store },
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            let bindings = Bindings { frame: &self.frame_group, tiles: &self.tile_group, surface: shadow_group };
            let marks = &mut self.marks;
            let mut mark = |pass: &mut wgpu::RenderPass<'_>, label| {
                if let Some(m) = marks.as_mut() {
                    m.mark(pass, label);
                }
            };
            mark(&mut pass, PassMarks::HALF);
            for &phase in phases.iter() {
                // The sky after the opaque surfaces, depth-tested at the far plane: only uncovered
                // pixels pay for it. Before the overlays, which write no depth and would otherwise
                // be painted over.
                if phase == Phase::Sky {
                    self.sky.record(&mut pass, &self.frame_group);
                    mark(&mut pass, "sky");
                }
                for ((layer, items), _) in self.layers.iter().zip(&items).zip(&self.hidden).filter(|(_, &h)| !h) {
                    layer.record(phase, frame.mode, &mut pass, &bindings, items);
                    mark(&mut pass, layer.name());
                }
                if phase == Phase::Overlay && frame.mode == ViewMode::Bounds {
                    self.bounds.record(&mut pass, &self.frame_group);
                    mark(&mut pass, "bounds");
                }
            }
        }
        // Metered before the HUD, whose text is not part of the scene.
        if frame.meter && frame.mode.uses_exposure() {
            self.meter.request(device, &mut encoder, target.texture(), frame.exposure_ev.exp2());
        }
        self.hud.encode(&mut encoder, target);
        if let Some(px) = frame.pick_px {
            self.pick.request(&mut encoder, &self.id.0, px);
        }
        if let Some(t) = &self.timer {
            t.resolve(&mut encoder);
        }
        if let Some(m) = &self.marks {
            m.resolve(&mut encoder);
        }
        self.last_submission = Some(queue.submit([encoder.finish()]));
        self.pick.after_submit();
        self.meter.after_submit();
        report
    }
}
