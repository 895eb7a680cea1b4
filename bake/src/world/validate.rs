//! Semantic checks on a parsed world spec: every value has a range in which the bake is correct
//! and terminates, and every range here is the one `worlds/README.md` documents.
//!
//! Why the bounds are where they are:
//! - Each axis is at most [`MAX_AXIS`] samples, the most the AO occupancy field takes
//!   (`ao::MAX_DIM`); whether a world of that size fits the machine is the pre-bake estimate's call
//!   (`crate::budget`).
//! - `voxel_size` in [[`MIN_VOXEL_SIZE`], [`MAX_VOXEL_SIZE`]]: the lighting works in f32 world units;
//!   far outside this range light either vanishes (1e10) or the tracer never ends (1e13).
//! - Noise coordinates (world extent × highest octave frequency) stay below [`MAX_NOISE_CYCLES`]
//!   cycles, where f64 still resolves a sample spacing and the `noise` crate's lattice
//!   arithmetic cannot overflow (1e20 panicked inside it).

use super::name::name_problem;
use super::spec::{FloorKind, WorldSpec};

/// A semantic problem with one key of a spec: `key` is the dotted path (`volume.size`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecIssue {
    /// Dotted key path of the offending value.
    pub key: String,
    /// What is wrong and what is allowed, one line.
    pub message: String,
}

/// Most samples along any axis.
pub const MAX_AXIS: u32 = crate::ao::MAX_DIM as u32;
/// Most samples in all: 4096 × 4096 × 256. Whether a world this size can be baked on a given
/// machine is decided by the memory estimate, not by this bound.
pub const MAX_VOXELS: u64 = 1 << 32;
/// Most tiles along X or Y (so at most 65536 level-0 tiles and about 87000 packs).
pub const MAX_TILES_PER_AXIS: u32 = 256;
/// Smallest `volume.voxel_size`, world units.
pub const MIN_VOXEL_SIZE: f64 = 1e-3;
/// Largest `volume.voxel_size`, world units.
pub const MAX_VOXEL_SIZE: f64 = 1e3;
/// Upper bound on octaves, for noise and floor alike.
pub const MAX_OCTAVES: u32 = 16;
/// Upper bound on sine-product terms per octave.
pub const MAX_TERMS: u32 = 64;
/// Largest `noise.lacunarity`.
pub const MAX_LACUNARITY: f64 = 16.0;
/// Largest `noise.amplitude` (the noise is clipped to [-1, 1] after scaling anyway).
pub const MAX_NOISE_AMPLITUDE: f64 = 1e3;
/// Most noise cycles across the world's largest extent at the highest octave.
pub const MAX_NOISE_CYCLES: f64 = 1e6;
/// Largest `floor.raw_size` side (the heightmap loader's limit).
pub const MAX_RAW_SIDE: u32 = super::heightmap::MAX_HEIGHTMAP_SIDE;

fn issue(key: &str, message: String) -> Result<(), SpecIssue> {
    Err(SpecIssue { key: key.to_owned(), message })
}

/// `v` finite and in the range `lo` (inclusive or not) ..= `hi`.
fn check_f64(key: &str, v: f64, lo: f64, lo_inclusive: bool, hi: f64, unit: &str) -> Result<(), SpecIssue> {
    let above = if lo_inclusive { v >= lo } else { v > lo };
    if v.is_finite() && above && v <= hi {
        return Ok(());
    }
    let range = match (lo_inclusive, hi == f64::MAX) {
        (true, true) => format!(">= {lo}"),
        (false, true) => format!("> {lo}"),
        (true, false) => format!("in [{lo}, {hi}]"),
        (false, false) => format!("in ({lo}, {hi}]"),
    };
    issue(key, format!("must be {range}{unit} (finite); got {v}"))
}

