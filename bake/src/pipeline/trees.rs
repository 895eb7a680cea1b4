//! Trees: the world's prototypes (grown, self-shadowed and captured as impostors) in one shared
//! pack, their placement on the ground as a world product, each tile's instances (`TINS`), and, after
//! light transport, each instance's baked lighting (`TILT`).
//!
//! Placement is computed once over the whole world and each tile keeps the trees whose trunk base
//! lies in its half-open footprint, so a tile's trees do not depend on the tiling and a tree near a
//! border belongs to exactly one tile of each level.

use std::borrow::Cow;
use std::sync::OnceLock;

use kiln_formats::sections::{PackInfo, PackKind, TreeCards, TreeImpostors, TreeInstance, TreeInstances, TreeLighting, TreePrototypes, TreeTextures};
use kiln_formats::{Pack, PackBuilder, Section, SectionKind};
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
    #[error("trees: the cached prototypes pack is malformed ({reason}); bake with --no-cache or clear the cache")]
    Cached { reason: String },
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

/// The shared trees pack of a bake, with what tiles and lighting read of it.
pub struct Prototypes {
    /// The complete pack file (`shared/tree-prototypes.kpack`); empty when the world has no trees.
    pub pack: Vec<u8>,
    /// xxh3-64 of `pack`: what every `TINS` section repeats.
    pub hash: u64,
    /// Per prototype: its height and crown radius (object space), what instance lighting reads;
    /// decoded from the pack's `TPRO` on first use.
    sizes: OnceLock<Result<Vec<(f32, f32)>, String>>,
    /// Per prototype: what light transport sees of it; made from `TPRO` and `TTEX` on first use.
    /// Apart from the sizes, so that a bake whose transport is done (cached, or traced before
    /// the pack was let go and read back) decodes no textures and builds no proxies.
    proxies: OnceLock<Result<Vec<build::Proxy>, String>>,
}

fn sizes_of(protos: &TreePrototypes) -> Vec<(f32, f32)> {
    protos.prototypes.iter().map(|p| (p.height, p.crown_radius)).collect()
}

impl Prototypes {
    /// A pack read back: its prototypes' sizes and proxies are decoded from it when first asked for.
    fn new(pack: Vec<u8>) -> Prototypes {
        let hash = if pack.is_empty() { 0 } else { xxhash_rust::xxh3::xxh3_64(&pack) };
        Prototypes { pack, hash, sizes: OnceLock::new(), proxies: OnceLock::new() }
    }

    /// A pack made by this bake, with the sizes and proxies of the prototypes it was made from.
    fn made(pack: Vec<u8>, sizes: Vec<(f32, f32)>, proxies: Vec<build::Proxy>) -> Prototypes {
        let p = Prototypes::new(pack);
        let _ = p.sizes.set(Ok(sizes));
        let _ = p.proxies.set(Ok(proxies));
        p
    }

    fn none() -> Prototypes {
        Prototypes::made(Vec::new(), Vec::new(), Vec::new())
    }

    /// The section of kind `T` of the pack, read where it lies.
    fn section<T: Section>(&self) -> Result<T, String> {
        Pack::section_in::<T>(&self.pack).map_err(|e| e.to_string())?.ok_or_else(|| format!("no {} section", T::KIND))
    }

    /// Each prototype's height and crown radius, decoding the pack's `TPRO` the first time.
    pub fn sizes(&self) -> Result<&[(f32, f32)], TreesError> {
        let decoded = self.sizes.get_or_init(|| Ok(sizes_of(&self.section()?)));
        decoded.as_deref().map_err(|reason| TreesError::Cached { reason: reason.clone() })
    }

    /// Each prototype's light proxy, decoding the pack's `TPRO` and `TTEX` the first time.
    pub fn proxies(&self) -> Result<&[build::Proxy], TreesError> {
        let decoded = self.proxies.get_or_init(|| {
            let protos: TreePrototypes = self.section()?;
            let textures: TreeTextures = self.section()?;
            if textures.species.len() != protos.species.len() {
                return Err("prototype and texture species disagree".into());
            }
            Ok(build::proxies(&protos, &textures))
        });
        decoded.as_deref().map_err(|reason| TreesError::Cached { reason: reason.clone() })
    }
}

/// `tree-prototypes`: every species' prototypes, textures and impostor atlases, as one shared pack.
pub struct TreePrototypesProduct;

fn trees_spec(world: &World) -> Option<&TreesSpec> {
    world.spec.trees.as_ref().filter(|t| !t.species.is_empty())
}

