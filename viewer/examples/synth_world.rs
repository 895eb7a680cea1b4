//! Writes a synthetic bake directory (the one the viewer's tests use, at any size) so the viewer can
//! be run and measured without the baker:
//! `cargo run -p kiln-view --example synth_world -- out/synth [TILES] [CELLS] [LEVELS]`.

#[path = "../tests/support/synth.rs"]
mod synth;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: synth_world DIR [TILES=4] [CELLS=16] [LEVELS=3]");
        std::process::exit(2);
    };
    let num = |i: usize, d: u32| args.get(i).map(|s| s.parse::<u32>().expect("a whole number")).unwrap_or(d);
    let s = synth::Synth { tiles: num(1, 4), cells: num(2, 16), levels: num(3, 3) };
    assert!(s.tiles.is_power_of_two() && s.levels >= 1 && (s.tiles >> (s.levels - 1)) >= 1, "TILES must be a power of two ≥ 2^(LEVELS-1)");
    s.write(std::path::Path::new(dir));
    println!("wrote {dir}: {0}x{0} tiles of {1} cells, {2} levels, {3} units wide", s.tiles, s.cells, s.levels, s.width());
}
