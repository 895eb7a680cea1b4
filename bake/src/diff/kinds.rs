//! What `kiln diff` compares for each section kind: the diff half of the section table (the other half,
//! names and summaries, is `kiln_formats::sections::SECTION_TYPES`).
//!
//! A kind without an entry in [`DIFFS`] cannot be judged, so a changed section of it is beyond any
//! tolerance: `kiln diff` fails closed. A test checks that every kind `kiln-formats` knows has an entry.

use std::collections::{BTreeMap, BTreeSet};

use kiln_formats::sections::{
    EmbeddedFiles, GrassPatches, GrassTile, IrradianceGrid, Manifest, PackInfo, SharedPacks, TerrainMesh, TreeCards, TreeImpostors, TreeInstances,
    TreeLighting, TreePrototypes, TreeTextures, VertexAo, VertexIrradiance, WaterTile, WaterWaves,
};
use kiln_formats::{FormatError, Section, SectionKind};
use serde_json::{json, Value};

use super::{grass, images, symmetric_distance, trees, water, Tolerances};

/// What a comparison of two differing sections of one kind found.
#[derive(Clone, Debug, Default)]
pub struct Judged {
    /// Whether the difference exceeds the tolerances.
    pub beyond: bool,
    /// The largest measured difference, for ordering (distance or field max).
    pub magnitude: f64,
    /// Statistics for the report.
    pub details: BTreeMap<String, Value>,
}

/// What a comparison may consult besides the two sections.
pub struct Context<'a> {
    /// The tolerances to judge against.
    pub tol: &'a Tolerances,
    /// The kinds whose bytes differ between the two packs.
    pub changed: &'a BTreeSet<SectionKind>,
}

/// Compares the raw bytes of two differing sections of one kind (left, right).
pub type DiffFn = fn(&[u8], &[u8], &Context) -> Result<Judged, FormatError>;

/// Every section kind `kiln diff` can judge, with its comparison.
pub static DIFFS: &[(SectionKind, DiffFn)] = &[
    (PackInfo::KIND, |x, y, cx| metadata(x, y, cx, |raw| Ok(serde_json::to_value(PackInfo::decode(raw)?).unwrap_or(Value::Null)))),
    (Manifest::KIND, |x, y, cx| metadata(x, y, cx, |raw| Ok(serde_json::to_value(Manifest::decode(raw)?).unwrap_or(Value::Null)))),
    (EmbeddedFiles::KIND, |x, y, cx| metadata(x, y, cx, embedded_files)),
    (TerrainMesh::KIND, mesh),
    (VertexAo::KIND, vertex_ao),
    (VertexIrradiance::KIND, |x, y, cx| {
        let flat = |raw: &[u8]| VertexIrradiance::decode(raw).map(|v| (v.0.iter().flatten().copied().collect(), format!("{} vertices", v.0.len())));
        irradiance(flat(x)?, flat(y)?, cx)
    }),
    (IrradianceGrid::KIND, |x, y, cx| {
        let flat = |raw: &[u8]| {
            IrradianceGrid::decode(raw)
                .map(|g| (g.ambient.iter().chain(&g.direct).flatten().flatten().copied().collect(), format!("{:?} cells", g.dims)))
        };
        irradiance(flat(x)?, flat(y)?, cx)
    }),
    (SharedPacks::KIND, |x, y, cx| metadata(x, y, cx, |raw| Ok(serde_json::to_value(SharedPacks::decode(raw)?).unwrap_or(Value::Null)))),
    (TreePrototypes::KIND, trees::prototypes),
    (TreeTextures::KIND, images::textures),
    (TreeImpostors::KIND, images::impostors),
    (TreeCards::KIND, images::cards),
    (TreeInstances::KIND, trees::instances),
    (TreeLighting::KIND, trees::lighting),
    (GrassPatches::KIND, grass::patches),
    (GrassTile::KIND, grass::tile),
    (WaterWaves::KIND, water::waves),
    (WaterTile::KIND, water::tile),
];

/// The comparison of `kind`, or `None` if `kiln diff` cannot judge it.
pub fn diff_fn(table: &[(SectionKind, DiffFn)], kind: SectionKind) -> Option<DiffFn> {
    table.iter().find(|(k, _)| *k == kind).map(|(_, f)| *f)
}

/// A changed section that no comparison judges: beyond tolerance, whatever the tolerances are.
pub fn unjudged(kind: SectionKind) -> Judged {
    let why = if kiln_formats::sections::section_type(kind).is_some() { "kiln diff has no comparison for this kind" } else { "unknown section kind" };
    Judged { beyond: true, magnitude: f64::INFINITY, details: BTreeMap::from([("note".into(), json!(format!("{why}: bytes differ")))]) }
}

