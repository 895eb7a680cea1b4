//! Image comparisons of `kiln diff`: tree texture mip chains (`TTEX`), impostor atlases (`TIMP`) and
//! billboard cards (`TCRD`). Each map (bark, leaf; albedo, normal, AO, depth; card colour and normal)
//! is measured by RMS and max abs difference in [0, 1] units of the stored value, and PSNR, and judged
//! against `image_max` / `image_rms`. Layout changes (counts, sizes, grids) cannot be compared texel
//! by texel and are beyond; object-space numbers (centres, radii, card extents) are distances.

use std::collections::BTreeMap;
use std::ops::Range;

use kiln_formats::sections::{Rgba8Level, TreeCard, TreeCards, TreeImpostors, TreeTextures};
use kiln_formats::{FormatError, Section};
use serde_json::{json, Value};

use super::kinds::{exceeds, Context, Judged};

/// Difference statistics of one image map, values in [0, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MapStats {
    values: u64,
    sum2: f64,
    max: f64,
}

impl MapStats {
    /// Adds channels `channels` of each `stride`-byte texel of two 8-bit images of equal size.
    pub fn add_u8(&mut self, a: &[u8], b: &[u8], stride: usize, channels: Range<usize>) {
        for (ta, tb) in a.chunks_exact(stride).zip(b.chunks_exact(stride)) {
            for c in channels.clone() {
                self.add(f64::from(ta[c].abs_diff(tb[c])) / 255.0);
            }
        }
    }

    /// Adds two 16-bit single-channel images of equal size.
    pub fn add_u16(&mut self, a: &[u16], b: &[u16]) {
        for (x, y) in a.iter().zip(b) {
            self.add(f64::from(x.abs_diff(*y)) / 65535.0);
        }
    }

    /// Adds two maps of equal length of any unit, measured in units of `peak` (a zero peak means
    /// both maps are zero). A NaN difference counts as the largest.
    pub fn add_f32(&mut self, a: &[f32], b: &[f32], peak: f64) {
        for (x, y) in a.iter().zip(b) {
            let d = (f64::from(*x) - f64::from(*y)).abs();
            self.add(if d == 0.0 {
                0.0
            } else if d.is_nan() {
                f64::INFINITY
            } else {
                d / peak
            });
        }
    }

    fn add(&mut self, d: f64) {
        self.values += 1;
        self.sum2 += d * d;
        self.max = self.max.max(d);
    }

    /// Root mean square difference.
    pub fn rms(&self) -> f64 {
        (self.sum2 / self.values.max(1) as f64).sqrt()
    }

    /// Largest absolute difference.
    pub fn max_abs(&self) -> f64 {
        self.max
    }

    /// Peak signal-to-noise ratio in dB with peak 1 ("inf" when equal).
    pub fn psnr_db(&self) -> Value {
        let mse = self.sum2 / self.values.max(1) as f64;
        if mse == 0.0 {
            json!("inf")
        } else {
            json!(-10.0 * mse.log10())
        }
    }
}

/// The worst item (species, atlas, card) of one map kind.
#[derive(Default)]
struct Worst {
    rms: f64,
    rms_item: usize,
    max: f64,
    psnr: Value,
    changed: usize,
}

/// What a comparison of image sections found, before judging.
#[derive(Default)]
struct Findings {
    maps: BTreeMap<&'static str, Worst>,
    /// Differences of layout (counts, sizes, grids): not comparable texel by texel.
    layout: Vec<String>,
    /// Largest difference of an object-space number (world units).
    distance: f64,
}

impl Findings {
    fn map(&mut self, name: &'static str, item: usize, s: &MapStats) {
        let w = self.maps.entry(name).or_default();
        if s.max > 0.0 {
            w.changed += 1;
        }
        if s.rms() > w.rms || w.psnr.is_null() {
            (w.rms, w.rms_item, w.psnr) = (s.rms(), item, s.psnr_db());
        }
        w.max = w.max.max(s.max);
    }

    fn layout(&mut self, what: String) {
        self.layout.push(what);
    }

    fn distance(&mut self, a: &[f32], b: &[f32]) {
        for (x, y) in a.iter().zip(b) {
            self.distance = self.distance.max((f64::from(*x) - f64::from(*y)).abs());
        }
    }

    fn judge(self, item: &str, counts: (usize, usize), cx: &Context) -> Judged {
        let mut details = BTreeMap::new();
        details.insert(format!("{item}s"), json!([counts.0, counts.1]));
        let mut beyond = exceeds(self.distance, cx.tol.distance);
        let mut magnitude = self.distance;
        if self.distance > 0.0 {
            details.insert("distance_max".into(), json!(self.distance));
        }
        for (name, w) in &self.maps {
            beyond |= exceeds(w.max, cx.tol.image_max) || exceeds(w.rms, cx.tol.image_rms);
            magnitude = magnitude.max(w.max);
            let worst = format!("{item} {}", w.rms_item);
            details.insert((*name).into(), json!({ "max_abs": w.max, "rms": w.rms, "psnr_db": w.psnr, "worst": worst, "changed": w.changed }));
        }
        if !self.layout.is_empty() {
            details.insert("layout_changes".into(), json!(self.layout.len()));
            details.insert("layout".into(), json!(self.layout.iter().take(20).collect::<Vec<_>>()));
            return Judged { beyond: true, magnitude: f64::INFINITY, details };
        }
        Judged { beyond, magnitude, details }
    }
}

