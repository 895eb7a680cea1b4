//! `make bench` part: what trees cost in a bake of a world with trees (the default world).
//!
//! - the trees stage (generation, impostors, placement, packing) in a cold bake;
//! - the lighting stage with trees in the light transport and without (`occlude_light = false`),
//!   alternated in one run so the machine's load falls on both alike;
//! - the stored (zstd) size of each prototype's impostor atlas, compressed alone as a pack section.
//!
//! Usage: `cargo run --release -p kiln-bake --example trees_bench [-- worlds/x.toml [rounds]]`.

use kiln_bake::pipeline::{bake, progress::NoProgress, BakeOptions};
use kiln_bake::world::{load_world, World};
use kiln_formats::sections::{PackInfo, PackKind, SharedPacks, TreeImpostors};
use kiln_formats::{Pack, PackBuilder};

fn stage(report: &kiln_bake::pipeline::BakeReport, name: &str) -> f64 {
    report.stages.iter().filter(|s| s.name == name).map(|s| s.seconds).sum()
}

fn run(world: &World, out: &std::path::Path) -> kiln_bake::pipeline::BakeReport {
    let opts = BakeOptions::new(out.to_owned());
    bake(world, &opts, &NoProgress).unwrap_or_else(|e| {
        eprintln!("trees bench: {e}");
        std::process::exit(2)
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "worlds/ice_caves.toml".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(2);
    let with = load_world(std::path::Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("trees bench: {e}");
        std::process::exit(2)
    });
    if with.spec.trees.as_ref().is_none_or(|t| t.species.is_empty()) {
        eprintln!("trees bench: {path} has no trees");
        std::process::exit(2);
    }
    let mut without = with.clone();
    if let Some(t) = without.spec.trees.as_mut() {
        t.occlude_light = false;
    }
    let out = std::env::temp_dir().join(format!("kiln-trees-bench-{}", std::process::id()));
    println!("trees bench: {} ({} threads, {rounds} rounds, alternating)", with.spec.name, rayon::current_num_threads());
    let (mut trees, mut lit_with, mut lit_without) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..rounds {
        let r = run(&without, &out);
        lit_without.push(stage(&r, "lighting"));
        let r = run(&with, &out);
        trees.push(stage(&r, "trees"));
        lit_with.push(stage(&r, "lighting"));
        last = Some(r);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t, lw, lo) = (median(&mut trees), median(&mut lit_with), median(&mut lit_without));
    if let Some(r) = &last {
        if let Some(s) = r.stages.iter().find(|s| s.name == "trees") {
            println!("  trees stage   {t:>7.3} s  (median; last: {})", s.detail);
        }
    }
    println!("  lighting      {lw:>7.3} s with trees in the light, {lo:.3} s without: +{:.1} %", 100.0 * (lw / lo - 1.0));

    let bake_dir = out.join(&with.spec.name);
    let manifest = Pack::open(&bake_dir.join("manifest.kpack")).expect("manifest");
    let shared: SharedPacks = manifest.require().expect("SHRD");
    let entry = shared.get("tree-prototypes").expect("trees pack");
    let pack = Pack::open(&bake_dir.join(&entry.path)).expect("trees pack");
    let atlases: TreeImpostors = pack.require().expect("TIMP");
    let mut sizes: Vec<u64> = atlases
        .atlases
        .iter()
        .map(|a| {
            let mut b = PackBuilder::new([0, 0, 0]);
            b.add(&PackInfo { kind: PackKind::Shared { product: "bench".into() }, world_name: "bench".into(), inputs_hash: 0 }).expect("PINF");
            b.add(&TreeImpostors { atlases: vec![a.clone()] }).expect("TIMP");
            b.to_bytes().expect("pack").len() as u64
        })
        .collect();
    sizes.sort_unstable();
    let kib = |b: u64| b as f64 / 1024.0;
    println!(
        "  atlases       {} prototypes: stored {:.0} KiB median, {:.0} KiB largest (goal ≤ 1024); shared pack {:.1} MB",
        sizes.len(),
        kib(sizes[sizes.len() / 2]),
        kib(*sizes.last().unwrap_or(&0)),
        entry.file_len as f64 / 1e6
    );
    let _ = std::fs::remove_dir_all(&out);
}
