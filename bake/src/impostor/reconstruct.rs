//! The impostor drawn on the CPU the way the viewer draws it, and the mesh ray traced from the
//! same orthographic camera, for the fidelity tests. Per pixel of a camera-facing quad over the
//! bounding sphere: the three frames around the camera direction (`octahedral::select_frames`);
//! in each, the pixel's ray meets the frame's plane through the centre, the depth read there
//! moves the point along the ray to the surface it stands for (one parallax step), and colour,
//! coverage and depth are read at that point; the frames are blended by their weights, colour
//! and depth weighted by coverage too.

use super::capture::{decode_depth, linear_to_srgb, srgb_to_linear, OrthoCamera, Scene};
use super::octahedral::{frame_basis, frame_direction, select_frames};
use super::{CaptureMesh, Impostor, ImpostorError};
use glam::Vec3A;

/// An orthographic render over the bounding sphere, `px`×`px`, row 0 at the top.
#[derive(Clone, Debug, PartialEq)]
pub struct Render {
    /// Side in pixels.
    pub px: u32,
    /// Coverage in [0,1] (before the alpha test at 0.5).
    pub coverage: Vec<f32>,
    /// sRGB-encoded colour in [0,1].
    pub rgb: Vec<[f32; 3]>,
    /// Depth toward the camera from the sphere's centre, world units.
    pub depth: Vec<f32>,
}

/// Bilinear read of one view of an atlas level at view-local uv (clamped inside the view, never
/// reading the neighbouring view): albedo and depth.
fn sample_view(imp: &Impostor, level: usize, frame: [u32; 2], uv: [f32; 2], lut: &[f32; 256]) -> ([f32; 4], f32) {
    let l = &imp.levels[level];
    let px = l.size / imp.grid;
    let fx = (uv[0] * px as f32 - 0.5).clamp(0.0, (px - 1) as f32);
    let fy = (uv[1] * px as f32 - 0.5).clamp(0.0, (px - 1) as f32);
    let (x0, y0) = (fx.floor() as u32, fy.floor() as u32);
    let (x1, y1) = ((x0 + 1).min(px - 1), (y0 + 1).min(px - 1));
    let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
    let (ox, oy) = (frame[0] * px, frame[1] * px);
    let mut albedo = [0.0; 4];
    let mut depth = 0.0;
    for (x, y, w) in [(x0, y0, (1.0 - tx) * (1.0 - ty)), (x1, y0, tx * (1.0 - ty)), (x0, y1, (1.0 - tx) * ty), (x1, y1, tx * ty)] {
        let i = ((oy + y) * l.size + ox + x) as usize;
        for c in 0..3 {
            albedo[c] += w * lut[l.albedo[4 * i + c] as usize];
        }
        albedo[3] += w * l.albedo[4 * i + 3] as f32 / 255.0;
        depth += w * decode_depth(l.depth[i], imp.radius);
    }
    (albedo, depth)
}

