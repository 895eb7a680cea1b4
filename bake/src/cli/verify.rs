//! `kiln verify`: every checksum and every cross-reference of a pack or a bake directory.
//!
//! Packs are read one at a time and dropped after their checks; only a few facts per pack are kept
//! for the manifest's cross-checks, so memory stays bounded by the largest pack (and its raw budget,
//! see `formats/SPEC.md`), not by the bake.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use kiln_formats::sections::{GrassPatches, Manifest, PackInfo, PackKind, SharedPacks, TreePrototypes, WaterWaves};
use kiln_formats::{find_packs, Pack, TileContents};
use xxhash_rust::xxh3::xxh3_64;

use super::export_grass::GRASS_PRODUCT;
use super::CliError;

/// The product name of the shared water pack in the manifest's `SHRD` (`shared/water-waves.kpack`).
pub const WATER_PRODUCT: &str = "water-waves";

/// What the manifest checks need to know about one pack that opened.
struct PackFacts {
    len: u64,
    hash: u64,
    info: Option<PackInfo>,
    /// Vertices and main triangles of a sound tile's mesh.
    mesh_counts: Option<(usize, usize)>,
    /// Bounds of a sound tile's vertices, if it has any.
    mesh_bounds: Option<([f32; 3], [f32; 3])>,
    /// A sound tile's trees: the shared pack hash they reference and their largest prototype index.
    trees: Option<(u64, Option<u32>)>,
    /// A sound shared trees pack's prototype count.
    prototypes: Option<usize>,
    /// A sound tile's grass: the shared pack hash its instances index and their largest patch index.
    grass: Option<(u64, Option<u16>)>,
    /// A sound shared grass pack's patch count.
    grass_patches: Option<usize>,
    /// A sound tile's water: the shared water pack hash it names.
    water: Option<u64>,
    /// Whether a sound shared pack holds wave frames (`WAVE`).
    water_waves: bool,
}

/// Checks everything under `path`; returns one line per problem (empty when all holds) and the
/// number of packs checked.
pub fn check(path: &Path) -> Result<(Vec<String>, usize), CliError> {
    let files = find_packs(path).map_err(|e| CliError::io(path, e))?;
    let is_dir = path.is_dir();
    let manifest_path = path.join("manifest.kpack");
    if files.is_empty() && !is_dir {
        return Err(CliError::Usage(format!("{}: no .kpack files found", path.display())));
    }
    let mut problems = Vec::new();
    let mut facts = BTreeMap::new();
    for file in &files {
        match Pack::open(file) {
            Err(e) => problems.push(e.to_string()),
            Ok(pack) => {
                let (f, p) = check_pack(file, &pack);
                problems.extend(p);
                facts.insert(file.clone(), f);
            }
        }
    }
    if is_dir {
        if !manifest_path.is_file() {
            problems.push(format!("{}: missing: a bake directory has a manifest listing its tiles", manifest_path.display()));
        } else {
            problems.extend(check_manifest(path, &manifest_path, &files, &facts));
        }
    }
    Ok((problems, files.len()))
}

/// Prints problems (one per line) and returns the process exit code.
pub fn run(path: &Path) -> Result<i32, CliError> {
    let (problems, n) = check(path)?;
    for p in &problems {
        println!("{p}");
    }
    if problems.is_empty() {
        println!("ok: {n} pack(s) verified under {}", path.display());
        Ok(0)
    } else {
        eprintln!("{} problem(s) in {n} pack(s)", problems.len());
        Ok(1)
    }
}

