//! Uniform blocks shared with the WGSL in `shaders/common.wgsl` (same field order and sizes) and
//! the fixed lighting environment.

use glam::Vec3;

/// Per-frame constants (`Frame` in `common.wgsl`). Every member is 16-byte sized so the Rust and
/// WGSL layouts agree without padding rules.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FrameUniforms {
    /// World space to clip space, column-major.
    pub view_proj: [[f32; 4]; 4],
    /// Clip space back to world space (the sky reconstructs view rays with it).
    pub inv_view_proj: [[f32; 4]; 4],
    /// World space to the shadow map's clip space ([`super::shadow_fit::ShadowFit`]).
    pub light_view_proj: [[f32; 4]; 4],
    /// xyz camera position; w unused.
    pub camera_pos: [f32; 4],
    /// xyz unit vector toward the sun; w world size of a shadow texel.
    pub sun_dir: [f32; 4],
    /// rgb sun radiance; w exposure.
    pub sun_color: [f32; 4],
    /// rgb sky radiance straight up; w unused.
    pub sky_zenith: [f32; 4],
    /// rgb sky radiance at the horizon; w unused.
    pub sky_horizon: [f32; 4],
    /// rgb ground bounce colour; w ambient strength (used when a tile has no baked irradiance).
    pub ground: [f32; 4],
    /// x density (1/world units), y unused, z unused, w maximum opacity.
    pub fog: [f32; 4],
    /// x world min z, y world max z, z material noise scale (1/world units), w snow line (0..1 of height).
    pub world: [f32; 4],
    /// width, height, 1/width, 1/height in pixels.
    pub viewport: [f32; 4],
    /// x unused (the view mode is a pipeline constant), y shadow map size, z flags (bit 0: shadows),
    /// w water flags ([`WATER_PRESENT`], [`WATER_CAMERA_UNDER`]).
    pub params: [u32; 4],
    /// The water (when `params.w` has [`WATER_PRESENT`]): x level (z of the mean surface), y Fresnel
    /// transmittance of the flat surface for the sun, z cosine of the refracted sun below the
    /// surface, w index of refraction.
    pub water: [f32; 4],
    /// rgb Beer–Lambert absorption of the water per world unit; w unused.
    pub water_absorption: [f32; 4],
}

/// Bit of [`FrameUniforms::params`]`[3]`: the world has water (the sun reaching terrain below the
/// level is attenuated through it). Without it every shader computes exactly what it did before water.
pub const WATER_PRESENT: u32 = 1;
/// Bit of [`FrameUniforms::params`]`[3]`: the camera is under the water surface.
pub const WATER_CAMERA_UNDER: u32 = 2;

/// Per-tile constants (`Tile` in `terrain.wgsl`), bound with a dynamic offset per draw.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TileUniforms {
    /// The tile-id buffer value (`picking::encode`).
    pub id: u32,
    /// The tile's LOD level, 0 the finest.
    pub level: u32,
    /// Bit 0: the tile is under the cursor (highlighted).
    pub flags: u32,
    /// Padding to the colour's 16-byte alignment.
    pub pad: u32,
    /// Linear RGB LOD colour; a = 1.
    pub color: [f32; 4],
}

/// Bit in [`TileUniforms::flags`]: highlight this tile.
pub const TILE_HIGHLIGHT: u32 = 1;

/// The fixed lighting environment: a late-afternoon sun and a clear sky.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lighting {
    /// Unit vector toward the sun.
    pub to_sun: Vec3,
    /// Linear RGB radiance of the sun.
    pub sun_color: Vec3,
    /// Linear RGB sky radiance straight up.
    pub sky_zenith: Vec3,
    /// Linear RGB sky radiance at the horizon.
    pub sky_horizon: Vec3,
    /// Linear RGB colour of light bounced off the ground (the lower half of the fallback ambient).
    pub ground: Vec3,
    /// Strength of the hemisphere ambient used where a tile has no baked irradiance.
    pub ambient: f32,
    /// Base exposure multiplier before tone mapping; the frame's exposure stops scale it by `2^ev`.
    pub exposure: f32,
}

impl Default for Lighting {
    fn default() -> Self {
        // Azimuth 135° from +X toward +Y (north-west with +X east, +Y north), elevation 35°: low
        // enough for shadows that show relief, high enough to light valleys.
        let (az, el) = (135f32.to_radians(), 35f32.to_radians());
        Lighting {
            to_sun: Vec3::new(el.cos() * az.cos(), el.cos() * az.sin(), el.sin()),
            sun_color: Vec3::new(3.0, 2.75, 2.4),
            sky_zenith: Vec3::new(0.10, 0.24, 0.62),
            sky_horizon: Vec3::new(0.55, 0.68, 0.85),
            ground: Vec3::new(0.32, 0.28, 0.24),
            ambient: 0.6,
            exposure: 0.7,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_have_the_sizes_the_shaders_expect() {
        // 3 mat4 (192) + 12 vec4 (192) = 384 bytes; Tile = 32 bytes.
        assert_eq!(std::mem::size_of::<FrameUniforms>(), 384);
        assert_eq!(std::mem::size_of::<TileUniforms>(), 32);
    }

    #[test]
    fn sun_is_a_unit_vector_above_the_horizon() {
        let l = Lighting::default();
        assert!((l.to_sun.length() - 1.0).abs() < 1e-6);
        assert!(l.to_sun.z > 0.3);
    }
}
