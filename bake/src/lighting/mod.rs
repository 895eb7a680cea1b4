//! Baked lighting: path-traced sky, sun, moon and static-light irradiance for the terrain mesh
//! and an irradiance volume for everything else.
//!
//! # Method
//! Light tracing (photons from the sources) with two estimators, plus exact direct sun/moon:
//! - **Sources.** The sky (uniform radiance over the upper hemisphere) and the sun and moon
//!   (parallel beams) enter through the faces of the scene box; point, spot and line lights emit
//!   from their shapes. Each source gets a share of `paths_per_area · surface area` paths in
//!   proportion to the power it adds to the estimate: its power, but only the reflected part
//!   (mean albedo × power) for the sun and moon, whose first landing deposits nothing (see
//!   below). Photons bounce off Lambertian surfaces (cosine directions, at most `bounces`
//!   reflections).
//! - **Sampling.** A path's first eight random decisions (where and in which direction it
//!   leaves, and its first bounce) are the coordinates of an Owen-scrambled Sobol point, point
//!   `i` for path `i` of its source (see `qmc.rs`); later ones are independent random numbers. The
//!   paths of a source then cover those decisions evenly, which removes most of the photon-count
//!   noise of direct sky light and the first bounce, and the estimate stays unbiased.
//! - **Continuation: pilot and weight window.** One in 32 of every source's paths (the pilot)
//!   continue by Russian roulette on albedo. Their filtered result gives each vertex a target
//!   photon weight, its brightness over the mean (clamped to [1/32, 1]); the other paths continue
//!   through a weight window: a photon heavier than the target where it lands is split into
//!   lighter copies, a lighter one plays roulette up to it. Dark places (cave interiors, lit by
//!   bounces) then get many light photons instead of a few heavy ones. All paths carry the same
//!   share of their source's power, so pilot and window together are one unbiased estimate. A sun
//!   or moon photon's first hit deposits nothing (see below), so it always continues.
//! - **Surfaces** (collision estimator): each hit leaves its power on the hit triangle's corners;
//!   a normal-aware filter over mesh edges turns power and vertex area into irradiance (see
//!   `surface.rs`). Following mesh connectivity instead of a 3D grid means light cannot leak
//!   through walls, ceilings or floors, however thin: the filter spreads only along the surface
//!   (at most `smoothing` edges) and never across empty space or rock.
//! - **Volume** (track-length estimator): every free-space segment adds to the cells it crosses,
//!   in six directional bins (see [`IrradianceVolume`]).
//! - **Sun and moon direct light** is not estimated but computed per query point with one
//!   shadow ray each: crisp shadows and no noise where most of the light is.
//! - **Water** (optional, [`WaterMedium`]; see `water.rs`): photons that meet a water surface are
//!   refracted or reflected by Fresnel roulette and lose power per colour along their way through
//!   the water (Beer–Lambert); the sun and moon straight in follow the refracted beam.
//!
//! Results are split into [`Irradiance`] components so a renderer that draws sun shadows or
//! static lights itself can take only what it lacks.
//!
//! Approximations (all documented, none random): the surface filter's blur, the volume's cell
//! size and ambient-cube directional basis, `bounces` truncation, point-sampled sun and moon
//! (no penumbra), and uniform-intensity spot disks and tube lights without end caps.
//!
//! Determinism: random numbers are keyed by (seed, source, path) and every sum is taken in a fixed
//! order, so results are bit-identical for any thread count.
//!
//! # Cost and accuracy
//! Each batch's paths are traced in Morton order of their start points, which keeps the BVH walk
//! in cache. Most of the error against a reference with many more paths sits in dim cave interiors
//! (photon-count noise). Cost grows linearly with `paths_per_area`, noise falls with its square
//! root. `examples/lighting_accuracy.rs` measures both; the figures are in BENCHMARKS.md.

mod fixed;
mod lookup;
mod parked;
mod parts;
mod qmc;
mod rng;
mod scene;
mod sources;
pub mod spec;
mod surface;
mod surface_build;
mod transport;
mod volume;
pub mod water;
mod words;

#[cfg(test)]
mod occluder_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod water_tests;

