//! Per-vertex ambient occlusion (AO) from the solid/air occupancy of the density volume.
//!
//! # What is computed, exactly
//!
//! - **Occupancy.** Voxel `(x, y, z)` of the volume is solid iff its density is `> 0` (NaN is air).
//!   Outside the volume everything with `z < 0` is solid (an infinite ground plane) and everything
//!   else is air.
//! - **Start voxel.** For a vertex at `p` with normal `n`, let `n̂ = n / |n|`; rays start from the
//!   voxel `c` nearest to `p + o·n̂` (each coordinate rounded to the nearest integer, ties to even),
//!   where `o = start_offset_voxels` (default 1 voxel). A zero normal has no hemisphere: its AO is 1.
//!   Why 1: rounding moves the start by at most ½ per axis, i.e. by at most `½·|n̂|₁ ≤ √3/2 < 1`
//!   along the normal, so on any flat surface the start voxel stays on the air side; every ray
//!   then moves away from the surface (`n̂·e_i > 0`), so an open plane of any tilt gets AO exactly
//!   1 instead of speckles of self-occlusion.
//! - **Directions.** The 26 lattice offsets `e_i` of the 3×3×3 neighbourhood minus its centre
//!   ([`AoDirections::Grid26`]), with unit vectors `d̂_i = e_i / |e_i|` and weights `w_i = n̂·d̂_i`;
//!   directions with `w_i ≤ 0` are ignored.
//! - **March.** Along direction `i` the samples are the voxels `c + k·e_i` for `k = 1..=K_i`,
//!   `K_i = floor(R / |e_i|)`, `R = radius_voxels` (default 128 voxels = 8 world units): the ray
//!   walks the lattice line, one voxel per axis per sample, so it cannot pass through a wall
//!   without sampling it, and its samples are `|e_i|` (1, √2 or √3 voxels) apart. The march stops
//!   at the first sample that is solid (a *hit* at `k`) or that lies outside the volume without
//!   being below the ground (*open*: a straight ray that has left the box never re-enters it).
//! - **Visibility.** `v_i = (k − 1)·|e_i| / R` for a hit at `k` — the free distance the ray
//!   travelled before reaching solid, as a fraction of the radius — and `v_i = 1` for an open ray
//!   or no hit within `K_i` samples.
//! - **AO** `= (Σ w_i·v_i / Σ w_i)^power` (`power` defaults to 1), summed in direction order (X
//!   fastest, as [`AoDirections::offsets`] lists them), in `[0, 1]`, 1 = fully open.
//!
//! `v_i` is distance-weighted rather than binary (hit / no hit) on purpose: with an 8-unit radius
//! almost every ray inside a cave hits *something*, so binary visibility would be ~0 everywhere
//! underground and could not tell a crevice from a vast chamber; it would also quantise AO to a
//! handful of levels (one per direction in the hemisphere), which bands visibly across smooth floors.
//! The free distance varies smoothly with the geometry, so nearby vertices get nearby values and
//! near walls darken more than far ones.
//!
//! Marching the lattice rather than sampling a continuous ray at sub-voxel positions is a
//! deliberate trade: the start is quantised to a voxel (AO moves by at most `|e_i| / R` ≈ 1 % per
//! ray from one voxel to the next), but every sample is an exact voxel and a march step is one
//! byte load and an add, several times faster than rounding float positions.
//!
//! # Empty-space skipping
//!
//! The march is not a unit-step loop. [`OccupancyField`] stores, per voxel, the Chebyshev (L∞)
//! distance `D` to the nearest solid voxel (ground included, capped at 255). Samples `k + 1 ..
//! k + D − 1` are lattice neighbours of sample `k` within L∞ distance `D − 1`, hence air, so the
//! march jumps straight to sample `k + D`. It only ever jumps over samples that are provably air,
//! so it returns **bit-identical** results to the unit-step march of the definition above (the
//! tests compare the two).

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
    BadDims {
        /// The requested samples per axis (x, y, z).
        dims: [usize; 3],
    },
    /// The density slice does not have one sample per voxel.
    #[error("occupancy volume dims {dims:?} need {expected} densities but {actual} were given")]
    DensityCount {
        /// The volume's samples per axis (x, y, z).
        dims: [usize; 3],
        /// Their product: the number of densities needed.
        expected: usize,
        /// The number of densities given.
        actual: usize,
    },
    /// A setting is out of its documented range.
    #[error("AO setting `{name}` = {value} is invalid: {reason}")]
    BadSetting {
        /// The setting's name as written in a world file's `[ao]` table.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The range it must be in, for the user.
        reason: &'static str,
    },
    /// `positions` and `normals` differ in length.
    #[error("{positions} vertex positions but {normals} normals")]
    LengthMismatch {
        /// Number of vertex positions given.
        positions: usize,
        /// Number of vertex normals given.
        normals: usize,
    },
    /// A vertex position or normal has a NaN or infinite component.
    #[error("vertex {index} has a non-finite position or normal")]
    NonFiniteVertex {
        /// Index of the first such vertex in the input slices.
        index: usize,
    },
}

