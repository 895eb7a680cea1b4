//! The pre-bake estimate: peak memory and a time class from the world spec alone, so that a world
//! that cannot fit the machine (or a budget the user gives) is refused before any work, with the
//! estimate and the keys to change, instead of being killed by the kernel an hour in.
//!
//! The model is an upper bound fitted to measured bakes (table in BENCHMARKS.md, "Pre-bake
//! estimate"). A bake peaks in one of its steps, and holds little from one step to the next when it
//! has a stage cache (the default: what the cache holds is let go and read back), so the estimate is
//! a fixed part per process and per worker thread, what outlives every step (the water's flood
//! fill), and the largest step: the density (bytes per sample), light transport and the packs (bytes
//! per expected triangle, the meshes of every LOD level, and per tree occluder triangle), the tree
//! prototypes (their atlases), the wave frames or the grass map. A bake that holds what it makes
//! (without a cache, or `MemoryUse::Hold`) keeps the density volume and the trees pack throughout,
//! and bakes the impostors, the waves and the grass patches one after another beside light
//! transport, so the largest of them adds to transport's peak. Triangles are expected per XY column in proportion to
//! the height of the band where the noise can make surfaces (below the open top of the world).

use std::path::Path;

use crate::world::{FloorKind, WorldSpec};

const MIB: u64 = 1 << 20;
/// Fixed memory: the process, its tables and buffers shared by all threads.
const BASE_BYTES: f64 = 40.0 * MIB as f64;
/// Memory per worker thread (its stack, per-tile and per-batch buffers).
const THREAD_BYTES: f64 = 12.0 * MIB as f64;
/// Memory per density sample while the density is made (values, occupancy, flood fills).
const SAMPLE_BYTES: f64 = 8.0;
/// The density volume's own bytes per sample (an f32), which every bake holds whole at once.
const DENSITY_SAMPLE_BYTES: f64 = 4.0;
/// Memory per density sample held through the whole bake when it has no stage cache.
const HELD_SAMPLE_BYTES: f64 = 7.0;
/// Memory per expected triangle (all LOD levels) where light transport or the packs peak.
const TRIANGLE_BYTES: f64 = 86.0;
/// Expected triangles per XY column: a floor surface plus caves in proportion to the active band.
const COLUMN_TRIANGLES: f64 = 6.0;
const COLUMN_TRIANGLES_PER_VOXEL: f64 = 0.15;
/// Triangles (all LOD levels) per square voxel of level-0 surface.
const TRIANGLES_PER_VOXEL_AREA: f64 = 3.8;
/// Memory per tree prototype at 32-pixel impostor views while the prototypes are made: its
/// generator mesh, self-AO and sections, and its atlas (atlases grow with the square of the view
/// size); and what the trees pack holds of one through a bake without a stage cache.
const PROTOTYPE_BYTES: f64 = 1.5 * MIB as f64;
const PROTOTYPE_ATLAS_BYTES: f64 = 2.5 * MIB as f64;
const HELD_PROTOTYPE_BYTES: f64 = 1.0 * MIB as f64;
/// Light-transport occluder triangles per tree and memory per occluder triangle (BVH included).
const TREE_OCCLUDER_TRIANGLES: f64 = 2200.0;
const OCCLUDER_TRIANGLE_BYTES: f64 = 100.0;
/// Core-seconds to grow and capture one prototype.
const PROTOTYPE_SECONDS: f64 = 0.3;
/// Memory per ground-map sample of grass (one every half voxel over the world): the ground hit and
/// normal, AO, keep, vigour, light and the tiles' copies of the maps.
const GRASS_SAMPLE_BYTES: f64 = 48.0;
/// Memory per ground-map sample of the ground's shape (height, normal, keep, vigour), which a bake
/// without a stage cache holds from before light transport to the map.
const GRASS_SHAPE_SAMPLE_BYTES: f64 = 18.0;
/// Memory per level-0 grass blade of the unique patches (every level, as grown, as the section and
/// encoded in the shared pack).
const GRASS_BLADE_BYTES: f64 = 500.0;
/// Core-seconds per grass ground-map sample (ground, AO at every fourth, keep and light).
const GRASS_SAMPLE_SECONDS: f64 = 1e-6;
/// Core-seconds per wave texel and frame (the spectrum's FFTs, normals and every caustic plane;
/// the goal of issue #19 is 64 frames of 256² with 4 planes in 3 s on 2 cores).
const WAVE_TEXEL_SECONDS: f64 = 2e-6;
/// The wave step's peak over the f32 frames' bytes.
const WAVE_FRAME_FACTOR: f64 = 1.6;
/// Memory per column of the water's depth and shore grids (every level: 4/3 of level 0, f32 + u8).
const WATER_COLUMN_BYTES: f64 = 8.0;
/// Safety factor over the fitted model, so that it stays an upper bound.
const MARGIN: f64 = 1.15;
/// Core-seconds per light path, per triangle and per sample, measured on the shipped worlds.
const PATH_SECONDS: f64 = 6e-6;
const TRIANGLE_SECONDS: f64 = 1e-6;
const SAMPLE_SECONDS: f64 = 3e-8;
/// Most light paths a bake may trace (about 7 core-hours): beyond it the lighting is refused
/// rather than left to run for days.
pub const MAX_LIGHT_PATHS: f64 = 4_294_967_296.0;

