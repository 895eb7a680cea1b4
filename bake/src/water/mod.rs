//! Water waves and caustics (issue #19): an ocean spectrum (JONSWAP or Phillips) on a square patch,
//! evaluated by FFT into looping, tiling frames of displacement, Jacobian and normals (Tessendorf 2004
//! with every frequency rounded down to a multiple of 2π/T), and the caustics those frames cast on
//! horizontal planes below the surface (sun light refracted per texel, each refracted cell's flux
//! spread over its image on the plane: the area ratio). Plain data in, plain data out: nothing of
//! worlds, packs or the pipeline.
//!
//! - `spectrum`: the spectra and the keyed Gaussian amplitudes `h0(k)`.
//! - `fft`: a deterministic radix-2 complex FFT (twiddles from `libm`, no SIMD dispatch).
//! - `frames`: `bake_waves`, one frame per time `t_f = f·T/F`.
//! - `caustics`: `bake_caustics` and the automatic choice of receiving depths.
//! - `body`: where the water is, a flood fill of the density volume's air below the level (the bake's
//!   `water-body` product).

pub mod body;
mod caustics;
mod fft;
mod frames;
mod spectrum;

#[cfg(test)]
mod caustics_tests;
#[cfg(test)]
mod fft_tests;
#[cfg(test)]
mod frames_tests;
#[cfg(test)]
mod spectrum_tests;

pub use caustics::{bake_caustics, contrast, CausticBake};
pub use frames::bake_waves;
pub use spectrum::{jonswap, jonswap_peak_frequency, GRAVITY};

use kiln_formats::sections::{MAX_CAUSTIC_DEPTHS, MAX_WAVE_FRAMES, WAVE_RESOLUTION};

/// The ocean spectrum the wave amplitudes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Spectrum {
    /// JONSWAP (Hasselmann et al. 1973): a fetch-limited sea, peak frequency and energy from wind
    /// speed and fetch, spread over directions by a one-sided cos² around the wind.
    Jonswap,
    /// Phillips (Tessendorf 2004): `A·exp(−1/(kL)²)/k⁴·(k̂·ŵ)²`, `L = U²/g`, waves against the
    /// wind removed, small waves damped.
    Phillips,
}

/// What to bake: the spectrum, the patch and the loop. Serialised (JSON) into the stage cache's
/// keys, a defined encoding that two machines agree on.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WaveSpec {
    /// The spectrum's shape.
    pub spectrum: Spectrum,
    /// Wind speed at 10 m above the sea, m/s (0 = still water).
    pub wind_speed: f32,
    /// Degrees counter-clockwise from +X: the direction the wind blows toward.
    pub wind_direction: f32,
    /// Fetch in metres (JONSWAP's peak frequency and energy; unused by Phillips).
    pub fetch: f32,
    /// Horizontal displacement scale λ of the choppy waves; 0 = heights only.
    pub choppiness: f32,
    /// Multiplier on the spectrum's heights (1 = physical, 0 = still water).
    pub amplitude: f32,
    /// Metres per world unit, for the physics (g = 9.81 m/s²).
    pub metres_per_unit: f32,
    /// Side `L` of the periodic patch, world units.
    pub patch_size: f32,
    /// Loop period `T`, seconds.
    pub period: f32,
    /// Frames `F` of the loop.
    pub frames: u32,
    /// Texels `R` per side (a power of two).
    pub resolution: u32,
    /// The world seed; the amplitudes are keyed through `crate::rng` by it and each wave's index.
    pub seed: u64,
}

/// The baked loop: `F` frames of `R²` texels each, frame-major, then rows, x fastest. Texel `(x, y)`
/// belongs to the surface point at rest position `(x, y)·L/R`.
#[derive(Clone, Debug, PartialEq)]
pub struct WaveFrames {
    /// The spec the frames were baked from.
    pub spec: WaveSpec,
    /// Per texel: displacement `(dx, dy, dz)` in world units from the rest position, and the
    /// Jacobian determinant of the horizontal map (below 0 where the surface folds over).
    pub surface: Vec<[f32; 4]>,
    /// Per texel: the unit normal of the displaced surface, z up (mirrored up inside folds).
    pub normals: Vec<[f32; 3]>,
}

/// How the caustics are cast (serialised into cache keys, as [`WaveSpec`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CausticSpec {
    /// Unit direction toward the sun (z > 0).
    pub sun_direction: [f32; 3],
    /// Refractive index of the water (`crate::optics::WATER_IOR`).
    pub ior: f32,
    /// Which receiving planes.
    pub depths: CausticDepths,
}

