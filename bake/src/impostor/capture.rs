//! Orthographic captures of a textured mesh: the atlas views and cards are rasterised
//! (`super::raster`); the fidelity tests' reference renders trace a grid of parallel rays,
//! several per texel, through the ray engine, passing alpha-tested surfaces whose texture alpha
//! fails the test by tracing on from just past the hit.

use super::{raster, CaptureMesh, ImpostorError};
use crate::rays::{Bvh, Hit, Ray};
use glam::Vec3A;

/// How many times a ray may pass through cut-out texels before it counts as a miss (a guard; a
/// ray through a dense crown passes a few dozen at most).
const MAX_LAYERS: usize = 256;

/// sRGB byte to linear, from the exact formula through `libm` (the same bits on every CPU).
pub(crate) fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        libm::powf((c + 0.055) / 1.055, 2.4)
    }
}

/// Linear to an sRGB-encoded value in \[0,1\].
pub(crate) fn linear_to_srgb(l: f32) -> f32 {
    let l = l.clamp(0.0, 1.0);
    if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * libm::powf(l, 1.0 / 2.4) - 0.055
    }
}

/// sRGB byte → linear, computed once.
pub(crate) fn srgb_lut() -> &'static [f32; 256] {
    static LUT: std::sync::OnceLock<[f32; 256]> = std::sync::OnceLock::new();
    LUT.get_or_init(|| std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0)))
}

/// Linear to the rounded sRGB byte without a `powf` per call: the byte is the number of byte
/// midpoints (decoded to linear, computed once) at or below `l`.
pub(crate) fn linear_to_srgb8(l: f32) -> u8 {
    static MIDPOINTS: std::sync::OnceLock<[f32; 255]> = std::sync::OnceLock::new();
    let mid = MIDPOINTS.get_or_init(|| std::array::from_fn(|b| srgb_to_linear((b as f32 + 0.5) / 255.0)));
    mid.partition_point(|&t| t <= l) as u8
}

/// A float in \[0,1\] to a byte, rounded.
pub(crate) fn unorm8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

/// The centre and radius of a sphere around every point: the box's centre and the farthest
/// point from it (recomputed from the vertices; the mesh's nominal size is not trusted).
pub fn bounding_sphere(positions: &[[f32; 3]]) -> ([f32; 3], f32) {
    if positions.is_empty() {
        return ([0.0; 3], 0.0);
    }
    let (mut lo, mut hi) = (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY));
    for p in positions {
        lo = lo.min(Vec3A::from(*p));
        hi = hi.max(Vec3A::from(*p));
    }
    let c = (lo + hi) * 0.5;
    let r2 = positions.iter().map(|p| (Vec3A::from(*p) - c).length_squared()).fold(0.0f32, f32::max);
    (c.into(), r2.sqrt())
}

/// A mesh ready to capture: its bounding sphere, and a BVH when it is to be ray traced (the
/// fidelity tests' reference renders; the bake itself rasterises).
pub(crate) struct Scene<'m, 'a> {
    pub mesh: &'m CaptureMesh<'a>,
    bvh: Option<Bvh>,
    pub center: Vec3A,
    pub radius: f32,
    /// sRGB byte → linear.
    lut: &'static [f32; 256],
}

/// The shading of a surface point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Look {
    /// Linear texture colour.
    pub rgb: [f32; 3],
    /// Interpolated shading normal (unit), turned toward the viewer on two-sided materials.
    pub normal: [f32; 3],
    pub ao: f32,
}

/// What a ray found: its parameter and the surface's shading there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Surface {
    pub t: f32,
    pub look: Look,
}

impl<'m, 'a> Scene<'m, 'a> {
    /// A scene to rasterise (no BVH). The indices must have been checked against the positions.
    pub fn new(mesh: &'m CaptureMesh<'a>) -> Scene<'m, 'a> {
        let (center, radius) = bounding_sphere(mesh.positions);
        let lut = srgb_lut();
        // A flat or point-like mesh still gets a sphere rays can be laid in.
        Scene { mesh, bvh: None, center: center.into(), radius: radius.max(1e-6), lut }
    }

