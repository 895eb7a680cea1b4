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

/// `kiln bake` as its own process (a bake past its memory budget ends the process, and the peak
/// measured is the process's): its exit status and what it printed.
fn bake_process(world: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kiln-under-test"));
    cmd.args(["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]).args(extra);
    let o = cmd.output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_memory_budget_refuses_what_cannot_fit_and_stops_a_bake_that_passes_it() {
    let dir = scratch("world-budget");
    let world = dir.join("tiny.toml");
    fs::write(&world, tiny_text()).unwrap();
    let out = dir.join("out");
    // Under the density volume alone (tiny: 131072 samples, 512 KiB): refused before any work.
    let (code, err) = bake_process(&world, &out, &["--memory-budget", "256K"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tiny.toml: --memory-budget allows 0 MiB, less than the bake certainly holds at once: 1 MiB"), "{err}");
    assert!(!out.exists() || kiln_e2e::files_under(&out).is_empty(), "a refused world writes nothing");
    // Over that floor but under what the bake measures (about 50 MiB): stopped while it bakes,
    // with the peak and the step named and no output in place.
    let (code, err) = bake_process(&world, &out, &["--memory-budget", "24M"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tiny.toml: the bake's resident memory reached ") && err.contains("over --memory-budget (24 MiB); stopped"), "{err}");
    assert!(!out.join("tiny").exists(), "a stopped bake left an output");
    // Room to spare: the bake is the unbudgeted one, byte for byte.
    let (code, err) = bake_process(&world, &out, &["--memory-budget", "1G"]);
    assert_eq!(code, 0, "{err}");
    let budgeted = kiln_e2e::files_under(&out.join("tiny"));
    let free = dir.join("free");
    assert_eq!(bake_process(&world, &free, &[]).0, 0);
    assert_eq!(budgeted, kiln_e2e::files_under(&free.join("tiny")));
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
