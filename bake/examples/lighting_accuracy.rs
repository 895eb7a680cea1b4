//! `make bench` part for issue 4's goal: the default world's lighting at default settings, its wall
//! time, and its per-vertex error against a bake with 16× the light paths.
//!
//! ```text
//! cargo run --release -p kiln-bake --example lighting_accuracy -- [world.toml] [--factor 16] [--ref-dir DIR] [--noise-seed N] [--paths-per-area P] [--reference-only | --time-only]
//! ```
//!
//! `--time-only` skips the reference and the comparison (for timing runs on other machines).
//! `--noise-seed N` bakes the measured world with `lighting.noise_seed = N` (default: the world's
//! own), to see how much the figure moves from one draw of the noise to the next.
//! `--paths-per-area P` bakes the measured world with another budget (the reference keeps
//! `factor` times the world's own), to weigh a change of the default.
//!
//! Both bakes are ordinary `kiln bake`s (no cache) that differ only in `paths_per_area` and in
//! `lighting.noise_seed`: the reference's random numbers are independent of the measured bake's
//! (sharing them would hide part of the error, since the measured paths would be among the
//! reference's own). The
//! comparison reads the per-vertex irradiance (`VXIR`, ambient + static lights, what the viewer
//! draws) back from the packs of every tile. The reference is slow (16× the light transport), so it
//! is kept in `--ref-dir` (default `target/lighting-reference/<world>-x<factor>`) with a stamp of
//! the reference world's hash, and rebuilt only when the world changes. Delete it when the
//! definition of the baked quantity changes (the surface filter, the vertex query): a change that
//! only makes the estimate cheaper or less noisy keeps the same expected value, so the same
//! reference measures it.
//!
//! Printed error: relative RMS of per-vertex luminance, `sqrt(mean(((e - r) / r)²))`, over the
//! vertices whose reference luminance is above 5 % of the mean (relative error is meaningless for
//! black vertices), for level 0 and for all levels; also the energy-weighted form
//! `sqrt(Σ(e - r)² / Σr²)`. The irradiance volume (`IRVL` of the level-0 tiles) gets the same
//! relative RMS per cell and direction, for each layer: it is not part of the goal, but a change
//! that trades volume noise for speed must show what it costs there.

use kiln_bake::pipeline::{bake, world_hash, BakeOptions};
use kiln_bake::world::{load_world, World};
use kiln_formats::sections::{IrradianceGrid, Manifest, VertexIrradiance};
use kiln_formats::Pack;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Flipped into the reference's `lighting.noise_seed`, so its noise is independent of the bake's.
const REFERENCE_NOISE: u64 = 0x5245_4645_5245_4E43; // "REFERENC"

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut world_path, mut factor, mut ref_dir, mut reference_only, mut time_only, mut noise_seed, mut paths) =
        ("worlds/ice_caves.toml".to_string(), 16.0f32, None, false, false, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--factor" => factor = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| fail("--factor needs a number")),
            "--ref-dir" => ref_dir = Some(PathBuf::from(args.next().unwrap_or_else(|| fail("--ref-dir needs a path")))),
            "--noise-seed" => noise_seed = Some(args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| fail("--noise-seed needs an integer"))),
            "--paths-per-area" => paths = Some(args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| fail("--paths-per-area needs a number"))),
            "--reference-only" => reference_only = true,
            "--time-only" => time_only = true,
            _ => world_path = a,
        }
    }
    let mut world = load_world(Path::new(&world_path)).unwrap_or_else(|e| fail(&e.to_string()));
    let mut reference = world.clone();
    reference.spec.lighting.paths_per_area *= factor;
    reference.spec.lighting.noise_seed = world.spec.lighting.noise_seed ^ REFERENCE_NOISE;
    if let Some(n) = noise_seed {
        world.spec.lighting.noise_seed = n;
    }
    if let Some(p) = paths {
        world.spec.lighting.paths_per_area = p;
    }
    let ref_root = ref_dir.unwrap_or_else(|| PathBuf::from(format!("target/lighting-reference/{}-x{factor}", world.spec.name)));
    let ref_out = if time_only { None } else { Some(ensure_reference(&reference, &ref_root)) };
    if reference_only {
        return;
    }

    let out_root = std::env::temp_dir().join(format!("kiln-lighting-accuracy-{}", std::process::id()));
    let opts = BakeOptions::new(out_root.clone());
    let report = bake(&world, &opts, &kiln_bake::pipeline::progress::NoProgress).unwrap_or_else(|e| fail(&e.to_string()));
    println!("lighting accuracy: {} at default settings, {} threads", world.spec.name, rayon::current_num_threads());
    for s in report.stages.iter().filter(|s| s.name == "lighting") {
        println!("  {s}");
    }
    let Some(ref_out) = ref_out else {
        let _ = std::fs::remove_dir_all(&out_root);
        return;
    };
    let measured = read_irradiance(&report.out_dir);
    let truth = read_irradiance(&ref_out);
    let volumes = (read_volumes(&report.out_dir), read_volumes(&ref_out));
    let _ = std::fs::remove_dir_all(&out_root);
    for (label, level0) in [("level 0", true), ("all levels", false)] {
        let pairs: Vec<(f32, f32)> = measured
            .iter()
            .zip(&truth)
            .filter(|(m, _)| !level0 || m.0 == 0)
            .flat_map(|(m, t)| m.1.iter().zip(&t.1).map(|(a, b)| (luminance(a), luminance(b))))
            .collect();
        let mean = pairs.iter().map(|p| p.1 as f64).sum::<f64>() / pairs.len().max(1) as f64;
        let bright: Vec<&(f32, f32)> = pairs.iter().filter(|p| p.1 as f64 > 0.05 * mean).collect();
        let rel = (bright.iter().map(|(e, r)| ((e - r) / r).powi(2) as f64).sum::<f64>() / bright.len().max(1) as f64).sqrt();
        let num: f64 = pairs.iter().map(|(e, r)| ((e - r) as f64).powi(2)).sum();
        let den: f64 = pairs.iter().map(|(_, r)| (*r as f64).powi(2)).sum();
        println!(
            "  {label:<10} per-vertex relative RMS error {:.2} % over {} of {} vertices (goal ≤ 5 %); energy-weighted {:.2} %",
            100.0 * rel,
            bright.len(),
            pairs.len(),
            100.0 * (num / den.max(1e-30)).sqrt()
        );
        if level0 {
            // Where the error sits: relative RMS per brightness band and its share of the total.
            let bands = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, f64::INFINITY];
            let total: f64 = bright.iter().map(|(e, r)| ((e - r) / r).powi(2) as f64).sum();
            let text: Vec<String> = bands
                .windows(2)
                .map(|w| {
                    let sel: Vec<f64> = bright
                        .iter()
                        .filter(|p| (p.1 as f64) > w[0] * mean && (p.1 as f64) <= w[1] * mean)
                        .map(|(e, r)| ((e - r) / r).powi(2) as f64)
                        .collect();
                    let sum: f64 = sel.iter().sum();
                    format!(
                        "{}–{}× mean: {:.1} % of vertices, {:.1} % rel. RMS, {:.0} % of the squared error",
                        w[0],
                        w[1],
                        100.0 * sel.len() as f64 / bright.len().max(1) as f64,
                        100.0 * (sum / sel.len().max(1) as f64).sqrt(),
                        100.0 * sum / total.max(1e-30)
                    )
                })
                .collect();
            println!("    {}", text.join("\n    "));
        }
    }
    // The irradiance volume (level-0 tiles' slices), per cell and direction bin, for each layer.
    for (label, layer) in [("ambient", 0), ("direct", 1)] {
        let pairs: Vec<(f32, f32)> = volumes
            .0
            .iter()
            .zip(&volumes.1)
            .flat_map(|(m, t)| {
                let (m, t) = if layer == 0 { (&m.ambient, &t.ambient) } else { (&m.direct, &t.direct) };
                m.iter().zip(t).flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (luminance(x), luminance(y))))
            })
            .collect();
        let mean = pairs.iter().map(|p| p.1 as f64).sum::<f64>() / pairs.len().max(1) as f64;
        let bright: Vec<&(f32, f32)> = pairs.iter().filter(|p| p.1 as f64 > 0.05 * mean).collect();
        let rel = (bright.iter().map(|(e, r)| ((e - r) / r).powi(2) as f64).sum::<f64>() / bright.len().max(1) as f64).sqrt();
        println!(
            "  volume {label:<7} per-cell-and-direction relative RMS error {:.2} % over {} of {} values",
            100.0 * rel,
            bright.len(),
            pairs.len()
        );
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("lighting accuracy: {msg}");
    std::process::exit(2)
}

