//! `[water]` in world files: every key's range refused at its key with file:line:col (hostile values
//! included: NaN, a level outside the volume, a wave loop beyond the memory bound), the documented
//! defaults, and a world without water unchanged.

use std::path::Path;

use super::*;

/// A 64 × 64 × 32 world of voxel 0.25: its top sample is at z = 7.75.
fn world(water: &str) -> String {
    format!("name = 'w'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n{water}")
}

fn err(text: &str) -> String {
    World::from_str(text, Path::new("w.toml"), Path::new(".")).expect_err("should be refused").to_string()
}

#[test]
fn water_keys_out_of_range_are_refused_at_their_key() {
    let cases = [
        ("level = nan", "water.level", "outside the volume"),
        ("level = -0.5", "water.level", "outside the volume"),
        ("level = 7.75", "water.level", "outside the volume"),
        ("level = 1e30", "water.level", "outside the volume"),
        ("level = 1.0\nabsorption = [0.1, -0.2, 0.3]", "water.absorption", "each channel"),
        ("level = 1.0\nabsorption = [0.1, 0.2]", "water.absorption", "expected an array of length 3"),
        ("level = 1.0\nabsorption = [0.1, inf, 0.2]", "water.absorption", "each channel"),
        ("level = 1.0\nior = 0.9", "water.ior", "outside"),
        ("level = 1.0\nior = nan", "water.ior", "outside"),
        ("level = 1.0\nmetres_per_unit = 0.0", "water.metres_per_unit", "outside"),
        ("level = 1.0\ndepth = 3", "depth", "unknown field"),
        ("level = 1.0\n[water.waves]\nspectrum = 'pierson'", "water.waves.spectrum", "unknown variant"),
        ("level = 1.0\n[water.waves]\nwind_speed = 101.0", "water.waves.wind_speed", "outside"),
        ("level = 1.0\n[water.waves]\nchoppiness = 5.0", "water.waves.choppiness", "outside"),
        ("level = 1.0\n[water.waves]\nwind_speed = -inf", "water.waves.wind_speed", "outside"),
        ("level = 1.0\n[water.waves]\nwind_direction = 400.0", "water.waves.wind_direction", "outside"),
        ("level = 1.0\n[water.waves]\nfetch = 0.0", "water.waves.fetch", "outside"),
        ("level = 1.0\n[water.waves]\nchoppiness = -1.0", "water.waves.choppiness", "outside"),
        ("level = 1.0\n[water.waves]\namplitude = nan", "water.waves.amplitude", "outside"),
        ("level = 1.0\n[water.waves]\npatch_size = 0.0", "water.waves.patch_size", "outside"),
        ("level = 1.0\n[water.waves]\nperiod = 0.0", "water.waves.period", "outside"),
        ("level = 1.0\n[water.waves]\nframes = 0", "water.waves.frames", "outside"),
        ("level = 1.0\n[water.waves]\nframes = 257", "water.waves.frames", "outside"),
        ("level = 1.0\n[water.waves]\nresolution = 100", "water.waves.resolution", "power of two"),
        ("level = 1.0\n[water.waves]\nresolution = 8", "water.waves.resolution", "power of two"),
        ("level = 1.0\n[water.waves]\nresolution = 2048", "water.waves.resolution", "power of two"),
        ("level = 1.0\n[water.waves]\nframes = 256\nresolution = 1024", "water.waves.frames", "texel-frames"),
        ("level = 1.0\n[water.waves]\nswell = 1.0", "swell", "unknown field"),
        ("level = 1.0\n[water.caustics]\ndepths = 0", "water.caustics.depths", "outside"),
        ("level = 1.0\n[water.caustics]\ndepths = 9", "water.caustics.depths", "outside"),
        ("level = 1.0\n[water.caustics]\ndepths = [0.5, 0.25]", "water.caustics.depths", "increasing"),
        ("level = 1.0\n[water.caustics]\ndepths = [0.0, 0.25]", "water.caustics.depths", "increasing"),
        ("level = 1.0\n[water.caustics]\ndepths = []", "water.caustics.depths", "1 to 8"),
    ];
    for (water, key, problem) in cases {
        let text = world(&format!("[water]\n{water}\n"));
        let e = err(&text);
        assert!(e.contains("w.toml:") && e.contains(key) && e.contains(problem), "{water:?}: {e}");
        // file:line:col points into the [water] table (line 6 on), not at the top of the file.
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!(line >= 6, "{water:?}: {e}");
    }
    let e = err(&world("[water]\nior = 1.3\n"));
    assert!(e.contains("level"), "the level is required: {e}");
}

#[test]
fn defaults_are_the_documented_ones() {
    let w = World::from_str(&world("[water]\nlevel = 2.0\n"), Path::new("w.toml"), Path::new(".")).unwrap();
    let s = w.spec.water.as_ref().unwrap();
    assert_eq!((s.level, s.absorption, s.ior, s.metres_per_unit), (2.0, None, 1.333, 1.0));
    assert_eq!(s.waves, WavesSpec::default());
    assert_eq!((s.waves.frames, s.waves.resolution, s.waves.spectrum), (64, 256, SpectrumKind::Jonswap));
    assert_eq!(s.caustics.depths, CausticDepthsSpec::Count(4));
    assert_eq!(s.absorption_per_unit(), CLEAR_SEA_ABSORPTION_PER_METRE);
    // A world unit of 10 cm absorbs a tenth as much per unit.
    let small = WaterSpec { metres_per_unit: 0.1, ..s.clone() };
    for (a, b) in small.absorption_per_unit().iter().zip(CLEAR_SEA_ABSORPTION_PER_METRE) {
        assert!((a - 0.1 * b).abs() < 1e-12);
    }
    // A list of depths parses as a list.
    let listed = World::from_str(&world("[water]\nlevel = 2.0\n[water.caustics]\ndepths = [0.5, 1.0]\n"), Path::new("w.toml"), Path::new("."))
        .unwrap();
    assert_eq!(listed.spec.water.unwrap().caustics.depths, CausticDepthsSpec::List(vec![0.5, 1.0]));
    // The default loop: 64 × 256² texels × (16 + 12 + 4·4) bytes.
    assert_eq!(s.wave_bytes(), 64 * 256 * 256 * 44);
}

#[test]
fn a_world_without_water_states_no_water_table_and_one_with_water_round_trips() {
    let plain = World::from_str(&world(""), Path::new("w.toml"), Path::new(".")).unwrap();
    assert!(plain.spec.water.is_none());
    assert!(!plain.spec.canonical_toml().contains("water"));
    let text = "[water]\nlevel = 1.5\nabsorption = [0.3, 0.1, 0.05]\n[water.waves]\nspectrum = 'phillips'\nframes = 16\n\
                [water.caustics]\ndepths = [0.25, 0.5, 1.0]\n";
    let wet = World::from_str(&world(text), Path::new("w.toml"), Path::new(".")).unwrap();
    let back: WorldSpec = toml::from_str(&wet.spec.canonical_toml()).unwrap();
    assert_eq!(back, wet.spec);
    let back = World::from_embedded(&wet.embedded_sources(), Path::new("manifest.kpack")).unwrap();
    assert_eq!(back.spec.water, wet.spec.water);
}
