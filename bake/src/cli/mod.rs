//! The `kiln` command line. [`run`] parses arguments and dispatches; each command has a module.

pub mod export;
pub mod export_grass;
pub mod export_trees;
pub mod export_water;
pub mod inspect;
mod progress;
pub mod shards;
pub mod verify;

/// Kept for callers of the old path; the walk lives beside `Pack` in `kiln-formats`.
pub use kiln_formats::find_packs;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

/// Why a command failed. Each displays as one line naming the file and the problem. The library
/// layers below the CLI have their own errors (`pipeline::BakeError`, `world::WorldError`, ...),
/// which this wraps; they never return a `CliError`.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command cannot be carried out as asked (a tile outside the bake, a flag out of range, an
    /// `--out` that is not a bake, a directory without packs); the message says which.
    #[error("{0}")]
    Usage(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file, as displayed.
        path: String,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// A pack could not be opened, read or written.
    #[error(transparent)]
    Pack(#[from] kiln_formats::PackFileError),
    /// A world file (or a file it references) is unreadable or invalid.
    #[error(transparent)]
    World(#[from] crate::world::WorldError),
    /// `kiln diff` could not compare its inputs (not a judgement that they differ).
    #[error(transparent)]
    Diff(#[from] crate::diff::DiffError),
    /// The world is beyond the memory budget, or too slow to bake.
    #[error(transparent)]
    Budget(#[from] crate::budget::BudgetError),
    /// The bake failed.
    #[error(transparent)]
    Bake(#[from] crate::pipeline::BakeError),
    /// The stage cache could not be read or trimmed.
    #[error(transparent)]
    Cache(#[from] kiln_cache::store::StoreError),
    /// Any other failure; the message is already one line, naming the file or world where there is one.
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    /// A [`CliError::Io`] for a failed read or write of `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        CliError::Io { path: path.display().to_string(), source }
    }
}

#[derive(Parser)]
#[command(name = "kiln", version, about = "Bakes voxel worlds into versioned binary packs, and inspects them")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bake a world file into OUT/<world name>/ (manifest.kpack + tiles/L{level}_{x}_{y}.kpack).
    Bake {
        /// The world file, e.g. worlds/ice_caves.toml.
        world: PathBuf,
        /// Parent directory of the bake.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Worker threads, 1 to 256 (default: all cores); more than the machine's cores are not
        /// started, since idle extra workers only spin. The output is identical for any value.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=crate::pipeline::MAX_JOBS as i64))]
        jobs: Option<u16>,
        /// No progress bars or report (progress bars are also hidden when stderr is not a terminal).
        #[arg(long, short)]
        quiet: bool,
        /// Stage cache directory (default: $KILN_CACHE, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln).
        #[arg(long, conflicts_with = "no_cache")]
        cache: Option<PathBuf>,
        /// Bake without the stage cache.
        #[arg(long)]
        no_cache: bool,
        /// Say why each recomputed item missed the cache.
        #[arg(long)]
        explain: bool,
        /// Keep the bake's peak memory under SIZE (e.g. 500M, 2G): a world that certainly needs
        /// more is refused before any work, the bake lets go of what its cache can give back and
        /// reads it back when asked, and a bake whose measured peak passes SIZE is stopped with its
        /// output untouched. Without it, a world whose estimated peak exceeds the machine's total
        /// memory is refused, and a bake keeps what it makes in memory while its estimate (N times
        /// over for N local shards) stays under half the machine's memory. With --local-shards N,
        /// each shard keeps to SIZE / N.
        #[arg(long, value_parser = parse_size)]
        memory_budget: Option<u64>,
        /// Compute shard K of N (from 0) of the bake into the cache and write no output; then
        /// `--assemble` (or any bake against the same cache) writes it. Shards of one bake may run on
        /// many machines that share the cache directory.
        #[arg(long, value_name = "K/N", value_parser = shards::parse_shard, conflicts_with_all = ["shards", "assemble", "local_shards", "no_cache"])]
        shard: Option<(u32, u32)>,
        /// Be one of N shards, the index taken from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096), conflicts_with_all = ["assemble", "local_shards", "no_cache"])]
        shards: Option<u32>,
        /// Write the output from the cache the shards filled, computing nothing; fails, naming what is
        /// missing, if a shard has not finished.
        #[arg(long, conflicts_with_all = ["local_shards", "no_cache"])]
        assemble: bool,
        /// Bake as N shard processes on this machine (the threads shared among them; a killed shard is
        /// started again), then assemble the output.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), conflicts_with = "no_cache")]
        local_shards: Option<u32>,
        /// Print how much of the bake the cache holds, per stage (items present / items), computing
        /// nothing: the progress of a sharded bake.
        #[arg(long, conflicts_with_all = ["shard", "shards", "assemble", "local_shards", "no_cache"])]
        status: bool,
        /// How many bake processes share this machine's memory (`--local-shards` gives its shards
        /// its N): a bake keeps what it makes in memory only while that many such bakes fit.
        #[arg(long, hide = true, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
        machine_share: u32,
    },
    /// Inspect or trim the stage cache.
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
        /// Cache directory (default: $KILN_CACHE, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln).
        #[arg(long, global = true)]
        cache: Option<PathBuf>,
    },
    /// Describe packs: sections, codecs, sizes, checksums, versions and contents; exit 1 if one is corrupt.
    Inspect {
        /// A pack file or a directory of packs (e.g. out/ice_caves).
        path: PathBuf,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum and cross-reference; exit 0 when all hold, 1 with one line per problem.
    Verify {
        /// A pack file or a bake's output directory.
        path: PathBuf,
    },
    /// Compare two packs or two bakes: exit 0 when identical or within tolerance, 1 beyond, 2 on error.
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// A TOML file with tolerances (distance, field_max, field_rms, image_max, image_rms, ignore_metadata); flags override it.
        #[arg(long)]
        tolerances: Option<PathBuf>,
        /// Largest acceptable mesh distance (world units).
        #[arg(long)]
        distance: Option<f32>,
        /// Largest acceptable per-vertex field difference (AO, irradiance).
        #[arg(long)]
        field_max: Option<f32>,
        /// Largest acceptable RMS of per-vertex field differences.
        #[arg(long)]
        field_rms: Option<f32>,
        /// Largest acceptable per-texel difference of an image map (tree textures, impostor albedo,
        /// normal, AO and depth, cards), in [0, 1] units of the stored value (1/255 is one step of 8 bits).
        #[arg(long)]
        image_max: Option<f32>,
        /// Largest acceptable RMS of an image map's per-texel differences, in the same units.
        #[arg(long)]
        image_rms: Option<f32>,
        /// Do not judge metadata differences (hashes, versions).
        #[arg(long)]
        ignore_metadata: bool,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Export a tile's mesh (glb or ply) or its density samples (raw f32 + JSON header), a tree
    /// prototype (glb with its textures), a tree impostor atlas (PNG maps + JSON header), a grass
    /// patch's level (ply or glb), a water frame's maps (PNG + JSON header) or the water loop
    /// (animated PNG).
    Export {
        /// A bake's output directory, e.g. out/ice_caves (with --prototype, --impostor or
        /// --grass-patch, also the shared pack itself, e.g. out/ice_caves/shared/tree-prototypes.kpack).
        bake_dir: PathBuf,
        /// The tile, as X,Y (tile indices of the chosen level).
        #[arg(
            long,
            value_parser = parse_pair,
            required_unless_present_any = ["prototype", "impostor", "grass_patch", "water_frame", "water_preview"],
            conflicts_with_all = ["prototype", "impostor", "grass_patch", "water_frame", "water_preview"]
        )]
        tile: Option<(u32, u32)>,
        /// LOD level (0 = finest): the tile's, or with --grass-patch the patch's.
        #[arg(long, default_value_t = 0)]
        level: u32,
        /// Export level --level of unique grass patch N: every blade as its curved tapered strip, with
        /// per-vertex colour, in patch-local coordinates.
        #[arg(long, value_name = "N", conflicts_with_all = ["prototype", "impostor", "density", "skirts"])]
        grass_patch: Option<u32>,
        /// Mesh format (ignored with --density).
        #[arg(long, value_enum, default_value = "glb")]
        format: export::MeshFormat,
        /// Include the crack-hiding skirt triangles.
        #[arg(long)]
        skirts: bool,
        /// Export the tile's density samples (with a one-sample halo) instead of its mesh.
        #[arg(long)]
        density: bool,
        /// Export tree prototype N as glTF binary: the LOD's bark and leaf triangles, bark and leaf
        /// textures embedded as PNG (leaves alpha-tested at 0.5, double-sided).
        #[arg(long, value_name = "N", conflicts_with = "impostor")]
        prototype: Option<u32>,
        /// With --prototype: 0 full, 1 reduced branches, 2 fewest leaves.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=2), requires = "prototype")]
        lod: u32,
        /// Export prototype N's impostor atlas (level 0) into the directory --out: albedo (RGBA),
        /// normal (RGB), AO (grey) and depth (16-bit grey) PNGs and a JSON header.
        #[arg(long, value_name = "N")]
        impostor: Option<u32>,
        /// Export frame F of the bake's water loop into the directory --out: the normal map (RGB8), the
        /// height (16-bit grey), the caustics of every receiving plane (16-bit grey) and a JSON header
        /// with their scales.
        #[arg(long, value_name = "F", conflicts_with_all = ["prototype", "impostor", "grass_patch", "density", "water_preview"])]
        water_frame: Option<u32>,
        /// Export the bake's whole water loop to --out as an animated PNG (looping, at the bake's
        /// speed): the caustics of plane --plane beside the sunlit surface.
        #[arg(long, conflicts_with_all = ["prototype", "impostor", "grass_patch", "density"])]
        water_preview: bool,
        /// With --water-preview: the caustic receiving plane shown (0 = the shallowest).
        #[arg(long, default_value_t = 0, requires = "water_preview")]
        plane: u32,
        /// Output file (with --density, a FILE.json header is written beside it; with --impostor or
        /// --water-frame, a directory).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum CacheCommand {
    /// Entry count and size.
    Stats,
    /// Remove least-recently-used entries until the cache holds at most SIZE (e.g. 500M, 2G, 1048576).
    Gc {
        #[arg(long, value_parser = parse_size)]
        max_size: u64,
    },
}

/// Parses a byte size with an optional K/M/G/T suffix (powers of 1024; a trailing B or iB is allowed).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("{s:?}: unknown size suffix {c:?} (use K, M, G or T)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a size (e.g. 500M, 2G, 1048576)"))?;
    if !(n >= 0.0 && n.is_finite()) {
        return Err(format!("{s:?} is not a size"));
    }
    Ok((n * mult as f64) as u64)
}

fn parse_pair(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s.split_once(',').ok_or_else(|| format!("expected X,Y, got {s:?}"))?;
    let p = |v: &str| v.trim().parse::<u32>().map_err(|e| format!("{v:?}: {e}"));
    Ok((p(a)?, p(b)?))
}

/// Runs `kiln` with `args` (including the program name) and returns the process exit code:
/// 0 success, 1 a check failed (`verify`), 2 an error (printed as one line on stderr). A bake
/// past its `--memory-budget` does not return: it ends the process with exit code 2, since the
/// budget is the process's memory (run budgeted bakes as processes of their own).
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    crate::map_large_allocations_alone();
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match args.command {
        Command::Bake {
            world,
            out,
            jobs,
            quiet,
            cache,
            no_cache,
            explain,
            memory_budget,
            shard,
            shards,
            assemble,
            local_shards,
            status,
            machine_share,
        } => (|| {
            let cache = if no_cache { None } else { Some(cache.unwrap_or_else(kiln_cache::store::Store::default_root)) };
            // What the bake keeps in memory is chosen in `run_bake`, from its estimate.
            let opts =
                crate::pipeline::BakeOptions { jobs: jobs.map(usize::from), cache, explain, machine_share, ..crate::pipeline::BakeOptions::new(out) };
            if status {
                return shards::print_status(&world, &opts);
            }
            if let (Some(n), Some(dir)) = (local_shards, &opts.cache) {
                let threads = crate::pipeline::worker_threads(opts.jobs)?;
                let per_shard = (threads / n as usize).max(1);
                // The budget is the machine's: each of the n processes keeps to its share.
                shards::run_local(&world, dir, n, per_shard, memory_budget.map(|b| b / u64::from(n)), quiet)?;
                return run_bake(
                    &world,
                    &crate::pipeline::BakeOptions { machine_share: 1, ..opts },
                    crate::pipeline::BakeRole::Assemble,
                    quiet,
                    memory_budget,
                );
            }
            run_bake(&world, &opts, shards::role(shard, shards, assemble)?, quiet, memory_budget)
        })()
        .map(|()| 0),
        Command::Cache { command, cache } => run_cache(command, cache.unwrap_or_else(kiln_cache::store::Store::default_root)).map(|()| 0),
        Command::Inspect { path, json } => inspect::run(&path, json),
        Command::Verify { path } => verify::run(&path),
        Command::Diff { a, b, tolerances, distance, field_max, field_rms, image_max, image_rms, ignore_metadata, json } => (|| {
            let mut tol = match tolerances {
                Some(p) => crate::diff::Tolerances::from_file(&p)?,
                None => crate::diff::Tolerances::default(),
            };
            let flags = [
                ("--distance", distance),
                ("--field-max", field_max),
                ("--field-rms", field_rms),
                ("--image-max", image_max),
                ("--image-rms", image_rms),
            ];
            for (flag, value) in flags {
                if let Some(v) = value {
                    crate::diff::check_tolerance(flag, v)?;
                }
            }
            tol.distance = distance.unwrap_or(tol.distance);
            tol.field_max = field_max.unwrap_or(tol.field_max);
            tol.field_rms = field_rms.unwrap_or(tol.field_rms);
            tol.image_max = image_max.unwrap_or(tol.image_max);
            tol.image_rms = image_rms.unwrap_or(tol.image_rms);
            tol.ignore_metadata |= ignore_metadata;
            let report = crate::diff::diff(&a, &b, &tol)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&crate::diff::to_json(&report)).expect("JSON values serialise"));
            } else {
                crate::diff::print_human(&report, &tol);
            }
            Ok(if report.beyond > 0 { 1 } else { 0 })
        })(),
        Command::Export { bake_dir, tile, level, grass_patch: Some(n), format, out, .. } if tile.is_none() => {
            export_grass::export_patch(&bake_dir, n, level, format, &out).map(|()| 0)
        }
        Command::Export { bake_dir, water_frame: Some(f), out, .. } => export_water::export_frame(&bake_dir, f, &out).map(|()| 0),
        Command::Export { bake_dir, water_preview: true, plane, out, .. } => export_water::export_preview(&bake_dir, plane, &out).map(|()| 0),
        Command::Export { bake_dir, tile, level, format, skirts, density, prototype, lod, impostor, out, .. } => match (prototype, impostor, tile) {
            (Some(n), _, _) => export_trees::export_prototype(&bake_dir, n, lod, &out).map(|()| 0),
            (None, Some(n), _) => export_trees::export_impostor(&bake_dir, n, &out).map(|()| 0),
            (None, None, Some((x, y))) if density => export::export_density(&bake_dir, level, x, y, &out).map(|()| 0),
            (None, None, Some((x, y))) => {
                export::load_tile(&bake_dir, level, x, y, skirts).and_then(|m| export::write_mesh(&m, format, &out)).map(|()| 0)
            }
            (None, None, None) => {
                Err(CliError::Usage("kiln export needs --tile, --prototype, --impostor, --grass-patch, --water-frame or --water-preview".into()))
            }
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kiln: error: {e}");
            2
        }
    }
}

