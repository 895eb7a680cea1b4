//! The grass products' work, apart from their registry plumbing: the patches as a `GPAT` section,
//! the irradiance volume the ground map reads, and a tile's `GRSS` (its slice of the map and its patch instances).
//!
//! The ground map itself is `grass_ground.rs`.
//!
//! **Instances**: a world-anchored grid of patches of side `s` (a whole fraction of a level-0
//! tile); cell `(gx, gy)` has its min corner at `(gx·s, gy·s)`, and draws its patch and quarter
//! turn from `Rng::keyed(seed, "grass.instance", gy·cells_x + gx)`. Its height scale is
//! `height[0] + (height[1] − height[0])·v`, `v` the mean vigour of the grassy samples under it:
//! taller grass on flat open ground, shorter on slopes and in AO-darkened hollows. A cell whose
//! samples all keep 0 gets no instance.

use kiln_formats::sections::{GrassBlade, GrassInstance, GrassLevel, GrassPatch, GrassPatches, GrassTile, IrradianceGrid};

use super::ground::GroundMap;
use super::{TileId, Tiling};
use crate::grass::{self, PatchSpec};
use crate::lighting::{IrradianceVolume, VolumeDesc};
use crate::rng::Rng;
use crate::world::GrassSpec;

/// The patches as a `GPAT` section, with their tint.
pub fn patches_section(spec: &PatchSpec, grown: &[grass::Patch]) -> GrassPatches {
    let blade = |b: &grass::Blade| GrassBlade {
        position: b.position,
        direction: b.direction,
        normal: b.normal,
        length: b.length,
        width: b.width,
        bend: b.bend,
        color: b.color,
        parent: b.parent,
    };
    GrassPatches {
        patch_size: spec.patch_size,
        tint: grass::tint(grown),
        patches: grown
            .iter()
            .map(|p| GrassPatch {
                levels: p.levels.iter().map(|l| GrassLevel { segments: l.segments, blades: l.blades.iter().map(blade).collect() }).collect(),
                flowers: p
                    .flowers
                    .iter()
                    .map(|f| kiln_formats::sections::Flower { position: f.position, height: f.height, radius: f.radius, color: f.color })
                    .collect(),
            })
            .collect(),
    }
}

/// The ambient part of the world's irradiance volume put back together from the level-0 tiles'
/// `IRVL` slices, which between them hold every cell (each with a halo of one cell that its
/// neighbours repeat), added one at a time so that no more of them need be held than the caller
/// reads at once. Its direct cells are left empty, as the ground map reads only the ambient
/// light. Cells no slice holds (none in a bake's own output) stay dark.
pub struct SlicedVolume {
    volume: IrradianceVolume,
    /// World units per cell along X and Y.
    cell: [f32; 2],
}

impl SlicedVolume {
    /// A dark volume laid out as `desc`.
    pub fn new(desc: VolumeDesc) -> SlicedVolume {
        let [nx, ny, nz] = desc.dims;
        let cell = [0, 1].map(|a| (desc.max[a] - desc.min[a]) / desc.dims[a].max(1) as f32);
        let volume = IrradianceVolume {
            min: desc.min,
            max: desc.max,
            dims: desc.dims,
            ambient: vec![[[0.0; 3]; 6]; nx * ny * nz],
            direct: Vec::new(),
            air: Vec::new(),
        };
        SlicedVolume { volume, cell }
    }

    /// Copies slice `g`'s ambient cells in.
    pub fn add(&mut self, g: &IrradianceGrid) {
        let v = &mut self.volume;
        let [nx, ny, nz] = v.dims;
        let first = [0, 1].map(|a| ((g.min[a] - v.min[a]) / self.cell[a]).round() as i64);
        let [gx, gy, gz] = g.dims.map(|d| d as usize);
        for k in 0..gz.min(nz) {
            for j in 0..gy {
                for i in 0..gx {
                    let (x, y) = (first[0] + i as i64, first[1] + j as i64);
                    if x < 0 || y < 0 || x >= nx as i64 || y >= ny as i64 {
                        continue;
                    }
                    v.ambient[x as usize + nx * (y as usize + ny * k)] = g.ambient[i + gx * (j + gy * k)];
                }
            }
        }
    }

