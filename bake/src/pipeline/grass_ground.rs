//! The world-wide ground map grass stands on. It has a sample every half voxel over the whole
//! world (`2·n + 1` per axis, so every tile's border samples are on it). Per sample:
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
//! **Two stages.** Everything but the light is the ground's *shape* ([`GroundShape`]: height,
//! normal, keep, vigour), made from the density volume and its occupancy before light transport,
//! while the bake holds the volume anyway, and stored; the light is added after transport from
//! the shape and the irradiance volume alone ([`light_band`], [`map`]). So the step after
//! transport never reads the density volume back.
//!
//! **Bands.** Both stages work in bands of [`BAND_ROWS`] rows. A shape band is made from the
//! ground of its rows and one row either side (the slope test reads a sample's neighbours; the AO
//! between lattice rows reads the lattice row above); a light band from its own samples. Every
//! sample's value depends on its position alone, so the bands join into the map one computation
//! of the whole would give, and shards of a bake split them among them instead of each
//! computing the whole world's map.

use std::ops::Range;

use kiln_formats::sections::rgb9e5;
use rayon::prelude::*;

use super::{GrassBakeError, Volume};
use crate::ao::{ambient_occlusion, AoSettings};
use crate::lighting::IrradianceVolume;
use crate::scatter::ground::Ground;
use crate::scatter::DensityImage;
use crate::world::GrassSpec;

/// Rows of the map in one band. A fixed count, so the bands (and the cache keys shards share
/// them under) never depend on the number of shards or threads.
pub const BAND_ROWS: usize = 32;

/// Samples of the map per axis over a density volume of `dims` samples.
pub fn samples(dims: [usize; 3]) -> [usize; 2] {
    [2 * dims[0] + 1, 2 * dims[1] + 1]
}

/// How many bands a map of `n` samples has.
pub fn band_count(n: [usize; 2]) -> usize {
    n[1].div_ceil(BAND_ROWS)
}

/// The rows of band `band` of a map of `n` samples.
fn band_rows(n: [usize; 2], band: usize) -> Range<usize> {
    (band * BAND_ROWS).min(n[1])..((band + 1) * BAND_ROWS).min(n[1])
}

/// Samples in band `band` of a map of `n` samples.
pub fn band_samples(n: [usize; 2], band: usize) -> usize {
    band_rows(n, band).len() * n[0]
}

/// What the ground's shape is made from.
pub struct ShapeInputs<'a> {
    pub volume: &'a Volume,
    pub voxel_size: f32,
    pub spec: &'a GrassSpec,
    pub ao: &'a AoSettings,
    pub image: Option<&'a DensityImage>,
    /// The water level, if the world has water: no grass on ground below it (it is flooded).
    pub water_level: Option<f32>,
}

impl ShapeInputs<'_> {
    /// Samples of the map per axis.
    pub fn samples(&self) -> [usize; 2] {
        samples(self.volume.density.dims)
    }
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

/// The ground's shape over rows of the map: everything but the light, X fastest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShapeRows {
    /// Ground height; NaN where there is no ground open to the sky.
    pub height: Vec<f32>,
    /// The ground's unit normal; zero where there is no ground.
    pub normal: Vec<[f32; 3]>,
    /// Share of blades kept × 255.
    pub keep: Vec<u8>,
    /// `AO · n_z` × 255.
    pub vigour: Vec<u8>,
}

/// Bytes of a sample in [`ShapeRows::to_bytes`].
const SHAPE_SAMPLE_BYTES: usize = 18;

impl ShapeRows {
    /// The cache form: heights (f32), normals (3 × f32), keep, vigour, each field whole, little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(SHAPE_SAMPLE_BYTES * self.height.len());
        out.extend(self.height.iter().flat_map(|h| h.to_le_bytes()));
        out.extend(self.normal.iter().flatten().flat_map(|c| c.to_le_bytes()));
        out.extend_from_slice(&self.keep);
        out.extend_from_slice(&self.vigour);
        out
    }

    /// Rows of `samples` samples from [`ShapeRows::to_bytes`].
    pub fn from_bytes(bytes: &[u8], samples: usize) -> Result<ShapeRows, String> {
        if bytes.len() != SHAPE_SAMPLE_BYTES * samples {
            return Err(format!("a ground shape of {} bytes, expected {} for {samples} samples", bytes.len(), SHAPE_SAMPLE_BYTES * samples));
        }
        let (height, rest) = bytes.split_at(4 * samples);
        let (normal, rest) = rest.split_at(12 * samples);
        let (keep, vigour) = rest.split_at(samples);
        let float = |c: &[u8]| f32::from_le_bytes(<[u8; 4]>::try_from(c).expect("4 bytes"));
        Ok(ShapeRows {
            height: height.chunks_exact(4).map(float).collect(),
            normal: normal.chunks_exact(12).map(|c| [float(&c[..4]), float(&c[4..8]), float(&c[8..])]).collect(),
            keep: keep.to_vec(),
            vigour: vigour.to_vec(),
        })
    }
}

