//! Render passes, one module each. The frame is:
//!
//! 1. [`shadow`]: terrain depth from the sun into the shadow map (its own render pass);
//! 2. the main pass, colour + tile id + depth (reverse-Z): [`sky`], then [`terrain`] (fill, and the
//!    wireframe overlay in that mode), then [`bounds`] (tile boxes, in that mode);
//! 3. [`hud`]: text over the finished colour (its own pass, no depth).
//!
//! Bind groups are shared: group 0 = frame uniforms, group 1 = per-tile uniforms (dynamic offset),
//! group 2 = the shadow map (terrain only, so the shadow pass can write it).

pub mod bounds;
pub mod font;
pub mod hud;
pub mod shadow;
pub mod sky;
pub mod terrain;

use crate::renderer::tiles::GpuTile;
use crate::renderer::uniforms::{FrameUniforms, TileUniforms};

/// Depth format of the main pass (reverse-Z, cleared to 0).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Format of the tile-id attachment (`renderer::pick::encode`).
pub const ID_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rg32Uint;

/// One tile to draw and the dynamic offset of its [`TileUniforms`].
pub struct DrawItem<'a> {
    pub tile: &'a GpuTile,
    pub uniform_offset: u32,
}

/// The bind group layouts shared by the 3D passes.
pub struct Layouts {
    pub frame: wgpu::BindGroupLayout,
    pub tile: wgpu::BindGroupLayout,
    pub shadow: wgpu::BindGroupLayout,
}

impl Layouts {
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
        let shadow = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("shadow map"),
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
            ],
        });
        Layouts { frame, tile, shadow }
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
