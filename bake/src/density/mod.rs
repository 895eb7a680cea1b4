//! The density volume: noise, floor, fade, brushes and floater removal, turned into one dense
//! grid of samples in [-1, 1] (positive = solid, see `grid.rs`).
//!
//! The pipeline ([`generate`]):
//! 1. **Raw density** ([`DensityField`]), per sample at world height `zw = z · voxel_size` over a
//!    column whose floor height is `h` (`h = 0` when `floor.kind = "none"`):
//!    - `n` = the normalised noise (std 0.5 × `noise.amplitude`),
//!    - `t = smoothstep(clamp((zw - h - fade_start) / fade, 0, 1))` (a step at `fade_start` when
//!      `fade = 0`), `n' = n·(1 - t) - t` (fades to air, -1, above `h + fade_start + fade`, so
//!      the top of the world is open),
//!    - with a floor: `d = max(n', clamp((h - zw) / voxel_size, -1, 1))`, i.e. the union with
//!      solid ground (density 1 a voxel or more below the floor, crossing 0 exactly at it),
//!    - clipped to [-1, 1].
//! 2. **Brushes**, in file order ([`apply_brushes`]).
//! 3. **Floater removal** ([`remove_floaters`]), **closed sides** ([`close_sides`]: an air ring
//!    and a solid band below the surface around the world, `floaters.close_sides`), then
//!    **sealed-air filling** ([`fill_sealed_air`]) of all sealed pockets (`fill_sealed_air`) or of
//!    those below `fill_sealed_air_below` samples. Sides come after removal (the band is solid down
//!    to the ground, so it strands nothing) and before filling (caves it seals count as sealed).
//!    Both clean-ups run by blocks: each block labelled alone ([`label_block`], by whoever
//!    [`finish`]'s caller chooses: this machine's threads, or shards through the cache), then a
//!    union-find joins them across faces ([`join_blocks`]), with the same result as the global
//!    flood fills, which stay as the reference the tests compare them with
//!    ([`remove_floaters_by_blocks`], [`fill_sealed_air_by_blocks`] do both steps here).
//!
//! Every stage computes each sample independently or as a set property (connectivity), so the
//! bytes are identical for any rayon thread count.

mod blocks;
mod brushes;
mod fbm;
mod floaters;
mod floor;
mod sides;
mod sines;

use rayon::prelude::*;

pub use blocks::{
    block_count, fill_sealed_air_by_blocks, join_blocks, label_block, label_blocks, remove_floaters_by_blocks, BlockError, BlockLabels, Flood,
};
pub use brushes::{apply_brushes, apply_stroke};
pub use fbm::{Fbm, FbmKind, FbmParams};
pub use floaters::{fill_sealed_air, remove_floaters};
pub use floor::{floor_heights, FloorMap};
pub use sides::{close_sides, side_band};
pub use sines::{sine_normalisation, sine_terms, SineProducts, SineTerm};

use crate::grid::DensityBlock;
use crate::world::{NoiseKind, World};

/// A dense grid of density samples, X fastest (`index = x + nx * (y + ny * z)`).
#[derive(Clone, Debug, PartialEq)]
pub struct DensityVolume {
    /// Samples along X, Y and Z (one per voxel corner of the world grid).
    pub dims: [usize; 3],
    /// `dims[0] * dims[1] * dims[2]` samples in [-1, 1], positive = solid, laid out as [`DensityVolume::index`] says.
    pub data: Vec<f32>,
}

