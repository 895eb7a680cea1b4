//! `kiln inspect`: what is inside packs, for people (`--json` for tools).

use std::path::Path;

use kiln_formats::container::Codec;
use kiln_formats::sections::{PackInfo, PackKind};
use kiln_formats::{find_packs, sections, Pack, PackFileError, TileContents};
use serde_json::{json, Value};

use super::CliError;

/// Describes every pack under `path`. Returns the exit code: 0 when every pack and section is
/// sound, 1 when one is corrupt (it is still described as far as it can be read); unreadable paths
/// are errors.
pub fn run(path: &Path, as_json: bool) -> Result<i32, CliError> {
    let files = find_packs(path).map_err(|e| CliError::io(path, e))?;
    if files.is_empty() {
        return Err(CliError::Usage(format!("{}: no .kpack files found", path.display())));
    }
    let mut reports = Vec::new();
    let mut corrupt = 0usize;
    for file in &files {
        let report = match Pack::open(file) {
            Ok(pack) => describe(file, &pack),
            Err(e @ PackFileError::Format { .. }) => json!({ "path": file.display().to_string(), "error": e.to_string() }),
            Err(e) => return Err(CliError::Pack(e)),
        };
        corrupt += usize::from(is_corrupt(&report));
        reports.push(report);
    }
    if as_json {
        let doc = if reports.len() == 1 && path.is_file() { reports.remove(0) } else { Value::Array(reports) };
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON values serialise"));
    } else {
        for r in &reports {
            print_human(r);
        }
    }
    if corrupt > 0 {
        eprintln!("{corrupt} corrupt pack(s)");
        return Ok(1);
    }
    Ok(0)
}

/// Whether a described pack, one of its sections or the invariants between them failed.
fn is_corrupt(report: &Value) -> bool {
    report.get("error").is_some()
        || report.get("consistency").is_some()
        || report["sections"].as_array().into_iter().flatten().any(|s| s["summary"].get("error").is_some())
}

fn describe(file: &Path, pack: &Pack) -> Value {
    let h = pack.header();
    let sections: Vec<Value> = pack
        .sections()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let known = sections::section_type(e.kind);
            let summary = match pack.raw_section(i) {
                Err(err) => json!({ "error": err.to_string() }),
                Ok(raw) => match known.map(|t| (t.summarize)(&raw)) {
                    None => json!({}),
                    Some(Err(err)) => json!({ "error": err.to_string() }),
                    Some(Ok(pairs)) => Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), Value::String(v))).collect()),
                },
            };
            json!({
                "kind": e.kind.to_string(),
                "name": known.map_or("unknown", |t| t.name),
                "required": e.required(),
                "codec": Codec::name_of(e.codec),
                "offset": e.offset,
                "raw_bytes": e.raw_len,
                "stored_bytes": e.stored_len,
                "ratio": if e.raw_len == 0 { 1.0 } else { e.stored_len as f64 / e.raw_len as f64 },
                "checksum": format!("{:016x}", e.checksum),
                "summary": summary,
            })
        })
        .collect();
    let mut doc = json!({
        "path": file.display().to_string(),
        "format_version": format!("{}.{}", h.major, h.minor),
        "writer_version": format!("{}.{}.{}", h.writer_version[0], h.writer_version[1], h.writer_version[2]),
        "file_bytes": h.file_len,
        "sections": sections,
    });
    // Sections that are each sound can still disagree with each other (e.g. AO count vs vertices).
    let sound = !is_corrupt(&doc);
    if let (true, Ok(Some(PackInfo { kind: PackKind::Tile { .. }, .. }))) = (sound, pack.get::<PackInfo>()) {
        if let Err(e) = TileContents::read(pack) {
            doc["consistency"] = json!(e.to_string());
        }
    }
    doc
}

fn print_human(r: &Value) {
    if let Some(e) = r["error"].as_str() {
        println!("{e}");
        return;
    }
    println!(
        "{}  (format {}, written by kiln {}, {} bytes)",
        r["path"].as_str().unwrap_or(""),
        r["format_version"].as_str().unwrap_or(""),
        r["writer_version"].as_str().unwrap_or(""),
        r["file_bytes"]
    );
    for s in r["sections"].as_array().into_iter().flatten() {
        println!(
            "  {} {:<26} {:<4} {:>10} raw {:>10} stored  {:>5.1}%  {}{}",
            s["kind"].as_str().unwrap_or(""),
            s["name"].as_str().unwrap_or(""),
            s["codec"].as_str().unwrap_or(""),
            s["raw_bytes"],
            s["stored_bytes"],
            s["ratio"].as_f64().unwrap_or(0.0) * 100.0,
            s["checksum"].as_str().unwrap_or(""),
            if s["required"].as_bool() == Some(true) { "  required" } else { "" },
        );
        if let Some(obj) = s["summary"].as_object() {
            for (k, v) in obj {
                println!("      {k}: {}", v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
            }
        }
    }
    if let Some(c) = r["consistency"].as_str() {
        println!("  inconsistent: {c}");
    }
}
