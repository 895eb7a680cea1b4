//! GPU time of the shadow and main passes from timestamp queries, for `--stats`: whether a frame is bound by the GPU
//! or by the CPU, and by which pass, cannot be told from wall-clock time alone.
//!
//! Only used where the adapter grants `Features::TIMESTAMP_QUERY` and the caller asks for it. Each
//! of the last [`FRAMES_IN_FLIGHT`] frames resolves into a readback buffer of its own, so a frame's
//! times can be read once that frame is done while the next one is still on the GPU.

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
/// Frames a caller may have on the GPU at once and still read each one's times.
pub const FRAMES_IN_FLIGHT: usize = 2;
const QUERIES: u32 = 2 * SPANS as u32;
const BYTES: u64 = QUERIES as u64 * 8;
/// Each span resolves separately (only written queries may be resolved), at an offset aligned as
/// wgpu requires.
const RESOLVE_STRIDE: u64 = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;

/// The readback slot of the frame begun `frames_ago` frames before the latest of `frames` begun.
fn ring_slot(frames: usize, frames_ago: usize) -> usize {
    frames.saturating_sub(1 + frames_ago) % FRAMES_IN_FLIGHT
}

/// Maps `readback` once `done` (or, for `None`, all submitted work) has finished on the GPU and
/// returns its first `count` timestamps; `what` names the readback in errors.
fn read_ticks(gpu: &Gpu, readback: &wgpu::Buffer, done: Option<wgpu::SubmissionIndex>, count: usize, what: &str) -> Result<Vec<u64>, ViewerError> {
    let (tx, rx) = std::sync::mpsc::channel();
    readback.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    gpu.device.poll(wgpu::PollType::Wait { submission_index: done, timeout: None }).map_err(|e| ViewerError::Gpu(e.to_string()))?;
    rx.recv()
        .map_err(|_| ViewerError::Gpu(format!("{what} readback never completed")))?
        .map_err(|e| ViewerError::Gpu(format!("{what} readback failed: {e}")))?;
    let ticks = {
        let view = readback.get_mapped_range(..).map_err(|e| ViewerError::Gpu(format!("{what} readback failed: {e}")))?;
        view.chunks_exact(8).take(count).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect()
    };
    readback.unmap();
    Ok(ticks)
}

/// GPU milliseconds per pass of one frame (0 for a pass the frame did not run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTimes {
    /// GPU time of [`Span::Shadow`].
    pub shadow_ms: f64,
    /// GPU time of [`Span::Main`].
    pub main_ms: f64,
    /// The main pass by what ran in it (layers, the sky, the split for a scene copy), where
    /// [`PassMarks`] are available; empty otherwise.
    pub main_parts: Vec<(&'static str, f64)>,
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
    /// One per frame in flight; frame `n` resolves into `readback[n % FRAMES_IN_FLIGHT]`.
    readback: [wgpu::Buffer; FRAMES_IN_FLIGHT],
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
    /// Per readback slot: the spans its frame wrote (an unwritten query has no defined value).
    written: [[bool; SPANS]; FRAMES_IN_FLIGHT],
    /// Frames begun so far; the one being recorded is `frames - 1`.
    frames: usize,
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
        let readback = std::array::from_fn(|_| buffer("pass times readback", BYTES, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST));
        let period_ns = f64::from(gpu.queue.get_timestamp_period());
        Some(GpuTimer { queries, resolve, readback, period_ns, written: [[false; SPANS]; FRAMES_IN_FLIGHT], frames: 0 })
    }

    fn slot(&self, frames_ago: usize) -> usize {
        ring_slot(self.frames, frames_ago)
    }

    /// Starts recording a frame: no span written yet.
    pub fn begin_frame(&mut self) {
        self.frames += 1;
        let slot = self.slot(0);
        self.written[slot] = [false; SPANS];
    }

    /// The timestamp writes of `span`'s render pass.
    pub fn pass_writes(&mut self, span: Span) -> wgpu::RenderPassTimestampWrites<'_> {
        let i = span as u32;
        let slot = self.slot(0);
        self.written[slot][i as usize] = true;
        wgpu::RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        }
    }

    /// Resolves the spans written this frame into the readback buffer (at the end of the frame's
    /// command encoder).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let slot = self.slot(0);
        for (i, _) in self.written[slot].iter().enumerate().filter(|(_, &w)| w) {
            let first = 2 * i as u32;
            encoder.resolve_query_set(&self.queries, first..first + 2, &self.resolve, i as u64 * RESOLVE_STRIDE);
            encoder.copy_buffer_to_buffer(&self.resolve, i as u64 * RESOLVE_STRIDE, &self.readback[slot], i as u64 * 16, 16);
        }
    }

    /// The pass times of the frame recorded `frames_ago` frames before the latest (0: the latest;
    /// at most `FRAMES_IN_FLIGHT - 1`). Waits for `done`, the submission that carried that frame,
    /// or for all submitted work when `None`; never for a later frame.
    pub fn read(&self, gpu: &Gpu, frames_ago: usize, done: Option<wgpu::SubmissionIndex>) -> Result<PassTimes, ViewerError> {
        let slot = self.slot(frames_ago.min(FRAMES_IN_FLIGHT - 1));
        let ticks = read_ticks(gpu, &self.readback[slot], done, QUERIES as usize, "timestamp")?;
        let written = self.written[slot];
        let ms = |span: Span| {
            let i = span as usize;
            // wrapping_sub + a sanity bound: a timestamp counter may wrap, and a driver that reorders
            // begin/end would otherwise give an absurd figure instead of zero.
            let d = ticks[2 * i + 1].wrapping_sub(ticks[2 * i]) as f64 * self.period_ns * 1e-6;
            if written[i] && d < 1e5 {
                d
            } else {
                0.0
            }
        };
        Ok(PassTimes { shadow_ms: ms(Span::Shadow), main_ms: ms(Span::Main), main_parts: Vec::new() })
    }
}

