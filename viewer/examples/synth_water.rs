//! Writes the synthetic world with synthetic water (the viewer's water tests' fixture: the trench
//! flooded, waves from a few sines, caustics from their curvature) so it can be looked at:
//! `cargo run -p kiln-view --example synth_water -- out/synth-water [TILES] [LEVEL]`.

#[path = "../tests/support/synth.rs"]
mod synth;
#[path = "../tests/support/water.rs"]
mod water;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: synth_water DIR [TILES=4] [LEVEL=3]");
        std::process::exit(2);
    };
    let tiles = args.get(1).map(|s| s.parse::<u32>().expect("a whole number")).unwrap_or(4);
    let level = args.get(2).map(|s| s.parse::<f32>().expect("a number")).unwrap_or(3.0);
    let s = synth::Synth { tiles, cells: 16, levels: tiles.trailing_zeros() + 1 };
    let dir = std::path::Path::new(dir);
    s.write(dir);
    water::add_water(dir, &s, level, None);
    println!("wrote {}: {}x{} tiles, water up to z = {level}", dir.display(), s.tiles, s.tiles);
}
