//! Hostile world files through the `kiln bake` command: names that would leave `--out`, worlds
//! beyond a memory budget, and the voxel-size boundaries baking correctly (issue #15).

use std::fs;
use std::path::Path;

use kiln_e2e::{kiln, manifest, repo_root, scratch};
use kiln_formats::sections::VertexIrradiance;

fn tiny_text() -> String {
    fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap()
}

fn bake(world: &Path, out: &Path, extra: &[&str]) -> i32 {
    let mut args = vec!["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"];
    args.extend_from_slice(extra);
    kiln(&args)
}

/// Every entry under `dir`, recursively (to prove nothing was written elsewhere).
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.display().to_string());
        if p.is_dir() {
            out.extend(listing(&p));
        }
    }
    out.sort();
    out
}

#[test]
fn names_that_would_leave_out_are_refused_before_anything_is_written() {
    let dir = scratch("world-names");
    let victim = dir.join("victim");
    fs::create_dir_all(&victim).unwrap();
    fs::write(victim.join("keep.txt"), "precious").unwrap();
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    let before = listing(&dir);
    for name in [victim.to_str().unwrap(), "../victim", "../x", "a/b", ".", "..", "", "a\\\\b", "x."] {
        let world = dir.join("w.toml");
        fs::write(&world, tiny_text().replace("name = \"tiny\"", &format!("name = \"{name}\""))).unwrap();
        assert_eq!(bake(&world, &out, &[]), 2, "{name:?}");
        fs::remove_file(&world).unwrap();
        assert_eq!(listing(&dir), before, "{name:?} wrote something");
    }
    assert_eq!(fs::read_to_string(victim.join("keep.txt")).unwrap(), "precious");
}

#[test]
fn a_world_beyond_the_memory_budget_is_refused_with_the_estimate() {
    let dir = scratch("world-budget");
    let world = dir.join("tiny.toml");
    fs::write(&world, tiny_text()).unwrap();
    let out = dir.join("out");
    assert_eq!(bake(&world, &out, &["--memory-budget", "20M"]), 2);
    assert!(!out.join("tiny").exists(), "a refused world writes nothing");
    let spec = kiln_bake::world::load_world(&world).unwrap().spec;
    let estimate = kiln_bake::budget::Estimate::of(&spec, 2, true);
    let budget = kiln_bake::budget::Budget { bytes: 20 << 20, source: "--memory-budget" };
    let msg = kiln_bake::budget::check(&world, &estimate, Some(&budget)).unwrap_err().to_string();
    assert!(msg.contains("estimated peak memory") && msg.contains("> 20 MiB; reduce volume.size"), "{msg}");
    assert_eq!(bake(&world, &out, &["--memory-budget", "1G"]), 0);
    assert!(out.join("tiny/manifest.kpack").exists());
}

/// Total irradiance over every tile of a bake.
fn total_irradiance(bake_dir: &Path) -> f64 {
    manifest(bake_dir)
        .nodes
        .iter()
        .flat_map(|n| kiln_formats::Pack::open(&bake_dir.join(&n.path)).unwrap().require::<VertexIrradiance>().unwrap().0)
        .map(|c| f64::from(c[0] + c[1] + c[2]))
        .sum()
}

#[test]
fn voxel_sizes_at_the_limits_bake_with_light() {
    let dir = scratch("world-voxel-limits");
    let out = dir.join("out");
    // The floor and fade scale with the voxel size so the world keeps its shape; the light budget
    // scales inversely with the area so both bakes trace a few thousand paths.
    for (vs, name, ppa) in [(1000.0, "large", 4e-4), (0.001, "small", 1e6)] {
        let scale = vs / 0.25;
        let text = format!(
            "name = \"{name}\"\n[volume]\nsize = [64, 64, 32]\nvoxel_size = {vs}\ntile_size = 16\n\
             [noise]\noctaves = 3\nfrequency = {}\n[floor]\nheight = {}\namplitude = {}\nfrequency = {}\n\
             fade_start = {}\nfade = {}\n[lighting]\npaths_per_area = {ppa}\n[ao]\nradius_voxels = 16.0\n",
            0.15 / scale,
            0.5 * scale,
            1.0 * scale,
            0.08 / scale,
            3.0 * scale,
            2.0 * scale
        );
        let world = dir.join(format!("{name}.toml"));
        fs::write(&world, text).unwrap();
        assert_eq!(bake(&world, &out, &[]), 0, "{name}");
        let light = total_irradiance(&out.join(name));
        assert!(light.is_finite() && light > 0.0, "{name}: total irradiance {light}");
    }
    // Just outside: refused before any work.
    let world = dir.join("over.toml");
    fs::write(&world, tiny_text().replace("voxel_size = 0.25", "voxel_size = 1000.001")).unwrap();
    assert_eq!(bake(&world, &out, &[]), 2);
}