fn luminance(c: &[f32; 3]) -> f32 {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

/// Bakes the reference into `root` unless a bake of exactly this world is already there.
fn ensure_reference(reference: &World, root: &Path) -> PathBuf {
    let stamp_path = root.join("stamp");
    let stamp = format!("{:016x}", world_hash(reference));
    let out = root.join(&reference.spec.name);
    if std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp) && out.join("manifest.kpack").exists() {
        return out;
    }
    println!(
        "lighting accuracy: baking the reference ({} paths per square unit) into {}; this takes a while",
        reference.spec.lighting.paths_per_area,
        root.display()
    );
    let _ = std::fs::remove_file(&stamp_path);
    let clock = Instant::now();
    let opts = BakeOptions::new(root.to_path_buf());
    let report = bake(reference, &opts, &kiln_bake::pipeline::progress::NoProgress).unwrap_or_else(|e| fail(&e.to_string()));
    std::fs::write(&stamp_path, stamp).unwrap_or_else(|e| fail(&format!("{}: {e}", stamp_path.display())));
    println!("  reference baked in {:.1} s", clock.elapsed().as_secs_f64());
    report.out_dir
}

/// `(level, per-vertex irradiance)` of every tile in manifest order.
fn read_irradiance(dir: &Path) -> Vec<(u32, Vec<[f32; 3]>)> {
    read_tiles(dir, |level, pack, path| {
        let v = pack.require::<VertexIrradiance>().unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
        Some((level, v.0))
    })
}

/// The level-0 tiles' irradiance volume slices, in manifest order.
fn read_volumes(dir: &Path) -> Vec<IrradianceGrid> {
    read_tiles(dir, |level, pack, path| {
        (level == 0).then(|| pack.require::<IrradianceGrid>().unwrap_or_else(|e| fail(&format!("{}: {e}", path.display()))))
    })
}

/// `read(level, pack, path)` of every tile pack of the bake in `dir`, in manifest order, where it
/// gives something.
fn read_tiles<T>(dir: &Path, read: impl Fn(u32, &Pack, &Path) -> Option<T>) -> Vec<T> {
    let path = dir.join("manifest.kpack");
    let pack = Pack::open(&path).unwrap_or_else(|e| fail(&e.to_string()));
    let manifest: Manifest = pack.require().unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    manifest
        .nodes
        .iter()
        .filter_map(|n| {
            let path = dir.join(&n.path);
            let pack = Pack::open(&path).unwrap_or_else(|e| fail(&e.to_string()));
            read(n.level, &pack, &path)
        })
        .collect()
}
