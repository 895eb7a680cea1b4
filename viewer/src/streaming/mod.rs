//! Tile streaming: which tiles of the baked quadtree to draw, load, upload and free, frame by frame.
//!
//! Once per frame the renderer calls [`Streamer::update`] with the camera and applies the
//! [`FramePlan`]: free `evict`, upload `uploads`, draw `draw`. Behind it:
//!
//! 1. **LOD selection** (`lod`): walk the quadtree from the root, refining a node while its
//!    geometric error projected to the screen exceeds `max_error_px`, frustum-culled by bounds.
//! 2. **Residency** ([`kiln_cache::residency`]): the four sets of the planet-renderer text — visible,
//!    visible-to-build, cached (LRU under the byte budget), cache-to-build (prefetch: children and
//!    neighbours of the nearest deepest node, and the cut one second ahead along the velocity).
//! 3. **Loading** (`loader`): threads read, verify and decode packs; the render thread never blocks.
//!    A tile that fails is reported once in `errors` and never retried.
//! 4. **Drawing**: every selected tile not resident yet is replaced by its nearest resident ancestor
//!    (and its parent is requested, the closest stand-in it can have), and a tile is never drawn with
//!    one of its ancestors (they would overlap). The roots are loaded first and never evicted, so once
//!    they are resident there is no hole.
//!
//! Everything that decides a plan is ordered (B-trees, sorted lists): given the same camera path and
//! the same loads finished before each update (see [`Streamer::wait_idle`]), the plans are identical.

mod loader;
mod lod;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kiln_cache::residency::Residency;
use kiln_formats::sections::{Manifest, PackInfo, PackKind, SharedPacks, TileNode};
use kiln_formats::{FormatError, Pack, PackFileError};

use crate::layers::{self, Decoded, Decoder, SharedAssets, SharedData};
use loader::{Job, Loader};
pub use lod::LOOKAHEAD_SECONDS;
use lod::{LodCamera, Quadtree};

/// The viewer's name for a tile is the one every crate uses: a node of the LOD quadtree, ordered
/// by (level, y, x) like the manifest's nodes.
pub use kiln_formats::TileId;

/// A tile decoded on a loader thread, ready for GPU upload: each product's data from its decoder
/// ([`crate::layers::Decoder`]), everything costly already done there, so that the render thread
/// only copies bytes.
pub struct DecodedTile {
    /// The tile this is.
    pub key: TileId,
    /// One entry per product of [`crate::layers::PRODUCTS`], in order: its data, or `None` where
    /// the pack holds none of that product.
    pub products: Vec<Option<Box<dyn Decoded>>>,
    /// The manifest's bounds of the tile (skirts included).
    pub bounds_min: [f32; 3],
    /// Upper corner of those bounds.
    pub bounds_max: [f32; 3],
    /// Size of the pack file.
    pub pack_bytes: u64,
    /// The pack's `PackInfo::inputs_hash`.
    pub inputs_hash: u64,
    /// xxh3-64 of the pack file (checked against the manifest).
    pub content_hash: u64,
}

impl DecodedTile {
    /// GPU bytes once uploaded, summed over its products: what counts against the budget.
    pub fn gpu_bytes(&self) -> u64 {
        self.products.iter().flatten().map(|d| d.gpu_bytes()).sum()
    }
}

impl fmt::Debug for DecodedTile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodedTile")
            .field("key", &self.key)
            .field("products", &self.products.iter().filter(|p| p.is_some()).count())
            .field("gpu_bytes", &self.gpu_bytes())
            .finish_non_exhaustive()
    }
}

/// The camera as streaming needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraView {
    /// Eye position, world units.
    pub position: [f32; 3],
    /// Projection × view, column-major, wgpu clip space (z in [0, 1]).
    pub view_proj: [[f32; 4]; 4],
    /// World units per second, for the look-ahead prefetch; zero when still.
    pub velocity: [f32; 3],
    /// Height of the viewport in pixels: with the field of view, turns errors into pixels.
    pub viewport_height_px: f32,
    /// Vertical field of view in radians.
    pub fov_y_radians: f32,
}

