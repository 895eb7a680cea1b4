//! The `[lighting]` table of a world file.
//!
//! Units: positions and lengths in world units; colours are linear RGB multipliers; intensities
//! are chosen so that "irradiance" (E, power per area) comes out directly: a surface facing a
//! uniform sky of radiance L with nothing in the way receives E = π·L, a surface facing the sun
//! receives `sun.intensity · sun.color`, and so on. Every key has a default, unknown keys are
//! errors, and [`LightingSpec::validate`] names the offending key path.
//!
//! ```toml
//! [lighting]
//! time_of_day = 10.0
//! bounces = 4
//! [lighting.sky]
//! color = [0.6, 0.75, 1.0]
//! [[lighting.lights]]
//! kind = "point"
//! position = [16.0, 16.0, 1.5]
//! radius = 0.1
//! intensity = 2.0
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

/// The whole lighting specification (the world file's `[lighting]` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LightingSpec {
    /// `sky`: the uniform sky dome over the upper hemisphere (below the horizon is black).
    pub sky: SkySpec,
    /// `time_of_day`: hours in [0, 24), default 10. Places the sun (rises at 6 toward
    /// `sun.azimuth`, overhead at 12, sets at 18) and the moon (the same path 12 hours later).
    pub time_of_day: f32,
    /// `sun`: directional light. Defaults: colour [1.0, 0.95, 0.85], intensity 6, azimuth 60.
    pub sun: SunSpec,
    /// `moon`: directional light. Defaults: colour [0.6, 0.7, 1.0], intensity 0.1, azimuth 60.
    pub moon: MoonSpec,
    /// `albedo`: diffuse reflectance of surfaces without a `materials` entry, each channel in
    /// [0, 1]; default [0.5, 0.5, 0.5].
    pub albedo: [f32; 3],
    /// `materials`: per-material albedo overrides, `[[lighting.materials]] id = 1, albedo = [..]`;
    /// ids unique, in [0, 65535]. Default empty.
    pub materials: Vec<MaterialAlbedo>,
    /// `bounces`: diffuse reflections followed after the first hit, 0..=64, default 4. Paths
    /// continue by Russian roulette or splitting (see the module docs), so this only truncates the
    /// tail.
    pub bounces: u32,
    /// `paths_per_area`: light paths traced per square world unit of surface, in (0, 1e6],
    /// default 4000. Bake time and noise scale with it (noise ∝ 1/√paths).
    pub paths_per_area: f32,
    /// `smoothing`: iterations of the normal-aware mesh filter that turns photon deposits into
    /// per-vertex irradiance, 0..=256, default 24. The footprint covers about `smoothing`
    /// vertices' worth of area around each vertex (a spread of about √(smoothing/2) edges) and
    /// never reaches further than `smoothing` edges along the surface. Noise falls as
    /// 1/√smoothing but light bleeds further into dark places (cave mouths): on the test cave
    /// world 24 was the best balance; 48 halves bright-area noise but triples the error in dim
    /// areas. 0 keeps raw per-vertex estimates.
    pub smoothing: u32,
    /// `noise_seed`: mixed into the world seed for the lighting's random numbers only, default 0.
    /// Bakes that differ only here are independent estimates of the same lighting, with the same
    /// terrain: for measuring the noise, or for an independent reference.
    pub noise_seed: u64,
    /// `lights`: static lights, `[[lighting.lights]]` with `kind = "point" | "spot" | "line"`.
    /// Only lights with `indirect = true` take part in the bake. Default none.
    pub lights: Vec<LightSpec>,
}

impl Default for LightingSpec {
    fn default() -> Self {
        LightingSpec {
            sky: SkySpec::default(),
            time_of_day: 10.0,
            sun: SunSpec::default(),
            moon: MoonSpec::default(),
            albedo: [0.5; 3],
            materials: Vec::new(),
            bounces: 4,
            paths_per_area: 4000.0,
            smoothing: 24,
            noise_seed: 0,
            lights: Vec::new(),
        }
    }
}

