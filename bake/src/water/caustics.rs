//! Caustics: the sun's light refracted through each frame's surface onto horizontal planes below it.
//!
//! Per texel, the sun's direction is refracted (`optics::refract`) through the displaced surface's
//! normal at the displaced surface point, and the light the texel's surface element intercepts,
//! `(s·n)·|∂P/∂x × ∂P/∂y|` per unit rest area (the true area of the choppy surface; z of that
//! vector is the Jacobian), times the Fresnel transmittance, is carried along the refracted ray. In
//! units of the horizontal irradiance above the water times a texel's area, a flat surface carries
//! exactly `T(cos θ_sun)` per texel. Self-shadowing of the waves is ignored; texels inside a fold
//! (J ≤ 0) or facing away from the sun, and the rare refracted rays that do not go down, carry none.
//!
//! Estimator, the area ratio: each cell between four texels carries the mean of its corners'
//! flux to the image of the cell on the plane (the quadrilateral of its corners' hit points), spread
//! uniformly over that image by `n×n` bilinear sub-points (`n` = the image's extent in texels,
//! 1..=8), each splatted with a bilinear tent, wrapping periodically. A cell's flux lands where its
//! image is, so the plane's irradiance is (source area / image area) × flux: bright where the images
//! shrink (focus), dark where they spread. Splats conserve flux, so each map's mean is the surface's
//! mean transmitted flux; a flat surface's identical, shifted cells give `T` on every texel exactly
//! (bilinear tents over a shifted unit lattice sum to one).
//!
//! Automatic depths (`CausticDepths::Auto(D)`): on frame 0 the contrast (std/mean) is measured on
//! planes `d_j = texel·2^{j/2}` down to `4·L`; `d_form` is the first whose contrast reaches half the
//! peak, `d_wash` the first beyond the peak whose contrast falls below `WASHED_OUT` (half) of the
//! peak, or `4·L` (at least `4·d_form`). The `D` planes are spread geometrically from `d_form` to
//! `d_wash` (one plane: the peak). Still water (no contrast anywhere) gets planes `L/16·2^i`. Why
//! half and `4·L`: a point sun's ray pattern loses contrast only slowly past its focus (from 1.0 at
//! the peak to 0.6 at four times its depth for a typical sea), as more and more refracted cells
//! overlap; deeper than a few patch sizes the pattern is a blur of the patch's whole spectrum.

use glam::Vec3;
use rayon::prelude::*;

use crate::optics::{fresnel_transmittance, refract};

use super::{CausticDepths, CausticSpec, Caustics, WaterError, WaveFrames};

/// Most sub-points per side of one cell's image.
const MAX_SUBDIVISION: usize = 8;
/// A pattern whose contrast fell below this fraction of its peak has washed out.
const WASHED_OUT: f32 = 0.5;

/// Bakes the caustic maps of every frame at every receiving plane (rayon over frames).
pub fn bake_caustics(frames: &WaveFrames, spec: &CausticSpec) -> Result<Caustics, WaterError> {
    spec.validate()?;
    frames.spec.validate()?;
    let n = frames.spec.texels();
    let expected = frames.spec.frames as usize * n;
    for got in [frames.surface.len(), frames.normals.len()] {
        if got != expected {
            return Err(WaterError::FrameSize { got, expected });
        }
    }
    let caster = Caster::new(frames, spec);
    let depths = match &spec.depths {
        CausticDepths::Fixed(d) => d.clone(),
        CausticDepths::Auto(count) => caster.auto_depths(*count),
    };
    let mut maps = vec![0.0f32; frames.spec.frames as usize * depths.len() * n];
    maps.par_chunks_mut(depths.len() * n).enumerate().for_each(|(f, out)| {
        let rays = caster.rays(f);
        for (map, &depth) in out.chunks_exact_mut(n).zip(&depths) {
            caster.splat(&rays, depth, map);
        }
    });
    Ok(Caustics { depths, flat_transmittance: caster.flat, maps })
}

