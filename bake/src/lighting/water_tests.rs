//! Light through water against known answers: a flat sea floor under a sun of known elevation
//! (the exact direct term and the irradiance volume's track-length estimate), under a uniform sky
//! (the photon estimate on the floor, against a numerical integral), and a sealed cave below the
//! level that the water must not touch.

use super::*;
use crate::optics::{self, fresnel_transmittance, refract};
use glam::Vec3;

const SIZE: f32 = 8.0;

/// A flat floor z = 0 over [0, SIZE]², `n`×`n` quads, facing up.
fn floor(n: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut pos = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            pos.push([SIZE * i as f32 / n as f32, SIZE * j as f32 / n as f32, 0.0]);
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

/// Water at `level` over the whole floor (every sample from z = 0 to the level flooded).
fn sea(level: f32, absorption: [f32; 3]) -> WaterMedium {
    let voxel = 0.25;
    let n = (SIZE / voxel) as usize + 1;
    let nz = (level / voxel).floor() as usize + 1;
    WaterMedium { level, absorption, ior: optics::WATER_IOR, voxel_size: voxel, dims: [n, n, nz], flooded: vec![true; n * n * nz] }
}

/// Clear sea water, roughly, per world unit: red goes first.
const SEA: [f32; 3] = [0.45, 0.07, 0.02];

/// Only a sun of irradiance `e` (white) at `elevation` degrees, along +X.
fn sun_only(elevation: f32, e: f32) -> LightingSpec {
    let mut spec = LightingSpec::default();
    spec.sky.intensity = 0.0;
    spec.moon.intensity = 0.0;
    spec.sun.color = [1.0; 3];
    spec.sun.intensity = e;
    let a = elevation.to_radians();
    spec.sun.direction = Some([a.cos(), 0.0, a.sin()]);
    spec.albedo = [0.0; 3];
    spec
}

/// E·cos θi·T(θi)·exp(−σ·h/cos θt): a parallel beam's irradiance on a flat floor at depth `h`.
fn floor_irradiance(e: f32, elevation: f32, h: f32, sigma: [f32; 3]) -> [f32; 3] {
    let a = elevation.to_radians();
    let cos_i = a.sin();
    let down = refract(Vec3::new(-a.cos(), 0.0, -a.sin()), Vec3::Z, 1.0, optics::WATER_IOR).unwrap();
    let cos_t = -down.z;
    sigma.map(|s| e * cos_i * fresnel_transmittance(cos_i, 1.0, optics::WATER_IOR) * (-s * h / cos_t).exp())
}

/// The bake of the floor under `water` with the sun or sky of `spec`, with a volume of cells of
/// 0.25 units up to the top of the box.
fn bake(spec: &LightingSpec, water: Option<&WaterMedium>, top: f32, seed: u64) -> BakedLighting {
    let (pos, idx) = floor(32);
    let mesh = SceneMesh::new(&pos, &idx);
    let dims = [32, 32, (top / 0.25).round() as usize];
    let volume = VolumeDesc { min: [0.0; 3], max: [SIZE, SIZE, top], dims };
    bake_lighting_in_water(&mesh, ([0.0; 3], [SIZE, SIZE, top]), &volume, spec, seed, water).unwrap()
}

/// Floor points well inside the box (light reaching them crossed the surface inside it).
fn middle() -> Vec<[f32; 3]> {
    (0..9).flat_map(|j| (0..9).map(move |i| [2.0 + 0.5 * i as f32, 2.0 + 0.5 * j as f32, 0.0])).collect()
}

#[test]
fn the_sun_on_a_flat_sea_floor_is_the_refracted_beam_absorbed_along_its_way() {
    let (e, elevation) = (5.0, 50.0);
    let spec = sun_only(elevation, e);
    let points = middle();
    let up = vec![[0.0, 0.0, 1.0]; points.len()];
    let mut at_depth = Vec::new();
    for h in [1.0f32, 2.0] {
        let water = sea(h, SEA);
        let baked = bake(&spec, Some(&water), h + 0.5, 3);
        let want = floor_irradiance(e, elevation, h, SEA);
        for got in baked.irradiance_at(&points, &up).unwrap() {
            for (c, (got, want)) in got.sun_moon.iter().zip(want).enumerate() {
                assert!((got / want - 1.0).abs() < 1e-4, "depth {h}, channel {c}: {got} vs {want}");
            }
        }
        at_depth.push(want);
    }
    // Deeper is darker in every channel, and bluer: red falls the most.
    let ratio = [0, 1, 2].map(|c| at_depth[1][c] / at_depth[0][c]);
    assert!(ratio.iter().all(|&r| r < 1.0) && ratio[2] > ratio[1] && ratio[1] > ratio[0], "{ratio:?}");
    // Without water the same floor gets E·cos θi.
    let dry = bake(&spec, None, 1.5, 3).irradiance_at(&points[..1], &up[..1]).unwrap()[0].sun_moon;
    assert!((dry[0] - e * 50f32.to_radians().sin()).abs() < 1e-4);
}

#[test]
fn clear_water_under_a_high_sun_takes_only_the_fresnel_loss() {
    let spec = sun_only(90.0, 2.0);
    let water = sea(1.5, [0.0; 3]);
    let baked = bake(&spec, Some(&water), 2.0, 4);
    let t0 = 1.0 - ((optics::WATER_IOR - 1.0) / (optics::WATER_IOR + 1.0)).powi(2);
    let points = middle();
    for got in baked.irradiance_at(&points, &vec![[0.0, 0.0, 1.0]; points.len()]).unwrap() {
        assert!(got.sun_moon.iter().all(|&x| (x - 2.0 * t0).abs() < 1e-4), "{:?} vs {}", got.sun_moon, 2.0 * t0);
    }
    // The volume's direct light in the water: the same beam, every depth alike.
    let v = baked.volume();
    let mean = volume_mean(v, 1, 0.0, 1.5);
    for (c, m) in mean.iter().enumerate() {
        assert!((m / (2.0 * t0) as f64 - 1.0).abs() < 0.01, "channel {c}: {m} vs {}", 2.0 * t0);
    }
    // A world whose box ends under the surface still gets its light through the surface.
    let drowned = bake(&spec, Some(&water), 1.0, 4);
    let mean = volume_mean(drowned.volume(), 1, 0.0, 1.0);
    assert!(mean.iter().all(|m| (m / (2.0 * t0) as f64 - 1.0).abs() < 0.01), "{mean:?} vs {}", 2.0 * t0);
}

/// The mean over the middle columns (x, y in [2, 6]) and the cells between `z0` and `z1` of the
/// volume's +Z bin, `direct` (1) or `ambient` (0).
fn volume_mean(v: &IrradianceVolume, which: usize, z0: f32, z1: f32) -> [f64; 3] {
    let [nx, ny, nz] = v.dims;
    let cell = (v.max[2] - v.min[2]) / nz as f32;
    let (mut sum, mut n) = ([0.0f64; 3], 0.0);
    for z in 0..nz {
        let zc = (z as f32 + 0.5) * cell;
        if zc < z0 || zc > z1 {
            continue;
        }
        for y in 8..24 {
            for x in 8..24 {
                let i = x + nx * (y + ny * z);
                let bins = if which == 1 { &v.direct[i] } else { &v.ambient[i] };
                for c in 0..3 {
                    sum[c] += bins[4][c] as f64;
                }
                n += 1.0;
            }
        }
    }
    sum.map(|s| s / n)
}

#[test]
fn the_volume_in_the_water_gets_the_attenuated_sun() {
    // Sun photons (their first flights are the volume's direct light) refracted into the water
    // and absorbed along their way: each cell layer's +Z irradiance is the beam's at that depth.
    let (e, elevation, h) = (4.0, 60.0, 2.0);
    let mut spec = sun_only(elevation, e);
    spec.paths_per_area = 1500.0;
    let water = sea(h, SEA);
    let baked = bake(&spec, Some(&water), h + 0.5, 5);
    let v = baked.volume();
    for layer in 0..8 {
        let (z0, z1) = (layer as f32 * 0.25, (layer + 1) as f32 * 0.25);
        let got = volume_mean(v, 1, z0, z1);
        // The exact mean over the layer of the beam at depth h − z.
        let want = [0, 1, 2].map(|c| {
            let k = 64;
            (0..k).map(|s| floor_irradiance(e, elevation, h - (z0 + (s as f32 + 0.5) / k as f32 * 0.25), SEA)[c] as f64).sum::<f64>() / k as f64
        });
        for c in 0..3 {
            assert!((got[c] / want[c] - 1.0).abs() < 0.02, "layer {layer}, channel {c}: {} vs {}", got[c], want[c]);
        }
    }
    // Above the water, the unrefracted beam: E·sin(elevation).
    let air = volume_mean(v, 1, 2.0, 2.5);
    assert!((air[0] / (e * 60f32.to_radians().sin()) as f64 - 1.0).abs() < 0.02, "{air:?}");
}

#[test]
fn sky_light_on_a_sea_floor_is_the_transmitted_absorbed_sky() {
    // Uniform sky of radiance 1, black floor at depth h: the floor gets
    // 2π ∫ T(θ)·exp(−σ·h/cos θt)·cos θ sin θ dθ over the sky's elevations (numerically).
    let h = 1.0f32;
    let mut spec = LightingSpec::default();
    spec.sky.color = [1.0; 3];
    spec.sun.intensity = 0.0;
    spec.moon.intensity = 0.0;
    spec.albedo = [0.0; 3];
    spec.paths_per_area = 3000.0;
    let want = |sigma: [f32; 3]| {
        let n = 4000;
        let mut sum = [0.0f64; 3];
        for k in 0..n {
            let theta = (k as f64 + 0.5) / n as f64 * std::f64::consts::FRAC_PI_2;
            let cos_i = theta.cos() as f32;
            let down = refract(Vec3::new(-(theta.sin() as f32), 0.0, -cos_i), Vec3::Z, 1.0, optics::WATER_IOR).unwrap();
            let t = fresnel_transmittance(cos_i, 1.0, optics::WATER_IOR) as f64;
            for c in 0..3 {
                sum[c] += t * (-(sigma[c] * h / -down.z) as f64).exp() * theta.cos() * theta.sin();
            }
        }
        sum.map(|s| s * std::f64::consts::TAU * std::f64::consts::FRAC_PI_2 / n as f64)
    };
    let points = middle();
    let up = vec![[0.0, 0.0, 1.0]; points.len()];
    let mut means = Vec::new();
    for sigma in [[0.0; 3], SEA] {
        let water = sea(h, sigma);
        let baked = bake(&spec, Some(&water), h + 0.05, 6);
        let got = baked.irradiance_at(&points, &up).unwrap();
        let mean = [0, 1, 2].map(|c| got.iter().map(|g| g.ambient[c] as f64).sum::<f64>() / got.len() as f64);
        let want = want(sigma);
        for c in 0..3 {
            assert!((mean[c] / want[c] - 1.0).abs() < 0.03, "σ {sigma:?}, channel {c}: {} vs {}", mean[c], want[c]);
        }
        means.push(mean);
    }
    // Clear water passes about 93 % of a uniform sky (Fresnel at grazing incidence takes the
    // rest); sea water leaves the floor blue.
    assert!(means[0][0] < std::f64::consts::PI * 0.95 && means[0][0] > std::f64::consts::PI * 0.85, "{:?}", means[0]);
    assert!(means[1][2] / means[1][0] > 1.2, "{:?}", means[1]);
}

#[test]
fn a_sealed_cave_below_the_level_stays_dry() {
    // Ground at z = 4 under water up to z = 5, and below it a sealed room (z 1..3) lit by a
    // point light. The water's mask (the flood fill's) leaves the room dry: its light is the dry
    // bake's. A mask that wrongly flooded the room would absorb the lamp's light in it.
    let (floor_pos, floor_idx) = floor(16);
    let mut pos: Vec<[f32; 3]> = floor_pos.iter().map(|p| [p[0], p[1], 4.0]).collect();
    let mut idx = floor_idx;
    let (lo, hi) = ([3.0f32, 3.0, 1.0], [5.0f32, 5.0, 3.0]);
    let p = |x: usize, y: usize, z: usize| [[lo[0], hi[0]][x], [lo[1], hi[1]][y], [lo[2], hi[2]][z]];
    // Faces pointing into the room.
    let quads = [
        [p(0, 0, 0), p(1, 0, 0), p(1, 1, 0), p(0, 1, 0)],
        [p(0, 0, 1), p(0, 1, 1), p(1, 1, 1), p(1, 0, 1)],
        [p(0, 0, 0), p(0, 1, 0), p(0, 1, 1), p(0, 0, 1)],
        [p(1, 0, 0), p(1, 0, 1), p(1, 1, 1), p(1, 1, 0)],
        [p(0, 0, 0), p(0, 0, 1), p(1, 0, 1), p(1, 0, 0)],
        [p(0, 1, 0), p(1, 1, 0), p(1, 1, 1), p(0, 1, 1)],
    ];
    for c in quads {
        let b = pos.len() as u32;
        pos.extend_from_slice(&c);
        idx.extend_from_slice(&[b, b + 1, b + 2, b, b + 2, b + 3]);
    }
    let mut spec = LightingSpec::default();
    spec.sky.color = [1.0; 3];
    spec.sun.intensity = 0.0;
    spec.moon.intensity = 0.0;
    spec.albedo = [0.6; 3];
    spec.paths_per_area = 1500.0;
    spec.lights = vec![LightSpec::Point(PointLight { position: [4.0, 4.0, 2.0], intensity: 2.0, ..PointLight::default() })];
    let mesh = SceneMesh::new(&pos, &idx);
    let bounds = ([0.0, 0.0, 0.0], [SIZE, SIZE, 5.5]);
    let none = VolumeDesc { min: [0.0; 3], max: [1.0; 3], dims: [0, 0, 0] };
    let water_with = |cave_flooded: bool| {
        let mut w = sea(5.0, [2.0, 1.0, 0.5]);
        let [nx, ny, nz] = w.dims;
        w.flooded = (0..nx * ny * nz).map(|s| (s / (nx * ny)) as f32 * w.voxel_size >= 4.0 || cave_flooded).collect();
        w
    };
    let room = [[4.0, 4.0, 1.0], [4.0, 4.0, 3.0], [3.0, 4.0, 2.0], [4.5, 5.0, 2.5]];
    let normals = [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]];
    let lit = |w: Option<&WaterMedium>| {
        let baked = bake_lighting_in_water(&mesh, bounds, &none, &spec, 8, w).unwrap();
        let e = baked.irradiance_at(&room, &normals).unwrap();
        let ground = baked.irradiance_at(&[[1.0, 1.0, 4.0]], &[[0.0, 0.0, 1.0]]).unwrap()[0].ambient;
        ([0, 1, 2].map(|c| e.iter().map(|x| (x.ambient[c] + x.lights[c]) as f64).sum::<f64>()), ground)
    };
    let (dry, dry_ground) = lit(None);
    let (sealed, wet_ground) = lit(Some(&water_with(false)));
    let (flooded, _) = lit(Some(&water_with(true)));
    assert!(wet_ground[0] < 0.6 * dry_ground[0], "the ground under the water is darker: {wet_ground:?} vs {dry_ground:?}");
    for c in 0..3 {
        assert!((sealed[c] / dry[c] - 1.0).abs() < 0.03, "channel {c}: sealed {} vs dry {}", sealed[c], dry[c]);
        assert!(flooded[c] < 0.8 * dry[c], "a flooded room would be darker: channel {c}: {} vs {}", flooded[c], dry[c]);
    }
}

