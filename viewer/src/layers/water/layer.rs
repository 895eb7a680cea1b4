//! The water layer: each resident tile's surface grid, the frame's water constants (the level and
//! absorption the shared sunlight reads, whether the camera is under the surface), the scene copy
//! the surface refracts, and the draws: the surface in the transparent phase, the caustics view and
//! the underwater fog as full-screen passes in the volumetric phase.

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::{Mat4, Vec2, Vec3};
use wgpu::util::DeviceExt;

use super::assets::{frame_position, WaveAssets};
use super::decode::TileWater;
use super::gpu::{Kind, WaterGpu, WaterUniform, SHORE_SCALE};
use crate::layers::{downcast, Bindings, Counts, Decoded, DrawItem, Extent, FrameContext, Layer, LayerInit, Phase};
use crate::renderer::uniforms::{FrameUniforms, WATER_CAMERA_UNDER, WATER_PRESENT};
use crate::streaming::TileId;
use crate::view_mode::ViewMode;

/// The shader's mode for a view mode (`MODE` in `water.wgsl`): 0 lit, 1 caustics, 2 water mask.
pub fn shader_mode(mode: ViewMode) -> u32 {
    match mode {
        ViewMode::Caustics => 1,
        ViewMode::WaterMask => 2,
        _ => 0,
    }
}

/// Whether the water layer draws anything in `mode` (the data modes show the terrain's data only).
fn draws_in(mode: ViewMode) -> bool {
    !matches!(mode, ViewMode::Ao | ViewMode::Indirect | ViewMode::Normals | ViewMode::Lod)
}

struct GpuTile {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    data: TileWater,
    bytes: u64,
}

/// The water's GPU side.
pub struct WaterLayer {
    assets: Option<Arc<WaveAssets>>,
    gpu: Option<WaterGpu>,
    /// Ordered, so the tile whose level and absorption the frame uses is the same every run.
    tiles: BTreeMap<TileId, GpuTile>,
    resident_bytes: u64,
    /// The camera is under the surface this frame (from the frame uniforms).
    under: bool,
    /// The scene was copied this frame: the draws may run.
    active: bool,
    /// The last copy included the colour (the window's surface may not allow copies).
    color_copied: bool,
    /// What this frame copies of the scene's colour (x0, y0, x1, y1): [`copy_rect`].
    copy_rect: [u32; 4],
}

/// How far the surface's refraction displaces what it shows, as a fraction of the frame's height
/// (`REFRACT_REACH` in `water.wgsl`).
pub const REFRACT_REACH: f32 = 0.03;

/// The part of a `size` frame the surface can read from the scene copy: the screen rectangle of
/// the drawn tiles' bounds (`boxes`, which hold the waves), widened by the refraction's reach, as
/// x0, y0, x1, y1; the whole frame when a box reaches behind the camera. The copy is a full-screen
/// pass's cost on the H200 (BENCHMARKS "Viewer"), and often little water is in view.
pub fn copy_rect(view_proj: Mat4, size: [u32; 2], boxes: impl IntoIterator<Item = (Vec3, Vec3)>) -> [u32; 4] {
    let wh = Vec2::new(size[0] as f32, size[1] as f32);
    let (mut lo, mut hi) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
    for (min, max) in boxes {
        for i in 0..8 {
            let p = Vec3::new([min.x, max.x][i & 1], [min.y, max.y][(i >> 1) & 1], [min.z, max.z][i >> 2]);
            let c = view_proj * p.extend(1.0);
            if c.w <= 1e-6 {
                return [0, 0, size[0], size[1]];
            }
            let px = Vec2::new(c.x / c.w * 0.5 + 0.5, 0.5 - c.y / c.w * 0.5) * wh;
            lo = lo.min(px);
            hi = hi.max(px);
        }
    }
    if lo.x > hi.x {
        return [0; 4];
    }
    let reach = (REFRACT_REACH * wh.y).ceil() + 2.0;
    let lo = (lo - reach).floor().clamp(Vec2::ZERO, wh);
    let hi = (hi + reach).ceil().clamp(Vec2::ZERO, wh);
    [lo.x as u32, lo.y as u32, hi.x as u32, hi.y as u32]
}

