use super::{rgb9e5, ByteReader};
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::Section;

/// Largest number of cells in one irradiance volume section.
pub const MAX_VOLUME_CELLS: u64 = 1 << 24;

/// Directional irradiance over a grid (`IRVL`, optional): what a renderer needs to light things that
/// are not part of the terrain mesh (trees, grass, moving objects).
///
/// Cells are X fastest, then Y, then Z; cell `(i, j, k)` spans `min + (i, j, k)·size/dims` to the next.
/// Each cell has six RGB irradiance values, for a surface facing +X, −X, +Y, −Y, +Z, −Z (an "ambient
/// cube": any normal n is lit by Σ n_a²·E(±a)), in two layers: `ambient` (sky and every bounce: what a
/// renderer cannot do dynamically) and `direct` (straight from the sun, moon and static lights).
#[derive(Clone, Debug, PartialEq)]
pub struct IrradianceGrid {
    /// World-space lower corner of the grid.
    pub min: [f32; 3],
    /// World-space upper corner of the grid; at least `min` on each axis.
    pub max: [f32; 3],
    /// Cells along X, Y and Z, each at least 1, at most [`MAX_VOLUME_CELLS`] in all.
    pub dims: [u32; 3],
    /// Sky and bounce irradiance per cell, six RGB bins (+X, −X, +Y, −Y, +Z, −Z); one entry per cell.
    pub ambient: Vec<[[f32; 3]; 6]>,
    /// Irradiance straight from the sun, moon and static lights, laid out as `ambient`.
    pub direct: Vec<[[f32; 3]; 6]>,
}

impl IrradianceGrid {
    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.dims.iter().map(|&d| d as usize).product()
    }
    pub(crate) fn summary(&self) -> super::Summary {
        let up = |layer: &[[[f32; 3]; 6]]| layer.iter().map(|c| (c[4][0] + c[4][1] + c[4][2]) as f64 / 3.0).sum::<f64>() / layer.len().max(1) as f64;
        vec![
            ("cells", format!("{:?}", self.dims)),
            ("bounds", format!("{:?}..{:?}", self.min, self.max)),
            ("mean_up_ambient", format!("{:.3}", up(&self.ambient))),
            ("mean_up_direct", format!("{:.3}", up(&self.direct))),
        ]
    }
}

impl Section for IrradianceGrid {
    const KIND: SectionKind = SectionKind(*b"IRVL");
    const REQUIRED: bool = false;

    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let n = self.cells();
        if self.ambient.len() != n || self.direct.len() != n || n as u64 > MAX_VOLUME_CELLS {
            return Err(FormatError::Encode { section: Self::KIND, reason: format!("{:?} cells need {n} values per layer", self.dims) });
        }
        let mut out = Vec::with_capacity(36 + 48 * n);
        for v in self.min.iter().chain(&self.max) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for d in self.dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        for layer in [&self.ambient, &self.direct] {
            for bin in 0..6 {
                let words: Vec<u32> = layer.iter().map(|c| rgb9e5::encode(c[bin])).collect();
                for b in 0..4 {
                    out.extend(words.iter().map(|w| (w >> (8 * b)) as u8));
                }
            }
        }
        Ok(out)
    }

    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let mut r = ByteReader::new(Self::KIND, raw);
        let min = [r.f32()?, r.f32()?, r.f32()?];
        let max = [r.f32()?, r.f32()?, r.f32()?];
        let dims = [r.u32()?, r.u32()?, r.u32()?];
        if dims.contains(&0) {
            return Err(bad(Self::KIND, format!("{dims:?} cells: every dimension must be at least 1")));
        }
        // Three u32s can overflow a u64 product; a wrapped product could otherwise match the length.
        let n = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
            .filter(|&n| n <= MAX_VOLUME_CELLS)
            .ok_or_else(|| bad(Self::KIND, format!("{dims:?} cells exceed the limit of {MAX_VOLUME_CELLS}")))?;
        if 36 + 48 * n != raw.len() as u64 {
            return Err(bad(Self::KIND, format!("{dims:?} cells need {} bytes, section has {}", 36 + 48 * n, raw.len())));
        }
        if !min.iter().chain(&max).all(|v| v.is_finite()) || (0..3).any(|a| min[a] > max[a]) {
            return Err(bad(Self::KIND, format!("bad bounds {min:?}..{max:?}")));
        }
        let n = n as usize;
        let mut layers = [vec![[[0f32; 3]; 6]; n], vec![[[0f32; 3]; 6]; n]];
        for layer in layers.iter_mut() {
            for bin in 0..6 {
                let p = r.take(4 * n)?;
                for (i, c) in layer.iter_mut().enumerate() {
                    let w = p[i] as u32 | (p[n + i] as u32) << 8 | (p[2 * n + i] as u32) << 16 | (p[3 * n + i] as u32) << 24;
                    c[bin] = rgb9e5::decode(w);
                }
            }
        }
        let [ambient, direct] = layers;
        Ok(IrradianceGrid { min, max, dims, ambient, direct })
    }
}
