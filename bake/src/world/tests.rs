use std::path::{Path, PathBuf};

use super::*;

fn worlds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds")
}

/// Parses `text` as `w.toml` with referenced files resolved in `dir`.
fn parse_in(text: &str, dir: &Path) -> Result<World, WorldError> {
    World::from_str(text, Path::new("w.toml"), dir)
}

fn parse(text: &str) -> Result<World, WorldError> {
    parse_in(text, &worlds_dir())
}

fn err(text: &str) -> String {
    parse(text).expect_err("world should be rejected").to_string()
}

/// A fresh scratch directory for files a test writes (unique per process and test).
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-world-test-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn minimal_world_gets_all_defaults() {
    let w = parse("name = 'm'\n").unwrap();
    assert_eq!(w.dims(), [512, 512, 64]);
    assert_eq!(w.spec.volume.tile_size, 32);
    assert_eq!(w.spec.noise.kind, NoiseKind::SineProducts);
    assert_eq!(w.spec.noise.lacunarity, Some(2.5));
    assert_eq!(w.spec.floor.kind, FloorKind::Noise);
    assert!(w.spec.floaters.remove && !w.spec.floaters.fill_sealed_air);
    assert!(w.brushes.is_empty() && w.heightmap.is_none());
    assert_eq!(w.spec.tiles_per_axis(), [16, 16]);
    // Lacunarity defaults per kind.
    let p = parse("name = 'p'\n[noise]\nkind = 'perlin'\n").unwrap();
    assert_eq!(p.spec.noise.lacunarity, Some(1.92));
}

#[test]
fn canonical_toml_round_trips_and_states_every_key() {
    let w = parse("name = 'c'\nseed = 99\n[noise]\nkind = 'simplex'\n[floaters]\nfill_sealed_air = true\n").unwrap();
    let text = w.spec.canonical_toml();
    for key in ["seed = 99", "voxel_size", "tile_size", "lacunarity = 1.92", "terms", "fade_start", "fill_sealed_air = true"] {
        assert!(text.contains(key), "{key} missing from\n{text}");
    }
    let back: WorldSpec = toml::from_str(&text).unwrap();
    assert_eq!(back, w.spec);
    assert_eq!(back.canonical_toml(), text);
}

#[test]
fn fingerprint_tracks_content() {
    let a = parse("name = 'f'\n").unwrap();
    assert_eq!(a.fingerprint(), parse("name = 'f'\n").unwrap().fingerprint());
    assert_ne!(a.fingerprint(), parse("name = 'f'\nseed = 1\n").unwrap().fingerprint());
    let mut b = a.clone();
    b.brushes.push(BrushStroke { shape: BrushShape::Cube, falloff: Falloff::Linear, radius: 1.0, weight: 1.0, position: [0.0; 3] });
    assert_ne!(a.fingerprint(), b.fingerprint());
}

#[test]
fn unknown_key_names_file_key_and_line() {
    assert_eq!(
        err("name = 'x'\n\n[volume]\nsize = [64, 64, 32]\ncolour = 'red'\n"),
        "w.toml:5:1: volume.colour: unknown field `colour`, expected one of `size`, `voxel_size`, `tile_size`"
    );
    assert!(err("name = 'x'\nfoo = 1\n").starts_with("w.toml:2:1: foo: unknown field `foo`"));
}

#[test]
fn wrong_type_names_file_key_and_line() {
    assert_eq!(err("name = 'x'\n[noise]\noctaves = 'five'\n"), "w.toml:3:11: noise.octaves: invalid type: string \"five\", expected u32");
    assert!(err("name = 'x'\n[noise]\nkind = 'worley'\n")
        .starts_with("w.toml:3:8: noise.kind: unknown variant `worley`, expected one of `sine_products`, `perlin`, `simplex`"));
    assert_eq!(err("seed = 3\n"), "w.toml:1:1: name: missing field `name`");
    assert!(err("name = 'x'\n[volume\n").starts_with("w.toml:2:8: "));
}

#[test]
fn negative_and_zero_sizes_are_rejected() {
    assert_eq!(err("name = 'x'\n[volume]\nsize = [64, -64, 32]\n"), "w.toml:3:13: volume.size[1]: invalid value: integer `-64`, expected u32");
    let e = err("name = 'x'\n[volume]\nsize = [64, 64, 1]\ntile_size = 16\n[floor]\nkind = 'none'\nfade_start = 0\nfade = 0\n");
    assert_eq!(e, "w.toml:3:8: volume.size: nz must be at least 2 samples; got [64, 64, 1]");
    assert!(err("name = 'x'\n[volume]\nvoxel_size = -0.5\n")
        .starts_with("w.toml:3:14: volume.voxel_size: must be in [0.001, 1000] world units (finite); got -0.5"));
}

