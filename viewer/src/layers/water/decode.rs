//! The water's tile decoder: `WTIL` → a grid mesh over the tile's wet samples, on the loader
//! threads, checked against the shared water pack it indexes.

use std::sync::Arc;

use kiln_formats::sections::{TileNode, WaterTile};
use kiln_formats::{Pack, TileContents};

use super::assets::WaveAssets;
use crate::layers::{Decoded, Decoder, SharedAssets};

/// One water-grid vertex as the GPU reads it (20 bytes): a sample of the tile's water map at the
/// mean level, with its depth and shore distance (interpolated across the cells: depth fades the
/// waves out toward the shore, the shore distance draws the foam, both show in `water-mask`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WaterVertex {
    /// World position of the sample at rest: its xy, z the mean water level.
    pub position: [f32; 3],
    /// Depth of the ground below the surface and distance to the nearest dry sample, both in world
    /// units (0 on dry samples).
    pub depth_shore: [f32; 2],
}

/// Bytes per [`WaterVertex`].
pub const VERTEX_BYTES: u64 = std::mem::size_of::<WaterVertex>() as u64;

/// A tile's water map as the layer keeps it on the CPU (whether the camera is under water).
#[derive(Clone, Debug, PartialEq)]
pub struct WaterMap {
    /// World xy of sample (0, 0).
    pub origin: [f32; 2],
    /// World units between samples.
    pub spacing: f32,
    /// Samples per side.
    pub size: u32,
    /// Depth of each sample in world units, x fastest (0 = dry).
    pub depth: Vec<f32>,
}

impl WaterMap {
    /// The water's depth under world point (x, y) (nearest sample), `None` outside the map.
    pub fn depth_at(&self, x: f32, y: f32) -> Option<f32> {
        let (i, j) = (((x - self.origin[0]) / self.spacing).round(), ((y - self.origin[1]) / self.spacing).round());
        let n = self.size as f32;
        if !(0.0..n).contains(&i) || !(0.0..n).contains(&j) {
            return None;
        }
        Some(self.depth[j as usize * self.size as usize + i as usize])
    }
}

/// A tile's water, ready for upload.
pub struct TileWater {
    /// One vertex per sample of the map.
    pub vertices: Vec<WaterVertex>,
    /// Two triangles per cell with at least one wet corner (the surface then meets the ground
    /// under the depth test, wherever between the samples the shore lies).
    pub indices: Vec<u32>,
    /// z of the mean surface.
    pub level: f32,
    /// Beer–Lambert absorption per world unit, linear RGB.
    pub absorption: [f32; 3],
    /// The map (CPU copy).
    pub map: WaterMap,
    /// World bounds of everything the surface can reach (waves included).
    pub bounds: ([f32; 3], [f32; 3]),
}

impl Decoded for TileWater {
    fn gpu_bytes(&self) -> u64 {
        self.vertices.len() as u64 * VERTEX_BYTES + self.indices.len() as u64 * 4
    }
}

/// The water's decoder, holding the shared waves (or none, when the bake has no water pack).
pub struct WaterDecoder {
    shared: Option<(Arc<WaveAssets>, u64)>,
}

impl WaterDecoder {
    /// The decoder for a bake with these shared assets.
    pub fn new(shared: &SharedAssets) -> Self {
        WaterDecoder { shared: shared.get::<WaveAssets>(super::NAME) }
    }
}

impl Decoder for WaterDecoder {
    fn decode(&self, _pack: &Pack, tile: &TileContents) -> Result<Option<Box<dyn Decoded>>, String> {
        let Some(w) = &tile.water else { return Ok(None) };
        let Some((assets, hash)) = &self.shared else { return Err("the tile has water but the bake has no shared water pack".into()) };
        if w.waves_hash != *hash {
            return Err(format!("its water indexes waves {:016x}, the bake's shared water pack is {hash:016x}", w.waves_hash));
        }
        Ok(decode_water(w, assets).map(|t| Box::new(t) as Box<dyn Decoded>))
    }

    /// The manifest does not count water: a tile's water is known once it is decoded.
    fn estimate_bytes(&self, _node: &TileNode) -> u64 {
        0
    }
}

/// The map → the grid mesh and bounds; `None` when no sample is wet.
pub fn decode_water(w: &WaterTile, assets: &WaveAssets) -> Option<TileWater> {
    let n = w.size as usize;
    let depth: Vec<f32> = w.depth.iter().map(|&d| d as f32 * w.depth_step).collect();
    let vertices: Vec<WaterVertex> = (0..n * n)
        .map(|k| {
            let (i, j) = (k % n, k / n);
            WaterVertex {
                position: [w.origin[0] + i as f32 * w.spacing, w.origin[1] + j as f32 * w.spacing, w.level],
                depth_shore: [depth[k], w.shore[k] as f32 * w.spacing],
            }
        })
        .collect();
    let mut indices = Vec::new();
    let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let c = [j * n + i, j * n + i + 1, (j + 1) * n + i, (j + 1) * n + i + 1];
            if c.iter().all(|&k| w.depth[k] == 0) {
                continue;
            }
            indices.extend([c[0], c[1], c[3], c[0], c[3], c[2]].map(|k| k as u32));
            for k in [c[0], c[3]] {
                let p = vertices[k].position;
                for d in 0..2 {
                    lo[d] = lo[d].min(p[d]);
                    hi[d] = hi[d].max(p[d]);
                }
            }
        }
    }
    if indices.is_empty() {
        return None;
    }
    let deepest = depth.iter().copied().fold(0.0, f32::max);
    let reach = assets.max_shift;
    let bounds =
        ([lo[0] - reach, lo[1] - reach, w.level - deepest.max(assets.max_height)], [hi[0] + reach, hi[1] + reach, w.level + assets.max_height]);
    let map = WaterMap { origin: w.origin, spacing: w.spacing, size: w.size, depth };
    Some(TileWater { vertices, indices, level: w.level, absorption: w.absorption, map, bounds })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_formats::sections::WaterWaves;

    fn tile(depth: Vec<u16>) -> WaterTile {
        let shore = depth.iter().map(|&d| (d > 0) as u8).collect();
        WaterTile {
            waves_hash: 1,
            level: 2.0,
            absorption: [0.3, 0.1, 0.05],
            origin: [10.0, 20.0],
            spacing: 0.5,
            size: 3,
            depth_step: 0.25,
            depth,
            shore,
        }
    }

    fn waves() -> WaveAssets {
        super::super::assets::assets(WaterWaves { frames: 1, depths: vec![1.0], ..Default::default() }).unwrap()
    }

    #[test]
    fn only_cells_with_a_wet_corner_get_triangles() {
        // One wet sample in the corner (0, 0): only the first cell of four is drawn.
        let t = decode_water(&tile(vec![4, 0, 0, 0, 0, 0, 0, 0, 0]), &waves()).unwrap();
        assert_eq!(t.indices.len(), 6);
        assert_eq!(t.vertices[0].depth_shore, [1.0, 0.5]);
        assert_eq!(t.vertices[0].position, [10.0, 20.0, 2.0]);
        assert_eq!(t.map.depth_at(10.1, 20.2), Some(1.0));
        assert_eq!(t.map.depth_at(10.9, 20.0), Some(0.0));
        assert_eq!(t.map.depth_at(9.0, 20.0), None);
        // A wet centre touches all four cells.
        assert_eq!(decode_water(&tile(vec![0, 0, 0, 0, 4, 0, 0, 0, 0]), &waves()).unwrap().indices.len(), 24);
        assert!(decode_water(&tile(vec![0; 9]), &waves()).is_none());
    }
}
