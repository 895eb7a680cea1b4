//! The product frame: what a bake product is, and the one cache codec for every product's output.
//!
//! A bake is a list of registered products ([`super::Registry`]) in dependency order:
//! - a [`WorldProduct`] is computed once per bake from the whole world (the density volume, light
//!   transport), lazily: only when some tile product that reads it has an item to compute;
//! - a [`TileProduct`] bakes one tile into pack sections (terrain geometry, per-tile lighting).
//!
//! Each declares the named inputs of its cache key, what it reads (world products, and earlier tile
//! products of the same tile), and a pure function from those to its output. The engine
//! (`pipeline/engine.rs`) looks every item up in the stage cache, computes what is missing in parallel
//! and assembles each tile's pack from the products' sections in registry order.

use std::any::Any;
use std::borrow::Cow;

use kiln_formats::SectionKind;

use super::engine::{KeyCtx, TileCtx, WorldCtx};
use super::stage_cache::StageInputs;
use super::tile::TileSummary;
use super::BakeError;
use crate::lighting::WaterMedium;

/// A world product's value, type-erased so the registry can hold any product; products read each
/// other's values back through the `world` methods of the engine's `WorldCtx` and `TileCtx` with their concrete type.
pub type WorldValue = Box<AnyValue>;
/// What a [`WorldValue`] holds, as the engine lends it back to its product.
pub type AnyValue = dyn Any + Send + Sync;

/// One encoded pack section, as a product made it.
#[derive(Clone, Debug, PartialEq)]
pub struct RawSection {
    /// The section's kind in the pack's section table.
    pub kind: SectionKind,
    /// Whether a reader that does not know `kind` must refuse the pack.
    pub required: bool,
    /// The encoded section payload.
    pub bytes: Vec<u8>,
}

/// A tile product's output for one tile: the sections it adds to the tile's pack, and (from the
/// product that owns the tile's surface) what the manifest records about the tile.
#[derive(Clone, Debug, PartialEq)]
pub struct TileOutput {
    /// The sections, in the order they go into the pack.
    pub sections: Vec<RawSection>,
    /// The manifest's record of the tile; `Some` only from the product that owns its surface.
    pub summary: Option<TileSummary>,
}

impl TileOutput {
    /// The bytes of the section of `kind`, if this output has one.
    pub fn section(&self, kind: SectionKind) -> Option<&[u8]> {
        self.sections.iter().find(|s| s.kind == kind).map(|s| s.bytes.as_slice())
    }

