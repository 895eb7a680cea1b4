use super::march::{march_interleaved, nearest_voxel, Kernel, Ray, BATCH};
use super::*;

/// SplitMix64: a tiny deterministic generator so the tests need no extra dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

fn index(dims: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    x + dims[0] * (y + dims[1] * z)
}

/// Independent reference of the definition: plain occupancy flags and the unit-step march.
struct Reference {
    dims: [usize; 3],
    solid: Vec<bool>,
}

impl Reference {
    fn cell_is_solid(&self, v: [i32; 3]) -> Option<bool> {
        if v[2] < 0 {
            return Some(true);
        }
        let [nx, ny, nz] = self.dims.map(|n| n as i32);
        if v[0] < 0 || v[1] < 0 || v[0] >= nx || v[1] >= ny || v[2] >= nz {
            return None;
        }
        Some(self.solid[index(self.dims, v[0] as usize, v[1] as usize, v[2] as usize)])
    }

    /// The definition's march: every sample in turn, until solid or outside.
    fn march(&self, ray: &Ray) -> Option<u32> {
        for k in 1..=ray.max_samples {
            match self.cell_is_solid(ray.voxel(k)) {
                Some(true) => return Some(k),
                Some(false) => {}
                None => return None,
            }
        }
        None
    }

    fn field(&self) -> OccupancyField {
        OccupancyField::from_occupancy(self.dims, &self.solid).unwrap()
    }
}

/// Winding tunnels from sine products plus random boulders, solid below z = 2.
fn cave(dims: [usize; 3], seed: u64) -> Reference {
    let mut rng = Rng(seed);
    let boulders: Vec<[f32; 4]> = (0..12)
        .map(|_| {
            let c = dims.map(|n| rng.unit() * n as f32);
            [c[0], c[1], c[2], 1.0 + 4.0 * rng.unit()]
        })
        .collect();
    let mut solid = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                let (fx, fy, fz) = (x as f32, y as f32, z as f32);
                let d = (fx * 0.21).sin() * (fy * 0.17 + 1.0).cos() * (fz * 0.29).sin() + 0.5 * (fx * 0.07 + fz * 0.11).sin() * (fy * 0.09).cos();
                let boulder = boulders.iter().any(|b| {
                    let (dx, dy, dz) = (fx - b[0], fy - b[1], fz - b[2]);
                    dx * dx + dy * dy + dz * dz < b[3] * b[3]
                });
                solid.push(z < 2 || d > 0.1 || boulder);
            }
        }
    }
    Reference { dims, solid }
}

fn random_unit(rng: &mut Rng) -> [f32; 3] {
    loop {
        let v = [rng.unit() * 2.0 - 1.0, rng.unit() * 2.0 - 1.0, rng.unit() * 2.0 - 1.0];
        let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        if l2 > 0.01 && l2 <= 1.0 {
            let l = l2.sqrt();
            return v.map(|c| c / l);
        }
    }
}

/// Vertices like a mesher's: on faces between an air voxel and a solid 6-neighbour, jittered,
/// with the normal pointing into the air plus noise (sometimes pointing into the rock).
fn surface_vertices(r: &Reference, count: usize, rng: &mut Rng) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let (mut pos, mut nrm) = (Vec::new(), Vec::new());
    let offsets = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];
    while pos.len() < count {
        let v = r.dims.map(|n| rng.below(n) as i32);
        if r.cell_is_solid(v) != Some(false) {
            continue;
        }
        let o = offsets[rng.below(6)];
        if r.cell_is_solid([v[0] + o[0], v[1] + o[1], v[2] + o[2]]) != Some(true) {
            continue;
        }
        let t = 0.5 * rng.unit() + 0.2;
        let jitter = random_unit(rng);
        pos.push([0, 1, 2].map(|a| v[a] as f32 + t * o[a] as f32 + 0.3 * jitter[a]));
        let noise = random_unit(rng);
        nrm.push([0, 1, 2].map(|a| -(o[a] as f32) + 0.8 * noise[a]));
    }
    (pos, nrm)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn distance_field_matches_brute_force_chebyshev() {
    let mut rng = Rng(11);
    let cases = [([13, 11, 9], 0.0f32), ([14, 11, 11], 0.02), ([1, 9, 7], 0.1), ([15, 1, 13], 0.15), ([16, 11, 15], 0.6), ([41, 37, 23], 0.0004)];
    for (dims, density) in cases {
        let solid: Vec<bool> = (0..dims[0] * dims[1] * dims[2]).map(|_| rng.unit() < density).collect();
        let field = OccupancyField::from_occupancy(dims, &solid).unwrap();
        let solids: Vec<[i32; 3]> = (0..dims[2])
            .flat_map(|z| (0..dims[1]).flat_map(move |y| (0..dims[0]).map(move |x| [x, y, z])))
            .filter(|&[x, y, z]| solid[index(dims, x, y, z)])
            .map(|v| v.map(|c| c as i32))
            .collect();
        for z in 0..dims[2] as i32 {
            for y in 0..dims[1] as i32 {
                for x in 0..dims[0] as i32 {
                    let nearest = solids.iter().map(|s| (s[0] - x).abs().max((s[1] - y).abs()).max((s[2] - z).abs())).fold(z + 1, i32::min); // the ground plane at z = -1
                    assert_eq!(field.chebyshev_distance(x, y, z), Some(nearest.min(255) as u8), "({x},{y},{z})");
                }
            }
        }
    }
}

