//! Where the water is: a flood fill of the density volume's air from the water level down.
//!
//! Conventions are the density volume's (ARCHITECTURE.md, `grid.rs`): sample `(i, j, k)` at
//! `(i, j, k) · voxel_size`, Z up, X fastest, **positive is solid** (air is every sample that is not
//! above 0).
//!
//! **Flooded**: an air sample at or below the level (`k · voxel_size ≤ level`) that is connected to
//! a *seed* by 6-neighbour steps through such samples. A seed is an air sample of the top water layer
//! (the highest `k` at or below the level) whose column has no solid sample above that layer: water
//! stands wherever the sea or a lake can reach from its open surface, so a sealed cave below the
//! level stays dry while an underwater cave whose mouth opens below the surface floods.
//!
//! **Open water** (what a tile's `WTIL` maps): the seed columns. Their **depth** is the level minus
//! the ground under them: walking down the flooded column to its first solid sample, the linear
//! root of the density between that sample and the air above it (the surface marching cubes draws),
//! or the volume's bottom when the column is flooded all the way down. The **shore distance** of a
//! column is a 3-4 chamfer distance (in samples, `(3·straight + 4·diagonal steps) / 3` rounded) to
//! the nearest column without open water, at least 1 on open water, saturated at 255; 0 on dry
//! columns. With no dry column at all it is 255 everywhere.
//!
//! **Closed sides** (`density::close_sides`): the outermost ring of samples is air from top to bottom,
//! outside the wall that closes the world. With `closed_sides` the ring is never water (neither
//! flooded nor open water) and does not count as shore: a sea meeting the world's edge keeps its
//! depth and shore distance up to the wall.
//!
//! The fill is iterative (an explicit stack, no recursion), one pass of 6 neighbour checks per
//! flooded sample; its result is a set, so the order of the stack cannot change it.

use crate::density::DensityVolume;

/// Why the flood fill refused its input.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WaterBodyError {
    /// The volume's data does not match its dims, or the voxel size or level is not finite and usable.
    #[error("water body: a density volume {dims:?} ({len} samples) at voxel size {voxel_size}, level {level}")]
    Input {
        /// The volume's dims.
        dims: [usize; 3],
        /// Its data length.
        len: usize,
        /// The voxel size given.
        voxel_size: f32,
        /// The level given.
        level: f32,
    },
}

/// The flooded samples and the open water's columns (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaterBody {
    /// z of the water surface.
    pub level: f32,
    /// World units between samples.
    pub voxel_size: f32,
    /// `nx, ny` and the layers at or below the level (`flooded` holds `nx · ny · layers`).
    pub dims: [usize; 3],
    /// Per sample of the layers at or below the level, X fastest: whether it is water.
    pub flooded: Vec<bool>,
    /// Per column (`nx · ny`, X fastest): water depth in world units; 0 where there is no open water.
    pub depth: Vec<f32>,
    /// Whether the outermost ring of columns lies outside the world's closed sides (see the module docs).
    pub closed_sides: bool,
}

/// Depth and shore distance on a grid of columns every `stride` samples (a tile level's samples).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnGrid {
    /// Columns per axis: `nx / stride + 1` and `ny / stride + 1` (the last one past the volume
    /// repeats the volume's last column, so every tile's max border has a sample).
    pub n: [usize; 2],
    /// Samples between neighbouring columns.
    pub stride: usize,
    /// Water depth in world units, 0 = no open water, X fastest.
    pub depth: Vec<f32>,
    /// Chamfer distance in this grid's samples to the nearest column without open water (see the
    /// module docs), X fastest.
    pub shore: Vec<u8>,
}

impl WaterBody {
    /// Whether sample `(i, j, k)` is water (false above the level).
    pub fn is_flooded(&self, i: usize, j: usize, k: usize) -> bool {
        k < self.dims[2] && self.flooded[i + self.dims[0] * (j + self.dims[1] * k)]
    }

    /// The number of flooded samples.
    pub fn flooded_count(&self) -> usize {
        self.flooded.iter().filter(|&&f| f).count()
    }

    /// Depth and shore distance every `stride` columns (`stride ≥ 1`).
    pub fn grid(&self, stride: usize) -> ColumnGrid {
        let stride = stride.max(1);
        let [nx, ny, _] = self.dims;
        let n = [nx.div_ceil(stride) + 1, ny.div_ceil(stride) + 1];
        let mut depth = Vec::with_capacity(n[0] * n[1]);
        for j in 0..n[1] {
            let y = (j * stride).min(ny.saturating_sub(1));
            for i in 0..n[0] {
                let x = (i * stride).min(nx.saturating_sub(1));
                depth.push(if nx == 0 || ny == 0 { 0.0 } else { self.depth[y * nx + x] });
            }
        }
        let wet: Vec<bool> = depth.iter().map(|&d| d > 0.0).collect();
        // Shore: the dry columns inside the world (the ring outside closed sides is no shore).
        let ring = |i: usize, j: usize| {
            let (x, y) = ((i * stride).min(nx.saturating_sub(1)), (j * stride).min(ny.saturating_sub(1)));
            self.closed_sides && (x == 0 || y == 0 || x + 1 >= nx || y + 1 >= ny)
        };
        let shore_of: Vec<bool> = (0..n[0] * n[1]).map(|c| !wet[c] && !ring(c % n[0], c / n[0])).collect();
        ColumnGrid { n, stride, shore: shore_distance(&wet, &shore_of, n), depth }
    }
}

