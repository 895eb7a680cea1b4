//! The engine releases world values and tile outputs while a bake runs (what the cache holds
//! before light transport, a world value once no later tile product reads it): every item must
//! still be computed once, and the packs must not depend on what was released and read back.

use std::path::Path;

use super::{Engine, Plan};
use crate::pipeline::lighting::WorldLighting;
use crate::pipeline::progress::NoProgress;
use crate::pipeline::{BakeRole, MemoryUse, Registry, StageCache};

/// A world with every kind of world product: trees that occlude light, grass and water.
const WORLD: &str = r#"
name = "released"
seed = 7
[volume]
size = [64, 64, 32]
voxel_size = 0.25
tile_size = 16
[trees]
occlude_light = true
impostor = { grid = 4, texel = 0.25 }
[[trees.species]]
preset = "oak"
prototypes = 2
height = [2.5, 3.5]
density = 0.05
min_spacing = 2.0
[grass]
density = 100.0
patches = 2
[water]
level = 1.0
[water.waves]
frames = 2
resolution = 16
patch_size = 4.0
"#;

fn world() -> crate::world::World {
    crate::world::World::from_str(WORLD, Path::new("released.toml"), Path::new(".")).expect("the test world loads")
}

#[test]
fn released_values_are_read_back_never_computed_twice() {
    let world = world();
    let plan = Plan::new(&world);
    let registry = Registry::standard();
    let all: Vec<usize> = (0..plan.tiles.len()).collect();
    let dir = |memory: MemoryUse| std::env::temp_dir().join(format!("kiln-engine-release-{memory:?}-{}", std::process::id()));
    // With `Hold` the products that read only the world file are baked alongside the rest.
    let mut packs = Vec::new();
    for (with_store, memory) in [(false, MemoryUse::Least), (true, MemoryUse::Least), (true, MemoryUse::Hold), (false, MemoryUse::Hold)] {
        let _ = std::fs::remove_dir_all(dir(memory));
        let store = with_store.then(|| kiln_cache::store::Store::open(&dir(memory)).expect("a store"));
        let cache = StageCache::new(store, "released", false);
        let engine = Engine::new(&plan, &registry, &cache, &NoProgress).with_memory(memory);
        let tiles = engine.packs(&all).expect("bakes");
        let mut shared = Vec::new();
        engine
            .shared_packs_into(&mut |name, _| {
                shared.push(name);
                Ok(())
            })
            .expect("shared packs");
        assert_eq!(shared, ["grass-patches", "tree-prototypes", "water-waves"], "grass, trees and water each write a shared pack");
        let how = format!("store: {with_store}, {memory:?}");
        for (name, times) in engine.computed_counts() {
            assert!(times <= 1, "{name} was computed {times} times ({how})");
        }
        let released = (0..registry.entries().len()).filter(|&i| engine.value(i).is_none()).count();
        assert!(released > 0, "the bake released values nothing later reads ({how})");
        // Tile outputs released before light transport and by the packs are read back, never baked
        // again, and reading them back is not counted as a cache hit.
        let tallies = cache.tallies();
        let geometry = tallies.get("geometry").copied().unwrap_or_default();
        assert_eq!((geometry.cached, geometry.computed), (0, plan.tiles.len()), "geometry baked once per tile ({how})");
        let g = registry.index("geometry").expect("geometry is registered");
        let outputs_held = (0..plan.tiles.len()).filter(|&t| engine.output_of(g, t).is_some()).count();
        match (with_store, memory) {
            (true, MemoryUse::Least) => {
                assert_eq!(outputs_held, 0, "tile outputs are let go once their packs are made");
                assert!(cache.read_backs() > 0, "what was let go is read back");
            }
            _ => {
                assert_eq!(outputs_held, plan.tiles.len(), "tile outputs are held ({how})");
                assert_eq!(cache.read_backs(), 0, "nothing is read back ({how})");
            }
        }
        packs.push((tiles.into_iter().map(|t| t.pack).collect::<Vec<_>>(), shared));
        let _ = std::fs::remove_dir_all(dir(memory));
    }
    assert!(packs.iter().all(|p| *p == packs[0]), "the packs do not depend on what was released and read back");
}

