//! STAND-IN streaming module, written by the rendering helper so the renderer can run end to end
//! before the streaming helper's real module lands. The integrator deletes this file and replaces
//! it with `viewer/src/streaming/` from the streaming branch.
//!
//! It implements the contract in `notes/viewer_interface.md` (plus `settled` and `wait_idle`, as the
//! streaming branch has them) with the simplest policy that keeps its promises: on the first
//! `update` it decodes, synchronously, the roots and then every tile of one level (the finest level
//! whose estimated GPU size fits the budget), draws those, and replaces a withheld or failed tile by
//! its nearest loadable ancestor (never a hole). No frustum culling, no eviction, no threads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kiln_formats::sections::{Manifest, PackInfo, PackKind, TerrainMesh, TileNode, VertexAo};
use kiln_formats::{Pack, PackFileError};

/// Identifies one tile of the LOD quadtree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TileKey {
    pub level: u32,
    pub x: u32,
    pub y: u32,
}

impl TileKey {
    /// The tile one level coarser that covers this one.
    pub fn parent(self) -> TileKey {
        TileKey { level: self.level + 1, x: self.x / 2, y: self.y / 2 }
    }
}

/// A tile decoded on a loader thread, ready for GPU upload.
pub struct DecodedTile {
    pub key: TileKey,
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    pub ao: Vec<f32>,
    pub indices: Vec<u32>,
    pub main_index_count: u32,
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub vertex_count: u32,
    pub pack_bytes: u64,
    pub inputs_hash: u64,
    pub content_hash: u64,
}

impl DecodedTile {
    /// Vertex + index buffer bytes once uploaded.
    pub fn gpu_bytes(&self) -> u64 {
        self.vertex_count as u64 * crate::renderer::tiles::GPU_VERTEX_BYTES + self.indices.len() as u64 * 4
    }
}

/// What the streamer needs to know about the camera each frame.
pub struct CameraView {
    pub position: [f32; 3],
    /// Column-major, wgpu clip space (z in [0, 1]).
    pub view_proj: [[f32; 4]; 4],
    pub velocity: [f32; 3],
    pub viewport_height_px: f32,
    pub fov_y_radians: f32,
}

/// Streaming policy knobs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamConfig {
    pub budget_bytes: u64,
    pub max_error_px: f32,
    pub loader_threads: usize,
    pub max_upload_bytes_per_frame: u64,
    pub prefetch: bool,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            budget_bytes: 512 << 20,
            max_error_px: 2.0,
            loader_threads: 2,
            max_upload_bytes_per_frame: 64 << 20,
            prefetch: true,
        }
    }
}

/// Why a bake directory cannot be streamed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("{}: not a bake directory (no manifest.kpack)", dir.display())]
    NotABake { dir: PathBuf },
    #[error("{0}")]
    Pack(#[from] PackFileError),
    #[error("{}: the manifest has no tiles", path.display())]
    Empty { path: PathBuf },
}

/// Residency counters for the HUD and `--stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    pub visible: usize,
    pub cached: usize,
    pub building: usize,
    pub resident_bytes: u64,
    pub peak_resident_bytes: u64,
    pub tiles_streamed: u64,
    pub bytes_uploaded: u64,
    pub failed: usize,
}

/// What the renderer does this frame.
#[derive(Default)]
pub struct FramePlan {
    pub uploads: Vec<DecodedTile>,
    pub evict: Vec<TileKey>,
    pub draw: Vec<TileKey>,
    pub errors: Vec<String>,
}

/// The stand-in streamer (see the module docs).
pub struct Streamer {
    dir: PathBuf,
    manifest: Manifest,
    config: StreamConfig,
    withheld: BTreeSet<TileKey>,
    loaded: BTreeSet<TileKey>,
    failed: BTreeSet<TileKey>,
    draw: Vec<TileKey>,
    stats: StreamStats,
    done: bool,
}

impl Streamer {
    /// Reads `bake_dir/manifest.kpack`.
    pub fn open(bake_dir: &Path, config: StreamConfig) -> Result<Streamer, StreamError> {
        let path = bake_dir.join("manifest.kpack");
        if !path.is_file() {
            return Err(StreamError::NotABake { dir: bake_dir.to_owned() });
        }
        let pack = Pack::open(&path)?;
        let fmt = |source| PackFileError::Format { path: path.clone(), source };
        let manifest = pack.require::<Manifest>().map_err(fmt)?;
        if manifest.nodes.is_empty() {
            return Err(StreamError::Empty { path });
        }
        Ok(Streamer {
            dir: bake_dir.to_owned(),
            manifest,
            config,
            withheld: BTreeSet::new(),
            loaded: BTreeSet::new(),
            failed: BTreeSet::new(),
            draw: Vec::new(),
            stats: StreamStats::default(),
            done: false,
        })
    }

    /// The world manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Test hook: never load `key`.
    pub fn withhold(&mut self, key: TileKey) {
        self.withheld.insert(key);
    }

    /// The manifest node of `key`, for the HUD.
    pub fn tile_info(&self, key: TileKey) -> Option<&TileNode> {
        self.manifest.node(key.level, key.x, key.y)
    }

    /// Residency counters.
    pub fn stats(&self) -> StreamStats {
        self.stats
    }