/// Timestamps at the boundaries of the main pass's draws, for a per-layer breakdown of its GPU
/// time in `--stats` (where the adapter grants `Features::TIMESTAMP_QUERY_INSIDE_PASSES`). Each
/// mark ends the span that began at the previous one and names what ran in it; a mark named
/// [`PassMarks::HALF`] starts a pass half, and the gap before it (the end of the previous half,
/// the scene copy and the new half's begin) is reported as [`PassMarks::SPLIT`].
pub struct PassMarks {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: [wgpu::Buffer; FRAMES_IN_FLIGHT],
    /// Per readback slot: the labels of the marks its frame wrote, in order.
    labels: [Vec<&'static str>; FRAMES_IN_FLIGHT],
    period_ns: f64,
    frames: usize,
}

/// Most marks a frame writes; later ones are dropped (two halves of five phases by a handful of
/// layers need about fifty).
const MARKS: u32 = 128;

impl PassMarks {
    /// The label of the mark that starts a pass half.
    pub const HALF: &'static str = "begin";
    /// The label the gap before a second half is reported under.
    pub const SPLIT: &'static str = "split";

    /// Marks, or `None` when the device cannot write timestamps inside passes.
    pub fn new(gpu: &Gpu) -> Option<Self> {
        if !gpu.timestamps_in_passes {
            return None;
        }
        let device = &gpu.device;
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("pass marks"), ty: wgpu::QueryType::Timestamp, count: MARKS });
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size: u64::from(MARKS) * 8, usage, mapped_at_creation: false })
        };
        let resolve = buffer("pass marks resolve", wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let readback = std::array::from_fn(|_| buffer("pass marks readback", wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST));
        let period_ns = f64::from(gpu.queue.get_timestamp_period());
        Some(PassMarks { queries, resolve, readback, labels: Default::default(), period_ns, frames: 0 })
    }

    fn slot(&self, frames_ago: usize) -> usize {
        ring_slot(self.frames, frames_ago)
    }

    /// Starts recording a frame.
    pub fn begin_frame(&mut self) {
        self.frames += 1;
        let slot = self.slot(0);
        self.labels[slot].clear();
    }

    /// Writes a mark into `pass`: the span since the previous mark ran `label`.
    pub fn mark(&mut self, pass: &mut wgpu::RenderPass<'_>, label: &'static str) {
        let slot = self.slot(0);
        let labels = &mut self.labels[slot];
        if labels.len() < MARKS as usize {
            pass.write_timestamp(&self.queries, labels.len() as u32);
            labels.push(label);
        }
    }

    /// Resolves this frame's marks into its readback buffer (at the end of the frame's encoder).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let slot = self.slot(0);
        let n = self.labels[slot].len() as u32;
        if n > 0 {
            encoder.resolve_query_set(&self.queries, 0..n, &self.resolve, 0);
            encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback[slot], 0, u64::from(n) * 8);
        }
    }

    /// GPU milliseconds per label of the frame `frames_ago` before the latest, summed over its
    /// spans. Waits for `done` (that frame's submission), or for all work when `None`.
    pub fn read(&self, gpu: &Gpu, frames_ago: usize, done: Option<wgpu::SubmissionIndex>) -> Result<Vec<(&'static str, f64)>, ViewerError> {
        let slot = self.slot(frames_ago.min(FRAMES_IN_FLIGHT - 1));
        let labels = &self.labels[slot];
        if labels.len() < 2 {
            return Ok(Vec::new());
        }
        let ticks = read_ticks(gpu, &self.readback[slot], done, labels.len(), "pass marks")?;
        Ok(spans(labels, &ticks, self.period_ns))
    }
}

/// Milliseconds per label from consecutive marks (`labels[k]` names the span ending at
/// `ticks[k]`), in order of first appearance; a span ending at a [`PassMarks::HALF`] mark is
/// [`PassMarks::SPLIT`].
fn spans(labels: &[&'static str], ticks: &[u64], period_ns: f64) -> Vec<(&'static str, f64)> {
    let mut out: Vec<(&'static str, f64)> = Vec::new();
    for k in 1..labels.len().min(ticks.len()) {
        let label = if labels[k] == PassMarks::HALF { PassMarks::SPLIT } else { labels[k] };
        let d = ticks[k].wrapping_sub(ticks[k - 1]) as f64 * period_ns * 1e-6;
        let d = if d < 1e5 { d } else { 0.0 };
        match out.iter_mut().find(|(l, _)| *l == label) {
            Some(e) => e.1 += d,
            None => out.push((label, d)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_sum_by_label_and_name_the_gap_between_halves() {
        let labels = ["begin", "terrain", "sky", "terrain", "begin", "water"];
        let ticks = [100, 300, 350, 400, 1000, 1500];
        let s = spans(&labels, &ticks, 1e6 / 100.0);
        assert_eq!(s, vec![("terrain", 2.0 + 0.5), ("sky", 0.5), ("split", 6.0), ("water", 5.0)]);
    }
}
