//! Trees in the CLI: `kiln export --prototype/--impostor`, `kiln inspect` of the shared trees pack and
//! of a tile's instances, and `kiln diff` of tree packs, on a small synthetic bake built with the
//! formats' writers (a manifest with `SHRD`, `shared/tree-prototypes.kpack`, one tile with `TINS`/`TILT`).

use std::path::Path;
use std::process::Command;

use kiln_e2e::{kiln, scratch};
use kiln_formats::sections::{
    AtlasLevel, ImpostorAtlas, ImpostorLayout, Manifest, PackInfo, PackKind, Rgba8Level, SharedPack, SharedPacks, SpeciesTextures, TreeImpostors,
    TreeInstance, TreeInstances, TreeLighting, TreeLod, TreePrototype, TreePrototypes, TreeTextures,
};
use kiln_formats::{PackBuilder, TileContents, TileId};
use serde_json::Value;

const WRITER: [u16; 3] = [0, 1, 0];

/// A prototype of `lift`-shifted geometry: 4 bark triangles around a trunk and 4 leaf quads.
fn prototype(species: u16, seed: u64, height: f32) -> TreePrototype {
    let mut positions = vec![[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, height]];
    let mut bark = vec![0, 1, 3, 1, 2, 3, 2, 0, 3, 0, 2, 1];
    let mut leaf = Vec::new();
    for q in 0..4u32 {
        let z = height * (0.5 + 0.1 * q as f32);
        let base = positions.len() as u32;
        positions.extend([[0.0, 0.0, z], [0.5, 0.0, z], [0.5, 0.5, z], [0.0, 0.5, z]]);
        leaf.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    bark.truncate(12);
    let n = positions.len();
    let uvs = (0..n).map(|i| [(i % 2) as f32, ((i / 2) % 2) as f32]).collect();
    TreePrototype {
        species,
        seed,
        height,
        crown_radius: 0.5,
        normals: vec![[0.0, 0.0, 1.0]; n],
        uvs,
        ao: (0..n).map(|i| 200 + i as u8).collect(),
        positions,
        bark_indices: bark,
        leaf_indices: leaf,
        lods: [
            TreeLod { bark_index_count: 12, leaf_index_count: 24 },
            TreeLod { bark_index_count: 6, leaf_index_count: 24 },
            TreeLod { bark_index_count: 6, leaf_index_count: 6 },
        ],
    }
}

fn chain(side: u32, rgba: [u8; 4]) -> Vec<Rgba8Level> {
    let mut out = Vec::new();
    let mut s = side;
    loop {
        out.push(Rgba8Level { width: s, height: s, rgba: rgba.repeat((s * s) as usize) });
        if s == 1 {
            return out;
        }
        s /= 2;
    }
}

/// An atlas of 2×2 views of 8 px (16² texels at level 0, four levels) with a gradient in every map.
fn atlas(albedo_bump: u8) -> ImpostorAtlas {
    let levels = (0..4)
        .map(|l| {
            let size = 16u32 >> l;
            let n = (size * size) as usize;
            AtlasLevel {
                size,
                albedo: (0..n).flat_map(|i| [(i % 200) as u8 + albedo_bump, 90, 40, if i % 3 == 0 { 0 } else { 255 }]).collect(),
                normal: (0..n).flat_map(|i| [128, 128, 255, (i % 256) as u8]).collect(),
                depth: (0..n).map(|i| (i * 250) as u16).collect(),
            }
        })
        .collect();
    ImpostorAtlas { layout: ImpostorLayout::Octahedral, grid: 2, view_px: 8, center: [0.0, 0.0, 1.5], radius: 2.0, levels }
}

/// Writes a synthetic bake with trees into `dir`; `albedo_bump` raises every atlas' red channel.
fn make_bake(dir: &Path, albedo_bump: u8) {
    let protos = TreePrototypes {
        species: vec!["oak".into(), "pine".into()],
        prototypes: vec![prototype(0, 1, 3.0), prototype(0, 2, 4.0), prototype(1, 3, 6.0)],
    };
    let textures = TreeTextures {
        species: vec![
            SpeciesTextures { bark: chain(8, [90, 60, 40, 255]), leaf: chain(8, [40, 120, 30, 200]) },
            SpeciesTextures { bark: chain(4, [80, 50, 30, 255]), leaf: chain(16, [30, 100, 40, 128]) },
        ],
    };
    let impostors = TreeImpostors { atlases: (0..3).map(|_| atlas(albedo_bump)).collect() };
    let mut b = PackBuilder::new(WRITER);
    b.add(&PackInfo { kind: PackKind::Shared { product: "tree-prototypes".into() }, world_name: "grove".into(), inputs_hash: 7 }).unwrap();
    b.add(&protos).unwrap().add(&textures).unwrap().add(&impostors).unwrap();
    let shared = b.to_bytes().unwrap();
    let shared_hash = xxhash_rust::xxh3::xxh3_64(&shared);

    let mut tile = TileContents::new(TileId::new(0, 0, 0), "grove", 9);
    let inst = |x: f32, p: u32| TreeInstance { position: [x, 1.0, 0.0], yaw: 0.5, scale: 1.0, tint: [1.0; 3], prototype: p };
    tile.trees = Some(TreeInstances { prototypes_hash: shared_hash, instances: vec![inst(1.0, 0), inst(3.0, 1), inst(5.0, 2), inst(7.0, 2)] });
    tile.tree_lighting = Some(TreeLighting(vec![[[0.5, 0.5, 0.5], [0.1, 0.1, 0.1], [0.3, 0.3, 0.3]]; 4]));
    let tile_bytes = tile.to_pack(WRITER).unwrap();
    let node = tile.node(&tile_bytes, 0.0);

    let manifest = Manifest {
        world_name: "grove".into(),
        world_hash: 7,
        baker_version: "test".into(),
        voxel_size: 1.0,
        volume_dims: [16, 16, 16],
        tile_voxels: 16,
        tiles_per_axis: [1, 1],
        levels: 1,
        bounds_min: [0.0; 3],
        bounds_max: [16.0; 3],
        nodes: vec![node.clone()],
    };
    let mut m = PackBuilder::new(WRITER);
    m.add(&PackInfo { kind: PackKind::Manifest, world_name: "grove".into(), inputs_hash: 7 }).unwrap();
    m.add(&manifest).unwrap();
    let path = "shared/tree-prototypes.kpack".to_owned();
    m.add(&SharedPacks(vec![SharedPack {
        product: "tree-prototypes".into(),
        path: path.clone(),
        content_hash: shared_hash,
        file_len: shared.len() as u64,
    }]))
    .unwrap();
    for (rel, bytes) in [(path, shared), (node.path, tile_bytes), ("manifest.kpack".to_owned(), m.to_bytes().unwrap())] {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

fn bake(name: &str, albedo_bump: u8) -> std::path::PathBuf {
    let dir = scratch(name).join("grove");
    make_bake(&dir, albedo_bump);
    dir
}

/// The JSON chunk and the binary chunk of a GLB, after checking its header.
fn parse_glb(bytes: &[u8]) -> (Value, Vec<u8>) {
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(u32_at(4), 2);
    assert_eq!(u32_at(8), bytes.len());
    let json_len = u32_at(12);
    assert_eq!(&bytes[16..20], b"JSON");
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin_at = 20 + json_len;
    assert_eq!(&bytes[bin_at + 4..bin_at + 8], b"BIN\0");
    let bin = bytes[bin_at + 8..bin_at + 8 + u32_at(bin_at)].to_vec();
    assert_eq!(bin.len(), doc["buffers"][0]["byteLength"].as_u64().unwrap() as usize);
    (doc, bin)
}

fn view_bytes<'a>(doc: &Value, bin: &'a [u8], view: &Value) -> &'a [u8] {
    let v = &doc["bufferViews"][view.as_u64().unwrap() as usize];
    let (o, l) = (v["byteOffset"].as_u64().unwrap() as usize, v["byteLength"].as_u64().unwrap() as usize);
    &bin[o..o + l]
}

#[test]
fn a_prototype_exports_as_glb_with_its_lod_and_textures() {
    let dir = bake("trees-export-glb", 0);
    let expected = [(12, 24), (6, 24), (6, 6)];
    for (lod, (bark, leaf)) in expected.into_iter().enumerate() {
        let out = dir.join(format!("p1-lod{lod}.glb"));
        assert_eq!(kiln(&["export", dir.to_str().unwrap(), "--prototype", "1", "--lod", &lod.to_string(), "--out", out.to_str().unwrap()]), 0);
        let (doc, bin) = parse_glb(&std::fs::read(&out).unwrap());
        let prims = doc["meshes"][0]["primitives"].as_array().unwrap();
        assert_eq!(prims.len(), 2);
        let counts: Vec<u64> = prims.iter().map(|p| doc["accessors"][p["indices"].as_u64().unwrap() as usize]["count"].as_u64().unwrap()).collect();
        assert_eq!(counts, [bark, leaf], "LOD {lod}");
        // Only used vertices: LOD 2 uses the 4 trunk vertices of its 2 bark triangles and one leaf quad.
        let vertices = doc["accessors"][prims[0]["attributes"]["POSITION"].as_u64().unwrap() as usize]["count"].as_u64().unwrap();
        assert_eq!(vertices, [20, 20, 8][lod], "LOD {lod}");
        for p in prims {
            let idx = view_bytes(&doc, &bin, &doc["accessors"][p["indices"].as_u64().unwrap() as usize]["bufferView"]);
            assert!(idx.chunks_exact(4).all(|c| u64::from(u32::from_le_bytes(c.try_into().unwrap())) < vertices));
        }
        assert_eq!(prims[1]["material"], 1);
        let leaves = &doc["materials"][1];
        assert_eq!(
            (leaves["alphaMode"].as_str(), leaves["alphaCutoff"].as_f64(), leaves["doubleSided"].as_bool()),
            (Some("MASK"), Some(0.5), Some(true))
        );
        assert!(doc["materials"][0]["alphaMode"].is_null(), "bark is opaque");
        let images = doc["images"].as_array().unwrap();
        assert_eq!(images.len(), 2);
        for (img, side) in images.iter().zip([8, 8]) {
            assert_eq!(img["mimeType"], "image/png");
            let decoded = image::load_from_memory_with_format(view_bytes(&doc, &bin, &img["bufferView"]), image::ImageFormat::Png).unwrap();
            assert_eq!((decoded.width(), decoded.height()), (side, side));
        }
    }
    // Pine's leaf texture is 16² and its bark 4².
    let out = dir.join("p2.glb");
    assert_eq!(kiln(&["export", dir.to_str().unwrap(), "--prototype", "2", "--out", out.to_str().unwrap()]), 0);
    let (doc, bin) = parse_glb(&std::fs::read(&out).unwrap());
    let sides: Vec<u32> = doc["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| image::load_from_memory(view_bytes(&doc, &bin, &i["bufferView"])).unwrap().width())
        .collect();
    assert_eq!(sides, [4, 16]);
}

#[test]
fn an_impostor_exports_as_png_maps_and_a_header() {
    let dir = bake("trees-export-impostor", 0);
    let out = dir.join("imp");
    // The shared pack itself works as the input too.
    let pack = dir.join("shared/tree-prototypes.kpack");
    assert_eq!(kiln(&["export", pack.to_str().unwrap(), "--impostor", "2", "--out", out.to_str().unwrap()]), 0);
    let header: Value = serde_json::from_slice(&std::fs::read(out.join("impostor-2.json")).unwrap()).unwrap();
    assert_eq!((header["grid"].as_u64(), header["view_px"].as_u64(), header["size"].as_u64()), (Some(2), Some(8), Some(16)));
    assert_eq!(header["layout"], "octahedral");
    assert_eq!(header["radius"].as_f64(), Some(2.0));
    let a = atlas(0);
    for map in ["albedo", "normal", "ao", "depth"] {
        let img = image::open(out.join(header["files"][map].as_str().unwrap())).unwrap();
        assert_eq!((img.width(), img.height()), (16, 16), "{map}");
        match map {
            "albedo" => assert_eq!(img.to_rgba8().into_raw(), a.levels[0].albedo),
            "normal" => assert_eq!(img.color(), image::ColorType::Rgb8),
            "ao" => assert_eq!(img.to_luma8().into_raw(), a.levels[0].normal.chunks(4).map(|t| t[3]).collect::<Vec<_>>()),
            _ => assert_eq!(img.to_luma16().into_raw(), a.levels[0].depth),
        }
    }
}

#[test]
fn bad_indices_and_missing_trees_are_clear_errors() {
    let dir = bake("trees-export-bad", 0);
    let out = dir.join("x.glb");
    assert_eq!(kiln(&["export", dir.to_str().unwrap(), "--prototype", "3", "--out", out.to_str().unwrap()]), 2);
    assert_eq!(kiln(&["export", dir.to_str().unwrap(), "--impostor", "9", "--out", out.to_str().unwrap()]), 2);
    assert_eq!(kiln(&["export", dir.to_str().unwrap(), "--prototype", "0", "--lod", "3", "--out", out.to_str().unwrap()]), 2);
    assert!(!out.exists());
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_kiln-under-test")).args(args).output().unwrap();
    let o = run(&["export", dir.to_str().unwrap(), "--prototype", "3", "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tree-prototypes.kpack") && err.contains("no prototype 3") && err.contains("0 to 2"), "{err}");
    // A bake without trees names its manifest.
    let bare = scratch("trees-export-bare");
    std::fs::write(bare.join("manifest.kpack"), std::fs::read(dir.join("tiles/L0_0_0.kpack")).unwrap()).unwrap();
    let o = run(&["export", bare.to_str().unwrap(), "--prototype", "0", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("manifest.kpack"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn inspect_summarises_species_atlases_and_instances() {
    let dir = bake("trees-inspect", 0);
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_kiln-under-test")).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let text = run(&["inspect", dir.to_str().unwrap()]);
    assert!(text.contains("trees: 3 prototypes"), "{text}");
    assert!(text.contains("oak") && text.contains("2 prototypes, triangles per LOD 12 / 10 / 4, height 3.00..4.00"), "{text}");
    assert!(text.contains("atlases: 3 × octahedral, 2×2 views of 8 px, 4 levels"), "{text}");
    assert!(text.contains("trees: 4 instances") && text.contains("per species: oak 2, pine 2"), "{text}");
    let shared: Value = serde_json::from_str(&run(&["inspect", "--json", dir.join("shared/tree-prototypes.kpack").to_str().unwrap()])).unwrap();
    assert_eq!(shared["trees"]["species"][1]["name"], "pine");
    assert_eq!(shared["trees"]["species"][1]["height"], serde_json::json!([6.0, 6.0]));
    assert!(shared["trees"]["atlases"]["mean_stored_bytes_per_atlas"].as_u64().unwrap() > 0);
    // A tile alone, without its bake around it, counts by prototype index.
    let lone = scratch("trees-inspect-lone").join("L0_0_0.kpack");
    std::fs::copy(dir.join("tiles/L0_0_0.kpack"), &lone).unwrap();
    let tile: Value = serde_json::from_str(&run(&["inspect", "--json", lone.to_str().unwrap()])).unwrap();
    assert_eq!(tile["trees"]["per_prototype"], serde_json::json!({ "0": 1, "1": 1, "2": 2 }));
    assert!(tile["trees"]["per_species"].is_null());
}

#[test]
fn diff_pairs_shared_packs_and_judges_atlases_by_the_image_tolerance() {
    let (a, b) = (bake("trees-diff-a", 0), bake("trees-diff-b", 2));
    let same = bake("trees-diff-same", 0);
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    assert_eq!(kiln(&["diff", sa, same.to_str().unwrap()]), 0);
    let r = kiln_bake::diff::diff(&a, &b, &kiln_bake::diff::Tolerances { image_max: 0.001, image_rms: 0.001, ..Default::default() }).unwrap();
    let shared = r.packs.iter().find(|p| p.path == "shared/tree-prototypes.kpack").expect("the shared packs are paired");
    let timp = shared.sections.iter().find(|s| s.kind == "TIMP").unwrap();
    assert!(timp.beyond, "{timp:#?}");
    assert!((timp.details["albedo"]["max_abs"].as_f64().unwrap() - 2.0 / 255.0).abs() < 1e-9, "{timp:#?}");
    assert_eq!(timp.details["normal"]["max_abs"].as_f64(), Some(0.0));
    // The tile's TINS and the manifest's SHRD differ only by the shared pack's hash: derived, within.
    for p in r.packs.iter().filter(|p| p.path != "shared/tree-prototypes.kpack") {
        assert!(!p.beyond, "{p:#?}");
    }
    assert_eq!(kiln(&["diff", sa, sb, "--image-max", "0.001", "--image-rms", "0.001"]), 1);
    assert_eq!(kiln(&["diff", sa, sb, "--image-max", "0.01", "--image-rms", "0.01"]), 0);
    assert_eq!(kiln(&["diff", sa, sb, "--image-max=-1"]), 2);
}