/// `[lighting.sky]`: sky radiance L = `color · intensity` from every direction above the horizon.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SkySpec {
    /// `color`: linear RGB, each ≥ 0, default [0.6, 0.75, 1.0].
    pub color: [f32; 3],
    /// `intensity`: ≥ 0, default 1. 0 turns the sky off.
    pub intensity: f32,
}

impl Default for SkySpec {
    fn default() -> Self {
        SkySpec { color: [0.6, 0.75, 1.0], intensity: 1.0 }
    }
}

/// Defines a directional light type (sun or moon) with its own defaults; serde cannot derive
/// for const generics and field-level defaults would not cover partially given tables.
macro_rules! celestial {
    ($(#[$doc:meta])* $name:ident, color: $color:expr, intensity: $intensity:expr, rises_at: $rise:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            /// `color`: linear RGB, each >= 0.
            pub color: [f32; 3],
            /// `intensity`: irradiance on a surface facing it (per unit colour), >= 0; 0 turns it off.
            pub intensity: f32,
            /// `azimuth`: degrees counter-clockwise from +X of the point where it rises, default
            /// 60; any finite value.
            pub azimuth: f32,
            /// `direction`: optional explicit direction *toward* the light (need not be
            /// normalised, non-zero); overrides `time_of_day` and `azimuth`. Off when z <= 0.
            pub direction: Option<[f32; 3]>,
        }

        impl Default for $name {
            fn default() -> Self {
                $name { color: $color, intensity: $intensity, azimuth: 60.0, direction: None }
            }
        }

        impl $name {
            /// Unit direction toward the light at `time_of_day`, or `None` when it is dark or
            /// below the horizon. Its path is a half circle in the vertical plane through
            /// `azimuth`: on the horizon at the azimuth when it rises, overhead 6 hours later,
            /// on the opposite horizon 12 hours after rising.
            pub fn direction_at(&self, time_of_day: f32) -> Option<[f32; 3]> {
                direction(self.color, self.intensity, self.azimuth, self.direction, time_of_day - $rise)
            }
        }
    };
}

celestial!(
    /// `[lighting.sun]`: defaults colour [1.0, 0.95, 0.85], intensity 6; rises at 6 h.
    SunSpec, color: [1.0, 0.95, 0.85], intensity: 6.0, rises_at: 6.0
);
celestial!(
    /// `[lighting.moon]`: defaults colour [0.6, 0.7, 1.0], intensity 0.1; rises at 18 h.
    MoonSpec, color: [0.6, 0.7, 1.0], intensity: 0.1, rises_at: 18.0
);

fn direction(color: [f32; 3], intensity: f32, azimuth: f32, explicit: Option<[f32; 3]>, hours_up: f32) -> Option<[f32; 3]> {
    if intensity <= 0.0 || color.iter().all(|&c| c <= 0.0) {
        return None;
    }
    let d = explicit.unwrap_or_else(|| {
        let theta = hours_up / 12.0 * std::f32::consts::PI;
        let az = azimuth.to_radians();
        [theta.cos() * az.cos(), theta.cos() * az.sin(), theta.sin()]
    });
    let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    // A light skimming the horizon lights nothing; the margin avoids near-parallel beams.
    (len > 0.0 && d[2] / len > 1e-4).then(|| d.map(|c| c / len))
}

/// `[[lighting.materials]]`: albedo of one material id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaterialAlbedo {
    /// `id`: the mesh's per-triangle material id, default 0.
    pub id: u16,
    /// `albedo`: each channel in [0, 1], default [0.5, 0.5, 0.5].
    pub albedo: [f32; 3],
}

impl Default for MaterialAlbedo {
    fn default() -> Self {
        MaterialAlbedo { id: 0, albedo: [0.5; 3] }
    }
}

