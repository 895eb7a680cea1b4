//! Per-vertex ambient occlusion (AO) from the solid/air occupancy of the density volume.
//!
//! # What is computed, exactly
//!
//! - **Occupancy.** Voxel `(x, y, z)` of the volume is solid iff its density is `> 0` (NaN is air).
//!   Outside the volume everything with `z < 0` is solid (an infinite ground plane) and everything
//!   else is air.
//! - **Sample → voxel.** A point `q` (global voxel units) samples its nearest voxel: each
//!   coordinate rounded to the nearest integer, ties to even (IEEE `f32` rounding).
//! - **Start.** For a vertex at `p` with normal `n`, let `n̂ = n / |n|` and `s = p + o·n̂`, where
//!   `o = start_offset_voxels` (default ½ voxel, which lifts the start off the surface it lies on).
//!   A zero normal has no hemisphere: its AO is 1.
//! - **Directions.** Unit vectors `d̂_i` ([`AoDirections`]); `Grid26` (default) is the 26 normalised
//!   offsets of the 3×3×3 neighbourhood minus its centre. Each has weight `w_i = n̂·d̂_i`; directions
//!   with `w_i ≤ 0` are ignored.
//! - **March.** Along `d̂_i` the samples are `q_k = s + (k·h)·d̂_i` for `k = 1..=K`, `h = step_voxels`
//!   (default 1), `K = floor(R / h)`, `R = radius_voxels` (default 128 voxels = 8 world units). The
//!   march stops at the first sample that is solid (a *hit* at `k`) or that lies outside the volume
//!   without being below the ground (*open*: a straight ray that has left the box never re-enters it).
//! - **Visibility.** `v_i = (k − 1)·h / R` for a hit at `k` — the free distance the ray travelled
//!   before reaching solid, as a fraction of the radius — and `v_i = 1` for an open ray or no hit
//!   within `K` samples.
//! - **AO** `= (Σ w_i·v_i / Σ w_i)^power` (`power` defaults to 1), summed in direction order, in
//!   `[0, 1]`, 1 = fully open. On an open horizontal plane every `v_i` is 1, so AO is exactly 1.
//!
//! `v_i` is distance-weighted rather than binary (hit / no hit) on purpose: with an 8-unit radius
//! almost every ray inside a cave hits *something*, so binary visibility would be ~0 everywhere
//! underground and could not tell a crevice from a vast chamber; it would also quantise AO to a
//! handful of levels (one per direction in the hemisphere), which bands visibly across smooth floors.
//! The free distance varies continuously with the geometry, so neighbouring vertices get
//! neighbouring values and near walls darken more than far ones.
//!
//! # Empty-space skipping
//!
//! The march is not a unit-step loop. [`OccupancyField`] stores, per voxel, the Chebyshev (L∞)
//! distance `D` to the nearest solid voxel (ground included, capped at 255). Every voxel within
//! L∞ distance `D − 1` of an air voxel `v` is air, so every point of the cube `v ± (D − ½)`, clipped
//! to the volume, samples air. From a sample in `v` the march jumps straight to the first sample
//! beyond that cube (shrunk by 1/32 voxel to absorb `f32` rounding). It only ever jumps over
//! samples that are provably air inside the volume, so it returns **bit-identical** results to the
//! unit-step march of the definition above (the tests compare the two).

mod field;
mod march;
#[cfg(test)]
mod tests;

pub use field::{OccupancyField, MAX_DIM};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Errors of the AO stage. Bad input is reported, never panicked on.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AoError {
    /// A volume dimension is zero or larger than [`MAX_DIM`].
    #[error("occupancy volume dims {dims:?} must each be in 1..={max}", max = MAX_DIM)]
    BadDims { dims: [usize; 3] },
    /// The density slice does not have one sample per voxel.
    #[error("occupancy volume dims {dims:?} need {expected} densities but {actual} were given")]
    DensityCount { dims: [usize; 3], expected: usize, actual: usize },
    /// A setting is out of its documented range.
    #[error("AO setting `{name}` = {value} is invalid: {reason}")]
    BadSetting { name: &'static str, value: f64, reason: &'static str },
    /// `positions` and `normals` differ in length.
    #[error("{positions} vertex positions but {normals} normals")]
    LengthMismatch { positions: usize, normals: usize },
    /// A vertex position or normal has a NaN or infinite component.
    #[error("vertex {index} has a non-finite position or normal")]
    NonFiniteVertex { index: usize },
}

/// The set of directions rays are cast in (over the whole sphere; the normal picks the hemisphere).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AoDirections {
    /// The 26 normalised offsets of the 3×3×3 neighbourhood minus its centre, in X-fastest order.
    Grid26,
    /// `count` near-uniform directions on a spherical Fibonacci lattice (1..=4096).
    Fibonacci { count: u32 },
}

impl AoDirections {
    /// Largest `Fibonacci` count accepted: beyond this, AO cost grows with no visible gain.
    pub const MAX_FIBONACCI: u32 = 4096;

