//! The trees' pipelines: bark (one-sided), leaves (two-sided, alpha-tested) and impostors
//! (camera-facing quads writing their atlas depth), per view mode, and the same three as shadow
//! casters. Built on first use.

use super::gpu::{instance_layout, mesh_layout};
use crate::passes::{depth_state, scene_targets, shader, Layouts, SHADOW_FORMAT};
use crate::view_mode::ViewMode;

/// Shader modes (`MODE` in `trees.wgsl`).
const MODES: usize = 5;

/// The trees shader's mode for a view mode: lit, by representation, AO, normals, indirect.
pub fn shader_mode(mode: ViewMode) -> usize {
    match mode {
        ViewMode::Lit | ViewMode::Bounds | ViewMode::Wireframe | ViewMode::Grass | ViewMode::Caustics | ViewMode::WaterMask => 0,
        ViewMode::Trees | ViewMode::Lod => 1,
        ViewMode::Ao => 2,
        ViewMode::Normals => 3,
        ViewMode::Indirect => 4,
    }
}

/// Which of the three kinds of draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Opaque one-sided bark.
    Bark,
    /// Two-sided, alpha-tested leaves.
    Leaf,
    /// The impostor quad.
    Impostor,
}

/// All pipelines of the layer.
pub struct TreePipelines {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    shadow_layout: wgpu::PipelineLayout,
    color: wgpu::TextureFormat,
    fill: [[Option<wgpu::RenderPipeline>; 3]; MODES],
    shadow: Option<[wgpu::RenderPipeline; 3]>,
}

fn entry(kind: Kind, shadow: bool) -> (&'static str, Option<&'static str>) {
    match (kind, shadow) {
        (Kind::Bark, false) => ("vs_mesh", Some("fs_bark")),
        (Kind::Leaf, false) => ("vs_leaf", Some("fs_leaf")),
        (Kind::Impostor, false) => ("vs_impostor", Some("fs_impostor")),
        (Kind::Bark, true) => ("vs_mesh_shadow", None),
        (Kind::Leaf, true) => ("vs_mesh_shadow", Some("fs_leaf_shadow")),
        (Kind::Impostor, true) => ("vs_impostor_shadow", Some("fs_impostor_shadow")),
    }
}

impl TreePipelines {
    /// The module and layouts; pipelines come with [`TreePipelines::prepare`].
    pub fn new(device: &wgpu::Device, layouts: &Layouts, material: &wgpu::BindGroupLayout, color: wgpu::TextureFormat) -> Self {
        let module =
            shader(device, "trees", &format!("{}\n{}", include_str!("../../shaders/sunlight.wgsl"), include_str!("../../shaders/trees.wgsl")));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("trees"),
            bind_group_layouts: &[Some(&layouts.frame), Some(material), Some(&layouts.surface)],
            immediate_size: 0,
        });
        let shadow_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("trees shadow"),
            bind_group_layouts: &[Some(&layouts.frame), Some(material)],
            immediate_size: 0,
        });
        TreePipelines { module, layout, shadow_layout, color, fill: Default::default(), shadow: None }
    }

    fn build(&self, device: &wgpu::Device, kind: Kind, shadow: bool, mode: usize) -> wgpu::RenderPipeline {
        let (vs, fs) = entry(kind, shadow);
        let constants: &[(&str, f64)] = if shadow { &[] } else { &[("MODE", mode as f64)] };
        let options = wgpu::PipelineCompilationOptions { constants, ..Default::default() };
        let buffers: Vec<Option<wgpu::VertexBufferLayout<'_>>> =
            if kind == Kind::Impostor { vec![Some(instance_layout())] } else { vec![Some(mesh_layout()), Some(instance_layout())] };
        let cull_mode = if kind == Kind::Bark && !shadow { Some(wgpu::Face::Back) } else { None };
        let targets = scene_targets(self.color, None, true);
        let depth = if shadow {
            wgpu::DepthStencilState {
                format: SHADOW_FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::LessEqual),
                stencil: wgpu::StencilState::default(),
                bias: wgpu::DepthBiasState { constant: 2, slope_scale: 2.0, clamp: 0.0 },
            }
        } else {
            depth_state(true, wgpu::DepthBiasState::default())
        };
        let label = format!("trees {kind:?} shadow {shadow} mode {mode}");
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(&label),
            layout: Some(if shadow { &self.shadow_layout } else { &self.layout }),
            vertex: wgpu::VertexState { module: &self.module, entry_point: Some(vs), compilation_options: options.clone(), buffers: &buffers },
            primitive: wgpu::PrimitiveState { front_face: wgpu::FrontFace::Ccw, cull_mode, ..Default::default() },
            depth_stencil: Some(depth),
            multisample: wgpu::MultisampleState::default(),
            fragment: fs.map(|fs| wgpu::FragmentState {
                module: &self.module,
                entry_point: Some(fs),
                compilation_options: options,
                targets: if shadow { &[] } else { &targets },
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Builds the fill pipelines of `mode` and, when `shadow`, the casters, if missing.
    pub fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode) {
        let m = shader_mode(mode);
        if self.fill[m][0].is_none() {
            let built = [Kind::Bark, Kind::Leaf, Kind::Impostor].map(|k| Some(self.build(device, k, false, m)));
            self.fill[m] = built;
        }
        if mode.shadowed() && self.shadow.is_none() {
            self.shadow = Some([Kind::Bark, Kind::Leaf, Kind::Impostor].map(|k| self.build(device, k, true, 0)));
        }
    }

    /// The fill pipeline of `kind` in `mode`, if prepared.
    pub fn fill(&self, mode: ViewMode, kind: Kind) -> Option<&wgpu::RenderPipeline> {
        self.fill[shader_mode(mode)][kind as usize].as_ref()
    }

    /// The shadow caster of `kind`, if prepared.
    pub fn shadow(&self, kind: Kind) -> Option<&wgpu::RenderPipeline> {
        self.shadow.as_ref().map(|s| &s[kind as usize])
    }
}
