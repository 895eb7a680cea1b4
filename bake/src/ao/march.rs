//! The per-vertex AO kernel and the empty-space-skipping lattice march.

use super::field::OccupancyField;
use super::AoSettings;

/// `1.5 · 2^23`: adding it to an `f32` of magnitude < 2^22 rounds it to an integer (IEEE round to
/// nearest, ties to even) held in the low mantissa bits. Cheaper than `floor` (a libm call on
/// baseline x86-64) or a saturating `as` cast, and safe.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// Coordinates below this are far below the ground; clamping them keeps [`ROUND_MAGIC`] exact.
const FAR_BELOW: f32 = -1.0e6;

/// The voxel nearest to `q`: each coordinate rounded to the nearest integer, ties to even.
/// Far above the volume the result is still larger than any dimension, far below it negative.
#[inline]
pub(crate) fn nearest_voxel(q: [f32; 3]) -> [i32; 3] {
    q.map(|c| {
        let c = if c > FAR_BELOW { c } else { FAR_BELOW };
        (c + ROUND_MAGIC).to_bits().wrapping_sub(ROUND_MAGIC.to_bits()) as i32
    })
}

/// One ray on the voxel lattice: sample `k` (from 1) is voxel `origin + k·offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ray {
    pub(crate) origin: [i32; 3],
    /// One of the 26 unit lattice offsets (components in {−1, 0, 1}).
    pub(crate) offset: [i32; 3],
    /// `K`: the samples `1..=max_samples` lie within the AO radius.
    pub(crate) max_samples: u32,
}

impl Ray {
    /// The voxel of sample `k`.
    #[inline]
    pub(crate) fn voxel(&self, k: u32) -> [i32; 3] {
        let k = k as i32;
        [0, 1, 2].map(|a| self.origin[a] + k * self.offset[a])
    }
}

/// How a ray is marched: the samples `1..=last` are inside the volume, and `after` is what the
/// sample after them holds if there is one within range.
struct Plan {
    last: u32,
    after: Option<u32>,
}

/// Splits a ray into its in-volume samples and the outcome once it leaves. A straight ray meets the
/// (convex) volume in one run of samples, and the march ends at its first sample outside: solid if
/// that sample is below the ground, open otherwise.
#[inline]
fn plan(dims: [i32; 3], ray: &Ray) -> Plan {
    let max = ray.max_samples as i64;
    let outside_outcome = |k: i64| {
        let below_ground = (ray.origin[2] as i64 + k * ray.offset[2] as i64) < 0;
        (k <= max && below_ground).then_some(k as u32)
    };
    let first = ray.voxel(1);
    if (0..3).any(|a| first[a] < 0 || first[a] >= dims[a]) || max < 1 {
        return Plan { last: 0, after: if max < 1 { None } else { outside_outcome(1) } };
    }
    // Sample 1 is inside, so along each moving axis the run ends where that axis leaves.
    let last = (0..3)
        .map(|a| match ray.offset[a] {
            1 => (dims[a] - 1 - ray.origin[a]) as i64,
            -1 => ray.origin[a] as i64,
            _ => i64::MAX,
        })
        .min()
        .unwrap_or(i64::MAX);
    if last >= max {
        Plan { last: max as u32, after: None }
    } else {
        Plan { last: last as u32, after: outside_outcome(last + 1) }
    }
}

/// Rays marched together, one step of each in turn; the most one [`march_interleaved`] call takes.
pub(crate) const BATCH: usize = 26;

