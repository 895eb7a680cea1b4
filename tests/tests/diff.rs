//! `kiln diff` on bakes of `worlds/tiny.toml`: silent on identical inputs, exact on planted changes.

use std::fs;

use kiln_bake::diff::{diff, Tolerances};
use kiln_e2e::{copy_dir, kiln, manifest, scratch, tiny_bake};
use kiln_formats::sections::{PackInfo, VertexAo};
use kiln_formats::{Pack, PackBuilder, Section, TileContents};

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

    let tol = Tolerances { distance: 0.011, field_max: 0.26, field_rms: 0.26, ..Tolerances::default() };
    let r = diff(a, &b, &tol).unwrap();
    assert_eq!(r.beyond, 0, "{:#?}", r.packs);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]), 1);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--distance", "0.011", "--field-max", "0.26", "--field-rms", "0.26"]), 0);
    let tol_file = scratch("diff-tol").join("tol.toml");
    fs::write(&tol_file, "distance = 0.011\nfield_max = 0.26\nfield_rms = 0.26\n").unwrap();
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--tolerances", tol_file.to_str().unwrap(), "--json"]), 0);
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), "/no/such/dir"]), 2);
}

/// Two single-pack files that differ only in the bytes of one section of `kind`.
fn two_packs_differing_in(name: &str, kind: kiln_formats::SectionKind) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let info = PackInfo { kind: kiln_formats::sections::PackKind::Tile { level: 0, x: 0, y: 0 }, world_name: "t".into(), inputs_hash: 1 };
    let write = |file: &str, bytes: Vec<u8>| {
        let mut b = PackBuilder::new([0, 1, 0]);
        b.add(&info).unwrap().add_raw(kind, false, bytes).unwrap();
        let path = dir.join(file);
        fs::write(&path, b.to_bytes().unwrap()).unwrap();
        path
    };
    (write("a.kpack", b"left".to_vec()), write("b.kpack", b"right".to_vec()))
}

#[test]
fn a_changed_section_of_a_kind_without_a_comparison_is_beyond_tolerance() {
    let test = kiln_formats::SectionKind(*b"TEST");
    let (a, b) = two_packs_differing_in("diff-unknown-kind", test);
    let r =
        diff(&a, &b, &Tolerances { distance: 1e9, field_max: 1e9, field_rms: 1e9, image_max: 1e9, image_rms: 1e9, ignore_metadata: true }).unwrap();
    assert_eq!(r.beyond, 1, "{:#?}", r.packs);
    let s = &r.packs[0].sections;
    assert_eq!(s.len(), 1, "{s:#?}");
    assert!(s[0].kind == "TEST" && s[0].beyond && s[0].status == "changed", "{s:#?}");
    let args = [a.to_str().unwrap(), b.to_str().unwrap()];
    assert_eq!(kiln(&["diff", args[0], args[1]]), 1);
    assert_eq!(kiln(&["diff", args[0], args[1], "--ignore-metadata", "--distance", "1", "--field-max", "1", "--field-rms", "1"]), 1);

    // A kind the reader knows but the diff table lacks (as a newly added kind would be): also beyond.
    let a = tiny_bake();
    let b = scratch("diff-no-comparison");
    copy_dir(a, &b);
    let node = manifest(a).node(0, 1, 1).unwrap().clone();
    let path = b.join(&node.path);
    let pack = Pack::open(&path).unwrap();
    let mut ao: VertexAo = pack.require().unwrap();
    ao.0[0] ^= 1;
    let mut builder = PackBuilder::new(pack.header().writer_version);
    for (i, e) in pack.sections().iter().enumerate() {
        if e.kind == VertexAo::KIND {
            builder.add(&ao).unwrap();
        } else {
            builder.add_raw(e.kind, e.required(), pack.raw_section(i).unwrap()).unwrap();
        }
    }
    fs::write(&path, builder.to_bytes().unwrap()).unwrap();
    let loose = Tolerances { field_max: 1.0, field_rms: 1.0, ..Tolerances::default() };
    assert_eq!(diff(a, &b, &loose).unwrap().beyond, 0, "AO within a loose tolerance");
    let without_ao: Vec<_> = kiln_bake::diff::kinds::DIFFS.iter().copied().filter(|(k, _)| *k != VertexAo::KIND).collect();
    let r = kiln_bake::diff::diff_with(&without_ao, a, &b, &loose).unwrap();
    assert_eq!(r.beyond, 1, "{:#?}", r.packs);
    let vxao = r.packs[0].sections.iter().find(|s| s.kind == "VXAO").unwrap();
    assert!(vxao.beyond && vxao.details["note"].as_str().unwrap().contains("no comparison"), "{vxao:#?}");
}