    /// First call: loads the whole cut synchronously. Later calls: draw the same cut.
    pub fn update(&mut self, _camera: &CameraView) -> FramePlan {
        let mut plan = FramePlan::default();
        if !self.done {
            self.done = true;
            let level = self.pick_level();
            let mut cut = BTreeSet::new();
            // The roots first, as the real streamer does: the fallback for everything.
            let top = self.manifest.levels - 1;
            let roots: Vec<TileKey> = self.manifest.nodes.iter().filter(|n| n.level == top).map(|n| TileKey { level: n.level, x: n.x, y: n.y }).collect();
            for key in roots {
                if self.withheld.contains(&key) {
                    continue;
                }
                match self.load(key) {
                    Ok(tile) => {
                        self.loaded.insert(key);
                        self.stats.tiles_streamed += 1;
                        self.stats.bytes_uploaded += tile.gpu_bytes();
                        self.stats.resident_bytes += tile.gpu_bytes();
                        plan.uploads.push(tile);
                    }
                    Err(e) => {
                        self.failed.insert(key);
                        plan.errors.push(e);
                    }
                }
            }
            for node in self.manifest.nodes.iter().filter(|n| n.level == level) {
                let mut key = TileKey { level: node.level, x: node.x, y: node.y };
                loop {
                    if !self.withheld.contains(&key) && !self.failed.contains(&key) {
                        if self.loaded.contains(&key) {
                            break;
                        }
                        match self.load(key) {
                            Ok(tile) => {
                                self.loaded.insert(key);
                                self.stats.tiles_streamed += 1;
                                self.stats.bytes_uploaded += tile.gpu_bytes();
                                self.stats.resident_bytes += tile.gpu_bytes();
                                plan.uploads.push(tile);
                                break;
                            }
                            Err(e) => {
                                self.failed.insert(key);
                                plan.errors.push(e);
                            }
                        }
                    }
                    if key.level + 1 >= self.manifest.levels {
                        key.level = u32::MAX; // no loadable ancestor: leave the area empty
                        break;
                    }
                    key = key.parent();
                }
                if key.level != u32::MAX {
                    cut.insert(key);
                }
            }
            // A tile whose ancestor is also in the cut would overlap it: keep the ancestor only.
            let has_ancestor_in = |k: &TileKey, set: &BTreeSet<TileKey>| {
                let mut a = *k;
                while a.level + 1 < self.manifest.levels {
                    a = a.parent();
                    if set.contains(&a) {
                        return true;
                    }
                }
                false
            };
            self.draw = cut.iter().filter(|k| !has_ancestor_in(k, &cut)).copied().collect();
            self.stats.visible = self.draw.len();
            self.stats.failed = self.failed.len();
            self.stats.peak_resident_bytes = self.stats.resident_bytes;
        }
        plan.draw = self.draw.clone();
        plan
    }

    /// Whether every tile the view needs is uploaded (always, after the first update).
    pub fn settled(&self) -> bool {
        self.done
    }

    /// Waits for the loader threads (there are none: loads are synchronous).
    pub fn wait_idle(&self, _timeout: std::time::Duration) -> bool {
        true
    }

    /// The finest level whose estimated GPU size (manifest counts) fits the budget.
    fn pick_level(&self) -> u32 {
        (0..self.manifest.levels)
            .find(|&l| {
                let bytes: u64 = self
                    .manifest
                    .nodes
                    .iter()
                    .filter(|n| n.level == l)
                    .map(|n| n.vertex_count as u64 * crate::renderer::tiles::GPU_VERTEX_BYTES + n.triangle_count as u64 * 12)
                    .sum();
                bytes <= self.config.budget_bytes
            })
            .unwrap_or(self.manifest.levels - 1)
    }

    fn load(&self, key: TileKey) -> Result<DecodedTile, String> {
        let node = self.tile_info(key).ok_or_else(|| format!("tile L{} ({},{}) is not in the manifest", key.level, key.x, key.y))?;
        let path = self.dir.join(&node.path);
        let pack = Pack::open(&path).map_err(|e| e.to_string())?;
        let fmt = |e: kiln_formats::FormatError| format!("{}: {e}", path.display());
        let info = pack.require::<PackInfo>().map_err(fmt)?;
        if info.kind != (PackKind::Tile { level: key.level, x: key.x, y: key.y }) {
            return Err(format!("{}: holds {:?}, expected tile L{} ({},{})", path.display(), info.kind, key.level, key.x, key.y));
        }
        let mesh = pack.require::<TerrainMesh>().map_err(fmt)?;
        let n = mesh.positions.len();
        let ao = match pack.get::<VertexAo>().map_err(fmt)? {
            Some(ao) if ao.0.len() == n => (0..n).map(|i| ao.value(i)).collect(),
            Some(ao) => return Err(format!("{}: {} AO values for {n} vertices", path.display(), ao.0.len())),
            None => vec![1.0; n],
        };
        let (lo, hi) = mesh.bounds().unwrap_or((node.bounds_min, node.bounds_max));
        Ok(DecodedTile {
            key,
            vertex_count: n as u32,
            main_index_count: mesh.main_index_count as u32,
            positions: mesh.positions,
            normals: mesh.normals,
            ao,
            indices: mesh.indices,
            bounds_min: lo,
            bounds_max: hi,
            pack_bytes: pack.bytes().len() as u64,
            inputs_hash: info.inputs_hash,
            content_hash: node.content_hash,
        })
    }
}
