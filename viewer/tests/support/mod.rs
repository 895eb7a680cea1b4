//! Shared by the integration tests: the synthetic world fixture, running the binary, and image
//! probes.

#![allow(dead_code)] // each test binary uses a different subset

pub mod grass;
pub mod synth;
pub mod trees;
pub mod water;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use glam::{Vec2, Vec3};
use kiln_view::camera::{Camera, CameraPose};

/// The fixture world: 4×4 level-0 tiles of 16 cells, 3 levels, 64 units wide.
pub const WORLD: synth::Synth = synth::Synth { tiles: 4, cells: 16, levels: 3 };

/// A scratch directory unique to this test binary and process.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kiln-view-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The fixture bake directory, written once per test binary.
pub fn world() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = scratch("world").join("synth");
        WORLD.write(&d);
        d
    })
}

/// A private copy of the fixture (for tests that damage it).
pub fn world_copy(name: &str) -> PathBuf {
    let d = scratch(name).join("synth");
    std::fs::create_dir_all(d.join("tiles")).unwrap();
    for sub in ["", "tiles"] {
        for e in std::fs::read_dir(world().join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), d.join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    d
}

/// A private XDG_RUNTIME_DIR (mode 0700): Mesa's WSI prints a warning without a valid one.
pub fn runtime_dir() -> PathBuf {
    let rt = scratch("xdg");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    rt
}

/// The viewer binary, with a quiet runtime directory.
pub fn viewer() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kiln-view"));
    c.env("XDG_RUNTIME_DIR", runtime_dir());
    c
}

/// Runs a headless render of the fixture (or `dir`) and returns the process output and image.
pub fn headless(dir: &Path, name: &str, size: [u32; 2], pose: CameraPose, extra: &[&str]) -> (Output, Option<image::RgbaImage>) {
    let png = scratch("shots").join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let camera = format!("{},{},{},{},{}", pose.position.x, pose.position.y, pose.position.z, pose.yaw_deg, pose.pitch_deg);
    let out = viewer()
        .arg(dir)
        .args(["--headless", "--size", &format!("{}x{}", size[0], size[1]), "--camera", &camera, "--screenshot"])
        .arg(&png)
        .args(extra)
        .output()
        .unwrap();
    let img = image::open(&png).ok().map(|i| i.to_rgba8());
    (out, img)
}

/// Fails with the viewer's stderr when it did not succeed.
pub fn assert_ok(out: &Output) {
    assert!(out.status.success(), "kiln-view failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr));
}

/// Looking straight down at the middle of the world from `height`: world +X is image right, +Y up.
pub fn top_down(height: f32) -> CameraPose {
    CameraPose { position: Vec3::new(WORLD.width() / 2.0, WORLD.width() / 2.0, height), yaw_deg: 90.0, pitch_deg: -90.0 }
}

/// Where world point `p` lands in a `size` image seen from `pose` (the viewer's own camera math).
pub fn project(pose: CameraPose, size: [u32; 2], p: Vec3) -> Vec2 {
    let w = WORLD.width();
    let cam = Camera::from_pose(pose, Vec3::ZERO, Vec3::new(w, w, 16.0));
    let ndc = cam.view_proj(size[0] as f32 / size[1] as f32).project_point3(p);
    Vec2::new((ndc.x * 0.5 + 0.5) * size[0] as f32, (0.5 - ndc.y * 0.5) * size[1] as f32)
}

/// Mean RGB (0–255) of the square of half-width `r` around `at`.
pub fn mean_rgb(img: &image::RgbaImage, at: Vec2, r: i32) -> [f32; 3] {
    let mut sum = [0f32; 3];
    let mut n = 0.0;
    for dy in -r..=r {
        for dx in -r..=r {
            let (x, y) = (at.x as i32 + dx, at.y as i32 + dy);
            if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
                let p = img.get_pixel(x as u32, y as u32);
                for c in 0..3 {
                    sum[c] += p[c] as f32;
                }
                n += 1.0;
            }
        }
    }
    sum.map(|s| s / n)
}

/// The index of the largest channel.
pub fn dominant(c: [f32; 3]) -> usize {
    (0..3).max_by(|&a, &b| c[a].total_cmp(&c[b])).unwrap()
}
