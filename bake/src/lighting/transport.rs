//! Light tracing: photons leave the sources, bounce diffusely, and leave their power on the
//! surfaces they hit and along the free space they cross.
//!
//! Determinism: path `i` of source `s` draws from `Rng::for_path(seed, s, i)` only (a split's children
//! from forks of it). Paths are traced in fixed batches, each sorted by its paths' start points
//! (ties by path number); within a batch, chunks of that order run in parallel, each tracing its
//! paths' photons in waves in an order fixed by the photons alone; their records are applied to the
//! accumulators (split by ownership, never by thread) while the next batch is traced, and the one
//! after it emitted and ordered. The sums are
//! exact integers, so the result is the same for any thread count and any order of application.

use super::fixed::{Fixed, LightSums};
use super::luminance;
use super::rng::{cosine_hemisphere, Rng};
use super::sources::{Class, Emission, Source};
use super::surface::{CornerLists, Deposit, DepositRanges};
use super::volume::{Segment, SlabLists};
use super::water::WaterMedium;
use crate::mem::prefetch;
use crate::rays::{Bvh, Hit, Ray};
use glam::Vec3A;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Paths per batch: bounds the memory of the records between tracing and applying (two batches'
/// records are held at once: one applied while the next is traced).
const BATCH: u64 = 1 << 16;
/// Paths per parallel work item.
const CHUNK: u64 = 512;

/// Everything a path needs to know about the scene.
pub(crate) struct Scene<'a> {
    pub(crate) bvh: &'a Bvh,
    /// The welded vertex of each BVH vertex (see `PreparedScene::corner_weld`).
    pub(crate) corner_weld: &'a [u32],
    /// Albedo per triangle via `materials` and `albedo_table`, or the default.
    pub(crate) materials: Option<&'a [u16]>,
    pub(crate) albedo_table: &'a [[f32; 3]],
    pub(crate) default_albedo: [f32; 3],
    pub(crate) bounces: u32,
    pub(crate) eps: f32,
    pub(crate) seed: u64,
    pub(crate) record_segments: bool,
    /// Triangles from this index on are occluders (see [`super::Occluders`]).
    pub(crate) lit_triangles: u32,
    /// Albedo of each occluder triangle.
    pub(crate) occluder_albedo: &'a [[f32; 3]],
    /// Water that light crosses and is absorbed in (see `water.rs`), or `None`.
    pub(crate) water: Option<&'a WaterMedium>,
    /// The unit of the light sums.
    pub(crate) fixed: Fixed,
}

impl Scene<'_> {
    /// A 30-bit Morton code of `p` in the BVH's box (10 bits per axis, clamped).
    fn morton(&self, p: Vec3A) -> u32 {
        let (lo, hi) = self.bvh.bounds();
        let (lo, hi) = (Vec3A::from(lo), Vec3A::from(hi));
        let q = ((p - lo) / (hi - lo).max(Vec3A::splat(1e-20)) * 1023.0).clamp(Vec3A::ZERO, Vec3A::splat(1023.0));
        let spread = |v: f32| {
            let mut x = v as u32 & 1023;
            x = (x | (x << 16)) & 0x0300_00ff;
            x = (x | (x << 8)) & 0x0300_f00f;
            x = (x | (x << 4)) & 0x030c_30c3;
            (x | (x << 2)) & 0x0924_9249
        };
        spread(q.x) | (spread(q.y) << 1) | (spread(q.z) << 2)
    }

    fn albedo(&self, tri: usize) -> [f32; 3] {
        if let Some(a) = tri.checked_sub(self.lit_triangles as usize) {
            return self.occluder_albedo.get(a).copied().unwrap_or(self.default_albedo);
        }
        match self.materials {
            Some(m) => self.albedo_table.get(m[tri] as usize).copied().unwrap_or(self.default_albedo),
            None => self.default_albedo,
        }
    }
}