/// The set of directions rays are cast in (over the whole sphere; the normal picks the hemisphere).
///
/// Only lattice offsets whose components are in {−1, 0, 1} let a ray step exactly one voxel per
/// axis per sample, which the exact, fast march relies on; these are the 26 of `Grid26`. The
/// enum keeps the settings format open to other sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AoDirections {
    /// The 26 offsets of the 3×3×3 neighbourhood minus its centre.
    #[default]
    Grid26,
}

impl AoDirections {
    /// The lattice offsets, in a fixed order (X fastest, then Y, then Z).
    pub fn offsets(&self) -> Vec<[i32; 3]> {
        match self {
            AoDirections::Grid26 => {
                (-1..=1).flat_map(|z| (-1..=1).flat_map(move |y| (-1..=1).map(move |x| [x, y, z]))).filter(|&o| o != [0, 0, 0]).collect()
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
    /// Distance `o` the ray start is lifted off the vertex along its normal; default 1. Range [0, 4].
    pub start_offset_voxels: f32,
    /// Exponent applied to the final AO (contrast shaping); default 1. Range (0, 16].
    pub power: f32,
}

impl Default for AoSettings {
    fn default() -> Self {
        AoSettings { radius_voxels: 128.0, directions: AoDirections::Grid26, start_offset_voxels: 1.0, power: 1.0 }
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
        let o = self.start_offset_voxels;
        check("start_offset_voxels", o, (0.0..=4.0).contains(&o), "must be in [0, 4]")?;
        let p = self.power;
        check("power", p, p > 0.0 && p <= 16.0, "must be in (0, 16]")
    }
}

/// AO in `[0, 1]` (1 = fully open) for each vertex, as defined in the [module docs](self).
///
/// `positions` are in global voxel units; `normals` need not be normalised (a zero normal gives 1).
/// The output has one value per vertex, in input order, and does not depend on the thread count.
pub fn ambient_occlusion(field: &OccupancyField, positions: &[[f32; 3]], normals: &[[f32; 3]], settings: &AoSettings) -> Result<Vec<f32>, AoError> {
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
    let mut order: Vec<u64> = positions.par_iter().enumerate().map(|(i, p)| (morton_key(*p) << INDEX_BITS) | i as u64).collect();
    order.par_sort_unstable();
    let sorted: Vec<f32> = order
        .par_iter()
        .with_min_len(512)
        .map(|&key| {
            let i = (key & INDEX_MASK) as usize;
            kernel.vertex_ao(positions[i], normals[i], |rays, hits| march::march_interleaved(field, rays, hits))
        })
        .collect();
    let mut ao = vec![0.0; positions.len()];
    for (&key, &a) in order.iter().zip(&sorted) {
        ao[(key & INDEX_MASK) as usize] = a;
    }
    Ok(ao)
}

/// Sort keys are a 30-bit Morton code above a 34-bit vertex index: unique, so the sort is
/// deterministic. 2^34 vertices would take 200 GB of positions alone.
const INDEX_BITS: u32 = 34;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

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
