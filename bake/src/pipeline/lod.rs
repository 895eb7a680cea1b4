//! The LOD quadtree: which cells a tile covers at each level, its quantisation lattice, and how far
//! its surface lies from the full-resolution one.

use kiln_formats::sections::Lattice;
pub use kiln_formats::TileId;

/// The tiling of a volume: level-0 tiles of `tile_voxels` columns, `tiles` of them along X and Y.
#[derive(Clone, Copy, Debug)]
pub struct Tiling {
    /// Samples of the density volume along X, Y and Z.
    pub dims: [usize; 3],
    /// Cells along X and Y of a level-0 tile (a level-k tile spans `tile_voxels << k` voxels).
    pub tile_voxels: u32,
    /// Level-0 tiles along X and Y: `dims[0..2] / tile_voxels`, rounded down.
    pub tiles: [u32; 2],
    /// World units per voxel.
    pub voxel_size: f32,
}

impl Tiling {
    /// The tiling of a `dims` volume into level-0 tiles of `tile_voxels` cells, at `voxel_size`
    /// world units per voxel.
    pub fn new(dims: [usize; 3], tile_voxels: u32, voxel_size: f32) -> Self {
        let tiles = [dims[0] as u32 / tile_voxels, dims[1] as u32 / tile_voxels];
        Tiling { dims, tile_voxels, tiles, voxel_size }
    }

    /// Number of levels: level k has (tiles >> k) tiles per axis, down to a single root.
    pub fn levels(&self) -> u32 {
        self.tiles[0].max(self.tiles[1]).trailing_zeros() + 1
    }

    /// Tiles of `level` along X and Y.
    pub fn tiles_at(&self, level: u32) -> [u32; 2] {
        TileId::tiles_at(self.tiles, level)
    }

    /// Every node, sorted by (level, y, x): the order packs are baked and listed in.
    pub fn all_tiles(&self) -> Vec<TileId> {
        TileId::all(self.tiles, self.levels()).collect()
    }

    /// Sample spacing in voxels at `level`.
    pub fn stride(level: u32) -> i32 {
        1 << level
    }

    /// First corner (global voxels) and cell counts of a tile's marching-cubes range.
    pub fn cell_range(&self, t: TileId) -> ([i32; 3], [usize; 3]) {
        let s = Self::stride(t.level);
        let span = self.tile_voxels as i32 * s;
        let z_cells = (self.dims[2] as i32 - 1 + s - 1) / s; // ceil((nz - 1) / s): reach the top sample
        ([t.x as i32 * span, t.y as i32 * span, 0], [self.tile_voxels as usize, self.tile_voxels as usize, z_cells.max(1) as usize])
    }

    /// How far (voxels) skirts hang at `level`: one cell of the next coarser level.
    pub fn skirt_depth(level: u32) -> f32 {
        (2 * Self::stride(level)) as f32
    }

    /// The quantisation lattice of a tile: one shift per level (so shared borders of same-level
    /// tiles land on the same lattice points) and an origin just outside the tile's reach.
    pub fn lattice(&self, t: TileId) -> Lattice {
        let margin = Self::skirt_depth(t.level) as i64 + 2;
        let (min, cells) = self.cell_range(t);
        let s = Self::stride(t.level) as i64;
        let extent = (cells[0].max(cells[1]) as i64 * s).max(cells[2] as i64 * s) + 2 * margin;
        let mut shift = 0u8;
        while shift < 12 && extent << (shift + 1) <= u16::MAX as i64 {
            shift += 1;
        }
        let origin =
            [((min[0] as i64 - margin) << shift) as i32, ((min[1] as i64 - margin) << shift) as i32, ((min[2] as i64 - margin) << shift) as i32];
        Lattice { voxel_size: self.voxel_size, shift, origin }
    }

    /// Steps of a tile's [`lattice`](Self::lattice) along one marching-cubes cell edge: marching
    /// cubes keeps vertices one such step away from corners, so quantisation cannot merge them.
    /// At least 2: level 0's extent always leaves a shift of at least 1, coarser levels have a
    /// stride of at least 2.
    pub fn edge_steps(&self, t: TileId) -> u32 {
        (Self::stride(t.level) as u32) << self.lattice(t).shift
    }
}