pub use fixed::LightSums;
pub use lookup::{LightLookup, LOOKUP_LAYOUT};
pub use parked::Parking;
pub use parts::{AllPathsHere, PathParts, PathPhase, PhaseWork};
pub use scene::PreparedScene;
pub use spec::{LightSpec, LightingSpec, LineLight, MaterialAlbedo, MoonSpec, PointLight, SkySpec, SpecError, SpotLight, SunSpec};
pub use volume::{IrradianceVolume, VolumeDesc, MIN_AIR};
pub use water::{WaterMedium, WaterMediumError};

use crate::rays::{BuildError, Bvh, Cull, Ray};
use fixed::Fixed;
use glam::Vec3A;
use parked::{ParkedBvh, ParkedSums, ParkedVolume};
use rayon::prelude::*;
use std::borrow::Cow;
use surface::{MeshFilter, VertexGrid};
use transport::Scene;
use volume::VolumeAccumulator;

/// Rec. 709 luminance of a linear RGB value: how the lighting bake weighs colours against each
/// other (source shares, the weight window, the pilot's brightness).
pub(crate) fn luminance(c: [f32; 3]) -> f32 {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

/// One path in this many (per source) is a pilot path; see [`bake_lighting`].
const PILOT_DIVISOR: u64 = 32;

/// Errors of the lighting bake.
#[derive(Debug, thiserror::Error)]
pub enum LightingError {
    /// The spec failed [`LightingSpec::validate`].
    #[error("invalid lighting spec: {}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
    Spec(Vec<SpecError>),
    /// The mesh is malformed (bad indices, non-finite positions, wrong material count).
    #[error("invalid lighting mesh: {0}")]
    Mesh(String),
    /// The ray engine refused the mesh.
    #[error("invalid lighting mesh: {0}")]
    Rays(#[from] BuildError),
    /// The volume description is malformed.
    #[error("invalid irradiance volume: {0}")]
    Volume(String),
    /// Query arrays are malformed.
    #[error("invalid irradiance query: {0}")]
    Query(String),
    /// The water medium failed [`WaterMedium::validate`].
    #[error("invalid water medium: {0}")]
    Water(#[from] WaterMediumError),
    /// A [`PathParts`] source failed to provide a phase's sums.
    #[error("light transport parts: {0}")]
    Parts(String),
}

/// The scene to light: an indexed triangle mesh in world units. Triangles are one-sided: the
/// counter-clockwise normal points into the air. Its positions and indices are borrowed, or owned
/// so that [`PreparedScene::new`] lets go of them once it has read them.
#[derive(Clone, Debug)]
pub struct SceneMesh<'a> {
    /// Vertex positions in world units.
    pub positions: Cow<'a, [[f32; 3]]>,
    /// Three vertex indices per triangle, counter-clockwise seen from the air.
    pub indices: Cow<'a, [u32]>,
    /// Optional material id per triangle, looked up in [`LightingSpec::materials`].
    pub materials: Option<&'a [u16]>,
    /// Triangle counts of spatially compact runs of the index buffer, in order (a terrain's
    /// tiles), or empty. Only speeds up the BVH build (see [`Bvh::build_clustered`]).
    pub clusters: &'a [u32],
    /// Things that only block and reflect light (trees), or `None`.
    pub occluders: Option<Occluders<'a>>,
}

impl<'a> SceneMesh<'a> {
    /// A mesh of borrowed arrays, without materials, clusters or occluders.
    pub fn new(positions: &'a [[f32; 3]], indices: &'a [u32]) -> SceneMesh<'a> {
        SceneMesh { positions: Cow::Borrowed(positions), indices: Cow::Borrowed(indices), materials: None, clusters: &[], occluders: None }
    }

    /// The same mesh, its arrays borrowed from this one.
    pub fn borrowed(&self) -> SceneMesh<'_> {
        SceneMesh { positions: Cow::Borrowed(&self.positions), indices: Cow::Borrowed(&self.indices), ..*self }
    }
}

/// Geometry that takes part in light transport without being lit itself: photons that strike it
/// are reflected by its albedo (from either side: leaves are thin) but deposit nothing there, and
/// queries never read it. Trees are this: they darken the ground under them and the irradiance
/// volume around them, and read their own light from that volume.
#[derive(Clone, Copy, Debug)]
pub struct Occluders<'a> {
    /// Vertex positions in world units.
    pub positions: &'a [[f32; 3]],
    /// Three vertex indices per triangle.
    pub indices: &'a [u32],
    /// Albedo per triangle.
    pub albedo: &'a [[f32; 3]],
    /// Triangle counts of spatially compact runs (as [`SceneMesh::clusters`]), or empty.
    pub clusters: &'a [u32],
}

