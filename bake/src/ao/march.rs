//! The per-vertex AO kernel and the empty-space-skipping ray march.

use super::field::{Cell, OccupancyField};
use super::AoSettings;

/// Shrink of the skip cube on every side, in voxels. Sample positions are computed in `f32` from
/// coordinates below [`MAX_DIM`](super::MAX_DIM) + the radius (< 2^13), so each is off by well under
/// 1/256 voxel; this margin keeps every skipped sample strictly inside the proven-air cube.
const SKIP_MARGIN: f32 = 1.0 / 32.0;

/// `1.5 · 2^23`: adding it to an `f32` of magnitude < 2^22 rounds it to an integer (IEEE round to
/// nearest, ties to even) held in the low mantissa bits. Cheaper than `floor` (a libm call on
/// baseline x86-64) or a saturating `as` cast, and safe.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// Samples below this coordinate are far below the ground; clamping them keeps [`ROUND_MAGIC`] exact.
const FAR_BELOW: f32 = -1.0e6;

/// `x` rounded to the nearest integer (ties to even), as an `i32` and as an `f32`; for `x ≥ −1e6`.
/// Above 2^22 the integer is still monotonic and larger than any volume dimension.
#[inline(always)]
fn round_to_int(x: f32) -> (i32, f32) {
    let shifted = x + ROUND_MAGIC;
    (shifted.to_bits().wrapping_sub(ROUND_MAGIC.to_bits()) as i32, shifted - ROUND_MAGIC)
}

/// `min` without NaN handling (none of our values is NaN): a single `minss`.
#[inline(always)]
fn fmin(a: f32, b: f32) -> f32 {
    if b < a {
        b
    } else {
        a
    }
}

/// `max` without NaN handling: a single `maxss`.
#[inline(always)]
fn fmax(a: f32, b: f32) -> f32 {
    if b > a {
        b
    } else {
        a
    }
}

/// One ray: start, unit direction and the per-axis constants of the skip.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ray {
    pub(crate) start: [f32; 3],
    dir: [f32; 3],
    step: f32,
    /// `1 / (dir[a] · step)`: converts a distance along axis `a` into a number of samples
    /// (0 on axes the ray does not move along).
    inv_axis_step: [f32; 3],
    /// 0 on axes the ray moves along, +∞ on the others so they never limit a skip.
    axis_bias: [f32; 3],
    /// +1 if the ray moves towards +axis (it leaves a cube through its upper face), else −1.
    sign: [f32; 3],
}

impl Ray {
    /// Sample `k` of the ray. Both marchers use exactly this expression, so they visit
    /// bit-identical points.
    #[cfg(test)]
    pub(crate) fn sample(&self, k: u32) -> [f32; 3] {
        self.sample_at(k as f32)
    }

    /// [`sample`](Self::sample) with `k` already as an `f32` (exact below 2^24).
    #[inline(always)]
    fn sample_at(&self, k: f32) -> [f32; 3] {
        let t = k * self.step;
        [self.start[0] + t * self.dir[0], self.start[1] + t * self.dir[1], self.start[2] + t * self.dir[2]]
    }
}

/// The voxel a sample point falls in: the nearest one, per axis `q` rounded to the nearest integer
/// with ties to even. Also returns the voxel coordinates as `f32`.
#[inline(always)]
pub(crate) fn nearest_voxel(q: [f32; 3]) -> ([i32; 3], [f32; 3]) {
    let r = q.map(|c| round_to_int(fmax(c, FAR_BELOW)));
    (r.map(|(i, _)| i), r.map(|(_, f)| f))
}

/// Result of evaluating one sample of a ray.
enum Step {
    /// The sample is solid.
    Hit,
    /// The sample is outside the volume (and not below the ground): the ray escaped.
    Escaped,
    /// The sample is air; the next sample that can possibly be solid is this one.
    Next(f32),
}

/// Evaluates sample `k` of `ray` and, if it is air, skips every following sample that lies
/// strictly inside the cube of proven air around it.
#[inline(always)]
fn step(field: &OccupancyField, hi: [f32; 3], ray: &Ray, k: f32) -> Step {
    let q = ray.sample_at(k);
    let (v, vf) = nearest_voxel(q);
    let dist = match field.cell(v) {
        Cell::Solid => return Step::Hit,
        Cell::Outside => return Step::Escaped,
        Cell::Air(d) => d as f32,
    };
    // Voxels within L∞ distance dist−1 of v are air, so points in the cube v ± (dist − ½),
    // clipped to the volume, all sample air. Find where the ray leaves it, in samples. Branch-free,
    // because interleaved rays go in different directions and per-axis branches would mispredict;
    // all values are small integers or their halves, so the float arithmetic is exact up to the
    // final multiply.
    let mut exit = f32::INFINITY;
    for a in 0..3 {
        let face = fmin(fmax(vf[a] + ray.sign[a] * dist, -1.0), hi[a]) - ray.sign[a] * (0.5 + SKIP_MARGIN);
        exit = fmin(exit, (face - q[a]) * ray.inv_axis_step[a] + ray.axis_bias[a]);
    }
    // Samples k+1 ..= k+floor(exit) are inside the cube. `round(exit − ½)` is floor(exit), or one
    // less when exit is an integer, which only skips less. The clamp keeps it exact (the cube is at
    // most 2·255 voxels, i.e. ≤ 64·510 samples, long).
    let skip = round_to_int(fmin(fmax(exit, 0.0), 65536.0) - 0.5).1;
    Step::Next(k + skip + 1.0)
}