    /// The cache form: summary flag (+ summary), section count, then per section its kind,
    /// required flag, length and bytes. Little-endian throughout.
    pub fn to_bytes(&self) -> Vec<u8> {
        let len: usize = self.sections.iter().map(|s| 13 + s.bytes.len()).sum();
        let mut out = Vec::with_capacity(1 + TileSummary::BYTES + 4 + len);
        match &self.summary {
            Some(s) => {
                out.push(1);
                s.write(&mut out);
            }
            None => out.push(0),
        }
        out.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for s in &self.sections {
            out.extend_from_slice(&s.kind.0);
            out.push(u8::from(s.required));
            out.extend_from_slice(&(s.bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&s.bytes);
        }
        out
    }

    /// Parses [`TileOutput::to_bytes`]; `None` when the bytes are not exactly one well-formed
    /// output (then the item is recomputed). Never allocates more than the input's size.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let mut r = Reader(b);
        let summary = match r.take(1)?[0] {
            0 => None,
            1 => Some(TileSummary::read(r.take(TileSummary::BYTES)?)?),
            _ => return None,
        };
        let count = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
        // Each section takes at least 13 bytes, so a count beyond that is a lie.
        if count > r.0.len() / 13 {
            return None;
        }
        let mut sections = Vec::with_capacity(count);
        for _ in 0..count {
            let kind = SectionKind(r.take(4)?.try_into().ok()?);
            let required = match r.take(1)?[0] {
                0 => false,
                1 => true,
                _ => return None,
            };
            let n = usize::try_from(u64::from_le_bytes(r.take(8)?.try_into().ok()?)).ok()?;
            sections.push(RawSection { kind, required, bytes: r.take(n)?.to_vec() });
        }
        r.0.is_empty().then_some(TileOutput { sections, summary })
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
}

/// A step computed once per bake from the whole world, which tile products (and later world
/// products) read.
pub trait WorldProduct: Sync {
    /// Unique name; tile products name it in [`TileProduct::world_needs`].
    fn name(&self) -> &'static str;
    /// The stage of the bake report its time counts towards ("density", "lighting").
    fn report_stage(&self) -> &'static str;
    /// The named inputs of its cache key (also what tile products fold into theirs).
    fn inputs(&self, keys: &KeyCtx) -> Result<StageInputs, BakeError>;
    /// World products whose values [`WorldProduct::compute`] reads.
    fn world_needs(&self) -> &'static [&'static str] {
        &[]
    }
    /// Tile products and the tiles (indices into the bake's tile list) whose outputs
    /// [`WorldProduct::compute`] reads.
    fn tile_needs(&self, _keys: &KeyCtx) -> Vec<(&'static str, Vec<usize>)> {
        Vec::new()
    }
    /// Whether [`WorldProduct::compute`] resolves its [`WorldProduct::tile_needs`] itself, if and
    /// when it reads them (through `WorldCtx::resolved_tile_outputs`): the engine then does not
    /// resolve them first. Light transport reads the level-0 tiles only where it is made: the
    /// shards that share a machine make it once.
    fn resolves_its_tiles(&self) -> bool {
        false
    }
    /// World products registered after this one that it is made before whenever the bake makes
    /// them, because they let go of what it reads: light transport releases every stored value
    /// before it traces, so the grass ground's shape, made from the density volume, comes first,
    /// while the bake still holds the volume for the trees.
    fn made_before(&self) -> &'static [&'static str] {
        &[]
    }
    /// Computes the value, and a one-line description of the work for the bake report.
    fn compute(&self, ctx: &WorldCtx) -> Result<(WorldValue, String), BakeError>;
    /// Whether [`WorldProduct::encode`] stores its values. Shards of a bake claim a stored product
    /// before computing it, so one computes it and the others read it; an unstored product is
    /// computed by each process that needs it.
    fn stored(&self) -> bool {
        false
    }
    /// Whether its computation splits its work among shards itself (through
    /// `Engine::shared_items`): then shards do not claim the product as a whole before their share
    /// is done, and each puts the value together from the items unless it has a
    /// [`WorldProduct::share`] step.
    fn splits_its_work(&self) -> bool {
        false
    }
    /// For a stored product that splits its work: computes and stores this process's share of
    /// the items without reading the others' (`Engine::share_items`), if it has such a share, and
    /// says with `true` that one shard makes the value for all. A shard then claims the product as
    /// a whole, so that one shard puts the items together (compressing a shared pack, say), or
    /// makes the whole value, while the others wait and read what it stored. `false` (the
    /// default): every shard puts the items together itself.
    fn share(&self, _ctx: &WorldCtx) -> Result<bool, BakeError> {
        Ok(false)
    }
    /// Whether its key and its computation read nothing but the world file, itself or through the
    /// products it needs: its world needs read only the world file too, and it reads no tile
    /// outputs. A bake that holds what it makes
    /// ([`MemoryUse::Hold`](super::MemoryUse::Hold)) computes such products alongside the others,
    /// on the cores the others leave idle.
    fn reads_only_the_world_file(&self) -> bool {
        false
    }
    /// The cache form of a value; `None` for products not worth storing (their consumers' outputs
    /// are stored instead). `Some` exactly when [`WorldProduct::stored`]. A value that holds its
    /// cache form (a shared pack, the density samples) lends it rather than copying it. An error
    /// says why a value cannot be put in its cache form (the engine's internal error).
    fn encode<'v>(&self, _value: &'v AnyValue) -> Result<Option<Cow<'v, [u8]>>, String> {
        Ok(None)
    }
    /// Parses [`WorldProduct::encode`]'s bytes, checking they are a well-formed value of this
    /// product; an error (why not) rebuilds it. The bytes are the value's to keep (a shared pack
    /// is its own cache form).
    fn decode(&self, _keys: &KeyCtx, _bytes: Vec<u8>) -> Result<WorldValue, String> {
        Err("this product is not cached".into())
    }
    /// Whether this bake's output holds a world-wide pack of this product (`shared/<name>.kpack`,
    /// listed in the manifest's `SHRD`): then the engine resolves the product for the output even
    /// when every tile pack comes from the cache.
    fn writes_shared_pack(&self, _keys: &KeyCtx) -> bool {
        false
    }
    /// The bytes of that pack (a complete pack: `PINF` of kind `Shared` and the product's sections).
    fn shared_pack<'v>(&self, _value: &'v AnyValue) -> Option<&'v [u8]> {
        None
    }
    /// Whether its computation reads every product's light occluders and light medium (light
    /// transport does): the engine then keeps those products' values for it.
    fn reads_light_inputs(&self) -> bool {
        false
    }
    /// The cache-key hash of the light occluders this product adds to light transport (trees),
    /// or `None` when it adds none to this world.
    fn light_occluder_key(&self, _keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
        Ok(None)
    }
    /// Those occluders in world space (called only when [`WorldProduct::light_occluder_key`] is `Some`).
    fn light_occluders(&self, _ctx: &WorldCtx) -> Result<OccluderMesh, BakeError> {
        Ok(OccluderMesh::default())
    }
    /// The cache-key hash of the medium this product puts light transport in (water), or `None`
    /// when it puts none in this world. At most one product of a bake gives a medium.
    fn light_medium_key(&self, _keys: &KeyCtx) -> Result<Option<u128>, BakeError> {
        Ok(None)
    }
    /// That medium (called only when [`WorldProduct::light_medium_key`] is `Some`); `None`: none.
    fn light_medium(&self, _ctx: &WorldCtx) -> Result<Option<WaterMedium>, BakeError> {
        Ok(None)
    }
}

