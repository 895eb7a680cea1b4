//! Times the density stages of a world (default: worlds/ice_caves.toml).
//!
//! `cargo run --release -p kiln-bake --example density_speed [-- WORLD.toml [REPEATS]]`
//!
//! Prints the best of REPEATS (default 3) runs per stage, plus what the stages did, so speed
//! regressions and surprising worlds (almost all solid, huge floater counts) show up at once.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use kiln_bake::density::{
    apply_brushes, fill_sealed_air, fill_sealed_air_by_blocks, generate, remove_floaters, remove_floaters_by_blocks, DensityField, DensityVolume,
};
use kiln_bake::world::load_world;

/// Best time of `repeats` runs of `f` on a fresh `setup()` value each (setup not timed).
fn best<S, T>(repeats: usize, mut setup: impl FnMut() -> S, mut f: impl FnMut(S) -> T) -> (Duration, T) {
    let mut out = None;
    let mut best = Duration::MAX;
    for _ in 0..repeats.max(1) {
        let input = setup();
        let t = Instant::now();
        let v = f(input);
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.expect("at least one repeat"))
}

fn ms(d: Duration) -> String {
    format!("{:8.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../worlds/ice_caves.toml"));
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let world = match load_world(&path) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let [nx, ny, nz] = world.dims();
    println!(
        "{}: {nx} x {ny} x {nz} = {:.1} M samples, noise {:?}, {} brush strokes, {} rayon threads",
        path.display(),
        (nx * ny * nz) as f64 / 1e6,
        world.spec.noise.kind,
        world.brushes.len(),
        rayon::current_num_threads()
    );

    let (t_field, field) = best(repeats, || (), |()| DensityField::new(&world));
    let (t_volume, raw) = best(repeats, || (), |()| field.volume());
    let (t_brushes, brushed) = best(
        repeats,
        || raw.clone(),
        |mut v| {
            apply_brushes(&mut v, &world.brushes, world.voxel_size());
            v
        },
    );
    let ground = field.floor().map(|f| f.ground_layers(nz, world.voxel_size() as f32));
    let (t_floaters, (cleaned, removed)) = best(
        repeats,
        || brushed.clone(),
        |mut v| {
            let n = remove_floaters(&mut v, ground.as_deref());
            (v, n)
        },
    );
    let (t_sealed, filled) = best(repeats, || cleaned.clone(), |mut v| fill_sealed_air(&mut v, None));
    // The same two by blocks (labelled alone, joined by a union-find): the same samples.
    let mut by_blocks = Vec::new();
    for block in [[64, 64, 64], [128, 128, 64], [32, 32, 32]] {
        let (t_f, (v, n)) = best(
            repeats,
            || brushed.clone(),
            |mut v| {
                let n = remove_floaters_by_blocks(&mut v, ground.as_deref(), block);
                (v, n)
            },
        );
        assert!(n == removed && v == cleaned, "floater removal by blocks {block:?} differs from the global fill");
        let (t_s, m) = best(repeats, || cleaned.clone(), |mut v| fill_sealed_air_by_blocks(&mut v, None, block));
        assert_eq!(m, filled, "sealed-air fill by blocks {block:?} differs");
        by_blocks.push((block, t_f, t_s));
    }
    let (t_total, _) = best(repeats, || (), |()| generate(&world));
    let solid = |v: &DensityVolume| v.data.iter().filter(|&&d| d > 0.0).count() as f64 / v.data.len() as f64;

    println!("  field setup (tables, floor)  {}", ms(t_field));
    println!("  raw density volume           {}", ms(t_volume));
    println!("  brushes                      {}", ms(t_brushes));
    println!("  floater removal              {}   ({removed} samples removed)", ms(t_floaters));
    println!("  sealed-air fill (all)        {}   ({filled} samples would fill)", ms(t_sealed));
    for (block, t_f, t_s) in by_blocks {
        println!("  by blocks of {:<14} floaters {}, sealed air {} (same samples)", format!("{block:?}"), ms(t_f), ms(t_s));
    }
    println!("  generate() end to end        {}", ms(t_total));
    println!("  solid fraction: raw {:.3}, final {:.3}", solid(&raw), solid(&cleaned));
}
