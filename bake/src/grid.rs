//! Dense 3D sample grids in global voxel coordinates.
//!
//! Conventions shared by every terrain stage (see ARCHITECTURE.md):
//! - Z is up. Global voxel coordinates are integers; sample `(i, j, k)` sits at world position
//!   `(i, j, k) * voxel_size`. Samples are the *corners* of marching-cubes cells.
//! - Density is in [-1, 1]; **positive is solid**, negative is air, the isolevel is 0.
//! - Storage is X fastest, then Y, then Z: `index = x + nx * (y + ny * z)`.

/// A box of density samples `dims` in size whose first sample is global voxel `origin`,
/// taken every `stride` voxels (stride 1 at full resolution, 2^k for LOD level k).
#[derive(Clone, Debug, PartialEq)]
pub struct DensityBlock {
    /// Global voxel coordinates of the first sample (lowest x, y, z).
    pub origin: [i32; 3],
    /// Samples per axis (x, y, z).
    pub dims: [usize; 3],
    /// Voxels between neighbouring samples along each axis (1, or 2^k at LOD level k).
    pub stride: i32,
    /// Densities in [-1, 1], positive solid, X fastest; `dims[0] * dims[1] * dims[2]` of them.
    pub data: Vec<f32>,
}

impl DensityBlock {
    /// A block filled by `f(global_x, global_y, global_z)`.
    pub fn from_fn(origin: [i32; 3], dims: [usize; 3], stride: i32, mut f: impl FnMut(i32, i32, i32) -> f32) -> Self {
        let mut data = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
        for z in 0..dims[2] as i32 {
            for y in 0..dims[1] as i32 {
                for x in 0..dims[0] as i32 {
                    data.push(f(origin[0] + x * stride, origin[1] + y * stride, origin[2] + z * stride));
                }
            }
        }
        DensityBlock { origin, dims, stride, data }
    }

    /// The sample at block-local indices (not global coordinates).
    #[inline]
    pub fn at(&self, x: usize, y: usize, z: usize) -> f32 {
        self.data[x + self.dims[0] * (y + self.dims[1] * z)]
    }
}