/// How many paths each source traces: proportional to the power it adds to the estimate
/// (luminance), with a fifth of the budget shared equally so that dim lights in dark places are
/// not starved. A sun or moon photon's first landing adds nothing (that light is exact per query
/// point): only what the surfaces reflect, `reflectance` (the mean albedo luminance) times its
/// power, reaches the estimate. Weighing the sun by its full power gave it 62 % of the default
/// world's paths; by its reflected power, 49 %, for 1.1× the efficiency (see BENCHMARKS.md).
pub(crate) fn allocate(sources: &[Source], total: u64, reflectance: f32) -> Vec<u64> {
    let weight = |s: &Source| {
        let scale = if s.class == Class::SunMoon { reflectance.clamp(0.0, 1.0) } else { 1.0 };
        (luminance(s.power) * scale).max(1e-30) as f64
    };
    let sum: f64 = sources.iter().map(weight).sum();
    let n = sources.len() as f64;
    sources
        .iter()
        .map(|s| {
            let share = 0.8 * weight(s) / sum + 0.2 / n;
            ((total as f64 * share).ceil() as u64).max(1)
        })
        .collect()
}

/// What one chunk of paths leaves, listed for adding piece by piece.
#[derive(Default)]
struct Records {
    deposits: Vec<Deposit>,
    /// `deposits`' corners by welded-vertex range.
    corners: CornerLists,
    segments: Vec<Segment>,
    /// `segments` by slab of the volume.
    slabs: SlabLists,
    /// Rays traced (photon flights).
    flights: u64,
}

/// Traces paths `ranges[s]` of every source `s` (of `counts[s]` in the whole bake, which sets each
/// photon's share of the source's power), adding their power and photon flights (rays) to `sums`.
/// The sums are exact (see `fixed.rs`): tracing the ranges in pieces and adding the pieces' sums
/// gives the same sums.
pub(crate) fn trace_all(
    scene: &Scene,
    importance: Option<&Importance>,
    sources: &[Source],
    counts: &[u64],
    ranges: &[(u64, u64)],
    sums: &mut LightSums,
) {
    let mut first = Vec::with_capacity(ranges.len() + 1);
    first.push(0u64);
    for r in ranges {
        first.push(first.last().copied().unwrap_or(0) + (r.1 - r.0));
    }
    let total = first.last().copied().unwrap_or(0);
    let LightSums { ambient, lights, volume, flights } = sums;
    let source_of = |g: u64| first.partition_point(|&f| f <= g) - 1;
    // Emits every path of `paths`, then orders them by their start points along a Morton curve:
    // neighbouring paths then walk the same BVH nodes and leaves while they are still in cache.
    // The order is a function of the paths alone (ties by path number). Only the (Morton code,
    // path) keys are sorted; the emitted paths stay where they are.
    let emit = |paths: std::ops::Range<u64>, batch: &mut Batch| {
        batch.first = paths.start;
        batch.starts.clear();
        batch.starts.par_extend(paths.into_par_iter().map(|g| {
            let s = source_of(g);
            let mut rng = Rng::for_path(scene.seed, s as u64, ranges[s].0 + g - first[s]);
            let e = sources[s].emit(&mut rng, scene.eps);
            (rng, e)
        }));
        batch.order.clear();
        batch.order.par_extend(batch.starts.par_iter().enumerate().map(|(k, (_, e))| (scene.morton(e.origin) as u64) << 32 | k as u64));
        batch.order.par_sort_unstable();
    };
    let ranges = DepositRanges::new(ambient.len() / 3);
    let layout = volume.slab_layout();
    let trace_chunk = |batch: &Batch, chunk: &[u64]| {
        // Room for a typical path's records up front, so chunks rarely grow (and copy) them.
        let mut rec = Records {
            deposits: Vec::with_capacity(2 * chunk.len()),
            segments: Vec::with_capacity(if scene.record_segments { 2 * chunk.len() } else { 0 }),
            ..Records::default()
        };
        let first_photons = chunk.iter().filter_map(|&key| {
            let k = key as u32 as usize;
            let (rng, e) = &batch.starts[k];
            let s = source_of(batch.first + k as u64);
            let in_water = scene.water.is_some_and(|w| w.is_water(e.origin.into()));
            Photon::first(&sources[s], s as u32, rng.clone(), e, 1.0 / counts[s] as f32, in_water)
        });
        trace_waves(scene, importance, sources, first_photons.collect(), &mut rec);
        rec.corners = ranges.list(&rec.deposits);
        rec.slabs = layout.list(&rec.segments);
        rec
    };
    // Each round traces batch k in chunks while batch k - 1's records are added to the sums, and
    // batch k + 1 is emitted and ordered beside them. Every thread takes the round's work items
    // one at a time from one counter. The items that add come first, alternating with chunks,
    // the volume's slabs (the largest items) before the maps' vertex ranges: the slabs all start
    // early, beside tracing rather than all at once, and whatever runs late is a small item, not
    // a slab that holds up the round while the other threads wait.
    let threads = rayon::current_num_threads();
    let (mut current, mut next) = (Batch::default(), Batch::default());
    let mut traced: Vec<Records> = Vec::new();
    let mut batch_start = 0;
    emit(0..BATCH.min(total), &mut current);
    while batch_start < total || !traced.is_empty() {
        let batch_end = (batch_start + BATCH).min(total);
        *flights += traced.iter().map(|r| r.flights).sum::<u64>();
        let slabs: Vec<Mutex<_>> = volume.slabs_mut().into_iter().map(Mutex::new).collect();
        let maps: Vec<(usize, usize, Mutex<_>)> = [&mut *ambient, &mut *lights]
            .into_iter()
            .enumerate()
            .flat_map(|(map, words)| ranges.split(words).into_iter().enumerate().map(move |(r, w)| (map, r, Mutex::new(w))))
            .collect();
        let chunks: Vec<&[u64]> = current.order.chunks(CHUNK as usize).collect();
        let slots: Vec<Mutex<Option<Records>>> = chunks.iter().map(|_| Mutex::new(None)).collect();
        let mut adds = (0..slabs.len()).map(Item::Slab).chain((0..maps.len()).map(Item::Range));
        let mut traces = (0..chunks.len()).map(Item::Chunk);
        let mut items = Vec::with_capacity(slabs.len() + maps.len() + chunks.len());
        loop {
            match (adds.next(), traces.next()) {
                (None, None) => break,
                (a, b) => items.extend(a.into_iter().chain(b)),
            }
        }
        let taken = AtomicUsize::new(0);
        let work = || {
            while let Some(&item) = items.get(taken.fetch_add(1, Relaxed)) {
                match item {
                    Item::Slab(i) => {
                        let mut slab = slabs[i].lock().expect("a slab is taken once a round");
                        for rec in &traced {
                            slab.add(&rec.segments, &rec.slabs);
                        }
                    }
                    Item::Range(i) => {
                        let (map, r, words) = &maps[i];
                        let mut words = words.lock().expect("a range is taken once a round");
                        for rec in &traced {
                            ranges.add(*r, &mut words, *map, &rec.deposits, &rec.corners, &scene.fixed);
                        }
                    }
                    Item::Chunk(k) => *slots[k].lock().expect("a chunk is taken once a round") = Some(trace_chunk(&current, chunks[k])),
                }
            }
        };
        let next_paths = batch_end..(batch_end + BATCH).min(total);
        rayon::join(|| (0..threads).into_par_iter().for_each(|_| work()), || emit(next_paths, &mut next));
        drop((slabs, maps));
        traced = slots.into_iter().map(|slot| slot.into_inner().ok().flatten().expect("every chunk is traced in its round")).collect();
        std::mem::swap(&mut current, &mut next);
        batch_start = batch_end;
    }
}

