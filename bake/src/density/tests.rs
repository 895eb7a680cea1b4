use std::path::Path;

use super::*;
use crate::world::{BrushShape, BrushStroke, Falloff};

fn world(text: &str) -> World {
    World::from_str(text, Path::new("t.toml"), Path::new(".")).unwrap()
}

/// A small cave world; `extra` is appended (e.g. more tables).
fn small(seed: u64, noise: &str, extra: &str) -> World {
    world(&format!(
        "name = 't'\nseed = {seed}\n[volume]\nsize = [64, 32, 24]\nvoxel_size = 0.25\ntile_size = 16\n\
         [noise]\nkind = '{noise}'\nfrequency = 0.15\n\
         [floor]\nheight = 0.5\namplitude = 1.0\nfrequency = 0.1\nfade_start = 2.5\nfade = 1.5\n{extra}"
    ))
}

fn bytes(v: &DensityVolume) -> Vec<u32> {
    v.data.iter().map(|d| d.to_bits()).collect()
}

#[test]
fn same_seed_same_bytes_different_seed_different() {
    for kind in ["sine_products", "perlin", "simplex"] {
        let a = generate(&small(7, kind, ""));
        assert_eq!(bytes(&a), bytes(&generate(&small(7, kind, ""))), "{kind}");
        let b = generate(&small(8, kind, ""));
        let differing = a.data.iter().zip(&b.data).filter(|(p, q)| p != q).count();
        assert!(differing > a.data.len() / 4, "{kind}: only {differing} samples differ");
    }
}

#[test]
fn bytes_do_not_depend_on_the_thread_count() {
    let w = small(3, "sine_products", "[floaters]\nfill_sealed_air = true\n");
    let run = |threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| bytes(&generate(&w)));
    let one = run(1);
    assert_eq!(one, run(3));
    assert_eq!(one, run(7));
}

#[test]
fn values_are_clipped_and_both_phases_occur() {
    for kind in ["sine_products", "perlin", "simplex"] {
        let v = DensityField::new(&small(11, kind, "")).volume();
        assert!(v.data.iter().all(|d| (-1.0..=1.0).contains(d)), "{kind}");
        let solid = v.data.iter().filter(|&&d| d > 0.0).count();
        assert!(solid > v.data.len() / 10 && solid < v.data.len() * 9 / 10, "{kind}: {solid} solid");
    }
    // A large amplitude saturates but stays in range.
    let loud = world(
        "name = 'l'\n[volume]\nsize = [32, 32, 16]\nvoxel_size = 0.25\ntile_size = 16\n\
         [noise]\namplitude = 10.0\n[floor]\nkind = 'none'\nfade_start = 2.0\nfade = 1.0\n",
    );
    let v = DensityField::new(&loud).volume();
    assert!(v.data.iter().all(|d| (-1.0..=1.0).contains(d)));
    assert!(v.data.contains(&1.0) && v.data.contains(&-1.0));
}

#[test]
fn floor_is_solid_below_and_the_top_is_open() {
    let w = small(5, "sine_products", "");
    let field = DensityField::new(&w);
    let floor = field.floor().unwrap().clone();
    let v = field.volume();
    let [nx, ny, nz] = v.dims;
    let vs = 0.25f32;
    for y in 0..ny {
        for x in 0..nx {
            let h = floor.at(x, y);
            assert!((0.5..=1.5).contains(&h), "floor height {h} outside [height, height + amplitude]");
            for z in 0..nz {
                let zw = z as f32 * vs;
                let d = v.get(x, y, z);
                if zw <= h - vs {
                    assert_eq!(d, 1.0, "below the floor at {x},{y},{z}");
                }
                if zw >= h + 2.5 + 1.5 {
                    assert_eq!(d, -1.0, "above the fade at {x},{y},{z}");
                }
            }
            assert!(v.get(x, y, nz - 1) < 0.0);
        }
    }
}

#[test]
fn no_floor_fades_from_z0() {
    let w = world(
        "name = 'n'\n[volume]\nsize = [32, 32, 16]\nvoxel_size = 0.25\ntile_size = 16\n\
         [floor]\nkind = 'none'\nfade_start = 1.0\nfade = 1.0\n",
    );
    let f = DensityField::new(&w);
    assert!(f.floor().is_none());
    let v = f.volume();
    // z = 8 is at 2.0 world units = fade_start + fade.
    assert!((8..16).all(|z| (0..32).all(|y| (0..32).all(|x| v.get(x, y, z) == -1.0))));
}

