//! The terrain layer: each resident tile's vertex and index buffers, drawn in the opaque phase
//! (one pipeline per view mode), the shadow phase and, in the wireframe mode, the overlay phase.

use std::collections::HashMap;

use glam::Vec3;
use wgpu::util::DeviceExt;

use super::decode::TerrainData;
use super::pipelines::{TerrainPipelines, WireMethod};
use super::vertex::edge_indices;
use crate::layers::{downcast, Bindings, Decoded, DrawItem, Extent, Layer, LayerInit, Phase};
use crate::streaming::TileId;
use crate::view_mode::ViewMode;

/// A tile's terrain buffers.
pub struct GpuTerrain {
    /// The tile's [`TerrainVertex`](super::vertex::TerrainVertex)es.
    pub vertices: wgpu::Buffer,
    /// Its u32 triangle list, surface then skirts.
    pub indices: wgpu::Buffer,
    /// Indices in `indices` (three per triangle, skirts included).
    pub index_count: u32,
    /// Wireframe fallback (line list), present only when the adapter lacks polygon-mode line.
    pub edges: Option<(wgpu::Buffer, u32)>,
    /// Bounds of its vertices (skirts included).
    pub bounds: (Vec3, Vec3),
    /// Bytes of all buffers above.
    pub gpu_bytes: u64,
}

/// The terrain's GPU side. Tiles are looked up by key, never iterated in map order.
pub struct TerrainLayer {
    tiles: HashMap<TileId, GpuTerrain>,
    resident_bytes: u64,
    pipelines: TerrainPipelines,
}

impl TerrainLayer {
    /// The layer, with the pipelines `init.mode` draws with.
    pub fn new(init: &LayerInit<'_>) -> Self {
        let wire = if init.polygon_line { WireMethod::PolygonLine } else { WireMethod::EdgeList };
        let mut layer =
            TerrainLayer { tiles: HashMap::new(), resident_bytes: 0, pipelines: TerrainPipelines::new(init.device, init.layouts, init.color, wire) };
        layer.prepare(init.device, init.mode);
        layer
    }

    /// The resident tile `key`.
    pub fn get(&self, key: TileId) -> Option<&GpuTerrain> {
        self.tiles.get(&key)
    }

    fn upload_data(&mut self, device: &wgpu::Device, key: TileId, tile: &TerrainData) -> Result<(), String> {
        let name = format!("terrain {key}");
        // The decoder checked the indices; the cheap invariants are checked again here, because a
        // malformed tile must be refused with a message rather than reach the GPU.
        if tile.vertices.is_empty()
            || tile.indices.is_empty()
            || !tile.indices.len().is_multiple_of(3)
            || !tile.main_index_count.is_multiple_of(3)
            || tile.main_index_count as usize > tile.indices.len()
        {
            return Err(format!(
                "{name}: {} indices ({} main) over {} vertices are not whole triangles",
                tile.indices.len(),
                tile.main_index_count,
                tile.vertices.len()
            ));
        }
        let (lo, hi) = tile.vertices.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), v| {
            let p = Vec3::from(v.position);
            (lo.min(p), hi.max(p))
        });
        let buffer = |contents: &[u8], usage| device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(&name), contents, usage });
        let vertices = buffer(bytemuck::cast_slice(&tile.vertices), wgpu::BufferUsages::VERTEX);
        let indices = buffer(bytemuck::cast_slice(&tile.indices), wgpu::BufferUsages::INDEX);
        let mut gpu_bytes = vertices.size() + indices.size();
        let edges = (self.pipelines.wire_method == WireMethod::EdgeList).then(|| {
            let e = edge_indices(&tile.indices);
            let b = buffer(bytemuck::cast_slice(&e), wgpu::BufferUsages::INDEX);
            gpu_bytes += b.size();
            (b, e.len() as u32)
        });
        let gpu = GpuTerrain { vertices, indices, index_count: tile.indices.len() as u32, edges, bounds: (lo, hi), gpu_bytes };
        self.resident_bytes += gpu.gpu_bytes;
        if let Some(old) = self.tiles.insert(key, gpu) {
            self.resident_bytes -= old.gpu_bytes;
        }
        Ok(())
    }

    /// Binds groups 0–2 and draws `items` with `pipeline`, each over `indices` of its tile.
    fn draw<'t>(
        &'t self,
        pass: &mut wgpu::RenderPass<'_>,
        pipeline: &wgpu::RenderPipeline,
        b: &Bindings<'_>,
        items: &[DrawItem],
        indices: impl Fn(&'t GpuTerrain) -> Option<(&'t wgpu::Buffer, u32)>,
    ) -> u64 {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, b.frame, &[]);
        pass.set_bind_group(2, b.surface, &[]);
        let mut triangles = 0;
        for item in items {
            let Some(tile) = self.tiles.get(&item.key) else { continue };
            let Some((buffer, count)) = indices(tile) else { continue };
            pass.set_bind_group(1, b.tiles, &[item.uniform_offset]);
            pass.set_vertex_buffer(0, tile.vertices.slice(..));
            pass.set_index_buffer(buffer.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..count, 0, 0..1);
            triangles += u64::from(tile.index_count / 3);
        }
        triangles
    }
}

