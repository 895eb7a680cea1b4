//! Grass: the world's unique patches with their LOD chains in one shared pack (`GPAT`), the ground
//! grass stands on as one world-wide map (heights of the ground open to the sky, the share of
//! blades kept, the baked light), and each tile's slice of that map with, in level-0 tiles, the
//! patch instances that cover it (`GRSS`).
//!
//! The map is computed once for the whole world at half-voxel spacing and every tile of every level
//! takes its samples from it (level k every 2^k-th sample), so neighbouring tiles agree on their
//! shared border samples, and the slope test at a sample sees its neighbours across tile borders.
//! The algorithm of the patches is `crate::grass`; the map is `grass_ground.rs`, made in two
//! products: its shape (`grass-shape`, from the density volume, before light transport) and its
//! light (`grass-ground`, after it), each in bands of rows that shards split among them; the
//! instances are `grass_build.rs`.

use std::borrow::Cow;

use kiln_formats::sections::{GrassPatches, GrassTile, IrradianceGrid, PackInfo, PackKind};
use kiln_formats::{PackBuilder, Section, SectionKind};
use rayon::prelude::*;

use super::engine::{KeyCtx, Plan, TileCtx, WorldCtx};
use super::hit_check;
use super::inputs::settings_hash;
use super::lighting::volume_desc;
use super::lod::{TileId, Tiling};
use super::product::{AnyValue, RawSection, TileOutput, TileProduct, WorldProduct, WorldValue};
use super::stage_cache::StageInputs;
use super::volume::Volume;
use super::{writer_version, BakeError};
use crate::grass::{self, PatchSpec};
use crate::scatter::DensityImage;
use crate::world::{GrassSpec, World};

#[path = "grass_build.rs"]
mod build;
#[path = "grass_ground.rs"]
mod ground;

pub use ground::{GroundMap, GroundShape};

/// Level-0 tiles whose light the ground map reads at once.
const LIGHT_CHUNK: usize = 1024;

/// Version of the grass products' algorithms (patches, ground map, keep rule, instances): bump it
/// whenever their output for the same inputs changes.
/// (2: the shared pack's large sections compressed by zstd's multithreaded mode.)
const GRASS_VERSION: u32 = 2;

