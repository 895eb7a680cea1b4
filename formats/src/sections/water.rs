//! Water sections: the shared water pack's looping wave frames and the caustics they cast (`WAVE`),
//! and a tile pack's water surface over its footprint (`WTIL`). Layouts in `formats/SPEC.md`.
//!
//! Maps of `WAVE` hold IEEE binary16 values (`half::f16` bits): what a GPU samples as `*16Float`
//! textures without conversion, and enough for normals, displacements and intensities.

use super::codec::ByteWriter;
use super::ByteReader;
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::Section;

/// Smallest and largest wave map side (a power of two).
pub const WAVE_RESOLUTION: std::ops::RangeInclusive<u32> = 16..=1024;
/// Most frames of a loop.
pub const MAX_WAVE_FRAMES: u32 = 256;
/// Most caustic receiving planes.
pub const MAX_CAUSTIC_DEPTHS: usize = 8;
/// Largest water map side in samples.
pub const MAX_WATER_MAP: u32 = 4097;

/// `WAVE` (optional, shared water pack): one patch of ocean surface, periodic in x and y with period
/// `patch_size` and in time with period `period`, sampled at `frames` evenly spaced times
/// (`t_f = f · period / frames`), and the caustics each frame casts on horizontal planes below it.
///
/// Texel `(x, y)` of every map belongs to the surface point whose rest position is
/// `(x, y) · patch_size / resolution` (relative to any multiple of `patch_size`), at the mean level.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaterWaves {
    /// Side of the patch in world units: the maps' period in x and y.
    pub patch_size: f32,
    /// Seconds of one loop: frame `frames` would be frame 0.
    pub period: f32,
    /// Texels per side of every map, `R` (a power of two).
    pub resolution: u32,
    /// Frames of the loop, `F`.
    pub frames: u32,
    /// Unit direction toward the sun that cast the caustics.
    pub sun_direction: [f32; 3],
    /// Refractive index of the water the caustics were cast through.
    pub ior: f32,
    /// Fresnel transmittance of a flat surface for that sun: the caustic intensity of still water.
    pub flat_transmittance: f32,
    /// Depths of the receiving planes below the mean surface, world units, increasing (`D` of them).
    pub depths: Vec<f32>,
    /// Per frame and texel (frame-major, then rows, x fastest; `F·R²`): binary16 bits of the surface
    /// point's displacement from its rest position `(dx, dy, dz)` in world units, and the Jacobian
    /// determinant of its horizontal motion (below 0 where the surface folds over: foam).
    pub surface: Vec<[u16; 4]>,
    /// Per frame and texel (as `surface`): binary16 bits of the unit normal's `x` and `y`
    /// (`z = sqrt(1 − x² − y²)`, up).
    pub normals: Vec<[u16; 2]>,
    /// Per frame, depth and texel (index `((f·D + d)·R + y)·R + x`): binary16 bits of the sun's
    /// irradiance on the horizontal plane at `depths[d]` under texel `(x, y)`, relative to its
    /// horizontal irradiance above the water, without absorption. Still water gives
    /// `flat_transmittance` everywhere; the mean of every frame and depth is the surface's mean
    /// transmittance.
    pub caustics: Vec<u16>,
}

impl WaterWaves {
    /// Texels per map, `R²`.
    pub fn texels(&self) -> usize {
        (self.resolution as usize).pow(2)
    }

    /// The caustic map of `frame` at receiving plane `depth`, as f32, `R²` values.
    pub fn caustic_map(&self, frame: usize, depth: usize) -> Vec<f32> {
        let n = self.texels();
        let at = (frame * self.depths.len() + depth) * n;
        self.caustics[at..at + n].iter().map(|&b| half::f16::from_bits(b).to_f32()).collect()
    }

    /// The surface texels of `frame` as f32 `(dx, dy, dz, jacobian)`.
    pub fn surface_map(&self, frame: usize) -> Vec<[f32; 4]> {
        let n = self.texels();
        self.surface[frame * n..(frame + 1) * n].iter().map(|t| t.map(|b| half::f16::from_bits(b).to_f32())).collect()
    }

    /// The unit normals of `frame`'s texels.
    pub fn normal_map(&self, frame: usize) -> Vec<[f32; 3]> {
        let n = self.texels();
        self.normals[frame * n..(frame + 1) * n]
            .iter()
            .map(|t| {
                let [x, y] = t.map(|b| half::f16::from_bits(b).to_f32());
                [x, y, (1.0 - x * x - y * y).max(0.0).sqrt()]
            })
            .collect()
    }

