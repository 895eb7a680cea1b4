//! Streaming tests over a synthetic bake: no GPU, loads awaited with `wait_idle` so plans do not
//! depend on timing.

mod fixture;
mod lod_math;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::*;
use crate::layers::terrain::decode::{TerrainData, INDEX_BYTES};
use crate::layers::terrain::vertex::GPU_VERTEX_BYTES;
use fixture::{bake, camera, key, TILE_GPU_BYTES};

const WAIT: Duration = Duration::from_secs(10);

fn config() -> StreamConfig {
    StreamConfig { budget_bytes: 1 << 20, max_error_px: 2.0, loader_threads: 2, max_upload_bytes_per_frame: 1 << 20, prefetch: false }
}

/// One frame, then waits for the loads it queued, so the next frame sees them all.
fn step(s: &mut Streamer, cam: &CameraView) -> FramePlan {
    let plan = s.update(cam);
    assert!(s.wait_idle(WAIT), "loads did not finish");
    plan
}

/// The cut the last update selected (same inputs, same answer).
fn cut_of(s: &Streamer, cam: &CameraView) -> Vec<TileId> {
    lod::select(&s.tree, &LodCamera::new(cam), s.config.max_error_px, s.config.budget_bytes, |k| s.estimate_bytes(k))
}

/// A renderer stand-in: holds what a GPU would, and checks every plan against it.
#[derive(Default)]
struct Gpu {
    tiles: BTreeMap<TileId, u64>,
}

impl Gpu {
    fn apply(&mut self, s: &Streamer, cam: &CameraView, plan: &FramePlan) {
        for k in &plan.evict {
            assert!(self.tiles.remove(k).is_some(), "evicting {k}, which is not resident");
        }
        for t in &plan.uploads {
            assert_eq!(t.products.len(), crate::layers::PRODUCTS.len(), "one entry per product");
            assert!(self.tiles.insert(t.key, t.gpu_bytes()).is_none(), "uploading {} twice", t.key);
        }
        let draw: BTreeSet<TileId> = plan.draw.iter().copied().collect();
        assert_eq!(draw.len(), plan.draw.len(), "duplicate draws");
        for &k in &plan.draw {
            assert!(self.tiles.contains_key(&k), "drawing {k}, which is not resident");
            assert!(!s.tree.self_and_ancestors(k).skip(1).any(|a| draw.contains(&a)), "{k} drawn over its ancestor");
        }
        // No hole: once a root is resident, every selected tile is covered by exactly one drawn tile.
        if s.tree.roots().iter().all(|r| self.tiles.contains_key(r)) {
            for k in cut_of(s, cam) {
                let covering = s.tree.self_and_ancestors(k).filter(|a| draw.contains(a)).count();
                assert_eq!(covering, 1, "selected {k} is covered by {covering} drawn tiles");
            }
        }
        let stats = s.stats();
        assert_eq!(stats.resident_bytes, self.bytes());
        assert_eq!(stats.visible + stats.cached, self.tiles.len());
    }

    fn bytes(&self) -> u64 {
        self.tiles.values().sum()
    }
}

/// Frames until the picture is complete; returns the last plan and every error reported on the way.
fn settle(s: &mut Streamer, cam: &CameraView, gpu: &mut Gpu) -> (FramePlan, Vec<String>) {
    let mut errors = Vec::new();
    for _ in 0..40 {
        let plan = step(s, cam);
        gpu.apply(s, cam, &plan);
        errors.extend(plan.errors.iter().cloned());
        if s.settled() {
            return (plan, errors);
        }
    }
    panic!("streaming did not settle: {:?}", s.stats());
}

/// A camera in the world's (0, 0) corner, 8 units above the ground, looking across the world.
fn corner_camera() -> CameraView {
    camera([20.0, 20.0, 12.0], [200.0, 200.0, 0.0], [0.0; 3])
}

