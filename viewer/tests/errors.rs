//! Failures: each fatal one is a single clear line on stderr and a non-zero exit; a bad tile is a
//! warning and the view goes on.

mod support;

use std::path::Path;
use std::process::Output;

use glam::Vec3;
use kiln_view::view_mode::lod_color;
use support::*;

/// Asserts a failed run printed exactly one line, the viewer's error, containing `needle`.
fn assert_one_line_error(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "must fail; stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr, got: {err}");
    assert!(lines[0].starts_with("kiln-view: error: ") && lines[0].contains(needle), "{:?} must mention {needle:?}", lines[0]);
}

fn run_headless(dir: &Path, env: &[(&str, &str)]) -> Output {
    let png = scratch("err-shots").join("x.png");
    let mut c = viewer();
    c.arg(dir).args(["--headless", "--size", "64x64", "--screenshot"]).arg(&png);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn missing_bake_directory() {
    let out = run_headless(Path::new("/nonexistent/kiln/out/world"), &[]);
    assert_one_line_error(&out, "manifest.kpack");
}

#[test]
fn corrupt_manifest() {
    let dir = world_copy("corrupt-manifest");
    let path = dir.join("manifest.kpack");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 5] ^= 0x55; // inside the last section's payload
    std::fs::write(&path, bytes).unwrap();
    assert_one_line_error(&run_headless(&dir, &[]), "checksum mismatch");
}

#[test]
fn unsupported_format_version() {
    let dir = world_copy("version");
    let path = dir.join("manifest.kpack");
    let mut bytes = std::fs::read(&path).unwrap();
    // Major version 2, with a valid header checksum so the version check is what refuses it.
    bytes[8..10].copy_from_slice(&2u16.to_le_bytes());
    bytes[10..12].copy_from_slice(&0u16.to_le_bytes());
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..40]);
    bytes[40..48].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    assert_one_line_error(&run_headless(&dir, &[]), "unsupported format version 2.0");
}

#[test]
fn no_gpu_adapter() {
    // No Vulkan driver manifests: the loader finds no device (and this build has no other backend).
    let out = run_headless(world(), &[("VK_ICD_FILENAMES", "/nonexistent/icd.json"), ("VK_DRIVER_FILES", "/nonexistent/icd.json")]);
    assert_one_line_error(&out, "no usable GPU adapter");
}

#[test]
fn no_display_for_a_window() {
    let out = viewer().arg(world()).args(["--frames", "1"]).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").output().unwrap();
    assert_one_line_error(&out, "no display");
}

#[test]
fn contradictory_options() {
    let out = viewer().arg(world()).arg("--headless").output().unwrap();
    assert_one_line_error(&out, "--headless needs --screenshot");
}

#[test]
fn a_bad_tile_is_reported_once_and_replaced_by_its_parent() {
    let dir = world_copy("bad-tile");
    let tile = dir.join("tiles/L0_3_3.kpack");
    let mut bytes = std::fs::read(&tile).unwrap();
    let n = bytes.len();
    bytes[n / 2 + 40] ^= 0xff;
    std::fs::write(&tile, bytes).unwrap();
    let pose = top_down(90.0);
    let (out, img) = headless(&dir, "bad-tile", [256, 256], pose, &["--mode", "lod", "--max-error-px", "0.25"]);
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("L0_3_3")).collect();
    assert_eq!(warnings.len(), 1, "the bad tile is reported exactly once: {err}");
    assert!(warnings[0].starts_with("kiln-view: warning: "), "{err}");
    let img = img.unwrap();
    let t = WORLD.width() / WORLD.tiles as f32;
    let at = |tx: f32, ty: f32| {
        let (x, y) = ((tx + 0.5) * t, (ty + 0.5) * t);
        dominant(mean_rgb(&img, project(pose, [256, 256], Vec3::new(x, y, WORLD.height(x, y))), 2))
    };
    assert_eq!(at(3.0, 3.0), dominant(lod_color(1)), "the bad tile's area shows its parent, not a hole");
    assert_eq!(at(0.0, 0.0), dominant(lod_color(0)));
}