/// The receiving planes' depths below the mean surface.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum CausticDepths {
    /// This many planes, spread from where the pattern forms to where its contrast has washed out
    /// (`caustics` module documentation).
    Auto(usize),
    /// These depths, world units, increasing.
    Fixed(Vec<f32>),
}

/// Caustic maps, `F·D` of `R²` values (index `((f·D + d)·R + y)·R + x`): the sun's irradiance on the
/// horizontal plane at `depths[d]`, relative to its horizontal irradiance above the water.
#[derive(Clone, Debug, PartialEq)]
pub struct Caustics {
    /// Receiving depths below the mean surface, world units, increasing.
    pub depths: Vec<f32>,
    /// Fresnel transmittance of a flat surface for this sun: the value of every texel under still water.
    pub flat_transmittance: f32,
    /// The maps.
    pub maps: Vec<f32>,
}

/// Why a wave or caustic bake refused its input.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WaterError {
    /// A number outside its range (NaN included).
    #[error("water: {name} = {value} is outside {range}")]
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The accepted range, in words.
        range: &'static str,
    },
    /// The resolution is not a power of two in range.
    #[error("water: resolution {0} is not a power of two in 16..=1024")]
    Resolution(u32),
    /// The frames do not hold `F·R²` texels of their spec.
    #[error("water: wave frames hold {got} texels, their spec says {expected}")]
    FrameSize {
        /// Texels in the frames.
        got: usize,
        /// `F·R²`.
        expected: usize,
    },
}

fn check(name: &'static str, value: f32, ok: bool, range: &'static str) -> Result<(), WaterError> {
    if ok && value.is_finite() {
        Ok(())
    } else {
        Err(WaterError::OutOfRange { name, value: value as f64, range })
    }
}

impl WaveSpec {
    /// Checks every field's range: what `bake_waves` refuses.
    pub fn validate(&self) -> Result<(), WaterError> {
        check("wind_speed", self.wind_speed, (0.0..=100.0).contains(&self.wind_speed), "[0, 100] m/s")?;
        check("wind_direction", self.wind_direction, self.wind_direction.abs() <= 3600.0, "[-3600, 3600] degrees")?;
        check("fetch", self.fetch, (1.0..=1.0e7).contains(&self.fetch), "[1, 1e7] m")?;
        check("choppiness", self.choppiness, (0.0..=4.0).contains(&self.choppiness), "[0, 4]")?;
        check("amplitude", self.amplitude, (0.0..=100.0).contains(&self.amplitude), "[0, 100]")?;
        check("metres_per_unit", self.metres_per_unit, (1.0e-3..=1.0e3).contains(&self.metres_per_unit), "[0.001, 1000]")?;
        check("patch_size", self.patch_size, self.patch_size > 0.0 && self.patch_size <= 1.0e6, "(0, 1e6] units")?;
        check("period", self.period, (0.1..=1.0e4).contains(&self.period), "[0.1, 1e4] s")?;
        if !(1..=MAX_WAVE_FRAMES).contains(&self.frames) {
            return Err(WaterError::OutOfRange { name: "frames", value: self.frames as f64, range: "1..=256" });
        }
        if !self.resolution.is_power_of_two() || !WAVE_RESOLUTION.contains(&self.resolution) {
            return Err(WaterError::Resolution(self.resolution));
        }
        Ok(())
    }

    /// Texels per frame, `R²`.
    pub fn texels(&self) -> usize {
        (self.resolution as usize).pow(2)
    }
}

impl CausticSpec {
    /// Checks the sun, the index and the depths: what `bake_caustics` refuses.
    pub fn validate(&self) -> Result<(), WaterError> {
        let [x, y, z] = self.sun_direction;
        let len = (x * x + y * y + z * z).sqrt();
        check("sun_direction length", len, (len - 1.0).abs() <= 1.0e-3, "unit length")?;
        check("sun_direction z", z, z >= 0.01, "≥ 0.01 (the sun above the horizon)")?;
        check("ior", self.ior, (1.0..=3.0).contains(&self.ior), "[1, 3]")?;
        let count_range = "1..=8 planes";
        match &self.depths {
            CausticDepths::Auto(n) => {
                if !(1..=MAX_CAUSTIC_DEPTHS).contains(n) {
                    return Err(WaterError::OutOfRange { name: "depths", value: *n as f64, range: count_range });
                }
            }
            CausticDepths::Fixed(d) => {
                if !(1..=MAX_CAUSTIC_DEPTHS).contains(&d.len()) {
                    return Err(WaterError::OutOfRange { name: "depths", value: d.len() as f64, range: count_range });
                }
                let mut last = 0.0;
                for &v in d {
                    check("depth", v, v > last && v <= 1.0e6, "increasing, in (0, 1e6] units")?;
                    last = v;
                }
            }
        }
        Ok(())
    }
}
