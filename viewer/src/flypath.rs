//! Camera paths for `--fly` (CSV rows `t,x,y,z,yaw,pitch`, degrees) and the frame-time statistics
//! written by `--stats`.

use std::path::Path;

use glam::Vec3;
use serde::Serialize;

use crate::camera::CameraPose;
use crate::error::ViewerError;

/// One row of a camera path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathPoint {
    /// Seconds since the start of the path (used for the camera velocity the streamer predicts with).
    pub t: f64,
    pub pose: CameraPose,
}

/// Parses a camera path. Blank lines and `#` comments are skipped, and so is a first line that is
/// a header (its first field not a number). Times must be finite and non-decreasing.
pub fn parse(text: &str, path: &Path) -> Result<Vec<PathPoint>, ViewerError> {
    let err = |line: usize, reason: String| ViewerError::FlyPath { path: path.to_owned(), line, reason };
    let mut points: Vec<PathPoint> = Vec::new();
    let first = first_content_line(text);
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if i == first && fields[0].parse::<f64>().is_err() {
            continue; // header
        }
        if fields.len() != 6 {
            return Err(err(i + 1, format!("expected 6 fields t,x,y,z,yaw,pitch, found {}", fields.len())));
        }
        let mut v = [0f64; 6];
        for (k, f) in fields.iter().enumerate() {
            v[k] = f.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| err(i + 1, format!("field {} ({f:?}) is not a finite number", k + 1)))?;
        }
        if let Some(prev) = points.last() {
            if v[0] < prev.t {
                return Err(err(i + 1, format!("time {} goes backwards (previous row: {})", v[0], prev.t)));
            }
        }
        points.push(PathPoint {
            t: v[0],
            pose: CameraPose { position: Vec3::new(v[1] as f32, v[2] as f32, v[3] as f32), yaw_deg: v[4] as f32, pitch_deg: v[5] as f32 },
        });
    }
    if points.is_empty() {
        return Err(err(0, "the camera path has no rows".into()));
    }
    Ok(points)
}

fn first_content_line(text: &str) -> usize {
    text.lines().position(|l| !l.trim().is_empty() && !l.trim().starts_with('#')).unwrap_or(0)
}

/// Reads and parses a camera path file.
pub fn load(path: &Path) -> Result<Vec<PathPoint>, ViewerError> {
    let text = std::fs::read_to_string(path).map_err(|e| ViewerError::File { path: path.to_owned(), reason: e.to_string() })?;
    parse(&text, path)
}

/// Frame-time percentiles in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

/// Nearest-rank percentiles of `ms` (which need not be sorted); all zero when empty.
pub fn percentiles(ms: &[f64]) -> Percentiles {
    if ms.is_empty() {
        return Percentiles { p50: 0.0, p90: 0.0, p99: 0.0, max: 0.0, mean: 0.0 };
    }
    let mut s = ms.to_vec();
    s.sort_by(f64::total_cmp);
    // Nearest rank: the smallest value with at least p% of the samples at or below it.
    let rank = |p: f64| s[((p / 100.0 * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    Percentiles { p50: rank(50.0), p90: rank(90.0), p99: rank(99.0), max: s[s.len() - 1], mean: s.iter().sum::<f64>() / s.len() as f64 }
}

/// Frames slower than twice the median: the stutters a user notices.
pub fn hitches(ms: &[f64]) -> usize {
    let median = percentiles(ms).p50;
    ms.iter().filter(|&&m| m > 2.0 * median).count()
}

/// The `--stats` report of a fly-through.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlyStats {
    pub frames: usize,
    pub frame_ms: Percentiles,
    /// Frames over twice the median frame time.
    pub hitches: usize,
    pub hitch_threshold_ms: f64,
    pub tiles_streamed: u64,
    pub bytes_uploaded: u64,
    pub peak_resident_bytes: u64,
    pub failed_tiles: usize,
    /// Per frame, averaged: tiles and triangles drawn in the view after frustum culling.
    pub mean_drawn_tiles: f64,
    pub mean_drawn_triangles: f64,
    pub size: [u32; 2],
    pub mode: String,
    pub adapter: String,
}

impl FlyStats {
    /// Writes the report as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), ViewerError> {
        let json = serde_json::to_vec_pretty(self).map_err(|e| ViewerError::File { path: path.to_owned(), reason: e.to_string() })?;
        kiln_formats::write_atomic(path, &json).map_err(|e| ViewerError::File { path: path.to_owned(), reason: e.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Vec<PathPoint>, ViewerError> {
        parse(text, Path::new("path.csv"))
    }

    #[test]
    fn parses_rows_with_header_comments_and_blanks() {
        let pts = p("# a fly-through\nt,x,y,z,yaw,pitch\n0,1,2,3,90,-10\n\n0.5, 4,5,6, 180 ,0\n").unwrap();
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[1].t, 0.5);
        assert_eq!(pts[1].pose.position, Vec3::new(4.0, 5.0, 6.0));
        assert_eq!((pts[0].pose.yaw_deg, pts[0].pose.pitch_deg), (90.0, -10.0));
    }

    #[test]
    fn bad_rows_name_their_line() {
        let e = p("0,1,2,3,4,5\n1,1,2,3,4\n").unwrap_err().to_string();
        assert!(e.starts_with("path.csv:2:"), "{e}");
        let e = p("0,1,2,3,4,5\nx,1,2,3,4,5\n").unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("field 1"), "a header is only allowed first: {e}");
        let e = p("1,1,2,3,4,5\n0,1,2,3,4,5\n").unwrap_err().to_string();
        assert!(e.contains("backwards"), "{e}");
        assert!(p("t,x,y,z,yaw,pitch\n").is_err());
        assert!(p("0,1,2,inf,4,5\n").is_err());
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let ms: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let q = percentiles(&ms);
        assert_eq!((q.p50, q.p90, q.p99, q.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(q.mean, 50.5);
        assert_eq!(percentiles(&[7.0]).p99, 7.0);
        assert_eq!(percentiles(&[]).max, 0.0);
    }

    #[test]
    fn hitches_are_frames_over_twice_the_median() {
        assert_eq!(hitches(&[10.0, 10.0, 10.0, 20.0, 20.1, 35.0]), 2);
        assert_eq!(hitches(&[5.0; 10]), 0);
    }
}
