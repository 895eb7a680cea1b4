//! The world-file schema: every key, its default, and the semantic checks the parser cannot do.
//!
//! Units: sizes are in voxels; every other length (voxel size, floor height, fade, brush radius and
//! position) is in world units; frequencies are in cycles per world unit, so changing
//! `volume.voxel_size` refines the same world instead of rescaling it. World position of voxel
//! `(i, j, k)` is `(i, j, k) * voxel_size`.
//!
//! Adding a table later (the lead's `[ao]` and `[lighting]`) is one field on [`WorldSpec`]:
//! `#[serde(default)] pub ao: crate::ao::AoSettings` with a `Default` impl, plus a line in
//! [`WorldSpec::validate`] if it has semantic checks.

use serde::{Deserialize, Serialize};

/// A complete world description, as read from a world file with all defaults resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// Human-readable world name (required, non-empty).
    pub name: String,
    /// Seed of every random choice in the world. TOML integers are signed 64-bit, so the usable
    /// range is `0..=i64::MAX`.
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub volume: VolumeSpec,
    #[serde(default)]
    pub noise: NoiseSpec,
    #[serde(default)]
    pub floor: FloorSpec,
    #[serde(default)]
    pub floaters: FloaterSpec,
    #[serde(default)]
    pub brushes: BrushesSpec,
    /// `[ao]`: per-vertex ambient occlusion (see `worlds/README.md`).
    #[serde(default)]
    pub ao: crate::ao::AoSettings,
    /// `[lighting]`: baked sky, sun, moon and static-light irradiance (see `worlds/README.md`).
    #[serde(default)]
    pub lighting: crate::lighting::LightingSpec,
}

/// `[volume]`: the sample grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VolumeSpec {
    /// Samples per axis `[nx, ny, nz]` (Z up).
    pub size: [u32; 3],
    /// Distance between neighbouring samples, in world units.
    pub voxel_size: f64,
    /// Edge of one XY tile in voxel columns; `nx / tile_size` and `ny / tile_size` must be
    /// powers of two because the LOD quadtree halves the tile grid per level.
    pub tile_size: u32,
}

impl Default for VolumeSpec {
    fn default() -> Self {
        VolumeSpec { size: [512, 512, 64], voxel_size: 0.0625, tile_size: 32 }
    }
}

/// Which 3D noise makes the caves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseKind {
    /// Sums of products of sines: separable, so the fastest by far.
    #[default]
    SineProducts,
    /// fBm of gradient noise from the `noise` crate.
    Perlin,
    /// fBm of simplex noise from the `noise` crate.
    Simplex,
}

/// `[noise]`: the 3D density noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NoiseSpec {
    pub kind: NoiseKind,
    /// Number of octaves, 1..=16.
    pub octaves: u32,
    /// Base frequency of the first octave, in cycles per world unit.
    pub frequency: f64,
    /// Frequency multiplier per octave; absent means the kind's reference value
    /// (2.5 for sine_products, 1.92 for perlin and simplex), resolved when the file is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lacunarity: Option<f64>,
    /// Amplitude multiplier per octave, in (0, 1].
    pub gain: f64,
    /// Sine-product terms per octave (sine_products only), 1..=64.
    pub terms: u32,
    /// Scale of the normalised noise (standard deviation 0.5 at amplitude 1) before clipping.
    pub amplitude: f64,
}

impl Default for NoiseSpec {
    fn default() -> Self {
        NoiseSpec {
            kind: NoiseKind::default(),
            octaves: 5,
            frequency: 0.15,
            lacunarity: None,
            gain: 0.5,
            terms: 12,
            amplitude: 1.0,
        }
    }
}

impl NoiseSpec {
    /// The reference lacunarity of each kind, used when the file does not set one.
    pub fn default_lacunarity(kind: NoiseKind) -> f64 {
        match kind {
            NoiseKind::SineProducts => 2.5,
            NoiseKind::Perlin | NoiseKind::Simplex => 1.92,
        }
    }

    /// The lacunarity in effect (the file's value or the kind's default).
    pub fn lacunarity(&self) -> f64 {
        self.lacunarity.unwrap_or_else(|| Self::default_lacunarity(self.kind))
    }
}

/// How the ground under the caves is shaped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloorKind {
    /// No ground: only the noise (fade heights are measured from z = 0).
    None,
    /// A 2D Perlin fBm height field.
    #[default]
    Noise,
    /// A 16-bit height image (`floor.file`).
    Heightmap,
}

/// `[floor]`: the solid ground and the fade to open sky above it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FloorSpec {
    pub kind: FloorKind,
    /// Lowest floor height, in world units above z = 0.
    pub height: f64,
    /// Floor heights span `[height, height + amplitude]` (world units).
    pub amplitude: f64,
    /// Base frequency of the floor noise, cycles per world unit (kind = "noise").
    pub frequency: f64,
    /// Octaves of the floor noise, 1..=16 (kind = "noise").
    pub octaves: u32,
    /// Height image for kind = "heightmap": a grayscale PNG (8- or 16-bit) or raw little-endian
    /// 16-bit samples (`.r16` / `.raw`), path relative to the world file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `[width, height]` of a raw heightmap (raw files carry no header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_size: Option<[u32; 2]>,
    /// Height above the local floor (world units) where the noise starts fading to air.
    pub fade_start: f64,
    /// Thickness of the fade (world units); above `fade_start + fade` everything is air.
    pub fade: f64,
}

