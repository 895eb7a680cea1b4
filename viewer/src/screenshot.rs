//! Offscreen colour targets, GPU → CPU readback and PNG output.

use std::path::Path;

use crate::error::ViewerError;
use crate::gpu::Gpu;

/// A colour texture the renderer can draw into and [`read_rgba`] can copy out.
pub fn offscreen_target(device: &wgpu::Device, format: wgpu::TextureFormat, size: [u32; 2]) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("offscreen colour"),
        size: wgpu::Extent3d { width: size[0].max(1), height: size[1].max(1), depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// Copies `texture` (RGBA8 or BGRA8, sRGB or not) to an RGBA image, waiting for the GPU.
pub fn read_rgba(gpu: &Gpu, texture: &wgpu::Texture) -> Result<image::RgbaImage, ViewerError> {
    let (w, h) = (texture.width(), texture.height());
    let bgra = match texture.format() {
        wgpu::TextureFormat::Rgba8Unorm | wgpu::TextureFormat::Rgba8UnormSrgb => false,
        wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb => true,
        f => return Err(ViewerError::Gpu(format!("cannot read back a {f:?} texture as RGBA"))),
    };
    // Rows are padded to the copy alignment and stripped below.
    let row = 4 * w;
    let padded = row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: padded as u64 * h as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded), rows_per_image: Some(h) },
        },
        texture.size(),
    );
    gpu.queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    gpu.wait_idle()?;
    rx.recv().map_err(|_| ViewerError::Gpu("readback never completed".into()))?.map_err(|e| ViewerError::Gpu(format!("readback failed: {e}")))?;
    let view = buffer.get_mapped_range(..).map_err(|e| ViewerError::Gpu(format!("readback failed: {e}")))?;
    let mut pixels = Vec::with_capacity((row * h) as usize);
    for y in 0..h as usize {
        pixels.extend_from_slice(&view[y * padded as usize..][..row as usize]);
    }
    drop(view);
    buffer.unmap();
    if bgra {
        pixels.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
    }
    image::RgbaImage::from_raw(w, h, pixels).ok_or_else(|| ViewerError::Gpu("readback size mismatch".into()))
}

/// Writes `img` as PNG (to a temporary file renamed into place: a reader never sees half a file).
pub fn save_png(img: &image::RgbaImage, path: &Path) -> Result<(), ViewerError> {
    let err = |reason: String| ViewerError::File { path: path.to_owned(), reason };
    let mut bytes = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png).map_err(|e| err(e.to_string()))?;
    kiln_formats::write_atomic(path, &bytes).map_err(|e| match e {
        kiln_formats::PackFileError::Io { source, .. } => err(source.to_string()),
        other => err(other.to_string()),
    })
}
