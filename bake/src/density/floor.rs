//! The floor: a per-column ground height under the caves, from 2D noise or a height image.
//!
//! Floor heights span `[floor.height, floor.height + floor.amplitude]` world units. The noise
//! floor maps its normalised fBm `n` (clipped to [-1, 1]) to `height + amplitude · (n + 1) / 2`;
//! the heightmap floor maps samples 0..=65535 linearly onto the same span.

use rayon::prelude::*;

use super::fbm::{Fbm, FbmKind, FbmParams};
use crate::world::{FloorKind, World};

/// Octave-to-octave frequency ratio and amplitude ratio of the noise floor.
const FLOOR_LACUNARITY: f64 = 2.0;
const FLOOR_GAIN: f64 = 0.5;

/// Floor height (world units) of every voxel column, row-major `[x + nx * y]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FloorMap {
    /// Columns along X (the volume's X sample count).
    pub nx: usize,
    /// Columns along Y (the volume's Y sample count).
    pub ny: usize,
    /// `nx * ny` floor heights in world units, X fastest.
    pub heights: Vec<f32>,
}

impl FloorMap {
    /// The floor height of column `(x, y)`.
    #[inline]
    pub fn at(&self, x: usize, y: usize) -> f32 {
        self.heights[x + self.nx * y]
    }

    /// Per column, how many bottom samples lie strictly below the floor surface (`z·vs < h`).
    /// Those samples are ground: floater removal starts its flood fill from them.
    pub fn ground_layers(&self, nz: usize, voxel_size: f32) -> Vec<u32> {
        self.heights.iter().map(|&h| (0..nz).take_while(|&z| (z as f32) * voxel_size < h).count() as u32).collect()
    }
}

/// The floor of `world`, or `None` for `floor.kind = "none"`.
pub fn floor_heights(world: &World) -> Option<FloorMap> {
    let f = &world.spec.floor;
    let [nx, ny, _] = world.dims();
    let vs = world.voxel_size();
    let column: Box<dyn Fn(usize, usize) -> f64 + Sync> = match f.kind {
        FloorKind::None => return None,
        FloorKind::Noise => {
            let params = FbmParams {
                kind: FbmKind::Perlin,
                octaves: f.octaves,
                frequency: f.frequency,
                lacunarity: FLOOR_LACUNARITY,
                gain: FLOOR_GAIN,
                amplitude: 1.0,
            };
            let fbm = Fbm::new(&params, world.spec.seed, "density.floor", 2);
            Box::new(move |x, y| fbm.get2(x as f64 * vs, y as f64 * vs).clamp(-1.0, 1.0) * 0.5 + 0.5)
        }
        FloorKind::Heightmap => {
            // Validation guarantees a heightmap is loaded with this kind; without one the floor
            // is flat at `height`, which is also what an all-zero image gives.
            let hm = world.heightmap.clone();
            let (sx, sy) = (1.0 / (nx.max(2) - 1) as f64, 1.0 / (ny.max(2) - 1) as f64);
            Box::new(move |x, y| hm.as_ref().map_or(0.0, |hm| hm.sample(x as f64 * sx, y as f64 * sy)))
        }
    };
    let mut heights = vec![0f32; nx * ny];
    heights.par_chunks_mut(nx).enumerate().for_each(|(y, row)| {
        for (x, h) in row.iter_mut().enumerate() {
            *h = (f.height + f.amplitude * column(x, y)) as f32;
        }
    });
    Some(FloorMap { nx, ny, heights })
}