#[test]
fn tile_size_must_divide_the_volume_in_powers_of_two() {
    assert_eq!(
        err("name = 'x'\n[volume]\nsize = [500, 512, 64]\n"),
        "w.toml:3:8: volume.size: nx and ny must be positive multiples of volume.tile_size (32); got [500, 512, 64]"
    );
    let e = err("name = 'x'\n[volume]\nsize = [96, 64, 64]\n");
    assert!(e.starts_with("w.toml:3:8: volume.size: tiles per axis (size / volume.tile_size) must be powers of two"), "{e}");
    // The key present is the tile size only: the message still points at [volume].
    let e = err("name = 'x'\n[volume]\ntile_size = 48\n");
    assert!(e.starts_with("w.toml:2:1: volume.size: nx and ny must be positive multiples of volume.tile_size (48)"), "{e}");
}

#[test]
fn semantic_ranges_are_checked() {
    assert!(err("name = 'x'\n[noise]\ngain = 1.5\n").starts_with("w.toml:3:8: noise.gain: must be in (0, 1] (finite); got 1.5"));
    assert!(err("name = 'x'\n[noise]\noctaves = 0\n").starts_with("w.toml:3:11: noise.octaves: must be in 1..=16; got 0"));
    assert!(err("name = ' '\n").starts_with("w.toml:1:8: name: may only hold ASCII letters"));
    let e = err("name = 'x'\n[floor]\nfade_start = 3.5\n");
    assert!(e.starts_with("w.toml:3:14: floor.fade_start: the top of the world must be open"), "{e}");
    let e = err("name = 'x'\n[floor]\nkind = 'heightmap'\n");
    assert!(e.starts_with("w.toml:3:8: floor.kind: kind = \"heightmap\" needs floor.file"), "{e}");
    let e = err("name = 'x'\n[floor]\nkind = 'heightmap'\nfile = 'h.r16'\n");
    assert!(e.starts_with("w.toml:2:1: floor.raw_size: raw heightmap \"h.r16\" needs floor.raw_size"), "{e}");
}

#[test]
fn missing_brush_file_is_reported_at_its_key() {
    let e = err("name = 'x'\n\n[brushes]\nfile = 'no_such_brushes.toml'\n");
    assert!(e.starts_with("w.toml:4:8: brushes.file: \"no_such_brushes.toml\": cannot read"), "{e}");
    let e = err("name = 'x'\n[floor]\nkind = 'heightmap'\nfile = 'no_such.png'\n");
    assert!(e.starts_with("w.toml:4:8: floor.file: \"no_such.png\": cannot read"), "{e}");
}

#[test]
fn malformed_brush_file_is_reported_in_the_brush_file() {
    let dir = scratch("brush");
    std::fs::write(dir.join("b.toml"), "[[stroke]]\nradius = 1\nweight = 1\nposition = [0, 0, 0]\n\n[[stroke]]\nshape = 'cone'\n").unwrap();
    let e = parse_in("name = 'x'\n[brushes]\nfile = 'b.toml'\n", &dir).unwrap_err().to_string();
    let expected_file = dir.join("b.toml").display().to_string();
    assert!(e.starts_with(&format!("{expected_file}:7:9: stroke[1].shape: unknown variant `cone`")), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn heightmap_files_load_and_bad_ones_are_reported() {
    let dir = scratch("heightmap");
    let samples: Vec<u8> = [0u16, 65535, 30000, 100].iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(dir.join("h.r16"), &samples).unwrap();
    std::fs::write(dir.join("bad.png"), b"definitely not a png").unwrap();
    let base = "name = 'x'\n[floor]\nkind = 'heightmap'\n";
    let w = parse_in(&format!("{base}file = 'h.r16'\nraw_size = [2, 2]\n"), &dir).unwrap();
    assert_eq!(w.heightmap.unwrap().samples, vec![0, 65535, 30000, 100]);
    let e = parse_in(&format!("{base}file = 'h.r16'\nraw_size = [3, 2]\n"), &dir).unwrap_err().to_string();
    assert!(e.starts_with("w.toml:4:8: floor.file: \"h.r16\": raw heightmap of 3 x 2 needs 12 bytes"), "{e}");
    let e = parse_in(&format!("{base}file = 'bad.png'\n"), &dir).unwrap_err().to_string();
    assert!(e.starts_with("w.toml:4:8: floor.file: \"bad.png\": not a readable PNG"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_world_file_is_a_read_error() {
    let e = load_world(Path::new("/nonexistent/kiln/world.toml")).unwrap_err();
    assert!(matches!(e, WorldError::Read { .. }));
    assert!(e.to_string().starts_with("/nonexistent/kiln/world.toml: cannot read world file:"), "{e}");
}

#[test]
fn shipped_worlds_load() {
    let caves = load_world(&worlds_dir().join("ice_caves.toml")).unwrap();
    assert_eq!(caves.dims(), [512, 512, 64]);
    assert_eq!(caves.spec.noise.kind, NoiseKind::SineProducts);
    assert_eq!(caves.spec.floor.kind, FloorKind::Noise);
    assert!(caves.spec.floaters.remove);
    assert!(!caves.brushes.is_empty());
    let tiny = load_world(&worlds_dir().join("tiny.toml")).unwrap();
    assert_eq!(tiny.spec.tiles_per_axis(), [4, 4]);
    assert!(tiny.dims().iter().product::<usize>() <= 64 * 64 * 32);
}
