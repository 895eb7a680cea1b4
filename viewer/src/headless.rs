//! Offscreen rendering with no window and no event loop: a still screenshot once the view has
//! finished streaming, or a timed replay of a camera path with frame-time statistics.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use glam::Vec3;

use crate::camera::{Camera, CameraPose};
use crate::error::ViewerError;
use crate::exposure::{Exposure, ExposureArg, CONVERGED_EV};
use crate::flypath::{self, FlyStats, FrameRecord, StartupTimes, StillStats};
use crate::gpu::Gpu;
use crate::hud_text::{hud_lines, HudInfo};
use crate::layers::LayerSettings;
use crate::passes::hud::HudLine;
use crate::renderer::gpu_timer::PassTimes;
use crate::renderer::{FrameDesc, FrameReport, Renderer};
use crate::screenshot::{offscreen_target, read_rgba, save_png};
use crate::session::{open_streamer, world_info, Session};
use crate::streaming::{StreamConfig, TileId};
use crate::view_mode::ViewMode;

/// Options of a headless run (from the command line).
#[derive(Clone, Debug)]
pub struct HeadlessOptions {
    /// The bake directory (`out/<world>/`, holding the manifest).
    pub bake_dir: PathBuf,
    /// `None`: the world overview.
    pub camera: Option<CameraPose>,
    /// Image width and height in pixels.
    pub size: [u32; 2],
    /// What the picture shows.
    pub mode: ViewMode,
    /// Where to write the final frame as PNG, if anywhere.
    pub screenshot: Option<PathBuf>,
    /// A camera path to replay, one frame per row, instead of a still view.
    pub fly: Option<PathBuf>,
    /// Where to write the statistics as JSON, if anywhere.
    pub stats: Option<PathBuf>,
    /// Time the main pass's layers one by one on the GPU (with `stats`; slows frames).
    pub gpu_parts: bool,
    /// How tiles stream: GPU budget, LOD error limit, loader threads, upload cap.
    pub config: StreamConfig,
    /// Tiles never loaded (a test hook): their nearest resident ancestor is drawn instead.
    pub withhold: Vec<TileId>,
    /// Draw the HUD into the image.
    pub hud: bool,
    /// Longest wait for a still view to finish streaming.
    pub timeout: Duration,
    /// Draw wireframes from edge lists even where line polygon mode exists (tests the fallback).
    pub edge_wireframe: bool,
    /// Layers left out of the picture, by product name.
    pub hidden_layers: Vec<String>,
    /// Fixed exposure in stops, or automatic metering.
    pub exposure: ExposureArg,
    /// When the process started (`--stats` reports start-up milestones from it).
    pub launched: Instant,
    /// The layers' settings (grass distance and forced level; the wind's clock stays at 0 so
    /// pictures are reproducible).
    pub settings: LayerSettings,
}

/// The colour format of headless targets (RGBA8 so readback needs no swizzle).
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

struct Offscreen {
    gpu: Gpu,
    session: Session,
    target: wgpu::Texture,
    view: wgpu::TextureView,
    startup: StartupTimes,
    exposure: Exposure,
    /// Seconds added to the animation clock (`--time`): a `--fly` row's `t`.
    clock: f32,
}

/// Most frames a still picture meters before it is taken with automatic exposure; a view converges
/// in a few (the tone curve is undone exactly, so only clipped and quantised pixels need a second).
const METER_FRAMES: usize = 12;
/// How far a `--fly` frame moves the automatic exposure toward its metering: a camera's adaptation
/// over a few frames, not a flicker from one to the next.
const FLY_ADAPT_RATE: f32 = 0.25;

fn since(launched: Instant) -> f64 {
    launched.elapsed().as_secs_f64() * 1e3
}

impl Offscreen {
    /// Records the first frame without holes (call after the frame's GPU work finished).
    fn note_complete(&mut self, o: &HeadlessOptions, report: FrameReport) {
        let complete = self.session.complete();
        self.note_complete_if(o, report, complete);
    }

    /// [`Offscreen::note_complete`] for a frame whose completeness was taken when it was drawn.
    fn note_complete_if(&mut self, o: &HeadlessOptions, report: FrameReport, complete: bool) {
        if self.startup.first_complete_frame_ms.is_none() && complete {
            self.startup.first_complete_frame_ms = Some(since(o.launched));
            self.startup.first_complete_triangles = report.drawn_triangles;
            self.startup.first_complete_tiles = report.drawn_tiles;
        }
    }

