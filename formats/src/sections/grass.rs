//! Grass sections: the shared grass pack's unique patches with their LOD chains (`GPAT`), and a tile
//! pack's ground maps and patch instances (`GRSS`). Layouts in `formats/SPEC.md`.

use super::codec::ByteWriter;
use super::ByteReader;
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::Section;

/// Most levels of detail a patch may have.
pub const MAX_GRASS_LEVELS: usize = 16;
/// Most segments a blade may be drawn with.
pub const MAX_BLADE_SEGMENTS: u32 = 8;
/// Largest ground map side in samples.
pub const MAX_GRASS_MAP: u32 = 4097;
/// `parent` of a blade in a patch's last level.
pub const NO_PARENT: u32 = u32::MAX;

/// One blade of grass in patch-local coordinates (base at z = 0, Z up, world units). Its area is
/// `width · length / 2` at every level: a strip of arc length `length` tapering linearly to a point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GrassBlade {
    /// Base centre, in `[0, patch_size)²`.
    pub position: [f32; 2],
    /// Unit direction from the base to the tip before bending.
    pub direction: [f32; 3],
    /// Unit face normal, perpendicular to `direction`; the width runs along `direction × normal`.
    pub normal: [f32; 3],
    /// Arc length from base to tip.
    pub length: f32,
    /// Width at the base.
    pub width: f32,
    /// Tip droop as a fraction of the length, in `[0, 1)`.
    pub bend: f32,
    /// Linear RGB albedo.
    pub color: [f32; 3],
    /// Index of the blade of the next level this one was merged into; [`NO_PARENT`] in the last level.
    pub parent: u32,
}

impl GrassBlade {
    /// The blade's one-sided area, `width · length / 2`.
    pub fn area(&self) -> f32 {
        0.5 * self.width * self.length
    }
}

/// One level of detail of a patch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassLevel {
    /// Segments each blade of this level is drawn with (1 = one triangle).
    pub segments: u32,
    /// The blades.
    pub blades: Vec<GrassBlade>,
}

/// A flower in patch-local coordinates, drawn only where level 0 is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Flower {
    /// Stem base, in `[0, patch_size)²`.
    pub position: [f32; 2],
    /// Stem height.
    pub height: f32,
    /// Radius of the head.
    pub radius: f32,
    /// Linear RGB colour of the head.
    pub color: [f32; 3],
}

/// One unique patch: its chain of levels (level 0 the full blades) and its flowers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassPatch {
    /// Level 0 first; each level's blades name their parent in the next.
    pub levels: Vec<GrassLevel>,
    /// Flowers (not merged).
    pub flowers: Vec<Flower>,
}

/// `GPAT` (optional, shared grass pack): the bake's unique grass patches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassPatches {
    /// Side of every patch in world units.
    pub patch_size: f32,
    /// Area-weighted mean blade colour, the same at every level: the terrain's tint beyond the grass.
    pub tint: [f32; 3],
    /// The patches; instances name them by index. All have the same number of levels.
    pub patches: Vec<GrassPatch>,
}

impl GrassPatches {
    /// Levels per patch (0 without patches).
    pub fn levels(&self) -> usize {
        self.patches.first().map_or(0, |p| p.levels.len())
    }
}

/// One placement of a unique patch in a level-0 tile.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GrassInstance {
    /// World xy of the patch's min corner.
    pub origin: [f32; 2],
    /// Quarter turns about the patch centre, 0–3.
    pub rotation: u8,
    /// Index into `GPAT`'s patches.
    pub patch: u16,
    /// Multiplies every blade's length.
    pub height_scale: f32,
}

impl GrassInstance {
    /// World xy of the patch-local point `p` (a blade's base) of this instance.
    pub fn world_xy(&self, p: [f32; 2], patch_size: f32) -> [f32; 2] {
        patch_point_to_world(self.origin, self.rotation, p, patch_size)
    }
}

/// World xy of patch-local point `p` of an instance at `origin` turned by `rotation` counter-clockwise
/// quarter turns about the patch centre `c`: `origin + R(rotation)·(p − c) + c` (formats/SPEC.md, `GRSS`).
pub fn patch_point_to_world(origin: [f32; 2], rotation: u8, p: [f32; 2], patch_size: f32) -> [f32; 2] {
    let c = 0.5 * patch_size;
    let (x, y) = (p[0] - c, p[1] - c);
    let (rx, ry) = match rotation & 3 {
        0 => (x, y),
        1 => (-y, x),
        2 => (-x, -y),
        _ => (y, -x),
    };
    [origin[0] + c + rx, origin[1] + c + ry]
}

