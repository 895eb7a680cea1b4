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
//! uniformly over that image by `n_u×n_v` bilinear sub-points (per direction of the image: its
//! extent in texels over the sub-point spacing, 1..=4), each splatted with a bilinear tent, wrapping
//! periodically. A cell's flux lands where its image is, so the plane's irradiance is
//! (source area / image area) × flux: bright where the images shrink (focus), dark where they
//! spread. Then the map is blurred by the sun's disc (angular radius 0.267°, refracted: radius
//! `depth·0.00466/ior` on the plane, as a periodic box of the nearest whole texel radius); the
//! sub-point spacing is one texel, or that radius when larger, since the blur smooths their lattice.
//! The cap of 4 per side only matters deep below the focus, where images span many texels and
//! overlap many others. Splats and the blur conserve flux, so each map's mean is the surface's
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
const MAX_SUBDIVISION: usize = 4;
/// The sun's angular radius, radians (0.267°).
const SUN_RADIUS: f32 = 0.004_66;
/// A pattern whose contrast fell below this fraction of its peak has washed out.
const WASHED_OUT: f32 = 0.5;

/// Bakes the caustic maps of every frame at every receiving plane (rayon over frames).
pub fn bake_caustics(frames: &WaveFrames, spec: &CausticSpec) -> Result<Caustics, WaterError> {
    let bake = CausticBake::new(frames, spec)?;
    let maps: Vec<Vec<f32>> = (0..frames.spec.frames as usize).into_par_iter().map(|f| bake.frame(f)).collect();
    Ok(bake.finish(maps))
}

/// [`bake_caustics`] frame by frame, so that a frame is a piece of work on its own (shards split
/// the frames among them): [`CausticBake::frame`] makes one frame's maps, [`CausticBake::finish`]
/// puts them together. The same maps as [`bake_caustics`].
pub struct CausticBake<'a> {
    caster: Caster<'a>,
    depths: Vec<f32>,
    texels: usize,
}

impl<'a> CausticBake<'a> {
    /// Checks the inputs and chooses the receiving depths.
    pub fn new(frames: &'a WaveFrames, spec: &CausticSpec) -> Result<CausticBake<'a>, WaterError> {
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
        Ok(CausticBake { caster, depths, texels: n })
    }

    /// Frame `f`'s maps, one per depth, each of the frames' texels.
    pub fn frame(&self, f: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; self.depths.len() * self.texels];
        let mut scratch = Vec::new();
        let rays = self.caster.rays(f);
        for (map, &depth) in out.chunks_exact_mut(self.texels).zip(&self.depths) {
            self.caster.splat(&rays, depth, map, &mut scratch);
        }
        out
    }

    /// Values in one frame's maps ([`CausticBake::frame`]'s length).
    pub fn frame_len(&self) -> usize {
        self.depths.len() * self.texels
    }

    /// Every frame's maps (`maps[f]` from [`CausticBake::frame`]`(f)`), in order.
    pub fn finish(self, maps: Vec<Vec<f32>>) -> Caustics {
        let mut all = Vec::with_capacity(maps.len() * self.frame_len());
        for m in maps {
            all.extend_from_slice(&m);
        }
        Caustics { depths: self.depths, flat_transmittance: self.caster.flat, maps: all }
    }
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

    /// The sun disc's blur radius on the plane at `depth`, in texels: the refracted cone's half-angle
    /// (`SUN_RADIUS / ior`, small angles) times the depth.
    fn blur_radius(&self, depth: f32) -> f32 {
        depth * SUN_RADIUS / self.ior / self.texel
    }

    /// Accumulates the area-ratio estimate of the plane at `depth` into `map` (zeroed first), then
    /// blurs it by the sun's disc.
    pub fn splat(&self, rays: &[Ray], depth: f32, map: &mut [f32], scratch: &mut Vec<f32>) {
        let r = self.r;
        let rf = r as f32;
        let hits = self.hits(rays, depth);
        map.fill(0.0);
        let blur = self.blur_radius(depth);
        let box_radius = blur.round() as usize;
        // Sub-points at most this far apart: one texel (where bilinear tents sum to one), or the
        // disc's radius when the blur below smooths the lattice anyway.
        let spacing = 1.0f32.max(box_radius as f32);
        // Less a hair so that a flat surface's unit cells (extent 1 up to rounding) take one sub-point.
        let count =
            |len: f32| if len.is_finite() { ((len / spacing * (1.0 - 1.0e-3)).ceil() as usize).clamp(1, MAX_SUBDIVISION) } else { MAX_SUBDIVISION };
        let span = |a: [f32; 2], b: [f32; 2]| (b[0] - a[0]).abs().max((b[1] - a[1]).abs());
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
                // Sub-points per side along each of the image's two directions (caustic images are
                // often long and thin).
                let nu = count(span(p00, p10).max(span(p01, p11)));
                let nv = count(span(p00, p01).max(span(p10, p11)));
                let share = flux / (nu * nv) as f32;
                let (du, dv) = (1.0 / nu as f32, 1.0 / nv as f32);
                for j in 0..nv {
                    let v = (j as f32 + 0.5) * dv;
                    let a = [p00[0] + (p01[0] - p00[0]) * v, p00[1] + (p01[1] - p00[1]) * v];
                    let b = [p10[0] + (p11[0] - p10[0]) * v, p10[1] + (p11[1] - p10[1]) * v];
                    for i in 0..nu {
                        let u = (i as f32 + 0.5) * du;
                        splat_bilinear(map, r, [a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u], share);
                    }
                }
            }
        }
        box_blur(map, r, box_radius, scratch);
    }

    /// The receiving depths of `CausticDepths::Auto(count)` (module documentation).
    pub fn auto_depths(&self, count: usize) -> Vec<f32> {
        let n = self.r * self.r;
        let rays = self.rays(0);
        let mut map = vec![0.0f32; n];
        let mut scratch = Vec::new();
        let deepest = 4.0 * self.frames.spec.patch_size;
        let mut candidates: Vec<(f32, f32)> = Vec::new(); // (depth, contrast)
        let mut peak = 0.0f32;
        for j in 0.. {
            let depth = self.texel * libm::exp2f(j as f32 * 0.5);
            if depth > deepest {
                break;
            }
            self.splat(&rays, depth, &mut map, &mut scratch);
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

/// A periodic box blur of width `2·radius + 1` along x, then along y (the sun's disc, as a square);
/// running sums in f64, so the map's total is kept.
fn box_blur(map: &mut [f32], r: usize, radius: usize, line: &mut Vec<f32>) {
    if radius == 0 {
        return;
    }
    let w = (2 * radius + 1) as f64;
    line.resize(r, 0.0);
    for axis in 0..2 {
        let at = |i: usize, k: usize| if axis == 0 { i * r + k } else { k * r + i };
        for i in 0..r {
            for (k, v) in line.iter_mut().enumerate() {
                *v = map[at(i, k)];
            }
            let mut sum: f64 = (0..=2 * radius).map(|o| line[(o + r - radius) % r] as f64).sum();
            for k in 0..r {
                map[at(i, k)] = (sum / w) as f32;
                sum += line[(k + radius + 1) % r] as f64 - line[(k + r - radius) % r] as f64;
            }
        }
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
