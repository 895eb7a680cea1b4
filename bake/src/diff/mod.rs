//! `kiln diff`: what changed between two packs or two bakes, and by how much.
//!
//! Packs are matched by relative path. Within a pair, sections are matched by kind and compared by
//! what they hold: meshes by counts, bounds and symmetric point-to-surface distance; per-vertex fields
//! by max abs, RMS and PSNR; images (tree textures, impostor atlases, cards) per map by RMS, max abs and
//! PSNR; metadata field by field (each kind's comparison is in [`kinds::DIFFS`]).
//! The verdict against [`Tolerances`] decides the exit code: identical or within tolerance → 0,
//! beyond → 1. A changed section that no comparison can judge (an unknown kind, or a known kind
//! without a comparison) is beyond any tolerance: the diff fails closed.

mod geometry;
mod grass;
pub mod images;
pub mod kinds;
mod trees;
mod water;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use kiln_formats::{FormatError, Pack, PackFileError, SectionKind};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use geometry::symmetric_distance;
pub use kinds::field_stats;
use kinds::{diff_fn, DiffFn};

/// Why a comparison could not be made. Each displays as one line naming the file and the problem.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The inputs or tolerances cannot be compared with (a usage error).
    #[error("{0}")]
    Usage(String),
    /// A file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// A pack could not be opened, or a section of it read.
    #[error(transparent)]
    Pack(#[from] PackFileError),
    /// A section whose bytes differ did not decode.
    #[error("{pack}: {source}")]
    Section {
        /// The pack's path relative to the compared directory.
        pack: String,
        /// What the decoder refused.
        source: FormatError,
    },
}

impl DiffError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        DiffError::Io { path: path.display().to_string(), source }
    }
}

/// How much difference is acceptable. Zero everywhere (the default) means "identical".
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tolerances {
    /// Largest symmetric point-to-surface distance between meshes, world units.
    pub distance: f32,
    /// Largest per-vertex absolute difference of scalar or colour fields (AO in [0, 1], irradiance).
    pub field_max: f32,
    /// Largest RMS of per-vertex field differences.
    pub field_rms: f32,
    /// Largest per-texel absolute difference of one image map (textures, impostor atlases, cards,
    /// water maps), in [0, 1] units of the stored value (colour, normal component, AO, depth) or, for
    /// water's wave maps, in units of the map's peak.
    pub image_max: f32,
    /// Largest RMS of one image map's per-texel differences, in the same units.
    pub image_rms: f32,
    /// Whether pack metadata (hashes, versions, names) may differ. Meshes and fields are still judged.
    pub ignore_metadata: bool,
}

impl Tolerances {
    /// Reads `[tolerance]`-free TOML with the fields of [`Tolerances`].
    pub fn from_file(path: &Path) -> Result<Self, DiffError> {
        let text = std::fs::read_to_string(path).map_err(|e| DiffError::io(path, e))?;
        let tol: Tolerances = toml::from_str(&text).map_err(|e| DiffError::Usage(format!("{}: {}", path.display(), e.to_string().trim())))?;
        let keys = [
            ("distance", tol.distance),
            ("field_max", tol.field_max),
            ("field_rms", tol.field_rms),
            ("image_max", tol.image_max),
            ("image_rms", tol.image_rms),
        ];
        for (key, v) in keys {
            check_tolerance(key, v).map_err(|e| DiffError::Usage(format!("{}: {e}", path.display())))?;
        }
        Ok(tol)
    }
}

/// Refuses a tolerance that cannot be compared with: NaN would make every difference "within",
/// a negative one every equal value "beyond". `name` is the flag or key, for the message.
pub fn check_tolerance(name: &str, value: f32) -> Result<(), DiffError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(DiffError::Usage(format!("{name} = {value}: a tolerance must be a finite number >= 0")))
    }
}

/// One section's comparison.
#[derive(Clone, Debug, Serialize)]
pub struct SectionDiff {
    /// The section's FourCC, or "container" when only the container bytes differ.
    pub kind: String,
    /// "added", "removed" or "changed".
    pub status: &'static str,
    /// Whether this difference exceeds the tolerances (always, for one that cannot be judged).
    pub beyond: bool,
    /// The largest measured difference, for ordering (distance or field max).
    pub magnitude: f64,
    /// The comparison's statistics, or a note saying why there are none.
    pub details: BTreeMap<String, Value>,
}

/// One pack's comparison.
#[derive(Clone, Debug, Serialize)]
pub struct PackDiff {
    /// The pack's path relative to the compared directory (or its file name).
    pub path: String,
    /// "added", "removed" or "changed".
    pub status: &'static str,
    /// Whether any of its sections is beyond tolerance.
    pub beyond: bool,
    /// The largest magnitude of its sections.
    pub magnitude: f64,
    /// Its differing sections, in FourCC order.
    pub sections: Vec<SectionDiff>,
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    /// Packs compared (present on either side).
    pub compared: usize,
    /// Packs whose bytes are equal.
    pub identical: usize,
    /// Packs with a difference beyond tolerance.
    pub beyond: usize,
    /// Differing packs, worst first.
    pub packs: Vec<PackDiff>,
}

