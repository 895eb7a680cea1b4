//! `[grass]` in world files: every key's range refused at its key with file:line:col, the patch size
//! rounded to a whole fraction of a tile, the density image confined and embedded, and a world
//! without grass unchanged.

use std::path::{Path, PathBuf};

use super::*;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-grass-world-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn world(grass: &str) -> String {
    format!("name = 'g'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n{grass}")
}

fn err(text: &str) -> String {
    World::from_str(text, Path::new("w.toml"), Path::new(".")).expect_err("should be refused").to_string()
}

#[test]
fn grass_keys_out_of_range_are_refused_at_their_key() {
    let cases = [
        ("density = 0.0", "grass.density", "outside"),
        ("density = -5.0", "grass.density", "outside"),
        ("density = nan", "grass.density", "outside"),
        ("patch_size = 0.0", "grass.patch_size", "outside"),
        ("patches = 0", "grass.patches", "outside"),
        ("patches = 65", "grass.patches", "outside"),
        ("levels = 5", "grass.levels", "outside"),
        ("levels = 13", "grass.levels", "outside"),
        ("blade_length = 0.0", "grass.blade_length", "outside"),
        ("blade_width = 2.0", "grass.blade_width", "outside"),
        ("variation = 0.95", "grass.variation", "outside"),
        ("lean = -1.0", "grass.lean", "outside"),
        ("bend = 1.0", "grass.bend", "outside"),
        ("color = [0.2, 1.5, 0.1]", "grass.color", "each channel"),
        ("color = [0.2, 0.5]", "grass.color", "expected an array of length 3"),
        ("color_variation = 1.0", "grass.color_variation", "outside"),
        ("max_slope = 90.0", "grass.max_slope", "outside"),
        ("height_band = [3.0, 1.0]", "grass.height_band", "above the maximum"),
        ("height = [0.0, 1.0]", "grass.height", "outside"),
        ("height = [1.5, 1.0]", "grass.height", "above the maximum"),
        ("ao_prune = 1", "grass.ao_prune", "invalid type"),
        ("flowers = -1.0", "grass.flowers", "outside"),
        ("density = 100000.0\npatch_size = 4.0", "grass.density", "blades per patch"),
        ("blades = 3", "blades", "unknown field"),
    ];
    for (grass, key, problem) in cases {
        let text = world(&format!("[grass]\n{grass}\n"));
        let e = err(&text);
        assert!(e.contains("w.toml:") && e.contains(key) && e.contains(problem), "{grass:?}: {e}");
        // file:line:col points into the [grass] table (line 6 on), not at the top of the file.
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!(line >= 6, "{grass:?}: {e}");
    }
}

#[test]
fn defaults_are_the_documented_ones_and_the_patch_size_divides_a_tile() {
    let w = World::from_str(&world("[grass]\n"), Path::new("w.toml"), Path::new(".")).unwrap();
    let g = w.spec.grass.as_ref().unwrap();
    assert_eq!(*g, GrassSpec::default());
    assert_eq!((g.density, g.patch_size, g.patches, g.levels), (2000.0, 1.0, 24, 6));
    assert_eq!((g.max_slope, g.height, g.ao_prune, g.flowers), (40.0, [0.8, 1.2], true, 0.0));
    // Tiles of 16 voxels × 0.25 = 4 units: patches of 1.0 fit 4 to a side; 1.3 rounds to 3 (side 4/3).
    assert_eq!(g.patches_per_tile(4.0), 4);
    let odd = GrassSpec { patch_size: 1.3, ..GrassSpec::default() };
    assert_eq!(odd.patches_per_tile(4.0), 3);
    assert!((odd.patch_side(4.0) - 4.0 / 3.0).abs() < 1e-12);
    // Larger than a tile: one patch per tile.
    let big = GrassSpec { patch_size: 9.0, density: 10.0, ..GrassSpec::default() };
    assert_eq!((big.patches_per_tile(4.0), big.patch_side(4.0)), (1, 4.0));
    // Slope compensation: grown at density / cos(max_slope).
    assert!((g.patch_density() - 2000.0 / 40f64.to_radians().cos()).abs() < 1e-9);
}

#[test]
fn the_density_image_stays_in_the_world_directory_and_travels_with_the_bake() {
    let dir = scratch("image");
    let outside = scratch("image-outside");
    std::fs::write(outside.join("d.png"), b"not read").unwrap();
    let rel = format!("../{}/d.png", outside.file_name().unwrap().to_string_lossy());
    let e = World::from_str(&world(&format!("[grass]\ndensity_image = '{rel}'\n")), &dir.join("w.toml"), &dir).unwrap_err().to_string();
    assert!(e.contains("grass.density_image"), "{e}");

    let mut png = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png, 2, 2);
        enc.set_color(png::ColorType::Grayscale);
        enc.write_header().unwrap().write_image_data(&[0, 255, 128, 64]).unwrap();
    }
    std::fs::write(dir.join("meadow.png"), &png).unwrap();
    let w = World::from_str(&world("[grass]\ndensity_image = 'meadow.png'\n"), &dir.join("w.toml"), &dir).unwrap();
    let image = w.grass_density.as_ref().expect("decoded");
    assert_eq!((image.map.width, image.map.height), (2, 2));
    let back = World::from_embedded(&w.embedded_sources(), Path::new("manifest.kpack")).unwrap();
    assert_eq!(back.grass_density, w.grass_density);
    assert_eq!(back.spec.grass.as_ref().unwrap().density_image.as_deref(), Some("grass-density.png"));
}

#[test]
fn a_world_without_grass_states_no_grass_table() {
    let plain = World::from_str(&world(""), Path::new("w.toml"), Path::new(".")).unwrap();
    let grass = World::from_str(&world("[grass]\ndensity = 500.0\n"), Path::new("w.toml"), Path::new(".")).unwrap();
    assert!(!plain.spec.canonical_toml().contains("grass"));
    let back: WorldSpec = toml::from_str(&grass.spec.canonical_toml()).unwrap();
    assert_eq!(back, grass.spec);
}
