//! A product added the way a new product is: one module (here, [`Probe`]) and one registration.

use std::path::Path;

use kiln_formats::sections::TerrainMesh;
use kiln_formats::{Pack, Section, SectionKind};

use super::super::engine::{Engine, KeyCtx, Plan, TileCtx};
use super::super::product::{RawSection, TileOutput, TileProduct};
use super::super::progress::NoProgress;
use super::super::stage_cache::{StageCache, StageInputs};
use super::BakeError;
use super::Registry;
use crate::world::World;

const PROBE: SectionKind = SectionKind(*b"PRBE");

/// Records each tile's vertex count, read from the terrain product's output.
struct Probe;

impl TileProduct for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn report_stage(&self) -> &'static str {
        "probe"
    }
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new("probe", 1).with("geometry", keys.tile_keys("geometry")?[tile].key().0))
    }
    fn tile_needs(&self) -> &'static [&'static str] {
        &["geometry"]
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[PROBE]
    }
    fn bake(&self, _tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        let mesh = TerrainMesh::decode(ctx.output("geometry")?.section(TerrainMesh::KIND).expect("terrain has a mesh")).expect("decodes");
        let bytes = (mesh.positions.len() as u32).to_le_bytes().to_vec();
        Ok(TileOutput { sections: vec![RawSection { kind: PROBE, required: false, bytes }], summary: None })
    }
    fn validate(&self, _tile: usize, output: &TileOutput, _keys: &KeyCtx) -> Result<(), String> {
        match output.section(PROBE) {
            Some(b) if b.len() == 4 => Ok(()),
            _ => Err("not four bytes".into()),
        }
    }
}

