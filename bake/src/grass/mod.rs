//! Grass patches (issue #18): unique square patches of blades grown from a spec, each with a chain
//! of coarser levels that merge blades in pairs while keeping the total blade area exact, flowers,
//! and the curved tapered strip a blade is drawn as.
//!
//! Plain types only (nothing of packs, the engine or the world file): `pipeline/grass.rs` fills a
//! [`PatchSpec`] from `[grass]` and stores the [`Patch`]es. A patch is a pure function of
//! (spec, seed, index): the same bytes on every machine (keyed random streams, libm for
//! transcendentals, merges in a fixed order).

mod generate;
mod merge;
mod mesh;
#[cfg(test)]
mod tests;

pub use merge::{merge_level, merge_radius};
pub use mesh::{blade_mesh, blade_spine};

/// What one patch is grown from, in world units. `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchSpec {
    /// Side of the square patch; blades stand on `[0, patch_size)²` (default 1.0).
    pub patch_size: f32,
    /// Blades per unit² of horizontal area at level 0 (default 2000). The pipeline passes
    /// `density / cos(max_slope)` and thins by slope, so blades per unit of surface stay even.
    pub density: f32,
    /// Mean blade length (default 0.04).
    pub blade_length: f32,
    /// Mean base width (default 0.003).
    pub blade_width: f32,
    /// Length and width are each multiplied by `U(1 − v, 1 + v)` (default 0.3, as the reference).
    pub variation: f32,
    /// Direction = normalize(up + lean · a random xy in the unit disk) (default 0.3): the tilt
    /// varies from upright to `atan(lean)` rather than every blade leaning the same amount.
    pub lean: f32,
    /// Mean tip droop fraction; each blade draws `bend · U(0.5, 1.5)`, kept below 0.95 (default 0.25).
    pub bend: f32,
    /// Linear RGB base colour (default the reference's (0.25, 0.6, 0.08)).
    pub color: [f32; 3],
    /// Per-blade colour variation: brightness × `1 ± v`, and a yellow/blue hue shift of `± v/2` (default 0.15).
    pub color_variation: f32,
    /// Number of levels in the chain, level 0 included (≥ 6, default 6).
    pub levels: usize,
    /// Flowers per unit² (default 0).
    pub flowers: f32,
}

impl Default for PatchSpec {
    fn default() -> Self {
        PatchSpec {
            patch_size: 1.0,
            density: 2000.0,
            blade_length: 0.04,
            blade_width: 0.003,
            variation: 0.3,
            lean: 0.3,
            bend: 0.25,
            color: [0.25, 0.6, 0.08],
            color_variation: 0.15,
            levels: 6,
            flowers: 0.0,
        }
    }
}

/// Most blades in one patch: keeps a bad spec from asking for gigabytes.
pub const MAX_BLADES: f64 = 1_000_000.0;
/// Most flowers in one patch.
pub const MAX_FLOWERS: f64 = 100_000.0;
/// Most levels in a chain (a single blade stays single; more levels would only copy it).
pub const MAX_LEVELS: usize = 16;
/// Fewest levels in a chain (the issue asks for at least 6).
pub const MIN_LEVELS: usize = 6;

/// A spec value out of its range.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GrassError {
    /// A number outside its allowed range (NaN included).
    #[error("grass {key} = {value} is out of range: expected {expected}")]
    OutOfRange {
        /// The spec field.
        key: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range, in words.
        expected: &'static str,
    },
    /// Patch size × density asks for more blades (or flowers) than a patch may hold.
    #[error("grass patch of side {patch_size} at {per_unit2} {what} per unit² gives {count:.0} {what}, more than {max:.0}")]
    TooMany {
        /// "blades" or "flowers".
        what: &'static str,
        /// The patch side.
        patch_size: f32,
        /// The density asked for.
        per_unit2: f32,
        /// The count it gives.
        count: f64,
        /// The limit.
        max: f64,
    },
}

fn check(key: &'static str, value: f32, ok: bool, expected: &'static str) -> Result<(), GrassError> {
    if ok && value.is_finite() {
        Ok(())
    } else {
        Err(GrassError::OutOfRange { key, value: f64::from(value), expected })
    }
}

impl PatchSpec {
    /// Checks every field's range; a spec that passes grows without panicking.
    pub fn validate(&self) -> Result<(), GrassError> {
        let s = self;
        check("patch_size", s.patch_size, s.patch_size > 0.0 && s.patch_size <= 1000.0, "(0, 1000]")?;
        check("density", s.density, s.density > 0.0 && s.density <= 1e6, "(0, 1e6]")?;
        check("blade_length", s.blade_length, s.blade_length > 0.0 && s.blade_length <= 100.0, "(0, 100]")?;
        check("blade_width", s.blade_width, s.blade_width > 0.0 && s.blade_width <= 10.0, "(0, 10]")?;
        check("variation", s.variation, (0.0..0.95).contains(&s.variation), "[0, 0.95)")?;
        check("lean", s.lean, (0.0..=10.0).contains(&s.lean), "[0, 10]")?;
        check("bend", s.bend, (0.0..=0.9).contains(&s.bend), "[0, 0.9]")?;
        for c in s.color {
            check("color", c, (0.0..=1.0).contains(&c), "each channel in [0, 1]")?;
        }
        check("color_variation", s.color_variation, (0.0..=0.9).contains(&s.color_variation), "[0, 0.9]")?;
        if !(MIN_LEVELS..=MAX_LEVELS).contains(&s.levels) {
            return Err(GrassError::OutOfRange { key: "levels", value: s.levels as f64, expected: "6 to 16" });
        }
        check("flowers", s.flowers, (0.0..=1e5).contains(&s.flowers), "[0, 1e5]")?;
        let area = f64::from(s.patch_size) * f64::from(s.patch_size);
        for (what, per, max) in [("blades", s.density, MAX_BLADES), ("flowers", s.flowers, MAX_FLOWERS)] {
            let count = area * f64::from(per);
            if count > max {
                return Err(GrassError::TooMany { what, patch_size: s.patch_size, per_unit2: per, count, max });
            }
        }
        Ok(())
    }