impl DensityVolume {
    /// A volume filled by `f(x, y, z)` (sequentially; meant for tests and small fields).
    pub fn from_fn(dims: [usize; 3], mut f: impl FnMut(usize, usize, usize) -> f32) -> DensityVolume {
        let mut data = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    data.push(f(x, y, z));
                }
            }
        }
        DensityVolume { dims, data }
    }

    /// Index of sample `(x, y, z)` in `data`.
    #[inline]
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    /// The sample at `(x, y, z)`.
    #[inline]
    pub fn get(&self, x: usize, y: usize, z: usize) -> f32 {
        self.data[self.index(x, y, z)]
    }

    /// Reads the samples at `origin + i * stride` for `i` in `0..dims`, with coordinates outside
    /// the volume clamped to its edge (replicated), so a mesher can ask for a halo around any
    /// tile. `stride` must be at least 1.
    pub fn block(&self, origin: [i32; 3], dims: [usize; 3], stride: i32) -> DensityBlock {
        assert!(stride >= 1, "DensityVolume::block: stride must be >= 1, got {stride}");
        let axis = |a: usize| -> Vec<usize> {
            let last = self.dims[a] as i64 - 1;
            (0..dims[a]).map(|i| (i64::from(origin[a]) + i as i64 * i64::from(stride)).clamp(0, last) as usize).collect()
        };
        let (xs, ys, zs) = (axis(0), axis(1), axis(2));
        let [nx, ny, _] = self.dims;
        let mut data = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
        for &z in &zs {
            for &y in &ys {
                let row = &self.data[nx * (y + ny * z)..][..nx];
                data.extend(xs.iter().map(|&x| row[x]));
            }
        }
        DensityBlock { origin, dims, stride, data }
    }
}

/// The 3D noise of a world, ready to evaluate.
#[derive(Clone, Debug)]
enum NoiseSource {
    Sines(SineProducts),
    Fbm(Fbm),
}

/// The raw (pre-brush, pre-floater) density of a world: noise, floor and fade. Building it
/// tabulates the sines and the floor; then rows and single samples are cheap and agree bit for
/// bit.
#[derive(Clone, Debug)]
pub struct DensityField {
    dims: [usize; 3],
    voxel_size: f64,
    noise: NoiseSource,
    floor: Option<FloorMap>,
    /// Per Y row of the floor: lowest and highest height (`[0, 0]` without a floor).
    row_bounds: Vec<[f32; 2]>,
    vs: f32,
    inv_vs: f32,
    fade_start: f32,
    /// `1 / fade`, or `None` for a hard cut (`fade = 0`).
    inv_fade: Option<f32>,
}

impl DensityField {
    /// The raw density of `world`: draws its noise terms or octaves from the world seed and
    /// tabulates its floor heights.
    pub fn new(world: &World) -> DensityField {
        let spec = &world.spec;
        let dims = world.dims();
        let vs = world.voxel_size();
        let noise = match spec.noise.kind {
            NoiseKind::SineProducts => NoiseSource::Sines(SineProducts::new(&spec.noise, spec.seed, dims, vs)),
            kind @ (NoiseKind::Perlin | NoiseKind::Simplex) => {
                let params = FbmParams {
                    kind: if kind == NoiseKind::Perlin { FbmKind::Perlin } else { FbmKind::Simplex },
                    octaves: spec.noise.octaves,
                    frequency: spec.noise.frequency,
                    lacunarity: spec.noise.lacunarity(),
                    gain: spec.noise.gain,
                    amplitude: spec.noise.amplitude,
                };
                NoiseSource::Fbm(Fbm::new(&params, spec.seed, "density.fbm", 3))
            }
        };
        let floor = floor_heights(world);
        let row_bounds = match &floor {
            None => vec![[0.0, 0.0]; dims[1]],
            Some(f) => f
                .heights
                .chunks_exact(f.nx)
                .map(|row| row.iter().fold([f32::INFINITY, f32::NEG_INFINITY], |[lo, hi], &h| [lo.min(h), hi.max(h)]))
                .collect(),
        };
        let fade = spec.floor.fade as f32;
        DensityField {
            dims,
            voxel_size: vs,
            noise,
            floor,
            row_bounds,
            vs: vs as f32,
            inv_vs: (1.0 / vs) as f32,
            fade_start: spec.floor.fade_start as f32,
            inv_fade: (fade > 0.0).then(|| 1.0 / fade),
        }
    }

