//! Headless renders of a synthetic bake, checked for properties a rendering bug would break.
//! Runs on any Vulkan adapter; on CI that is lavapipe (mesa-vulkan-drivers).

mod support;

use glam::Vec3;
use kiln_view::camera::CameraPose;
use kiln_view::renderer::meter::{aces_inverse, srgb_to_linear};
use kiln_view::view_mode::lod_color;
use support::*;

const SIZE: [u32; 2] = [256, 256];

/// Makes the real streamer pick the finest level everywhere in the top-down views below (a level-1
/// tile's error of 1 unit is ~3 px there); the stand-in always does.
const FINE: [&str; 2] = ["--max-error-px", "0.25"];

fn render(name: &str, pose: CameraPose, extra: &[&str]) -> image::RgbaImage {
    let (out, img) = headless(world(), name, SIZE, pose, extra);
    assert_ok(&out);
    img.expect("the screenshot must exist")
}

fn is_sky_blue(p: &image::Rgba<u8>) -> bool {
    p[2] as i32 > p[0] as i32 + 20 && p[2] >= p[1]
}

#[test]
fn sky_fills_the_top_rows_and_terrain_the_bottom_rows() {
    // From beyond the south edge, a little above the terrain, looking north and slightly down.
    let w = WORLD.width();
    let pose = CameraPose { position: Vec3::new(w / 2.0, -4.0, 16.0), yaw_deg: 90.0, pitch_deg: -20.0 };
    let img = render("horizon", pose, &[]);
    let band = |rows: std::ops::Range<u32>| {
        let (mut sky, mut n) = (0, 0);
        for y in rows {
            for x in 0..SIZE[0] {
                sky += is_sky_blue(img.get_pixel(x, y)) as u32;
                n += 1;
            }
        }
        sky as f32 / n as f32
    };
    let top = band(0..SIZE[1] / 10);
    let bottom = band(SIZE[1] * 9 / 10..SIZE[1]);
    assert!(top > 0.95, "top rows must be sky, {:.0}% are", top * 100.0);
    assert!(bottom < 0.05, "bottom rows must be terrain, {:.0}% look like sky", bottom * 100.0);
    // The zenith side of the gradient is deeper blue than the horizon side.
    let hi = mean_rgb(&img, glam::Vec2::new(128.0, 2.0), 2);
    let lo = mean_rgb(&img, glam::Vec2::new(128.0, 40.0), 2);
    assert!(hi[0] < lo[0], "sky gradient: top {hi:?} vs lower {lo:?}");
}

#[test]
fn ao_view_is_darker_in_the_trench_than_on_the_plateau() {
    let pose = top_down(90.0);
    let img = render("ao", pose, &["--mode", "ao"]);
    let w = WORLD.width();
    let trench = project(pose, SIZE, Vec3::new(WORLD.trench_x(), w / 2.0, WORLD.height(WORLD.trench_x(), w / 2.0)));
    let (px, py) = WORLD.plateau();
    let plateau = project(pose, SIZE, Vec3::new(px, py, 12.0));
    let t = mean_rgb(&img, trench, 1);
    let p = mean_rgb(&img, plateau, 3);
    assert!(t[0] + 60.0 < p[0], "trench {t:?} must be clearly darker than plateau {p:?}");
    assert!(p[0] > 230.0, "the open plateau is unoccluded: {p:?}");
    // Grey: AO has no hue.
    assert!((t[0] - t[2]).abs() < 2.0 && (p[0] - p[1]).abs() < 2.0);
}

#[test]
fn lod_view_shows_the_parent_level_where_a_tile_is_withheld() {
    let pose = top_down(90.0);
    let tile = WORLD.width() / WORLD.tiles as f32;
    let centre_of = |tx: u32, ty: u32| {
        let (x, y) = ((tx as f32 + 0.5) * tile, (ty as f32 + 0.5) * tile);
        project(pose, SIZE, Vec3::new(x, y, WORLD.height(x, y)))
    };
    let full = render("lod-full", pose, &["--mode", "lod", FINE[0], FINE[1]]);
    let held = render("lod-held", pose, &["--mode", "lod", "--withhold", "0,0,0", FINE[0], FINE[1]]);
    let level_at = |img: &image::RgbaImage, tx: u32, ty: u32| dominant(mean_rgb(img, centre_of(tx, ty), 2));
    let red = dominant(lod_color(0));
    let green = dominant(lod_color(1));
    assert_eq!(level_at(&full, 0, 0), red, "level 0 everywhere without withholding");
    assert_eq!(level_at(&full, 3, 3), red);
    assert_eq!(level_at(&held, 0, 0), green, "tile L0 (0,0) withheld: its parent (level 1) is drawn");
    assert_eq!(level_at(&held, 3, 3), red, "tiles far from the withheld one keep level 0");
}