#[test]
fn open_reports_what_is_wrong() {
    let missing = std::env::temp_dir().join(format!("kiln-stream-none-{}", std::process::id()));
    let err = Streamer::open(&missing, config()).err().expect("no bake there");
    assert!(matches!(err, StreamError::Manifest(_)) && err.to_string().contains("manifest.kpack"), "{err}");

    let dir = bake("open_errors");
    let zero = StreamConfig { loader_threads: 0, ..config() };
    assert!(matches!(Streamer::open(dir.path(), zero), Err(StreamError::Config(_))));
    let nan = StreamConfig { max_error_px: f32::NAN, ..config() };
    assert!(matches!(Streamer::open(dir.path(), nan), Err(StreamError::Config(_))));

    // A tile pack where the manifest should be.
    std::fs::copy(dir.path().join("tiles/L0_0_0.kpack"), dir.path().join("manifest.kpack")).unwrap();
    let err = Streamer::open(dir.path(), config()).err().expect("not a manifest");
    assert!(matches!(err, StreamError::NotAManifest { .. }), "{err}");

    // A quadtree with a tile whose parent is missing.
    let nodes = fixture::all_keys().into_iter().filter(|&k| k != key(1, 1, 0)).map(|k| fixture::tile_pack(k, 0.0).1).collect();
    std::fs::write(dir.path().join("manifest.kpack"), fixture::manifest_pack(nodes)).unwrap();
    let err = Streamer::open(dir.path(), config()).err().expect("orphan tile");
    assert!(matches!(err, StreamError::BadQuadtree { .. }) && err.to_string().contains("no parent L1 (1,0)"), "{err}");
}

#[test]
fn the_root_is_requested_first_and_drawn_while_children_load() {
    let dir = bake("root_first");
    // One upload per frame, so the refinement can be watched step by step.
    let mut s = Streamer::open(dir.path(), StreamConfig { loader_threads: 1, max_upload_bytes_per_frame: 1, ..config() }).unwrap();
    let cam = corner_camera();
    let root = key(2, 0, 0);
    let plan = s.update(&cam);
    assert!(plan.uploads.is_empty() && plan.draw.is_empty(), "nothing can be resident before any load");
    assert!(s.wait_idle(WAIT));
    assert_eq!(s.loader.started().first(), Some(&root), "the root loads first");
    let mut gpu = Gpu::default();
    let plan = step(&mut s, &cam);
    gpu.apply(&s, &cam, &plan);
    assert_eq!(plan.uploads.iter().map(|t| t.key).collect::<Vec<_>>(), vec![root]);
    assert_eq!(plan.draw, vec![root]);
    // The rest arrives one tile per frame, coarse first; the root stays drawn until a finer cover exists.
    let mut frames = 0;
    let mut levels_uploaded = Vec::new();
    while !s.settled() {
        let plan = step(&mut s, &cam);
        gpu.apply(&s, &cam, &plan);
        assert_eq!(plan.uploads.len(), 1);
        levels_uploaded.push(plan.uploads[0].key.level);
        assert!(!plan.draw.is_empty());
        frames += 1;
        assert!(frames < 30);
    }
    assert!(levels_uploaded.windows(2).all(|w| w[0] >= w[1]), "coarse before fine: {levels_uploaded:?}");
    assert!(frames >= 4, "children arrive over several frames: {frames}");
}

#[test]
fn fine_tiles_near_the_camera_and_coarse_ones_far() {
    let dir = bake("near_far");
    let mut s = Streamer::open(dir.path(), config()).unwrap();
    let cam = corner_camera();
    let mut gpu = Gpu::default();
    let (plan, errors) = settle(&mut s, &cam, &mut gpu);
    assert!(errors.is_empty(), "{errors:?}");
    let drawn: BTreeSet<TileId> = plan.draw.iter().copied().collect();
    // L1 (0,0) holds the camera and refines to level 0 (error 0.25 at ~6 units); the other level-1
    // tiles are over 100 units away, where 0.25 units project under 2 px.
    let expected: BTreeSet<TileId> = [key(0, 0, 0), key(0, 1, 0), key(0, 0, 1), key(0, 1, 1), key(1, 1, 0), key(1, 0, 1), key(1, 1, 1)].into();
    assert_eq!(drawn, expected);
    assert_eq!(plan.draw[0], key(0, 0, 0), "front to back");
    let s1 = s.stats();
    assert_eq!(s1.drawn, 7);
    assert_eq!(s1.failed, 0);
    assert_eq!(s1.peak_resident_bytes, gpu.bytes());
    // A still camera costs nothing more.
    let plan = step(&mut s, &cam);
    assert!(plan.uploads.is_empty() && plan.evict.is_empty());
    assert_eq!(s.stats().tiles_streamed, s1.tiles_streamed);
}

