//! Exposure metering: the log-average luminance of a finished frame, for automatic exposure
//! ([`crate::exposure`]). A few full-width rows of the colour target are copied to a buffer and
//! mapped asynchronously (never a stall; the result is a frame or two late), and the CPU undoes the
//! sRGB encoding and the tone curve on every fourth pixel of them. Reading rows back costs a few
//! kilobytes a frame, less than a reduction pass would cost to compile on a CPU rasteriser.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Rows of the target read back, evenly spaced.
const ROWS: u32 = 16;
/// Every `STRIDE`-th pixel of a row is metered.
const STRIDE: usize = 4;
/// Luminance floor, so black pixels count as very dark rather than minus infinity.
const FLOOR: f32 = 1e-4;

const IDLE: u8 = 0;
const PENDING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;

/// sRGB-encoded byte to linear.
pub fn srgb_to_linear(v: u8) -> f32 {
    let c = f32::from(v) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// The inverse of `tonemap` in `common.wgsl` (the ACES fit `x(2.51x + 0.03) / (x(2.43x + 0.59) +
/// 0.14)`), for an output in [0, 1]: the positive root of the quadratic the fit gives for `x`.
pub fn aces_inverse(y: f32) -> f32 {
    let y = y.clamp(0.0, 1.0);
    let (a, b, c) = (2.43 * y - 2.51, 0.59 * y - 0.03, 0.14 * y);
    // a < 0 and c >= 0 on [0, 1]: the roots have opposite signs (or one is 0), so this is the one.
    let disc = (b * b - 4.0 * a * c).max(0.0);
    ((-b - disc.sqrt()) / (2.0 * a)).max(0.0)
}

/// The log-average of the tone-mapped input luminance of `pixels` (RGBA8 or BGRA8, sRGB), drawn
/// with `multiplier` (the exposure the frame used, `2^ev`), i.e. in units where `multiplier` = 1.
pub fn log_average(pixels: &[[u8; 4]], bgra: bool, multiplier: f32) -> Option<f32> {
    if pixels.is_empty() {
        return None;
    }
    let sum: f64 = pixels
        .iter()
        .map(|p| {
            let (r, g, b) = if bgra { (p[2], p[1], p[0]) } else { (p[0], p[1], p[2]) };
            let [r, g, b] = [r, g, b].map(|v| aces_inverse(srgb_to_linear(v)));
            let lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
            f64::from((lum / multiplier).max(FLOOR).ln())
        })
        .sum();
    Some((sum / pixels.len() as f64).exp() as f32)
}

/// Whether the meter can read `format` (8-bit sRGB colour, either channel order).
fn bgra(format: wgpu::TextureFormat) -> Option<bool> {
    match format {
        wgpu::TextureFormat::Rgba8UnormSrgb => Some(false),
        wgpu::TextureFormat::Bgra8UnormSrgb => Some(true),
        _ => None,
    }
}

/// One metering readback in flight at a time.
pub struct Meter {
    buffer: Option<wgpu::Buffer>,
    state: Arc<AtomicU8>,
    /// Of the copy recorded or in flight: bytes per padded row, pixels per row, rows, channel order,
    /// and the exposure multiplier the frame was drawn with.
    layout: Option<(u32, u32, u32, bool, f32)>,
    copied: bool,
    /// The latest metering (log-average luminance in units of the base exposure), taken by
    /// [`Meter::take`].
    latest: Option<f32>,
}

impl Default for Meter {
    fn default() -> Self {
        Meter { buffer: None, state: Arc::new(AtomicU8::new(IDLE)), layout: None, copied: false, latest: None }
    }
}

impl Meter {
    /// Records the copy of `ROWS` rows of `target` drawn with exposure `multiplier`, unless a
    /// readback is in flight or the target cannot be metered (not copyable, or not 8-bit sRGB);
    /// returns whether it did.
    pub fn request(&mut self, device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder, target: &wgpu::Texture, multiplier: f32) -> bool {
        let Some(bgra) = bgra(target.format()) else { return false };
        if self.state.load(Ordering::Acquire) != IDLE || !target.usage().contains(wgpu::TextureUsages::COPY_SRC) {
            return false;
        }
        let (width, height) = (target.width(), target.height());
        let rows = ROWS.min(height);
        let row_bytes = (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let size = u64::from(row_bytes) * u64::from(rows);
        if self.buffer.as_ref().is_none_or(|b| b.size() != size) {
            self.buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("exposure meter"),
                size,
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                mapped_at_creation: false,
            }));
        }
        let Some(buffer) = &self.buffer else { return false };
        for i in 0..rows {
            // Row centres of `rows` equal bands.
            let y = ((2 * i + 1) * height) / (2 * rows);
            encoder.copy_texture_to_buffer(
                wgpu::TexelCopyTextureInfo {
                    texture: target,
                    mip_level: 0,
                    origin: wgpu::Origin3d { x: 0, y, z: 0 },
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::TexelCopyBufferInfo {
                    buffer,
                    layout: wgpu::TexelCopyBufferLayout { offset: u64::from(i * row_bytes), bytes_per_row: Some(row_bytes), rows_per_image: None },
                },
                wgpu::Extent3d { width, height: 1, depth_or_array_layers: 1 },
            );
        }
        self.layout = Some((row_bytes, width, rows, bgra, multiplier));
        self.copied = true;
        true
    }

    /// After the submit that carries the copy: starts mapping.
    pub fn after_submit(&mut self) {
        if !std::mem::take(&mut self.copied) {
            return;
        }
        let Some(buffer) = &self.buffer else { return };
        self.state.store(PENDING, Ordering::Release);
        let state = self.state.clone();
        buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            state.store(if r.is_ok() { READY } else { FAILED }, Ordering::Release);
        });
    }

    /// Collects a finished readback (the caller polls the device) and returns the newest metering
    /// not returned before.
    pub fn take(&mut self) -> Option<f32> {
        let state = self.state.load(Ordering::Acquire);
        if let (READY | FAILED, Some(buffer)) = (state, &self.buffer) {
            if let (READY, Some((row_bytes, width, rows, bgra, multiplier))) = (state, self.layout) {
                if let Ok(view) = buffer.get_mapped_range(..) {
                    let pixels: Vec<[u8; 4]> = (0..rows as usize)
                        .flat_map(|r| {
                            let row = &view[r * row_bytes as usize..][..width as usize * 4];
                            row.chunks_exact(4).step_by(STRIDE).map(|p| [p[0], p[1], p[2], p[3]]).collect::<Vec<_>>()
                        })
                        .collect();
                    drop(view);
                    self.latest = log_average(&pixels, bgra, multiplier).or(self.latest);
                }
            }
            buffer.unmap();
            self.state.store(IDLE, Ordering::Release);
        }
        self.latest.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shader's curve, for checking the inverse.
    fn aces(x: f32) -> f32 {
        ((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14)).clamp(0.0, 1.0)
    }

    #[test]
    fn the_tone_curve_is_undone() {
        for x in [0.0, 0.001, 0.05, 0.18, 0.5, 1.0, 3.0] {
            let back = aces_inverse(aces(x));
            assert!((back - x).abs() <= 1e-3 * x.max(1.0), "{x} -> {} -> {back}", aces(x));
        }
        assert!(aces_inverse(1.0).is_finite());
    }

    #[test]
    fn log_average_is_geometric_and_divides_out_the_exposure() {
        let grey = |x: f32| {
            let y = aces(x);
            // Linear to sRGB byte.
            let s = if y <= 0.0031308 { y * 12.92 } else { 1.055 * y.powf(1.0 / 2.4) - 0.055 };
            let v = (s * 255.0).round() as u8;
            [v, v, v, 255]
        };
        let one = log_average(&[grey(0.2)], false, 1.0).unwrap();
        assert!((one / 0.2 - 1.0).abs() < 0.03, "{one}");
        // Drawn at 4x exposure, the scene is the same.
        let four = log_average(&[grey(0.8)], false, 4.0).unwrap();
        assert!((four / 0.2 - 1.0).abs() < 0.03, "{four}");
        // Geometric mean of 0.05 and 0.8 is 0.2.
        let mixed = log_average(&[grey(0.05), grey(0.8)], false, 1.0).unwrap();
        assert!((mixed / 0.2 - 1.0).abs() < 0.05, "{mixed}");
        // Channel order matters for a coloured pixel.
        let red = [255, 0, 0, 255];
        assert!(log_average(&[red], false, 1.0) > log_average(&[red], true, 1.0));
        assert_eq!(log_average(&[], false, 1.0), None);
    }
}
