//! Trees: the world's prototypes grown and self-shadowed (`tree-shapes`, what light transport
//! sees of the trees), their placement on the ground as a world product, each instance's baked
//! lighting after light transport (`TILT`), and the prototypes captured as impostors in one shared
//! pack (`tree-prototypes`) with each tile's instances naming it (`TINS`). The impostors, most of
//! the trees' work, come after light transport in the registry, so that a bake captures them on
//! the cores transport leaves idle instead of before it.
//!
//! Placement is computed once over the whole world and each tile keeps the trees whose trunk base
//! lies in its half-open footprint, so a tile's trees do not depend on the tiling and a tree near a
//! border belongs to exactly one tile of each level.

use std::borrow::Cow;
use std::sync::OnceLock;

use kiln_formats::sections::{PackInfo, PackKind, TreeCards, TreeImpostors, TreeInstance, TreeInstances, TreeLighting, TreePrototypes, TreeTextures};
use kiln_formats::{PackBuilder, Section, SectionKind};
use rayon::prelude::*;

use super::engine::{KeyCtx, Plan, TileCtx, WorldCtx};
use super::hit_check;
use super::inputs::settings_hash;
use super::lighting::WorldLighting;
use super::product::{AnyValue, OccluderMesh, RawSection, TileOutput, TileProduct, WorldProduct, WorldValue};
use super::stage_cache::StageInputs;
use super::volume::Volume;
use super::{writer_version, BakeError};
use crate::scatter::{self, ScatterRule};
use crate::world::{SpeciesSpec, TreesSpec, World};

#[path = "trees_build.rs"]
mod build;

/// Version of the trees products' algorithms (generation, impostors, placement, tile selection,
/// instance lighting): bump it whenever their output for the same inputs changes.
/// (4: the shared pack's large sections compressed by zstd's multithreaded mode.)
const TREES_VERSION: u32 = 4;

/// Why a trees product failed.
#[derive(Debug, thiserror::Error)]
pub enum TreesError {
    #[error("trees: placement: {0}")]
    Scatter(#[from] scatter::ScatterError),
    #[error("trees: prototype {index} ({species}): impostor: {reason}")]
    Impostor { index: usize, species: String, reason: String },
    #[error("trees: {what}: {source}")]
    Format { what: String, source: kiln_formats::FormatError },
}

const TPRO: SectionKind = TreePrototypes::KIND;
const TTEX: SectionKind = TreeTextures::KIND;
const TIMP: SectionKind = TreeImpostors::KIND;
const TCRD: SectionKind = TreeCards::KIND;

/// A trees product's failure as the bake's error, naming the world and the product.
fn fail(plan: &Plan, product: &'static str) -> impl Fn(TreesError) -> BakeError {
    let world = plan.world_name();
    move |e| BakeError::Product { world: world.clone(), product, source: Box::new(e) }
}

/// A format error while `what`, as a [`TreesError`].
fn format_err(what: &str) -> impl Fn(kiln_formats::FormatError) -> TreesError + '_ {
    move |source| TreesError::Format { what: what.to_owned(), source }
}

/// The world's prototypes grown (`tree-shapes`), with their light proxies made on first use.
pub struct TreeShapes {
    pub shapes: build::Shapes,
    /// Per prototype: its height and crown radius (object space), what instance lighting reads.
    pub sizes: Vec<(f32, f32)>,
    /// Per prototype: what light transport sees of it; made when transport first asks, so that a
    /// bake whose transport is cached builds none.
    proxies: OnceLock<Vec<build::Proxy>>,
}

impl TreeShapes {
    fn new(shapes: build::Shapes) -> TreeShapes {
        TreeShapes { sizes: shapes.sizes(), shapes, proxies: OnceLock::new() }
    }

    /// Each prototype's light proxy.
    pub fn proxies(&self) -> &[build::Proxy] {
        self.proxies.get_or_init(|| build::proxies(&self.shapes.prototypes, &self.shapes.textures))
    }
}

