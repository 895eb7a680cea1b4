//! Grass in the CLI: `kiln export --grass-patch`, `kiln verify` of the grass pack and of what tiles
//! say of it, `kiln inspect` of `GPAT`, and `kiln diff` of grass packs, on small synthetic bakes built
//! with the formats' writers (a manifest with `SHRD`, `shared/grass-patches.kpack`, 2×2 level-0 tiles
//! and one level-1 tile, each with `GRSS`).

use std::path::{Path, PathBuf};
use std::process::Command;

use kiln_e2e::{kiln, scratch};
use kiln_formats::sections::{
    GrassBlade, GrassInstance, GrassLevel, GrassPatch, GrassPatches, GrassTile, Manifest, PackInfo, PackKind, SharedPack, SharedPacks, TreeInstances,
    NO_PARENT,
};
use kiln_formats::{PackBuilder, TileContents, TileId};
use serde_json::Value;

const WRITER: [u16; 3] = [0, 1, 0];
const PATCHES: usize = 3;
const SEGMENTS: [u32; 6] = [4, 3, 2, 1, 1, 1];

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    v.map(|c| c / n)
}

/// A blade leaning 0.2 toward angle `a`, its width axis horizontal.
fn blade(x: f32, y: f32, a: f32, length: f32, width: f32, bend: f32) -> GrassBlade {
    let (s, c) = a.sin_cos();
    let d = normalize([0.2 * c, 0.2 * s, 1.0]);
    let axis = [-s, c, 0.0];
    // With n = axis × d, d × n = axis: the width runs along `axis`.
    let n = normalize([axis[1] * d[2] - axis[2] * d[1], axis[2] * d[0] - axis[0] * d[2], axis[0] * d[1] - axis[1] * d[0]]);
    GrassBlade { position: [x, y], direction: d, normal: n, length, width, bend, color: [0.1 + 0.05 * (0.37 * a).sin(), 0.5, 0.1], parent: NO_PARENT }
}

/// Blades `2i` and `2i + 1` merged into blade `i` (area-weighted, `w·l` kept); an odd last one copied.
fn merge(prev: &mut [GrassBlade]) -> Vec<GrassBlade> {
    let mut out = Vec::new();
    for (i, pair) in prev.chunks_mut(2).enumerate() {
        for b in pair.iter_mut() {
            b.parent = i as u32;
        }
        let [a, b] = match pair {
            [a, b] => [*a, *b],
            [a] => {
                out.push(GrassBlade { parent: NO_PARENT, ..*a });
                continue;
            }
            _ => unreachable!(),
        };
        let (ka, kb) = (a.area() / (a.area() + b.area()), b.area() / (a.area() + b.area()));
        let mix = |p: f32, q: f32| ka * p + kb * q;
        let width = a.width + b.width;
        let d = normalize([0, 1, 2].map(|k| mix(a.direction[k], b.direction[k])));
        let n0 = [0, 1, 2].map(|k| mix(a.normal[k], b.normal[k]));
        let dot = n0[0] * d[0] + n0[1] * d[1] + n0[2] * d[2];
        out.push(GrassBlade {
            position: [mix(a.position[0], b.position[0]), mix(a.position[1], b.position[1])],
            direction: d,
            normal: normalize([0, 1, 2].map(|k| n0[k] - dot * d[k])),
            length: (a.width * a.length + b.width * b.length) / width,
            width,
            bend: mix(a.bend, b.bend),
            color: [0, 1, 2].map(|k| mix(a.color[k], b.color[k])),
            parent: NO_PARENT,
        });
    }
    out
}

/// `PATCHES` patches of 8×8 blades (6 levels: 64, 32, … 2), shifted by `shift` in x, with `bend`.
fn patches(shift: f32, bend: f32) -> GrassPatches {
    let patches = (0..PATCHES)
        .map(|p| {
            let mut blades = Vec::new();
            for j in 0..8 {
                for i in 0..8 {
                    let k = (p * 64 + j * 8 + i) as f32;
                    let (x, y) = (0.0625 + 0.125 * i as f32 + 0.02 * (k * 0.7).sin() + shift, 0.0625 + 0.125 * j as f32 + 0.02 * (k * 1.3).cos());
                    blades.push(blade(x, y, k, 0.05 + 0.01 * (k * 0.3).sin(), 0.004 + 0.001 * (k * 0.9).cos(), bend));
                }
            }
            let mut levels = vec![GrassLevel { segments: SEGMENTS[0], blades }];
            for &segments in &SEGMENTS[1..] {
                let next = merge(&mut levels.last_mut().unwrap().blades);
                levels.push(GrassLevel { segments, blades: next });
            }
            GrassPatch { levels, flowers: Vec::new() }
        })
        .collect();
    GrassPatches { patch_size: 1.0, tint: [0.12, 0.5, 0.1], patches }
}

