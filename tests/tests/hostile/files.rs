//! Hostile files a world names: brush files, heightmaps (lying PNG headers, wrapping raw sizes),
//! special files such as `/dev/zero`, directories and missing files.

use std::path::Path;

use super::images::png;
use super::runner::Case;
use super::runner::Expect;
use super::world_text::*;

pub fn referenced_file_cases(out: &mut Vec<Case>) {
    let brush = |file: &str| world(&[], &format!("\n[brushes]\nfile = \"{file}\"\n"));
    let hm = |file: &str, raw: Option<&str>| {
        let mut e: Vec<(&str, &str, Option<&str>)> =
            vec![("floor", "kind", Some("\"heightmap\"")), ("floor", "frequency", None), ("floor", "octaves", None)];
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
pub const BRUSH: &str = "[[stroke]]\nshape = \"sphere\"\nfalloff = \"linear\"\nradius = 1.0\nweight = -1.5\nposition = [4.0, 8.0, 1.0]\n\n[[stroke]]\nradius = 0.5\nweight = 1.0\nposition = [2.0, 2.0, 1.0]\nto = [6.0, 2.0, 1.0]\nspacing = 0.25\n";

pub fn brush_cases(out: &mut Vec<Case>) {
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
    let over = "\n[[stroke]]\nradius = 0.5\nweight = 1.0\nposition = [0.0, 0.0, 0.0]\nto = [1000000.0, 0.0, 0.0]\nspacing = 1.0\n";
    push("sweep of 1 000 001 strokes".into(), format!("{BRUSH}{over}").into_bytes(), vec!["b.toml".into(), "stroke[2]".into()]);
    push(
        "duplicate key in a stroke".into(),
        BRUSH.replacen("radius = 1.0\n", "radius = 1.0\nradius = 2.0\n", 1).into_bytes(),
        vec!["b.toml".into(), "radius".into()],
    );
    push("stroke is not an array of tables".into(), b"stroke = 5\n".to_vec(), vec!["b.toml".into(), "stroke".into()]);
    push("unknown top-level key".into(), [BRUSH.as_bytes(), b"\nbrushes = 1\n"].concat(), vec!["b.toml".into(), "brushes".into()]);
    push("non-UTF-8 brush file".into(), [BRUSH.as_bytes(), b"# \xff\n"].concat(), vec!["b.toml".into()]);
    push("missing radius".into(), BRUSH.replacen("radius = 1.0\n", "", 1).into_bytes(), vec!["b.toml".into(), "radius".into()]);
    push("truncated".into(), BRUSH.as_bytes()[..40].to_vec(), vec!["b.toml".into()]);
}
