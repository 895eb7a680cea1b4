//! The shared grass pack (`GPAT`) → [`GrassAssets`]: every blade of every (patch, level) in one
//! array in the GPU layout, with per (patch, level) ranges and parents as absolute indices.

use std::any::Any;
use std::sync::Arc;

use kiln_formats::sections::{GrassPatches, NO_PARENT};
use kiln_formats::Pack;

/// One blade as the GPU reads it (64 bytes, `Blade` in `grass_common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuBlade {
    /// Base x, y (patch-local), length, width.
    pub base: [f32; 4],
    /// Unit direction, bend.
    pub dir: [f32; 4],
    /// Unit normal.
    pub normal: [f32; 3],
    /// Absolute index of its parent in the next level ([`NO_PARENT`] in the last level).
    pub parent: u32,
    /// Linear RGB colour; w the patch-local index within its level (hash key).
    pub color: [f32; 4],
}

/// One flower as the GPU reads it (32 bytes, `Flower` in `grass_common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuFlower {
    /// Base x, y (patch-local), stem height, head radius.
    pub base: [f32; 4],
    /// Linear RGB colour, w unused.
    pub color: [f32; 4],
}

/// Everything the shared grass pack holds, checked and in GPU layouts.
pub struct GrassAssets {
    /// Side of every patch (world units).
    pub patch_size: f32,
    /// The terrain's tint beyond the grass (area-weighted mean blade colour).
    pub tint: [f32; 3],
    /// Levels per patch.
    pub levels: usize,
    /// Segments per level.
    pub segments: Vec<u32>,
    /// Every blade: patch by patch, level by level.
    pub blades: Vec<GpuBlade>,
    /// Per patch, per level: (first, count) in [`GrassAssets::blades`].
    pub ranges: Vec<Vec<(u32, u32)>>,
    /// Every flower, patch by patch.
    pub flowers: Vec<GpuFlower>,
    /// Per patch: (first, count) in [`GrassAssets::flowers`].
    pub flower_ranges: Vec<(u32, u32)>,
    /// Longest blade of any level (height scale 1), for culling bounds.
    pub max_length: f32,
    /// Mean level-0 blades per patch (the HUD's "blades within the grass distance" estimate).
    pub mean_blades: f64,
}

impl GrassAssets {
    /// GPU bytes of the blades and flowers (uploaded once, not counted against the tile budget).
    pub fn gpu_bytes(&self) -> u64 {
        (self.blades.len() * 64 + self.flowers.len() * 32) as u64
    }
}

/// The registered shared decoder of the grass product.
pub fn decode_shared(pack: &Pack) -> Result<Arc<dyn Any + Send + Sync>, String> {
    let patches = pack.require::<GrassPatches>().map_err(|e| e.to_string())?;
    from_patches(&patches).map(|a| Arc::new(a) as Arc<dyn Any + Send + Sync>)
}

/// Lays out and checks decoded patches (the formats crate checked each blade and parent index).
pub fn from_patches(p: &GrassPatches) -> Result<GrassAssets, String> {
    let levels = p.levels();
    if p.patches.is_empty() || levels == 0 {
        return Err("the grass pack has no patches".into());
    }
    let segments: Vec<u32> = p.patches[0].levels.iter().map(|l| l.segments).collect();
    let mut a = GrassAssets {
        patch_size: p.patch_size,
        tint: p.tint,
        levels,
        segments,
        blades: Vec::new(),
        ranges: Vec::with_capacity(p.patches.len()),
        flowers: Vec::new(),
        flower_ranges: Vec::new(),
        max_length: 0.0,
        mean_blades: 0.0,
    };
    for (pi, patch) in p.patches.iter().enumerate() {
        // Absolute starts of this patch's levels, known before the blades are pushed (parents point forward).
        let mut starts = Vec::with_capacity(levels + 1);
        let mut at = a.blades.len();
        for l in &patch.levels {
            starts.push(at);
            at += l.blades.len();
        }
        if u32::try_from(at).is_err() {
            return Err("too many grass blades".into());
        }
        let mut ranges = Vec::with_capacity(levels);
        for (li, l) in patch.levels.iter().enumerate() {
            if l.segments != a.segments[li] {
                return Err(format!("patch {pi} level {li}: {} segments, patch 0 has {}", l.segments, a.segments[li]));
            }
            ranges.push((starts[li] as u32, l.blades.len() as u32));
            for (bi, b) in l.blades.iter().enumerate() {
                let parent = if b.parent == NO_PARENT { NO_PARENT } else { (starts[li + 1] + b.parent as usize) as u32 };
                a.max_length = a.max_length.max(b.length);
                a.blades.push(GpuBlade {
                    base: [b.position[0], b.position[1], b.length, b.width],
                    dir: [b.direction[0], b.direction[1], b.direction[2], b.bend],
                    normal: b.normal,
                    parent,
                    color: [b.color[0], b.color[1], b.color[2], bi as f32],
                });
            }
        }
        a.ranges.push(ranges);
        let first = a.flowers.len() as u32;
        a.flowers.extend(
            patch
                .flowers
                .iter()
                .map(|f| GpuFlower { base: [f.position[0], f.position[1], f.height, f.radius], color: [f.color[0], f.color[1], f.color[2], 0.0] }),
        );
        a.flower_ranges.push((first, patch.flowers.len() as u32));
        a.max_length = a.max_length.max(patch.flowers.iter().map(|f| f.height + f.radius).fold(0.0, f32::max));
    }
    a.mean_blades = a.ranges.iter().map(|r| f64::from(r[0].1)).sum::<f64>() / a.ranges.len() as f64;
    Ok(a)
}
