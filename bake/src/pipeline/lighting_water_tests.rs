//! The light-medium hook, used the way the water product uses it: a world product that gives
//! light transport a [`WaterMedium`] (here a plain one: air open straight up to the level, under
//! a level chosen from the terrain), registered beside the standard products.

use std::path::Path;

use kiln_formats::sections::{TerrainMesh, VertexIrradiance};
use kiln_formats::Pack;

use super::super::engine::{Engine, KeyCtx, Plan, WorldCtx};
use super::super::inputs::settings_hash;
use super::super::product::{WorldProduct, WorldValue};
use super::super::progress::NoProgress;
use super::super::stage_cache::{StageCache, StageInputs};
use super::super::volume::Volume;
use super::super::{BakeError, Registry};
use crate::lighting::WaterMedium;
use crate::world::World;

/// Water up to the level over every column whose samples from the level down are air.
struct TestWater {
    /// Whether it gives a medium at all (a world without water: `false`).
    wet: bool,
    absorption: [f32; 3],
}

impl TestWater {
    /// A level that floods about a third of the tiny world's columns: the 35th percentile of the
    /// columns' highest rock sample, one and a half samples up.
    fn medium(ctx: &WorldCtx, absorption: [f32; 3]) -> Result<WaterMedium, BakeError> {
        let density = &ctx.world::<Volume>("volume")?.density;
        let [nx, ny, nz] = density.dims;
        let voxel = ctx.plan().tiling.voxel_size;
        let mut tops: Vec<usize> = (0..nx * ny).map(|c| (0..nz).rev().find(|&k| density.get(c % nx, c / nx, k) > 0.0).unwrap_or(0)).collect();
        tops.sort_unstable();
        let level = (tops[tops.len() * 35 / 100] as f32 + 1.5) * voxel;
        let top = (level / voxel).floor() as usize;
        let mut flooded = vec![false; nx * ny * (top + 1)];
        for j in 0..ny {
            for i in 0..nx {
                for k in (0..=top).rev() {
                    if density.get(i, j, k) > 0.0 {
                        break;
                    }
                    flooded[i + nx * (j + ny * k)] = true;
                }
            }
        }
        Ok(WaterMedium { level, absorption, ior: 1.333, voxel_size: voxel, dims: [nx, ny, top + 1], flooded })
    }
}

impl WorldProduct for TestWater {
    fn name(&self) -> &'static str {
        "test-water"
    }
    fn report_stage(&self) -> &'static str {
        "water"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new("test water", 1).with("density", keys.world_key("volume")?.key().0).with("absorption", settings_hash(&self.absorption)))
    }
    fn compute(&self, _ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        Ok((Box::new(()), String::new()))
    }
    fn light_medium_key(&self, keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
        self.wet.then(|| keys.world_key(self.name()).map(|k| k.key().0)).transpose()
    }
    fn light_medium(&self, ctx: &WorldCtx) -> Result<Option<WaterMedium>, BakeError> {
        Ok(Some(Self::medium(ctx, self.absorption)?))
    }
}

