//! Water in light transport (issue #19): light that crosses a lake's or the sea's surface is
//! refracted and partly reflected there, and is absorbed per colour on its way through the water,
//! so underwater terrain's baked irradiance, and the irradiance volume's cells in the water, end
//! up darker and bluer with depth.
//!
//! # The model
//! - **Where the water is.** A [`WaterMedium`]: a flat surface at z = `level` and a mask of
//!   flooded cells on the density grid (`flooded`, X fastest; the cell around sample (i, j, k),
//!   at (i, j, k)·`voxel_size`, is water). A point below the level is in water when the sample
//!   nearest to it is flooded (indices clamped to the mask; layers above the highest sample at or
//!   below the level count as that sample's). The surface is open at (x, y) when the column's
//!   sample nearest in x and y, in the highest layer at or below the level, is flooded: a sealed
//!   cave below the level, which the bake's flood fill leaves dry, has no surface and no water
//!   effect at all.
//! - **Crossing the surface.** A photon travelling down from above the level that reaches the
//!   plane z = `level` before any terrain, where the surface is open, meets the surface: with the
//!   probability of the unpolarised Fresnel transmittance (`optics::fresnel_transmittance`, air →
//!   water at its incidence angle) it goes on refracted by Snell's law (`optics::refract`),
//!   otherwise it is mirrored back up. A photon in the water that reaches the level from below
//!   always meets the surface (it cannot have left the water any other way): transmitted into the
//!   air with the water → air Fresnel probability, else mirrored down, which includes total
//!   internal reflection beyond the critical angle (48.6° from the vertical at index 1.333). The
//!   choice is Russian roulette on the path's own counter-based random numbers, so the photon
//!   keeps its power either way (expectation: T·power through, (1 − T)·power back) and the result
//!   stays deterministic. The surface is flat: waves and caustics are the viewer's, from the
//!   `WAVE` frames; the bake's light is their mean.
//! - **Absorption.** Along every stretch of a flight inside the water, each linear RGB channel c
//!   of a photon's power falls as exp(−σ_c·ℓ) (Beer–Lambert), σ = `absorption` per world unit, ℓ
//!   the length of the stretch in world units. No scattering in the water (no fog-like in-scatter
//!   term): clear water, where absorption dominates. Clear sea water absorbs red far more than
//!   blue, so light that went deep is blue.
//! - **What counts as what.** A refracted photon is the same light (not a bounce): the sun's
//!   refracted beam stays "direct" (deposits nothing where it first lands; the irradiance
//!   volume's `direct` bins get it, attenuated). A photon reflected by the surface is scattered
//!   light: it counts as a bounce (within `bounces`) and feeds the ambient maps, like a diffuse
//!   bounce. Sky light, static lights and every bounce of every source are treated alike, photon
//!   by photon; a point light under water starts in the water.
//! - **Sun and moon straight in** (exact per query point, `BakedLighting::irradiance_at`): at a
//!   point under water the shadow ray follows the refracted beam up to the surface and from there
//!   toward the sun; a beam of irradiance E (on a plane facing it) at incidence θi leaves a
//!   surface with unit normal n the irradiance E·cos θi·T(θi)/cos θt · max(0, n·u)·exp(−σ·ℓ),
//!   with u the refracted beam's reverse direction and ℓ its length in the water (a flat floor at
//!   depth h: E·cos θi·T(θi)·exp(−σ·h/cos θt)). The tile lighting leaves direct sun to the
//!   viewer, whose water layer applies the same factors with its caustics.
//! - **Distant light enters the water only through its surface inside the world**: a sky, sun or
//!   moon path that would enter the world's box through a side face below the level, straight
//!   into the water, is dropped (it would reach the water unrefracted). Near a sea at the world's
//!   edge this lacks the light that crossed the surface beyond the edge, within about 1.1× the
//!   depth of it.
//!
//! In world terms (for `[water]` in worlds/README.md): light crossing the water surface is
//! refracted and Fresnel-reflected there (index `ior`); under the surface each colour channel
//! keeps exp(−absorption·distance) of its power, distance in world units along the light's way
//! through the water, so a floor at depth h under a high sun gets exp(−absorption·h) of the
//! light that entered, and the volume of the water and everything in it (trees, grass) too.

use super::volume::Segment;
use crate::optics::{fresnel_transmittance, refract};
use crate::rays::{Bvh, Cull, Ray};
use glam::{Vec3, Vec3A};

