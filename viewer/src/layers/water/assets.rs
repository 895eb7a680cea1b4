//! The shared water pack (`WAVE`) → [`WaveAssets`]: the wave frames and caustics as the texture
//! arrays the GPU samples (binary16 bits as stored: `Rgba16Float` surface, `Rg16Float` normals,
//! `R16Float` caustics), decoded once at start and shared by the tile decoder (its content hash)
//! and the layer (uploaded once).

use std::any::Any;
use std::sync::Arc;

use kiln_formats::sections::WaterWaves;
use kiln_formats::Pack;

/// Most layers of one texture array (wgpu's default limit): `F` surface frames, `F·D` caustic maps.
pub const MAX_LAYERS: u32 = 256;

/// The shared water pack, checked and laid out for upload.
pub struct WaveAssets {
    /// The section as stored (maps in binary16 bits, frame-major, rows, x fastest): exactly the
    /// texture arrays' bytes, layer by layer.
    pub waves: WaterWaves,
    /// Largest |dz| of any frame's surface: how far the surface leaves its mean level (bounds).
    pub max_height: f32,
    /// Largest horizontal displacement of any frame (bounds).
    pub max_shift: f32,
}

/// Decodes the shared water pack (a [`crate::layers::SharedDecode`]).
pub fn decode_shared(pack: &Pack) -> Result<Arc<dyn Any + Send + Sync>, String> {
    let waves: WaterWaves = pack.require().map_err(|e| e.to_string())?;
    assets(waves).map(|a| Arc::new(a) as Arc<dyn Any + Send + Sync>)
}

/// Checks what the GPU needs beyond the section's own checks (array sizes) and measures bounds.
pub fn assets(waves: WaterWaves) -> Result<WaveAssets, String> {
    let caustic_layers = waves.frames as usize * waves.depths.len();
    if waves.frames > MAX_LAYERS || caustic_layers > MAX_LAYERS as usize {
        return Err(format!("{} wave frames and {caustic_layers} caustic maps (the viewer takes at most {MAX_LAYERS} of each)", waves.frames));
    }
    let (mut max_height, mut max_shift) = (0f32, 0f32);
    for t in &waves.surface {
        let [dx, dy, dz, _] = t.map(|b| half::f16::from_bits(b).to_f32());
        max_height = max_height.max(dz.abs());
        max_shift = max_shift.max(dx.abs().max(dy.abs()));
    }
    Ok(WaveAssets { waves, max_height, max_shift })
}

/// The frame position of time `t` seconds in a loop of `frames` frames over `period` seconds:
/// `t·F/T` wrapped into `[0, F)`; the shader blends frames `floor` and `floor + 1` (mod F) by the
/// fraction.
pub fn frame_position(t: f32, period: f32, frames: u32) -> f32 {
    let f = frames as f32;
    let p = (t / period * f).rem_euclid(f);
    // rem_euclid can round up to exactly F for tiny negative inputs.
    if p >= f {
        0.0
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_position_loops_and_interpolates() {
        assert_eq!(frame_position(0.0, 4.0, 8), 0.0);
        assert_eq!(frame_position(1.0, 4.0, 8), 2.0);
        assert_eq!(frame_position(1.25, 4.0, 8), 2.5);
        // One period later is the same frame; before zero wraps to the end of the loop.
        assert_eq!(frame_position(5.0, 4.0, 8), 2.0);
        assert_eq!(frame_position(-0.5, 4.0, 8), 7.0);
    }

    #[test]
    fn too_many_caustic_layers_are_refused() {
        let w = WaterWaves { frames: 64, depths: vec![1.0, 2.0, 3.0, 4.0, 5.0], ..Default::default() };
        let err = assets(w).map(|_| ()).unwrap_err();
        assert!(err.contains("320 caustic maps"), "{err}");
    }
}
