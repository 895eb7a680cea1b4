//! GPU time of the shadow and main passes from timestamp queries, for `--stats`: whether a frame is bound by the GPU
//! or by the CPU, and by which pass, cannot be told from wall-clock time alone.
//!
//! Only used where the adapter grants `Features::TIMESTAMP_QUERY` and the caller asks for it; the
//! readback waits for the GPU, so it belongs after a frame's timing has stopped.

use crate::error::ViewerError;
use crate::gpu::Gpu;

/// The timed passes, in frame order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// The shadow map pass (not run in unlit modes, nor on frames that redraw no casters).
    Shadow = 0,
    /// The main pass: every layer's opaque, sky, transparent, volumetric and overlay phases.
    Main = 1,
}

const SPANS: usize = 2;
const QUERIES: u32 = 2 * SPANS as u32;
const BYTES: u64 = QUERIES as u64 * 8;
/// Each span resolves separately (only written queries may be resolved), at an offset aligned as
/// wgpu requires.
const RESOLVE_STRIDE: u64 = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;

/// GPU milliseconds per pass of one frame (0 for a pass the frame did not run).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassTimes {
    /// GPU time of [`Span::Shadow`].
    pub shadow_ms: f64,
    /// GPU time of [`Span::Main`].
    pub main_ms: f64,
}

impl PassTimes {
    /// Sum of the passes.
    pub fn total_ms(&self) -> f64 {
        self.shadow_ms + self.main_ms
    }
}

/// A query set with a begin/end pair per [`Span`] and the buffers to read it back.
pub struct GpuTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
    /// Spans written by the frame being recorded (an unwritten query has no defined value).
    written: [bool; SPANS],
}

impl GpuTimer {
    /// A timer, or `None` when the device was not granted timestamp queries.
    pub fn new(gpu: &Gpu) -> Option<Self> {
        if !gpu.timestamps {
            return None;
        }
        let device = &gpu.device;
        let queries =
            device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("pass times"), ty: wgpu::QueryType::Timestamp, count: QUERIES });
        let buffer =
            |label, size, usage| device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false });
        let resolve = buffer("pass times resolve", SPANS as u64 * RESOLVE_STRIDE, wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let readback = buffer("pass times readback", BYTES, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        Some(GpuTimer { queries, resolve, readback, period_ns: f64::from(gpu.queue.get_timestamp_period()), written: [false; SPANS] })
    }

    /// Starts recording a frame: no span written yet.
    pub fn begin_frame(&mut self) {
        self.written = [false; SPANS];
    }

    /// The timestamp writes of `span`'s render pass.
    pub fn pass_writes(&mut self, span: Span) -> wgpu::RenderPassTimestampWrites<'_> {
        let i = span as u32;
        self.written[i as usize] = true;
        wgpu::RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        }
    }

    /// Resolves the spans written this frame into the readback buffer (at the end of the frame's
    /// command encoder).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        for (i, _) in self.written.iter().enumerate().filter(|(_, &w)| w) {
            let first = 2 * i as u32;
            encoder.resolve_query_set(&self.queries, first..first + 2, &self.resolve, i as u64 * RESOLVE_STRIDE);
            encoder.copy_buffer_to_buffer(&self.resolve, i as u64 * RESOLVE_STRIDE, &self.readback, i as u64 * 16, 16);
        }
    }

    /// Waits for the last submitted frame and returns its pass times.
    pub fn read(&self, gpu: &Gpu) -> Result<PassTimes, ViewerError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        gpu.wait_idle()?;
        rx.recv()
            .map_err(|_| ViewerError::Gpu("timestamp readback never completed".into()))?
            .map_err(|e| ViewerError::Gpu(format!("timestamp readback failed: {e}")))?;
        let ticks: [u64; QUERIES as usize] = {
            let view = self.readback.get_mapped_range(..).map_err(|e| ViewerError::Gpu(format!("timestamp readback failed: {e}")))?;
            bytemuck::pod_read_unaligned(&view[..BYTES as usize])
        };
        self.readback.unmap();
        let ms = |span: Span| {
            let i = span as usize;
            // wrapping_sub + a sanity bound: a timestamp counter may wrap, and a driver that reorders
            // begin/end would otherwise give an absurd figure instead of zero.
            let d = ticks[2 * i + 1].wrapping_sub(ticks[2 * i]) as f64 * self.period_ns * 1e-6;
            if self.written[i] && d < 1e5 {
                d
            } else {
                0.0
            }
        };
        Ok(PassTimes { shadow_ms: ms(Span::Shadow), main_ms: ms(Span::Main) })
    }
}
