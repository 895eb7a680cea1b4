//! Hostile world files: every case from issue #15 that a world, brush file or heightmap can
//! carry is refused with `file:line:col: key: problem`, before anything large is allocated.

use std::path::{Path, PathBuf};

use super::*;

/// A fresh directory holding a few referenced files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-hostile-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn err_in(text: &str, dir: &Path) -> String {
    World::from_str(text, Path::new("w.toml"), dir).expect_err("world should be rejected").to_string()
}

fn err(text: &str) -> String {
    err_in(text, Path::new("."))
}

/// A tiny valid world (64 × 64 × 32) with `extra` appended.
fn tiny(extra: &str) -> String {
    format!(
        "name = 't'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n\
         [floor]\nheight = 0.5\namplitude = 1.0\nfade_start = 3.0\nfade = 2.0\n{extra}"
    )
}

fn ok(text: &str) {
    if let Err(e) = World::from_str(text, Path::new("w.toml"), Path::new(".")) {
        panic!("should be accepted: {e}\n{text}");
    }
}

#[test]
fn names_that_are_not_plain_names_are_refused_at_the_name_key() {
    for name in ["/tmp/victim", "../x", "a/b", "a\\\\b", ".", "..", "", "a.", ".x", "a b", "∕etc", "ｘ", "x\\u0000y"] {
        let e = err(&format!("name = \"{name}\"\n"));
        assert!(e.starts_with("w.toml:1:8: name: "), "{name:?}: {e}");
    }
    let long = "n".repeat(MAX_NAME_LEN + 1);
    assert!(err(&format!("name = '{long}'\n")).contains("at most 64 characters"));
    ok(&tiny("").replace("name = 't'", &format!("name = '{}'", "n".repeat(MAX_NAME_LEN))));
}

