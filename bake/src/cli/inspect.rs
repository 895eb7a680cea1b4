//! `kiln inspect`: what is inside packs, for people (`--json` for tools).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kiln_formats::container::Codec;
use kiln_formats::sections::{ImpostorLayout, PackInfo, PackKind, SharedPacks, TreeImpostors, TreeInstances, TreePrototypes};
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
    let mut shared = SharedTrees::default();
    for file in &files {
        let report = match Pack::open(file) {
            Ok(pack) => {
                let mut r = describe(file, &pack);
                if !is_corrupt(&r) {
                    if let Some(t) = trees(file, &pack, &mut shared) {
                        r["trees"] = t;
                    }
                }
                r
            }
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
    print_trees(&r["trees"]);
}

/// The prototypes of bakes' shared trees packs, by manifest path, read once per `inspect` run.
#[derive(Default)]
struct SharedTrees(BTreeMap<PathBuf, Option<(u64, TreePrototypes)>>);

impl SharedTrees {
    /// The trees pack's content hash and prototypes of the bake whose manifest is `manifest`, if it
    /// has one that reads.
    fn of(&mut self, manifest: &Path) -> Option<&(u64, TreePrototypes)> {
        self.0
            .entry(manifest.to_owned())
            .or_insert_with(|| {
                let shrd: SharedPacks = Pack::open(manifest).ok()?.get().ok()??;
                let entry = shrd.get(super::export_trees::TREES_PRODUCT)?;
                let pack = Pack::open(&manifest.parent()?.join(&entry.path)).ok()?;
                Some((entry.content_hash, pack.get().ok()??))
            })
            .as_ref()
    }
}

/// The trees summary of a pack: prototypes per species and atlases for the shared trees pack,
/// instances for a tile pack; `None` for packs without trees.
fn trees(file: &Path, pack: &Pack, shared: &mut SharedTrees) -> Option<Value> {
    if let Ok(Some(protos)) = pack.get::<TreePrototypes>() {
        let atlases = pack.get::<TreeImpostors>().ok().flatten();
        let stored = pack.sections().iter().find(|e| e.kind == <TreeImpostors as kiln_formats::Section>::KIND).map(|e| (e.stored_len, e.raw_len));
        return Some(prototypes_summary(&protos, atlases.as_ref(), stored));
    }
    let instances: TreeInstances = pack.get().ok()??;
    // A tile pack sits in `<bake>/tiles/`; its manifest one level up.
    let manifest = file.parent().and_then(Path::parent).map(|d| d.join("manifest.kpack")).filter(|m| m.is_file());
    let names = manifest.as_deref().and_then(|m| shared.of(m)).filter(|(hash, _)| *hash == instances.prototypes_hash).map(|(_, p)| p);
    let mut by_proto: BTreeMap<u32, usize> = BTreeMap::new();
    for t in &instances.instances {
        *by_proto.entry(t.prototype).or_default() += 1;
    }
    let mut doc = json!({ "instances": instances.instances.len(), "per_prototype": by_proto.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>() });
    match names {
        Some(p) => {
            let mut by_species: BTreeMap<String, usize> = BTreeMap::new();
            for (&k, &v) in &by_proto {
                let name = p
                    .prototypes
                    .get(k as usize)
                    .and_then(|t| p.species.get(usize::from(t.species)))
                    .cloned()
                    .unwrap_or_else(|| format!("prototype {k} (not in the pack)"));
                *by_species.entry(name).or_default() += v;
            }
            doc["per_species"] = json!(by_species);
        }
        None => doc["note"] = json!("species unknown: no matching shared trees pack beside this tile (counts by prototype index)"),
    }
    Some(doc)
}

fn prototypes_summary(p: &TreePrototypes, atlases: Option<&TreeImpostors>, timp: Option<(u64, u64)>) -> Value {
    let species: Vec<Value> = p
        .species
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let own: Vec<_> = p.prototypes.iter().filter(|t| usize::from(t.species) == i).collect();
            let n = own.len().max(1) as f64;
            let tris: Vec<f64> = (0..3)
                .map(|l| own.iter().map(|t| f64::from(t.lods[l].bark_index_count + t.lods[l].leaf_index_count) / 3.0).sum::<f64>() / n)
                .collect();
            let (lo, hi) = own.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), t| (lo.min(t.height), hi.max(t.height)));
            json!({
                "name": name,
                "prototypes": own.len(),
                "mean_triangles_per_lod": tris.iter().map(|t| t.round() as u64).collect::<Vec<_>>(),
                "height": if own.is_empty() { Value::Null } else { json!([lo, hi]) },
            })
        })
        .collect();
    let mut doc = json!({ "prototypes": p.prototypes.len(), "species": species });
    if let Some(a) = atlases {
        let mut layouts: BTreeMap<String, usize> = BTreeMap::new();
        for t in &a.atlases {
            let layout = match t.layout {
                ImpostorLayout::Octahedral => "octahedral",
                ImpostorLayout::HemiOctahedral => "hemi-octahedral",
            };
            *layouts.entry(format!("{layout}, {g}×{g} views of {} px, {} levels", t.view_px, t.levels.len(), g = t.grid)).or_default() += 1;
        }
        let n = a.atlases.len().max(1) as u64;
        doc["atlases"] = json!({
            "count": a.atlases.len(),
            "layouts": layouts,
            // The section is compressed as a whole: per atlas is its share, not a measurement of one atlas.
            "mean_stored_bytes_per_atlas": timp.map(|(stored, _)| stored / n),
            "mean_raw_bytes_per_atlas": timp.map(|(_, raw)| raw / n),
        });
    }
    doc
}

fn print_trees(t: &Value) {
    if t.is_null() {
        return;
    }
    if let Some(species) = t["species"].as_array() {
        println!("  trees: {} prototypes", t["prototypes"]);
        for s in species {
            let h =
                s["height"].as_array().map_or("-".into(), |h| format!("{:.2}..{:.2}", h[0].as_f64().unwrap_or(0.0), h[1].as_f64().unwrap_or(0.0)));
            println!(
                "      {:<16} {:>4} prototypes, triangles per LOD {}, height {h}",
                s["name"].as_str().unwrap_or(""),
                s["prototypes"],
                s["mean_triangles_per_lod"].as_array().map_or(String::new(), |v| v.iter().map(Value::to_string).collect::<Vec<_>>().join(" / "))
            );
        }
        let a = &t["atlases"];
        if a.is_object() {
            for (layout, n) in a["layouts"].as_object().into_iter().flatten() {
                println!("      atlases: {n} × {layout}");
            }
            println!("      atlas bytes: {} stored, {} raw (mean per atlas)", a["mean_stored_bytes_per_atlas"], a["mean_raw_bytes_per_atlas"]);
        }
    } else {
        println!("  trees: {} instances", t["instances"]);
        let counts = if t["per_species"].is_object() { &t["per_species"] } else { &t["per_prototype"] };
        let by = if t["per_species"].is_object() { "species" } else { "prototype" };
        let list: Vec<String> = counts.as_object().into_iter().flatten().map(|(k, v)| format!("{k} {v}")).collect();
        println!("      per {by}: {}", list.join(", "));
        if let Some(n) = t["note"].as_str() {
            println!("      {n}");
        }
    }
}