    /// The volume with every slice added.
    pub fn finish(self) -> IrradianceVolume {
        self.volume
    }
}

/// The `GRSS` of tile `id`: its slice of the map (every `2^level`-th sample from the tile's min
/// corner, `2·tile_voxels + 1` per side) and, at level 0, its patch instances.
pub fn tile_section(map: &GroundMap, tiling: &Tiling, id: TileId, spec: &GrassSpec, seed: u64, patches_hash: u64) -> GrassTile {
    let size = 2 * tiling.tile_voxels as usize + 1;
    let step = 1usize << id.level;
    let span = (tiling.tile_voxels as usize) << id.level;
    let base = [id.x as usize * span * 2, id.y as usize * span * 2];
    let index = |i: usize, j: usize| (base[1] + j * step).min(map.n[1] - 1) * map.n[0] + (base[0] + i * step).min(map.n[0] - 1);
    let samples: Vec<usize> = (0..size).flat_map(|j| (0..size).map(move |i| (i, j))).map(|(i, j)| index(i, j)).collect();
    let heights: Vec<f32> = samples.iter().map(|&k| map.height[k]).collect();
    let (lo, hi) = heights.iter().filter(|h| h.is_finite()).fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) };
    let step_z = if hi > lo { (hi - lo) / 65535.0 } else { 1e-6 };
    let quantise = |h: f32| if h.is_finite() { ((h - lo) / step_z).round().clamp(0.0, 65535.0) as u16 } else { 0 };
    let spacing = map.spacing * step as f32;
    let origin = [base[0] as f32 * map.spacing, base[1] as f32 * map.spacing];
    let mut tile = GrassTile {
        patches_hash,
        origin,
        spacing,
        size: size as u32,
        height_min: lo,
        height_step: step_z,
        heights: heights.iter().map(|&h| quantise(h)).collect(),
        keep: samples.iter().map(|&k| map.keep[k]).collect(),
        light: samples.iter().map(|&k| map.light[k]).collect(),
        instances: Vec::new(),
    };
    if id.level == 0 {
        tile.instances = instances(map, tiling, id, spec, seed);
    }
    tile
}

/// The patch instances of level-0 tile `id` (see the module docs), in row-major order of their cells.
fn instances(map: &GroundMap, tiling: &Tiling, id: TileId, spec: &GrassSpec, seed: u64) -> Vec<GrassInstance> {
    let tile_world = f64::from(tiling.tile_voxels) * f64::from(tiling.voxel_size);
    let per_tile = spec.patches_per_tile(tile_world) as usize;
    let side = spec.patch_side(tile_world) as f32;
    let cells_x = per_tile * tiling.tiles[0] as usize;
    let mut out = Vec::new();
    for cj in 0..per_tile {
        for ci in 0..per_tile {
            let (gx, gy) = (id.x as usize * per_tile + ci, id.y as usize * per_tile + cj);
            let origin = [gx as f32 * side, gy as f32 * side];
            // Every map sample the patch's bilinear lookups may touch.
            let lo = origin.map(|o| (o / map.spacing).floor().max(0.0) as usize);
            let hi = origin.map(|o| ((o + side) / map.spacing).ceil() as usize);
            let (mut grassy, mut vigour) = (0usize, 0u64);
            for j in lo[1]..=hi[1].min(map.n[1] - 1) {
                for i in lo[0]..=hi[0].min(map.n[0] - 1) {
                    let k = j * map.n[0] + i;
                    if map.keep[k] > 0 {
                        grassy += 1;
                        vigour += u64::from(map.vigour[k]);
                    }
                }
            }
            if grassy == 0 {
                continue;
            }
            let mut rng = Rng::keyed(seed, "grass.instance", (gy * cells_x + gx) as u64);
            let patch = (rng.next_u64() % u64::from(spec.patches)) as u16;
            let rotation = (rng.next_u64() % 4) as u8;
            let v = vigour as f32 / (255.0 * grassy as f32);
            let [h0, h1] = spec.height.map(|h| h as f32);
            out.push(GrassInstance { origin, rotation, patch, height_scale: h0 + (h1 - h0) * v });
        }
    }
    out
}