/// `GRSS` (optional, tile pack): the ground under the tile's grass as maps over its footprint, and (in
/// level-0 tiles) the patch instances that stand on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassTile {
    /// xxh3-64 of the shared grass pack the instances index (its `SHRD` content hash).
    pub patches_hash: u64,
    /// World xy of sample (0, 0).
    pub origin: [f32; 2],
    /// World units between samples.
    pub spacing: f32,
    /// Samples per side.
    pub size: u32,
    /// z of height 0.
    pub height_min: f32,
    /// z per height step.
    pub height_step: f32,
    /// z of the topmost surface (the ground open to the sky), `size²`, x fastest.
    pub heights: Vec<u16>,
    /// Fraction of blades kept (× 255), `size²`; 0 where no grass grows.
    pub keep: Vec<u8>,
    /// Baked irradiance at the ground (sky, bounces, static lights; not the sun), rgb9e5, `size²`.
    pub light: Vec<u32>,
    /// The patch instances (level-0 tiles only).
    pub instances: Vec<GrassInstance>,
}

impl GrassTile {
    fn bilinear(&self, x: f32, y: f32, value: impl Fn(usize) -> f32) -> f32 {
        let n = self.size as usize;
        let last = (n - 1) as f32;
        let u = ((x - self.origin[0]) / self.spacing).clamp(0.0, last);
        let v = ((y - self.origin[1]) / self.spacing).clamp(0.0, last);
        let (i, j) = ((u as usize).min(n - 2), (v as usize).min(n - 2));
        let (fu, fv) = (u - i as f32, v - j as f32);
        let at = |a: usize, b: usize| value(b * n + a);
        let lo = at(i, j) * (1.0 - fu) + at(i + 1, j) * fu;
        let hi = at(i, j + 1) * (1.0 - fu) + at(i + 1, j + 1) * fu;
        lo * (1.0 - fv) + hi * fv
    }

    /// The ground's z at world `(x, y)`, bilinear, clamped to the map.
    pub fn height_at(&self, x: f32, y: f32) -> f32 {
        self.bilinear(x, y, |k| self.height_min + self.heights[k] as f32 * self.height_step)
    }

    /// The fraction of blades kept at world `(x, y)`, bilinear, clamped to the map.
    pub fn keep_at(&self, x: f32, y: f32) -> f32 {
        self.bilinear(x, y, |k| self.keep[k] as f32 / 255.0)
    }

    pub(crate) fn summary(&self) -> super::Summary {
        let grassy = self.keep.iter().filter(|&&k| k > 0).count();
        vec![
            ("map", format!("{0}×{0} samples every {1}", self.size, self.spacing)),
            ("grassy", format!("{:.1} % of samples", 100.0 * grassy as f64 / self.keep.len().max(1) as f64)),
            ("instances", self.instances.len().to_string()),
            ("patches_pack", format!("{:016x}", self.patches_hash)),
        ]
    }
}

const BLADE_FLOATS: usize = 15;

fn write_blade(w: &mut ByteWriter, b: &GrassBlade) {
    w.f32s(&b.position);
    w.f32s(&b.direction);
    w.f32s(&b.normal);
    w.f32(b.length);
    w.f32(b.width);
    w.f32(b.bend);
    w.f32s(&b.color);
    w.u32(b.parent);
}

