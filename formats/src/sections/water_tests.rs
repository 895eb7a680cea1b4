use super::*;
use half::f16;

fn bits(v: f32) -> u16 {
    f16::from_f32(v).to_bits()
}

fn waves() -> WaterWaves {
    let (r, f, d) = (16u32, 2u32, 2usize);
    let n = (r * r * f) as usize;
    WaterWaves {
        patch_size: 4.0,
        period: 10.0,
        resolution: r,
        frames: f,
        sun_direction: [0.6, 0.0, 0.8],
        ior: 1.333,
        flat_transmittance: 0.97,
        depths: vec![0.5, 1.0],
        surface: (0..n).map(|i| [bits(0.01 * (i % 7) as f32), bits(-0.02), bits(0.1), bits(1.0)]).collect(),
        normals: (0..n).map(|i| [bits(0.1 * (i % 3) as f32), bits(0.05)]).collect(),
        caustics: (0..n * d).map(|i| bits(0.5 + (i % 5) as f32 * 0.2)).collect(),
    }
}

fn tile() -> WaterTile {
    WaterTile {
        waves_hash: 0x1234,
        level: 1.5,
        absorption: [3.4, 0.565, 0.092],
        origin: [0.0, 2.0],
        spacing: 0.0625,
        size: 3,
        depth_step: 0.001,
        depth: vec![0, 5, 900, 0, 1, 2, 0, 0, 7],
        shore: vec![0, 1, 2, 0, 1, 1, 0, 0, 1],
    }
}

#[test]
fn waves_round_trip_and_read_back_as_maps() {
    let w = waves();
    let back = WaterWaves::decode(&w.encode().unwrap()).unwrap();
    assert_eq!(back, w);
    assert_eq!(back.caustic_map(1, 1).len(), 256);
    let n = back.normal_map(0)[1];
    assert!((n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0).abs() < 1e-3);
    assert!(!back.summary().is_empty());
}

#[test]
fn waves_refuse_what_a_reader_cannot_use() {
    let good = waves().encode().unwrap();
    // Truncated maps.
    assert!(WaterWaves::decode(&good[..good.len() - 2]).is_err());
    let mut w = waves();
    w.resolution = 24;
    w.surface.truncate(24 * 24 * 2);
    w.normals.truncate(24 * 24 * 2);
    assert!(w.encode().is_err(), "lengths follow the resolution");
    let mut w = waves();
    w.depths = vec![1.0, 0.5];
    assert!(WaterWaves::decode(&w.encode().unwrap()).is_err(), "depths must increase");
    let mut w = waves();
    w.caustics[3] = bits(-1.0);
    assert!(WaterWaves::decode(&w.encode().unwrap()).is_err(), "negative light");
    let mut w = waves();
    w.normals[0][1] = f16::NAN.to_bits();
    assert!(WaterWaves::decode(&w.encode().unwrap()).is_err());
    let mut w = waves();
    w.sun_direction = [0.0, 0.6, -0.8];
    assert!(WaterWaves::decode(&w.encode().unwrap()).is_err(), "a sun below the horizon casts no caustics");
}

#[test]
fn tile_round_trips_and_refuses_inconsistent_maps() {
    let t = tile();
    let back = WaterTile::decode(&t.encode().unwrap()).unwrap();
    assert_eq!(back, t);
    assert!(back.is_water(1, 0) && !back.is_water(0, 0));
    assert!((back.depth_at(2, 0) - 0.9).abs() < 1e-6);
    let mut bad_shore = tile();
    bad_shore.shore[0] = 3;
    assert!(WaterTile::decode(&bad_shore.encode().unwrap()).is_err(), "a shore distance on dry land");
    let raw = t.encode().unwrap();
    assert!(WaterTile::decode(&raw[..raw.len() - 1]).is_err());
    let mut neg = tile();
    neg.absorption[1] = -0.1;
    assert!(WaterTile::decode(&neg.encode().unwrap()).is_err());
}
