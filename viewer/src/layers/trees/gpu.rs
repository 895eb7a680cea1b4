//! The trees' world-wide GPU resources: the prototypes' mesh buffers, species textures, impostor
//! atlases, the dither noise, and their bind groups (group 1 of the trees' pipelines).

use wgpu::util::DeviceExt;

use super::assets::{TreeAssets, TreeVertex};
use super::decode::GpuTree;

/// Side of the dither noise texture (3DWorld's 128×128).
pub const DITHER_SIZE: u32 = 128;

/// The dither noise: every value 0–255 exactly 64 times, in a hashed order, so the share of
/// pixels below a threshold is the threshold (to 1/256) over any 128×128 window.
pub fn dither_noise() -> Vec<u8> {
    let n = (DITHER_SIZE * DITHER_SIZE) as usize;
    let mut order: Vec<(u32, usize)> = (0..n).map(|i| (super::decode::tree_hash([i as f32, 0.5, 0.25], i as u32), i)).collect();
    order.sort_unstable();
    let mut out = vec![0u8; n];
    for (rank, &(_, i)) in order.iter().enumerate() {
        out[i] = (rank * 256 / n) as u8;
    }
    out
}

/// Per-prototype atlas parameters (`Atlas` in `trees.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AtlasUniforms {
    /// xyz bounding-sphere centre (object space), w radius.
    pub center: [f32; 4],
    /// Views per side, texels per view, layout (0 octahedral, 1 hemi), mip levels.
    pub params: [u32; 4],
}

const MESH_ATTRS: [wgpu::VertexAttribute; 4] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Snorm16x4, 2 => Float32x2, 3 => Unorm8x4];
const TREE_ATTRS: [wgpu::VertexAttribute; 7] =
    wgpu::vertex_attr_array![4 => Float32x4, 5 => Float32x4, 6 => Float32x4, 7 => Float32x4, 8 => Float32x4, 9 => Uint32, 10 => Uint32x2];

/// Layout of the prototype vertices (buffer 0 of mesh pipelines).
pub fn mesh_layout() -> wgpu::VertexBufferLayout<'static> {
    wgpu::VertexBufferLayout {
        array_stride: std::mem::size_of::<TreeVertex>() as u64,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &MESH_ATTRS,
    }
}

/// Layout of the instances (buffer 1 of mesh pipelines, buffer 0 of impostor pipelines).
pub fn instance_layout() -> wgpu::VertexBufferLayout<'static> {
    wgpu::VertexBufferLayout {
        array_stride: std::mem::size_of::<GpuTree>() as u64,
        step_mode: wgpu::VertexStepMode::Instance,
        attributes: &TREE_ATTRS,
    }
}

/// The group-1 layout: three textures, a repeating and a clamping sampler, the dither noise and
/// the atlas parameters.
pub fn material_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    let tex = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    };
    let sampler = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("trees material"),
        entries: &[
            tex(0),
            tex(1),
            tex(2),
            sampler(3),
            sampler(4),
            tex(5),
            wgpu::BindGroupLayoutEntry {
                binding: 6,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
                count: None,
            },
        ],
    })
}

/// A 2D texture with the given mips (`(side_x, side_y, bytes)` each), uploaded now.
fn texture(device: &wgpu::Device, queue: &wgpu::Queue, label: &str, format: wgpu::TextureFormat, mips: &[(u32, u32, &[u8])]) -> wgpu::TextureView {
    let (w, h, _) = mips[0];
    let texel = format.block_copy_size(None).unwrap_or(4);
    let t = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
        mip_level_count: mips.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (level, &(mw, mh, bytes)) in mips.iter().enumerate() {
        queue.write_texture(
            wgpu::TexelCopyTextureInfo { texture: &t, mip_level: level as u32, origin: wgpu::Origin3d::ZERO, aspect: wgpu::TextureAspect::All },
            bytes,
            wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(mw * texel), rows_per_image: Some(mh) },
            wgpu::Extent3d { width: mw, height: mh, depth_or_array_layers: 1 },
        );
    }
    t.create_view(&wgpu::TextureViewDescriptor::default())
}

fn chain(c: &[kiln_formats::sections::Rgba8Level]) -> Vec<(u32, u32, &[u8])> {
    c.iter().map(|l| (l.width, l.height, l.rgba.as_slice())).collect()
}

/// The uploaded shared assets.
pub struct SharedGpu {
    /// Every prototype's vertices.
    pub vertices: wgpu::Buffer,
    /// Every prototype's indices.
    pub indices: wgpu::Buffer,
    /// Per species: bark + leaf textures.
    pub species: Vec<wgpu::BindGroup>,
    /// Per prototype (when the bake has impostors): its atlas.
    pub atlases: Vec<wgpu::BindGroup>,
}