#[test]
fn normals_view_shows_z_up_on_flat_ground() {
    let pose = top_down(90.0);
    let (px, py) = WORLD.plateau();
    let img = render("normals", pose, &["--mode", "normals"]);
    let c = mean_rgb(&img, project(pose, SIZE, Vec3::new(px, py, 12.0)), 2);
    // n = (0,0,1) → (0.5, 0.5, 1.0) linear → (188, 188, 255) in sRGB.
    assert!(c[2] > 245.0 && (c[0] - 188.0).abs() < 12.0 && (c[1] - 188.0).abs() < 12.0, "{c:?}");
    // The trench's west wall faces +X (into the trench): red well above grey.
    let x = WORLD.trench_x() - 2.5;
    let wall = Vec3::new(x, WORLD.width() / 2.0, WORLD.height(x, WORLD.width() / 2.0));
    let w = mean_rgb(&img, project(pose, SIZE, wall), 0);
    assert!(w[0] > 200.0, "a wall facing +X must be red-heavy: {w:?}");
}

#[test]
fn indirect_view_is_flat_grey_without_baked_irradiance() {
    let pose = top_down(90.0);
    let img = render("indirect", pose, &["--mode", "indirect"]);
    let (px, py) = WORLD.plateau();
    let c = mean_rgb(&img, project(pose, SIZE, Vec3::new(px, py, 12.0)), 4);
    assert!(c.iter().all(|v| (v - 188.0).abs() < 2.0), "0.5 linear grey is 188 in sRGB: {c:?}");
}

#[test]
fn lit_view_has_the_plateau_shadow_on_flat_ground() {
    let pose = top_down(90.0);
    let img = render("lit", pose, &[]);
    let (px, py) = WORLD.plateau();
    // The sun is in the north-west at 35°: the plateau (top 12 at radius < 7.7, foot at 12.8) shadows
    // flat ground to its south-east out to radius ~16; the same radius to the north-west is sunlit.
    // Judged by hue, not brightness, so the snow/grass pattern cannot fake it: sunlight is warm, a
    // surface lit by the sky alone is blue (b well above r) whatever its albedo.
    let at = |dx: f32, dy: f32| {
        let (x, y) = (px + dx, py + dy);
        mean_rgb(&img, project(pose, SIZE, Vec3::new(x, y, WORLD.height(x, y))), 1)
    };
    let shadow = at(9.9, -9.9);
    let sunlit = at(-9.9, 9.9);
    assert!(shadow[2] > shadow[0] + 30.0, "ground in the plateau's shadow is sky-lit (blue): {shadow:?}");
    assert!(sunlit[2] < sunlit[0] + 10.0, "ground facing the sun is sun-lit (warm): {sunlit:?}");
}

#[test]
fn wireframe_draws_edges_with_either_method() {
    let pose = top_down(60.0);
    let count_lines = |img: &image::RgbaImage| img.pixels().filter(|p| p[0] > 200 && p[1] < 150 && p[2] < 150).count();
    let fill = render("wire-fill", pose, &["--mode", "lod"]);
    let wire = render("wire", pose, &["--mode", "wireframe", FINE[0], FINE[1]]);
    let edges = render("wire-edges", pose, &["--mode", "wireframe", "--edge-wireframe", FINE[0], FINE[1]]);
    let (a, b) = (count_lines(&wire), count_lines(&edges));
    let total = (SIZE[0] * SIZE[1]) as usize;
    assert!(a > total / 20 && b > total / 20, "both wireframe methods must draw many edge pixels: {a} vs {b}");
    assert!(a < total * 3 / 4, "edges over a dimmed fill, not a solid fill: {a}");
    assert!((a as f32 / b as f32 - 1.0).abs() < 0.35, "polygon-line and edge-list wireframes should agree: {a} vs {b}");
    assert!(count_lines(&fill) > total / 4, "sanity: the LOD fill is red too");
}

#[test]
fn bounds_view_outlines_every_tile() {
    let pose = top_down(90.0);
    let plain = render("bounds-off", pose, &[]);
    let boxed = render("bounds", pose, &["--mode", "bounds", FINE[0], FINE[1]]);
    let red = |img: &image::RgbaImage| img.pixels().filter(|p| p[0] > 200 && p[1] < 160 && p[2] < 150).count();
    assert!(red(&boxed) > red(&plain) + 500, "outlines: {} vs {}", red(&boxed), red(&plain));
    // A line lies on the border between tiles (1,y) and (2,y): the world's middle column.
    let mid = project(pose, SIZE, Vec3::new(WORLD.width() / 2.0, WORLD.width() * 0.4, 16.0)).x as u32;
    let column_red = (0..SIZE[1]).filter(|&y| (mid.saturating_sub(1)..=mid + 1).any(|x| red_px(boxed.get_pixel(x, y)))).count();
    assert!(column_red > 40, "a tile border line at x = {mid}: {column_red} red rows");
}

