//! Shadow pass: the casting tiles of every layer, depth from the sun into a square depth map (each
//! layer records its own casters, [`crate::layers::Phase::Shadow`]), and the bind group through
//! which surfaces sample it (with the material noise, [`super::noise`]).
//!
//! There are two maps. The terrain samples the *front* one, through the projection it was drawn
//! with; a redraw goes into the *back* one, possibly over several frames (a triangle budget per
//! frame, [`ShadowPass::encode`]), and the maps swap when it is finished. A redraw of every caster
//! in one frame is what made a flight's slowest frames: a heavy view's full redraw nearly doubled
//! its frame. Spread, no frame pays
//! more than its share, and the picture never shows a half-drawn map. The cost is latency: the
//! shadows shown may be a few frames older than the geometry (the map holds what was drawn when
//! its redraw began, sampled through its own projection, so they stay where they belong).

use super::{noise, Layouts, SHADOW_FORMAT};
use crate::layers::{Bindings, DrawItem, Layer, Phase};
use crate::renderer::uniforms::FrameUniforms;
use crate::streaming::TileId;
use crate::view_mode::ViewMode;

/// Shadow map edge in texels on a GPU: 2048² × 4 B = 16 MiB, sharp with the view-fitted projection.
pub const SHADOW_MAP_SIZE: u32 = 2048;
/// On a CPU rasteriser (lavapipe, llvmpipe) the 2048² map alone takes about half of a lit frame;
/// 1024² halves that frame time for softer shadow edges.
pub const SHADOW_MAP_SIZE_CPU: u32 = 1024;

/// One tile of one layer that casts into the map: the layer's index in [`crate::layers::PRODUCTS`],
/// the tile, and its triangles (the redraw's budget counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caster {
    /// Index of the layer in [`crate::layers::PRODUCTS`].
    pub layer: usize,
    /// The tile.
    pub key: TileId,
    /// Triangles it draws into the map.
    pub triangles: u64,
}

/// What a shadow map holds: the light projection and the casters' keys. The sun does not move
/// and a tile's geometry never changes under its key, so while both are unchanged the map is still
/// right and no redraw is needed (the flight redraws only when the drawn set changes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct MapContents {
    /// Bit patterns, not floats: any change of the projection counts.
    proj: [u32; 16],
    /// Sorted (layer, tile) pairs.
    casters: Vec<(usize, TileId)>,
}

impl MapContents {
    fn new(light_view_proj: &[[f32; 4]; 4], mut casters: Vec<(usize, TileId)>) -> Self {
        casters.sort_unstable();
        MapContents { proj: bytemuck::cast(*light_view_proj), casters }
    }
}

/// A redraw in progress: the casters in draw order (triangle counts at the start), how many are
/// drawn, and what the map will then hold.
struct Redraw {
    map: usize,
    casters: Vec<Caster>,
    next: usize,
    contents: MapContents,
    /// Casters evicted before their turn came (not in the map).
    skipped: Vec<(usize, TileId)>,
}

impl Redraw {
    /// The next casters to draw: at least one, then as many as fit `budget` triangles in all
    /// (`None`: all that are left).
    fn take(&mut self, budget: Option<u64>) -> std::ops::Range<usize> {
        let start = self.next;
        let mut triangles = 0u64;
        while self.next < self.casters.len() {
            let t = self.casters[self.next].triangles;
            if self.next > start && budget.is_some_and(|b| triangles + t > b) {
                break;
            }
            triangles += t;
            self.next += 1;
        }
        start..self.next
    }

    fn done(&self) -> bool {
        self.next == self.casters.len()
    }
}

/// One of the two maps.
struct Map {
    view: wgpu::TextureView,
    /// Group 2 of the terrain pass: this map and a comparison sampler, the material noise and its sampler.
    sample_group: wgpu::BindGroup,
    /// Frame uniforms as the shadow shader reads them, with this map's projection.
    uniforms: wgpu::Buffer,
    uniform_group: wgpu::BindGroup,
    /// The projection it was drawn with and what it holds; `None` until first drawn.
    contents: Option<([[f32; 4]; 4], MapContents)>,
}

/// What [`ShadowPass::encode`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowWork {
    /// A shadow pass ran.
    pub ran: bool,
    /// Caster triangles drawn into a map this frame (0: no shadow pass ran).
    pub triangles: u64,
    /// A redraw was finished and its map is the one sampled from this frame on.
    pub swapped: bool,
}

