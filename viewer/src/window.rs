//! The interactive viewer: a winit 0.30 window, the fly camera, keys, the HUD and screenshots.
//!
//! Keys: WASD move, Q/E down/up, Shift ×4, wheel changes speed, right mouse button (held) or Tab
//! (toggle capture) looks around, 1–9 view modes, V vsync, H HUD, [ ] (or - +) exposure, X automatic
//! exposure, F12 screenshot (PNG in the
//! current directory), Esc releases the cursor or quits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{DeviceEvent, DeviceId, ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{CursorGrabMode, Window, WindowId};

use crate::camera::{Camera, CameraPose, FlyController, Move};
use crate::error::ViewerError;
use crate::exposure::{Exposure, ExposureArg};
use crate::gpu::Gpu;
use crate::hud_text::{hud_lines, HudInfo};
use crate::layers::LayerSettings;
use crate::renderer::{FrameDesc, FrameReport, Renderer};
use crate::screenshot::{offscreen_target, read_rgba, save_png};
use crate::session::{open_streamer, world_info, Session};
use crate::streaming::{StreamConfig, Streamer, TileId};
use crate::view_mode::ViewMode;

/// Options of a windowed run (from the command line).
#[derive(Clone, Debug)]
pub struct WindowOptions {
    /// The bake directory (`out/<world>/`, holding the manifest).
    pub bake_dir: PathBuf,
    /// The starting pose; `None`: the world overview.
    pub camera: Option<CameraPose>,
    /// Initial inner size of the window in pixels.
    pub size: [u32; 2],
    /// The view mode at start (keys switch it).
    pub mode: ViewMode,
    /// How tiles stream: GPU budget, LOD error limit, loader threads, upload cap.
    pub config: StreamConfig,
    /// Tiles never loaded (a test hook): their nearest resident ancestor is drawn instead.
    pub withhold: Vec<TileId>,
    /// Exit after this many frames (tests, benchmarks).
    pub frames: Option<u64>,
    /// Draw wireframes from edge lists even where line polygon mode exists (tests the fallback).
    pub edge_wireframe: bool,
    /// Layers left out of the picture, by product name.
    pub hidden_layers: Vec<String>,
    /// Exposure at start: fixed stops, or automatic metering (keys change it).
    pub exposure: ExposureArg,
    /// The layers' settings at start (grass distance, forced grass level); G / Shift+G change the distance.
    pub settings: LayerSettings,
}

/// Factor of one grass-distance key press.
const GRASS_STEP: f32 = 1.25;

/// Stops per exposure key press.
const EXPOSURE_STEP: f32 = 0.5;
/// How far one metering moves automatic exposure toward its target: it settles over a few dozen
/// frames, like an eye adapting, instead of pumping with every small change of view.
const ADAPT_RATE: f32 = 0.15;

/// Opens the window and runs until it is closed (or `frames` have been presented).
pub fn run(o: WindowOptions) -> Result<(), ViewerError> {
    let streamer = open_streamer(&o.bake_dir, o.config, &o.withhold)?;
    let has = |v: &str| std::env::var_os(v).is_some_and(|s| !s.is_empty());
    if !has("DISPLAY") && !has("WAYLAND_DISPLAY") {
        return Err(ViewerError::NoDisplay("DISPLAY is not set".into()));
    }
    let event_loop = EventLoop::new().map_err(|e| ViewerError::NoDisplay(e.to_string()))?;
    let display = event_loop.owned_display_handle();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(display)));
    let mut app = App { start: Some((o, streamer, instance)), running: None, error: None };
    event_loop.run_app(&mut app).map_err(|e| ViewerError::Window(e.to_string()))?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct App {
    /// What `resumed` needs to open the window; taken there.
    start: Option<(WindowOptions, Streamer, wgpu::Instance)>,
    running: Option<Running>,
    error: Option<ViewerError>,
}