/// Checksums and sections of one pack, then the invariants between its sections.
fn check_pack(file: &Path, pack: &Pack) -> (PackFacts, Vec<String>) {
    let at = |m: String| format!("{}: {m}", file.display());
    let mut out: Vec<String> = pack.verify().into_iter().map(|e| at(e.to_string())).collect();
    let bytes = pack.bytes();
    let mut facts = PackFacts {
        len: bytes.len() as u64,
        hash: xxh3_64(bytes),
        info: None,
        mesh_counts: None,
        mesh_bounds: None,
        trees: None,
        prototypes: None,
        grass: None,
        grass_patches: None,
        water: None,
        water_waves: false,
    };
    match pack.get::<PackInfo>() {
        Ok(None) => out.push(at("no PINF pack-info section".into())),
        Ok(Some(info)) => facts.info = Some(info),
        Err(_) => {} // reported by `Pack::verify`
    }
    let is_tile = matches!(facts.info, Some(PackInfo { kind: PackKind::Tile { .. }, .. }));
    // A section that failed on its own was reported above; the tile check would repeat it.
    if is_tile && out.is_empty() {
        match TileContents::read(pack) {
            Ok(t) => {
                facts.mesh_counts = t.mesh.as_ref().map(|m| (m.positions.len(), m.main_index_count / 3));
                facts.mesh_bounds = t.mesh.as_ref().and_then(|m| m.bounds());
                facts.trees = t.trees.as_ref().map(|t| (t.prototypes_hash, t.instances.iter().map(|i| i.prototype).max()));
                facts.grass = t.grass.as_ref().map(|g| (g.patches_hash, g.instances.iter().map(|i| i.patch).max()));
                facts.water = t.water.as_ref().map(|w| w.waves_hash);
            }
            Err(e) => out.push(at(e.to_string())),
        }
    }
    let is_shared = matches!(facts.info, Some(PackInfo { kind: PackKind::Shared { .. }, .. }));
    if is_shared && out.is_empty() {
        // `Pack::verify` decoded every section; the count is what tiles index.
        facts.prototypes = pack.get::<TreePrototypes>().ok().flatten().map(|p| p.prototypes.len());
        facts.grass_patches = pack.get::<GrassPatches>().ok().flatten().map(|p| p.patches.len());
        facts.water_waves = matches!(pack.get::<WaterWaves>(), Ok(Some(_)));
    }
    (facts, out)
}

/// The manifest's shared packs (`SHRD`): each present, matching its hash and naming itself; tiles'
/// trees reference one of them and only prototypes it has. Returns the paths it lists.
fn check_shared(dir: &Path, manifest_path: &Path, world: &str, facts: &BTreeMap<PathBuf, PackFacts>, out: &mut Vec<String>) -> BTreeSet<PathBuf> {
    let at_manifest = |m: String| format!("{}: {m}", manifest_path.display());
    let shared: SharedPacks = match Pack::open(manifest_path).map(|p| p.get::<SharedPacks>()) {
        Ok(Ok(s)) => s.unwrap_or_default(),
        Ok(Err(e)) => {
            out.push(at_manifest(e.to_string()));
            return BTreeSet::new();
        }
        Err(_) => return BTreeSet::new(),
    };
    let mut listed = BTreeSet::new();
    let mut prototypes_by_hash = BTreeMap::new();
    for entry in &shared.0 {
        let path = dir.join(&entry.path);
        let at = |m: String| format!("{}: {m}", path.display());
        listed.insert(path.clone());
        let Some(f) = facts.get(&path) else {
            if !path.exists() {
                out.push(at(format!("listed in the manifest as the {} pack but cannot be read: no such file", entry.product)));
            }
            continue;
        };
        if f.len != entry.file_len || f.hash != entry.content_hash {
            out.push(at(format!(
                "content does not match the manifest (hash {:016x}, {} bytes; manifest says {:016x}, {} bytes)",
                f.hash, f.len, entry.content_hash, entry.file_len
            )));
        }
        if let Some(info) = &f.info {
            let expected = PackKind::Shared { product: entry.product.clone() };
            if info.kind != expected || info.world_name != world {
                out.push(at(format!("pack says it is {:?} of world {:?}, the manifest lists {expected:?} of {world:?}", info.kind, info.world_name)));
            }
        }
        prototypes_by_hash.insert(entry.content_hash, f.prototypes);
    }
    check_grass(&shared, facts, dir, out);
    check_water(&shared, facts, dir, out);
    for (path, f) in facts {
        let Some((hash, max)) = f.trees else { continue };
        match prototypes_by_hash.get(&hash) {
            None => out.push(format!("{}: its trees reference shared pack {hash:016x}, which the manifest does not list", path.display())),
            Some(Some(count)) if max.is_some_and(|m| m as usize >= *count) => {
                out.push(format!("{}: a tree uses prototype {} of the shared pack's {count}", path.display(), max.unwrap_or(0)))
            }
            Some(None) => out.push(format!("{}: its trees reference shared pack {hash:016x}, which holds no tree prototypes (TPRO)", path.display())),
            Some(_) => {}
        }
    }
    listed
}