#[test]
fn a_withheld_tile_is_replaced_by_its_parent() {
    let dir = bake("withheld");
    let mut s = Streamer::open(dir.path(), config()).unwrap();
    let cam = corner_camera();
    let mut gpu = Gpu::default();
    settle(&mut s, &cam, &mut gpu);
    // Withholding a resident tile frees it with the next plan.
    s.withhold(key(0, 1, 0));
    let (plan, errors) = settle(&mut s, &cam, &mut gpu);
    assert!(errors.is_empty());
    let drawn: BTreeSet<TileId> = plan.draw.iter().copied().collect();
    assert!(drawn.contains(&key(1, 0, 0)), "{drawn:?}");
    assert!(!drawn.contains(&key(0, 1, 0)) && !drawn.contains(&key(0, 0, 0)), "the parent covers its children");
    assert!(drawn.contains(&key(1, 1, 1)), "other tiles are unaffected");
    assert!(!gpu.tiles.contains_key(&key(0, 1, 0)));
    assert_eq!(s.stats().withheld, 1);

    // Withheld before it ever loads: the parent is loaded and drawn instead.
    let mut s = Streamer::open(dir.path(), config()).unwrap();
    s.withhold(key(0, 0, 1));
    let mut gpu = Gpu::default();
    let (plan, _) = settle(&mut s, &cam, &mut gpu);
    assert!(plan.draw.contains(&key(1, 0, 0)) && !plan.draw.contains(&key(0, 0, 1)));
}

#[test]
fn bad_tile_packs_are_reported_once_and_their_parent_is_drawn() {
    let dir = bake("corrupt");
    let tiles = dir.path().join("tiles");
    // One flipped byte, one missing file, one sound pack of another tile, one sound but stale pack.
    let corrupt = tiles.join("L0_1_0.kpack");
    let mut bytes = std::fs::read(&corrupt).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&corrupt, bytes).unwrap();
    std::fs::remove_file(tiles.join("L0_0_1.kpack")).unwrap();
    std::fs::copy(tiles.join("L1_1_1.kpack"), tiles.join("L1_1_0.kpack")).unwrap();
    std::fs::write(tiles.join("L0_1_1.kpack"), fixture::tile_pack(key(0, 1, 1), 0.5).0).unwrap();

    let mut s = Streamer::open(dir.path(), config()).unwrap();
    let cam = corner_camera();
    let mut gpu = Gpu::default();
    let (mut plan, mut errors) = settle(&mut s, &cam, &mut gpu);
    for _ in 0..3 {
        plan = step(&mut s, &cam);
        gpu.apply(&s, &cam, &plan);
        errors.extend(plan.errors.iter().cloned());
    }
    errors.sort();
    assert_eq!(errors.len(), 4, "each bad tile reported once: {errors:#?}");
    assert!(errors[0].contains("L0_0_1.kpack"), "{}", errors[0]);
    assert!(errors[1].contains("L0_1_0.kpack"), "{}", errors[1]);
    assert!(errors[2].contains("L0_1_1.kpack") && errors[2].contains("content hash"), "{}", errors[2]);
    assert!(errors[3].contains("L1_1_0.kpack") && errors[3].contains("not tile L1 (1,0)"), "{}", errors[3]);
    assert_eq!(s.stats().failed, 4);
    let failed: Vec<TileId> = s.failures().map(|(k, _)| k).collect();
    assert_eq!(failed, vec![key(0, 1, 0), key(0, 0, 1), key(0, 1, 1), key(1, 1, 0)]);
    // L1 (0,0) stands in for its three bad children (and covers the sound one); the bad L1 (1,0)
    // falls back to the root, which then covers everything.
    assert_eq!(plan.draw, vec![key(2, 0, 0)]);

    // With only level-0 damage, the viewer keeps the rest of the picture.
    let dir = bake("corrupt_leaf");
    std::fs::write(dir.path().join("tiles/L0_1_1.kpack"), b"not a pack").unwrap();
    let mut s = Streamer::open(dir.path(), config()).unwrap();
    let mut gpu = Gpu::default();
    let (plan, errors) = settle(&mut s, &cam, &mut gpu);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("L0_1_1.kpack") && errors[0].contains("magic"), "{}", errors[0]);
    let drawn: BTreeSet<TileId> = plan.draw.iter().copied().collect();
    assert_eq!(drawn, [key(1, 0, 0), key(1, 1, 0), key(1, 0, 1), key(1, 1, 1)].into());
}

