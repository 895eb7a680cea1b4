//! The base world file every world case edits one key of, and the values no key accepts.

use super::runner::{Case, Expect};

/// Every key of a valid, quick world (the tiny world, every key spelled out), by table.
pub fn base() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
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
        ("ao", vec![("radius_voxels", s("16.0")), ("directions", s("\"grid26\"")), ("start_offset_voxels", s("1.0")), ("power", s("1.0"))]),
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
pub fn world(edits: &[(&str, &str, Option<&str>)], extra: &str) -> String {
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

pub const BAKE: &[&str] = &["bake", "{in}/w.toml", "--out", "{out}", "--no-cache", "--quiet", "--jobs", "2"];

pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

pub fn bake_case(name: String, text: String, extra_files: Vec<(String, Vec<u8>)>, expect: Expect) -> Case {
    let mut files = vec![("w.toml".to_string(), text.into_bytes())];
    files.extend(extra_files);
    Case { name, files, tree: None, prepare: None, args: args(BAKE), expect, input_bytes: None }
}

/// Values no key of the kind accepts: wrong types and non-finite numbers.
pub const NOT_A_NUMBER: &[&str] =
    &["nan", "-nan", "inf", "-inf", "\"1.0\"", "true", "[1.0]", "{ v = 1 }", "1979-05-27T07:32:00Z", "''", "0x7fffffffffffffff1"];
pub const NOT_AN_INT: &[&str] = &["-1", "1.5", "\"3\"", "false", "[3]", "9223372036854775808", "-9223372036854775808", "nan"];
pub const NOT_A_VEC3: &[&str] = &[
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
