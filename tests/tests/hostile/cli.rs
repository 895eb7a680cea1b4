//! Hostile command lines: `--jobs`, `--out`, `diff` tolerances and inputs, `verify`/`inspect` of
//! non-packs, `export` outside the tile grid.

use std::path::Path;

use super::runner::{Case, Expect};
use super::world_text::*;

pub fn cli_cases(out: &mut Vec<Case>, bake: &Path) {
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
    push(
        "--out is a file",
        [w(), vec![("f".into(), b"x".to_vec())]].concat(),
        args(&["bake", "{in}/w.toml", "--out", "{in}/f", "--no-cache", "--quiet"]),
        Expect::error(&["/in/f"]),
    );
    push("--out is /dev/null", w(), args(&["bake", "{in}/w.toml", "--out", "/dev/null", "--no-cache", "--quiet"]), Expect::error(&["/dev/null"]));
    push(
        "--out below a file",
        [w(), vec![("f".into(), b"x".to_vec())]].concat(),
        args(&["bake", "{in}/w.toml", "--out", "{in}/f/sub", "--no-cache", "--quiet"]),
        Expect::error(&["/in/f"]),
    );
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
    push(
        "diff two empty directories",
        vec![("e1/.keep".into(), vec![]), ("e2/.keep".into(), vec![])],
        args(&["diff", "{in}/e1", "{in}/e2"]),
        Expect::error(&["e1"]),
    );
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
    push("inspect a non-pack file", junk.clone(), args(&["inspect", "{in}/a.txt"]), Expect::codes(&[1, 2], &["a.txt"]));
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