    /// A scene to ray trace.
    pub fn traced(mesh: &'m CaptureMesh<'a>) -> Result<Scene<'m, 'a>, ImpostorError> {
        let bvh = Bvh::build(mesh.positions, mesh.indices)?;
        Ok(Scene { bvh: Some(bvh), ..Scene::new(mesh) })
    }

    /// The texture sample of triangle `tri` at barycentric weights `w`.
    fn texel(&self, tri: usize, w: [f32; 3]) -> [f32; 4] {
        let m = self.mesh;
        let ix = [0, 1, 2].map(|k| m.indices[3 * tri + k] as usize);
        let uv = [0, 1].map(|c| w[0] * m.uvs[ix[0]][c] + w[1] * m.uvs[ix[1]][c] + w[2] * m.uvs[ix[2]][c]);
        m.textures[m.materials[tri] as usize].texture.sample(uv)
    }

    /// The shading of triangle `tri` at barycentric weights `w`, seen from direction `toward`
    /// (unit, surface toward viewer).
    pub fn look(&self, tri: usize, w: [f32; 3], toward: [f32; 3]) -> Look {
        self.look_with(tri, w, toward, self.texel(tri, w))
    }

    fn look_with(&self, tri: usize, w: [f32; 3], toward: [f32; 3], texel: [f32; 4]) -> Look {
        let m = self.mesh;
        let ix = [0, 1, 2].map(|k| m.indices[3 * tri + k] as usize);
        let mut n = [0, 1, 2].map(|c| w[0] * m.normals[ix[0]][c] + w[1] * m.normals[ix[1]][c] + w[2] * m.normals[ix[2]][c]);
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        n = if l > 0.0 { n.map(|c| c / l) } else { toward };
        if m.textures[m.materials[tri] as usize].two_sided && n[0] * toward[0] + n[1] * toward[1] + n[2] * toward[2] < 0.0 {
            n = n.map(|c| -c);
        }
        let ao = w[0] * m.ao[ix[0]] + w[1] * m.ao[ix[1]] + w[2] * m.ao[ix[2]];
        // Bilinear sRGB bytes are decoded by interpolating the table (what a GPU's sRGB sampler
        // approximates closely enough at these sizes).
        let rgb = [0, 1, 2].map(|c| {
            let f = texel[c] * 255.0;
            let i = (f as usize).min(254);
            let t = f - i as f32;
            self.lut[i] * (1.0 - t) + self.lut[i + 1] * t
        });
        Look { rgb, normal: n, ao }
    }

    /// The surface at a hit, or `None` when the texture's alpha there fails the material's test.
    fn shade(&self, ray: &Ray, h: &Hit) -> Option<Surface> {
        let tri = h.tri as usize;
        let w = [1.0 - h.u - h.v, h.u, h.v];
        let texel = self.texel(tri, w);
        if self.mesh.textures[self.mesh.materials[tri] as usize].alpha_test.is_some_and(|a| texel[3] < a) {
            return None;
        }
        let toward = -ray.dir.normalize_or_zero();
        Some(Surface { t: h.t, look: self.look_with(tri, w, toward.into(), texel) })
    }

    /// The first surface each ray meets that passes its alpha test (all misses without a BVH);
    /// `rays` is used as scratch.
    pub fn trace(&self, rays: &mut [Ray], out: &mut [Option<Surface>]) {
        out.iter_mut().for_each(|o| *o = None);
        let Some(bvh) = &self.bvh else { return };
        let mut hits = vec![None; rays.len()];
        bvh.intersect_stream(rays, &mut hits);
        let mut pending: Vec<usize> = (0..rays.len()).collect();
        let mut retry = Vec::new();
        for _ in 0..MAX_LAYERS {
            retry.clear();
            for (k, &i) in pending.iter().enumerate() {
                out[i] = None;
                let Some(h) = hits[k] else { continue };
                match self.shade(&rays[i], &h) {
                    Some(s) => out[i] = Some(s),
                    None => {
                        // Past the cut-out texel: the next float above its t, so the same
                        // triangle (and its quad's twin through a shared edge) is not met again.
                        rays[i].tmin = f32::from_bits(h.t.max(0.0).to_bits() + 1);
                        retry.push(i);
                    }
                }
            }
            if retry.is_empty() {
                return;
            }
            let again: Vec<Ray> = retry.iter().map(|&i| rays[i]).collect();
            hits.truncate(again.len());
            bvh.intersect_stream(&again, &mut hits);
            std::mem::swap(&mut pending, &mut retry);
        }
        pending.iter().for_each(|&i| out[i] = None);
    }
}

