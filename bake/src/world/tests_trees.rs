//! `[trees]` in world files: every key's range refused at its key, the density image confined to
//! the world's directory and embedded in the bake, and the density key blind to trees.

use std::path::{Path, PathBuf};

use super::*;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-trees-world-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn world(trees: &str) -> String {
    format!("name = 't'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n{trees}")
}

fn err(text: &str) -> String {
    World::from_str(text, Path::new("w.toml"), Path::new(".")).expect_err("should be refused").to_string()
}

#[test]
fn tree_keys_out_of_range_are_refused_at_their_key() {
    let cases = [
        ("[[trees.species]]\npreset = 'baobab'\n", "trees.species[0].preset", "unknown preset"),
        ("[[trees.species]]\nheight = [2.0, 1.0]\n", "trees.species[0].height", "above the maximum"),
        ("[[trees.species]]\nprototypes = 0\n", "trees.species[0].prototypes", "outside"),
        ("[[trees.species]]\nprototypes = 200\n[[trees.species]]\nprototypes = 200\n", "trees.species", "at most 256"),
        ("[[trees.species]]\nmin_spacing = 0.0\n", "trees.species[0].min_spacing", "outside"),
        ("[[trees.species]]\nmax_slope = 91.0\n", "trees.species[0].max_slope", "outside"),
        ("[[trees.species]]\nshape = { branches = 9 }\n", "trees.species[0].shape.branches", "outside"),
        ("[[trees.species]]\nshape = { deflection = [10.0, 100.0] }\n", "trees.species[0].shape.deflection", "outside"),
        ("[trees]\nimpostor = { grid = 0 }\n", "trees.impostor.grid", "outside"),
        ("[trees]\nimpostor = { layout = 'sphere' }\n", "layout", "unknown variant"),
        ("[[trees.species]]\nbark = 'x'\n", "bark", "unknown field"),
    ];
    for (trees, key, problem) in cases {
        let e = err(&world(trees));
        assert!(e.contains("w.toml") && e.contains(key) && e.contains(problem), "{trees:?}: {e}");
    }
}

#[test]
fn the_density_image_stays_in_the_world_directory_and_travels_with_the_bake() {
    let dir = scratch("image");
    let outside = scratch("image-outside");
    std::fs::write(outside.join("d.png"), b"not read").unwrap();
    let rel = format!("../{}/d.png", outside.file_name().unwrap().to_string_lossy());
    let e = World::from_str(&world(&format!("[[trees.species]]\ndensity_image = '{rel}'\n")), &dir.join("w.toml"), &dir).unwrap_err().to_string();
    assert!(e.contains("trees.species[0].density_image"), "{e}");

    // A 2 × 2 grey image: loaded, decoded, and embedded so the bake reproduces from its output.
    let mut png = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png, 2, 2);
        enc.set_color(png::ColorType::Grayscale);
        enc.write_header().unwrap().write_image_data(&[0, 255, 128, 64]).unwrap();
    }
    std::fs::write(dir.join("forest.png"), &png).unwrap();
    let w = World::from_str(&world("[[trees.species]]\ndensity_image = 'forest.png'\n"), &dir.join("w.toml"), &dir).unwrap();
    let image = w.tree_density[0].as_ref().expect("decoded");
    assert_eq!((image.map.width, image.map.height), (2, 2));
    let embedded = w.embedded_sources();
    let back = World::from_embedded(&embedded, Path::new("manifest.kpack")).unwrap();
    assert_eq!(back.tree_density, w.tree_density);
    assert_eq!(back.spec.trees.as_ref().unwrap().species[0].density_image.as_deref(), Some("trees-density-0.png"));
}

#[test]
fn a_world_without_trees_states_no_trees_table() {
    let plain = World::from_str(&world(""), Path::new("w.toml"), Path::new(".")).unwrap();
    let trees = World::from_str(&world("[[trees.species]]\npreset = 'pine'\n"), Path::new("w.toml"), Path::new(".")).unwrap();
    // So its canonical form, and every hash of it, is what it was before trees existed.
    assert!(!plain.spec.canonical_toml().contains("trees"));
    let back: WorldSpec = toml::from_str(&trees.spec.canonical_toml()).unwrap();
    assert_eq!(back, trees.spec);
}
