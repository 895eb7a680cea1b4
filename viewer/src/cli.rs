//! The `kiln-view` command line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;

use crate::camera::CameraPose;
use crate::error::ViewerError;
use crate::exposure::ExposureArg;
use crate::headless::{self, HeadlessOptions};
use crate::layers::LayerSettings;
use crate::streaming::{StreamConfig, TileId};
use crate::view_mode::ViewMode;
use crate::window::{self, WindowOptions};

/// Streams and renders a Kiln bake directory, in a window or headless.
#[derive(Parser, Debug, Clone)]
#[command(name = "kiln-view", version, about)]
pub struct Args {
    /// The bake directory (`out/<world>`, holding manifest.kpack and tiles/).
    pub bake_dir: PathBuf,
    /// Render offscreen (no window, no display needed); requires --screenshot or --fly.
    #[arg(long)]
    pub headless: bool,
    /// Start camera: X,Y,Z,YAW,PITCH (world units; degrees, yaw from +X toward +Y, pitch up).
    /// Defaults to an overview of the world.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pub camera: Option<CameraPose>,
    /// Viewport (headless) or initial window size, WxH pixels.
    #[arg(long, value_parser = parse_size, default_value = "1280x720")]
    pub size: [u32; 2],
    /// View mode (keys 1-9 in the window).
    #[arg(long, visible_alias = "view-mode", value_enum, default_value_t = ViewMode::Lit)]
    pub mode: ViewMode,
    /// Headless: write the final frame to this PNG.
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    /// Headless: replay a camera path (CSV rows t,x,y,z,yaw,pitch), one frame per row.
    #[arg(long)]
    pub fly: Option<PathBuf>,
    /// Headless: write statistics as JSON: start-up milestones (launch to first complete frame), and
    /// with --fly frame-time percentiles, per-phase times, the slowest frames and streaming totals.
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// Headless, with --stats and --fly: also time the main pass draw by draw on the GPU and report
    /// it per layer (`gpu_main_parts_ms`), where the device can write timestamps inside a pass.
    /// Each timestamp waits for the draws before it, so frames run slower: a diagnosis, not a
    /// frame-time measurement.
    #[arg(long)]
    pub gpu_parts: bool,
    /// Exposure in stops added before tone mapping (e.g. 2 to look into caves), or `auto` to meter
    /// it from the picture (in the window the bracket keys change it and X toggles auto).
    #[arg(long, value_parser = parse_exposure, allow_hyphen_values = true, default_value = "0")]
    pub exposure: ExposureArg,
    /// GPU residency budget in MiB.
    #[arg(long, default_value_t = 512)]
    pub budget_mb: u64,
    /// Largest screen-space geometric error in pixels before a finer LOD is streamed.
    #[arg(long, default_value_t = 2.0)]
    pub max_error_px: f32,
    /// Leave a product's layer out of the picture, by product name (terrain, tree-prototypes,
    /// grass-patches, water-waves): to see what
    /// one product adds to a view, or compare a view with and without it. Repeatable.
    #[arg(long, value_name = "LAYER")]
    pub hide_layer: Vec<String>,
    /// Test hook: never load tile L,X,Y (its nearest ancestor is drawn instead). Repeatable.
    #[arg(long, value_parser = parse_tile_id)]
    pub withhold: Vec<TileId>,
    /// Window: exit after N presented frames.
    #[arg(long)]
    pub frames: Option<u64>,
    /// Headless: draw the HUD into the image too.
    #[arg(long)]
    pub hud: bool,
    /// Headless: longest wait, in seconds, for a still view to finish streaming.
    #[arg(long, default_value_t = 60.0)]
    pub timeout_s: f64,
    /// Draw wireframes from edge lists even where polygon-mode line is available (tests the fallback).
    #[arg(long, hide = true)]
    pub edge_wireframe: bool,
    /// Grass distance D in world units: blades are drawn up to it, the ground tint beyond (G / Shift+G
    /// change it in the window).
    #[arg(long, default_value_t = crate::layers::grass::select::DEFAULT_DISTANCE)]
    pub grass_distance: f32,
    /// Draw every grass blade at level K instead of choosing by distance (tests compare levels).
    #[arg(long)]
    pub grass_lod: Option<u32>,
    /// Headless: the animation clock in seconds (water waves and caustics, grass wind) for still
    /// pictures, so they are reproducible; with --fly each row's t is added to it.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub time: f32,
}

