//! Hostile world files, brush files, heightmaps and command lines for `kiln bake` (and the CLI
//! options of `diff`, `verify`, `inspect`, `export`).

use std::path::Path;

use super::images::png;
use super::runner::{Case, Expect};

/// Every key of a valid, quick world (the tiny world, every key spelled out), by table.
fn base() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let s = |v: &str| v.to_string();
    vec![
        ("", vec![("name", s("\"h\"")), ("seed", s("7"))]),
        ("volume", vec![("size", s("[64, 64, 32]")), ("voxel_size", s("0.25")), ("tile_size", s("16"))]),
        (
            "noise",
            vec![
                ("kind", s("\"sine_products\"")),
                ("octaves", s("3")),
                ("frequency", s("0.15")),
                ("lacunarity", s("2.5")),
                ("gain", s("0.5")),
                ("terms", s("12")),
                ("amplitude", s("1.0")),
            ],
        ),
        (
            "floor",
            vec![
                ("kind", s("\"noise\"")),
                ("height", s("0.5")),
                ("amplitude", s("1.0")),
                ("frequency", s("0.08")),
                ("octaves", s("4")),
                ("fade_start", s("3.0")),
                ("fade", s("2.0")),
            ],
        ),
        ("floaters", vec![("remove", s("true")), ("fill_sealed_air", s("false"))]),
        (
            "ao",
            vec![("radius_voxels", s("16.0")), ("directions", s("\"grid26\"")), ("start_offset_voxels", s("1.0")), ("power", s("1.0"))],
        ),
        (
            "lighting",
            vec![
                ("time_of_day", s("10.0")),
                ("albedo", s("[0.5, 0.5, 0.5]")),
                ("bounces", s("4")),
                ("paths_per_area", s("400.0")),
                ("smoothing", s("24")),
                ("noise_seed", s("0")),
            ],
        ),
        ("lighting.sky", vec![("color", s("[0.6, 0.75, 1.0]")), ("intensity", s("1.0"))]),
        ("lighting.sun", vec![("color", s("[1.0, 0.95, 0.85]")), ("intensity", s("6.0")), ("azimuth", s("60.0"))]),
        ("lighting.moon", vec![("color", s("[0.6, 0.7, 1.0]")), ("intensity", s("0.1")), ("azimuth", s("60.0"))]),
    ]
}

/// The base world with `table.key` set to `value` (added if absent; `None` removes it) and
/// `extra` lines appended.
fn world(edits: &[(&str, &str, Option<&str>)], extra: &str) -> String {
    let mut tables = base();
    for (table, key, value) in edits {
        let t = &mut tables.iter_mut().find(|(n, _)| n == table).expect("known table").1;
        t.retain(|(k, _)| k != key);
        if let Some(v) = value {
            t.push((Box::leak(key.to_string().into_boxed_str()), v.to_string()));
        }
    }
    let mut text = String::new();
    for (name, keys) in tables {
        if !name.is_empty() {
            text.push_str(&format!("\n[{name}]\n"));
        }
        for (k, v) in keys {
            text.push_str(&format!("{k} = {v}\n"));
        }
    }
    text.push_str(extra);
    text
}

const BAKE: &[&str] = &["bake", "{in}/w.toml", "--out", "{out}", "--no-cache", "--quiet", "--jobs", "2"];

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn bake_case(name: String, text: String, extra_files: Vec<(String, Vec<u8>)>, expect: Expect) -> Case {
    let mut files = vec![("w.toml".to_string(), text.into_bytes())];
    files.extend(extra_files);
    Case { name, files, tree: None, prepare: None, args: args(BAKE), expect, input_bytes: None }
}

/// Values no key of the kind accepts: wrong types and non-finite numbers.
const NOT_A_NUMBER: &[&str] =
    &["nan", "-nan", "inf", "-inf", "\"1.0\"", "true", "[1.0]", "{ v = 1 }", "1979-05-27T07:32:00Z", "''", "0x7fffffffffffffff1"];
