//! Brush files: edits (add or remove material) replayed after procedural generation.
//!
//! A brush file is TOML holding an array of `[[stroke]]` tables, applied in file order:
//!
//! ```toml
//! [[stroke]]
//! shape = "sphere"        # "sphere" (Euclidean) or "cube" (Chebyshev distance); default sphere
//! falloff = "linear"      # "constant", "linear" or "quadratic"; default constant
//! radius = 0.5            # world units, > 0
//! weight = -1.5           # > 0 adds solid, < 0 removes
//! position = [4.0, 8.0, 1.0]
//! to = [28.0, 8.0, 1.0]   # optional: sweep the brush to here in steps of `spacing`
//! spacing = 0.25          # optional (default radius / 2), only with `to`
//! ```
//!
//! A sweep expands, at load time, into `ceil(length / spacing) + 1` evenly spaced strokes from
//! `position` to `to` inclusive; the expanded ("resolved") strokes are what the density stage
//! replays and what a bake records.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::source::SourceDoc;
use super::WorldError;

/// The region a stroke touches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrushShape {
    /// Voxels whose Euclidean distance to the centre is at most the radius.
    #[default]
    Sphere,
    /// Voxels whose Chebyshev distance (max of |dx|, |dy|, |dz|) is at most the radius.
    Cube,
}

/// How a stroke's weight falls off with normalised distance `r = dist / radius` in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Falloff {
    /// `1` everywhere inside the shape.
    #[default]
    Constant,
    /// `1 - r`.
    Linear,
    /// `(1 - r)^2`: reaches 0 with zero slope at the edge, so the edit blends smoothly.
    Quadratic,
}

impl Falloff {
    /// The factor at normalised distance `r` (clamped to `[0, 1]`).
    #[inline]
    pub fn factor(self, r: f64) -> f64 {
        let r = r.clamp(0.0, 1.0);
        match self {
            Falloff::Constant => 1.0,
            Falloff::Linear => 1.0 - r,
            Falloff::Quadratic => (1.0 - r) * (1.0 - r),
        }
    }
}

/// One resolved edit: `density += weight * falloff(dist / radius)` for samples with
/// `dist <= radius`, then clipped to [-1, 1]. Lengths are in world units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrushStroke {
    /// The region the stroke touches.
    pub shape: BrushShape,
    /// How the weight fades from the centre to the radius.
    pub falloff: Falloff,
    /// Reach of the shape in world units, > 0.
    pub radius: f64,
    /// Density added at the centre: > 0 adds solid, < 0 carves air.
    pub weight: f64,
    /// Centre in world units.
    pub position: [f64; 3],
}

/// Most strokes a brush file may expand to (sweeps included); guards against typos such as a
/// tiny `spacing` turning into an hours-long bake.
pub const MAX_STROKES: usize = 1_000_000;

/// Most sample visits all strokes of a world may make together (each stroke visits its bounding
/// box, one sample of margin, within the volume): a few large strokes, or a million small ones,
/// can otherwise keep the density stage busy for hours.
pub const MAX_BRUSH_WORK: u64 = 1 << 34;

/// Samples of one axis that a stroke at `centre` with `radius` visits (the density stage's box).
fn axis_span(centre: f64, radius: f64, voxel_size: f64, n: u32) -> u64 {
    let lo = (((centre - radius) / voxel_size).floor() - 1.0).max(0.0);
    let hi = (((centre + radius) / voxel_size).ceil() + 1.0).min(f64::from(n) - 1.0);
    if lo <= hi {
        (hi - lo) as u64 + 1
    } else {
        0
    }
}

/// Checks that replaying `strokes` in the world of `spec` stays within [`MAX_BRUSH_WORK`].
pub(crate) fn check_work(strokes: &[BrushStroke], spec: &super::WorldSpec) -> Result<(), String> {
    let vs = spec.volume.voxel_size;
    let [nx, ny, nz] = spec.volume.size;
    let mut work: u64 = 0;
    for s in strokes {
        let [x, y, z] = s.position;
        let r = s.radius;
        // Each span is at most 4096, so the product fits; the sum saturates.
        let box_samples = axis_span(x, r, vs, nx) * axis_span(y, r, vs, ny) * axis_span(z, r, vs, nz);
        work = work.saturating_add(box_samples);
    }
    if work > MAX_BRUSH_WORK {
        return Err(format!(
            "the strokes visit {work} samples in all (each stroke's box within the volume), more than {MAX_BRUSH_WORK}; \
             use fewer or smaller strokes"
        ));
    }
    Ok(())
}

