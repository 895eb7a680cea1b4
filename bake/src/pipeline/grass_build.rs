//! The grass products' work, apart from their registry plumbing: the patches as a `GPAT` section,
//! the world-wide ground map, and a tile's `GRSS` (its slice of the map and its patch instances).
//!
//! **The ground map** has a sample every half voxel over the whole world (`2·n + 1` per axis, so
//! every tile's border samples are on it). Per sample:
//! - height: the ground open to the sky (`scatter::ground::Ground::surface`, the topmost
//!   air→solid crossing of the interpolated density), none in a column with a solid top or no
//!   solid, or outside the volume's samples;
//! - keep = slope × AO × height band × density image, each in [0, 1]:
//!   - slope: `cos(max_slope) / n_z` where `n_z ≥ cos(max_slope)`, else 0. The patches are grown
//!     at `density / cos(max_slope)` per unit² of *horizontal* area and a unit of horizontal area
//!     holds `1 / n_z` units of surface, so blades per unit of surface are `density` on any slope;
//!   - the map's own gradient: 0 when any of the 8 neighbouring samples has no ground or rises or
//!     falls by more than the slope limit allows over its distance (plus a hundredth of a voxel), or
//!     the gradient toward a quadrant (from the neighbours along X and Y) is steeper than it, so no
//!     cell with a kept corner spans a cliff edge, an overhang's lip or a cave's mouth, and a blade
//!     never stands on a cliff face or hangs in the air (every blade's z is the bilinear height of
//!     the cell it is in);
//!   - AO pruning (`ao_prune`): `clamp(5·(AO − 0.8), 0, 1)` as the reference engine, with AO from
//!     `ao::ambient_occlusion` over the occupancy field with the world's `[ao]` settings, computed at
//!     the samples on the voxel lattice (every other sample) and interpolated between them;
//!   - `height_band` and `density_image` (mapped like the trees');
//!   - water: 0 on ground below the water level (ground open to the sky there is flooded).
//! - light: the baked irradiance volume's ambient part (sky, bounces and static lights; the sun is
//!   the renderer's) at half a voxel above the ground for the ground's normal, as tree lighting reads it.
//! - vigour: `AO · n_z` (1 on open flat ground), which picks an instance's height scale.
//!
//! **Instances**: a world-anchored grid of patches of side `s` (a whole fraction of a level-0
//! tile); cell `(gx, gy)` has its min corner at `(gx·s, gy·s)`, and draws its patch and quarter
//! turn from `Rng::keyed(seed, "grass.instance", gy·cells_x + gx)`. Its height scale is
//! `height[0] + (height[1] − height[0])·v`, `v` the mean vigour of the grassy samples under it:
//! taller grass on flat open ground, shorter on slopes and in AO-darkened hollows. A cell whose
//! samples all keep 0 gets no instance.

use kiln_formats::sections::{rgb9e5, GrassBlade, GrassInstance, GrassLevel, GrassPatch, GrassPatches, GrassTile, IrradianceGrid};
use rayon::prelude::*;

use super::{GrassBakeError, TileId, Tiling, Volume};
use crate::ao::{ambient_occlusion, AoSettings};
use crate::grass::{self, PatchSpec};
use crate::lighting::{IrradianceVolume, VolumeDesc};
use crate::rng::Rng;
use crate::scatter::ground::Ground;
use crate::scatter::DensityImage;
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

/// The world's irradiance volume (`desc`) put back together from the level-0 tiles' `IRVL` slices,
/// which between them hold every cell (each with a halo of one cell that its neighbours repeat).
/// Cells no slice holds (none in a bake's own output) stay dark.
pub fn irradiance_volume(desc: VolumeDesc, slices: &[IrradianceGrid]) -> IrradianceVolume {
    let [nx, ny, nz] = desc.dims;
    let mut v = IrradianceVolume {
        min: desc.min,
        max: desc.max,
        dims: desc.dims,
        ambient: vec![[[0.0; 3]; 6]; nx * ny * nz],
        direct: vec![[[0.0; 3]; 6]; nx * ny * nz],
        air: Vec::new(),
    };
    let cell = [0, 1].map(|a| (desc.max[a] - desc.min[a]) / desc.dims[a].max(1) as f32);
    for g in slices {
        let first = [0, 1].map(|a| ((g.min[a] - desc.min[a]) / cell[a]).round() as i64);
        let [gx, gy, gz] = g.dims.map(|d| d as usize);
        for k in 0..gz.min(nz) {
            for j in 0..gy {
                for i in 0..gx {
                    let (x, y) = (first[0] + i as i64, first[1] + j as i64);
                    if x < 0 || y < 0 || x >= nx as i64 || y >= ny as i64 {
                        continue;
                    }
                    let (src, dst) = (i + gx * (j + gy * k), x as usize + nx * (y as usize + ny * k));
                    v.ambient[dst] = g.ambient[src];
                    v.direct[dst] = g.direct[src];
                }
            }
        }
    }
    v
}

