//! HUD pass: lines of text on a translucent panel in the top-left corner, drawn as textured quads
//! from the bitmap font atlas ([`super::font`]), nearest-sampled at an integer scale so every glyph
//! stays crisp.

use super::font::{self, CELL};
use super::StreamBuffer;

/// One line of HUD text.
#[derive(Clone, Debug, PartialEq)]
pub struct HudLine {
    /// The text; characters outside printable ASCII draw as '?'.
    pub text: String,
    /// Linear RGB.
    pub color: [f32; 3],
}

impl HudLine {
    /// Ordinary (light grey) text.
    pub fn info(text: impl Into<String>) -> Self {
        HudLine { text: text.into(), color: [0.85, 0.85, 0.85] }
    }
    /// A warning or error (orange).
    pub fn alert(text: impl Into<String>) -> Self {
        HudLine { text: text.into(), color: [1.0, 0.35, 0.08] }
    }
}

/// A HUD vertex: pixel position (top-left origin), atlas uv, linear RGBA.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HudVertex {
    /// Position in pixels from the viewport's top-left corner.
    pub px: [f32; 2],
    /// Font atlas coordinates, normalised to [0, 1].
    pub uv: [f32; 2],
    /// Linear RGBA; alpha below 1 makes the panel translucent.
    pub color: [f32; 4],
}

/// The integer text scale for a viewport: 2× on large windows so 8-px glyphs stay readable.
pub fn text_scale(viewport: [u32; 2]) -> f32 {
    if viewport[0] >= 1600 && viewport[1] >= 900 {
        2.0
    } else {
        1.0
    }
}

/// Quads for `lines` (two triangles each): a panel behind all lines, then one quad per glyph.
/// Characters outside printable ASCII draw as '?'.
pub fn layout(lines: &[HudLine], scale: f32) -> Vec<HudVertex> {
    let cell = CELL as f32 * scale;
    let margin = 4.0 * scale;
    let atlas = [(font::COLUMNS * CELL) as f32, (font::ROWS * CELL) as f32];
    let mut out = Vec::new();
    let mut quad = |x: f32, y: f32, w: f32, h: f32, code: u8, color: [f32; 4]| {
        let (cx, cy) = font::cell_origin(code);
        let (u0, v0) = (cx as f32 / atlas[0], cy as f32 / atlas[1]);
        let (u1, v1) = ((cx + CELL) as f32 / atlas[0], (cy + CELL) as f32 / atlas[1]);
        let v = |px: [f32; 2], uv: [f32; 2]| HudVertex { px, uv, color };
        let (a, b, c, d) = (v([x, y], [u0, v0]), v([x + w, y], [u1, v0]), v([x, y + h], [u0, v1]), v([x + w, y + h], [u1, v1]));
        out.extend_from_slice(&[a, b, c, c, b, d]);
    };
    let columns = lines.iter().map(|l| l.text.chars().count()).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    // The panel: the solid cell stretched behind every line.
    quad(0.0, 0.0, columns as f32 * cell + 2.0 * margin, lines.len() as f32 * cell + 2.0 * margin, font::SOLID, [0.0, 0.0, 0.0, 0.6]);
    for (row, line) in lines.iter().enumerate() {
        let color = [line.color[0], line.color[1], line.color[2], 1.0];
        for (col, ch) in line.text.chars().enumerate() {
            if ch == ' ' {
                continue;
            }
            let code = if ch.is_ascii() { ch as u8 } else { b'?' };
            quad(margin + col as f32 * cell, margin + row as f32 * cell, cell, cell, code, color);
        }
    }
    out
}

/// The HUD's GPU objects, made the first time there is text to draw: a run without a HUD (most
/// headless ones) never compiles its pipeline, and a window's first frame does not wait for it
/// before the terrain is up.
struct HudGpu {
    pipeline: wgpu::RenderPipeline,
    group: wgpu::BindGroup,
    screen: wgpu::Buffer,
}

/// The font atlas, pipeline and this frame's text.
pub struct HudPass {
    color: wgpu::TextureFormat,
    gpu: Option<HudGpu>,
    vertices: StreamBuffer,
}