/// Floods `volume` (samples every `voxel_size`) up to `level` (see the module docs); `closed_sides`
/// says the volume's outermost ring of samples is outside the world's walls.
pub fn flood(volume: &DensityVolume, voxel_size: f32, level: f32, closed_sides: bool) -> Result<WaterBody, WaterBodyError> {
    let [nx, ny, nz] = volume.dims;
    let bad = || WaterBodyError::Input { dims: volume.dims, len: volume.data.len(), voxel_size, level };
    let count = nx.checked_mul(ny).and_then(|p| p.checked_mul(nz)).ok_or_else(bad)?;
    if count != volume.data.len() || !(voxel_size.is_finite() && voxel_size > 0.0) || !level.is_finite() {
        return Err(bad());
    }
    let plane = nx * ny;
    // Layers whose samples lie at or below the level.
    let layers = if level < 0.0 { 0 } else { ((level / voxel_size).floor() as usize).saturating_add(1).min(nz) };
    let mut body =
        WaterBody { level, voxel_size, dims: [nx, ny, layers], flooded: vec![false; plane * layers], depth: vec![0.0; plane], closed_sides };
    if layers == 0 || plane == 0 {
        return Ok(body);
    }
    let top = layers - 1;
    // Samples that hold no water: solid ones, and the ring outside closed sides.
    let outside = |c: usize| closed_sides && (c % nx == 0 || c / nx == 0 || c % nx + 1 == nx || c / nx + 1 == ny);
    let solid = |index: usize| volume.data[index] > 0.0 || outside(index % plane);
    // Columns with no solid sample above the top water layer, one contiguous layer at a time.
    let mut open = vec![true; plane];
    for k in layers..nz {
        let layer = &volume.data[k * plane..(k + 1) * plane];
        open.iter_mut().zip(layer).for_each(|(o, &d)| *o &= d <= 0.0);
    }
    let seeds: Vec<usize> = (0..plane).filter(|&c| open[c] && !solid(top * plane + c)).collect();
    let flooded = &mut body.flooded;
    let mut stack: Vec<usize> = Vec::with_capacity(seeds.len());
    for &c in &seeds {
        flooded[top * plane + c] = true;
        stack.push(top * plane + c);
    }
    while let Some(at) = stack.pop() {
        let (x, y, k) = (at % nx, (at / nx) % ny, at / plane);
        let mut visit = |n: usize| {
            if !flooded[n] && !solid(n) {
                flooded[n] = true;
                stack.push(n);
            }
        };
        if x > 0 {
            visit(at - 1);
        }
        if x + 1 < nx {
            visit(at + 1);
        }
        if y > 0 {
            visit(at - nx);
        }
        if y + 1 < ny {
            visit(at + nx);
        }
        if k > 0 {
            visit(at - plane);
        }
        if k < top {
            visit(at + plane);
        }
    }
    for &c in &seeds {
        // Down the flooded column to its first solid sample (air below flooded air is flooded).
        let mut k = top;
        while k > 0 && flooded[(k - 1) * plane + c] {
            k -= 1;
        }
        let ground = if k == 0 {
            0.0
        } else {
            let (below, here) = (volume.data[(k - 1) * plane + c], volume.data[k * plane + c]);
            // below > 0 ≥ here: the linear root lies in [k − 1, k).
            ((k - 1) as f32 + below / (below - here)) * voxel_size
        };
        body.depth[c] = (level - ground).max(0.0);
        if body.depth[c] == 0.0 {
            // Open water over ground exactly at the level: still water, however shallow.
            body.depth[c] = f32::MIN_POSITIVE;
        }
    }
    Ok(body)
}

/// Chamfer 3-4 distance (in samples, rounded) from each wet sample to the nearest `shore` sample on
/// an `n[0] × n[1]` grid, X fastest: 0 where dry, 1..=255 where wet (255 when no shore sample is in
/// reach). Samples neither wet nor shore pass the distance on.
pub fn shore_distance(wet: &[bool], shore: &[bool], n: [usize; 2]) -> Vec<u8> {
    const FAR: u32 = u32::MAX / 2;
    let [w, h] = n;
    let mut d: Vec<u32> = shore.iter().map(|&s| if s { 0 } else { FAR }).collect();
    let relax = |d: &mut Vec<u32>, at: usize, from: usize, cost: u32| {
        let via = d[from].saturating_add(cost);
        if via < d[at] {
            d[at] = via;
        }
    };
    for y in 0..h {
        for x in 0..w {
            let at = y * w + x;
            if x > 0 {
                relax(&mut d, at, at - 1, 3);
            }
            if y > 0 {
                relax(&mut d, at, at - w, 3);
                if x > 0 {
                    relax(&mut d, at, at - w - 1, 4);
                }
                if x + 1 < w {
                    relax(&mut d, at, at - w + 1, 4);
                }
            }
        }
    }
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let at = y * w + x;
            if x + 1 < w {
                relax(&mut d, at, at + 1, 3);
            }
            if y + 1 < h {
                relax(&mut d, at, at + w, 3);
                if x + 1 < w {
                    relax(&mut d, at, at + w + 1, 4);
                }
                if x > 0 {
                    relax(&mut d, at, at + w - 1, 4);
                }
            }
        }
    }
    d.iter()
        .zip(wet)
        .map(|(&v, &is_wet)| match is_wet {
            false => 0,
            true if v >= FAR => 255,
            true => ((v + 1) / 3).clamp(1, 255) as u8,
        })
        .collect()
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