struct Running {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    present_modes: Vec<wgpu::PresentMode>,
    gpu: Gpu,
    session: Session,
    camera: Camera,
    controller: FlyController,
    mode: ViewMode,
    budget: u64,
    vsync: bool,
    show_hud: bool,
    looking: bool,
    captured: bool,
    cursor: Option<[f64; 2]>,
    last_frame: Instant,
    frame_ms: f64,
    last_report: FrameReport,
    frames: u64,
    max_frames: Option<u64>,
    screenshot: bool,
    screenshots_taken: u32,
    exposure: Exposure,
    settings: LayerSettings,
    started: Instant,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: ViewerError) {
        self.error.get_or_insert(e);
        event_loop.exit();
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        let Some((o, streamer, instance)) = self.start.take() else { return };
        match Running::open(event_loop, o, streamer, instance) {
            Ok(r) => {
                r.window.request_redraw();
                self.running = Some(r);
            }
            Err(e) => self.fail(event_loop, e),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(r) = self.running.as_mut() else { return };
        let result = match event {
            WindowEvent::CloseRequested => {
                event_loop.exit();
                Ok(())
            }
            WindowEvent::Resized(size) => {
                r.resize(size);
                Ok(())
            }
            WindowEvent::Focused(false) => {
                r.controller.release_all();
                r.looking = false;
                Ok(())
            }
            WindowEvent::KeyboardInput { event, .. } => {
                let PhysicalKey::Code(code) = event.physical_key else { return };
                r.key(event_loop, code, event.state == ElementState::Pressed, event.repeat);
                Ok(())
            }
            WindowEvent::MouseInput { state, button: MouseButton::Right, .. } => {
                r.looking = state == ElementState::Pressed;
                Ok(())
            }
            WindowEvent::MouseWheel { delta, .. } => {
                r.controller.wheel(match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                });
                Ok(())
            }
            WindowEvent::CursorMoved { position, .. } => {
                r.cursor = Some([position.x, position.y]);
                Ok(())
            }
            WindowEvent::CursorLeft { .. } => {
                r.cursor = None;
                Ok(())
            }
            WindowEvent::RedrawRequested => r.redraw(event_loop),
            _ => Ok(()),
        };
        if let Err(e) = result {
            self.fail(event_loop, e);
        }
    }

    fn device_event(&mut self, _event_loop: &ActiveEventLoop, _id: DeviceId, event: DeviceEvent) {
        // Raw motion, not cursor positions: looking keeps working when the cursor is locked or at
        // the screen edge.
        if let (Some(r), DeviceEvent::MouseMotion { delta }) = (self.running.as_mut(), event) {
            if r.looking || r.captured {
                r.controller.look(&mut r.camera, delta.0, delta.1);
            }
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(r) = &self.running {
            r.window.request_redraw();
        }
    }
}

impl Running {
    fn open(event_loop: &ActiveEventLoop, o: WindowOptions, streamer: Streamer, instance: wgpu::Instance) -> Result<Running, ViewerError> {
        event_loop.set_control_flow(ControlFlow::Poll);
        let world = world_info(&streamer);
        let title = format!("kiln-view: {}", streamer.manifest().world_name);
        let attrs = Window::default_attributes().with_title(title).with_inner_size(PhysicalSize::new(o.size[0], o.size[1]));
        let window = Arc::new(event_loop.create_window(attrs).map_err(|e| ViewerError::Window(e.to_string()))?);
        let surface = instance.create_surface(window.clone()).map_err(|e| ViewerError::Window(e.to_string()))?;
        let gpu = Gpu::new(instance, Some(&surface))?;
        let size = window.inner_size();
        let caps = surface.get_capabilities(&gpu.adapter);
        let mut config = surface
            .get_default_config(&gpu.adapter, size.width.max(1), size.height.max(1))
            .ok_or_else(|| ViewerError::Window(format!("the surface is not supported by {}", gpu.description)))?;
        // An sRGB swap chain: the shaders write linear colour.
        if let Some(f) = caps.formats.iter().find(|f| f.is_srgb()) {
            config.format = *f;
        }
        config.present_mode = wgpu::PresentMode::Fifo;
        // Automatic exposure reads a few rows of the finished frame back; without copies from the
        // swap chain it has nothing to meter and the exposure stays where it is.
        if caps.usages.contains(wgpu::TextureUsages::COPY_SRC) {
            config.usage |= wgpu::TextureUsages::COPY_SRC;
        }
        surface.configure(&gpu.device, &config);
        let mut renderer = Renderer::new(&gpu, config.format, [config.width, config.height], (world, streamer.shared()), o.mode, o.edge_wireframe);
        for name in &o.hidden_layers {
            renderer.hide_layer(name, true);
        }
        let camera = match o.camera {
            Some(p) => Camera::from_pose(p, world.min, world.max),
            None => Camera::overview(world.min, world.max),
        };
        Ok(Running {
            window,
            surface,
            present_modes: caps.present_modes,
            config,
            gpu,
            session: Session::new(streamer, renderer),
            camera,
            controller: FlyController::new((world.max - world.min).truncate().length()),
            mode: o.mode,
            budget: o.config.budget_bytes,
            vsync: true,
            show_hud: true,
            looking: false,
            captured: false,
            cursor: None,
            last_frame: Instant::now(),
            frame_ms: 0.0,
            last_report: FrameReport::default(),
            frames: 0,
            max_frames: o.frames,
            screenshot: false,
            screenshots_taken: 0,
            exposure: Exposure::new(o.exposure),
            settings: o.settings,
            started: Instant::now(),
        })
    }