/// Why a grass product failed.
#[derive(Debug, thiserror::Error)]
pub enum GrassBakeError {
    #[error("grass: {0}")]
    Spec(#[from] grass::GrassError),
    #[error("grass: ambient occlusion of the ground: {0}")]
    Ao(#[from] crate::ao::AoError),
    #[error("grass: {what}: {source}")]
    Format { what: String, source: kiln_formats::FormatError },
}

const GPAT: SectionKind = GrassPatches::KIND;
const GRSS: SectionKind = GrassTile::KIND;

/// A grass product's failure as the bake's error, naming the world and the product.
fn fail(plan: &Plan, product: &'static str) -> impl Fn(GrassBakeError) -> BakeError {
    let world = plan.world_name();
    move |e| BakeError::Product { world: world.clone(), product, source: Box::new(e) }
}

fn format_err(what: &str) -> impl Fn(kiln_formats::FormatError) -> GrassBakeError + '_ {
    move |source| GrassBakeError::Format { what: what.to_owned(), source }
}

/// The world's `[grass]`, if it has one.
pub fn grass_spec(world: &World) -> Option<&GrassSpec> {
    world.spec.grass.as_ref()
}

/// A level-0 tile's side in world units.
fn tile_world_size(world: &World) -> f64 {
    f64::from(world.spec.volume.tile_size) * world.spec.volume.voxel_size
}

/// What `crate::grass` grows each patch from: the world's keys, the patch side rounded to a whole
/// fraction of a tile and the density raised by `1 / cos(max_slope)` (the map's keep undoes it by slope).
pub fn patch_spec(spec: &GrassSpec, tile_world_size: f64) -> PatchSpec {
    let c = spec.color.map(|v| v as f32);
    PatchSpec {
        patch_size: spec.patch_side(tile_world_size) as f32,
        density: spec.patch_density() as f32,
        blade_length: spec.blade_length as f32,
        blade_width: spec.blade_width as f32,
        variation: spec.variation as f32,
        lean: spec.lean as f32,
        bend: spec.bend as f32,
        color: c,
        color_variation: spec.color_variation as f32,
        levels: spec.levels as usize,
        flowers: spec.flowers as f32,
    }
}

/// The shared grass pack of a bake.
pub struct Patches {
    /// The complete pack file (`shared/grass-patches.kpack`); empty when the world has no grass.
    pub pack: Vec<u8>,
    /// xxh3-64 of `pack`: what every `GRSS` section repeats.
    pub hash: u64,
}

impl Patches {
    fn new(pack: Vec<u8>) -> Patches {
        let hash = if pack.is_empty() { 0 } else { xxhash_rust::xxh3::xxh3_64(&pack) };
        Patches { pack, hash }
    }
}

/// The keys that shape the patches.
fn patch_inputs(spec: &GrassSpec, world: &World) -> u128 {
    let p = patch_spec(spec, tile_world_size(world));
    settings_hash(&(
        p.patch_size.to_bits(),
        p.density.to_bits(),
        [p.blade_length, p.blade_width, p.variation, p.lean, p.bend, p.color_variation, p.flowers].map(f32::to_bits),
        p.color.map(f32::to_bits),
        p.levels,
    ))
}

/// `grass-patches`: the unique patches and their chains, as one shared pack.
pub struct GrassPatchesProduct;

impl WorldProduct for GrassPatchesProduct {
    fn name(&self) -> &'static str {
        "grass-patches"
    }
    fn report_stage(&self) -> &'static str {
        "grass"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let Some(spec) = grass_spec(world) else {
            return Ok(StageInputs::new("grass patches", 0));
        };
        Ok(StageInputs::new("grass patches", GRASS_VERSION)
            .with("patches", patch_inputs(spec, world))
            .with("count", settings_hash(&spec.patches))
            .with("seed", settings_hash(&world.spec.seed))
            .with("world name", settings_hash(&world.spec.name)))
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = grass_spec(world) else {
            return Ok((Box::new(Patches::new(Vec::new())), "no grass".into()));
        };
        let err = fail(ctx.plan(), self.name());
        let clock = std::time::Instant::now();
        let p = patch_spec(spec, tile_world_size(world));
        p.validate().map_err(|e| err(e.into()))?;
        let grown: Vec<grass::Patch> = (0..spec.patches).into_par_iter().map(|i| grass::grow_patch(&p, world.spec.seed, i)).collect();
        let grow = clock.elapsed().as_secs_f64();
        let section = build::patches_section(&p, &grown);
        let inputs_hash = self.inputs(ctx)?.key().0 as u64;
        let bytes = section.encode().map_err(|e| err(format_err("encoding the patches")(e)))?;
        let pack = shared_pack(&world.spec.name, self.name(), inputs_hash, bytes).map_err(&err)?;
        let per_level: Vec<usize> = (0..p.levels).map(|k| grown.iter().map(|g| g.levels[k].blades.len()).sum()).collect();
        let detail = format!("{} patches of side {:.3}, blades per level {per_level:?}; cpu: grow {grow:.3}s", grown.len(), p.patch_size);
        Ok((Box::new(Patches::new(pack)), detail))
    }
    fn stored(&self) -> bool {
        true
    }
    fn reads_only_the_world_file(&self) -> bool {
        true
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(value.downcast_ref::<Patches>().map(|p| Cow::Borrowed(&p.pack[..])))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        if bytes.is_empty() {
            return match grass_spec(keys.plan().world) {
                None => Ok(Box::new(Patches::new(Vec::new()))),
                Some(_) => Err("an empty grass pack for a world with grass".into()),
            };
        }
        hit_check::shared_pack(&bytes, &PackKind::Shared { product: self.name().into() }, &keys.plan().world.spec.name, &[GPAT])?;
        Ok(Box::new(Patches::new(bytes)))
    }
    fn writes_shared_pack(&self, keys: &KeyCtx) -> bool {
        grass_spec(keys.plan().world).is_some()
    }
    fn shared_pack<'v>(&self, value: &'v AnyValue) -> Option<&'v [u8]> {
        value.downcast_ref::<Patches>().map(|p| p.pack.as_slice()).filter(|p| !p.is_empty())
    }
}