    /// What a `--fly` frame learns once its GPU work is done: latency, GPU pass times, start-up
    /// milestones and the exposure metering.
    #[allow(clippy::too_many_arguments)]
    fn frame_done(
        &mut self,
        o: &HeadlessOptions,
        record: &mut FrameRecord,
        start: Instant,
        gpu: Option<PassTimes>,
        complete: bool,
        report: FrameReport,
        parts: &mut std::collections::BTreeMap<&'static str, Vec<f64>>,
    ) {
        record.latency_ms = start.elapsed().as_secs_f64() * 1e3;
        let gpu = gpu.unwrap_or_default();
        (record.gpu_shadow_ms, record.gpu_main_ms) = (gpu.shadow_ms, gpu.main_ms);
        // Every frame gets a value for every part seen, so a part's percentiles are over frames.
        let seen = parts.values().next().map_or(0, Vec::len);
        for (label, ms) in gpu.main_parts {
            parts.entry(label).or_insert_with(|| vec![0.0; seen]).push(ms);
        }
        for v in parts.values_mut() {
            v.resize(seen + 1, 0.0);
        }
        self.note_complete_if(o, report, complete);
        if let Some(m) = self.session.renderer.metered() {
            self.exposure.adapt(m, FLY_ADAPT_RATE);
        }
    }

    /// Draws one frame; `still` for a still picture (shadows of exactly this view, not a redraw spread over frames).
    fn frame(&mut self, o: &HeadlessOptions, camera: &Camera, frame_ms: f64, last: FrameReport, still: bool) -> FrameReport {
        let hud = if o.hud { self.hud(o, camera, frame_ms, last) } else { Vec::new() };
        let e = self.exposure;
        let settings = LayerSettings { time_s: o.settings.time_s + self.clock, ..o.settings };
        let desc = FrameDesc { camera, mode: o.mode, hud: &hud, highlight: None, pick_px: None, still, exposure_ev: e.ev, meter: e.auto, settings };
        self.session.render(&self.gpu, &self.view, &desc)
    }

    fn hud(&self, o: &HeadlessOptions, camera: &Camera, frame_ms: f64, last: FrameReport) -> Vec<HudLine> {
        let name = self.session.streamer.manifest().world_name.clone();
        hud_lines(&HudInfo {
            world_name: &name,
            adapter: &self.gpu.description,
            mode: o.mode,
            vsync: None,
            frame_ms,
            stats: self.session.streamer.stats(),
            budget_bytes: o.config.budget_bytes,
            drawn: last,
            camera,
            speed: 0.0,
            exposure: self.exposure,
            cursor: None,
            last_error: self.session.last_error.as_deref(),
            error_count: self.session.error_count,
            keys_help: false,
            grass_distance: self.session.streamer.shared().0.contains_key(crate::layers::grass::NAME).then_some(o.settings.grass_distance),
        })
    }
}

fn report_errors(errors: &[String]) {
    for e in errors {
        eprintln!("kiln-view: warning: {e}");
    }
}

/// Runs a headless render as `o` says.
pub fn run(o: &HeadlessOptions) -> Result<(), ViewerError> {
    if o.screenshot.is_none() && o.fly.is_none() {
        return Err(ViewerError::Usage("--headless needs --screenshot FILE.png or --fly PATH.csv".into()));
    }
    let path = o.fly.as_deref().map(flypath::load).transpose()?;
    let mut config = o.config;
    if path.is_none() {
        // A still view gains nothing from prefetch, and without it `building` counts only tiles the
        // view needs, which is what "complete" waits for.
        config.prefetch = false;
    }
    let mut startup = StartupTimes::default();
    let streamer = open_streamer(&o.bake_dir, config, &o.withhold)?;
    startup.streamer_ms = since(o.launched);
    let world = world_info(&streamer);
    let gpu = Gpu::headless()?;
    gpu.check_size(o.size)?;
    startup.device_ms = since(o.launched);
    // With the mode's pipelines: the first frame would otherwise carry their compile.
    let mut renderer = Renderer::new(&gpu, FORMAT, o.size, (world, streamer.shared()), o.mode, o.edge_wireframe);
    for name in &o.hidden_layers {
        renderer.hide_layer(name, true);
    }
    if o.stats.is_some() && path.is_some() {
        renderer.enable_gpu_timing(&gpu, o.gpu_parts);
    }
    let target = offscreen_target(&gpu.device, FORMAT, o.size);
    let view = target.create_view(&wgpu::TextureViewDescriptor::default());
    startup.renderer_ms = since(o.launched);
    let exposure = Exposure::new(o.exposure);
    let mut off = Offscreen { gpu, session: Session::new(streamer, renderer), target, view, startup, exposure, clock: 0.0 };
    match path {
        Some(points) => fly(&mut off, o, &points)?,
        None => {
            let last = still(&mut off, o)?;
            if let Some(path) = &o.stats {
                let s = off.startup;
                let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0} ms"));
                println!(
                    "kiln-view: device {:.0} ms, renderer {:.0} ms, first complete frame {} ({} tiles, {} triangles), full detail {}",
                    s.device_ms,
                    s.renderer_ms,
                    ms(s.first_complete_frame_ms),
                    s.first_complete_tiles,
                    s.first_complete_triangles,
                    ms(s.final_frame_ms)
                );
                let stats = StillStats {
                    startup: s,
                    size: o.size,
                    mode: o.mode.name().to_string(),
                    adapter: off.gpu.description.clone(),
                    drawn: flypath::counts_map(&last.counts),
                };
                flypath::write_json(&stats, path)?;
            }
        }
    }
    if let Some(shot) = &o.screenshot {
        save_png(&read_rgba(&off.gpu, &off.target)?, shot)?;
    }
    off.gpu.take_error()
}

