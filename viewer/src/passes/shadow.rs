//! Shadow pass: the drawn tiles' depth from the sun into a square depth map, and the bind group
//! through which the terrain pass samples it (with the material noise, [`super::noise`]).

use super::{noise, shader, DrawItem, Layouts};
use crate::renderer::tiles;
use crate::streaming::TileKey;

/// Shadow map edge in texels on a GPU: 2048² × 4 B = 16 MiB, sharp with the view-fitted projection.
pub const SHADOW_MAP_SIZE: u32 = 2048;
/// On a CPU rasteriser (lavapipe, llvmpipe) the 2048² map alone takes about half of a lit frame;
/// 1024² halves that frame time for softer shadow edges.
pub const SHADOW_MAP_SIZE_CPU: u32 = 1024;
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// What the shadow map holds: the light projection and the casters' keys. The sun does not move
/// and a tile's geometry never changes under its key, so while both are unchanged the map is still
/// right and its pass can be skipped (the flight redraws it only when the drawn set changes).
#[derive(Default)]
struct MapContents(Option<([u32; 16], Vec<TileKey>)>);

impl MapContents {
    /// Records that the map will hold `casters` through `light_view_proj`; returns whether that
    /// differs from what it holds (the map must then be redrawn).
    fn replace(&mut self, light_view_proj: &[[f32; 4]; 4], mut casters: Vec<TileKey>) -> bool {
        // Bit patterns, not float equality: any change of the projection counts.
        let proj: [u32; 16] = bytemuck::cast(*light_view_proj);
        casters.sort_unstable();
        let same = self.0.as_ref().is_some_and(|(p, k)| *p == proj && *k == casters);
        if !same {
            self.0 = Some((proj, casters));
        }
        !same
    }
}

/// The shadow map and its pipeline.
pub struct ShadowPass {
    /// Map edge in texels.
    pub size: u32,
    pipeline: wgpu::RenderPipeline,
    view: wgpu::TextureView,
    contents: MapContents,
    /// Group 2 of the terrain pass: the map and a comparison sampler, the material noise and its sampler.
    pub sample_group: wgpu::BindGroup,
}

impl ShadowPass {
    /// Creates a `size`² map, its sampler, the terrain's group 2 (with `noise`, the material noise
    /// texture) and the depth-only pipeline.
    pub fn new(device: &wgpu::Device, layouts: &Layouts, size: u32, noise: &wgpu::TextureView) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("shadow map"),
            size: wgpu::Extent3d { width: size, height: size, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
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
        let sample_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("shadow map"),
            layout: &layouts.surface,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&sampler) },
                wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::TextureView(noise) },
                wgpu::BindGroupEntry { binding: 3, resource: wgpu::BindingResource::Sampler(&noise::sampler(device)) },
            ],
        });
        let module = shader(device, "shadow", include_str!("../shaders/shadow.wgsl"));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("shadow"),
            bind_group_layouts: &[Some(&layouts.frame)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("shadow"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_shadow"),
                compilation_options: Default::default(),
                buffers: &[Some(tiles::vertex_layout())],
            },
            // Both faces: skirts and thin ridges must cast from either side.
            primitive: wgpu::PrimitiveState { cull_mode: None, ..Default::default() },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::LessEqual),
                stencil: wgpu::StencilState::default(),
                // Slope-scaled bias handles grazing angles; the shader's normal offset does the rest.
                bias: wgpu::DepthBiasState { constant: 2, slope_scale: 2.0, clamp: 0.0 },
            }),
            multisample: wgpu::MultisampleState::default(),
            fragment: None,
            multiview_mask: None,
            cache: None,
        });
        ShadowPass { size, pipeline, view, contents: MapContents::default(), sample_group }
    }

    /// Whether the map already holds `items` seen through `light_view_proj`; if not, records that
    /// it will (the caller must then [`ShadowPass::encode`] them this frame).
    pub fn needs_render(&mut self, light_view_proj: &[[f32; 4]; 4], items: &[DrawItem<'_>]) -> bool {
        self.contents.replace(light_view_proj, items.iter().map(|i| i.tile.key).collect())
    }

    /// Renders `items` into the shadow map (clearing it first, so an empty list means no shadows).
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, frame: &wgpu::BindGroup, items: &[DrawItem<'_>], timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("shadow"),
            color_attachments: &[],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &self.view,
                depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Store }),
                stencil_ops: None,
            }),
            timestamp_writes: timestamps,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, frame, &[]);
        for item in items {
            pass.set_vertex_buffer(0, item.tile.vertices.slice(..));
            pass.set_index_buffer(item.tile.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..item.tile.index_count, 0, 0..1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_is_redrawn_only_when_casters_or_projection_change() {
        let k = |x| TileKey { level: 0, x, y: 0 };
        let proj = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let mut m = MapContents::default();
        assert!(m.replace(&proj, vec![k(1), k(2)]), "an empty map is always drawn");
        assert!(!m.replace(&proj, vec![k(2), k(1)]), "the same casters in another order: the map is still right");
        assert!(m.replace(&proj, vec![k(1)]), "a caster left");
        assert!(m.replace(&proj, vec![k(1), k(3)]), "a caster arrived");
        let mut moved = proj;
        moved[3][0] = 1e-7;
        assert!(m.replace(&moved, vec![k(1), k(3)]), "the projection moved, however little");
        assert!(!m.replace(&moved, vec![k(3), k(1)]));
    }
}
