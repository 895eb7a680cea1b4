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
    pub(crate) fn summary(&self) -> Vec<(&'static str, String)> {
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