/// Draws the still picture; returns what its final frame drew.
fn still(off: &mut Offscreen, o: &HeadlessOptions) -> Result<FrameReport, ViewerError> {
    let w = off.session.world;
    let camera = match o.camera {
        Some(p) => Camera::from_pose(p, w.min, w.max),
        None => Camera::overview(w.min, w.max),
    };
    // With --stats, the first frame without holes is drawn (and timed) as soon as the coarse tiles
    // covering the view are resident, as a window would show it; the capture still waits for the
    // final picture. Without --stats only the final frame is drawn.
    let measure_first = o.stats.is_some();
    let start = Instant::now();
    loop {
        let u = off.session.update(&off.gpu.device, &camera, o.size, Vec3::ZERO);
        report_errors(&u.new_errors);
        if measure_first && off.startup.first_complete_frame_ms.is_none() && off.session.complete() {
            let report = off.frame(o, &camera, 0.0, FrameReport::default(), true);
            off.gpu.wait_idle()?;
            off.note_complete(o, report);
        }
        if off.session.settled() {
            break;
        }
        let left = o.timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(ViewerError::Incomplete { seconds: o.timeout.as_secs_f64(), building: off.session.streamer.stats().building });
        }
        // Block until the loads queued by this update are decoded (no polling, no timing luck),
        // then update again to upload them; the per-frame upload cap may need a few rounds. Before
        // the first complete frame, only until the next load lands: the coarse tiles come first.
        if measure_first && off.startup.first_complete_frame_ms.is_none() {
            off.session.streamer.wait_progress(left);
        } else {
            off.session.streamer.wait_idle(left);
        }
    }
    if off.exposure.auto && o.mode.uses_exposure() {
        // Deterministic for a still view: the same frames are metered every run, until the
        // exposure stops moving, and the picture is then drawn with the settled value.
        for _ in 0..METER_FRAMES {
            off.frame(o, &camera, 0.0, FrameReport::default(), true);
            off.gpu.wait_idle()?;
            let Some(m) = off.session.renderer.metered() else { break };
            if off.exposure.adapt(m, 1.0) < CONVERGED_EV {
                break;
            }
        }
        eprintln!("kiln-view: exposure auto {:+.2} EV", off.exposure.ev);
    }
    let t = Instant::now();
    let report = off.frame(o, &camera, 0.0, FrameReport::default(), true);
    off.gpu.wait_idle()?;
    off.startup.final_frame_ms = Some(since(o.launched));
    if o.hud {
        // Draw again so the HUD shows this frame's real time and counts.
        let ms = t.elapsed().as_secs_f64() * 1e3;
        off.frame(o, &camera, ms, report, true);
        off.gpu.wait_idle()?;
    }
    off.gpu.take_error()?;
    Ok(report)
}