/// A flight across the world and back, as a list of cameras.
fn flight() -> Vec<CameraView> {
    let mut path = Vec::new();
    for i in 0..24 {
        let x = 10.0 + i as f32 * 10.0;
        path.push(camera([x, 30.0 + i as f32 * 4.0, 10.0], [x + 100.0, 60.0 + i as f32 * 4.0, 0.0], [100.0, 40.0, 0.0]));
    }
    for i in 0..12 {
        let x = 250.0 - i as f32 * 20.0;
        path.push(camera([x, 200.0, 10.0], [x - 100.0, 100.0, 0.0], [-200.0, 0.0, 0.0]));
    }
    path
}

#[test]
fn resident_bytes_never_exceed_the_budget() {
    let dir = bake("budget");
    // Room for 9 of the 21 tiles: the flight must evict, and some cuts must coarsen to fit.
    let budget = 9 * TILE_GPU_BYTES;
    let mut s = Streamer::open(dir.path(), StreamConfig { budget_bytes: budget, prefetch: true, ..config() }).unwrap();
    let mut gpu = Gpu::default();
    for cam in flight() {
        let plan = step(&mut s, &cam);
        gpu.apply(&s, &cam, &plan);
        assert!(gpu.bytes() <= budget, "{} resident bytes over the budget of {budget}", gpu.bytes());
    }
    let stats = s.stats();
    assert!(stats.peak_resident_bytes <= budget && stats.peak_resident_bytes > budget / 2, "{stats:?}");
    assert!(stats.evictions > 5 && stats.prefetch_uploads > 0, "{stats:?}");
}

#[test]
fn frustum_culling_drops_tiles_behind_the_camera() {
    let dir = bake("culling");
    let mut s = Streamer::open(dir.path(), config()).unwrap();
    // In the middle of the world, looking along +X.
    let cam = camera([128.0, 128.0, 12.0], [300.0, 128.0, 4.0], [0.0; 3]);
    let mut gpu = Gpu::default();
    let (plan, _) = settle(&mut s, &cam, &mut gpu);
    assert!(!plan.draw.is_empty());
    for k in cut_of(&s, &cam) {
        assert!(s.tile_info(k).unwrap().bounds_max[0] > 128.0, "{k} lies behind the camera");
    }
    // Level-0 tiles just in front of the camera are drawn.
    assert!(plan.draw.contains(&key(0, 2, 1)) && plan.draw.contains(&key(0, 2, 2)), "{:?}", plan.draw);
    // Turning around selects the other half.
    let back = camera([128.0, 128.0, 12.0], [-100.0, 128.0, 4.0], [0.0; 3]);
    settle(&mut s, &back, &mut gpu);
    assert!(cut_of(&s, &back).iter().all(|&k| s.tile_info(k).unwrap().bounds_min[0] < 128.0));
}

/// A plan as comparable values: upload keys, evictions, draws, errors (file names only).
type PlanRecord = (Vec<TileId>, Vec<TileId>, Vec<TileId>, Vec<String>);

/// Every plan of a flight.
fn record(threads: usize) -> Vec<PlanRecord> {
    let dir = bake(&format!("determinism_{threads}"));
    let budget = 10 * TILE_GPU_BYTES;
    let config =
        StreamConfig { budget_bytes: budget, loader_threads: threads, max_upload_bytes_per_frame: 3 * TILE_GPU_BYTES, prefetch: true, ..config() };
    let mut s = Streamer::open(dir.path(), config).unwrap();
    s.withhold(key(0, 2, 1));
    flight()
        .iter()
        .map(|cam| {
            let p = step(&mut s, cam);
            // Paths differ between the two runs' directories: keep the file name only.
            let errors = p.errors.iter().map(|e| e.rsplit('/').next().unwrap_or(e).to_owned()).collect();
            (p.uploads.iter().map(|t| t.key).collect(), p.evict, p.draw, errors)
        })
        .collect()
}

#[test]
fn identical_camera_paths_give_identical_plans() {
    let a = record(1);
    let b = record(3);
    assert_eq!(a.len(), b.len());
    for (i, (pa, pb)) in a.iter().zip(&b).enumerate() {
        assert_eq!(pa, pb, "frame {i} differs");
    }
    assert!(a.iter().any(|p| !p.1.is_empty()), "the flight evicts");
}