/// The world-wide ground's shape: the map without its light.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroundShape {
    /// Samples per axis.
    pub n: [usize; 2],
    /// World units between samples (half a voxel).
    pub spacing: f32,
    /// Every row, X fastest.
    pub rows: ShapeRows,
}

/// A band of the map's light, rgb9e5, in its cache form (little-endian words).
pub fn light_bytes(light: &[u32]) -> Vec<u8> {
    light.iter().flat_map(|l| l.to_le_bytes()).collect()
}

/// A band of `samples` samples of light from [`light_bytes`].
pub fn light_from_bytes(bytes: &[u8], samples: usize) -> Result<Vec<u32>, String> {
    if bytes.len() != 4 * samples {
        return Err(format!("a band of ground light of {} bytes, expected {} for {samples} samples", bytes.len(), 4 * samples));
    }
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes(<[u8; 4]>::try_from(c).expect("4 bytes"))).collect())
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

/// Ground samples of rows `first..` of the map: height (NaN where none) and normal, X fastest.
struct GroundRows {
    hits: Vec<(f32, [f32; 3])>,
    first: usize,
    n: [usize; 2],
}

impl GroundRows {
    /// The sample at `(i, j)`; `j` must be one of the rows held.
    fn at(&self, i: usize, j: usize) -> (f32, [f32; 3]) {
        self.hits[(j - self.first) * self.n[0] + i]
    }
}

/// Band `band` of the ground's shape (see the module docs).
pub fn shape_band(inp: &ShapeInputs, band: usize) -> Result<ShapeRows, GrassBakeError> {
    shape_rows(inp, band_rows(inp.samples(), band))
}

