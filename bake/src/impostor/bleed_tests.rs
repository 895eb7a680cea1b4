//! Two guards on the atlas's mips: no level of a view takes colour from outside the view (run
//! through the bake's own dilation and mip steps on an atlas whose neighbours are magenta), and
//! coverage-preserving mips keep thin strokes that a plain box filter loses.

use super::capture::{OrthoCamera, Scene, ViewMaps};
use super::image::Image;
use super::mips::{coverage_preserving_mips, passing, view_mips};
use super::synthetic::SyntheticTree;
use super::*;
use crate::rng::Rng;

const MAGENTA: [u8; 4] = [255, 0, 255, 255];

/// The bake's per-view steps (dilation, then mips) and its atlas assembly, on views given as captured.
fn levels_of(views: &[ViewMaps], grid: u32, min_mip_px: u32) -> Vec<AtlasLevel> {
    let processed: Vec<(ViewMaps, Vec<ViewMaps>)> = views
        .iter()
        .map(|v| {
            let mut v = v.clone();
            dilate::dilate_view(&mut v);
            let mips = view_mips(&v, min_mip_px);
            (v, mips)
        })
        .collect();
    (0..=processed[0].1.len())
        .map(|l| assemble(&processed.iter().map(|(v0, m)| if l == 0 { v0 } else { &m[l - 1] }).collect::<Vec<_>>(), grid))
        .collect()
}

/// View `k`'s texels of one level, row by row.
fn view_texels(level: &AtlasLevel, grid: u32, k: u32) -> Vec<[u8; 4]> {
    let px = level.size / grid;
    let (ox, oy) = ((k % grid) * px, (k / grid) * px);
    (0..px * px).map(|i| (((oy + i / px) * level.size + ox + i % px) * 4) as usize).map(|d| std::array::from_fn(|c| level.albedo[d + c])).collect()
}

#[test]
fn no_level_of_a_view_takes_colour_from_its_magenta_neighbours() {
    let tree = SyntheticTree::new(1200, 5);
    let mats = tree.materials();
    let mesh = tree.mesh(&mats);
    let settings = ImpostorSettings::default();
    let scene = Scene::new(&mesh);
    let (grid, px) = (settings.grid, view_px(scene.radius, &settings));
    let captured: Vec<ViewMaps> = (0..grid * grid)
        .map(|k| OrthoCamera::new(octahedral::frame_direction(settings.layout, grid, k % grid, k / grid), px, settings.supersample).capture(&scene))
        .collect();
    // The helper is the bake: if the bake ever processes the atlas otherwise, this fails first.
    let clean = levels_of(&captured, grid, settings.min_mip_px);
    assert_eq!(clean, bake(&mesh, &settings).unwrap().levels, "levels_of no longer mirrors bake");
    assert!(clean.len() >= 3, "too few levels to test: {}", clean.len());
    // Checkerboard: views of one parity keep their content, their empty texels loud magenta (what
    // dilation must overwrite); views of the other parity are solid covered magenta.
    for parity in 0..2 {
        let normal = |k: u32| (k % grid + k / grid) % 2 == parity;
        let tinted: Vec<ViewMaps> = captured
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let mut v = v.clone();
                for (a, n) in v.albedo.iter_mut().zip(v.normal.iter_mut()) {
                    if !normal(k as u32) {
                        (*a, *n) = (MAGENTA, MAGENTA);
                    } else if a[3] == 0 {
                        (*a, *n) = ([255, 0, 255, 0], MAGENTA);
                    }
                }
                v
            })
            .collect();
        let levels = levels_of(&tinted, grid, settings.min_mip_px);
        for (l, (level, clean_level)) in levels.iter().zip(&clean).enumerate() {
            for k in (0..grid * grid).filter(|&k| normal(k)) {
                let texels = view_texels(level, grid, k);
                // The tree's own colours have blue ≤ 50 and red ≤ 150; any magenta mixed in (in linear
                // light) lifts blue far above that: a 5 % share alone gives sRGB blue ≈ 80.
                let worst = texels.iter().map(|t| t[2].max(t[0].saturating_sub(100))).max().unwrap();
                assert!(worst <= 60, "level {l}, view {k}: magenta in the colour (blue or red excess {worst})");
                assert_eq!(texels, view_texels(clean_level, grid, k), "level {l}, view {k}: colour depends on what lies outside the view");
            }
        }
    }
}

