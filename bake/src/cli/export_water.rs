//! `kiln export --water-frame F` (one wave frame's maps as PNG and a JSON header) and
//! `kiln export --water-preview` (the whole loop as an animated PNG), read from the bake's shared
//! `water-waves` pack.

use std::path::Path;

use kiln_formats::sections::WaterWaves;
use serde_json::json;

use super::export_trees::{bad_index, open_shared_pack, png, section};
use super::CliError;

/// The product name of the water shared pack in the manifest's `SHRD`.
pub const WATER_PRODUCT: &str = "water-waves";

fn open_waves(bake: &Path) -> Result<(std::path::PathBuf, WaterWaves), CliError> {
    let (file, pack) = open_shared_pack(bake, WATER_PRODUCT, "water")?;
    let waves = section(&file, &pack)?;
    Ok((file, waves))
}

/// The largest caustic intensity at plane `depth` over every frame: one scale for a whole loop, so
/// frames exported one by one (or animated) do not flicker against each other.
fn caustic_peak(w: &WaterWaves, depth: usize) -> f32 {
    (0..w.frames as usize).flat_map(|f| w.caustic_map(f, depth)).fold(0.0, f32::max).max(f32::MIN_POSITIVE)
}

/// The largest |dz| over every frame.
fn height_peak(w: &WaterWaves) -> f32 {
    (0..w.frames as usize).flat_map(|f| w.surface_map(f)).fold(0f32, |m, t| m.max(t[2].abs())).max(f32::MIN_POSITIVE)
}

/// Frame `f`'s caustics at plane `depth` as 16-bit grey, 65535 = `peak`.
fn caustic_grey16(w: &WaterWaves, f: usize, depth: usize, peak: f32) -> Vec<u8> {
    w.caustic_map(f, depth).iter().flat_map(|&v| unit16(v / peak)).collect()
}

/// `v` in [0, 1] as a 16-bit sample, big-endian as PNG stores it.
fn unit16(v: f32) -> [u8; 2] {
    ((v.clamp(0.0, 1.0) * 65535.0).round() as u16).to_be_bytes()
}

/// Frame `f`'s normals as the usual RGB8 normal map, `n · 0.5 + 0.5` (Z up).
fn normal_rgb8(w: &WaterWaves, f: usize) -> Vec<u8> {
    w.normal_map(f).iter().flat_map(|n| n.map(|c| ((c * 0.5 + 0.5).clamp(0.0, 1.0) * 255.0).round() as u8)).collect()
}

/// Writes frame `frame` of the bake's water loop into directory `out`: `water-F-normal.png` (RGB8),
/// `water-F-height.png` (16-bit grey, mid-grey = the mean level), `water-F-caustics-D.png` for every
/// receiving plane D (16-bit grey, 65535 = the plane's brightest texel over the loop) and
/// `water-F.json` (the scales, the plane depths, the frame's time).
pub fn export_frame(bake: &Path, frame: u32, out: &Path) -> Result<(), CliError> {
    let (file, w) = open_waves(bake)?;
    if frame >= w.frames {
        return Err(bad_index(&file, "water frame", frame, w.frames as usize));
    }
    let (f, r) = (frame as usize, w.resolution);
    std::fs::create_dir_all(out).map_err(|e| CliError::io(out, e))?;
    use png::{BitDepth, ColorType};
    let stem = format!("water-{frame}");
    let hp = height_peak(&w);
    let height: Vec<u8> = w.surface_map(f).iter().flat_map(|t| unit16(t[2] / hp * 0.5 + 0.5)).collect();
    let mut files = vec![
        (format!("{stem}-normal.png"), png(r, r, ColorType::Rgb, BitDepth::Eight, &normal_rgb8(&w, f))?),
        (format!("{stem}-height.png"), png(r, r, ColorType::Grayscale, BitDepth::Sixteen, &height)?),
    ];
    let mut peaks = Vec::new();
    for d in 0..w.depths.len() {
        let peak = caustic_peak(&w, d);
        peaks.push(peak);
        files.push((format!("{stem}-caustics-{d}.png"), png(r, r, ColorType::Grayscale, BitDepth::Sixteen, &caustic_grey16(&w, f, d, peak))?));
    }
    for (name, bytes) in &files {
        kiln_formats::write_atomic(&out.join(name), bytes).map_err(CliError::Pack)?;
    }
    let header = json!({
        "format": "kiln water export v1",
        "frame": frame,
        "frames": w.frames,
        "time_s": w.period * frame as f32 / w.frames as f32,
        "period_s": w.period,
        "patch_size": w.patch_size,
        "resolution": r,
        "sun_direction": w.sun_direction,
        "flat_transmittance": w.flat_transmittance,
        "files": files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        "normal": "unit normal n * 0.5 + 0.5, Z up",
        "height": { "encoding": "16-bit: 0 = -scale, 32768 ≈ mean level, 65535 = +scale (world units)", "scale": hp },
        "caustics": {
            "encoding": "16-bit: irradiance on the plane relative to the horizontal irradiance above the water, 65535 = peak",
            "depths": w.depths,
            "peaks": peaks,
        },
    });
    let bytes = serde_json::to_vec_pretty(&header).expect("JSON values serialise");
    kiln_formats::write_atomic(&out.join(format!("{stem}.json")), &bytes).map_err(CliError::Pack)
}