/// What a world is expected to cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Peak resident memory, bytes (an upper bound with modest margin).
    pub peak_bytes: u64,
    /// What the bake certainly holds at once, bytes: the density volume (an f32 per sample) or the
    /// wave frames (f32), whichever is larger. No budget under it can be kept.
    pub floor_bytes: u64,
    /// Density samples.
    pub samples: u64,
    /// Expected triangles over all LOD levels.
    pub triangles: u64,
    /// Expected light paths.
    pub light_paths: f64,
    /// Expected wall time in seconds on `threads` threads.
    pub seconds: f64,
    /// Worker threads assumed.
    pub threads: usize,
}

impl Estimate {
    /// Estimates a bake of `spec` on `threads` worker threads, with a stage cache (`cached`, the
    /// default, and always so for shards) or without.
    pub fn of(spec: &WorldSpec, threads: usize, cached: bool) -> Estimate {
        let [nx, ny, nz] = spec.volume.size.map(f64::from);
        let vs = spec.volume.voxel_size;
        let f = &spec.floor;
        let floor_top = if f.kind == FloorKind::None { 0.0 } else { f.height + f.amplitude };
        // Surfaces only form below the open top (validation guarantees it is below the volume's top).
        let active_z = ((floor_top + f.fade_start + f.fade) / vs + 2.0).min(nz).max(2.0);
        let columns = nx * ny;
        let samples = columns * nz;
        let triangles = columns * (COLUMN_TRIANGLES + COLUMN_TRIANGLES_PER_VOXEL * active_z);
        let threads = threads.max(1);
        let trees = trees(spec);
        let grass = grass(spec);
        // The flood fill's mask and grids live from the first water tile to the end.
        let (water_bytes, wave_bytes, water_seconds) = water(spec);
        let (density_bytes, transport_bytes) = (SAMPLE_BYTES * samples, TRIANGLE_BYTES * triangles + trees.occluder_bytes);
        let steps = match cached {
            // The wave frames, the grass patches and the tree prototypes are made from nothing the
            // other steps hold: steps of their own.
            true => density_bytes.max(transport_bytes).max(trees.growing_bytes).max(grass.map_bytes + grass.patch_bytes).max(wave_bytes),
            // They are baked alongside the others, one after another, all but the small tree
            // shapes beside light transport.
            false => density_bytes
                .max(transport_bytes + grass.patch_bytes.max(wave_bytes).max(trees.growing_bytes))
                .max(grass.map_bytes + grass.patch_bytes),
        };
        let held = if cached { 0.0 } else { HELD_SAMPLE_BYTES * samples + trees.held_bytes + grass.shape_bytes };
        let bytes = BASE_BYTES + THREAD_BYTES * threads as f64 + water_bytes + held + steps;
        let area = triangles / TRIANGLES_PER_VOXEL_AREA * vs * vs;
        let light_paths = f64::from(spec.lighting.paths_per_area) * area;
        let core_seconds =
            light_paths * PATH_SECONDS + triangles * TRIANGLE_SECONDS + samples * SAMPLE_SECONDS + trees.seconds + grass.seconds + water_seconds;
        Estimate {
            peak_bytes: (bytes * MARGIN) as u64,
            floor_bytes: ((DENSITY_SAMPLE_BYTES * samples) as u64).max(spec.water.as_ref().map_or(0, |w| w.wave_bytes())),
            samples: samples as u64,
            triangles: triangles as u64,
            light_paths,
            seconds: core_seconds / threads as f64,
            threads,
        }
    }