/// What shapes the prototypes: each species' preset, count, heights and shape, and the impostor settings.
fn prototype_inputs(spec: &TreesSpec) -> u128 {
    let shapes: Vec<_> = spec.species.iter().map(|s| (&s.preset, s.prototypes, s.height.map(f64::to_bits), &s.shape)).collect();
    settings_hash(&(shapes, &spec.impostor))
}

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
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        let Some(spec) = trees_spec(world) else {
            return Ok((Box::new(Prototypes::none()), "no trees".into()));
        };
        let err = fail(ctx.plan(), self.name());
        // The prototypes read nothing of the world but its spec, and their atlases are, with
        // light transport, where a bake needs the most memory: what the cache can give back
        // (the density volume, the tiles' meshes) is let go meanwhile.
        ctx.release_stored_values();
        // Each prototype is an item shards split among them (growing and capturing is most of it).
        let growing = build::Growing::new(spec, world.spec.seed);
        let species = growing.species();
        let grown = ctx.shared_items(
            "tree prototype",
            &self.inputs(ctx)?,
            growing.count(),
            |i| growing.grow(i).map_err(&err),
            |g| g.to_bytes(&species).map_err(&err),
            |_, b| build::Grown::from_bytes(b, &species),
        )?;
        let built = growing.assemble(grown);
        let clock = std::time::Instant::now();
        let inputs_hash = self.inputs(ctx)?.key().0 as u64;
        let made = format!(
            "{} prototypes of {} species, {} triangles; cpu: grow {:.2}s, impostors {:.2}s",
            built.prototypes.prototypes.len(),
            spec.species.len(),
            built.triangles(),
            built.cpu.0,
            built.cpu.1
        );
        let (sizes, proxies) = (sizes_of(&built.prototypes), build::proxies(&built.prototypes, &built.textures));
        let pack = shared_pack(&world.spec.name, inputs_hash, built).map_err(&err)?;
        let detail = format!("{made}, pack {:.2}s", clock.elapsed().as_secs_f64());
        Ok((Box::new(Prototypes::made(pack, sizes, proxies)), detail))
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
    fn encode<'v>(&self, value: &'v AnyValue) -> Option<Cow<'v, [u8]>> {
        value.downcast_ref::<Prototypes>().map(|p| Cow::Borrowed(&p.pack[..]))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        if bytes.is_empty() {
            return match trees_spec(keys.plan().world) {
                None => Ok(Box::new(Prototypes::none())),
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
/// Each section is compressed as it is added and its decoded form freed before the next is
/// encoded: a world with trees peaks in memory here, and the pack never holds every section
/// uncompressed at once.
fn shared_pack(world_name: &str, inputs_hash: u64, built: build::Built) -> Result<Vec<u8>, TreesError> {
    let err = format_err("assembling the shared pack");
    let mut b = PackBuilder::new(writer_version());
    b.add(&PackInfo { kind: PackKind::Shared { product: "tree-prototypes".into() }, world_name: world_name.to_owned(), inputs_hash })
        .map_err(&err)?;
    let build::Built { prototypes, textures, impostors, cards, .. } = built;
    b.add(&prototypes).map_err(format_err("encoding prototypes"))?;
    drop(prototypes);
    b.add(&textures).map_err(format_err("encoding textures"))?;
    drop(textures);
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
            .with("trees", settings_hash(&world.spec.trees))
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
    fn encode<'v>(&self, value: &'v AnyValue) -> Option<Cow<'v, [u8]>> {
        let instances = value.downcast_ref::<Vec<TreeInstance>>()?;
        TreeInstances { prototypes_hash: 0, instances: instances.clone() }.encode().ok().map(Cow::Owned)
    }
    fn decode(&self, _keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        Ok(Box::new(TreeInstances::decode(&bytes).map_err(|e| e.to_string())?.instances))
    }
    fn light_occluder_key(&self, keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
        let world = keys.plan().world;
        if !trees_spec(world).is_some_and(|t| t.occlude_light) {
            return Ok(None);
        }
        Ok(Some(settings_hash(&(keys.world_key(self.name())?.key().0, keys.world_key("tree-prototypes")?.key().0))))
    }
    fn light_occluders(&self, ctx: &WorldCtx) -> Result<OccluderMesh, BakeError> {
        let instances = ctx.world::<Vec<TreeInstance>>(self.name())?;
        let prototypes = ctx.world::<Prototypes>("tree-prototypes")?;
        let proxies = prototypes.proxies().map_err(fail(ctx.plan(), self.name()))?;
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

/// `tree-lighting`: each instance's irradiance at its crown from the baked light transport (`TILT`).
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
        Ok(StageInputs::new("tree lighting", TREES_VERSION)
            .with("trees", keys.tile_keys("trees")?[tile].key().0)
            .with("transport", keys.world_key("transport")?.key().0)
            .with("prototypes", keys.world_key("tree-prototypes")?.key().0))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["transport", "tree-prototypes"]
    }
    fn tile_needs(&self) -> &'static [&'static str] {
        &["trees"]
    }
    fn sections(&self) -> &'static [kiln_formats::SectionKind] {
        &[TreeLighting::KIND]
    }
    fn sections_optional(&self) -> bool {
        true
    }
    fn bake(&self, _tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let trees = ctx.output("trees")?;
        let Some(raw) = trees.section(TreeInstances::KIND) else {
            return Ok(TileOutput { sections: Vec::new(), summary: None });
        };
        let err = fail(ctx.plan(), self.name());
        let instances = TreeInstances::decode(raw).map_err(|e| err(format_err("reading tree instances")(e)))?;
        let protos = ctx.world::<Prototypes>("tree-prototypes")?;
        let lighting = ctx.world::<WorldLighting>("transport")?;
        let sizes = protos.sizes().map_err(&err)?;
        let lit = build::instance_lighting(&lighting.lookup, &instances.instances, sizes);
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
