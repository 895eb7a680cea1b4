//! World products of the density volume: the volume itself (with its occupancy field) and the
//! per-tile hashes of what each tile's geometry reads from it.

use std::borrow::Cow;

use rayon::prelude::*;

use super::engine::{KeyCtx, WorldCtx};
use super::hit_check;
use super::inputs::{density_hash, raw_density_hash, settings_hash, tile_input_hashes, TileInputHashes};
use super::product::{AnyValue, WorldProduct, WorldValue};
use super::stage_cache::StageInputs;
use super::BakeError;
use crate::ao::OccupancyField;
use crate::density::{block_count, label_block, BlockLabels, DensityVolume, Flood, CONNECTIVITY_BLOCK};

/// Version of the density volume's (noise, floor, brushes, floaters, closed sides) algorithm: bump it whenever its output for the same inputs changes, so stale
/// cache entries are never used (and re-pin `tests/tests/golden.rs`).
const DENSITY_VERSION: u32 = 2;
/// Version of the per-tile input hashes' algorithm: bump it whenever its output for the same inputs changes, so stale
/// cache entries are never used (and re-pin `tests/tests/golden.rs`).
const TILE_INPUTS_VERSION: u32 = 1;

/// The density volume and its occupancy field.
pub struct Volume {
    pub density: DensityVolume,
    pub occupancy: OccupancyField,
}

/// `volume`: noise, floor, brushes and floater removal over the whole sample grid.
pub struct DensityProduct;

impl DensityProduct {
    fn volume(keys: &KeyCtx, density: DensityVolume) -> Result<Volume, BakeError> {
        let occupancy = OccupancyField::from_densities(density.dims, &density.data)
            .map_err(|source| BakeError::Occupancy { world: keys.plan().world_name(), source })?;
        Ok(Volume { density, occupancy })
    }

    /// A cached volume: one finite f32 per sample.
    fn parse(keys: &KeyCtx, bytes: &[u8]) -> Result<DensityVolume, String> {
        let dims = keys.plan().world.dims();
        let expected = dims.iter().try_fold(4usize, |n, &d| n.checked_mul(d)).ok_or("the volume's size overflows")?;
        Ok(DensityVolume { dims, data: hit_check::volume(bytes, expected)? })
    }
}

