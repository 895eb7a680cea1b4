//! Trees, end to end: a small world with two species baked through the CLI, its packs read back and
//! checked for what a user would notice: trees standing on open ground (never in a cave or under an
//! overhang), each tree in exactly one tile of each level, the same trees whatever the tiling,
//! the same bytes whatever the thread count or the cache, and shade under the canopies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kiln_e2e::{files_under, kiln, manifest, repo_root, scratch, tile_contents};
use kiln_formats::sections::{SharedPacks, TreeInstance, TreeLighting, TreePrototypes};
use kiln_formats::{Pack, TileId};

/// The tiny world with two species of three prototypes each (coarse impostors keep it quick).
fn world_text(name: &str, tile_size: u32, occlude: bool) -> String {
    let tiny = std::fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    let mut text = tiny.replace("name = \"tiny\"", &format!("name = \"{name}\"")).replace("tile_size = 16", &format!("tile_size = {tile_size}"));
    text.push_str(&format!(
        r#"
[trees]
occlude_light = {occlude}
impostor = {{ grid = 6, texel = 0.2 }}

[[trees.species]]
preset = "oak"
prototypes = 3
height = [2.5, 3.5]
density = 0.08
min_spacing = 2.0

[[trees.species]]
preset = "pine"
prototypes = 3
height = [3.0, 4.0]
density = 0.08
min_spacing = 2.0
"#
    ));
    text
}

/// Bakes the world into a scratch directory of its own, `label` (tests run in parallel).
fn bake(label: &str, name: &str, tile_size: u32, occlude: bool, extra: &[&str]) -> PathBuf {
    let dir = scratch(&format!("trees-{label}"));
    let world = dir.join(format!("{name}.toml"));
    std::fs::write(&world, world_text(name, tile_size, occlude)).unwrap();
    let out = dir.join("out");
    let mut args = vec!["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(extra);
    assert_eq!(kiln(&args), 0, "bake {name}");
    out.join(name)
}

/// The world baked once per test binary, without a cache.
fn forest() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| bake("shared", "grove", 16, true, &["--no-cache"]))
}

/// Every tile's instances, by tile.
fn instances(bake_dir: &Path) -> BTreeMap<TileId, Vec<TreeInstance>> {
    manifest(bake_dir)
        .nodes
        .iter()
        .map(|n| {
            let id = TileId::new(n.level, n.x, n.y);
            (id, tile_contents(bake_dir, id).trees.map(|t| t.instances).unwrap_or_default())
        })
        .collect()
}

fn key(t: &TreeInstance) -> [u32; 5] {
    [t.position[0].to_bits(), t.position[1].to_bits(), t.position[2].to_bits(), t.yaw.to_bits(), t.prototype]
}

/// Highest point of the level-0 terrain straight above or below (x, y): the ground open to the sky.
fn top_surface(bake_dir: &Path, x: f32, y: f32) -> Option<f32> {
    let mut best: Option<f32> = None;
    for n in manifest(bake_dir).nodes.iter().filter(|n| n.level == 0) {
        let mesh = tile_contents(bake_dir, TileId::new(0, n.x, n.y)).mesh.unwrap();
        for t in mesh.indices[..mesh.main_index_count].chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| mesh.positions[t[k] as usize]);
            // Barycentric coordinates of (x, y) in the triangle's XY projection.
            let d = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1]);
            if d.abs() < 1e-12 {
                continue;
            }
            let u = ((b[1] - c[1]) * (x - c[0]) + (c[0] - b[0]) * (y - c[1])) / d;
            let v = ((c[1] - a[1]) * (x - c[0]) + (a[0] - c[0]) * (y - c[1])) / d;
            let w = 1.0 - u - v;
            if u >= -1e-6 && v >= -1e-6 && w >= -1e-6 {
                let z = u * a[2] + v * b[2] + w * c[2];
                best = Some(best.map_or(z, |m: f32| m.max(z)));
            }
        }
    }
    best
}

