//! Impostor bake speed, size and fidelity: ms per prototype on the synthetic tree and on one grown
//! tree of every shipped preset, atlas bytes after zstd (level 3, as packs store them), the
//! fidelity figures from 64 directions (mesh ray traced vs impostor reconstructed on the CPU,
//! beside the mesh against its own capture half a texel off: `reconstruct::resampling_ceiling`) and
//! optionally PNGs of the first synthetic atlas's level 0 (albedo, normal, depth) to look at.
//!
//! `cargo run --release -p kiln-bake --example impostor_speed -- [prototypes] [--fidelity] [out_dir]`

use kiln_bake::impostor::march::March;
use kiln_bake::impostor::reconstruct::{fibonacci_directions, resampling_ceiling, sweep_with};
use kiln_bake::impostor::synthetic::SyntheticTree;
use kiln_bake::impostor::{bake, CaptureMesh, Impostor, ImpostorSettings};
use kiln_bake::trees;
use std::time::Instant;

fn write_png(path: &std::path::Path, size: u32, color: png::ColorType, depth: png::BitDepth, data: &[u8]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create png"));
    let mut enc = png::Encoder::new(file, size, size);
    enc.set_color(color);
    enc.set_depth(depth);
    enc.write_header().and_then(|mut w| w.write_image_data(data)).expect("write png");
}

/// zstd-3 bytes of every level's maps.
fn stored(imp: &Impostor) -> usize {
    imp.levels
        .iter()
        .map(|l| {
            let mut bytes = l.albedo.clone();
            bytes.extend_from_slice(&l.normal);
            bytes.extend(l.depth.iter().flat_map(|d| d.to_le_bytes()));
            zstd::bulk::compress(&bytes, 3).expect("zstd").len()
        })
        .sum()
}

/// The 64-direction figures at the switch distance (`reconstruct::sweep`). IMPOSTOR_AT_FRAMES=1:
/// the atlas's own frame directions instead, where one frame is drawn alone (what the capture
/// can reach before any blending).
fn fidelity(mesh: &CaptureMesh, imp: &Impostor) -> String {
    let dirs: Vec<[f32; 3]> = if std::env::var_os("IMPOSTOR_AT_FRAMES").is_some() {
        (0..64).map(|k| kiln_bake::impostor::octahedral::frame_direction(imp.layout, imp.grid, (k * 5) % imp.grid, (k * 7 + 1) % imp.grid)).collect()
    } else {
        fibonacci_directions(64)
    };
    // IMPOSTOR_MARCH=steps,refine,min_coverage[,nearest]: other reconstruction constants.
    let m = match std::env::var("IMPOSTOR_MARCH") {
        Ok(v) => {
            let f: Vec<f32> = v.split(',').map(|x| x.parse().expect("IMPOSTOR_MARCH number")).collect();
            March { steps: f[0] as u32, refine: f[1] as u32, min_coverage: f[2], nearest: f.get(3).copied() }
        }
        Err(_) => March::VIEWER,
    };
    let s = sweep_with(mesh, imp, &dirs, &m).expect("trace");
    let capture = resampling_ceiling(mesh, &dirs, imp.view_px).expect("trace");
    let verdict = s.mean.against_exact_capture(&capture.mean, imp.view_px).map_or_else(|e| format!("not as close: {e}"), |()| "as close".into());
    format!("{s}; the mesh's exact capture half a texel off: {capture}; {verdict}")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--fidelity");
    let rest: Vec<&String> = args.iter().filter(|a| *a != "--fidelity").collect();
    let count: usize = rest.first().and_then(|a| a.parse().ok()).unwrap_or(20);
    let out = rest.get(1).map(std::path::PathBuf::from);
    // IMPOSTOR_GRID=n: another grid than the default's.
    let grid = std::env::var("IMPOSTOR_GRID").ok().and_then(|g| g.parse().ok()).unwrap_or(ImpostorSettings::default().grid);
    let ss = std::env::var("IMPOSTOR_SS").ok().and_then(|g| g.parse().ok()).unwrap_or(ImpostorSettings::default().supersample);
    let settings = ImpostorSettings { grid, supersample: ss, ..ImpostorSettings::default() };

    let trees_: Vec<SyntheticTree> = (0..count).map(|k| SyntheticTree::new(2000, k as u64 + 1)).collect();
    let start = Instant::now();
    let imps: Vec<Impostor> = trees_
        .iter()
        .map(|tree| {
            let mats = tree.materials();
            bake(&tree.mesh(&mats), &settings).expect("bake")
        })
        .collect();
    let secs = start.elapsed().as_secs_f64();
    let kib = imps.iter().map(stored).sum::<usize>() as f64 / 1024.0 / count as f64;
    let imp = &imps[0];
    println!(
        "synthetic: {count} prototypes ({} triangles each), {} threads: {:.1} ms per prototype; grid {} view {} px, atlas {}², {} levels; {kib:.0} KiB after zstd-3",
        trees_[0].indices.len() / 3,
        rayon::current_num_threads(),
        secs * 1000.0 / count as f64,
        imp.grid,
        imp.view_px,
        imp.levels[0].size,
        imp.levels.len(),
    );
    if check {
        let mats = trees_[0].materials();
        println!("synthetic fidelity: {}", fidelity(&trees_[0].mesh(&mats), imp));
    }

    for name in trees::PRESETS {
        let params = trees::preset(name).expect("preset");
        let m = trees::grow(&params, 7, 12.0).mesh;
        // As the bake captures it: its materials and its automatic texel.
        let s = ImpostorSettings { texel: m.auto_impostor_texel(), ..settings };
        let line = m.with_capture_mesh(0, &trees::textures(&params), |mesh| {
            let reps = 4;
            let start = Instant::now();
            let mut imp = bake(mesh, &s).expect("bake");
            for _ in 1..reps {
                imp = bake(mesh, &s).expect("bake");
            }
            let ms = start.elapsed().as_secs_f64() * 1000.0 / reps as f64;
            let line = format!(
                "{name:>9}: {} triangles, {ms:.1} ms, view {} px, {:.0} KiB",
                mesh.indices.len() / 3,
                imp.view_px,
                stored(&imp) as f64 / 1024.0
            );
            if check {
                format!("{line}; {}", fidelity(mesh, &imp))
            } else {
                line
            }
        });
        println!("{line}");
    }

    if let Some(dir) = out {
        std::fs::create_dir_all(&dir).expect("out dir");
        let l = &imp.levels[0];
        write_png(&dir.join("albedo.png"), l.size, png::ColorType::Rgba, png::BitDepth::Eight, &l.albedo);
        let opaque: Vec<u8> = l.albedo.chunks_exact(4).flat_map(|c| [c[0], c[1], c[2], 255]).collect();
        write_png(&dir.join("albedo_rgb.png"), l.size, png::ColorType::Rgba, png::BitDepth::Eight, &opaque);
        let normal: Vec<u8> = l.normal.chunks_exact(4).flat_map(|c| [c[0], c[1], c[2], 255]).collect();
        write_png(&dir.join("normal.png"), l.size, png::ColorType::Rgba, png::BitDepth::Eight, &normal);
        let depth: Vec<u8> = l.depth.iter().flat_map(|d| d.to_be_bytes()).collect();
        write_png(&dir.join("depth.png"), l.size, png::ColorType::Grayscale, png::BitDepth::Sixteen, &depth);
        println!("wrote PNGs to {}", dir.display());
    }
}