fn ground(id: TileId, hash: u64) -> GrassTile {
    let size = 5u32;
    let cells = (size * size) as usize;
    let side = 4.0 * (1 << id.level) as f32;
    let origin = [id.x as f32 * side, id.y as f32 * side];
    let instances = if id.level == 0 {
        (0..4)
            .map(|i| GrassInstance {
                origin: [origin[0] + i as f32, origin[1]],
                rotation: (i % 4) as u8,
                patch: (i % PATCHES) as u16,
                height_scale: 1.0,
            })
            .collect()
    } else {
        Vec::new()
    };
    GrassTile {
        patches_hash: hash,
        origin,
        spacing: side / (size - 1) as f32,
        size,
        height_min: 0.0,
        height_step: 0.01,
        heights: (0..cells).map(|i| (i * 3) as u16).collect(),
        keep: vec![200; cells],
        light: vec![kiln_formats::sections::rgb9e5::encode([0.5, 0.6, 0.7]); cells],
        instances,
    }
}

/// Writes a bake into `dir`: the grass pack (unless `grass` is `None`) listed in `SHRD`, and five
/// tiles whose `GRSS` name its hash; `edit` may change any tile before it is written.
fn write_bake(dir: &Path, grass: Option<&GrassPatches>, edit: impl Fn(&mut TileContents, u64)) {
    let info = |kind| PackInfo { kind, world_name: "meadow".into(), inputs_hash: 7 };
    let shared = grass.map(|g| {
        let mut b = PackBuilder::new(WRITER);
        b.add(&info(PackKind::Shared { product: "grass-patches".into() })).unwrap().add(g).unwrap();
        b.to_bytes().unwrap()
    });
    let hash = shared.as_ref().map_or(0x5eed, |s| xxhash_rust::xxh3::xxh3_64(s));
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut nodes = Vec::new();
    let ids = [TileId::new(0, 0, 0), TileId::new(0, 1, 0), TileId::new(0, 0, 1), TileId::new(0, 1, 1), TileId::new(1, 0, 0)];
    for id in ids {
        let mut tile = TileContents::new(id, "meadow", 9);
        tile.grass = Some(ground(id, hash));
        edit(&mut tile, hash);
        let bytes = tile.to_pack(WRITER).unwrap();
        let node = tile.node(&bytes, 0.0);
        files.push((node.path.clone(), bytes));
        nodes.push(node);
    }
    let manifest = Manifest {
        world_name: "meadow".into(),
        world_hash: 7,
        baker_version: "test".into(),
        voxel_size: 1.0,
        volume_dims: [8, 8, 8],
        tile_voxels: 4,
        tiles_per_axis: [2, 2],
        levels: 2,
        bounds_min: [0.0; 3],
        bounds_max: [8.0; 3],
        nodes,
    };
    let mut m = PackBuilder::new(WRITER);
    m.add(&info(PackKind::Manifest)).unwrap().add(&manifest).unwrap();
    if let Some(s) = shared {
        let path = "shared/grass-patches.kpack".to_owned();
        m.add(&SharedPacks(vec![SharedPack { product: "grass-patches".into(), path: path.clone(), content_hash: hash, file_len: s.len() as u64 }]))
            .unwrap();
        files.push((path, s));
    }
    files.push(("manifest.kpack".into(), m.to_bytes().unwrap()));
    for (rel, bytes) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

fn bake(name: &str, grass: &GrassPatches) -> PathBuf {
    let dir = scratch(name).join("meadow");
    write_bake(&dir, Some(grass), |_, _| {});
    dir
}

/// A binary PLY as `kiln export --grass-patch` writes it: per vertex x y z nx ny nz (f32) and
/// red green blue (u8), then triangles.
struct Ply {
    positions: Vec<[f32; 3]>,
    colors: Vec<[u8; 3]>,
    faces: Vec<[u32; 3]>,
}

fn read_ply(bytes: &[u8]) -> Ply {
    let end = bytes.windows(11).position(|w| w == b"end_header\n").expect("PLY header") + 11;
    let header = std::str::from_utf8(&bytes[..end]).unwrap();
    assert!(header.contains("property uchar red\nproperty uchar green\nproperty uchar blue\n"), "{header}");
    let count =
        |element: &str| -> usize { header.lines().find_map(|l| l.strip_prefix(&format!("element {element} "))).expect(element).parse().unwrap() };
    let (nv, nf) = (count("vertex"), count("face"));
    let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let positions = (0..nv).map(|v| std::array::from_fn(|c| f32_at(end + v * 27 + c * 4))).collect();
    let colors = (0..nv).map(|v| std::array::from_fn(|c| bytes[end + v * 27 + 24 + c])).collect();
    let faces_at = end + nv * 27;
    assert_eq!(bytes.len(), faces_at + nf * 13, "PLY length");
    let faces = (0..nf)
        .map(|f| {
            assert_eq!(bytes[faces_at + f * 13], 3);
            std::array::from_fn(|c| u32_at(faces_at + f * 13 + 1 + c * 4))
        })
        .collect();
    Ply { positions, colors, faces }
}

fn mesh_area(positions: &[[f32; 3]], faces: &[[u32; 3]]) -> f64 {
    faces
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| positions[i as usize].map(f64::from));
            let (u, v) = ([0, 1, 2].map(|k| b[k] - a[k]), [0, 1, 2].map(|k| c[k] - a[k]));
            let x = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
            0.5 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt()
        })
        .sum()
}