/// Irradiance at one query point, split by how a renderer may want to use it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Irradiance {
    /// Sun and moon straight in, shadowed (exact per point, no noise).
    pub sun_moon: [f32; 3],
    /// Straight from the static lights (estimated, filtered like `ambient`).
    pub lights: [f32; 3],
    /// Sky light plus every bounce of every source.
    pub ambient: [f32; 3],
}

impl Irradiance {
    /// Sum of all components.
    pub fn total(&self) -> [f32; 3] {
        [0, 1, 2].map(|c| self.sun_moon[c] + self.lights[c] + self.ambient[c])
    }
}

/// Counts describing a bake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BakeStats {
    /// Paths traced per source, in order: sky, sun, moon, lights (only those that emit).
    pub paths: Vec<u64>,
    /// Photon flights traced (rays): a path makes one per bounce, more where it is split.
    pub flights: u64,
    /// Welded vertex count of the mesh.
    pub vertices: usize,
    /// Triangle count of the mesh.
    pub triangles: usize,
    /// Total surface area.
    pub area: f64,
}

/// The result of [`bake_lighting`]: per-vertex irradiance on demand and the volume, and the
/// tracer that gives the sun's and moon's exact light at any point.
pub struct BakedLighting {
    lookup: LightLookup,
    bvh: Bvh,
    /// Direction toward each of sun and moon with its irradiance.
    celestial: Vec<(Vec3A, [f32; 3])>,
    eps: f32,
    /// The water the light crossed, for the sun's and moon's exact light under it.
    water: Option<WaterMedium>,
}

/// How light paths continue after a surface hit (see `transport.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Continuation {
    /// Russian roulette on albedo only (the tests' yardstick for the window).
    #[cfg(test)]
    Roulette,
    /// A pilot share with Russian roulette, then a weight window built from it.
    WeightWindow,
}

/// Bakes the lighting of `mesh` inside `bounds` (the world box; grown to contain the mesh),
/// recording the irradiance volume described by `volume`.
pub fn bake_lighting(
    mesh: &SceneMesh,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
) -> Result<BakedLighting, LightingError> {
    bake_lighting_in_water(mesh, bounds, volume, spec, seed, None)
}

/// [`bake_lighting`] with light crossing and absorbed in `water` (see `water.rs`); with `None`,
/// exactly [`bake_lighting`].
pub fn bake_lighting_in_water(
    mesh: &SceneMesh,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
    water: Option<&WaterMedium>,
) -> Result<BakedLighting, LightingError> {
    bake_lighting_in_parts(mesh, bounds, volume, spec, seed, water, &AllPathsHere)
}

/// [`bake_lighting_in_water`] with each phase's sums from `parts` (which may trace some parts
/// here and read the others' sums): the same result for any split.
#[allow(clippy::too_many_arguments)]
pub fn bake_lighting_in_parts(
    mesh: &SceneMesh,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
    water: Option<&WaterMedium>,
    parts: &dyn PathParts,
) -> Result<BakedLighting, LightingError> {
    bake_lighting_full(mesh, bounds, volume, spec, seed, Continuation::WeightWindow, water, parts)
}

/// [`bake_lighting`] with the given way of continuing paths.
#[cfg(test)]
pub(crate) fn bake_lighting_with(
    mesh: &SceneMesh,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
    continuation: Continuation,
) -> Result<BakedLighting, LightingError> {
    bake_lighting_full(mesh, bounds, volume, spec, seed, continuation, None, &AllPathsHere)
}

#[allow(clippy::too_many_arguments)]
fn bake_lighting_full(
    mesh: &SceneMesh,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
    continuation: Continuation,
    water: Option<&WaterMedium>,
    parts: &dyn PathParts,
) -> Result<BakedLighting, LightingError> {
    check_settings(bounds, volume, spec, water)?;
    let scene = PreparedScene::new(mesh.borrowed(), Parking::InMemory)?;
    let baked = bake_prepared_full(scene, bounds, volume, spec, seed, continuation, water, parts, |bvh| bvh)?;
    Ok(BakedLighting { lookup: baked.lookup, bvh: baked.tracer, celestial: celestial(spec), eps: baked.eps, water: water.cloned() })
}

