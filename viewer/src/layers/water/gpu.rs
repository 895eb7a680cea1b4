//! The water's world-wide GPU resources: the wave and caustic texture arrays (uploaded once), the
//! per-frame uniform block, the copy of the scene the surface refracts, the bind group (group 3)
//! over all of them, and the pipelines.

use super::assets::WaveAssets;
use super::decode::WaterVertex;
use crate::passes::{depth_state, scene_targets, shader, Layouts, DEPTH_FORMAT};

/// Per-frame constants of the water (`Water` in `water.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WaterUniform {
    /// x 1/patch size, y frame position in `[0, F)`, z frames `F`, w caustic planes `D`.
    pub waves: [f32; 4],
    /// xy caustic map shift per unit depth (baked sun → the viewer's), z the maps' flat
    /// transmittance, w 1 when the scene colour was copied this frame.
    pub caustic: [f32; 4],
    /// The caustic planes' depths (up to 8).
    pub depths: [[f32; 4]; 2],
    /// x the shore's foam band, y the depth over which the waves calm toward the shore, z the depth
    /// scale of the water mask's colours: world units, all from the wave patch's size (so a world
    /// of 10 m units and one of 1 m units look alike); w unused.
    pub scale: [f32; 4],
    /// The part of the frame the scene copy holds, in pixels: x0, y0, x1, y1 (exclusive).
    pub copy_rect: [f32; 4],
}

/// Lengths of the shore effects per unit of wave patch ([`WaterUniform::scale`]): foam band, calm
/// depth and the mask's depth scale, as fractions of the patch side.
pub const SHORE_SCALE: [f32; 3] = [1.0 / 16.0, 1.0 / 16.0, 1.0 / 8.0];

/// What the layer draws with a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The surface grid of each tile (lit, or the water mask).
    Surface,
    /// The caustics view mode: one full-screen triangle.
    Caustics,
    /// Underwater fog, first draw: the scene times the transmittance.
    FogAbsorb,
    /// Underwater fog, second draw: plus the water's own colour.
    FogScatter,
}

/// A `r`² × `layers` array of `format` (`texel_bytes` each) holding `data`, layer after layer.
fn array_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    label: &str,
    (format, texel_bytes): (wgpu::TextureFormat, u32),
    (r, layers): (u32, u32),
    data: &[u8],
) -> wgpu::TextureView {
    let tex = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d { width: r, height: r, depth_or_array_layers: layers },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    queue.write_texture(
        wgpu::TexelCopyTextureInfo { texture: &tex, mip_level: 0, origin: wgpu::Origin3d::ZERO, aspect: wgpu::TextureAspect::All },
        data,
        wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(r * texel_bytes), rows_per_image: Some(r) },
        wgpu::Extent3d { width: r, height: r, depth_or_array_layers: layers },
    );
    tex.create_view(&wgpu::TextureViewDescriptor { dimension: Some(wgpu::TextureViewDimension::D2Array), ..Default::default() })
}

/// The scene the surface refracts: a copy of the colour (the target's format, the size of the
/// frame) and the main pass's own depth texture, bound as it is (read-only after the sky phase).
struct SceneCopy {
    format: wgpu::TextureFormat,
    color: wgpu::Texture,
    depth: wgpu::Texture,
}

/// Everything of the water on the GPU that is not per tile.
pub struct WaterGpu {
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    module: wgpu::ShaderModule,
    color: wgpu::TextureFormat,
    surface: wgpu::TextureView,
    normals: wgpu::TextureView,
    caustics: wgpu::TextureView,
    sampler: wgpu::Sampler,
    /// The uniform block (`WaterUniform`).
    pub uniform: wgpu::Buffer,
    scene: Option<SceneCopy>,
    /// Group 3, once the scene was copied.
    pub group: Option<wgpu::BindGroup>,
    pipelines: std::collections::HashMap<(Kind, u32), wgpu::RenderPipeline>,
}

