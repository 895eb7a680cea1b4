//! Deterministic blue-noise placement of instances (trees now, rocks and grass later) on the ground
//! open to the sky, as a pure function of the density volume, the rules and a seed.
//!
//! Per rule, in rule order ([`scatter`]):
//! 1. **Reserve** a near-jammed Poisson-disk set of the rule's spacing over the whole world
//!    rectangle ([`poisson::jammed`]), keeping the spacing from every instance accepted by earlier
//!    rules. It depends on no tiling: cells and draws are keyed in world coordinates.
//! 2. **Thin** it ([`poisson::thin`]): each reserved point is kept with probability
//!    `min(1, density · image(x, y) / (JAMMED_DENSITY / r²))`, so the count is `density × area`
//!    wherever that is below the packing limit (above it, the jammed set is all there is).
//!    Thinning a fixed set (rather than rejecting candidates before the spacing test) makes the
//!    count linear in the density, independent of the spacing; systematic sampling per block of
//!    cells makes it exact to one instance per block instead of a binomial spread.
//! 3. **Ground**: a kept point becomes an instance only where the ground open to the sky
//!    ([`ground::Ground::surface`]) exists, its height is within the band, its slope within the
//!    limit and the trunk's ring is supported ([`ground::Ground::supported`] with
//!    [`support_tolerance`]). Its position is on that surface (the exact root of the interpolated
//!    density), so never in a cave and never on ground under an overhang.
//!
//! Yaw, scale, tint and key come from streams keyed by the candidate (rule, attempt, cell), one
//! stream per decision. Everything runs in a fixed order on one thread: the output is
//! byte-identical on any machine and thread count. Transcendentals use `libm`.

pub mod ground;
pub mod poisson;

#[cfg(test)]
mod tests;

use crate::density::DensityVolume;
use crate::rng::Rng;
use ground::Ground;

/// A grey density multiplier over the world rectangle: texel `(i, j)` (row `j`, X fastest) has
/// its centre at `((i + 0.5) / width · W, (j + 0.5) / height · H)`, so row 0 is at the world's
/// low Y. Sampled bilinearly, clamped at the edges; 255 = 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DensityImage {
    /// Texels along X.
    pub width: u32,
    /// Texels along Y.
    pub height: u32,
    /// `width × height` grey values, X fastest.
    pub data: Vec<u8>,
}

impl DensityImage {
    /// A `width × height` image whose texel is `value(u, v)` (in [0, 1]) at its centre, `(u, v)`
    /// normalised as in [`DensityImage::sample`]: how a world file's density image is resampled.
    pub fn from_texel_centres(width: u32, height: u32, value: impl Fn(f64, f64) -> f64) -> DensityImage {
        let data = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .map(|(x, y)| (value((x as f64 + 0.5) / width as f64, (y as f64 + 0.5) / height as f64) * 255.0).round() as u8)
            .collect();
        DensityImage { width, height, data }
    }

    /// The multiplier in [0, 1] at normalised world coordinates `(u, v)` (0 to 1 across the world).
    pub fn sample(&self, u: f32, v: f32) -> f32 {
        let (w, h) = (self.width as usize, self.height as usize);
        let axis = |t: f32, n: usize| {
            let x = (t * n as f32 - 0.5).clamp(0.0, (n - 1) as f32);
            let i = (x as usize).min(n.saturating_sub(2));
            (i, (i + 1).min(n - 1), x - i as f32)
        };
        let (x0, x1, fx) = axis(u, w);
        let (y0, y1, fy) = axis(v, h);
        let t = |x: usize, y: usize| f32::from(self.data[x + w * y]);
        let a = t(x0, y0) + (t(x1, y0) - t(x0, y0)) * fx;
        let b = t(x0, y1) + (t(x1, y1) - t(x0, y1)) * fx;
        (a + (b - a) * fy) / 255.0
    }
}

/// How one kind of instance is placed.
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterRule {
    /// Least distance (world units, horizontal) between this rule's instances, and between them and
    /// every instance of an earlier rule.
    pub min_spacing: f32,
    /// Instances per square world unit on open, flat, supported ground (before the image).
    pub density: f32,
    /// Steepest ground accepted: degrees between the surface normal and +Z.
    pub max_slope_deg: f32,
    /// Accepted ground heights `[z_lo, z_hi]` (world units, inclusive).
    pub height_band: [f32; 2],
    /// Optional multiplier of `density` over the world.
    pub density_image: Option<DensityImage>,
    /// Uniform scale range `[lo, hi]` per instance.
    pub scale: [f32; 2],
    /// Tint spread: each channel's multiplier is uniform in `[1 - v, 1 + v]`.
    pub tint_variation: f32,
    /// Trunk radius whose ring must be supported (0: no check), see [`ground::Ground::supported`].
    pub support_radius: f32,
}