/// `[[lighting.lights]]`: one static light, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LightSpec {
    /// `kind = "point"`.
    Point(PointLight),
    /// `kind = "spot"`.
    Spot(SpotLight),
    /// `kind = "line"`.
    Line(LineLight),
}

impl LightSpec {
    /// Whether the light takes part in the bake.
    pub fn indirect(&self) -> bool {
        match self {
            LightSpec::Point(l) => l.indirect,
            LightSpec::Spot(l) => l.indirect,
            LightSpec::Line(l) => l.indirect,
        }
    }
}

/// A glowing sphere. A surface at distance d facing it receives `intensity · color / d²`
/// (exact outside the sphere); total power 4π·intensity per unit colour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PointLight {
    /// `position`: centre, default [0, 0, 0].
    pub position: [f32; 3],
    /// `radius`: sphere radius > 0, default 0.1 (soft shadows grow with it).
    pub radius: f32,
    /// `color`: linear RGB, each ≥ 0, default [1, 1, 1].
    pub color: [f32; 3],
    /// `intensity`: radiant intensity ≥ 0, default 1.
    pub intensity: f32,
    /// `indirect`: whether the bake includes this light, default true.
    pub indirect: bool,
}

impl Default for PointLight {
    fn default() -> Self {
        PointLight { position: [0.0; 3], radius: 0.1, color: [1.0; 3], intensity: 1.0, indirect: true }
    }
}

/// A point light restricted to a cone. Emits from a disk of `radius` across the axis, with
/// on-axis intensity `intensity · color`, constant to `angle · (1 - softness)` and fading
/// smoothly to zero at `angle`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpotLight {
    /// `position`: default [0, 0, 0].
    pub position: [f32; 3],
    /// `direction`: beam axis, non-zero, default [0, 0, -1].
    pub direction: [f32; 3],
    /// `angle`: beam half-angle in degrees, in (0, 180], default 30.
    pub angle: f32,
    /// `softness`: fraction of `angle` over which the beam fades, in [0, 1], default 0.2.
    pub softness: f32,
    /// `radius`: > 0, default 0.1.
    pub radius: f32,
    /// `color`: linear RGB, each ≥ 0, default [1, 1, 1].
    pub color: [f32; 3],
    /// `intensity`: on-axis radiant intensity ≥ 0, default 1.
    pub intensity: f32,
    /// `indirect`: default true.
    pub indirect: bool,
}

impl Default for SpotLight {
    fn default() -> Self {
        SpotLight {
            position: [0.0; 3],
            direction: [0.0, 0.0, -1.0],
            angle: 30.0,
            softness: 0.2,
            radius: 0.1,
            color: [1.0; 3],
            intensity: 1.0,
            indirect: true,
        }
    }
}

/// A glowing tube from `start` to `end` (end caps do not emit). `intensity` is the radiant
/// intensity per unit length seen broadside: a surface at distance d ≪ length facing the middle
/// of the tube receives about (π/2)·intensity·color/d; total power π²·intensity·length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LineLight {
    /// `start`: default [0, 0, 0].
    pub start: [f32; 3],
    /// `end`: default [1, 0, 0]; must differ from `start`.
    pub end: [f32; 3],
    /// `radius`: tube radius > 0, default 0.05.
    pub radius: f32,
    /// `color`: linear RGB, each ≥ 0, default [1, 1, 1].
    pub color: [f32; 3],
    /// `intensity`: ≥ 0, default 1.
    pub intensity: f32,
    /// `indirect`: default true.
    pub indirect: bool,
}

impl Default for LineLight {
    fn default() -> Self {
        LineLight { start: [0.0; 3], end: [1.0, 0.0, 0.0], radius: 0.05, color: [1.0; 3], intensity: 1.0, indirect: true }
    }
}

/// One problem found by [`LightingSpec::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Key path from the world file's root, e.g. `lighting.lights[2].radius`.
    pub path: String,
    /// What is wrong, e.g. `must be > 0`.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