/// The water a light transport runs through: a flat surface and a flooded mask on the density
/// grid (see the module's documentation for how they are read).
#[derive(Clone, Debug, PartialEq)]
pub struct WaterMedium {
    /// z of the surface, world units.
    pub level: f32,
    /// Beer–Lambert absorption coefficient σ per world unit, linear RGB.
    pub absorption: [f32; 3],
    /// Refractive index of the water (air is 1).
    pub ior: f32,
    /// The density grid's spacing: sample (i, j, k) lies at (i, j, k)·`voxel_size`.
    pub voxel_size: f32,
    /// nx, ny, nz of the flooded mask (nz: the layers up to the level).
    pub dims: [usize; 3],
    /// X fastest: whether the cell around sample (i, j, k) is water.
    pub flooded: Vec<bool>,
}

/// Why a [`WaterMedium`] is unusable.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WaterMediumError {
    /// The level is NaN or infinite.
    #[error("water level {0} is not finite")]
    Level(f32),
    /// An absorption coefficient is negative, NaN or infinite.
    #[error("water absorption {0:?} is not finite and non-negative")]
    Absorption([f32; 3]),
    /// The refractive index is below 1, NaN or infinite.
    #[error("water index of refraction {0} is not a finite number of at least 1")]
    Ior(f32),
    /// The voxel size is not a finite positive number.
    #[error("water voxel size {0} is not finite and positive")]
    VoxelSize(f32),
    /// The mask's length is not nx·ny·nz.
    #[error("water mask of {len} cells for dimensions {dims:?}")]
    Mask {
        /// The declared dimensions.
        dims: [usize; 3],
        /// The mask's length.
        len: usize,
    },
}

/// Optical depth (σ·length) of one recorded piece of a flight through water: the piece's power
/// is its exact mean over the piece, and within 10 % of that everywhere along it.
const PIECE_DEPTH: f32 = 0.1;
/// Most pieces one flight through water is recorded as (beyond, the light is nearly gone).
const MAX_PIECES: usize = 64;

impl WaterMedium {
    /// Checks the medium is usable: finite level, non-negative finite absorption, index ≥ 1,
    /// positive voxel size, a mask of nx·ny·nz cells.
    pub fn validate(&self) -> Result<(), WaterMediumError> {
        if !self.level.is_finite() {
            return Err(WaterMediumError::Level(self.level));
        }
        if !self.absorption.iter().all(|s| s.is_finite() && *s >= 0.0) {
            return Err(WaterMediumError::Absorption(self.absorption));
        }
        if !(self.ior.is_finite() && self.ior >= 1.0) {
            return Err(WaterMediumError::Ior(self.ior));
        }
        if !(self.voxel_size.is_finite() && self.voxel_size > 0.0) {
            return Err(WaterMediumError::VoxelSize(self.voxel_size));
        }
        let cells = self.dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if cells != Some(self.flooded.len()) {
            return Err(WaterMediumError::Mask { dims: self.dims, len: self.flooded.len() });
        }
        Ok(())
    }

    /// The nearest sample index along axis `a` to coordinate `x`, clamped to `0..=hi`.
    fn index(&self, x: f32, hi: usize) -> usize {
        // `as` saturates (NaN → 0), so any float gives an index in range.
        ((x / self.voxel_size).round().max(0.0) as usize).min(hi)
    }

    /// The highest layer at or below the level (the surface layer), or `None` without a mask.
    fn top(&self) -> Option<usize> {
        let [nx, ny, nz] = self.dims;
        if nx == 0 || ny == 0 || nz == 0 || self.level < 0.0 {
            return None;
        }
        Some(((self.level / self.voxel_size).floor().max(0.0) as usize).min(nz - 1))
    }

    fn at(&self, i: usize, j: usize, k: usize) -> bool {
        let [nx, ny, _] = self.dims;
        self.flooded.get(i + nx * (j + ny * k)).copied().unwrap_or(false)
    }

    /// Whether `p` is in the water: below the level where the sample nearest to it is flooded.
    pub fn is_water(&self, p: [f32; 3]) -> bool {
        let Some(top) = self.top() else { return false };
        p[2] < self.level && self.at(self.index(p[0], self.dims[0] - 1), self.index(p[1], self.dims[1] - 1), self.index(p[2], top))
    }

