//! The grass's tile decoder: `GRSS` → the ground samples in the GPU layout and the patch
//! instances with what the per-frame choice needs (bounds, ground normal, hash key), on the loader
//! threads.

use std::sync::Arc;

use kiln_formats::sections::{GrassTile, TileNode};
use kiln_formats::{Pack, TileContents};

use super::assets::GrassAssets;
use super::select::{hash3, CLIFF};
use crate::layers::{Decoded, Decoder, SharedAssets};
use crate::renderer::pick;

/// u32 words per ground sample on the GPU: height (f32 bits), keep (0–255), light (rgb9e5).
pub const SAMPLE_WORDS: usize = 3;
/// Map samples per ground-tint grid step (`TINT_STRIDE` in `grass.wgsl`): a tile's map has two
/// samples per voxel, its terrain mesh one vertex, and the tint costs as many triangles as the
/// terrain it covers, not four times as many.
pub const TINT_STRIDE: u32 = 2;

/// A patch instance as the per-frame choice reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// World xy of the patch's min corner.
    pub origin: [f32; 2],
    /// Quarter turns about the patch centre.
    pub rotation: u32,
    /// Index into the shared patches.
    pub patch: u32,
    /// Multiplies blade lengths.
    pub height_scale: f32,
    /// The ground's lowest and highest z under the patch.
    pub z_range: [f32; 2],
    /// Unit ground normal at the patch centre.
    pub normal: [f32; 3],
    /// The hash key of the instance (tile and index): blade hashes start from it.
    pub key: u32,
}

/// A tile's grass, ready for upload.
pub struct TileGrass {
    /// The ground maps as read (the CPU mirror and the instances' bounds read them).
    pub map: GrassTile,
    /// `SAMPLE_WORDS` words per sample, row-major.
    pub samples: Vec<u32>,
    /// The ground tint's triangles ([`tint_indices`]).
    pub tint_indices: Vec<u32>,
    /// Patch instances (level-0 tiles).
    pub instances: Vec<Instance>,
    /// World bounds of the ground and everything standing on it.
    pub bounds: ([f32; 3], [f32; 3]),
    /// The tile id as the picking target stores it.
    pub pick: u32,
}

impl Decoded for TileGrass {
    fn gpu_bytes(&self) -> u64 {
        ((self.samples.len() + self.tint_indices.len()) * 4) as u64
    }
}

/// The grass's decoder, holding the shared patches (or none, when the bake has no grass pack).
pub struct GrassDecoder {
    shared: Option<(Arc<GrassAssets>, u64)>,
}

impl GrassDecoder {
    /// The decoder for a bake with these shared assets.
    pub fn new(shared: &SharedAssets) -> Self {
        GrassDecoder { shared: shared.get::<GrassAssets>(super::NAME) }
    }
}

impl Decoder for GrassDecoder {
    fn decode(&self, _pack: &Pack, tile: &TileContents) -> Result<Option<Box<dyn Decoded>>, String> {
        let Some(g) = &tile.grass else { return Ok(None) };
        let Some((assets, hash)) = &self.shared else { return Err("the tile has grass but the bake has no shared grass pack".into()) };
        if g.patches_hash != *hash {
            return Err(format!("its grass indexes patches {:016x}, the bake's shared grass pack is {hash:016x}", g.patches_hash));
        }
        let id = tile.id();
        decode_tile(g.clone(), assets, [id.x, id.y], pick::encode(id)).map(|t| Some(Box::new(t) as Box<dyn Decoded>))
    }

    /// A tile's grass map: `2·tile_size + 1` samples per side at 12 bytes; the manifest does not
    /// record it, so the estimate comes from the decoded tile (as trees do).
    fn estimate_bytes(&self, _node: &TileNode) -> u64 {
        0
    }
}

/// Checks a `GRSS` against the shared patches and lays it out. `xy` keys the instances' hashes.
pub fn decode_tile(map: GrassTile, assets: &GrassAssets, xy: [u32; 2], pick: u32) -> Result<TileGrass, String> {
    let n = map.size as usize;
    let heights: Vec<f32> = map.heights.iter().map(|&h| map.height_min + f32::from(h) * map.height_step).collect();
    let mut samples = Vec::with_capacity(n * n * SAMPLE_WORDS);
    for ((h, &k), &l) in heights.iter().zip(&map.keep).zip(&map.light) {
        samples.extend([h.to_bits(), u32::from(k), l]);
    }
    let tint = tint_indices(&tint_cells(&map, &heights), map.size);
    let (zlo, zhi) = heights.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &h| (a.min(h), b.max(h)));
    let s = assets.patch_size;
    let extent = map.spacing * (n - 1) as f32;
    let mut top: f32 = 0.0;
    let mut instances = Vec::with_capacity(map.instances.len());
    for (i, ins) in map.instances.iter().enumerate() {
        if ins.patch as usize >= assets.ranges.len() {
            return Err(format!("grass instance {i}: patch {} of {}", ins.patch, assets.ranges.len()));
        }
        let inside = (0..2).all(|c| ins.origin[c] >= map.origin[c] - 1e-3 && ins.origin[c] + s <= map.origin[c] + extent + 1e-3);
        if !inside {
            return Err(format!("grass instance {i} at {:?} lies outside the tile's map", ins.origin));
        }
        // The ground under the patch: its corners, centre and edge midpoints (samples are half a voxel apart).
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        let steps = ((s / map.spacing).ceil() as usize).max(1);
        for a in 0..=steps {
            for b in 0..=steps {
                let z = map.height_at(ins.origin[0] + s * a as f32 / steps as f32, ins.origin[1] + s * b as f32 / steps as f32);
                lo = lo.min(z);
                hi = hi.max(z);
            }
        }
        let (cx, cy, e) = (ins.origin[0] + 0.5 * s, ins.origin[1] + 0.5 * s, 0.5 * s);
        let dx = (map.height_at(cx + e, cy) - map.height_at(cx - e, cy)) / (2.0 * e);
        let dy = (map.height_at(cx, cy + e) - map.height_at(cx, cy - e)) / (2.0 * e);
        let l = (dx * dx + dy * dy + 1.0).sqrt();
        top = top.max(ins.height_scale);
        instances.push(Instance {
            origin: ins.origin,
            rotation: u32::from(ins.rotation),
            patch: u32::from(ins.patch),
            height_scale: ins.height_scale,
            z_range: [lo, hi],
            normal: [-dx / l, -dy / l, 1.0 / l],
            key: hash3(xy[0], xy[1], i as u32),
        });
    }
    let reach = assets.max_length * top;
    let bounds = ([map.origin[0], map.origin[1], zlo - 0.01], [map.origin[0] + extent, map.origin[1] + extent, zhi + reach + 0.01]);
    Ok(TileGrass { map, samples, tint_indices: tint, instances, bounds, pick })
}