    fn resize(&mut self, size: PhysicalSize<u32>) {
        if size.width == 0 || size.height == 0 {
            return; // minimised: keep the old swap chain until there is something to draw
        }
        self.config.width = size.width;
        self.config.height = size.height;
        self.surface.configure(&self.gpu.device, &self.config);
        self.session.renderer.resize(&self.gpu.device, [size.width, size.height]);
    }

    fn key(&mut self, event_loop: &ActiveEventLoop, code: KeyCode, down: bool, repeat: bool) {
        let movement = match code {
            KeyCode::KeyW => Some(Move::Forward),
            KeyCode::KeyS => Some(Move::Back),
            KeyCode::KeyA => Some(Move::Left),
            KeyCode::KeyD => Some(Move::Right),
            KeyCode::KeyQ => Some(Move::Down),
            KeyCode::KeyE => Some(Move::Up),
            KeyCode::ShiftLeft | KeyCode::ShiftRight => Some(Move::Fast),
            _ => None,
        };
        if let Some(m) = movement {
            self.controller.set(m, down);
            return;
        }
        if !down || repeat {
            return;
        }
        let digit = match code {
            KeyCode::Digit1 => Some(1),
            KeyCode::Digit2 => Some(2),
            KeyCode::Digit3 => Some(3),
            KeyCode::Digit4 => Some(4),
            KeyCode::Digit5 => Some(5),
            KeyCode::Digit6 => Some(6),
            KeyCode::Digit7 => Some(7),
            KeyCode::Digit8 => Some(8),
            KeyCode::Digit9 => Some(9),
            // Key 0: the water modes in turn (caustics, then the water mask).
            KeyCode::Digit0 => Some(if self.mode == ViewMode::Caustics { 11 } else { 10 }),
            _ => None,
        };
        if let Some(mode) = digit.and_then(ViewMode::from_digit) {
            self.mode = mode;
            return;
        }
        match code {
            KeyCode::KeyV => self.set_vsync(!self.vsync),
            KeyCode::KeyH => self.show_hud = !self.show_hud,
            KeyCode::F12 => self.screenshot = true,
            KeyCode::BracketRight | KeyCode::Equal | KeyCode::NumpadAdd => self.exposure.step(EXPOSURE_STEP),
            KeyCode::BracketLeft | KeyCode::Minus | KeyCode::NumpadSubtract => self.exposure.step(-EXPOSURE_STEP),
            KeyCode::KeyX => self.exposure.toggle_auto(),
            KeyCode::KeyG => {
                let shift = self.controller.fast();
                self.settings.grass_distance =
                    if shift { self.settings.grass_distance / GRASS_STEP } else { self.settings.grass_distance * GRASS_STEP };
            }
            KeyCode::Tab => self.set_captured(!self.captured),
            KeyCode::Escape if self.captured => self.set_captured(false),
            KeyCode::Escape => event_loop.exit(),
            _ => {}
        }
    }

    /// Vsync off uses the lowest-latency mode the surface offers; if it offers none, stays on Fifo.
    fn set_vsync(&mut self, on: bool) {
        let mode = if on {
            Some(wgpu::PresentMode::Fifo)
        } else {
            [wgpu::PresentMode::Immediate, wgpu::PresentMode::Mailbox].into_iter().find(|m| self.present_modes.contains(m))
        };
        if let Some(m) = mode {
            self.vsync = on;
            self.config.present_mode = m;
            self.surface.configure(&self.gpu.device, &self.config);
        }
    }

