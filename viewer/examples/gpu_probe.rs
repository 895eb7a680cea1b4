//! What a frame's parts cost on this GPU, measured with timestamp queries on synthetic scenes at
//! 1920×1080: triangles (drawn, back-facing, clipped), draw calls, a second render target, fill,
//! and the same per-pixel work in a fragment shader and in a compute shader. Data-centre GPUs run
//! graphics on a small part of the chip; these figures say which parts of the viewer's frame pay
//! for it. Run: `cargo run --release -p kiln-view --example gpu_probe`.

use kiln_view::gpu::Gpu;

const W: u32 = 1920;
const H: u32 = 1080;
const REPS: usize = 25;

/// Timestamps 0 and 1 at the start and end of a render pass: what [`Probe::time`] reads.
fn whole_pass(q: &wgpu::QuerySet) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
    Some(wgpu::RenderPassTimestampWrites { query_set: q, beginning_of_pass_write_index: Some(0), end_of_pass_write_index: Some(1) })
}

/// Vertex buffer, index buffer, index count.
type Mesh = (wgpu::Buffer, wgpu::Buffer, u32);
/// A mesh drawn with a uniform offset index over an index range.
type Draw<'a> = (&'a Mesh, u32, std::ops::Range<u32>);

const SHADER: &str = r#"
struct Draw { offset: vec4<f32> };
@group(0) @binding(0) var<uniform> draw: Draw;
struct Out { @builtin(position) pos: vec4<f32>, @location(0) n: vec3<f32> };
@vertex fn vs(@location(0) p: vec3<f32>, @location(1) n: vec4<f32>) -> Out {
    var o: Out;
    o.pos = vec4<f32>(p.xy + draw.offset.xy, p.z, 1.0);
    o.n = n.xyz;
    return o;
}
@fragment fn fs(i: Out) -> @location(0) vec4<f32> { return vec4<f32>(i.n * 0.5 + 0.5, 1.0); }
struct Two { @location(0) c: vec4<f32>, @location(1) id: vec2<u32> };
@fragment fn fs_mrt(i: Out) -> Two { var t: Two; t.c = vec4<f32>(i.n * 0.5 + 0.5, 1.0); t.id = vec2<u32>(7u, 9u); return t; }
fn work(p: vec2<f32>) -> vec4<f32> {
    var x = p.x * 0.001; var y = p.y * 0.001;
    for (var k = 0; k < 16; k = k + 1) { x = fract(sin(x * 12.9898 + y * 78.233) * 43758.5453); y = fract(x * 1.618 + y); }
    return vec4<f32>(x, y, 0.5, 1.0);
}
@fragment fn fs_heavy(i: Out) -> @location(0) vec4<f32> { return work(i.pos.xy); }
@group(0) @binding(1) var img: texture_storage_2d<rgba8unorm, write>;
@compute @workgroup_size(8, 8) fn cs_heavy(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= 1920u || g.y >= 1080u) { return; }
    textureStore(img, vec2<i32>(g.xy), work(vec2<f32>(g.xy) + 0.5));
}
@compute @workgroup_size(8, 8) fn cs_light(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= 1920u || g.y >= 1080u) { return; }
    textureStore(img, vec2<i32>(g.xy), vec4<f32>(vec2<f32>(g.xy) / 2000.0, 0.5, 1.0));
}
"#;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Vertex {
    p: [f32; 3],
    n: [i16; 4],
    pad: [u32; 3],
}

/// A grid of `cells`² quads over NDC [-1, 1]², two triangles each, counter-clockwise seen from +z
/// toward the screen (front facing), depth 0.5 with a gentle slope.
const _: () = assert!(std::mem::size_of::<Vertex>() == 32);