/// A parallelogram `o + s·u + t·v` in `n`×`n` quads, facing u×v.
fn patch(o: [f32; 3], u: [f32; 3], v: [f32; 3], n: usize, pos: &mut Vec<[f32; 3]>, idx: &mut Vec<u32>) {
    let base = pos.len() as u32;
    for j in 0..=n {
        for i in 0..=n {
            let (s, t) = (i as f32 / n as f32, j as f32 / n as f32);
            pos.push([0, 1, 2].map(|a| o[a] + s * u[a] + t * v[a]));
        }
    }
    let row = n as u32 + 1;
    for j in 0..n as u32 {
        for i in 0..n as u32 {
            let a = base + j * row + i;
            idx.extend_from_slice(&[a, a + 1, a + row + 1, a, a + row + 1, a + row]);
        }
    }
}

/// A black sea floor (z = 0, x from 1 to 8) under water 1 unit deep, and a black wall at x = 1
/// facing the sea, under a low sun over the sea: the wall's ambient light is the sun mirrored by
/// the surface, E·R(θi)·cos(elevation) on a wall facing it.
fn shore() -> (Vec<[f32; 3]>, Vec<u32>, WaterMedium) {
    let (mut pos, mut idx) = (Vec::new(), Vec::new());
    patch([1.0, 0.0, 0.0], [7.0, 0.0, 0.0], [0.0, SIZE, 0.0], 28, &mut pos, &mut idx);
    patch([1.0, 0.0, 0.0], [0.0, SIZE, 0.0], [0.0, 0.0, 4.0], 32, &mut pos, &mut idx);
    let mut water = sea(1.0, SEA);
    let nx = water.dims[0];
    // Water east of the wall only.
    water.flooded = (0..water.flooded.len()).map(|s| (s % nx) as f32 * water.voxel_size >= 1.0).collect();
    (pos, idx, water)
}