/// The ground tint's cells, `ci | cj << 16` (sample indices of the cell's low corner), row by row:
/// those of the [`TINT_STRIDE`] grid with grass at one corner at least and no cliff across them.
/// Decided here once per tile rather than by every vertex of every cell on every frame: on the
/// H200 the tint's vertex work was most of its cost (BENCHMARKS "Viewer").
pub fn tint_cells(map: &GrassTile, heights: &[f32]) -> Vec<u32> {
    let n = map.size as usize;
    let st = TINT_STRIDE as usize;
    let cells = (n.max(1) - 1) / st;
    let mut out = Vec::new();
    for cj in 0..cells {
        for ci in 0..cells {
            let corners = [(0, 0), (st, 0), (0, st), (st, st)].map(|(a, b)| (cj * st + b) * n + ci * st + a);
            let (lo, hi) = corners.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &k| (l.min(heights[k]), h.max(heights[k])));
            let cliff = hi - lo > CLIFF * map.spacing * st as f32;
            if !cliff && corners.iter().any(|&k| map.keep[k] > 0) {
                out.push((ci * st) as u32 | ((cj * st) as u32) << 16);
            }
        }
    }
    out
}

/// Two triangles per cell of `cells`, indexing the tint grid's vertices (`side` = (n − 1) /
/// TINT_STRIDE + 1 of them per side, row-major; vertex `g` is map sample (g mod side, g div side)
/// × TINT_STRIDE), so the cells' shared corners are shaded once.
pub fn tint_indices(cells: &[u32], n: u32) -> Vec<u32> {
    let side = (n.max(1) - 1) / TINT_STRIDE + 1;
    let mut out = Vec::with_capacity(cells.len() * 6);
    for &c in cells {
        let v = (c >> 16) / TINT_STRIDE * side + (c & 0xffff) / TINT_STRIDE;
        out.extend([v, v + 1, v + side + 1, v, v + side + 1, v + side]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5×5 map (a 2×2 tint grid): grass everywhere except the cell at (2, 0), which has none,
    /// and a wall along the last row that puts a cliff across the cells at (0, 2) and (2, 2)
    /// unless it is low.
    fn map(wall: u16) -> (GrassTile, Vec<f32>) {
        let n = 5;
        let mut keep = vec![200u8; n * n];
        for (i, j) in (2..n).flat_map(|i| (0..3).map(move |j| (i, j))) {
            keep[j * n + i] = 0;
        }
        let heights: Vec<u16> = (0..n * n).map(|k| if k / n == n - 1 { wall } else { 0 }).collect();
        let tile = GrassTile {
            patches_hash: 0,
            origin: [0.0, 0.0],
            spacing: 0.5,
            size: n as u32,
            height_min: 0.0,
            height_step: 0.01,
            heights: heights.clone(),
            keep,
            light: vec![0; n * n],
            instances: Vec::new(),
        };
        let z = heights.iter().map(|&h| f32::from(h) * 0.01).collect();
        (tile, z)
    }

    #[test]
    fn tint_cells_leave_out_bare_ground_and_cliffs() {
        let cell = |i: u32, j: u32| i | j << 16;
        // A low wall (0.5 over a cell 1 unit wide, under CLIFF · spacing · stride = 4): kept.
        let (tile, z) = map(50);
        assert_eq!(tint_cells(&tile, &z), vec![cell(0, 0), cell(0, 2), cell(2, 2)]);
        // A high one (5 units): both cells across it go.
        let (tile, z) = map(500);
        assert_eq!(tint_cells(&tile, &z), vec![cell(0, 0)]);
        // A 3×3 vertex grid: the cell at (2, 2) is the quad of vertices 4, 5, 8, 7, wound as the
        // shader's corners were (0,0), (1,0), (1,1), (0,0), (1,1), (0,1).
        assert_eq!(tint_indices(&[cell(2, 2)], 5), vec![4, 5, 8, 4, 8, 7]);
    }
}