fn grid(cells: u32) -> (Vec<Vertex>, Vec<u32>) {
    let n = cells + 1;
    let mut v = Vec::with_capacity((n * n) as usize);
    for j in 0..n {
        for i in 0..n {
            let (x, y) = (i as f32 / cells as f32 * 2.0 - 1.0, j as f32 / cells as f32 * 2.0 - 1.0);
            v.push(Vertex { p: [x, y, 0.5 + 0.1 * x], n: [0, 0, 32767, 0], pad: [0; 3] });
        }
    }
    let mut ix = Vec::with_capacity((cells * cells * 6) as usize);
    for j in 0..cells {
        for i in 0..cells {
            let a = j * n + i;
            ix.extend_from_slice(&[a, a + 1, a + n + 1, a, a + n + 1, a + n]);
        }
    }
    (v, ix)
}

struct Probe {
    gpu: Gpu,
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

impl Probe {
    /// Median GPU milliseconds of `record` over `REPS` submissions, each timed around its passes.
    fn time(&self, mut record: impl FnMut(&mut wgpu::CommandEncoder, &wgpu::QuerySet)) -> f64 {
        let mut ms = Vec::new();
        for _ in 0..REPS {
            let mut enc = self.gpu.device.create_command_encoder(&Default::default());
            record(&mut enc, &self.queries);
            enc.resolve_query_set(&self.queries, 0..2, &self.resolve, 0);
            enc.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, 16);
            self.gpu.queue.submit([enc.finish()]);
            self.readback.map_async(wgpu::MapMode::Read, .., |_| ());
            self.gpu.wait_idle().expect("wait");
            let t: [u64; 2] = bytemuck::pod_read_unaligned(&self.readback.get_mapped_range(..).expect("map")[..16]);
            self.readback.unmap();
            ms.push(t[1].wrapping_sub(t[0]) as f64 * f64::from(self.gpu.queue.get_timestamp_period()) * 1e-6);
        }
        ms.sort_by(f64::total_cmp);
        ms[REPS / 2]
    }
}

fn texture(device: &wgpu::Device, format: wgpu::TextureFormat, usage: wgpu::TextureUsages) -> wgpu::TextureView {
    device
        .create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d { width: W, height: H, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        })
        .create_view(&Default::default())
}

