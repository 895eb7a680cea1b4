//! The trees' tile decoder: `TINS` (+ `TILT`) → instances in the GPU layout, sorted by
//! prototype, on the loader threads.

use std::sync::Arc;

use kiln_formats::sections::{TileNode, TreeInstances, TreeLighting};
use kiln_formats::{Pack, TileContents};

use super::assets::TreeAssets;
use crate::layers::{Decoded, Decoder, SharedAssets};
use crate::renderer::pick;

/// One tree as the GPU reads it (per instance, 96 bytes). The same layout serves the per-tile
/// shadow buffers and the per-frame view buffer, where the per-frame fields are filled in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuTree {
    /// Trunk base (world) and yaw (radians).
    pub pos_yaw: [f32; 4],
    /// Scale and tint.
    pub scale_tint: [f32; 4],
    /// Irradiance for normals up; w: the dither threshold `t` of a cross-fade (0 outside one).
    pub light_up: [f32; 4],
    /// Irradiance for normals down; w: 1 when the bake lit this tree (`TILT`), 0 for the fallback.
    pub light_down: [f32; 4],
    /// Irradiance for sideways normals; w: the impostor atlas mip (per frame).
    pub light_side: [f32; 4],
    /// The tile id (picking).
    pub id: u32,
    /// x: a hash of the tree (dither offset, staggered thresholds); y: representation (0–2 mesh
    /// LOD, 3 impostor) | 256 when this copy keeps the dither's lower part (the farther one).
    pub seed_rep: [u32; 2],
}

/// Bytes per [`GpuTree`].
pub const GPU_TREE_BYTES: u64 = std::mem::size_of::<GpuTree>() as u64;

/// A tile's trees, ready for upload.
pub struct TileTrees {
    /// Sorted by prototype.
    pub trees: Vec<GpuTree>,
    /// Per instance, its prototype (same order).
    pub prototypes: Vec<u32>,
    /// (prototype, first, count) runs over `trees`.
    pub runs: Vec<(u32, u32, u32)>,
    /// World bounds of every tree's bounding sphere.
    pub bounds: ([f32; 3], [f32; 3]),
}

impl Decoded for TileTrees {
    fn gpu_bytes(&self) -> u64 {
        self.trees.len() as u64 * GPU_TREE_BYTES
    }
}

/// The trees' decoder, holding the shared prototypes (or none, when the bake has no trees pack).
pub struct TreesDecoder {
    shared: Option<(Arc<TreeAssets>, u64)>,
}

impl TreesDecoder {
    /// The decoder for a bake with these shared assets.
    pub fn new(shared: &SharedAssets) -> Self {
        TreesDecoder { shared: shared.get::<TreeAssets>(super::NAME) }
    }
}

/// A stable 32-bit hash of an instance (dither offsets, staggered thresholds): the same tree
/// gets the same value in every run.
pub fn tree_hash(position: [f32; 3], index: u32) -> u32 {
    let mut h = position[0].to_bits().wrapping_mul(0x9e37_79b9) ^ position[1].to_bits().wrapping_mul(0x85eb_ca6b) ^ index.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^ (h >> 16)
}

impl Decoder for TreesDecoder {
    fn decode(&self, pack: &Pack, tile: &TileContents) -> Result<Option<Box<dyn Decoded>>, String> {
        let Some(ins) = pack.get::<TreeInstances>().map_err(|e| e.to_string())? else { return Ok(None) };
        if ins.instances.is_empty() {
            return Ok(None);
        }
        let Some((assets, hash)) = &self.shared else { return Err("the tile has trees but the bake has no shared trees pack".into()) };
        if ins.prototypes_hash != *hash {
            return Err(format!("its trees index prototypes {:016x}, the bake's shared trees pack is {hash:016x}", ins.prototypes_hash));
        }
        let lighting = pack.get::<TreeLighting>().map_err(|e| e.to_string())?;
        if let Some(l) = &lighting {
            if l.0.len() != ins.instances.len() {
                return Err(format!("{} tree lighting entries for {} trees", l.0.len(), ins.instances.len()));
            }
        }
        decode_instances(&ins, lighting.as_ref(), assets, pick::encode(tile.id())).map(|t| Some(Box::new(t) as Box<dyn Decoded>))
    }

    /// The manifest does not count trees: a tile's trees are known once it is decoded (the
    /// residency's budget check then counts them).
    fn estimate_bytes(&self, _node: &TileNode) -> u64 {
        0
    }
}

/// Instances → GPU trees sorted by prototype, with bounds. Checked: prototype indices, finite
/// values, positive scale.
pub fn decode_instances(ins: &TreeInstances, lighting: Option<&TreeLighting>, assets: &TreeAssets, id: u32) -> Result<TileTrees, String> {
    let mut order: Vec<u32> = (0..ins.instances.len() as u32).collect();
    order.sort_by_key(|&i| ins.instances[i as usize].prototype);
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    let mut trees = Vec::with_capacity(order.len());
    let mut prototypes = Vec::with_capacity(order.len());
    let mut runs: Vec<(u32, u32, u32)> = Vec::new();
    for (slot, &i) in order.iter().enumerate() {
        let t = &ins.instances[i as usize];
        let proto = assets
            .prototypes
            .get(t.prototype as usize)
            .ok_or_else(|| format!("tree {i}: prototype {} of {}", t.prototype, assets.prototypes.len()))?;
        let finite = t.position.iter().chain(&t.tint).chain([&t.yaw, &t.scale]).all(|v| v.is_finite());
        if !finite || t.scale <= 0.0 {
            return Err(format!("tree {i}: non-finite placement or scale {}", t.scale));
        }
        let (light, baked) = match lighting {
            Some(l) => (l.0[i as usize], 1.0),
            None => ([[0.0; 3]; 3], 0.0),
        };
        if light.iter().flatten().any(|v| !v.is_finite()) {
            return Err(format!("tree {i}: non-finite lighting"));
        }
        let [up, down, side] = light;
        trees.push(GpuTree {
            pos_yaw: [t.position[0], t.position[1], t.position[2], t.yaw],
            scale_tint: [t.scale, t.tint[0], t.tint[1], t.tint[2]],
            light_up: [up[0], up[1], up[2], 0.0],
            light_down: [down[0], down[1], down[2], baked],
            light_side: [side[0], side[1], side[2], 0.0],
            id,
            seed_rep: [tree_hash(t.position, i), 0],
        });
        prototypes.push(t.prototype);
        match runs.last_mut() {
            Some(r) if r.0 == t.prototype => r.2 += 1,
            _ => runs.push((t.prototype, slot as u32, 1)),
        }
        // The sphere's centre turns with the yaw; its radius bounds it either way.
        let (c, r) = (proto.center, proto.radius * t.scale);
        let ch = (c[0] * c[0] + c[1] * c[1]).sqrt() * t.scale;
        for k in 0..3 {
            let centre = t.position[k] + if k == 2 { c[2] * t.scale } else { 0.0 };
            let reach = r + if k == 2 { 0.0 } else { ch };
            lo[k] = lo[k].min(centre - reach);
            hi[k] = hi[k].max(centre + reach);
        }
    }
    Ok(TileTrees { trees, prototypes, runs, bounds: (lo, hi) })
}