    /// Level-0 blades in a patch: `round(density · patch_size²)`, at least 1.
    pub fn blade_count(&self) -> usize {
        (f64::from(self.density) * f64::from(self.patch_size) * f64::from(self.patch_size)).round().max(1.0) as usize
    }
}

/// One blade in patch-local coordinates (z up, base at z = 0). Area is `width · length / 2` at
/// every level: a linearly tapered strip of arc length `length`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blade {
    /// Base centre (x, y) in `[0, patch_size)²`.
    pub position: [f32; 2],
    /// Unit vector base → tip before bending.
    pub direction: [f32; 3],
    /// Unit face normal, ⟂ `direction`; the width axis is normalize(direction × normal).
    pub normal: [f32; 3],
    /// Arc length.
    pub length: f32,
    /// Base width (tapering linearly to a point at the tip).
    pub width: f32,
    /// Tip droop fraction in `[0, 1)`: the tip moves out along the horizontal part of the direction
    /// by `bend · length · t²` at parameter t (see [`blade_mesh`]).
    pub bend: f32,
    /// Linear RGB.
    pub color: [f32; 3],
    /// Index of the next level's blade this one went into; `u32::MAX` in the last level.
    pub parent: u32,
}

/// One level of a patch's chain.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Segments a blade of this level is drawn with (level 0: 4, 1: 3, 2: 2, then 1: one triangle).
    pub segments: u32,
    /// The blades, in the order the next level's merge walked them.
    pub blades: Vec<Blade>,
}

/// A flower: a stem from `position` (z = 0) straight up to a round head. Not merged; drawn only
/// at level-0 distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flower {
    /// Stem base (x, y) in `[0, patch_size)²`.
    pub position: [f32; 2],
    /// Stem height (a bit taller than the grass).
    pub height: f32,
    /// Head radius.
    pub radius: f32,
    /// Linear RGB of the head.
    pub color: [f32; 3],
}

/// One unique patch: its level chain (level 0 first) and its flowers.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// `spec.levels` levels; level k + 1 merges level k's blades in pairs.
    pub levels: Vec<Level>,
    /// Flowers, in generation order.
    pub flowers: Vec<Flower>,
}

/// Segments a level-`k` blade is drawn with: 4, 3, 2, then 1 (one triangle).
pub fn segments_for_level(level: usize) -> u32 {
    4u32.saturating_sub(level as u32).max(1)
}

/// A blade's area, `width · length / 2` (bending does not change it).
pub fn blade_area(b: &Blade) -> f32 {
    b.width * b.length * 0.5
}

/// Grows patch `index` under `seed`: level 0 on a jittered grid, the whole merge chain
/// (`spec.levels` levels, parents set, the last level's parents `u32::MAX`), and the flowers.
/// Pure and deterministic. The spec must pass [`PatchSpec::validate`].
pub fn grow_patch(spec: &PatchSpec, seed: u64, index: u32) -> Patch {
    let mut blades = generate::blades(spec, seed, index);
    let radius = merge_radius(spec);
    let mut levels = Vec::with_capacity(spec.levels);
    for k in 1..spec.levels {
        let next = merge_level(&mut blades, k, radius);
        levels.push(Level { segments: segments_for_level(k - 1), blades: std::mem::replace(&mut blades, next) });
    }
    blades.iter_mut().for_each(|b| b.parent = u32::MAX);
    levels.push(Level { segments: segments_for_level(spec.levels - 1), blades });
    Patch { levels, flowers: generate::flowers(spec, seed, index) }
}

/// The area-weighted mean colour of the patches' blades: the colour grass averages to from afar.
/// Merging averages colour by area, so every level gives the same (the last is used). Black when
/// there are no blades.
pub fn tint(patches: &[Patch]) -> [f32; 3] {
    let mut sum = [0.0f64; 3];
    let mut area = 0.0f64;
    for b in patches.iter().filter_map(|p| p.levels.last()).flat_map(|l| &l.blades) {
        let a = f64::from(b.width) * f64::from(b.length);
        area += a;
        (0..3).for_each(|c| sum[c] += a * f64::from(b.color[c]));
    }
    if area > 0.0 {
        sum.map(|s| (s / area) as f32)
    } else {
        [0.0; 3]
    }
}
