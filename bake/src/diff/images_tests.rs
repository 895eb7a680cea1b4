use std::collections::BTreeSet;

use kiln_formats::sections::{AtlasLevel, ImpostorAtlas, ImpostorLayout, Rgba8Level, SpeciesTextures, TreeImpostors, TreeTextures};
use kiln_formats::Section;

use super::*;
use crate::diff::Tolerances;

fn chain(side: u32, value: u8) -> Vec<Rgba8Level> {
    let mut out = Vec::new();
    let mut s = side;
    loop {
        out.push(Rgba8Level { width: s, height: s, rgba: vec![value; 4 * (s * s) as usize] });
        if s == 1 {
            return out;
        }
        s /= 2;
    }
}

fn atlas(shift: u8) -> TreeImpostors {
    let levels = (0..2)
        .map(|l| {
            let size = 8 >> l;
            let n = (size * size) as usize;
            AtlasLevel { size, albedo: vec![100; 4 * n], normal: vec![128u8.wrapping_add(shift); 4 * n], depth: vec![30000; n] }
        })
        .collect();
    TreeImpostors {
        atlases: vec![ImpostorAtlas { layout: ImpostorLayout::Octahedral, grid: 2, view_px: 4, center: [0.0, 0.0, 2.0], radius: 2.5, levels }],
    }
}

fn judge(f: crate::diff::kinds::DiffFn, a: Vec<u8>, b: Vec<u8>, tol: &Tolerances) -> Judged {
    let changed = BTreeSet::new();
    f(&a, &b, &Context { tol, changed: &changed }).unwrap()
}

#[test]
fn map_stats_are_in_unit_range() {
    let mut s = MapStats::default();
    s.add_u8(&[0, 0, 0, 255, 10, 0, 0, 255], &[255, 0, 0, 255, 10, 0, 0, 0], 4, 0..3);
    assert_eq!(s.max_abs(), 1.0);
    assert!((s.rms() - (1.0f64 / 6.0).sqrt()).abs() < 1e-12);
    let mut d = MapStats::default();
    d.add_u16(&[0, 65535], &[0, 65535]);
    assert_eq!((d.max_abs(), d.rms(), d.psnr_db()), (0.0, 0.0, serde_json::json!("inf")));
}

#[test]
fn a_changed_normal_map_is_judged_by_the_image_tolerance() {
    let (a, b) = (atlas(0).encode().unwrap(), atlas(3).encode().unwrap());
    let tight = Tolerances { image_max: 0.001, image_rms: 0.001, ..Default::default() };
    let j = judge(impostors, a.clone(), b.clone(), &tight);
    assert!(j.beyond, "{:?}", j.details);
    assert!((j.details["normal"]["max_abs"].as_f64().unwrap() - 3.0 / 255.0).abs() < 1e-9, "{:?}", j.details);
    assert_eq!(j.details["albedo"]["max_abs"].as_f64(), Some(0.0));
    // The normal map's alpha is AO, its own map.
    assert!(j.details["ao"]["max_abs"].as_f64().unwrap() > 0.0);
    let loose = Tolerances { image_max: 0.02, image_rms: 0.02, ..Default::default() };
    assert!(!judge(impostors, a, b, &loose).beyond);
}

#[test]
fn a_changed_atlas_layout_is_beyond_any_tolerance() {
    let mut other = atlas(0);
    other.atlases[0].levels.truncate(1);
    let loose = Tolerances { image_max: 1.0, image_rms: 1.0, distance: 1e9, ..Default::default() };
    let j = judge(impostors, atlas(0).encode().unwrap(), other.encode().unwrap(), &loose);
    assert!(j.beyond && j.magnitude.is_infinite(), "{:?}", j.details);
}

#[test]
fn textures_are_compared_per_species_and_map() {
    let tex = |v: u8| TreeTextures {
        species: vec![SpeciesTextures { bark: chain(4, 50), leaf: chain(4, 50) }, SpeciesTextures { bark: chain(4, 50), leaf: chain(4, v) }],
    };
    let loose = Tolerances { image_max: 0.1, image_rms: 0.1, ..Default::default() };
    let j = judge(textures, tex(50).encode().unwrap(), tex(60).encode().unwrap(), &loose);
    assert!(!j.beyond, "{:?}", j.details);
    assert_eq!(j.details["leaf"]["worst"], "species 1");
    assert_eq!(j.details["leaf"]["changed"], 1);
    assert_eq!(j.details["bark"]["changed"], 0);
    let j = judge(textures, tex(50).encode().unwrap(), tex(90).encode().unwrap(), &loose);
    assert!(j.beyond);
}