impl HudPass {
    /// A HUD for colour format `color`; nothing is created until [`HudPass::prepare`] gets text.
    pub fn new(color: wgpu::TextureFormat) -> Self {
        HudPass { color, gpu: None, vertices: StreamBuffer::new("hud text") }
    }

    /// Uploads the atlas and builds the pipeline.
    fn build(device: &wgpu::Device, queue: &wgpu::Queue, color: wgpu::TextureFormat) -> HudGpu {
        let size = wgpu::Extent3d { width: font::COLUMNS * CELL, height: font::ROWS * CELL, depth_or_array_layers: 1 };
        let atlas = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("font atlas"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        queue.write_texture(
            wgpu::TexelCopyTextureInfo { texture: &atlas, mip_level: 0, origin: wgpu::Origin3d::ZERO, aspect: wgpu::TextureAspect::All },
            &font::atlas(),
            wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(size.width), rows_per_image: Some(size.height) },
            size,
        );
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor { label: Some("font"), ..Default::default() });
        let screen = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("hud screen"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("hud"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: wgpu::BufferSize::new(16),
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let view = atlas.create_view(&wgpu::TextureViewDescriptor::default());
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("hud"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: screen.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(&view) },
                wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::Sampler(&sampler) },
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("hud"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../shaders/hud.wgsl").into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("hud"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        const ATTRS: [wgpu::VertexAttribute; 3] = wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x2, 2 => Float32x4];
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("hud"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_hud"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<HudVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &ATTRS,
                })],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_hud"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: color,
                    blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        HudGpu { pipeline, group, screen }
    }

    /// Lays out and uploads `lines` for a `viewport`-sized target.
    pub fn prepare(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, lines: &[HudLine], viewport: [u32; 2]) {
        self.vertices.write(device, queue, &layout(lines, text_scale(viewport)));
        if self.vertices.get().is_none() {
            return;
        }
        let color = self.color;
        let gpu = self.gpu.get_or_insert_with(|| Self::build(device, queue, color));
        let (w, h) = (viewport[0].max(1) as f32, viewport[1].max(1) as f32);
        queue.write_buffer(&gpu.screen, 0, bytemuck::cast_slice(&[w, h, 1.0 / w, 1.0 / h]));
    }

    /// Draws the prepared text into `target` (loaded, not cleared).
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, target: &wgpu::TextureView) {
        let (Some(buf), Some(gpu)) = (self.vertices.get(), &self.gpu) else { return };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("hud"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Load, store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&gpu.pipeline);
        pass.set_bind_group(0, &gpu.group, &[]);
        pass.set_vertex_buffer(0, buf.slice(..));
        pass.draw(0..self.vertices.len, 0..1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_emits_a_panel_and_one_quad_per_visible_glyph() {
        let lines = [HudLine::info("ab c"), HudLine::alert("xyz!")];
        let v = layout(&lines, 1.0);
        // Panel + 3 glyphs (space skipped) + 4 glyphs, 6 vertices each.
        assert_eq!(v.len(), 6 * (1 + 3 + 4));
        // The panel covers every glyph.
        let max_x = v[6..].iter().map(|q| q.px[0]).fold(0.0, f32::max);
        let max_y = v[6..].iter().map(|q| q.px[1]).fold(0.0, f32::max);
        assert!(v[5].px[0] >= max_x && v[5].px[1] >= max_y);
        // Second line starts one cell lower, in the alert colour.
        let second = &v[6 * 4];
        assert_eq!(second.px[1] - v[6].px[1], CELL as f32);
        assert_eq!(second.color[0], 1.0);
        assert!(layout(&[], 1.0).is_empty());
    }

    #[test]
    fn scale_grows_on_large_viewports() {
        assert_eq!(text_scale([1280, 720]), 1.0);
        assert_eq!(text_scale([2560, 1440]), 2.0);
        let big = layout(&[HudLine::info("A")], 2.0);
        assert_eq!(big[11].px[0] - big[6].px[0], 2.0 * CELL as f32);
    }
}