/// The contrast of a map: its standard deviation over its mean (0 for a dark map).
pub fn contrast(map: &[f32]) -> f32 {
    let n = map.len() as f64;
    let mean = map.iter().map(|&v| v as f64).sum::<f64>() / n;
    if mean <= 0.0 {
        return 0.0;
    }
    let var = map.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    (var.sqrt() / mean) as f32
}

/// One texel's refracted ray.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ray {
    /// Where it leaves the surface, horizontally, in texels (rest position + displacement).
    origin: [f32; 2],
    /// The surface point's height, world units.
    height: f32,
    /// Horizontal travel per unit of depth.
    slope: [f32; 2],
    /// Transmitted flux, in horizontal irradiance above the water × texel area.
    flux: f32,
}

pub(crate) struct Caster<'a> {
    frames: &'a WaveFrames,
    sun: Vec3,
    ior: f32,
    /// Fresnel transmittance of a flat surface.
    flat: f32,
    r: usize,
    /// World units per texel.
    texel: f32,
}

impl<'a> Caster<'a> {
    pub fn new(frames: &'a WaveFrames, spec: &CausticSpec) -> Caster<'a> {
        let sun = Vec3::from(spec.sun_direction).normalize();
        let r = frames.spec.resolution as usize;
        Caster { frames, sun, ior: spec.ior, flat: fresnel_transmittance(sun.z, 1.0, spec.ior), r, texel: frames.spec.patch_size / r as f32 }
    }

    /// Every texel's refracted ray in frame `f`.
    pub fn rays(&self, f: usize) -> Vec<Ray> {
        let n = self.r * self.r;
        let surface = &self.frames.surface[f * n..(f + 1) * n];
        let normals = &self.frames.normals[f * n..(f + 1) * n];
        surface
            .iter()
            .zip(normals)
            .enumerate()
            .map(|(i, (s, nm))| {
                let origin = [(i % self.r) as f32 + s[0] / self.texel, (i / self.r) as f32 + s[1] / self.texel];
                let normal = Vec3::from(*nm);
                let cos_i = self.sun.dot(normal);
                let mut ray = Ray { origin, height: s[2], ..Ray::default() };
                if s[3] <= 0.0 || cos_i <= 0.0 || normal.z <= 0.0 {
                    return ray;
                }
                if let Some(t) = refract(-self.sun, normal, 1.0, self.ior).filter(|t| t.z < 0.0) {
                    ray.slope = [t.x / -t.z, t.y / -t.z];
                    ray.flux = cos_i * (s[3] / normal.z) / self.sun.z * fresnel_transmittance(cos_i, 1.0, self.ior);
                }
                ray
            })
            .collect()
    }

    /// Where each ray meets the plane at `depth` below the mean level, in texels (unwrapped).
    fn hits(&self, rays: &[Ray], depth: f32) -> Vec<[f32; 2]> {
        rays.iter()
            .map(|ray| {
                let travel = (depth + ray.height).max(0.0) / self.texel;
                [ray.origin[0] + ray.slope[0] * travel, ray.origin[1] + ray.slope[1] * travel]
            })
            .collect()
    }

    /// Accumulates the area-ratio estimate of the plane at `depth` into `map` (zeroed first).
    pub fn splat(&self, rays: &[Ray], depth: f32, map: &mut [f32]) {
        let r = self.r;
        let rf = r as f32;
        let hits = self.hits(rays, depth);
        map.fill(0.0);
        for y in 0..r {
            let (y1, wrap_y) = if y + 1 == r { (0, rf) } else { (y + 1, 0.0) };
            for x in 0..r {
                let (x1, wrap_x) = if x + 1 == r { (0, rf) } else { (x + 1, 0.0) };
                let (i00, i10, i01, i11) = (y * r + x, y * r + x1, y1 * r + x, y1 * r + x1);
                let flux = 0.25 * (rays[i00].flux + rays[i10].flux + rays[i01].flux + rays[i11].flux);
                if flux <= 0.0 {
                    continue;
                }
                let p00 = hits[i00];
                let p10 = [hits[i10][0] + wrap_x, hits[i10][1]];
                let p01 = [hits[i01][0], hits[i01][1] + wrap_y];
                let p11 = [hits[i11][0] + wrap_x, hits[i11][1] + wrap_y];
                let extent = |a: usize| {
                    let v = [p00[a], p10[a], p01[a], p11[a]];
                    v.iter().fold(f32::MIN, |m, &c| m.max(c)) - v.iter().fold(f32::MAX, |m, &c| m.min(c))
                };
                // The image's extent in texels, less a hair so that a flat surface's unit cells
                // (extent 1 up to rounding) take one sub-point each.
                let e = extent(0).max(extent(1)) * (1.0 - 1.0e-3);
                let subs = if e.is_finite() { (e.ceil() as usize).clamp(1, MAX_SUBDIVISION) } else { MAX_SUBDIVISION };
                let share = flux / (subs * subs) as f32;
                for j in 0..subs {
                    let v = (j as f32 + 0.5) / subs as f32;
                    let a = [p00[0] + (p01[0] - p00[0]) * v, p00[1] + (p01[1] - p00[1]) * v];
                    let b = [p10[0] + (p11[0] - p10[0]) * v, p10[1] + (p11[1] - p10[1]) * v];
                    for i in 0..subs {
                        let u = (i as f32 + 0.5) / subs as f32;
                        splat_bilinear(map, r, [a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u], share);
                    }
                }
            }
        }
    }

    /// The receiving depths of `CausticDepths::Auto(count)` (module documentation).
    pub fn auto_depths(&self, count: usize) -> Vec<f32> {
        let n = self.r * self.r;
        let rays = self.rays(0);
        let mut map = vec![0.0f32; n];
        let deepest = 4.0 * self.frames.spec.patch_size;
        let mut candidates: Vec<(f32, f32)> = Vec::new(); // (depth, contrast)
        let mut peak = 0.0f32;
        for j in 0.. {
            let depth = self.texel * libm::exp2f(j as f32 * 0.5);
            if depth > deepest {
                break;
            }
            self.splat(&rays, depth, &mut map);
            let c = contrast(&map);
            candidates.push((depth, c));
            peak = peak.max(c);
            if peak > 0.0 && c < WASHED_OUT * peak {
                break; // washed out: nothing deeper is needed
            }
        }
        if peak <= 1.0e-4 {
            let l = self.frames.spec.patch_size;
            return (0..count).map(|i| l / 16.0 * libm::exp2f(i as f32)).collect();
        }
        let at_peak = candidates.iter().position(|&(_, c)| c == peak).unwrap_or(0);
        let formed = candidates.iter().position(|&(_, c)| c >= 0.5 * peak).unwrap_or(at_peak);
        let shallow = candidates[formed].0;
        let deep = candidates.last().map_or(shallow, |&(d, _)| d).max(shallow * 4.0);
        if count == 1 {
            return vec![candidates[at_peak].0];
        }
        (0..count).map(|i| shallow * libm::powf(deep / shallow, i as f32 / (count - 1) as f32)).collect()
    }
}

/// Adds `value` to the four texels around `p` (texel units) with bilinear weights, wrapping.
#[inline]
pub(crate) fn splat_bilinear(map: &mut [f32], r: usize, p: [f32; 2], value: f32) {
    let (fx, fy) = (p[0].floor(), p[1].floor());
    let (ax, ay) = (p[0] - fx, p[1] - fy);
    let mask = r as i32 - 1;
    let (x0, y0) = ((fx as i32 & mask) as usize, (fy as i32 & mask) as usize);
    let (x1, y1) = ((x0 + 1) & mask as usize, (y0 + 1) & mask as usize);
    map[y0 * r + x0] += value * (1.0 - ax) * (1.0 - ay);
    map[y0 * r + x1] += value * ax * (1.0 - ay);
    map[y1 * r + x0] += value * (1.0 - ax) * ay;
    map[y1 * r + x1] += value * ax * ay;
}
