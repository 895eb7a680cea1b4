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
    /// Where the camera is and looks at that time.
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
            v[k] = f
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(i + 1, format!("field {} ({f:?}) is not a finite number", k + 1)))?;
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
    /// Median (nearest rank).
    pub p50: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Slowest sample.
    pub max: f64,
    /// Arithmetic mean.
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
    over_median(ms, 2.0)
}

/// Frames slower than `factor` times the median.
pub fn over_median(ms: &[f64], factor: f64) -> usize {
    let median = percentiles(ms).p50;
    ms.iter().filter(|&&m| m > factor * median).count()
}

/// Where one frame's time went. CPU phases are wall-clock on the render thread; GPU times come
/// from timestamp queries (zero where the adapter has none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FrameRecord {
    /// Index in the camera path.
    pub frame: usize,
    /// Frame time: from this frame's streaming step to the next frame's, with the GPU drawing one
    /// frame while the CPU prepares the next (as in the window); for the last frame, until its GPU
    /// work is done. What the frame-time statistics are made of.
    pub total_ms: f64,
    /// From this frame's streaming step until the render loop saw its GPU work done (after it had
    /// prepared and submitted the next frame).
    pub latency_ms: f64,
    /// Streaming step (LOD cut, residency, queueing loads).
    pub stream_ms: f64,
    /// Evictions and uploads.
    pub upload_ms: f64,
    /// Culling, uniforms, command recording and submission.
    pub encode_ms: f64,
    /// After submitting, how long the render loop waited for the frame before it to finish on the
    /// GPU (the CPU's idle time: 0 when the CPU is the bottleneck).
    pub wait_ms: f64,
    /// GPU time of the shadow-map pass (0 when it did not run or timestamps are unavailable).
    pub gpu_shadow_ms: f64,
    /// GPU time of the main view pass, everything after the shadow map.
    pub gpu_main_ms: f64,
    /// Tiles uploaded this frame.
    pub uploads: usize,
    /// GPU bytes those uploads allocated.
    pub upload_bytes: u64,
    /// Triangles drawn in the view after frustum culling, over every layer.
    pub drawn_triangles: u64,
    /// A shadow pass ran this frame (a redraw or a part of one).
    pub shadow_rendered: bool,
    /// Caster triangles it drew.
    pub shadow_triangles: u64,
}

/// Percentiles of each [`FrameRecord`] phase over a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PhaseStats {
    /// Of [`FrameRecord::stream_ms`].
    pub stream_ms: Percentiles,
    /// Of [`FrameRecord::upload_ms`].
    pub upload_ms: Percentiles,
    /// Of [`FrameRecord::encode_ms`].
    pub encode_ms: Percentiles,
    /// Of [`FrameRecord::wait_ms`].
    pub wait_ms: Percentiles,
    /// Of [`FrameRecord::gpu_shadow_ms`].
    pub gpu_shadow_ms: Percentiles,
    /// Of [`FrameRecord::gpu_main_ms`].
    pub gpu_main_ms: Percentiles,
}

impl PhaseStats {
    /// The phases' percentiles over `frames`.
    pub fn of(frames: &[FrameRecord]) -> Self {
        let q = |f: fn(&FrameRecord) -> f64| percentiles(&frames.iter().map(f).collect::<Vec<_>>());
        PhaseStats {
            stream_ms: q(|r| r.stream_ms),
            upload_ms: q(|r| r.upload_ms),
            encode_ms: q(|r| r.encode_ms),
            wait_ms: q(|r| r.wait_ms),
            gpu_shadow_ms: q(|r| r.gpu_shadow_ms),
            gpu_main_ms: q(|r| r.gpu_main_ms),
        }
    }
}

/// The `n` slowest frames, slowest first (ties by frame index): what a hitch is made of.
pub fn slowest(frames: &[FrameRecord], n: usize) -> Vec<FrameRecord> {
    let mut v = frames.to_vec();
    v.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms).then(a.frame.cmp(&b.frame)));
    v.truncate(n);
    v
}

/// Milliseconds from launch (the start of `main`) to the milestones of start-up. `None`: not
/// reached in this run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StartupTimes {
    /// Manifest read and checked, loader threads started.
    pub streamer_ms: f64,
    /// Vulkan instance, adapter and device.
    pub device_ms: f64,
    /// Targets, passes and the view mode's pipelines.
    pub renderer_ms: f64,
    /// GPU completion of the first frame without holes (every selected tile drawn, itself or
    /// through a resident ancestor).
    pub first_complete_frame_ms: Option<f64>,
    /// Triangles and tiles drawn in that frame.
    pub first_complete_triangles: u64,
    /// Tiles drawn in that frame.
    pub first_complete_tiles: usize,
    /// Still views: GPU completion of the final frame (every selected tile at its own level).
    pub final_frame_ms: Option<f64>,
}