    pub(crate) fn summary(&self) -> super::Summary {
        let depths: Vec<String> = self.depths.iter().map(|d| format!("{d:.3}")).collect();
        let d = self.depths.len().max(1);
        let frames = self.frames as usize;
        let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
        let mut mean = 0.0f64;
        if frames > 0 && !self.depths.is_empty() {
            for f in 0..frames {
                for k in 0..self.depths.len() {
                    let m = self.caustic_map(f, k);
                    let mu = m.iter().map(|&v| v as f64).sum::<f64>() / m.len().max(1) as f64;
                    mean += mu / (frames * d) as f64;
                    lo = lo.min(mu as f32);
                    hi = hi.max(m.iter().copied().fold(0.0, f32::max));
                }
            }
        }
        vec![
            ("patch", format!("{} units, {}² texels, {} frames over {} s", self.patch_size, self.resolution, self.frames, self.period)),
            ("sun", format!("{:.3} {:.3} {:.3}", self.sun_direction[0], self.sun_direction[1], self.sun_direction[2])),
            ("caustics", format!("depths [{}], mean {mean:.4} (lowest frame mean {lo:.4}), peak {hi:.2}", depths.join(", "))),
            ("flat_transmittance", format!("{:.4} (ior {})", self.flat_transmittance, self.ior)),
        ]
    }
}

/// `WTIL` (optional, tile pack): the water over the tile's footprint, sampled on a grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaterTile {
    /// xxh3-64 of the shared water pack whose waves cover this water (its `SHRD` content hash).
    pub waves_hash: u64,
    /// z of the mean water surface.
    pub level: f32,
    /// Beer–Lambert absorption per world unit of path in water, linear RGB.
    pub absorption: [f32; 3],
    /// World xy of sample (0, 0).
    pub origin: [f32; 2],
    /// World units between samples.
    pub spacing: f32,
    /// Samples per side.
    pub size: u32,
    /// World units per depth step.
    pub depth_step: f32,
    /// Depth of the ground below the surface in depth steps, `size²`, x fastest: 0 where there is no
    /// open water (dry land, ground above the level, or a point whose air at the level is covered),
    /// at least 1 where there is.
    pub depth: Vec<u16>,
    /// Distance from the sample to the nearest sample without water, in samples, saturated at 255;
    /// 0 where there is no water. `size²`.
    pub shore: Vec<u8>,
}

impl WaterTile {
    /// Whether sample `(i, j)` is open water.
    pub fn is_water(&self, i: usize, j: usize) -> bool {
        self.depth[j * self.size as usize + i] > 0
    }

    /// The water's depth at sample `(i, j)` in world units (0 where there is none).
    pub fn depth_at(&self, i: usize, j: usize) -> f32 {
        self.depth[j * self.size as usize + i] as f32 * self.depth_step
    }

    pub(crate) fn summary(&self) -> super::Summary {
        let wet = self.depth.iter().filter(|&&d| d > 0).count();
        let deepest = self.depth.iter().copied().max().unwrap_or(0) as f32 * self.depth_step;
        vec![
            ("map", format!("{0}×{0} samples every {1}", self.size, self.spacing)),
            ("water", format!("{:.1} % of samples, deepest {deepest:.3}", 100.0 * wet as f64 / self.depth.len().max(1) as f64)),
            ("level", self.level.to_string()),
            ("absorption", format!("{:.4} {:.4} {:.4} per unit", self.absorption[0], self.absorption[1], self.absorption[2])),
            ("waves_pack", format!("{:016x}", self.waves_hash)),
        ]
    }
}

