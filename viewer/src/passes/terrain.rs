//! Terrain pass: the drawn tiles, lit or in an inspection mode, and the wireframe overlay.
//!
//! Back faces are culled: the surface faces the air, where the camera is, so its back faces are
//! hidden behind its front faces and only cost the rasteriser (the H200's frame is bound by its
//! geometry stages, not its pixels). Skirt triangles, after the surface's in the same index buffer,
//! hang into the cracks between levels and must show from either side: the pack stores each skirt
//! triangle with both windings (the bake owns double-siding, see `formats/SPEC.md`), so one culling
//! pipeline draws a whole tile in one call (a second, double-sided pipeline would also be a second
//! JIT compile of the lit shader before lavapipe's first frame).

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

/// Number of fill variants (`ViewMode::shader_index` values).
const MODES: usize = 6;

/// The terrain pipelines: fill pipelines per view mode and the wireframe, each built on first use
/// (a compile is start-up time: LLVM on lavapipe, the driver's compiler on a GPU).
pub struct TerrainPass {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    color: wgpu::TextureFormat,
    fill: [Option<wgpu::RenderPipeline>; MODES],
    wire: Option<wgpu::RenderPipeline>,
    /// How [`TerrainPass::record_wire`] draws.
    pub wire_method: WireMethod,
}

fn pipeline(
    device: &wgpu::Device,
    (module, layout, color): (&wgpu::ShaderModule, &wgpu::PipelineLayout, wgpu::TextureFormat),
    label: &str,
    (vs, fs): (&str, &str),
    constants: &[(&str, f64)],
    primitive: wgpu::PrimitiveState,
    depth_write: bool,
) -> wgpu::RenderPipeline {
    let options = wgpu::PipelineCompilationOptions { constants, ..Default::default() };
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(vs),
            compilation_options: options.clone(),
            buffers: &[Some(tiles::vertex_layout())],
        },
        primitive,
        depth_stencil: Some(depth_state(depth_write, wgpu::DepthBiasState::default())),
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState { module, entry_point: Some(fs), compilation_options: options, targets: &scene_targets(color, None, true) }),
        multiview_mask: None,
        cache: None,
    })
}

impl TerrainPass {
    /// Compiles the shader module for colour format `color`; pipelines come with [`TerrainPass::prepare`].
    pub fn new(device: &wgpu::Device, layouts: &Layouts, color: wgpu::TextureFormat, wire_method: WireMethod) -> Self {
        let module = shader(device, "terrain", include_str!("../shaders/terrain.wgsl"));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain"),
            bind_group_layouts: &[Some(&layouts.frame), Some(&layouts.tile), Some(&layouts.surface)],
            immediate_size: 0,
        });
        TerrainPass { module, layout, color, fill: Default::default(), wire: None, wire_method }
    }

    /// Builds the fill pipeline of `mode` (`ViewMode::shader_index`), and the wireframe pipeline
    /// when `wire`, if they do not exist yet.
    pub fn prepare(&mut self, device: &wgpu::Device, mode: u32, wire: bool) {
        if wire && self.wire.is_none() {
            let primitive = match self.wire_method {
                WireMethod::PolygonLine => wgpu::PrimitiveState { cull_mode: None, polygon_mode: wgpu::PolygonMode::Line, ..Default::default() },
                WireMethod::EdgeList => wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::LineList, ..Default::default() },
            };
            let parts = (&self.module, &self.layout, self.color);
            self.wire = Some(pipeline(device, parts, "terrain wireframe", ("vs_wire", "fs_wire"), &[], primitive, false));
        }
        let slot = &mut self.fill[(mode as usize).min(MODES - 1)];
        if slot.is_none() {
            let primitive = wgpu::PrimitiveState { front_face: wgpu::FrontFace::Ccw, cull_mode: Some(wgpu::Face::Back), ..Default::default() };
            let label = format!("terrain mode {mode}");
            *slot = Some(pipeline(device, (&self.module, &self.layout, self.color), &label, ("vs_terrain", "fs_terrain"), &[("MODE", mode as f64)], primitive, true));
        }
    }

    /// Draws `items` filled in `mode` (prepared with [`TerrainPass::prepare`]). Groups 0 and 2 are
    /// set here; group 1 per item.
    pub fn record_fill(&self, pass: &mut wgpu::RenderPass<'_>, mode: u32, groups: [&wgpu::BindGroup; 3], items: &[DrawItem<'_>]) {
        let Some(fill) = &self.fill[(mode as usize).min(MODES - 1)] else { return };
        pass.set_pipeline(fill);
        pass.set_bind_group(0, groups[0], &[]);
        pass.set_bind_group(2, groups[2], &[]);
        for item in items {
            pass.set_bind_group(1, groups[1], &[item.uniform_offset]);
            pass.set_vertex_buffer(0, item.tile.vertices.slice(..));
            pass.set_index_buffer(item.tile.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..item.tile.index_count, 0, 0..1);
        }
    }

    /// Draws the triangle edges of `items` over the filled terrain (prepared with `wire`).
    pub fn record_wire(&self, pass: &mut wgpu::RenderPass<'_>, groups: [&wgpu::BindGroup; 3], items: &[DrawItem<'_>]) {
        let Some(wire) = &self.wire else { return };
        pass.set_pipeline(wire);
        pass.set_bind_group(0, groups[0], &[]);
        pass.set_bind_group(2, groups[2], &[]);
        for item in items {
            let (indices, count) = match (self.wire_method, &item.tile.edges) {
                (WireMethod::PolygonLine, _) => (&item.tile.indices, item.tile.index_count),
                (WireMethod::EdgeList, Some((edges, n))) => (edges, *n),
                // The renderer builds edge lists at upload whenever this method is in use; a tile
                // without one is skipped rather than drawn as garbage.
                (WireMethod::EdgeList, None) => continue,
            };
            pass.set_bind_group(1, groups[1], &[item.uniform_offset]);
            pass.set_vertex_buffer(0, item.tile.vertices.slice(..));
            pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..count, 0, 0..1);
        }
    }
}