    /// "seconds", "minutes" or "hours".
    pub fn time_class(&self) -> &'static str {
        match self.seconds {
            s if s < 60.0 => "seconds",
            s if s < 3600.0 => "minutes",
            _ => "hours",
        }
    }

    /// One line: memory, time class and what they follow from.
    pub fn describe(&self) -> String {
        format!(
            "estimated peak memory {} MiB, {} ({} samples, ~{} triangles, ~{:.2e} light paths, {} threads)",
            self.peak_bytes.div_ceil(MIB),
            self.time_class(),
            self.samples,
            self.triangles,
            self.light_paths,
            self.threads
        )
    }
}

/// What a world's trees cost (see [`trees`]).
#[derive(Default)]
struct TreesCost {
    /// While the prototypes are made.
    growing_bytes: f64,
    /// Their occluder triangles in light transport.
    occluder_bytes: f64,
    /// What the trees pack holds through a bake without a stage cache.
    held_bytes: f64,
    /// Core-seconds to make the prototypes.
    seconds: f64,
}

/// What a world's trees cost: prototypes (their atlases by the largest view size the settings
/// allow) and, when trees occlude light, every expected tree's occluder triangles (at most the
/// blue-noise packing limit of each species over the whole world).
fn trees(spec: &WorldSpec) -> TreesCost {
    let Some(t) = spec.trees.as_ref() else { return TreesCost::default() };
    let px = if t.impostor.texel == 0.0 { 32.0 } else { 64.0 };
    let views = f64::from(t.impostor.grid * t.impostor.grid) / 144.0;
    let prototypes: f64 = t.species.iter().map(|s| f64::from(s.prototypes)).sum();
    let atlas_scale = views * (px / 32.0) * (px / 32.0);
    let [nx, ny, _] = spec.volume.size.map(f64::from);
    let area = nx * ny * spec.volume.voxel_size * spec.volume.voxel_size;
    let instances: f64 = t.species.iter().map(|s| area * s.density.min(0.66 / (s.min_spacing * s.min_spacing))).sum();
    TreesCost {
        growing_bytes: prototypes * (PROTOTYPE_BYTES + PROTOTYPE_ATLAS_BYTES * atlas_scale),
        occluder_bytes: if t.occlude_light { instances * TREE_OCCLUDER_TRIANGLES * OCCLUDER_TRIANGLE_BYTES } else { 0.0 },
        held_bytes: prototypes * HELD_PROTOTYPE_BYTES * atlas_scale,
        seconds: prototypes * PROTOTYPE_SECONDS * atlas_scale,
    }
}

/// What a world's grass costs (see [`grass`]).
#[derive(Default)]
struct GrassCost {
    /// The world-wide ground map.
    map_bytes: f64,
    /// The ground's shape, held through light transport by a bake without a stage cache.
    shape_bytes: f64,
    /// The unique patches with their levels.
    patch_bytes: f64,
    /// Core-seconds of the ground map.
    seconds: f64,
}

/// What a world's grass costs: the world-wide ground map (a sample every half voxel) and the
/// unique patches with their levels.
fn grass(spec: &WorldSpec) -> GrassCost {
    let Some(g) = spec.grass.as_ref() else { return GrassCost::default() };
    let [nx, ny, _] = spec.volume.size.map(f64::from);
    let map = (2.0 * nx + 1.0) * (2.0 * ny + 1.0);
    let tile = f64::from(spec.volume.tile_size) * spec.volume.voxel_size;
    let side = g.patch_side(tile);
    let blades = f64::from(g.patches) * g.patch_density() * side * side;
    GrassCost {
        map_bytes: map * GRASS_SAMPLE_BYTES,
        shape_bytes: map * GRASS_SHAPE_SAMPLE_BYTES,
        patch_bytes: blades * GRASS_BLADE_BYTES,
        seconds: map * GRASS_SAMPLE_SECONDS,
    }
}