/// Streaming settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamConfig {
    /// GPU bytes the resident tiles of every layer may occupy (see [`DecodedTile::gpu_bytes`]).
    pub budget_bytes: u64,
    /// Largest screen-space error (pixels) accepted before refining a tile.
    pub max_error_px: f32,
    /// Number of loader threads (at least 1).
    pub loader_threads: usize,
    /// Upload bytes per frame, so a burst of loads does not hitch; the first upload of a frame is
    /// always allowed. Much larger frames of uploads were the worst hitches of a flight.
    pub max_upload_bytes_per_frame: u64,
    /// Whether to prefetch tiles likely needed soon.
    pub prefetch: bool,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            budget_bytes: 512 << 20,
            max_error_px: 2.0,
            // Two even on two cores (they run at a lower priority than rendering); up to four where
            // there are cores to spare, since decoding also orders triangles for vertex reuse.
            loader_threads: std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4)),
            max_upload_bytes_per_frame: 4 << 20,
            prefetch: true,
        }
    }
}

/// What the renderer does this frame, in this order: free `evict`, upload `uploads`, draw `draw`.
#[derive(Debug, Default)]
pub struct FramePlan {
    /// Upload these now: visible builds first; at most one prefetch build, only when no visible build.
    pub uploads: Vec<DecodedTile>,
    /// Free these GPU buffers (least recently used past the budget, or withheld).
    pub evict: Vec<TileId>,
    /// Draw exactly these, front to back; all are resident once `uploads` are. A selected tile that
    /// is not resident is replaced by its nearest resident ancestor: never a hole once the root is in.
    pub draw: Vec<TileId>,
    /// Tiles that failed to load this frame (`path: problem`), each reported once.
    pub errors: Vec<String>,
}

/// Streaming counters, as of the last [`Streamer::update`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Updates so far.
    pub frame: u64,
    /// Tiles in the selected LOD cut.
    pub selected: usize,
    /// Tiles drawn.
    pub drawn: usize,
    /// Selected tiles with no resident tile drawn for them, neither themselves nor an ancestor:
    /// holes in the picture. Zero once the roots that cover the view are resident.
    pub uncovered: usize,
    /// Resident tiles needed this frame (the cut, its stand-ins, the roots).
    pub visible: usize,
    /// Needed tiles not resident yet that may still arrive (failed and withheld ones excluded).
    pub visible_to_build: usize,
    /// Resident tiles not needed this frame.
    pub cached: usize,
    /// Prefetch candidates not resident.
    pub cache_to_build: usize,
    /// Loads queued or running.
    pub building: usize,
    /// Decoded tiles waiting for their upload.
    pub decoded_waiting: usize,
    /// GPU bytes of the resident tiles, every layer counted ([`DecodedTile::gpu_bytes`]).
    pub resident_bytes: u64,
    /// Largest resident total at the end of any frame: compare with `budget_bytes`.
    pub peak_resident_bytes: u64,
    /// The budget in force ([`StreamConfig::budget_bytes`]).
    pub budget_bytes: u64,
    /// Uploads since the start.
    pub tiles_streamed: u64,
    /// Of those, prefetch uploads.
    pub prefetch_uploads: u64,
    /// Bytes uploaded since the start.
    pub bytes_uploaded: u64,
    /// Tiles freed since the start.
    pub evictions: u64,
    /// Loaded tiles held back last frame because they would not fit the budget (a stand-in is drawn).
    pub deferred_over_budget: usize,
    /// Tiles that failed to load.
    pub failed: usize,
    /// Tiles held back with [`Streamer::withhold`].
    pub withheld: usize,
}