/// The impostor seen from direction `dir` (unit, object toward camera) at atlas level `level`,
/// `px` pixels across the bounding sphere.
pub fn render_impostor(imp: &Impostor, level: usize, dir: [f32; 3], px: u32) -> Render {
    let lut: [f32; 256] = std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0));
    let cam = OrthoCamera::new(dir, px, 1);
    let (c, r) = (Vec3A::from(imp.center), imp.radius);
    let blend = select_frames(imp.layout, imp.grid, dir);
    let frames: Vec<(Vec3A, Vec3A, Vec3A)> = blend
        .frames
        .iter()
        .map(|f| {
            let d = frame_direction(imp.layout, imp.grid, f[0], f[1]);
            let (right, up) = frame_basis(d);
            (Vec3A::from(d), Vec3A::from(right), Vec3A::from(up))
        })
        .collect();
    let project = |p: Vec3A, (_, right, up): (Vec3A, Vec3A, Vec3A)| [(p - c).dot(right) / r * 0.5 + 0.5, 0.5 - (p - c).dot(up) / r * 0.5];
    let n = (px * px) as usize;
    let mut out = Render { px, coverage: vec![0.0; n], rgb: vec![[0.0; 3]; n], depth: vec![0.0; n] };
    let step = 2.0 * r / px as f32;
    for y in 0..px {
        for x in 0..px {
            let q = c + cam.right * ((x as f32 + 0.5) * step - r) + cam.up * (r - (y as f32 + 0.5) * step);
            let (mut cov, mut rgb, mut depth, mut wsum) = (0.0, [0.0f32; 3], 0.0, 0.0);
            for (k, &frame) in frames.iter().enumerate() {
                let w = blend.weights[k];
                let vd = cam.dir.dot(frame.0);
                if w <= 0.0 || vd <= 1e-3 {
                    continue;
                }
                // Ray q − t·v meets depth D (along the frame's direction) at t = (a − D) / vd.
                let a = (q - c).dot(frame.0);
                let (_, d0) = sample_view(imp, level, blend.frames[k], project(q - cam.dir * (a / vd), frame), &lut);
                let t1 = (a - d0) / vd;
                let (albedo, d1) = sample_view(imp, level, blend.frames[k], project(q - cam.dir * t1, frame), &lut);
                let t2 = (a - d1) / vd;
                let wa = w * albedo[3];
                cov += wa;
                for ch in 0..3 {
                    rgb[ch] += wa * albedo[ch];
                }
                depth += wa * -t2;
                wsum += wa;
            }
            let i = (y * px + x) as usize;
            out.coverage[i] = cov.min(1.0);
            if wsum > 0.0 {
                out.rgb[i] = rgb.map(|v| linear_to_srgb(v / wsum));
                out.depth[i] = depth / wsum;
            }
        }
    }
    out
}

/// The mesh ray traced from direction `dir` over its bounding sphere, `px` pixels across,
/// `ss`×`ss` rays per pixel (alpha-tested materials cut out as in the capture).
pub fn render_mesh(mesh: &CaptureMesh, dir: [f32; 3], px: u32, ss: u32) -> Result<Render, ImpostorError> {
    let scene = Scene::traced(mesh)?;
    Ok(render_scene(&scene, dir, px, ss))
}

pub(crate) fn render_scene(scene: &Scene, dir: [f32; 3], px: u32, ss: u32) -> Render {
    let means = OrthoCamera::new(dir, px, ss).trace(scene);
    Render {
        px,
        coverage: means.iter().map(|p| p.coverage).collect(),
        rgb: means.iter().map(|p| p.rgb.map(linear_to_srgb)).collect(),
        depth: means.iter().map(|p| p.depth).collect(),
    }
}

/// How closely a render matches a reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fidelity {
    /// Intersection over union of the pixels passing the 0.5 alpha test.
    pub iou: f32,
    /// RMS of the sRGB colour difference over pixels covered in both, per channel.
    pub colour_rms: f32,
    /// Mean absolute depth difference over pixels covered in both, as a fraction of `radius`.
    pub depth_error: f32,
}

/// Compares `got` with `reference` (same size).
pub fn compare(got: &Render, reference: &Render, radius: f32) -> Fidelity {
    let (mut inter, mut union, mut sq, mut dz) = (0usize, 0usize, 0.0f64, 0.0f64);
    for i in 0..got.coverage.len() {
        let (a, b) = (got.coverage[i] >= 0.5, reference.coverage[i] >= 0.5);
        union += (a || b) as usize;
        if a && b {
            inter += 1;
            for c in 0..3 {
                sq += ((got.rgb[i][c] - reference.rgb[i][c]) as f64).powi(2);
            }
            dz += (got.depth[i] - reference.depth[i]).abs() as f64;
        }
    }
    let both = inter.max(1) as f64;
    Fidelity {
        iou: if union == 0 { 1.0 } else { inter as f32 / union as f32 },
        colour_rms: (sq / (3.0 * both)).sqrt() as f32,
        depth_error: (dz / both / radius as f64) as f32,
    }
}

/// Mean absolute difference of premultiplied colour (coverage × sRGB colour, and coverage)
/// between two renders: how much an image changes.
pub fn image_change(a: &Render, b: &Render) -> f32 {
    let mut sum = 0.0f64;
    for i in 0..a.coverage.len() {
        let (ca, cb) = (a.coverage[i].min(1.0), b.coverage[i].min(1.0));
        sum += (ca - cb).abs() as f64;
        for c in 0..3 {
            sum += (ca * a.rgb[i][c] - cb * b.rgb[i][c]).abs() as f64;
        }
    }
    (sum / (4.0 * a.coverage.len() as f64)) as f32
}
