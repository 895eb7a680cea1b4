use super::*;

fn blade(x: f32, width: f32, parent: u32) -> GrassBlade {
    GrassBlade {
        position: [x, 0.25],
        direction: [0.0, 0.0, 1.0],
        normal: [1.0, 0.0, 0.0],
        length: 0.04,
        width,
        bend: 0.2,
        color: [0.2, 0.5, 0.1],
        parent,
    }
}

fn patches() -> GrassPatches {
    let level0 = GrassLevel { segments: 4, blades: vec![blade(0.1, 0.003, 0), blade(0.12, 0.002, 0), blade(0.5, 0.003, 1)] };
    let level1 = GrassLevel { segments: 1, blades: vec![blade(0.11, 0.005, NO_PARENT), blade(0.5, 0.003, NO_PARENT)] };
    let flower = Flower { position: [0.3, 0.3], height: 0.05, radius: 0.005, color: [1.0, 1.0, 0.2] };
    GrassPatches { patch_size: 1.0, tint: [0.2, 0.5, 0.1], patches: vec![GrassPatch { levels: vec![level0, level1], flowers: vec![flower] }] }
}

fn tile() -> GrassTile {
    GrassTile {
        patches_hash: 7,
        origin: [2.0, 4.0],
        spacing: 0.5,
        size: 3,
        height_min: 1.0,
        height_step: 0.01,
        heights: vec![0, 100, 200, 0, 100, 200, 0, 100, 200],
        keep: vec![255, 255, 0, 255, 128, 0, 255, 0, 0],
        light: vec![rgb9e5_one(); 9],
        instances: vec![GrassInstance { origin: [2.0, 4.0], rotation: 3, patch: 0, height_scale: 1.2 }],
    }
}

fn rgb9e5_one() -> u32 {
    super::super::rgb9e5::encode([1.0, 1.0, 1.0])
}

#[test]
fn patches_and_tiles_round_trip() {
    let p = patches();
    assert_eq!(GrassPatches::decode(&p.encode().unwrap()).unwrap(), p);
    let t = tile();
    assert_eq!(GrassTile::decode(&t.encode().unwrap()).unwrap(), t);
}

#[test]
fn maps_interpolate_between_samples_and_clamp_outside() {
    let t = tile();
    assert!((t.height_at(2.0, 4.0) - 1.0).abs() < 1e-6);
    assert!((t.height_at(2.5, 4.0) - 2.0).abs() < 1e-6);
    assert!((t.height_at(2.25, 4.3) - 1.5).abs() < 1e-5);
    assert!((t.height_at(-10.0, 100.0) - 1.0).abs() < 1e-6, "clamped to the corner sample");
    assert!((t.keep_at(3.0, 4.0)).abs() < 1e-6);
    assert!((t.keep_at(2.5, 4.5) - 128.0 / 255.0).abs() < 1e-6);
}

#[test]
fn every_truncation_is_refused() {
    for bytes in [patches().encode().unwrap(), tile().encode().unwrap()] {
        for cut in 0..bytes.len() {
            let kind_is_patches = bytes.len() == patches().encode().unwrap().len();
            let err = if kind_is_patches { GrassPatches::decode(&bytes[..cut]).is_err() } else { GrassTile::decode(&bytes[..cut]).is_err() };
            assert!(err, "a section cut at {cut} of {} bytes was accepted", bytes.len());
        }
    }
}

#[test]
fn broken_chains_and_values_are_refused() {
    let mut p = patches();
    p.patches[0].levels[0].blades[2].parent = 2;
    let e = GrassPatches::decode(&p.encode().unwrap()).unwrap_err().to_string();
    assert!(e.contains("parent 2 of 2"), "{e}");

    let mut p = patches();
    p.patches[0].levels[1].blades[0].parent = 0;
    assert!(GrassPatches::decode(&p.encode().unwrap()).unwrap_err().to_string().contains("last level"));

    let mut p = patches();
    p.patches[0].levels[0].blades[0].length = f32::NAN;
    assert!(GrassPatches::decode(&p.encode().unwrap()).is_err());

    let mut p = patches();
    p.patches[0].levels[1].segments = 0;
    assert!(GrassPatches::decode(&p.encode().unwrap()).is_err());

    let mut p = patches();
    p.patches[0].levels[0].blades[1].position = [5.0, 0.0];
    assert!(GrassPatches::decode(&p.encode().unwrap()).unwrap_err().to_string().contains("outside the patch"));

    let mut p = patches();
    p.patches[0].levels.pop();
    p.patches.push(patches().patches[0].clone());
    assert!(p.encode().is_err(), "patches with different level counts");

    let mut t = tile();
    t.instances[0].rotation = 4;
    assert!(GrassTile::decode(&t.encode().unwrap()).is_err());
    let mut t = tile();
    t.keep.pop();
    assert!(t.encode().is_err());
    let mut t = tile();
    t.spacing = 0.0;
    assert!(GrassTile::decode(&t.encode().unwrap()).is_err());
}

#[test]
fn a_huge_map_claim_is_refused_before_allocating() {
    let mut bytes = tile().encode().unwrap();
    // The side follows the hash (8) and five floats (20).
    bytes[28..32].copy_from_slice(&4000u32.to_le_bytes());
    let e = GrassTile::decode(&bytes).unwrap_err().to_string();
    assert!(e.contains("cannot fit"), "{e}");
}