/// Memory of a world's water: the flood fill's mask (one byte per sample up to the level) and the
/// column grids of every level; the wave bake's peak (the frames as f32 with every caustic plane,
/// then its binary16 forms); and the wave bake's core-seconds.
fn water(spec: &WorldSpec) -> (f64, f64, f64) {
    let Some(w) = spec.water.as_ref() else { return (0.0, 0.0, 0.0) };
    let [nx, ny, nz] = spec.volume.size.map(f64::from);
    let layers = (w.level / spec.volume.voxel_size + 1.0).clamp(0.0, nz);
    let mask = nx * ny * layers + (nx + 1.0) * (ny + 1.0) * WATER_COLUMN_BYTES * 4.0 / 3.0;
    let frames = w.wave_bytes() as f64;
    let r = f64::from(w.waves.resolution);
    let texel_frames = f64::from(w.waves.frames) * r * r;
    // The f32 frames and their binary16 forms as the section and the pack (measured with the
    // default loop on coast.toml and on the default world's water: 1.6 × the f32 frames).
    (mask, WAVE_FRAME_FACTOR * frames, texel_frames * WAVE_TEXEL_SECONDS)
}

/// Where a memory budget came from, which decides how it is kept (see [`check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetSource {
    /// The user's `--memory-budget`: kept by measurement while the bake runs.
    User,
    /// The machine's total memory: kept by the estimate before the bake.
    Machine,
}

impl std::fmt::Display for BudgetSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BudgetSource::User => "--memory-budget",
            BudgetSource::Machine => "the machine's memory",
        })
    }
}

/// A memory budget and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Memory the bake may use, in bytes.
    pub bytes: u64,
    /// The user's flag or the machine's memory.
    pub source: BudgetSource,
}

impl Budget {
    /// Whether the user gave this budget (`--memory-budget`) rather than the machine's memory.
    pub fn is_user(&self) -> bool {
        self.source == BudgetSource::User
    }

    /// The user's budget, else the machine's total memory (Linux), else none.
    pub fn resolve(user: Option<u64>) -> Option<Budget> {
        match user {
            Some(bytes) => Some(Budget { bytes, source: BudgetSource::User }),
            None => machine_memory().map(|bytes| Budget { bytes, source: BudgetSource::Machine }),
        }
    }
}

/// Total memory from `/proc/meminfo`, if the platform tells.
pub fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// Why a world is refused, before baking or while it bakes.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    #[error(
        "{}: the bake needs more memory than {} allows: {} > {} MiB; reduce volume.size (fewer samples) \
         or --jobs (fewer threads){}",
        .file.display(), .budget.source, .estimate.describe(), .budget.bytes / MIB, user_budget_hint(.estimate, .budget)
    )]
    /// The estimated peak memory exceeds the machine's memory.
    Memory {
        /// The world file.
        file: std::path::PathBuf,
        /// The pre-bake estimate that exceeds the budget.
        estimate: Estimate,
        /// The budget it exceeds.
        budget: Budget,
    },
    #[error(
        "{}: {} allows {} MiB, less than the bake certainly holds at once: {} MiB (the density volume, \
         4 bytes per sample, or the wave frames); {}; reduce volume.size (fewer samples)",
        .file.display(), .budget.source, .budget.bytes / MIB, .estimate.floor_bytes.div_ceil(MIB), .estimate.describe()
    )]
    /// A budget the user gives is under what the world certainly needs.
    Floor {
        /// The world file.
        file: std::path::PathBuf,
        /// The pre-bake estimate whose floor exceeds the budget.
        estimate: Estimate,
        /// The budget it exceeds.
        budget: Budget,
    },
    #[error(
        "{}: the bake's resident memory reached {} MiB during {}, over {} ({} MiB); stopped with the \
         output untouched (what was finished stays in the stage cache): bake again with a larger \
         budget or fewer --jobs",
        .file.display(), .peak.div_ceil(MIB), .step, .budget.source, .budget.bytes / MIB
    )]
    /// The bake's measured peak passed a budget the user gave.
    Exceeded {
        /// The world file.
        file: std::path::PathBuf,
        /// The peak resident memory measured, bytes.
        peak: u64,
        /// The step the bake was in ("the start" before the first).
        step: String,
        /// The budget it passed.
        budget: Budget,
    },
    #[error(
        "{}: the bake's resident memory reached {} MiB, over {} ({} MiB), in its last moments (the \
         watch's last look found it): what it made is written, but it did not keep to the budget: \
         bake again with a larger budget or fewer --jobs",
        .file.display(), .peak.div_ceil(MIB), .budget.source, .budget.bytes / MIB
    )]
    /// [`BudgetError::Exceeded`], first seen once the bake had finished.
    ExceededAtEnd {
        /// The world file.
        file: std::path::PathBuf,
        /// The peak resident memory measured, bytes.
        peak: u64,
        /// The budget it passed.
        budget: Budget,
    },
    #[error(
        "{}: the lighting would trace ~{:.2e} light paths, more than {MAX_LIGHT_PATHS:e} ({}); lower \
         lighting.paths_per_area or volume.voxel_size (the surface area in world units sets the path count)",
        .file.display(), .estimate.light_paths, .estimate.describe()
    )]
    /// The light transport would trace more than [`MAX_LIGHT_PATHS`] paths.
    Time {
        /// The world file.
        file: std::path::PathBuf,
        /// The pre-bake estimate whose path count is over the limit.
        estimate: Estimate,
    },
}