/// One placed instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Index of its rule in the slice given to [`scatter`].
    pub rule: u16,
    /// The trunk base, on the surface (world units).
    pub position: [f32; 3],
    /// Unit surface normal there.
    pub normal: [f32; 3],
    /// Rotation about +Z, radians in `[0, 2π)`.
    pub yaw: f32,
    /// Uniform scale.
    pub scale: f32,
    /// Colour multiplier per channel, around 1.
    pub tint: [f32; 3],
    /// A stable hash of the instance (its seed, rule, attempt and cell), for choosing a prototype.
    pub key: u64,
}

/// Why placement refused its input.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ScatterError {
    /// The volume has fewer than 2 samples along an axis, a data length that does not match its
    /// dims, or the voxel size is not positive and finite.
    #[error("scatter: the density volume {dims:?} at voxel size {voxel_size} has no cells to place on")]
    Volume {
        /// The volume's dims.
        dims: [usize; 3],
        /// The voxel size given.
        voxel_size: f32,
    },
    /// A rule's field is out of range.
    #[error("scatter rule {rule}: {reason}")]
    Rule {
        /// Index of the rule.
        rule: usize,
        /// What is wrong.
        reason: String,
    },
    /// More rules than a placement's `u16` rule index holds.
    #[error("scatter: {0} rules, at most 65536")]
    TooManyRules(usize),
}

/// Ground-height tolerance of the support ring for `rule`: half a voxel (the surface's own
/// discretisation) plus the rise of the steepest accepted slope over the ring radius (slopes
/// capped at 60° so a permissive limit never accepts a cliff).
pub fn support_tolerance(rule: &ScatterRule, voxel_size: f32) -> f32 {
    let slope = f64::from(rule.max_slope_deg.clamp(0.0, 60.0)).to_radians();
    0.5 * voxel_size + rule.support_radius * libm::tan(slope) as f32
}

fn check_rule(i: usize, r: &ScatterRule, extent: [f32; 2]) -> Result<(), ScatterError> {
    let bad = |reason: String| Err(ScatterError::Rule { rule: i, reason });
    let finite_pos = |v: f32| v.is_finite() && v > 0.0;
    if !finite_pos(r.min_spacing) {
        return bad(format!("min_spacing {} must be positive", r.min_spacing));
    }
    let (_, nx, ny) = poisson::grid(extent, r.min_spacing);
    if (nx as u64) * (ny as u64) > poisson::MAX_CELLS {
        return bad(format!("min_spacing {} needs {nx} x {ny} cells over the world, at most {}", r.min_spacing, poisson::MAX_CELLS));
    }
    if !(r.density.is_finite() && r.density >= 0.0) {
        return bad(format!("density {} must be finite and >= 0", r.density));
    }
    if !(0.0..=90.0).contains(&r.max_slope_deg) {
        return bad(format!("max_slope_deg {} must be in [0, 90]", r.max_slope_deg));
    }
    let [lo, hi] = r.height_band;
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return bad(format!("height_band [{lo}, {hi}] must be ordered"));
    }
    if !(finite_pos(r.scale[0]) && r.scale[1].is_finite() && r.scale[0] <= r.scale[1]) {
        return bad(format!("scale {:?} must be an ordered positive range", r.scale));
    }
    if !(0.0..1.0).contains(&r.tint_variation) {
        return bad(format!("tint_variation {} must be in [0, 1)", r.tint_variation));
    }
    if !(r.support_radius.is_finite() && r.support_radius >= 0.0) {
        return bad(format!("support_radius {} must be finite and >= 0", r.support_radius));
    }
    if let Some(img) = &r.density_image {
        if img.width == 0 || img.height == 0 || img.data.len() as u64 != u64::from(img.width) * u64::from(img.height) {
            return bad(format!("density image {} x {} has {} texels", img.width, img.height, img.data.len()));
        }
    }
    Ok(())
}

/// What happened to one rule's reserved points, for tuning rules and spotting surprises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleStats {
    /// Points of the near-jammed Poisson-disk set.
    pub reserved: usize,
    /// Dropped by density thinning (density × image below the packing limit).
    pub thinned: usize,
    /// No ground open to the sky (solid up to the top, outside, or a vanishing gradient).
    pub no_ground: usize,
    /// Ground outside the height band.
    pub band: usize,
    /// Ground steeper than the limit.
    pub slope: usize,
    /// The trunk's ring is not supported (edges, lips, beside overhangs).
    pub support: usize,
    /// Placed.
    pub placed: usize,
}