/// A work item of one round of `trace_all`.
#[derive(Clone, Copy)]
enum Item {
    /// Adding the previous batch's segments to the volume's slab.
    Slab(usize),
    /// Adding the previous batch's deposits to one map's vertex range.
    Range(usize),
    /// Tracing the batch's chunk.
    Chunk(usize),
}

/// One batch of paths, emitted: each path's generator and emission (path `first + k` at `k`),
/// and the order they are traced in (see `trace_all`).
#[derive(Default)]
struct Batch {
    first: u64,
    starts: Vec<(Rng, Emission)>,
    /// Morton code of the start point (high 32 bits) and index into `starts` (low 32 bits).
    order: Vec<u64>,
}

/// Bounds of the weight window's target (relative to a freshly emitted photon's power): at most
/// this much splitting where the pilot saw almost no light, and this much thinning where it saw
/// the most.
const TARGET_MIN: f32 = 1.0 / 32.0;
const TARGET_MAX: f32 = 1.0;
/// Most children one bounce may split into.
const MAX_SPLIT: f32 = 16.0;

/// Importance for the weight window: per welded vertex, the photon weight (relative to a fresh
/// photon) that continuing paths should carry near it, proportional to the pilot's brightness
/// there. Dim places then receive many light photons (a photon landing there is split into
/// several), which evens out the photon count, and so the relative noise, across the surface.
/// Bright places keep plain Russian roulette: thinning them further would starve the dark
/// places their bounce light reaches.
pub(crate) struct Importance {
    target: Vec<f32>,
}