    /// Whether the surface is open water at (x, y): the column's surface-layer sample is flooded.
    pub fn surface_open(&self, x: f32, y: f32) -> bool {
        let Some(top) = self.top() else { return false };
        self.at(self.index(x, self.dims[0] - 1), self.index(y, self.dims[1] - 1), top)
    }

    /// Whether a point on a surface (a terrain vertex, which lies between samples) is under water:
    /// below the level with any of the eight samples around it flooded.
    pub(crate) fn wet_near(&self, p: Vec3A) -> bool {
        let Some(top) = self.top() else { return false };
        if p.z >= self.level {
            return false;
        }
        let lo = |x: f32, hi: usize| ((x / self.voxel_size).floor().max(0.0) as usize).min(hi);
        let (i, j, k) = (lo(p.x, self.dims[0] - 1), lo(p.y, self.dims[1] - 1), lo(p.z, top));
        (0..8).any(|c| self.at((i + (c & 1)).min(self.dims[0] - 1), (j + ((c >> 1) & 1)).min(self.dims[1] - 1), (k + (c >> 2)).min(top)))
    }

    /// The fraction of each channel's power left after `length` world units of water.
    pub fn transmittance(&self, length: f32) -> [f32; 3] {
        self.absorption.map(|s| if s == 0.0 { 1.0 } else { libm::expf(-s * length) })
    }

    /// Where a photon's flight from `origin` along unit `dir` meets the surface, as the ray
    /// parameter: for a photon in the water (`in_water`) wherever it rises to the level, for one
    /// in the air where it comes down onto open water. `None`: it does not meet the surface
    /// (before anything else it might hit).
    pub(crate) fn surface_hit(&self, origin: Vec3A, dir: Vec3A, in_water: bool) -> Option<f32> {
        if in_water {
            return (dir.z > 0.0).then(|| ((self.level - origin.z) / dir.z).max(0.0));
        }
        if dir.z >= 0.0 || origin.z < self.level {
            return None;
        }
        let t = (self.level - origin.z) / dir.z;
        let s = origin + dir * t;
        self.surface_open(s.x, s.y).then_some(t)
    }

    /// A photon travelling along `dir` meets the surface from the water (`in_water`) or the air;
    /// `u` uniform in [0, 1) picks transmission with the Fresnel probability. Returns the new
    /// direction, whether the photon is now in the water, and whether it was reflected.
    pub(crate) fn cross(&self, dir: Vec3A, in_water: bool, u: f32) -> (Vec3A, bool, bool) {
        let (n1, n2, normal) = if in_water { (self.ior, 1.0, -Vec3::Z) } else { (1.0, self.ior, Vec3::Z) };
        let d = Vec3::from(dir);
        if u < fresnel_transmittance(-d.dot(normal), n1, n2) {
            if let Some(t) = refract(d, normal, n1, n2) {
                return (t.into(), !in_water, false);
            }
        }
        (Vec3A::new(dir.x, dir.y, -dir.z), in_water, true)
    }

    /// Records a flight through water from `origin` along `dir` for `length` (infinite: it never
    /// leaves) carrying `power` at its start, as pieces of at most [`PIECE_DEPTH`] optical depth
    /// each with its exact mean power, into `out` (when given); returns the power left at its end.
    pub(crate) fn absorb(&self, origin: Vec3A, dir: Vec3A, length: f32, power: [f32; 3], class: u8, out: Option<&mut Vec<Segment>>) -> [f32; 3] {
        let sigma = self.absorption;
        if !length.is_finite() {
            // Light that never leaves the water is all absorbed, but in clear channels.
            let left = [0, 1, 2].map(|c| if sigma[c] == 0.0 { power[c] } else { 0.0 });
            if let Some(out) = out.filter(|_| left.iter().any(|&p| p > 0.0)) {
                out.push(Segment { origin, dir, t_end: f32::INFINITY, power: left, class });
            }
            return left;
        }
        let depth = sigma.iter().fold(0.0f32, |m, &s| m.max(s)) * length;
        if let Some(out) = out {
            let pieces = ((depth / PIECE_DEPTH).ceil() as usize).clamp(1, MAX_PIECES);
            let step = length / pieces as f32;
            for k in 0..pieces {
                let (a, b) = (k as f32 * step, if k + 1 == pieces { length } else { (k + 1) as f32 * step });
                let mean = [0, 1, 2].map(|c| power[c] * mean_transmittance(sigma[c], a, b));
                out.push(Segment { origin: origin + dir * a, dir, t_end: b - a, power: mean, class });
            }
        }
        let left = self.transmittance(length);
        [0, 1, 2].map(|c| power[c] * left[c])
    }
}