/// Places instances of every rule on `volume` (samples every `voxel_size` world units).
///
/// The result is sorted by position `y`, then `x` (`f32::total_cmp`), then rule: a stable order
/// that reads like the world row by row. It depends on the volume, rules and seed only (no
/// tiling, no thread count); assign instances to tiles with [`owner`].
pub fn scatter(volume: &DensityVolume, voxel_size: f32, rules: &[ScatterRule], seed: u64) -> Result<Vec<Placement>, ScatterError> {
    scatter_with_stats(volume, voxel_size, rules, seed).map(|(p, _)| p)
}

/// [`scatter`], also saying per rule where its reserved points went.
pub fn scatter_with_stats(
    volume: &DensityVolume,
    voxel_size: f32,
    rules: &[ScatterRule],
    seed: u64,
) -> Result<(Vec<Placement>, Vec<RuleStats>), ScatterError> {
    let ground = Ground::new(volume, voxel_size).ok_or(ScatterError::Volume { dims: volume.dims, voxel_size })?;
    if rules.len() > usize::from(u16::MAX) + 1 {
        return Err(ScatterError::TooManyRules(rules.len()));
    }
    let extent = ground.extent();
    rules.iter().enumerate().try_for_each(|(i, r)| check_rule(i, r, extent))?;
    let mut out: Vec<Placement> = Vec::new();
    let mut stats = Vec::with_capacity(rules.len());
    let mut taken: Vec<[f32; 2]> = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let id = i as u16;
        let reserved = poisson::jammed(extent, rule.min_spacing, seed, id, &taken);
        let jammed = poisson::JAMMED_DENSITY / (rule.min_spacing * rule.min_spacing);
        let keep = |c: &poisson::Candidate| {
            let [x, y] = c.position;
            let image = rule.density_image.as_ref().map_or(1.0, |img| img.sample(x / extent[0], y / extent[1]));
            rule.density * image / jammed
        };
        let kept = poisson::thin(&reserved, extent, rule.min_spacing, seed, id, keep);
        let mut st = RuleStats { reserved: reserved.len(), thinned: reserved.len() - kept.len(), ..RuleStats::default() };
        let cos_limit = libm::cos(f64::from(rule.max_slope_deg).to_radians()) as f32;
        let tolerance = support_tolerance(rule, voxel_size);
        for c in kept {
            let [x, y] = c.position;
            let counter = match ground.surface(x, y) {
                None => &mut st.no_ground,
                Some(hit) if hit.z < rule.height_band[0] || hit.z > rule.height_band[1] => &mut st.band,
                Some(hit) if hit.normal[2] < cos_limit => &mut st.slope,
                Some(hit) if !ground.supported(x, y, hit.z, rule.support_radius, tolerance) => &mut st.support,
                Some(hit) => {
                    out.push(instance(seed, id, rule, c.index, [x, y, hit.z], hit.normal));
                    taken.push(c.position);
                    &mut st.placed
                }
            };
            *counter += 1;
        }
        stats.push(st);
    }
    out.sort_by(|a, b| a.position[1].total_cmp(&b.position[1]).then(a.position[0].total_cmp(&b.position[0])).then(a.rule.cmp(&b.rule)));
    Ok((out, stats))
}

/// The per-instance draws, one keyed stream per decision.
fn instance(seed: u64, rule_id: u16, rule: &ScatterRule, index: u64, position: [f32; 3], normal: [f32; 3]) -> Placement {
    let yaw = (Rng::keyed(seed, "scatter.yaw", index).unit() * std::f64::consts::TAU) as f32;
    // Rounding to f32 can reach 2π itself, the same angle as 0.
    let yaw = if yaw >= std::f32::consts::TAU { 0.0 } else { yaw };
    let scale = Rng::keyed(seed, "scatter.scale", index).range(f64::from(rule.scale[0]), f64::from(rule.scale[1])) as f32;
    let mut tint_rng = Rng::keyed(seed, "scatter.tint", index);
    let v = f64::from(rule.tint_variation);
    let tint = [0; 3].map(|_| tint_rng.range(1.0 - v, 1.0 + v) as f32);
    let key = Rng::keyed(seed, "scatter.key", index).next_u64();
    Placement { rule: rule_id, position, normal, yaw, scale, tint, key }
}

/// The level-0 tile `(x, y)` whose half-open footprint `[x·s, (x+1)·s) × [y·s, (y+1)·s)` (with the
/// products computed in `f32`, as a tile's bounds are) contains `position`; `s` is the tile's world
/// size, positive. Exactly one tile owns any finite position.
pub fn owner(position: [f32; 3], tile_world_size: f32) -> [i32; 2] {
    let s = tile_world_size;
    let axis = |w: f32| {
        let mut t = (w / s).floor() as i32;
        // The quotient can round across a boundary; settle against the footprint's own products.
        while t > i32::MIN && w < t as f32 * s {
            t -= 1;
        }
        while t < i32::MAX && w >= (t + 1) as f32 * s {
            t += 1;
        }
        t
    };
    [axis(position[0]), axis(position[1])]
}
