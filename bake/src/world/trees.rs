//! `[trees]`: which species grow, how many unique prototypes each has, where they stand, and how
//! their impostors are baked. Absent = no trees. Every key is documented in `worlds/README.md`.

use serde::{Deserialize, Serialize};

use super::validate::SpecIssue;

/// Most species in one world.
pub const MAX_SPECIES: usize = 16;
/// Most prototypes in all species together.
pub const MAX_PROTOTYPES: u32 = 256;

/// `[trees]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TreesSpec {
    /// `[[trees.species]]`: the species that grow, in placement order (earlier species claim space first).
    pub species: Vec<SpeciesSpec>,
    /// `[trees.impostor]`: how each prototype's impostor atlas is baked.
    pub impostor: ImpostorSpec,
    /// Whether trees take part in the baked light transport (shade the ground, are lit by it).
    pub occlude_light: bool,
}

impl Default for TreesSpec {
    fn default() -> Self {
        TreesSpec { species: Vec::new(), impostor: ImpostorSpec::default(), occlude_light: true }
    }
}

/// One `[[trees.species]]` entry: a preset, its prototypes, placement rules and shape overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpeciesSpec {
    /// The preset the species starts from (`oak`, `maple`, `birch`, `pine`, …: see `worlds/README.md`).
    pub preset: String,
    /// Unique prototypes grown for the species; instances pick among them.
    pub prototypes: u32,
    /// Prototype heights `[min, max]` in world units (spread evenly over the prototypes).
    pub height: [f64; 2],
    /// Instances per square world unit of suitable ground (before spacing rejects some).
    pub density: f64,
    /// Least distance between two trunks (this species to any tree), world units.
    pub min_spacing: f64,
    /// Steepest ground a tree stands on, degrees from level.
    pub max_slope: f64,
    /// Ground heights `[min, max]` (world units) where the species grows.
    pub height_band: [f64; 2],
    /// Optional greyscale PNG over the world's XY extent, mapped like `floor.file`, that scales the density (white = 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density_image: Option<String>,
    /// Instance scale range `[min, max]`.
    pub scale: [f64; 2],
    /// Per-instance colour variation (0 = none): the tint is 1 ± this, per channel.
    pub tint_variation: f64,
    /// Shape overrides of the preset (absent = the preset's value).
    pub shape: ShapeOverrides,
}

impl Default for SpeciesSpec {
    fn default() -> Self {
        SpeciesSpec {
            preset: "oak".into(),
            prototypes: 20,
            height: [0.8, 1.3],
            density: 0.3,
            min_spacing: 0.8,
            max_slope: 30.0,
            height_band: [-1e9, 1e9],
            density_image: None,
            scale: [0.85, 1.15],
            tint_variation: 0.1,
            shape: ShapeOverrides::default(),
        }
    }
}

/// `[trees.species.shape]`: the generator parameters a world may change (see `worlds/README.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShapeOverrides {
    /// First-order branches, 1–8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branches: Option<u32>,
    /// Branch deflection range `[min, max]` in degrees from the parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deflection: Option<[f64; 2]>,
    /// How strongly branches bend upward, 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upwardness: Option<f64>,
    /// Random variation of branch radius, 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub radius_variation: Option<f64>,
    /// Random variation of branch length, 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_variation: Option<f64>,
    /// Leaf size multiplier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_size: Option<f64>,
    /// Leaf count multiplier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<f64>,
    /// Grow fourth-order branches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fourth_order: Option<bool>,
    /// Grow roots above the ground.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<bool>,
}

/// How directions map onto an impostor atlas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImpostorLayoutSpec {
    /// Every direction (trees seen from below too).
    #[default]
    Octahedral,
    /// The upper hemisphere only: twice the views for the same atlas where nobody looks up at trees.
    HemiOctahedral,
}