/// Water against the manifest's `"water-waves"` shared pack: it holds `WAVE`, every tile's `WTIL`
/// names exactly that pack's hash, and a bake without one has no `WTIL` at all.
fn check_water(shared: &SharedPacks, facts: &BTreeMap<PathBuf, PackFacts>, dir: &Path, out: &mut Vec<String>) {
    let entry = shared.get(WATER_PRODUCT);
    if let Some(e) = entry {
        if facts.get(&dir.join(&e.path)).is_some_and(|f| !f.water_waves && f.info.is_some()) {
            out.push(format!("{}: the manifest's water pack has no WAVE (wave frames) section", dir.join(&e.path).display()));
        }
    }
    for (path, f) in facts {
        let Some(hash) = f.water else { continue };
        match entry {
            None => out.push(format!("{}: has water (WTIL) but the manifest lists no \"{WATER_PRODUCT}\" shared pack", path.display())),
            Some(e) if hash != e.content_hash => {
                out.push(format!("{}: its water references waves pack {hash:016x}, the manifest's is {:016x}", path.display(), e.content_hash))
            }
            Some(_) => {}
        }
    }
}

/// Grass against the manifest's `"grass"` shared pack: it holds `GPAT`, every tile's `GRSS` names
/// exactly that pack's hash and only patches it has, and a bake without one has no `GRSS` at all.
fn check_grass(shared: &SharedPacks, facts: &BTreeMap<PathBuf, PackFacts>, dir: &Path, out: &mut Vec<String>) {
    let entry = shared.get(GRASS_PRODUCT);
    // The patch count of the listed pack, when it could be read (a missing or broken one is reported as such).
    let count = entry.and_then(|e| facts.get(&dir.join(&e.path))).map(|f| f.grass_patches);
    if let (Some(e), Some(None)) = (entry, count) {
        out.push(format!("{}: the manifest's grass pack has no GPAT (grass patches) section", dir.join(&e.path).display()));
    }
    for (path, f) in facts {
        let Some((hash, max)) = f.grass else { continue };
        let Some(e) = entry else {
            out.push(format!("{}: has grass (GRSS) but the manifest lists no \"{GRASS_PRODUCT}\" shared pack", path.display()));
            continue;
        };
        if hash != e.content_hash {
            out.push(format!("{}: its grass references patches pack {hash:016x}, the manifest's is {:016x}", path.display(), e.content_hash));
        } else if let (Some(Some(n)), Some(m)) = (count, max) {
            if usize::from(m) >= n {
                out.push(format!("{}: a grass instance uses patch {m} of the shared pack's {n}", path.display()));
            }
        }
    }
}