/// The two shadow maps and the redraw in progress (the casters' pipelines are their layers').
pub struct ShadowPass {
    /// Map edge in texels.
    pub size: u32,
    maps: [Map; 2],
    /// The map the terrain samples (one that has been completely drawn), if any.
    front: Option<usize>,
    redraw: Option<Redraw>,
}

fn map(
    device: &wgpu::Device,
    layouts: &Layouts,
    size: u32,
    sampler: &wgpu::Sampler,
    noise: &wgpu::TextureView,
    noise_sampler: &wgpu::Sampler,
) -> Map {
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("shadow map"),
        size: wgpu::Extent3d { width: size, height: size, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: SHADOW_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    let sample_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("shadow map"),
        layout: &layouts.surface,
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
            wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(sampler) },
            wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::TextureView(noise) },
            wgpu::BindGroupEntry { binding: 3, resource: wgpu::BindingResource::Sampler(noise_sampler) },
        ],
    });
    let (uniforms, uniform_group) = layouts.frame_uniforms(device, "shadow map uniforms");
    Map { view, sample_group, uniforms, uniform_group, contents: None }
}

impl ShadowPass {
    /// Creates two `size`² maps, their sampler and the surfaces' group 2 for each (with `noise`, the
    /// material noise texture).
    pub fn new(device: &wgpu::Device, layouts: &Layouts, size: u32, noise: &wgpu::TextureView) -> Self {
        // Linear filtering of a comparison sampler gives hardware 2×2 PCF on top of the shader's 3×3.
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("shadow"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        let noise_sampler = noise::sampler(device);
        let maps = [0, 1].map(|_| map(device, layouts, size, &sampler, noise, &noise_sampler));
        ShadowPass { size, maps, front: None, redraw: None }
    }

    /// The map the terrain samples: its group 2 and the projection to sample it through (`None`
    /// before any map is complete: draw without shadows).
    pub fn sampled(&self) -> (&wgpu::BindGroup, Option<[[f32; 4]; 4]>) {
        let i = self.front.unwrap_or(0);
        (&self.maps[i].sample_group, self.front.and_then(|i| self.maps[i].contents.as_ref()).map(|c| c.0))
    }

    /// Decides this frame's shadow work; returns whether [`ShadowPass::encode`] must run.
    /// `casters` are the tiles that should cast through `uniforms.light_view_proj`, the current
    /// projection. When the sampled map holds something else, a redraw of them begins into the
    /// other map, unless one is under way: that one goes on (the next catches up), except for a
    /// `still` frame, which must show exactly the current casters and so starts over.
    pub fn prepare(&mut self, queue: &wgpu::Queue, uniforms: &FrameUniforms, casters: &[Caster], still: bool) -> bool {
        let wanted = MapContents::new(&uniforms.light_view_proj, casters.iter().map(|c| (c.layer, c.key)).collect());
        if still && self.redraw.as_ref().is_some_and(|r| r.contents != wanted) {
            self.redraw = None;
        }
        let front_contents = self.front.and_then(|i| self.maps[i].contents.as_ref()).map(|c| &c.1);
        if self.redraw.is_none() && front_contents != Some(&wanted) {
            let map = self.front.map_or(0, |i| 1 - i);
            queue.write_buffer(&self.maps[map].uniforms, 0, bytemuck::bytes_of(uniforms));
            self.redraw = Some(Redraw { map, casters: casters.to_vec(), next: 0, contents: wanted, skipped: Vec::new() });
        }
        self.redraw.is_some()
    }

    /// Draws the next part of the redraw under way (if any), each caster by its layer: at least one
    /// caster and at most `budget` triangles, or all that is left for `None` or while no map is
    /// complete yet; swaps the maps when it is done. Tiles evicted mid-redraw are left out (the
    /// map's contents then differ from any draw list, so it is drawn again). `tiles` is the tile
    /// uniforms' group (casters do not read it; layers get it for the shape of [`Bindings`]).
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        layers: &[Box<dyn Layer>],
        (mode, tiles): (ViewMode, &wgpu::BindGroup),
        budget: Option<u64>,
        timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) -> ShadowWork {
        let Some(redraw) = &mut self.redraw else { return ShadowWork::default() };
        let clear = redraw.next == 0;
        let range = redraw.take(if self.front.is_some() { budget } else { None });
        let m = &self.maps[redraw.map];
        // The surfaces' group of the other map: never bound by a caster (it would be the map being
        // drawn when no map is complete yet), passed only to fill `Bindings`.
        let bindings = Bindings { frame: &m.uniform_group, tiles, surface: &self.maps[1 - redraw.map].sample_group };
        let mut work = ShadowWork { ran: true, ..Default::default() };
        {
            let load = if clear { wgpu::LoadOp::Clear(1.0) } else { wgpu::LoadOp::Load };
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("shadow"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &m.view,
                    depth_ops: Some(wgpu::Operations { load, store: wgpu::StoreOp::Store }),
                    stencil_ops: None,
                }),
                timestamp_writes: timestamps,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            // Runs of casters of one layer, each recorded by its layer in one call.
            let mut batch: Vec<DrawItem> = Vec::new();
            let casters = &redraw.casters[range];
            for (i, c) in casters.iter().enumerate() {
                if layers.get(c.layer).and_then(|l| l.extent(c.key)).is_none() {
                    redraw.skipped.push((c.layer, c.key));
                } else {
                    batch.push(DrawItem { key: c.key, uniform_offset: 0 });
                }
                let run_ends = casters.get(i + 1).is_none_or(|n| n.layer != c.layer);
                if run_ends && !batch.is_empty() {
                    work.triangles += layers[c.layer].record(Phase::Shadow, mode, &mut pass, &bindings, &batch);
                    batch.clear();
                }
            }
        }
        if redraw.done() {
            let Redraw { map, mut contents, skipped, .. } = self.redraw.take().expect("a redraw is under way");
            // What the map really holds: casters evicted before their turn are not in it.
            contents.casters.retain(|k| !skipped.contains(k));
            let proj = bytemuck::cast(contents.proj);
            self.maps[map].contents = Some((proj, contents));
            self.front = Some(map);
            work.swapped = true;
        }
        work
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: [[f32; 4]; 4] = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];

    fn k(x: u32) -> TileId {
        TileId { level: 0, x, y: 0 }
    }

    #[test]
    fn contents_differ_only_when_casters_or_projection_change() {
        let c = |p: &[[f32; 4]; 4], keys: &[u32]| MapContents::new(p, keys.iter().map(|&x| (0, k(x))).collect());
        assert_eq!(c(&ID, &[1, 2]), c(&ID, &[2, 1]), "the same casters in another order: the map is still right");
        assert_ne!(c(&ID, &[1, 2]), c(&ID, &[1]), "a caster left");
        assert_ne!(c(&ID, &[1]), c(&ID, &[1, 3]), "a caster arrived");
        let mut moved = ID;
        moved[3][0] = 1e-7;
        assert_ne!(c(&ID, &[1, 3]), c(&moved, &[1, 3]), "the projection moved, however little");
    }

    fn redraw(triangles: &[u64]) -> Redraw {
        Redraw {
            map: 0,
            casters: triangles.iter().enumerate().map(|(i, &t)| Caster { layer: 0, key: k(i as u32), triangles: t }).collect(),
            next: 0,
            contents: MapContents::default(),
            skipped: Vec::new(),
        }
    }

    #[test]
    fn a_budgeted_redraw_draws_every_caster_once_in_order_within_the_budget() {
        let tris = [300, 500, 200, 900, 100, 100, 50, 400];
        let mut r = redraw(&tris);
        let mut covered = Vec::new();
        let mut frames = 0;
        while !r.done() {
            let range = r.take(Some(600));
            assert!(!range.is_empty(), "every frame makes progress");
            let sum: u64 = tris[range.clone()].iter().sum();
            assert!(sum <= 600 || range.len() == 1, "{range:?}: {sum} triangles over the budget");
            covered.extend(range);
            frames += 1;
        }
        assert_eq!(covered, (0..tris.len()).collect::<Vec<_>>());
        // Greedy: [300] [500] [200] [900] (alone, over the budget) [100 100 50] [400].
        assert_eq!(frames, 6);
    }

    #[test]
    fn an_unbudgeted_redraw_is_drawn_in_one_frame() {
        let mut r = redraw(&[1_000_000, 2_000_000, 5]);
        assert_eq!(r.take(None), 0..3);
        assert!(r.done());
        assert_eq!(r.take(Some(10)), 3..3, "nothing left");
    }
}
