//! Writes the synthetic world with a forest of synthetic trees (shared trees pack, instances in
//! every level's tiles), to look at the trees layer without the baker:
//! `cargo run -p kiln-view --example synth_forest -- out/forest`.

#[path = "../tests/support/synth.rs"]
mod synth;
#[path = "../tests/support/trees.rs"]
mod trees;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: synth_forest DIR");
        std::process::exit(2);
    };
    let s = synth::Synth { tiles: 4, cells: 16, levels: 3 };
    let dir = std::path::Path::new(&dir);
    s.write(dir);
    let forest = trees::forest(&s);
    trees::add_trees(dir, &s, &forest);
    println!("wrote {}: {} trees", dir.display(), forest.len());
}
