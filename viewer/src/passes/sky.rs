//! Sky pass: a full-screen triangle with the sky gradient and the sun, drawn after the terrain fill
//! at the far plane (depth 0 in reverse-Z) with the depth test on, so it shades only the pixels no
//! terrain covered.

use super::{depth_state, scene_targets, shader, Layouts};

/// The sky pipeline.
pub struct SkyPass {
    pipeline: wgpu::RenderPipeline,
}

impl SkyPass {
    /// Builds the pipeline for colour format `color`.
    pub fn new(device: &wgpu::Device, layouts: &Layouts, color: wgpu::TextureFormat) -> Self {
        let module = shader(device, "sky", include_str!("../shaders/sky.wgsl"));
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sky"),
            bind_group_layouts: &[Some(&layouts.frame)],
            immediate_size: 0,
        });
        let depth = depth_state(false, wgpu::DepthBiasState::default());
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("sky"),
            layout: Some(&layout),
            vertex: wgpu::VertexState { module: &module, entry_point: Some("vs_sky"), compilation_options: Default::default(), buffers: &[] },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(depth),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_sky"),
                compilation_options: Default::default(),
                targets: &scene_targets(color, None, true),
            }),
            multiview_mask: None,
            cache: None,
        });
        SkyPass { pipeline }
    }

    /// Draws the sky (group 0 must be bound to the frame uniforms).
    pub fn record(&self, pass: &mut wgpu::RenderPass<'_>, frame: &wgpu::BindGroup) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, frame, &[]);
        pass.draw(0..3, 0..1);
    }
}