#[test]
fn a_patch_level_exports_as_ply_with_the_levels_triangles_area_and_bounds() {
    for bend in [0.0, 0.4] {
        let g = patches(0.0, bend);
        let dir = bake(&format!("grass-export-ply-{bend}"), &g);
        for level in 0..SEGMENTS.len() {
            let out = dir.join(format!("p1-l{level}.ply"));
            let args = [
                "export",
                dir.to_str().unwrap(),
                "--grass-patch",
                "1",
                "--level",
                &level.to_string(),
                "--format",
                "ply",
                "--out",
                out.to_str().unwrap(),
            ];
            assert_eq!(kiln(&args), 0);
            let ply = read_ply(&std::fs::read(&out).unwrap());
            let l = &g.patches[1].levels[level];
            assert_eq!(ply.faces.len(), l.blades.len() * (2 * l.segments as usize - 1), "level {level}");
            assert!(ply.faces.iter().flatten().all(|&i| (i as usize) < ply.positions.len()));
            let want: f64 = l.blades.iter().map(|b| f64::from(b.width) * f64::from(b.length) / 2.0).sum();
            let got = mesh_area(&ply.positions, &ply.faces);
            let rel = (got - want).abs() / want;
            assert!(rel < if bend == 0.0 { 1e-5 } else { 0.03 }, "bend {bend} level {level}: mesh area {got}, Σ w·l/2 {want}");
            let (len, wid) = l.blades.iter().fold((0f32, 0f32), |(a, b), x| (a.max(x.length), b.max(x.width)));
            for p in &ply.positions {
                assert!(p[0] >= -len && p[0] <= 1.0 + len && p[1] >= -len && p[1] <= 1.0 + len, "{p:?} outside the patch");
                assert!(p[2] >= -wid && p[2] <= len, "{p:?} above the longest blade");
            }
            // Linear (0.1.., 0.5, 0.1) in sRGB: green near 188, red and blue far lower.
            assert!(ply.colors.iter().all(|c| (185..=190).contains(&c[1]) && c[0] < 150 && c[2] < 100), "{:?}", &ply.colors[..3]);
        }
    }
}

#[test]
fn a_patch_level_exports_as_glb_with_colours() {
    let g = patches(0.0, 0.3);
    let dir = bake("grass-export-glb", &g);
    let out = dir.join("p0.glb");
    // The shared pack itself works as the input too.
    let pack = dir.join("shared/grass-patches.kpack");
    assert_eq!(kiln(&["export", pack.to_str().unwrap(), "--grass-patch", "0", "--level", "2", "--out", out.to_str().unwrap()]), 0);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[0..4], b"glTF");
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let prim = &doc["meshes"][0]["primitives"][0];
    let accessor = |name: &str| &doc["accessors"][prim["attributes"][name].as_u64().unwrap() as usize];
    let l = &g.patches[0].levels[2];
    assert_eq!(accessor("POSITION")["count"].as_u64(), Some((l.blades.len() * (2 * l.segments as usize + 1)) as u64));
    assert_eq!(accessor("COLOR_0")["type"], "VEC3");
    let indices = &doc["accessors"][prim["indices"].as_u64().unwrap() as usize];
    assert_eq!(indices["count"].as_u64(), Some((3 * l.blades.len() * (2 * l.segments as usize - 1)) as u64));
    assert_eq!(doc["materials"][0]["doubleSided"], true);
}