struct Checker {
    errors: Vec<SpecError>,
}

impl Checker {
    fn fail(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(SpecError { path: format!("lighting.{path}"), message: message.into() });
    }
    fn range(&mut self, path: &str, v: f32, lo: f32, hi: f32) {
        if !(v >= lo && v <= hi) {
            self.fail(path, format!("must be in [{lo}, {hi}] (is {v})"));
        }
    }
    fn positive(&mut self, path: &str, v: f32, max: f32) {
        if !(v > 0.0 && v <= max) {
            self.fail(path, format!("must be in (0, {max}] (is {v})"));
        }
    }
    fn intensity(&mut self, path: &str, v: f32) {
        self.range(path, v, 0.0, MAX_INTENSITY);
    }
    fn color(&mut self, path: &str, c: [f32; 3]) {
        if !c.iter().all(|v| (0.0..=MAX_COLOR).contains(v)) {
            self.fail(path, format!("components must be in [0, {MAX_COLOR}] (is {c:?})"));
        }
    }
    fn position(&mut self, path: &str, p: [f32; 3]) {
        if !p.iter().all(|v| v.abs() <= MAX_COORDINATE) {
            self.fail(path, format!("components must be finite, within ±{MAX_COORDINATE:e} (is {p:?})"));
        }
    }
    /// A direction that normalises to a unit vector in f32: finite, not too long to square, not
    /// so short that its length underflows (a tiny non-zero direction used to turn a light off).
    fn direction(&mut self, path: &str, d: [f32; 3]) {
        let len = d.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>().sqrt();
        if !(d.iter().all(|v| v.abs() <= MAX_COORDINATE) && len >= f64::from(MIN_DIRECTION_LENGTH)) {
            self.fail(
                path,
                format!(
                    "must be finite, components within ±{MAX_COORDINATE:e}, length at least {MIN_DIRECTION_LENGTH:e} \
                     (is {d:?})"
                ),
            );
        }
    }
    fn celestial(&mut self, name: &str, color: [f32; 3], intensity: f32, azimuth: f32, direction: Option<[f32; 3]>) {
        self.color(&format!("{name}.color"), color);
        self.intensity(&format!("{name}.intensity"), intensity);
        // `contains` is false for NaN too.
        if !(-MAX_AZIMUTH..=MAX_AZIMUTH).contains(&azimuth) {
            let message = format!("must be in [-{MAX_AZIMUTH}, {MAX_AZIMUTH}] degrees (is {azimuth})");
            self.fail(&format!("{name}.azimuth"), message);
        }
        if let Some(d) = direction {
            self.direction(&format!("{name}.direction"), d);
        }
    }
}

/// Largest intensity of any light or the sky: with colours up to [`MAX_COLOR`] and worlds up to
/// 4096 voxels of 1000 units, emitted power stays far below f32's limit (3.4e38 overflowed).
pub const MAX_INTENSITY: f32 = 1e6;
/// Largest colour component.
pub const MAX_COLOR: f32 = 1e3;
/// Largest absolute light position or direction component, world units.
pub const MAX_COORDINATE: f32 = 1e7;
/// Shortest accepted direction vector (it is normalised).
pub const MIN_DIRECTION_LENGTH: f32 = 1e-6;
/// Largest absolute azimuth, degrees.
pub const MAX_AZIMUTH: f32 = 720.0;
/// Largest light radius, world units.
pub const MAX_LIGHT_RADIUS: f32 = 1e6;
/// Most `[[lighting.lights]]` entries.
pub const MAX_LIGHTS: usize = 1024;