fn tiny() -> World {
    crate::world::load_world(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/tiny.toml")).expect("tiny world loads")
}

/// The transport key and every level-0 pack of a bake with `registry`, and the medium it used.
fn bake(world: &World, registry: &Registry) -> (u128, Vec<Vec<u8>>, Option<WaterMedium>) {
    let plan = Plan::new(world);
    let cache = StageCache::new(None, "tiny", false);
    let engine = Engine::new(&plan, registry, &cache, &NoProgress);
    let level0: Vec<usize> = (0..plan.tiles.len()).filter(|&t| plan.tiles[t].level == 0).collect();
    let packs = engine.packs(&level0).expect("bakes").into_iter().map(|b| b.pack).collect();
    (engine.world_key("transport").unwrap().key().0, packs, engine.light_medium().unwrap())
}

#[test]
fn a_product_without_a_medium_changes_no_key_and_no_byte() {
    let world = tiny();
    let (key, packs, medium) = bake(&world, &Registry::standard());
    let dry = bake(&world, &Registry::standard().world(TestWater { wet: false, absorption: [0.4, 0.1, 0.03] }));
    assert!(medium.is_none() && dry.2.is_none());
    assert_eq!(dry.0, key, "the transport key is unchanged");
    assert!(dry.1 == packs, "the packs are byte for byte the same");
}

#[test]
fn water_from_a_product_darkens_and_blues_the_terrain_under_it() {
    let world = tiny();
    let (dry_key, dry, _) = bake(&world, &Registry::standard());
    let sea = [0.6, 0.1, 0.03];
    let (key, wet, medium) = bake(&world, &Registry::standard().world(TestWater { wet: true, absorption: sea }));
    let medium = medium.expect("the product gave a medium");
    assert_ne!(key, dry_key, "the medium's key is part of the transport key");
    let (other_key, _, _) = bake(&world, &Registry::standard().world(TestWater { wet: true, absorption: [0.3, 0.1, 0.03] }));
    assert_ne!(other_key, key, "so is its absorption");
    // Sum the irradiance of the vertices under the water and of those well above it, dry and wet.
    let (mut under, mut above, mut deep) = ([[0.0f64; 3]; 2], [[0.0f64; 3]; 2], 0usize);
    for (d, w) in dry.iter().zip(&wet) {
        let (d, w) = (Pack::from_bytes(d.clone()).unwrap(), Pack::from_bytes(w.clone()).unwrap());
        let mesh: TerrainMesh = d.require().unwrap();
        assert_eq!(mesh.positions, w.require::<TerrainMesh>().unwrap().positions, "the geometry is the same");
        let lit = [d.require::<VertexIrradiance>().unwrap().0, w.require::<VertexIrradiance>().unwrap().0];
        // The surface's vertices (skirts hang below it and copy a border vertex's light).
        let mut surface = vec![false; mesh.positions.len()];
        mesh.indices[..mesh.main_index_count].iter().for_each(|&i| surface[i as usize] = true);
        for (v, p) in mesh.positions.iter().enumerate().filter(|&(v, _)| surface[v]) {
            let into = if p[2] < medium.level - 0.5 && medium.is_water([p[0], p[1], p[2] + 0.3]) {
                deep += 1;
                &mut under
            } else if p[2] > medium.level + 1.0 {
                &mut above
            } else {
                continue;
            };
            for (sums, lit) in into.iter_mut().zip(&lit) {
                for c in 0..3 {
                    sums[c] += lit[v][c] as f64;
                }
            }
        }
    }
    assert!(deep > 100, "{deep} vertices deep under the water");
    let ratio = |s: [[f64; 3]; 2], c: usize| s[1][c] / s[0][c];
    assert!(ratio(under, 0) < 0.5, "red under the water: {} of the dry light", ratio(under, 0));
    assert!(ratio(under, 2) > ratio(under, 1) && ratio(under, 1) > ratio(under, 0), "bluer: {:?}", [0, 1, 2].map(|c| ratio(under, c)));
    // High ground sees the water only through light it sends up again: about as lit as before.
    assert!((0..3).all(|c| (ratio(above, c) - 1.0).abs() < 0.15), "{:?}", [0, 1, 2].map(|c| ratio(above, c)));
}

/// The cost of water in light transport on the default world, with the test product's water
/// over its lowest third (valleys and the tunnel's floor): lighting-stage seconds and rays,
/// without and with water, alternated in one run so a busy machine weighs on both alike.
/// `cargo test -p kiln-bake --release --lib water_cost -- --ignored --nocapture`
#[test]
#[ignore = "a measurement of the default world (about a minute per bake on two cores)"]
fn water_cost_on_the_default_world() {
    let world = crate::world::load_world(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/ice_caves.toml")).expect("loads");
    let dir = std::env::temp_dir().join(format!("kiln-water-cost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plan = Plan::new(&world);
    let mut seconds = [Vec::new(), Vec::new()];
    for round in 0..4 {
        let wet = round % 2 == 1;
        let registry = Registry::standard().world(TestWater { wet, absorption: [0.45, 0.07, 0.02] });
        // Geometry and density come from the store after the first round; transport never does.
        let cache = StageCache::new(Some(kiln_cache::store::Store::open(&dir).unwrap()), "ice_caves", false);
        let engine = Engine::new(&plan, &registry, &cache, &NoProgress);
        let lit = engine.world::<super::WorldLighting>("transport").expect("bakes");
        let time = engine.timings().iter().find(|t| t.name == "lighting").map_or(0.0, |t| t.seconds);
        let s = lit.lookup.stats();
        let medium = engine.light_medium().unwrap();
        let flooded = medium.as_ref().map_or(0, |m| m.flooded.iter().filter(|&&f| f).count());
        println!(
            "{}: lighting {time:.2} s, {} paths, {} rays{}",
            if wet { "water" } else { "dry  " },
            s.paths.iter().sum::<u64>(),
            s.flights,
            medium.map_or(String::new(), |m| format!(" (level {}, {flooded} flooded samples)", m.level))
        );
        seconds[wet as usize].push(time);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!("water / dry lighting time: {:.3}", mean(&seconds[1]) / mean(&seconds[0]));
    let _ = std::fs::remove_dir_all(&dir);
}