fn main() {
    let gpu = Gpu::headless().expect("gpu");
    assert!(gpu.timestamps, "needs timestamp queries");
    eprintln!("adapter: {}", gpu.description);
    let device = &gpu.device;
    let buf = |size, usage| device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage, mapped_at_creation: false });
    let probe = Probe {
        queries: device.create_query_set(&wgpu::QuerySetDescriptor { label: None, ty: wgpu::QueryType::Timestamp, count: 2 }),
        resolve: buf(256, wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
        readback: buf(16, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
        gpu,
    };
    let device = &probe.gpu.device;
    use wgpu::util::DeviceExt;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(SHADER.into()) });
    let color = texture(device, wgpu::TextureFormat::Rgba8UnormSrgb, wgpu::TextureUsages::RENDER_ATTACHMENT);
    let id = texture(device, wgpu::TextureFormat::Rg32Uint, wgpu::TextureUsages::RENDER_ATTACHMENT);
    let depth = texture(device, wgpu::TextureFormat::Depth32Float, wgpu::TextureUsages::RENDER_ATTACHMENT);
    let storage = texture(device, wgpu::TextureFormat::Rgba8Unorm, wgpu::TextureUsages::STORAGE_BINDING);
    // 256 draw offsets: (0,0) for visible draws; offset 4 pushes a draw off screen.
    let mut offsets = vec![0f32; 256 * 64];
    offsets[64] = 4.0;
    let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&offsets),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: wgpu::BufferSize::new(16),
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::StorageTexture {
                    access: wgpu::StorageTextureAccess::WriteOnly,
                    format: wgpu::TextureFormat::Rgba8Unorm,
                    view_dimension: wgpu::TextureViewDimension::D2,
                },
                count: None,
            },
        ],
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &bgl,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &uniform, offset: 0, size: wgpu::BufferSize::new(16) }),
            },
            wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(&storage) },
        ],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: None, bind_group_layouts: &[Some(&bgl)], immediate_size: 0 });
    const ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Snorm16x4];
    let render = |fs: &str, cull: Option<wgpu::Face>, mrt: bool, depth_compare: wgpu::CompareFunction| {
        let targets = [
            Some(wgpu::ColorTargetState::from(wgpu::TextureFormat::Rgba8UnormSrgb)),
            Some(wgpu::ColorTargetState::from(wgpu::TextureFormat::Rg32Uint)),
        ];
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout { array_stride: 32, step_mode: wgpu::VertexStepMode::Vertex, attributes: &ATTRS })],
            },
            primitive: wgpu::PrimitiveState { cull_mode: cull, ..Default::default() },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: wgpu::TextureFormat::Depth32Float,
                depth_write_enabled: Some(true),
                depth_compare: Some(depth_compare),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(fs),
                compilation_options: Default::default(),
                targets: if mrt { &targets } else { &targets[..1] },
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    let less = wgpu::CompareFunction::LessEqual;
    let plain = render("fs", Some(wgpu::Face::Back), false, less);
    let mrt = render("fs_mrt", Some(wgpu::Face::Back), true, less);
    let culled = render("fs", Some(wgpu::Face::Front), false, less);
    let heavy = render("fs_heavy", None, false, wgpu::CompareFunction::Always);
    let heavy_fine = render("fs_heavy", Some(wgpu::Face::Back), false, less);
    let compute = |entry| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: Some(&layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (cs_heavy, cs_light) = (compute("cs_heavy"), compute("cs_light"));

    let mesh = |cells| {
        let (v, ix) = grid(cells);
        let vb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&v),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let ib = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&ix),
            usage: wgpu::BufferUsages::INDEX,
        });
        (vb, ib, ix.len() as u32)
    };
    let fine = mesh(708); // 1.0 M triangles of about 2 pixels
    let coarse = mesh(4); // 32 triangles covering the screen

    let run = |label: &str, pipeline: &wgpu::RenderPipeline, two: bool, draws: &[Draw<'_>]| {
        let ms = probe.time(|enc, q| {
            let mut attachments = vec![Some(wgpu::RenderPassColorAttachment {
                view: &color,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
            })];
            if two {
                attachments.push(Some(wgpu::RenderPassColorAttachment {
                    view: &id,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
                }));
            }
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &attachments,
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &depth,
                    depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Store }),
                    stencil_ops: None,
                }),
                timestamp_writes: whole_pass(q),
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(pipeline);
            for (m, slot, range) in draws {
                pass.set_bind_group(0, &group, &[slot * 256]);
                pass.set_vertex_buffer(0, m.0.slice(..));
                pass.set_index_buffer(m.1.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(range.clone(), 0, 0..1);
            }
        });
        println!("{label:<58} {ms:8.3} ms");
    };
    let n = fine.2;
    println!("GPU probe, {W}x{H}, median of {REPS}");
    run("empty pass (clear colour + depth)", &plain, false, &[]);
    run("empty pass, + Rg32Uint id target", &mrt, true, &[]);
    // What the attachments themselves cost: each variant is an empty pass.
    let dont_care = unsafe { wgpu::LoadOpDontCare::enabled() };
    let r32 = texture(device, wgpu::TextureFormat::R32Uint, wgpu::TextureUsages::RENDER_ATTACHMENT);
    let attach = |label: &str,
                  colors: Vec<(&wgpu::TextureView, wgpu::LoadOp<wgpu::Color>, wgpu::StoreOp)>,
                  depth_op: Option<(wgpu::LoadOp<f32>, wgpu::StoreOp)>| {
        let ms = probe.time(|enc, q| {
            let attachments: Vec<_> = colors
                .iter()
                .map(|(v, load, store)| {
                    Some(wgpu::RenderPassColorAttachment {
                        view: v,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations { load: *load, store: *store },
                    })
                })
                .collect();
            let _pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &attachments,
                depth_stencil_attachment: depth_op.map(|(load, store)| wgpu::RenderPassDepthStencilAttachment {
                    view: &depth,
                    depth_ops: Some(wgpu::Operations { load, store }),
                    stencil_ops: None,
                }),
                timestamp_writes: whole_pass(q),
                occlusion_query_set: None,
                multiview_mask: None,
            });
        });
        println!("{label:<58} {ms:8.3} ms");
    };
    let (clear, load, store, discard) = (wgpu::LoadOp::Clear(wgpu::Color::BLACK), wgpu::LoadOp::Load, wgpu::StoreOp::Store, wgpu::StoreOp::Discard);
    attach("pass: colour clear+store", vec![(&color, clear, store)], None);
    attach("pass: colour load+store", vec![(&color, load, store)], None);
    attach("pass: colour dontcare+store", vec![(&color, wgpu::LoadOp::DontCare(dont_care), store)], None);
    attach("pass: depth clear+store", vec![], Some((wgpu::LoadOp::Clear(1.0), store)));
    attach("pass: depth clear+discard", vec![], Some((wgpu::LoadOp::Clear(1.0), discard)));
    attach("pass: depth load+store", vec![], Some((wgpu::LoadOp::Load, store)));
    attach("pass: Rg32Uint clear+store", vec![(&id, clear, store)], None);
    attach("pass: R32Uint clear+store", vec![(&r32, clear, store)], None);
    attach(
        "pass: colour+depth clear (viewer's first half)",
        vec![(&color, clear, store), (&id, clear, store)],
        Some((wgpu::LoadOp::Clear(0.0), store)),
    );
    attach("pass: colour+id+depth load (viewer's second half)", vec![(&color, load, store), (&id, load, store)], Some((wgpu::LoadOp::Load, discard)));
    let copy_src = device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d { width: W, height: H, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let copy_dst = device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d { width: W, height: H, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    let ms = probe.time(|enc, q| {
        let stamp = |enc: &mut wgpu::CommandEncoder, begin, end| {
            enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: begin,
                    end_of_pass_write_index: end,
                }),
            });
        };
        stamp(enc, Some(0), None);
        enc.copy_texture_to_texture(copy_src.as_image_copy(), copy_dst.as_image_copy(), copy_src.size());
        stamp(enc, None, Some(1));
    });
    println!("{:<58} {ms:8.3} ms", "copy 1080p colour texture to texture");
    run("1.0 M small triangles, one draw", &plain, false, &[(&fine, 0, 0..n)]);
    run("1.0 M small triangles, one draw, + id target", &mrt, true, &[(&fine, 0, 0..n)]);
    run("1.0 M small triangles, all back-facing (culled)", &culled, false, &[(&fine, 0, 0..n)]);
    run("1.0 M small triangles, all off screen (clipped)", &plain, false, &[(&fine, 1, 0..n)]);
    let half = (n / 6 / 2) * 6;
    run("0.5 M small triangles (half the screen)", &plain, false, &[(&fine, 0, 0..half)]);
    for parts in [64u32, 256, 1024] {
        let step = (n / 6).div_ceil(parts) * 6;
        let draws: Vec<_> = (0..parts).map(|k| (&fine, 0, (k * step).min(n)..((k + 1) * step).min(n))).collect();
        run(&format!("1.0 M small triangles in {parts} draws"), &plain, false, &draws);
    }
    run("1.0 M small triangles, heavy fragment shader", &heavy_fine, false, &[(&fine, 0, 0..n)]);
    run("32 big triangles (fill once)", &plain, false, &[(&coarse, 0, 0..coarse.2)]);
    let layers: Vec<_> = (0..8).map(|_| (&coarse, 0, 0..coarse.2)).collect();
    run("32 big triangles x8 (overdraw, equal depth passes)", &plain, false, &layers);
    run("heavy per-pixel work in a fragment shader", &heavy, false, &[(&coarse, 0, 0..coarse.2)]);
    for (label, p) in [("heavy per-pixel work in a compute shader", &cs_heavy), ("a light compute pass over the screen", &cs_light)] {
        let ms = probe.time(|enc, q| {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            pass.set_pipeline(p);
            pass.set_bind_group(0, &group, &[0]);
            pass.dispatch_workgroups(W.div_ceil(8), H.div_ceil(8), 1);
        });
        println!("{label:<58} {ms:8.3} ms");
    }
}