/// The shared trees pack of a bake (`tree-prototypes`).
pub struct Prototypes {
    /// The complete pack file (`shared/tree-prototypes.kpack`); empty when the world has no trees.
    pub pack: Vec<u8>,
    /// xxh3-64 of `pack`: what every `TINS` section repeats.
    pub hash: u64,
}

impl Prototypes {
    fn new(pack: Vec<u8>) -> Prototypes {
        let hash = if pack.is_empty() { 0 } else { xxhash_rust::xxh3::xxh3_64(&pack) };
        Prototypes { pack, hash }
    }
}

fn trees_spec(world: &World) -> Option<&TreesSpec> {
    world.spec.trees.as_ref().filter(|t| !t.species.is_empty())
}

/// Each species' preset, count, heights and shape: what the prototypes grow from.
fn species_shapes(spec: &TreesSpec) -> Vec<(&String, u32, [u64; 2], &crate::world::ShapeOverrides)> {
    spec.species.iter().map(|s| (&s.preset, s.prototypes, s.height.map(f64::to_bits), &s.shape)).collect()
}

/// What the impostors are made from: the shapes and the impostor settings.
fn prototype_inputs(spec: &TreesSpec) -> u128 {
    settings_hash(&(species_shapes(spec), &spec.impostor))
}

/// `tree-shapes`: every species' prototypes grown (meshes, LODs, self-AO) and the species'
/// textures: what light transport and instance lighting read, apart from the impostors so that
/// these are captured while the light is traced.
pub struct TreeShapesProduct;

impl WorldProduct for TreeShapesProduct {
    fn name(&self) -> &'static str {
        "tree-shapes"
    }
    fn report_stage(&self) -> &'static str {
        "trees"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        Ok(StageInputs::new("tree shapes", TREES_VERSION)
            .with("species", trees_spec(world).map_or(0, |t| settings_hash(&species_shapes(t))))
            .with("seed", settings_hash(&world.spec.seed)))
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = trees_spec(world) else {
            return Ok((Box::new(TreeShapes::new(build::Shapes::none())), "no trees".into()));
        };
        let err = fail(ctx.plan(), self.name());
        // Each prototype is an item shards split among them.
        let growing = build::Growing::new(spec, world.spec.seed);
        let species = growing.species();
        let grown = ctx.shared_items(
            "tree shape",
            &self.inputs(ctx)?,
            growing.count(),
            |i| Ok(growing.grow(i)),
            |g| g.to_bytes(&species).map_err(&err),
            |_, b| build::Shape::from_bytes(b, &species),
        )?;
        let shapes = growing.shapes(grown);
        let detail = format!(
            "{} prototypes of {} species, {} triangles; cpu: grow {:.2}s",
            shapes.prototypes.prototypes.len(),
            spec.species.len(),
            shapes.triangles(),
            shapes.cpu
        );
        Ok((Box::new(TreeShapes::new(shapes)), detail))
    }
    fn stored(&self) -> bool {
        true
    }
    fn splits_its_work(&self) -> bool {
        true
    }
    fn reads_only_the_world_file(&self) -> bool {
        true
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        value.downcast_ref::<TreeShapes>().map(|s| s.shapes.to_bytes().map(Cow::Owned).map_err(|e| e.to_string())).transpose()
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        Ok(Box::new(TreeShapes::new(build::Shapes::from_bytes(&bytes, &trees_spec(keys.plan().world).map_or_else(Vec::new, build::species_names))?)))
    }
}

/// `tree-prototypes`: the prototypes with their impostor atlases, as one shared pack.
pub struct TreePrototypesProduct;

