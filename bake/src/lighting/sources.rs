//! Light sources as photon emitters: where a light path starts, in which direction, and with how
//! much power.
//!
//! Distant sources (sky, sun, moon) enter through the faces of the scene box, the "portal": a
//! line from a distant source meets a convex box through exactly one entry face, so starting
//! every path on an entry face counts each line once. Local lights emit from their own shape.

use super::rng::{basis, cosine_hemisphere, uniform_cone, uniform_disk, uniform_sphere, Rng};
use super::spec::{LightSpec, LightingSpec};
use glam::Vec3A;
use std::f32::consts::PI;

/// Which output map a source's *first* surface hit feeds; later hits always feed `Ambient`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Sky: its direct light is part of the ambient map.
    Sky,
    /// Sun and moon: direct light is evaluated exactly per query point, so first hits only
    /// start the bounce.
    SunMoon,
    /// Static lights: first hits feed the direct-lights map.
    Light,
}

#[derive(Clone, Copy, Debug)]
struct Face {
    /// Outward normal.
    normal: Vec3A,
    corner: Vec3A,
    edge_u: Vec3A,
    edge_v: Vec3A,
}

#[derive(Clone, Debug)]
enum Shape {
    /// Paths enter through `faces` (chosen by `cdf`); `Some(d)` is a parallel beam with
    /// propagation direction `d`, `None` the sky dome.
    Portal {
        faces: Vec<Face>,
        cdf: Vec<f32>,
        beam: Option<Vec3A>,
    },
    Sphere {
        centre: Vec3A,
        radius: f32,
    },
    Spot {
        centre: Vec3A,
        axis: Vec3A,
        radius: f32,
        cos_outer: f32,
        inner: f32,
        outer: f32,
    },
    Tube {
        start: Vec3A,
        axis: Vec3A,
        radius: f32,
    },
}

/// One emitter with its total power.
#[derive(Clone, Debug)]
pub(crate) struct Source {
    shape: Shape,
    /// Total emitted power per channel (for the spot, the power of the full cone at on-axis
    /// intensity; the fade is applied per path as a weight).
    pub(crate) power: [f32; 3],
    pub(crate) class: Class,
}

/// A freshly emitted photon: start point, unit direction and a weight multiplying `power / N`.
pub(crate) struct Emission {
    pub(crate) origin: Vec3A,
    pub(crate) dir: Vec3A,
    pub(crate) weight: f32,
}

fn scale(c: [f32; 3], s: f32) -> [f32; 3] {
    c.map(|v| v * s)
}

/// The six faces of the box `[lo, hi]`.
fn box_faces(lo: Vec3A, hi: Vec3A) -> [Face; 6] {
    let e = hi - lo;
    let (x, y, z) = (Vec3A::X * e.x, Vec3A::Y * e.y, Vec3A::Z * e.z);
    [
        Face { normal: Vec3A::Z, corner: Vec3A::new(lo.x, lo.y, hi.z), edge_u: x, edge_v: y },
        Face { normal: -Vec3A::Z, corner: lo, edge_u: x, edge_v: y },
        Face { normal: Vec3A::X, corner: Vec3A::new(hi.x, lo.y, lo.z), edge_u: y, edge_v: z },
        Face { normal: -Vec3A::X, corner: lo, edge_u: y, edge_v: z },
        Face { normal: Vec3A::Y, corner: Vec3A::new(lo.x, hi.y, lo.z), edge_u: x, edge_v: z },
        Face { normal: -Vec3A::Y, corner: lo, edge_u: x, edge_v: z },
    ]
}

fn portal(faces: Vec<(Face, f32)>, beam: Option<Vec3A>) -> (Shape, f32) {
    let total: f32 = faces.iter().map(|f| f.1).sum();
    let mut acc = 0.0;
    let cdf = faces
        .iter()
        .map(|f| {
            acc += f.1;
            acc / total
        })
        .collect();
    (Shape::Portal { faces: faces.into_iter().map(|f| f.0).collect(), cdf, beam }, total)
}

