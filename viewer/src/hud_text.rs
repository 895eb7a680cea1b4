//! What the HUD says: frame timing, streaming counters, the camera, and the tile under the cursor.
//! Pure formatting, separate from the pass that draws it, so it can be tested without a GPU.

use kiln_formats::sections::TileNode;

use crate::camera::Camera;
use crate::exposure::Exposure;
use crate::passes::hud::HudLine;
use crate::renderer::{FrameReport, TileMeta};
use crate::streaming::{StreamStats, TileId};
use crate::view_mode::ViewMode;

/// Everything the HUD shows.
pub struct HudInfo<'a> {
    /// The world's name from the manifest.
    pub world_name: &'a str,
    /// The GPU adapter: "name (backend, driver)".
    pub adapter: &'a str,
    /// The current view mode, highlighted in the mode list.
    pub mode: ViewMode,
    /// `None` in headless renders (no swap chain).
    pub vsync: Option<bool>,
    /// Frame time in milliseconds (smoothed in the window); 0 shows as 0 fps.
    pub frame_ms: f64,
    /// The streamer's counters: resident, loading, uploads, evictions.
    pub stats: StreamStats,
    /// The GPU budget the resident tiles are held to, in bytes.
    pub budget_bytes: u64,
    /// What the last frame drew and culled.
    pub drawn: FrameReport,
    /// The camera whose pose is shown.
    pub camera: &'a Camera,
    /// Fly speed in world units per second.
    pub speed: f32,
    /// The current exposure, fixed or automatic.
    pub exposure: Exposure,
    /// The tile under the cursor (`Some(None)`: sky), with its manifest node and GPU metadata.
    pub cursor: Option<(Option<TileId>, Option<&'a TileNode>, Option<TileMeta>)>,
    /// The most recent tile error, shown clipped to one line.
    pub last_error: Option<&'a str>,
    /// Tile errors so far, each counted once.
    pub error_count: usize,
    /// Show the key bindings (the window; a headless image has no keys).
    pub keys_help: bool,
    /// The grass distance `D` (shown when the bake has grass).
    pub grass_distance: Option<f32>,
}

/// Bytes as MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.2}M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// Cuts `s` to `max` characters with an ellipsis, so one long error cannot widen the panel
/// across the screen.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max.saturating_sub(3)).collect::<String>() + "..."
    }
}