fn parse_exposure(s: &str) -> Result<ExposureArg, String> {
    s.parse()
}

fn parse_pose(s: &str) -> Result<CameraPose, String> {
    s.parse()
}

/// Parses `WxH` (both 1..=16384).
pub fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("expected WxH, got {s:?}"))?;
    let dim = |v: &str| v.trim().parse::<u32>().ok().filter(|d| (1..=16384).contains(d)).ok_or_else(|| format!("{v:?} is not a size in 1..=16384"));
    Ok([dim(w)?, dim(h)?])
}

/// Parses `L,X,Y`.
pub fn parse_tile_id(s: &str) -> Result<TileId, String> {
    let v: Vec<u32> = s.split(',').map(|p| p.trim().parse::<u32>().map_err(|_| format!("{p:?} is not a whole number"))).collect::<Result<_, _>>()?;
    match v[..] {
        [level, x, y] => Ok(TileId { level, x, y }),
        _ => Err(format!("expected L,X,Y, got {s:?}")),
    }
}

impl Args {
    fn stream_config(&self) -> Result<StreamConfig, ViewerError> {
        if !(self.max_error_px.is_finite() && self.max_error_px > 0.0) {
            return Err(ViewerError::Usage(format!("--max-error-px must be positive, got {}", self.max_error_px)));
        }
        if self.budget_mb == 0 {
            return Err(ViewerError::Usage("--budget-mb must be at least 1".into()));
        }
        Ok(StreamConfig { budget_bytes: self.budget_mb.saturating_mul(1 << 20), max_error_px: self.max_error_px, ..StreamConfig::default() })
    }

    fn check(&self) -> Result<(), ViewerError> {
        let usage = |m: &str| Err(ViewerError::Usage(m.into()));
        if self.stats.is_some() && !self.headless {
            return usage("--stats is for --headless runs");
        }
        if self.gpu_parts && (self.stats.is_none() || self.fly.is_none()) {
            return usage("--gpu-parts is for --headless --fly runs with --stats");
        }
        if !self.headless {
            if self.fly.is_some() || self.screenshot.is_some() || self.hud {
                return usage("--fly, --screenshot and --hud are for --headless runs (in the window, F12 takes a screenshot)");
            }
        } else if self.frames.is_some() {
            return usage("--frames is for the window; a headless run renders one still frame or one frame per --fly row");
        }
        if let Some(bad) = self.hide_layer.iter().find(|n| crate::layers::product(n).is_none()) {
            let names: Vec<&str> = crate::layers::PRODUCTS.iter().map(|p| p.name).collect();
            return Err(ViewerError::Usage(format!("--hide-layer {bad}: no such layer (layers: {})", names.join(", "))));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return usage("--timeout-s must be positive");
        }
        if !(self.grass_distance.is_finite() && self.grass_distance > 0.0) {
            return usage("--grass-distance must be positive");
        }
        if !self.time.is_finite() {
            return usage("--time must be a finite number of seconds");
        }
        Ok(())
    }
}

