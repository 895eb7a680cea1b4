//! Water (issue #19): where the water is (`water-body`: the flood fill of the density volume below
//! the level, `crate::water::body`), the looping wave frames and their caustics in one shared pack
//! (`water-waves`: `WAVE`, `crate::water`'s spectrum), and each tile's water surface over its
//! footprint (`water`: `WTIL`, depth and shore distance).
//!
//! Every tile of every level takes its samples from one world-wide grid per level (level k every
//! 2^k-th sample column), so neighbouring tiles agree on their shared border samples; the work is
//! in `water_build.rs`. A world without `[water]` has absent keys for the tile product: its packs and
//! keys are those of a bake without water products.

use std::borrow::Cow;

use kiln_formats::sections::{PackKind, WaterTile, WaterWaves};
use kiln_formats::{Section, SectionKind};

use super::engine::{KeyCtx, Plan, TileCtx, WorldCtx};
use super::hit_check;
use super::inputs::settings_hash;
use super::product::{AnyValue, RawSection, TileOutput, TileProduct, WorldProduct, WorldValue};
use super::stage_cache::StageInputs;
use super::volume::Volume;
use super::BakeError;
use crate::lighting::WaterMedium;
use crate::water::body::{self, ColumnGrid, WaterBody};
use crate::world::{WaterSpec, World};

#[path = "water_build.rs"]
mod build;

use build::{caustic_spec, tile_section, wave_spec, waves_section};
#[cfg(test)]
use build::{depth_step, sun_direction};

/// Version of the water products' algorithms (flood fill, depth and shore grids, wave conversion,
/// tile maps): bump it whenever their output for the same inputs changes.
/// (3: the shared pack's large sections compressed by zstd's multithreaded mode.)
const WATER_VERSION: u32 = 3;