fn fly(off: &mut Offscreen, o: &HeadlessOptions, points: &[flypath::PathPoint]) -> Result<(), ViewerError> {
    let w = off.session.world;
    let mut records: Vec<FrameRecord> = Vec::with_capacity(points.len());
    let mut starts: Vec<Instant> = Vec::with_capacity(points.len());
    let mut last = FrameReport::default();
    let (mut tiles, mut triangles) = (0u64, 0u64);
    let mut counts: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    let mut parts: std::collections::BTreeMap<&'static str, Vec<f64>> = std::collections::BTreeMap::new();
    // Frames are pipelined as in the window: the CPU streams and records frame i while the GPU
    // draws frame i - 1, and waits for frame i - 1 only once frame i is submitted.
    let mut in_flight: Option<(usize, wgpu::SubmissionIndex, bool, FrameReport)> = None;
    for (i, p) in points.iter().enumerate() {
        let camera = Camera::from_pose(p.pose, w.min, w.max);
        let velocity = match i.checked_sub(1).map(|j| &points[j]) {
            Some(prev) if p.t > prev.t => (p.pose.position - prev.pose.position) / (p.t - prev.t) as f32,
            _ => Vec3::ZERO,
        };
        let start = Instant::now();
        let shown_ms = starts.last().map_or(0.0, |&s: &Instant| (start - s).as_secs_f64() * 1e3);
        starts.push(start);
        off.clock = p.t as f32;
        let u = off.session.update(&off.gpu.device, &camera, o.size, velocity);
        let encode = Instant::now();
        last = off.frame(o, &camera, shown_ms, last, false);
        let submitted = Instant::now();
        let complete = off.session.complete();
        if let Some((j, done, was_complete, report)) = in_flight.take() {
            let gpu = off.session.renderer.previous_pass_times(&off.gpu, done.clone())?;
            if gpu.is_none() {
                off.gpu.wait_for(done)?;
            }
            off.frame_done(o, &mut records[j], starts[j], gpu, was_complete, report, &mut parts);
        }
        let wait_ms = submitted.elapsed().as_secs_f64() * 1e3;
        records.push(FrameRecord {
            frame: i,
            stream_ms: u.stream_ms,
            upload_ms: u.upload_ms,
            encode_ms: (submitted - encode).as_secs_f64() * 1e3,
            wait_ms,
            uploads: u.uploads,
            upload_bytes: u.upload_bytes,
            drawn_triangles: last.drawn_triangles,
            shadow_rendered: last.shadow_rendered,
            shadow_triangles: last.shadow_triangles,
            ..Default::default()
        });
        in_flight = off.session.renderer.last_submission().map(|s| (i, s, complete, last));
        tiles += last.drawn_tiles as u64;
        triangles += last.drawn_triangles;
        for (n, v) in last.counts.iter() {
            *counts.entry(n.to_string()).or_default() += *v as f64;
        }
        report_errors(&u.new_errors);
        off.gpu.take_error()?;
    }
    if let Some((j, _, complete, report)) = in_flight.take() {
        // The last frame has no successor to overlap: its time runs to its own completion, and
        // waiting for that is part of it.
        let waiting = Instant::now();
        let gpu = off.session.renderer.pass_times(&off.gpu)?;
        off.gpu.wait_idle()?;
        records[j].wait_ms += waiting.elapsed().as_secs_f64() * 1e3;
        off.frame_done(o, &mut records[j], starts[j], gpu, complete, report, &mut parts);
    }
    // A frame's time runs to the next frame's start; the last one's to its GPU completion.
    for (k, r) in records.iter_mut().enumerate() {
        r.total_ms = starts.get(k + 1).map_or(r.latency_ms, |&next| (next - starts[k]).as_secs_f64() * 1e3);
    }
    let ms: Vec<f64> = records.iter().map(|r| r.total_ms).collect();
    let s = off.session.streamer.stats();
    let q = flypath::percentiles(&ms);
    let stats = FlyStats {
        frames: ms.len(),
        frame_ms: q,
        latency_ms: flypath::percentiles(&records.iter().map(|r| r.latency_ms).collect::<Vec<_>>()),
        frames_in_flight: crate::renderer::gpu_timer::FRAMES_IN_FLIGHT,
        gpu_main_parts_ms: parts.iter().map(|(l, v)| (l.to_string(), flypath::percentiles(v))).collect(),
        phases: flypath::PhaseStats::of(&records),
        slowest_frames: flypath::slowest(&records, 8),
        over_3x_median: flypath::over_median(&ms, 3.0),
        shadow_map_renders: records.iter().filter(|r| r.shadow_rendered).count(),
        startup: off.startup,
        hitches: flypath::hitches(&ms),
        hitch_threshold_ms: 2.0 * q.p50,
        tiles_streamed: s.tiles_streamed,
        bytes_uploaded: s.bytes_uploaded,
        peak_resident_bytes: s.peak_resident_bytes,
        failed_tiles: off.session.error_count,
        mean_drawn_tiles: tiles as f64 / ms.len().max(1) as f64,
        mean_drawn_triangles: triangles as f64 / ms.len().max(1) as f64,
        mean_drawn: counts.into_iter().map(|(n, v)| (n, v / ms.len().max(1) as f64)).collect(),
        size: o.size,
        mode: o.mode.name().to_string(),
        adapter: off.gpu.description.clone(),
    };
    if let Some(path) = &o.stats {
        stats.write(path)?;
    }
    eprintln!(
        "kiln-view: {} frames: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {} hitches, {} over 3x the median; {} tiles streamed",
        stats.frames, q.p50, q.p90, q.p99, q.max, stats.hitches, stats.over_3x_median, stats.tiles_streamed
    );
    Ok(())
}