impl Default for FloorSpec {
    fn default() -> Self {
        FloorSpec {
            kind: FloorKind::default(),
            height: 0.25,
            amplitude: 0.5,
            frequency: 0.1,
            octaves: 4,
            file: None,
            raw_size: None,
            fade_start: 2.25,
            fade: 0.75,
        }
    }
}

/// `[floaters]`: connectivity clean-up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FloaterSpec {
    /// Turn solid voxels not connected to the ground into air.
    pub remove: bool,
    /// Turn air voxels not connected to the open top or sides into solid.
    pub fill_sealed_air: bool,
}

impl Default for FloaterSpec {
    fn default() -> Self {
        FloaterSpec { remove: true, fill_sealed_air: false }
    }
}

/// `[brushes]`: edits replayed after generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrushesSpec {
    /// Brush file (TOML, see worlds/README.md), relative to the world file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A semantic problem with one key of a spec: `key` is the dotted path (`volume.size`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecIssue {
    pub key: String,
    pub message: String,
}

fn issue(key: &str, message: String) -> Result<(), SpecIssue> {
    Err(SpecIssue { key: key.to_owned(), message })
}

fn check_f64(key: &str, v: f64, min: f64, min_inclusive: bool, what: &str) -> Result<(), SpecIssue> {
    let ok = v.is_finite() && if min_inclusive { v >= min } else { v > min };
    if ok {
        Ok(())
    } else {
        issue(key, format!("must be {what}; got {v}"))
    }
}

fn check_u32(key: &str, v: u32, lo: u32, hi: u32) -> Result<(), SpecIssue> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        issue(key, format!("must be in {lo}..={hi}; got {v}"))
    }
}

/// Largest volume accepted: 2^31 samples (8 GiB of f32), far beyond any sensible bake.
pub const MAX_VOXELS: u64 = 1 << 31;
/// Upper bound on octaves, for noise and floor alike.
pub const MAX_OCTAVES: u32 = 16;
/// Upper bound on sine-product terms per octave.
pub const MAX_TERMS: u32 = 64;

/// Whether a heightmap path names a raw (headerless) file rather than a PNG.
pub fn heightmap_is_raw(file: &str) -> Option<bool> {
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".png") {
        Some(false)
    } else if lower.ends_with(".r16") || lower.ends_with(".raw") {
        Some(true)
    } else {
        None
    }
}

impl WorldSpec {
    /// The samples per axis as `usize`.
    pub fn dims(&self) -> [usize; 3] {
        self.volume.size.map(|n| n as usize)
    }

    /// Tiles per XY axis (`size / tile_size`).
    pub fn tiles_per_axis(&self) -> [usize; 2] {
        let t = self.volume.tile_size.max(1) as usize;
        [self.volume.size[0] as usize / t, self.volume.size[1] as usize / t]
    }

    /// Fills in defaults that depend on other keys (currently `noise.lacunarity`), so the spec
    /// states every value explicitly. Loading a world does this; call it on hand-built specs.
    pub fn resolve_defaults(&mut self) {
        self.noise.lacunarity = Some(self.noise.lacunarity());
    }

    /// All keys with defaults resolved, as TOML; deserialising it gives back an equal spec.
    /// This is what a bake records (and hashes) as the world it was made from.
    ///
    /// # Panics
    /// Only for a spec that fails [`validate`](Self::validate) (a seed above `i64::MAX` has
    /// no TOML form); loaded worlds are always validated.
    pub fn canonical_toml(&self) -> String {
        let mut resolved = self.clone();
        resolved.resolve_defaults();
        toml::to_string(&resolved).expect("a validated WorldSpec always serialises to TOML")
    }

    /// Semantic checks on values that parsed: ranges, tiling, consistency between keys.
    /// File existence is checked by the loader.
    pub fn validate(&self) -> Result<(), SpecIssue> {
        if self.name.trim().is_empty() || self.name.chars().any(char::is_control) {
            issue("name", format!("must be non-empty text without control characters; got {:?}", self.name))?;
        }
        if self.seed > i64::MAX as u64 {
            issue("seed", format!("must be in 0..={} (a TOML integer); got {}", i64::MAX, self.seed))?;
        }
        self.validate_volume()?;
        self.validate_noise()?;
        self.validate_floor()?;
        if let Err(crate::ao::AoError::BadSetting { name, value, reason }) = self.ao.validate() {
            issue(&format!("ao.{name}"), format!("{reason}; got {value}"))?;
        }
        if let Err(errors) = self.lighting.validate() {
            let e = &errors[0];
            // The lighting spec's paths start at the world file's root.
            issue(&e.path, e.message.clone())?;
        }
        Ok(())
    }