/// [`bake_lighting_in_parts`] over a scene prepared beforehand, so that the caller can free the
/// mesh it was prepared from before the paths are traced, keeping only what the filtered queries
/// read: the tracer goes as soon as the irradiance volume is finished, before the filter makes
/// its buffers.
#[allow(clippy::too_many_arguments)]
pub fn bake_lookup_in_parts(
    scene: PreparedScene,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
    water: Option<&WaterMedium>,
    parts: &dyn PathParts,
) -> Result<LightLookup, LightingError> {
    check_settings(bounds, volume, spec, water)?;
    // The scene's build left its transients in the allocator's arenas, which tracing would not
    // reuse: give them back before the sums are made.
    crate::mem::return_freed_memory();
    Ok(bake_prepared_full(scene, bounds, volume, spec, seed, Continuation::WeightWindow, water, parts, drop)?.lookup)
}

/// What [`bake_prepared_full`] gives back: the lookup, what it made of the tracer and the ray
/// offset the tracer was used with.
struct Finished<T> {
    lookup: LightLookup,
    tracer: T,
    eps: f32,
}

/// Direction toward each of sun and moon that is above the horizon, with its irradiance.
fn celestial(spec: &LightingSpec) -> Vec<(Vec3A, [f32; 3])> {
    [
        (spec.sun.direction_at(spec.time_of_day), spec.sun.color.map(|c| c * spec.sun.intensity)),
        (spec.moon.direction_at(spec.time_of_day), spec.moon.color.map(|c| c * spec.moon.intensity)),
    ]
    .into_iter()
    .filter_map(|(d, e)| d.map(|d| (Vec3A::from(d), e)))
    .collect()
}