/// [`march_interleaved`] for a single ray.
#[cfg(test)]
pub(crate) fn march_skipping(field: &OccupancyField, ray: &Ray, max_samples: u32) -> Option<u32> {
    let mut hit = [None];
    march_interleaved(field, std::slice::from_ref(ray), max_samples, &mut hit);
    hit[0]
}

/// Rays marched together, one step of each in turn, per [`march_interleaved`] call at most.
pub(crate) const BATCH: usize = 32;

/// For each of up to [`BATCH`] rays, `hits[i]` = the index of the first solid sample along
/// `rays[i]` among samples `1..=max_samples`, or `None` if the ray escapes the volume or ends in
/// air. Equal to the unit-step march by construction: it only skips samples that lie strictly
/// inside a cube of proven air.
///
/// One ray's march is a chain of dependent latencies (sample → voxel → load → skip → sample);
/// stepping several independent rays round-robin lets the CPU overlap their chains and cache misses.
pub(crate) fn march_interleaved(field: &OccupancyField, rays: &[Ray], max_samples: u32, hits: &mut [Option<u32>]) {
    debug_assert!(rays.len() <= BATCH && hits.len() == rays.len());
    let hi = field.dims().map(|n| n as f32);
    // Sample indices are kept as f32 (exact: max_samples ≤ 2^18) to stay in float registers.
    let max = max_samples as f32;
    let mut next = [1.0f32; BATCH];
    // Unfinished rays, compacted by swap-remove (the order rays finish in does not matter).
    let mut live = [0u8; BATCH];
    let mut n_live = rays.len();
    for (i, l) in live.iter_mut().enumerate().take(n_live) {
        *l = i as u8;
    }
    while n_live > 0 {
        let mut j = 0;
        while j < n_live {
            let r = live[j] as usize;
            let k = next[r];
            let done = if k > max {
                Some(None)
            } else {
                match step(field, hi, &rays[r], k) {
                    Step::Hit => Some(Some(k as u32)),
                    Step::Escaped => Some(None),
                    Step::Next(k) => {
                        next[r] = k;
                        None
                    }
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

/// Everything about the AO settings that is shared by all vertices.
pub(crate) struct Kernel {
    rays: Vec<DirRay>,
    offset: f32,
    radius: f32,
    step: f32,
    power: f32,
    pub(crate) max_samples: u32,
}

/// One direction with its precomputed skip constants.
struct DirRay {
    dir: [f32; 3],
    inv_axis_step: [f32; 3],
    axis_bias: [f32; 3],
    sign: [f32; 3],
}

impl Kernel {
    /// Precomputes the direction table. `settings` must already be validated.
    pub(crate) fn new(settings: &AoSettings) -> Self {
        let step = settings.step_voxels;
        let rays = settings
            .directions
            .unit_vectors()
            .into_iter()
            .map(|dir| {
                let inv_axis_step = dir.map(|c| if c != 0.0 { 1.0 / (c * step) } else { 0.0 });
                let axis_bias = dir.map(|c| if c != 0.0 { 0.0 } else { f32::INFINITY });
                DirRay { dir, inv_axis_step, axis_bias, sign: dir.map(|c| if c > 0.0 { 1.0 } else { -1.0 }) }
            })
            .collect();
        Kernel {
            rays,
            offset: settings.start_offset_voxels,
            radius: settings.radius_voxels,
            step,
            power: settings.power,
            // radius ≤ 4096 and step ≥ 1/64, so this fits comfortably.
            max_samples: (settings.radius_voxels / step).floor() as u32,
        }
    }

    /// The AO of one vertex, given a marcher that fills in the first solid sample of up to
    /// [`BATCH`] rays. Generic so the tests can run the identical kernel with a brute-force marcher.
    #[inline]
    pub(crate) fn vertex_ao(
        &self,
        p: [f32; 3],
        n: [f32; 3],
        mut march: impl FnMut(&[Ray], &mut [Option<u32>]),
    ) -> f32 {
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if len <= f32::MIN_POSITIVE {
            return 1.0;
        }
        let n = n.map(|c| c / len);
        let start = [p[0] + self.offset * n[0], p[1] + self.offset * n[1], p[2] + self.offset * n[2]];
        let (mut sum_w, mut sum_wv) = (0.0f32, 0.0f32);
        let placeholder = Ray { start, dir: [0.0; 3], step: 0.0, inv_axis_step: [0.0; 3], axis_bias: [0.0; 3], sign: [1.0; 3] };
        let mut rays = [placeholder; BATCH];
        let mut weights = [0.0f32; BATCH];
        let mut hits = [None; BATCH];
        let mut dirs = self.rays.iter().peekable();
        while dirs.peek().is_some() {
            // Gather the next batch of rays in the hemisphere, keeping direction order.
            let mut count = 0;
            for r in dirs.by_ref() {
                let w = n[0] * r.dir[0] + n[1] * r.dir[1] + n[2] * r.dir[2];
                if w > 0.0 {
                    rays[count] = Ray {
                        start,
                        dir: r.dir,
                        step: self.step,
                        inv_axis_step: r.inv_axis_step,
                        axis_bias: r.axis_bias,
                        sign: r.sign,
                    };
                    weights[count] = w;
                    count += 1;
                    if count == BATCH {
                        break;
                    }
                }
            }
            march(&rays[..count], &mut hits[..count]);
            for (&w, hit) in weights[..count].iter().zip(&hits[..count]) {
                let v = match *hit {
                    Some(k) => (k - 1) as f32 * self.step / self.radius,
                    None => 1.0,
                };
                sum_w += w;
                sum_wv += w * v;
            }
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