#[test]
fn trees_stand_on_the_ground_open_to_the_sky() {
    let dir = forest();
    let voxel = manifest(dir).voxel_size;
    let trees: Vec<TreeInstance> = instances(dir).into_iter().filter(|(id, _)| id.level == 0).flat_map(|(_, t)| t).collect();
    assert!(trees.len() >= 5, "the grove has {} trees", trees.len());
    for t in &trees {
        let top = top_surface(dir, t.position[0], t.position[1]).expect("ground under every tree");
        // On the topmost surface (so never in a cave nor on ground under an overhang), and on it.
        assert!((t.position[2] - top).abs() <= 0.5 * voxel, "a tree at {:?} is {} from the ground open to the sky", t.position, t.position[2] - top);
        assert!(t.scale > 0.0 && t.tint.iter().all(|c| (0.5..1.5).contains(c)));
    }
}

#[test]
fn every_tree_is_in_exactly_one_tile_of_each_level() {
    let dir = forest();
    let m = manifest(dir);
    let tile_world = m.tile_voxels as f32 * m.voxel_size;
    let by_tile = instances(dir);
    let mut per_level: BTreeMap<u32, Vec<[u32; 5]>> = BTreeMap::new();
    for (id, trees) in &by_tile {
        let span = tile_world * (1u32 << id.level) as f32;
        for t in trees {
            assert_eq!(
                ((t.position[0] / span).floor() as u32, (t.position[1] / span).floor() as u32),
                (id.x, id.y),
                "tree {:?} listed in {id}",
                t.position
            );
        }
        per_level.entry(id.level).or_default().extend(trees.iter().map(key));
    }
    let level0 = per_level[&0].clone();
    let mut sorted = level0.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), level0.len(), "a tree listed twice at level 0");
    for (level, mut keys) in per_level {
        keys.sort_unstable();
        assert_eq!(keys, sorted, "level {level} lists other trees than level 0");
    }
}

#[test]
fn a_tiles_trees_do_not_depend_on_the_tiling() {
    let fine = forest();
    let coarse = bake("coarse", "grove", 32, true, &["--no-cache"]);
    // The world's closed sides are a band as wide as its tiles per axis (`density::sides::side_band`),
    // so the ground within a few samples of the edge depends on the tiling; trees there follow it.
    // Everywhere else the same trees stand in the same tiles.
    let m = manifest(fine);
    let extent = [m.volume_dims[0] as f32 * m.voxel_size, m.volume_dims[1] as f32 * m.voxel_size];
    let margin = 8.0 * m.voxel_size;
    let inland = |t: &&TreeInstance| (0..2).all(|a| t.position[a] > margin && t.position[a] < extent[a] - margin);
    let fine_tiles = instances(fine);
    let coarse_tiles = instances(&coarse);
    let mut compared = 0;
    for (id, trees) in coarse_tiles.iter().filter(|(id, _)| id.level == 0) {
        let mut want: Vec<[u32; 5]> = trees.iter().filter(inland).map(key).collect();
        let mut got: Vec<[u32; 5]> =
            (0..4).flat_map(|k| fine_tiles[&TileId::new(0, 2 * id.x + k % 2, 2 * id.y + k / 2)].iter().filter(inland).map(key)).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "tile {id} of 32 against its four tiles of 16");
        compared += want.len();
    }
    assert!(compared >= 5, "only {compared} trees away from the sides");
}

#[test]
fn tree_bakes_are_byte_identical_across_threads_and_the_cache() {
    let one = bake("one-thread", "grove", 16, true, &["--no-cache", "--jobs", "1"]);
    let cache = scratch("trees-cache");
    let cached = bake("cached", "grove", 16, true, &["--cache", cache.to_str().unwrap(), "--jobs", "2"]);
    let files = files_under(forest());
    assert!(files.keys().any(|p| p.starts_with("shared")), "a shared trees pack was written");
    assert_eq!(files_under(&one), files, "--jobs 1 against the default");
    assert_eq!(files_under(&cached), files, "a cached bake against an uncached one");
    // And again, every item from the cache.
    let again = bake("again", "grove", 16, true, &["--cache", cache.to_str().unwrap()]);
    assert_eq!(files_under(&again), files, "a bake read back from the cache");
}