fn check_u32(key: &str, v: u32, lo: u32, hi: u32) -> Result<(), SpecIssue> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        issue(key, format!("must be in {lo}..={hi}; got {v}"))
    }
}

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
    /// Semantic checks on values that parsed: ranges, tiling, consistency between keys.
    /// File existence is checked by the loader.
    pub fn validate(&self) -> Result<(), SpecIssue> {
        if let Some(problem) = name_problem(&self.name) {
            issue("name", problem)?;
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
        if let Some(trees) = &self.trees {
            trees.validate(crate::trees::PRESETS)?;
        }
        if let Some(grass) = &self.grass {
            grass.validate(f64::from(self.volume.tile_size) * self.volume.voxel_size)?;
        }
        if let Some(water) = &self.water {
            water.validate(f64::from(self.volume.size[2].saturating_sub(1)) * self.volume.voxel_size)?;
        }
        Ok(())
    }

    /// The world's largest extent in world units (X, Y or Z).
    fn max_extent(&self) -> f64 {
        let n = self.volume.size.iter().copied().max().unwrap_or(0);
        f64::from(n) * self.volume.voxel_size
    }

    fn validate_volume(&self) -> Result<(), SpecIssue> {
        let v = &self.volume;
        check_f64("volume.voxel_size", v.voxel_size, MIN_VOXEL_SIZE, true, MAX_VOXEL_SIZE, " world units")?;
        let [nx, ny, nz] = v.size;
        if v.size.iter().any(|&n| n > MAX_AXIS) {
            issue("volume.size", format!("each axis must be at most {MAX_AXIS} samples; got [{nx}, {ny}, {nz}]"))?;
        }
        let t = v.tile_size;
        if t == 0 {
            issue("volume.tile_size", "must be a positive number of voxel columns; got 0".into())?;
        }
        if nx == 0 || ny == 0 || nx % t != 0 || ny % t != 0 {
            issue("volume.size", format!("nx and ny must be positive multiples of volume.tile_size ({t}); got [{nx}, {ny}, {nz}]"))?;
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
        if nx / t > MAX_TILES_PER_AXIS || ny / t > MAX_TILES_PER_AXIS {
            issue(
                "volume.tile_size",
                format!("at most {MAX_TILES_PER_AXIS} tiles per axis; got {} x {} tiles of {t} (raise tile_size)", nx / t, ny / t),
            )?;
        }
        if nz < 2 {
            issue("volume.size", format!("nz must be at least 2 samples; got [{nx}, {ny}, {nz}]"))?;
        }
        // Each factor is at most 2^12, so the product cannot overflow.
        let total = u64::from(nx) * u64::from(ny) * u64::from(nz);
        if total > MAX_VOXELS {
            issue("volume.size", format!("at most {MAX_VOXELS} samples in all; got [{nx}, {ny}, {nz}] = {total}"))?;
        }
        Ok(())
    }

    fn validate_noise(&self) -> Result<(), SpecIssue> {
        let n = &self.noise;
        check_u32("noise.octaves", n.octaves, 1, MAX_OCTAVES)?;
        check_f64("noise.frequency", n.frequency, 0.0, false, f64::MAX, " cycles per world unit")?;
        check_f64("noise.lacunarity", n.lacunarity(), 1.0, true, MAX_LACUNARITY, "")?;
        check_f64("noise.gain", n.gain, 0.0, false, 1.0, "")?;
        check_u32("noise.terms", n.terms, 1, MAX_TERMS)?;
        check_f64("noise.amplitude", n.amplitude, 0.0, true, MAX_NOISE_AMPLITUDE, "")?;
        let top = n.frequency * n.lacunarity().powi(n.octaves as i32 - 1);
        self.check_cycles("noise.frequency", "noise.frequency · noise.lacunarity^(octaves-1)", top)
    }

    fn check_cycles(&self, key: &str, what: &str, top_frequency: f64) -> Result<(), SpecIssue> {
        let cycles = top_frequency * self.max_extent();
        if cycles.is_finite() && cycles <= MAX_NOISE_CYCLES {
            return Ok(());
        }
        issue(
            key,
            format!(
                "the top octave makes {cycles:e} cycles across the world ({what} = {top_frequency} per world unit over \
                 {} world units); at most {MAX_NOISE_CYCLES:e}",
                self.max_extent()
            ),
        )
    }

    fn validate_floor(&self) -> Result<(), SpecIssue> {
        let f = &self.floor;
        let any = f64::MAX;
        check_f64("floor.height", f.height, 0.0, true, any, " world units")?;
        check_f64("floor.amplitude", f.amplitude, 0.0, true, any, " world units")?;
        check_f64("floor.frequency", f.frequency, 0.0, false, any, " cycles per world unit")?;
        check_u32("floor.octaves", f.octaves, 1, MAX_OCTAVES)?;
        check_f64("floor.fade_start", f.fade_start, 0.0, true, any, " world units")?;
        check_f64("floor.fade", f.fade, 0.0, true, any, " world units")?;
        if f.kind == FloorKind::Noise {
            let top = f.frequency * 2f64.powi(f.octaves as i32 - 1);
            self.check_cycles("floor.frequency", "floor.frequency · 2^(octaves-1)", top)?;
        }
        self.validate_floor_file()?;
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

    fn validate_floor_file(&self) -> Result<(), SpecIssue> {
        let f = &self.floor;
        match (f.kind, &f.file) {
            (FloorKind::Heightmap, None) => issue("floor.kind", "kind = \"heightmap\" needs floor.file (a .png, .r16 or .raw path)".into())?,
            (FloorKind::None | FloorKind::Noise, Some(_)) => {
                issue("floor.file", "is only used with floor.kind = \"heightmap\"; remove it or set the kind".into())?
            }
            (FloorKind::Heightmap, Some(file)) => match (heightmap_is_raw(file), f.raw_size) {
                (None, _) => issue("floor.file", format!("must end in .png, .r16 or .raw; got {file:?}"))?,
                (Some(true), None) => issue("floor.raw_size", format!("raw heightmap {file:?} needs floor.raw_size = [width, height]"))?,
                (Some(true), Some([w, h])) if !(1..=MAX_RAW_SIDE).contains(&w) || !(1..=MAX_RAW_SIDE).contains(&h) => {
                    issue("floor.raw_size", format!("each side must be in 1..={MAX_RAW_SIDE}; got [{w}, {h}]"))?
                }
                (Some(false), Some(_)) => issue("floor.raw_size", "is only used with raw (.r16/.raw) heightmaps; PNGs carry their size".into())?,
                _ => {}
            },
            _ => {}
        }
        if f.raw_size.is_some() && f.kind != FloorKind::Heightmap {
            issue("floor.raw_size", "is only used with floor.kind = \"heightmap\"".into())?;
        }
        Ok(())
    }
}
