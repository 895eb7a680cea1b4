//! The viewer on a real bake of `worlds/tiny.toml`: headless screenshots from fixed cameras, checked
//! for properties a bug would break. Needs the `kiln-view` binary (built by `cargo test --workspace`)
//! and a Vulkan adapter (lavapipe on CI: `mesa-vulkan-drivers`).

use std::path::{Path, PathBuf};
use std::process::Command;

use kiln_e2e::{scratch, tiny_bake};

fn viewer_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps");
    let bin = dir.join(format!("kiln-view{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} is missing: build it first (`cargo test --workspace` does)", bin.display());
    bin
}

/// Renders the tiny bake headless and returns the RGBA pixels.
fn shot(name: &str, camera: &str, extra: &[&str]) -> image::RgbaImage {
    let dir = scratch(&format!("view-{name}"));
    let png = dir.join("shot.png");
    let rt = dir.join("xdg");
    std::fs::create_dir_all(&rt).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let out = Command::new(viewer_binary())
        .env("XDG_RUNTIME_DIR", &rt)
        .arg(tiny_bake())
        .args(["--headless", "--size", "192x144", "--camera", camera, "--screenshot"])
        .arg(&png)
        .args(extra)
        .output()
        .expect("run kiln-view");
    assert!(out.status.success(), "kiln-view failed:\n{}", String::from_utf8_lossy(&out.stderr));
    image::open(&png).expect("screenshot written").to_rgba8()
}

fn mean_luma(img: &image::RgbaImage, rows: std::ops::Range<u32>) -> f64 {
    let (mut sum, mut n) = (0f64, 0f64);
    for y in rows {
        for x in 0..img.width() {
            let p = img.get_pixel(x, y);
            sum += 0.2126 * p[0] as f64 + 0.7152 * p[1] as f64 + 0.0722 * p[2] as f64;
            n += 1.0;
        }
    }
    sum / n
}

fn blueness(img: &image::RgbaImage, rows: std::ops::Range<u32>) -> f64 {
    let (mut sum, mut n) = (0f64, 0f64);
    for y in rows {
        for x in 0..img.width() {
            let p = img.get_pixel(x, y);
            sum += p[2] as f64 - p[0] as f64;
            n += 1.0;
        }
    }
    sum / n
}

/// From south of the 16×16-unit world, above it, looking north and down: sky on top, terrain below.
const SIDE: &str = "8,-10,12,90,-25";

#[test]
fn the_tiny_bake_shows_sky_above_and_terrain_below() {
    let img = shot("side", SIDE, &[]);
    let h = img.height();
    let (top, bottom) = (blueness(&img, 0..h / 8), blueness(&img, h * 3 / 4..h));
    assert!(top > 20.0, "the top rows are sky-blue (blue - red = {top:.1})");
    assert!(bottom < top - 15.0, "the bottom rows are terrain, not sky ({bottom:.1} vs {top:.1})");
}

#[test]
fn the_lit_view_shows_shaded_textured_terrain() {
    let img = shot("lit", SIDE, &["--mode", "lit"]);
    let h = img.height();
    let rows = h * 3 / 4..h;
    let mean = mean_luma(&img, rows.clone());
    // Neither black (a lost light term or binding) nor blown out (irradiance or sun added twice).
    assert!(mean > 40.0 && mean < 230.0, "terrain luma {mean:.1}");
    // Sun and shadow, slopes and the material noise vary the terrain; a flat fill would not.
    let spread = (rows
        .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
        .map(|(x, y)| {
            let p = img.get_pixel(x, y);
            (0.2126 * p[0] as f64 + 0.7152 * p[1] as f64 + 0.0722 * p[2] as f64 - mean).powi(2)
        })
        .sum::<f64>()
        / (img.width() * (h - h * 3 / 4)) as f64)
        .sqrt();
    assert!(spread > 8.0, "terrain is flat-shaded (luma spread {spread:.1})");
}

/// Luma of the grey (terrain) pixels in `rows`, sorted: the AO view draws terrain in grey, the sky in blue.
fn grey_lumas(img: &image::RgbaImage, rows: std::ops::Range<u32>) -> Vec<f64> {
    let mut v: Vec<f64> = rows
        .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
        .map(|(x, y)| img.get_pixel(x, y))
        .filter(|p| (p[0] as i32 - p[2] as i32).abs() <= 2 && (p[0] as i32 - p[1] as i32).abs() <= 2)
        .map(|p| p[0] as f64)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

#[test]
fn the_ao_view_is_darker_in_crevices_than_on_open_tops() {
    // Straight down at the middle: the open tops of the terrain.
    let open = grey_lumas(&shot("ao-open", "8,8,30,90,-89", &["--mode", "ao"]), 40..104);
    // Low inside the footprint, under an overhang: crevices under the tops. (From outside, the
    // closed sides of the world hide its caves.)
    let side_img = shot("ao-side", "8,1.5,2.5,90,-10", &["--mode", "ao"]);
    let h = side_img.height();
    let side = grey_lumas(&side_img, h / 2..h);
    assert!(open.len() > 1000 && side.len() > 1000, "terrain fills the views ({} and {} grey pixels)", open.len(), side.len());
    let median_open = open[open.len() / 2];
    let dark_side = side[side.len() / 10];
    assert!(median_open > 150.0, "open tops are bright in the AO view ({median_open})");
    assert!(dark_side < 0.7 * median_open, "crevices are darker than open tops ({dark_side} vs {median_open})");
}

#[test]
fn a_withheld_tile_is_drawn_from_a_coarser_level() {
    let camera = "8,8,40,90,-89";
    let all = shot("lod-all", camera, &["--mode", "lod", "--max-error-px", "0.01"]);
    let withheld = shot("lod-withheld", camera, &["--mode", "lod", "--max-error-px", "0.01", "--withhold", "0,1,1"]);
    let differing = all.pixels().zip(withheld.pixels()).filter(|(a, b)| a != b).count();
    let total = (all.width() * all.height()) as usize;
    // Tile (1,1) of level 0 is 1/16 of the world; its parent covers 1/4 and is drawn in its place.
    assert!(differing > total / 40, "withholding L0 (1,1) changed only {differing} of {total} pixels");
    assert!(differing < total * 3 / 4, "withholding one tile changed almost everything ({differing} of {total})");
}
