//! The trees layer: each resident tile's instances (a GPU buffer for the shadow map, a CPU copy
//! for the per-frame choice of representation), one per-frame instance buffer for the view,
//! grouped by (representation, prototype), and the draws of both.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Vec3, Vec4};
use wgpu::util::DeviceExt;

use super::assets::TreeAssets;
use super::classify::{atlas_mip, classify};
use super::decode::{GpuTree, TileTrees};
use super::gpu::{material_layout, SharedGpu};
use super::pipelines::{Kind, TreePipelines};
use crate::layers::{downcast, Bindings, Counts, Decoded, DrawItem, Extent, FrameContext, Layer, LayerInit, Phase};
use crate::passes::StreamBuffer;
use crate::renderer::culling;
use crate::streaming::TileId;
use crate::view_mode::ViewMode;

/// Bit in [`GpuTree::seed_rep`]`[1]`: this copy keeps the dither's lower part (the farther one).
pub const FAR_BIT: u32 = 256;
/// Shadow casters: a tree at least this many shadow texels across casts with its LOD 2 mesh,
/// smaller ones with the impostor seen from the sun.
pub const SHADOW_MESH_TEXELS: f32 = 48.0;

struct GpuTile {
    buffer: wgpu::Buffer,
    data: TileTrees,
    bytes: u64,
}

/// A run of the per-frame buffer: one representation of one prototype.
#[derive(Clone, Copy, Debug)]
struct Group {
    rep: u32,
    proto: u32,
    first: u32,
    count: u32,
}

/// The trees' GPU side.
pub struct TreesLayer {
    assets: Option<Arc<TreeAssets>>,
    shared: Option<SharedGpu>,
    pipelines: TreePipelines,
    tiles: HashMap<TileId, GpuTile>,
    resident_bytes: u64,
    frame: StreamBuffer,
    groups: Vec<Group>,
    /// Per (rep · prototypes + prototype): this frame's trees, reused between frames.
    scratch: Vec<Vec<GpuTree>>,
    shadow_texel: f32,
}

impl TreesLayer {
    /// The layer; uploads the shared assets when the bake has them.
    pub fn new(init: &LayerInit<'_>) -> Self {
        let material = material_layout(init.device);
        let assets = init.shared.get::<TreeAssets>(super::NAME).map(|(a, _)| a);
        let shared = assets.as_ref().map(|a| SharedGpu::new(init.device, init.queue, &material, a));
        let mut pipelines = TreePipelines::new(init.device, init.layouts, &material, init.color);
        if shared.is_some() {
            pipelines.prepare(init.device, init.mode);
        }
        TreesLayer {
            assets,
            shared,
            pipelines,
            tiles: HashMap::new(),
            resident_bytes: 0,
            frame: StreamBuffer::new("trees this frame"),
            groups: Vec::new(),
            scratch: Vec::new(),
            shadow_texel: 1.0,
        }
    }

    fn bind_for(&self, rep: u32, proto: usize) -> Option<&wgpu::BindGroup> {
        let (assets, shared) = (self.assets.as_ref()?, self.shared.as_ref()?);
        if rep == 3 {
            shared.atlases.get(proto)
        } else {
            shared.species.get(assets.prototypes.get(proto)?.species)
        }
    }