/// Every source of `spec` that emits power, in a fixed order: sky, sun, moon, then the
/// `indirect = true` lights in file order. `lo`/`hi` is the portal box around the scene.
pub(crate) fn sources(spec: &LightingSpec, lo: Vec3A, hi: Vec3A) -> Vec<Source> {
    let mut out = Vec::new();
    let faces = box_faces(lo, hi);
    let area = |f: &Face| f.edge_u.cross(f.edge_v).length();

    let sky = scale(spec.sky.color, spec.sky.intensity);
    if sky.iter().any(|&c| c > 0.0) {
        // Flux through a face from the upper hemisphere per unit radiance: π·A for the top
        // (cosine over the whole hemisphere), π/2·A for a side (half of its cosine lobe).
        let entry: Vec<(Face, f32)> = faces
            .iter()
            .filter(|f| f.normal.z >= 0.0)
            .map(|f| (*f, area(f) * if f.normal.z > 0.0 { PI } else { PI / 2.0 }))
            .filter(|f| f.1 > 0.0)
            .collect();
        if !entry.is_empty() {
            let (shape, etendue) = portal(entry, None);
            out.push(Source { shape, power: scale(sky, etendue), class: Class::Sky });
        }
    }
    let celestial = [
        (spec.sun.direction_at(spec.time_of_day), scale(spec.sun.color, spec.sun.intensity)),
        (spec.moon.direction_at(spec.time_of_day), scale(spec.moon.color, spec.moon.intensity)),
    ];
    for (dir, irradiance) in celestial {
        let Some(d) = dir else { continue };
        let to_light = Vec3A::from(d);
        let entry: Vec<(Face, f32)> = faces.iter().map(|f| (*f, area(f) * f.normal.dot(to_light))).filter(|f| f.1 > 0.0).collect();
        if !entry.is_empty() {
            let (shape, projected) = portal(entry, Some(-to_light));
            out.push(Source { shape, power: scale(irradiance, projected), class: Class::SunMoon });
        }
    }
    for light in spec.lights.iter().filter(|l| l.indirect()) {
        let (shape, power) = match light {
            LightSpec::Point(l) => (Shape::Sphere { centre: l.position.into(), radius: l.radius }, scale(l.color, 4.0 * PI * l.intensity)),
            LightSpec::Spot(l) => {
                let outer = l.angle.to_radians();
                let cos_outer = outer.cos();
                (
                    Shape::Spot {
                        centre: l.position.into(),
                        axis: Vec3A::from(l.direction).normalize(),
                        radius: l.radius,
                        cos_outer,
                        inner: outer * (1.0 - l.softness),
                        outer,
                    },
                    scale(l.color, 2.0 * PI * (1.0 - cos_outer) * l.intensity),
                )
            }
            LightSpec::Line(l) => {
                let axis = Vec3A::from(l.end) - Vec3A::from(l.start);
                (Shape::Tube { start: l.start.into(), axis, radius: l.radius }, scale(l.color, PI * PI * l.intensity * axis.length()))
            }
        };
        if power.iter().any(|&c| c > 0.0) {
            out.push(Source { shape, power, class: Class::Light });
        }
    }
    out
}

impl Source {
    /// Draws one photon. `eps` pushes portal starts just outside the box.
    pub(crate) fn emit(&self, rng: &mut Rng, eps: f32) -> Emission {
        match &self.shape {
            Shape::Portal { faces, cdf, beam } => {
                let u = rng.next_f32();
                let i = cdf.iter().position(|&c| u < c).unwrap_or(faces.len() - 1);
                let f = &faces[i];
                // The draw that chose the face, rescaled to that face's share, is the first
                // coordinate on it: no draw is spent on the discrete choice alone, which keeps
                // the path's Sobol point (see `qmc`) evenly spread over position and direction.
                let lo = if i == 0 { 0.0 } else { cdf[i - 1] };
                let along = ((u - lo) / (cdf[i] - lo)).clamp(0.0, 1.0);
                let origin = f.corner + f.edge_u * along + f.edge_v * rng.next_f32() + f.normal * eps;
                let dir = match beam {
                    Some(d) => *d,
                    None => {
                        // Direction toward the sky, cosine-distributed about the face normal and
                        // mirrored into the upper hemisphere (the lobe is symmetric in z).
                        let mut w = cosine_hemisphere(f.normal, rng.next_f32(), rng.next_f32());
                        w.z = w.z.abs();
                        -w
                    }
                };
                Emission { origin, dir, weight: 1.0 }
            }
            Shape::Sphere { centre, radius } => {
                // A Lambertian sphere: uniform point, cosine direction about its normal. Its
                // intensity is the same in every direction, like a point light's.
                let n = uniform_sphere(rng.next_f32(), rng.next_f32());
                let dir = cosine_hemisphere(n, rng.next_f32(), rng.next_f32());
                Emission { origin: *centre + n * *radius, dir, weight: 1.0 }
            }
            Shape::Spot { centre, axis, radius, cos_outer, inner, outer } => {
                let (dir, cos_a) = uniform_cone(*axis, *cos_outer, rng.next_f32(), rng.next_f32());
                let (t, b) = basis(*axis);
                let (dx, dy) = uniform_disk(rng.next_f32(), rng.next_f32());
                let a = cos_a.clamp(-1.0, 1.0).acos();
                let weight = if a <= *inner {
                    1.0
                } else {
                    let x = ((outer - a) / (outer - inner).max(1e-6)).clamp(0.0, 1.0);
                    x * x * (3.0 - 2.0 * x)
                };
                Emission { origin: *centre + (t * dx + b * dy) * *radius, dir, weight }
            }
            Shape::Tube { start, axis, radius } => {
                let len = axis.length();
                let (t, b) = basis(*axis / len);
                let phi = std::f32::consts::TAU * rng.next_f32();
                let n = t * phi.cos() + b * phi.sin();
                let origin = *start + *axis * rng.next_f32() + n * *radius;
                Emission { origin, dir: cosine_hemisphere(n, rng.next_f32(), rng.next_f32()), weight: 1.0 }
            }
        }
    }
}