/// `[trees.impostor]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImpostorSpec {
    /// Views per atlas side (grid × grid views).
    pub grid: u32,
    /// Direction layout.
    pub layout: ImpostorLayoutSpec,
    /// World size of one atlas texel; 0 = chosen from each prototype's size (32 texels across its bounding sphere).
    pub texel: f64,
    /// Also bake the reference engine's two-card billboards (leaf card and branch card).
    pub cards: bool,
}

impl Default for ImpostorSpec {
    fn default() -> Self {
        ImpostorSpec { grid: 12, layout: ImpostorLayoutSpec::Octahedral, texel: 0.0, cards: false }
    }
}

fn issue(key: String, message: String) -> Result<(), SpecIssue> {
    Err(SpecIssue { key, message })
}

fn range(key: String, v: f64, lo: f64, hi: f64) -> Result<(), SpecIssue> {
    if v.is_finite() && v >= lo && v <= hi {
        return Ok(());
    }
    issue(key, format!("{v} is outside {lo}..={hi}"))
}

fn interval(key: String, v: [f64; 2], lo: f64, hi: f64) -> Result<(), SpecIssue> {
    range(key.clone(), v[0], lo, hi)?;
    range(key.clone(), v[1], lo, hi)?;
    if v[0] > v[1] {
        return issue(key, format!("[{}, {}]: the minimum is above the maximum", v[0], v[1]));
    }
    Ok(())
}

impl TreesSpec {
    /// Every value's range; `presets` are the species names the generator knows.
    pub fn validate(&self, presets: &[&str]) -> Result<(), SpecIssue> {
        if self.species.len() > MAX_SPECIES {
            return issue("trees.species".into(), format!("{} species (at most {MAX_SPECIES})", self.species.len()));
        }
        let total: u64 = self.species.iter().map(|s| u64::from(s.prototypes)).sum();
        if total > u64::from(MAX_PROTOTYPES) {
            return issue("trees.species".into(), format!("{total} prototypes in all (at most {MAX_PROTOTYPES})"));
        }
        for (i, s) in self.species.iter().enumerate() {
            let k = |name: &str| format!("trees.species[{i}].{name}");
            if !presets.contains(&s.preset.as_str()) {
                return issue(k("preset"), format!("unknown preset {:?}; known: {}", s.preset, presets.join(", ")));
            }
            if !(1..=MAX_PROTOTYPES).contains(&s.prototypes) {
                return issue(k("prototypes"), format!("{} is outside 1..={MAX_PROTOTYPES}", s.prototypes));
            }
            interval(k("height"), s.height, 0.01, 1000.0)?;
            range(k("density"), s.density, 0.0, 1e4)?;
            range(k("min_spacing"), s.min_spacing, 1e-3, 1e4)?;
            range(k("max_slope"), s.max_slope, 0.0, 90.0)?;
            interval(k("height_band"), s.height_band, -1e9, 1e9)?;
            interval(k("scale"), s.scale, 0.05, 20.0)?;
            range(k("tint_variation"), s.tint_variation, 0.0, 1.0)?;
            let sh = &s.shape;
            if let Some(b) = sh.branches {
                if !(1..=8).contains(&b) {
                    return issue(k("shape.branches"), format!("{b} is outside 1..=8"));
                }
            }
            if let Some(d) = sh.deflection {
                interval(k("shape.deflection"), d, 0.0, 90.0)?;
            }
            for (name, v, hi) in [
                ("shape.upwardness", sh.upwardness, 1.0),
                ("shape.radius_variation", sh.radius_variation, 1.0),
                ("shape.length_variation", sh.length_variation, 1.0),
                ("shape.leaf_size", sh.leaf_size, 10.0),
                ("shape.leaves", sh.leaves, 10.0),
            ] {
                if let Some(v) = v {
                    range(k(name), v, 0.0, hi)?;
                }
            }
        }
        if !(1..=64).contains(&self.impostor.grid) {
            return issue("trees.impostor.grid".into(), format!("{} is outside 1..=64", self.impostor.grid));
        }
        if self.impostor.texel != 0.0 {
            range("trees.impostor.texel".into(), self.impostor.texel, 1e-4, 100.0)?;
        }
        Ok(())
    }
}