fn list(root: &Path) -> Result<BTreeMap<String, PathBuf>, DiffError> {
    if root.is_file() {
        let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(BTreeMap::from([(name, root.to_owned())]));
    }
    let files = kiln_formats::find_packs(root).map_err(|e| DiffError::io(root, e))?;
    Ok(files.into_iter().map(|p| (p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/"), p)).collect())
}

/// Compares two packs or two directories of packs.
pub fn diff(a: &Path, b: &Path, tol: &Tolerances) -> Result<DiffReport, DiffError> {
    diff_with(kinds::DIFFS, a, b, tol)
}

/// [`diff`] with another table of comparisons (tests use one that lacks a kind).
pub fn diff_with(table: &[(SectionKind, DiffFn)], a: &Path, b: &Path, tol: &Tolerances) -> Result<DiffReport, DiffError> {
    if a.is_file() != b.is_file() {
        return Err(DiffError::Usage(format!("{} and {} must both be packs or both be directories", a.display(), b.display())));
    }
    let (la, lb) = (list(a)?, list(b)?);
    for (root, l) in [(a, &la), (b, &lb)] {
        if l.is_empty() {
            return Err(DiffError::Usage(format!("{}: no .kpack files found", root.display())));
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
        .map(|name| -> Result<Option<PackDiff>, DiffError> {
            let pa = la.get(*name).or_else(|| if a.is_file() { la.values().next() } else { None });
            let pb = lb.get(*name).or_else(|| if b.is_file() { lb.values().next() } else { None });
            match (pa, pb) {
                (Some(_), None) => Ok(Some(whole(name, "removed"))),
                (None, Some(_)) => Ok(Some(whole(name, "added"))),
                (Some(pa), Some(pb)) => compare_packs(table, name, pa, pb, tol),
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

fn compare_packs(table: &[(SectionKind, DiffFn)], name: &str, pa: &Path, pb: &Path, tol: &Tolerances) -> Result<Option<PackDiff>, DiffError> {
    // Both must be packs even when their bytes are equal: two equal non-pack files are not "identical packs".
    let (a, b) = (Pack::open(pa)?, Pack::open(pb)?);
    if a.bytes() == b.bytes() {
        return Ok(None);
    }
    let held = BUDGET.acquire(footprint(&a) + footprint(&b));
    let result = compare_opened(table, name, (&a, pa), (&b, pb), tol);
    BUDGET.release(held);
    result
}

fn compare_opened(
    table: &[(SectionKind, DiffFn)],
    name: &str,
    (a, pa): (&Pack, &Path),
    (b, pb): (&Pack, &Path),
    tol: &Tolerances,
) -> Result<Option<PackDiff>, DiffError> {
    let raw = |p: &Pack, path: &Path| -> Result<BTreeMap<SectionKind, Vec<u8>>, DiffError> {
        (0..p.sections().len())
            .map(|i| {
                p.raw_section(i)
                    .map(|r| (p.sections()[i].kind, r))
                    .map_err(|source| DiffError::Pack(PackFileError::Format { path: path.to_owned(), source }))
            })
            .collect()
    };
    let (sa, sb) = (raw(a, pa)?, raw(b, pb)?);
    let mut kinds: Vec<SectionKind> = sa.keys().chain(sb.keys()).copied().collect();
    kinds.sort();
    kinds.dedup();
    let changed: BTreeSet<SectionKind> = kinds.iter().copied().filter(|k| sa.get(k) != sb.get(k)).collect();
    let cx = kinds::Context { tol, changed: &changed };
    let mut sections = Vec::new();
    for &kind in &changed {
        let (status, j) = match (sa.get(&kind), sb.get(&kind)) {
            (Some(x), Some(y)) => {
                let j = match diff_fn(table, kind) {
                    Some(f) => f(x, y, &cx).map_err(|source| DiffError::Section { pack: name.to_owned(), source })?,
                    None => kinds::unjudged(kind),
                };
                ("changed", j)
            }
            (Some(_), None) => ("removed", kinds::Judged { beyond: true, magnitude: f64::INFINITY, details: BTreeMap::new() }),
            (None, _) => ("added", kinds::Judged { beyond: true, magnitude: f64::INFINITY, details: BTreeMap::new() }),
        };
        sections.push(SectionDiff { kind: kind.to_string(), status, beyond: j.beyond, magnitude: j.magnitude, details: j.details });
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

/// Prints a report for people: a summary line, then differing packs worst first.
pub fn print_human(r: &DiffReport, tol: &Tolerances) {
    if r.packs.is_empty() {
        println!("identical: {} pack(s) compared", r.compared);
        return;
    }
    println!(
        "{} of {} pack(s) differ, {} beyond tolerance (distance {}, field max {}, field rms {}, image max {}, image rms {})",
        r.packs.len(),
        r.compared,
        r.beyond,
        tol.distance,
        tol.field_max,
        tol.field_rms,
        tol.image_max,
        tol.image_rms
    );
    for p in &r.packs {
        println!("  {:<7} {:<8} {}", if p.beyond { "BEYOND" } else { "within" }, p.status, p.path);
        for s in &p.sections {
            let details: Vec<String> = s.details.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let name = s.kind.as_bytes().try_into().ok().and_then(|k| kiln_formats::sections::section_type(SectionKind(k))).map_or("", |t| t.name);
            println!("      {} {name:<26} {}{}  {}", s.kind, s.status, if s.beyond { " (beyond)" } else { "" }, details.join(" "));
        }
    }
}

/// The machine-readable form of a report.
pub fn to_json(r: &DiffReport) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}