/// What the ground map is made from.
pub struct GroundInputs<'a> {
    pub volume: &'a Volume,
    pub light: &'a IrradianceVolume,
    pub voxel_size: f32,
    pub spec: &'a GrassSpec,
    pub ao: &'a AoSettings,
    pub image: Option<&'a DensityImage>,
    /// The water level, if the world has water: no grass on ground below it (it is flooded).
    pub water_level: Option<f32>,
}

/// The world-wide ground map (see the module docs): `n[0] × n[1]` samples every `spacing`, X fastest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroundMap {
    /// Samples per axis.
    pub n: [usize; 2],
    /// World units between samples (half a voxel).
    pub spacing: f32,
    /// Ground height; NaN where there is no ground open to the sky.
    pub height: Vec<f32>,
    /// Share of blades kept × 255.
    pub keep: Vec<u8>,
    /// `AO · n_z` × 255.
    pub vigour: Vec<u8>,
    /// Baked ambient irradiance, rgb9e5.
    pub light: Vec<u32>,
}

/// `clamp(5·(AO − 0.8), 0, 1)`: the share of blades the reference engine keeps at `ao`.
pub fn ao_keep(ao: f32) -> f32 {
    (5.0 * (ao - 0.8)).clamp(0.0, 1.0)
}

/// The slope factor at a ground normal's `n_z`: `cos(max_slope) / n_z` up to the limit, else 0.
pub fn slope_keep(n_z: f32, cos_limit: f32) -> f32 {
    if n_z >= cos_limit && n_z > 0.0 {
        (cos_limit / n_z).min(1.0)
    } else {
        0.0
    }
}