/// The direction of sunlight refracted into the water, as the horizontal shift per unit depth of
/// where it crossed the surface, for a sun toward `to_sun` (unit, z > 0).
fn shift_per_depth(to_sun: Vec3, ior: f32) -> [f32; 2] {
    let s = to_sun.normalize_or(Vec3::Z);
    let sin2 = (s.x * s.x + s.y * s.y) / (ior * ior);
    let down = (1.0 - sin2).max(1e-4).sqrt();
    [-s.x / ior / down, -s.y / ior / down]
}

/// Builds the pipelines `mode` draws with (the surface, and the underwater fog the camera may
/// dive into), if not built yet.
fn prepare_pipelines(g: &mut WaterGpu, device: &wgpu::Device, mode: ViewMode) {
    match mode {
        _ if !draws_in(mode) => {}
        ViewMode::Caustics => g.prepare(device, Kind::Caustics, 1),
        m => {
            g.prepare(device, Kind::Surface, shader_mode(m));
            g.prepare(device, Kind::FogAbsorb, 0);
            g.prepare(device, Kind::FogScatter, 0);
        }
    }
}

impl WaterLayer {
    /// The layer; uploads the shared waves when the bake has them.
    pub fn new(init: &LayerInit<'_>) -> Self {
        let assets = init.shared.get::<WaveAssets>(super::NAME).map(|(a, _)| a);
        let gpu = assets.as_ref().map(|a| {
            let mut g = WaterGpu::new(init.device, init.queue, init.layouts, init.color, a);
            // Every pipeline the first frame's `prepare` would build: built there, they were the
            // first frame's 30–40 ms on a machine whose driver had not compiled them before.
            prepare_pipelines(&mut g, init.device, init.mode);
            g
        });
        WaterLayer { assets, gpu, tiles: BTreeMap::new(), resident_bytes: 0, under: false, active: false, color_copied: true, copy_rect: [0; 4] }
    }

    /// The resident tile whose water the frame's constants use: the first in (level, y, x) order.
    fn reference(&self) -> Option<&TileWater> {
        self.tiles.values().next().map(|t| &t.data)
    }

    /// Whether `p` is in the water: over a wet sample of the finest resident tile that covers it,
    /// below its level and above its floor.
    fn is_under(&self, p: Vec3) -> bool {
        let covering = self.tiles.values().filter_map(|t| t.data.map.depth_at(p.x, p.y).map(|d| (t, d)));
        let Some((t, depth)) = covering.min_by_key(|(t, _)| t.data.map.spacing.to_bits()) else { return false };
        depth > 0.0 && p.z < t.data.level && p.z > t.data.level - depth - 0.5
    }
}

