//! `[water]`: the water level of the world's sea and lakes, how light is absorbed in the water, and
//! the wave spectrum and caustics of its surface (`[water.waves]`, `[water.caustics]`). Absent = no
//! water. Every key is documented in `worlds/README.md`.
//!
//! This module only holds the schema and its ranges: the world layer may not name `crate::water`
//! (the wave generator); `pipeline::water` turns these keys into its inputs.

use serde::{Deserialize, Serialize};

use super::validate::SpecIssue;

/// Most frames × texels of one wave loop (`frames · resolution²`): the frames are baked in memory as
/// f32 (surface, normal and every caustic plane), about 60 bytes per texel and frame, so this keeps
/// the wave bake near 1 GiB; 64 frames of 512² or 256 frames of 256².
pub const MAX_WAVE_TEXEL_FRAMES: u64 = 1 << 24;
/// Smallest wave map side (the `WAVE` section's).
pub const MIN_WAVE_RESOLUTION: u32 = *kiln_formats::sections::WAVE_RESOLUTION.start();
/// Largest wave map side.
pub const MAX_WAVE_RESOLUTION: u32 = *kiln_formats::sections::WAVE_RESOLUTION.end();
/// Most frames of a loop.
pub const MAX_WAVE_FRAMES: u32 = kiln_formats::sections::MAX_WAVE_FRAMES;
/// Most caustic receiving planes.
pub const MAX_CAUSTIC_DEPTHS: usize = kiln_formats::sections::MAX_CAUSTIC_DEPTHS;

/// Beer–Lambert absorption of clear ocean water per metre, linear RGB (red, green, blue at about
/// 650, 550 and 450 nm): pure water's absorption (Pope & Fry 1997: 0.34, 0.057, 0.009 per metre)
/// raised a little for the particles of clear open sea (Jerlov type I).
pub const CLEAR_SEA_ABSORPTION_PER_METRE: [f64; 3] = [0.40, 0.065, 0.02];

/// `[water]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaterSpec {
    /// z of the mean water surface, world units (required).
    pub level: f64,
    /// Beer–Lambert absorption per world unit of path in water, linear RGB; absent = clear sea
    /// water ([`CLEAR_SEA_ABSORPTION_PER_METRE`]) times `metres_per_unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absorption: Option<[f64; 3]>,
    /// Refractive index of the water.
    #[serde(default = "default_ior")]
    pub ior: f64,
    /// Metres per world unit, for the physics (gravity, wind) and the default absorption.
    #[serde(default = "default_metres_per_unit")]
    pub metres_per_unit: f64,
    /// `[water.waves]`: the ocean spectrum and the baked loop.
    #[serde(default)]
    pub waves: WavesSpec,
    /// `[water.caustics]`: the receiving planes of the caustics.
    #[serde(default)]
    pub caustics: CausticsSpec,
}

fn default_ior() -> f64 {
    1.333
}

fn default_metres_per_unit() -> f64 {
    1.0
}

/// The ocean spectrum's shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpectrumKind {
    /// JONSWAP: a fetch-limited sea (peak from wind speed and fetch).
    #[default]
    Jonswap,
    /// Phillips: a fully developed sea (the classic Tessendorf spectrum).
    Phillips,
}

/// `[water.waves]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WavesSpec {
    /// Spectrum shape.
    pub spectrum: SpectrumKind,
    /// Wind speed at 10 m, metres per second.
    pub wind_speed: f64,
    /// Degrees counter-clockwise from +X of the direction the wind blows toward.
    pub wind_direction: f64,
    /// Fetch in metres (JONSWAP's peak).
    pub fetch: f64,
    /// Horizontal displacement scale λ; 0 = heights only.
    pub choppiness: f64,
    /// Multiplier on the spectrum's heights (1 = physical).
    pub amplitude: f64,
    /// Side of the periodic patch, world units.
    pub patch_size: f64,
    /// Seconds of one loop.
    pub period: f64,
    /// Frames of the loop.
    pub frames: u32,
    /// Texels per side of every map (a power of two).
    pub resolution: u32,
}

impl Default for WavesSpec {
    fn default() -> Self {
        WavesSpec {
            spectrum: SpectrumKind::Jonswap,
            wind_speed: 5.0,
            wind_direction: 30.0,
            fetch: 10_000.0,
            choppiness: 1.0,
            amplitude: 1.0,
            patch_size: 8.0,
            period: 10.0,
            frames: 64,
            resolution: 256,
        }
    }
}

/// How many caustic planes, or exactly where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CausticDepthsSpec {
    /// This many planes, spread up to where the pattern washes out.
    Count(u32),
    /// Planes at these depths below the mean surface (world units, increasing).
    List(Vec<f64>),
}

/// `[water.caustics]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CausticsSpec {
    /// A count of receiving planes or their depths.
    pub depths: CausticDepthsSpec,
}

impl Default for CausticsSpec {
    fn default() -> Self {
        CausticsSpec { depths: CausticDepthsSpec::Count(4) }
    }
}

