//! Grass, end to end: the tiny world with `[grass]` and a hand-made overhang, baked through the CLI,
//! its packs read back and checked for what the issue asks: every patch's levels keep the blade area,
//! merge each blade once and halve the count; every blade that may be drawn stands on the ground
//! open to the sky (re-derived here from the level-0 terrain meshes, never from the baker's map), so
//! never in a cave nor under the overhang; nothing on ground steeper than the limit; grass on open
//! ground; the same bytes whatever the threads, the run or the cache; `kiln verify` passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kiln_e2e::{exported_density, files_under, kiln, manifest, repo_root, scratch, tile_contents};
use kiln_formats::sections::{GrassPatches, GrassTile, SharedPacks};
use kiln_formats::{Pack, TileId};

const MAX_SLOPE: f32 = 35.0;

/// The beam of the overhang: a bar of solid 1 unit square at z 3–4 from a pillar at x = 9 out to
/// x = 12, at y = 10, over the ground (about z = 1 there).
const BEAM: ([f32; 2], [f32; 2]) = ([9.0, 9.5], [12.5, 10.5]);

fn world_text(name: &str) -> String {
    let tiny = std::fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    let mut text = tiny.replace("name = \"tiny\"", &format!("name = \"{name}\""));
    text = text.replace("[floaters]", "[brushes]\nfile = \"beam.brushes.toml\"\n\n[floaters]");
    text.push_str(&format!("\n[grass]\ndensity = 300.0\npatches = 6\nmax_slope = {MAX_SLOPE}\n"));
    text
}

const BRUSHES: &str = r#"
# A pillar from the ground up to z = 4 at (9, 10) …
[[stroke]]
shape = "cube"
radius = 0.5
weight = 3.0
position = [9.0, 10.0, 0.0]
to = [9.0, 10.0, 3.5]
spacing = 0.25
# … and a beam from its top out over the ground: an overhang.
[[stroke]]
shape = "cube"
radius = 0.5
weight = 3.0
position = [9.0, 10.0, 3.5]
to = [12.0, 10.0, 3.5]
spacing = 0.25
"#;

/// Bakes the meadow into a scratch directory of its own, `label` (tests run in parallel).
fn bake(label: &str, extra: &[&str]) -> PathBuf {
    let dir = scratch(&format!("grass-{label}"));
    let world = dir.join("meadow.toml");
    std::fs::write(&world, world_text("meadow")).unwrap();
    std::fs::write(dir.join("beam.brushes.toml"), BRUSHES).unwrap();
    let out = dir.join("out");
    let mut args = vec!["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(extra);
    assert_eq!(kiln(&args), 0, "bake meadow");
    out.join("meadow")
}

/// The meadow baked once per test binary, without a cache.
fn meadow() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| bake("shared", &["--no-cache"]))
}

fn patches(dir: &Path) -> (GrassPatches, u64) {
    let shared: SharedPacks = Pack::open(&dir.join("manifest.kpack")).unwrap().require().unwrap();
    let entry = shared.get("grass-patches").expect("SHRD lists the grass pack");
    let bytes = std::fs::read(dir.join(&entry.path)).unwrap();
    assert_eq!(xxhash_rust::xxh3::xxh3_64(&bytes), entry.content_hash);
    (Pack::from_bytes(bytes).unwrap().require().unwrap(), entry.content_hash)
}

fn grass_tiles(dir: &Path) -> BTreeMap<TileId, GrassTile> {
    manifest(dir)
        .nodes
        .iter()
        .map(|n| {
            let id = TileId::new(n.level, n.x, n.y);
            (id, tile_contents(dir, id).grass.expect("every tile of a world with grass has GRSS"))
        })
        .collect()
}

/// The density of the whole world, put together from `kiln export --density` of every level-0 tile.
struct Density {
    dims: [usize; 3],
    voxel: f32,
    data: Vec<f32>,
}

impl Density {
    fn of(dir: &Path) -> Density {
        let (dims, data) = exported_density(dir, "grass-density");
        Density { dims, voxel: manifest(dir).voxel_size, data }
    }

    fn get(&self, i: usize, j: usize, k: usize) -> f32 {
        self.data[i + self.dims[0] * (j + self.dims[1] * k)]
    }

    /// The height of the ground open to the sky at (x, y): walking down the vertical line from the
    /// top of the volume, the first place where the trilinearly interpolated density turns solid.
    fn top(&self, x: f32, y: f32) -> Option<f32> {
        let (u, v) = (x / self.voxel, y / self.voxel);
        if u < 0.0 || v < 0.0 || u > (self.dims[0] - 1) as f32 || v > (self.dims[1] - 1) as f32 {
            return None;
        }
        let (i, j) = ((u as usize).min(self.dims[0] - 2), (v as usize).min(self.dims[1] - 2));
        let (fx, fy) = (u - i as f32, v - j as f32);
        let at = |k: usize| {
            let lo = self.get(i, j, k) * (1.0 - fx) + self.get(i + 1, j, k) * fx;
            let hi = self.get(i, j + 1, k) * (1.0 - fx) + self.get(i + 1, j + 1, k) * fx;
            lo * (1.0 - fy) + hi * fy
        };
        let mut above = at(self.dims[2] - 1);
        if above > 0.0 {
            return None;
        }
        for k in (0..self.dims[2] - 1).rev() {
            let here = at(k);
            if here > 0.0 {
                return Some((k as f32 + here / (here - above)) * self.voxel);
            }
            above = here;
        }
        None
    }

