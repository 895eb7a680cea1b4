//! `kiln diff` of water: the shared pack's wave frames and caustics (`WAVE`) and a tile's water map
//! (`WTIL`).
//!
//! `WAVE` maps are binary16 values of different units (world units, unit-vector components,
//! irradiance relative to the sky's), so each map is measured in units of its own peak: the larger
//! absolute value either side holds in that map. With that scale RMS, max |Δ| and PSNR read as they
//! do for 8-bit images and are judged against `image_max` / `image_rms`. Maps: `height` (dz),
//! `displacement` (dx, dy), `normal` (nx, ny), `jacobian`, and `caustics` per receiving plane. A
//! change of resolution, frame count or plane count is a layout change (beyond); the patch size,
//! loop period and plane depths are distances (`distance`), the sun direction, refractive index and
//! flat transmittance fields (`field_max`).
//!
//! `WTIL`: a different grid (size, spacing, origin) is beyond; the level and the ground depth are
//! distances in world units; wet/dry changes are counted and judged as a water-mask image (RMS and
//! max of the 0/1 mask); shore distances are measured in samples over 255 (an image); absorption is
//! a field.

use std::collections::BTreeMap;

use kiln_formats::sections::{WaterTile, WaterWaves};
use kiln_formats::{FormatError, Section};
use serde_json::{json, Value};

use super::images::MapStats;
use super::kinds::{exceeds, Context, Judged};

/// Statistics of one map kind over every frame, with the frame whose RMS is worst.
#[derive(Default)]
struct MapFindings {
    stats: MapStats,
    worst_rms: f64,
    worst_frame: usize,
}

impl MapFindings {
    fn add_frame(&mut self, frame: usize, a: &[f32], b: &[f32]) {
        let peak = a.iter().chain(b).fold(0f32, |m, v| m.max(v.abs()));
        let mut one = MapStats::default();
        one.add_f32(a, b, f64::from(peak));
        if one.rms() > self.worst_rms {
            (self.worst_rms, self.worst_frame) = (one.rms(), frame);
        }
        self.stats.add_f32(a, b, f64::from(peak));
    }

    fn json(&self) -> Value {
        json!({ "max_abs": self.stats.max_abs(), "rms": self.stats.rms(), "psnr_db": self.stats.psnr_db(), "worst_frame": self.worst_frame })
    }
}

fn largest_difference(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs()).fold(0.0, |m, d| if d.is_nan() || m.is_nan() { f64::NAN } else { m.max(d) })
}