/// What a world refused by the machine's memory may still try: the estimate is an upper bound, and
/// a bake given `--memory-budget` under the machine's memory (and over what it certainly holds)
/// runs, measured, instead of being refused.
fn user_budget_hint(estimate: &Estimate, machine: &Budget) -> String {
    let suggested = machine.bytes / 10 * 9;
    if estimate.floor_bytes >= suggested {
        return String::new();
    }
    format!(
        ", or, as the estimate is an upper bound, bake with --memory-budget {}M: it then keeps what it \
         can to disk and is stopped, with its output untouched, if it passes the budget",
        suggested / MIB
    )
}

/// Refuses a world that cannot keep to `budget` or would trace more than [`MAX_LIGHT_PATHS`].
///
/// The machine's memory is held to the estimate, an upper bound: a bake over it would be killed by
/// the kernel, perhaps an hour in. A budget the user gives is held to what the world certainly
/// needs ([`Estimate::floor_bytes`]): between that and the estimate the bake may well fit (how many
/// trees grow, for one, is known only once the terrain is), so it runs, and the caller holds it to
/// the budget by measurement ([`crate::memory_watch::MemoryWatch`]).
pub fn check(file: &Path, estimate: &Estimate, budget: Option<&Budget>) -> Result<(), BudgetError> {
    if let Some(b) = budget {
        let (file, estimate, budget) = (file.to_owned(), estimate.clone(), b.clone());
        match b.source {
            BudgetSource::User if estimate.floor_bytes > b.bytes => return Err(BudgetError::Floor { file, estimate, budget }),
            BudgetSource::Machine if estimate.peak_bytes > b.bytes => return Err(BudgetError::Memory { file, estimate, budget }),
            _ => {}
        }
    }
    if estimate.light_paths.is_nan() || estimate.light_paths > MAX_LIGHT_PATHS {
        return Err(BudgetError::Time { file: file.to_owned(), estimate: estimate.clone() });
    }
    Ok(())
}

/// The share of the machine's memory a bake may fill to keep what it makes in memory instead of
/// reading it back from its cache; the rest is left to other processes (tests, other bakes).
pub const HOLD_SHARE: f64 = 0.5;