/// A `[[stroke]]` as written in a file (before sweeps are expanded).
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct StrokeEntry {
    #[serde(default)]
    shape: BrushShape,
    #[serde(default)]
    falloff: Falloff,
    radius: f64,
    weight: f64,
    position: [f64; 3],
    to: Option<[f64; 3]>,
    spacing: Option<f64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct BrushFile {
    #[serde(default)]
    stroke: Vec<StrokeEntry>,
}

#[derive(Serialize)]
struct BrushFileOut<'a> {
    stroke: &'a [BrushStroke],
}

/// Parses a brush file's text; errors name `file`, the stroke (`stroke[2].radius`) and its line.
pub fn parse_brushes(text: &str, file: &Path) -> Result<Vec<BrushStroke>, WorldError> {
    let src = SourceDoc::new(file, text);
    let parsed: BrushFile = toml::from_str(text).map_err(|e| src.error_from_toml(&e))?;
    src.check_array_lengths(&parsed)?;
    let mut strokes = Vec::new();
    for (i, entry) in parsed.stroke.iter().enumerate() {
        let key = |k: &str| format!("stroke[{i}].{k}");
        let bad = |k: &str, msg: String| src.error_at_key(&key(k), msg);
        if !(entry.radius.is_finite() && entry.radius > 0.0) {
            return Err(bad("radius", format!("must be a positive number of world units; got {}", entry.radius)));
        }
        if !entry.weight.is_finite() {
            return Err(bad("weight", format!("must be a finite number; got {}", entry.weight)));
        }
        if entry.position.iter().any(|c| !c.is_finite()) {
            return Err(bad("position", format!("must be finite world coordinates; got {:?}", entry.position)));
        }
        let stroke = BrushStroke { shape: entry.shape, falloff: entry.falloff, radius: entry.radius, weight: entry.weight, position: entry.position };
        let Some(to) = entry.to else {
            if entry.spacing.is_some() {
                return Err(bad("spacing", "is only used together with `to` (a sweep)".into()));
            }
            strokes.push(stroke);
            if strokes.len() > MAX_STROKES {
                return Err(bad("position", format!("the file expands to more than {MAX_STROKES} strokes")));
            }
            continue;
        };
        if to.iter().any(|c| !c.is_finite()) {
            return Err(bad("to", format!("must be finite world coordinates; got {to:?}")));
        }
        let spacing = entry.spacing.unwrap_or(entry.radius * 0.5);
        if !(spacing.is_finite() && spacing > 0.0) {
            return Err(bad("spacing", format!("must be a positive number of world units; got {spacing}")));
        }
        let delta = [to[0] - entry.position[0], to[1] - entry.position[1], to[2] - entry.position[2]];
        let length = (delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2]).sqrt();
        let steps = (length / spacing).ceil();
        if steps + 1.0 > (MAX_STROKES - strokes.len()) as f64 {
            return Err(bad("spacing", format!("the sweep of length {length} at spacing {spacing} exceeds {MAX_STROKES} strokes in all")));
        }
        let steps = (steps as usize).max(1);
        for k in 0..=steps {
            let t = k as f64 / steps as f64;
            let position = std::array::from_fn(|a| entry.position[a] + delta[a] * t);
            strokes.push(BrushStroke { position, ..stroke });
        }
    }
    Ok(strokes)
}

