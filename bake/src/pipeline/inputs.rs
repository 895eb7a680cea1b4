//! Content hashes of what each stage reads, so the cache can tell exactly which items changed.

use kiln_cache::store::KeyHasher;
use rayon::prelude::*;
use xxhash_rust::xxh3::Xxh3;

use super::lod::{TileId, Tiling};
use crate::density::DensityVolume;
use crate::world::World;

/// Hash of everything the density volume is made from: the world definition without the settings
/// of later stages, the brush strokes and the heightmap samples.
pub fn density_hash(world: &World) -> u128 {
    density_inputs_hash(world, true)
}

/// Hash of what the raw density (noise and floor, before brushes and floaters) is made from.
pub fn raw_density_hash(world: &World) -> u128 {
    density_inputs_hash(world, false)
}

fn density_inputs_hash(world: &World, with_edits: bool) -> u128 {
    let mut spec = world.spec.clone();
    spec.ao = Default::default();
    spec.lighting = Default::default();
    spec.trees = None;
    spec.grass = None;
    spec.name.clear();
    if !with_edits {
        spec.brushes = Default::default();
        spec.floaters = Default::default();
    }
    let mut h = KeyHasher::default();
    h.str(&spec.canonical_toml());
    if with_edits {
        h.str(&world.brushes_toml());
    }
    if let Some(hm) = &world.heightmap {
        h.u64(hm.width as u64).u64(hm.height as u64);
        let bytes: Vec<u8> = hm.samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        h.bytes(&bytes);
    }
    h.finish().0
}

/// Hash of any serialisable settings (through their canonical JSON form).
pub fn settings_hash<T: serde::Serialize>(value: &T) -> u128 {
    KeyHasher::default().str(&serde_json::to_string(value).expect("settings serialise")).finish().0
}

/// What one tile's geometry stage reads, as hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileInputHashes {
    /// Full-resolution density over the tile's footprint plus a margin of one LOD cell and one
    /// voxel, every Z: the mesh, its normals and its geometric error come from there.
    pub density: u128,
    /// Solid/air occupancy within the AO radius around the footprint: what AO rays can see.
    pub occupancy: u128,
}

impl TileInputHashes {
    /// Bytes of the serialised form.
    pub const BYTES: usize = 32;
    pub fn to_bytes(self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[..16].copy_from_slice(&self.density.to_le_bytes());
        b[16..].copy_from_slice(&self.occupancy.to_le_bytes());
        b
    }
    pub fn from_bytes(b: &[u8]) -> Self {
        TileInputHashes {
            density: u128::from_le_bytes(b[..16].try_into().expect("16 bytes")),
            occupancy: u128::from_le_bytes(b[16..32].try_into().expect("16 bytes")),
        }
    }
}

/// Solid bits of every voxel column, `words` u64s per (x, y), X fastest.
struct ColumnBits {
    words: usize,
    bits: Vec<u64>,
}

impl ColumnBits {
    fn new(v: &DensityVolume) -> Self {
        let [nx, ny, nz] = v.dims;
        let words = nz.div_ceil(64);
        let mut bits = vec![0u64; nx * ny * words];
        bits.par_chunks_mut(nx * words).enumerate().for_each(|(y, row)| {
            for z in 0..nz {
                let plane = &v.data[nx * (y + ny * z)..nx * (y + ny * z) + nx];
                for (x, d) in plane.iter().enumerate() {
                    if *d > 0.0 {
                        row[x * words + z / 64] |= 1 << (z % 64);
                    }
                }
            }
        });
        ColumnBits { words, bits }
    }
}

fn clamp_range(lo: i64, hi: i64, n: usize) -> (usize, usize) {
    (lo.clamp(0, n as i64) as usize, hi.clamp(0, n as i64) as usize)
}

/// The input hashes of every tile, in `tiles` order. `ao_reach` is how far (voxels) AO rays reach
/// beyond a vertex.
pub fn tile_input_hashes(volume: &DensityVolume, tiling: &Tiling, tiles: &[TileId], ao_reach: f32) -> Vec<TileInputHashes> {
    let columns = ColumnBits::new(volume);
    let [nx, ny, nz] = volume.dims;
    tiles
        .par_iter()
        .map(|&id| {
            let (min, cells) = tiling.cell_range(id);
            let s = Tiling::stride(id.level) as i64;
            let span = cells[0] as i64 * s;
            let fp = s + 1;
            let (x0, x1) = clamp_range(min[0] as i64 - fp, min[0] as i64 + span + fp + 1, nx);
            let (y0, y1) = clamp_range(min[1] as i64 - fp, min[1] as i64 + span + fp + 1, ny);
            let mut h = Xxh3::new();
            for z in 0..nz {
                for y in y0..y1 {
                    // Native byte order: these hashes are cache keys on this machine, never output.
                    h.update(bytemuck::cast_slice(&volume.data[nx * (y + ny * z) + x0..nx * (y + ny * z) + x1]));
                }
            }
            let density = h.digest128();
            let reach = ao_reach.ceil() as i64 + 2;
            let (x0, x1) = clamp_range(min[0] as i64 - reach, min[0] as i64 + span + reach + 1, nx);
            let (y0, y1) = clamp_range(min[1] as i64 - reach, min[1] as i64 + span + reach + 1, ny);
            let mut h = Xxh3::new();
            for y in y0..y1 {
                h.update(bytemuck::cast_slice(&columns.bits[(y * nx + x0) * columns.words..(y * nx + x1) * columns.words]));
            }
            TileInputHashes { density, occupancy: h.digest128() }
        })
        .collect()
}