impl Importance {
    /// From the pilot's per-welded-vertex brightness (luminance of ambient + lights irradiance,
    /// any positive scale): target = brightness / mean, clamped to `[TARGET_MIN, TARGET_MAX]`.
    pub(crate) fn from_brightness(brightness: &[f32]) -> Importance {
        let mean = brightness.iter().map(|&b| b as f64).sum::<f64>() / brightness.len().max(1) as f64;
        let inv = if mean > 0.0 { (1.0 / mean) as f32 } else { 0.0 };
        Importance { target: brightness.iter().map(|&b| (b * inv).clamp(TARGET_MIN, TARGET_MAX)).collect() }
    }
}

/// A photon waiting to be traced: a path's first photon, a photon continuing after a bounce, or
/// a child of a split.
struct Photon {
    origin: Vec3A,
    dir: Vec3A,
    power: [f32; 3],
    bounce: u32,
    rng: Rng,
    /// Index of the path's source.
    source: u32,
    /// Luminance of a freshly emitted photon's power (the weight window's unit).
    fresh_lum: f32,
    /// Whether it travels in water (see `water.rs`).
    in_water: bool,
}

impl Photon {
    /// The first photon of a path of `src` (index `source`) with emission `e`, each photon of
    /// the source carrying `scale` of its power, starting in water when `in_water`; `None` when
    /// it carries nothing, or when distant light would start in the water (it enters the water
    /// only through its surface).
    fn first(src: &Source, source: u32, rng: Rng, e: &Emission, scale: f32, in_water: bool) -> Option<Photon> {
        let fresh = src.power.map(|p| p * scale);
        let power = fresh.map(|p| p * e.weight);
        if power.iter().all(|&p| p <= 0.0) || (in_water && src.class != Class::Light) {
            return None;
        }
        Some(Photon { origin: e.origin, dir: e.dir, power, bounce: 0, rng, source, fresh_lum: luminance(fresh), in_water })
    }
}

/// Traces the light paths that start with `photons` until every photon escapes, is absorbed, or
/// runs out of bounces, in waves: one wave's flights are traced together (interleaved walks on
/// this thread, see [`Bvh::intersect_slot_stream`]), and their landings make the next wave. The
/// order of the records is a function of the photons alone.
fn trace_waves(scene: &Scene, importance: Option<&Importance>, sources: &[Source], mut wave: Vec<Photon>, rec: &mut Records) {
    let mut next = Vec::new();
    let mut rays = Vec::new();
    let mut hits = Vec::new();
    while !wave.is_empty() {
        rays.clear();
        // A flight that meets the water surface ends there (`land` goes on from it).
        let tmax = |p: &Photon| scene.water.and_then(|w| w.surface_hit(p.origin, p.dir, p.in_water)).unwrap_or(f32::INFINITY);
        rays.extend(wave.iter().map(|p| Ray { origin: p.origin, dir: p.dir, tmin: 0.0, tmax: tmax(p) }));
        hits.clear();
        hits.resize(wave.len(), None);
        // The hit's welded corners are a cache miss in a 6 MB table: start it at the first
        // candidate hit rather than after the walk.
        scene.bvh.intersect_slot_stream(&rays, &mut hits, |slot| prefetch(&scene.corner_weld[scene.bvh.slot_corner_ids(slot)[0] as usize]));
        rec.flights += wave.len() as u64;
        for (photon, hit) in wave.drain(..).zip(&hits) {
            land(scene, importance, &sources[photon.source as usize], photon, *hit, &mut next, rec);
        }
        std::mem::swap(&mut wave, &mut next);
    }
}