/// A shard reads the light of every level-0 tile for the grass ground map and bakes the ones no
/// other shard has stored: light transport must still be held then (it cannot be read back), and
/// what transport released must be held again for the grass tiles. One shard after the other, each
/// computes what it needs at most once, and an assembly gives the packs of one process, whether the
/// shards let go of what the cache holds or keep it.
#[test]
fn shards_hold_what_their_tiles_read() {
    let world = world();
    let plan = Plan::new(&world);
    let registry = Registry::standard();
    let all: Vec<usize> = (0..plan.tiles.len()).collect();
    let whole_cache = StageCache::new(None, "released", false);
    let whole = Engine::new(&plan, &registry, &whole_cache, &NoProgress);
    let one: Vec<Vec<u8>> = whole.packs(&all).expect("bakes").into_iter().map(|t| t.pack).collect();
    let mut read_backs = Vec::new();
    for memory in [MemoryUse::Least, MemoryUse::Hold] {
        let dir = std::env::temp_dir().join(format!("kiln-engine-shards-{memory:?}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = || StageCache::new(Some(kiln_cache::store::Store::open(&dir).expect("a store")), "released", false);
        for index in 0..3 {
            let cache = cache();
            let engine = Engine::new(&plan, &registry, &cache, &NoProgress).with_role(BakeRole::Shard { index, count: 3 }).with_memory(memory);
            let own: Vec<usize> = all.iter().copied().filter(|&t| engine.role().owns(t)).collect();
            engine.packs(&own).unwrap_or_else(|e| panic!("shard {index}/3 ({memory:?}): {e}"));
            engine.shared_packs_into(&mut |_, _| Ok(())).unwrap_or_else(|e| panic!("shard {index}/3 ({memory:?}): {e}"));
            for (name, times) in engine.computed_counts() {
                assert!(times <= 1, "shard {index}/3 ({memory:?}) computed {name} {times} times");
            }
            read_backs.push((memory, index, cache.read_backs()));
        }
        let cache = cache();
        let assembly = Engine::new(&plan, &registry, &cache, &NoProgress).with_role(BakeRole::Assemble);
        let sharded: Vec<Vec<u8>> = assembly.packs(&all).expect("the shards left a complete cache").into_iter().map(|t| t.pack).collect();
        assert!(sharded == one, "three shards ({memory:?}) give the packs of one process");
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Every shard reads its own share of shared items back with the others' ones; one that keeps
    // what it made reads nothing else back.
    let (least, hold) = read_backs.split_at(3);
    for ((_, index, l), (_, _, h)) in least.iter().zip(hold) {
        assert!(h < l, "shard {index}/3 read back {h} items holding them, {l} letting go");
    }
}

/// Shards running at once split the impostors and the caustic frames between them, and one of
/// them puts each shared pack together while the others wait and read it: a pack is compressed
/// once, not once per shard. Each shard has its own threads, as a process of its own would.
#[test]
fn shards_at_once_put_each_shared_pack_together_once() {
    let world = world();
    let plan = Plan::new(&world);
    let registry = Registry::standard();
    let all: Vec<usize> = (0..plan.tiles.len()).collect();
    let one: Vec<Vec<u8>> = {
        let cache = StageCache::new(None, "released", false);
        Engine::new(&plan, &registry, &cache, &NoProgress).packs(&all).expect("bakes").into_iter().map(|t| t.pack).collect()
    };
    let dir = std::env::temp_dir().join(format!("kiln-engine-shards-at-once-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = || StageCache::new(Some(kiln_cache::store::Store::open(&dir).expect("a store")), "released", false);
    let counts: Vec<Vec<(&str, u32)>> = std::thread::scope(|s| {
        let shards: Vec<_> = (0..3)
            .map(|index| {
                let (plan, registry, all, cache) = (&plan, &registry, &all, &cache);
                s.spawn(move || {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool");
                    pool.install(|| {
                        let cache = cache();
                        let engine = Engine::new(plan, registry, &cache, &NoProgress).with_role(BakeRole::Shard { index, count: 3 });
                        let own: Vec<usize> = all.iter().copied().filter(|&t| engine.role().owns(t)).collect();
                        engine.packs(&own).unwrap_or_else(|e| panic!("shard {index}/3: {e}"));
                        engine.shared_packs_into(&mut |_, _| Ok(())).unwrap_or_else(|e| panic!("shard {index}/3: {e}"));
                        engine.computed_counts()
                    })
                })
            })
            .collect();
        shards.into_iter().map(|h| h.join().expect("a shard")).collect()
    });
    for product in ["tree-prototypes", "water-waves"] {
        let times: u32 = counts.iter().flatten().filter(|(name, _)| *name == product).map(|(_, t)| t).sum();
        assert_eq!(times, 1, "three shards put {product} together {times} times");
    }
    let cache = cache();
    let assembly = Engine::new(&plan, &registry, &cache, &NoProgress).with_role(BakeRole::Assemble);
    let sharded: Vec<Vec<u8>> = assembly.packs(&all).expect("the shards left a complete cache").into_iter().map(|t| t.pack).collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(sharded == one, "three shards at once give the packs of one process");
}

/// The products a holding bake makes alongside the others read only the world file: resolved on
/// their own, before anything else, they need no other product, and the bake after them makes
/// nothing twice and the same packs.
#[test]
fn products_of_the_world_file_alone_are_baked_alongside_without_their_readers() {
    let world = world();
    let plan = Plan::new(&world);
    let registry = Registry::standard();
    let all: Vec<usize> = (0..plan.tiles.len()).collect();
    let cache = StageCache::new(None, "released", false);
    let one: Vec<Vec<u8>> = Engine::new(&plan, &registry, &cache, &NoProgress).packs(&all).expect("bakes").into_iter().map(|t| t.pack).collect();

    let cache = StageCache::new(None, "released", false);
    let engine = Engine::new(&plan, &registry, &cache, &NoProgress).with_memory(MemoryUse::Hold);
    engine.resolve_alongside().expect("the world file's own products");
    let alongside: Vec<&str> = registry
        .entries()
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            super::Entry::World(p) if engine.value(i).is_some() => Some(p.name()),
            super::Entry::World(p) => {
                assert!(!p.reads_only_the_world_file(), "{} was left out", p.name());
                None
            }
            super::Entry::Tile(p) => {
                assert!((0..plan.tiles.len()).all(|t| engine.output_of(i, t).is_none()), "{} was baked", p.name());
                None
            }
        })
        .collect();
    assert_eq!(alongside, ["tree-shapes", "grass-patches", "tree-prototypes", "water-waves"]);
    for e in registry.entries() {
        if let super::Entry::World(p) = e {
            if p.reads_only_the_world_file() {
                let world_file_only =
                    |n: &&str| matches!(&registry.entries()[registry.index(n).unwrap()], super::Entry::World(q) if q.reads_only_the_world_file());
                assert!(
                    p.world_needs().iter().all(world_file_only) && p.tile_needs(&engine).is_empty(),
                    "{} needs more than the world file",
                    p.name()
                );
            }
        }
    }
    let packs: Vec<Vec<u8>> = engine.packs(&all).expect("bakes").into_iter().map(|t| t.pack).collect();
    for (name, times) in engine.computed_counts() {
        assert!(times <= 1, "{name} was computed {times} times");
    }
    assert!(packs == one, "the packs do not depend on what was baked alongside");
}

#[test]
fn each_stage_reports_its_own_processor_time() {
    let world = world();
    let plan = Plan::new(&world);
    let registry = Registry::standard();
    let cache = StageCache::new(None, "released", false);
    let engine = Engine::new(&plan, &registry, &cache, &NoProgress);
    let watch = crate::Stopwatch::start();
    engine.packs(&(0..plan.tiles.len()).collect::<Vec<_>>()).expect("bakes");
    let [_, cpu] = watch.read();
    let timings = engine.timings();
    // Steps nested in others count once, in their own stage: the stages add up to no more than
    // the bake used (other tests' threads may add to the process's time, never take from it).
    let sum: f64 = timings.iter().map(|t| t.cpu_seconds).sum();
    assert!(sum <= cpu + 0.02, "stages {sum} s against the bake's {cpu} s");
    let lighting = timings.iter().find(|t| t.name == "lighting").expect("a lighting stage");
    assert!(lighting.cpu_seconds > 0.0, "{lighting}");
    assert!(timings.iter().all(|t| t.cpu_seconds >= 0.0), "{timings:?}");
}

/// Shards that share a machine make light transport once: the shard that makes it reads every
/// level-0 tile and traces every path, in no parts, and one that reads the stored lookup reads no
/// tile at all to light the world, and traces no path. A shard on a machine of its own builds the
/// scene itself, from every level-0 tile, and traces its part of the paths. The report counts the
/// maker's time once, though it reads the tiles on the machine's threads.
#[test]
fn shards_that_share_a_machine_make_light_transport_once() {
    let world = world();
    let plan = Plan::new(&world);
    let registry = Registry::standard();
    let transport = registry.index("transport").expect("transport is registered");
    let level0 = plan.tiles.iter().filter(|t| t.level == 0).count();
    let dir = std::env::temp_dir().join(format!("kiln-engine-transport-once-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // (machine share, whether the lookup is stored before the shard starts)
    for (index, share, stored) in [(0, 3, false), (1, 3, true), (2, 1, true)] {
        let cache = StageCache::new(Some(kiln_cache::store::Store::open(&dir).expect("a store")), "released", false);
        let engine = Engine::new(&plan, &registry, &cache, &NoProgress).with_role(BakeRole::Shard { index, count: 3 }).with_machine_share(share);
        let watch = crate::Stopwatch::start();
        engine.resolve_world(transport).unwrap_or_else(|e| panic!("shard {index}/3: {e}"));
        let [wall, _] = watch.read();
        // The tiles the maker reads on the machine's threads count once, in their own stage.
        let stages: f64 = engine.timings().iter().map(|t| t.seconds).sum();
        assert!(stages <= wall + 1e-3, "shard {index}/3: stages {stages} s in {wall} s");
        let tallies = cache.tallies();
        let geometry = tallies.get("geometry").map_or(0, |t| t.cached + t.computed);
        let tally = |stage| tallies.get(stage).map(|t| (t.cached, t.computed));
        let (lookup, parts) = (tally("lighting lookup"), tally("transport part"));
        let value = engine.value(transport).expect("transport is held");
        let paths: u64 = value.downcast_ref::<WorldLighting>().expect("transport's value").lookup.stats().paths.iter().sum();
        assert!(paths > 0, "shard {index}/3 holds the lookup of the world's paths");
        match (share, stored) {
            (3, false) => {
                assert_eq!((geometry, lookup), (level0, Some((0, 1))), "shard {index}/3 makes transport from every level-0 tile");
                assert_eq!(parts, None, "shard {index}/3 traces every path, in no parts");
            }
            (3, true) => assert_eq!((geometry, lookup, parts), (0, Some((1, 0)), None), "shard {index}/3 reads the lookup, no tile and no part"),
            _ => {
                assert_eq!((geometry, lookup), (level0, None), "shard {index}/3, on a machine of its own, builds the scene itself");
                assert!(parts.is_some_and(|(_, made)| made > 0), "shard {index}/3 traces its part: {tallies:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