#[test]
fn the_surface_mirrors_the_low_sun_onto_a_wall_by_fresnel() {
    let (pos, idx, water) = shore();
    let (e, elevation) = (3.0f32, 10.0f32);
    let mut spec = sun_only(elevation, e);
    spec.paths_per_area = 3000.0;
    // Unfiltered: the mirrored band is barely more than a unit tall, and the filter would blend
    // it with the dark wall around it.
    spec.smoothing = 0;
    let mesh = SceneMesh::new(&pos, &idx);
    let none = VolumeDesc { min: [0.0; 3], max: [1.0; 3], dims: [0, 0, 0] };
    let baked = bake_lighting_in_water(&mesh, ([1.0, 0.0, 0.0], [SIZE, SIZE, 4.0]), &none, &spec, 12, Some(&water)).unwrap();
    // The mirrored beam reaches the wall from z = 1 up to 1 + 7·tan 10° ≈ 2.2.
    let points: Vec<[f32; 3]> = (0..5).flat_map(|j| (0..9).map(move |i| [1.0, 2.0 + 0.5 * i as f32, 1.375 + 0.125 * j as f32])).collect();
    let got = baked.irradiance_at(&points, &vec![[1.0, 0.0, 0.0]; points.len()]).unwrap();
    let mean = got.iter().map(|g| g.ambient[0] as f64).sum::<f64>() / got.len() as f64;
    let a = elevation.to_radians();
    let want = (e * (1.0 - fresnel_transmittance(a.sin(), 1.0, optics::WATER_IOR)) * a.cos()) as f64;
    assert!((mean / want - 1.0).abs() < 0.04, "mirrored sun on the wall: {mean} vs {want}");
    // Every colour alike: the mirror is not absorbed.
    assert!(got.iter().all(|g| (g.ambient[2] - g.ambient[0]).abs() <= 1e-6 * g.ambient[0].max(1.0)));
    // Above the mirrored band, nothing.
    let high = baked.irradiance_at(&[[1.0, 4.0, 3.5]], &[[1.0, 0.0, 0.0]]).unwrap()[0];
    assert!(high.ambient[0] < 0.02 * want as f32, "{high:?}");
}