/// The resolved strokes as a brush file (sweeps already expanded); parsing it gives them back
/// exactly. A bake embeds and hashes this text.
pub fn strokes_to_toml(strokes: &[BrushStroke]) -> String {
    toml::to_string(&BrushFileOut { stroke: strokes }).expect("brush strokes always serialise to TOML")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<BrushStroke>, WorldError> {
        parse_brushes(text, Path::new("b.toml"))
    }

    #[test]
    fn strokes_parse_with_defaults_and_round_trip() {
        let s = parse(
            "[[stroke]]\nradius = 1\nweight = -2\nposition = [1, 2, 3]\n\
                       [[stroke]]\nshape = 'cube'\nfalloff = 'quadratic'\nradius = 0.5\nweight = 0.25\nposition = [0.1, 0.2, 0.3]\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].shape, s[0].falloff), (BrushShape::Sphere, Falloff::Constant));
        assert_eq!(s[1].position, [0.1, 0.2, 0.3]);
        assert_eq!(parse(&strokes_to_toml(&s)).unwrap(), s);
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn sweeps_expand_evenly_and_end_exactly() {
        let s = parse("[[stroke]]\nradius = 1\nweight = -1\nposition = [0, 0, 0]\nto = [2, 0, 0]\nspacing = 0.3\n").unwrap();
        assert_eq!(s.len(), 8); // ceil(2 / 0.3) = 7 steps, 8 strokes
        assert_eq!(s[0].position, [0.0, 0.0, 0.0]);
        assert_eq!(s[7].position, [2.0, 0.0, 0.0]);
        let gap = s[1].position[0] - s[0].position[0];
        assert!((gap - 2.0 / 7.0).abs() < 1e-12);
        // Default spacing is radius / 2.
        assert_eq!(parse("[[stroke]]\nradius = 1\nweight = -1\nposition = [0,0,0]\nto = [0,0,2]\n").unwrap().len(), 5);
    }

    #[test]
    fn bad_strokes_name_file_stroke_key_and_line() {
        let text = "[[stroke]]\nradius = 1\nweight = 1\nposition = [0,0,0]\n\n[[stroke]]\nradius = -2\nweight = 1\nposition = [0,0,0]\n";
        let msg = parse(text).unwrap_err().to_string();
        assert_eq!(msg, "b.toml:7:10: stroke[1].radius: must be a positive number of world units; got -2");

        let msg = parse("[[stroke]]\nradius = 1\nweight = 1\nposition = [0,0,0]\nshape = 'cone'\n").unwrap_err().to_string();
        assert!(msg.starts_with("b.toml:5:9: stroke[0].shape: unknown variant `cone`"), "{msg}");

        let msg = parse("[[stroke]]\nradius = 1\nweight = 1\nposition = [0,0,0]\ncolour = 3\n").unwrap_err().to_string();
        assert!(msg.starts_with("b.toml:5:1: stroke[0].colour: unknown field `colour`"), "{msg}");

        let msg = parse("[[stroke]]\nradius = 1\nposition = [0,0,0]\n").unwrap_err().to_string();
        assert!(msg.starts_with("b.toml:1:1: stroke[0].weight: missing field `weight`"), "{msg}");

        let msg = parse("[[stroke]]\nradius = 1\nweight = 1\nposition = [0,0]\n").unwrap_err().to_string();
        assert!(msg.starts_with("b.toml:4:12: stroke[0].position: invalid length 2"), "{msg}");

        let msg = parse("[[stroke]]\nradius = 1\nweight = 1\nposition = [0,0,0]\nspacing = 1\n").unwrap_err().to_string();
        assert!(msg.starts_with("b.toml:5:11: stroke[0].spacing: is only used together with `to`"), "{msg}");

        let msg = parse("[[stroke]]\nradius = 1\nweight = 1\nposition = [0,0,0]\nto = [1e9,0,0]\nspacing = 1e-3\n").unwrap_err().to_string();
        assert!(msg.contains("stroke[0].spacing") && msg.contains("exceeds"), "{msg}");
    }

    #[test]
    fn brush_work_is_bounded() {
        let spec: super::super::WorldSpec = toml::from_str("name = 'w'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n").unwrap();
        let stroke = |r: f64| BrushStroke { shape: BrushShape::Cube, falloff: Falloff::Constant, radius: r, weight: 1.0, position: [8.0, 8.0, 4.0] };
        // A whole-volume stroke visits 64 * 64 * 32 = 2^17 samples; 2^17 of them are exactly the limit.
        let whole = vec![stroke(1e9); 1 << 17];
        assert!(check_work(&whole, &spec).is_ok());
        let mut over = whole;
        over.push(stroke(0.1));
        assert!(check_work(&over, &spec).unwrap_err().contains("more than 17179869184"));
        // Strokes outside the volume cost nothing.
        let outside = BrushStroke { position: [-100.0, 0.0, 0.0], ..stroke(1.0) };
        assert!(check_work(&vec![outside; MAX_STROKES], &spec).is_ok());
    }

    #[test]
    fn falloff_factors() {
        assert_eq!(Falloff::Constant.factor(1.0), 1.0);
        assert_eq!(Falloff::Linear.factor(0.25), 0.75);
        assert_eq!(Falloff::Quadratic.factor(0.5), 0.25);
        assert_eq!(Falloff::Quadratic.factor(1.0), 0.0);
    }
}