/// The HUD's lines, top to bottom.
pub fn hud_lines(i: &HudInfo<'_>) -> Vec<HudLine> {
    let mut v = Vec::new();
    v.push(HudLine::info(format!("kiln-view  {}  on {}", i.world_name, i.adapter)));
    let vsync = match i.vsync {
        Some(on) => format!("  vsync {} (V)", if on { "on" } else { "off" }),
        None => String::new(),
    };
    let keys: String = ViewMode::ALL
        .iter()
        .enumerate()
        .map(|(k, m)| if *m == i.mode { format!(" [{}:{}]", k + 1, m.name()) } else { format!(" {}", k + 1) })
        .collect();
    v.push(HudLine::info(format!("mode{keys}{vsync}")));
    let fps = if i.frame_ms > 0.0 { 1000.0 / i.frame_ms } else { 0.0 };
    v.push(HudLine::info(format!(
        "frame {:.2} ms  {:.0} fps  drawn {} tiles ({} culled)  {} tris",
        i.frame_ms,
        fps,
        i.drawn.drawn_tiles,
        i.drawn.culled,
        count(i.drawn.drawn_triangles)
    )));
    if !i.drawn.counts.is_empty() {
        // The layers' own counts (trees by representation, …), as `name value` pairs.
        let counts: Vec<String> = i.drawn.counts.iter().map(|(n, c)| format!("{n} {}", count(*c))).collect();
        v.push(HudLine::info(counts.join("  ")));
    }
    if let Some(d) = i.grass_distance {
        v.push(HudLine::info(format!("grass distance {d:.1} (G / shift+G)")));
    }
    let s = &i.stats;
    v.push(HudLine::info(format!("tiles visible {}  cached {}  building {}  failed {}", s.visible, s.cached, s.building, s.failed)));
    v.push(HudLine::info(format!(
        "resident {} (peak {}) of {}  streamed {} tiles, {}",
        mib(s.resident_bytes),
        mib(s.peak_resident_bytes),
        mib(i.budget_bytes),
        s.tiles_streamed,
        mib(s.bytes_uploaded)
    )));
    v.push(HudLine::info(i.exposure.label()));
    let p = i.camera.pose();
    v.push(HudLine::info(format!(
        "camera {:.1},{:.1},{:.1}  yaw {:.0}  pitch {:.0}  speed {:.1}/s",
        p.position.x, p.position.y, p.position.z, p.yaw_deg, p.pitch_deg, i.speed
    )));
    match i.cursor {
        None => {}
        Some((None, ..)) => v.push(HudLine::info("cursor: sky")),
        Some((Some(k), node, meta)) => {
            let mut line = format!("cursor: {k}");
            if let Some(n) = node {
                line += &format!("  pack {}  {} verts  {} tris", mib(n.file_len), n.vertex_count, n.triangle_count);
            }
            v.push(HudLine::info(line));
            let content = node.map(|n| n.content_hash).or(meta.map(|m| m.content_hash));
            let inputs = meta.map(|m| format!("{:016x}", m.inputs_hash)).unwrap_or_else(|| "-".into());
            v.push(HudLine::info(format!("  content {}  inputs {}", content.map(|c| format!("{c:016x}")).unwrap_or_else(|| "-".into()), inputs)));
        }
    }
    if i.keys_help {
        v.push(HudLine::info("keys: WASD QE move  shift fast  wheel speed  RMB/Tab look  1-9 mode  V vsync  H hud  F12 shot  [ ] exposure  X auto"));
    }
    if i.drawn.missing > 0 {
        v.push(HudLine::alert(format!("{} drawn tiles were not resident", i.drawn.missing)));
    }
    if let Some(e) = i.last_error {
        v.push(HudLine::alert(clip(&format!("{} tile error(s), last: {e}", i.error_count), 110)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::CameraPose;
    use glam::Vec3;

    fn camera() -> Camera {
        Camera::from_pose(CameraPose { position: Vec3::new(1.0, 2.0, 3.0), yaw_deg: 45.0, pitch_deg: -10.0 }, Vec3::ZERO, Vec3::splat(10.0))
    }

    fn info<'a>(camera: &'a Camera, node: Option<&'a TileNode>) -> HudInfo<'a> {
        HudInfo {
            world_name: "tiny",
            adapter: "llvmpipe",
            mode: ViewMode::Lod,
            vsync: Some(true),
            frame_ms: 4.0,
            stats: StreamStats { visible: 3, building: 1, resident_bytes: 3 << 20, ..Default::default() },
            budget_bytes: 512 << 20,
            drawn: FrameReport { drawn_tiles: 3, drawn_triangles: 12_345, culled: 2, ..Default::default() },
            camera,
            speed: 5.0,
            exposure: Exposure { auto: false, ev: 2.0, compensation: 0.0 },
            cursor: Some((Some(TileId { level: 1, x: 2, y: 3 }), node, None)),
            last_error: Some("tiles/L0_0_0.kpack: checksum mismatch"),
            error_count: 1,
            keys_help: true,
            grass_distance: Some(40.0),
        }
    }

    #[test]
    fn shows_timing_counters_cursor_tile_and_errors() {
        let c = camera();
        let node = TileNode {
            level: 1,
            x: 2,
            y: 3,
            bounds_min: [0.0; 3],
            bounds_max: [1.0; 3],
            geometric_error: 0.5,
            path: "tiles/L1_2_3.kpack".into(),
            content_hash: 0xabcdef,
            file_len: 2 << 20,
            vertex_count: 777,
            triangle_count: 1234,
        };
        let lines = hud_lines(&info(&c, Some(&node)));
        let all: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        let text = all.join("\n");
        assert!(text.contains("[5:lod]") && text.contains("vsync on"), "{text}");
        assert!(text.contains("frame 4.00 ms  250 fps  drawn 3 tiles (2 culled)  12.3k tris"), "{text}");
        assert!(text.contains("visible 3") && text.contains("building 1") && text.contains("resident 3.0 MiB"), "{text}");
        assert!(text.contains("cursor: L1 (2,3)  pack 2.0 MiB  777 verts  1234 tris"), "{text}");
        assert!(text.contains("content 0000000000abcdef"), "{text}");
        assert!(text.contains("F12 shot") && text.contains("[ ] exposure"), "{text}");
        assert!(text.contains("exposure +2.0 EV"), "{text}");
        let last = lines.last().unwrap();
        assert!(last.text.contains("checksum mismatch") && last.color != lines[0].color, "errors stand out");
        assert!(lines.iter().all(|l| l.text.is_ascii()), "the bitmap font is ASCII only");
    }

    #[test]
    fn long_errors_are_clipped_and_sky_is_named() {
        let c = camera();
        let long = "x".repeat(500);
        let mut i = info(&c, None);
        i.last_error = Some(&long);
        i.cursor = Some((None, None, None));
        let lines = hud_lines(&i);
        assert!(lines.last().unwrap().text.chars().count() <= 110);
        assert!(lines.iter().any(|l| l.text == "cursor: sky"));
    }
}
