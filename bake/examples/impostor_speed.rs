//! Impostor bake speed and size on the synthetic tree: ms per prototype, atlas bytes after zstd
//! (level 3, as packs store them), and PNGs of level 0 (albedo, normal, depth) to look at.
//!
//! `cargo run --release -p kiln-bake --example impostor_speed -- [prototypes] [out_dir]`

use kiln_bake::impostor::synthetic::SyntheticTree;
use kiln_bake::impostor::{bake, ImpostorSettings};
use std::time::Instant;

fn write_png(path: &std::path::Path, size: u32, color: png::ColorType, depth: png::BitDepth, data: &[u8]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create png"));
    let mut enc = png::Encoder::new(file, size, size);
    enc.set_color(color);
    enc.set_depth(depth);
    enc.write_header().and_then(|mut w| w.write_image_data(data)).expect("write png");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let out = args.get(2).map(std::path::PathBuf::from);
    let trees: Vec<SyntheticTree> = (0..count).map(|k| SyntheticTree::new(2000, k as u64 + 1)).collect();
    let settings = ImpostorSettings::default();
    let start = Instant::now();
    let imps: Vec<_> = trees
        .iter()
        .map(|tree| {
            let mats = tree.materials();
            bake(&tree.mesh(&mats), &settings).expect("bake")
        })
        .collect();
    let secs = start.elapsed().as_secs_f64();
    let mut stored = 0usize;
    let mut raw = 0usize;
    let mut first = None;
    for imp in imps {
        for l in &imp.levels {
            let mut bytes = l.albedo.clone();
            bytes.extend_from_slice(&l.normal);
            bytes.extend(l.depth.iter().flat_map(|d| d.to_le_bytes()));
            raw += bytes.len();
            stored += zstd::bulk::compress(&bytes, 3).expect("zstd").len();
        }
        first.get_or_insert(imp);
    }
    let imp = first.expect("at least one prototype");
    println!(
        "{count} prototypes ({} triangles each), {} threads: {:.1} ms per prototype; grid {} view {} px, atlas {}², {} levels; {:.0} KiB raw, {:.0} KiB after zstd-3 per prototype",
        trees[0].indices.len() / 3,
        rayon::current_num_threads(),
        secs * 1000.0 / count as f64,
        imp.grid,
        imp.view_px,
        imp.levels[0].size,
        imp.levels.len(),
        raw as f64 / 1024.0 / count as f64,
        stored as f64 / 1024.0 / count as f64
    );
    if let Some(dir) = out {
        std::fs::create_dir_all(&dir).expect("out dir");
        let l = &imp.levels[0];
        write_png(&dir.join("albedo.png"), l.size, png::ColorType::Rgba, png::BitDepth::Eight, &l.albedo);
        let opaque: Vec<u8> = l.albedo.chunks_exact(4).flat_map(|c| [c[0], c[1], c[2], 255]).collect();
        write_png(&dir.join("albedo_rgb.png"), l.size, png::ColorType::Rgba, png::BitDepth::Eight, &opaque);
        write_png(
            &dir.join("normal.png"),
            l.size,
            png::ColorType::Rgba,
            png::BitDepth::Eight,
            &l.normal.chunks_exact(4).flat_map(|c| [c[0], c[1], c[2], 255]).collect::<Vec<u8>>(),
        );
        let depth: Vec<u8> = l.depth.iter().flat_map(|d| d.to_be_bytes()).collect();
        write_png(&dir.join("depth.png"), l.size, png::ColorType::Grayscale, png::BitDepth::Sixteen, &depth);
        for (k, l) in imp.levels.iter().enumerate().skip(1) {
            let rgb: Vec<u8> = l.albedo.chunks_exact(4).flat_map(|c| [c[0], c[1], c[2], 255]).collect();
            write_png(&dir.join(format!("albedo_rgb_mip{k}.png")), l.size, png::ColorType::Rgba, png::BitDepth::Eight, &rgb);
        }
        println!("wrote PNGs to {}", dir.display());
    }
}
