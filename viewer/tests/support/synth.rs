//! A synthetic bake directory written with `kiln-formats` alone (no baker): a height field with a
//! narrow trench (low AO) and a flat plateau (open sky), meshed per tile and level with skirts,
//! per-vertex AO from horizon scanning, and a manifest with real hashes.
//!
//! Shared by the integration tests and `examples/synth_world.rs` (via `#[path]`).

use std::path::Path;

use kiln_formats::sections::{Lattice, Manifest, TerrainMesh, VertexAo};
use kiln_formats::{write_atomic, TileContents, TileId};

/// World shape parameters.
#[derive(Clone, Copy, Debug)]
pub struct Synth {
    /// Level-0 tiles per axis (a power of two).
    pub tiles: u32,
    /// Grid cells per tile edge at every level.
    pub cells: u32,
    /// LOD levels (level `levels - 1` is one tile if `tiles == 2^(levels-1)`).
    pub levels: u32,
}

impl Synth {
    /// World width in units (voxel size 1).
    pub fn width(&self) -> f32 {
        (self.tiles * self.cells) as f32
    }
    /// X of the trench's axis (it runs along Y).
    pub fn trench_x(&self) -> f32 {
        0.3 * self.width()
    }
    /// Centre of the flat plateau.
    pub fn plateau(&self) -> (f32, f32) {
        (0.72 * self.width(), 0.5 * self.width())
    }
    /// Terrain height at (x, y).
    pub fn height(&self, x: f32, y: f32) -> f32 {
        let w = self.width();
        let mut h = 6.0 + 2.0 * (x * 0.11).sin() * (y * 0.09).cos();
        // Trench: 12 units deep, about 3 wide at the bottom.
        let d = (x - self.trench_x()).abs();
        h -= 12.0 * (1.0 - smooth((d - 1.5) / 2.0));
        // Plateau: a flat top at 12 inside radius 0.12 w, falling off outside.
        let (px, py) = self.plateau();
        let r = ((x - px).powi(2) + (y - py).powi(2)).sqrt() / w;
        let t = 1.0 - smooth((r - 0.12) / 0.08);
        h * (1.0 - t) + 12.0 * t
    }
    fn normal(&self, x: f32, y: f32) -> [f32; 3] {
        let e = 0.25;
        let dx = (self.height(x + e, y) - self.height(x - e, y)) / (2.0 * e);
        let dy = (self.height(x, y + e) - self.height(x, y - e)) / (2.0 * e);
        let l = (dx * dx + dy * dy + 1.0).sqrt();
        [-dx / l, -dy / l, 1.0 / l]
    }
    /// Sky visibility by horizon scanning in 16 directions: 1 on open ground, low in the trench.
    pub fn ao(&self, x: f32, y: f32) -> f32 {
        let h0 = self.height(x, y) + 0.05;
        let mut open = 0.0;
        for k in 0..16 {
            let a = k as f32 * std::f32::consts::TAU / 16.0;
            let (dx, dy) = (a.cos(), a.sin());
            let mut max_tan = 0f32;
            for s in 1..=24 {
                let d = s as f32 * 0.75;
                max_tan = max_tan.max((self.height(x + dx * d, y + dy * d) - h0) / d);
            }
            open += 1.0 - (max_tan.atan() / std::f32::consts::FRAC_PI_2).clamp(0.0, 1.0);
        }
        (open / 16.0).powf(2.0)
    }