/// For each of up to [`BATCH`] rays, `hits[i]` = the first sample `k` in `1..=max_samples` of
/// `rays[i]` that is solid (or below the ground), or `None` if the ray first leaves the volume or
/// ends in air.
///
/// Exactly the unit-step march, skipping only samples that are provably air: from an air voxel
/// whose L∞ distance to the nearest solid (ground included) is `d`, the next `d − 1` samples are
/// lattice neighbours within L∞ distance `d − 1`, so the next one that can be solid is `k + d`.
/// In-volume samples are visited in a run fixed up front ([`plan`]); no skip can pass the first
/// outside sample if that sample is below the ground, as the ground counts in `d`.
///
/// One ray's march is a chain of dependent loads; stepping several independent rays round-robin
/// lets the CPU overlap their latencies and cache misses.
pub(crate) fn march_interleaved(field: &OccupancyField, rays: &[Ray], hits: &mut [Option<u32>]) {
    debug_assert!(rays.len() <= BATCH && hits.len() == rays.len());
    let dims = field.dims().map(|n| n as i32);
    // Per ray: next sample, its voxel and storage index, and the last in-volume sample to visit.
    let mut k = [0u32; BATCH];
    let mut voxel = [[0i32; 3]; BATCH];
    let mut index = [0usize; BATCH];
    let mut last = [0u32; BATCH];
    let mut after = [None; BATCH];
    // Unfinished rays, compacted by swap-remove (the order rays finish in does not matter).
    let mut live = [0u8; BATCH];
    let mut n_live = 0;
    for (r, ray) in rays.iter().enumerate() {
        let p = plan(dims, ray);
        if p.last == 0 {
            hits[r] = p.after;
        } else {
            (k[r], voxel[r], last[r], after[r]) = (1, ray.voxel(1), p.last, p.after);
            index[r] = field.index_inside(voxel[r]);
            live[n_live] = r as u8;
            n_live += 1;
        }
    }
    while n_live > 0 {
        let mut j = 0;
        while j < n_live {
            let r = live[j] as usize;
            let d = field.distance_at(index[r]);
            let done = if d == 0 {
                Some(Some(k[r]))
            } else {
                k[r] += d as u32;
                let o = rays[r].offset;
                let d = d as i32;
                voxel[r] = [voxel[r][0] + d * o[0], voxel[r][1] + d * o[1], voxel[r][2] + d * o[2]];
                if k[r] > last[r] {
                    Some(after[r])
                } else {
                    index[r] = field.index_inside(voxel[r]);
                    None
                }
            };
            match done {
                Some(hit) => {
                    hits[r] = hit;
                    n_live -= 1;
                    live[j] = live[n_live];
                }
                None => j += 1,
            }
        }
    }
}

/// One of the 26 directions with its per-direction constants.
struct Direction {
    offset: [i32; 3],
    unit: [f32; 3],
    /// `|offset|`: 1, √2 or √3 voxels, the spacing of the samples.
    spacing: f32,
    max_samples: u32,
}

/// Everything about the AO settings that is shared by all vertices.
pub(crate) struct Kernel {
    dirs: Vec<Direction>,
    start_offset: f32,
    radius: f32,
    power: f32,
}

impl Kernel {
    /// Precomputes the direction table. `settings` must already be validated.
    pub(crate) fn new(settings: &AoSettings) -> Self {
        let dirs = settings
            .directions
            .offsets()
            .into_iter()
            .map(|offset| {
                let spacing = ((offset[0] * offset[0] + offset[1] * offset[1] + offset[2] * offset[2]) as f32).sqrt();
                Direction {
                    offset,
                    unit: offset.map(|c| c as f32 / spacing),
                    spacing,
                    // radius ≤ 4096, so this fits; the last sample lies within the radius.
                    max_samples: (settings.radius_voxels / spacing).floor() as u32,
                }
            })
            .collect();
        Kernel { dirs, start_offset: settings.start_offset_voxels, radius: settings.radius_voxels, power: settings.power }
    }

    /// The AO of one vertex, given a marcher that fills in the first solid sample of up to
    /// [`BATCH`] rays. Generic so the tests can run the identical kernel with a brute-force marcher.
    #[inline]
    pub(crate) fn vertex_ao(&self, p: [f32; 3], n: [f32; 3], march: impl FnOnce(&[Ray], &mut [Option<u32>])) -> f32 {
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if len <= f32::MIN_POSITIVE {
            return 1.0;
        }
        let n = n.map(|c| c / len);
        let origin = nearest_voxel([0, 1, 2].map(|a| p[a] + self.start_offset * n[a]));
        let placeholder = Ray { origin, offset: [0; 3], max_samples: 0 };
        let (mut rays, mut weights, mut spacing) = ([placeholder; BATCH], [0.0f32; BATCH], [0.0f32; BATCH]);
        let mut count = 0;
        for d in &self.dirs {
            let w = n[0] * d.unit[0] + n[1] * d.unit[1] + n[2] * d.unit[2];
            if w > 0.0 {
                rays[count] = Ray { origin, offset: d.offset, max_samples: d.max_samples };
                (weights[count], spacing[count]) = (w, d.spacing);
                count += 1;
            }
        }
        let mut hits = [None; BATCH];
        march(&rays[..count], &mut hits[..count]);
        let (mut sum_w, mut sum_wv) = (0.0f32, 0.0f32);
        for i in 0..count {
            let v = match hits[i] {
                Some(k) => (k - 1) as f32 * spacing[i] / self.radius,
                None => 1.0,
            };
            sum_w += weights[i];
            sum_wv += weights[i] * v;
        }
        if sum_w <= 0.0 {
            return 1.0;
        }
        // Identical summation order makes an all-open hemisphere exactly 1; the clamp only guards
        // against the last-bit excess that rounding could otherwise produce.
        let ao = (sum_wv / sum_w).min(1.0);
        if self.power == 1.0 {
            ao
        } else {
            ao.powf(self.power)
        }
    }
}