    fn validate_volume(&self) -> Result<(), SpecIssue> {
        let v = &self.volume;
        check_f64("volume.voxel_size", v.voxel_size, 0.0, false, "a positive number of world units")?;
        if v.tile_size == 0 {
            issue("volume.tile_size", "must be a positive number of voxel columns; got 0".into())?;
        }
        let [nx, ny, nz] = v.size;
        let t = v.tile_size;
        if nx == 0 || ny == 0 || nx % t != 0 || ny % t != 0 {
            issue(
                "volume.size",
                format!("nx and ny must be positive multiples of volume.tile_size ({t}); got [{nx}, {ny}, {nz}]"),
            )?;
        }
        if !(nx / t).is_power_of_two() || !(ny / t).is_power_of_two() {
            issue(
                "volume.size",
                format!(
                    "tiles per axis (size / volume.tile_size) must be powers of two for the LOD quadtree; \
                     got {} x {} tiles of {t} from [{nx}, {ny}, {nz}]",
                    nx / t,
                    ny / t
                ),
            )?;
        }
        if nz < 2 {
            issue("volume.size", format!("nz must be at least 2 samples; got [{nx}, {ny}, {nz}]"))?;
        }
        let total = u64::from(nx) * u64::from(ny) * u64::from(nz);
        if total > MAX_VOXELS {
            issue("volume.size", format!("at most {MAX_VOXELS} voxels in all; got [{nx}, {ny}, {nz}] = {total}"))?;
        }
        Ok(())
    }

    fn validate_noise(&self) -> Result<(), SpecIssue> {
        let n = &self.noise;
        check_u32("noise.octaves", n.octaves, 1, MAX_OCTAVES)?;
        check_f64("noise.frequency", n.frequency, 0.0, false, "a positive number of cycles per world unit")?;
        check_f64("noise.lacunarity", n.lacunarity(), 1.0, true, "a number >= 1")?;
        check_f64("noise.gain", n.gain, 0.0, false, "in (0, 1]")?;
        if n.gain > 1.0 {
            issue("noise.gain", format!("must be in (0, 1]; got {}", n.gain))?;
        }
        check_u32("noise.terms", n.terms, 1, MAX_TERMS)?;
        check_f64("noise.amplitude", n.amplitude, 0.0, true, "a number >= 0")
    }

    fn validate_floor(&self) -> Result<(), SpecIssue> {
        let f = &self.floor;
        check_f64("floor.height", f.height, 0.0, true, "a number of world units >= 0")?;
        check_f64("floor.amplitude", f.amplitude, 0.0, true, "a number of world units >= 0")?;
        check_f64("floor.frequency", f.frequency, 0.0, false, "a positive number of cycles per world unit")?;
        check_u32("floor.octaves", f.octaves, 1, MAX_OCTAVES)?;
        check_f64("floor.fade_start", f.fade_start, 0.0, true, "a number of world units >= 0")?;
        check_f64("floor.fade", f.fade, 0.0, true, "a number of world units >= 0")?;
        match (f.kind, &f.file) {
            (FloorKind::Heightmap, None) => {
                issue("floor.kind", "kind = \"heightmap\" needs floor.file (a .png, .r16 or .raw path)".into())?
            }
            (FloorKind::None | FloorKind::Noise, Some(_)) => {
                issue("floor.file", "is only used with floor.kind = \"heightmap\"; remove it or set the kind".into())?
            }
            (FloorKind::Heightmap, Some(file)) => match (heightmap_is_raw(file), f.raw_size) {
                (None, _) => issue("floor.file", format!("must end in .png, .r16 or .raw; got {file:?}"))?,
                (Some(true), None) => {
                    issue("floor.raw_size", format!("raw heightmap {file:?} needs floor.raw_size = [width, height]"))?
                }
                (Some(true), Some([w, h])) if w == 0 || h == 0 => {
                    issue("floor.raw_size", format!("must be positive; got [{w}, {h}]"))?
                }
                (Some(false), Some(_)) => issue(
                    "floor.raw_size",
                    "is only used with raw (.r16/.raw) heightmaps; PNGs carry their size".into(),
                )?,
                _ => {}
            },
            _ => {}
        }
        if f.raw_size.is_some() && f.kind != FloorKind::Heightmap {
            issue("floor.raw_size", "is only used with floor.kind = \"heightmap\"".into())?;
        }
        // The top of the world must be open: above the highest floor plus the fade, all is air.
        let top = f64::from(self.volume.size[2].saturating_sub(1)) * self.volume.voxel_size;
        let (floor_max, terms) = match f.kind {
            FloorKind::None => (0.0, "floor.fade_start + floor.fade"),
            _ => (f.height + f.amplitude, "floor.height + floor.amplitude + floor.fade_start + floor.fade"),
        };
        let open_from = floor_max + f.fade_start + f.fade;
        if open_from > top {
            issue(
                "floor.fade_start",
                format!(
                    "the top of the world must be open: {terms} = {open_from} must not exceed the top sample's \
                     height (volume.size[2] - 1) * volume.voxel_size = {top}"
                ),
            )?;
        }
        Ok(())
    }
}