    /// The unit direction vectors, in a fixed order.
    pub fn unit_vectors(&self) -> Vec<[f32; 3]> {
        match *self {
            AoDirections::Grid26 => {
                let mut out = Vec::with_capacity(26);
                for z in -1i32..=1 {
                    for y in -1i32..=1 {
                        for x in -1i32..=1 {
                            if (x, y, z) != (0, 0, 0) {
                                let len = ((x * x + y * y + z * z) as f32).sqrt();
                                out.push([x as f32 / len, y as f32 / len, z as f32 / len]);
                            }
                        }
                    }
                }
                out
            }
            AoDirections::Fibonacci { count } => {
                // Golden-angle spiral, equal-area bands in z; computed in f64 for accuracy.
                let n = count as f64;
                let golden_angle = std::f64::consts::PI * (3.0 - 5f64.sqrt());
                (0..count)
                    .map(|i| {
                        let z = 1.0 - (2.0 * i as f64 + 1.0) / n;
                        let r = (1.0 - z * z).max(0.0).sqrt();
                        let phi = golden_angle * i as f64;
                        [(r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32]
                    })
                    .collect()
            }
        }
    }
}

/// AO parameters. All lengths are in voxels (1 voxel = 1/16 world unit in the default world).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AoSettings {
    /// Ray length `R`; default 128 voxels (8 world units). Range (0, 4096].
    pub radius_voxels: f32,
    /// Ray directions; default [`AoDirections::Grid26`].
    pub directions: AoDirections,
    /// Sample spacing `h` along a ray; default 1. Range [1/64, 1]: at most one voxel per axis per
    /// step, so a ray can never step over a one-voxel-thick wall.
    pub step_voxels: f32,
    /// Distance `o` the ray start is lifted off the vertex along its normal; default ½. Range [0, 4].
    pub start_offset_voxels: f32,
    /// Exponent applied to the final AO (contrast shaping); default 1. Range (0, 16].
    pub power: f32,
}

impl Default for AoSettings {
    fn default() -> Self {
        AoSettings {
            radius_voxels: 128.0,
            directions: AoDirections::Grid26,
            step_voxels: 1.0,
            start_offset_voxels: 0.5,
            power: 1.0,
        }
    }
}

impl AoSettings {
    /// Checks every setting against its documented range.
    pub fn validate(&self) -> Result<(), AoError> {
        fn check(name: &'static str, value: f32, ok: bool, reason: &'static str) -> Result<(), AoError> {
            if value.is_finite() && ok {
                Ok(())
            } else {
                Err(AoError::BadSetting { name, value: value as f64, reason })
            }
        }
        let r = self.radius_voxels;
        check("radius_voxels", r, r > 0.0 && r <= 4096.0, "must be in (0, 4096]")?;
        let h = self.step_voxels;
        check("step_voxels", h, (1.0 / 64.0..=1.0).contains(&h), "must be in [1/64, 1]")?;
        let o = self.start_offset_voxels;
        check("start_offset_voxels", o, (0.0..=4.0).contains(&o), "must be in [0, 4]")?;
        let p = self.power;
        check("power", p, p > 0.0 && p <= 16.0, "must be in (0, 16]")?;
        if let AoDirections::Fibonacci { count } = self.directions {
            if count == 0 || count > AoDirections::MAX_FIBONACCI {
                return Err(AoError::BadSetting {
                    name: "directions.count",
                    value: count as f64,
                    reason: "must be in 1..=4096",
                });
            }
        }
        Ok(())
    }
}

/// AO in `[0, 1]` (1 = fully open) for each vertex, as defined in the [module docs](self).
///
/// `positions` are in global voxel units; `normals` need not be normalised (a zero normal gives 1).
/// The output has one value per vertex, in input order, and does not depend on the thread count.
pub fn ambient_occlusion(
    field: &OccupancyField,
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    settings: &AoSettings,
) -> Result<Vec<f32>, AoError> {
    settings.validate()?;
    if positions.len() != normals.len() {
        return Err(AoError::LengthMismatch { positions: positions.len(), normals: normals.len() });
    }
    let finite = |v: &[f32; 3]| v.iter().all(|c| c.is_finite());
    if let Some(index) = positions.iter().zip(normals).position(|(p, n)| !(finite(p) && finite(n))) {
        return Err(AoError::NonFiniteVertex { index });
    }
    let kernel = march::Kernel::new(settings);
    // Rays of nearby vertices visit the same voxels, so march vertices in Morton order of their
    // position: the field's working set then stays in cache whatever order the caller used.
    // Order only changes when each vertex is computed, never its value.
    let mut order: Vec<u64> = positions
        .par_iter()
        .enumerate()
        .map(|(i, p)| (morton_key(*p) << 34) | i as u64)
        .collect();
    order.par_sort_unstable();
    let sorted: Vec<f32> = order
        .par_iter()
        .with_min_len(512)
        .map(|&key| {
            let i = (key & ((1 << 34) - 1)) as usize;
            kernel.vertex_ao(positions[i], normals[i], |rays, hits| {
                march::march_interleaved(field, rays, kernel.max_samples, hits)
            })
        })
        .collect();
    let mut ao = vec![0.0; positions.len()];
    for (&key, &a) in order.iter().zip(&sorted) {
        ao[(key & ((1 << 34) - 1)) as usize] = a;
    }
    Ok(ao)
}

/// A 30-bit Morton code of the position in cells of 4 voxels (10 bits per axis, clamped).
fn morton_key(p: [f32; 3]) -> u64 {
    let spread = |c: f32| {
        // Saturating cast, then clamp: positions far outside just share the edge cells.
        let mut v = ((c * 0.25) as i32).clamp(0, 1023) as u64;
        v = (v | (v << 16)) & 0x0300_00FF;
        v = (v | (v << 8)) & 0x0300_F00F;
        v = (v | (v << 4)) & 0x030C_30C3;
        (v | (v << 2)) & 0x0924_9249
    };
    spread(p[0]) | (spread(p[1]) << 1) | (spread(p[2]) << 2)
}
