//! The terrain vertex as the GPU reads it, its packing from a pack's streams, and the wireframe
//! fallback's edge lists.
//!
//! The vertex is 32 bytes: position (f32×3), normal (snorm16×4), AO (unorm8×4, x used) and baked
//! irradiance (f16×4: rgb, w = 1 when the bake has irradiance, 0 when it has not). The irradiance
//! slot exists now so that adding the bake's irradiance section is a matter of filling it: the
//! shader already falls back to a constant ambient when w is 0.

/// Bytes per uploaded vertex (the streaming budget counts with it).
pub const GPU_VERTEX_BYTES: u64 = std::mem::size_of::<TerrainVertex>() as u64;

/// One terrain vertex as the GPU reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TerrainVertex {
    /// World units.
    pub position: [f32; 3],
    /// Unit normal toward air as snorm16 (xyz; w unused, 0).
    pub normal: [i16; 4],
    /// Ambient occlusion as unorm8 in x (1 = fully open); yzw unused.
    pub ao: [u8; 4],
    /// Baked linear RGB irradiance as f16 bits; w is 1 when the bake has irradiance, 0 when not.
    pub irradiance: [u16; 4],
}

const ATTRIBUTES: [wgpu::VertexAttribute; 4] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Snorm16x4, 2 => Unorm8x4, 3 => Float16x4];

/// The vertex buffer layout of [`TerrainVertex`] (shader locations 0–3).
pub fn vertex_layout() -> wgpu::VertexBufferLayout<'static> {
    wgpu::VertexBufferLayout { array_stride: GPU_VERTEX_BYTES, step_mode: wgpu::VertexStepMode::Vertex, attributes: &ATTRIBUTES }
}

/// Nearest f16 bits of a non-negative radiance value (negatives and NaN → 0, overflow → 65504):
/// irradiance is never negative, and a clamp is better than an infinity in the shader.
pub fn f16_bits(v: f32) -> u16 {
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    let v = v.min(65504.0);
    let bits = v.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    let mant = bits & 0x7f_ffff;
    if exp < -25 {
        return 0; // below half the smallest subnormal: rounds to zero
    }
    if exp < -14 {
        // Subnormal half: value = m · 2^-24, round to nearest even.
        let full = mant | 0x80_0000;
        let shift = (-exp - 14 + 13) as u32;
        let m = full >> shift;
        let rem = full & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        let m = if rem > half || (rem == half && m & 1 == 1) { m + 1 } else { m };
        return m as u16;
    }
    let h = (((exp + 15) as u32) << 10) | (mant >> 13);
    let rem = mant & 0x1fff;
    // A carry out of the mantissa correctly bumps the exponent; 65504 cannot round past itself.
    let h = if rem > 0x1000 || (rem == 0x1000 && h & 1 == 1) { h + 1 } else { h };
    h as u16
}

fn snorm16(v: f32) -> i16 {
    (v.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

/// Interleaves a tile's streams into GPU vertices. `ao` is in [0, 1] (clamped); `irradiance`, when
/// the bake has it, is linear RGB radiance.
pub fn pack_vertices(positions: &[[f32; 3]], normals: &[[f32; 3]], ao: &[f32], irradiance: Option<&[[f32; 3]]>) -> Vec<TerrainVertex> {
    (0..positions.len())
        .map(|i| {
            let n = normals[i];
            let irr = match irradiance {
                Some(irr) => [f16_bits(irr[i][0]), f16_bits(irr[i][1]), f16_bits(irr[i][2]), f16_bits(1.0)],
                None => [0; 4],
            };
            TerrainVertex {
                position: positions[i],
                normal: [snorm16(n[0]), snorm16(n[1]), snorm16(n[2]), 0],
                ao: [(ao[i].clamp(0.0, 1.0) * 255.0).round() as u8, 0, 0, 0],
                irradiance: irr,
            }
        })
        .collect()
}

/// The unique edges of `triangles` as a line list, in a deterministic order (sorted): the
/// wireframe fallback on adapters without `POLYGON_MODE_LINE`.
pub fn edge_indices(triangles: &[u32]) -> Vec<u32> {
    let mut edges: Vec<(u32, u32)> = triangles
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .filter(|(a, b)| a != b)
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges.into_iter().flat_map(|(a, b)| [a, b]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_is_32_bytes_and_matches_the_attribute_layout() {
        assert_eq!(GPU_VERTEX_BYTES, 32);
        let offsets: Vec<u64> = ATTRIBUTES.iter().map(|a| a.offset).collect();
        assert_eq!(offsets, vec![0, 12, 20, 24]);
        assert_eq!(std::mem::offset_of!(TerrainVertex, irradiance), 24);
    }

    #[test]
    fn f16_conversion_matches_known_values() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(0.5), 0x3800);
        assert_eq!(f16_bits(2.0), 0x4000);
        assert_eq!(f16_bits(65504.0), 0x7bff);
        assert_eq!(f16_bits(1e9), 0x7bff);
        assert_eq!(f16_bits(-3.0), 0);
        assert_eq!(f16_bits(f32::NAN), 0);
        assert_eq!(f16_bits(6.0e-8), 0x0001); // smallest subnormal (5.96e-8)
        assert_eq!(f16_bits(2f32.powi(-14)), 0x0400); // smallest normal
                                                      // 1 + 2^-11 is exactly between 1 and the next half (1 + 2^-10): ties to even → 1.0.
        assert_eq!(f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        assert_eq!(f16_bits(0.1), 0x2e66);
    }

    #[test]
    fn packing_quantises_and_flags_irradiance() {
        let p = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let n = [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0]];
        let v = pack_vertices(&p, &n, &[0.0, 1.5], None);
        assert_eq!(v[0].position, [1.0, 2.0, 3.0]);
        assert_eq!(v[0].normal, [0, 0, 32767, 0]);
        assert_eq!(v[1].normal, [0, -32767, 0, 0]);
        assert_eq!((v[0].ao[0], v[1].ao[0]), (0, 255));
        assert_eq!(v[0].irradiance[3], 0, "absent irradiance must read as w = 0");
        let v = pack_vertices(&p, &n, &[1.0, 1.0], Some(&[[0.5, 1.0, 2.0], [0.0; 3]]));
        assert_eq!(v[0].irradiance, [0x3800, 0x3c00, 0x4000, 0x3c00]);
    }

    #[test]
    fn edges_are_unique_and_cover_every_triangle_side() {
        // Two triangles sharing edge 1-2: 5 unique edges.
        let e = edge_indices(&[0, 1, 2, 2, 1, 3]);
        assert_eq!(e.len(), 10);
        let pairs: Vec<(u32, u32)> = e.chunks(2).map(|c| (c[0], c[1])).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]);
        assert!(edge_indices(&[4, 4, 4]).is_empty(), "degenerate triangles draw no lines");
    }
}