/// A complete shared pack holding one `GPAT` section.
fn shared_pack(world_name: &str, product: &str, inputs_hash: u64, gpat: Vec<u8>) -> Result<Vec<u8>, GrassBakeError> {
    let err = format_err("assembling the shared pack");
    let mut b = PackBuilder::new(writer_version());
    b.add(&PackInfo { kind: PackKind::Shared { product: product.into() }, world_name: world_name.to_owned(), inputs_hash }).map_err(&err)?;
    b.add_raw(GPAT, GrassPatches::REQUIRED, gpat).map_err(&err)?;
    b.to_bytes().map_err(&err)
}

/// Indices of the level-0 tiles in the bake's tile list.
fn level0_tiles(plan: &Plan) -> Vec<usize> {
    (0..plan.tiles.len()).filter(|&t| plan.tiles[t].level == 0).collect()
}

/// The keys that shape the ground map: the density, `[ao]`, the tiling, the keep keys of
/// `[grass]`, the density image and the water level.
fn shape_inputs(keys: &KeyCtx, spec: &GrassSpec) -> Result<StageInputs, BakeError> {
    let world = keys.plan().world;
    let t = &keys.plan().tiling;
    let image = world.grass_density.as_ref().map(|i| xxhash_rust::xxh3::xxh3_64(&i.png));
    Ok(StageInputs::new("grass shape", GRASS_VERSION)
        .with("density", keys.world_key("volume")?.key().0)
        .with("ao settings", settings_hash(&world.spec.ao))
        .with("tiling", settings_hash(&(t.tile_voxels, t.tiles, t.voxel_size.to_bits())))
        .with("keep", settings_hash(&(spec.max_slope.to_bits(), spec.height_band.map(f64::to_bits), spec.height.map(f64::to_bits), spec.ao_prune)))
        .with("density image", settings_hash(&image))
        .with_some("water level", super::water::water_level(world).map(|l| settings_hash(&l.to_bits()))))
}

/// The samples of the world's ground map.
fn map_samples(plan: &Plan) -> [usize; 2] {
    ground::samples(plan.world.dims())
}

/// `grass-shape`: the ground map without its light (see `grass_ground.rs`), made from the density
/// before light transport (`made_before`), while the bake holds the volume for the trees, and
/// stored, so that the map's step after transport does not read the volume back. Shards split its
/// bands.
pub struct GrassShapeProduct;

impl GrassShapeProduct {
    /// Runs `f` on what the shape is made from: the volume, the world's keys and its density image.
    fn with_inputs<T>(ctx: &WorldCtx, spec: &GrassSpec, f: impl FnOnce(&ground::ShapeInputs) -> Result<T, BakeError>) -> Result<T, BakeError> {
        let world = ctx.plan().world;
        let volume = ctx.world::<Volume>("volume")?;
        let image =
            world.grass_density.as_ref().map(|img| DensityImage::from_texel_centres(img.map.width, img.map.height, |u, v| img.map.sample(u, v)));
        f(&ground::ShapeInputs {
            volume: &volume,
            voxel_size: ctx.plan().tiling.voxel_size,
            spec,
            ao: &world.spec.ao,
            image: image.as_ref(),
            water_level: super::water::water_level(world),
        })
    }
}