/// Checks everything but the mesh (see [`PreparedScene::new`]).
fn check_settings(bounds: ([f32; 3], [f32; 3]), volume: &VolumeDesc, spec: &LightingSpec, water: Option<&WaterMedium>) -> Result<(), LightingError> {
    spec.validate().map_err(LightingError::Spec)?;
    if let Some(w) = water {
        w.validate()?;
    }
    let finite = volume.min.iter().chain(&volume.max).all(|v| v.is_finite());
    let cells = volume.dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if !finite || (0..3).any(|a| volume.dims[a] > 0 && volume.max[a] <= volume.min[a]) {
        return Err(LightingError::Volume(format!("bad box {:?}..{:?}", volume.min, volume.max)));
    }
    if cells.is_none_or(|c| c > 1 << 28) {
        return Err(LightingError::Volume(format!("too many cells {:?}", volume.dims)));
    }
    if !bounds.0.iter().chain(&bounds.1).all(|v| v.is_finite()) {
        return Err(LightingError::Mesh(format!("bounds not finite: {bounds:?}")));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bake_prepared_full<T>(
    prepared: PreparedScene,
    bounds: ([f32; 3], [f32; 3]),
    volume: &VolumeDesc,
    spec: &LightingSpec,
    seed: u64,
    continuation: Continuation,
    water: Option<&WaterMedium>,
    parts: &dyn PathParts,
    keep_tracer: impl FnOnce(Bvh) -> T,
) -> Result<Finished<T>, LightingError> {
    let PreparedScene { bvh, surface, corner_weld, materials, lit_triangles, occluder_albedo, parking } = prepared;
    // Scene box: the world bounds grown around the mesh; eps scales with its size and distance
    // from the origin, so ray offsets stay well above float rounding of the hit points.
    let (mlo, mhi) = bvh.bounds();
    let mut lo = Vec3A::from(bounds.0).min(Vec3A::from(bounds.1));
    let mut hi = Vec3A::from(bounds.0).max(Vec3A::from(bounds.1));
    if lit_triangles > 0 {
        lo = lo.min(mlo.into());
        hi = hi.max(mhi.into());
    }
    if let Some(w) = water {
        // Distant light enters the water only through its surface: the box must reach it.
        hi.z = hi.z.max(w.level);
    }
    let scale = (hi - lo).max_element().max(lo.abs().max(hi.abs()).max_element()).max(1e-3);
    let eps = 2e-5 * scale;
    lo -= Vec3A::splat(4.0 * eps);
    hi += Vec3A::splat(4.0 * eps);
    let sources = sources::sources(spec, lo, hi);
    let total_paths = (spec.paths_per_area as f64 * surface.total_area).ceil().min(1e12) as u64;
    let mut albedo_table = vec![spec.albedo; spec.materials.iter().map(|m| m.id as usize + 1).max().unwrap_or(0)];
    for m in &spec.materials {
        albedo_table[m.id as usize] = m.albedo;
    }
    // Mean albedo luminance over the triangles: how much of the sun's and moon's power their
    // photons carry into the estimate after the first landing.
    let reflectance = match &materials {
        Some(ids) if lit_triangles > 0 => {
            let lum = |id: u16| luminance(albedo_table.get(id as usize).copied().unwrap_or(spec.albedo)) as f64;
            (ids.iter().map(|&id| lum(id)).sum::<f64>() / lit_triangles as f64) as f32
        }
        _ => luminance(spec.albedo),
    };
    let counts = if lit_triangles == 0 { vec![0; sources.len()] } else { transport::allocate(&sources, total_paths, reflectance) };
    let total_power: f64 = sources.iter().map(|s| s.power.iter().fold(0.0f32, |m, &p| m.max(p)) as f64).sum();
    let fixed = Fixed::for_scene(total_power, (hi - lo).max_element());
    // A pilot share of every source's paths, traced with plain Russian roulette, shows where the
    // light goes; the rest follow a weight window built from it. Both shares carry the same
    // per-photon power, so together they are one unbiased estimate.
    let has_lights = sources.iter().any(|s| s.class == sources::Class::Light);
    let zeroed = || LightSums::zeroed(surface.vertices, has_lights, VolumeAccumulator::new(*volume, fixed));
    let divisor = if continuation == Continuation::WeightWindow { PILOT_DIVISOR } else { 1 };
    let pilot: Vec<(u64, u64)> = counts.iter().map(|&c| (0, c.div_ceil(divisor))).collect();
    let trace_phase = |bvh: &Bvh, ranges: &[(u64, u64)], importance: Option<&transport::Importance>, k: u32, n: u32, into: &mut LightSums| {
        let scene = Scene {
            bvh,
            corner_weld: &corner_weld,
            materials: materials.as_deref(),
            albedo_table: &albedo_table,
            default_albedo: spec.albedo,
            bounces: spec.bounces,
            eps,
            seed,
            record_segments: volume.dims.iter().all(|&d| d > 0),
            lit_triangles: lit_triangles as u32,
            occluder_albedo: &occluder_albedo,
            water,
            fixed,
        };
        let part: Vec<(u64, u64)> = ranges.iter().map(|&(a, b)| (part_of(a, b, k, n), part_of(a, b, k + 1, n))).collect();
        transport::trace_all(&scene, importance, &sources, &counts, &part, into);
    };
    let mut bvh = bvh;
    let work = PhaseWork { phase: PathPhase::Pilot, trace: &|k, n, into| trace_phase(&bvh, &pilot, None, k, n, into), zeroed: &zeroed };
    let mut sums = parts.sums(&work)?;
    if divisor > 1 {
        // The pilot's sums wait compressed while its brightness is filtered and the rest traced;
        // the tracer waits while the filter has its buffers (both are among a large world's
        // largest arrays), where a bake asking for the least memory parks it.
        let luminance = sums.luminance(&fixed);
        let pilot_sums = ParkedSums::park(sums, parking)?;
        let tracer = ParkedBvh::park(bvh, parking)?;
        let importance = transport::Importance::from_brightness(&surface.filter()?.luminance(luminance, spec.smoothing));
        bvh = tracer.unpark()?;
        let rest: Vec<(u64, u64)> = counts.iter().zip(&pilot).map(|(&c, p)| (p.1, c)).collect();
        let work =
            PhaseWork { phase: PathPhase::Rest, trace: &|k, n, into| trace_phase(&bvh, &rest, Some(&importance), k, n, into), zeroed: &zeroed };
        sums = parts.sums(&work)?;
        pilot_sums.add_to(&mut sums)?;
    }
    // This is where the stage peaks: what is no longer read goes before the next buffers are
    // made. The volume is finished (its exact sums freed) while the tracer it needs is held;
    // then the tracer goes unless the caller keeps it, then the exact vertex sums, before the
    // filter makes its buffers.
    let LightSums { ambient, lights, volume: accumulator, flights } = sums;
    drop(corner_weld);
    let volume = accumulator.finish(&bvh, lit_triangles as u32, hi.z, eps);
    let tracer = keep_tracer(bvh);
    // The filter's arrays are unparked first, and the lookup's own (the weld, the positions) and
    // the finished volume only once the filter's buffers are gone. One map at a time: the
    // filter's buffers then hold three channels and the area.
    let volume = ParkedVolume::park(volume, parking)?;
    let filter = surface.filter()?;
    let filtered = |exact: words::SplitWords| {
        let power = fixed::power_values(&exact, &fixed);
        drop(exact);
        filter.irradiance(power, spec.smoothing)
    };
    let ambient = filtered(ambient);
    let lights = (!lights.is_empty()).then(|| filtered(lights));
    let MeshFilter { normal, .. } = filter;
    let (weld, pos, volume) = (surface.weld()?, surface.positions()?, volume.unpark()?);
    let lookup_radius = 2.5 * surface.mean_edge.max(eps);
    let grid = VertexGrid::new(&pos, lookup_radius);
    let stats = BakeStats { paths: counts, flights, vertices: pos.len(), triangles: lit_triangles, area: surface.total_area };
    let lookup = LightLookup::new(weld, pos, normal, ambient, lights, grid, lookup_radius, volume, stats);
    Ok(Finished { lookup, tracer, eps })
}

/// The start of part `k` of `n` of the index range `a..b` (the end of part `n - 1` is `b`).
fn part_of(a: u64, b: u64, k: u32, n: u32) -> u64 {
    a + ((b - a) as u128 * k as u128 / n.max(1) as u128) as u64
}

impl BakedLighting {
    /// Irradiance at points on (or within a few edge lengths of) the baked surface, with their
    /// unit normals. Sun and moon are traced exactly from each point (occluded only by surfaces
    /// seen from their air side, so points slightly inside the rock, such as coarse-LOD vertices,
    /// still see out). The filtered components come from the nearest baked vertices that face
    /// the same way (inverse-distance weights, up to 4 within 2.5 mean edge lengths; a point at
    /// a baked vertex gets exactly its value), widening the search 4× if none qualify, and
    /// falling back to the irradiance volume for points far from the surface.
    pub fn irradiance_at(&self, positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Result<Vec<Irradiance>, LightingError> {
        self.query_all(positions, normals)
    }

    /// [`BakedLighting::irradiance_at`] without the sun and moon (left zero): for renderers that
    /// draw direct sun and moon light themselves, this saves a shadow ray per point.
    pub fn filtered_at(&self, positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Result<Vec<Irradiance>, LightingError> {
        self.lookup.filtered_at(positions, normals)
    }

    fn query_all(&self, positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Result<Vec<Irradiance>, LightingError> {
        lookup::check_queries(positions, normals)?;
        Ok(positions.par_iter().zip(normals).map(|(p, n)| self.query(Vec3A::from(*p), Vec3A::from(*n).normalize_or_zero())).collect())
    }

    fn query(&self, p: Vec3A, n: Vec3A) -> Irradiance {
        let mut out = Irradiance::default();
        for (dir, e) in &self.celestial {
            if let Some(w) = self.water.as_ref().filter(|w| w.wet_near(p)) {
                let through = w.sun_under_water(&self.bvh, p, n, *dir, self.eps);
                for (acc, (e, t)) in out.sun_moon.iter_mut().zip(e.iter().zip(through)) {
                    *acc += e * t;
                }
                continue;
            }
            let cos = n.dot(*dir);
            if cos <= 0.0 {
                continue;
            }
            let ray = Ray { origin: p + n * self.eps, dir: *dir, tmin: 0.0, tmax: f32::INFINITY };
            if !self.bvh.occluded(&ray, Cull::BackFaces) {
                for (acc, e) in out.sun_moon.iter_mut().zip(e) {
                    *acc += e * cos;
                }
            }
        }
        (out.ambient, out.lights) = self.lookup.filtered(p, n);
        out
    }

    /// The irradiance volume.
    pub fn volume(&self) -> &IrradianceVolume {
        self.lookup.volume()
    }

    /// Counts describing the bake.
    pub fn stats(&self) -> &BakeStats {
        self.lookup.stats()
    }

    /// What the filtered queries read, without the tracer: what a bake keeps once nothing
    /// asks for the sun's and moon's exact light (the BVH and the surface's adjacency go).
    pub fn into_lookup(self) -> LightLookup {
        self.lookup
    }

    /// The BVH built over the mesh (for further visibility queries).
    pub fn bvh(&self) -> &Bvh {
        &self.bvh
    }
}
