//! Hostile world files for `kiln bake`: every key with wrong types, non-finite and out-of-range
//! values, broken structure (duplicate keys, unknown keys, unsafe names) and non-UTF-8 bytes.

use std::path::Path;

use super::runner::{Case, Expect};
use super::world_text::*;
use super::{cli, files};

/// Per key: values out of its documented range (beyond wrong types and non-finite numbers).
fn out_of_range() -> Vec<(&'static str, &'static str, &'static str, &'static [&'static str])> {
    vec![
        ("", "seed", "seed", NOT_AN_INT),
        ("volume", "voxel_size", "volume.voxel_size", &["0.0", "-0.25", "-1e300", "1e300", "1e20", "1e13", "1e10", "5e-324"]),
        ("volume", "tile_size", "volume.tile_size", &["0", "-16", "4294967296", "3", "65536", "2147483648"]),
        ("noise", "octaves", "noise.octaves", &["0", "17", "4294967295", "-3", "1000000"]),
        ("noise", "frequency", "noise.frequency", &["0.0", "-0.15", "-1e300"]),
        ("noise", "lacunarity", "noise.lacunarity", &["0.5", "0.0", "-2.0", "1e300"]),
        ("noise", "gain", "noise.gain", &["0.0", "1.5", "-0.5", "1e300"]),
        ("noise", "terms", "noise.terms", &["0", "65", "4294967295"]),
        ("noise", "amplitude", "noise.amplitude", &["-1.0", "-1e300"]),
        ("noise", "kind", "noise.kind", &["\"fractal\"", "\"\"", "3", "\"SINE_PRODUCTS\""]),
        ("floor", "kind", "floor.kind", &["\"lava\"", "\"\"", "1", "\"heightmap\""]),
        ("floor", "height", "floor.height", &["-0.5", "1e300", "1e20"]),
        ("floor", "amplitude", "floor.amplitude", &["-1.0", "1e300"]),
        ("floor", "frequency", "floor.frequency", &["0.0", "-0.08"]),
        ("floor", "octaves", "floor.octaves", &["0", "17", "4294967295"]),
        ("floor", "fade_start", "floor.fade_start", &["-3.0", "1e300"]),
        ("floor", "fade", "floor.fade", &["-2.0", "1e300"]),
        ("floor", "raw_size", "floor.raw_size", &["[2, 2]"]),
        ("floor", "file", "floor.file", &["\"h.png\""]),
        ("floaters", "remove", "floaters.remove", &["1", "\"true\"", "nan", "[true]"]),
        ("floaters", "fill_sealed_air", "floaters.fill_sealed_air", &["0", "\"no\""]),
        ("ao", "radius_voxels", "ao.radius_voxels", &["0.0", "-16.0", "4096.5", "1e300"]),
        ("ao", "start_offset_voxels", "ao.start_offset_voxels", &["-1.0", "4.5", "1e300"]),
        ("ao", "power", "ao.power", &["0.0", "-1.0", "16.5", "1e39"]),
        ("ao", "directions", "ao.directions", &["\"grid6\"", "26", "\"\""]),
        ("lighting", "time_of_day", "lighting.time_of_day", &["-1.0", "24.0", "1e39", "-1e39"]),
        ("lighting", "albedo", "lighting.albedo", &["[1.5, 0.5, 0.5]", "[-0.1, 0.5, 0.5]"]),
        ("lighting", "bounces", "lighting.bounces", &["65", "-1", "4294967295", "1.5"]),
        ("lighting", "paths_per_area", "lighting.paths_per_area", &["0.0", "-400.0", "1e7", "1e39"]),
        ("lighting", "smoothing", "lighting.smoothing", &["257", "-1", "4294967296"]),
        ("lighting", "noise_seed", "lighting.noise_seed", &["-1", "18446744073709551616", "1.5"]),
        ("lighting.sky", "intensity", "lighting.sky.intensity", &["-1.0", "1e39", "3.4e38"]),
        ("lighting.sky", "color", "lighting.sky.color", &["[-1.0, 0.0, 0.0]", "[3.4e38, 3.4e38, 3.4e38]"]),
        ("lighting.sun", "intensity", "lighting.sun.intensity", &["-6.0", "1e39", "3.4e38"]),
        ("lighting.sun", "color", "lighting.sun.color", &["[-1.0, 1.0, 1.0]"]),
        ("lighting.sun", "azimuth", "lighting.sun.azimuth", &["1e39", "-1e39"]),
        (
            "lighting.sun",
            "direction",
            "lighting.sun.direction",
            &["[0.0, 0.0, 0.0]", "[1e-30, 0.0, 1e-30]", "[1e-45, 1e-45, 1e-45]", "[3e38, 3e38, 3e38]"],
        ),
        ("lighting.moon", "intensity", "lighting.moon.intensity", &["-0.1", "1e39"]),
        ("lighting.moon", "direction", "lighting.moon.direction", &["[0.0, 0.0, 0.0]", "[1e-30, 0.0, 1e-30]"]),
    ]
}

fn world_key_cases(out: &mut Vec<Case>) {
    let f64_keys = [
        ("volume", "voxel_size"),
        ("noise", "frequency"),
        ("noise", "gain"),
        ("floor", "height"),
        ("floor", "fade"),
        ("ao", "power"),
        ("lighting", "paths_per_area"),
        ("lighting.sky", "intensity"),
        ("lighting.sun", "intensity"),
        ("lighting", "time_of_day"),
    ];
    let int_keys =
        [("volume", "tile_size"), ("noise", "octaves"), ("noise", "terms"), ("floor", "octaves"), ("lighting", "bounces"), ("lighting", "smoothing")];
    let vec_keys = [("lighting", "albedo"), ("lighting.sky", "color"), ("lighting.sun", "color"), ("lighting.sun", "direction"), ("volume", "size")];
    let dotted = |t: &str, k: &str| {
        if t.is_empty() {
            k.to_string()
        } else {
            format!("{t}.{k}")
        }
    };
    let mut push = |table: &str, key: &str, value: &str| {
        let d = dotted(table, key);
        out.push(bake_case(format!("world {d} = {value}"), world(&[(table, key, Some(value))], ""), vec![], Expect::error(&["w.toml", &d])));
    };
    for (t, k) in f64_keys {
        NOT_A_NUMBER.iter().for_each(|v| push(t, k, v));
    }
    for (t, k) in int_keys {
        NOT_AN_INT.iter().for_each(|v| push(t, k, v));
    }
    for (t, k) in vec_keys {
        NOT_A_VEC3.iter().for_each(|v| push(t, k, v));
    }
    for (t, k, _, values) in out_of_range() {
        values.iter().for_each(|v| push(t, k, v));
    }
    for v in [
        "[64, 64, 32, 4]",
        "[64, 64]",
        "[2147483648, 2147483648, 4]",
        "[4294967296, 64, 32]",
        "[8192, 8192, 32]",
        "[65536, 16, 32]",
        "[16, 65536, 32]",
        "[64, 64, 4294967295]",
        "[0, 0, 0]",
        "[64, 64, 1]",
        "[48, 64, 32]",
        "[-64, 64, 32]",
        "[64.0, 64, 32]",
        "[4096, 4096, 4096]",
    ] {
        push("volume", "size", v);
    }
}

fn structure_cases(out: &mut Vec<Case>) {
    let ok = world(&[], "");
    let mut push = |what: &str, text: String, mentions: &[&str]| {
        out.push(bake_case(format!("world structure: {what}"), text, vec![], Expect::error(mentions)));
    };
    push("duplicate top-level key seed", ok.replacen("seed = 7\n", "seed = 7\nseed = 8\n", 1), &["w.toml", "seed"]);
    push("duplicate key name", ok.replacen("seed = 7\n", "seed = 7\nname = \"g\"\n", 1), &["w.toml", "name"]);
    push(
        "duplicate key volume.voxel_size",
        ok.replacen("voxel_size = 0.25\n", "voxel_size = 0.25\nvoxel_size = 0.5\n", 1),
        &["w.toml", "voxel_size"],
    );
    push("duplicate table [volume]", format!("{ok}\n[volume]\nvoxel_size = 0.5\n"), &["w.toml", "volume"]);
    push("unknown top-level key", format!("colour = 1\n{ok}"), &["w.toml", "colour"]);
    push("unknown key volume.sizes", ok.replacen("tile_size = 16\n", "tile_size = 16\nsizes = 3\n", 1), &["w.toml", "sizes"]);
    push("unknown table", format!("{ok}\n[weather]\nrain = true\n"), &["w.toml", "weather"]);
    push("empty file", String::new(), &["w.toml", "name"]);
    push("only a comment", "# nothing\n".into(), &["w.toml", "name"]);
    push("truncated mid-table header", ok[..ok.find("[noise]").unwrap() + 3].to_string(), &["w.toml"]);
    push("unterminated string", ok.replacen("\"h\"", "\"h", 1), &["w.toml"]);
    push("volume as a value", ok.replacen("[volume]\n", "volume = 3\n[volume2]\n", 1), &["w.toml"]);
    push("lighting.lights not an array", format!("{ok}\n[lighting.lights]\nkind = \"point\"\n"), &["w.toml", "lights"]);
    push(
        "point light radius zero",
        format!("{ok}\n[[lighting.lights]]\nkind = \"point\"\nposition = [1.0, 1.0, 1.0]\nradius = 0.0\nintensity = 1.0\n"),
        &["w.toml", "radius"],
    );
    push(
        "point light intensity nan",
        format!("{ok}\n[[lighting.lights]]\nkind = \"point\"\nposition = [1.0, 1.0, 1.0]\nintensity = nan\n"),
        &["w.toml", "intensity"],
    );
    push(
        "spot light angle 0",
        format!("{ok}\n[[lighting.lights]]\nkind = \"spot\"\nposition = [1.0, 1.0, 1.0]\nangle = 0.0\n"),
        &["w.toml", "angle"],
    );
    push(
        "line light start == end",
        format!("{ok}\n[[lighting.lights]]\nkind = \"line\"\nstart = [1.0, 1.0, 1.0]\nend = [1.0, 1.0, 1.0]\n"),
        &["w.toml", "end"],
    );
    push("light kind unknown", format!("{ok}\n[[lighting.lights]]\nkind = \"laser\"\nposition = [1.0, 1.0, 1.0]\n"), &["w.toml", "kind"]);
    push(
        "duplicate material ids",
        format!("{ok}\n[[lighting.materials]]\nid = 1\nalbedo = [0.1, 0.1, 0.1]\n[[lighting.materials]]\nid = 1\nalbedo = [0.2, 0.2, 0.2]\n"),
        &["w.toml", "materials"],
    );
    push("material albedo 2", format!("{ok}\n[[lighting.materials]]\nid = 70000\nalbedo = [2.0, 0.1, 0.1]\n"), &["w.toml", "materials"]);
    push("100k nested arrays", ok.replacen("seed = 7", &format!("seed = {}7{}", "[".repeat(100_000), "]".repeat(100_000)), 1), &["w.toml"]);
    push("1 MB key", format!("{}{} = 1\n", ok, "k".repeat(1 << 20)), &["w.toml"]);
    // Names: never a path, never `.`/`..`, never a separator, never empty or a control character.
    for name in ["..", ".", "../outside", "../../outside", "a/b", "a\\\\b", "{case}/outside", "{case}/in", "/", "", " ", "x\\u0000y", "x\\ny"] {
        push(&format!("name {name:?}"), ok.replacen("name = \"h\"", &format!("name = \"{name}\""), 1), &["w.toml", "name"]);
    }
    // Safe as paths once joined to `--out`; refusing them is the world code's choice of alphabet.
    for name in ["~", ".hidden", "-rf"] {
        out.push(bake_case(
            format!("world structure: name {name:?}"),
            ok.replacen("name = \"h\"", &format!("name = \"{name}\""), 1),
            vec![],
            Expect::codes(&[0, 2], &["w.toml", "name"]),
        ));
    }
    let mut push = |what: &str, text: String, mentions: &[&str]| {
        out.push(bake_case(format!("world structure: {what}"), text, vec![], Expect::error(mentions)));
    };
    push("name of 10 000 characters", ok.replacen("name = \"h\"", &format!("name = \"{}\"", "n".repeat(10_000)), 1), &["w.toml", "name"]);
    push("name an integer", ok.replacen("name = \"h\"", "name = 5", 1), &["w.toml", "name"]);
}

fn non_utf8_cases(out: &mut Vec<Case>) {
    let ok = world(&[], "");
    for (what, at) in [("in a comment", 0usize), ("in the name", 8), ("at the end", usize::MAX)] {
        let mut bytes = ok.clone().into_bytes();
        let offset = match at {
            0 => {
                bytes.splice(0..0, b"# \xff\xfe\n".iter().copied());
                2
            }
            usize::MAX => {
                bytes.push(0xC3);
                bytes.len() - 1
            }
            n => {
                bytes.insert(n, 0x80);
                n
            }
        };
        out.push(Case {
            name: format!("world non-UTF-8 byte {what} (offset {offset})"),
            files: vec![("w.toml".into(), bytes)],
            tree: None,
            prepare: None,
            args: args(BAKE),
            expect: Expect::error(&["w.toml", &offset.to_string()]),
            input_bytes: None,
        });
    }
}

/// Every world, brush, heightmap and command-line case.
pub fn cases(bake: &Path) -> Vec<Case> {
    let mut out = Vec::new();
    world_key_cases(&mut out);
    structure_cases(&mut out);
    non_utf8_cases(&mut out);
    files::referenced_file_cases(&mut out);
    files::brush_cases(&mut out);
    cli::cli_cases(&mut out, bake);
    out
}

/// Valid inputs that must still succeed: if these fail, the harness (not Kiln) is broken.
pub fn controls(bake: &Path) -> Vec<Case> {
    let good = bake.display().to_string();
    let c = |name: &str, files: Vec<(String, Vec<u8>)>, a: Vec<String>| Case {
        name: format!("control: {name}"),
        files,
        tree: None,
        prepare: None,
        args: a,
        expect: Expect::codes(&[0], &[]),
        input_bytes: None,
    };
    vec![
        c("the base world bakes", vec![("w.toml".into(), world(&[], "").into_bytes())], args(BAKE)),
        c(
            "the base world with a brush file bakes",
            vec![("w.toml".into(), world(&[], "\n[brushes]\nfile = \"b.toml\"\n").into_bytes()), ("b.toml".into(), files::BRUSH.as_bytes().to_vec())],
            args(BAKE),
        ),
        c("the sound bake verifies", vec![], vec!["verify".into(), good.clone()]),
        c("the sound bake diffs identical", vec![], vec!["diff".into(), good.clone(), good.clone()]),
        c("the sound bake inspects", vec![], vec!["inspect".into(), good]),
    ]
}
