//! The water layer on the synthetic world with synthetic water (`support::water`): the trench is
//! flooded up to `LEVEL`. Water shows where the tiles' `WTIL` says and nowhere else, caustics light
//! only the terrain under it, a world without water renders exactly as before water existed, and a
//! tile whose water indexes another wave pack is refused without a panic.

mod support;

use std::sync::OnceLock;

use glam::Vec3;
use kiln_view::camera::CameraPose;
use support::{assert_ok, headless, project, scratch, top_down, WORLD};

/// The water level: the trench (floor about −6) floods, and shallow lakes (up to 1.5 deep) fill the
/// lowest hollows of the rolling ground (4 to 8); the plateau and the ridges stay dry.
const LEVEL: f32 = 5.5;
const SIZE: [u32; 2] = [256, 256];
const FINE: [&str; 2] = ["--max-error-px", "0.25"];

fn flooded() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = scratch("flooded").join("synth");
        WORLD.write(&d);
        support::water::add_water(&d, &WORLD, LEVEL, None);
        d
    })
}

/// World points on a grid over the middle of the world, split into clearly wet and clearly dry
/// (at least `margin` below or above the level, their cell's samples too).
fn probes(margin: f32) -> (Vec<Vec3>, Vec<Vec3>) {
    let (mut wet, mut dry) = (Vec::new(), Vec::new());
    let w = WORLD.width();
    let mut y = 0.2 * w;
    while y < 0.8 * w {
        let mut x = 0.1 * w;
        while x < 0.9 * w {
            // The terrain between samples is the mesh's interpolation: a point is clearly wet or
            // dry only when its cell's four level-0 samples (WTIL's at level 0) all are too.
            let h = WORLD.height(x, y);
            let corners = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)].map(|(i, j)| WORLD.height(x.floor() + i, y.floor() + j));
            if h < LEVEL - margin && corners.iter().all(|&c| c < LEVEL - margin / 2.0) {
                wet.push(Vec3::new(x, y, LEVEL));
            } else if h > LEVEL + margin && corners.iter().all(|&c| c > LEVEL + margin / 2.0) {
                dry.push(Vec3::new(x, y, h));
            }
            x += 0.37;
        }
        y += 1.3;
    }
    (wet, dry)
}

fn px(img: &image::RgbaImage, pose: CameraPose, p: Vec3) -> [i32; 3] {
    let q = project(pose, SIZE, p);
    let v = img.get_pixel((q.x as u32).min(SIZE[0] - 1), (q.y as u32).min(SIZE[1] - 1));
    [v[0] as i32, v[1] as i32, v[2] as i32]
}

/// The water mask's colours: blue by depth, or the yellow shore band.
fn is_mask(c: [i32; 3]) -> bool {
    let blue = c[2] > 150 && c[2] > c[0] + 60;
    let yellow = c[0] > 150 && c[1] > 120 && c[0] > c[2] + 60;
    blue || yellow
}

#[test]
fn water_shows_where_the_tiles_say_and_nowhere_else() {
    let pose = top_down(90.0);
    let (out, mask) = headless(flooded(), "water-mask", SIZE, pose, &["--mode", "water-mask", FINE[0], FINE[1]]);
    assert_ok(&out);
    let mask = mask.unwrap();
    let (wet, dry) = probes(0.6);
    assert!(wet.len() > 50 && dry.len() > 500, "{} wet and {} dry probes", wet.len(), dry.len());
    let wet_hits = wet.iter().filter(|&&p| is_mask(px(&mask, pose, p))).count();
    for p in wet.iter().filter(|&&p| !is_mask(px(&mask, pose, p))).take(12) {
        eprintln!("wet {p} at {} shows {:?}", project(pose, SIZE, *p), px(&mask, pose, *p));
    }
    let dry_hits = dry.iter().filter(|&&p| is_mask(px(&mask, pose, p))).count();
    for p in dry.iter().filter(|&&p| is_mask(px(&mask, pose, p))).take(12) {
        eprintln!("dry {p} (ground {}) at {} shows {:?}", WORLD.height(p.x, p.y), project(pose, SIZE, *p), px(&mask, pose, *p));
    }
    assert!(wet_hits as f32 > 0.95 * wet.len() as f32, "{wet_hits} of {} wet points show water", wet.len());
    assert_eq!(dry_hits, 0, "dry points showing water");

    // Lit: the dry land is exactly what the world without water shows; the wet trench is not.
    let (o1, with) = headless(flooded(), "water-lit", SIZE, pose, &[FINE[0], FINE[1]]);
    let (o2, without) = headless(support::world(), "water-none", SIZE, pose, &[FINE[0], FINE[1]]);
    assert_ok(&o1);
    assert_ok(&o2);
    let (with, without) = (with.unwrap(), without.unwrap());
    let changed = |pts: &[Vec3]| pts.iter().filter(|&&p| px(&with, pose, p) != px(&without, pose, p)).count();
    assert_eq!(changed(&dry), 0, "dry points changed by water");
    assert!(changed(&wet) as f32 > 0.9 * wet.len() as f32, "{} of {} wet points changed", changed(&wet), wet.len());
    // Absorption takes red first: the water is bluer than the ground it covers.
    let mean = |img: &image::RgbaImage| {
        let s = wet.iter().map(|&p| px(img, pose, p)).fold([0i64; 3], |a, c| [a[0] + c[0] as i64, a[1] + c[1] as i64, a[2] + c[2] as i64]);
        s.map(|v| v as f32 / wet.len() as f32)
    };
    let (w, g) = (mean(&with), mean(&without));
    assert!(w[2] - w[0] > g[2] - g[0] + 10.0, "water {w:?} vs the bare trench {g:?}");
}

