//! The grass's GPU layouts and pipelines: the per-frame tables (`grass_common.wgsl`), the
//! selection's compute pipeline and the blade, flower and tint pipelines per view mode.

use crate::passes::{depth_state, scene_targets, shader, Layouts};
use crate::view_mode::ViewMode;

/// `Params` in `grass_common.wgsl` (288 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuParams {
    /// Camera position.
    pub eye: [f32; 4],
    /// The view frustum's planes (`n·p + d ≥ 0` inside).
    pub planes: [[f32; 4]; 6],
    /// `d_1 … d_15` at index k − 1.
    pub switches: [[f32; 4]; 4],
    /// The grass distance `D`.
    pub distance: f32,
    /// Relative spread of the switch thresholds.
    pub stagger: f32,
    /// The forced level, or −1.
    pub force: i32,
    /// Levels per patch.
    pub levels: u32,
    /// Side of a patch.
    pub patch_size: f32,
    /// Seconds, for the wind.
    pub time: f32,
    /// Unused (the view mode is a pipeline constant).
    pub mode: u32,
    /// Padding.
    pub pad: u32,
    /// The ground tint (rgb).
    pub tint: [f32; 4],
    /// Segments per level.
    pub segments: [[u32; 4]; 4],
}

/// `Job` in `grass_select.wgsl`: the blades of one level (or the flowers) of one instance.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuJob {
    /// World xy of the patch's min corner.
    pub origin: [f32; 2],
    /// Multiplies blade lengths.
    pub height_scale: f32,
    /// Index into this frame's tile table.
    pub tile: u32,
    /// The instance's hash key.
    pub key: u32,
    /// Rotation | level << 2 (level = levels: flowers).
    pub misc: u32,
    /// First blade (or flower), absolute.
    pub first: u32,
    /// Blades (or flowers).
    pub count: u32,
}

/// `TileInfo` in `grass_common.wgsl`: where a tile's ground samples are and how they lie.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuTileInfo {
    /// World xy of sample (0, 0).
    pub origin: [f32; 2],
    /// Units between samples.
    pub spacing: f32,
    /// Samples per side.
    pub size: u32,
    /// First word of its samples in the shared samples buffer.
    pub base: u32,
    /// The tile id as the picking target stores it.
    pub pick: u32,
}

/// Bytes of one drawn entry (`Entry`).
pub const ENTRY_BYTES: u64 = 32;
/// Workgroup size of `cs_select`.
pub const WORKGROUP: u32 = 64;

/// The shader's mode for a view mode: lit, colour by level, normals, ground light.
pub fn shader_mode(mode: ViewMode) -> usize {
    match mode {
        ViewMode::Lit | ViewMode::Bounds | ViewMode::Wireframe | ViewMode::Trees | ViewMode::Caustics | ViewMode::WaterMask => 0,
        ViewMode::Grass | ViewMode::Lod => 1,
        ViewMode::Normals => 2,
        ViewMode::Ao | ViewMode::Indirect => 3,
    }
}

const MODES: usize = 4;

fn storage(binding: u32, read_only: bool, dynamic: bool, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Storage { read_only }, has_dynamic_offset: dynamic, min_binding_size: None },
        count: None,
    }
}

fn uniform(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
        count: None,
    }
}

/// Every pipeline of the layer and its layouts.
pub struct GrassPipelines {
    /// Group 0 of the selection: params, blades, flowers, samples, tiles, jobs, chunks, args, entries, regions.
    pub select_layout: wgpu::BindGroupLayout,
    /// Group 1 of the draws: params, blades, flowers, entries (dynamic offset), tiles, samples.
    pub draw_layout: wgpu::BindGroupLayout,
    /// The selection.
    pub select: wgpu::ComputePipeline,
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    color: wgpu::TextureFormat,
    /// Per shader mode: blades, flowers, tint.
    draw: [Option<[wgpu::RenderPipeline; 3]>; MODES],
}