fn issue(key: &str, message: String) -> Result<(), SpecIssue> {
    Err(SpecIssue { key: format!("water.{key}"), message })
}

/// `v` finite and in `lo..=hi` (`lo` exclusive when `open`).
fn range(key: &str, v: f64, lo: f64, open: bool, hi: f64) -> Result<(), SpecIssue> {
    let above = if open { v > lo } else { v >= lo };
    if v.is_finite() && above && v <= hi {
        return Ok(());
    }
    let l = if open { "(" } else { "[" };
    issue(key, format!("{v} is outside {l}{lo}, {hi}]"))
}

impl WaterSpec {
    /// Every value's range; `top` is the height of the volume's top sample (`(nz − 1) · voxel_size`):
    /// the level must lie inside the volume with air above it.
    pub fn validate(&self, top: f64) -> Result<(), SpecIssue> {
        if !(self.level.is_finite() && self.level >= 0.0 && self.level < top) {
            return issue("level", format!("{} is outside the volume: the level must be in [0, {top}) (below the top sample)", self.level));
        }
        if let Some(a) = self.absorption {
            if !a.iter().all(|c| c.is_finite() && (0.0..=1e3).contains(c)) {
                return issue("absorption", format!("{a:?}: each channel must be in [0, 1000] per world unit"));
            }
        }
        range("ior", self.ior, 1.0, false, 3.0)?;
        range("metres_per_unit", self.metres_per_unit, 1e-3, false, 1e3)?;
        self.validate_waves()?;
        match &self.caustics.depths {
            CausticDepthsSpec::Count(n) if !(1..=MAX_CAUSTIC_DEPTHS as u32).contains(n) => {
                issue("caustics.depths", format!("{n} planes is outside 1..={MAX_CAUSTIC_DEPTHS}"))
            }
            CausticDepthsSpec::List(d) if d.is_empty() || d.len() > MAX_CAUSTIC_DEPTHS => {
                issue("caustics.depths", format!("{} depths, 1 to {MAX_CAUSTIC_DEPTHS}", d.len()))
            }
            CausticDepthsSpec::List(d) if !d.iter().all(|v| v.is_finite() && *v > 0.0 && *v <= 1e6) || d.windows(2).any(|p| p[1] <= p[0]) => {
                issue("caustics.depths", format!("{d:?}: depths must be finite, in (0, 1e6] and increasing"))
            }
            _ => Ok(()),
        }
    }

    fn validate_waves(&self) -> Result<(), SpecIssue> {
        let w = &self.waves;
        range("waves.wind_speed", w.wind_speed, 0.0, false, 100.0)?;
        range("waves.wind_direction", w.wind_direction, -360.0, false, 360.0)?;
        range("waves.fetch", w.fetch, 1.0, false, 1e7)?;
        range("waves.choppiness", w.choppiness, 0.0, false, 4.0)?;
        range("waves.amplitude", w.amplitude, 0.0, false, 100.0)?;
        range("waves.patch_size", w.patch_size, 0.0, true, 1e5)?;
        range("waves.period", w.period, 0.1, false, 1e4)?;
        if !(1..=MAX_WAVE_FRAMES).contains(&w.frames) {
            return issue("waves.frames", format!("{} is outside 1..={MAX_WAVE_FRAMES}", w.frames));
        }
        let r = w.resolution;
        if !(MIN_WAVE_RESOLUTION..=MAX_WAVE_RESOLUTION).contains(&r) || !r.is_power_of_two() {
            return issue("waves.resolution", format!("{r} is not a power of two in {MIN_WAVE_RESOLUTION}..={MAX_WAVE_RESOLUTION}"));
        }
        let texels = u64::from(w.frames) * u64::from(r) * u64::from(r);
        if texels > MAX_WAVE_TEXEL_FRAMES {
            return issue(
                "waves.frames",
                format!("{} frames of {r}² texels = {texels} texel-frames, at most {MAX_WAVE_TEXEL_FRAMES}: lower frames or resolution", w.frames),
            );
        }
        Ok(())
    }

    /// The absorption in effect: the file's, or clear sea water scaled to world units.
    pub fn absorption_per_unit(&self) -> [f64; 3] {
        self.absorption.unwrap_or(CLEAR_SEA_ABSORPTION_PER_METRE.map(|a| a * self.metres_per_unit))
    }

    /// Bytes of the baked wave frames in memory as f32 (surface 16, normal 12, one caustic 4 per
    /// plane per texel and frame), for the pre-bake estimate.
    pub fn wave_bytes(&self) -> u64 {
        let planes = match &self.caustics.depths {
            CausticDepthsSpec::Count(n) => u64::from(*n),
            CausticDepthsSpec::List(d) => d.len() as u64,
        };
        let r = u64::from(self.waves.resolution);
        u64::from(self.waves.frames) * r * r * (16 + 12 + 4 * planes)
    }
}
