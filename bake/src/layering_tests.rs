//! Keeps the layering rules of ARCHITECTURE.md ("Dependency rules") true: each top-level module of
//! the baker may name only the modules listed for it. A new dependency between modules is a
//! design decision: change the table here and in ARCHITECTURE.md together.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each module and the modules of this crate it may name (`crate::X`).
const ALLOWED: &[(&str, &[&str])] = &[
    (
        "cli",
        &[
            "budget",
            "memory_watch",
            "density",
            "diff",
            "peak_memory",
            "Stopwatch",
            "map_large_allocations_alone",
            "pipeline",
            "world",
            "lighting",
            "rays",
            "mc",
            "ao",
            "grid",
            "grass",
        ],
    ),
    (
        "pipeline",
        &[
            "world",
            "density",
            "mc",
            "ao",
            "lighting",
            "rays",
            "grid",
            "mem",
            "le",
            "rng",
            "trees",
            "impostor",
            "scatter",
            "grass",
            "optics",
            "water",
            "threads",
            "Stopwatch",
        ],
    ),
    ("diff", &[]),
    ("budget", &["world"]),
    ("memory_watch", &["peak_memory", "process_status_bytes"]),
    ("world", &["ao", "lighting", "trees"]),
    ("density", &["world", "grid", "rng"]),
    ("mc", &["grid"]),
    ("ao", &[]),
    ("lighting", &["rays", "mem", "le", "optics"]),
    ("rays", &["mem", "le"]),
    ("grid", &[]),
    ("mem", &[]),
    ("le", &[]),
    ("threads", &[]),
    ("rng", &[]),
    ("optics", &[]),
    ("scatter", &["density", "rng", "grid"]),
    ("impostor", &["rays", "rng"]),
    ("trees", &["rng", "rays", "impostor"]),
    ("grass", &["rng"]),
    ("water", &["rng", "optics", "density", "grid"]),
];

fn sources(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        entries.iter().for_each(|p| sources(p, out));
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

/// The crate modules a line names: `crate::a::…` and each item of `crate::{a, b::c}`.
fn named_modules(line: &str) -> Vec<String> {
    let ident = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut found = Vec::new();
    for (i, _) in line.match_indices("crate::") {
        let rest = &line[i + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => found.extend(group[..group.find('}').unwrap_or(group.len())].split(',').map(ident)),
            None => found.push(ident(rest)),
        }
    }
    found.retain(|m| !m.is_empty() && m != "self");
    found
}

#[test]
fn modules_import_only_what_the_layering_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = BTreeSet::new();
    for (module, allowed) in ALLOWED {
        let mut files = Vec::new();
        sources(&src.join(module), &mut files);
        sources(&src.join(format!("{module}.rs")), &mut files);
        assert!(!files.is_empty(), "no sources for module {module}");
        for file in files {
            let rel = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for named in named_modules(line) {
                    if named != *module && !allowed.contains(&named.as_str()) {
                        broken.insert(format!("{rel}:{}: {module} names crate::{named}", n + 1));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "layering broken (see ARCHITECTURE.md, \"Dependency rules\"):\n{}", broken.into_iter().collect::<Vec<_>>().join("\n"));
}

#[test]
fn the_line_reader_finds_every_named_module() {
    let names = named_modules;
    assert_eq!(names("use crate::cli::CliError;"), ["cli"]);
    assert_eq!(names("use crate::{cli, world::World, self};"), ["cli", "world"]);
    assert_eq!(names("let x = crate::rays::Bvh::build(p, i)? + crate::mem::huge_vec(3);"), ["rays", "mem"]);
    assert!(names("use super::x;").is_empty());
}

/// Whether a source line puts `Debug` text into a cache key (ARCHITECTURE.md, "Cache keys").
fn debug_text_in_key(line: &str) -> bool {
    (line.contains("settings_hash(") || line.contains(".with(")) && line.contains(":?}")
}

#[test]
fn cache_keys_take_no_debug_text() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pipeline"), &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.to_string_lossy().ends_with("_tests.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| debug_text_in_key(l)) {
            found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
        }
    }
    assert!(found.is_empty(), "Debug text in a cache key (use settings_hash of the value):\n{}", found.join("\n"));
    assert!(debug_text_in_key(r#"            .with("waves", settings_hash(&format!("{waves:?}")))"#));
    assert!(!debug_text_in_key(r#"            .with("waves", settings_hash(&waves))"#));
}
