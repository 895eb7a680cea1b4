//! The impostor drawn on the CPU the way the viewer draws it, and the mesh ray traced from the
//! same orthographic camera, for the fidelity tests. Per pixel of a camera-facing quad over the
//! bounding sphere: the three frames around the camera direction (`octahedral::select_frames`),
//! each intersected with the pixel's ray by a march over its depth field ([`super::march`]), the
//! three surface points, colours and coverages blended by the frames' weights.

use super::capture::{decode_depth, linear_to_srgb, srgb_lut, srgb_to_linear, OrthoCamera, Scene};
use super::march::{combine, frame_hit, sphere_span, March};
use super::octahedral::{frame_basis, frame_direction, select_frames};
use super::{CaptureMesh, Impostor, ImpostorError};

/// An orthographic render over the bounding sphere, `px`×`px`, row 0 at the top.
#[derive(Clone, Debug, PartialEq)]
pub struct Render {
    /// Side in pixels.
    pub px: u32,
    /// Coverage in \[0,1\] (before the alpha test at 0.5).
    pub coverage: Vec<f32>,
    /// sRGB-encoded colour in \[0,1\].
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
/// `px` pixels across the bounding sphere, reconstructed as the viewer does ([`March::VIEWER`]).
pub fn render_impostor(imp: &Impostor, level: usize, dir: [f32; 3], px: u32) -> Render {
    render_impostor_with(imp, level, dir, px, &March::VIEWER)
}

/// [`render_impostor`] with other reconstruction constants (to measure them).
pub fn render_impostor_with(imp: &Impostor, level: usize, dir: [f32; 3], px: u32, m: &March) -> Render {
    let lut = srgb_lut();
    let cam = OrthoCamera::new(dir, px, 1);
    let r = imp.radius;
    let blend = select_frames(imp.layout, imp.grid, dir);
    let frames: Vec<([f32; 3], [f32; 3], [f32; 3])> = blend
        .frames
        .iter()
        .map(|f| {
            let d = frame_direction(imp.layout, imp.grid, f[0], f[1]);
            let (right, up) = frame_basis(d);
            (d, right, up)
        })
        .collect();
    let n = (px * px) as usize;
    let mut out = Render { px, coverage: vec![0.0; n], rgb: vec![[0.0; 3]; n], depth: vec![0.0; n] };
    let step = 2.0 / px as f32;
    let ray: [f32; 3] = (-cam.dir).into();
    for y in 0..px {
        for x in 0..px {
            // The pixel's ray in atlas units, from outside the sphere toward the object.
            let o = cam.right * ((x as f32 + 0.5) * step - 1.0) + cam.up * (1.0 - (y as f32 + 0.5) * step) + cam.dir * 2.0;
            let o: [f32; 3] = o.into();
            let Some(span) = sphere_span(o, ray) else { continue };
            let hits = [0, 1, 2].map(|k| {
                let (dk, right, up) = frames[k];
                let sample = |uv: [f32; 2]| {
                    let (a, z) = sample_view(imp, level, blend.frames[k], uv, lut);
                    (a, z / r)
                };
                frame_hit(m, (dk, right, up), o, ray, span, sample)
            });
            let (albedo, pos) = combine(m, hits, blend.weights, ray);
            let i = (y * px + x) as usize;
            out.coverage[i] = albedo[3].min(1.0);
            if albedo[3] > 0.0 {
                out.rgb[i] = [albedo[0], albedo[1], albedo[2]].map(linear_to_srgb);
                out.depth[i] = -(pos[0] * ray[0] + pos[1] * ray[1] + pos[2] * ray[2]) * r;
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

/// How closely a render matches a reference. Coverage is a fraction per pixel on both sides:
/// the reference's is the share of its samples (≥ 4×4 per pixel for the fidelity bar) that meet
/// a surface passing the alpha test, the impostor's is its blended atlas coverage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fidelity {
    /// Coverage IoU: Σ min(a, b) / Σ max(a, b) over pixels of the two fractional coverages.
    pub iou: f32,
    /// For information: IoU of the pixels whose coverage passes 0.5 (what an alpha test shows).
    pub binary_iou: f32,
    /// RMS of the sRGB colour difference per channel over pixels covered in both, each pixel
    /// weighted by min(a, b).
    pub colour_rms: f32,
    /// Mean |Δdepth| over pixels covered in both, weighted by min(a, b), as a fraction of `radius`.
    pub depth_error: f32,
}

/// Compares `got` with `reference` (same size).
pub fn compare(got: &Render, reference: &Render, radius: f32) -> Fidelity {
    let (mut lo, mut hi, mut inter, mut union) = (0.0f64, 0.0f64, 0usize, 0usize);
    let (mut sq, mut dz, mut wsum) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..got.coverage.len() {
        let (a, b) = (got.coverage[i].clamp(0.0, 1.0), reference.coverage[i].clamp(0.0, 1.0));
        lo += a.min(b) as f64;
        hi += a.max(b) as f64;
        let (pa, pb) = (a >= 0.5, b >= 0.5);
        union += (pa || pb) as usize;
        inter += (pa && pb) as usize;
        let w = a.min(b) as f64;
        if w > 0.0 {
            for c in 0..3 {
                sq += w * ((got.rgb[i][c] - reference.rgb[i][c]) as f64).powi(2);
            }
            dz += w * (got.depth[i] - reference.depth[i]).abs() as f64;
            wsum += w;
        }
    }
    let both = wsum.max(1e-9);
    Fidelity {
        iou: if hi == 0.0 { 1.0 } else { (lo / hi) as f32 },
        binary_iou: if union == 0 { 1.0 } else { inter as f32 / union as f32 },
        colour_rms: (sq / (3.0 * both)).sqrt() as f32,
        depth_error: (dz / both / radius as f64) as f32,
    }
}

/// Samples per pixel side of the fidelity bar's mesh reference (4×4 per pixel).
pub const REFERENCE_SS: u32 = 4;

/// Mean and worst of [`Fidelity`] over a set of directions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep {
    /// Means over the directions.
    pub mean: Fidelity,
    /// Worst per figure (lowest IoUs, highest errors), each over all directions.
    pub worst: Fidelity,
}

impl std::fmt::Display for Sweep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (m, w) = (self.mean, self.worst);
        write!(
            f,
            "coverage IoU {:.3} (worst {:.3}), binary IoU {:.3} ({:.3}), colour RMS {:.4} ({:.4}), depth {:.4} ({:.4}) of the radius",
            m.iou, w.iou, m.binary_iou, w.binary_iou, m.colour_rms, w.colour_rms, m.depth_error, w.depth_error
        )
    }
}

/// The fidelity bar's measurement: mesh (ray traced, [`REFERENCE_SS`]² samples per pixel) and
/// impostor (level 0) rendered from each of `dirs` at the switch distance, where an atlas texel
/// is one screen pixel: `imp.view_px` pixels across the bounding sphere (the viewer switches to
/// impostors at the same rule, `viewer/src/layers/trees/classify.rs`).
pub fn sweep(mesh: &CaptureMesh, imp: &Impostor, dirs: &[[f32; 3]]) -> Result<Sweep, ImpostorError> {
    sweep_with(mesh, imp, dirs, &March::VIEWER)
}

/// [`sweep`] with other reconstruction constants.
pub fn sweep_with(mesh: &CaptureMesh, imp: &Impostor, dirs: &[[f32; 3]], m: &March) -> Result<Sweep, ImpostorError> {
    let scene = Scene::traced(mesh)?;
    let px = imp.view_px;
    let all: Vec<Fidelity> =
        dirs.iter().map(|&d| compare(&render_impostor_with(imp, 0, d, px, m), &render_scene(&scene, d, px, REFERENCE_SS), imp.radius)).collect();
    Ok(Sweep::of(&all))
}

impl Sweep {
    /// Means and worsts of per-direction figures.
    fn of(all: &[Fidelity]) -> Sweep {
        let n = all.len().max(1) as f32;
        let fold = |f: fn(&Fidelity) -> f32, worst: fn(f32, f32) -> f32, init: f32| {
            (all.iter().map(f).sum::<f32>() / n, all.iter().map(f).fold(init, worst))
        };
        let (iou, biou, rms, dz) = (
            fold(|f| f.iou, f32::min, 1.0),
            fold(|f| f.binary_iou, f32::min, 1.0),
            fold(|f| f.colour_rms, f32::max, 0.0),
            fold(|f| f.depth_error, f32::max, 0.0),
        );
        Sweep {
            mean: Fidelity { iou: iou.0, binary_iou: biou.0, colour_rms: rms.0, depth_error: dz.0 },
            worst: Fidelity { iou: iou.1, binary_iou: biou.1, colour_rms: rms.1, depth_error: dz.1 },
        }
    }
}

impl Fidelity {
    /// The bar the bake's tests hold impostors to at the switch distance: these figures (an
    /// impostor's, averaged over directions) within 0.02 coverage IoU, 0.01 colour RMS and a
    /// quarter of a texel of depth of `capture`'s, the mesh's own exact capture drawn half a texel
    /// off ([`resampling_ceiling`]), with `px` texels across the bounding sphere. `Err` names the
    /// figure that misses.
    pub fn against_exact_capture(&self, capture: &Fidelity, px: u32) -> Result<(), String> {
        let quarter_texel = 0.25 * 2.0 / px as f32;
        if self.iou < capture.iou - 0.02 {
            return Err(format!("coverage IoU {:.3} against {:.3} for the exact capture", self.iou, capture.iou));
        }
        if self.colour_rms > capture.colour_rms + 0.01 {
            return Err(format!("colour RMS {:.4} against {:.4} for the exact capture", self.colour_rms, capture.colour_rms));
        }
        if self.depth_error > capture.depth_error + quarter_texel {
            return Err(format!("depth error {:.4} against {:.4} for the exact capture", self.depth_error, capture.depth_error));
        }
        Ok(())
    }
}

/// What any impostor drawn through a texture can reach under the fidelity bar, measured on the
/// mesh itself: its reference render ([`REFERENCE_SS`]² samples a pixel) against the same mesh
/// captured exactly into texels of one pixel (coverage, and colour and depth under cover), placed
/// half a texel off in x and y and read back bilinearly onto the pixels, as a view drawn between
/// the atlas's texel grid and the screen's is. Nothing of the impostor enters: no atlas, no frame
/// blend, no depth march, so the shortfall is the sampling phase alone. [`compare`]'s figures
/// over the directions `dirs`, `px` pixels across.
pub fn resampling_ceiling(mesh: &CaptureMesh, dirs: &[[f32; 3]], px: u32) -> Result<Sweep, ImpostorError> {
    let scene = Scene::traced(mesh)?;
    let ss = REFERENCE_SS as i64;
    let (p, k) = (px as i64, px as i64 * ss);
    let all: Vec<Fidelity> = dirs
        .iter()
        .map(|&d| {
            // One sample per fine pixel: the reference's REFERENCE_SS² samples of every pixel.
            let fine = render_scene(&scene, d, px * REFERENCE_SS, 1);
            let linear: Vec<[f32; 3]> = fine.rgb.iter().map(|c| c.map(srgb_to_linear)).collect();
            // Sums over a pixel-sized block at fine (x0, y0): coverage, then linear colour and
            // depth, each times coverage.
            let block = |x0: i64, y0: i64| {
                let mut sum = [0.0f32; 5];
                for y in y0.max(0)..(y0 + ss).min(k) {
                    for x in x0.max(0)..(x0 + ss).min(k) {
                        let i = (y * k + x) as usize;
                        let c = fine.coverage[i];
                        let [r, g, b] = linear[i];
                        for (s, v) in sum.iter_mut().zip([1.0, r, g, b, fine.depth[i]]) {
                            *s += c * v;
                        }
                    }
                }
                sum
            };
            // Texel (u, v) spans pixels u..u+1 shifted by half a pixel; pixel (i, j)'s centre
            // falls on the corner of texels i−1..i, j−1..j, so bilinear reads their mean.
            let texel = |u: i64, v: i64| block(u * ss + ss / 2, v * ss + ss / 2);
            let n = (px * px) as usize;
            let mut reference = Render { px, coverage: Vec::with_capacity(n), rgb: Vec::with_capacity(n), depth: Vec::with_capacity(n) };
            let mut resampled = reference.clone();
            let push = |out: &mut Render, sum: [f32; 5], samples: f32| {
                let under = |v: f32| if sum[0] > 0.0 { v / sum[0] } else { 0.0 };
                out.coverage.push(sum[0] / samples);
                out.rgb.push([sum[1], sum[2], sum[3]].map(|v| linear_to_srgb(under(v))));
                out.depth.push(under(sum[4]));
            };
            let cells = (ss * ss) as f32;
            for j in 0..p {
                for i in 0..p {
                    push(&mut reference, block(i * ss, j * ss), cells);
                    let four = [texel(i - 1, j - 1), texel(i, j - 1), texel(i - 1, j), texel(i, j)];
                    let sum = four.iter().fold([0.0; 5], |a, t| [0, 1, 2, 3, 4].map(|c| a[c] + t[c]));
                    push(&mut resampled, sum, 4.0 * cells);
                }
            }
            compare(&resampled, &reference, scene.radius)
        })
        .collect();
    Ok(Sweep::of(&all))
}

/// `n` directions spread evenly over the sphere (a Fibonacci lattice), `libm` trigonometry.
pub fn fibonacci_directions(n: usize) -> Vec<[f32; 3]> {
    (0..n)
        .map(|k| {
            let z = 1.0 - 2.0 * (k as f32 + 0.5) / n as f32;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let a = k as f32 * 2.399_963;
            [r * libm::cosf(a), r * libm::sinf(a), z]
        })
        .collect()
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