impl Section for GrassPatches {
    const KIND: SectionKind = SectionKind(*b"GPAT");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let k = Self::KIND;
        let mut w = ByteWriter::default();
        w.f32(self.patch_size);
        w.f32s(&self.tint);
        w.count(k, self.levels())?;
        w.count(k, self.patches.len())?;
        for p in &self.patches {
            if p.levels.len() != self.levels() {
                return Err(FormatError::Encode { section: k, reason: "patches with different numbers of levels".into() });
            }
            for l in &p.levels {
                w.u32(l.segments);
                w.count(k, l.blades.len())?;
                l.blades.iter().for_each(|b| write_blade(&mut w, b));
            }
            w.count(k, p.flowers.len())?;
            for f in &p.flowers {
                w.f32s(&f.position);
                w.f32(f.height);
                w.f32(f.radius);
                w.f32s(&f.color);
            }
        }
        Ok(w.0)
    }

    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let k = Self::KIND;
        let mut r = ByteReader::new(k, raw);
        let [patch_size, t0, t1, t2] = r.finite_arrays::<4>(1, "patch size and tint")?[0];
        if patch_size <= 0.0 {
            return Err(bad(k, format!("patch size {patch_size}")));
        }
        let levels = r.u32()? as usize;
        if !(1..=MAX_GRASS_LEVELS).contains(&levels) {
            return Err(bad(k, format!("{levels} levels (1 to {MAX_GRASS_LEVELS})")));
        }
        let n = r.count(4 * levels + 4, "patches")?;
        let mut patches = Vec::with_capacity(n);
        for pi in 0..n {
            let mut chain: Vec<GrassLevel> = Vec::with_capacity(levels);
            for li in 0..levels {
                let segments = r.u32()?;
                if !(1..=MAX_BLADE_SEGMENTS).contains(&segments) {
                    return Err(bad(k, format!("patch {pi} level {li}: {segments} segments (1 to {MAX_BLADE_SEGMENTS})")));
                }
                let count = r.count(4 * (BLADE_FLOATS - 1) + 4, "blades")?;
                let mut blades = Vec::with_capacity(count);
                for bi in 0..count {
                    let raw_blade = r.take(4 * BLADE_FLOATS)?;
                    let mut sub = ByteReader::new(k, raw_blade);
                    let floats = sub.finite_arrays::<{ BLADE_FLOATS - 1 }>(1, "blade values")?[0];
                    let parent = sub.u32()?;
                    let b = GrassBlade {
                        position: [floats[0], floats[1]],
                        direction: [floats[2], floats[3], floats[4]],
                        normal: [floats[5], floats[6], floats[7]],
                        length: floats[8],
                        width: floats[9],
                        bend: floats[10],
                        color: [floats[11], floats[12], floats[13]],
                        parent,
                    };
                    check_blade(k, pi, li, bi, &b, patch_size)?;
                    blades.push(b);
                }
                if let Some(prev) = chain.last() {
                    if let Some(bi) = prev.blades.iter().position(|b| b.parent as usize >= blades.len()) {
                        return Err(bad(
                            k,
                            format!("patch {pi} level {}: blade {bi} names parent {} of {}", li - 1, prev.blades[bi].parent, blades.len()),
                        ));
                    }
                }
                chain.push(GrassLevel { segments, blades });
            }
            if let Some(bi) = chain.last().and_then(|l| l.blades.iter().position(|b| b.parent != NO_PARENT)) {
                return Err(bad(k, format!("patch {pi}: blade {bi} of the last level names a parent")));
            }
            let fcount = r.count(28, "flowers")?;
            let flowers = r
                .finite_arrays::<7>(fcount, "flower values")?
                .into_iter()
                .map(|v| Flower { position: [v[0], v[1]], height: v[2], radius: v[3], color: [v[4], v[5], v[6]] })
                .collect::<Vec<_>>();
            if let Some(f) = flowers.iter().find(|f| f.height < 0.0 || f.radius < 0.0) {
                return Err(bad(k, format!("patch {pi}: a flower of height {} and radius {}", f.height, f.radius)));
            }
            patches.push(GrassPatch { levels: chain, flowers });
        }
        r.finish()?;
        Ok(GrassPatches { patch_size, tint: [t0, t1, t2], patches })
    }
}

fn check_blade(k: SectionKind, patch: usize, level: usize, index: usize, b: &GrassBlade, patch_size: f32) -> Result<(), FormatError> {
    let problem = if b.length < 0.0 || b.width < 0.0 {
        Some(format!("length {} and width {}", b.length, b.width))
    } else if !(0.0..1.0).contains(&b.bend) {
        Some(format!("bend {}", b.bend))
    } else if b.position.iter().any(|&c| !(-patch_size..2.0 * patch_size).contains(&c)) {
        // Merged blades sit at weighted means of blades inside the patch; a margin allows rounding.
        Some(format!("base {:?} outside the patch", b.position))
    } else {
        None
    };
    match problem {
        Some(p) => Err(bad(k, format!("patch {patch} level {level} blade {index}: {p}"))),
        None => Ok(()),
    }
}