/// The shape of the map's rows `rows`: the same values, whichever rows a band holds.
pub fn shape_rows(inp: &ShapeInputs, rows: Range<usize>) -> Result<ShapeRows, GrassBakeError> {
    let vs = inp.voxel_size;
    let n = inp.samples();
    let samples = rows.len() * n[0];
    let Some(ground) = Ground::new(&inp.volume.density, vs) else {
        return Ok(ShapeRows { height: vec![f32::NAN; samples], normal: vec![[0.0; 3]; samples], keep: vec![0; samples], vigour: vec![0; samples] });
    };
    let spacing = 0.5 * vs;
    let extent = ground.extent();
    // The band's rows and one either side, in parallel, collected in order.
    let first = rows.start.saturating_sub(1);
    let hits: Vec<(f32, [f32; 3])> = (first..(rows.end + 1).min(n[1]))
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
    let ground = GroundRows { hits, first, n };
    let held = first..first + ground.hits.len() / n[0];

    // AO at the samples on the voxel lattice (even i and j), interpolated between them.
    let lattice: Vec<(usize, usize)> = held
        .clone()
        .filter(|j| j % 2 == 0)
        .flat_map(|j| (0..n[0]).step_by(2).map(move |i| (i, j)))
        .filter(|&(i, j)| ground.at(i, j).0.is_finite())
        .collect();
    // Computed even without AO pruning: an instance's height scale reads it.
    let positions: Vec<[f32; 3]> = lattice.iter().map(|&(i, j)| [i as f32 * 0.5, j as f32 * 0.5, ground.at(i, j).0 / vs]).collect();
    let normals: Vec<[f32; 3]> = lattice.iter().map(|&(i, j)| ground.at(i, j).1).collect();
    let ao_of_lattice = ambient_occlusion(&inp.volume.occupancy, &positions, &normals, inp.ao)?;
    let mut ao_lattice = vec![f32::NAN; ground.hits.len()];
    for (&(i, j), &a) in lattice.iter().zip(&ao_of_lattice) {
        ao_lattice[(j - first) * n[0] + i] = a;
    }
    let ao_at = |i: usize, j: usize| -> f32 {
        let (i0, j0) = (i & !1, j & !1);
        let (i1, j1) = ((i + 1) & !1, (j + 1) & !1);
        let mut sum = 0.0;
        let mut count = 0.0;
        for (a, b) in [(i0, j0), (i1, j0), (i0, j1), (i1, j1)] {
            if a < n[0] && b < n[1] && ao_lattice[(b - first) * n[0] + a].is_finite() {
                sum += ao_lattice[(b - first) * n[0] + a];
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
    let height_band = spec.height_band.map(|v| v as f32);
    let dims = inp.volume.density.dims;
    let world = [(dims[0] - 1) as f32 * vs, (dims[1] - 1) as f32 * vs];
    let sample = |s: usize| -> (u8, u8) {
        let (i, j) = (s % n[0], rows.start + s / n[0]);
        let (z, normal) = ground.at(i, j);
        if !z.is_finite() {
            return (0, 0);
        }
        let ao = ao_at(i, j);
        let vigour = ao.clamp(0.0, 1.0) * normal[2].max(0.0);
        let mut keep = slope_keep(normal[2], cos_limit);
        if spec.ao_prune {
            keep *= ao_keep(ao);
        }
        if z < height_band[0] || z > height_band[1] || inp.water_level.is_some_and(|level| z < level) {
            keep = 0.0;
        }
        if let Some(img) = inp.image {
            keep *= img.sample(i as f32 * spacing / world[0], j as f32 * spacing / world[1]);
        }
        if keep > 0.0 && !gentle(&ground, i, j, spacing, rise, 0.01 * vs) {
            keep = 0.0;
        }
        (unit_to_u8(keep), unit_to_u8(vigour))
    };
    let per: Vec<(u8, u8)> = (0..samples).into_par_iter().with_min_len(4096).map(sample).collect();
    let hit = |s: usize| ground.at(s % n[0], rows.start + s / n[0]);
    Ok(ShapeRows {
        height: (0..samples).map(|s| hit(s).0).collect(),
        normal: (0..samples).map(|s| hit(s).1).collect(),
        keep: per.iter().map(|s| s.0).collect(),
        vigour: per.iter().map(|s| s.1).collect(),
    })
}

/// The world's shape from every band of it in order.
pub fn join_shape(n: [usize; 2], voxel_size: f32, bands: Vec<ShapeRows>) -> GroundShape {
    // Reserved whole, so that joining never holds a grown copy beside the bands.
    let total = n[0] * n[1];
    let mut rows = ShapeRows {
        height: Vec::with_capacity(total),
        normal: Vec::with_capacity(total),
        keep: Vec::with_capacity(total),
        vigour: Vec::with_capacity(total),
    };
    for b in bands {
        rows.height.extend(b.height);
        rows.normal.extend(b.normal);
        rows.keep.extend(b.keep);
        rows.vigour.extend(b.vigour);
    }
    GroundShape { n, spacing: 0.5 * voxel_size, rows }
}

/// Band `band` of the map's light: the irradiance volume's ambient part (`light`) half a voxel
/// above the ground, for the ground's normal, rgb9e5; 0 where there is no ground.
pub fn light_band(shape: &GroundShape, light: &IrradianceVolume, voxel_size: f32, band: usize) -> Vec<u32> {
    let (n, vs, spacing) = (shape.n, voxel_size, shape.spacing);
    let rows = band_rows(n, band);
    let first = rows.start * n[0];
    let sample = |s: usize| -> u32 {
        let (i, j) = (s % n[0], rows.start + s / n[0]);
        let (z, normal) = (shape.rows.height[first + s], shape.rows.normal[first + s]);
        if !z.is_finite() {
            return 0;
        }
        let p = [i as f32 * spacing + 0.5 * vs * normal[0], j as f32 * spacing + 0.5 * vs * normal[1], z + 0.5 * vs * normal[2]];
        rgb9e5::encode(light.sample_ambient(p, normal))
    };
    (0..rows.len() * n[0]).into_par_iter().with_min_len(4096).map(sample).collect()
}

/// The map from the shape and every band of its light in order; the string describes it for the
/// bake report.
pub fn map(shape: &GroundShape, light: Vec<Vec<u32>>) -> (GroundMap, String) {
    let n = shape.n;
    let count = light.len();
    let map = GroundMap {
        n,
        spacing: shape.spacing,
        height: shape.rows.height.clone(),
        keep: shape.rows.keep.clone(),
        vigour: shape.rows.vigour.clone(),
        light: light.concat(),
    };
    let grassy = map.keep.iter().filter(|&&k| k > 0).count();
    let detail =
        format!("ground map {}×{} samples ({:.1} % grassy) in {count} bands", n[0], n[1], 100.0 * grassy as f64 / map.keep.len().max(1) as f64);
    (map, detail)
}

/// Whether every sample around `(i, j)` (8-neighbourhood, inside the map) has ground within
/// `rise · distance + slack` of this one's height, and the map's gradient toward each quadrant
/// (from the two neighbours along X and Y on that side) is at most `rise` (+ `slack` per sample):
/// each direction alone could allow a steeper slope diagonally.
fn gentle(ground: &GroundRows, i: usize, j: usize, spacing: f32, rise: f32, slack: f32) -> bool {
    let n = ground.n;
    let z = ground.at(i, j).0;
    let height = |di: i64, dj: i64| {
        let (a, b) = (i as i64 + di, j as i64 + dj);
        (a >= 0 && b >= 0 && a < n[0] as i64 && b < n[1] as i64).then(|| ground.at(a as usize, b as usize).0)
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
