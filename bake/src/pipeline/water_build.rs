//! The water products' work, apart from their registry plumbing: the world keys as the wave bake's
//! inputs, the frames and caustics as a `WAVE` section (binary16, round to nearest even), and a
//! tile's `WTIL` from its level's column grid.
//!
//! **A tile's map**: `tile_voxels + 1` samples per side, every `2^level` voxels from the tile's min
//! corner, border samples included: sample `(i, j)` of tile `(x, y)` at level `k` is column
//! `(x·tile_voxels + i, y·tile_voxels + j)` of level k's grid, which the neighbour sharing that
//! border reads too. Depth is stored in steps of [`depth_step`]; the shore distance is the grid's
//! (in this level's samples).

use kiln_formats::sections::{PackInfo, PackKind, WaterTile, WaterWaves};
use kiln_formats::{PackBuilder, Section};
use rayon::prelude::*;

use super::{format_err, WaterBakeError};
use crate::lighting::LightingSpec;
use crate::pipeline::lod::TileId;
use crate::pipeline::lod::Tiling;
use crate::water::body::{ColumnGrid, WaterBody};
use crate::water::{CausticDepths, CausticSpec, Caustics, Spectrum, WaveFrames, WaveSpec};
use crate::world::{CausticDepthsSpec, SpectrumKind, WaterSpec};

/// The sun the caustics are cast by when the world's sun is down or grazing (below 0.1 of the way
/// up): high in the south-east, so the caustics still show the waves.
pub const FALLBACK_SUN: [f32; 3] = [0.3, 0.2, 0.932_737_9];

/// The wave bake's inputs from `[water]` and the world seed.
pub fn wave_spec(spec: &WaterSpec, seed: u64) -> WaveSpec {
    let w = &spec.waves;
    WaveSpec {
        spectrum: match w.spectrum {
            SpectrumKind::Jonswap => Spectrum::Jonswap,
            SpectrumKind::Phillips => Spectrum::Phillips,
        },
        wind_speed: w.wind_speed as f32,
        wind_direction: w.wind_direction as f32,
        fetch: w.fetch as f32,
        choppiness: w.choppiness as f32,
        amplitude: w.amplitude as f32,
        metres_per_unit: spec.metres_per_unit as f32,
        patch_size: w.patch_size as f32,
        period: w.period as f32,
        frames: w.frames,
        resolution: w.resolution,
        seed,
    }
}

/// Toward the sun at the world's time of day, or [`FALLBACK_SUN`] when it is down or grazing.
pub fn sun_direction(lighting: &LightingSpec) -> [f32; 3] {
    match lighting.sun.direction_at(lighting.time_of_day) {
        Some(d) if d[2] >= 0.1 => d,
        _ => FALLBACK_SUN,
    }
}

/// The caustic bake's inputs: the world's sun, the water's index and the receiving planes.
pub fn caustic_spec(spec: &WaterSpec, lighting: &LightingSpec) -> CausticSpec {
    CausticSpec {
        sun_direction: sun_direction(lighting),
        ior: spec.ior as f32,
        depths: match &spec.caustics.depths {
            CausticDepthsSpec::Count(n) => CausticDepths::Auto(*n as usize),
            CausticDepthsSpec::List(d) => CausticDepths::Fixed(d.iter().map(|&v| v as f32).collect()),
        },
    }
}

fn half(v: f32) -> u16 {
    half::f16::from_f32(v).to_bits()
}

/// The frames and the caustics cast by `cast` as a `WAVE` section: every f32 to binary16 (round to
/// nearest even).
pub fn waves_section(frames: &WaveFrames, cast: &CausticSpec, caustics: &Caustics) -> WaterWaves {
    let s = &frames.spec;
    WaterWaves {
        patch_size: s.patch_size,
        period: s.period,
        resolution: s.resolution,
        frames: s.frames,
        sun_direction: cast.sun_direction,
        ior: cast.ior,
        flat_transmittance: caustics.flat_transmittance,
        depths: caustics.depths.clone(),
        // Tens of millions of conversions: in parallel, collected in order.
        surface: frames.surface.par_iter().map(|t| t.map(half)).collect(),
        normals: frames.normals.par_iter().map(|n| [half(n[0]), half(n[1])]).collect(),
        caustics: caustics.maps.par_iter().map(|&v| half(v)).collect(),
    }
}

/// A complete shared pack holding one `WAVE` section.
pub fn shared_pack(world_name: &str, product: &str, inputs_hash: u64, wave: Vec<u8>) -> Result<Vec<u8>, WaterBakeError> {
    let err = format_err("assembling the shared pack");
    let mut b = PackBuilder::new(super::super::writer_version());
    b.add(&PackInfo { kind: PackKind::Shared { product: product.into() }, world_name: world_name.to_owned(), inputs_hash }).map_err(&err)?;
    b.add_raw(WaterWaves::KIND, WaterWaves::REQUIRED, wave).map_err(&err)?;
    b.to_bytes().map_err(&err)
}

/// World units per depth step of a world whose water stands at `level` over voxels of `voxel_size`:
/// a 256th of a voxel, coarser only where the deepest possible water (the level, as the volume
/// starts at z = 0) would not fit 65535 steps.
pub fn depth_step(level: f32, voxel_size: f32) -> f32 {
    (voxel_size / 256.0).max(level / 65535.0)
}

/// The `WTIL` of tile `id` (see the module docs).
pub fn tile_section(body: &WaterBody, grid: &ColumnGrid, tiling: &Tiling, id: TileId, spec: &WaterSpec, waves_hash: u64) -> WaterTile {
    let tv = tiling.tile_voxels as usize;
    let size = tv + 1;
    let base = [id.x as usize * tv, id.y as usize * tv];
    let step = depth_step(body.level, body.voxel_size);
    let mut depth = Vec::with_capacity(size * size);
    let mut shore = Vec::with_capacity(size * size);
    for j in 0..size {
        let row = (base[1] + j).min(grid.n[1] - 1) * grid.n[0];
        for i in 0..size {
            let at = row + (base[0] + i).min(grid.n[0] - 1);
            let d = grid.depth[at];
            depth.push(if d > 0.0 { (d / step).round().clamp(1.0, 65535.0) as u16 } else { 0 });
            shore.push(grid.shore[at]);
        }
    }
    let spacing = tiling.voxel_size * grid.stride as f32;
    WaterTile {
        waves_hash,
        level: body.level,
        absorption: spec.absorption_per_unit().map(|a| a as f32),
        origin: [base[0] as f32 * spacing, base[1] as f32 * spacing],
        spacing,
        size: size as u32,
        depth_step: step,
        depth,
        shore,
    }
}