    /// The floor heights, if the world has a floor.
    pub fn floor(&self) -> Option<&FloorMap> {
        self.floor.as_ref()
    }

    /// Fade weight at height `zw` over floor `h`: 0 below `h + fade_start`, 1 from
    /// `h + fade_start + fade` up, smoothstep between. Non-increasing in `h`.
    #[inline(always)]
    fn fade_weight(&self, zw: f32, h: f32) -> f32 {
        let above = zw - h - self.fade_start;
        let t = match self.inv_fade {
            Some(k) => (above * k).clamp(0.0, 1.0),
            None => f32::from(u8::from(above >= 0.0)),
        };
        t * t * (3.0 - 2.0 * t)
    }

    /// Noise `n` → fade → floor union → clip, at height `zw` over floor `h`.
    #[inline(always)]
    fn combine(&self, n: f32, zw: f32, h: f32) -> f32 {
        let t = self.fade_weight(zw, h);
        let mut d = n * (1.0 - t) - t;
        if self.floor.is_some() {
            d = d.max(((h - zw) * self.inv_vs).clamp(-1.0, 1.0));
        }
        d.clamp(-1.0, 1.0)
    }

    /// Whether row `(y, z)` lies wholly above the fade or wholly a voxel or more below the floor.
    /// There the result does not depend on the noise (it enters as `n · 0` or is outvoted by the
    /// ground), so the noise need not be evaluated; both tests are monotonic in `h`, so checking
    /// the row's extreme floor heights covers every sample of it.
    fn noise_irrelevant(&self, y: usize, zw: f32) -> bool {
        let [lo, hi] = self.row_bounds[y];
        self.fade_weight(zw, hi) >= 1.0 || (self.floor.is_some() && (lo - zw) * self.inv_vs >= 1.0)
    }

    /// Writes row `(y, z)` (length `nx`) of the raw density into `out`.
    pub fn fill_row(&self, y: usize, z: usize, out: &mut [f32]) {
        let zw = z as f32 * self.vs;
        if self.noise_irrelevant(y, zw) {
            out.fill(0.0);
        } else {
            match &self.noise {
                NoiseSource::Sines(s) => s.fill_row(y, z, out),
                NoiseSource::Fbm(f) => {
                    let vs = self.voxel_size;
                    for (x, o) in out.iter_mut().enumerate() {
                        *o = f.get3([x as f64 * vs, y as f64 * vs, z as f64 * vs]) as f32;
                    }
                }
            }
        }
        match &self.floor {
            Some(f) => {
                for (o, &h) in out.iter_mut().zip(&f.heights[y * f.nx..][..f.nx]) {
                    *o = self.combine(*o, zw, h);
                }
            }
            None => out.iter_mut().for_each(|o| *o = self.combine(*o, zw, 0.0)),
        }
    }

    /// The raw density at one sample; equal to the volume's value there before brushes.
    pub fn sample(&self, x: usize, y: usize, z: usize) -> f32 {
        let vs = self.voxel_size;
        let n = match &self.noise {
            NoiseSource::Sines(s) => s.sample(x, y, z),
            NoiseSource::Fbm(f) => f.get3([x as f64 * vs, y as f64 * vs, z as f64 * vs]) as f32,
        };
        let h = self.floor.as_ref().map_or(0.0, |f| f.at(x, y));
        self.combine(n, z as f32 * self.vs, h)
    }

    /// The samples of plane `z` (`nx · ny`, row by row): the volume's `z`-th slab, the piece that
    /// shards split the raw density by.
    pub fn slab(&self, z: usize) -> Vec<f32> {
        let [nx, ny, _] = self.dims;
        let mut data = vec![0f32; nx * ny];
        data.par_chunks_mut(nx.max(1)).with_min_len(8).enumerate().for_each(|(y, row)| self.fill_row(y, z, row));
        data
    }