fn unit_to_u8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Computes the ground map; the string describes the work for the bake report.
pub fn ground_map(inp: &GroundInputs) -> Result<(GroundMap, String), GrassBakeError> {
    let vs = inp.voxel_size;
    let dims = inp.volume.density.dims;
    let n = [2 * dims[0] + 1, 2 * dims[1] + 1];
    let spacing = 0.5 * vs;
    let Some(ground) = Ground::new(&inp.volume.density, vs) else {
        return Ok((GroundMap { n, spacing, height: vec![f32::NAN; n[0] * n[1]], ..GroundMap::default() }, "no ground".into()));
    };
    let extent = ground.extent();
    let clock = std::time::Instant::now();
    // Ground: height and normal per sample, rows in parallel, collected in order.
    let hits: Vec<(f32, [f32; 3])> = (0..n[1])
        .into_par_iter()
        .flat_map_iter(|j| {
            let ground = &ground;
            (0..n[0]).map(move |i| {
                let (x, y) = (i as f32 * spacing, j as f32 * spacing);
                if x > extent[0] || y > extent[1] {
                    return (f32::NAN, [0.0; 3]);
                }
                ground.surface(x, y).map_or((f32::NAN, [0.0; 3]), |h| (h.z, h.normal))
            })
        })
        .collect();
    let t_ground = clock.elapsed().as_secs_f64();
    let clock = std::time::Instant::now();

    // AO at the samples on the voxel lattice (even i and j), interpolated between them.
    let at = |i: usize, j: usize| j * n[0] + i;
    let lattice: Vec<usize> =
        (0..n[1]).step_by(2).flat_map(|j| (0..n[0]).step_by(2).map(move |i| at(i, j))).filter(|&k| hits[k].0.is_finite()).collect();
    // Computed even without AO pruning: an instance's height scale reads it.
    let positions: Vec<[f32; 3]> = lattice.iter().map(|&k| [(k % n[0]) as f32 * 0.5, (k / n[0]) as f32 * 0.5, hits[k].0 / vs]).collect();
    let normals: Vec<[f32; 3]> = lattice.iter().map(|&k| hits[k].1).collect();
    let ao_of_lattice = ambient_occlusion(&inp.volume.occupancy, &positions, &normals, inp.ao)?;
    let mut ao_lattice = vec![f32::NAN; n[0] * n[1]];
    for (&k, &a) in lattice.iter().zip(&ao_of_lattice) {
        ao_lattice[k] = a;
    }
    let t_ao = clock.elapsed().as_secs_f64();
    let clock = std::time::Instant::now();
    let ao_at = |i: usize, j: usize| -> f32 {
        let (i0, j0) = (i & !1, j & !1);
        let (i1, j1) = ((i + 1) & !1, (j + 1) & !1);
        let mut sum = 0.0;
        let mut count = 0.0;
        for (a, b) in [(i0, j0), (i1, j0), (i0, j1), (i1, j1)] {
            if a < n[0] && b < n[1] && ao_lattice[at(a, b)].is_finite() {
                sum += ao_lattice[at(a, b)];
                count += 1.0;
            }
        }
        if count > 0.0 {
            sum / count
        } else {
            0.0
        }
    };

    let spec = inp.spec;
    let cos_limit = libm::cos(spec.max_slope.to_radians()) as f32;
    let rise = libm::tan(spec.max_slope.to_radians()) as f32;
    let band = spec.height_band.map(|v| v as f32);
    let world = [(dims[0] - 1) as f32 * vs, (dims[1] - 1) as f32 * vs];
    let sample = |k: usize| -> (u8, u8, u32) {
        let (i, j) = (k % n[0], k / n[0]);
        let (z, normal) = hits[k];
        if !z.is_finite() {
            return (0, 0, 0);
        }
        let ao = ao_at(i, j);
        let vigour = ao.clamp(0.0, 1.0) * normal[2].max(0.0);
        let p = [i as f32 * spacing + 0.5 * vs * normal[0], j as f32 * spacing + 0.5 * vs * normal[1], z + 0.5 * vs * normal[2]];
        let light = rgb9e5::encode(inp.light.sample(p, normal).0);
        let mut keep = slope_keep(normal[2], cos_limit);
        if spec.ao_prune {
            keep *= ao_keep(ao);
        }
        if z < band[0] || z > band[1] || inp.water_level.is_some_and(|level| z < level) {
            keep = 0.0;
        }
        if let Some(img) = inp.image {
            keep *= img.sample(i as f32 * spacing / world[0], j as f32 * spacing / world[1]);
        }
        if keep > 0.0 && !gentle(&hits, n, i, j, spacing, rise, 0.01 * vs) {
            keep = 0.0;
        }
        (unit_to_u8(keep), unit_to_u8(vigour), light)
    };
    let per: Vec<(u8, u8, u32)> = (0..n[0] * n[1]).into_par_iter().with_min_len(4096).map(sample).collect();
    let t_keep = clock.elapsed().as_secs_f64();
    let grassy = per.iter().filter(|s| s.0 > 0).count();
    let detail = format!(
        "ground map {}×{} samples ({:.1} % grassy): ground {t_ground:.2}s, AO of {} samples {t_ao:.2}s, keep and light {t_keep:.2}s",
        n[0],
        n[1],
        100.0 * grassy as f64 / per.len().max(1) as f64,
        lattice.len()
    );
    let map = GroundMap {
        n,
        spacing,
        height: hits.iter().map(|h| h.0).collect(),
        keep: per.iter().map(|s| s.0).collect(),
        vigour: per.iter().map(|s| s.1).collect(),
        light: per.iter().map(|s| s.2).collect(),
    };
    Ok((map, detail))
}

/// Whether every sample around `(i, j)` (8-neighbourhood, inside the map) has ground within
/// `rise · distance + slack` of this one's height, and the map's gradient toward each quadrant
/// (from the two neighbours along X and Y on that side) is at most `rise` (+ `slack` per sample):
/// each direction alone could allow a steeper slope diagonally.
fn gentle(hits: &[(f32, [f32; 3])], n: [usize; 2], i: usize, j: usize, spacing: f32, rise: f32, slack: f32) -> bool {
    let z = hits[j * n[0] + i].0;
    let height = |di: i64, dj: i64| {
        let (a, b) = (i as i64 + di, j as i64 + dj);
        (a >= 0 && b >= 0 && a < n[0] as i64 && b < n[1] as i64).then(|| hits[b as usize * n[0] + a as usize].0)
    };
    for dj in -1i64..=1 {
        for di in -1i64..=1 {
            let Some(other) = height(di, dj).filter(|_| (di, dj) != (0, 0)) else { continue };
            let dist = if di != 0 && dj != 0 { spacing * std::f32::consts::SQRT_2 } else { spacing };
            if !other.is_finite() || (other - z).abs() > rise * dist + slack {
                return false;
            }
        }
    }
    let limit = rise + slack / spacing;
    for (si, sj) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
        if let (Some(hx), Some(hy)) = (height(si, 0), height(0, sj)) {
            let (gx, gy) = ((hx - z) / spacing, (hy - z) / spacing);
            if gx * gx + gy * gy > limit * limit {
                return false;
            }
        }
    }
    true
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