#[test]
fn referenced_files_stay_inside_the_world_directory() {
    let dir = scratch("refs");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/b.toml"), "").unwrap();
    let brush = |file: &str| err_in(&tiny(&format!("[brushes]\nfile = '{file}'\n")), &dir);
    assert!(brush("/etc/passwd").starts_with("w.toml:12:8: brushes.file: \"/etc/passwd\": must be a path relative"));
    assert!(brush("../x.toml").contains("must not contain '..'"));
    assert!(brush("/dev/zero").contains("must be a path relative"));
    assert!(brush("sub").contains("not a regular file"));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).unwrap();
        assert!(brush("zero").contains("outside the world file's directory"));
    }
    World::from_str(&tiny("[brushes]\nfile = 'sub/b.toml'\n"), Path::new("w.toml"), &dir).unwrap();
    let hm = err_in(&tiny("").replace("fade = 2.0", "fade = 2.0\nkind = 'heightmap'\nfile = '../h.png'"), &dir);
    assert!(hm.starts_with("w.toml:12:8: floor.file: \"../h.png\": must not contain '..'"), "{hm}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn oversized_brush_file_is_refused_before_reading() {
    let dir = scratch("bigbrush");
    let f = std::fs::File::create(dir.join("big.toml")).unwrap();
    f.set_len(MAX_BRUSH_FILE_BYTES + 1).unwrap();
    let e = err_in(&tiny("[brushes]\nfile = 'big.toml'\n"), &dir);
    assert!(e.contains("brushes.file") && e.contains("more than the limit of 67108864"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn non_utf8_files_give_a_byte_offset() {
    let dir = scratch("utf8");
    std::fs::write(dir.join("w.toml"), b"name = 'x'\nseed = 1 # caf\xe9\n").unwrap();
    let e = load_world(&dir.join("w.toml")).unwrap_err().to_string();
    assert!(e.ends_with("w.toml:2:15: not UTF-8 text: invalid byte 0xe9 at byte offset 25"), "{e}");
    std::fs::write(dir.join("b.toml"), b"[[stroke]]\n\xff").unwrap();
    let e = err_in(&tiny("[brushes]\nfile = 'b.toml'\n"), &dir);
    assert!(e.ends_with("b.toml:2:1: not UTF-8 text: invalid byte 0xff at byte offset 11"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn world_file_must_be_a_small_regular_file() {
    let e = load_world(Path::new("/dev/zero")).unwrap_err().to_string();
    assert_eq!(e, "/dev/zero: cannot read world file: not a regular file");
    let dir = scratch("bigworld");
    std::fs::File::create(dir.join("w.toml")).unwrap().set_len(MAX_WORLD_FILE_BYTES + 1).unwrap();
    assert!(load_world(&dir.join("w.toml")).unwrap_err().to_string().contains("more than the limit"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicate_keys_name_the_key_and_its_place() {
    assert_eq!(err("name = 'x'\nname = 'y'\n"), "w.toml:2:1: name: duplicate key");
    assert_eq!(err("name = 'x'\n[volume]\nvoxel_size = 1.0\nvoxel_size = 2.0\n"), "w.toml:4:1: volume.voxel_size: duplicate key");
    assert_eq!(err("name = 'x'\n[volume]\n[volume]\n"), "w.toml:3:2: volume: duplicate key");
    let e = err("name = 'x'\n[lighting.sun]\nintensity = 1\n[lighting]\nsun.intensity = 2\n");
    assert!(e.starts_with("w.toml:5:1: lighting.sun"), "{e}");
}

#[test]
fn arrays_of_the_wrong_length_are_refused() {
    assert_eq!(err("name = 'x'\n[volume]\nsize = [64, 64, 32, 4]\n"), "w.toml:3:8: volume.size: expected an array of 3 elements; got 4");
    let e = err(&tiny("[lighting.sky]\ncolor = [1, 1, 1, 1]\n"));
    assert!(e.starts_with("w.toml:12:9: lighting.sky.color: expected an array of 3 elements; got 4"), "{e}");
    let e = err(&tiny("[floor.x]\n"));
    assert!(e.contains("unknown field"), "{e}");
    let b = parse_brushes("[[stroke]]\nradius = 1\nweight = 1\nposition = [0, 0, 0, 0]\n", Path::new("b.toml"));
    assert_eq!(b.unwrap_err().to_string(), "b.toml:4:12: stroke[0].position: expected an array of 3 elements; got 4");
}

#[test]
fn volume_limits_are_the_real_ones() {
    let e = err("name = 'x'\n[volume]\nsize = [8192, 8192, 64]\ntile_size = 256\n");
    assert_eq!(e, "w.toml:3:8: volume.size: each axis must be at most 4096 samples; got [8192, 8192, 64]");
    let e = err("name = 'x'\n[volume]\nsize = [2147483648, 2147483648, 4]\n");
    assert!(e.starts_with("w.toml:3:8: volume.size: each axis must be at most 4096"), "{e}");
    let e = err("name = 'x'\n[volume]\nsize = [4096, 4096, 64]\ntile_size = 1\n");
    assert!(e.starts_with("w.toml:4:13: volume.tile_size: at most 256 tiles per axis"), "{e}");
    let e = err("name = 'x'\n[volume]\nsize = [4096, 4096, 4096]\ntile_size = 16\n");
    assert!(e.starts_with("w.toml:3:8: volume.size: at most 4294967296 samples in all"), "{e}");
    ok(&tiny("").replace("[64, 64, 32]", "[4096, 64, 32]").replace("tile_size = 16", "tile_size = 64"));
}

#[test]
fn voxel_size_has_a_working_range() {
    for bad in ["1e10", "1e13", "1e20", "1000.001", "0.000999", "0", "-1", "nan", "inf"] {
        let e = err(&format!("name = 'x'\n[volume]\nvoxel_size = {bad}\n"));
        assert!(e.starts_with("w.toml:3:14: volume.voxel_size: must be in [0.001, 1000] world units"), "{bad}: {e}");
    }
    // The boundaries themselves (the floor must fit under the top of the world).
    let open = "[floor]\nheight = 0.0\namplitude = 0.0\nfade_start = 0.0\nfade = 0.0\nfrequency = 1e-3\n";
    ok(&format!("name = 'x'\n[volume]\nsize = [64, 64, 32]\ntile_size = 16\nvoxel_size = 1000\n{open}"));
    ok(&format!("name = 'x'\n[volume]\nsize = [64, 64, 32]\ntile_size = 16\nvoxel_size = 0.001\n{open}"));
}

#[test]
fn noise_coordinates_stay_bounded() {
    let e = err(&tiny("[noise]\nfrequency = 1e6\n"));
    assert!(e.starts_with("w.toml:12:13: noise.frequency: the top octave makes"), "{e}");
    let e = err(&tiny("[noise]\nlacunarity = 17\n"));
    assert!(e.starts_with("w.toml:12:14: noise.lacunarity: must be in [1, 16]"), "{e}");
    let e = err(&tiny("[noise]\namplitude = 1e300\n"));
    assert!(e.starts_with("w.toml:12:13: noise.amplitude: must be in [0, 1000]"), "{e}");
    // 16 octaves of lacunarity 16 at the default frequency: 0.15 * 16^15 cycles per unit.
    let e = err(&tiny("[noise]\noctaves = 16\nlacunarity = 16\n"));
    assert!(e.contains("noise.frequency: the top octave makes"), "{e}");
    // Just inside: 64 * 0.25 = 16 world units, 1e6 / 16 = 62500 cycles per unit at one octave.
    ok(&tiny("[noise]\noctaves = 1\nfrequency = 62500\n"));
    assert!(err(&tiny("[noise]\noctaves = 1\nfrequency = 62501\n")).contains("noise.frequency"));
    let e = err(&tiny("").replace("fade = 2.0", "fade = 2.0\nfrequency = 1e9"));
    assert!(e.starts_with("w.toml:11:13: floor.frequency: the top octave makes"), "{e}");
}

#[test]
fn raw_sizes_that_wrap_are_refused() {
    for size in ["[4294967295, 4294967295]", "[65536, 65536]", "[8193, 1]", "[0, 4]"] {
        let e = err(&tiny("").replace("fade = 2.0", &format!("fade = 2.0\nkind = 'heightmap'\nfile = 'h.r16'\nraw_size = {size}")));
        assert!(e.contains("floor.raw_size: each side must be in 1..=8192"), "{size}: {e}");
    }
}

#[test]
fn lighting_values_have_working_ranges() {
    let cases = [
        ("[lighting.sky]\nintensity = 3.4e38\n", "w.toml:12:13: lighting.sky.intensity: must be in [0, 1000000]"),
        ("[lighting.sky]\ncolor = [1e30, 0, 0]\n", "w.toml:12:9: lighting.sky.color: components must be in [0, 1000]"),
        ("[lighting.sun]\ndirection = [0, 0, 1e-30]\n", "w.toml:12:13: lighting.sun.direction: must be finite"),
        ("[lighting.sun]\ndirection = [0, 0, 1e30]\n", "w.toml:12:13: lighting.sun.direction: must be finite"),
        ("[lighting.moon]\nazimuth = 1e30\n", "w.toml:12:11: lighting.moon.azimuth: must be in [-720, 720]"),
        ("[lighting.sun]\nintensity = 1e7\n", "w.toml:12:13: lighting.sun.intensity: must be in [0, 1000000]"),
        ("[[lighting.lights]]\nkind = 'point'\nradius = 1e7\n", "w.toml:13:10: lighting.lights[0].radius: must be in (0, 1000000]"),
        ("[[lighting.lights]]\nkind = 'point'\nposition = [1e30, 0, 0]\n", "lighting.lights[0].position: components must be finite"),
        ("[[lighting.lights]]\nkind = 'spot'\ndirection = [1e-7, 0, 0]\n", "lighting.lights[0].direction: must be finite"),
        ("[[lighting.lights]]\nkind = 'line'\nend = [1e-9, 0, 0]\n", "lighting.lights[0].end: must differ from start"),
        ("[lighting]\npaths_per_area = 0\n", "w.toml:12:18: lighting.paths_per_area: must be in (0, 1e6]"),
        ("[lighting]\nbounces = 65\n", "lighting.bounces: must be in [0, 64]"),
        ("[ao]\nradius_voxels = 4097\n", "w.toml:12:17: ao.radius_voxels: must be in (0, 4096]"),
        ("[ao]\npower = 0\n", "ao.power: must be in (0, 16]"),
    ];
    for (extra, want) in cases {
        let e = err(&tiny(extra));
        assert!(e.starts_with(want) || e.contains(want), "{extra}: {e}\nwanted {want}");
    }
    let many: String = (0..=crate::lighting::spec::MAX_LIGHTS).map(|_| "[[lighting.lights]]\nkind = 'point'\n").collect();
    assert!(err(&tiny(&many)).contains("lighting.lights: at most 1024 lights"));
    // Just inside the ranges.
    ok(&tiny("[lighting.sky]\nintensity = 1e6\ncolor = [1000, 0, 0]\n[lighting.sun]\ndirection = [0, 0, 1e-6]\n"));
    let mats: String = (0..=u16::MAX).map(|i| format!("[[lighting.materials]]\nid = {i}\n")).collect();
    ok(&tiny(&mats));
}

#[test]
fn deeply_nested_values_are_an_error_not_a_crash() {
    for depth in [1_000, 100_000] {
        let text = format!("name = 'x'\nseed = {}{}\n", "[".repeat(depth), "]".repeat(depth));
        let e = err(&text);
        assert!(e.starts_with("w.toml:2:"), "{e}");
        let inline = format!("name = 'x'\nseed = {}1{}\n", "{a = ".repeat(depth), "}".repeat(depth));
        assert!(err(&inline).starts_with("w.toml:2:"));
    }
}