impl WorldProduct for TreePrototypesProduct {
    fn name(&self) -> &'static str {
        "tree-prototypes"
    }
    fn report_stage(&self) -> &'static str {
        "trees"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let shape = trees_spec(world).map_or(0, prototype_inputs);
        Ok(StageInputs::new("tree prototypes", TREES_VERSION)
            .with("species and impostors", shape)
            .with("seed", settings_hash(&world.spec.seed))
            .with("world name", settings_hash(&world.spec.name)))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["tree-shapes"]
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = trees_spec(world) else {
            return Ok((Box::new(Prototypes::new(Vec::new())), "no trees".into()));
        };
        let err = fail(ctx.plan(), self.name());
        let shapes = ctx.world::<TreeShapes>("tree-shapes")?;
        // The atlases are, with light transport, where a bake needs the most memory: what the
        // cache can give back (the density volume, the tiles' meshes) is let go meanwhile.
        ctx.release_stored_values();
        // Each prototype's impostor is an item shards split among them (most of the trees' work).
        let growing = build::Growing::new(spec, world.spec.seed);
        let grown = &shapes.shapes;
        let captures = ctx.shared_items(
            "tree impostor",
            &self.inputs(ctx)?,
            growing.count(),
            |i| growing.capture(i, grown).map_err(&err),
            |c| c.to_bytes().map_err(&err),
            |_, b| build::Capture::from_bytes(b),
        )?;
        let clock = std::time::Instant::now();
        let made = format!("{} impostors; cpu: capture {:.2}s", captures.len(), captures.iter().map(|c| c.cpu).sum::<f64>());
        let inputs_hash = self.inputs(ctx)?.key().0 as u64;
        let pack = shared_pack(&world.spec.name, inputs_hash, grown, captures, spec.impostor.cards).map_err(&err)?;
        let detail = format!("{made}, pack {:.2}s", clock.elapsed().as_secs_f64());
        Ok((Box::new(Prototypes::new(pack)), detail))
    }
    fn stored(&self) -> bool {
        true
    }
    fn splits_its_work(&self) -> bool {
        true
    }
    fn share(&self, ctx: &WorldCtx) -> Result<bool, BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = trees_spec(world) else { return Ok(true) };
        let err = fail(ctx.plan(), self.name());
        let shapes = ctx.world::<TreeShapes>("tree-shapes")?;
        let (growing, grown) = (build::Growing::new(spec, world.spec.seed), &shapes.shapes);
        ctx.share_items(
            "tree impostor",
            &self.inputs(ctx)?,
            growing.count(),
            |i| growing.capture(i, grown).map_err(&err),
            |c| c.to_bytes().map_err(&err),
        )?;
        Ok(true)
    }
    fn reads_only_the_world_file(&self) -> bool {
        true
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(value.downcast_ref::<Prototypes>().map(|p| Cow::Borrowed(&p.pack[..])))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        if bytes.is_empty() {
            return match trees_spec(keys.plan().world) {
                None => Ok(Box::new(Prototypes::new(bytes))),
                Some(_) => Err("an empty trees pack for a world with trees".into()),
            };
        }
        let cards = trees_spec(keys.plan().world).is_some_and(|t| t.impostor.cards);
        let kinds: &[SectionKind] = if cards { &[TPRO, TTEX, TIMP, TCRD] } else { &[TPRO, TTEX, TIMP] };
        hit_check::shared_pack(&bytes, &PackKind::Shared { product: self.name().into() }, &keys.plan().world.spec.name, kinds)?;
        Ok(Box::new(Prototypes::new(bytes)))
    }
    fn writes_shared_pack(&self, keys: &KeyCtx) -> bool {
        trees_spec(keys.plan().world).is_some()
    }
    fn shared_pack<'v>(&self, value: &'v AnyValue) -> Option<&'v [u8]> {
        value.downcast_ref::<Prototypes>().map(|p| p.pack.as_slice()).filter(|p| !p.is_empty())
    }
}

