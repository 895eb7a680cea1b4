//! Writes the synthetic world with synthetic grass (the viewer's grass tests' fixture) so it can be
//! looked at: `cargo run -p kiln-view --example synth_grass -- out/synth-grass [TILES] [BLADES]`.

#[path = "../tests/support/grass.rs"]
mod grass;
#[path = "../tests/support/synth.rs"]
mod synth;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: synth_grass DIR [TILES=4] [BLADES_PER_PATCH=400]");
        std::process::exit(2);
    };
    let num = |i: usize, d: u32| args.get(i).map(|s| s.parse::<u32>().expect("a whole number")).unwrap_or(d);
    let tiles = num(1, 4);
    let s = synth::Synth { tiles, cells: 16, levels: tiles.trailing_zeros() + 1 };
    let dir = std::path::Path::new(dir);
    s.write(dir);
    grass::add_grass(dir, &s, &grass::patches(24, num(2, 400) as usize, 1.0, true));
    println!("wrote {}: {}x{} tiles with grass", dir.display(), s.tiles, s.tiles);
}