/// Why a water product failed.
#[derive(Debug, thiserror::Error)]
pub enum WaterBakeError {
    #[error("water: {0}")]
    Body(#[from] body::WaterBodyError),
    #[error("{0}")]
    Waves(#[from] crate::water::WaterError),
    #[error("water: {what}: {source}")]
    Format { what: String, source: kiln_formats::FormatError },
}

const WAVE: SectionKind = WaterWaves::KIND;
const WTIL: SectionKind = WaterTile::KIND;
/// Bytes of a `WTIL` before its maps: waves hash, level, absorption, origin, spacing, depth step, size.
const WTIL_HEADER: u64 = 8 + 4 * 8 + 4;

/// A water product's failure as the bake's error, naming the world and the product.
fn fail(plan: &Plan, product: &'static str) -> impl Fn(WaterBakeError) -> BakeError {
    let world = plan.world_name();
    move |e| BakeError::Product { world: world.clone(), product, source: Box::new(e) }
}

fn format_err(what: &str) -> impl Fn(kiln_formats::FormatError) -> WaterBakeError + '_ {
    move |source| WaterBakeError::Format { what: what.to_owned(), source }
}

/// The world's `[water]`, if it has one.
pub fn water_spec(world: &World) -> Option<&WaterSpec> {
    world.spec.water.as_ref()
}

/// The water level the trees and the grass keep out of (`None` in a world without water): ground
/// open to the sky below the level is flooded (its column's air at the top water layer is a seed of
/// the fill), so a band that starts at the level keeps instances out of the water.
pub fn water_level(world: &World) -> Option<f32> {
    water_spec(world).map(|w| w.level as f32)
}

/// The water of a bake: the flood fill and, per LOD level, the depth and shore grid its tiles sample.
#[derive(Default)]
pub struct Body {
    /// The flood fill; `None` in a world without water.
    pub body: Option<WaterBody>,
    /// Per level `k`, the columns every `2^k` samples.
    pub grids: Vec<ColumnGrid>,
}

/// `water-body`: the flood fill of the density volume below the level (not stored: its tiles' maps are).
pub struct WaterBodyProduct;

impl WorldProduct for WaterBodyProduct {
    fn name(&self) -> &'static str {
        "water-body"
    }
    fn report_stage(&self) -> &'static str {
        "water"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let Some(spec) = water_spec(world) else {
            return Ok(StageInputs::new("water body", 0));
        };
        let t = &keys.plan().tiling;
        Ok(StageInputs::new("water body", WATER_VERSION)
            .with("density", keys.world_key("volume")?.key().0)
            .with("level", settings_hash(&spec.level.to_bits()))
            .with("closed sides", settings_hash(&world.spec.floaters.close_sides))
            .with("tiling", settings_hash(&(t.tile_voxels, t.tiles, t.voxel_size.to_bits()))))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["volume"]
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let plan = ctx.plan();
        let Some(spec) = water_spec(plan.world) else {
            return Ok((Box::new(Body::default()), "no water".into()));
        };
        let volume = ctx.world::<Volume>("volume")?;
        let clock = std::time::Instant::now();
        let closed = plan.world.spec.floaters.close_sides;
        let b = body::flood(&volume.density, plan.tiling.voxel_size, spec.level as f32, closed).map_err(|e| fail(plan, self.name())(e.into()))?;
        let t_fill = clock.elapsed().as_secs_f64();
        let grids: Vec<ColumnGrid> = (0..plan.tiling.levels()).map(|k| b.grid(1 << k)).collect();
        let wet = b.depth.iter().filter(|&&d| d > 0.0).count();
        let detail = format!(
            "{} samples flooded below level {}, {:.1} % of columns open water; cpu: fill {t_fill:.2}s, grids {:.2}s",
            b.flooded_count(),
            spec.level,
            100.0 * wet as f64 / b.depth.len().max(1) as f64,
            clock.elapsed().as_secs_f64() - t_fill
        );
        Ok((Box::new(Body { body: Some(b), grids }), detail))
    }
    /// The flood fill's key with the water's optics: light transport reruns when any changes.
    fn light_medium_key(&self, keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
        let Some(spec) = water_spec(keys.plan().world) else {
            return Ok(None);
        };
        let optics = (spec.absorption_per_unit().map(f64::to_bits), spec.ior.to_bits());
        Ok(Some(settings_hash(&(self.inputs(keys)?.key().0, optics))))
    }
    /// The flooded samples as light transport's medium, with the water's absorption and index.
    fn light_medium(&self, ctx: &WorldCtx) -> Result<Option<WaterMedium>, BakeError> {
        let Some(spec) = water_spec(ctx.plan().world) else {
            return Ok(None);
        };
        let Some(b) = &ctx.world::<Body>(self.name())?.body else {
            return Ok(None);
        };
        Ok(Some(WaterMedium {
            level: b.level,
            absorption: spec.absorption_per_unit().map(|a| a as f32),
            ior: spec.ior as f32,
            voxel_size: b.voxel_size,
            dims: b.dims,
            flooded: b.flooded.clone(),
        }))
    }
}

/// The shared water pack of a bake.
pub struct Waves {
    /// The complete pack file (`shared/water-waves.kpack`); empty when the world has no water.
    pub pack: Vec<u8>,
    /// xxh3-64 of `pack`: what every `WTIL` repeats.
    pub hash: u64,
}

impl Waves {
    fn new(pack: Vec<u8>) -> Waves {
        let hash = if pack.is_empty() { 0 } else { xxhash_rust::xxh3::xxh3_64(&pack) };
        Waves { pack, hash }
    }
}

/// `water-waves`: the looping wave frames and caustics, as one shared pack (`WAVE`).
pub struct WaterWavesProduct;