/// Needles of a conifer card, as the card rasteriser draws them: parallel strokes 0.8 texel wide,
/// spaced 3–6 texels, cut into dashes, alpha the stroke's area share of each texel (8×8 samples).
/// A 2×2 box of such a stroke stays below 0.5 everywhere. Not binary on purpose: with 255/0 strokes
/// a texel of level 1 holds 0, 1 or 2 stroke texels, so whole tie groups pass or fail together and
/// no alpha scale can land within 5 %.
fn needles(size: u32, seed: u64) -> Image {
    let (sn, cs, width) = (libm::sin(0.6), libm::cos(0.6), 0.8);
    let mut lines = Vec::new();
    let mut c = -2.0 * size as f64;
    for k in 0.. {
        let mut r = Rng::keyed(seed, "test.needle", k);
        c += r.range(3.0, 6.0);
        if c > 2.0 * size as f64 {
            break;
        }
        lines.push((c, r.range(0.0, 40.0), r.range(8.0, 24.0), r.range(3.0, 8.0)));
    }
    let mut img = Image::new(size, size);
    let sub = 8;
    for y in 0..size {
        for x in 0..size {
            let mut hit = 0;
            for s in 0..sub * sub {
                let (px, py) = (x as f64 + ((s % sub) as f64 + 0.5) / sub as f64, y as f64 + ((s / sub) as f64 + 0.5) / sub as f64);
                let (along, across) = (px * cs + py * sn, py * cs - px * sn);
                // Lines are sorted by offset: only the two around `across` can hold it.
                let i = lines.partition_point(|l| l.0 < across);
                let inside = lines[i.saturating_sub(1)..(i + 1).min(lines.len())]
                    .iter()
                    .any(|&(c, phase, dash, gap)| (across - c).abs() <= width / 2.0 && (along + phase).rem_euclid(dash + gap) < dash);
                hit += inside as u32;
            }
            img.set(x, y, [60, 140, 40, (hit * 255 / (sub * sub)) as u8]);
        }
    }
    img
}

/// A plain 2×2 box filter of the alpha (rounded), `levels` times.
fn box_mips(img: &Image, levels: usize) -> Vec<Image> {
    let mut out = vec![img.clone()];
    for _ in 0..levels {
        let p = out.last().unwrap();
        let mut n = Image::new(p.width / 2, p.height / 2);
        for y in 0..n.height {
            for x in 0..n.width {
                let s: u32 = [(0, 0), (1, 0), (0, 1), (1, 1)].iter().map(|&(dx, dy)| p.texel(2 * x + dx, 2 * y + dy)[3] as u32).sum();
                n.set(x, y, [0, 0, 0, ((s + 2) / 4) as u8]);
            }
        }
        out.push(n);
    }
    out
}

fn coverage(i: &Image) -> f64 {
    passing(i.rgba.chunks_exact(4).map(|c| c[3]), 0.5) as f64 / (i.width * i.height) as f64
}

#[test]
fn thin_strokes_keep_their_coverage_where_a_box_filter_loses_it() {
    let img = needles(256, 1);
    let f0 = coverage(&img);
    assert!(f0 > 0.05 && f0 < 0.5, "degenerate fixture: coverage {f0}");
    // The control: a box filter's level 1 has no texel at 0.5, and coverage collapses.
    let boxed = box_mips(&img, 2);
    let max1 = boxed[1].rgba.chunks_exact(4).map(|c| c[3]).max().unwrap();
    assert!(max1 < 128, "fixture too thick: box level 1 reaches alpha {max1}");
    let lost = boxed[1..].iter().map(|l| 1.0 - coverage(l) / f0).fold(0.0, f64::max);
    assert!(lost > 0.5, "the control keeps coverage (lost {lost:.2}): the fixture proves nothing");
    // Every level whose expected passing count is ≥ 10 texels (a whole texel is then ≤ 5 %).
    let levels = coverage_preserving_mips(&img, 0.5);
    let checked: Vec<&Image> = levels[1..].iter().filter(|l| f0 * (l.width * l.height) as f64 >= 10.0).collect();
    assert!(checked.len() >= 4, "too few levels checked: {}", checked.len());
    for l in checked {
        let f = coverage(l);
        assert!((f - f0).abs() <= 0.05 * f0, "{}x{}: coverage {f:.4} vs level 0's {f0:.4}", l.width, l.height);
    }
}
