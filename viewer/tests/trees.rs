//! The trees layer on the synthetic world with a synthetic forest (`support::trees`): trees are
//! drawn, near ones as meshes and far ones as impostors, and the counts reach `--stats`.

mod support;

use std::sync::OnceLock;

use glam::Vec3;
use kiln_view::camera::CameraPose;
use support::{assert_ok, headless, scratch, WORLD};

fn forest() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = scratch("forest").join("synth");
        WORLD.write(&d);
        support::trees::add_trees(&d, &WORLD, &support::trees::forest(&WORLD));
        d
    })
}

fn view() -> CameraPose {
    CameraPose { position: Vec3::new(20.0, -6.0, 14.0), yaw_deg: 70.0, pitch_deg: -22.0 }
}

#[test]
fn trees_are_drawn_near_as_meshes_and_far_as_impostors() {
    let stats = scratch("forest-stats").join("s.json");
    let (out, img) = headless(forest(), "trees-mode", [960, 540], view(), &["--mode", "trees", "--stats", stats.to_str().unwrap()]);
    assert_ok(&out);
    let img = img.unwrap();
    // Representation colours: mesh LOD 0 red, LOD 1 yellow, LOD 2 green, impostor blue.
    let (mut mesh_px, mut blue) = (0, 0);
    for p in img.pixels() {
        let [r, g, b, _] = p.0.map(i32::from);
        if (r > 120 && r > 2 * g.max(b)) || (g > 150 && g > r.max(b) + 70) {
            mesh_px += 1;
        }
        if b > 120 && b > r + 40 && b > g + 40 {
            blue += 1;
        }
    }
    assert!(mesh_px > 2000, "mesh-coloured pixels: {mesh_px}");
    assert!(blue > 2000, "impostor-coloured pixels: {blue}");
    let json = std::fs::read_to_string(&stats).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (mesh, imp) = (v["drawn"]["trees_mesh"].as_u64().unwrap(), v["drawn"]["trees_impostor"].as_u64().unwrap());
    assert!(mesh > 0 && imp > 0, "mesh {mesh}, impostor {imp}");
}

#[test]
fn lit_trees_differ_from_the_bare_terrain() {
    let bare = support::world();
    let (o1, with) = headless(forest(), "trees-lit", [320, 180], view(), &[]);
    let (o2, without) = headless(bare, "trees-bare", [320, 180], view(), &[]);
    assert_ok(&o1);
    assert_ok(&o2);
    let (a, b) = (with.unwrap(), without.unwrap());
    let changed = a.pixels().zip(b.pixels()).filter(|(p, q)| p.0.iter().zip(q.0).any(|(x, y)| x.abs_diff(y) > 24)).count();
    assert!(changed > 3000, "{changed} pixels changed by trees");
}