fn tiny() -> World {
    crate::world::load_world(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/tiny.toml")).expect("tiny world loads")
}

fn bake_all(world: &World, registry: &Registry, cache: &StageCache) -> Vec<Vec<u8>> {
    let plan = Plan::new(world);
    let engine = Engine::new(&plan, registry, cache, &NoProgress);
    let all: Vec<usize> = (0..plan.tiles.len()).collect();
    engine.packs(&all).expect("bakes").into_iter().map(|b| b.pack).collect()
}

#[test]
fn a_registered_tile_product_adds_its_section_to_every_pack_after_the_others() {
    let world = tiny();
    let standard = bake_all(&world, &Registry::standard(), &StageCache::new(None, "tiny", false));
    let probed = bake_all(&world, &Registry::standard().tile(Probe), &StageCache::new(None, "tiny", false));
    assert_eq!(standard.len(), probed.len());
    for (a, b) in standard.into_iter().zip(probed) {
        let (a, b) = (Pack::from_bytes(a).unwrap(), Pack::from_bytes(b).unwrap());
        let kinds = |p: &Pack| p.sections().iter().map(|s| s.kind).collect::<Vec<_>>();
        let mut expected = kinds(&a);
        expected.push(PROBE);
        assert_eq!(kinds(&b), expected, "the probe's section comes last");
        for i in 1..a.sections().len() {
            assert_eq!(a.raw_section(i).unwrap(), b.raw_section(i).unwrap(), "the other products are unchanged");
        }
        let mesh: TerrainMesh = b.require().unwrap();
        let probe = b.raw_section(a.sections().len()).unwrap();
        assert_eq!(probe, (mesh.positions.len() as u32).to_le_bytes().to_vec());
    }
}

#[test]
fn a_registered_product_is_cached_and_a_poisoned_entry_is_rebuilt() {
    let dir = std::env::temp_dir().join(format!("kiln-registry-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let world = tiny();
    let registry = Registry::standard().tile(Probe);
    let store = || Some(kiln_cache::store::Store::open(&dir).unwrap());
    let cold = StageCache::new(store(), "tiny", false);
    let first = bake_all(&world, &registry, &cold);
    assert_eq!(cold.tallies()["probe"].computed, 21);

    // A warm rebake finds every pack and never looks further.
    let warm = StageCache::new(store(), "tiny", false);
    assert_eq!(bake_all(&world, &registry, &warm), first);
    assert!(warm.tallies().values().all(|t| t.computed == 0), "{:?}", warm.tallies());

    // A cache holding, for every tile, a sound store entry with a wrong probe output and nothing
    // else: each entry is reported and rebuilt, and the packs come out the same.
    let plan = Plan::new(&world);
    let engine = Engine::new(&plan, &registry, &warm, &NoProgress);
    let bad = TileOutput { sections: vec![RawSection { kind: PROBE, required: false, bytes: vec![1] }], summary: None };
    std::fs::remove_dir_all(&dir).unwrap();
    let s = kiln_cache::store::Store::open(&dir).unwrap();
    for key in engine.tile_keys("probe").unwrap() {
        s.put(key.key(), &bad.to_bytes()).unwrap();
    }
    let again = StageCache::new(store(), "tiny", false);
    assert_eq!(bake_all(&world, &registry, &again), first);
    assert_eq!(again.tallies()["probe"].computed, 21);
    assert!(again.warnings().iter().any(|w| w.contains("probe") && w.contains("not a well-formed")), "{:?}", again.warnings());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_standard_products_read_only_earlier_ones_and_come_before_the_later_ones_they_name() {
    use super::Entry;
    let registry = Registry::standard();
    let entries = registry.entries();
    let world_at = |name: &str| registry.index(name).ok().filter(|&j| matches!(entries[j], Entry::World(_)));
    for (i, e) in entries.iter().enumerate() {
        match e {
            Entry::World(p) => {
                for need in p.world_needs() {
                    assert!(world_at(need).is_some_and(|j| j < i), "{} reads {need}, a world product registered before it", p.name());
                }
                for later in p.made_before() {
                    assert!(world_at(later).is_some_and(|j| j > i), "{} is made before {later}, a world product registered after it", p.name());
                }
            }
            Entry::Tile(p) => {
                for need in p.world_needs() {
                    assert!(world_at(need).is_some_and(|j| j < i), "{} reads {need}, a world product registered before it", p.name());
                }
            }
        }
    }
    let shape = registry.index("grass-shape").unwrap();
    assert!(matches!(&entries[shape], Entry::World(p) if p.made_before() == ["transport"]), "the grass shape comes before transport");
}

/// What the products of the ordering test did, in order.
static MADE: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

/// A world product that logs when it is made.
struct Logged {
    name: &'static str,
    before: &'static [&'static str],
}

impl super::super::product::WorldProduct for Logged {
    fn name(&self) -> &'static str {
        self.name
    }
    fn report_stage(&self) -> &'static str {
        "ordering"
    }
    fn inputs(&self, _keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new(self.name, 1))
    }
    fn made_before(&self) -> &'static [&'static str] {
        self.before
    }
    fn compute(&self, _ctx: &super::super::engine::WorldCtx) -> Result<(super::super::product::WorldValue, String), BakeError> {
        MADE.lock().unwrap().push(self.name);
        Ok((Box::new(()), self.name.into()))
    }
}

/// A tile product that reads world product `late` and adds nothing to the packs.
struct ReadsLate;

impl TileProduct for ReadsLate {
    fn name(&self) -> &'static str {
        "reads-late"
    }
    fn report_stage(&self) -> &'static str {
        "ordering"
    }
    fn inputs(&self, _tile: usize, _keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new("reads-late", 1))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["late"]
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[]
    }
    fn sections_optional(&self) -> bool {
        true
    }
    fn bake(&self, _tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        ctx.world::<()>("late")?;
        Ok(TileOutput { sections: Vec::new(), summary: None })
    }
    fn validate(&self, _tile: usize, _output: &TileOutput, _keys: &KeyCtx) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn a_product_made_before_another_is_made_first_whenever_the_other_is_made() {
    let registry =
        Registry::standard().world(Logged { name: "early", before: &["late"] }).world(Logged { name: "late", before: &[] }).tile(ReadsLate);
    let _ = bake_all(&tiny(), &registry, &StageCache::new(None, "tiny", false));
    // Nothing reads `early`: it is made because `late` is, and before it.
    assert_eq!(*MADE.lock().unwrap(), ["early", "late"]);
}