impl WorldProduct for GrassShapeProduct {
    fn name(&self) -> &'static str {
        "grass-shape"
    }
    fn report_stage(&self) -> &'static str {
        "grass"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        match grass_spec(keys.plan().world) {
            Some(spec) => shape_inputs(keys, spec),
            None => Ok(StageInputs::new("grass shape", 0)),
        }
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["volume"]
    }
    fn made_before(&self) -> &'static [&'static str] {
        &["transport"]
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let Some(spec) = grass_spec(ctx.plan().world) else {
            return Ok((Box::new(GroundShape::default()), "no grass".into()));
        };
        let (n, keys, err) = (map_samples(ctx.plan()), self.inputs(ctx)?, fail(ctx.plan(), self.name()));
        let bands = Self::with_inputs(ctx, spec, |inputs| {
            ctx.shared_items(
                "grass shape band",
                &keys,
                ground::band_count(n),
                |b| ground::shape_band(inputs, b).map_err(&err),
                |rows| Ok(rows.to_bytes()),
                |b, bytes| ground::ShapeRows::from_bytes(bytes, ground::band_samples(n, b)),
            )
        })?;
        let count = bands.len();
        let shape = ground::join_shape(n, ctx.plan().tiling.voxel_size, bands);
        Ok((Box::new(shape), format!("ground shape {}×{} samples in {count} bands", n[0], n[1])))
    }
    fn stored(&self) -> bool {
        true
    }
    fn splits_its_work(&self) -> bool {
        true
    }
    /// Each shard makes its share of the bands; one joins them and stores the shape for all.
    fn share(&self, ctx: &WorldCtx) -> Result<bool, BakeError> {
        let Some(spec) = grass_spec(ctx.plan().world) else { return Ok(true) };
        let (n, keys, err) = (map_samples(ctx.plan()), self.inputs(ctx)?, fail(ctx.plan(), self.name()));
        Self::with_inputs(ctx, spec, |inputs| {
            let band = |b| ground::shape_band(inputs, b).map_err(&err);
            ctx.share_items("grass shape band", &keys, ground::band_count(n), band, |rows| Ok(rows.to_bytes()))
        })?;
        Ok(true)
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(value.downcast_ref::<GroundShape>().map(|s| Cow::Owned(s.rows.to_bytes())))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        let plan = keys.plan();
        if grass_spec(plan.world).is_none() {
            return Ok(Box::new(GroundShape::default()));
        }
        let n = map_samples(plan);
        let rows = ground::ShapeRows::from_bytes(&bytes, n[0] * n[1])?;
        Ok(Box::new(GroundShape { n, spacing: 0.5 * plan.tiling.voxel_size, rows }))
    }
}

/// `grass-ground`: the world-wide map grass stands on (not stored: the tiles' slices are): the
/// ground's shape with the light of the level-0 tiles' irradiance volume slices. Shards split its
/// bands among them, each storing the ones it computes, and read the others'.
pub struct GrassGroundProduct;

impl WorldProduct for GrassGroundProduct {
    fn name(&self) -> &'static str {
        "grass-ground"
    }
    fn report_stage(&self) -> &'static str {
        "grass"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        if grass_spec(keys.plan().world).is_none() {
            return Ok(StageInputs::new("grass ground", 0));
        }
        let lighting = keys.tile_keys("lighting")?;
        let lit: Vec<u128> = level0_tiles(keys.plan()).into_iter().map(|t| lighting[t].key().0).collect();
        Ok(StageInputs::new("grass ground", GRASS_VERSION)
            .with("shape", keys.world_key("grass-shape")?.key().0)
            .with("level-0 lighting", settings_hash(&lit)))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["grass-shape"]
    }
    /// The light comes from the level-0 tiles' irradiance volume slices (`IRVL`), which are cached,
    /// rather than from light transport, which is not: a change of `[grass]` alone never traces light.
    fn tile_needs(&self, keys: &KeyCtx) -> Vec<(&'static str, Vec<usize>)> {
        match grass_spec(keys.plan().world) {
            Some(_) => vec![("lighting", level0_tiles(keys.plan()))],
            None => Vec::new(),
        }
    }
    /// It reads the tiles' light a chunk at a time.
    fn resolves_its_tiles(&self) -> bool {
        true
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        if grass_spec(ctx.plan().world).is_none() {
            return Ok((Box::new(GroundMap::default()), "no grass".into()));
        }
        let shape = ctx.world::<GroundShape>("grass-shape")?;
        let err = fail(ctx.plan(), self.name());
        // A few thousand tiles' light at a time: a bake that lets go of what its cache holds
        // reads them back later if it needs them.
        let mut light = build::SlicedVolume::new(volume_desc(&ctx.plan().tiling));
        for chunk in level0_tiles(ctx.plan()).chunks(LIGHT_CHUNK) {
            for lighting in ctx.resolved_tile_outputs("lighting", chunk)? {
                let raw = lighting.section(IrradianceGrid::KIND).ok_or_else(|| ctx.plan().internal("a lighting output without IRVL"))?;
                light.add(&IrradianceGrid::decode(raw).map_err(|e| err(format_err("reading the irradiance volume")(e)))?);
            }
            ctx.let_go_of_tile_outputs("lighting", chunk)?;
        }
        let light = light.finish();
        let (n, voxel_size) = (shape.n, ctx.plan().tiling.voxel_size);
        let bands = ctx.shared_items(
            "grass light band",
            &self.inputs(ctx)?,
            ground::band_count(n),
            |b| Ok(ground::light_band(&shape, &light, voxel_size, b)),
            |band| Ok(ground::light_bytes(band)),
            |b, bytes| ground::light_from_bytes(bytes, ground::band_samples(n, b)),
        )?;
        drop(light);
        let (map, detail) = ground::map(&shape, bands);
        Ok((Box::new(map), detail))
    }
}

