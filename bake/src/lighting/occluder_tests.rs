//! Occluders (trees) in light transport, against the analytic sky view factor of a disc.

use super::*;
use std::f64::consts::PI;

/// The cosine-weighted share of the sky that a horizontal disc of radius `r` at height `h` hides
/// from a point on the ground at horizontal distance `d` from the disc's axis (the view factor from
/// a differential area to a parallel disc).
fn disc_view_factor(r: f64, h: f64, d: f64) -> f64 {
    let s = h * h + d * d + r * r;
    0.5 * (1.0 - (h * h + d * d - r * r) / (s * s - 4.0 * r * r * d * d).sqrt())
}

/// A `n`-gon fan approximating a disc of radius `r` at `centre`, one winding (occluders are two-sided).
fn disc(centre: [f32; 3], r: f32, n: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut pos = vec![centre];
    // The polygon's area equals the disc's: its circumradius is a little larger.
    let rc = r * (std::f32::consts::PI / (n as f32 * (std::f32::consts::PI / n as f32).sin() * (std::f32::consts::PI / n as f32).cos())).sqrt();
    for k in 0..n {
        let a = std::f32::consts::TAU * k as f32 / n as f32;
        pos.push([centre[0] + rc * a.cos(), centre[1] + rc * a.sin(), centre[2]]);
    }
    let idx = (0..n as u32).flat_map(|k| [0, 1 + k, 1 + (k + 1) % n as u32]).collect();
    (pos, idx)
}

fn ground(n: usize, size: f32) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut pos = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            pos.push([size * i as f32 / n as f32, size * j as f32 / n as f32, 0.0]);
        }
    }
    let w = n as u32 + 1;
    let idx = (0..n as u32)
        .flat_map(|j| {
            (0..n as u32).flat_map(move |i| [j * w + i, j * w + i + 1, (j + 1) * w + i + 1, j * w + i, (j + 1) * w + i + 1, (j + 1) * w + i])
        })
        .collect();
    (pos, idx)
}

#[test]
fn a_black_disc_hides_its_view_factor_of_the_sky() {
    let (size, r, h) = (8.0f32, 1.5f32, 1.0f32);
    let (pos, idx) = ground(64, size);
    let (dpos, didx) = disc([size / 2.0, size / 2.0, h], r, 64);
    let albedo = vec![[0.0f32; 3]; didx.len() / 3];
    let mut spec = LightingSpec::default();
    spec.sky.color = [1.0; 3];
    spec.sun.intensity = 0.0;
    spec.moon.intensity = 0.0;
    spec.albedo = [0.0; 3];
    spec.paths_per_area = 3000.0;
    spec.smoothing = 0;
    let volume = VolumeDesc { min: [0.0, 0.0, -1.0], max: [size, size, 3.0], dims: [8, 8, 4] };
    let occluders = Occluders { positions: &dpos, indices: &didx, albedo: &albedo, clusters: &[] };
    let mesh = SceneMesh { occluders: Some(occluders), ..SceneMesh::new(&pos, &idx) };
    let baked = bake_lighting(&mesh, ([0.0; 3], [size, size, 3.0]), &volume, &spec, 5).unwrap();
    // Ground within 2.5 units of the axis (under the disc and around its rim), away from the edges.
    let picks: Vec<[f32; 3]> = pos.iter().copied().filter(|p| ((p[0] - 4.0).powi(2) + (p[1] - 4.0).powi(2)).sqrt() < 2.5).collect();
    let e = baked.irradiance_at(&picks, &vec![[0.0, 0.0, 1.0]; picks.len()]).unwrap();
    let (mut got, mut want) = (0.0f64, 0.0f64);
    for (p, x) in picks.iter().zip(&e) {
        let d = (((p[0] - 4.0).powi(2) + (p[1] - 4.0).powi(2)) as f64).sqrt();
        got += x.ambient[0] as f64;
        want += PI * (1.0 - disc_view_factor(r as f64, h as f64, d));
    }
    assert!((got / want - 1.0).abs() < 0.02, "ground under a disc: {got} vs the view factor's {want}");
    // Straight under the centre, the disc hides r²/(r²+h²) of the cosine-weighted sky.
    assert!((disc_view_factor(1.5, 1.0, 0.0) - 2.25 / 3.25).abs() < 1e-12);
    // The disc is thin: the volume's cells it passes through are still air.
    let vol = baked.volume();
    assert!(vol.air.iter().skip(8 * 8 * 2).all(|&a| (a - 1.0).abs() < 1e-6), "cells above the ground are air");
    // Nothing was deposited on the occluder: the lit surface is the ground alone.
    assert_eq!(baked.stats().vertices, pos.len());
}

#[test]
fn occluders_reflect_light_onto_the_ground_from_either_side() {
    let (size, r, h) = (8.0f32, 1.5f32, 1.0f32);
    let (pos, idx) = ground(32, size);
    let (dpos, didx) = disc([size / 2.0, size / 2.0, h], r, 48);
    let bake_with = |albedo: f32| {
        let albedo = vec![[albedo; 3]; didx.len() / 3];
        let mut spec = LightingSpec::default();
        spec.sky.color = [1.0; 3];
        spec.sun.intensity = 0.0;
        spec.moon.intensity = 0.0;
        spec.albedo = [0.5; 3];
        spec.paths_per_area = 1500.0;
        let occluders = Occluders { positions: &dpos, indices: &didx, albedo: &albedo, clusters: &[] };
        let mesh = SceneMesh { occluders: Some(occluders), ..SceneMesh::new(&pos, &idx) };
        let baked =
            bake_lighting(&mesh, ([0.0; 3], [size, size, 3.0]), &VolumeDesc { min: [0.0; 3], max: [1.0; 3], dims: [0, 0, 0] }, &spec, 9).unwrap();
        baked.irradiance_at(&[[4.0, 4.0, 0.0]], &[[0.0, 0.0, 1.0]]).unwrap()[0].ambient[0]
    };
    // The ground lights the disc's underside, which sends some of it back down: a white disc
    // leaves the ground under it brighter than a black one.
    let (black, white) = (bake_with(0.0), bake_with(0.9));
    assert!(white > black * 1.1, "white disc {white}, black disc {black}");
}
