use crate::container::SectionKind;
use crate::error::FormatError;
use crate::pack::Section;

/// Per-vertex ambient occlusion of the tile's terrain mesh, quantised to u8 (255 = fully open)
/// (`VXAO`, optional). Its length equals the mesh's vertex count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexAo(pub Vec<u8>);

impl VertexAo {
    /// Quantises AO values in [0, 1] (clamped) to the nearest u8 step.
    pub fn from_f32(values: &[f32]) -> Self {
        VertexAo(values.iter().map(|&v| (v.clamp(0.0, 1.0) * 255.0).round() as u8).collect())
    }
    /// The AO of vertex `i` in [0, 1].
    pub fn value(&self, i: usize) -> f32 {
        self.0[i] as f32 / 255.0
    }
    pub(crate) fn summary(&self) -> super::Summary {
        let n = self.0.len().max(1) as f64;
        let mean = self.0.iter().map(|&v| v as f64).sum::<f64>() / n / 255.0;
        let min = self.0.iter().min().copied().unwrap_or(0) as f64 / 255.0;
        vec![("vertices", self.0.len().to_string()), ("mean", format!("{mean:.3}")), ("min", format!("{min:.3}"))]
    }
}

impl Section for VertexAo {
    const KIND: SectionKind = SectionKind(*b"VXAO");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        Ok(self.0.clone())
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        Ok(VertexAo(raw.to_vec()))
    }
}

/// Per-vertex irradiance (RGB, linear, the renderer's radiometric unit: a surface under a uniform sky of
/// radiance L receives π·L), one per `TMSH` vertex, stored as RGB9E5 (`VXIR`, optional).
#[derive(Clone, Debug, PartialEq)]
pub struct VertexIrradiance(pub Vec<[f32; 3]>);

impl VertexIrradiance {
    pub(crate) fn summary(&self) -> super::Summary {
        let n = self.0.len().max(1) as f64;
        let mean: Vec<f64> = (0..3).map(|c| self.0.iter().map(|v| v[c] as f64).sum::<f64>() / n).collect();
        let max = self.0.iter().map(|v| v[0].max(v[1]).max(v[2])).fold(0.0f32, f32::max);
        vec![
            ("vertices", self.0.len().to_string()),
            ("mean_rgb", format!("[{:.3}, {:.3}, {:.3}]", mean[0], mean[1], mean[2])),
            ("max", format!("{max:.3}")),
        ]
    }
}

impl Section for VertexIrradiance {
    const KIND: SectionKind = SectionKind(*b"VXIR");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        // Byte planes of the packed words compress better than the words themselves.
        let words: Vec<u32> = self.0.iter().map(|&c| super::rgb9e5::encode(c)).collect();
        let mut out = Vec::with_capacity(words.len() * 4);
        for b in 0..4 {
            out.extend(words.iter().map(|w| (w >> (8 * b)) as u8));
        }
        Ok(out)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        if !raw.len().is_multiple_of(4) {
            return Err(crate::error::bad(Self::KIND, format!("{} bytes is not a whole number of RGB9E5 values", raw.len())));
        }
        let n = raw.len() / 4;
        Ok(VertexIrradiance(
            (0..n)
                .map(|i| {
                    super::rgb9e5::decode(raw[i] as u32 | (raw[n + i] as u32) << 8 | (raw[2 * n + i] as u32) << 16 | (raw[3 * n + i] as u32) << 24)
                })
                .collect(),
        ))
    }
}