#[test]
fn water_results_do_not_depend_on_the_thread_count() {
    let (pos, idx, water) = shore();
    let mut spec = LightingSpec { paths_per_area: 300.0, albedo: [0.5, 0.6, 0.7], ..LightingSpec::default() };
    spec.sun.direction = Some([0.6, 0.0, 0.8]);
    let volume = VolumeDesc { min: [0.0; 3], max: [SIZE, SIZE, 4.0], dims: [8, 8, 4] };
    let mesh = SceneMesh::new(&pos, &idx);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let baked = bake_lighting_in_water(&mesh, ([0.0; 3], [SIZE, SIZE, 4.0]), &volume, &spec, 31, Some(&water)).unwrap();
            let normals: Vec<[f32; 3]> = (0..pos.len()).map(|i| [0.1 * (i % 3) as f32, 0.0, 1.0]).collect();
            let e = baked.irradiance_at(&pos, &normals).unwrap();
            let mut bits: Vec<u32> = e.iter().flat_map(|x| x.sun_moon.into_iter().chain(x.lights).chain(x.ambient)).map(f32::to_bits).collect();
            let v = baked.volume();
            bits.extend(v.ambient.iter().chain(&v.direct).flatten().flatten().map(|x| x.to_bits()));
            bits
        })
    };
    let one = run(1);
    assert!(one.iter().any(|&b| b != 0));
    assert_eq!(one, run(2), "two threads differ");
    assert_eq!(one, run(3), "three threads differ");
}