    /// The rise of the ground open to the sky around (x, y), in degrees, from its heights a quarter
    /// voxel away on either side along X and Y (the interpolated density's surface has kinks at
    /// voxel borders: this is its slope at the grass map's resolution, half a voxel).
    fn slope(&self, x: f32, y: f32) -> Option<f32> {
        let h = 0.25 * self.voxel;
        let gx = (self.top(x + h, y)? - self.top(x - h, y)?) / (2.0 * h);
        let gy = (self.top(x, y + h)? - self.top(x, y - h)?) / (2.0 * h);
        Some((gx * gx + gy * gy).sqrt().atan().to_degrees())
    }
}

#[test]
fn every_patch_keeps_its_area_merges_each_blade_once_and_halves_per_level() {
    let (gpat, _) = patches(meadow());
    assert_eq!(gpat.patches.len(), 6);
    assert_eq!(gpat.levels(), 6);
    assert!(gpat.tint.iter().all(|c| (0.0..=1.0).contains(c)) && gpat.tint[1] > gpat.tint[0], "{:?}", gpat.tint);
    for (p, patch) in gpat.patches.iter().enumerate() {
        let area = |k: usize| patch.levels[k].blades.iter().map(|b| 0.5 * f64::from(b.width) * f64::from(b.length)).sum::<f64>();
        let a0 = area(0);
        assert!(patch.levels[0].blades.len() >= 300, "patch {p}: {} blades", patch.levels[0].blades.len());
        for k in 1..patch.levels.len() {
            assert!((area(k) - a0).abs() <= 1e-5 * a0, "patch {p} level {k}: area {} against {a0}", area(k));
            let (prev, here) = (&patch.levels[k - 1].blades, &patch.levels[k].blades);
            let fall = 1.0 - here.len() as f64 / prev.len() as f64;
            assert!((0.4..=0.6).contains(&fall), "patch {p} level {k}: {} → {} blades", prev.len(), here.len());
            // Each blade of level k is made of one or two of level k − 1 (merged at most once).
            let mut children = vec![0u32; here.len()];
            for b in prev {
                children[b.parent as usize] += 1;
            }
            assert!(children.iter().all(|&c| c == 1 || c == 2), "patch {p} level {k}: a blade with {:?} children", children.iter().max());
        }
        assert!(patch.levels.last().unwrap().blades.iter().all(|b| b.parent == u32::MAX));
    }
}

#[test]
fn every_blade_stands_on_the_ground_open_to_the_sky() {
    let dir = meadow();
    let m = manifest(dir);
    let voxel = m.voxel_size;
    let (gpat, _) = patches(dir);
    let ground = Density::of(dir);
    let (mut blades, mut on_beam) = (0usize, 0usize);
    for (id, g) in grass_tiles(dir).iter().filter(|(id, _)| id.level == 0) {
        for inst in &g.instances {
            for b in &gpat.patches[usize::from(inst.patch)].levels[0].blades {
                let q = inst.world_xy(b.position, gpat.patch_size);
                if g.keep_at(q[0], q[1]) == 0.0 {
                    continue;
                }
                blades += 1;
                let z = g.height_at(q[0], q[1]);
                let top = ground.top(q[0], q[1]).unwrap_or_else(|| panic!("no ground under a blade at {q:?} in {id}"));
                assert!((z - top).abs() <= 0.5 * voxel, "a blade at {q:?} in {id} stands at {z}, the ground open to the sky at {top}");
                if (0..2).all(|a| q[a] > BEAM.0[a] && q[a] < BEAM.1[a]) {
                    on_beam += 1;
                    assert!(z > 3.0, "a blade under the overhang at {q:?}, z {z}");
                }
            }
        }
    }
    assert!(blades > 10_000, "only {blades} blades may be drawn");
    // The beam's top is level open ground too: grass grows there, never below it.
    assert!(on_beam > 0, "no grass on the beam's top");
}

