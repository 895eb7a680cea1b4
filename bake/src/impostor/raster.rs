//! A deterministic CPU rasteriser for orthographic captures: the atlas views and the cards.
//!
//! Per view the vertices are projected once; every triangle walks the samples of its bounding
//! box with edge functions on fixed-point coordinates (1/256 of a sample), so coverage is exact
//! integer arithmetic, watertight along shared edges (top-left rule) and the same on every CPU.
//! A sample keeps the nearest surface that passes its material's alpha test (texture alpha at
//! the interpolated uv); shading (colour, normal, AO) runs once per kept sample when the samples
//! are resolved into texels. Everything else is plain `f32` arithmetic in a fixed order.

use super::capture::{PixelMean, Scene};
use super::Image;

/// Fixed-point steps per sample (a power of two: `>> SHIFT` is the floor division).
const SUB: i64 = 1 << SHIFT;
const SHIFT: u32 = 8;
/// Projected coordinates are clamped to this many steps, far outside any grid, so that edge
/// function products stay well inside `i64`.
const LIMIT: i64 = 1 << 30;

fn sub3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot3(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// An orthographic grid of `w`×`h` texels, `ss`×`ss` samples each: a point `p` lands at texel
/// coordinates `((p − origin)·right · scale[0], −(p − origin)·up · scale[1])` (0 at the top-left
/// corner, texel centres at +0.5), with depth `(p − origin)·dir` (larger is nearer the viewer).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrthoGrid {
    pub origin: [f32; 3],
    pub right: [f32; 3],
    pub up: [f32; 3],
    /// Toward the viewer.
    pub dir: [f32; 3],
    /// Texels per world unit across and down.
    pub scale: [f32; 2],
    pub w: u32,
    pub h: u32,
    pub ss: u32,
}

/// The nearest passing surface of each sample: its triangle (`u32::MAX`: none) and the
/// barycentric weights of the triangle's vertices 1 and 2.
struct Samples {
    depth: Vec<f32>,
    tri: Vec<u32>,
    bary: Vec<[f32; 2]>,
}

/// Bilinear alpha of `img` at `uv` (repeat), the same arithmetic as [`Image::sample`]'s alpha.
fn alpha_at(img: &Image, uv: [f32; 2]) -> f32 {
    if img.width == 0 || img.height == 0 {
        return 0.0;
    }
    let (w, h) = (img.width as i64, img.height as i64);
    let fx = uv[0] * img.width as f32 - 0.5;
    let fy = uv[1] * img.height as f32 - 0.5;
    if !fx.is_finite() || !fy.is_finite() {
        return 0.0;
    }
    let (x0, y0) = (fx.floor(), fy.floor());
    let (tx, ty) = (fx - x0, fy - y0);
    // Inside the image (the common case) no division is needed.
    let wrap = |v: i64, n: i64| if v >= 0 && v < n { v as usize } else { v.rem_euclid(n) as usize };
    let (xa, xb) = (wrap(x0 as i64, w), wrap(x0 as i64 + 1, w));
    let (ya, yb) = (wrap(y0 as i64, h), wrap(y0 as i64 + 1, h));
    let at = |x: usize, y: usize| img.rgba[(y * img.width as usize + x) * 4 + 3] as f32;
    let top = at(xa, ya) * (1.0 - tx) + at(xb, ya) * tx;
    let bottom = at(xa, yb) * (1.0 - tx) + at(xb, yb) * tx;
    (top * (1.0 - ty) + bottom * ty) / 255.0
}

/// Whether an edge from `a` to `b` owns the samples exactly on it: for a shared edge exactly
/// one of its two triangles (which run it in opposite directions) does.
fn owns_ties(a: [i64; 2], b: [i64; 2]) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    dy > 0 || (dy == 0 && dx < 0)
}

