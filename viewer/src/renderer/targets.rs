//! The frame's own GPU resources: the depth and tile-id targets and the tile uniforms' buffer.

use super::uniforms::TileUniforms;
use crate::passes::{Layouts, DEPTH_FORMAT, ID_FORMAT};

fn target(device: &wgpu::Device, label: &str, format: wgpu::TextureFormat, size: [u32; 2], usage: wgpu::TextureUsages) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d { width: size[0].max(1), height: size[1].max(1), depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | usage,
        view_formats: &[],
    })
}

/// The depth target (read by a refracting layer) and the tile-id target (copyable, for
/// picking) of a `size` frame.
pub(super) type DepthAndId = ((wgpu::Texture, wgpu::TextureView), (wgpu::Texture, wgpu::TextureView));

/// Makes [`DepthAndId`] for a `size` frame.
pub(super) fn depth_and_id(device: &wgpu::Device, size: [u32; 2]) -> DepthAndId {
    let depth = target(device, "depth", DEPTH_FORMAT, size, wgpu::TextureUsages::TEXTURE_BINDING);
    let depth = (depth.clone(), depth.create_view(&Default::default()));
    let id = target(device, "tile id", ID_FORMAT, size, wgpu::TextureUsages::COPY_SRC);
    let id_view = id.create_view(&Default::default());
    (depth, (id, id_view))
}

/// The tile uniforms' buffer for `capacity` tiles of `stride` bytes, and its bind group.
pub(super) fn tile_uniforms(device: &wgpu::Device, layouts: &Layouts, stride: u32, capacity: usize) -> (wgpu::Buffer, wgpu::BindGroup) {
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tile uniforms"),
        size: stride as u64 * capacity as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("tile uniforms"),
        layout: &layouts.tile,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &buffer,
                offset: 0,
                size: wgpu::BufferSize::new(std::mem::size_of::<TileUniforms>() as u64),
            }),
        }],
    });
    (buffer, group)
}