#[test]
fn distance_field_saturates_at_255() {
    let field = OccupancyField::from_occupancy([2, 1, 300], &[false; 600]).unwrap();
    for z in 0..300 {
        assert_eq!(field.chebyshev_distance(1, 0, z), Some((z + 1).min(255) as u8));
    }
    assert_eq!(field.chebyshev_distance(2, 0, 0), None);
}

#[test]
fn occupancy_rules_inside_and_outside_the_volume() {
    let dens = [0.5, 0.0, -0.5, f32::NAN, 1e-9, -1.0, 1.0, f32::INFINITY];
    let field = OccupancyField::from_densities([2, 2, 2], &dens).unwrap();
    let inside: Vec<bool> = (0..8).map(|i| field.is_solid(i & 1, (i >> 1) & 1, i >> 2)).collect();
    assert_eq!(inside, [true, false, false, false, true, false, true, true]);
    assert!(field.is_solid(0, 0, -1) && field.is_solid(-5, 9, -3), "below z = 0 is ground");
    assert!(!field.is_solid(-1, 0, 0) && !field.is_solid(0, 2, 1) && !field.is_solid(0, 0, 2));
}

#[test]
fn nearest_voxel_rounds_to_nearest() {
    let mut rng = Rng(3);
    for _ in 0..10_000 {
        let q = [0, 1, 2].map(|_| rng.unit() * 9000.0 - 1000.0);
        let v = nearest_voxel(q);
        assert!((0..3).all(|a| (q[a] - v[a] as f32).abs() <= 0.5), "{q:?} -> {v:?}");
    }
    // Ties go to even; far outside, only the side of the volume matters.
    assert_eq!(nearest_voxel([2.5, 3.5, -0.5]), [2, 4, 0]);
    let far = nearest_voxel([-3e38, 3e38, f32::NEG_INFINITY]);
    assert!(far[0] < 0 && far[1] > MAX_DIM as i32 && far[2] < 0);
    assert!(nearest_voxel([f32::INFINITY, 5e6, 0.0])[..2].iter().all(|&c| c > MAX_DIM as i32));
}

#[test]
fn open_plane_is_exactly_one() {
    let dims = [64, 64, 32];
    let solid: Vec<bool> = (0..64 * 64 * 32).map(|i| i / (64 * 64) < 10).collect();
    let field = OccupancyField::from_occupancy(dims, &solid).unwrap();
    // Surface vertices between z = 9 (solid) and z = 10 (air), including at the volume edges.
    let pos: Vec<[f32; 3]> = (0..200).map(|i| [(i % 64) as f32, (i * 7 % 64) as f32 + 0.25, 9.1 + 0.004 * i as f32]).collect();
    let nrm = vec![[0.0, 0.0, 3.0]; pos.len()]; // unnormalised on purpose
    let ao = ambient_occlusion(&field, &pos, &nrm, &AoSettings::default()).unwrap();
    assert!(ao.iter().all(|&a| a == 1.0), "{ao:?}");
}