/// A complete shared pack of the trees product: `TPRO`, `TTEX`, `TIMP` and, if baked, `TCRD`.
/// Each section is compressed as it is added, and the atlases are encoded one by one, each freed
/// once encoded: a world with trees peaks in memory here.
fn shared_pack(
    world_name: &str,
    inputs_hash: u64,
    shapes: &build::Shapes,
    captures: Vec<build::Capture>,
    cards: bool,
) -> Result<Vec<u8>, TreesError> {
    let err = format_err("assembling the shared pack");
    let mut b = PackBuilder::new(writer_version());
    b.add(&PackInfo { kind: PackKind::Shared { product: "tree-prototypes".into() }, world_name: world_name.to_owned(), inputs_hash })
        .map_err(&err)?;
    b.add(&shapes.prototypes).map_err(format_err("encoding prototypes"))?;
    b.add(&shapes.textures).map_err(format_err("encoding textures"))?;
    let cards = cards.then(|| TreeCards { cards: captures.iter().filter_map(|c| c.cards.clone()).collect() });
    let impostors = TreeImpostors { atlases: captures.into_iter().map(|c| c.atlas).collect() };
    let pieces = impostors.into_pieces().map_err(format_err("encoding impostors"))?;
    b.add_pieces::<TreeImpostors>(pieces).map_err(format_err("encoding impostors"))?;
    if let Some(c) = cards {
        b.add(&c).map_err(format_err("encoding cards"))?;
    }
    b.to_bytes().map_err(&err)
}

/// `tree-placement`: every tree of the world, on the ground open to the sky.
pub struct TreePlacementProduct;

/// The placement rule of one species.
fn rule(world: &World, index: usize, s: &SpeciesSpec) -> ScatterRule {
    let image = world.tree_density.get(index).and_then(|i| i.as_ref()).map(|img| {
        let m = &img.map;
        scatter::DensityImage::from_texel_centres(m.width, m.height, |u, v| m.sample(u, v))
    });
    ScatterRule {
        min_spacing: s.min_spacing as f32,
        density: s.density as f32,
        max_slope_deg: s.max_slope as f32,
        height_band: dry_band(world, s.height_band.map(|v| v as f32)),
        density_image: image,
        scale: s.scale.map(|v| v as f32),
        tint_variation: s.tint_variation as f32,
        support_radius: build::trunk_radius(s),
    }
}

/// `band` raised to start at the water level, if the world has water: trees do not grow in water
/// (ground open to the sky below the level is flooded, `pipeline::water::water_level`).
fn dry_band(world: &World, band: [f32; 2]) -> [f32; 2] {
    match super::water::water_level(world) {
        Some(level) => [band[0].max(level), band[1].max(level)],
        None => band,
    }
}