fn luminance(c: [i32; 3]) -> f32 {
    0.2126 * c[0] as f32 + 0.7152 * c[1] as f32 + 0.0722 * c[2] as f32
}

#[test]
fn caustics_light_only_the_terrain_under_water_in_a_moving_pattern() {
    let pose = top_down(60.0);
    let shot = |name: &str, t: &str| {
        let (out, img) = headless(flooded(), name, SIZE, pose, &["--mode", "caustics", "--time", t, FINE[0], FINE[1]]);
        assert_ok(&out);
        img.unwrap()
    };
    let (a, b) = (shot("caustics-a", "0.7"), shot("caustics-b", "1.9"));
    let (wet, dry) = probes(1.0);
    // Above the water: nothing.
    let lit_dry = dry.iter().filter(|&&p| luminance(px(&a, pose, p)) > 2.0).count();
    assert_eq!(lit_dry, 0, "dry points with caustic light");
    // Under it: a pattern, brighter than its mean in places, and darker in others.
    let under: Vec<f32> = wet.iter().map(|&p| luminance(px(&a, pose, Vec3::new(p.x, p.y, WORLD.height(p.x, p.y))))).collect();
    let mean = under.iter().sum::<f32>() / under.len() as f32;
    let max = under.iter().copied().fold(0.0, f32::max);
    let bright = under.iter().filter(|&&l| l > 1.3 * mean).count();
    let dark = under.iter().filter(|&&l| l < 0.7 * mean).count();
    assert!(mean > 10.0, "mean caustic luminance {mean}");
    assert!(max > 1.5 * mean && bright > 5 && dark > 5, "mean {mean}, max {max}, {bright} bright and {dark} dark of {}", under.len());
    // It moves with the clock (where the sun reaches: the trench's floor lies in its walls' shadow).
    let ground = |p: &Vec3| Vec3::new(p.x, p.y, WORLD.height(p.x, p.y));
    let sunny: Vec<Vec3> = wet.iter().map(ground).filter(|&p| luminance(px(&a, pose, p)).max(luminance(px(&b, pose, p))) > 2.0).collect();
    let moved = sunny.iter().filter(|&&p| px(&a, pose, p) != px(&b, pose, p)).count();
    assert!(sunny.len() > 100 && moved as f32 > 0.8 * sunny.len() as f32, "{moved} of {} sunlit points changed between t = 0.7 and 1.9", sunny.len());
}

#[test]
fn lit_view_without_water_is_unchanged() {
    // The plateau's shadow on flat ground, as `headless.rs` checks it: sun, shadow map, fog, sky.
    // Drawn with every layer and with the water layer left out: where a world has no water, the
    // layer (its uniforms, the split pass, the sunlight's transmittance term) must change nothing.
    // Compared on the same machine: lavapipe's pictures differ by CPU in their last bits.
    let w = WORLD.width();
    let pose = CameraPose { position: Vec3::new(w * 0.5, -6.0, 22.0), yaw_deg: 70.0, pitch_deg: -28.0 };
    let (out, with) = headless(support::world(), "no-water", SIZE, pose, &[]);
    assert_ok(&out);
    let (out, without) = headless(support::world(), "no-water-layer", SIZE, pose, &["--hide-layer", "water-waves"]);
    assert_ok(&out);
    let (with, without) = (with.unwrap(), without.unwrap());
    assert!(with.as_raw() == without.as_raw(), "the water layer changed the picture of a world without water");
    // The same comparison can tell: over the flooded world, leaving the water out does change it.
    let (out, flooded_with) = headless(flooded(), "flooded-with", SIZE, top_down(90.0), &[]);
    assert_ok(&out);
    let (out, flooded_without) = headless(flooded(), "flooded-without", SIZE, top_down(90.0), &["--hide-layer", "water-waves"]);
    assert_ok(&out);
    assert!(flooded_with.unwrap().as_raw() != flooded_without.unwrap().as_raw(), "hiding the water layer changed nothing where there is water");
}

#[test]
fn a_tile_indexing_another_wave_pack_is_refused_without_a_panic() {
    let d = scratch("water-mismatch").join("synth");
    WORLD.write(&d);
    support::water::add_water(&d, &WORLD, LEVEL, Some(0x1234_5678));
    let (out, img) = headless(&d, "water-mismatch", SIZE, top_down(90.0), &["--mode", "water-mask"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("indexes waves 0000000012345678"), "{err}");
    // Refused tiles are drawn by no layer: no water anywhere.
    let img = img.unwrap();
    let (wet, _) = probes(0.6);
    assert!(wet.iter().all(|&p| !is_mask(px(&img, top_down(90.0), p))));
}

#[test]
fn under_the_surface_the_view_is_fogged_blue() {
    // In the flooded trench, below the level, looking along it.
    let x = WORLD.trench_x();
    let pose = CameraPose { position: Vec3::new(x, 10.0, LEVEL - 2.0), yaw_deg: 90.0, pitch_deg: -5.0 };
    let (o1, wet) = headless(flooded(), "under", [160, 120], pose, &[]);
    let (o2, dry) = headless(support::world(), "under-dry", [160, 120], pose, &[]);
    assert_ok(&o1);
    assert_ok(&o2);
    let mean = |img: &image::RgbaImage| {
        let n = img.pixels().len() as f32;
        let s = img.pixels().fold([0f32; 3], |a, p| [a[0] + p[0] as f32, a[1] + p[1] as f32, a[2] + p[2] as f32]);
        s.map(|v| v / n)
    };
    let (w, d) = (mean(&wet.unwrap()), mean(&dry.unwrap()));
    assert!(w[2] > w[0] + 10.0, "under water the view is blue: {w:?} (dry {d:?})");
    assert!(w != d);
}