fn check_manifest(dir: &Path, manifest_path: &Path, files: &[PathBuf], facts: &BTreeMap<PathBuf, PackFacts>) -> Vec<String> {
    let mut out = Vec::new();
    let at_manifest = |m: String| format!("{}: {m}", manifest_path.display());
    if !facts.contains_key(manifest_path) {
        return out; // it did not open; already reported
    }
    let manifest = match Pack::open(manifest_path).map(|p| p.require::<Manifest>()) {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => return vec![at_manifest(e.to_string())],
        Err(_) => return out,
    };
    if let Some(PackFacts { info: Some(info), .. }) = facts.get(manifest_path) {
        if info.kind != PackKind::Manifest {
            out.push(at_manifest(format!("pack info says it is {:?}, not a manifest", info.kind)));
        }
    }
    let found: HashSet<&PathBuf> = files.iter().collect();
    let mut listed = BTreeSet::new();
    let mut addresses = HashSet::with_capacity(manifest.nodes.len());
    for node in &manifest.nodes {
        let path = dir.join(&node.path);
        let at = |m: String| format!("{}: {m}", path.display());
        if !addresses.insert((node.level, node.x, node.y)) {
            out.push(at_manifest(format!("tile L{} ({},{}) is listed more than once", node.level, node.x, node.y)));
        }
        listed.insert(path.clone());
        let Some(f) = facts.get(&path) else {
            // A listed pack that failed to open was reported with its own error.
            if !found.contains(&path) {
                let why = if path.exists() { "is not a .kpack file in the bake" } else { "cannot be read: no such file" };
                out.push(format!("{}: listed in the manifest as L{} ({},{}) but {why}", path.display(), node.level, node.x, node.y));
            }
            continue;
        };
        if f.len != node.file_len || f.hash != node.content_hash {
            out.push(at(format!(
                "content does not match the manifest (hash {:016x}, {} bytes; manifest says {:016x}, {} bytes)",
                f.hash, f.len, node.content_hash, node.file_len
            )));
        }
        if let Some(info) = &f.info {
            let expected = PackKind::Tile { level: node.level, x: node.x, y: node.y };
            if info.kind != expected {
                out.push(at(format!("pack says it is {:?}, manifest lists it as {expected:?}", info.kind)));
            }
            if info.world_name != manifest.world_name {
                out.push(at(format!("pack belongs to world {:?}, the manifest to {:?}", info.world_name, manifest.world_name)));
            }
        }
        if let Some((lo, hi)) = f.mesh_bounds {
            // The manifest's bounds are what culling trusts: every vertex must lie inside them.
            if (0..3).any(|a| lo[a] < node.bounds_min[a] || hi[a] > node.bounds_max[a]) {
                out.push(at(format!("mesh spans {lo:?}..{hi:?}, outside the manifest's bounds {:?}..{:?}", node.bounds_min, node.bounds_max)));
            }
        }
        if let Some((vertices, tris)) = f.mesh_counts {
            if vertices as u64 != node.vertex_count as u64 || tris as u64 != node.triangle_count as u64 {
                out.push(at(format!(
                    "mesh has {vertices} vertices / {tris} triangles, manifest says {} / {}",
                    node.vertex_count, node.triangle_count
                )));
            }
        }
    }
    // The grid walk is bounded by what is present: a manifest claiming far more tiles than it lists
    // (a few bytes can claim 2^32) gets one line instead of a line per absent tile.
    let expected = manifest.expected_node_count();
    let present = manifest.nodes.len() as u64;
    if expected > present.saturating_mul(2).saturating_add(64) {
        out.push(at_manifest(format!(
            "the {}x{} tile grid with {} levels needs {expected} tiles but the manifest lists {present}",
            manifest.tiles_per_axis[0], manifest.tiles_per_axis[1], manifest.levels
        )));
    } else {
        for level in 0..manifest.levels {
            let [tx, ty] = manifest.tiles_at_level(level);
            for y in 0..ty {
                for x in 0..tx {
                    if !addresses.contains(&(level, x, y)) {
                        out.push(at_manifest(format!("tile L{level} ({x},{y}) is missing from the quadtree")));
                    }
                }
            }
        }
    }
    listed.extend(check_shared(dir, manifest_path, &manifest.world_name, facts, &mut out));
    for f in files {
        if f != manifest_path && !listed.contains(f) {
            out.push(format!("{}: pack is not listed in the manifest", f.display()));
        }
    }
    out
}