fn mesh(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (TerrainMesh::decode(x)?, TerrainMesh::decode(y)?);
    let mut details = BTreeMap::new();
    details.insert("vertices".into(), json!([a.positions.len(), b.positions.len()]));
    details.insert("triangles".into(), json!([a.main_index_count / 3, b.main_index_count / 3]));
    details.insert("bounds".into(), json!([a.bounds(), b.bounds()]));
    let (max, mean) = symmetric_distance(&a.positions, &a.indices[..a.main_index_count], &b.positions, &b.indices[..b.main_index_count], 4096);
    details.insert("distance_max".into(), json!(max));
    details.insert("distance_mean".into(), json!(mean));
    // Skirts are judged by their count: they hang from the border the surface distance already measures.
    let skirts = |m: &TerrainMesh| (m.indices.len() - m.main_index_count) / 3;
    details.insert("skirt_triangles".into(), json!([skirts(&a), skirts(&b)]));
    Ok(Judged { beyond: exceeds(max as f64, cx.tol.distance), magnitude: max as f64, details })
}

fn vertex_ao(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (VertexAo::decode(x)?, VertexAo::decode(y)?);
    let fa: Vec<f32> = (0..a.0.len()).map(|i| a.value(i)).collect();
    let fb: Vec<f32> = (0..b.0.len()).map(|i| b.value(i)).collect();
    per_vertex((fa, format!("{} vertices", a.0.len())), (fb, format!("{} vertices", b.0.len())), 1.0, cx)
}

fn irradiance(a: (Vec<f32>, String), b: (Vec<f32>, String), cx: &Context) -> Result<Judged, FormatError> {
    irradiance_of(a, b, cx, TerrainMesh::KIND)
}

/// Irradiance values (one stream per vertex or per instance of `owner`) judged as fields.
pub(super) fn irradiance_of(a: (Vec<f32>, String), b: (Vec<f32>, String), cx: &Context, owner: SectionKind) -> Result<Judged, FormatError> {
    // PSNR against the brightest value of either side: irradiance has no fixed peak.
    let peak = a.0.iter().chain(&b.0).fold(0f32, |m, v| m.max(v.abs())).max(1e-6) as f64;
    per_value(a, b, peak, cx, owner)
}

fn per_vertex(a: (Vec<f32>, String), b: (Vec<f32>, String), peak: f64, cx: &Context) -> Result<Judged, FormatError> {
    per_value(a, b, peak, cx, TerrainMesh::KIND)
}

/// Field statistics of two value streams judged against the field tolerances. Streams of different
/// lengths cannot be compared value by value: that follows from a changed `owner` section (the mesh,
/// the tree instances), which is judged on its own; with an unchanged owner it cannot be explained and
/// is beyond.
fn per_value((fa, la): (Vec<f32>, String), (fb, lb): (Vec<f32>, String), peak: f64, cx: &Context, owner: SectionKind) -> Result<Judged, FormatError> {
    if fa.len() != fb.len() {
        let mesh_changed = cx.changed.contains(&owner);
        let what = kiln_formats::sections::section_type(owner).map_or("owner section", |t| t.name);
        let note = if mesh_changed { format!("{la} vs {lb}: judged by the {what}") } else { format!("{la} vs {lb} with the same {what}") };
        let details = BTreeMap::from([("note".into(), json!(note))]);
        return Ok(Judged { beyond: !mesh_changed, magnitude: if mesh_changed { 0.0 } else { f64::INFINITY }, details });
    }
    let details = field_stats(&fa, &fb, peak);
    let max = details["max_abs"].as_f64().unwrap_or(f64::INFINITY);
    let rms = details["rms"].as_f64().unwrap_or(f64::INFINITY);
    let beyond = exceeds(max, cx.tol.field_max) || exceeds(rms, cx.tol.field_rms);
    Ok(Judged { beyond, magnitude: max, details })
}

/// Embedded files by name and content hash: the bytes themselves would flood the report.
fn embedded_files(raw: &[u8]) -> Result<Value, FormatError> {
    let f = EmbeddedFiles::decode(raw)?;
    Ok(Value::Object(
        f.files
            .iter()
            .map(|f| (format!("{}_hash", f.name.replace(['.', '/'], "_")), json!(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&f.bytes)))))
            .collect(),
    ))
}

/// Metadata compared field by field through its JSON form.
pub(super) fn metadata(x: &[u8], y: &[u8], cx: &Context, to_json: fn(&[u8]) -> Result<Value, FormatError>) -> Result<Judged, FormatError> {
    let (va, vb) = (to_json(x)?, to_json(y)?);
    let mut fields = Vec::new();
    json_diff("", &va, &vb, &mut fields);
    let mut details = BTreeMap::new();
    for (path, (l, r)) in fields.iter().take(50) {
        details.insert(path.clone(), json!([l, r]));
    }
    details.insert("fields_changed".into(), json!(fields.len()));
    if fields.is_empty() {
        // The bytes differ (or this would not be called) yet no field does: nothing explains it.
        details.insert("note".into(), json!("bytes differ but no decoded field does"));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    // Derived fields (hashes, sizes, counts, versions) follow from differences judged elsewhere;
    // numbers (bounds, errors) are world-unit quantities judged against the distance tolerance.
    let mut worst = 0f64;
    let mut judged_beyond = false;
    for (path, (l, r)) in &fields {
        if is_derived(path) {
            continue;
        }
        match (l.as_f64(), r.as_f64()) {
            (Some(x), Some(y)) => {
                worst = worst.max((x - y).abs());
                judged_beyond |= exceeds((x - y).abs(), cx.tol.distance);
            }
            _ => judged_beyond = true,
        }
    }
    Ok(Judged { beyond: judged_beyond && !cx.tol.ignore_metadata, magnitude: worst, details })
}

/// Whether `value` is over `limit`; a NaN value (a difference that cannot be measured) always is.
pub(super) fn exceeds(value: f64, limit: f32) -> bool {
    !matches!(value.partial_cmp(&f64::from(limit)), Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal))
}