    /// Draws `count` instances from `first` of the bound instance buffer as representation `rep`
    /// of prototype `proto`; returns triangles.
    fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        pipes: [Option<&wgpu::RenderPipeline>; 3],
        rep: u32,
        proto: usize,
        instances: std::ops::Range<u32>,
    ) -> u64 {
        let (Some(assets), Some(group)) = (self.assets.as_ref(), self.bind_for(rep, proto)) else { return 0 };
        let n = u64::from(instances.end - instances.start);
        pass.set_bind_group(1, group, &[]);
        if rep == 3 {
            let Some(p) = pipes[2] else { return 0 };
            pass.set_pipeline(p);
            pass.draw(0..6, instances);
            return 2 * n;
        }
        let info = &assets.prototypes[proto];
        let [bark, leaf] = info.lods[rep as usize];
        let mut triangles = 0;
        for (pipe, first, count) in [(pipes[0], info.bark_first, bark), (pipes[1], info.leaf_first, leaf)] {
            let Some(p) = pipe else { continue };
            if count == 0 {
                continue;
            }
            pass.set_pipeline(p);
            pass.draw_indexed(first..first + count, 0, instances.clone());
            triangles += u64::from(count / 3) * n;
        }
        triangles
    }

    /// Draws group `g`'s bark (`part` 0) or leaves (1) with the bound pipeline, binding its
    /// species' textures unless `bound` says they already are; returns triangles.
    fn draw_mesh_part(&self, pass: &mut wgpu::RenderPass<'_>, part: usize, g: &Group, bound: &mut Option<usize>) -> u64 {
        let Some(assets) = self.assets.as_ref() else { return 0 };
        let info = &assets.prototypes[g.proto as usize];
        let [bark, leaf] = info.lods[g.rep as usize];
        let (first, count) = if part == 0 { (info.bark_first, bark) } else { (info.leaf_first, leaf) };
        if count == 0 {
            return 0;
        }
        if *bound != Some(info.species) {
            let Some(group) = self.bind_for(g.rep, g.proto as usize) else { return 0 };
            pass.set_bind_group(1, group, &[]);
            *bound = Some(info.species);
        }
        pass.draw_indexed(first..first + count, 0, g.first..g.first + g.count);
        u64::from(count / 3) * u64::from(g.count)
    }

    fn bind_mesh(&self, pass: &mut wgpu::RenderPass<'_>) -> bool {
        let Some(shared) = &self.shared else { return false };
        pass.set_vertex_buffer(0, shared.vertices.slice(..));
        pass.set_index_buffer(shared.indices.slice(..), wgpu::IndexFormat::Uint32);
        true
    }
}

/// Whether a sphere is inside all six planes (within its radius).
fn sphere_visible(planes: &[Vec4; 6], c: Vec3, r: f32) -> bool {
    planes.iter().all(|p| p.truncate().dot(c) + p.w >= -r * p.truncate().length())
}