    fn set_captured(&mut self, captured: bool) {
        if captured {
            // Locked keeps the pointer still (X11 lacks it); Confined at least keeps it inside.
            let ok = self.window.set_cursor_grab(CursorGrabMode::Locked).or_else(|_| self.window.set_cursor_grab(CursorGrabMode::Confined));
            if ok.is_err() {
                return;
            }
        } else {
            let _ = self.window.set_cursor_grab(CursorGrabMode::None);
        }
        self.window.set_cursor_visible(!captured);
        self.captured = captured;
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), ViewerError> {
        let now = Instant::now();
        let dt = now.duration_since(self.last_frame).as_secs_f64();
        self.last_frame = now;
        // Smoothed for a readable HUD; a single spike still shows.
        self.frame_ms = if self.frames == 0 { dt * 1e3 } else { self.frame_ms * 0.9 + dt * 1e3 * 0.1 };
        let w = self.session.world;
        let velocity = self.controller.advance(&mut self.camera, dt.min(0.1) as f32);
        self.camera.fit_clip_planes(w.min, w.max);
        let size = [self.config.width, self.config.height];
        let update = self.session.update(&self.gpu.device, &self.camera, size, velocity);
        for e in &update.new_errors {
            eprintln!("kiln-view: warning: {e}");
        }
        // Collect the tile id read back last frame (never waits).
        let _ = self.gpu.device.poll(wgpu::PollType::Poll);
        let inspecting = self.cursor.is_some() || self.captured;
        if let Some(m) = self.session.renderer.metered() {
            self.exposure.adapt(m, ADAPT_RATE);
        }
        let picked = if inspecting { self.session.renderer.picked().flatten() } else { None };
        let hud = if self.show_hud { self.hud(inspecting.then_some(picked)) } else { Vec::new() };
        let pick_px = self.cursor.filter(|c| !self.captured && c[0] >= 0.0 && c[1] >= 0.0).map(|c| [c[0] as u32, c[1] as u32]);
        // Captured: the tile at the screen centre (where the camera looks) is the one inspected.
        let pick_px = if self.captured { Some([size[0] / 2, size[1] / 2]) } else { pick_px };
        let camera = self.camera;
        let e = self.exposure;
        let settings = LayerSettings { time_s: self.started.elapsed().as_secs_f32(), ..self.settings };
        let desc = FrameDesc {
            camera: &camera,
            mode: self.mode,
            hud: &hud,
            highlight: picked,
            pick_px,
            still: false,
            exposure_ev: e.ev,
            meter: e.auto,
            settings,
        };

        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return Ok(()),
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.gpu.device, &self.config);
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Validation => return Err(ViewerError::Gpu("the swap chain reported a validation error".into())),
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        self.last_report = self.session.render(&self.gpu, &view, &desc);
        if std::mem::take(&mut self.screenshot) {
            self.save_screenshot(&desc)?;
        }
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        self.gpu.take_error()?;
        self.frames += 1;
        if self.max_frames.is_some_and(|n| self.frames >= n) {
            event_loop.exit();
        }
        Ok(())
    }

    /// The HUD; `picked` is `None` when nothing is being inspected, `Some(None)` over the sky.
    fn hud(&self, picked: Option<Option<TileId>>) -> Vec<crate::passes::hud::HudLine> {
        let s = &self.session;
        let cursor = picked.map(|p| (p, p.and_then(|k| s.streamer.tile_info(k)), p.and_then(|k| s.renderer.tile_meta(k))));
        hud_lines(&HudInfo {
            world_name: &s.streamer.manifest().world_name,
            adapter: &self.gpu.description,
            mode: self.mode,
            vsync: Some(self.vsync),
            frame_ms: self.frame_ms,
            stats: s.streamer.stats(),
            budget_bytes: self.budget,
            drawn: self.last_report,
            camera: &self.camera,
            speed: self.controller.speed,
            exposure: self.exposure,
            cursor,
            last_error: s.last_error.as_deref(),
            error_count: s.error_count,
            keys_help: true,
            grass_distance: s.streamer.shared().0.contains_key(crate::layers::grass::NAME).then_some(self.settings.grass_distance),
        })
    }

    /// Renders the current frame again into an offscreen copy (a swap-chain image cannot be
    /// copied from on every platform) and writes `kiln-view-<unix seconds>-<n>.png`.
    fn save_screenshot(&mut self, desc: &FrameDesc<'_>) -> Result<(), ViewerError> {
        let size = [self.config.width, self.config.height];
        let target = offscreen_target(&self.gpu.device, self.config.format, size);
        let view = target.create_view(&wgpu::TextureViewDescriptor::default());
        // A picture to keep: its shadows must be those of this view, not a redraw still under way.
        self.session.render(&self.gpu, &view, &FrameDesc { still: true, meter: false, ..*desc });
        let img = read_rgba(&self.gpu, &target)?;
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        self.screenshots_taken += 1;
        let path = PathBuf::from(format!("kiln-view-{secs}-{}.png", self.screenshots_taken));
        save_png(&img, &path)?;
        eprintln!("kiln-view: screenshot {}", path.display());
        Ok(())
    }
}
