//! Tile-bounds pass: each drawn tile's bounding box as 12 lines in its LOD colour (the tile under
//! the cursor in white), depth-tested so boxes hide behind hills.

use super::{depth_state, scene_targets, shader, Layouts, StreamBuffer};
use crate::view_mode::lod_color;

/// A line vertex: world position and linear colour (the sRGB target encodes it).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LineVertex {
    /// World position in world units.
    pub position: [f32; 3],
    /// Linear RGBA, 0–255 per channel (read as unorm).
    pub color: [u8; 4],
}

/// One box to outline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxLines {
    /// World-space corner with the lowest coordinates.
    pub min: [f32; 3],
    /// World-space corner with the highest coordinates.
    pub max: [f32; 3],
    /// The tile's LOD level, which picks the colour.
    pub level: u32,
    /// Outline in white instead (the tile under the cursor).
    pub highlight: bool,
}

/// The 24 vertices (12 edges) of `b`'s outline.
pub fn box_vertices(b: &BoxLines) -> [LineVertex; 24] {
    let c = if b.highlight { [1.0; 3] } else { lod_color(b.level) };
    let color = [(c[0] * 255.0) as u8, (c[1] * 255.0) as u8, (c[2] * 255.0) as u8, 255];
    let corner = |i: usize| LineVertex {
        position: [
            if i & 1 == 0 { b.min[0] } else { b.max[0] },
            if i & 2 == 0 { b.min[1] } else { b.max[1] },
            if i & 4 == 0 { b.min[2] } else { b.max[2] },
        ],
        color,
    };
    // Corners differing in exactly one bit are joined by an edge.
    const EDGES: [(usize, usize); 12] = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)];
    let mut out = [corner(0); 24];
    for (e, (a, b)) in EDGES.iter().enumerate() {
        out[2 * e] = corner(*a);
        out[2 * e + 1] = corner(*b);
    }
    out
}

/// The line pipeline (built on first use: only the bounds mode draws it, and a pipeline compile
/// costs start-up time) and this frame's vertices.
pub struct BoundsPass {
    frame_layout: wgpu::BindGroupLayout,
    color: wgpu::TextureFormat,
    pipeline: Option<wgpu::RenderPipeline>,
    vertices: StreamBuffer,
}

impl BoundsPass {
    /// A pass for colour format `color`; nothing is compiled yet.
    pub fn new(layouts: &Layouts, color: wgpu::TextureFormat) -> Self {
        BoundsPass { frame_layout: layouts.frame.clone(), color, pipeline: None, vertices: StreamBuffer::new("tile bounds") }
    }

    fn build(device: &wgpu::Device, frame_layout: &wgpu::BindGroupLayout, color: wgpu::TextureFormat) -> wgpu::RenderPipeline {
        let module = shader(device, "lines", include_str!("../shaders/lines.wgsl"));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("lines"),
            bind_group_layouts: &[Some(frame_layout)],
            immediate_size: 0,
        });
        const ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Unorm8x4];
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("lines"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_lines"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<LineVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &ATTRS,
                })],
            },
            primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::LineList, ..Default::default() },
            depth_stencil: Some(depth_state(false, wgpu::DepthBiasState::default())),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_lines"),
                compilation_options: Default::default(),
                targets: &scene_targets(color, None, false),
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Uploads this frame's boxes (building the pipeline the first time).
    pub fn prepare(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, boxes: &[BoxLines]) {
        if self.pipeline.is_none() {
            self.pipeline = Some(Self::build(device, &self.frame_layout, self.color));
        }
        let verts: Vec<LineVertex> = boxes.iter().flat_map(box_vertices).collect();
        self.vertices.write(device, queue, &verts);
    }

    /// Draws the prepared boxes.
    pub fn record(&self, pass: &mut wgpu::RenderPass<'_>, frame: &wgpu::BindGroup) {
        if let (Some(buf), Some(pipeline)) = (self.vertices.get(), &self.pipeline) {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, frame, &[]);
            pass.set_vertex_buffer(0, buf.slice(..));
            pass.draw(0..self.vertices.len, 0..1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_has_twelve_axis_aligned_edges_of_the_right_lengths() {
        let b = BoxLines { min: [0.0, 0.0, 0.0], max: [1.0, 2.0, 3.0], level: 1, highlight: false };
        let v = box_vertices(&b);
        let mut lengths: Vec<f32> = v
            .chunks(2)
            .map(|e| {
                let d: Vec<f32> = (0..3).map(|a| (e[1].position[a] - e[0].position[a]).abs()).collect();
                assert_eq!(d.iter().filter(|&&x| x > 0.0).count(), 1, "edge must be along one axis");
                d.iter().sum()
            })
            .collect();
        lengths.sort_by(f32::total_cmp);
        assert_eq!(lengths, vec![1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0]);
        assert_eq!(v[0].color[1], (lod_color(1)[1] * 255.0) as u8);
        let hl = box_vertices(&BoxLines { highlight: true, ..b });
        assert_eq!(hl[5].color, [255, 255, 255, 255]);
    }
}
