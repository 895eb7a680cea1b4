//! The grass layer: resident tiles' ground samples in one storage buffer (a slot per tile), and
//! per frame: candidate instances on the CPU, the per-blade selection in a compute pass appending
//! to per-level lists, one indirect draw per level, flowers, and the ground tint.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use glam::{Mat4, Vec3};
use wgpu::util::DeviceExt;

use super::assets::GrassAssets;
use super::decode::{TileGrass, SAMPLE_WORDS, TINT_STRIDE};
use super::gpu::{GpuJob, GpuParams, GpuTileInfo, GrassPipelines, ENTRY_BYTES, WORKGROUP};
use super::select::{instance_mask, tile_in_reach, Lod};
use crate::layers::{downcast, Bindings, Counts, Decoded, DrawItem, Extent, FrameContext, Layer, LayerInit, Phase};
use crate::renderer::culling;
use crate::streaming::TileId;
use crate::view_mode::ViewMode;

/// Names of the per-level drawn counts in the HUD and `--stats`.
pub const LEVEL_NAMES: [&str; 6] = ["grass_l0", "grass_l1", "grass_l2", "grass_l3", "grass_l4", "grass_l5"];
/// Blades within the grass distance, in view or not (level-0 blades of the instances whose centre
/// is within `D`, × the keep there).
pub const IN_DISTANCE: &str = "grass_in_distance";
/// Blades drawn (every level).
pub const DRAWN: &str = "grass_drawn";
/// Candidate blades the per-frame lists have room for before they grow.
const ENTRIES_AT_START: u64 = 1 << 22;
/// Entries per dynamic-offset step (256-byte storage offset alignment).
const REGION_ALIGN: u64 = 256 / ENTRY_BYTES;

struct Resident {
    data: TileGrass,
    slot: Option<u32>,
    bytes: u64,
}

/// A growable GPU buffer (power-of-two sizes).
struct Grow {
    label: &'static str,
    usage: wgpu::BufferUsages,
    buffer: Option<wgpu::Buffer>,
}

impl Grow {
    fn new(label: &'static str, usage: wgpu::BufferUsages) -> Self {
        Grow { label, usage, buffer: None }
    }

    /// Makes it hold at least `bytes`; true when it was (re)created.
    fn reserve(&mut self, device: &wgpu::Device, bytes: u64) -> bool {
        let bytes = bytes.max(256);
        if self.buffer.as_ref().is_some_and(|b| b.size() >= bytes) {
            return false;
        }
        self.buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(self.label),
            size: bytes.next_power_of_two(),
            usage: self.usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }));
        true
    }

    fn write(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, bytes: &[u8]) {
        self.reserve(device, bytes.len() as u64);
        if !bytes.is_empty() {
            queue.write_buffer(self.get(), 0, bytes);
        }
    }

    fn get(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("reserved before use")
    }
}

/// What one frame drew, for `record`.
#[derive(Default)]
struct FrameDraw {
    /// Per list (levels, then flowers): first entry.
    regions: Vec<u32>,
    /// Per tint instance (the first entries of the tile table): its tile's tint indices, as a
    /// range of `tint_index`.
    tint: Vec<std::ops::Range<u32>>,
    jobs: usize,
    group: Option<wgpu::BindGroup>,
}

/// The grass's GPU side.
pub struct GrassLayer {
    assets: Option<Arc<GrassAssets>>,
    pipelines: Option<GrassPipelines>,
    blades: Option<wgpu::Buffer>,
    flowers: Option<wgpu::Buffer>,
    tiles: HashMap<TileId, Resident>,
    resident_bytes: u64,
    slot_words: usize,
    /// Tint indices a slot has room for (every cell of a map).
    slot_indices: usize,
    free_slots: Vec<u32>,
    slot_count: u32,
    samples: Grow,
    /// The tiles' tint triangles, a slot per tile as in `samples`.
    tint_index: Grow,
    params: wgpu::Buffer,
    table: Grow,
    jobs: Grow,
    chunks: Grow,
    args: Grow,
    entries: Grow,
    regions: Grow,
    /// Readbacks of the indirect arguments, a frame late: (buffer, in flight, ready).
    readback: Vec<(wgpu::Buffer, bool, Arc<std::sync::atomic::AtomicBool>)>,
    last_drawn: Vec<u64>,
    frame: FrameDraw,
}