impl GrassPipelines {
    /// The layouts, the compute pipeline and the module of the draws (their pipelines come with
    /// [`GrassPipelines::prepare`]).
    pub fn new(device: &wgpu::Device, layouts: &Layouts, color: wgpu::TextureFormat) -> Self {
        let c = wgpu::ShaderStages::COMPUTE;
        let select_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("grass select"),
            entries: &[
                uniform(0, c),
                storage(1, true, false, c),
                storage(2, true, false, c),
                storage(3, true, false, c),
                storage(4, true, false, c),
                storage(5, true, false, c),
                storage(6, true, false, c),
                storage(7, false, false, c),
                storage(8, false, false, c),
                storage(9, true, false, c),
            ],
        });
        let v = wgpu::ShaderStages::VERTEX_FRAGMENT;
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("grass draw"),
            entries: &[
                uniform(0, v),
                storage(1, true, false, wgpu::ShaderStages::VERTEX),
                storage(2, true, false, wgpu::ShaderStages::VERTEX),
                storage(3, true, true, wgpu::ShaderStages::VERTEX),
                storage(4, true, false, wgpu::ShaderStages::VERTEX),
                storage(5, true, false, wgpu::ShaderStages::VERTEX),
            ],
        });
        let common = include_str!("../../shaders/grass_common.wgsl");
        let cs = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("grass select"),
            source: wgpu::ShaderSource::Wgsl(format!("{common}\n{}", include_str!("../../shaders/grass_select.wgsl")).into()),
        });
        let select_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("grass select"),
            bind_group_layouts: &[Some(&select_layout)],
            immediate_size: 0,
        });
        let select = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("grass select"),
            layout: Some(&select_pl),
            module: &cs,
            entry_point: Some("cs_select"),
            compilation_options: Default::default(),
            cache: None,
        });
        let module = shader(
            device,
            "grass",
            &format!("{}\n{common}\n{}", include_str!("../../shaders/sunlight.wgsl"), include_str!("../../shaders/grass.wgsl")),
        );
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("grass"),
            bind_group_layouts: &[Some(&layouts.frame), Some(&draw_layout), Some(&layouts.surface)],
            immediate_size: 0,
        });
        GrassPipelines { select_layout, draw_layout, select, module, layout, color, draw: Default::default() }
    }

    fn build(&self, device: &wgpu::Device, vs: &str, fs: &str, mode: usize, strip: bool, blend: bool) -> wgpu::RenderPipeline {
        let constants: &[(&str, f64)] = &[("MODE", mode as f64)];
        let options = wgpu::PipelineCompilationOptions { constants, ..Default::default() };
        let targets =
            if blend { scene_targets(self.color, Some(wgpu::BlendState::ALPHA_BLENDING), false) } else { scene_targets(self.color, None, true) };
        let topology = if strip { wgpu::PrimitiveTopology::TriangleStrip } else { wgpu::PrimitiveTopology::TriangleList };
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(&format!("grass {vs} mode {mode}")),
            layout: Some(&self.layout),
            vertex: wgpu::VertexState { module: &self.module, entry_point: Some(vs), compilation_options: options.clone(), buffers: &[] },
            // Blades are two-sided: no culling; the tint is seen from above only.
            primitive: wgpu::PrimitiveState { topology, cull_mode: blend.then_some(wgpu::Face::Back), ..Default::default() },
            depth_stencil: Some(depth_state(!blend, wgpu::DepthBiasState::default())),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState { module: &self.module, entry_point: Some(fs), compilation_options: options, targets: &targets }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Builds the draws of `mode` if missing.
    pub fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode) {
        let m = shader_mode(mode);
        if self.draw[m].is_none() {
            let built = [
                self.build(device, "vs_blade", "fs_blade", m, true, false),
                self.build(device, "vs_flower", "fs_flower", m, false, false),
                self.build(device, "vs_tint", "fs_tint", m, false, true),
            ];
            self.draw[m] = Some(built);
        }
    }

    /// Blades, flowers and tint of `mode`, if prepared.
    pub fn draw(&self, mode: ViewMode) -> Option<&[wgpu::RenderPipeline; 3]> {
        self.draw[shader_mode(mode)].as_ref()
    }
}