impl WorldProduct for WaterWavesProduct {
    fn name(&self) -> &'static str {
        "water-waves"
    }
    fn report_stage(&self) -> &'static str {
        "water"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let Some(spec) = water_spec(world) else {
            return Ok(StageInputs::new("water waves", 0));
        };
        let waves = wave_spec(spec, world.spec.seed);
        let caustics = caustic_spec(spec, &world.spec.lighting);
        Ok(StageInputs::new("water waves", WATER_VERSION)
            .with("waves", settings_hash(&waves))
            .with("caustics", settings_hash(&caustics))
            .with("world name", settings_hash(&world.spec.name)))
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = water_spec(world) else {
            return Ok((Box::new(Waves::new(Vec::new())), "no water".into()));
        };
        let err = fail(ctx.plan(), self.name());
        let clock = std::time::Instant::now();
        let frames = crate::water::bake_waves(&wave_spec(spec, world.spec.seed)).map_err(|e| err(e.into()))?;
        let t_waves = clock.elapsed().as_secs_f64();
        let clock = std::time::Instant::now();
        let cast = caustic_spec(spec, &world.spec.lighting);
        // Each frame's caustics is an item shards split among them (most of the product's work).
        let bake = crate::water::CausticBake::new(&frames, &cast).map_err(|e| err(e.into()))?;
        let len = bake.frame_len();
        let maps = ctx.shared_items(
            "caustic frame",
            &self.inputs(ctx)?,
            frames.spec.frames as usize,
            |f| Ok(bake.frame(f)),
            |m| Ok(caustic_bytes(m)),
            |_, b| match b.len() == 4 * len {
                true => Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()),
                false => Err(format!("{} bytes, expected {}", b.len(), 4 * len)),
            },
        )?;
        let caustics = bake.finish(maps);
        let t_caustics = clock.elapsed().as_secs_f64();
        // Each form is dropped as soon as the next exists: the f32 frames are the largest, and the
        // pre-bake estimate (`budget::water`) counts at most two forms alive at once.
        let section = waves_section(&frames, &cast, &caustics);
        drop((frames, caustics));
        let detail = format!(
            "{} frames of {}² texels, caustic depths {:?}; cpu: waves {t_waves:.2}s, caustics {t_caustics:.2}s",
            section.frames, section.resolution, section.depths
        );
        let bytes = section.encode().map_err(|e| err(format_err("encoding the waves")(e)))?;
        drop(section);
        let inputs_hash = self.inputs(ctx)?.key().0 as u64;
        let pack = build::shared_pack(&world.spec.name, self.name(), inputs_hash, bytes).map_err(&err)?;
        Ok((Box::new(Waves::new(pack)), detail))
    }
    fn stored(&self) -> bool {
        true
    }
    fn splits_its_work(&self) -> bool {
        true
    }
    fn share(&self, ctx: &WorldCtx) -> Result<bool, BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = water_spec(world) else { return Ok(true) };
        let err = fail(ctx.plan(), self.name());
        let frames = crate::water::bake_waves(&wave_spec(spec, world.spec.seed)).map_err(|e| err(e.into()))?;
        let bake = crate::water::CausticBake::new(&frames, &caustic_spec(spec, &world.spec.lighting)).map_err(|e| err(e.into()))?;
        ctx.share_items("caustic frame", &self.inputs(ctx)?, frames.spec.frames as usize, |f| Ok(bake.frame(f)), |m| Ok(caustic_bytes(m)))?;
        Ok(true)
    }
    fn reads_only_the_world_file(&self) -> bool {
        true
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(value.downcast_ref::<Waves>().map(|w| Cow::Borrowed(&w.pack[..])))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        if bytes.is_empty() {
            return match water_spec(keys.plan().world) {
                None => Ok(Box::new(Waves::new(Vec::new()))),
                Some(_) => Err("an empty water pack for a world with water".into()),
            };
        }
        hit_check::shared_pack(&bytes, &PackKind::Shared { product: self.name().into() }, &keys.plan().world.spec.name, &[WAVE])?;
        Ok(Box::new(Waves::new(bytes)))
    }
    fn writes_shared_pack(&self, keys: &KeyCtx) -> bool {
        water_spec(keys.plan().world).is_some()
    }
    fn shared_pack<'v>(&self, value: &'v AnyValue) -> Option<&'v [u8]> {
        value.downcast_ref::<Waves>().map(|w| w.pack.as_slice()).filter(|p| !p.is_empty())
    }
}