/// One preview frame: the caustics at plane `depth` (left) beside the surface lit by the sun
/// (right), 8-bit grey, 2R × R.
fn preview_frame(w: &WaterWaves, f: usize, depth: usize, peak: f32) -> Vec<u8> {
    let r = w.resolution as usize;
    let caustics = w.caustic_map(f, depth);
    let normals = w.normal_map(f);
    let sun = w.sun_direction;
    // Gamma 1/2.2 so the dim parts of the pattern stay visible.
    let tone = |v: f32| ((v.clamp(0.0, 1.0)).powf(1.0 / 2.2) * 255.0).round() as u8;
    let mut out = Vec::with_capacity(2 * r * r);
    for y in 0..r {
        out.extend(caustics[y * r..(y + 1) * r].iter().map(|&v| tone(v / peak)));
        out.extend(normals[y * r..(y + 1) * r].iter().map(|n| tone(0.15 + 0.85 * (n[0] * sun[0] + n[1] * sun[1] + n[2] * sun[2]).max(0.0))));
    }
    out
}

/// Writes the bake's whole water loop to `out` as an animated PNG that loops forever at the bake's
/// own speed (each frame shown `period / frames` seconds): caustics at plane `depth` beside the lit
/// surface.
pub fn export_preview(bake: &Path, depth: u32, out: &Path) -> Result<(), CliError> {
    let (file, w) = open_waves(bake)?;
    if depth as usize >= w.depths.len() {
        return Err(bad_index(&file, "caustic plane", depth, w.depths.len()));
    }
    let peak = caustic_peak(&w, depth as usize);
    let (width, height) = (2 * w.resolution, w.resolution);
    let failed = |e: png::EncodingError| CliError::Failed(format!("animated PNG of {} frames: {e}", w.frames));
    // Frame delay as a fraction of a second: milliseconds, at most 65535.
    let delay_ms = ((w.period / w.frames as f32) * 1000.0).round().clamp(1.0, 65535.0) as u16;
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, width, height);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_animated(w.frames, 0).map_err(failed)?;
        enc.set_frame_delay(delay_ms, 1000).map_err(failed)?;
        let mut writer = enc.write_header().map_err(failed)?;
        for f in 0..w.frames as usize {
            writer.write_image_data(&preview_frame(&w, f, depth as usize, peak)).map_err(failed)?;
        }
        writer.finish().map_err(failed)?;
    }
    kiln_formats::write_atomic(out, &bytes).map_err(CliError::Pack)
}

#[cfg(test)]
#[path = "export_water_tests.rs"]
mod tests;