impl WaterMedium {
    /// The fraction of a parallel beam's irradiance `E` (on a plane facing it, arriving from unit
    /// direction `to_light`) that reaches a point `p` under water with unit normal `n`, per
    /// channel: E·cos θi·T(θi)/cos θt · max(0, n·u)·exp(−σ·ℓ) / E, along the refracted beam
    /// (reverse direction u, length ℓ in the water), zero where rock shades it on either side of
    /// the surface. Rays leave `p` offset by `eps` along `n`.
    pub(crate) fn sun_under_water(&self, bvh: &Bvh, p: Vec3A, n: Vec3A, to_light: Vec3A, eps: f32) -> [f32; 3] {
        let cos_i = to_light.z;
        // The beam as it travels in the water (Snell: never trapped going in).
        let Some(down) = (cos_i > 0.0).then(|| refract(-Vec3::from(to_light), Vec3::Z, 1.0, self.ior)).flatten() else { return [0.0; 3] };
        let up = -Vec3A::from(down);
        let cos_n = n.dot(up);
        if cos_n <= 0.0 || up.z <= 0.0 {
            return [0.0; 3];
        }
        let start = p + n * eps;
        let length = ((self.level - start.z) / up.z).max(0.0);
        let under = Ray { origin: start, dir: up, tmin: 0.0, tmax: length };
        let at = start + up * length;
        let over = Ray { origin: at, dir: to_light, tmin: 0.0, tmax: f32::INFINITY };
        if bvh.occluded(&under, Cull::BackFaces) || bvh.occluded(&over, Cull::BackFaces) {
            return [0.0; 3];
        }
        let beam = cos_i * fresnel_transmittance(cos_i, 1.0, self.ior) / up.z * cos_n;
        self.transmittance(length).map(|t| beam * t)
    }
}