impl SharedGpu {
    /// Uploads `assets`.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, layout: &wgpu::BindGroupLayout, assets: &TreeAssets) -> Self {
        let buffer =
            |label, contents: &[u8], usage| device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage });
        let vertices = buffer("tree vertices", bytemuck::cast_slice(&assets.vertices), wgpu::BufferUsages::VERTEX);
        let indices = buffer("tree indices", bytemuck::cast_slice(&assets.indices), wgpu::BufferUsages::INDEX);
        let sampler = |mode| {
            device.create_sampler(&wgpu::SamplerDescriptor {
                label: Some("trees"),
                address_mode_u: mode,
                address_mode_v: mode,
                mag_filter: wgpu::FilterMode::Linear,
                min_filter: wgpu::FilterMode::Linear,
                mipmap_filter: wgpu::MipmapFilterMode::Linear,
                anisotropy_clamp: 1,
                ..Default::default()
            })
        };
        let (repeat, clamp) = (sampler(wgpu::AddressMode::Repeat), sampler(wgpu::AddressMode::ClampToEdge));
        let noise = dither_noise();
        let dither = texture(device, queue, "tree dither", wgpu::TextureFormat::R8Unorm, &[(DITHER_SIZE, DITHER_SIZE, &noise)]);
        let dummy_depth = texture(device, queue, "no depth", wgpu::TextureFormat::R16Float, &[(1, 1, &[0, 0])]);
        let group = |label: &str, a: &wgpu::TextureView, b: &wgpu::TextureView, c: &wgpu::TextureView, u: AtlasUniforms| {
            let ub = buffer("atlas uniforms", bytemuck::bytes_of(&u), wgpu::BufferUsages::UNIFORM);
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(a) },
                    wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(b) },
                    wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::TextureView(c) },
                    wgpu::BindGroupEntry { binding: 3, resource: wgpu::BindingResource::Sampler(&repeat) },
                    wgpu::BindGroupEntry { binding: 4, resource: wgpu::BindingResource::Sampler(&clamp) },
                    wgpu::BindGroupEntry { binding: 5, resource: wgpu::BindingResource::TextureView(&dither) },
                    wgpu::BindGroupEntry { binding: 6, resource: ub.as_entire_binding() },
                ],
            })
        };
        let srgb = wgpu::TextureFormat::Rgba8UnormSrgb;
        let species = assets
            .textures
            .iter()
            .map(|(bark, leaf)| {
                let b = texture(device, queue, "bark", srgb, &chain(bark));
                let l = texture(device, queue, "leaf", srgb, &chain(leaf));
                group("tree species", &b, &l, &dummy_depth, AtlasUniforms { center: [0.0; 4], params: [2, 1, 0, 1] })
            })
            .collect();
        let atlases = assets
            .atlases
            .iter()
            .zip(&assets.prototypes)
            .map(|(a, p)| {
                let albedo: Vec<_> = a.mips.iter().map(|m| (m.size, m.size, m.albedo.as_slice())).collect();
                let normal: Vec<_> = a.mips.iter().map(|m| (m.size, m.size, m.normal.as_slice())).collect();
                let depth: Vec<_> = a.mips.iter().map(|m| (m.size, m.size, bytemuck::cast_slice::<u16, u8>(&m.depth))).collect();
                let al = texture(device, queue, "impostor albedo", srgb, &albedo);
                let no = texture(device, queue, "impostor normal", wgpu::TextureFormat::Rgba8Unorm, &normal);
                let de = texture(device, queue, "impostor depth", wgpu::TextureFormat::R16Float, &depth);
                let layout_id = match a.layout {
                    super::octahedral::Layout::Octahedral => 0,
                    super::octahedral::Layout::HemiOctahedral => 1,
                };
                let u = AtlasUniforms {
                    center: [p.center[0], p.center[1], p.center[2], p.radius],
                    params: [a.grid, a.view_px, layout_id, a.mips.len() as u32],
                };
                group("impostor atlas", &al, &no, &de, u)
            })
            .collect();
        SharedGpu { vertices, indices, species, atlases }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dither_noise_is_uniform_and_deterministic() {
        let n = dither_noise();
        let mut hist = [0u32; 256];
        n.iter().for_each(|&v| hist[v as usize] += 1);
        assert!(hist.iter().all(|&c| c == 64), "every value 64 times");
        assert_eq!(n, dither_noise());
        // Not a gradient: neighbours differ.
        let same = n.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(same < 200, "{same} equal neighbours");
    }
}