impl WorldProduct for DensityProduct {
    fn name(&self) -> &'static str {
        "volume"
    }
    fn report_stage(&self) -> &'static str {
        "density"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new("density", DENSITY_VERSION).with("world density inputs", density_hash(keys.plan().world)))
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let world = ctx.plan().world;
        // The raw noise is most of the work and does not change with brushes or floater settings,
        // so it has its own cache entry.
        let field = crate::density::DensityField::new(world);
        let raw_inputs = StageInputs::new("raw density", DENSITY_VERSION).with("noise and floor", raw_density_hash(world));
        // Shards on machines of their own split the noise and the labelling among them; shards that
        // share a machine leave the volume to the one that claims it (`share`), which makes it whole
        // on all of the machine's threads, as a whole bake does.
        let split = ctx.role().is_shard() && ctx.machine_once().is_none();
        let raw = match ctx.cache().lookup("volume", &raw_inputs, |b| Self::parse(ctx, &b)) {
            Some(v) => v,
            None if !split => {
                let v = field.volume();
                ctx.cache().computed("volume", &raw_inputs, bytemuck::cast_slice(&v.data));
                v
            }
            None => {
                // Shards split the noise by z planes, and each finishes the volume from them.
                let dims = world.dims();
                let plane = dims[0] * dims[1];
                let slabs = ctx.shared_items(
                    "density plane",
                    &raw_inputs,
                    dims[2],
                    |z| Ok(field.slab(z)),
                    |slab| Ok(bytemuck::cast_slice(slab).to_vec()),
                    |_, b| hit_check::volume(b, 4 * plane),
                )?;
                let mut data = Vec::with_capacity(plane * dims[2]);
                slabs.into_iter().for_each(|s| data.extend_from_slice(&s));
                let v = DensityVolume { dims, data };
                if !ctx.cache().contains(&raw_inputs) {
                    ctx.cache().computed("volume", &raw_inputs, bytemuck::cast_slice(&v.data));
                }
                v
            }
        };
        // The clean-ups' block labelling is split among shards too; each joins all the labels.
        let dims = world.dims();
        let label = |v: &DensityVolume, flood: Flood| -> Result<Vec<BlockLabels>, BakeError> {
            let blocks = block_count(dims, CONNECTIVITY_BLOCK);
            if !split {
                return Ok((0..blocks).into_par_iter().map(|i| label_block(v, flood, CONNECTIVITY_BLOCK, i)).collect());
            }
            let pass = match flood {
                Flood::Floaters { .. } => "floaters",
                Flood::SealedAir { .. } => "sealed air",
            };
            let inputs =
                StageInputs::new("density block", DENSITY_VERSION).with("volume", self.inputs(ctx)?.key().0).with("pass", settings_hash(&pass));
            ctx.shared_items(
                "density block",
                &inputs,
                blocks,
                |i| Ok(label_block(v, flood, CONNECTIVITY_BLOCK, i)),
                |l| Ok(l.to_bytes()),
                |i, b| BlockLabels::from_bytes(b, dims, CONNECTIVITY_BLOCK, i),
            )
        };
        let (density, _) = crate::density::finish(world, &field, raw, label)?;
        let voxels = density.data.len();
        Ok((Box::new(Self::volume(ctx, density)?), format!("{voxels} voxels: noise, floor, brushes, floaters")))
    }
    fn stored(&self) -> bool {
        true
    }
    /// The noise planes and the clean-ups' block labelling are split among shards; each shard
    /// applies brushes and joins the labels over the whole volume itself.
    fn splits_its_work(&self) -> bool {
        true
    }
    /// Shards that share a machine split nothing: one makes the whole volume on the machine's
    /// threads, in a fraction of the time each would take to join it from the split items.
    fn share(&self, ctx: &WorldCtx) -> Result<bool, BakeError> {
        Ok(ctx.machine_once().is_some())
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(value.downcast_ref::<Volume>().map(|v| Cow::Borrowed(bytemuck::cast_slice(&v.density.data))))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        let density = Self::parse(keys, &bytes)?;
        Ok(Box::new(Self::volume(keys, density).map_err(|e| e.to_string())?))
    }
}

/// `tile-inputs`: per tile, hashes of the density and occupancy its geometry reads, so an
/// unchanged world never loads the volume and a brush stroke rebakes only the tiles it touches.
pub struct TileInputsProduct;

impl WorldProduct for TileInputsProduct {
    fn name(&self) -> &'static str {
        "tile-inputs"
    }
    fn report_stage(&self) -> &'static str {
        "density"
    }
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        let plan = keys.plan();
        Ok(StageInputs::new("tile-inputs", TILE_INPUTS_VERSION)
            .with("density", keys.world_key("volume")?.key().0)
            .with("tiling", settings_hash(&(plan.tiling.tile_voxels, plan.tiling.tiles)))
            .with("ao reach", settings_hash(&plan.world.spec.ao.radius_voxels.to_bits())))
    }
    fn world_needs(&self) -> &'static [&'static str] {
        &["volume"]
    }
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError> {
        let plan = ctx.plan();
        let ao = &plan.world.spec.ao;
        let v = ctx.world::<Volume>("volume")?;
        let hashes = tile_input_hashes(&v.density, &plan.tiling, &plan.tiles, ao.radius_voxels + ao.start_offset_voxels);
        Ok((Box::new(hashes), format!("input hashes of {} tiles", plan.tiles.len())))
    }
    fn stored(&self) -> bool {
        true
    }
    fn encode<'v>(&self, value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(value.downcast_ref::<Vec<TileInputHashes>>().map(|h| Cow::Owned(h.iter().flat_map(|x| x.to_bytes()).collect())))
    }
    fn decode(&self, keys: &KeyCtx, bytes: Vec<u8>) -> Result<WorldValue, String> {
        Ok(Box::new(hit_check::tile_inputs(&bytes, keys.plan().tiles.len())?))
    }
}