impl GrassLayer {
    /// The layer; uploads the shared blades when the bake has grass.
    pub fn new(init: &LayerInit<'_>) -> Self {
        let assets = init.shared.get::<GrassAssets>(super::NAME).map(|(a, _)| a);
        let device = init.device;
        let storage = wgpu::BufferUsages::STORAGE;
        let (mut pipelines, mut blades, mut flowers) = (None, None, None);
        if let Some(a) = &assets {
            let mut p = GrassPipelines::new(device, init.layouts, init.color);
            p.prepare(device, init.mode);
            pipelines = Some(p);
            let init_buf = |label, bytes: &[u8]| {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: bytes, usage: storage })
            };
            blades = Some(init_buf("grass blades", bytemuck::cast_slice(&a.blades)));
            let fl: Vec<_> = if a.flowers.is_empty() { vec![Default::default()] } else { a.flowers.clone() };
            flowers = Some(init_buf("grass flowers", bytemuck::cast_slice::<super::assets::GpuFlower, u8>(&fl)));
        }
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("grass params"),
            size: std::mem::size_of::<GpuParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut entries = Grow::new("grass entries", storage);
        if assets.is_some() {
            // Room for 4 M drawn candidates from the start: growing a buffer this large mid-flight
            // (allocation and zeroing) made a 9 ms frame on the H200.
            entries.reserve(device, ENTRIES_AT_START * ENTRY_BYTES);
        }
        GrassLayer {
            assets,
            pipelines,
            blades,
            flowers,
            tiles: HashMap::new(),
            resident_bytes: 0,
            slot_words: 0,
            slot_indices: 0,
            free_slots: Vec::new(),
            slot_count: 0,
            samples: Grow::new("grass samples", storage | wgpu::BufferUsages::COPY_SRC),
            tint_index: Grow::new("grass tint indices", wgpu::BufferUsages::INDEX | wgpu::BufferUsages::COPY_SRC),
            params,
            table: Grow::new("grass tiles", storage),
            jobs: Grow::new("grass jobs", storage),
            chunks: Grow::new("grass chunks", storage),
            args: Grow::new("grass draw args", storage | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC),
            entries,
            regions: Grow::new("grass regions", storage),
            readback: Vec::new(),
            last_drawn: Vec::new(),
            frame: FrameDraw::default(),
        }
    }

    /// Gives every resident tile a slot in the samples buffer, doubling it when full (the old slots
    /// copied on the GPU: re-sending every tile from the CPU made a 10 ms frame on the H200).
    fn place_tiles(&mut self, device: &wgpu::Device, queue: &wgpu::Queue) {
        let needed = self.tiles.values().filter(|t| t.slot.is_none()).count() as u32;
        if needed == 0 {
            return;
        }
        if needed > self.free_slots.len() as u32 {
            let used = self.slot_count - self.free_slots.len() as u32;
            let want = (used + needed).next_power_of_two().max(64).max(self.slot_count * 2);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("grass samples grow") });
            for (grow, words) in [(&mut self.samples, self.slot_words), (&mut self.tint_index, self.slot_indices)] {
                let slot_bytes = (words * 4) as u64;
                let old = grow.buffer.take();
                grow.reserve(device, u64::from(want) * slot_bytes);
                if let Some(old) = old {
                    encoder.copy_buffer_to_buffer(&old, 0, grow.get(), 0, u64::from(self.slot_count) * slot_bytes);
                }
            }
            queue.submit([encoder.finish()]);
            self.free_slots.extend((self.slot_count..want).rev());
            self.free_slots.sort_unstable_by(|a, b| b.cmp(a));
            self.slot_count = want;
        }
        let (samples, indices) = (self.samples.get().clone(), self.tint_index.get().clone());
        for t in self.tiles.values_mut().filter(|t| t.slot.is_none()) {
            let slot = self.free_slots.pop().expect("enough slots");
            t.slot = Some(slot);
            queue.write_buffer(&samples, (slot as usize * self.slot_words * 4) as u64, bytemuck::cast_slice(&t.data.samples));
            if !t.data.tint_indices.is_empty() {
                queue.write_buffer(&indices, (slot as usize * self.slot_indices * 4) as u64, bytemuck::cast_slice(&t.data.tint_indices));
            }
        }
    }

    fn tile_info(&self, t: &Resident) -> GpuTileInfo {
        GpuTileInfo {
            origin: t.data.map.origin,
            spacing: t.data.map.spacing,
            size: t.data.map.size,
            base: t.slot.unwrap_or(0) * self.slot_words as u32,
            pick: t.data.pick,
        }
    }

    /// Collects finished readbacks: the newest one's per-list counts.
    fn collect(&mut self, device: &wgpu::Device, wait: bool) {
        // Without waiting, the front ends' own polls (each frame) have run the map callbacks.
        if wait {
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
        }
        for (buffer, busy, ready) in &mut self.readback {
            if *busy && ready.load(std::sync::atomic::Ordering::Acquire) {
                let words: Option<Vec<u32>> =
                    buffer.get_mapped_range(..).ok().map(|v| v.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
                buffer.unmap();
                if let Some(words) = words {
                    self.last_drawn = words.chunks_exact(4).map(|c| u64::from(c[1])).collect();
                }
                *busy = false;
                ready.store(false, std::sync::atomic::Ordering::Release);
            }
        }
    }
}