/// The mean of exp(−σ·s) over s in [a, b].
fn mean_transmittance(sigma: f32, a: f32, b: f32) -> f32 {
    let x = sigma * (b - a);
    if sigma == 0.0 {
        1.0
    } else if x < 1e-4 {
        libm::expf(-sigma * 0.5 * (a + b))
    } else {
        (libm::expf(-sigma * a) - libm::expf(-sigma * b)) / x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> WaterMedium {
        // 4×4 columns, 3 layers (z = 0, 1, 2 at voxel size 1) under a level of 2.5; the west
        // half is flooded to the top, the east half only in its bottom layer (water reached
        // from the west under a roof of rock).
        let dims = [4, 4, 3];
        let flooded = (0..48)
            .map(|n| {
                let (i, k) = (n % 4, n / 16);
                i < 2 || k == 0
            })
            .collect();
        WaterMedium { level: 2.5, absorption: [0.4, 0.1, 0.02], ior: 1.333, voxel_size: 1.0, dims, flooded }
    }

    #[test]
    fn the_mask_is_read_at_the_nearest_sample_and_the_surface_at_the_top_layer() {
        let w = pool();
        w.validate().unwrap();
        assert!(w.is_water([0.4, 2.0, 2.4]), "below the level over flooded samples");
        assert!(!w.is_water([0.4, 2.0, 2.6]), "above the level");
        assert!(w.surface_open(1.4, 3.0) && !w.surface_open(1.6, 3.0), "open where the top layer is flooded");
        assert!(w.is_water([3.0, 1.0, 0.2]) && !w.is_water([3.0, 1.0, 1.0]), "the water under the roof is in the mask, the roof is not");
        // A surface point between samples is wet when a sample around it is water.
        assert!(w.wet_near(Vec3A::new(1.5, 1.0, 1.5)), "beside the flooded west half");
        assert!(!w.wet_near(Vec3A::new(2.5, 1.0, 1.5)), "in the roof, clear of the water");
        assert!(!w.wet_near(Vec3A::new(1.5, 1.0, 2.7)), "above the level");
        // A photon over the roof never meets a surface; one over the pool does.
        assert_eq!(w.surface_hit(Vec3A::new(3.0, 1.0, 5.0), -Vec3A::Z, false), None);
        assert_eq!(w.surface_hit(Vec3A::new(0.0, 1.0, 5.0), -Vec3A::Z, false), Some(2.5));
        assert_eq!(w.surface_hit(Vec3A::new(0.0, 1.0, 0.5), Vec3A::Z, true), Some(2.0));
        assert_eq!(w.surface_hit(Vec3A::new(0.0, 1.0, 0.5), -Vec3A::Z, true), None);
    }

    #[test]
    fn bad_media_are_refused_with_their_reason() {
        let bad = |f: fn(&mut WaterMedium)| {
            let mut w = pool();
            f(&mut w);
            w.validate().unwrap_err()
        };
        assert!(matches!(bad(|w| w.level = f32::NAN), WaterMediumError::Level(_)));
        assert!(matches!(bad(|w| w.absorption[1] = -0.1), WaterMediumError::Absorption(_)));
        assert!(matches!(bad(|w| w.absorption[2] = f32::INFINITY), WaterMediumError::Absorption(_)));
        assert!(matches!(bad(|w| w.ior = 0.9), WaterMediumError::Ior(_)));
        assert!(matches!(bad(|w| w.voxel_size = 0.0), WaterMediumError::VoxelSize(_)));
        assert_eq!(bad(|w| w.dims = [4, 4, 4]), WaterMediumError::Mask { dims: [4, 4, 4], len: 48 });
        assert!(matches!(bad(|w| w.dims = [usize::MAX, 2, 1]), WaterMediumError::Mask { .. }));
        // A medium without any cells is valid and has no water anywhere.
        let empty = WaterMedium { dims: [0, 0, 0], flooded: Vec::new(), ..pool() };
        empty.validate().unwrap();
        assert!(!empty.is_water([0.0; 3]) && !empty.surface_open(0.0, 0.0) && !empty.wet_near(Vec3A::ZERO));
    }

    #[test]
    fn recorded_pieces_carry_the_exact_absorbed_power() {
        let w = pool();
        let mut out = Vec::new();
        let (len, power) = (3.0f32, [1.0f32, 2.0, 4.0]);
        let left = w.absorb(Vec3A::ZERO, Vec3A::Z, len, power, 1, Some(&mut out));
        // Optical depth 1.2 in red: twelve pieces; their lengths add up to the flight's.
        assert_eq!(out.len(), 12);
        assert!((out.iter().map(|s| s.t_end).sum::<f32>() - len).abs() < 1e-5);
        for c in 0..3 {
            let s = w.absorption[c];
            assert!((left[c] - power[c] * (-s * len).exp()).abs() < 1e-5 * power[c]);
            // ∫ power·exp(−σs) ds over the flight, which the volume's track-length sums see.
            let integral: f32 = out.iter().map(|p| p.power[c] * p.t_end).sum();
            let exact = power[c] * (1.0 - (-s * len).exp()) / s;
            assert!((integral / exact - 1.0).abs() < 1e-4, "channel {c}: {integral} vs {exact}");
        }
        assert!(out.windows(2).all(|p| p[1].power[0] < p[0].power[0]), "the power falls along the flight");
    }

    #[test]
    fn the_surface_refracts_reflects_and_traps_by_fresnel_and_snell() {
        let w = pool();
        let down = Vec3A::new(0.6, 0.0, -0.8);
        let t = fresnel_transmittance(0.8, 1.0, w.ior);
        let (d, wet, reflected) = w.cross(down, false, t - 1e-3);
        assert!(wet && !reflected && d.z < 0.0);
        assert!((down.x - w.ior * d.x).abs() < 1e-5, "Snell: sin θi = n sin θt");
        let (d, wet, reflected) = w.cross(down, false, t + 1e-3);
        assert!(!wet && reflected && (d - Vec3A::new(0.6, 0.0, 0.8)).length() < 1e-6);
        // From below beyond the critical angle: always reflected, whatever the draw.
        let (d, wet, reflected) = w.cross(Vec3A::new(0.8, 0.0, 0.6), true, 0.0);
        assert!(wet && reflected && d.z < 0.0);
        let (d, wet, _) = w.cross(Vec3A::Z, true, 0.5);
        assert!(!wet && (d - Vec3A::Z).length() < 1e-6, "straight up goes straight out");
    }
}
