//! The terrain's pipelines: the fill (lit or an inspection mode), the wireframe overlay and the
//! shadow caster.
//!
//! Back faces are culled: the surface faces the air, where the camera is, so its back faces are
//! hidden behind its front faces and only cost the rasteriser (the H200's frame is bound by its
//! geometry stages, not its pixels). Skirt triangles, after the surface's in the same index buffer,
//! hang into the cracks between levels and must show from either side: the pack stores each skirt
//! triangle with both windings (the bake owns double-siding, see `formats/SPEC.md`), so one culling
//! pipeline draws a whole tile in one call (a second, double-sided pipeline would also be a second
//! JIT compile of the lit shader before lavapipe's first frame).

use super::vertex;
use crate::passes::{depth_state, scene_targets, shader, Layouts, SHADOW_FORMAT};

/// How the wireframe is drawn on this adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireMethod {
    /// `PolygonMode::Line` over the triangle indices (`Features::POLYGON_MODE_LINE`).
    PolygonLine,
    /// A line list over each tile's unique edges (`GpuTerrain::edges`), for adapters without it.
    EdgeList,
}

/// Number of fill variants (`ViewMode::shader_index` values).
const MODES: usize = 6;

/// The terrain pipelines: fill pipelines per view mode, the wireframe and the shadow caster, each
/// built on first use (a compile is start-up time: LLVM on lavapipe, the driver's compiler on a GPU).
pub struct TerrainPipelines {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    color: wgpu::TextureFormat,
    fill: [Option<wgpu::RenderPipeline>; MODES],
    wire: Option<wgpu::RenderPipeline>,
    /// Depth-only, from the sun; group 0 only.
    shadow_layout: wgpu::PipelineLayout,
    shadow: Option<wgpu::RenderPipeline>,
    /// How the wireframe is drawn.
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
        vertex: wgpu::VertexState { module, entry_point: Some(vs), compilation_options: options.clone(), buffers: &[Some(vertex::vertex_layout())] },
        primitive,
        depth_stencil: Some(depth_state(depth_write, wgpu::DepthBiasState::default())),
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(fs),
            compilation_options: options,
            targets: &scene_targets(color, None, true),
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// The depth-only shadow caster pipeline.
fn shadow_pipeline(device: &wgpu::Device, layout: &wgpu::PipelineLayout) -> wgpu::RenderPipeline {
    let module = shader(device, "terrain shadow", include_str!("../../shaders/shadow.wgsl"));
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("terrain shadow"),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_shadow"),
            compilation_options: Default::default(),
            buffers: &[Some(vertex::vertex_layout())],
        },
        // Faces turned from the sun are culled: the terrain is closed (skirts are stored with both
        // windings), so along any sun ray the first surface is one facing it, and the map is the
        // same with half the triangles rasterised.
        primitive: wgpu::PrimitiveState { front_face: wgpu::FrontFace::Ccw, cull_mode: Some(wgpu::Face::Back), ..Default::default() },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: SHADOW_FORMAT,
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
    })
}

impl TerrainPipelines {
    /// Compiles the shader module for colour format `color`; pipelines come with
    /// [`TerrainPipelines::prepare`].
    pub fn new(device: &wgpu::Device, layouts: &Layouts, color: wgpu::TextureFormat, wire_method: WireMethod) -> Self {
        let module =
            shader(device, "terrain", &format!("{}\n{}", include_str!("../../shaders/sunlight.wgsl"), include_str!("../../shaders/terrain.wgsl")));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain"),
            bind_group_layouts: &[Some(&layouts.frame), Some(&layouts.tile), Some(&layouts.surface)],
            immediate_size: 0,
        });
        let shadow_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain shadow"),
            bind_group_layouts: &[Some(&layouts.frame)],
            immediate_size: 0,
        });
        TerrainPipelines { module, layout, color, fill: Default::default(), wire: None, shadow_layout, shadow: None, wire_method }
    }

    /// Builds the fill pipeline of `mode` (`ViewMode::shader_index`), the wireframe pipeline when
    /// `wire` and the shadow caster when `shadow`, if they do not exist yet. The shadow caster
    /// compiles on a second thread while this one compiles the fill (a driver compiles each on its
    /// calling thread: start-up time otherwise paid twice).
    pub fn prepare(&mut self, device: &wgpu::Device, mode: u32, wire: bool, shadow: bool) {
        let build_shadow = shadow && self.shadow.is_none();
        let shadow_layout = self.shadow_layout.clone();
        let built = std::thread::scope(|s| {
            let caster = build_shadow.then(|| s.spawn(|| shadow_pipeline(device, &shadow_layout)));
            self.prepare_main(device, mode, wire);
            caster.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        if built.is_some() {
            self.shadow = built;
        }
    }

    /// The fill pipeline of `mode` (`ViewMode::shader_index`), if prepared.
    pub fn fill(&self, mode: u32) -> Option<&wgpu::RenderPipeline> {
        self.fill[(mode as usize).min(MODES - 1)].as_ref()
    }

    /// The wireframe pipeline, if prepared.
    pub fn wire(&self) -> Option<&wgpu::RenderPipeline> {
        self.wire.as_ref()
    }

    /// The shadow caster pipeline, if prepared.
    pub fn shadow(&self) -> Option<&wgpu::RenderPipeline> {
        self.shadow.as_ref()
    }

    fn prepare_main(&mut self, device: &wgpu::Device, mode: u32, wire: bool) {
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
            *slot = Some(pipeline(
                device,
                (&self.module, &self.layout, self.color),
                &label,
                ("vs_terrain", "fs_terrain"),
                &[("MODE", mode as f64)],
                primitive,
                true,
            ));
        }
    }
}
