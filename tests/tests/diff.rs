//! `kiln diff` on bakes of `worlds/tiny.toml`: silent on identical inputs, exact on planted changes.

use std::fs;

use kiln_bake::diff::{diff, Tolerances};
use kiln_e2e::{copy_dir, kiln, manifest, scratch, tiny_bake};
use kiln_formats::{Pack, TileContents};

#[test]
fn identical_bakes_diff_clean() {
    let a = tiny_bake();
    let b = scratch("diff-identical");
    copy_dir(a, &b);
    let r = diff(a, &b, &Tolerances::default()).unwrap();
    assert!(r.packs.is_empty(), "{:?}", r.packs);
    assert_eq!(r.compared, manifest(a).nodes.len() + 1);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]), 0);
}

#[test]
fn a_planted_change_is_measured_exactly() {
    let a = tiny_bake();
    let b = scratch("diff-planted");
    copy_dir(a, &b);
    let m = manifest(a);
    let node = m.node(0, 1, 1).unwrap();
    let path = b.join(&node.path);
    let pack = Pack::open(&path).unwrap();
    let mut tile = TileContents::read(&pack).unwrap();
    let mesh = tile.mesh.as_mut().unwrap();
    // Raise the whole tile by 0.01 world units (a multiple of the lattice step, so it survives exactly).
    let step = mesh.lattice.step();
    let lift = (0.01 / step).round() * step;
    for p in &mut mesh.positions {
        p[2] += lift;
    }
    let ao = tile.ao.as_mut().unwrap();
    let n = ao.0.len();
    let before = ao.0[0];
    ao.0[0] = if before >= 128 { before - 64 } else { before + 64 };
    fs::write(&path, tile.to_pack(pack.header().writer_version).unwrap()).unwrap();

    let r = diff(a, &b, &Tolerances::default()).unwrap();
    assert_eq!(r.packs.len(), 1, "{:#?}", r.packs);
    let p = &r.packs[0];
    assert_eq!(p.path, node.path);
    assert!(p.beyond);
    let tmsh = p.sections.iter().find(|s| s.kind == "TMSH").expect("mesh difference");
    let dmax = tmsh.details["distance_max"].as_f64().unwrap();
    let dmean = tmsh.details["distance_mean"].as_f64().unwrap();
    // A vertical lift of a surface is at most `lift` away, and exactly `lift` where the surface is flat.
    assert!(dmax <= lift as f64 + 1e-5 && dmax > lift as f64 * 0.9, "max {dmax} for lift {lift}");
    assert!(dmean > 0.0 && dmean <= dmax);
    let vxao = p.sections.iter().find(|s| s.kind == "VXAO").expect("ao difference");
    let max_abs = vxao.details["max_abs"].as_f64().unwrap();
    let rms = vxao.details["rms"].as_f64().unwrap();
    assert!((max_abs - 64.0 / 255.0).abs() < 1e-6, "{max_abs}");
    assert!((rms - (64.0f64 / 255.0) / (n as f64).sqrt()).abs() < 1e-6, "{rms}");

    let tol = Tolerances { distance: 0.011, field_max: 0.26, field_rms: 0.26, ignore_metadata: false };
    let r = diff(a, &b, &tol).unwrap();
    assert_eq!(r.beyond, 0, "{:#?}", r.packs);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]), 1);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--distance", "0.011", "--field-max", "0.26", "--field-rms", "0.26"]), 0);
    let tol_file = scratch("diff-tol").join("tol.toml");
    fs::write(&tol_file, "distance = 0.011\nfield_max = 0.26\nfield_rms = 0.26\n").unwrap();
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--tolerances", tol_file.to_str().unwrap(), "--json"]), 0);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), "/no/such/dir"]), 2);
}
