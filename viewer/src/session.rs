//! The per-frame glue shared by the window and headless front ends: ask the streamer for a plan,
//! apply it to the renderer, and report each tile error once.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use glam::Vec3;

use crate::camera::Camera;
use crate::error::ViewerError;
use crate::gpu::Gpu;
use crate::renderer::{FrameDesc, FrameReport, Renderer, WorldInfo};
use crate::streaming::{StreamConfig, Streamer, TileId};

/// Opens the bake directory (before any GPU or window work, so a bad path fails fast) and
/// registers the withheld tiles.
pub fn open_streamer(bake_dir: &Path, config: StreamConfig, withhold: &[TileId]) -> Result<Streamer, ViewerError> {
    let mut s = Streamer::open(bake_dir, config)?;
    for &k in withhold {
        s.withhold(k);
    }
    Ok(s)
}

/// The renderer's view of the world, from the manifest. The height range for materials comes from
/// the level-0 tiles: coarser tiles hang longer skirts, which would stretch it downwards.
pub fn world_info(streamer: &Streamer) -> WorldInfo {
    let m = streamer.manifest();
    let fine = m.nodes.iter().filter(|n| n.level == 0);
    let lo = fine.clone().map(|n| n.bounds_min[2]).fold(f32::INFINITY, f32::min);
    let hi = fine.map(|n| n.bounds_max[2]).fold(f32::NEG_INFINITY, f32::max);
    let height_range = if lo.is_finite() && hi.is_finite() && lo < hi { [lo, hi] } else { [m.bounds_min[2], m.bounds_max[2]] };
    WorldInfo { min: Vec3::from(m.bounds_min), max: Vec3::from(m.bounds_max), voxel_size: m.voxel_size, height_range }
}

/// What one [`Session::update`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Update {
    /// Tiles uploaded to the GPU in this step.
    pub uploads: usize,
    /// GPU bytes those uploads allocated.
    pub upload_bytes: u64,
    /// CPU time of the streaming step (LOD cut, residency, queueing loads).
    pub stream_ms: f64,
    /// CPU time of evictions and uploads (buffer creation and copies).
    pub upload_ms: f64,
    /// Tile errors not reported before (streamer load failures and tiles the renderer refused).
    pub new_errors: Vec<String>,
}

/// A streamer feeding a renderer.
pub struct Session {
    /// Chooses, loads and evicts tiles for the camera.
    pub streamer: Streamer,
    /// Holds the uploaded tiles and draws them.
    pub renderer: Renderer,
    /// World bounds and height range, from the streamer's manifest (see [`world_info`]).
    pub world: WorldInfo,
    draw: Vec<TileId>,
    reported: BTreeSet<String>,
    /// The most recent tile error, for the HUD.
    pub last_error: Option<String>,
    /// Tile errors seen so far (each counted once).
    pub error_count: usize,
}

impl Session {
    /// Joins a streamer and a renderer built for its world.
    pub fn new(streamer: Streamer, renderer: Renderer) -> Self {
        let world = world_info(&streamer);
        Session { streamer, renderer, world, draw: Vec::new(), reported: BTreeSet::new(), last_error: None, error_count: 0 }
    }

    /// One streaming step for `camera` on a `size` viewport moving at `velocity`: evictions,
    /// uploads, and the new draw list.
    pub fn update(&mut self, device: &wgpu::Device, camera: &Camera, size: [u32; 2], velocity: Vec3) -> Update {
        let start = Instant::now();
        let plan = self.streamer.update(&camera.stream_view(size, velocity));
        let stream_ms = start.elapsed().as_secs_f64() * 1e3;
        let upload_bytes = plan.uploads.iter().map(|t| t.gpu_bytes()).sum();
        let uploads = plan.uploads.len();
        let start = Instant::now();
        let refused = self.renderer.apply(device, plan.uploads, &plan.evict);
        let upload_ms = start.elapsed().as_secs_f64() * 1e3;
        self.draw = plan.draw;
        let mut new_errors = Vec::new();
        for e in plan.errors.into_iter().chain(refused) {
            if self.reported.insert(e.clone()) {
                self.error_count += 1;
                self.last_error = Some(e.clone());
                new_errors.push(e);
            }
        }
        Update { uploads, upload_bytes, stream_ms, upload_ms, new_errors }
    }

    /// Renders the last update's draw list into `target`.
    pub fn render(&mut self, gpu: &Gpu, target: &wgpu::TextureView, frame: &FrameDesc<'_>) -> FrameReport {
        self.renderer.render(gpu, target, &self.draw, frame)
    }

    /// The draw list of the last update.
    pub fn draw_list(&self) -> &[TileId] {
        &self.draw
    }

    /// Whether the last update's draw list leaves no hole: every selected tile is drawn itself or
    /// through a resident ancestor (a coarser stand-in). The first such frame is the "first
    /// complete frame" of `--stats`.
    pub fn complete(&self) -> bool {
        self.streamer.stats().uncovered == 0
    }

    /// Whether the picture is final for the last camera: every tile the view needs that can
    /// still arrive has been uploaded (the streamer's own criterion).
    pub fn settled(&self) -> bool {
        self.streamer.settled()
    }
}