/// The `--stats` report of a still view: start-up milestones.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StillStats {
    /// When start-up milestones were reached.
    pub startup: StartupTimes,
    /// Image width and height in pixels.
    pub size: [u32; 2],
    /// The view mode's name, as `--mode` takes it.
    pub mode: String,
    /// The GPU adapter: "name (backend, driver)".
    pub adapter: String,
    /// The layers' counts in the final frame (e.g. `trees_mesh`, `trees_impostor`).
    pub drawn: std::collections::BTreeMap<String, u64>,
}

/// A frame's layer counts as a map, for the JSON reports.
pub fn counts_map(counts: &crate::layers::Counts) -> std::collections::BTreeMap<String, u64> {
    counts.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

/// Writes `value` as pretty JSON (atomically).
pub fn write_json<T: Serialize>(value: &T, path: &Path) -> Result<(), ViewerError> {
    let json = serde_json::to_vec_pretty(value).map_err(|e| ViewerError::File { path: path.to_owned(), reason: e.to_string() })?;
    kiln_formats::write_atomic(path, &json).map_err(|e| ViewerError::File { path: path.to_owned(), reason: e.to_string() })
}

/// The `--stats` report of a fly-through.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlyStats {
    /// Frames rendered, one per camera-path row.
    pub frames: usize,
    /// Percentiles of [`FrameRecord::total_ms`].
    pub frame_ms: Percentiles,
    /// Percentiles of [`FrameRecord::latency_ms`].
    pub latency_ms: Percentiles,
    /// Frames the render loop lets the GPU have at once (the frame being drawn and the one
    /// being prepared).
    pub frames_in_flight: usize,
    /// With `--gpu-parts`: the main pass's GPU time by what ran in it (each layer over all its
    /// phases, the sky, and `split`: the scene copy between a refracting layer's two pass
    /// halves), per frame. Empty otherwise.
    pub gpu_main_parts_ms: std::collections::BTreeMap<String, Percentiles>,
    /// Where the frame time went, phase by phase.
    pub phases: PhaseStats,
    /// The slowest frames with their phases.
    pub slowest_frames: Vec<FrameRecord>,
    /// Frames over three times the median (the hitch limit).
    pub over_3x_median: usize,
    /// Frames that drew into a shadow map (a redraw or a part of one; the others reused the map).
    pub shadow_map_renders: usize,
    /// When start-up milestones were reached.
    pub startup: StartupTimes,
    /// Frames over twice the median frame time.
    pub hitches: usize,
    /// Twice the median frame time: frames above it count as hitches.
    pub hitch_threshold_ms: f64,
    /// Tile uploads over the run (a tile evicted and loaded again counts twice).
    pub tiles_streamed: u64,
    /// GPU bytes those uploads allocated.
    pub bytes_uploaded: u64,
    /// Largest GPU-resident total at the end of any frame: compare with the budget.
    pub peak_resident_bytes: u64,
    /// Tiles that failed to load or upload (each counted once).
    pub failed_tiles: usize,
    /// Per frame, averaged: tiles and triangles drawn in the view after frustum culling.
    pub mean_drawn_tiles: f64,
    /// See `mean_drawn_tiles`.
    pub mean_drawn_triangles: f64,
    /// Per frame, averaged: the layers' counts (e.g. trees drawn as meshes and as impostors).
    pub mean_drawn: std::collections::BTreeMap<String, f64>,
    /// Image width and height in pixels.
    pub size: [u32; 2],
    /// The view mode's name, as `--mode` takes it.
    pub mode: String,
    /// The GPU adapter: "name (backend, driver)".
    pub adapter: String,
}

impl FlyStats {
    /// Writes the report as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), ViewerError> {
        write_json(self, path)
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
        assert_eq!(over_median(&[10.0, 10.0, 10.0, 20.0, 30.0, 35.0], 3.0), 1);
    }

    #[test]
    fn slowest_frames_come_first_and_ties_keep_path_order() {
        let r = |frame, total_ms| FrameRecord { frame, total_ms, ..Default::default() };
        let frames = [r(0, 5.0), r(1, 9.0), r(2, 7.0), r(3, 9.0)];
        let s: Vec<usize> = slowest(&frames, 3).iter().map(|f| f.frame).collect();
        assert_eq!(s, vec![1, 3, 2]);
        assert_eq!(PhaseStats::of(&frames).stream_ms.max, 0.0);
    }
}