impl Layer for GrassLayer {
    fn name(&self) -> &'static str {
        super::NAME
    }

    fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode) {
        if let Some(p) = &mut self.pipelines {
            p.prepare(device, mode);
        }
    }

    fn upload(&mut self, _device: &wgpu::Device, key: TileId, data: Box<dyn Decoded>) -> Result<(), String> {
        let data = downcast::<TileGrass>(data, self.name())?;
        if self.assets.is_none() {
            return Err(format!("grass {key}: the bake has no shared grass pack"));
        }
        if self.slot_words == 0 {
            self.slot_words = data.samples.len();
            self.slot_indices = (((data.map.size.max(1) - 1) / TINT_STRIDE) as usize).pow(2) * 6;
        } else if data.samples.len() != self.slot_words {
            return Err(format!("grass {key}: a {0}×{0} map, other tiles have {1} samples", data.map.size, self.slot_words / SAMPLE_WORDS));
        }
        let bytes = data.gpu_bytes();
        self.evict(key);
        self.resident_bytes += bytes;
        self.tiles.insert(key, Resident { data: *data, slot: None, bytes });
        Ok(())
    }

    fn evict(&mut self, key: TileId) {
        if let Some(t) = self.tiles.remove(&key) {
            self.resident_bytes -= t.bytes;
            if let Some(s) = t.slot {
                self.free_slots.push(s);
            }
        }
    }

    fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }

    /// The ground tint's triangles (the blades are counted by `prepare_frame`).
    fn extent(&self, key: TileId) -> Option<Extent> {
        self.tiles.get(&key).map(|t| Extent {
            min: Vec3::from(t.data.bounds.0),
            max: Vec3::from(t.data.bounds.1),
            triangles: t.data.tint_indices.len() as u64 / 3,
        })
    }

    fn prepare_frame(&mut self, ctx: &FrameContext<'_>, view: &[DrawItem]) -> Counts {
        let mut counts = Counts::default();
        self.frame = FrameDraw::default();
        let Some(assets) = self.assets.clone() else { return counts };
        let (device, queue) = (ctx.device, ctx.queue);
        self.place_tiles(device, queue);
        let settings = ctx.settings;
        let levels = assets.levels;
        let lod = Lod::new(settings.grass_distance, levels, settings.grass_lod);
        let view_proj = Mat4::from_cols_array_2d(&ctx.uniforms.view_proj);
        let planes = culling::planes(view_proj);
        let eye = Vec3::from_slice(&ctx.uniforms.camera_pos[..3]);

        // The tile table: the tinted tiles of the view first (instance i of the tint draw), then the
        // level-0 tiles that hold candidates.
        let mut table: Vec<GpuTileInfo> = Vec::new();
        let mut index: BTreeMap<TileId, u32> = BTreeMap::new();
        let mut tint = Vec::new();
        for item in view {
            if let Some(t) = self.tiles.get(&item.key) {
                index.insert(item.key, table.len() as u32);
                table.push(self.tile_info(t));
                let first = t.slot.unwrap_or(0) * self.slot_indices as u32;
                tint.push(first..first + t.data.tint_indices.len() as u32);
            }
        }
        let s = assets.patch_size;
        let mut jobs: Vec<GpuJob> = Vec::new();
        let mut lists = vec![0u64; levels + 1];
        let mut in_distance = 0.0f64;
        let mut keys: Vec<TileId> = self.tiles.iter().filter(|(k, t)| k.level == 0 && !t.data.instances.is_empty()).map(|(k, _)| *k).collect();
        keys.sort_unstable_by_key(|k| (k.y, k.x));
        for key in keys {
            let t = &self.tiles[&key];
            // Blades within the grass distance, in view or not (the HUD's measure of the field).
            let (lo, hi) = (Vec3::from(t.data.bounds.0), Vec3::from(t.data.bounds.1));
            if eye.clamp(lo, hi).distance(eye) < lod.distance {
                for ins in &t.data.instances {
                    let c = [ins.origin[0] + 0.5 * s, ins.origin[1] + 0.5 * s];
                    if Vec3::new(c[0], c[1], t.data.map.height_at(c[0], c[1])).distance(eye) < lod.distance {
                        in_distance += f64::from(assets.ranges[ins.patch as usize][0].1) * f64::from(t.data.map.keep_at(c[0], c[1]));
                    }
                }
            }
            if !tile_in_reach(&lod, &t.data, eye, &planes) {
                continue;
            }
            let ti = *index.entry(key).or_insert_with(|| {
                table.push(self.tile_info(t));
                table.len() as u32 - 1
            });
            for ins in &t.data.instances {
                let mask = instance_mask(&assets, &lod, ins, eye, &planes);
                if mask == 0 {
                    continue;
                }
                let ranges = &assets.ranges[ins.patch as usize];
                let mut push = |level: usize, first: u32, count: u32| {
                    if count > 0 {
                        jobs.push(GpuJob {
                            origin: ins.origin,
                            height_scale: ins.height_scale,
                            tile: ti,
                            key: ins.key,
                            misc: ins.rotation | (level as u32) << 2,
                            first,
                            count,
                        });
                        lists[level] += u64::from(count);
                    }
                };
                for (k, &(first, count)) in ranges.iter().enumerate() {
                    if mask & (1 << k) != 0 {
                        push(k, first, count);
                    }
                }
                if mask & 1 != 0 {
                    let (first, count) = assets.flower_ranges[ins.patch as usize];
                    push(levels, first, count);
                }
            }
        }
        // Lists start at 256-byte boundaries (dynamic storage offsets).
        let mut regions = Vec::with_capacity(levels + 1);
        let mut total = 0u64;
        let mut widest = REGION_ALIGN;
        for &n in &lists {
            regions.push(total as u32);
            let n = n.div_ceil(REGION_ALIGN).max(1) * REGION_ALIGN;
            widest = widest.max(n);
            total += n;
        }
        let mut chunks: Vec<[u32; 2]> = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            chunks.extend((0..job.count.div_ceil(WORKGROUP)).map(|c| [j as u32, c * WORKGROUP]));
        }
        let mut args: Vec<[u32; 4]> = (0..levels).map(|k| [2 * assets.segments[k].max(1) + 1, 0, 0, 0]).collect();
        args.push([12, 0, 0, 0]);

        let mut p = GpuParams {
            eye: [eye.x, eye.y, eye.z, 1.0],
            planes: planes.map(|v| v.to_array()),
            distance: lod.distance,
            stagger: lod.stagger,
            force: settings.grass_lod.map_or(-1, |k| k as i32),
            levels: levels as u32,
            patch_size: s,
            time: settings.time_s,
            tint: [assets.tint[0], assets.tint[1], assets.tint[2], 1.0],
            ..Default::default()
        };
        for (i, &d) in lod.switches.iter().enumerate().take(15) {
            p.switches[i / 4][i % 4] = d;
        }
        for (i, &n) in assets.segments.iter().enumerate().take(16) {
            p.segments[i / 4][i % 4] = n;
        }
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        if table.is_empty() {
            table.push(GpuTileInfo::default());
        }
        self.table.write(device, queue, bytemuck::cast_slice(&table));
        self.jobs.write(device, queue, bytemuck::cast_slice(&jobs));
        self.chunks.write(device, queue, bytemuck::cast_slice(&chunks));
        self.args.write(device, queue, bytemuck::cast_slice(&args));
        self.regions.write(device, queue, bytemuck::cast_slice(&regions));
        // Room for the widest list past the last offset: each draw binds `widest` entries.
        self.entries.reserve(device, (total + widest) * ENTRY_BYTES);
        self.samples.reserve(device, 256);
        let (Some(pipes), Some(blades), Some(flowers)) = (&self.pipelines, &self.blades, &self.flowers) else { return counts };
        fn whole(b: &Grow) -> wgpu::BindingResource<'_> {
            b.get().as_entire_binding()
        }
        let mut readback_slot = None;
        if !chunks.is_empty() {
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("grass select"),
                layout: &pipes.select_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: self.params.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: blades.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: flowers.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: whole(&self.samples) },
                    wgpu::BindGroupEntry { binding: 4, resource: whole(&self.table) },
                    wgpu::BindGroupEntry { binding: 5, resource: whole(&self.jobs) },
                    wgpu::BindGroupEntry {
                        binding: 6,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: self.chunks.get(),
                            offset: 0,
                            size: wgpu::BufferSize::new(chunks.len() as u64 * 8),
                        }),
                    },
                    wgpu::BindGroupEntry { binding: 7, resource: whole(&self.args) },
                    wgpu::BindGroupEntry { binding: 8, resource: whole(&self.entries) },
                    wgpu::BindGroupEntry { binding: 9, resource: whole(&self.regions) },
                ],
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("grass select") });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("grass select"), timestamp_writes: None });
                pass.set_pipeline(&pipes.select);
                pass.set_bind_group(0, &group, &[]);
                let n = chunks.len() as u32;
                let x = n.min(65_535);
                pass.dispatch_workgroups(x, n.div_ceil(x), 1);
            }
            let bytes = (args.len() * 16) as u64;
            let free = self.readback.iter().position(|r| !r.1 && r.0.size() >= bytes);
            let in_flight = self.readback.iter().filter(|r| r.1).count();
            if free.is_some() || in_flight < 3 || settings.exact_counts {
                let slot = free.unwrap_or_else(|| {
                    let b = device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("grass counts readback"),
                        size: bytes.max(256),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    self.readback.push((b, false, Arc::new(std::sync::atomic::AtomicBool::new(false))));
                    self.readback.len() - 1
                });
                encoder.copy_buffer_to_buffer(self.args.get(), 0, &self.readback[slot].0, 0, bytes);
                readback_slot = Some(slot);
            }
            queue.submit([encoder.finish()]);
            if let Some(slot) = readback_slot {
                let (buffer, busy, ready) = &mut self.readback[slot];
                *busy = true;
                let flag = Arc::clone(ready);
                buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| flag.store(r.is_ok(), std::sync::atomic::Ordering::Release));
            }
        } else {
            self.last_drawn = vec![0; levels + 1];
        }
        let draw_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("grass draw"),
            layout: &pipes.draw_layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: self.params.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: blades.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: flowers.as_entire_binding() },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: self.entries.get(),
                        offset: 0,
                        size: wgpu::BufferSize::new(widest * ENTRY_BYTES),
                    }),
                },
                wgpu::BindGroupEntry { binding: 4, resource: whole(&self.table) },
                wgpu::BindGroupEntry { binding: 5, resource: whole(&self.samples) },
            ],
        });
        self.frame = FrameDraw { regions, tint, jobs: jobs.len(), group: Some(draw_group) };
        if readback_slot.is_some() || !self.readback.is_empty() {
            self.collect(device, settings.exact_counts && readback_slot.is_some());
        }
        counts.add(IN_DISTANCE, in_distance.round() as u64);
        let drawn: u64 = self.last_drawn.iter().take(levels).sum();
        counts.add(DRAWN, drawn);
        for (k, name) in LEVEL_NAMES.iter().enumerate().take(levels) {
            counts.add(name, self.last_drawn.get(k).copied().unwrap_or(0));
        }
        counts
    }

    fn record(&self, phase: Phase, mode: ViewMode, pass: &mut wgpu::RenderPass<'_>, b: &Bindings<'_>, _items: &[DrawItem]) -> u64 {
        let (Some(pipes), Some(group), Some(assets)) = (self.pipelines.as_ref().and_then(|p| p.draw(mode)), &self.frame.group, &self.assets) else {
            return 0;
        };
        match phase {
            Phase::Opaque if self.frame.jobs > 0 => {
                pass.set_bind_group(0, b.frame, &[]);
                pass.set_bind_group(2, b.surface, &[]);
                pass.set_pipeline(&pipes[0]);
                let args = self.args.get();
                for k in 0..assets.levels {
                    pass.set_bind_group(1, group, &[self.frame.regions[k] * ENTRY_BYTES as u32]);
                    pass.draw_indirect(args, 16 * k as u64);
                }
                if !assets.flowers.is_empty() {
                    pass.set_pipeline(&pipes[1]);
                    pass.set_bind_group(1, group, &[self.frame.regions[assets.levels] * ENTRY_BYTES as u32]);
                    pass.draw_indirect(args, 16 * assets.levels as u64);
                }
                self.last_drawn.iter().enumerate().map(|(k, &n)| n * if k < assets.levels { 2 * u64::from(assets.segments[k]) - 1 } else { 4 }).sum()
            }
            Phase::Transparent if self.frame.tint.iter().any(|r| !r.is_empty()) => {
                pass.set_bind_group(0, b.frame, &[]);
                pass.set_bind_group(2, b.surface, &[]);
                pass.set_pipeline(&pipes[2]);
                pass.set_bind_group(1, group, &[0]);
                pass.set_index_buffer(self.tint_index.get().slice(..), wgpu::IndexFormat::Uint32);
                // One draw per tile, of its own cells: instance i reads tile i of the table.
                for (i, r) in (0u32..).zip(&self.frame.tint).filter(|(_, r)| !r.is_empty()) {
                    pass.draw_indexed(r.clone(), 0, i..i + 1);
                }
                self.frame.tint.iter().map(|r| u64::from(r.len() as u32 / 3)).sum()
            }
            _ => 0,
        }
    }
}