#[test]
fn bad_patch_indices_levels_and_bakes_without_grass_are_clear_errors() {
    let dir = bake("grass-export-bad", &patches(0.0, 0.0));
    let out = dir.join("x.ply");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_kiln-under-test")).args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let d = dir.to_str().unwrap();
    let (code, err) = run(&["export", d, "--grass-patch", "3", "--format", "ply", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("grass-patches.kpack") && err.contains("no grass patch 3") && err.contains("0 to 2"), "{err}");
    let (code, err) = run(&["export", d, "--grass-patch", "0", "--level", "6", "--format", "ply", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no level 6") && err.contains("levels 0 to 5"), "{err}");
    assert_eq!(run(&["export", d, "--grass-patch", "0", "--tile", "0,0", "--out", out.to_str().unwrap()]).0, Some(2));
    assert!(!out.exists());
    let bare = scratch("grass-export-bare").join("meadow");
    write_bake(&bare, None, |t, _| t.grass = None);
    let (code, err) = run(&["export", bare.to_str().unwrap(), "--grass-patch", "0", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("manifest.kpack") && err.contains("no grass"), "{err}");
}

fn problems(dir: &Path) -> Vec<String> {
    kiln_bake::cli::verify::check(dir).unwrap().0
}

fn assert_reported(found: &[String], file: &str, what: &str) {
    assert!(found.iter().any(|p| p.contains(file) && p.contains(what)), "expected {file}: …{what}… in {found:#?}");
}

#[test]
fn verify_checks_the_grass_pack_and_what_tiles_say_of_it() {
    let g = patches(0.0, 0.2);
    let good = bake("grass-verify-good", &g);
    assert_eq!(problems(&good), Vec::<String>::new(), "a sound bake verifies");
    assert_eq!(kiln(&["verify", good.to_str().unwrap()]), 0);

    // A tile whose GRSS names another pack.
    let dir = scratch("grass-verify-hash").join("meadow");
    write_bake(&dir, Some(&g), |t, hash| {
        if t.info.kind == (PackKind::Tile { level: 0, x: 1, y: 0 }) {
            t.grass.as_mut().unwrap().patches_hash = hash ^ 1;
        }
    });
    let found = problems(&dir);
    assert_reported(&found, "L0_1_0.kpack", "references patches pack");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(kiln(&["verify", dir.to_str().unwrap()]), 1);

    // An instance of a patch the pack does not have.
    let dir = scratch("grass-verify-patch").join("meadow");
    write_bake(&dir, Some(&g), |t, _| {
        if t.info.kind == (PackKind::Tile { level: 0, x: 0, y: 1 }) {
            t.grass.as_mut().unwrap().instances[2].patch = PATCHES as u16;
        }
    });
    assert_reported(&problems(&dir), "L0_0_1.kpack", "uses patch 3 of the shared pack's 3");

    // Instances in a level-1 tile.
    let dir = scratch("grass-verify-level").join("meadow");
    write_bake(&dir, Some(&g), |t, hash| {
        if t.info.kind == (PackKind::Tile { level: 1, x: 0, y: 0 }) {
            t.grass.as_mut().unwrap().instances = ground(TileId::new(0, 0, 0), hash).instances;
        }
    });
    assert_reported(&problems(&dir), "L1_0_0.kpack", "patch instances in a level-1 tile");

    // Grass in tiles of a bake without a grass pack.
    let dir = scratch("grass-verify-none").join("meadow");
    write_bake(&dir, None, |_, _| {});
    let found = problems(&dir);
    assert_eq!(found.len(), 5, "one line per tile with grass: {found:?}");
    assert_reported(&found, "L0_0_0.kpack", "lists no \"grass-patches\" shared pack");

    // The pack replaced by another (other patches): its hash is not the manifest's, nor the tiles'.
    let dir = scratch("grass-verify-swapped").join("meadow");
    write_bake(&dir, Some(&g), |_, _| {});
    let other = scratch("grass-verify-other").join("meadow");
    write_bake(&other, Some(&patches(0.01, 0.2)), |_, _| {});
    let shared = dir.join("shared/grass-patches.kpack");
    std::fs::copy(other.join("shared/grass-patches.kpack"), &shared).unwrap();
    assert_reported(&problems(&dir), "grass-patches.kpack", "does not match the manifest");
    std::fs::remove_file(&shared).unwrap();
    assert_reported(&problems(&dir), "grass-patches.kpack", "no such file");

    // A grass pack without GPAT.
    let dir = scratch("grass-verify-empty").join("meadow");
    write_bake(&dir, Some(&g), |_, _| {});
    let mut b = PackBuilder::new(WRITER);
    b.add(&PackInfo { kind: PackKind::Shared { product: "grass-patches".into() }, world_name: "meadow".into(), inputs_hash: 7 }).unwrap();
    std::fs::write(dir.join("shared/grass-patches.kpack"), b.to_bytes().unwrap()).unwrap();
    assert_reported(&problems(&dir), "grass-patches.kpack", "has no GPAT");

    // Trees whose instances name the grass pack instead of a trees pack.
    let dir = scratch("grass-verify-trees").join("meadow");
    write_bake(&dir, Some(&g), |t, hash| {
        if t.info.kind == (PackKind::Tile { level: 0, x: 0, y: 0 }) {
            t.trees = Some(TreeInstances { prototypes_hash: hash, instances: Vec::new() });
        }
    });
    assert_reported(&problems(&dir), "L0_0_0.kpack", "holds no tree prototypes");
}

#[test]
fn inspect_summarises_every_level_of_the_patches() {
    let dir = bake("grass-inspect", &patches(0.0, 0.2));
    let o = Command::new(env!("CARGO_BIN_EXE_kiln-under-test")).args(["inspect", dir.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    for (level, per_patch) in [64, 32, 16, 8, 4, 2].into_iter().enumerate() {
        let line = format!("level {level}: {} blades ({per_patch}..{per_patch} per patch)", PATCHES * per_patch);
        assert!(text.contains(&line), "{line} in\n{text}");
    }
    assert!(text.contains("tint: 0.120 0.500 0.100") && text.contains("instances: 4"), "{text}");
    let o = Command::new(env!("CARGO_BIN_EXE_kiln-under-test"))
        .args(["inspect", "--json", dir.join("shared/grass-patches.kpack").to_str().unwrap()])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let summary = &doc["sections"].as_array().unwrap().iter().find(|s| s["kind"] == "GPAT").unwrap()["summary"];
    assert!(summary["level 5"].as_str().unwrap().contains("6 blades"), "{summary}");
    assert!(summary["blade"].as_str().unwrap().starts_with("mean length 0.05"), "{summary}");
}

#[test]
fn diff_judges_moved_blades_by_distance_and_follows_the_pack_hash() {
    let (a, b) = (bake("grass-diff-a", &patches(0.0, 0.2)), bake("grass-diff-b", &patches(0.01, 0.2)));
    let same = bake("grass-diff-same", &patches(0.0, 0.2));
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    assert_eq!(kiln(&["diff", sa, same.to_str().unwrap()]), 0);
    let r = kiln_bake::diff::diff(&a, &b, &kiln_bake::diff::Tolerances { distance: 0.005, ..Default::default() }).unwrap();
    let shared = r.packs.iter().find(|p| p.path == "shared/grass-patches.kpack").expect("the shared packs are paired");
    let gpat = shared.sections.iter().find(|s| s.kind == "GPAT").unwrap();
    assert!(gpat.beyond, "{gpat:#?}");
    let moved = gpat.details["blade_distance_max"].as_f64().unwrap();
    assert!((moved - 0.01).abs() < 1e-6, "{gpat:#?}");
    assert!(gpat.details["area_max_relative"].as_f64().unwrap() < 1e-6, "moving blades keeps their area: {gpat:#?}");
    assert_eq!(gpat.details["parent_changes"], 0);
    // The tiles' GRSS and the manifest's SHRD differ only by the pack's hash: derived, within.
    for p in r.packs.iter().filter(|p| p.path != "shared/grass-patches.kpack") {
        assert!(!p.beyond, "{p:#?}");
    }
    assert_eq!(kiln(&["diff", sa, sb, "--distance", "0.005"]), 1);
    assert_eq!(kiln(&["diff", sa, sb, "--distance", "0.02"]), 0);
}