#[test]
fn tilted_open_planes_are_exactly_one() {
    // The default start offset of one voxel puts the start voxel on the air side of any plane, and
    // every hemisphere ray moves away from it, so no tilt may self-occlude.
    let dims = [64, 64, 48];
    let mut rng = Rng(17);
    for _ in 0..12 {
        let mut n = random_unit(&mut rng);
        n[2] = n[2].abs().max(0.2);
        let sd = |p: [f32; 3]| n[0] * (p[0] - 32.0) + n[1] * (p[1] - 32.0) + n[2] * (p[2] - 24.0);
        let solid: Vec<bool> =
            (0..dims[0] * dims[1] * dims[2]).map(|i| sd([(i % 64) as f32, ((i / 64) % 64) as f32, (i / 4096) as f32]) < 0.0).collect();
        let field = OccupancyField::from_occupancy(dims, &solid).unwrap();
        // Points near the centre projected onto the plane; with a 12-voxel radius every ray stays
        // clear of the ground under the volume and leaves it, if at all, through its sides or top.
        let pos: Vec<[f32; 3]> = (0..300)
            .map(|_| {
                let p = [28.0 + 8.0 * rng.unit(), 28.0 + 8.0 * rng.unit(), 24.0];
                let d = sd(p);
                [p[0] - d * n[0], p[1] - d * n[1], p[2] - d * n[2]]
            })
            .collect();
        let s = AoSettings { radius_voxels: 12.0, ..AoSettings::default() };
        let ao = ambient_occlusion(&field, &pos, &vec![n; pos.len()], &s).unwrap();
        assert!(ao.iter().all(|&a| a == 1.0), "normal {n:?}: {ao:?}");
    }
}

#[test]
fn concave_corners_darken_monotonically() {
    let dims = [64, 64, 32];
    // Floor z < 10 and full-height walls x < 30 and/or x > right; the vertex sits on the floor at
    // x = 31.6, so its rays start from voxel (32, 32, 10).
    let ao_at = |left: bool, right: usize, power: f32| {
        let solid: Vec<bool> = (0..dims[0] * dims[1] * dims[2])
            .map(|i| {
                let (x, z) = (i % dims[0], i / (dims[0] * dims[1]));
                z < 10 || (left && x < 30) || x > right
            })
            .collect();
        let field = OccupancyField::from_occupancy(dims, &solid).unwrap();
        let settings = AoSettings { radius_voxels: 24.0, power, ..AoSettings::default() };
        ambient_occlusion(&field, &[[31.6, 32.0, 9.5]], &[[0.0, 0.0, 1.0]], &settings).unwrap()[0]
    };
    let plane = ao_at(false, 64, 1.0);
    let corner = ao_at(true, 64, 1.0);
    // Slots ever narrower, down to one voxel of air on the vertex's right.
    let slots: Vec<f32> = [44, 40, 36, 34, 33, 32].iter().map(|&r| ao_at(true, r, 1.0)).collect();
    assert_eq!(plane, 1.0);
    assert!(corner < plane && slots[0] < corner, "{plane} {corner} {slots:?}");
    assert!(slots.windows(2).all(|w| w[1] < w[0]) && slots[5] > 0.0, "{slots:?}");
    // The power only reshapes: AO^2 exactly.
    assert_eq!(ao_at(true, 36, 2.0), slots[2].powf(2.0));
}

/// Runs the production kernel with the reference unit-step march instead of the skipping one.
fn reference_ao(r: &Reference, pos: &[[f32; 3]], nrm: &[[f32; 3]], s: &AoSettings) -> Vec<f32> {
    let kernel = Kernel::new(s);
    pos.iter()
        .zip(nrm)
        .map(|(p, n)| {
            kernel.vertex_ao(*p, *n, |rays, hits| {
                for (ray, hit) in rays.iter().zip(hits) {
                    *hit = r.march(ray);
                }
            })
        })
        .collect()
}

#[test]
fn skipping_equals_brute_force_in_caves() {
    let mut rng = Rng(42);
    let r = cave([64, 64, 32], 1);
    let field = r.field();
    let (pos, nrm) = surface_vertices(&r, 1500, &mut rng);
    let variants = [
        AoSettings::default(),
        AoSettings { radius_voxels: 37.3, start_offset_voxels: 0.0, ..AoSettings::default() },
        AoSettings { radius_voxels: 300.0, start_offset_voxels: 1.3, power: 1.7, ..AoSettings::default() },
    ];
    for s in &variants {
        let fast = ambient_occlusion(&field, &pos, &nrm, s).unwrap();
        assert_eq!(bits(&fast), bits(&reference_ao(&r, &pos, &nrm, s)), "{s:?}");
        assert!(fast.iter().all(|a| (0.0..=1.0).contains(a)));
        // Caves must actually occlude, or the comparison proves little.
        assert!(fast.iter().filter(|&&a| a < 0.5).count() > pos.len() / 4);
    }
}