const NOT_AN_INT: &[&str] = &["-1", "1.5", "\"3\"", "false", "[3]", "9223372036854775808", "-9223372036854775808", "nan"];
const NOT_A_VEC3: &[&str] = &[
    "[]",
    "[1.0]",
    "[1.0, 1.0]",
    "[1.0, 1.0, 1.0, 1.0]",
    "[nan, 0.0, 1.0]",
    "[0.0, inf, 1.0]",
    "[\"a\", 0.0, 1.0]",
    "[[1.0], 0.0, 1.0]",
    "1.0",
    "[1e39, 0.0, 1.0]",
];

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
    let dotted = |t: &str, k: &str| if t.is_empty() { k.to_string() } else { format!("{t}.{k}") };
    let mut push = |table: &str, key: &str, value: &str| {
        let d = dotted(table, key);
        out.push(bake_case(
            format!("world {d} = {value}"),
            world(&[(table, key, Some(value))], ""),
            vec![],
            Expect::error(&["w.toml", &d]),
        ));
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
    push("duplicate key volume.voxel_size", ok.replacen("voxel_size = 0.25\n", "voxel_size = 0.25\nvoxel_size = 0.5\n", 1), &["w.toml", "voxel_size"]);
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
    push(
        "light kind unknown",
        format!("{ok}\n[[lighting.lights]]\nkind = \"laser\"\nposition = [1.0, 1.0, 1.0]\n"),
        &["w.toml", "kind"],
    );
    push(
        "duplicate material ids",
        format!("{ok}\n[[lighting.materials]]\nid = 1\nalbedo = [0.1, 0.1, 0.1]\n[[lighting.materials]]\nid = 1\nalbedo = [0.2, 0.2, 0.2]\n"),
        &["w.toml", "materials"],
    );
    push(
        "material albedo 2",
        format!("{ok}\n[[lighting.materials]]\nid = 70000\nalbedo = [2.0, 0.1, 0.1]\n"),
        &["w.toml", "materials"],
    );
    push("100k nested arrays", ok.replacen("seed = 7", &format!("seed = {}7{}", "[".repeat(100_000), "]".repeat(100_000)), 1), &["w.toml"]);
    push("1 MB key", format!("{}{} = 1\n", ok, "k".repeat(1 << 20)), &["w.toml"]);
    // Names: never a path, never `.`/`..`, never a separator, never empty or a control character.
    for name in [
        "..",
        ".",
        "../outside",
        "../../outside",
        "a/b",
        "a\\\\b",
        "{case}/outside",
        "{case}/in",
        "/",
        "",
        " ",
        "x\\u0000y",
        "x\\ny",
    ] {
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

fn referenced_file_cases(out: &mut Vec<Case>) {
    let brush = |file: &str| world(&[], &format!("\n[brushes]\nfile = \"{file}\"\n"));
    let hm = |file: &str, raw: Option<&str>| {
        let mut e: Vec<(&str, &str, Option<&str>)> = vec![("floor", "kind", Some("\"heightmap\"")), ("floor", "frequency", None), ("floor", "octaves", None)];
        let f = format!("\"{file}\"");
        e.push(("floor", "file", Some(Box::leak(f.into_boxed_str()))));
        if let Some(r) = raw {
            e.push(("floor", "raw_size", Some(r)));
        }
        world(&e, "")
    };
    let mut push = |what: &str, text: String, files: Vec<(String, Vec<u8>)>, mentions: &[&str], links: Vec<(&'static str, &'static str)>| {
        let mut c = bake_case(format!("referenced file: {what}"), text, files, Expect::error(mentions));
        if !links.is_empty() {
            c.prepare = Some(Box::new(move |input: &Path| {
                for (name, target) in &links {
                    std::os::unix::fs::symlink(target, input.join(name)).expect("create a symlink input");
                }
            }));
        }
        out.push(c);
    };
    push("brushes.file = /dev/zero", brush("/dev/zero"), vec![], &["w.toml", "brushes.file"], vec![]);
    push("brushes.file = /dev/urandom", brush("/dev/urandom"), vec![], &["w.toml", "brushes.file"], vec![]);
    push("brushes.file a symlink to /dev/zero", brush("z.toml"), vec![], &["w.toml", "brushes.file"], vec![("z.toml", "/dev/zero")]);
    push("brushes.file a directory", brush("."), vec![], &["w.toml", "brushes.file"], vec![]);
    push("brushes.file missing", brush("missing.toml"), vec![], &["w.toml", "brushes.file"], vec![]);
    push("brushes.file empty path", brush(""), vec![], &["w.toml", "brushes.file"], vec![]);
    push("floor.file = /dev/zero", hm("/dev/zero", None), vec![], &["w.toml", "floor.file"], vec![]);
    push("floor.file a symlink to /dev/zero (.png)", hm("z.png", None), vec![], &["w.toml", "floor.file"], vec![("z.png", "/dev/zero")]);
    push("floor.file a symlink to /dev/zero (.r16)", hm("z.r16", Some("[64, 64]")), vec![], &["w.toml", "floor.file"], vec![("z.r16", "/dev/zero")]);
    push("floor.file a directory", hm("d.png", None), vec![("d.png/x".into(), vec![])], &["w.toml", "floor.file"], vec![]);
    push("floor.file missing", hm("missing.png", None), vec![], &["w.toml", "floor.file"], vec![]);
    push("floor.file not png/r16/raw", hm("h.jpg", None), vec![("h.jpg".into(), vec![1, 2])], &["w.toml", "floor.file"], vec![]);
    for (what, bytes) in [
        ("30000^2 8-bit grey PNG header over 1 KB", png(30000, 30000, 8, 0, 1024)),
        ("30000^2 16-bit grey PNG header", png(30000, 30000, 16, 0, 1024)),
        ("8192^2 16-bit grey PNG header (128 MiB claimed)", png(8192, 8192, 16, 0, 64)),
        ("65535 x 1 PNG with no pixel data", png(65535, 1, 16, 0, 0)),
        ("2^31-1 x 2^31-1 PNG header", png(0x7fff_ffff, 0x7fff_ffff, 16, 0, 16)),
        ("0 x 0 PNG", png(0, 0, 8, 0, 0)),
        ("RGB PNG", png(4, 4, 8, 2, 4 * 13)),
        ("1-bit PNG", png(4, 4, 1, 0, 8)),
        ("PNG truncated after IHDR", png(4, 4, 8, 0, 20)[..33].to_vec()),
        ("not a PNG", b"GIF89a....".to_vec()),
        ("empty PNG", vec![]),
    ] {
        push(&format!("floor.file {what}"), hm("h.png", None), vec![("h.png".into(), bytes)], &["w.toml", "floor.file"], vec![]);
    }
    for (what, raw, len) in [
        ("raw_size wrapping u32 bytes", "[65536, 32768]", 0usize),
        ("raw_size [4294967295, 4294967295]", "[4294967295, 4294967295]", 8),
        ("raw_size [2147483648, 2] over 8 bytes", "[2147483648, 2]", 8),
        ("raw_size [0, 4]", "[0, 4]", 0),
        ("raw_size [4, 4] over 31 bytes", "[4, 4]", 31),
        ("raw_size [4, 4] over 33 bytes", "[4, 4]", 33),
        ("raw_size negative", "[-4, 4]", 32),
        ("raw_size three elements", "[4, 4, 4]", 32),
        ("raw_size one element", "[4]", 32),
        ("raw_size nan", "[nan, 4]", 32),
    ] {
        push(what, hm("h.r16", Some(raw)), vec![("h.r16".into(), vec![7; len])], &["w.toml", "floor."], vec![]);
    }
    push("raw_size with a png", hm("h.png", Some("[4, 4]")), vec![("h.png".into(), png(4, 4, 8, 0, 4 * 5))], &["w.toml", "raw_size"], vec![]);
    push("r16 without raw_size", hm("h.r16", None), vec![("h.r16".into(), vec![0; 32])], &["w.toml", "raw_size"], vec![]);
}

/// A valid brush file: one stroke and one sweep.
const BRUSH: &str = "[[stroke]]\nshape = \"sphere\"\nfalloff = \"linear\"\nradius = 1.0\nweight = -1.5\nposition = [4.0, 8.0, 1.0]\n\n[[stroke]]\nradius = 0.5\nweight = 1.0\nposition = [2.0, 2.0, 1.0]\nto = [6.0, 2.0, 1.0]\nspacing = 0.25\n";

fn brush_cases(out: &mut Vec<Case>) {
    let w = world(&[], "\n[brushes]\nfile = \"b.toml\"\n");
    let mut push = |what: String, text: Vec<u8>, mentions: Vec<String>| {
        let m: Vec<&str> = mentions.iter().map(String::as_str).collect();
        out.push(bake_case(format!("brush file: {what}"), w.clone(), vec![("b.toml".into(), text)], Expect::error(&m)));
    };
    let set = |stroke: usize, key: &str, value: &str| -> Vec<u8> {
        let mut parts: Vec<String> = BRUSH.split("[[stroke]]\n").skip(1).map(str::to_string).collect();
        let lines: Vec<String> =
            parts[stroke].lines().filter(|l| !l.starts_with(&format!("{key} ="))).map(str::to_string).chain([format!("{key} = {value}")]).collect();
        parts[stroke] = lines.join("\n") + "\n";
        parts.iter().map(|p| format!("[[stroke]]\n{p}")).collect::<String>().into_bytes()
    };
    let keys: &[(&str, &[&str])] = &[
        ("radius", &["0.0", "-1.0", "nan", "inf", "\"1\"", "[1.0]", "-1e300"]),
        ("weight", &["nan", "inf", "-inf", "\"x\"", "true"]),
        ("position", &["[1.0, 2.0]", "[nan, 0.0, 0.0]", "[inf, 0.0, 0.0]", "[1.0, 2.0, 3.0, 4.0]", "\"here\"", "[]"]),
        ("shape", &["\"hexagon\"", "1", "\"\""]),
        ("falloff", &["\"cubic\"", "0.5"]),
        ("to", &["[nan, 0.0, 0.0]", "[1.0, 2.0]", "[inf, 2.0, 1.0]", "[1e300, 2.0, 1.0]"]),
        ("spacing", &["0.0", "-0.25", "nan", "inf", "1e-300", "5e-324"]),
        ("colour", &["1"]),
    ];
    for (stroke, sweep) in [(0usize, false), (1, true)] {
        for (key, values) in keys {
            if (*key == "to" || *key == "spacing") && !sweep {
                continue;
            }
            for v in values.iter() {
                push(format!("stroke[{stroke}].{key} = {v}"), set(stroke, key, v), vec!["b.toml".into(), format!("stroke[{stroke}]")]);
            }
        }
    }
    push("spacing without to".into(), set(0, "spacing", "0.1"), vec!["b.toml".into(), "spacing".into()]);
    push("sweep of 10^15 strokes".into(), set(1, "to", "[1e12, 2.0, 1.0]"), vec!["b.toml".into(), "stroke[1]".into()]);
    push("sweep of 1 000 001 strokes".into(), [BRUSH.as_bytes(), b"\n"].concat().iter().copied().collect::<Vec<u8>>().into_iter().chain(
        "[[stroke]]\nradius = 0.5\nweight = 1.0\nposition = [0.0, 0.0, 0.0]\nto = [1000000.0, 0.0, 0.0]\nspacing = 1.0\n".bytes(),
    ).collect(), vec!["b.toml".into(), "stroke[2]".into()]);
    push("duplicate key in a stroke".into(), BRUSH.replacen("radius = 1.0\n", "radius = 1.0\nradius = 2.0\n", 1).into_bytes(), vec!["b.toml".into(), "radius".into()]);
    push("stroke is not an array of tables".into(), b"stroke = 5\n".to_vec(), vec!["b.toml".into(), "stroke".into()]);
    push("unknown top-level key".into(), [BRUSH.as_bytes(), b"\nbrushes = 1\n"].concat(), vec!["b.toml".into(), "brushes".into()]);
    push("non-UTF-8 brush file".into(), [BRUSH.as_bytes(), b"# \xff\n"].concat(), vec!["b.toml".into()]);
    push("missing radius".into(), BRUSH.replacen("radius = 1.0\n", "", 1).into_bytes(), vec!["b.toml".into(), "radius".into()]);
    push("truncated".into(), BRUSH.as_bytes()[..40].to_vec(), vec!["b.toml".into()]);
}

fn cli_cases(out: &mut Vec<Case>, bake: &Path) {
    let ok = world(&[], "").into_bytes();
    let good = bake.display().to_string();
    let mut push = |what: &str, files: Vec<(String, Vec<u8>)>, argv: Vec<String>, expect: Expect| {
        out.push(Case { name: format!("cli: {what}"), files, tree: None, prepare: None, args: argv, expect, input_bytes: None });
    };
    let w = || vec![("w.toml".to_string(), ok.clone())];
    let bake_with = |extra: &[&str]| -> Vec<String> {
        let mut a = args(&["bake", "{in}/w.toml", "--out", "{out}", "--no-cache", "--quiet"]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // `--jobs 0` is either refused or documented (as "all cores"); either way never a hang.
    push("--jobs 0", w(), bake_with(&["--jobs", "0"]), Expect::codes(&[0, 2], &["--jobs"]));
    for j in ["100000", "4294967296", "18446744073709551616", "-1", "two", ""] {
        push(&format!("--jobs={j}"), w(), bake_with(&[&format!("--jobs={j}")]), Expect::error(&["--jobs"]));
    }
    push("--out is a file", [w(), vec![("f".into(), b"x".to_vec())]].concat(), args(&["bake", "{in}/w.toml", "--out", "{in}/f", "--no-cache", "--quiet"]), Expect::error(&["/in/f"]));
    push("--out is /dev/null", w(), args(&["bake", "{in}/w.toml", "--out", "/dev/null", "--no-cache", "--quiet"]), Expect::error(&["/dev/null"]));
    push("--out below a file", [w(), vec![("f".into(), b"x".to_vec())]].concat(), args(&["bake", "{in}/w.toml", "--out", "{in}/f/sub", "--no-cache", "--quiet"]), Expect::error(&["/in/f"]));
    push("world is a directory", vec![("d/x".into(), vec![])], args(&["bake", "{in}/d", "--out", "{out}", "--no-cache"]), Expect::error(&["/in/d"]));
    push("world missing", vec![], args(&["bake", "{in}/none.toml", "--out", "{out}", "--no-cache"]), Expect::error(&["none.toml"]));
    push("world is /dev/zero", vec![], args(&["bake", "/dev/zero", "--out", "{out}", "--no-cache"]), Expect::error(&["/dev/zero"]));
    // diff: tolerances must be numbers; inputs must be bakes or packs.
    for (flag, v) in [("--field-max", "nan"), ("--field-rms", "nan"), ("--distance", "nan"), ("--distance", "-1"), ("--field-max", "-inf")] {
        push(&format!("diff {flag} {v}"), vec![], vec!["diff".into(), good.clone(), good.clone(), format!("{flag}={v}")], Expect::error(&[flag]));
    }
    let junk = vec![("a.txt".to_string(), b"not a pack".to_vec()), ("b.txt".to_string(), b"not a pack".to_vec())];
    push("diff two identical non-pack files", junk.clone(), args(&["diff", "{in}/a.txt", "{in}/b.txt"]), Expect::error(&["a.txt"]));
    push("diff a non-pack file with itself", junk.clone(), args(&["diff", "{in}/a.txt", "{in}/a.txt"]), Expect::error(&["a.txt"]));
    push("diff two empty directories", vec![("e1/.keep".into(), vec![]), ("e2/.keep".into(), vec![])], args(&["diff", "{in}/e1", "{in}/e2"]), Expect::error(&["e1"]));
    push("diff a bake with a non-pack", junk.clone(), vec!["diff".into(), good.clone(), "{in}/a.txt".into()], Expect::error(&["a.txt"]));
    for (what, tol) in [
        ("nan", b"field_max = nan\n".to_vec()),
        ("negative", b"distance = -1.0\n".to_vec()),
        ("duplicate key", b"distance = 0.1\ndistance = 0.2\n".to_vec()),
        ("unknown key", b"distanse = 0.1\n".to_vec()),
        ("non-UTF-8", b"distance = 0.1 # \xff\n".to_vec()),
        ("wrong type", b"distance = \"far\"\n".to_vec()),
    ] {
        push(
            &format!("diff tolerance file {what}"),
            vec![("tol.toml".into(), tol)],
            vec!["diff".into(), good.clone(), good.clone(), "--tolerances".into(), "{in}/tol.toml".into()],
            Expect::error(&["tol.toml"]),
        );
    }
    push("verify a missing path", vec![], args(&["verify", "{in}/none"]), Expect::error(&["none"]));
    push("verify a non-pack file", junk.clone(), args(&["verify", "{in}/a.txt"]), Expect::codes(&[1, 2], &["a.txt"]));
    push("inspect a non-pack file", junk.clone(), args(&["inspect", "{in}/a.txt"]), Expect::error(&["a.txt"]));
    push("inspect /dev/zero", vec![], args(&["inspect", "/dev/zero"]), Expect::error(&["/dev/zero"]));
    push("verify /dev/zero", vec![], args(&["verify", "/dev/zero"]), Expect::codes(&[1, 2], &["/dev/zero"]));
    for (what, extra) in [
        ("tile out of the grid", vec!["--tile", "99999,99999"]),
        ("level 40", vec!["--tile", "0,0", "--level", "40"]),
        ("level 4294967295", vec!["--tile", "0,0", "--level", "4294967295"]),
        ("tile -1,0", vec!["--tile", "-1,0"]),
        ("tile 4294967296,0", vec!["--tile", "4294967296,0"]),
    ] {
        let mut a = vec!["export".to_string(), good.clone()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a.extend(args(&["--format", "ply", "--out", "{out}/t.ply"]));
        push(&format!("export {what}"), vec![], a, Expect::error(&[]));
    }
}

/// Every world, brush, heightmap and command-line case.
pub fn cases(bake: &Path) -> Vec<Case> {
    let mut out = Vec::new();
    world_key_cases(&mut out);
    structure_cases(&mut out);
    non_utf8_cases(&mut out);
    referenced_file_cases(&mut out);
    brush_cases(&mut out);
    cli_cases(&mut out, bake);
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
            vec![("w.toml".into(), world(&[], "\n[brushes]\nfile = \"b.toml\"\n").into_bytes()), ("b.toml".into(), BRUSH.as_bytes().to_vec())],
            args(BAKE),
        ),
        c("the sound bake verifies", vec![], vec!["verify".into(), good.clone()]),
        c("the sound bake diffs identical", vec![], vec!["diff".into(), good.clone(), good.clone()]),
        c("the sound bake inspects", vec![], vec!["inspect".into(), good]),
    ]
}