#[test]
fn the_manifest_lists_the_shared_pack_that_tiles_reference() {
    let dir = forest();
    let shared: SharedPacks = Pack::open(&dir.join("manifest.kpack")).unwrap().require().unwrap();
    let entry = shared.get("tree-prototypes").expect("SHRD lists the trees pack");
    let bytes = std::fs::read(dir.join(&entry.path)).unwrap();
    assert_eq!(xxhash_rust::xxh3::xxh3_64(&bytes), entry.content_hash);
    let protos: TreePrototypes = Pack::from_bytes(bytes).unwrap().require().unwrap();
    assert_eq!(protos.species, ["oak", "pine"]);
    assert_eq!(protos.prototypes.len(), 6);
    let mut all_light = Vec::new();
    for (id, _) in instances(dir) {
        let t = tile_contents(dir, id);
        let inst = t.trees.expect("every tile has a TINS section");
        assert_eq!(inst.prototypes_hash, entry.content_hash, "{id} references the shared pack by its hash");
        assert!(inst.instances.iter().all(|i| (i.prototype as usize) < protos.prototypes.len()));
        let light: TreeLighting = t.tree_lighting.expect("TILT");
        assert_eq!(light.0.len(), inst.instances.len());
        all_light.extend(light.0);
    }
    // Lit from the sky: crowns' top sides get more than their undersides, on the whole (a tree
    // beside a wall or under a ledge may not).
    let mean = |k: usize| all_light.iter().map(|l| l[k][1] as f64).sum::<f64>() / all_light.len().max(1) as f64;
    assert!(mean(0) > mean(1), "up {} against down {}", mean(0), mean(1));
}

/// Mean level-0 vertex irradiance (green) within `radius` of a trunk and beyond `3·radius` of all.
fn shade(bake_dir: &Path, trees: &[TreeInstance], radius: f32) -> (f64, f64) {
    let (mut near, mut far) = ((0.0, 0usize), (0.0, 0usize));
    for n in manifest(bake_dir).nodes.iter().filter(|n| n.level == 0) {
        let t = tile_contents(bake_dir, TileId::new(0, n.x, n.y));
        let (mesh, irr) = (t.mesh.unwrap(), t.irradiance.unwrap());
        for (p, (e, nrm)) in mesh.positions.iter().zip(irr.0.iter().zip(&mesh.normals)) {
            if nrm[2] < 0.7 {
                continue;
            }
            let d = trees.iter().map(|t| ((p[0] - t.position[0]).powi(2) + (p[1] - t.position[1]).powi(2)).sqrt()).fold(f32::MAX, f32::min);
            if d < radius {
                near = (near.0 + e[1] as f64, near.1 + 1);
            } else if d > 3.0 * radius {
                far = (far.0 + e[1] as f64, far.1 + 1);
            }
        }
    }
    (near.0 / near.1.max(1) as f64, far.0 / far.1.max(1) as f64)
}

#[test]
fn the_ground_under_a_canopy_is_darker_than_open_ground() {
    let with = forest();
    let without = bake("without", "grove", 16, false, &["--no-cache"]);
    let trees: Vec<TreeInstance> = instances(with).into_iter().filter(|(id, _)| id.level == 0).flat_map(|(_, t)| t).collect();
    let (near_with, far_with) = shade(with, &trees, 0.6);
    let (near_without, far_without) = shade(&without, &trees, 0.6);
    // Tall trees hide some low sky from the whole of this small grove, but the ground right under
    // a crown loses far more of it than ground away from every trunk.
    let (under, open) = (near_with / near_without, far_with / far_without);
    assert!(under < 0.85, "under the canopies: {near_with} with trees, {near_without} without");
    assert!(under < open - 0.1, "darkening under the canopies {under}, on open ground {open}");
    assert!(open > 0.85, "open ground: {far_with} with trees, {far_without} without");
}