impl Layer for TreesLayer {
    fn name(&self) -> &'static str {
        super::NAME
    }

    fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode) {
        if self.shared.is_some() {
            self.pipelines.prepare(device, mode);
        }
    }

    fn upload(&mut self, device: &wgpu::Device, key: TileId, data: Box<dyn Decoded>) -> Result<(), String> {
        let data = downcast::<TileTrees>(data, self.name())?;
        if self.shared.is_none() {
            return Err(format!("trees {key}: the bake has no shared trees pack"));
        }
        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("trees of a tile"),
            contents: bytemuck::cast_slice(&data.trees),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let bytes = buffer.size();
        self.resident_bytes += bytes;
        if let Some(old) = self.tiles.insert(key, GpuTile { buffer, data: *data, bytes }) {
            self.resident_bytes -= old.bytes;
        }
        Ok(())
    }

    fn evict(&mut self, key: TileId) {
        if let Some(t) = self.tiles.remove(&key) {
            self.resident_bytes -= t.bytes;
        }
    }

    fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }

    /// Two triangles a tree: what an impostor costs, the common case (the count only weighs
    /// shadow redraws and the HUD).
    fn extent(&self, key: TileId) -> Option<Extent> {
        self.tiles.get(&key).map(|t| Extent {
            min: Vec3::from(t.data.bounds.0),
            max: Vec3::from(t.data.bounds.1),
            triangles: 2 * t.data.trees.len() as u64,
        })
    }

    fn prepare_frame(&mut self, ctx: &FrameContext<'_>, view: &[DrawItem]) -> Counts {
        let mut counts = Counts::default();
        self.groups.clear();
        self.shadow_texel = ctx.uniforms.sun_dir[3].max(1e-6);
        let Some(assets) = self.assets.clone() else { return counts };
        let np = assets.prototypes.len();
        self.scratch.resize_with(4 * np, Vec::new);
        self.scratch.iter_mut().for_each(Vec::clear);
        let planes = culling::planes(Mat4::from_cols_array_2d(&ctx.uniforms.view_proj));
        let eye = Vec3::from_slice(&ctx.uniforms.camera_pos[..3]);
        let (mut mesh, mut imp) = (0u64, 0u64);
        for item in view {
            let Some(tile) = self.tiles.get(&item.key) else { continue };
            for (tree, &proto) in tile.data.trees.iter().zip(&tile.data.prototypes) {
                let info = &assets.prototypes[proto as usize];
                let s = tree.scale_tint[0];
                let (sin, cos) = tree.pos_yaw[3].sin_cos();
                let c = Vec3::new(info.center[0] * cos - info.center[1] * sin, info.center[0] * sin + info.center[1] * cos, info.center[2]);
                let centre = Vec3::new(tree.pos_yaw[0], tree.pos_yaw[1], tree.pos_yaw[2]) + c * s;
                let r = info.radius * s;
                if !sphere_visible(&planes, centre, r) {
                    continue;
                }
                let px = 2.0 * r * ctx.focal_px / (centre - eye).length().max(1e-3);
                let choice = classify(px, tree.seed_rep[0], assets.atlases.get(proto as usize).map(|a| a.view_px));
                let mip = assets.atlases.get(proto as usize).map_or(0.0, |a| atlas_mip(px, a.view_px, a.mips.len()));
                let mut push = |rep: u32, far: bool| {
                    let mut t = *tree;
                    t.light_up[3] = choice.t;
                    t.light_side[3] = mip;
                    t.seed_rep[1] = rep | if far { FAR_BIT } else { 0 };
                    self.scratch[rep as usize * np + proto as usize].push(t);
                    if rep == 3 {
                        imp += 1;
                    } else {
                        mesh += 1;
                    }
                };
                if choice.t < 1.0 {
                    push(choice.near, false);
                }
                if choice.t > 0.0 {
                    push(choice.near + 1, true);
                }
            }
        }
        let mut all: Vec<GpuTree> = Vec::new();
        for (k, list) in self.scratch.iter().enumerate() {
            if !list.is_empty() {
                self.groups.push(Group { rep: (k / np) as u32, proto: (k % np) as u32, first: all.len() as u32, count: list.len() as u32 });
                all.extend_from_slice(list);
            }
        }
        self.frame.write(ctx.device, ctx.queue, &all);
        counts.add("trees_mesh", mesh);
        counts.add("trees_impostor", imp);
        counts
    }

    fn record(&self, phase: Phase, mode: ViewMode, pass: &mut wgpu::RenderPass<'_>, b: &Bindings<'_>, items: &[DrawItem]) -> u64 {
        let Some(assets) = &self.assets else { return 0 };
        match phase {
            Phase::Opaque => {
                let Some(buffer) = self.frame.get() else { return 0 };
                if !self.bind_mesh(pass) {
                    return 0;
                }
                pass.set_bind_group(0, b.frame, &[]);
                pass.set_bind_group(2, b.surface, &[]);
                // All bark, then all leaves, then the impostors: one pipeline bind per kind a frame
                // rather than two per prototype group, and a bind group only when the species (or
                // the atlas) changes.
                let mut triangles = 0;
                pass.set_vertex_buffer(1, buffer.slice(..));
                for (part, kind) in [(0, Kind::Bark), (1, Kind::Leaf)] {
                    let Some(p) = self.pipelines.fill(mode, kind) else { continue };
                    pass.set_pipeline(p);
                    let mut bound = None;
                    for g in self.groups.iter().filter(|g| g.rep != 3) {
                        triangles += self.draw_mesh_part(pass, part, g, &mut bound);
                    }
                }
                if let Some(p) = self.pipelines.fill(mode, Kind::Impostor) {
                    // Impostors read their instances from slot 0.
                    pass.set_vertex_buffer(0, buffer.slice(..));
                    pass.set_pipeline(p);
                    for g in self.groups.iter().filter(|g| g.rep == 3) {
                        let Some(group) = self.bind_for(3, g.proto as usize) else { continue };
                        pass.set_bind_group(1, group, &[]);
                        pass.draw(0..6, g.first..g.first + g.count);
                        triangles += 2 * u64::from(g.count);
                    }
                }
                triangles
            }
            Phase::Shadow => {
                if !self.bind_mesh(pass) {
                    return 0;
                }
                pass.set_bind_group(0, b.frame, &[]);
                let pipes = [self.pipelines.shadow(Kind::Bark), self.pipelines.shadow(Kind::Leaf), self.pipelines.shadow(Kind::Impostor)];
                let impostors = !assets.atlases.is_empty();
                let mut triangles = 0;
                for item in items {
                    let Some(tile) = self.tiles.get(&item.key) else { continue };
                    for &(proto, first, count) in &tile.data.runs {
                        let info = &assets.prototypes[proto as usize];
                        // Camera-independent, so the map stays right while its casters do.
                        let texels = 2.0 * info.radius / self.shadow_texel;
                        let rep = if impostors && texels < SHADOW_MESH_TEXELS { 3 } else { 2 };
                        if rep == 3 {
                            pass.set_vertex_buffer(0, tile.buffer.slice(..));
                            triangles += self.draw(pass, pipes, 3, proto as usize, first..first + count);
                            self.bind_mesh(pass);
                        } else {
                            pass.set_vertex_buffer(1, tile.buffer.slice(..));
                            triangles += self.draw(pass, pipes, 2, proto as usize, first..first + count);
                        }
                    }
                }
                triangles
            }
            _ => 0,
        }
    }
}