/// Trilinearly interpolated density and its gradient (per voxel) at `p` (voxel units), clamped to
/// the volume.
pub fn sample_with_gradient(dims: [usize; 3], data: &[f32], p: [f32; 3]) -> (f32, [f32; 3]) {
    let at = |x: i64, y: i64, z: i64| {
        let c = |v: i64, n: usize| v.clamp(0, n as i64 - 1) as usize;
        data[c(x, dims[0]) + dims[0] * (c(y, dims[1]) + dims[1] * c(z, dims[2]))]
    };
    let f = p.map(|v| v.floor());
    let (x0, y0, z0) = (f[0] as i64, f[1] as i64, f[2] as i64);
    let (tx, ty, tz) = (p[0] - f[0], p[1] - f[1], p[2] - f[2]);
    let mut c = [[[0f32; 2]; 2]; 2];
    for (dz, cz) in c.iter_mut().enumerate() {
        for (dy, cy) in cz.iter_mut().enumerate() {
            for (dx, v) in cy.iter_mut().enumerate() {
                *v = at(x0 + dx as i64, y0 + dy as i64, z0 + dz as i64);
            }
        }
    }
    let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
    let along_x = |y: usize, z: usize| lerp(c[z][y][0], c[z][y][1], tx);
    let d = lerp(lerp(along_x(0, 0), along_x(1, 0), ty), lerp(along_x(0, 1), along_x(1, 1), ty), tz);
    let gx = lerp(lerp(c[0][0][1] - c[0][0][0], c[0][1][1] - c[0][1][0], ty), lerp(c[1][0][1] - c[1][0][0], c[1][1][1] - c[1][1][0], ty), tz);
    let gy = lerp(lerp(c[0][1][0] - c[0][0][0], c[0][1][1] - c[0][0][1], tx), lerp(c[1][1][0] - c[1][0][0], c[1][1][1] - c[1][0][1], tx), tz);
    let gz = lerp(lerp(c[1][0][0] - c[0][0][0], c[1][0][1] - c[0][0][1], tx), lerp(c[1][1][0] - c[0][1][0], c[1][1][1] - c[0][1][1], tx), ty);
    (d, [gx, gy, gz])
}

/// The largest distance (voxels) from a coarse surface's vertices to the full-resolution isosurface,
/// estimated per vertex as |d| / |∇d| of the full-resolution density (first-order distance), and
/// capped at `cap` where the gradient vanishes.
pub fn surface_deviation(dims: [usize; 3], data: &[f32], positions_voxels: &[[f32; 3]], cap: f32) -> f32 {
    positions_voxels
        .iter()
        .map(|&p| {
            let (d, g) = sample_with_gradient(dims, data, p);
            let gl = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
            if gl > 1e-6 {
                (d.abs() / gl).min(cap)
            } else if d.abs() < 1e-6 {
                0.0
            } else {
                cap
            }
        })
        .fold(0.0, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quadtree_levels_and_ranges() {
        let t = Tiling::new([512, 512, 64], 32, 0.0625);
        assert_eq!(t.levels(), 5);
        assert_eq!(t.tiles_at(4), [1, 1]);
        assert_eq!(t.all_tiles().len(), 256 + 64 + 16 + 4 + 1);
        let (min, cells) = t.cell_range(TileId { level: 2, x: 1, y: 3 });
        assert_eq!(min, [128, 384, 0]);
        assert_eq!(cells, [32, 32, 16]);
    }

    #[test]
    fn lattice_holds_every_tile_vertex_in_u16() {
        let t = Tiling::new([512, 512, 64], 32, 0.0625);
        for level in 0..t.levels() {
            let id = TileId { level, x: t.tiles_at(level)[0] - 1, y: 0 };
            let l = t.lattice(id);
            let (min, cells) = t.cell_range(id);
            let s = Tiling::stride(level) as f32;
            let far = [(min[0] as f32 + cells[0] as f32 * s + Tiling::skirt_depth(level)) * 0.0625, 0.0, (cells[2] as f32 * s) * 0.0625];
            for a in [0, 2] {
                let q = l.index_of(far[a]) - l.origin[a] as i64;
                assert!((0..=65535).contains(&q), "level {level} axis {a}: {q}");
            }
        }
    }

    #[test]
    fn every_level_has_at_least_two_lattice_steps_per_cell_edge() {
        // The extremes validation allows: the tallest volume in one level-0 tile, and the most
        // levels (one-voxel tiles, whose coarsest level has the widest margin).
        for (dims, tile) in [([4096, 4096, 4096], 4096), ([4096, 4096, 16], 1), ([512, 512, 64], 32), ([64, 64, 32], 16)] {
            let t = Tiling::new(dims, tile, 0.0625);
            for level in 0..t.levels() {
                let steps = t.edge_steps(TileId { level, x: 0, y: 0 });
                assert!(steps >= 2 && steps.is_power_of_two(), "{dims:?} tile {tile} level {level}: {steps}");
            }
        }
        assert_eq!(Tiling::new([512, 512, 64], 32, 0.0625).edge_steps(TileId { level: 0, x: 3, y: 1 }), 512);
    }

    #[test]
    fn deviation_of_a_plane_is_exact() {
        // density = 10 - z (solid below z = 10), sampled on a 4x4x20 grid.
        let dims = [4, 4, 20];
        let data: Vec<f32> = (0..4 * 4 * 20).map(|i| 10.0 - (i / 16) as f32).collect();
        let e = surface_deviation(dims, &data, &[[1.5, 1.5, 10.0], [1.0, 2.0, 12.5]], 100.0);
        assert!((e - 2.5).abs() < 1e-5, "{e}");
    }
}
