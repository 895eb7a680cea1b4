//! The framework's own passes and what they share with the layers ([`crate::layers`]). The frame is:
//!
//! 1. [`shadow`]: every layer's casters, depth from the sun into the shadow map (its own render
//!    pass; the framework schedules it, each layer records its casters);
//! 2. the main pass, colour + tile id + depth (reverse-Z), phase by phase: the layers' opaque
//!    surfaces, the [`sky`] where nothing was drawn, then the layers' transparent, volumetric and
//!    overlay draws, with the [`bounds`] mode's boxes in the overlay phase;
//! 3. [`hud`]: text over the finished colour (its own pass, no depth).
//!
//! Bind groups are shared: group 0 = frame uniforms, group 1 = per-tile uniforms (dynamic offset),
//! group 2 = the shadow map and the material noise texture ([`noise`]) (surfaces only, so the
//! shadow pass can write the map).

pub mod bounds;
pub mod font;
pub mod hud;
pub mod noise;
pub mod shadow;
pub mod sky;

use crate::renderer::uniforms::{FrameUniforms, TileUniforms};

/// Depth format of the main pass (reverse-Z, cleared to 0).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Format of the tile-id attachment (`renderer::pick::encode`).
pub const ID_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Uint;
/// Format of the shadow maps (layers build their caster pipelines for it).
pub const SHADOW_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// The bind group layouts shared by the 3D passes and the layers.
pub struct Layouts {
    /// Group 0: the frame uniforms (camera, light, exposure), one buffer per view.
    pub frame: wgpu::BindGroupLayout,
    /// Group 1: per-tile uniforms at a dynamic offset into one shared buffer.
    pub tile: wgpu::BindGroupLayout,
    /// Group 2 of surfaces: shadow map + comparison sampler, material noise + sampler.
    pub surface: wgpu::BindGroupLayout,
}

impl Layouts {
    /// A frame-uniforms buffer with its group-0 bind group (the camera pass and each shadow map
    /// have one).
    pub fn frame_uniforms(&self, device: &wgpu::Device, label: &str) -> (wgpu::Buffer, wgpu::BindGroup) {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: std::mem::size_of::<FrameUniforms>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.frame,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: buffer.as_entire_binding() }],
        });
        (buffer, group)
    }

    /// Creates the three layouts.
    pub fn new(device: &wgpu::Device) -> Self {
        let uniform = |dynamic: bool, size: usize| wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: dynamic,
                min_binding_size: wgpu::BufferSize::new(size as u64),
            },
            count: None,
        };
        let frame = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("frame"),
            entries: &[uniform(false, std::mem::size_of::<FrameUniforms>())],
        });
        let tile = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("tile"),
            entries: &[uniform(true, std::mem::size_of::<TileUniforms>())],
        });
        let surface = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("shadow map and material noise"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Depth,
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 3,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        Layouts { frame, tile, surface }
    }
}

/// A vertex buffer rewritten every frame: grown (to a power of two) only when the data outgrows
/// it, so steady frames allocate nothing.
pub struct StreamBuffer {
    label: &'static str,
    buffer: Option<wgpu::Buffer>,
    /// Elements written by the last [`StreamBuffer::write`].
    pub len: u32,
}

impl StreamBuffer {
    /// An empty buffer.
    pub fn new(label: &'static str) -> Self {
        StreamBuffer { label, buffer: None, len: 0 }
    }

    /// Replaces the contents with `data`.
    pub fn write<T: bytemuck::Pod>(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, data: &[T]) {
        self.len = data.len() as u32;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.is_empty() {
            return;
        }
        if self.buffer.as_ref().is_none_or(|b| b.size() < bytes.len() as u64) {
            self.buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(self.label),
                size: (bytes.len() as u64).next_power_of_two(),
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        if let Some(b) = &self.buffer {
            queue.write_buffer(b, 0, bytes);
        }
    }

    /// The buffer, if the last write was not empty.
    pub fn get(&self) -> Option<&wgpu::Buffer> {
        self.buffer.as_ref().filter(|_| self.len > 0)
    }
}

/// Compiles `common.wgsl` followed by a pass's own source, so the passes share one definition of
/// the frame uniforms and the sky.
pub fn shader(device: &wgpu::Device, label: &str, source: &str) -> wgpu::ShaderModule {
    let full = format!("{}\n{}", include_str!("../shaders/common.wgsl"), source);
    device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(full.into()) })
}

/// The two colour targets of the main pass: scene colour (optionally blended) and the tile id
/// (`write_id` false masks it, for overlays that must not change what is picked).
pub fn scene_targets(color: wgpu::TextureFormat, blend: Option<wgpu::BlendState>, write_id: bool) -> [Option<wgpu::ColorTargetState>; 2] {
    [
        Some(wgpu::ColorTargetState { format: color, blend, write_mask: wgpu::ColorWrites::ALL }),
        Some(wgpu::ColorTargetState {
            format: ID_FORMAT,
            blend: None,
            write_mask: if write_id { wgpu::ColorWrites::ALL } else { wgpu::ColorWrites::empty() },
        }),
    ]
}

/// Reverse-Z depth state: nearer is greater.
pub fn depth_state(write: bool, bias: wgpu::DepthBiasState) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: DEPTH_FORMAT,
        depth_write_enabled: Some(write),
        depth_compare: Some(wgpu::CompareFunction::GreaterEqual),
        stencil: wgpu::StencilState::default(),
        bias,
    }
}
