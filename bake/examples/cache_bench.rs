//! `make bench` part: incremental rebakes through the stage cache, and `kiln diff` speed.
//!
//! Bakes a copy of the world (default `worlds/ice_caves.toml`) with a fresh cache (cold), again
//! unchanged (warm no-op), again after appending one small brush stroke, and diffs the first and
//! last bakes. Prints each time and the rebakes as a share of the cold bake, and the one-brush
//! rebake's time outside the (global) lighting stage.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kiln_bake::pipeline::{bake, BakeOptions, BakeReport};

fn timed_bake(world: &Path, out: &Path, cache: &Path) -> (f64, BakeReport) {
    let w = kiln_bake::world::load_world(world).unwrap_or_else(|e| {
        eprintln!("cache bench: {e}");
        std::process::exit(2)
    });
    let opts = BakeOptions { cache: Some(cache.to_owned()), ..BakeOptions::new(out.to_owned()) };
    let clock = Instant::now();
    let r = bake(&w, &opts, &kiln_bake::pipeline::progress::NoProgress).unwrap_or_else(|e| {
        eprintln!("cache bench: {e}");
        std::process::exit(2)
    });
    (clock.elapsed().as_secs_f64(), r)
}

fn computed(r: &BakeReport) -> String {
    r.tallies.iter().map(|(s, t)| format!("{s} {}/{}", t.computed, t.cached + t.computed)).collect::<Vec<_>>().join(", ")
}

fn main() {
    let src = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "worlds/ice_caves.toml".into()));
    let tmp = std::env::temp_dir().join(format!("kiln-cache-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    // Copy the world and the files beside it, so the brush file can be edited.
    let src_dir = src.parent().unwrap_or(Path::new("."));
    for e in std::fs::read_dir(src_dir).expect("world dir").flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), tmp.join(e.file_name())).expect("copy world files");
        }
    }
    let world = tmp.join(src.file_name().expect("world file name"));
    let cache = tmp.join("cache");
    let (cold, r0) = timed_bake(&world, &tmp.join("a"), &cache);
    let (warm, r1) = timed_bake(&world, &tmp.join("a"), &cache);
    let text = std::fs::read_to_string(&world).expect("world text");
    let brushes = text.lines().find_map(|l| l.trim().strip_prefix("file = ").map(|f| f.trim_matches('"').to_owned()));
    let stroke = "\n[[stroke]]\nshape = \"sphere\"\nfalloff = \"linear\"\nradius = 0.3\nweight = -1.0\nposition = [5.0, 5.0, 1.5]\n";
    match &brushes {
        Some(b) => {
            let p = tmp.join(b);
            let old = std::fs::read_to_string(&p).unwrap_or_default();
            std::fs::write(&p, old + stroke).expect("edit brush file");
        }
        None => std::fs::write(&world, format!("{text}\n[brushes]\nfile = \"bench-brushes.toml\"\n"))
            .and_then(|()| std::fs::write(tmp.join("bench-brushes.toml"), stroke))
            .expect("add brush file"),
    }
    let (brush, r2) = timed_bake(&world, &tmp.join("b"), &cache);
    let clock = Instant::now();
    let d = kiln_bake::diff::diff(&r0.out_dir, &r2.out_dir, &Default::default()).expect("diff");
    let diff_secs = clock.elapsed().as_secs_f64();
    println!("cache bench: {} ({} tiles)", r0.out_dir.display(), r0.tiles);
    println!("  cold bake            {cold:>7.3} s   computed {}", computed(&r0));
    println!("  warm no-op rebake    {warm:>7.3} s   {:>5.1}% of cold (goal <= 5%)   computed {}", warm / cold * 100.0, computed(&r1));
    println!("  one-brush rebake     {brush:>7.3} s   {:>5.1}% of cold (goal <= 15%)  computed {}", brush / cold * 100.0, computed(&r2));
    // The lighting is global (a brush anywhere relights every tile), so the rest of the rebake is
    // what the per-tile cache decides: printed apart for the discussion of that goal.
    let lighting = r2.stages.iter().filter(|s| s.name == "lighting").map(|s| s.seconds).sum::<f64>();
    println!(
        "    of which lighting  {lighting:>7.3} s; everything else {:.3} s = {:.1}% of cold",
        brush - lighting,
        (brush - lighting) / cold * 100.0
    );
    println!("  kiln diff cold/brush {diff_secs:>7.3} s   {} of {} packs differ (goal <= 2 s)", d.packs.len(), d.compared);
    let _ = std::fs::remove_dir_all(&tmp);
}