#[test]
fn skipping_equals_brute_force_for_long_skips_and_any_ray() {
    // Rays that skip far, leave through every face, start outside or run out of samples.
    let mut rng = Rng(5);
    let dims = [61, 57, 300];
    // Scattered rock below z = 120 and empty sky above it, so distances reach the cap.
    let solid: Vec<bool> = (0..dims[0] * dims[1] * dims[2]).map(|i| i < dims[0] * dims[1] * 120 && rng.below(40) == 0).collect();
    let r = Reference { dims, solid };
    let field = r.field();
    let offsets = AoDirections::Grid26.offsets();
    let (mut hits, mut escapes, mut ground) = (0, 0, 0);
    for _ in 0..200 {
        // Batches of random rays, as the kernel hands them over.
        let rays: Vec<Ray> = (0..1 + rng.below(BATCH))
            .map(|_| Ray {
                origin: [0, 1, 2].map(|a| rng.below(dims[a] + 8) as i32 - 4),
                offset: offsets[rng.below(26)],
                max_samples: rng.below(400) as u32,
            })
            .collect();
        let mut fast = vec![Some(u32::MAX); rays.len()];
        march_interleaved(&field, &rays, &mut fast);
        for (ray, &hit) in rays.iter().zip(&fast) {
            assert_eq!(hit, r.march(ray), "{ray:?}");
            match hit {
                Some(k) if ray.voxel(k)[2] < 0 => ground += 1,
                Some(_) => hits += 1,
                None => escapes += 1,
            }
        }
    }
    assert!(hits > 300 && escapes > 300 && ground > 20, "{hits} hits, {escapes} escapes, {ground} ground");
    assert_eq!(field.chebyshev_distance(30, 28, 299), Some(180), "long skips are exercised");
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let r = cave([64, 48, 32], 9);
    let mut rng = Rng(8);
    let (pos, nrm) = surface_vertices(&r, 4000, &mut rng);
    let dens: Vec<f32> = r.solid.iter().map(|&s| if s { 0.5 } else { -0.5 }).collect();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let field = OccupancyField::from_densities(r.dims, &dens).unwrap();
            let ao = ambient_occlusion(&field, &pos, &nrm, &AoSettings::default()).unwrap();
            (field, bits(&ao))
        })
    };
    let (one, two, three) = (run(1), run(2), run(3));
    assert!(one == two && two == three);
    assert_eq!(one.0, r.field(), "densities and flags build the same field");
}

#[test]
fn bad_input_is_an_error() {
    let field = OccupancyField::from_occupancy([4, 4, 4], &[false; 64]).unwrap();
    assert_eq!(OccupancyField::from_densities([4, 4, 4], &[0.0; 63]), Err(AoError::DensityCount { dims: [4, 4, 4], expected: 64, actual: 63 }));
    assert!(matches!(OccupancyField::from_densities([0, 4, 4], &[]), Err(AoError::BadDims { .. })));
    assert!(matches!(OccupancyField::from_densities([MAX_DIM + 1, 1, 1], &[]), Err(AoError::BadDims { .. })));
    let s = AoSettings::default();
    let p = [[1.0, 1.0, 1.0]];
    assert_eq!(ambient_occlusion(&field, &p, &[], &s), Err(AoError::LengthMismatch { positions: 1, normals: 0 }));
    let bad = [[0.0, 0.0, 1.0], [0.0, f32::NAN, 1.0]];
    assert_eq!(ambient_occlusion(&field, &[[1.0; 3]; 2], &bad, &s), Err(AoError::NonFiniteVertex { index: 1 }));
    for bad in [
        AoSettings { radius_voxels: 0.0, ..s.clone() },
        AoSettings { radius_voxels: f32::NAN, ..s.clone() },
        AoSettings { start_offset_voxels: -1.0, ..s.clone() },
        AoSettings { power: 0.0, ..s.clone() },
    ] {
        assert!(matches!(ambient_occlusion(&field, &p, &p, &bad), Err(AoError::BadSetting { .. })), "{bad:?}");
    }
    // Degenerate but finite input is well defined: a zero normal has no hemisphere.
    assert_eq!(ambient_occlusion(&field, &p, &[[0.0; 3]], &s), Ok(vec![1.0]));
    let far = [[1e30, -1e30, 5.0]];
    assert_eq!(ambient_occlusion(&field, &far, &[[0.0, 0.0, 1.0]], &s), Ok(vec![1.0]));
}

#[test]
fn settings_serialise_with_defaults() {
    let s = AoSettings { power: 1.5, start_offset_voxels: 0.75, ..AoSettings::default() };
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<AoSettings>(&json).unwrap(), s);
    let partial: AoSettings = toml::from_str("radius_voxels = 64.0\ndirections = \"grid26\"").unwrap();
    assert_eq!(partial, AoSettings { radius_voxels: 64.0, ..AoSettings::default() });
    assert!(toml::from_str::<AoSettings>("radius = 64.0").is_err(), "unknown keys are rejected");
    let offsets = AoDirections::Grid26.offsets();
    assert_eq!(offsets.len(), 26);
    assert_eq!((offsets[0], offsets[25]), ([-1, -1, -1], [1, 1, 1]));
}