#[test]
fn verify_checks_the_shared_pack_and_what_tiles_say_of_it() {
    let problems = |dir: &Path| kiln_bake::cli::verify::check(dir).unwrap().0;
    assert_eq!(problems(forest()), Vec::<String>::new(), "a fresh bake verifies");
    let copy = scratch("trees-verify").join("grove");
    kiln_e2e::copy_dir(forest(), &copy);
    let shared = copy.join("shared/tree-prototypes.kpack");
    // The trees pack of the same world with another seed: other prototypes, so its hash is not
    // the one the manifest and the tiles record.
    let dir = scratch("trees-verify-other");
    let world = dir.join("grove.toml");
    std::fs::write(&world, world_text("grove", 16, true).replace("seed = 7", "seed = 8")).unwrap();
    assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", dir.to_str().unwrap(), "--quiet", "--no-cache"]), 0);
    std::fs::copy(dir.join("grove/shared/tree-prototypes.kpack"), &shared).unwrap();
    let found = problems(&copy);
    assert!(found.iter().any(|p| p.contains("tree-prototypes.kpack") && p.contains("does not match the manifest")), "{found:?}");
    std::fs::remove_file(&shared).unwrap();
    let found = problems(&copy);
    assert!(found.iter().any(|p| p.contains("tree-prototypes.kpack") && p.contains("no such file")), "{found:?}");
}

/// xxh3 of every file of the grove's bake: any change of the trees' output shows here, so that it
/// is made on purpose with a bump of `TREES_VERSION` (`bake/src/pipeline/trees.rs`). Tree bakes are
/// the same bytes on other machines: the forest and the default world baked on the H200 host (Intel,
/// AVX-512, 16 threads) matched this AMD machine's packs file for file (see BENCHMARKS.md).
const GROVE_PACKS: &str = "\
manifest.kpack 0f8445c94e4aa4a0
shared/tree-prototypes.kpack 8a77c2ff84833127
tiles/L0_0_0.kpack 6ed04293c620198a
tiles/L0_0_1.kpack de0568f66c23964a
tiles/L0_0_2.kpack c67df10ebef3c490
tiles/L0_0_3.kpack ad50f2ca73d60f41
tiles/L0_1_0.kpack 74ac9945582a9ba5
tiles/L0_1_1.kpack ff82677565bebb5f
tiles/L0_1_2.kpack 7ebba20488aae094
tiles/L0_1_3.kpack 141af2563707001f
tiles/L0_2_0.kpack 707e1ef557b16033
tiles/L0_2_1.kpack ed2a316389f31348
tiles/L0_2_2.kpack 4bb065c533e458a4
tiles/L0_2_3.kpack 56be0a2ea1d9ad2e
tiles/L0_3_0.kpack 0fc4355a4ae2bc78
tiles/L0_3_1.kpack f319d4570f7a74d5
tiles/L0_3_2.kpack 7b5b6907bb9aee15
tiles/L0_3_3.kpack d4beea6f9e45a14f
tiles/L1_0_0.kpack 1504132f362cf250
tiles/L1_0_1.kpack e47d1fd3fddad5ef
tiles/L1_1_0.kpack d0bf9a2d92482cf7
tiles/L1_1_1.kpack 187c6f85baef62e0
tiles/L2_0_0.kpack d5c4f784649c345c
";

#[test]
fn the_groves_packs_are_the_pinned_bytes() {
    let line =
        |(path, bytes): (PathBuf, Vec<u8>)| format!("{} {:016x}\n", path.to_string_lossy().replace('\\', "/"), xxhash_rust::xxh3::xxh3_64(&bytes));
    let got: String = files_under(forest()).into_iter().map(line).collect();
    assert_eq!(got, GROVE_PACKS, "the grove's packs changed; if that is deliberate, pin them (and bump TREES_VERSION if a trees product's output changed for the same inputs):\n{got}");
}