impl Section for WaterWaves {
    const KIND: SectionKind = SectionKind(*b"WAVE");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let k = Self::KIND;
        let (n, f, d) = (self.texels(), self.frames as usize, self.depths.len());
        if self.surface.len() != f * n || self.normals.len() != f * n || self.caustics.len() != f * d * n {
            return Err(FormatError::Encode { section: k, reason: "maps whose lengths do not match frames, depths and resolution".into() });
        }
        let mut w = ByteWriter::default();
        w.f32(self.patch_size);
        w.f32(self.period);
        w.f32s(&self.sun_direction);
        w.f32(self.ior);
        w.f32(self.flat_transmittance);
        w.u32(self.resolution);
        w.u32(self.frames);
        w.count(k, d)?;
        w.f32s(&self.depths);
        self.surface.iter().flatten().for_each(|&b| w.u16(b));
        self.normals.iter().flatten().for_each(|&b| w.u16(b));
        self.caustics.iter().for_each(|&b| w.u16(b));
        Ok(w.0)
    }

    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let k = Self::KIND;
        let mut r = ByteReader::new(k, raw);
        let [patch_size, period, sx, sy, sz, ior, flat_transmittance] = r.finite_arrays::<7>(1, "wave parameters")?[0];
        if patch_size <= 0.0 || period <= 0.0 || ior < 1.0 || !(0.0..=1.0).contains(&flat_transmittance) {
            return Err(bad(k, format!("patch {patch_size}, period {period}, ior {ior}, flat transmittance {flat_transmittance}")));
        }
        let len = (sx * sx + sy * sy + sz * sz).sqrt();
        if (len - 1.0).abs() > 1e-3 || sz <= 0.0 {
            return Err(bad(k, format!("sun direction {sx} {sy} {sz} is not a unit vector above the horizon")));
        }
        let resolution = r.u32()?;
        if !WAVE_RESOLUTION.contains(&resolution) || !resolution.is_power_of_two() {
            return Err(bad(k, format!("resolution {resolution} (a power of two in {WAVE_RESOLUTION:?})")));
        }
        let frames = r.u32()?;
        if !(1..=MAX_WAVE_FRAMES).contains(&frames) {
            return Err(bad(k, format!("{frames} frames (1 to {MAX_WAVE_FRAMES})")));
        }
        let d = r.u32()? as usize;
        if !(1..=MAX_CAUSTIC_DEPTHS).contains(&d) {
            return Err(bad(k, format!("{d} caustic depths (1 to {MAX_CAUSTIC_DEPTHS})")));
        }
        let depths = r.finite_arrays::<1>(d, "caustic depths")?.into_iter().map(|[v]| v).collect::<Vec<_>>();
        if depths[0] <= 0.0 || depths.windows(2).any(|p| p[1] <= p[0]) {
            return Err(bad(k, format!("caustic depths {depths:?} are not positive and increasing")));
        }
        let n = (resolution as usize).pow(2) * frames as usize;
        let needed = n.saturating_mul(2 * (4 + 2 + d));
        if needed != r.remaining() {
            return Err(bad(
                k,
                format!("{} bytes of maps where {frames} frames of {resolution}² texels and {d} depths need {needed}", r.remaining()),
            ));
        }
        let surface = r.u16s(4 * n)?.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let normals = r.u16s(2 * n)?.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
        let caustics = r.u16s(d * n)?;
        r.finish()?;
        let waves = WaterWaves {
            patch_size,
            period,
            resolution,
            frames,
            sun_direction: [sx, sy, sz],
            ior,
            flat_transmittance,
            depths,
            surface,
            normals,
            caustics,
        };
        let finite = |b: &u16| half::f16::from_bits(*b).is_finite();
        if !waves.surface.iter().flatten().all(finite) || !waves.normals.iter().flatten().all(finite) {
            return Err(bad(k, "a surface or normal texel is not finite"));
        }
        if let Some(i) = waves.caustics.iter().position(|b| !finite(b) || half::f16::from_bits(*b).to_f32() < 0.0) {
            return Err(bad(k, format!("caustic texel {i} is {}", half::f16::from_bits(waves.caustics[i]))));
        }
        Ok(waves)
    }
}

impl Section for WaterTile {
    const KIND: SectionKind = SectionKind(*b"WTIL");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let k = Self::KIND;
        let cells = (self.size as usize).pow(2);
        if self.depth.len() != cells || self.shore.len() != cells {
            return Err(FormatError::Encode { section: k, reason: format!("maps of {cells} samples have other lengths") });
        }
        let mut w = ByteWriter::default();
        w.u64(self.waves_hash);
        w.f32(self.level);
        w.f32s(&self.absorption);
        w.f32s(&self.origin);
        w.f32(self.spacing);
        w.f32(self.depth_step);
        w.u32(self.size);
        self.depth.iter().for_each(|&d| w.u16(d));
        w.bytes(&self.shore);
        Ok(w.0)
    }

    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let k = Self::KIND;
        let mut r = ByteReader::new(k, raw);
        let waves_hash = r.u64()?;
        let [level, a0, a1, a2, ox, oy, spacing, depth_step] = r.finite_arrays::<8>(1, "water placement")?[0];
        if spacing <= 0.0 || depth_step <= 0.0 || [a0, a1, a2].iter().any(|&a| a < 0.0) {
            return Err(bad(k, format!("spacing {spacing}, depth step {depth_step}, absorption {a0} {a1} {a2}")));
        }
        let size = r.u32()?;
        if !(2..=MAX_WATER_MAP).contains(&size) {
            return Err(bad(k, format!("a {size}-sample map side (2 to {MAX_WATER_MAP})")));
        }
        let cells = (size as usize).pow(2);
        if cells.saturating_mul(3) != r.remaining() {
            return Err(bad(k, format!("{} bytes of maps where {size}² samples need {}", r.remaining(), cells.saturating_mul(3))));
        }
        let depth = r.u16s(cells)?;
        let shore = r.take(cells)?.to_vec();
        r.finish()?;
        if let Some(i) = (0..cells).find(|&i| (depth[i] == 0) != (shore[i] == 0)) {
            return Err(bad(k, format!("sample {i} has depth {} and shore distance {}", depth[i], shore[i])));
        }
        Ok(WaterTile { waves_hash, level, absorption: [a0, a1, a2], origin: [ox, oy], spacing, size, depth_step, depth, shore })
    }
}

#[cfg(test)]
#[path = "water_tests.rs"]
mod tests;