impl WorldProduct for TreePlacementProduct {
    fn name(&self) -> &'static str {
        "tree-placement"
    }
    fn report_stage(&self) -> &'static str {
        "trees"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let world = keys.plan().world;
        let mut key = StageInputs::new("tree placement", TREES_VERSION)
            .with("species", settings_hash(&world.spec.trees.as_ref().map(|t| &t.species)))
            .with("seed", settings_hash(&world.spec.seed));
        if trees_spec(world).is_some() {
            key = key.with("density", keys.world_key("volume")?.key().0);
            let images: Vec<Option<u64>> = world.tree_density.iter().map(|i| i.as_ref().map(|i| xxhash_rust::xxh3::xxh3_64(&i.png))).collect();
            key = key.with("density images", settings_hash(&images));
            key = key.with_some("water level", super::water::water_level(world).map(|l| settings_hash(&l.to_bits())));
        }
        Ok(key)
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["volume"]
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = trees_spec(world) else {
            return Ok((Box::new(Vec::<TreeInstance>::new()), "no trees".into()));
        };
        let volume = ctx.world::<Volume>("volume")?;
        let rules: Vec<ScatterRule> = spec.species.iter().enumerate().map(|(i, s)| rule(world, i, s)).collect();
        let placed = scatter::scatter(&volume.density, ctx.plan().tiling.voxel_size, &rules, world.spec.seed)
            .map_err(|e| fail(ctx.plan(), self.name())(e.into()))?;
        let first: Vec<u32> = spec.species.iter().scan(0u32, |n, s| Some(std::mem::replace(n, *n + s.prototypes))).collect();
        let instances: Vec<TreeInstance> = placed
            .iter()
            .map(|p| {
                let s = usize::from(p.rule);
                TreeInstance {
                    position: p.position,
                    yaw: p.yaw,
                    scale: p.scale,
                    tint: p.tint,
                    prototype: first[s] + (p.key % u64::from(spec.species[s].prototypes)) as u32,
                }
            })
            .collect();
        let detail = format!("{} trees placed", instances.len());
        Ok((Box::new(instances), detail))
    }
    fn stored(&self) -> bool {
        true
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        let Some(instances) = value.downcast_ref::<Vec<TreeInstance>>() else { return Ok(None) };
        TreeInstances { prototypes_hash: 0, instances: instances.clone() }.encode().map(|b| Some(Cow::Owned(b))).map_err(|e| e.to_string())
    }
    fn decode(&self, _keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        Ok(Box::new(TreeInstances::decode(&bytes).map_err(|e| e.to_string())?.instances))
    }
    fn light_occluder_key(&self, keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
        let world = keys.plan().world;
        if !trees_spec(world).is_some_and(|t| t.occlude_light) {
            return Ok(None);
        }
        Ok(Some(settings_hash(&(keys.world_key(self.name())?.key().0, keys.world_key("tree-shapes")?.key().0))))
    }
    fn light_occluders(&self, ctx: &WorldCtx) -> Result<OccluderMesh, BakeError> {
        let instances = ctx.world::<Vec<TreeInstance>>(self.name())?;
        let shapes = ctx.world::<TreeShapes>("tree-shapes")?;
        let proxies = shapes.proxies();
        // Each tree's occluder is placed on any thread; they are joined in placement order, its
        // triangles and albedo read from its prototype's proxy.
        let each: Vec<_> = instances
            .par_iter()
            .map(|t| match proxies.get(t.prototype as usize) {
                Some(proxy) => Ok(build::occluder(proxy, t)),
                None => Err(ctx.plan().internal(format_args!("tree prototype {} of {}", t.prototype, proxies.len()))),
            })
            .collect::<Result<_, _>>()?;
        let mut all = OccluderMesh::default();
        // Room for every tree at once: grown as they came, the arrays were copied many times.
        all.positions.reserve_exact(each.iter().map(|(p, _, _)| p.len()).sum());
        all.indices.reserve_exact(each.iter().map(|(_, i, _)| i.len()).sum());
        all.albedo.reserve_exact(each.iter().map(|(_, _, a)| a.len()).sum());
        for (positions, indices, albedo) in each.into_iter().filter(|(_, indices, _)| !indices.is_empty()) {
            all.append_parts(positions, indices, albedo, &[(indices.len() / 3) as u32]);
        }
        Ok(all)
    }
}

/// `trees`: the tile's instances (`TINS`): the trees whose trunk base lies in its footprint.
pub struct TreesProduct;

/// The instances inside tile `tile`'s half-open XY footprint, in placement order.
fn tile_instances(plan: &Plan, all: &[TreeInstance], tile: usize) -> Vec<TreeInstance> {
    let id = plan.tiles[tile];
    let span = (plan.tiling.tile_voxels << id.level) as f32 * plan.tiling.voxel_size;
    let owner = |v: f32| (v / span).floor();
    all.iter().filter(|t| owner(t.position[0]) == id.x as f32 && owner(t.position[1]) == id.y as f32).copied().collect()
}

