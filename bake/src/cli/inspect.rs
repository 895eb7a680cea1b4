//! `kiln inspect`: what is inside packs, for people (`--json` for tools).

use std::path::Path;

use kiln_formats::container::Codec;
use kiln_formats::{sections, Pack};
use serde_json::{json, Value};

use super::packs::find_packs;
use super::CliError;

/// Describes every pack under `path`.
pub fn run(path: &Path, as_json: bool) -> Result<(), CliError> {
    let files = find_packs(path).map_err(|e| CliError::io(path, e))?;
    if files.is_empty() {
        return Err(CliError::Usage(format!("{}: no .kpack files found", path.display())));
    }
    let mut reports = Vec::new();
    for file in &files {
        let pack = Pack::open(file).map_err(CliError::Pack)?;
        reports.push(describe(file, &pack));
    }
    if as_json {
        let doc = if reports.len() == 1 && path.is_file() { reports.remove(0) } else { Value::Array(reports) };
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON values serialise"));
    } else {
        for r in &reports {
            print_human(r);
        }
    }
    Ok(())
}

fn describe(file: &Path, pack: &Pack) -> Value {
    let h = pack.header();
    let sections: Vec<Value> = pack
        .sections()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let summary = match pack.raw_section(i) {
                Err(err) => json!({ "error": err.to_string() }),
                Ok(raw) => match sections::summarize(e.kind, &raw) {
                    None => json!({}),
                    Some(Err(err)) => json!({ "error": err.to_string() }),
                    Some(Ok(pairs)) => Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), Value::String(v))).collect()),
                },
            };
            json!({
                "kind": e.kind.to_string(),
                "name": sections::name_of(e.kind).unwrap_or("unknown"),
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
    json!({
        "path": file.display().to_string(),
        "format_version": format!("{}.{}", h.major, h.minor),
        "writer_version": format!("{}.{}.{}", h.writer_version[0], h.writer_version[1], h.writer_version[2]),
        "file_bytes": h.file_len,
        "sections": sections,
    })
}

fn print_human(r: &Value) {
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
}
