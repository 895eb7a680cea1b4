//! `[grass]`: how dense the blades grow, what they look like, where they stand and how many unique
//! patches and levels of detail the bake makes. Absent = no grass. Every key is documented in
//! `worlds/README.md`.

use serde::{Deserialize, Serialize};

use super::validate::SpecIssue;

/// Fewest levels of detail per patch (the issue asks for at least 6).
pub const MIN_GRASS_LEVELS: u32 = 6;
/// Most levels of detail per patch.
pub const MAX_GRASS_LEVELS: u32 = 12;
/// Most unique patches.
pub const MAX_GRASS_PATCHES: u32 = 64;
/// Most level-0 blades in one patch (`density / cos(max_slope) · patch_size²`): a patch is grown in
/// memory whole, and each blade is 60 bytes per level.
pub const MAX_PATCH_BLADES: f64 = 1_000_000.0;

/// `[grass]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrassSpec {
    /// Blades per unit² of ground surface (before AO pruning and the density image).
    pub density: f64,
    /// Side of a unique patch in world units, rounded so a whole number of patches spans a level-0 tile.
    pub patch_size: f64,
    /// Unique patches grown; instances pick among them.
    pub patches: u32,
    /// Levels of detail per patch, level 0 included.
    pub levels: u32,
    /// Mean blade length, world units.
    pub blade_length: f64,
    /// Mean blade base width, world units.
    pub blade_width: f64,
    /// Length and width each vary by `× U(1 − v, 1 + v)`.
    pub variation: f64,
    /// How far blades lean from upright (direction = normalize(up + lean · random xy)).
    pub lean: f64,
    /// Mean tip droop as a fraction of the length.
    pub bend: f64,
    /// Linear RGB base colour.
    pub color: [f64; 3],
    /// Per-blade colour variation.
    pub color_variation: f64,
    /// Steepest ground (degrees from level) that grows grass.
    pub max_slope: f64,
    /// Ground heights `[min, max]` (world units) where grass grows.
    pub height_band: [f64; 2],
    /// Instance height-scale range `[min, max]` (multiplies blade length), picked by the ground.
    pub height: [f64; 2],
    /// Whether blades are pruned where the baked AO is low (kept with probability clamp(5·(AO − 0.8), 0, 1)).
    pub ao_prune: bool,
    /// Flowers per unit² of patch.
    pub flowers: f64,
    /// Optional greyscale PNG over the world's XY extent, mapped like `floor.file`, that scales the density (white = 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density_image: Option<String>,
}

impl Default for GrassSpec {
    fn default() -> Self {
        GrassSpec {
            density: 2000.0,
            patch_size: 1.0,
            patches: 24,
            levels: 6,
            blade_length: 0.04,
            blade_width: 0.003,
            variation: 0.3,
            lean: 0.3,
            bend: 0.25,
            color: [0.25, 0.6, 0.08],
            color_variation: 0.15,
            max_slope: 40.0,
            height_band: [-1e9, 1e9],
            height: [0.8, 1.2],
            ao_prune: true,
            flowers: 0.0,
            density_image: None,
        }
    }
}

fn issue(key: &str, message: String) -> Result<(), SpecIssue> {
    Err(SpecIssue { key: format!("grass.{key}"), message })
}

fn range(key: &str, v: f64, lo: f64, hi: f64) -> Result<(), SpecIssue> {
    if v.is_finite() && v >= lo && v <= hi {
        return Ok(());
    }
    issue(key, format!("{v} is outside {lo}..={hi}"))
}

/// `v` finite, above `lo` (exclusive) and at most `hi`.
fn positive(key: &str, v: f64, lo: f64, hi: f64) -> Result<(), SpecIssue> {
    if v.is_finite() && v > lo && v <= hi {
        return Ok(());
    }
    issue(key, format!("{v} is outside ({lo}, {hi}]"))
}

fn interval(key: &str, v: [f64; 2], lo: f64, hi: f64) -> Result<(), SpecIssue> {
    range(key, v[0], lo, hi)?;
    range(key, v[1], lo, hi)?;
    if v[0] > v[1] {
        return issue(key, format!("[{}, {}]: the minimum is above the maximum", v[0], v[1]));
    }
    Ok(())
}

impl GrassSpec {
    /// Every value's range; `tile_world_size` is a level-0 tile's side in world units (the patch
    /// size is rounded to a whole fraction of it).
    pub fn validate(&self, tile_world_size: f64) -> Result<(), SpecIssue> {
        positive("density", self.density, 0.0, 1e5)?;
        positive("patch_size", self.patch_size, 0.0, 100.0)?;
        if !(1..=MAX_GRASS_PATCHES).contains(&self.patches) {
            return issue("patches", format!("{} is outside 1..={MAX_GRASS_PATCHES}", self.patches));
        }
        if !(MIN_GRASS_LEVELS..=MAX_GRASS_LEVELS).contains(&self.levels) {
            return issue("levels", format!("{} is outside {MIN_GRASS_LEVELS}..={MAX_GRASS_LEVELS}", self.levels));
        }
        positive("blade_length", self.blade_length, 0.0, 10.0)?;
        positive("blade_width", self.blade_width, 0.0, 1.0)?;
        range("variation", self.variation, 0.0, 0.9)?;
        range("lean", self.lean, 0.0, 10.0)?;
        range("bend", self.bend, 0.0, 0.9)?;
        for c in self.color {
            if !(c.is_finite() && (0.0..=1.0).contains(&c)) {
                return issue("color", format!("{:?}: each channel must be in 0..=1", self.color));
            }
        }
        range("color_variation", self.color_variation, 0.0, 0.9)?;
        range("max_slope", self.max_slope, 0.0, 85.0)?;
        interval("height_band", self.height_band, -1e9, 1e9)?;
        interval("height", self.height, 0.05, 20.0)?;
        range("flowers", self.flowers, 0.0, 1e4)?;
        let side = self.patch_side(tile_world_size);
        let blades = self.patch_density() * side * side;
        if blades.is_nan() || blades > MAX_PATCH_BLADES {
            return issue(
                "density",
                format!(
                    "{blades:.0} blades per patch (density / cos(max_slope) · patch side {side}²), at most {MAX_PATCH_BLADES:.0}: \
                     lower the density or the patch size"
                ),
            );
        }
        if self.flowers * side * side > 1e5 {
            return issue("flowers", format!("{:.0} flowers per patch, at most 100000", self.flowers * side * side));
        }
        Ok(())
    }

    /// Patches per level-0 tile side: `round(tile / patch_size)`, at least 1.
    pub fn patches_per_tile(&self, tile_world_size: f64) -> u32 {
        (tile_world_size / self.patch_size).round().clamp(1.0, 65536.0) as u32
    }

    /// The patch side in effect: the tile's side over [`GrassSpec::patches_per_tile`].
    pub fn patch_side(&self, tile_world_size: f64) -> f64 {
        tile_world_size / f64::from(self.patches_per_tile(tile_world_size))
    }

    /// Blades per unit² of horizontal area the patches are grown at: `density / cos(max_slope)`,
    /// so that thinning by `cos(max_slope) / n_z` leaves `density` per unit of surface on any slope
    /// up to the limit.
    pub fn patch_density(&self) -> f64 {
        self.density / libm::cos(self.max_slope.to_radians())
    }
}
