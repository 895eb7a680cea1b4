//! The CLI a user runs: bake, verify, inspect, export, and its errors.

use std::fs;

use kiln_e2e::{copy_dir, kiln, manifest, repo_root, scratch, tiny_bake};

#[test]
fn a_fresh_bake_verifies_clean_and_inspects() {
    let dir = tiny_bake();
    let (problems, n) = kiln_bake::cli::verify::check(dir).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let m = manifest(dir);
    assert_eq!(n, m.nodes.len() + 1);
    assert_eq!(kiln(&["inspect", dir.to_str().unwrap()]), 0);
    assert_eq!(kiln(&["inspect", "--json", dir.join("manifest.kpack").to_str().unwrap()]), 0);
}

#[test]
fn verify_reports_every_corruption_with_the_file() {
    let copy = scratch("verify-corrupt");
    copy_dir(tiny_bake(), &copy);
    let m = manifest(&copy);
    // 1: a flipped payload byte in one tile.
    let flipped = copy.join(&m.nodes[0].path);
    let mut bytes = fs::read(&flipped).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    fs::write(&flipped, &bytes).unwrap();
    // 2: a missing tile.
    let missing = copy.join(&m.nodes[1].path);
    fs::remove_file(&missing).unwrap();
    // 3: a truncated tile.
    let truncated = copy.join(&m.nodes[2].path);
    let bytes = fs::read(&truncated).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    // 4: a stray pack not in the manifest (a valid pack copied under another name).
    let stray = copy.join("tiles/L9_0_0.kpack");
    fs::copy(copy.join(&m.nodes[3].path), &stray).unwrap();

    let (problems, _) = kiln_bake::cli::verify::check(&copy).unwrap();
    for (file, what) in [(&flipped, "checksum"), (&missing, "cannot be read"), (&truncated, "truncated"), (&stray, "not listed")] {
        let name = file.display().to_string();
        assert!(problems.iter().any(|p| p.contains(&name) && p.contains(what)), "no '{what}' problem for {name} in {problems:#?}");
    }
    assert_eq!(kiln(&["verify", copy.to_str().unwrap()]), 1);
}

#[test]
fn bad_world_files_fail_cleanly_naming_file_and_key() {
    let dir = scratch("bad-world");
    let world = dir.join("bad.toml");
    fs::write(&world, "name = \"bad\"\n[volume]\nsize = [64, 64, -32]\n").unwrap();
    let out = dir.join("out");
    assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]), 2);
    assert!(!out.join("bad").exists(), "no output for a failed bake");
    let err = kiln_bake::world::load_world(&world).unwrap_err().to_string();
    assert!(err.contains("bad.toml") && err.contains(":3"), "{err}");
}

#[test]
fn a_failed_bake_leaves_the_previous_bake_untouched() {
    let dir = scratch("no-partial");
    let out = dir.join("out");
    let world = repo_root().join("worlds/tiny.toml");
    assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]), 0);
    let before = fs::read(out.join("tiny/manifest.kpack")).unwrap();
    // Same world name, but a malformed file: fails before anything is written.
    let text = fs::read_to_string(&world).unwrap();
    let broken = dir.join("tiny.toml");
    fs::write(&broken, format!("{text}\nthis is not toml\n")).unwrap();
    assert_eq!(kiln(&["bake", broken.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]), 2);
    assert_eq!(fs::read(out.join("tiny/manifest.kpack")).unwrap(), before);
    let leftovers: Vec<_> = fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    // An output root that is a file: a clear error naming it.
    let file = dir.join("a-file");
    fs::write(&file, b"x").unwrap();
    assert_eq!(kiln(&["bake", world.to_str().unwrap(), "--out", file.to_str().unwrap(), "--quiet", "--no-cache"]), 2);
}

#[test]
fn export_writes_glb_ply_and_density() {
    let dir = tiny_bake();
    let out = scratch("export");
    let d = dir.to_str().unwrap();
    let glb = out.join("t.glb");
    assert_eq!(kiln(&["export", d, "--tile", "1,1", "--format", "glb", "--out", glb.to_str().unwrap()]), 0);
    let bytes = fs::read(&glb).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, bytes.len());
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let doc: serde_json::Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let (mesh, _) = kiln_e2e::tile(dir, 0, 1, 1);
    // Without --skirts, the vertices only skirts use are not exported (tests/tests/export.rs).
    let used: std::collections::BTreeSet<u32> = mesh.indices[..mesh.main_index_count].iter().copied().collect();
    assert_eq!(doc["accessors"][0]["count"].as_u64().unwrap() as usize, used.len());
    assert_eq!(doc["meshes"][0]["primitives"][0]["attributes"]["_IRRADIANCE"], 3);
    assert_eq!(doc["accessors"][4]["count"].as_u64().unwrap() as usize, mesh.main_index_count);

    let ply = out.join("t.ply");
    assert_eq!(kiln(&["export", d, "--tile", "1,1", "--level", "1", "--format", "ply", "--out", ply.to_str().unwrap()]), 0);
    let text = String::from_utf8_lossy(&fs::read(&ply).unwrap()[..400]).into_owned();
    let (l1, _) = kiln_e2e::tile(dir, 1, 1, 1);
    let used: std::collections::BTreeSet<u32> = l1.indices[..l1.main_index_count].iter().copied().collect();
    assert!(text.contains(&format!("element vertex {}", used.len())), "{text}");

    let dens = out.join("t.f32");
    assert_eq!(kiln(&["export", d, "--density", "--tile", "0,1", "--out", dens.to_str().unwrap()]), 0);
    let header: serde_json::Value = serde_json::from_slice(&fs::read(out.join("t.f32.json")).unwrap()).unwrap();
    let dims: Vec<u64> = header["dims"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(fs::metadata(&dens).unwrap().len(), dims.iter().product::<u64>() * 4);
    assert_eq!(header["isolevel"], 0.0);

    assert_eq!(kiln(&["export", d, "--tile", "99,0", "--out", out.join("x.glb").to_str().unwrap()]), 2);
}
