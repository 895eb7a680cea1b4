//! The GPU context: instance, adapter, device and queue, and how GPU errors are surfaced.

use std::sync::{Arc, Mutex};

use crate::error::ViewerError;

/// An adapter, its device and queue, and the optional features the renderer found.
pub struct Gpu {
    /// The wgpu instance; a window's surface must come from it.
    pub instance: wgpu::Instance,
    /// The adapter wgpu picked (high-performance preference; able to present to the window if any).
    pub adapter: wgpu::Adapter,
    /// The device; its uncaptured errors are collected for [`Gpu::take_error`] instead of panicking.
    pub device: wgpu::Device,
    /// The device's only queue.
    pub queue: wgpu::Queue,
    /// `Features::POLYGON_MODE_LINE` was granted: wireframe uses it instead of line-list indices.
    pub polygon_line: bool,
    /// `Features::TIMESTAMP_QUERY` was granted: passes can be timed on the GPU (`--stats`).
    pub timestamps: bool,
    /// `Features::TIMESTAMP_QUERY_INSIDE_PASSES` was granted too: the main pass's layers can be
    /// timed one by one (`--stats`).
    pub timestamps_in_passes: bool,
    /// "name (backend, driver)" for logs and the HUD.
    pub description: String,
    errors: Arc<Mutex<Vec<String>>>,
}

/// Device memory in 256 MiB blocks from the start. With wgpu's smaller default blocks the
/// streamer's tiles outgrew the first one mid-flight, and allocating the next one was a hitch; one
/// large block is allocated while the renderer is built (the noise texture lands in it) and holds
/// the default world's whole resident set.
fn memory_hints() -> wgpu::MemoryHints {
    const BLOCK: u64 = 256 << 20;
    wgpu::MemoryHints::Manual { suballocated_device_memory_block_size: BLOCK..BLOCK }
}

impl Gpu {
    /// A context with no window: the instance honours `WGPU_BACKEND` and friends.
    pub fn headless() -> Result<Gpu, ViewerError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        Gpu::new(instance, None)
    }

    /// A context whose adapter can present to `surface` (`instance` must have created it).
    pub fn new(instance: wgpu::Instance, surface: Option<&wgpu::Surface<'_>>) -> Result<Gpu, ViewerError> {
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            compatible_surface: surface,
            ..Default::default()
        }))
        .map_err(|e| ViewerError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let description = format!("{} ({:?}, {})", info.name, info.backend, if info.driver.is_empty() { "?" } else { &info.driver });
        // Optional features are requested only where the adapter has them; each one's absence has a
        // fallback (edge-list wireframe, no per-pass GPU times).
        let wanted = wgpu::Features::POLYGON_MODE_LINE | wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        let required_features = adapter.features() & wanted;
        let polygon_line = required_features.contains(wgpu::Features::POLYGON_MODE_LINE);
        let timestamps = required_features.contains(wgpu::Features::TIMESTAMP_QUERY);
        let timestamps_in_passes = timestamps && required_features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        // Downlevel limits are all the renderer needs, except texture size (large windows, screenshots).
        let mut required_limits = wgpu::Limits::downlevel_defaults().using_resolution(adapter.limits()).using_alignment(adapter.limits());
        // The grass's selection reads and writes ten storage buffers, some of them large (every
        // blade drawn in a frame); every Vulkan adapter has these limits.
        let a = adapter.limits();
        required_limits.max_storage_buffers_per_shader_stage = a.max_storage_buffers_per_shader_stage.min(16);
        required_limits.max_storage_buffer_binding_size = a.max_storage_buffer_binding_size;
        required_limits.max_buffer_size = a.max_buffer_size;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("kiln-view"),
            required_features,
            required_limits,
            memory_hints: memory_hints(),
            ..Default::default()
        }))
        .map_err(|e| ViewerError::Device { adapter: description.clone(), reason: e.to_string() })?;
        // wgpu panics on an uncaptured error by default; record it instead so the frame loop can
        // stop with one clear line.
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                // wgpu's messages span several indented lines ("Caused by: ..."): keep them all, on one.
                let text = e.to_string();
                v.push(text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "));
            }
        }));
        Ok(Gpu { instance, adapter, device, queue, polygon_line, timestamps, timestamps_in_passes, description, errors })
    }

    /// Whether the adapter is a CPU rasteriser (lavapipe): the renderer then trades a little
    /// quality for frame time.
    pub fn is_cpu(&self) -> bool {
        self.adapter.get_info().device_type == wgpu::DeviceType::Cpu
    }

    /// The first GPU error recorded since the last call, if any.
    pub fn take_error(&self) -> Result<(), ViewerError> {
        let first = {
            let mut v = self.errors.lock().map_err(|_| ViewerError::Gpu("error sink poisoned".into()))?;
            let first = v.first().cloned();
            v.clear();
            first
        };
        first.map_or(Ok(()), |e| Err(ViewerError::Gpu(e)))
    }

    /// Refuses a render target larger than the device allows, with a clear message instead of a
    /// validation error later.
    pub fn check_size(&self, size: [u32; 2]) -> Result<(), ViewerError> {
        let max = self.device.limits().max_texture_dimension_2d;
        if size[0] > max || size[1] > max {
            return Err(ViewerError::Usage(format!(
                "{}x{} exceeds the largest texture {} supports ({max}x{max})",
                size[0], size[1], self.description
            )));
        }
        Ok(())
    }

    /// Blocks until the GPU has finished `submission` (and all work submitted before it).
    pub fn wait_for(&self, submission: wgpu::SubmissionIndex) -> Result<(), ViewerError> {
        self.device.poll(wgpu::PollType::Wait { submission_index: Some(submission), timeout: None }).map_err(|e| ViewerError::Gpu(e.to_string()))?;
        Ok(())
    }

    /// Blocks until the GPU has finished all submitted work.
    pub fn wait_idle(&self) -> Result<(), ViewerError> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| ViewerError::Gpu(e.to_string()))?;
        Ok(())
    }
}