/// One square view's maps, `px`×`px` texels, row 0 at the top.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewMaps {
    /// Side in texels.
    pub px: u32,
    /// Colour as sRGB bytes, alpha = coverage.
    pub albedo: Vec<[u8; 4]>,
    /// Object-space normal `xyz*0.5+0.5`, alpha = AO.
    pub normal: Vec<[u8; 4]>,
    /// Depth along the view direction relative to the centre, `[-r, r]` → `[0, 65535]`.
    pub depth: Vec<u16>,
}

/// An orthographic camera looking along `-dir` at the sphere around `center`: `px`×`px` pixels
/// spanning the sphere's diameter, `ss`×`ss` rays per pixel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrthoCamera {
    pub dir: Vec3A,
    pub right: Vec3A,
    pub up: Vec3A,
    pub px: u32,
    pub ss: u32,
}

impl OrthoCamera {
    pub fn new(dir: [f32; 3], px: u32, ss: u32) -> OrthoCamera {
        let (right, up) = super::octahedral::frame_basis(dir);
        OrthoCamera { dir: dir.into(), right: right.into(), up: up.into(), px, ss }
    }

    /// The camera's sample grid (see [`raster::OrthoGrid`]).
    fn grid(&self, scene: &Scene) -> raster::OrthoGrid {
        let (c, r) = (scene.center, scene.radius);
        let origin = c - self.right * r + self.up * r;
        let s = self.px as f32 / (2.0 * r);
        raster::OrthoGrid {
            origin: origin.into(),
            right: self.right.into(),
            up: self.up.into(),
            dir: self.dir.into(),
            scale: [s, s],
            w: self.px,
            h: self.px,
            ss: self.ss,
        }
    }

    /// Rasterises `scene` through the camera: per pixel, the covered fraction of its samples and
    /// the means of the covered samples' linear colour, normal, AO and depth (world units along
    /// `dir` from the centre).
    pub fn render(&self, scene: &Scene) -> Vec<PixelMean> {
        raster::render(scene, &self.grid(scene))
    }

    /// [`OrthoCamera::render`] by ray tracing (`scene` needs its BVH): the fidelity tests'
    /// independent reference.
    pub fn trace(&self, scene: &Scene) -> Vec<PixelMean> {
        let (c, r) = (scene.center, scene.radius);
        let step = 2.0 * r / self.px as f32;
        let back = r * 1.01;
        let at = |x: f32, y: f32| c + self.right * (x * step - r) + self.up * (r - y * step) + self.dir * back;
        trace_grid(scene, self.px, self.px, self.ss, at, -self.dir, back)
    }

    /// [`OrthoCamera::render`] packed into a view's maps (empty texels zero, for dilation to fill).
    pub fn capture(&self, scene: &Scene) -> ViewMaps {
        let means = self.render(scene);
        let r = scene.radius;
        let mut v = ViewMaps { px: self.px, albedo: vec![[0; 4]; means.len()], normal: vec![[0; 4]; means.len()], depth: vec![0; means.len()] };
        for (i, p) in means.iter().enumerate() {
            if p.hits == 0 {
                continue;
            }
            (v.albedo[i], v.normal[i]) = pack(p);
            v.depth[i] = encode_depth(p.depth, r);
        }
        v
    }
}