/// `water`: the tile's water depth and shore distance over its footprint (`WTIL`).
pub struct WaterProduct;

impl TileProduct for WaterProduct {
    fn name(&self) -> &'static str {
        "water"
    }
    fn report_stage(&self) -> &'static str {
        "water"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let Some(spec) = water_spec(world) else {
            return Ok(StageInputs::absent("water"));
        };
        let id = keys.plan().tiles[tile];
        let t = &keys.plan().tiling;
        Ok(StageInputs::new("water", WATER_VERSION)
            .with("tile", settings_hash(&(id.level, id.x, id.y, t.tile_voxels, t.voxel_size.to_bits())))
            .with("body", keys.world_key("water-body")?.key().0)
            .with("waves", keys.world_key("water-waves")?.key().0)
            .with("absorption", settings_hash(&spec.absorption_per_unit().map(f64::to_bits))))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["water-body", "water-waves"]
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[WTIL]
    }
    fn sections_optional(&self) -> bool {
        true
    }
    fn check_packed(&self, _vertices: u64, raw_len: &dyn Fn(SectionKind) -> u64) -> Result<(), String> {
        let len = raw_len(WTIL);
        if len == 0 {
            return Ok(());
        }
        let cells = len.saturating_sub(WTIL_HEADER) / 3;
        let side = (cells as f64).sqrt().round() as u64;
        if len < WTIL_HEADER || !(len - WTIL_HEADER).is_multiple_of(3) || side * side != cells {
            return Err(format!("a {len}-byte WTIL is not a square water map"));
        }
        Ok(())
    }
    fn bake(&self, _tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let plan = ctx.plan();
        let waves = ctx.world::<Waves>("water-waves")?;
        let water = ctx.world::<Body>("water-body")?;
        let (Some(spec), Some(body)) = (water_spec(plan.world), water.body.as_ref()) else {
            return Ok(TileOutput { sections: Vec::new(), summary: None });
        };
        let id = ctx.id();
        let grid = water.grids.get(id.level as usize).ok_or_else(|| plan.internal(format_args!("no water grid for level {}", id.level)))?;
        let section = tile_section(body, grid, &plan.tiling, id, spec, waves.hash);
        let bytes = section.encode().map_err(|e| fail(plan, self.name())(format_err("encoding the tile's water")(e)))?;
        Ok(TileOutput { sections: vec![RawSection { kind: WTIL, required: WaterTile::REQUIRED, bytes }], summary: None })
    }
    fn validate(&self, tile: usize, output: &TileOutput, keys: &KeyCtx) -> Result<(), String> {
        match output.section(WTIL) {
            Some(b) => {
                let w = WaterTile::decode(b).map_err(|e| e.to_string())?;
                let t = &keys.plan().tiling;
                let want = t.tile_voxels + 1;
                if w.size != want {
                    return Err(format!("a {0}×{0} water map, not {want}×{want}", w.size));
                }
                let spacing = t.voxel_size * (1u32 << keys.plan().tiles[tile].level) as f32;
                if w.spacing != spacing {
                    return Err(format!("water samples every {}, not {spacing}", w.spacing));
                }
                Ok(())
            }
            None if output.sections.is_empty() => Ok(()),
            None => Err("sections other than WTIL".into()),
        }
    }
}

/// A caustic frame's cache form: its floats, little-endian.
fn caustic_bytes(map: &[f32]) -> Vec<u8> {
    map.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[cfg(test)]
#[path = "water_tests.rs"]
mod tests;