/// `WAVE`: parameters, then every map of every frame.
pub(super) fn waves(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (WaterWaves::decode(x)?, WaterWaves::decode(y)?);
    let mut details = BTreeMap::new();
    let layout = |w: &WaterWaves| (w.resolution, w.frames, w.depths.len());
    details.insert("layout".into(), json!([layout(&a), layout(&b)]));
    if layout(&a) != layout(&b) {
        details.insert("note".into(), json!("resolution, frames or plane count differ: maps are not comparable texel by texel"));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    let distance = largest_difference(&[a.patch_size, a.period], &[b.patch_size, b.period]).max(largest_difference(&a.depths, &b.depths));
    let field = largest_difference(&a.sun_direction, &b.sun_direction)
        .max(largest_difference(&[a.ior, a.flat_transmittance], &[b.ior, b.flat_transmittance]));
    details.insert("parameters_distance_max".into(), json!(distance));
    details.insert("parameters_field_max".into(), json!(field));

    let mut maps: BTreeMap<String, MapFindings> = BTreeMap::new();
    for f in 0..a.frames as usize {
        let (sa, sb) = (a.surface_map(f), b.surface_map(f));
        let channel = |s: &[[f32; 4]], c: std::ops::Range<usize>| s.iter().flat_map(|t| t[c.clone()].to_vec()).collect::<Vec<f32>>();
        maps.entry("height".into()).or_default().add_frame(f, &channel(&sa, 2..3), &channel(&sb, 2..3));
        maps.entry("displacement".into()).or_default().add_frame(f, &channel(&sa, 0..2), &channel(&sb, 0..2));
        maps.entry("jacobian".into()).or_default().add_frame(f, &channel(&sa, 3..4), &channel(&sb, 3..4));
        let normals = |w: &WaterWaves| w.normal_map(f).iter().flat_map(|n| [n[0], n[1]]).collect::<Vec<f32>>();
        maps.entry("normal".into()).or_default().add_frame(f, &normals(&a), &normals(&b));
        for d in 0..a.depths.len() {
            maps.entry(format!("caustics_{d}")).or_default().add_frame(f, &a.caustic_map(f, d), &b.caustic_map(f, d));
        }
    }
    let mut beyond = exceeds(distance, cx.tol.distance) || exceeds(field, cx.tol.field_max);
    let mut magnitude = if distance.is_nan() || field.is_nan() { f64::NAN } else { distance.max(field) };
    for (name, m) in &maps {
        beyond |= exceeds(m.stats.max_abs(), cx.tol.image_max) || exceeds(m.stats.rms(), cx.tol.image_rms);
        magnitude = magnitude.max(m.stats.max_abs());
        details.insert(name.clone(), m.json());
    }
    Ok(Judged { beyond, magnitude, details })
}

/// `WTIL`: grid, level and absorption, then the water mask, depth and shore maps.
pub(super) fn tile(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (WaterTile::decode(x)?, WaterTile::decode(y)?);
    let mut details = BTreeMap::new();
    details.insert("map".into(), json!([format!("{0}×{0}", a.size), format!("{0}×{0}", b.size)]));
    if a.waves_hash != b.waves_hash {
        details.insert("waves_pack".into(), json!([format!("{:016x}", a.waves_hash), format!("{:016x}", b.waves_hash)]));
    }
    if a.size != b.size || a.spacing != b.spacing || a.origin != b.origin {
        details.insert("note".into(), json!("the sample grids differ: maps are not comparable sample by sample"));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    let (mut mask, mut shore) = (MapStats::default(), MapStats::default());
    let wet = |t: &WaterTile| t.depth.iter().map(|&d| f32::from(u8::from(d > 0))).collect::<Vec<f32>>();
    mask.add_f32(&wet(&a), &wet(&b), 1.0);
    let shore_of = |t: &WaterTile| t.shore.iter().map(|&s| f32::from(s)).collect::<Vec<f32>>();
    shore.add_f32(&shore_of(&a), &shore_of(&b), 255.0);
    let flips = a.depth.iter().zip(&b.depth).filter(|(p, q)| (**p > 0) != (**q > 0)).count();
    // Ground depth where both sides have water; a sample wet on one side only is the mask's change.
    let depth = a
        .depth
        .iter()
        .zip(&b.depth)
        .filter(|(p, q)| **p > 0 && **q > 0)
        .map(|(p, q)| (f64::from(*p) * f64::from(a.depth_step) - f64::from(*q) * f64::from(b.depth_step)).abs())
        .fold(0.0, f64::max);
    let level = (f64::from(a.level) - f64::from(b.level)).abs();
    let absorption = largest_difference(&a.absorption, &b.absorption);
    details.insert("wet_samples".into(), json!([a.depth.iter().filter(|&&d| d > 0).count(), b.depth.iter().filter(|&&d| d > 0).count()]));
    details.insert("mask_changes".into(), json!(flips));
    details.insert("mask".into(), json!({ "max_abs": mask.max_abs(), "rms": mask.rms() }));
    details.insert("shore".into(), json!({ "max_abs": shore.max_abs(), "rms": shore.rms(), "psnr_db": shore.psnr_db() }));
    details.insert("depth_max".into(), json!(depth));
    details.insert("level".into(), json!(level));
    details.insert("absorption_max".into(), json!(absorption));
    let distance = depth.max(level);
    let beyond = exceeds(distance, cx.tol.distance)
        || exceeds(absorption, cx.tol.field_max)
        || exceeds(mask.max_abs(), cx.tol.image_max)
        || exceeds(mask.rms(), cx.tol.image_rms)
        || exceeds(shore.max_abs(), cx.tol.image_max)
        || exceeds(shore.rms(), cx.tol.image_rms);
    let magnitude = [distance, absorption, mask.max_abs(), shore.max_abs()].into_iter().fold(0.0, |m, v| if v.is_nan() { v } else { m.max(v) });
    Ok(Judged { beyond, magnitude, details })
}

#[cfg(test)]
#[path = "water_tests.rs"]
mod tests;
