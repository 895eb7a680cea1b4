use std::collections::BTreeSet;

use kiln_formats::sections::{GrassInstance, GrassLevel, GrassPatch, NO_PARENT};
use kiln_formats::SectionKind;

use super::*;
use crate::diff::Tolerances;

fn blade(x: f32, y: f32, width: f32, parent: u32) -> GrassBlade {
    GrassBlade {
        position: [x, y],
        direction: [0.0, 0.0, 1.0],
        normal: [0.0, 1.0, 0.0],
        length: 0.3,
        width,
        bend: 0.2,
        color: [0.1, 0.4, 0.1],
        parent,
    }
}

/// One patch, two levels: four blades merged in pairs.
fn patches(shift: f32) -> GrassPatches {
    let level0 = vec![blade(0.1 + shift, 0.1, 0.01, 0), blade(0.15, 0.1, 0.01, 0), blade(0.7, 0.7, 0.01, 1), blade(0.72, 0.75, 0.01, 1)];
    let level1 = vec![blade(0.125, 0.1, 0.02, NO_PARENT), blade(0.71, 0.725, 0.02, NO_PARENT)];
    let chain = vec![GrassLevel { segments: 4, blades: level0 }, GrassLevel { segments: 3, blades: level1 }];
    GrassPatches { patch_size: 1.0, tint: [0.1, 0.4, 0.1], patches: vec![GrassPatch { levels: chain, flowers: Vec::new() }] }
}

fn run(f: crate::diff::kinds::DiffFn, a: Vec<u8>, b: Vec<u8>, tol: &Tolerances) -> Judged {
    let changed: BTreeSet<SectionKind> = BTreeSet::new();
    f(&a, &b, &Context { tol, changed: &changed }).unwrap()
}

fn grid_tile(keep: u8, light: [f32; 3]) -> GrassTile {
    GrassTile {
        patches_hash: 5,
        origin: [0.0, 0.0],
        spacing: 0.5,
        size: 3,
        height_min: 1.0,
        height_step: 0.01,
        heights: vec![10; 9],
        keep: vec![keep; 9],
        light: vec![rgb9e5::encode(light); 9],
        instances: vec![GrassInstance { origin: [0.0, 0.0], rotation: 1, patch: 2, height_scale: 1.0 }],
    }
}

#[test]
fn nearest_on_the_grid_is_the_brute_force_nearest() {
    let mut s = 12345u64;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    let points: Vec<[f32; 2]> = (0..500).map(|_| [next() * 3.0 - 1.0, next()]).collect();
    let grid = Grid::new(&points);
    for _ in 0..300 {
        let q = [next() * 5.0 - 2.0, next() * 3.0 - 1.0];
        let (i, d) = grid.nearest(q).unwrap();
        let brute = points.iter().map(|p| dist2(q, *p)).fold(f64::INFINITY, f64::min).sqrt();
        assert!((d - brute).abs() < 1e-12, "{q:?}: {d} vs {brute} (point {i})");
    }
    assert!(Grid::new(&[]).nearest([0.0, 0.0]).is_none());
    assert_eq!(Grid::new(&[[0.5, 0.5]; 3]).nearest([9.0, 9.0]).unwrap().0, 0);
}

#[test]
fn moved_blades_read_as_a_distance() {
    let (a, b) = (patches(0.0).encode().unwrap(), patches(0.02).encode().unwrap());
    let j = run(super::patches, a.clone(), b.clone(), &Tolerances { distance: 0.01, field_max: 1.0, ..Default::default() });
    assert!(j.beyond);
    assert!((j.details["blade_distance_max"].as_f64().unwrap() - 0.02).abs() < 1e-6, "{:?}", j.details);
    let mean = j.details["blade_distance_mean"].as_f64().unwrap();
    assert!(mean > 0.0 && mean < 0.02 / 2.0, "one of six blades moved: {mean}");
    assert!(!run(super::patches, a, b, &Tolerances { distance: 0.03, ..Default::default() }).beyond);
}

#[test]
fn close_blades_that_kept_their_order_are_compared_with_their_namesakes() {
    let mut a = patches(0.0);
    let level = &mut a.patches[0].levels[0].blades;
    level[1].position = [0.1005, 0.1];
    level[1].color = [0.3, 0.4, 0.1];
    let mut b = a.clone();
    b.patches[0].levels.iter_mut().flat_map(|l| &mut l.blades).for_each(|x| x.position[0] += 0.001);
    let j = run(super::patches, a.encode().unwrap(), b.encode().unwrap(), &Tolerances::default());
    // By nearest, blade 1 of A (x 0.1005) would meet blade 0 of B (x 0.101), of another colour.
    assert_eq!(j.details["blade_color_max"].as_f64(), Some(0.0), "{:?}", j.details);
    assert_eq!(j.details["matching"]["in_order"], 2);
    assert!((j.details["blade_distance_max"].as_f64().unwrap() - 0.001).abs() < 1e-6);
    // Reversed order: nearest matching, and the distance stays small.
    let mut c = a.clone();
    c.patches[0].levels[1].blades.reverse();
    let j = run(super::patches, a.encode().unwrap(), c.encode().unwrap(), &Tolerances { distance: 0.01, ..Default::default() });
    assert_eq!((j.details["matching"]["nearest"].as_u64(), j.details["blade_distance_max"].as_f64()), (Some(1), Some(0.0)), "{:?}", j.details);
}