/// Runs `kiln-view` with parsed arguments.
pub fn run(args: Args, launched: Instant) -> Result<(), ViewerError> {
    args.check()?;
    let config = args.stream_config()?;
    if args.headless {
        headless::run(&HeadlessOptions {
            bake_dir: args.bake_dir,
            camera: args.camera,
            size: args.size,
            mode: args.mode,
            screenshot: args.screenshot,
            fly: args.fly,
            stats: args.stats,
            gpu_parts: args.gpu_parts,
            config,
            withhold: args.withhold,
            hud: args.hud,
            timeout: Duration::from_secs_f64(args.timeout_s),
            edge_wireframe: args.edge_wireframe,
            hidden_layers: args.hide_layer,
            exposure: args.exposure,
            launched,
            settings: LayerSettings { grass_distance: args.grass_distance, grass_lod: args.grass_lod, time_s: args.time, ..LayerSettings::default() },
        })
    } else {
        window::run(WindowOptions {
            bake_dir: args.bake_dir,
            camera: args.camera,
            size: args.size,
            mode: args.mode,
            config,
            withhold: args.withhold,
            frames: args.frames,
            edge_wireframe: args.edge_wireframe,
            hidden_layers: args.hide_layer,
            exposure: args.exposure,
            settings: LayerSettings { grass_distance: args.grass_distance, grass_lod: args.grass_lod, ..LayerSettings::default() },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("kiln-view").chain(args.iter().copied()))
    }

    #[test]
    fn parses_the_headless_command_line() {
        let a = parse(&[
            "out/w",
            "--headless",
            "--camera",
            "-10,5,3,0,-20",
            "--size",
            "320x240",
            "--mode",
            "ao",
            "--screenshot",
            "a.png",
            "--withhold",
            "0,1,2",
            "--withhold",
            "1,0,0",
        ])
        .unwrap();
        assert!(a.headless);
        assert_eq!(a.camera.unwrap().position.x, -10.0);
        assert_eq!(a.size, [320, 240]);
        assert_eq!(a.mode, ViewMode::Ao);
        assert_eq!(a.withhold, vec![TileId { level: 0, x: 1, y: 2 }, TileId { level: 1, x: 0, y: 0 }]);
        assert!(a.check().is_ok());
        assert_eq!(a.stream_config().unwrap().budget_bytes, 512 << 20);
        assert_eq!(a.exposure, ExposureArg::Stops(0.0));
        assert_eq!(parse(&["w", "--exposure", "-1.5"]).unwrap().exposure, ExposureArg::Stops(-1.5));
        assert_eq!(parse(&["w", "--exposure", "auto"]).unwrap().exposure, ExposureArg::Auto);
    }

    #[test]
    fn hides_layers_by_product_name_and_names_the_choices_when_wrong() {
        assert!(parse(&["w", "--headless", "--screenshot", "a.png", "--hide-layer", "water-waves", "--hide-layer", "grass-patches"])
            .unwrap()
            .check()
            .is_ok());
        let e = parse(&["w", "--hide-layer", "sea"]).unwrap().check().unwrap_err().to_string();
        assert!(e.contains("sea") && e.contains("water-waves") && e.contains("terrain"), "{e}");
    }

    #[test]
    fn rejects_bad_values_and_contradictions() {
        assert!(parse(&["w", "--size", "0x10"]).is_err());
        assert!(parse(&["w", "--size", "640"]).is_err());
        assert!(parse(&["w", "--camera", "1,2,3"]).is_err());
        assert!(parse(&["w", "--withhold", "1,2"]).is_err());
        assert!(parse(&["w", "--mode", "shiny"]).is_err());
        assert!(parse(&["w", "--exposure", "bright"]).is_err());
        assert!(parse(&["w", "--stats", "s.json"]).unwrap().check().is_err());
        assert!(parse(&["w", "--screenshot", "a.png"]).unwrap().check().is_err());
        assert!(parse(&["w", "--headless", "--frames", "3", "--screenshot", "a.png"]).unwrap().check().is_err());
        assert!(parse(&["w", "--budget-mb", "0"]).unwrap().stream_config().is_err());
        assert!(parse(&["w", "--grass-distance", "0"]).unwrap().check().is_err());
        assert_eq!(parse(&["w", "--grass-lod", "2"]).unwrap().grass_lod, Some(2));
    }
}