fn run_cache(command: CacheCommand, dir: PathBuf) -> Result<(), CliError> {
    let store = kiln_cache::store::Store::open(&dir)?;
    let mib = |b: u64| b as f64 / 1048576.0;
    match command {
        CacheCommand::Stats => {
            let s = store.stats()?;
            println!("{}: {} entries, {:.1} MiB", dir.display(), s.entries, mib(s.bytes));
        }
        CacheCommand::Gc { max_size } => {
            let r = store.gc(max_size)?;
            println!(
                "{}: removed {} entries ({:.1} MiB); {} entries, {:.1} MiB kept",
                dir.display(),
                r.removed,
                mib(r.freed_bytes),
                r.kept.entries,
                mib(r.kept.bytes)
            );
        }
    }
    Ok(())
}

fn run_bake(
    world_path: &Path,
    opts: &crate::pipeline::BakeOptions,
    role: crate::pipeline::BakeRole,
    quiet: bool,
    memory_budget: Option<u64>,
) -> Result<(), CliError> {
    let world = crate::world::load_world(world_path)?;
    let threads = crate::pipeline::worker_threads(opts.jobs)?;
    let budget = crate::budget::Budget::resolve(memory_budget);
    // A bake or a shard keeps what it makes in memory, and bakes the products that read only the
    // world file alongside the others, where that fits well within the machine: reading values
    // back from the cache costs time on few threads, and one-thread steps leave cores idle.
    // A budget asks for the least memory; an assembly computes nothing to hold.
    let held = crate::budget::Estimate::of(&world.spec, threads, false);
    let computes = matches!(role, crate::pipeline::BakeRole::Whole | crate::pipeline::BakeRole::Shard { .. });
    let hold = computes && crate::budget::may_hold(&held, budget.as_ref(), opts.machine_share);
    let (memory, estimate) = match hold {
        true => (crate::pipeline::MemoryUse::Hold, held),
        false => (crate::pipeline::MemoryUse::Least, crate::budget::Estimate::of(&world.spec, threads, opts.cache.is_some())),
    };
    let opts = &crate::pipeline::BakeOptions { memory, ..opts.clone() };
    crate::budget::check(world_path, &estimate, budget.as_ref())?;
    let stopwatch = crate::Stopwatch::start();
    let shown: &dyn crate::pipeline::progress::Progress = if quiet { &crate::pipeline::progress::NoProgress } else { &progress::Bars };
    let sink = progress::StepRecorder { inner: shown, steps: Default::default() };
    // A budget the user gives is kept by measurement: past it, the process ends at once, as a kill
    // would end it, which the output (committed whole or not at all) and the stage cache (each
    // entry whole or absent) are built to survive.
    // The watch's last look, when it is dropped, may find a peak passed after the bake's output was
    // written: the error says so.
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = budget.filter(crate::budget::Budget::is_user).and_then(|budget| {
        let (file, steps, finished) = (world_path.to_owned(), sink.steps.clone(), finished.clone());
        crate::memory_watch::MemoryWatch::start(budget.bytes, move |peak| {
            let error = match finished.load(std::sync::atomic::Ordering::SeqCst) {
                false => crate::budget::BudgetError::Exceeded { file, peak, step: steps.innermost(), budget },
                true => crate::budget::BudgetError::ExceededAtEnd { file, peak, budget },
            };
            eprintln!("kiln: error: {error}");
            std::process::exit(2);
        })
    });
    let report = crate::pipeline::bake_as(&world, opts, role, &sink)?;
    finished.store(true, std::sync::atomic::Ordering::SeqCst);
    drop(watch);
    let [wall, cpu] = stopwatch.read();
    for w in &report.cache_warnings {
        eprintln!("kiln: warning: {w}");
    }
    if quiet {
        return Ok(());
    }
    match role {
        crate::pipeline::BakeRole::Shard { index, count } => eprintln!("baked shard {index}/{count} of {} into the cache", world.spec.name),
        _ => eprintln!("baked {} into {}", world.spec.name, report.out_dir.display()),
    }
    let memory_note = if memory == crate::pipeline::MemoryUse::Hold {
        "; what it makes is held in memory, and what reads only the world file is baked alongside (--memory-budget bakes in the least memory)"
    } else {
        ""
    };
    eprintln!("  {:<13} {}{memory_note}", "estimate", estimate.describe());
    for s in &report.stages {
        eprintln!("  {s}");
    }
    let peak = crate::peak_memory().map_or("unknown".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0));
    let detail = format!("{} tiles, {:.1} Mvoxels/s overall, peak memory {peak}", report.tiles, report.voxels as f64 / wall / 1e6);
    eprintln!("  {}", crate::pipeline::StageTiming { name: "total", seconds: wall, cpu_seconds: cpu, detail });
    if opts.cache.is_some() {
        let t: Vec<String> = report.tallies.iter().map(|(s, t)| format!("{s} {} cached / {} computed", t.cached, t.computed)).collect();
        eprintln!("  {:<13} {}", "cache", if t.is_empty() { "nothing looked up".into() } else { t.join(", ") });
        // Claims cost microseconds unless another process holds the item: in a shard, this is
        // where it waited for the others.
        let w: Vec<String> = report.waits.iter().filter(|(_, s)| *s >= 0.01).map(|(stage, s)| format!("{stage} {s:.2} s")).collect();
        if !w.is_empty() {
            eprintln!("  {:<13} {} (claims of items other processes held, summed over threads)", "waited", w.join(", "));
        }
    }
    for e in &report.explanations {
        eprintln!("  {:<13} {e}", "explain");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::CliError;
    use crate::pipeline::BakeError;
    use std::error::Error as _;
    use std::path::Path;

    #[test]
    fn wrapped_library_errors_print_unchanged_and_keep_their_sources() {
        let bake = BakeError::io(Path::new("out/x"), std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied"));
        let cli = CliError::from(bake);
        assert_eq!(cli.to_string(), "out/x: denied");
        assert!(matches!(&cli, CliError::Bake(BakeError::Io { .. })));
        assert!(cli.source().is_some_and(|s| s.is::<std::io::Error>()), "{cli:?}");
    }
}