fn edge(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> i64 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// The first sample whose centre is at or right of fixed-point coordinate `lo`, and the last
/// at or left of `hi`, clamped to `0..n`; `None` when the range is empty.
fn sample_range(lo: i64, hi: i64, n: u32) -> Option<(u32, u32)> {
    let first = ((lo - SUB / 2 + SUB - 1) >> SHIFT).max(0);
    let last = ((hi - SUB / 2) >> SHIFT).min(n as i64 - 1);
    (first <= last).then_some((first as u32, last as u32))
}

fn rasterise(scene: &Scene, g: &OrthoGrid) -> Samples {
    let m = scene.mesh;
    let (sw, sh) = (g.w * g.ss, g.h * g.ss);
    let fx = g.scale[0] * g.ss as f32 * SUB as f32;
    let fy = g.scale[1] * g.ss as f32 * SUB as f32;
    let projected: Vec<([i64; 2], f32)> = m
        .positions
        .iter()
        .map(|&p| {
            let d = sub3(p, g.origin);
            // Truncation (one instruction; `round` is a library call without SSE4.1): a bias of
            // under 1/256 of a sample, the same on every CPU.
            let x = ((dot3(d, g.right) * fx) as i64).clamp(-LIMIT, LIMIT);
            let y = ((-dot3(d, g.up) * fy) as i64).clamp(-LIMIT, LIMIT);
            ([x, y], dot3(d, g.dir))
        })
        .collect();
    let n = (sw * sh) as usize;
    let mut s = Samples { depth: vec![f32::NEG_INFINITY; n], tri: vec![u32::MAX; n], bary: vec![[0.0; 2]; n] };
    for (t, ix) in m.indices.chunks_exact(3).enumerate() {
        let mat = &m.textures[m.materials[t] as usize];
        // Vertices in winding order with positive area; `k[i]` is the triangle corner at slot i.
        let mut k = [0usize, 1, 2];
        let mut v = [0, 1, 2].map(|c| projected[ix[c] as usize].0);
        let area = edge(v[0], v[1], v[2]);
        if area == 0 {
            continue;
        }
        if area < 0 {
            k.swap(1, 2);
            v.swap(1, 2);
        }
        let area = area.abs();
        let z = k.map(|c| projected[ix[c] as usize].1);
        let Some((x0, x1)) = sample_range(v[0][0].min(v[1][0]).min(v[2][0]), v[0][0].max(v[1][0]).max(v[2][0]), sw) else { continue };
        let Some((y0, y1)) = sample_range(v[0][1].min(v[1][1]).min(v[2][1]), v[0][1].max(v[1][1]).max(v[2][1]), sh) else { continue };
        // Edge i is opposite slot i: its function is slot i's weight times the area.
        let ends = [(v[1], v[2]), (v[2], v[0]), (v[0], v[1])];
        // Running values are the edge functions plus the tie bias minus one: a sample is inside
        // when all three are non-negative, one sign test on their OR.
        let bias = ends.map(|(a, b)| i64::from(owns_ties(a, b)) - 1);
        let step_x = ends.map(|(a, b)| -(b[1] - a[1]) * SUB);
        let step_y = ends.map(|(a, b)| (b[0] - a[0]) * SUB);
        let start = [x0 as i64 * SUB + SUB / 2, y0 as i64 * SUB + SUB / 2];
        let mut row = [0, 1, 2].map(|c| edge(ends[c].0, ends[c].1, start) + bias[c]);
        let inv_area = 1.0 / area as f32;
        let uvs = k.map(|c| m.uvs[ix[c] as usize]);
        for y in y0..=y1 {
            let mut e = row;
            for x in x0..=x1 {
                if (e[0] | e[1] | e[2]) >= 0 {
                    let e = [0, 1, 2].map(|c| e[c] - bias[c]);
                    let w = e.map(|ei| ei as f32 * inv_area);
                    let depth = w[0] * z[0] + w[1] * z[1] + w[2] * z[2];
                    let i = (y * sw + x) as usize;
                    if depth > s.depth[i] {
                        let pass = match mat.alpha_test {
                            Some(a) => {
                                let uv = [0, 1].map(|c| w[0] * uvs[0][c] + w[1] * uvs[1][c] + w[2] * uvs[2][c]);
                                alpha_at(mat.texture, uv) >= a
                            }
                            None => true,
                        };
                        if pass {
                            // Weights back in the triangle's own corner order.
                            let mut by_corner = [0.0f32; 3];
                            for slot in 0..3 {
                                by_corner[k[slot]] = w[slot];
                            }
                            s.depth[i] = depth;
                            s.tri[i] = t as u32;
                            s.bary[i] = [by_corner[1], by_corner[2]];
                        }
                    }
                }
                for c in 0..3 {
                    e[c] += step_x[c];
                }
            }
            for c in 0..3 {
                row[c] += step_y[c];
            }
        }
    }
    s
}

/// Renders `scene` on grid `g`: per texel the covered fraction of its samples and the means of
/// the covered samples' linear colour, normal, AO and depth (as [`OrthoGrid`] defines it).
pub(crate) fn render(scene: &Scene, g: &OrthoGrid) -> Vec<PixelMean> {
    let s = rasterise(scene, g);
    let sw = (g.w * g.ss) as usize;
    let ss = g.ss as usize;
    let per = (ss * ss) as f32;
    let mut out = vec![PixelMean::default(); (g.w * g.h) as usize];
    for ty in 0..g.h as usize {
        for tx in 0..g.w as usize {
            let p = &mut out[ty * g.w as usize + tx];
            let mut normal = [0.0f32; 3];
            for sy in 0..ss {
                for sx in 0..ss {
                    let i = (ty * ss + sy) * sw + tx * ss + sx;
                    if s.tri[i] == u32::MAX {
                        continue;
                    }
                    let b = s.bary[i];
                    let look = scene.look(s.tri[i] as usize, [1.0 - b[0] - b[1], b[0], b[1]], g.dir);
                    p.hits += 1;
                    for (c, (sum, n)) in normal.iter_mut().zip(look.normal).enumerate() {
                        p.rgb[c] += look.rgb[c];
                        *sum += n;
                    }
                    p.ao += look.ao;
                    p.depth += s.depth[i];
                }
            }
            if p.hits > 0 {
                let n = p.hits as f32;
                p.rgb = p.rgb.map(|v| v / n);
                p.ao /= n;
                p.depth /= n;
                let l = dot3(normal, normal).sqrt();
                p.normal = if l > 0.0 { normal.map(|c| c / l) } else { g.dir };
            }
            p.coverage = p.hits as f32 / per;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::capture::{OrthoCamera, Scene};
    use super::super::synthetic::SyntheticTree;
    use super::super::{CaptureMesh, Image, Material};

    /// A square of side 2 in the XZ plane at y = 0 cut into a fan of thin triangles around an
    /// off-centre point: every sample inside must be covered (no cracks between the shared
    /// edges), which a coverage of 1 everywhere shows, and nothing outside.
    #[test]
    fn shared_edges_are_watertight() {
        let mut positions = vec![[0.137f32, 0.0, -0.291]];
        let n = 37;
        for k in 0..=4 * n {
            let t = k as f32 / n as f32;
            let p = match k / n {
                0 => [-1.0 + 2.0 * t, 0.0, -1.0],
                1 => [1.0, 0.0, -1.0 + 2.0 * (t - 1.0)],
                2 => [1.0 - 2.0 * (t - 2.0), 0.0, 1.0],
                _ => [-1.0, 0.0, 1.0 - 2.0 * (t - 3.0)],
            };
            positions.push(p);
        }
        let indices: Vec<u32> = (1..=4 * n as u32).flat_map(|k| [0, k, k + 1]).collect();
        let v = positions.len();
        let (normals, uvs, ao) = (vec![[0.0, 1.0, 0.0]; v], vec![[0.5, 0.5]; v], vec![1.0; v]);
        let mut tex = Image::new(1, 1);
        tex.set(0, 0, [200, 100, 50, 255]);
        let mats = [Material { texture: &tex, alpha_test: None, two_sided: false }];
        let materials = vec![0u8; indices.len() / 3];
        let mesh =
            CaptureMesh { positions: &positions, normals: &normals, uvs: &uvs, ao: &ao, indices: &indices, materials: &materials, textures: &mats };
        let scene = Scene::new(&mesh);
        // Seen from +Y, the square fills the middle of the view (radius √2: side 2 of 2√2).
        let means = OrthoCamera::new([0.0, 1.0, 0.0], 64, 3).render(&scene);
        let inner: Vec<f32> =
            (0..64 * 64).filter(|i| (12..52).contains(&(i % 64)) && (12..52).contains(&(i / 64))).map(|i| means[i].coverage).collect();
        assert!(inner.iter().all(|&c| c == 1.0), "cracks: {:?}", inner.iter().filter(|&&c| c != 1.0).count());
        let corner = means[0].coverage + means[63].coverage + means[64 * 63].coverage;
        assert_eq!(corner, 0.0);
    }

    /// The rasteriser and the ray tracer agree on the synthetic tree: coverage, colour, depth.
    #[test]
    fn rasteriser_agrees_with_the_ray_tracer() {
        let tree = SyntheticTree::new(600, 4);
        let mats = tree.materials();
        let mesh = tree.mesh(&mats);
        let scene = Scene::traced(&mesh).unwrap();
        for dir in [[0.0, 0.0, 1.0], [0.6, -0.8, 0.0], [0.3, 0.4, -0.866]] {
            let cam = OrthoCamera::new(dir, 48, 2);
            let (a, b) = (cam.render(&scene), cam.trace(&scene));
            let (mut cov, mut rgb, mut depth, mut both) = (0.0f32, 0.0f32, 0.0f32, 0);
            for (p, q) in a.iter().zip(&b) {
                cov += (p.coverage - q.coverage).abs();
                if p.hits == 4 && q.hits == 4 {
                    both += 1;
                    rgb += (0..3).map(|c| (p.rgb[c] - q.rgb[c]).abs()).sum::<f32>();
                    depth += (p.depth - q.depth).abs();
                }
            }
            let n = a.len() as f32;
            assert!(both > 200, "{dir:?}: {both}");
            // Edge samples may differ by the 1/256-sample snapping and the tie rule only.
            assert!(cov / n < 0.01, "{dir:?}: coverage differs by {}", cov / n);
            assert!(rgb / both as f32 / 3.0 < 0.01, "{dir:?}: colour differs by {}", rgb / both as f32 / 3.0);
            assert!(depth / both as f32 / scene.radius < 0.002, "{dir:?}: depth differs by {}", depth / both as f32);
        }
    }
}
