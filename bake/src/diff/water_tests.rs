use std::collections::BTreeSet;

use half::f16;
use kiln_formats::SectionKind;

use super::*;
use crate::diff::Tolerances;

const R: usize = 16;

/// Two frames of 16² texels over two planes: a sine swell, its normals and a caustic pattern.
fn waves(bump: f32) -> WaterWaves {
    let h = |v: f32| f16::from_f32(v).to_bits();
    let n = R * R;
    let mut w = WaterWaves {
        patch_size: 8.0,
        period: 4.0,
        resolution: R as u32,
        frames: 2,
        sun_direction: [0.0, 0.6, 0.8],
        ior: 1.333,
        flat_transmittance: 0.97,
        depths: vec![0.5, 2.0],
        ..Default::default()
    };
    for f in 0..2 {
        for i in 0..n {
            let phase = (i % R) as f32 / R as f32 * std::f32::consts::TAU + f as f32;
            w.surface.push([h(0.0), h(0.0), h(0.1 * phase.sin()), h(1.0)]);
            w.normals.push([h(0.05 * phase.cos()), h(0.0)]);
        }
        for _ in 0..2 {
            w.caustics.extend((0..n).map(|i| h(0.97 + 0.3 * ((i % R) as f32 / R as f32 * std::f32::consts::TAU).sin())));
        }
    }
    // One bright texel on frame 1, plane 1.
    let at = (2 + 1) * n + 5;
    w.caustics[at] = h(f16::from_bits(w.caustics[at]).to_f32() + bump);
    w
}

fn water_tile(depth: Vec<u16>, level: f32) -> WaterTile {
    let shore = depth.iter().map(|&d| u8::from(d > 0)).collect();
    WaterTile { waves_hash: 7, level, absorption: [0.4, 0.06, 0.02], origin: [0.0, 0.0], spacing: 0.5, size: 2, depth_step: 0.01, depth, shore }
}

fn run(f: crate::diff::kinds::DiffFn, a: &impl Section, b: &impl Section, tol: &Tolerances) -> Judged {
    let changed: BTreeSet<SectionKind> = BTreeSet::new();
    f(&a.encode().unwrap(), &b.encode().unwrap(), &Context { tol, changed: &changed }).unwrap()
}

#[test]
fn one_brighter_caustic_texel_is_found_in_its_frame_and_plane_and_judged_by_the_image_tolerances() {
    let (a, b) = (waves(0.0), waves(0.5));
    let exact = run(waves_diff, &a, &b, &Tolerances::default());
    assert!(exact.beyond);
    let c1 = &exact.details["caustics_1"];
    assert_eq!(c1["worst_frame"], 1);
    let peak = 0.97f64 + 0.3 + 0.5;
    let max = c1["max_abs"].as_f64().unwrap();
    assert!((max - 0.5 / peak).abs() < 0.01, "max |Δ| {max} in units of the map's peak");
    assert_eq!(exact.details["caustics_0"]["max_abs"], 0.0, "the other plane is untouched");
    assert_eq!(exact.details["height"]["max_abs"], 0.0);
    let loose = Tolerances { image_max: 0.4, image_rms: 0.05, ..Default::default() };
    assert!(!run(waves_diff, &a, &b, &loose).beyond);
    let tight_rms = Tolerances { image_max: 0.4, image_rms: 1e-4, ..Default::default() };
    assert!(run(waves_diff, &a, &b, &tight_rms).beyond);
    assert!(!run(waves_diff, &a, &a, &Tolerances::default()).beyond);
}

#[test]
fn a_different_layout_or_parameter_is_not_passed_as_small() {
    let a = waves(0.0);
    let mut fewer = waves(0.0);
    fewer.frames = 1;
    fewer.surface.truncate(R * R);
    fewer.normals.truncate(R * R);
    fewer.caustics.truncate(2 * R * R);
    let j = run(waves_diff, &a, &fewer, &Tolerances { image_max: 1.0, image_rms: 1.0, distance: 1.0, field_max: 1.0, ..Default::default() });
    assert!(j.beyond && j.magnitude.is_infinite());
    let mut longer = waves(0.0);
    longer.period = 4.5;
    let j = run(waves_diff, &a, &longer, &Tolerances { image_max: 1.0, image_rms: 1.0, distance: 0.1, field_max: 1.0, ..Default::default() });
    assert!(j.beyond, "a loop 0.5 s longer is beyond a 0.1 distance tolerance");
    assert_eq!(j.details["parameters_distance_max"], 0.5);
}

#[test]
fn water_tiles_count_wet_dry_flips_and_measure_depth_where_both_have_water() {
    let a = water_tile(vec![0, 10, 20, 30], 1.0);
    let b = water_tile(vec![5, 10, 25, 30], 1.0);
    let j = run(tile, &a, &b, &Tolerances::default());
    assert!(j.beyond);
    assert_eq!(j.details["mask_changes"], 1);
    assert!((j.details["depth_max"].as_f64().unwrap() - 0.05).abs() < 1e-6);
    assert!((j.details["mask"]["rms"].as_f64().unwrap() - 0.5).abs() < 1e-9, "one flip of four samples");
    let loose = Tolerances { distance: 0.1, image_max: 1.0, image_rms: 0.6, ..Default::default() };
    assert!(!run(tile, &a, &b, &loose).beyond);
    let raised = water_tile(vec![0, 10, 20, 30], 1.2);
    assert!(run(tile, &a, &raised, &loose).beyond, "the level moved 0.2 > 0.1");
    let mut moved = water_tile(vec![0, 10, 20, 30], 1.0);
    moved.origin = [0.5, 0.0];
    assert!(run(tile, &a, &moved, &Tolerances { distance: 10.0, image_max: 1.0, image_rms: 1.0, field_max: 1.0, ..Default::default() }).beyond);
}

use super::waves as waves_diff;
