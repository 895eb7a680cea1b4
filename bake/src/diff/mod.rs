//! `kiln diff`: what changed between two packs or two bakes, and by how much.
//!
//! Packs are matched by relative path. Within a pair, sections are matched by kind and compared by
//! what they hold: meshes by counts, bounds and symmetric point-to-surface distance; per-vertex fields
//! by max abs, RMS and PSNR; metadata field by field. The verdict against [`Tolerances`] decides the
//! exit code: identical or within tolerance → 0, beyond → 1.

mod geometry;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use kiln_formats::sections::{IrradianceGrid, TerrainMesh, VertexAo, VertexIrradiance};
use kiln_formats::{sections, Pack, Section, SectionKind};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use geometry::symmetric_distance;

use crate::cli::CliError;

/// How much difference is acceptable. Zero everywhere (the default) means "identical".
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tolerances {
    /// Largest symmetric point-to-surface distance between meshes, world units.
    pub distance: f32,
    /// Largest per-vertex absolute difference of scalar or colour fields (AO in [0,1], irradiance).
    pub field_max: f32,
    /// Largest RMS of per-vertex field differences.
    pub field_rms: f32,
    /// Whether pack metadata (hashes, versions, names) may differ. Meshes and fields are still judged.
    pub ignore_metadata: bool,
}

impl Tolerances {
    /// Reads `[tolerance]`-free TOML with the fields of [`Tolerances`].
    pub fn from_file(path: &Path) -> Result<Self, CliError> {
        let text = std::fs::read_to_string(path).map_err(|e| CliError::io(path, e))?;
        let tol: Tolerances = toml::from_str(&text).map_err(|e| CliError::Usage(format!("{}: {}", path.display(), e.to_string().trim())))?;
        for (key, v) in [("distance", tol.distance), ("field_max", tol.field_max), ("field_rms", tol.field_rms)] {
            check_tolerance(key, v).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        }
        Ok(tol)
    }
}

/// Refuses a tolerance that cannot be compared with: NaN would make every difference "within",
/// a negative one every equal value "beyond". `name` is the flag or key, for the message.
pub fn check_tolerance(name: &str, value: f32) -> Result<(), CliError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(CliError::Usage(format!("{name} = {value}: a tolerance must be a finite number >= 0")))
    }
}

/// One section's comparison.
#[derive(Clone, Debug, Serialize)]
pub struct SectionDiff {
    pub kind: String,
    /// "added", "removed" or "changed".
    pub status: &'static str,
    pub beyond: bool,
    /// The largest measured difference, for ordering (distance or field max).
    pub magnitude: f64,
    pub details: BTreeMap<String, Value>,
}

/// One pack's comparison.
#[derive(Clone, Debug, Serialize)]
pub struct PackDiff {
    pub path: String,
    /// "added", "removed" or "changed".
    pub status: &'static str,
    pub beyond: bool,
    pub magnitude: f64,
    pub sections: Vec<SectionDiff>,
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    pub compared: usize,
    pub identical: usize,
    pub beyond: usize,
    /// Differing packs, worst first.
    pub packs: Vec<PackDiff>,
}