/// Ray traces a `w`×`h` pixel grid of parallel rays along `dir`, `ss`×`ss` per pixel: `at(x, y)`
/// is the ray origin for pixel coordinates (0 at the grid's top-left corner, pixel centres at
/// +0.5); depth is `back − t`, toward the origin side.
fn trace_grid(scene: &Scene, w: u32, h: u32, ss: u32, at: impl Fn(f32, f32) -> Vec3A, dir: Vec3A, back: f32) -> Vec<PixelMean> {
    let (fw, fh) = (w * ss, h * ss);
    let inv = 1.0 / ss as f32;
    let mut rays: Vec<Ray> = Vec::with_capacity((fw * fh) as usize);
    for y in 0..fh {
        for x in 0..fw {
            let origin = at((x as f32 + 0.5) * inv, (y as f32 + 0.5) * inv);
            rays.push(Ray { origin, dir, tmin: 0.0, tmax: 2.0 * back });
        }
    }
    let mut found = vec![None; rays.len()];
    scene.trace(&mut rays, &mut found);
    let mut out = vec![PixelMean::default(); (w * h) as usize];
    let mut normals = vec![Vec3A::ZERO; out.len()];
    let ss = ss as usize;
    for (k, s) in found.iter().enumerate() {
        let Some(s) = s else { continue };
        let (fx, fy) = (k % fw as usize, k / fw as usize);
        let i = (fy / ss) * w as usize + fx / ss;
        let p = &mut out[i];
        p.hits += 1;
        for ch in 0..3 {
            p.rgb[ch] += s.look.rgb[ch];
        }
        normals[i] += Vec3A::from(s.look.normal);
        p.ao += s.look.ao;
        p.depth += back - s.t;
    }
    let per = (ss * ss) as f32;
    for (p, n) in out.iter_mut().zip(normals) {
        if p.hits > 0 {
            let k = p.hits as f32;
            p.rgb = p.rgb.map(|v| v / k);
            p.normal = n.normalize_or(-dir).into();
            p.ao /= k;
            p.depth /= k;
        }
        p.coverage = p.hits as f32 / per;
    }
    out
}

/// Colour (sRGB, A = coverage) and normal (`xyz*0.5+0.5`, A = AO) bytes of a pixel's means.
fn pack(p: &PixelMean) -> ([u8; 4], [u8; 4]) {
    if p.hits == 0 {
        return ([0; 4], [0; 4]);
    }
    let rgb = p.rgb.map(linear_to_srgb8);
    let n = p.normal;
    (
        [rgb[0], rgb[1], rgb[2], unorm8(p.coverage).max(1)],
        [unorm8(n[0] * 0.5 + 0.5), unorm8(n[1] * 0.5 + 0.5), unorm8(n[2] * 0.5 + 0.5), unorm8(p.ao)],
    )
}

/// A card: the box `lo..hi` seen from +Y (rays along −Y), column 0 at `lo.x`, row 0 at `hi.z`;
/// returns RGBA8 colour and normal bytes.
pub(crate) fn capture_rect(scene: &Scene, lo: [f32; 3], hi: [f32; 3], w: u32, h: u32, ss: u32) -> (Vec<u8>, Vec<u8>) {
    let grid = raster::OrthoGrid {
        origin: [lo[0], hi[1], hi[2]],
        right: [1.0, 0.0, 0.0],
        up: [0.0, 0.0, 1.0],
        dir: [0.0, 1.0, 0.0],
        scale: [w as f32 / (hi[0] - lo[0]), h as f32 / (hi[2] - lo[2])],
        w,
        h,
        ss,
    };
    let means = raster::render(scene, &grid);
    let (mut albedo, mut normal) = (Vec::with_capacity(means.len() * 4), Vec::with_capacity(means.len() * 4));
    for p in &means {
        let (a, n) = pack(p);
        albedo.extend_from_slice(&a);
        normal.extend_from_slice(&n);
    }
    (albedo, normal)
}

/// Depth in `[-r, r]` (world units toward the viewer from the centre) to a u16.
pub fn encode_depth(depth: f32, radius: f32) -> u16 {
    ((depth / radius * 0.5 + 0.5).clamp(0.0, 1.0) * 65535.0 + 0.5) as u16
}

/// A u16 depth back to world units from the centre ([`encode_depth`] undone).
pub fn decode_depth(d: u16, radius: f32) -> f32 {
    (d as f32 / 65535.0 * 2.0 - 1.0) * radius
}

/// One pixel of an orthographic render: what its rays hit, averaged.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PixelMean {
    pub hits: u32,
    /// Fraction of the pixel's rays that hit.
    pub coverage: f32,
    pub rgb: [f32; 3],
    pub normal: [f32; 3],
    pub ao: f32,
    /// Along the camera direction from the sphere's centre (toward the camera positive).
    pub depth: f32,
}