fn red_px(p: &image::Rgba<u8>) -> bool {
    p[0] > 200 && p[1] < 160 && p[2] < 150
}

#[test]
fn hud_draws_text_in_the_top_left_corner() {
    let pose = top_down(90.0);
    let plain = render("hud-off", pose, &[]);
    let hud = render("hud", pose, &["--hud"]);
    let diff_in = |x0: u32, x1: u32, y0: u32, y1: u32| {
        let mut d = 0;
        for y in y0..y1 {
            for x in x0..x1 {
                d += (plain.get_pixel(x, y) != hud.get_pixel(x, y)) as u32;
            }
        }
        d
    };
    assert!(diff_in(0, 128, 0, 32) > 500, "the HUD panel and text are drawn top-left");
    assert_eq!(diff_in(0, 256, 200, 256), 0, "nothing else changes");
    // Text is light on the dark panel: some bright pixels in the first text line.
    let bright = (4..12).flat_map(|y| (4..120).map(move |x| (x, y))).filter(|&(x, y)| hud.get_pixel(x, y)[0] > 180).count();
    assert!(bright > 40, "glyph pixels in the first line: {bright}");
}

#[test]
fn same_view_renders_identical_pixels() {
    let pose = CameraPose { position: Vec3::new(-10.0, -10.0, 40.0), yaw_deg: 45.0, pitch_deg: -30.0 };
    let a = render("same-a", pose, &[]);
    let b = render("same-b", pose, &[]);
    assert!(a == b, "rendering must not depend on time or run");
}