impl GrassPatches {
    pub(crate) fn summary(&self) -> super::Summary {
        // One key per level: the summary becomes a JSON object, where a repeated key would keep only the last level.
        const LEVEL_KEYS: [&str; MAX_GRASS_LEVELS] = [
            "level 0", "level 1", "level 2", "level 3", "level 4", "level 5", "level 6", "level 7", "level 8", "level 9", "level 10", "level 11",
            "level 12", "level 13", "level 14", "level 15",
        ];
        let mut out = vec![
            ("patches", self.patches.len().to_string()),
            ("patch_size", self.patch_size.to_string()),
            ("tint", format!("{:.3} {:.3} {:.3} (linear)", self.tint[0], self.tint[1], self.tint[2])),
        ];
        for (level, key) in LEVEL_KEYS.iter().enumerate().take(self.levels()) {
            let counts = self.patches.iter().map(|p| p.levels[level].blades.len());
            let (blades, lo, hi) = (counts.clone().sum::<usize>(), counts.clone().min().unwrap_or(0), counts.max().unwrap_or(0));
            let area: f64 = self.patches.iter().flat_map(|p| &p.levels[level].blades).map(|b| b.area() as f64).sum();
            let segments = self.patches[0].levels[level].segments;
            out.push((key, format!("{blades} blades ({lo}..{hi} per patch), area {area:.6}, {segments} segments")));
        }
        let level0 = || self.patches.iter().flat_map(|p| p.levels.first()).flat_map(|l| &l.blades);
        let n = level0().count();
        if n > 0 {
            let mean = |f: fn(&GrassBlade) -> f32| level0().map(|b| f64::from(f(b))).sum::<f64>() / n as f64;
            out.push((
                "blade",
                format!("mean length {:.4}, width {:.4}, bend {:.2} (level 0)", mean(|b| b.length), mean(|b| b.width), mean(|b| b.bend)),
            ));
        }
        let flowers: usize = self.patches.iter().map(|p| p.flowers.len()).sum();
        out.push(("flowers", flowers.to_string()));
        out
    }
}

impl Section for GrassTile {
    const KIND: SectionKind = SectionKind(*b"GRSS");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let k = Self::KIND;
        let cells = (self.size as usize).pow(2);
        if self.heights.len() != cells || self.keep.len() != cells || self.light.len() != cells {
            return Err(FormatError::Encode { section: k, reason: format!("maps of {cells} samples have other lengths") });
        }
        let mut w = ByteWriter::default();
        w.u64(self.patches_hash);
        w.f32s(&self.origin);
        w.f32(self.spacing);
        w.f32(self.height_min);
        w.f32(self.height_step);
        w.u32(self.size);
        self.heights.iter().for_each(|&h| w.u16(h));
        w.bytes(&self.keep);
        self.light.iter().for_each(|&l| w.u32(l));
        w.count(k, self.instances.len())?;
        for i in &self.instances {
            w.f32s(&i.origin);
            w.f32(i.height_scale);
            w.u16(i.patch);
            w.u8(i.rotation);
        }
        Ok(w.0)
    }

    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let k = Self::KIND;
        let mut r = ByteReader::new(k, raw);
        let patches_hash = r.u64()?;
        let [ox, oy, spacing, height_min, height_step] = r.finite_arrays::<5>(1, "map placement")?[0];
        if spacing <= 0.0 || height_step < 0.0 {
            return Err(bad(k, format!("map spacing {spacing} and height step {height_step}")));
        }
        let size = r.u32()?;
        if !(2..=MAX_GRASS_MAP).contains(&size) {
            return Err(bad(k, format!("a {size}-sample map side (2 to {MAX_GRASS_MAP})")));
        }
        let cells = (size as usize).pow(2);
        if cells.saturating_mul(7) > r.remaining() {
            return Err(bad(k, format!("{size}² map samples cannot fit in the {} bytes left", r.remaining())));
        }
        let heights = r.u16s(cells)?;
        let keep = r.take(cells)?.to_vec();
        let light = r.u32s(cells)?;
        let n = r.count(15, "instances")?;
        let mut instances = Vec::with_capacity(n);
        for _ in 0..n {
            let [x, y, height_scale] = r.finite_arrays::<3>(1, "instance values")?[0];
            let (patch, rotation) = (r.u16()?, r.u8()?);
            if rotation > 3 || height_scale <= 0.0 {
                return Err(bad(k, format!("an instance with rotation {rotation} and height scale {height_scale}")));
            }
            instances.push(GrassInstance { origin: [x, y], rotation, patch, height_scale });
        }
        r.finish()?;
        Ok(GrassTile { patches_hash, origin: [ox, oy], spacing, size, height_min, height_step, heights, keep, light, instances })
    }
}

#[cfg(test)]
#[path = "grass_tests.rs"]
mod tests;