#[test]
fn area_colour_and_structure_are_judged() {
    let mut wide = patches(0.0);
    wide.patches[0].levels[1].blades[0].width = 0.03;
    let j = run(
        super::patches,
        patches(0.0).encode().unwrap(),
        wide.encode().unwrap(),
        &Tolerances { distance: 0.1, field_max: 0.25, ..Default::default() },
    );
    // Level 1's area goes from 0.006 to 0.0075: 20 % of the larger.
    assert!((j.details["area_max_relative"].as_f64().unwrap() - 0.2).abs() < 1e-6, "{:?}", j.details);
    assert!((j.details["blade_size_max"].as_f64().unwrap() - 0.01).abs() < 1e-6);
    assert!(!j.beyond);
    let j = run(
        super::patches,
        patches(0.0).encode().unwrap(),
        wide.encode().unwrap(),
        &Tolerances { distance: 0.1, field_max: 0.15, ..Default::default() },
    );
    assert!(j.beyond);

    let mut tinted = patches(0.0);
    tinted.patches[0].levels[0].blades[3].color = [0.2, 0.4, 0.1];
    let j = run(super::patches, patches(0.0).encode().unwrap(), tinted.encode().unwrap(), &Tolerances { field_max: 0.05, ..Default::default() });
    assert!(j.beyond && (j.details["blade_color_max"].as_f64().unwrap() - 0.1).abs() < 1e-6);

    let loose = Tolerances { distance: 1e9, field_max: 1e9, ..Default::default() };
    let mut fewer = patches(0.0);
    fewer.patches[0].levels[0].blades.pop();
    let j = run(super::patches, patches(0.0).encode().unwrap(), fewer.encode().unwrap(), &loose);
    assert!(j.beyond && j.details["structure"][0].as_str().unwrap().contains("4 vs 3 blades"), "{:?}", j.details);
    let mut reparented = patches(0.0);
    reparented.patches[0].levels[0].blades[1].parent = 1;
    let j = run(super::patches, patches(0.0).encode().unwrap(), reparented.encode().unwrap(), &loose);
    assert!(j.beyond && j.details["parent_changes"] == 1);
}

#[test]
fn flowers_are_compared_by_nearest() {
    let flower = |x: f32| Flower { position: [x, 0.5], height: 0.2, radius: 0.02, color: [1.0, 0.9, 0.2] };
    let (mut a, mut b) = (patches(0.0), patches(0.0));
    a.patches[0].flowers = vec![flower(0.2), flower(0.6)];
    b.patches[0].flowers = vec![flower(0.6), flower(0.25)];
    let j = run(super::patches, a.encode().unwrap(), b.encode().unwrap(), &Tolerances { distance: 0.1, ..Default::default() });
    assert!(!j.beyond, "{:?}", j.details);
    assert!((j.details["flower_distance_max"].as_f64().unwrap() - 0.05).abs() < 1e-6);
    b.patches[0].flowers.pop();
    assert!(run(super::patches, a.encode().unwrap(), b.encode().unwrap(), &Tolerances { distance: 1e9, ..Default::default() }).beyond);
}

#[test]
fn tile_maps_are_judged_by_height_keep_and_relative_light() {
    let a = grid_tile(200, [1.0, 2.0, 3.0]);
    let mut b = grid_tile(190, [1.0, 2.0, 3.3]);
    b.heights[4] = 13;
    let j = run(tile, a.encode().unwrap(), b.encode().unwrap(), &Tolerances { distance: 0.05, field_max: 0.1, field_rms: 0.1, ..Default::default() });
    assert!(!j.beyond, "{:?}", j.details);
    assert!((j.details["height_max"].as_f64().unwrap() - 0.03).abs() < 1e-5);
    assert!((j.details["keep_max"].as_f64().unwrap() - 10.0 / 255.0).abs() < 1e-9);
    let rel = j.details["light_max_relative"].as_f64().unwrap();
    assert!((rel - 0.3 / 3.3).abs() < 0.01, "{rel}");
    assert!(
        run(tile, a.encode().unwrap(), b.encode().unwrap(), &Tolerances { distance: 0.05, field_max: 0.05, field_rms: 0.1, ..Default::default() })
            .beyond
    );
    assert!(
        run(tile, a.encode().unwrap(), b.encode().unwrap(), &Tolerances { distance: 0.02, field_max: 0.1, field_rms: 0.1, ..Default::default() })
            .beyond
    );
}

#[test]
fn tile_instances_must_keep_their_patch_and_turn() {
    let loose = Tolerances { distance: 1e9, field_max: 1e9, field_rms: 1e9, ..Default::default() };
    let a = grid_tile(200, [1.0; 3]);
    let mut b = a.clone();
    b.instances[0].patch = 3;
    let j = run(tile, a.encode().unwrap(), b.encode().unwrap(), &loose);
    assert!(j.beyond && j.details["patch_changes"] == 1 && j.details["changed_patch_instances"] == json!([0]));
    let mut c = a.clone();
    c.instances[0].origin = [0.5, 0.0];
    c.instances[0].height_scale = 1.1;
    let j = run(tile, a.encode().unwrap(), c.encode().unwrap(), &Tolerances { distance: 0.6, field_max: 0.2, ..Default::default() });
    assert!(!j.beyond && (j.details["instance_distance_max"].as_f64().unwrap() - 0.5).abs() < 1e-9, "{:?}", j.details);
    let mut d = a.clone();
    d.instances.clear();
    assert!(run(tile, a.encode().unwrap(), d.encode().unwrap(), &loose).beyond);
    let mut e = a.clone();
    e.size = 2;
    e.heights.truncate(4);
    e.keep.truncate(4);
    e.light.truncate(4);
    assert!(run(tile, a.encode().unwrap(), e.encode().unwrap(), &loose).details["structure"][0].as_str().unwrap().contains("3 vs 2"));
}