/// Two mip chains compared as one map, or a layout change.
fn chains(f: &mut Findings, name: &'static str, item: usize, a: &[Rgba8Level], b: &[Rgba8Level]) {
    let side = |l: &[Rgba8Level]| l.iter().map(|l| (l.width, l.height)).collect::<Vec<_>>();
    if side(a) != side(b) {
        let first = |c: &[Rgba8Level]| c.first().map_or("empty".into(), |l| format!("{}×{} ({} levels)", l.width, l.height, c.len()));
        f.layout(format!("{name} {item}: {} vs {}", first(a), first(b)));
        return;
    }
    let mut s = MapStats::default();
    for (x, y) in a.iter().zip(b) {
        s.add_u8(&x.rgba, &y.rgba, 4, 0..4);
    }
    f.map(name, item, &s);
}

/// `TTEX`: bark and leaf chains per species.
pub(super) fn textures(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (TreeTextures::decode(x)?, TreeTextures::decode(y)?);
    let mut f = Findings::default();
    if a.species.len() != b.species.len() {
        f.layout(format!("{} vs {} species", a.species.len(), b.species.len()));
    }
    for (i, (sa, sb)) in a.species.iter().zip(&b.species).enumerate() {
        chains(&mut f, "bark", i, &sa.bark, &sb.bark);
        chains(&mut f, "leaf", i, &sa.leaf, &sb.leaf);
    }
    Ok(f.judge("species", (a.species.len(), b.species.len()), cx))
}

/// `TIMP`: every level of each atlas; albedo (RGBA), normal (RGB), AO (the normal map's alpha), depth.
pub(super) fn impostors(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (TreeImpostors::decode(x)?, TreeImpostors::decode(y)?);
    let mut f = Findings::default();
    if a.atlases.len() != b.atlases.len() {
        f.layout(format!("{} vs {} atlases", a.atlases.len(), b.atlases.len()));
    }
    for (i, (p, q)) in a.atlases.iter().zip(&b.atlases).enumerate() {
        let shape = |t: &kiln_formats::sections::ImpostorAtlas| (t.layout, t.grid, t.view_px, t.levels.len());
        if shape(p) != shape(q) {
            f.layout(format!("atlas {i}: {:?} vs {:?} (layout, grid, view px, levels)", shape(p), shape(q)));
            continue;
        }
        f.distance(&p.center, &q.center);
        f.distance(&[p.radius], &[q.radius]);
        let mut maps = [MapStats::default(); 4];
        for (lp, lq) in p.levels.iter().zip(&q.levels) {
            maps[0].add_u8(&lp.albedo, &lq.albedo, 4, 0..4);
            maps[1].add_u8(&lp.normal, &lq.normal, 4, 0..3);
            maps[2].add_u8(&lp.normal, &lq.normal, 4, 3..4);
            maps[3].add_u16(&lp.depth, &lq.depth);
        }
        for (name, s) in ["albedo", "normal", "ao", "depth"].into_iter().zip(&maps) {
            f.map(name, i, s);
        }
    }
    Ok(f.judge("atlas", (a.atlases.len(), b.atlases.len()), cx))
}

fn card(f: &mut Findings, names: [&'static str; 2], item: usize, a: &TreeCard, b: &TreeCard) {
    chains(f, names[0], item, std::slice::from_ref(&a.color), std::slice::from_ref(&b.color));
    chains(f, names[1], item, std::slice::from_ref(&a.normal), std::slice::from_ref(&b.normal));
}

/// `TCRD`: leaf and branch cards (colour and normal) per prototype; extents as distances.
pub(super) fn cards(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (TreeCards::decode(x)?, TreeCards::decode(y)?);
    let mut f = Findings::default();
    if a.cards.len() != b.cards.len() {
        f.layout(format!("{} vs {} prototypes", a.cards.len(), b.cards.len()));
    }
    for (i, (p, q)) in a.cards.iter().zip(&b.cards).enumerate() {
        f.distance(&p.leaf_extent, &q.leaf_extent);
        f.distance(&p.branch_extent, &q.branch_extent);
        card(&mut f, ["leaf_color", "leaf_normal"], i, &p.leaf, &q.leaf);
        card(&mut f, ["branch_color", "branch_normal"], i, &p.branch, &q.branch);
    }
    Ok(f.judge("prototype", (a.cards.len(), b.cards.len()), cx))
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