impl TileProduct for TreesProduct {
    fn name(&self) -> &'static str {
        "trees"
    }
    fn report_stage(&self) -> &'static str {
        "trees"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        if trees_spec(keys.plan().world).is_none() {
            return Ok(StageInputs::absent("trees"));
        }
        let id = keys.plan().tiles[tile];
        let t = &keys.plan().tiling;
        Ok(StageInputs::new("trees", TREES_VERSION)
            .with("tile", settings_hash(&(id.level, id.x, id.y, t.tile_voxels, t.voxel_size.to_bits())))
            .with("placement", keys.world_key("tree-placement")?.key().0)
            .with("prototypes", keys.world_key("tree-prototypes")?.key().0))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["tree-placement", "tree-prototypes"]
    }
    fn sections(&self) -> &'static [kiln_formats::SectionKind] {
        &[TreeInstances::KIND]
    }
    fn sections_optional(&self) -> bool {
        true
    }
    fn bake(&self, tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let protos = ctx.world::<Prototypes>("tree-prototypes")?;
        if protos.pack.is_empty() {
            return Ok(TileOutput { sections: Vec::new(), summary: None });
        }
        let all = ctx.world::<Vec<TreeInstance>>("tree-placement")?;
        let instances = tile_instances(ctx.plan(), &all, tile);
        let bytes = TreeInstances { prototypes_hash: protos.hash, instances }
            .encode()
            .map_err(|e| fail(ctx.plan(), self.name())(format_err("encoding tree instances")(e)))?;
        Ok(TileOutput { sections: vec![RawSection { kind: TreeInstances::KIND, required: TreeInstances::REQUIRED, bytes }], summary: None })
    }
    fn validate(&self, _tile: usize, output: &TileOutput, _keys: &KeyCtx) -> Result<(), String> {
        match output.section(TreeInstances::KIND) {
            Some(b) => TreeInstances::decode(b).map(|_| ()).map_err(|e| e.to_string()),
            None if output.sections.is_empty() => Ok(()),
            None => Err("sections other than TINS".into()),
        }
    }
}

/// `tree-lighting`: each of the tile's instances' irradiance at its crown from the baked light
/// transport (`TILT`, in the order of the tile's `TINS`). It reads the placement, not `TINS`, so
/// that the instances' section, which names the shared pack, waits for the impostors while this
/// one does not.
pub struct TreeLightingProduct;

impl TileProduct for TreeLightingProduct {
    fn name(&self) -> &'static str {
        "tree-lighting"
    }
    fn report_stage(&self) -> &'static str {
        "tile lighting"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        if trees_spec(keys.plan().world).is_none() {
            return Ok(StageInputs::absent("tree lighting"));
        }
        let id = keys.plan().tiles[tile];
        let t = &keys.plan().tiling;
        Ok(StageInputs::new("tree lighting", TREES_VERSION)
            .with("tile", settings_hash(&(id.level, id.x, id.y, t.tile_voxels, t.voxel_size.to_bits())))
            .with("placement", keys.world_key("tree-placement")?.key().0)
            .with("transport", keys.world_key("transport")?.key().0)
            .with("shapes", keys.world_key("tree-shapes")?.key().0))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["tree-placement", "transport", "tree-shapes"]
    }
    fn sections(&self) -> &'static [kiln_formats::SectionKind] {
        &[TreeLighting::KIND]
    }
    fn sections_optional(&self) -> bool {
        true
    }
    fn bake(&self, tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        if trees_spec(ctx.plan().world).is_none() {
            return Ok(TileOutput { sections: Vec::new(), summary: None });
        }
        let err = fail(ctx.plan(), self.name());
        let all = ctx.world::<Vec<TreeInstance>>("tree-placement")?;
        let instances = tile_instances(ctx.plan(), &all, tile);
        let shapes = ctx.world::<TreeShapes>("tree-shapes")?;
        let lighting = ctx.world::<WorldLighting>("transport")?;
        let lit = build::instance_lighting(&lighting.lookup, &instances, &shapes.sizes);
        let bytes = TreeLighting(lit).encode().map_err(|e| err(format_err("encoding tree lighting")(e)))?;
        Ok(TileOutput { sections: vec![RawSection { kind: TreeLighting::KIND, required: TreeLighting::REQUIRED, bytes }], summary: None })
    }
    fn validate(&self, _tile: usize, output: &TileOutput, _keys: &KeyCtx) -> Result<(), String> {
        match output.section(TreeLighting::KIND) {
            Some(b) => TreeLighting::decode(b).map(|_| ()).map_err(|e| e.to_string()),
            None if output.sections.is_empty() => Ok(()),
            None => Err("sections other than TILT".into()),
        }
    }
}

#[cfg(test)]
#[path = "trees_tests.rs"]
mod tests;
