//! Terrain pass: the drawn tiles, lit or in an inspection mode, and the wireframe overlay.
//!
//! Culling is off: skirts come double-sided, and caves are seen from inside. Skirt triangles are in
//! the same index buffer after the surface's and are drawn with it.

use super::{depth_state, scene_targets, shader, DrawItem, Layouts};
use crate::renderer::tiles;

/// How the wireframe is drawn on this adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireMethod {
    /// `PolygonMode::Line` over the triangle indices (`Features::POLYGON_MODE_LINE`).
    PolygonLine,
    /// A line list over each tile's unique edges (`GpuTile::edges`), for adapters without it.
    EdgeList,
}

/// The terrain pipelines.
pub struct TerrainPass {
    fill: wgpu::RenderPipeline,
    wire: wgpu::RenderPipeline,
    /// How [`TerrainPass::record_wire`] draws.
    pub wire_method: WireMethod,
}

impl TerrainPass {
    /// Builds the fill and wireframe pipelines for colour format `color`.
    pub fn new(device: &wgpu::Device, layouts: &Layouts, color: wgpu::TextureFormat, wire_method: WireMethod) -> Self {
        let module = shader(device, "terrain", include_str!("../shaders/terrain.wgsl"));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain"),
            bind_group_layouts: &[Some(&layouts.frame), Some(&layouts.tile), Some(&layouts.shadow)],
            immediate_size: 0,
        });
        let pipeline = |label: &str, vs: &str, fs: &str, primitive: wgpu::PrimitiveState, depth_write: bool| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(vs),
                    compilation_options: Default::default(),
                    buffers: &[Some(tiles::vertex_layout())],
                },
                primitive,
                depth_stencil: Some(depth_state(depth_write, wgpu::DepthBiasState::default())),
                multisample: wgpu::MultisampleState::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: &scene_targets(color, None, true),
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let fill = pipeline("terrain", "vs_terrain", "fs_terrain", wgpu::PrimitiveState { cull_mode: None, ..Default::default() }, true);
        let wire_primitive = match wire_method {
            WireMethod::PolygonLine => wgpu::PrimitiveState { cull_mode: None, polygon_mode: wgpu::PolygonMode::Line, ..Default::default() },
            WireMethod::EdgeList => wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::LineList, ..Default::default() },
        };
        let wire = pipeline("terrain wireframe", "vs_wire", "fs_wire", wire_primitive, false);
        TerrainPass { fill, wire, wire_method }
    }

    /// Draws `items` filled. Groups 0 and 2 are set here; group 1 per item.
    pub fn record_fill(&self, pass: &mut wgpu::RenderPass<'_>, frame: &wgpu::BindGroup, tile: &wgpu::BindGroup, shadow: &wgpu::BindGroup, items: &[DrawItem<'_>]) {
        pass.set_pipeline(&self.fill);
        pass.set_bind_group(0, frame, &[]);
        pass.set_bind_group(2, shadow, &[]);
        for item in items {
            pass.set_bind_group(1, tile, &[item.uniform_offset]);
            pass.set_vertex_buffer(0, item.tile.vertices.slice(..));
            pass.set_index_buffer(item.tile.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..item.tile.index_count, 0, 0..1);
        }
    }

    /// Draws the triangle edges of `items` over the filled terrain.
    pub fn record_wire(&self, pass: &mut wgpu::RenderPass<'_>, frame: &wgpu::BindGroup, tile: &wgpu::BindGroup, shadow: &wgpu::BindGroup, items: &[DrawItem<'_>]) {
        pass.set_pipeline(&self.wire);
        pass.set_bind_group(0, frame, &[]);
        pass.set_bind_group(2, shadow, &[]);
        for item in items {
            let (indices, count) = match (self.wire_method, &item.tile.edges) {
                (WireMethod::PolygonLine, _) => (&item.tile.indices, item.tile.index_count),
                (WireMethod::EdgeList, Some((edges, n))) => (edges, *n),
                // The renderer builds edge lists at upload whenever this method is in use; a tile
                // without one is skipped rather than drawn as garbage.
                (WireMethod::EdgeList, None) => continue,
            };
            pass.set_bind_group(1, tile, &[item.uniform_offset]);
            pass.set_vertex_buffer(0, item.tile.vertices.slice(..));
            pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..count, 0, 0..1);
        }
    }
}
