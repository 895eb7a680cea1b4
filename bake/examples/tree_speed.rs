//! Time to grow the prototypes of a default world: 20 of each of five presets (100 trees, with
//! self-AO), in parallel over the given threads, collected in a fixed order.
//!
//! `cargo run --release -p kiln-bake --example tree_speed [threads]` (default 2: the target machine).

use std::time::Instant;

use kiln_bake::trees::{grow, preset, textures};
use rayon::prelude::*;

const SPECIES: [&str; 5] = ["oak", "maple", "birch", "pine", "live_oak"];

fn main() {
    let threads: usize = std::env::args().nth(1).map_or(2, |s| s.parse().expect("threads is a number"));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    let jobs: Vec<(&str, u64)> = SPECIES.iter().flat_map(|s| (0..20).map(move |i| (*s, i))).collect();
    let params: Vec<_> = SPECIES.iter().map(|s| preset(s).expect("preset")).collect();
    let start = Instant::now();
    let protos: Vec<_> = pool.install(|| {
        jobs.par_iter()
            .map(|&(s, seed)| {
                let p = &params[SPECIES.iter().position(|x| *x == s).expect("species")];
                grow(p, seed, 0.6 + 0.9 * (seed as f32 / 19.0))
            })
            .collect()
    });
    let grown = start.elapsed();
    let tex_start = Instant::now();
    let _tex: Vec<_> = pool.install(|| params.par_iter().map(textures).collect());
    let tex = tex_start.elapsed();
    for s in SPECIES {
        let of: Vec<_> = protos.iter().filter(|p| p.species == s).collect();
        let tris = |p: &&kiln_bake::trees::Prototype| (p.mesh.bark_indices.len() + p.mesh.leaf_indices.len()) / 3;
        let leaves = |p: &&kiln_bake::trees::Prototype| p.mesh.leaf_indices.len() / 6;
        let verts = |p: &&kiln_bake::trees::Prototype| p.mesh.positions.len();
        let mean = |f: &dyn Fn(&&kiln_bake::trees::Prototype) -> usize| of.iter().map(f).sum::<usize>() / of.len();
        println!("{s:>9}: mean {} triangles ({} leaves), {} vertices", mean(&tris), mean(&leaves), mean(&verts));
    }
    println!(
        "{} prototypes on {threads} threads: {:.3} s (textures for {} species: {:.1} ms)",
        protos.len(),
        grown.as_secs_f64(),
        params.len(),
        tex.as_secs_f64() * 1e3
    );
}