#[test]
fn heightmap_floor_follows_the_image() {
    let dir = std::env::temp_dir().join(format!("kiln-density-hm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 2 x 2 ramp: west edge 0, east edge full height (rows are north then south).
    let samples: Vec<u8> = [0u16, 65535, 0, 65535].iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(dir.join("ramp.r16"), samples).unwrap();
    let w = World::from_str(
        "name = 'h'\n[volume]\nsize = [32, 16, 16]\nvoxel_size = 0.25\ntile_size = 16\n\
         [floor]\nkind = 'heightmap'\nfile = 'ramp.r16'\nraw_size = [2, 2]\nheight = 0.5\namplitude = 1.0\n\
         fade_start = 1.0\nfade = 0.5\n",
        Path::new("h.toml"),
        &dir,
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let floor = floor_heights(&w).unwrap();
    assert_eq!(floor.at(0, 7), 0.5);
    assert_eq!(floor.at(31, 3), 1.5);
    assert!((floor.at(15, 0) - (0.5 + 15.0 / 31.0)).abs() < 1e-6);
    assert_eq!(floor.ground_layers(16, 0.25)[31], 6); // z = 0..5 lie below 1.5
}

#[test]
fn sample_raw_matches_the_raw_volume() {
    for kind in ["sine_products", "perlin"] {
        let w = small(21, kind, "");
        let field = DensityField::new(&w);
        let v = field.volume();
        for &(x, y, z) in &[(0, 0, 0), (63, 31, 23), (13, 7, 5), (30, 20, 9)] {
            assert_eq!(field.sample(x, y, z).to_bits(), v.get(x, y, z).to_bits(), "{kind}");
            assert_eq!(sample_raw(&w, x, y, z).to_bits(), v.get(x, y, z).to_bits(), "{kind}");
        }
    }
}

#[test]
fn generate_applies_brushes_then_removes_floaters() {
    let mut w = small(9, "sine_products", "");
    let raw = DensityField::new(&w).volume();
    // A solid cube high in the open air is a floater: with removal on it must vanish.
    let cube = BrushStroke { shape: BrushShape::Cube, falloff: Falloff::Constant, radius: 0.5, weight: 2.0, position: [6.0, 4.0, 5.5] };
    w.brushes = vec![cube];
    let (v, stats) = generate_with_stats(&w);
    let (cx, cy, cz) = (24, 16, 22);
    assert_eq!(raw.get(cx, cy, cz), -1.0);
    assert_eq!(v.get(cx, cy, cz), -1.0, "floating cube removed");
    assert!(stats.floater_samples_removed >= 5 * 5 * 3);
    // Without removal it stays.
    w.spec.floaters.remove = false;
    let (kept, stats) = generate_with_stats(&w);
    assert_eq!(kept.get(cx, cy, cz), 1.0);
    assert_eq!(stats.floater_samples_removed, 0);
    // Every solid sample left by removal is connected to the ground: removal is idempotent.
    let mut again = v.clone();
    let ground = floor_heights(&w).unwrap().ground_layers(24, 0.25);
    assert_eq!(remove_floaters(&mut again, Some(&ground)), 0);
}

#[test]
fn block_reads_with_stride_and_clamps_the_halo() {
    let v = DensityVolume::from_fn([6, 5, 4], |x, y, z| (x + 10 * y + 100 * z) as f32);
    let b = v.block([-1, -1, -1], [8, 7, 6], 1);
    assert_eq!((b.origin, b.dims, b.stride), ([-1, -1, -1], [8, 7, 6], 1));
    assert_eq!(b.at(0, 0, 0), 0.0);
    assert_eq!(b.at(1, 1, 1), 0.0);
    assert_eq!(b.at(2, 3, 4), 1.0 + 20.0 + 300.0);
    assert_eq!(b.at(7, 6, 5), 5.0 + 40.0 + 300.0);
    let s = v.block([0, 0, 0], [4, 3, 3], 2);
    assert_eq!(s.at(1, 1, 1), 2.0 + 20.0 + 200.0);
    assert_eq!(s.at(3, 2, 2), 5.0 + 40.0 + 300.0); // 6, 4, 4 clamped
                                                   // Matches DensityBlock::from_fn with clamping.
    let expect =
        DensityBlock::from_fn([3, -2, 1], [5, 4, 3], 2, |x, y, z| v.get(x.clamp(0, 5) as usize, y.clamp(0, 4) as usize, z.clamp(0, 3) as usize));
    assert_eq!(v.block([3, -2, 1], [5, 4, 3], 2), expect);
}

#[test]
fn shipped_tiny_world_generates() {
    let tiny = crate::world::load_world(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/tiny.toml")).unwrap();
    let v = generate(&tiny);
    assert_eq!(v.dims, tiny.dims());
    let solid = v.data.iter().filter(|&&d| d > 0.0).count();
    assert!(solid > v.data.len() / 10 && solid < v.data.len() * 9 / 10, "{solid} solid");
}