#[test]
fn grass_keeps_off_steep_ground_and_covers_open_ground() {
    let dir = meadow();
    let ground = Density::of(dir);
    let (mut samples, mut grassy, mut open_flat, mut open_flat_grassy) = (0usize, 0usize, 0usize, 0usize);
    for (id, g) in grass_tiles(dir).iter().filter(|(id, _)| id.level == 0) {
        let n = g.size as usize;
        for j in 0..n {
            for i in 0..n {
                let (x, y) = (g.origin[0] + i as f32 * g.spacing, g.origin[1] + j as f32 * g.spacing);
                let keep = g.keep[j * n + i];
                let Some(slope) = ground.slope(x, y) else { continue };
                samples += 1;
                if keep > 0 {
                    grassy += 1;
                    assert!(slope <= MAX_SLOPE + 1.0, "grass at ({x}, {y}) in {id} on ground sloping {slope}°");
                }
                if slope < 5.0 {
                    open_flat += 1;
                    open_flat_grassy += usize::from(keep > 0);
                }
            }
        }
    }
    assert!(grassy * 5 > samples, "{grassy} of {samples} level-0 samples grow grass");
    assert!(open_flat_grassy * 2 > open_flat, "{open_flat_grassy} of {open_flat} flat samples grow grass");
}

#[test]
fn every_tile_has_its_map_and_only_level_0_tiles_have_instances_that_tile_them() {
    let dir = meadow();
    let m = manifest(dir);
    let (gpat, hash) = patches(dir);
    let tile_world = m.tile_voxels as f32 * m.voxel_size;
    for (id, g) in grass_tiles(dir) {
        assert_eq!(g.patches_hash, hash, "{id} names the shared pack by its hash");
        assert_eq!(g.size, 2 * m.tile_voxels + 1);
        let span = tile_world * (1u32 << id.level) as f32;
        assert_eq!(g.origin, [id.x as f32 * span, id.y as f32 * span]);
        assert!((g.spacing * (g.size - 1) as f32 - span).abs() < 1e-4);
        if id.level > 0 {
            assert!(g.instances.is_empty(), "{id} lists instances");
            continue;
        }
        for inst in &g.instances {
            assert!(usize::from(inst.patch) < gpat.patches.len() && inst.rotation < 4 && (0.8..=1.2).contains(&inst.height_scale));
            // Patches tile the tile exactly: their corners are multiples of the patch size within it.
            for a in 0..2 {
                let k = inst.origin[a] / gpat.patch_size;
                assert!((k - k.round()).abs() < 1e-4, "{id}: a patch at {:?}", inst.origin);
                assert!(inst.origin[a] >= g.origin[a] - 1e-4 && inst.origin[a] + gpat.patch_size <= g.origin[a] + span + 1e-4);
            }
        }
    }
}

#[test]
fn grass_bakes_are_byte_identical_across_threads_runs_and_the_cache() {
    let files = files_under(meadow());
    assert!(files.keys().any(|p| p.ends_with("grass-patches.kpack")), "a shared grass pack was written");
    let one = bake("one-thread", &["--no-cache", "--jobs", "1"]);
    assert_eq!(files_under(&one), files, "--jobs 1 against the default");
    let cache = scratch("grass-cache");
    let cached = bake("cached", &["--cache", cache.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(files_under(&cached), files, "a cached bake against an uncached one");
    let again = bake("again", &["--cache", cache.to_str().unwrap()]);
    assert_eq!(files_under(&again), files, "a bake read back from the cache");
}

#[test]
fn verify_passes_on_a_bake_with_grass() {
    let problems = kiln_bake::cli::verify::check(meadow()).unwrap().0;
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn a_change_of_grass_alone_rebakes_grass_and_traces_no_light() {
    use kiln_bake::pipeline::{bake as bake_world, progress::NoProgress, BakeOptions};
    let dir = scratch("grass-rebake");
    let world = dir.join("meadow.toml");
    std::fs::write(dir.join("beam.brushes.toml"), BRUSHES).unwrap();
    let opts = BakeOptions { cache: Some(dir.join("cache")), ..BakeOptions::new(dir.join("out")) };
    let bake = |text: String| {
        std::fs::write(&world, text).unwrap();
        bake_world(&kiln_bake::world::load_world(&world).unwrap(), &opts, &NoProgress).unwrap()
    };
    bake(world_text("meadow"));
    let report = bake(world_text("meadow").replace("density = 300.0", "density = 250.0"));
    let tally = |name: &str| report.tallies.iter().find(|(n, _)| *n == name).map(|(_, t)| (t.cached, t.computed));
    let tiles = manifest(&dir.join("out/meadow")).nodes.len();
    assert_eq!(tally("grass"), Some((0, tiles)), "every tile's grass is rebaked");
    assert_eq!(tally("tile lighting"), Some((tiles, 0)), "tile lighting comes from the cache");
    let lighting = report.stages.iter().find(|s| s.name == "lighting").unwrap();
    assert_eq!(lighting.detail, "unchanged (cached)", "light transport did not run");
}

#[test]
fn a_world_without_grass_has_no_grass_sections_nor_pack() {
    let dir = kiln_e2e::tiny_bake();
    let shared: Option<SharedPacks> = Pack::open(&dir.join("manifest.kpack")).unwrap().get().unwrap();
    assert!(shared.is_none_or(|s| s.get("grass-patches").is_none()));
    assert!(manifest(dir).nodes.iter().all(|n| tile_contents(dir, TileId::new(n.level, n.x, n.y)).grass.is_none()));
}
