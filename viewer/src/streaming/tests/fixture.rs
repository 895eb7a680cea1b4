//! A small synthetic bake written with `kiln_formats`, and camera helpers.

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};
use kiln_formats::sections::{Lattice, Manifest, TerrainMesh, TileNode, VertexAo};
use kiln_formats::TileContents;

use super::super::{CameraView, TileId};
use crate::layers::terrain::decode::INDEX_BYTES;
use crate::layers::terrain::vertex::GPU_VERTEX_BYTES;

/// Level-0 tiles per axis, levels, and the level-0 tile edge in world units.
pub const TILES: u32 = 4;
pub const LEVELS: u32 = 3;
pub const TILE_SIZE: f32 = 64.0;
/// Grid cells per tile edge: (GRID+1)² vertices, 2·GRID² surface triangles, plus 2 skirt triangles.
const GRID: u32 = 2;
/// Geometric error per level (world units).
pub const ERRORS: [f32; LEVELS as usize] = [0.0, 0.25, 2.0];
/// Every fixture tile has the same size on the GPU: 9 vertices, 8 + 2 triangles.
pub const TILE_GPU_BYTES: u64 = 9 * GPU_VERTEX_BYTES + 30 * INDEX_BYTES;

/// A temporary directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("kiln-stream-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tiles")).expect("create temp dir");
        TempDir(dir)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The height of level `level`'s surface: each level a little apart so a test could tell them
/// apart, with a slope so normals and bounds are not degenerate.
fn height(level: u32, x: f32, y: f32) -> f32 {
    4.0 + level as f32 * 0.5 + (x + y) / 128.0
}

/// The pack bytes of tile `key`, with its mesh surface raised by `lift` (to make a stale variant).
pub fn tile_pack(key: TileId, lift: f32) -> (Vec<u8>, TileNode) {
    let size = TILE_SIZE * (1u32 << key.level) as f32;
    let (x0, y0) = (key.x as f32 * size, key.y as f32 * size);
    let lattice = Lattice { voxel_size: 1.0, shift: 4, origin: [(x0 * 16.0) as i32, (y0 * 16.0) as i32, 0] };
    let mut positions = Vec::new();
    for j in 0..=GRID {
        for i in 0..=GRID {
            let (x, y) = (x0 + size * i as f32 / GRID as f32, y0 + size * j as f32 / GRID as f32);
            positions.push(lattice.snap([x, y, height(key.level, x, y) + lift]));
        }
    }
    let mut indices = Vec::new();
    for j in 0..GRID {
        for i in 0..GRID {
            let a = j * (GRID + 1) + i;
            indices.extend_from_slice(&[a, a + 1, a + GRID + 2, a, a + GRID + 2, a + GRID + 1]);
        }
    }
    let main_index_count = indices.len();
    // Two extra triangles past main_index_count stand in for skirts.
    indices.extend_from_slice(&[0, 1, 2, 0, 2, 1]);
    let normals = vec![[0.0, 0.0, 1.0]; positions.len()];
    let ao: Vec<f32> = (0..positions.len()).map(|i| i as f32 / 10.0).collect();
    let mesh = TerrainMesh { lattice, positions, normals, indices, main_index_count };
    let inputs_hash = u64::from(key.level) << 32 | u64::from(key.y) << 16 | u64::from(key.x);
    let mut tile = TileContents::new(key, "fixture", inputs_hash);
    tile.mesh = Some(mesh);
    tile.ao = Some(VertexAo::from_f32(&ao));
    let bytes = tile.to_pack([0, 1, 0]).expect("pack");
    let node = tile.node(&bytes, ERRORS[key.level as usize]);
    (bytes, node)
}

/// Every key of the fixture quadtree, sorted by (level, y, x) like a manifest.
pub fn all_keys() -> Vec<TileId> {
    TileId::all([TILES, TILES], LEVELS).collect()
}

/// The manifest pack's bytes for `nodes`.
pub fn manifest_pack(nodes: Vec<TileNode>) -> Vec<u8> {
    let world = TILE_SIZE * TILES as f32;
    let manifest = Manifest {
        world_name: "fixture".into(),
        world_hash: 7,
        baker_version: "test".into(),
        voxel_size: 1.0,
        volume_dims: [world as u32, world as u32, 16],
        tile_voxels: TILE_SIZE as u32,
        tiles_per_axis: [TILES, TILES],
        levels: LEVELS,
        bounds_min: [0.0, 0.0, 0.0],
        bounds_max: [world, world, 16.0],
        nodes,
    };
    manifest.to_pack([0, 1, 0]).expect("pack")
}

/// Writes the whole fixture bake into a fresh temporary directory.
pub fn bake(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    let mut nodes = Vec::new();
    for key in all_keys() {
        let (bytes, node) = tile_pack(key, 0.0);
        std::fs::write(dir.path().join(&node.path), bytes).expect("write tile");
        nodes.push(node);
    }
    std::fs::write(dir.path().join("manifest.kpack"), manifest_pack(nodes)).expect("write manifest");
    dir
}

/// A camera at `eye` looking at `target` (Z up), 60° vertical field of view, 600 px square viewport.
pub fn camera(eye: [f32; 3], target: [f32; 3], velocity: [f32; 3]) -> CameraView {
    let fov = 60f32.to_radians();
    let proj = Mat4::perspective_rh(fov, 1.0, 0.5, 2_000.0);
    let view = Mat4::look_at_rh(Vec3::from(eye), Vec3::from(target), Vec3::Z);
    CameraView { position: eye, view_proj: (proj * view).to_cols_array_2d(), velocity, viewport_height_px: 600.0, fov_y_radians: fov }
}

pub fn key(level: u32, x: u32, y: u32) -> TileId {
    TileId::new(level, x, y)
}