/// Geometry a product adds to light transport that blocks and reflects light without being lit
/// itself (see `lighting::Occluders`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OccluderMesh {
    /// Vertex positions, world units.
    pub positions: Vec<[f32; 3]>,
    /// Three indices per triangle.
    pub indices: Vec<u32>,
    /// Albedo per triangle (linear RGB).
    pub albedo: Vec<[f32; 3]>,
    /// Triangle counts of spatially compact runs (one per tree), in order.
    pub clusters: Vec<u32>,
}

impl OccluderMesh {
    /// Appends `other` after this mesh's triangles.
    pub fn append(&mut self, other: OccluderMesh) {
        if self.positions.is_empty() && self.indices.is_empty() && self.albedo.is_empty() && self.clusters.is_empty() {
            // The first mesh is taken as it is, not copied.
            *self = other;
            return;
        }
        self.append_parts(other.positions, &other.indices, &other.albedo, &other.clusters);
    }

    /// Appends a mesh given by its parts (`indices` into `positions`), read where they are.
    pub fn append_parts(&mut self, positions: Vec<[f32; 3]>, indices: &[u32], albedo: &[[f32; 3]], clusters: &[u32]) {
        let base = self.positions.len() as u32;
        self.indices.extend(indices.iter().map(|&i| i + base));
        self.positions.extend(positions);
        self.albedo.extend_from_slice(albedo);
        self.clusters.extend_from_slice(clusters);
    }
}

/// A product baked tile by tile into sections of the tile's pack.
pub trait TileProduct: Sync {
    /// Unique name; it labels the product's key inside each pack's inputs hash.
    fn name(&self) -> &'static str;
    /// The stage of the bake report its time counts towards, and its progress bar's label.
    fn report_stage(&self) -> &'static str;
    /// The named inputs of one tile's cache key (`tile` indexes the bake's tile list).
    fn inputs(&self, tile: usize, keys: &KeyCtx) -> Result<StageInputs, BakeError>;
    /// World products [`TileProduct::bake`] reads.
    fn world_needs(&self) -> &'static [&'static str] {
        &[]
    }
    /// Earlier tile products whose output for the same tile [`TileProduct::bake`] reads.
    fn tile_needs(&self) -> &'static [&'static str] {
        &[]
    }
    /// The kinds of the sections it adds to a pack, in the order it adds them.
    fn sections(&self) -> &'static [SectionKind];
    /// Whether a tile may hold none of [`TileProduct::sections`] (the product has nothing there,
    /// e.g. trees in a world without any); otherwise it holds all of them.
    fn sections_optional(&self) -> bool {
        false
    }
    /// The cheap check of a cached pack (no decoding): whether the raw lengths of this product's
    /// sections (`raw_len`) fit a tile of `vertices` vertices.
    fn check_packed(&self, _vertices: u64, _raw_len: &dyn Fn(SectionKind) -> u64) -> Result<(), String> {
        Ok(())
    }
    /// Bakes one tile. Pure: depends only on the tile and what it declares it reads.
    fn bake(&self, tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError>;
    /// Whether a cached output is a well-formed output of this product for `tile` (checked on
    /// every cache hit; a bad entry is reported and rebuilt).
    fn validate(&self, tile: usize, output: &TileOutput, keys: &KeyCtx) -> Result<(), String>;
    /// Extra words for the bake report's line of this product's stage (e.g. CPU time per step).
    fn report_detail(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TileOutput {
        TileOutput {
            sections: vec![
                RawSection { kind: SectionKind(*b"TMSH"), required: true, bytes: vec![1, 2, 3] },
                RawSection { kind: SectionKind(*b"VXAO"), required: false, bytes: vec![] },
            ],
            summary: Some(TileSummary { bounds: ([0.0; 3], [1.0; 3]), own_error: 0.5, vertex_count: 3, triangle_count: 1 }),
        }
    }

    #[test]
    fn tile_outputs_round_trip_through_the_cache_codec() {
        let o = sample();
        assert_eq!(TileOutput::from_bytes(&o.to_bytes()), Some(o));
        let bare = TileOutput { sections: vec![], summary: None };
        assert_eq!(TileOutput::from_bytes(&bare.to_bytes()), Some(bare));
    }

    #[test]
    fn every_truncation_or_extension_of_a_cached_output_is_refused() {
        let bytes = sample().to_bytes();
        for n in 0..bytes.len() {
            assert_eq!(TileOutput::from_bytes(&bytes[..n]), None, "truncated to {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(TileOutput::from_bytes(&longer), None);
        let mut lying = bytes;
        let count_at = 1 + TileSummary::BYTES;
        lying[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(TileOutput::from_bytes(&lying), None);
    }
}