impl Layer for WaterLayer {
    fn name(&self) -> &'static str {
        "water"
    }

    fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode) {
        if let Some(g) = &mut self.gpu {
            prepare_pipelines(g, device, mode);
        }
    }

    fn upload(&mut self, device: &wgpu::Device, key: TileId, data: Box<dyn Decoded>) -> Result<(), String> {
        let data = downcast::<TileWater>(data, "water")?;
        self.evict(key);
        let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water vertices"),
            contents: bytemuck::cast_slice(&data.vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let indices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water indices"),
            contents: bytemuck::cast_slice(&data.indices),
            usage: wgpu::BufferUsages::INDEX,
        });
        let bytes = data.gpu_bytes();
        self.resident_bytes += bytes;
        let index_count = data.indices.len() as u32;
        // A tile uploaded again replaces its old buffers: count only the new ones.
        if let Some(old) = self.tiles.insert(key, GpuTile { vertices, indices, index_count, data: *data, bytes }) {
            self.resident_bytes -= old.bytes;
        }
        Ok(())
    }

    fn evict(&mut self, key: TileId) {
        if let Some(t) = self.tiles.remove(&key) {
            self.resident_bytes -= t.bytes;
        }
    }

    fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }

    fn extent(&self, key: TileId) -> Option<Extent> {
        let t = self.tiles.get(&key)?;
        let (min, max) = t.data.bounds;
        Some(Extent { min: Vec3::from(min), max: Vec3::from(max), triangles: u64::from(t.index_count / 3) })
    }

    fn frame_uniforms(&self, u: &mut FrameUniforms) {
        let (Some(assets), Some(t)) = (&self.assets, self.reference()) else { return };
        let w = &assets.waves;
        let to_sun = Vec3::from_slice(&u.sun_dir[..3]).normalize_or(Vec3::Z);
        // Snell: the refracted sun's cosine below a flat surface.
        let sin2 = (1.0 - to_sun.z * to_sun.z).max(0.0) / (w.ior * w.ior);
        u.water = [t.level, w.flat_transmittance, (1.0 - sin2).max(0.0).sqrt(), w.ior];
        u.water_absorption = [t.absorption[0], t.absorption[1], t.absorption[2], 0.0];
        u.params[3] = WATER_PRESENT;
        if self.is_under(Vec3::from_slice(&u.camera_pos[..3])) {
            u.params[3] |= WATER_CAMERA_UNDER;
        }
    }

    fn prepare_frame(&mut self, ctx: &FrameContext<'_>, view: &[DrawItem]) -> Counts {
        self.active = false;
        self.under = ctx.uniforms.params[3] & WATER_CAMERA_UNDER != 0;
        let mut counts = Counts::default();
        let (Some(assets), Some(g)) = (&self.assets, &self.gpu) else { return counts };
        counts.add("water_tiles", view.len() as u64);
        let w = &assets.waves;
        let mut depths = [[0.0; 4]; 2];
        for (k, &d) in w.depths.iter().enumerate().take(8) {
            depths[k / 4][k % 4] = d;
        }
        // Under the surface the fog reads every pixel, and the caustics view is full-screen.
        let size = [ctx.uniforms.viewport[0] as u32, ctx.uniforms.viewport[1] as u32];
        self.copy_rect = if self.under || ctx.mode == ViewMode::Caustics {
            [0, 0, size[0], size[1]]
        } else {
            let boxes = view.iter().filter_map(|i| self.tiles.get(&i.key)).map(|t| (Vec3::from(t.data.bounds.0), Vec3::from(t.data.bounds.1)));
            copy_rect(Mat4::from_cols_array_2d(&ctx.uniforms.view_proj), size, boxes)
        };
        let view_shift = shift_per_depth(Vec3::from_slice(&ctx.uniforms.sun_dir[..3]), w.ior);
        let baked_shift = shift_per_depth(Vec3::from(w.sun_direction), w.ior);
        let u = WaterUniform {
            waves: [1.0 / w.patch_size, frame_position(ctx.settings.time_s, w.period, w.frames), w.frames as f32, w.depths.len() as f32],
            caustic: [baked_shift[0] - view_shift[0], baked_shift[1] - view_shift[1], w.flat_transmittance, self.color_copied as u32 as f32],
            depths,
            scale: [SHORE_SCALE[0] * w.patch_size, SHORE_SCALE[1] * w.patch_size, SHORE_SCALE[2] * w.patch_size, 0.0],
            copy_rect: self.copy_rect.map(|v| v as f32),
        };
        ctx.queue.write_buffer(&g.uniform, 0, bytemuck::bytes_of(&u));
        counts
    }

    fn wants_scene(&self, mode: ViewMode, items: &[DrawItem]) -> bool {
        self.gpu.is_some() && draws_in(mode) && !self.tiles.is_empty() && (!items.is_empty() || self.under || mode == ViewMode::Caustics)
    }

    fn copy_scene(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::Texture,
        color_copyable: bool,
        depth: &wgpu::Texture,
    ) {
        let Some(g) = &mut self.gpu else { return };
        g.copy_scene(device, encoder, (color, color_copyable), depth, self.copy_rect);
        self.color_copied = color_copyable;
        self.active = true;
    }

    fn record(&self, phase: Phase, mode: ViewMode, pass: &mut wgpu::RenderPass<'_>, bindings: &Bindings<'_>, items: &[DrawItem]) -> u64 {
        let Some(g) = &self.gpu else { return 0 };
        let Some(group) = &g.group else { return 0 };
        if !self.active || !draws_in(mode) {
            return 0;
        }
        let bind = |pass: &mut wgpu::RenderPass<'_>, offset: u32| {
            pass.set_bind_group(0, bindings.frame, &[]);
            pass.set_bind_group(1, bindings.tiles, &[offset]);
            pass.set_bind_group(2, bindings.surface, &[]);
            pass.set_bind_group(3, group, &[]);
        };
        let full = |pass: &mut wgpu::RenderPass<'_>, kind: Kind, m: u32| {
            if let Some(p) = g.pipeline(kind, m) {
                pass.set_pipeline(p);
                bind(pass, 0);
                pass.draw(0..3, 0..1);
            }
        };
        match phase {
            Phase::Transparent if mode != ViewMode::Caustics => {
                let Some(p) = g.pipeline(Kind::Surface, shader_mode(mode)) else { return 0 };
                pass.set_pipeline(p);
                let mut triangles = 0;
                for item in items {
                    let Some(t) = self.tiles.get(&item.key) else { continue };
                    bind(pass, item.uniform_offset);
                    pass.set_vertex_buffer(0, t.vertices.slice(..));
                    pass.set_index_buffer(t.indices.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(0..t.index_count, 0, 0..1);
                    triangles += u64::from(t.index_count / 3);
                }
                triangles
            }
            Phase::Volumetric if mode == ViewMode::Caustics => {
                full(pass, Kind::Caustics, 1);
                1
            }
            Phase::Volumetric if self.under && mode != ViewMode::WaterMask => {
                full(pass, Kind::FogAbsorb, 0);
                full(pass, Kind::FogScatter, 0);
                2
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overhead_sun_shifts_nothing_and_a_low_one_shifts_away_from_it() {
        assert_eq!(shift_per_depth(Vec3::Z, 1.333), [0.0, 0.0]);
        // Sun in +x: light travels toward −x in the water, less steeply than in air (Snell).
        let s = Vec3::new(0.6, 0.0, 0.8);
        let [dx, dy] = shift_per_depth(s, 1.333);
        assert!(dx < 0.0 && dy == 0.0);
        assert!(dx.abs() < 0.6 / 0.8, "{dx}: refraction bends the ray toward the vertical");
        let sin_t: f32 = 0.6 / 1.333;
        assert!((dx.abs() - sin_t / (1.0 - sin_t * sin_t).sqrt()).abs() < 1e-5);
    }

    #[test]
    fn the_copy_covers_the_water_on_screen_and_the_refractions_reach() {
        let size = [400, 200];
        let camera = Mat4::perspective_rh(1.0, 2.0, 0.1, 100.0) * Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
        // A small box straight ahead: a small rectangle around the centre, widened by the reach.
        let r = copy_rect(camera, size, [(Vec3::new(-0.5, -0.5, -20.0), Vec3::new(0.5, 0.5, -19.0))]);
        let reach = (REFRACT_REACH * 200.0).ceil() as u32 + 2;
        assert!(r[0] < 200 && r[2] > 200 && r[1] < 100 && r[3] > 100, "{r:?}");
        assert!(r[2] - r[0] < 2 * reach + 40 && r[3] - r[1] < 2 * reach + 40, "{r:?}");
        // Two boxes: their union. Off to the left edge: clamped to the frame.
        let two = copy_rect(
            camera,
            size,
            [(Vec3::new(-0.5, -0.5, -20.0), Vec3::new(0.5, 0.5, -19.0)), (Vec3::new(-30.0, 0.0, -20.0), Vec3::new(-29.0, 1.0, -19.0))],
        );
        assert_eq!(two[0], 0);
        assert!(two[2] == r[2] && two[3] == r[3], "{two:?} {r:?}");
        // A box reaching behind the camera: the whole frame. Nothing in view: nothing.
        assert_eq!(copy_rect(camera, size, [(Vec3::new(-1.0, -1.0, -5.0), Vec3::new(1.0, 1.0, 5.0))]), [0, 0, 400, 200]);
        assert_eq!(copy_rect(camera, size, []), [0; 4]);
    }

    #[test]
    fn the_water_modes_pick_their_shader_modes() {
        assert_eq!(shader_mode(ViewMode::Lit), 0);
        assert_eq!(shader_mode(ViewMode::Caustics), 1);
        assert_eq!(shader_mode(ViewMode::WaterMask), 2);
        assert!(!draws_in(ViewMode::Ao) && draws_in(ViewMode::Wireframe));
    }
}