#[test]
fn fly_replay_writes_frame_time_statistics() {
    let dir = scratch("fly");
    let csv = dir.join("path.csv");
    let w = WORLD.width();
    let mut text = String::from("t,x,y,z,yaw,pitch\n");
    for i in 0..12 {
        text += &format!("{},{},{},20,{},-25\n", i as f32 / 30.0, -5.0 + i as f32 * w / 12.0, w / 3.0, 30 + i * 3);
    }
    std::fs::write(&csv, text).unwrap();
    let stats = dir.join("stats.json");
    let out = viewer().arg(world()).args(["--headless", "--size", "160x120", "--fly"]).arg(&csv).arg("--stats").arg(&stats).output().unwrap();
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(v["frames"], 12);
    let q = &v["frame_ms"];
    let f = |k: &str| q[k].as_f64().unwrap();
    assert!(0.0 < f("p50") && f("p50") <= f("p90") && f("p90") <= f("p99") && f("p99") <= f("max"), "{q}");
    assert!(v["tiles_streamed"].as_u64().unwrap() > 0 && v["bytes_uploaded"].as_u64().unwrap() > 0);
    assert!(v["peak_resident_bytes"].as_u64().unwrap() > 0);
    assert!(v["hitches"].as_u64().unwrap() < 12);
    // The phases account for the frame: CPU phases never exceed the frame they are part of.
    let slowest = v["slowest_frames"].as_array().unwrap();
    assert!(!slowest.is_empty() && slowest.len() <= 8);
    for r in slowest {
        let g = |k: &str| r[k].as_f64().unwrap();
        let parts = g("stream_ms") + g("upload_ms") + g("encode_ms") + g("wait_ms");
        assert!(parts <= g("total_ms") + 1e-6 && parts > 0.5 * g("total_ms"), "phases {parts} of a {} ms frame: {r}", g("total_ms"));
    }
    assert_eq!(slowest[0]["total_ms"].as_f64().unwrap(), f("max"), "the slowest frame comes first");
    let s = &v["startup"];
    let first = s["first_complete_frame_ms"].as_f64().expect("the flight reaches a frame without holes");
    assert!(s["device_ms"].as_f64().unwrap() <= s["renderer_ms"].as_f64().unwrap() && s["renderer_ms"].as_f64().unwrap() <= first, "{s}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("12 frames"), "a one-line summary on stderr: {err}");
}

#[test]
fn still_stats_report_the_first_complete_frame_before_the_final_one() {
    let dir = scratch("still-stats");
    let stats = dir.join("stats.json");
    let pose = CameraPose { position: Vec3::new(-10.0, -10.0, 40.0), yaw_deg: 45.0, pitch_deg: -30.0 };
    let stats_arg = stats.to_str().unwrap();
    let (out, shot) = headless(world(), "still-stats", SIZE, pose, &["--stats", stats_arg, FINE[0], FINE[1]]);
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let s = &v["startup"];
    let ms = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {s}"));
    assert!(ms("streamer_ms") <= ms("device_ms") && ms("device_ms") <= ms("renderer_ms"), "{s}");
    assert!(ms("renderer_ms") <= ms("first_complete_frame_ms") && ms("first_complete_frame_ms") <= ms("final_frame_ms"), "{s}");
    assert!(s["first_complete_tiles"].as_u64().unwrap() >= 1, "the first complete frame draws the coarse tiles: {s}");
    // The capture itself is the final picture: identical to a run without --stats.
    let plain = render("still-stats-plain", pose, &FINE);
    assert!(shot.unwrap() == plain, "--stats must not change the screenshot");
}

/// Light before the tone curve (scene luminance × exposure) of an sRGB pixel: the curve and the
/// sRGB encoding undone.
fn exposed_luminance(p: &image::Rgba<u8>) -> f32 {
    let [r, g, b] = [p[0], p[1], p[2]].map(|v| aces_inverse(srgb_to_linear(v)));
    0.2126 * r + 0.7152 * g + 0.0722 * b
}

fn mean_luminance(img: &image::RgbaImage) -> f32 {
    img.pixels().map(exposed_luminance).sum::<f32>() / (img.width() * img.height()) as f32
}

/// Looking straight down from 3 units at flat ground in the plateau's shadow: lit by the sky alone,
/// a dark view.
fn shadowed_ground() -> CameraPose {
    let (px, py) = WORLD.plateau();
    let (x, y) = (px + 9.9, py - 9.9);
    CameraPose { position: Vec3::new(x, y, WORLD.height(x, y) + 3.0), yaw_deg: 90.0, pitch_deg: -90.0 }
}

#[test]
fn two_stops_of_exposure_are_four_times_the_light_before_tone_mapping() {
    let pose = shadowed_ground();
    let base = render("ev0", pose, &[]);
    let bright = render("ev2", pose, &["--exposure", "2"]);
    // Pixel by pixel, leaving out those too dark to measure in 8 bits and those clipped at white.
    let mut ratios: Vec<f32> = base
        .pixels()
        .zip(bright.pixels())
        .filter(|(a, b)| a[1] >= 24 && b.0[..3].iter().all(|&c| c < 250))
        .map(|(a, b)| exposed_luminance(b) / exposed_luminance(a))
        .collect();
    assert!(ratios.len() > (SIZE[0] * SIZE[1] / 2) as usize, "too few pixels to compare: {}", ratios.len());
    ratios.sort_by(f32::total_cmp);
    let median = ratios[ratios.len() / 2];
    assert!((3.6..4.4).contains(&median), "2 EV must be 4x the light, got {median}");
    let (b, e) = (mean_rgb(&base, glam::Vec2::new(128.0, 128.0), 100), mean_rgb(&bright, glam::Vec2::new(128.0, 128.0), 100));
    assert!(e[1] > b[1] * 1.5, "the picture must look brighter: {b:?} -> {e:?}");
}

#[test]
fn auto_exposure_brightens_a_dark_view_deterministically() {
    let pose = shadowed_ground();
    let base = render("auto-base", pose, &[]);
    let (out, auto) = headless(world(), "auto-a", SIZE, pose, &["--exposure", "auto"]);
    assert_ok(&out);
    let auto = auto.expect("the screenshot must exist");
    let err = String::from_utf8_lossy(&out.stderr);
    let ev: f32 = err
        .lines()
        .find_map(|l| l.strip_prefix("kiln-view: exposure auto ")?.strip_suffix(" EV")?.parse().ok())
        .unwrap_or_else(|| panic!("the metered exposure is reported: {err}"));
    assert!(ev > 0.5, "a sky-lit view is darker than mid-grey and is brightened: {ev} EV");
    // Metered to the key: the log-average of the exposed light is mid-grey, within the 8-bit error.
    let log_avg = (auto.pixels().map(|p| exposed_luminance(p).max(1e-4).ln()).sum::<f32>() / (SIZE[0] * SIZE[1]) as f32).exp();
    assert!((log_avg / kiln_view::exposure::KEY - 1.0).abs() < 0.15, "log-average {log_avg} vs key {}", kiln_view::exposure::KEY);
    assert!(mean_luminance(&auto) > 1.3 * mean_luminance(&base));
    let again = render("auto-b", pose, &["--exposure", "auto"]);
    assert!(auto == again, "a still view must meter to the same exposure every run");
}