    /// The whole raw volume, rows in parallel.
    pub fn volume(&self) -> DensityVolume {
        let [nx, ny, nz] = self.dims;
        let mut data = vec![0f32; nx * ny * nz];
        data.par_chunks_mut(nx).with_min_len(8).enumerate().for_each(|(r, row)| self.fill_row(r % ny, r / ny, row));
        DensityVolume { dims: self.dims, data }
    }
}

/// The raw density of `world` at sample `(x, y, z)` (before brushes and floater removal). Builds
/// a [`DensityField`] per call; keep one for many samples.
pub fn sample_raw(world: &World, x: usize, y: usize, z: usize) -> f32 {
    DensityField::new(world).sample(x, y, z)
}

/// What the clean-up stages changed, for logs and bake reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DensityStats {
    /// Solid samples turned to air because they were not connected to the ground.
    pub floater_samples_removed: usize,
    /// Samples changed by closing the world's sides.
    pub side_samples_changed: usize,
    /// Air samples turned solid because they were sealed off from the open top and sides.
    pub sealed_samples_filled: usize,
}

/// The world's final density volume: raw density, brushes, then the `[floaters]` stages.
pub fn generate(world: &World) -> DensityVolume {
    generate_with_stats(world).0
}

/// [`generate`], also reporting what the clean-up stages changed.
pub fn generate_with_stats(world: &World) -> (DensityVolume, DensityStats) {
    let field = DensityField::new(world);
    let vol = field.volume();
    finish(world, &field, vol, |v, flood| Ok::<_, BlockError>(label_blocks(v, flood, CONNECTIVITY_BLOCK)))
        .expect("labels made here are of their own blocks")
}

/// Blocks of the connectivity clean-ups (samples): labelled in parallel and joined by a union-find,
/// with the global fill's result (`blocks.rs`); as fast as the global fill on two cores, and the
/// unit a bounded-memory or sharded density stage works in.
pub const CONNECTIVITY_BLOCK: [usize; 3] = [128, 128, 64];

/// The steps after the raw volume: brushes, then the `[floaters]` stages. `raw` must be
/// `field.volume()` (possibly from a cache). `label(volume, flood)` gives the labels of every
/// block of [`CONNECTIVITY_BLOCK`] samples for a connectivity clean-up ([`label_blocks`] on this
/// machine's threads; shards split the blocks among them).
pub fn finish<E: From<BlockError>>(
    world: &World,
    field: &DensityField,
    raw: DensityVolume,
    label: impl Fn(&DensityVolume, Flood) -> Result<Vec<BlockLabels>, E>,
) -> Result<(DensityVolume, DensityStats), E> {
    let mut vol = raw;
    apply_brushes(&mut vol, &world.brushes, world.voxel_size());
    let mut stats = DensityStats::default();
    let clean_up = |vol: &mut DensityVolume, flood: Flood| -> Result<usize, E> {
        let labels = label(vol, flood)?;
        Ok(join_blocks(vol, flood, CONNECTIVITY_BLOCK, &labels)?)
    };
    if world.spec.floaters.remove {
        let ground = field.floor().map(|f| f.ground_layers(vol.dims[2], world.voxel_size() as f32));
        stats.floater_samples_removed = clean_up(&mut vol, Flood::Floaters { ground_layers: ground.as_deref() })?;
    }
    let f = &world.spec.floaters;
    if f.close_sides {
        let band = side_band(vol.dims, world.spec.volume.tile_size);
        stats.side_samples_changed = close_sides(&mut vol, band);
    }
    if f.fill_sealed_air {
        stats.sealed_samples_filled = clean_up(&mut vol, Flood::SealedAir { smaller_than: None })?;
    } else if f.fill_sealed_air_below > 0 {
        stats.sealed_samples_filled = clean_up(&mut vol, Flood::SealedAir { smaller_than: Some(f.fill_sealed_air_below as usize) })?;
    }
    Ok((vol, stats))
}

#[cfg(test)]
mod tests;