fn list(root: &Path) -> Result<BTreeMap<String, PathBuf>, CliError> {
    if root.is_file() {
        let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(BTreeMap::from([(name, root.to_owned())]));
    }
    let files = crate::cli::find_packs(root).map_err(|e| CliError::io(root, e))?;
    Ok(files.into_iter().map(|p| (p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/"), p)).collect())
}

/// Compares two packs or two directories of packs.
pub fn diff(a: &Path, b: &Path, tol: &Tolerances) -> Result<DiffReport, CliError> {
    if a.is_file() != b.is_file() {
        return Err(CliError::Usage(format!("{} and {} must both be packs or both be directories", a.display(), b.display())));
    }
    let (la, lb) = (list(a)?, list(b)?);
    for (root, l) in [(a, &la), (b, &lb)] {
        if l.is_empty() {
            return Err(CliError::Usage(format!("{}: no .kpack files found", root.display())));
        }
    }
    let mut names: Vec<&String> = la.keys().chain(lb.keys()).collect();
    names.sort();
    names.dedup();
    if a.is_file() {
        names = la.keys().collect(); // single files are compared whatever their names
    }
    let results: Vec<Option<PackDiff>> = names
        .par_iter()
        .map(|name| -> Result<Option<PackDiff>, CliError> {
            let pa = la.get(*name).or_else(|| if a.is_file() { la.values().next() } else { None });
            let pb = lb.get(*name).or_else(|| if b.is_file() { lb.values().next() } else { None });
            match (pa, pb) {
                (Some(_), None) => Ok(Some(whole(name, "removed"))),
                (None, Some(_)) => Ok(Some(whole(name, "added"))),
                (Some(pa), Some(pb)) => compare_packs(name, pa, pb, tol),
                (None, None) => Ok(None),
            }
        })
        .collect::<Result<_, _>>()?;
    let compared = results.len();
    let mut packs: Vec<PackDiff> = results.into_iter().flatten().collect();
    packs.sort_by(|x, y| y.beyond.cmp(&x.beyond).then(y.magnitude.total_cmp(&x.magnitude)).then(x.path.cmp(&y.path)));
    let beyond = packs.iter().filter(|p| p.beyond).count();
    Ok(DiffReport { compared, identical: compared - packs.len(), beyond, packs })
}

fn whole(name: &str, status: &'static str) -> PackDiff {
    PackDiff { path: name.to_owned(), status, beyond: true, magnitude: f64::INFINITY, sections: Vec::new() }
}

/// Bytes that pack pairs being compared at once may hold (files, raw sections, decoded meshes):
/// pairs run in parallel only while their declared sizes fit, so a directory of packs at the edge of
/// the raw budget cannot multiply it by the number of threads.
const PARALLEL_BYTES: u64 = 96 << 20;

/// A counting semaphore over bytes. A pair larger than the whole budget waits until it runs alone.
struct MemoryBudget {
    free: Mutex<u64>,
    freed: Condvar,
}

impl MemoryBudget {
    fn acquire(&self, want: u64) -> u64 {
        let want = want.min(PARALLEL_BYTES);
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free < want {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= want;
        want
    }
    fn release(&self, got: u64) {
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += got;
        self.freed.notify_all();
    }
}

static BUDGET: MemoryBudget = MemoryBudget { free: Mutex::new(PARALLEL_BYTES), freed: Condvar::new() };

/// What comparing a pack may hold at once: its file, its raw sections and their decoded form (at
/// most 4 bytes per raw byte; see `formats/SPEC.md`).
fn footprint(p: &Pack) -> u64 {
    let raw: u64 = p.sections().iter().map(|e| e.raw_len).sum();
    p.bytes().len() as u64 + 5 * raw
}

fn compare_packs(name: &str, pa: &Path, pb: &Path, tol: &Tolerances) -> Result<Option<PackDiff>, CliError> {
    // Both must be packs even when their bytes are equal: two equal non-pack files are not "identical packs".
    let (a, b) = (Pack::open(pa)?, Pack::open(pb)?);
    if a.bytes() == b.bytes() {
        return Ok(None);
    }
    let held = BUDGET.acquire(footprint(&a) + footprint(&b));
    let result = compare_opened(name, (&a, pa), (&b, pb), tol);
    BUDGET.release(held);
    result
}

fn compare_opened(name: &str, (a, pa): (&Pack, &Path), (b, pb): (&Pack, &Path), tol: &Tolerances) -> Result<Option<PackDiff>, CliError> {
    let raw = |p: &Pack, path: &Path| -> Result<BTreeMap<SectionKind, Vec<u8>>, CliError> {
        (0..p.sections().len())
            .map(|i| {
                p.raw_section(i)
                    .map(|r| (p.sections()[i].kind, r))
                    .map_err(|source| CliError::Pack(kiln_formats::PackFileError::Format { path: path.to_owned(), source }))
            })
            .collect()
    };
    let (sa, sb) = (raw(a, pa)?, raw(b, pb)?);
    let mut kinds: Vec<SectionKind> = sa.keys().chain(sb.keys()).copied().collect();
    kinds.sort();
    kinds.dedup();
    let mut sections = Vec::new();
    for kind in kinds {
        let d = match (sa.get(&kind), sb.get(&kind)) {
            (Some(_), None) => Some(SectionDiff { kind: kind.to_string(), status: "removed", beyond: true, magnitude: f64::INFINITY, details: BTreeMap::new() }),
            (None, Some(_)) => Some(SectionDiff { kind: kind.to_string(), status: "added", beyond: true, magnitude: f64::INFINITY, details: BTreeMap::new() }),
            (Some(x), Some(y)) if x == y => None,
            (Some(x), Some(y)) => Some(compare_section(kind, x, y, &sa, &sb, tol).map_err(|e| CliError::Failed(format!("{name}: {e}")))?),
            (None, None) => None,
        };
        sections.extend(d);
    }
    if sections.is_empty() {
        // Same sections, different container bytes (e.g. another writer version or codec level).
        let mut details = BTreeMap::new();
        details.insert("note".into(), json!("same section contents; container bytes differ (writer version or compression)"));
        sections.push(SectionDiff { kind: "container".into(), status: "changed", beyond: !tol.ignore_metadata, magnitude: 0.0, details });
    }
    let beyond = sections.iter().any(|s| s.beyond);
    let magnitude = sections.iter().map(|s| s.magnitude).fold(0.0, f64::max);
    Ok(Some(PackDiff { path: name.to_owned(), status: "changed", beyond, magnitude, sections }))
}

fn compare_section(
    kind: SectionKind,
    x: &[u8],
    y: &[u8],
    all_a: &BTreeMap<SectionKind, Vec<u8>>,
    all_b: &BTreeMap<SectionKind, Vec<u8>>,
    tol: &Tolerances,
) -> Result<SectionDiff, kiln_formats::FormatError> {
    let mut details = BTreeMap::new();
    let (beyond, magnitude) = if kind == TerrainMesh::KIND {
        let (a, b) = (TerrainMesh::decode(x)?, TerrainMesh::decode(y)?);
        details.insert("vertices".into(), json!([a.positions.len(), b.positions.len()]));
        details.insert("triangles".into(), json!([a.main_index_count / 3, b.main_index_count / 3]));
        details.insert("bounds".into(), json!([a.bounds(), b.bounds()]));
        let (max, mean) = symmetric_distance(&a.positions, &a.indices[..a.main_index_count], &b.positions, &b.indices[..b.main_index_count], 4096);
        details.insert("distance_max".into(), json!(max));
        details.insert("distance_mean".into(), json!(mean));
        (max > tol.distance, max as f64)
    } else if kind == VertexAo::KIND {
        let (a, b) = (VertexAo::decode(x)?, VertexAo::decode(y)?);
        let same_vertices = all_a.get(&TerrainMesh::KIND) == all_b.get(&TerrainMesh::KIND) || a.0.len() == b.0.len();
        if same_vertices && a.0.len() == b.0.len() {
            let fa: Vec<f32> = (0..a.0.len()).map(|i| a.value(i)).collect();
            let fb: Vec<f32> = (0..b.0.len()).map(|i| b.value(i)).collect();
            let s = field_stats(&fa, &fb, 1.0);
            details.extend(s.clone());
            let max = s["max_abs"].as_f64().unwrap_or(0.0);
            let rms = s["rms"].as_f64().unwrap_or(0.0);
            (max > tol.field_max as f64 || rms > tol.field_rms as f64, max)
        } else {
            details.insert("note".into(), json!(format!("vertex counts differ ({} vs {}): judged by the mesh", a.0.len(), b.0.len())));
            (false, 0.0)
        }
    } else if kind == VertexIrradiance::KIND || kind == IrradianceGrid::KIND {
        let flat = |raw: &[u8]| -> Result<(Vec<f32>, String), kiln_formats::FormatError> {
            if kind == VertexIrradiance::KIND {
                let v = VertexIrradiance::decode(raw)?;
                Ok((v.0.iter().flatten().copied().collect(), format!("{} vertices", v.0.len())))
            } else {
                let g = IrradianceGrid::decode(raw)?;
                let values = g.ambient.iter().chain(&g.direct).flatten().flatten().copied().collect();
                Ok((values, format!("{:?} cells", g.dims)))
            }
        };
        let ((fa, la), (fb, lb)) = (flat(x)?, flat(y)?);
        if fa.len() == fb.len() {
            // PSNR against the brightest value of either side: irradiance has no fixed peak.
            let peak = fa.iter().chain(&fb).fold(0f32, |m, v| m.max(v.abs())).max(1e-6) as f64;
            let s = field_stats(&fa, &fb, peak);
            let max = s["max_abs"].as_f64().unwrap_or(0.0);
            let rms = s["rms"].as_f64().unwrap_or(0.0);
            details.extend(s);
            (max > tol.field_max as f64 || rms > tol.field_rms as f64, max)
        } else {
            details.insert("note".into(), json!(format!("{la} vs {lb}: judged by the mesh")));
            (false, 0.0)
        }
    } else if let (Some(Ok(_)), Some(Ok(_))) = (sections::summarize(kind, x), sections::summarize(kind, y)) {
        // Metadata: compare field by field through their JSON form.
        let (va, vb) = (metadata_json(kind, x)?, metadata_json(kind, y)?);
        let mut fields = Vec::new();
        json_diff("", &va, &vb, &mut fields);
        for (path, (l, r)) in fields.iter().take(50) {
            details.insert(path.clone(), json!([l, r]));
        }
        details.insert("fields_changed".into(), json!(fields.len()));
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
                    judged_beyond |= (x - y).abs() > tol.distance as f64;
                }
                _ => judged_beyond = true,
            }
        }
        (judged_beyond && !tol.ignore_metadata, worst)
    } else {
        details.insert("note".into(), json!("unknown section kind: bytes differ"));
        (true, f64::INFINITY)
    };
    Ok(SectionDiff { kind: kind.to_string(), status: "changed", beyond, magnitude, details })
}

fn metadata_json(kind: SectionKind, raw: &[u8]) -> Result<Value, kiln_formats::FormatError> {
    use kiln_formats::sections::{EmbeddedFiles, Manifest, PackInfo};
    let v = if kind == PackInfo::KIND {
        serde_json::to_value(PackInfo::decode(raw)?)
    } else if kind == Manifest::KIND {
        serde_json::to_value(Manifest::decode(raw)?)
    } else if kind == EmbeddedFiles::KIND {
        let f = EmbeddedFiles::decode(raw)?;
        Ok(Value::Object(f.files.iter().map(|f| (format!("{}_hash", f.name.replace(['.', '/'], "_")), json!(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&f.bytes))))).collect()))
    } else {
        Ok(Value::Null)
    };
    Ok(v.unwrap_or(Value::Null))
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
        max = max.max(d);
        sum2 += d * d;
    }
    let mse = sum2 / a.len().max(1) as f64;
    let psnr = if mse == 0.0 { Value::String("inf".into()) } else { json!(10.0 * (peak * peak / mse).log10()) };
    BTreeMap::from([("max_abs".into(), json!(max)), ("rms".into(), json!(mse.sqrt())), ("psnr_db".into(), psnr)])
}

/// Prints a report for people: a summary line, then differing packs worst first.
pub fn print_human(r: &DiffReport, tol: &Tolerances) {
    if r.packs.is_empty() {
        println!("identical: {} pack(s) compared", r.compared);
        return;
    }
    println!(
        "{} of {} pack(s) differ, {} beyond tolerance (distance {}, field max {}, field rms {})",
        r.packs.len(),
        r.compared,
        r.beyond,
        tol.distance,
        tol.field_max,
        tol.field_rms
    );
    for p in &r.packs {
        println!("  {:<7} {:<8} {}", if p.beyond { "BEYOND" } else { "within" }, p.status, p.path);
        for s in &p.sections {
            let details: Vec<String> = s.details.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!("      {} {}{}  {}", s.kind, s.status, if s.beyond { " (beyond)" } else { "" }, details.join(" "));
        }
    }
}

/// The machine-readable form of a report.
pub fn to_json(r: &DiffReport) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}