/// `grass`: the tile's slice of the ground map and, in level-0 tiles, its patch instances (`GRSS`).
pub struct GrassProduct;

impl TileProduct for GrassProduct {
    fn name(&self) -> &'static str {
        "grass"
    }
    fn report_stage(&self) -> &'static str {
        "grass"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let Some(spec) = grass_spec(world) else {
            return Ok(StageInputs::absent("grass"));
        };
        let id = keys.plan().tiles[tile];
        let t = &keys.plan().tiling;
        Ok(StageInputs::new("grass", GRASS_VERSION)
            .with("tile", settings_hash(&(id.level, id.x, id.y, t.tile_voxels, t.voxel_size.to_bits())))
            .with("ground", keys.world_key("grass-ground")?.key().0)
            .with("patches", keys.world_key("grass-patches")?.key().0)
            .with("instances", settings_hash(&(world.spec.seed, spec.patches, spec.patch_size.to_bits(), spec.height.map(f64::to_bits)))))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["grass-patches", "grass-ground"]
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[GRSS]
    }
    fn sections_optional(&self) -> bool {
        true
    }
    fn bake(&self, _tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let world = ctx.plan().world;
        let patches = ctx.world::<Patches>("grass-patches")?;
        let Some(spec) = grass_spec(world).filter(|_| !patches.pack.is_empty()) else {
            return Ok(TileOutput { sections: Vec::new(), summary: None });
        };
        let map = ctx.world::<GroundMap>("grass-ground")?;
        let plan = ctx.plan();
        let section = build::tile_section(&map, &plan.tiling, ctx.id(), spec, world.spec.seed, patches.hash);
        let bytes = section.encode().map_err(|e| fail(plan, self.name())(format_err("encoding the tile's grass")(e)))?;
        Ok(TileOutput { sections: vec![RawSection { kind: GRSS, required: GrassTile::REQUIRED, bytes }], summary: None })
    }
    fn validate(&self, tile: usize, output: &TileOutput, keys: &KeyCtx) -> Result<(), String> {
        match output.section(GRSS) {
            Some(b) => {
                let g = GrassTile::decode(b).map_err(|e| e.to_string())?;
                let want = 2 * keys.plan().tiling.tile_voxels + 1;
                if g.size != want {
                    return Err(format!("a {0}×{0} grass map, not {want}×{want}", g.size));
                }
                if keys.plan().tiles[tile].level > 0 && !g.instances.is_empty() {
                    return Err("patch instances in a tile above level 0".into());
                }
                Ok(())
            }
            None if output.sections.is_empty() => Ok(()),
            None => Err("sections other than GRSS".into()),
        }
    }
}

#[cfg(test)]
#[path = "grass_tests.rs"]
mod tests;