/// Why a bake directory cannot be streamed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The manifest pack is unreadable or damaged.
    #[error("cannot read the bake's manifest: {0}")]
    Manifest(#[from] PackFileError),
    /// A section of the manifest pack is missing or damaged.
    #[error("{}: {source}", path.display())]
    ManifestSection {
        /// The manifest pack.
        path: PathBuf,
        /// What is wrong with the section.
        source: FormatError,
    },
    /// The manifest pack is another kind of pack.
    #[error("{}: not a world manifest (the pack holds {found})", path.display())]
    NotAManifest {
        /// The pack read as the manifest.
        path: PathBuf,
        /// The kind of pack it is, as its `PackInfo` says.
        found: String,
    },
    /// The manifest's quadtree cannot be streamed.
    #[error("{}: {reason}", path.display())]
    BadQuadtree {
        /// The manifest pack.
        path: PathBuf,
        /// What is wrong with the quadtree.
        reason: String,
    },
    /// A shared pack listed in the manifest is missing, damaged, from another bake or refused by
    /// its product's decoder.
    #[error("{}: {reason}", path.display())]
    SharedPack {
        /// The shared pack file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting is out of range.
    #[error("invalid streaming settings: {0}")]
    Config(String),
    /// The loader threads could not start.
    #[error("cannot start the loader threads: {0}")]
    Spawn(#[source] std::io::Error),
}

/// Streams the tiles of one bake directory. See the module documentation.
pub struct Streamer {
    bake_dir: PathBuf,
    config: StreamConfig,
    tree: Quadtree,
    residency: Residency<TileId>,
    loader: Loader,
    /// Decoded tiles waiting for their upload.
    ready: BTreeMap<TileId, DecodedTile>,
    /// Tiles that failed, with the problem; never requested again.
    failed: BTreeMap<TileId, String>,
    withheld: BTreeSet<TileId>,
    /// Exact GPU bytes of tiles decoded at least once; the manifest's counts estimate the others.
    known_bytes: BTreeMap<TileId, u64>,
    /// Resident tiles to free with the next plan (withheld after upload).
    evict_next: Vec<TileId>,
    /// The products' decoders (shared with the loader threads).
    decoders: Arc<[Box<dyn Decoder>]>,
    /// The products' world-wide data from the manifest's shared packs.
    shared: SharedAssets,
    stats: StreamStats,
}

/// Reads every shared pack the manifest lists (`SHRD`) whose product is registered with a shared
/// decoder: the file's length and xxh3-64 must match the manifest, its `PackInfo` must name it a
/// shared pack of that product, then the product decodes it. Packs of products this viewer does
/// not know are skipped (a newer bake stays viewable). Errors name the file.
fn load_shared(bake_dir: &Path, manifest: &Pack) -> Result<SharedAssets, StreamError> {
    let mut assets = SharedAssets::default();
    let list = manifest
        .get::<SharedPacks>()
        .map_err(|source| StreamError::ManifestSection { path: bake_dir.join("manifest.kpack"), source })?
        .unwrap_or_default();
    for entry in &list.0 {
        let Some(decode) = layers::product(&entry.product).and_then(|p| p.shared) else { continue };
        let path = bake_dir.join(&entry.path);
        let err = |reason: String| StreamError::SharedPack { path: path.clone(), reason };
        let pack = Pack::open(&path).map_err(|e| err(e.to_string()))?;
        let bytes = pack.bytes();
        if bytes.len() as u64 != entry.file_len {
            return Err(err(format!("{} bytes, the manifest says {} (a pack from another bake, or damaged)", bytes.len(), entry.file_len)));
        }
        let hash = xxhash_rust::xxh3::xxh3_64(bytes);
        if hash != entry.content_hash {
            return Err(err(format!(
                "content hash {hash:016x} differs from the manifest's {:016x} (a pack from another bake, or damaged)",
                entry.content_hash
            )));
        }
        let info = pack.require::<PackInfo>().map_err(|e| err(e.to_string()))?;
        if info.kind != (PackKind::Shared { product: entry.product.clone() }) {
            return Err(err(format!("not the shared pack of {:?} (the pack holds {:?})", entry.product, info.kind)));
        }
        let data = decode(&pack).map_err(err)?;
        assets.0.insert(entry.product.clone(), SharedData { content_hash: hash, data });
    }
    Ok(assets)
}

impl Streamer {
    /// Opens `bake_dir/manifest.kpack`, checks its quadtree and starts the loader threads.
    pub fn open(bake_dir: &Path, config: StreamConfig) -> Result<Streamer, StreamError> {
        if config.loader_threads == 0 {
            return Err(StreamError::Config("loader_threads must be at least 1".into()));
        }
        if !(config.max_error_px.is_finite() && config.max_error_px > 0.0) {
            return Err(StreamError::Config(format!("max_error_px must be a positive number, not {}", config.max_error_px)));
        }
        let path = bake_dir.join("manifest.kpack");
        let pack = Pack::open(&path)?;
        let section = |source| StreamError::ManifestSection { path: path.clone(), source };
        let info = pack.require::<PackInfo>().map_err(section)?;
        if info.kind != PackKind::Manifest {
            return Err(StreamError::NotAManifest { path, found: format!("{:?}", info.kind) });
        }
        let manifest = pack.require::<Manifest>().map_err(section)?;
        let tree = Quadtree::new(manifest).map_err(|reason| StreamError::BadQuadtree { path: path.clone(), reason })?;
        let shared = load_shared(bake_dir, &pack)?;
        let decoders: Arc<[Box<dyn Decoder>]> = layers::decoders(&shared).into();
        let loader = Loader::spawn(config.loader_threads, Arc::clone(&decoders)).map_err(StreamError::Spawn)?;
        let residency = Residency::new(config.budget_bytes).with_frame_upload_budget(config.max_upload_bytes_per_frame);
        Ok(Streamer {
            bake_dir: bake_dir.to_owned(),
            config,
            tree,
            residency,
            loader,
            ready: BTreeMap::new(),
            failed: BTreeMap::new(),
            withheld: BTreeSet::new(),
            known_bytes: BTreeMap::new(),
            evict_next: Vec::new(),
            decoders,
            shared,
            stats: StreamStats { budget_bytes: config.budget_bytes, ..StreamStats::default() },
        })
    }

    /// The bake's manifest.
    pub fn manifest(&self) -> &Manifest {
        self.tree.manifest()
    }

    /// The manifest's record of a tile (for a HUD).
    pub fn tile_info(&self, key: TileId) -> Option<&TileNode> {
        self.tree.node(key)
    }

    /// The products' world-wide data from the bake's shared packs (layers upload it once).
    pub fn shared(&self) -> &SharedAssets {
        &self.shared
    }

    /// The settings it runs with.
    pub fn config(&self) -> &StreamConfig {
        &self.config
    }

    /// Once per frame: selects the LOD cut, updates the four residency sets, queues loads on the
    /// loader threads (never waiting for them) and returns what to do this frame.
    pub fn update(&mut self, camera: &CameraView) -> FramePlan {
        let mut errors = Vec::new();
        self.collect_loads(&mut errors);

        let cam = LodCamera::new(camera);
        let estimate = |k: TileId| self.estimate_bytes(k);
        let cut = lod::select(&self.tree, &cam, self.config.max_error_px, self.config.budget_bytes, estimate);
        let prefetch = if self.config.prefetch {
            let predicted = LodCamera::predicted(camera, LOOKAHEAD_SECONDS)
                .map(|p| lod::select(&self.tree, &p, self.config.max_error_px, self.config.budget_bytes, estimate))
                .unwrap_or_default();
            lod::prefetch(&self.tree, &cam, &cut, &predicted)
        } else {
            Vec::new()
        };

        // Needed now: the roots (the fallback for everything: loaded first, never evicted), the cut,
        // the stand-ins drawn for cut tiles that are not resident (kept from eviction), and those
        // tiles' parents, the closest stand-ins they can have (a tile that never arrives then costs
        // one level of detail over its parent's area, not the whole root's). Coarse first, so the
        // picture refines level by level.
        let mut needed: Vec<TileId> = self.tree.roots().to_vec();
        needed.extend_from_slice(&cut);
        for &k in &cut {
            if !self.residency.is_built(k) {
                needed.extend(self.tree.parent(k));
                needed.extend(self.nearest_resident(k));
            }
        }
        needed.sort_unstable();
        needed.dedup();
        lod::sort_by_priority(&self.tree, &cam, &mut needed);
        self.residency.begin_frame(&needed, &prefetch);
        self.queue_loads();

        let builds = self.residency.next_builds(|k| self.ready.get(&k).map(DecodedTile::gpu_bytes));
        let mut uploads = Vec::with_capacity(builds.visible.len() + 1);
        for (key, bytes) in builds.iter() {
            if let Some(tile) = self.ready.remove(&key) {
                self.residency.mark_built(key, bytes);
                self.stats.bytes_uploaded += bytes;
                uploads.push(tile);
            }
        }
        self.stats.tiles_streamed += uploads.len() as u64;
        self.stats.prefetch_uploads += u64::from(builds.prefetch.is_some());
        let mut evict = std::mem::take(&mut self.evict_next);
        evict.extend(self.residency.evictions());
        self.stats.evictions += evict.len() as u64;

        let (draw, uncovered) = self.draw_list(&cut, &cam);
        self.stats.uncovered = uncovered;
        self.stats.frame += 1;
        self.stats.selected = cut.len();
        self.stats.drawn = draw.len();
        FramePlan { uploads, evict, draw, errors }
    }

    /// Counters as of the last update.
    pub fn stats(&self) -> StreamStats {
        let r = self.residency.stats();
        let waiting = |k: &&TileId| !self.failed.contains_key(k) && !self.withheld.contains(k);
        StreamStats {
            visible: r.visible,
            visible_to_build: self.residency.visible_to_build().iter().filter(waiting).count(),
            cached: r.cached,
            cache_to_build: r.cache_to_build,
            building: self.loader.in_flight(),
            decoded_waiting: self.ready.len(),
            resident_bytes: r.resident_bytes,
            peak_resident_bytes: r.peak_resident_bytes,
            deferred_over_budget: r.deferred_over_budget,
            failed: self.failed.len(),
            withheld: self.withheld.len(),
            ..self.stats
        }
    }

    /// Whether the picture is complete for the last camera: every needed tile that can still arrive
    /// is uploaded, except those held back by the budget. A headless capture updates until this holds.
    pub fn settled(&self) -> bool {
        let s = self.stats();
        s.visible_to_build == s.deferred_over_budget
    }

    /// The tiles that failed to load, with the problem (`path: problem`), in key order.
    pub fn failures(&self) -> impl Iterator<Item = (TileId, &str)> + '_ {
        self.failed.iter().map(|(&k, p)| (k, p.as_str()))
    }

    /// Test hook: never load `key` again, and free it if resident, so its nearest ancestor is drawn.
    pub fn withhold(&mut self, key: TileId) {
        self.withheld.insert(key);
        self.ready.remove(&key);
        if self.residency.remove(key).is_some() {
            self.evict_next.push(key);
        }
    }

    /// Blocks until the loader threads have finished every queued load, or `timeout` passes; returns
    /// whether they did. The results are picked up by the next [`Streamer::update`]. For tests and
    /// headless captures, which want the same plans whatever the timing; a live viewer never waits.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        self.loader.wait_idle(timeout)
    }

    /// Blocks until at least one queued load has finished (its result waits for the next
    /// [`Streamer::update`]), nothing is in flight, or `timeout` passes. Lets a headless capture show
    /// its first frame as soon as the coarse tiles arrive instead of after every load.
    pub fn wait_progress(&self, timeout: Duration) -> bool {
        self.loader.wait_progress(timeout)
    }

    /// Moves finished loads into `ready` (still wanted ones) or `failed`.
    fn collect_loads(&mut self, errors: &mut Vec<String>) {
        for outcome in self.loader.collect() {
            match outcome.result {
                Ok(tile) => {
                    self.known_bytes.insert(outcome.key, tile.gpu_bytes());
                    if !self.withheld.contains(&outcome.key) && !self.residency.is_built(outcome.key) {
                        self.ready.insert(outcome.key, tile);
                    }
                }
                Err(problem) => {
                    errors.push(problem.clone());
                    self.failed.insert(outcome.key, problem);
                }
            }
        }
    }

    /// Queues a load for every needed or prefetched tile that is not loaded, failed or withheld (in
    /// that priority order), and drops decoded tiles nobody wants any more.
    fn queue_loads(&mut self) {
        let wanted: Vec<TileId> = self.residency.visible_to_build().iter().chain(self.residency.cache_to_build()).copied().collect();
        let wanted_set: BTreeSet<TileId> = wanted.iter().copied().collect();
        self.ready.retain(|k, _| wanted_set.contains(k));
        let jobs = wanted
            .into_iter()
            .filter(|k| !self.ready.contains_key(k) && !self.failed.contains_key(k) && !self.withheld.contains(k))
            .filter_map(|key| {
                let node = self.tree.node(key)?;
                Some(Job {
                    key,
                    path: self.bake_dir.join(&node.path),
                    content_hash: node.content_hash,
                    bounds_min: node.bounds_min,
                    bounds_max: node.bounds_max,
                })
            })
            .collect();
        self.loader.set_queue(jobs);
    }

    /// GPU bytes of a tile over all products: exact once decoded, otherwise each decoder's
    /// estimate from the manifest's record.
    fn estimate_bytes(&self, key: TileId) -> u64 {
        if let Some(&b) = self.known_bytes.get(&key) {
            return b;
        }
        self.tree.node(key).map_or(0, |n| self.decoders.iter().map(|d| d.estimate_bytes(n)).sum())
    }

    /// `key` itself if resident, else its nearest resident ancestor.
    fn nearest_resident(&self, key: TileId) -> Option<TileId> {
        self.tree.self_and_ancestors(key).find(|&k| self.residency.is_built(k))
    }

    /// The cut with stand-ins for missing tiles, without a tile whose ancestor is also drawn (the
    /// ancestor covers it; drawing both would overlap), front to back; and the number of cut tiles
    /// with nothing to stand in for them (holes).
    fn draw_list(&self, cut: &[TileId], cam: &LodCamera) -> (Vec<TileId>, usize) {
        let mut uncovered = 0;
        let shown: BTreeSet<TileId> = cut
            .iter()
            .filter_map(|&k| {
                let r = self.nearest_resident(k);
                uncovered += usize::from(r.is_none());
                r
            })
            .collect();
        let mut draw: Vec<TileId> = shown.iter().copied().filter(|&k| !self.tree.self_and_ancestors(k).skip(1).any(|a| shown.contains(&a))).collect();
        lod::sort_front_to_back(&self.tree, cam, &mut draw);
        (draw, uncovered)
    }
}