/// Whether a bake whose estimate with everything it makes held in memory is `held` may keep it
/// all ([`crate::pipeline::MemoryUse::Hold`]), with `processes` such bakes on the machine (local
/// shards): not when the user set a budget (that asks for the least memory), not when the
/// machine's memory is unknown, and only while they all stay under [`HOLD_SHARE`] of it.
pub fn may_hold(held: &Estimate, budget: Option<&Budget>, processes: u32) -> bool {
    let all = held.peak_bytes as f64 * f64::from(processes.max(1));
    budget.is_some_and(|b| b.source == BudgetSource::Machine && all <= HOLD_SHARE * b.bytes as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::World;

    #[test]
    fn a_bake_holds_its_values_only_well_within_the_machine_and_without_a_budget() {
        let spec = world("worlds/ice_caves.toml").spec;
        let held = Estimate::of(&spec, 16, false);
        let machine = |bytes| Some(Budget { bytes, source: BudgetSource::Machine });
        assert!(may_hold(&held, machine(held.peak_bytes * 2).as_ref(), 1));
        assert!(!may_hold(&held, machine(held.peak_bytes * 2 - 1).as_ref(), 1));
        assert!(may_hold(&held, machine(held.peak_bytes * 16).as_ref(), 8), "eight local shards fit");
        assert!(!may_hold(&held, machine(held.peak_bytes * 16).as_ref(), 9), "nine do not");
        let user = Budget { bytes: u64::MAX, source: BudgetSource::User };
        assert!(!may_hold(&held, Some(&user), 1), "a budget asks for the least memory");
        assert!(!may_hold(&held, None, 1), "unknown memory");
        // The large world with its values held would take most of a 16 GiB machine.
        let big = Estimate::of(&world("worlds/big.toml").spec, 2, false);
        assert!(!may_hold(&big, machine(16 << 30).as_ref(), 1), "{}", big.describe());
    }

    fn world(path: &str) -> World {
        crate::world::load_world(&Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).unwrap()
    }

    #[test]
    fn estimates_bound_the_measured_peaks_with_modest_margin() {
        // Resident peaks measured with 2 threads, in the least memory (a stage cache and
        // `--memory-budget`) and with everything held (`--no-cache`; BENCHMARKS.md, "Pre-bake
        // estimate", refitted in the thirty-seventh session); the ice_caves variants differ from
        // the default world only in `volume.size` and having no trees. A bake that holds what it
        // makes bakes the wave frames and grass patches beside light transport, and whether their
        // peaks meet depends on timing: its estimate counts them together, hence the wider bound.
        let caves = world("worlds/ice_caves.toml").spec;
        let mut bare = caves.clone();
        bare.trees = None;
        let sized = |size: [u32; 3]| {
            let mut s = bare.clone();
            s.volume.size = size;
            s
        };
        let (forest, coast, tiny) = (world("worlds/forest.toml").spec, world("worlds/coast.toml").spec, world("worlds/tiny.toml").spec);
        let (c256, c1024) = (sized([256, 256, 64]), sized([1024, 1024, 64]));
        let big = world("worlds/big.toml").spec;
        let measured = [
            (&tiny, true, 58.0),
            (&tiny, false, 63.0),
            (&c256, true, 304.0),
            (&c256, false, 336.0),
            (&bare, true, 407.0),
            (&bare, false, 603.0),
            (&caves, true, 432.0),
            (&caves, false, 895.0),
            (&forest, true, 356.0),
            (&forest, false, 477.0),
            (&coast, true, 331.0),
            (&coast, false, 318.0),
            (&c1024, true, 1438.0),
            // worlds/big.toml in one process.
            (&big, true, 3927.0),
        ];
        let ratios: Vec<(String, bool, f64)> = measured
            .iter()
            .map(|&(spec, cached, mib)| {
                let label = format!("{} {} (cached: {cached})", spec.name, spec.volume.size[0]);
                (label, cached, Estimate::of(spec, 2, cached).peak_bytes as f64 / MIB as f64 / mib)
            })
            .collect();
        for (label, cached, ratio) in &ratios {
            // big.toml's estimate counts a tree's light occluders on every column at each
            // species' density (about 9700 trees; 4031 grow, on the ground open to the sky), and
            // its light transport parks on disk what tracing does not read: twice its peak.
            let most = match (*cached, label.starts_with("big")) {
                (true, true) => 2.3,
                (true, false) => 1.5,
                (false, _) => 1.6,
            };
            assert!((1.0..=most).contains(ratio), "{label}: {ratio:.2}; all: {ratios:?}");
        }
    }

    #[test]
    fn largest_worlds_are_refused_by_memory_not_by_overflow() {
        let mut spec = world("worlds/ice_caves.toml").spec;
        spec.volume.size = [4096, 4096, 256];
        spec.volume.tile_size = 256;
        let e = Estimate::of(&spec, 16, true);
        assert!(e.peak_bytes > 32 << 30, "{}", e.describe());
        let machine = Budget { bytes: 16 << 30, source: BudgetSource::Machine };
        let msg = check(Path::new("w.toml"), &e, Some(&machine)).unwrap_err().to_string();
        assert!(msg.starts_with("w.toml: the bake needs more memory than the machine's memory allows: estimated peak"), "{msg}");
        assert!(msg.contains("> 16384 MiB; reduce volume.size"), "{msg}");
        assert!(!msg.contains("--memory-budget"), "no budget under the machine's memory can hold the density: {msg}");
        // The density volume alone is 16 GiB: no budget under it can be kept.
        let user = Budget { bytes: (16 << 30) - 1, source: BudgetSource::User };
        let msg = check(Path::new("w.toml"), &e, Some(&user)).unwrap_err().to_string();
        assert!(msg.starts_with("w.toml: --memory-budget allows 16383 MiB, less than the bake certainly holds at once: 16384 MiB"), "{msg}");
    }

    #[test]
    fn a_world_the_machine_may_hold_only_by_measure_is_told_of_the_budget_flag() {
        // A big.toml shard's estimate is an upper bound over what it was measured to need
        // (BENCHMARKS.md): an 8 GiB machine refuses it, and says how to bake it there anyway.
        let e = Estimate::of(&world("worlds/big.toml").spec, 2, true);
        let machine = Budget { bytes: 8 << 30, source: BudgetSource::Machine };
        let msg = check(Path::new("big.toml"), &e, Some(&machine)).unwrap_err().to_string();
        assert!(msg.contains("or, as the estimate is an upper bound, bake with --memory-budget 7372M"), "{msg}");
        let user = Budget { bytes: 7372 * MIB, source: BudgetSource::User };
        assert!(check(Path::new("big.toml"), &e, Some(&user)).is_ok(), "the suggested budget is taken");
    }

    #[test]
    fn a_users_budget_under_the_estimate_but_over_the_floor_is_baked_under_watch() {
        let spec = world("worlds/ice_caves.toml").spec;
        let e = Estimate::of(&spec, 2, true);
        // The default world: 16.8 M samples, 64 MiB of density, and 176 MiB of wave frames (64 of
        // 256² texels with four caustic planes); its estimate is an upper bound (measured peaks in
        // BENCHMARKS.md) well over them.
        assert_eq!(e.floor_bytes, (4 * 512 * 512 * 64).max(spec.water.as_ref().unwrap().wave_bytes()));
        assert_eq!(e.floor_bytes, 176 * MIB);
        assert!(e.peak_bytes > 512 * MIB, "{}", e.describe());
        let file = Path::new("w.toml");
        let budget = |bytes, source| Some(Budget { bytes, source });
        assert!(check(file, &e, budget(512 * MIB, BudgetSource::User).as_ref()).is_ok());
        assert!(matches!(check(file, &e, budget(512 * MIB, BudgetSource::Machine).as_ref()), Err(BudgetError::Memory { .. })));
        assert!(matches!(check(file, &e, budget(175 * MIB, BudgetSource::User).as_ref()), Err(BudgetError::Floor { .. })));
        assert!(Budget::resolve(Some(MIB)).unwrap().is_user());
        // Waves of 256 frames of 512² outweigh a small world's density.
        let mut wet = world("worlds/tiny.toml").spec;
        wet.water = Some(toml::from_str("level = 1.0\n[waves]\nframes = 256\nresolution = 512").unwrap());
        let w = wet.water.as_ref().unwrap().wave_bytes();
        assert_eq!(Estimate::of(&wet, 2, true).floor_bytes, w);
    }

    #[test]
    fn the_wave_frames_count_toward_the_peak() {
        let mut spec = world("worlds/tiny.toml").spec;
        let dry = Estimate::of(&spec, 2, true);
        spec.water = Some(toml::from_str("level = 1.0").unwrap());
        let wet = Estimate::of(&spec, 2, true);
        // The default loop (64 × 256² texels × 44 bytes as f32, 1.6 times) outweighs tiny's triangles.
        let frames = 64.0 * 256.0 * 256.0 * 44.0 * WAVE_FRAME_FACTOR;
        assert!(wet.peak_bytes as f64 >= dry.peak_bytes as f64 + frames * 0.9, "{} vs {}", wet.describe(), dry.describe());
        assert!(wet.seconds > dry.seconds);
        let w = spec.water.as_mut().unwrap();
        w.waves.frames = 256;
        w.waves.resolution = 256;
        let more = Estimate::of(&spec, 2, true);
        assert!(more.peak_bytes > wet.peak_bytes + (3.0 * frames) as u64 / 2);
    }

    #[test]
    fn huge_light_path_counts_are_refused() {
        let mut spec = world("worlds/tiny.toml").spec;
        spec.volume.voxel_size = 1000.0;
        let e = Estimate::of(&spec, 2, true);
        let msg = check(Path::new("w.toml"), &e, None).unwrap_err().to_string();
        assert!(msg.contains("lower lighting.paths_per_area or volume.voxel_size"), "{msg}");
        spec.lighting.paths_per_area = 1e-6;
        assert!(check(Path::new("w.toml"), &Estimate::of(&spec, 2, true), None).is_ok());
        assert_eq!(Estimate::of(&world("worlds/tiny.toml").spec, 2, true).time_class(), "seconds");
    }
}