/// What happens where `photon`'s flight ends (`hit`, or nowhere): its records, and the photons
/// that go on from there into `next`. Without `importance` a photon continues by Russian
/// roulette on albedo; with it, by the weight window (split or roulette toward the target weight
/// at the hit), which changes the noise but not the expected value.
fn land(
    scene: &Scene,
    importance: Option<&Importance>,
    src: &Source,
    photon: Photon,
    hit: Option<(Hit, usize)>,
    next: &mut Vec<Photon>,
    rec: &mut Records,
) {
    let Photon { origin, dir, mut power, bounce, mut rng, source, fresh_lum, in_water } = photon;
    let direct = bounce == 0 && src.class != Class::Sky;
    let t_hit = hit.map_or(f32::INFINITY, |(h, _)| h.t);
    match scene.water {
        None if scene.record_segments => rec.segments.push(Segment { origin, dir, t_end: t_hit, power, class: direct as u8 }),
        None => {}
        Some(w) => {
            // The ray was cut at the surface (see `trace_waves`): no hit means the surface.
            let surface = w.surface_hit(origin, dir, in_water).filter(|_| hit.is_none());
            let t_end = surface.unwrap_or(t_hit);
            if in_water {
                power = w.absorb(origin, dir, t_end, power, direct as u8, scene.record_segments.then_some(&mut rec.segments));
            } else if scene.record_segments {
                rec.segments.push(Segment { origin, dir, t_end, power, class: direct as u8 });
            }
            if let Some(t) = surface {
                // Refracted, the photon is the same light; reflected, it was scattered (a bounce).
                let at = origin + dir * t;
                let (dir, in_water, reflected) = w.cross(dir, in_water, rng.next_f32());
                if reflected && bounce == scene.bounces {
                    return;
                }
                let bounce = bounce + reflected as u32;
                next.push(Photon { origin: at, dir, power, bounce, rng, source, fresh_lum, in_water });
                return;
            }
        }
    }
    let Some((h, slot)) = hit else { return };
    let tri = h.tri as usize;
    let occluder = h.tri >= scene.lit_triangles;
    if !h.front && !occluder {
        // Struck a surface from inside the rock: the source is buried, nothing gets out.
        return;
    }
    let [p0, p1, p2] = scene.bvh.slot_vertices(slot);
    let p = [Vec3A::from(p0), Vec3A::from(p1), Vec3A::from(p2)];
    let weights = [1.0 - h.u - h.v, h.u, h.v];
    let verts = scene.bvh.slot_corner_ids(slot).map(|v| scene.corner_weld[v as usize]);
    let map = match (bounce, src.class) {
        (0, Class::SunMoon) => None, // evaluated exactly per query point instead
        (0, Class::Light) => Some(1),
        _ => Some(0),
    };
    if let (Some(map), false) = (map, occluder) {
        rec.deposits.push(Deposit { verts, weights, power, map });
    }
    if bounce == scene.bounces {
        return;
    }
    let albedo = scene.albedo(tri);
    let reflected = [0, 1, 2].map(|c| power[c] * albedo[c]);
    // A sun or moon photon's first hit deposits nothing (that light is exact per query
    // point), so its flight was paid for only to start the bounce: continue it whatever
    // Russian roulette would say, at reduced power, rather than waste half of them.
    let first_celestial = bounce == 0 && src.class == Class::SunMoon;
    let children = match importance {
        None if first_celestial => {
            power = reflected;
            1
        }
        None => {
            // Russian roulette on the largest albedo channel keeps the photon's power steady.
            let survive = albedo[0].max(albedo[1]).max(albedo[2]);
            if survive <= 0.0 || rng.next_f32() >= survive {
                return;
            }
            power = reflected.map(|p| p / survive);
            1
        }
        Some(imp) => {
            let weight = luminance(reflected) / fresh_lum;
            // An occluder has no importance of its own: the photon keeps its weight there.
            let mut target = if occluder { weight } else { weights.iter().zip(verts).map(|(w, v)| w * imp.target[v as usize]).sum::<f32>() };
            if first_celestial {
                target = target.min(weight);
            }
            // Zero (black albedo) or NaN: nothing continues.
            if weight.is_nan() || weight <= 0.0 {
                return;
            }
            if weight < target {
                if rng.next_f32() * target >= weight {
                    return;
                }
                power = reflected.map(|p| p * (target / weight));
                1
            } else {
                let n = (weight / target).ceil().min(MAX_SPLIT);
                power = reflected.map(|p| p / n);
                n as u32
            }
        }
    };
    let mut normal = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
    if normal == Vec3A::ZERO {
        return;
    }
    if !h.front {
        // An occluder struck from behind reflects to the side the photon came from.
        normal = -normal;
    }
    let point = p[0] * weights[0] + p[1] * weights[1] + p[2] * weights[2];
    let origin = point + normal * scene.eps;
    let bounce = bounce + 1;
    for child in 1..children {
        let mut rng = rng.fork(child as u64);
        let dir = cosine_hemisphere(normal, rng.next_f32(), rng.next_f32());
        next.push(Photon { origin, dir, power, bounce, rng, source, fresh_lum, in_water });
    }
    let dir = cosine_hemisphere(normal, rng.next_f32(), rng.next_f32());
    next.push(Photon { origin, dir, power, bounce, rng, source, fresh_lum, in_water });
}