impl Layer for TerrainLayer {
    fn name(&self) -> &'static str {
        super::PRODUCT.name
    }

    fn prepare(&mut self, device: &wgpu::Device, mode: ViewMode) {
        self.pipelines.prepare(device, mode.shader_index(), mode == ViewMode::Wireframe, mode.shadowed());
    }

    fn upload(&mut self, device: &wgpu::Device, key: TileId, data: Box<dyn Decoded>) -> Result<(), String> {
        let tile = downcast::<TerrainData>(data, self.name())?;
        self.upload_data(device, key, &tile)
    }

    fn evict(&mut self, key: TileId) {
        if let Some(t) = self.tiles.remove(&key) {
            self.resident_bytes -= t.gpu_bytes;
        }
    }

    fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }

    fn extent(&self, key: TileId) -> Option<Extent> {
        self.tiles.get(&key).map(|t| Extent { min: t.bounds.0, max: t.bounds.1, triangles: u64::from(t.index_count / 3) })
    }

    fn record(&self, phase: Phase, mode: ViewMode, pass: &mut wgpu::RenderPass<'_>, b: &Bindings<'_>, items: &[DrawItem]) -> u64 {
        match phase {
            Phase::Shadow => {
                let Some(pipeline) = self.pipelines.shadow() else { return 0 };
                // Group 0 only: the caster pipeline reads the shadow map's projection.
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, b.frame, &[]);
                let mut triangles = 0;
                for item in items {
                    let Some(tile) = self.tiles.get(&item.key) else { continue };
                    pass.set_vertex_buffer(0, tile.vertices.slice(..));
                    pass.set_index_buffer(tile.indices.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(0..tile.index_count, 0, 0..1);
                    triangles += u64::from(tile.index_count / 3);
                }
                triangles
            }
            Phase::Opaque => match self.pipelines.fill(mode.shader_index()) {
                Some(fill) => self.draw(pass, fill, b, items, |t| Some((&t.indices, t.index_count))),
                None => 0,
            },
            Phase::Overlay if mode == ViewMode::Wireframe => {
                let Some(wire) = self.pipelines.wire() else { return 0 };
                let method = self.pipelines.wire_method;
                // The layer builds edge lists at upload whenever that method is in use; a tile
                // without one is skipped rather than drawn as garbage. Lines are not triangles.
                self.draw(pass, wire, b, items, |t| match (method, &t.edges) {
                    (WireMethod::PolygonLine, _) => Some((&t.indices, t.index_count)),
                    (WireMethod::EdgeList, Some((edges, n))) => Some((edges, *n)),
                    (WireMethod::EdgeList, None) => None,
                });
                0
            }
            _ => 0,
        }
    }
}