#[test]
fn prefetch_builds_one_tile_per_frame_only_when_no_visible_tile_was_built() {
    let dir = bake("prefetch");
    let mut s = Streamer::open(dir.path(), StreamConfig { prefetch: true, ..config() }).unwrap();
    // Moving along +X at 100 units/s: one second ahead it needs level 0 under L1 (1,0).
    let moving = camera([20.0, 20.0, 12.0], [200.0, 20.0, 0.0], [100.0, 0.0, 0.0]);
    let mut gpu = Gpu::default();
    let mut prefetched = Vec::new();
    for _ in 0..12 {
        let before = s.stats().prefetch_uploads;
        let plan = step(&mut s, &moving);
        gpu.apply(&s, &moving, &plan);
        if s.stats().prefetch_uploads > before {
            assert_eq!(plan.uploads.len(), 1, "a prefetch build runs alone");
            prefetched.push(plan.uploads[0].key);
        }
    }
    assert!(prefetched.contains(&key(0, 2, 0)), "{prefetched:?}");
    // Arriving there, the prefetched tiles are already resident: drawn, not uploaded again.
    let there = camera([120.0, 20.0, 12.0], [300.0, 20.0, 0.0], [0.0; 3]);
    let mut drawn = BTreeSet::new();
    for _ in 0..4 {
        let plan = step(&mut s, &there);
        gpu.apply(&s, &there, &plan);
        assert!(plan.uploads.iter().all(|t| !prefetched.contains(&t.key)), "{:?} uploaded again", plan.uploads);
        drawn.extend(plan.draw);
    }
    assert!(s.settled());
    assert!(drawn.contains(&key(0, 2, 0)), "{drawn:?}");

    // Without prefetch nothing but the needed tiles is uploaded.
    let mut s = Streamer::open(dir.path(), config()).unwrap();
    let mut gpu = Gpu::default();
    for _ in 0..6 {
        let plan = step(&mut s, &moving);
        gpu.apply(&s, &moving, &plan);
    }
    assert_eq!(s.stats().prefetch_uploads, 0);
    assert!(!gpu.tiles.contains_key(&key(0, 2, 0)), "the look-ahead region is not loaded");
}

/// A triangle as its corner positions, rotated so that the smallest corner comes first: equal for
/// the same triangle with the same winding, whatever its vertex numbering.
fn oriented(positions: [[u32; 3]; 3]) -> [[u32; 3]; 3] {
    let first = (0..3).min_by_key(|&i| positions[i]).expect("three corners");
    [positions[first], positions[(first + 1) % 3], positions[(first + 2) % 3]]
}

#[test]
fn skirts_are_drawn_as_the_pack_stores_them_once_per_side() {
    let dir = bake("skirts");
    let k = key(0, 1, 1);
    let node = fixture::tile_pack(k, 0.0).1;
    let path = dir.path().join(&node.path);
    let mesh = kiln_formats::Pack::open(&path).unwrap().require::<kiln_formats::sections::TerrainMesh>().unwrap();
    let pack_skirt_triangles = (mesh.indices.len() - mesh.main_index_count) / 3;
    assert!(pack_skirt_triangles > 0, "the fixture must have skirts for this test to mean anything");
    let job = loader::Job { key: k, path, content_hash: node.content_hash, bounds_min: node.bounds_min, bounds_max: node.bounds_max };
    let decoded = loader::load_tile(&job, &crate::layers::decoders(&Default::default())).unwrap();
    let budget = decoded.gpu_bytes();
    let data = decoded.products.into_iter().next().flatten().expect("terrain is the first product");
    let tile = crate::layers::downcast::<TerrainData>(data, "terrain").unwrap();

    assert_eq!(tile.main_index_count as usize, mesh.main_index_count);
    assert_eq!(tile.indices.len(), mesh.indices.len(), "the pack's skirts are already double-sided: no copies added");
    assert_eq!(
        budget,
        tile.vertices.len() as u64 * GPU_VERTEX_BYTES + mesh.indices.len() as u64 * INDEX_BYTES,
        "skirts counted once against the budget"
    );
    let corners = |idx: &[u32], at: &dyn Fn(u32) -> [f32; 3]| -> Vec<[[u32; 3]; 3]> {
        let mut t: Vec<_> = idx.chunks_exact(3).map(|t| oriented([0, 1, 2].map(|c| at(t[c]).map(f32::to_bits)))).collect();
        t.sort_unstable();
        t
    };
    let drawn = corners(&tile.indices, &|i| tile.vertices[i as usize].position);
    let stored = corners(&mesh.indices, &|i| mesh.positions[i as usize]);
    assert_eq!(drawn, stored, "the same triangles with the same windings as the pack");
    let mut unique = drawn.clone();
    unique.dedup();
    assert_eq!(unique.len(), drawn.len(), "a triangle drawn twice with the same winding");
}
