//! Light tracing: photons leave the sources, bounce diffusely, and leave their power on the
//! surfaces they hit and along the free space they cross.
//!
//! Determinism: path `i` of source `s` draws from `Rng::new(seed, s, i)` only. Paths are traced
//! in fixed batches; within a batch, chunks of paths run in parallel and their records are
//! concatenated in path order, then applied to the accumulators in that order (split by
//! ownership, never by thread). The result is the same for any thread count.

use super::bvh::{Bvh, Ray};
use super::rng::{cosine_hemisphere, Rng};
use super::sources::{Class, Source};
use super::surface::{Deposit, Surface};
use super::volume::{Segment, VolumeAccumulator};
use glam::Vec3A;
use rayon::prelude::*;

/// Paths per batch: bounds the memory of the records between tracing and applying.
const BATCH: u64 = 1 << 16;
/// Paths per parallel work item.
const CHUNK: u64 = 512;

/// Everything a path needs to know about the scene.
pub(crate) struct Scene<'a> {
    pub(crate) bvh: &'a Bvh,
    pub(crate) positions: &'a [[f32; 3]],
    pub(crate) indices: &'a [u32],
    /// Welded vertex of every input vertex.
    pub(crate) weld: &'a [u32],
    /// Albedo per triangle via `materials` and `albedo_table`, or the default.
    pub(crate) materials: Option<&'a [u16]>,
    pub(crate) albedo_table: &'a [[f32; 3]],
    pub(crate) default_albedo: [f32; 3],
    pub(crate) bounces: u32,
    pub(crate) eps: f32,
    pub(crate) seed: u64,
    pub(crate) record_segments: bool,
}

impl Scene<'_> {
    fn albedo(&self, tri: usize) -> [f32; 3] {
        match self.materials {
            Some(m) => self.albedo_table.get(m[tri] as usize).copied().unwrap_or(self.default_albedo),
            None => self.default_albedo,
        }
    }
}

/// How many paths each source traces: proportional to power (luminance), with a fifth of the
/// budget shared equally so that dim lights in dark places are not starved.
pub(crate) fn allocate(sources: &[Source], total: u64) -> Vec<u64> {
    let lum = |p: &[f32; 3]| (0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]).max(1e-30) as f64;
    let sum: f64 = sources.iter().map(|s| lum(&s.power)).sum();
    let n = sources.len() as f64;
    sources
        .iter()
        .map(|s| {
            let share = 0.8 * lum(&s.power) / sum + 0.2 / n;
            ((total as f64 * share).ceil() as u64).max(1)
        })
        .collect()
}

#[derive(Default)]
struct Records {
    deposits: Vec<Deposit>,
    segments: Vec<Segment>,
}

/// Traces `counts[s]` paths for every source, adding to `power` (per welded vertex) and `volume`.
pub(crate) fn trace_all(
    scene: &Scene,
    sources: &[Source],
    counts: &[u64],
    power: &mut [[f32; 6]],
    volume: &mut VolumeAccumulator,
) {
    let total: u64 = counts.iter().sum();
    let mut first = Vec::with_capacity(counts.len() + 1);
    first.push(0u64);
    for c in counts {
        first.push(first.last().copied().unwrap_or(0) + c);
    }
    let threads = rayon::current_num_threads();
    let mut batch_start = 0;
    while batch_start < total {
        let batch_end = (batch_start + BATCH).min(total);
        let chunks: Vec<(u64, u64)> =
            (batch_start..batch_end).step_by(CHUNK as usize).map(|c| (c, (c + CHUNK).min(batch_end))).collect();
        let records: Vec<Records> = chunks
            .par_iter()
            .map(|&(a, b)| {
                let mut rec = Records::default();
                let mut s = first.partition_point(|&f| f <= a) - 1;
                for g in a..b {
                    while g >= first[s + 1] {
                        s += 1;
                    }
                    let src = &sources[s];
                    let scale = 1.0 / counts[s] as f32;
                    trace_path(scene, src, s as u64, g - first[s], scale, &mut rec);
                }
                rec
            })
            .collect();
        let deposits: Vec<Deposit> = records.iter().flat_map(|r| r.deposits.iter().copied()).collect();
        let segments: Vec<Segment> = records.into_iter().flat_map(|r| r.segments).collect();
        let per_task = power.len().div_ceil(4 * threads).max(1);
        rayon::join(
            || {
                power
                    .par_chunks_mut(per_task)
                    .enumerate()
                    .for_each(|(i, chunk)| Surface::apply(chunk, i * per_task, &deposits))
            },
            || volume.add(&segments),
        );
        batch_start = batch_end;
    }
}

/// One photon from emission until it escapes, is absorbed, or runs out of bounces.
fn trace_path(scene: &Scene, src: &Source, stream: u64, index: u64, scale: f32, rec: &mut Records) {
    let mut rng = Rng::new(scene.seed, stream, index);
    let e = src.emit(&mut rng, scene.eps);
    let mut power = src.power.map(|p| p * scale * e.weight);
    if power.iter().all(|&p| p <= 0.0) {
        return;
    }
    let (mut origin, mut dir) = (e.origin, e.dir);
    for bounce in 0..=scene.bounces {
        let hit = scene.bvh.intersect(&Ray { origin, dir, tmin: 0.0, tmax: f32::INFINITY });
        let direct = bounce == 0 && src.class != Class::Sky;
        if scene.record_segments {
            rec.segments.push(Segment {
                origin,
                dir,
                t_end: hit.map_or(f32::INFINITY, |h| h.t),
                power,
                class: direct as u8,
            });
        }
        let Some(h) = hit else { return };
        if !h.front {
            // Struck a surface from inside the rock: the source is buried, nothing gets out.
            return;
        }
        let tri = h.tri as usize;
        let corner = |k: usize| scene.indices[3 * tri + k] as usize;
        let p = [0, 1, 2].map(|k| Vec3A::from(scene.positions[corner(k)]));
        let weights = [1.0 - h.u - h.v, h.u, h.v];
        let map = match (bounce, src.class) {
            (0, Class::SunMoon) => None, // evaluated exactly per query point instead
            (0, Class::Light) => Some(1),
            _ => Some(0),
        };
        if let Some(map) = map {
            rec.deposits.push(Deposit { verts: [0, 1, 2].map(|k| scene.weld[corner(k)]), weights, power, map });
        }
        if bounce == scene.bounces {
            return;
        }
        // Russian roulette on the largest albedo channel keeps the photon's power steady.
        let albedo = scene.albedo(tri);
        let survive = albedo[0].max(albedo[1]).max(albedo[2]);
        if survive <= 0.0 || rng.next_f32() >= survive {
            return;
        }
        power = [0, 1, 2].map(|c| power[c] * albedo[c] / survive);
        let normal = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        if normal == Vec3A::ZERO {
            return;
        }
        let point = p[0] * weights[0] + p[1] * weights[1] + p[2] * weights[2];
        origin = point + normal * scene.eps;
        dir = cosine_hemisphere(normal, rng.next_f32(), rng.next_f32());
    }
}