impl LightingSpec {
    /// Checks every value; the errors name the key path (`lighting.lights[2].radius: must be > 0`).
    pub fn validate(&self) -> Result<(), Vec<SpecError>> {
        let mut c = Checker { errors: Vec::new() };
        c.color("sky.color", self.sky.color);
        c.intensity("sky.intensity", self.sky.intensity);
        if !(self.time_of_day >= 0.0 && self.time_of_day < 24.0) {
            c.fail("time_of_day", format!("must be in [0, 24) (is {})", self.time_of_day));
        }
        let (sun, moon) = (&self.sun, &self.moon);
        c.celestial("sun", sun.color, sun.intensity, sun.azimuth, sun.direction);
        c.celestial("moon", moon.color, moon.intensity, moon.azimuth, moon.direction);
        for (i, a) in self.albedo.iter().enumerate() {
            c.range(&format!("albedo[{i}]"), *a, 0.0, 1.0);
        }
        // A bitmap of ids seen: 65536 entries would make a pairwise search quadratic.
        let mut seen = vec![false; usize::from(u16::MAX) + 1];
        for (m, mat) in self.materials.iter().enumerate() {
            for (i, a) in mat.albedo.iter().enumerate() {
                c.range(&format!("materials[{m}].albedo[{i}]"), *a, 0.0, 1.0);
            }
            if std::mem::replace(&mut seen[usize::from(mat.id)], true) {
                c.fail(&format!("materials[{m}].id"), format!("duplicate id {}", mat.id));
            }
        }
        if self.lights.len() > MAX_LIGHTS {
            c.fail("lights", format!("at most {MAX_LIGHTS} lights (is {})", self.lights.len()));
        }
        if self.bounces > 64 {
            c.fail("bounces", format!("must be in [0, 64] (is {})", self.bounces));
        }
        if !(self.paths_per_area > 0.0 && self.paths_per_area <= 1e6) {
            c.fail("paths_per_area", format!("must be in (0, 1e6] (is {})", self.paths_per_area));
        }
        if self.smoothing > 256 {
            c.fail("smoothing", format!("must be in [0, 256] (is {})", self.smoothing));
        }
        for (i, light) in self.lights.iter().enumerate() {
            let p = |key: &str| format!("lights[{i}].{key}");
            match light {
                LightSpec::Point(l) => {
                    c.position(&p("position"), l.position);
                    c.positive(&p("radius"), l.radius, MAX_LIGHT_RADIUS);
                    c.color(&p("color"), l.color);
                    c.intensity(&p("intensity"), l.intensity);
                }
                LightSpec::Spot(l) => {
                    c.position(&p("position"), l.position);
                    c.direction(&p("direction"), l.direction);
                    if !(l.angle > 0.0 && l.angle <= 180.0) {
                        c.fail(&p("angle"), format!("must be in (0, 180] (is {})", l.angle));
                    }
                    c.range(&p("softness"), l.softness, 0.0, 1.0);
                    c.positive(&p("radius"), l.radius, MAX_LIGHT_RADIUS);
                    c.color(&p("color"), l.color);
                    c.intensity(&p("intensity"), l.intensity);
                }
                LightSpec::Line(l) => {
                    c.position(&p("start"), l.start);
                    c.position(&p("end"), l.end);
                    let len = (0..3).map(|a| f64::from(l.end[a] - l.start[a]).powi(2)).sum::<f64>().sqrt();
                    if len.is_nan() || len < f64::from(MIN_DIRECTION_LENGTH) {
                        c.fail(&p("end"), format!("must differ from start by at least {MIN_DIRECTION_LENGTH:e}"));
                    }
                    c.positive(&p("radius"), l.radius, MAX_LIGHT_RADIUS);
                    c.color(&p("color"), l.color);
                    c.intensity(&p("intensity"), l.intensity);
                }
            }
        }
        if c.errors.is_empty() {
            Ok(())
        } else {
            Err(c.errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LightingSpec, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn empty_table_gives_valid_defaults() {
        let spec = parse("").unwrap();
        assert_eq!(spec, LightingSpec::default());
        assert_eq!(spec.validate(), Ok(()));
        // At 10:00 the sun is up and the moon (12 h later on the same path) is down.
        let sun = spec.sun.direction_at(spec.time_of_day).unwrap();
        assert!(sun[2] > 0.5 && (sun.iter().map(|c| c * c).sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(spec.moon.direction_at(spec.time_of_day).is_none());
        assert!(spec.moon.direction_at(22.0).is_some() && spec.sun.direction_at(22.0).is_none());
    }

    #[test]
    fn lights_and_partial_tables_parse() {
        let spec = parse(
            r#"
            time_of_day = 12.0
            [sun]
            intensity = 2.0
            [moon]
            direction = [0.0, 1.0, 1.0]
            [[materials]]
            id = 3
            albedo = [0.2, 0.3, 0.4]
            [[lights]]
            kind = "point"
            position = [1.0, 2.0, 3.0]
            [[lights]]
            kind = "spot"
            direction = [0.0, 1.0, 0.0]
            angle = 45.0
            indirect = false
            [[lights]]
            kind = "line"
            end = [0.0, 0.0, 2.0]
            "#,
        )
        .unwrap();
        assert_eq!(spec.sun.intensity, 2.0);
        assert_eq!(spec.sun.color, SunSpec::default().color);
        assert_eq!(spec.moon.intensity, MoonSpec::default().intensity);
        let overhead = spec.sun.direction_at(12.0).unwrap();
        assert!((overhead[2] - 1.0).abs() < 1e-6);
        let moon = spec.moon.direction_at(3.0).unwrap();
        assert!((moon[1] - moon[2]).abs() < 1e-6);
        assert_eq!(spec.lights.len(), 3);
        assert!(matches!(&spec.lights[0], LightSpec::Point(p) if p.position == [1.0, 2.0, 3.0] && p.radius == 0.1));
        assert!(!spec.lights[1].indirect() && spec.lights[2].indirect());
        assert_eq!(spec.validate(), Ok(()));
    }

    #[test]
    fn unknown_keys_are_rejected() {
        assert!(parse("bounce = 3").is_err());
        assert!(parse("[sun]\nelevation = 3.0").is_err());
        assert!(parse("[[lights]]\nkind = \"point\"\nrange = 3.0").is_err());
        assert!(parse("[[lights]]\nkind = \"area\"").is_err());
    }

    #[test]
    fn validate_names_key_paths() {
        let mut spec = LightingSpec::default();
        spec.lights.push(LightSpec::Point(PointLight::default()));
        spec.lights.push(LightSpec::Line(LineLight { end: [0.0; 3], ..LineLight::default() }));
        spec.lights.push(LightSpec::Point(PointLight { radius: 0.0, ..PointLight::default() }));
        spec.lights.push(LightSpec::Spot(SpotLight { angle: 0.0, direction: [0.0; 3], ..SpotLight::default() }));
        spec.albedo[1] = 1.5;
        spec.time_of_day = 24.0;
        spec.sky.intensity = f32::NAN;
        spec.materials = vec![MaterialAlbedo::default(), MaterialAlbedo::default()];
        let errors: Vec<String> = spec.validate().unwrap_err().iter().map(|e| e.to_string()).collect();
        let expect = [
            "lighting.sky.intensity: must be in [0, 1000000]",
            "lighting.time_of_day: must be in [0, 24)",
            "lighting.albedo[1]: must be in [0, 1]",
            "lighting.materials[1].id: duplicate id 0",
            "lighting.lights[1].end: must differ from start",
            "lighting.lights[2].radius: must be in (0, 1000000]",
            "lighting.lights[3].direction: must be finite, components within",
            "lighting.lights[3].angle: must be in (0, 180]",
        ];
        assert_eq!(errors.len(), expect.len(), "{errors:#?}");
        for (e, x) in errors.iter().zip(expect) {
            assert!(e.starts_with(x), "{e} does not start with {x}");
        }
    }
}
