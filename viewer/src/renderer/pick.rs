//! The tile under the cursor, read back from the tile-id target (`R32Uint`) the opaque passes
//! write next to colour. Exact (the visible surface, not a bounding box), one frame late, and it
//! never stalls: the copy is mapped asynchronously and read when ready.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::streaming::TileId;

/// Bits of a coordinate in an id: tiles up to 16384 per side at level 0. A quadtree that wide has
/// at most 15 levels, which is what the remaining 4 bits hold (as `level + 1`).
const COORD_BITS: u32 = 14;

/// The id-buffer value of `key`: `(level + 1) << 28 | y << 14 | x`, 0 meaning sky. One word a
/// pixel: every opaque fragment writes it, and on the H200's few ROPs a second word cost 0.15 ms a
/// 1080p frame (BENCHMARKS "Viewer"). A key beyond the bit ranges (no shipped bake comes near)
/// encodes as 0: drawn, but picked as nothing rather than as some other tile.
pub fn encode(key: TileId) -> u32 {
    let limit = 1 << COORD_BITS;
    if key.level >= 15 || key.x >= limit || key.y >= limit {
        return 0;
    }
    (key.level + 1) << (2 * COORD_BITS) | key.y << COORD_BITS | key.x
}

/// Inverse of [`encode`]; `None` for sky.
pub fn decode(id: u32) -> Option<TileId> {
    let mask = (1 << COORD_BITS) - 1;
    let level = id >> (2 * COORD_BITS);
    (level != 0).then(|| TileId { level: level - 1, x: id & mask, y: (id >> COORD_BITS) & mask })
}

const IDLE: u8 = 0;
const PENDING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;

/// A one-texel readback in flight.
pub struct PickReadback {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    copied: bool,
    /// The latest result: `Some(None)` = sky under the cursor, `None` = nothing read yet.
    pub latest: Option<Option<TileId>>,
}

impl PickReadback {
    /// A readback buffer (one padded row).
    pub fn new(device: &wgpu::Device) -> Self {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pick readback"),
            size: wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as u64,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        PickReadback { buffer, state: Arc::new(AtomicU8::new(IDLE)), copied: false, latest: None }
    }

    /// Records a copy of texel `px` of `id_texture` if no readback is in flight.
    pub fn request(&mut self, encoder: &mut wgpu::CommandEncoder, id_texture: &wgpu::Texture, px: [u32; 2]) {
        let size = id_texture.size();
        if self.state.load(Ordering::Acquire) != IDLE || px[0] >= size.width || px[1] >= size.height {
            return;
        }
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: id_texture,
                mip_level: 0,
                origin: wgpu::Origin3d { x: px[0], y: px[1], z: 0 },
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.buffer,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: None, rows_per_image: None },
            },
            wgpu::Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
        );
        self.copied = true;
    }

    /// After the submit that carries the copy: starts mapping.
    pub fn after_submit(&mut self) {
        if !std::mem::take(&mut self.copied) {
            return;
        }
        self.state.store(PENDING, Ordering::Release);
        let state = self.state.clone();
        self.buffer.map_async(wgpu::MapMode::Read, 0..4, move |r| {
            state.store(if r.is_ok() { READY } else { FAILED }, Ordering::Release);
        });
    }

    /// Collects a finished readback (the caller polls the device); updates [`Self::latest`].
    pub fn collect(&mut self) {
        match self.state.load(Ordering::Acquire) {
            READY => {
                if let Ok(view) = self.buffer.get_mapped_range(0..4) {
                    let v: u32 = bytemuck::pod_read_unaligned(&view[..4]);
                    drop(view);
                    self.latest = Some(decode(v));
                }
                self.buffer.unmap();
                self.state.store(IDLE, Ordering::Release);
            }
            FAILED => {
                self.buffer.unmap();
                self.state.store(IDLE, Ordering::Release);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_zero_is_sky() {
        for key in [TileId { level: 0, x: 0, y: 0 }, TileId { level: 7, x: 16383, y: 1234 }, TileId { level: 14, x: 3, y: 16383 }] {
            assert_eq!(decode(encode(key)), Some(key));
        }
        assert_eq!(decode(0), None);
    }

    #[test]
    fn keys_beyond_the_bits_pick_as_nothing_not_as_another_tile() {
        for key in [TileId { level: 15, x: 0, y: 0 }, TileId { level: 0, x: 16384, y: 0 }, TileId { level: 2, x: 5, y: 1 << 20 }] {
            assert_eq!(encode(key), 0, "{key:?}");
        }
    }
}