/// Metadata that is a consequence of other content: reported, never judged on its own.
fn is_derived(path: &str) -> bool {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    let leaf = leaf.split('[').next().unwrap_or(leaf);
    leaf.contains("hash") || matches!(leaf, "file_len" | "baker_version" | "vertex_count" | "triangle_count")
}

/// Collects `(path, (left, right))` for every leaf that differs.
fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<(String, (Value, Value))>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                json_diff(&p, x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                json_diff(&format!("{path}[{i}]"), l, r, out);
            }
        }
        _ if a != b => out.push((path.to_owned(), (a.clone(), b.clone()))),
        _ => {}
    }
}

/// Max abs, RMS and PSNR (with `peak` as the signal peak) of `a − b`.
pub fn field_stats(a: &[f32], b: &[f32], peak: f64) -> BTreeMap<String, Value> {
    let mut max = 0f64;
    let mut sum2 = 0f64;
    for (x, y) in a.iter().zip(b) {
        let d = (*x as f64 - *y as f64).abs();
        // `f64::max` would drop a NaN difference; it must count as the largest.
        max = if d.is_nan() || max.is_nan() { f64::NAN } else { max.max(d) };
        sum2 += d * d;
    }
    let mse = sum2 / a.len().max(1) as f64;
    let psnr = if mse == 0.0 { Value::String("inf".into()) } else { json!(10.0 * (peak * peak / mse).log10()) };
    BTreeMap::from([("max_abs".into(), json!(max)), ("rms".into(), json!(mse.sqrt())), ("psnr_db".into(), psnr)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context<'a>(tol: &'a Tolerances, changed: &'a BTreeSet<SectionKind>) -> Context<'a> {
        Context { tol, changed }
    }

    #[test]
    fn every_known_section_kind_has_a_comparison() {
        for t in kiln_formats::sections::SECTION_TYPES {
            assert!(diff_fn(DIFFS, t.kind).is_some(), "{} ({}) has no diff function", t.kind, t.name);
        }
        for (i, (k, _)) in DIFFS.iter().enumerate() {
            assert!(DIFFS[..i].iter().all(|(j, _)| j != k), "{k} listed twice");
        }
    }

    #[test]
    fn a_kind_without_a_comparison_is_beyond_any_tolerance() {
        assert!(diff_fn(DIFFS, SectionKind(*b"TEST")).is_none());
        let j = unjudged(SectionKind(*b"TEST"));
        assert!(j.beyond && j.magnitude.is_infinite());
        assert!(j.details["note"].as_str().unwrap().contains("unknown"));
        let j = unjudged(VertexAo::KIND);
        assert!(j.beyond && j.details["note"].as_str().unwrap().contains("no comparison"));
    }

    #[test]
    fn per_vertex_counts_differ_only_with_the_mesh() {
        let tol = Tolerances { field_max: 1.0, field_rms: 1.0, ..Default::default() };
        let (x, y) = (VertexAo(vec![1, 2]).encode().unwrap(), VertexAo(vec![1, 2, 3]).encode().unwrap());
        let none = BTreeSet::new();
        assert!(vertex_ao(&x, &y, &context(&tol, &none)).unwrap().beyond);
        let mesh = BTreeSet::from([TerrainMesh::KIND, VertexAo::KIND]);
        assert!(!vertex_ao(&x, &y, &context(&tol, &mesh)).unwrap().beyond);
    }

    #[test]
    fn nan_differences_are_beyond() {
        let tol = Tolerances { field_max: 1e9, field_rms: 1e9, ..Default::default() };
        let none = BTreeSet::new();
        let j = per_vertex((vec![1.0, f32::NAN], String::new()), (vec![1.0, 2.0], String::new()), 1.0, &context(&tol, &none)).unwrap();
        assert!(j.beyond, "{:?}", j.details);
    }

    #[test]
    fn metadata_with_no_explained_difference_is_beyond() {
        let tol = Tolerances { ignore_metadata: true, ..Default::default() };
        let none = BTreeSet::new();
        let j = metadata(b"a", b"b", &context(&tol, &none), |_| Ok(Value::Null)).unwrap();
        assert!(j.beyond);
    }
}