fn entry(binding: u32, ty: wgpu::BindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry { binding, visibility: wgpu::ShaderStages::VERTEX_FRAGMENT, ty, count: None }
}

fn tex(dim: wgpu::TextureViewDimension, sample_type: wgpu::TextureSampleType) -> wgpu::BindingType {
    wgpu::BindingType::Texture { sample_type, view_dimension: dim, multisampled: false }
}

impl WaterGpu {
    /// Uploads the waves and caustics of `assets` and makes the layouts for colour format `color`.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, layouts: &Layouts, color: wgpu::TextureFormat, assets: &WaveAssets) -> Self {
        let w = &assets.waves;
        let (r, f, d) = (w.resolution, w.frames, w.depths.len() as u32);
        let surface = array_texture(device, queue, "water surface", (wgpu::TextureFormat::Rgba16Float, 8), (r, f), bytemuck::cast_slice(&w.surface));
        let normals = array_texture(device, queue, "water normals", (wgpu::TextureFormat::Rg16Float, 4), (r, f), bytemuck::cast_slice(&w.normals));
        let caustics =
            array_texture(device, queue, "water caustics", (wgpu::TextureFormat::R16Float, 2), (r, f * d), bytemuck::cast_slice(&w.caustics));
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("water maps"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let float = wgpu::TextureSampleType::Float { filterable: true };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("water"),
            entries: &[
                entry(0, wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None }),
                entry(1, tex(wgpu::TextureViewDimension::D2Array, float)),
                entry(2, tex(wgpu::TextureViewDimension::D2Array, float)),
                entry(3, tex(wgpu::TextureViewDimension::D2Array, float)),
                entry(4, wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering)),
                entry(5, tex(wgpu::TextureViewDimension::D2, wgpu::TextureSampleType::Float { filterable: false })),
                entry(6, tex(wgpu::TextureViewDimension::D2, wgpu::TextureSampleType::Depth)),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("water"),
            bind_group_layouts: &[Some(&layouts.frame), Some(&layouts.tile), Some(&layouts.surface), Some(&layout)],
            immediate_size: 0,
        });
        let module =
            shader(device, "water", &format!("{}\n{}", include_str!("../../shaders/sunlight.wgsl"), include_str!("../../shaders/water.wgsl")));
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("water uniforms"),
            size: std::mem::size_of::<WaterUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        WaterGpu {
            layout,
            pipeline_layout,
            module,
            color,
            surface,
            normals,
            caustics,
            sampler,
            uniform,
            scene: None,
            group: None,
            pipelines: Default::default(),
        }
    }

    /// Builds the pipeline of `kind` for shader mode `mode` if missing.
    pub fn prepare(&mut self, device: &wgpu::Device, kind: Kind, mode: u32) {
        if self.pipelines.contains_key(&(kind, mode)) {
            return;
        }
        let (vs, fs) = match kind {
            Kind::Surface => ("vs_water", "fs_water"),
            Kind::Caustics => ("vs_full", "fs_caustics"),
            Kind::FogAbsorb => ("vs_full", "fs_fog_absorb"),
            Kind::FogScatter => ("vs_full", "fs_fog_scatter"),
        };
        let blend = match kind {
            Kind::FogAbsorb => Some(wgpu::BlendState {
                color: wgpu::BlendComponent {
                    src_factor: wgpu::BlendFactor::Zero,
                    dst_factor: wgpu::BlendFactor::Src,
                    operation: wgpu::BlendOperation::Add,
                },
                alpha: wgpu::BlendComponent::REPLACE,
            }),
            Kind::FogScatter => Some(wgpu::BlendState {
                color: wgpu::BlendComponent {
                    src_factor: wgpu::BlendFactor::One,
                    dst_factor: wgpu::BlendFactor::One,
                    operation: wgpu::BlendOperation::Add,
                },
                alpha: wgpu::BlendComponent::REPLACE,
            }),
            _ => None,
        };
        // The surface is tested against the terrain (it writes no depth: the fog and overlays see
        // through it to the scene behind); the full-screen draws cover every pixel.
        let depth = if kind == Kind::Surface {
            depth_state(false, wgpu::DepthBiasState::default())
        } else {
            wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(false),
                depth_compare: Some(wgpu::CompareFunction::Always),
                stencil: wgpu::StencilState::default(),
                bias: wgpu::DepthBiasState::default(),
            }
        };
        let attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2];
        let buffers: Vec<Option<wgpu::VertexBufferLayout<'_>>> = if kind == Kind::Surface {
            vec![Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<WaterVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &attributes,
            })]
        } else {
            Vec::new()
        };
        let constants: &[(&str, f64)] = &[("MODE", mode as f64)];
        let options = wgpu::PipelineCompilationOptions { constants, ..Default::default() };
        let targets = scene_targets(self.color, blend, false);
        let label = format!("water {kind:?} mode {mode}");
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(&label),
            layout: Some(&self.pipeline_layout),
            vertex: wgpu::VertexState { module: &self.module, entry_point: Some(vs), compilation_options: options.clone(), buffers: &buffers },
            // Both sides: the surface is seen from below too.
            primitive: wgpu::PrimitiveState { cull_mode: None, ..Default::default() },
            depth_stencil: Some(depth),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState { module: &self.module, entry_point: Some(fs), compilation_options: options, targets: &targets }),
            multiview_mask: None,
            cache: None,
        });
        self.pipelines.insert((kind, mode), pipeline);
    }

    /// The pipeline of `kind` in shader mode `mode`, if prepared.
    pub fn pipeline(&self, kind: Kind, mode: u32) -> Option<&wgpu::RenderPipeline> {
        self.pipelines.get(&(kind, mode))
    }

    /// Copies the scene's colour (when `copyable`) inside `rect` (x0, y0, x1, y1) into a texture
    /// of its size and binds it with `depth`, the main pass's depth texture (not copied: the rest
    /// of the pass only reads it), remaking the copy and the bind group when the size, format or
    /// depth texture changed.
    pub fn copy_scene(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        (color, copyable): (&wgpu::Texture, bool),
        depth: &wgpu::Texture,
        rect: [u32; 4],
    ) {
        let size = [color.width(), color.height()];
        if self
            .scene
            .as_ref()
            .is_none_or(|s| s.color.width() != size[0] || s.color.height() != size[1] || s.format != color.format() || s.depth != *depth)
        {
            let copy = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("scene colour copy"),
                size: wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: color.format(),
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            });
            let scene = SceneCopy { format: color.format(), color: copy, depth: depth.clone() };
            let color_view = scene.color.create_view(&Default::default());
            let depth_view = scene.depth.create_view(&Default::default());
            self.group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("water"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: self.uniform.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(&self.surface) },
                    wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::TextureView(&self.normals) },
                    wgpu::BindGroupEntry { binding: 3, resource: wgpu::BindingResource::TextureView(&self.caustics) },
                    wgpu::BindGroupEntry { binding: 4, resource: wgpu::BindingResource::Sampler(&self.sampler) },
                    wgpu::BindGroupEntry { binding: 5, resource: wgpu::BindingResource::TextureView(&color_view) },
                    wgpu::BindGroupEntry { binding: 6, resource: wgpu::BindingResource::TextureView(&depth_view) },
                ],
            }));
            self.scene = Some(scene);
        }
        let Some(scene) = &self.scene else { return };
        let [x0, y0] = [rect[0].min(size[0]), rect[1].min(size[1])];
        let extent = wgpu::Extent3d {
            width: rect[2].min(size[0]).saturating_sub(x0),
            height: rect[3].min(size[1]).saturating_sub(y0),
            depth_or_array_layers: 1,
        };
        if copyable && extent.width > 0 && extent.height > 0 {
            let at = |texture| wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: 0,
                origin: wgpu::Origin3d { x: x0, y: y0, z: 0 },
                aspect: wgpu::TextureAspect::All,
            };
            encoder.copy_texture_to_texture(at(color), at(&scene.color), extent);
        }
    }
}