    fn tile_mesh(&self, level: u32, tx: u32, ty: u32) -> (TerrainMesh, Vec<f32>) {
        let step = (1u32 << level) as f32;
        let n = self.cells;
        let (x0, y0) = ((tx * n) as f32 * step, (ty * n) as f32 * step);
        let mut positions = Vec::new();
        let mut normals = Vec::new();
        let mut ao = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, y) = (x0 + i as f32 * step, y0 + j as f32 * step);
                positions.push([x, y, self.height(x, y)]);
                normals.push(self.normal(x, y));
                ao.push(self.ao(x, y));
            }
        }
        let at = |i: u32, j: u32| j * (n + 1) + i;
        let mut indices = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1));
                indices.extend_from_slice(&[a, b, d, a, d, c]); // counter-clockwise seen from above
            }
        }
        let main = indices.len();
        // Skirts: the border ring copied 2 levels' steps down, joined to the ring by quads.
        let ring: Vec<u32> = (0..n)
            .map(|i| at(i, 0))
            .chain((0..n).map(|j| at(n, j)))
            .chain((0..n).map(|i| at(n - i, n)))
            .chain((0..n).map(|j| at(0, n - j)))
            .collect();
        let base = positions.len() as u32;
        for &v in &ring {
            let p = positions[v as usize];
            positions.push([p[0], p[1], p[2] - 2.0 * step]);
            normals.push(normals[v as usize]);
            ao.push(ao[v as usize]);
        }
        for k in 0..ring.len() as u32 {
            let k1 = (k + 1) % ring.len() as u32;
            let (a, b, c, d) = (ring[k as usize], ring[k1 as usize], base + k, base + k1);
            // Both windings, as the bake writes them (the pack owns double-siding; the viewer adds none).
            indices.extend_from_slice(&[a, c, d, a, d, b, a, d, c, a, b, d]);
        }
        let lattice = {
            let lo = positions.iter().fold([f32::MAX; 3], |m, p| [m[0].min(p[0]), m[1].min(p[1]), m[2].min(p[2])]);
            let hi = positions.iter().fold([f32::MIN; 3], |m, p| [m[0].max(p[0]), m[1].max(p[1]), m[2].max(p[2])]);
            let extent = (0..3).map(|a| hi[a] - lo[a]).fold(0f32, f32::max) + 2.0;
            // The finest step (at most 1/64 unit) whose u16 offsets still span the tile.
            let shift = (0..=6u8).rev().find(|&s| extent * (1u32 << s) as f32 <= 60000.0).unwrap_or(0);
            let st = 1.0 / (1u32 << shift) as f32;
            Lattice { voxel_size: 1.0, shift, origin: lo.map(|v| (v / st).floor() as i32 - 1) }
        };
        let mesh = TerrainMesh { lattice, positions: positions.iter().map(|&p| lattice.snap(p)).collect(), normals, indices, main_index_count: main };
        (mesh, ao)
    }

    /// Writes `dir/manifest.kpack` and `dir/tiles/*.kpack`.
    pub fn write(&self, dir: &Path) {
        std::fs::create_dir_all(dir.join("tiles")).unwrap();
        let mut nodes = Vec::new();
        for id in TileId::all([self.tiles; 2], self.levels) {
            let (mesh, ao) = self.tile_mesh(id.level, id.x, id.y);
            let inputs_hash = 0x5eed_0000_0000 ^ ((id.level as u64) << 32 | (id.x as u64) << 16 | id.y as u64);
            let mut tile = TileContents::new(id, "synth", inputs_hash);
            tile.mesh = Some(mesh);
            tile.ao = Some(VertexAo::from_f32(&ao));
            let bytes = tile.to_pack([0, 1, 0]).unwrap();
            let node = tile.node(&bytes, if id.level == 0 { 0.0 } else { (1u32 << id.level) as f32 * 0.5 });
            write_atomic(&dir.join(&node.path), &bytes).unwrap();
            nodes.push(node);
        }
        let lo = nodes.iter().fold([f32::MAX; 3], |m, n| [m[0].min(n.bounds_min[0]), m[1].min(n.bounds_min[1]), m[2].min(n.bounds_min[2])]);
        let hi = nodes.iter().fold([f32::MIN; 3], |m, n| [m[0].max(n.bounds_max[0]), m[1].max(n.bounds_max[1]), m[2].max(n.bounds_max[2])]);
        let manifest = Manifest {
            world_name: "synth".into(),
            world_hash: 7,
            baker_version: "synthetic".into(),
            voxel_size: 1.0,
            volume_dims: [self.tiles * self.cells, self.tiles * self.cells, 32],
            tile_voxels: self.cells,
            tiles_per_axis: [self.tiles, self.tiles],
            levels: self.levels,
            bounds_min: lo,
            bounds_max: hi,
            nodes,
        };
        write_atomic(&dir.join("manifest.kpack"), &manifest.to_pack([0, 1, 0]).unwrap()).unwrap();
    }
}

fn smooth(t: f32) -> f32 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}
