//! Tree sections: the shared trees pack's prototypes (`TPRO`), textures (`TTEX`), impostor atlases
//! (`TIMP`) and optional two-card billboards (`TCRD`); a tile pack's instances (`TINS`) and their
//! baked lighting (`TILT`). Layouts in `formats/SPEC.md`.

use super::codec::ByteWriter;
use super::{rgb9e5, ByteReader};
use crate::container::SectionKind;
use crate::error::{bad, FormatError};
use crate::pack::Section;

/// Longest species name.
const MAX_NAME: usize = 64;
/// Largest texture or atlas side in texels.
const MAX_SIDE: u32 = 8192;

/// One level of detail of a prototype: prefixes of its bark and leaf index lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeLod {
    /// How many of `bark_indices` this LOD draws (a multiple of 3).
    pub bark_index_count: u32,
    /// How many of `leaf_indices` this LOD draws (a multiple of 3).
    pub leaf_index_count: u32,
}

/// One unique tree: its mesh in object space (Z up, trunk base at the origin, world units).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreePrototype {
    /// Index into [`TreePrototypes::species`].
    pub species: u16,
    /// The seed it was grown from.
    pub seed: u64,
    /// Height above the trunk base.
    pub height: f32,
    /// Horizontal radius of the crown around the trunk axis.
    pub crown_radius: f32,
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates (bark texture for bark vertices, leaf texture for leaf vertices).
    pub uvs: Vec<[f32; 2]>,
    /// Self-occlusion per vertex: `ao = byte / 255`, 1 = open.
    pub ao: Vec<u8>,
    /// Bark triangles (one-sided, opaque), coarse branches first so LODs are prefixes.
    pub bark_indices: Vec<u32>,
    /// Leaf triangles (two-sided, alpha-tested at 0.5), ordered so LODs are prefixes.
    pub leaf_indices: Vec<u32>,
    /// Full, reduced branches, leaves down to 25 %: non-increasing prefixes.
    pub lods: [TreeLod; 3],
}

/// `TPRO` (optional, shared trees pack): every prototype of the bake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreePrototypes {
    /// Species names, in the world file's order.
    pub species: Vec<String>,
    /// The prototypes; instances name them by index.
    pub prototypes: Vec<TreePrototype>,
}

/// One mip level of an RGBA8 texture (sRGB colour, linear alpha), rows top to bottom.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rgba8Level {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// `4 · width · height` bytes.
    pub rgba: Vec<u8>,
}

/// A species' textures, each a full mip chain (level 0 first, each level half the previous, down to 1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpeciesTextures {
    /// Bark colour (alpha 255).
    pub bark: Vec<Rgba8Level>,
    /// Leaf or needle colour, the shape in alpha; mips keep the alpha-tested coverage.
    pub leaf: Vec<Rgba8Level>,
}

/// `TTEX` (optional, shared trees pack): textures per species, in `TPRO`'s species order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeTextures {
    /// One entry per species.
    pub species: Vec<SpeciesTextures>,
}

/// How an impostor atlas maps view directions to its grid of views.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ImpostorLayout {
    /// The whole sphere of directions, octahedral.
    #[default]
    Octahedral,
    /// The upper hemisphere only, hemi-octahedral.
    HemiOctahedral,
}

/// One mip level of an impostor atlas: `size²` texels of each map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AtlasLevel {
    /// Side in texels: `grid · view_px >> level`.
    pub size: u32,
    /// RGBA8: sRGB albedo, alpha = coverage; colour dilated into empty texels.
    pub albedo: Vec<u8>,
    /// RGBA8: object-space normal `n·0.5 + 0.5` in RGB, AO in alpha.
    pub normal: Vec<u8>,
    /// Depth along the view direction from the sphere centre: 0 → −radius (toward the viewer), 65535 → +radius.
    pub depth: Vec<u16>,
}

/// A prototype's impostor: `grid × grid` orthographic views of its bounding sphere.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImpostorAtlas {
    /// Direction mapping.
    pub layout: ImpostorLayout,
    /// Views per side.
    pub grid: u32,
    /// Texels per view side at level 0 (a power of two).
    pub view_px: u32,
    /// Bounding-sphere centre in object space.
    pub center: [f32; 3],
    /// Bounding-sphere radius: each view spans `2·radius`.
    pub radius: f32,
    /// Mip levels, level 0 first.
    pub levels: Vec<AtlasLevel>,
}

/// `TIMP` (optional, shared trees pack): one atlas per prototype, in `TPRO`'s order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeImpostors {
    /// The atlases.
    pub atlases: Vec<ImpostorAtlas>,
}

/// One billboard card of the reference's two-card layout, seen from +Y.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeCard {
    /// Colour (RGBA8, sRGB, alpha = coverage).
    pub color: Rgba8Level,
    /// Normal (RGBA8, `n·0.5 + 0.5`, alpha 255).
    pub normal: Rgba8Level,
}

/// A prototype's two cards.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreePrototypeCards {
    /// Object-space rectangle of the leaf card: `[x_min, z_min, x_max, z_max]`.
    pub leaf_extent: [f32; 4],
    /// The leaves alone.
    pub leaf: TreeCard,
    /// Object-space rectangle of the branch card.
    pub branch_extent: [f32; 4],
    /// The branches alone.
    pub branch: TreeCard,
}

/// `TCRD` (optional, shared trees pack): the two-card layout, one entry per prototype.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeCards {
    /// The cards.
    pub cards: Vec<TreePrototypeCards>,
}

/// One tree in a tile.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeInstance {
    /// Trunk base in world units (on the terrain surface).
    pub position: [f32; 3],
    /// Rotation about +Z in radians.
    pub yaw: f32,
    /// Uniform scale of the prototype.
    pub scale: f32,
    /// Colour multiplier.
    pub tint: [f32; 3],
    /// Index into `TPRO`'s prototypes.
    pub prototype: u32,
}

/// `TINS` (optional, tile pack): the trees whose trunk base lies in the tile's footprint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeInstances {
    /// xxh3-64 of the shared trees pack these instances index (its `SHRD` content hash).
    pub prototypes_hash: u64,
    /// The instances.
    pub instances: Vec<TreeInstance>,
}

/// `TILT` (optional, tile pack): per `TINS` instance, baked irradiance at its crown for normals up,
/// down and sideways (sky and bounces plus static lights; sun and moon are left to the renderer).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeLighting(pub Vec<[[f32; 3]; 3]>);

fn write_level(w: &mut ByteWriter, l: &Rgba8Level) {
    w.u32(l.width);
    w.u32(l.height);
    w.bytes(&l.rgba);
}

fn read_level(r: &mut ByteReader) -> Result<Rgba8Level, FormatError> {
    let (width, height) = (r.u32()?, r.u32()?);
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(bad(r.kind(), format!("a {width}×{height} texture")));
    }
    let rgba = r.take(4 * width as usize * height as usize)?.to_vec();
    Ok(Rgba8Level { width, height, rgba })
}

fn write_chain(w: &mut ByteWriter, kind: SectionKind, chain: &[Rgba8Level]) -> Result<(), FormatError> {
    w.count(kind, chain.len())?;
    chain.iter().for_each(|l| write_level(w, l));
    Ok(())
}

/// A mip chain: each level half the previous (rounded down, at least 1), ending at 1×1.
fn read_chain(r: &mut ByteReader) -> Result<Vec<Rgba8Level>, FormatError> {
    let n = r.count(12, "mip levels")?;
    let mut chain: Vec<Rgba8Level> = Vec::with_capacity(n);
    for _ in 0..n {
        let l = read_level(r)?;
        if let Some(p) = chain.last() {
            if (l.width, l.height) != ((p.width / 2).max(1), (p.height / 2).max(1)) {
                return Err(bad(r.kind(), format!("mip {}×{} after {}×{}", l.width, l.height, p.width, p.height)));
            }
        }
        chain.push(l);
    }
    match chain.last() {
        Some(l) if (l.width, l.height) == (1, 1) => Ok(chain),
        _ => Err(bad(r.kind(), "a mip chain that does not end at 1×1")),
    }
}

impl Section for TreePrototypes {
    const KIND: SectionKind = SectionKind(*b"TPRO");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let k = Self::KIND;
        let mut w = ByteWriter::default();
        w.count(k, self.species.len())?;
        for s in &self.species {
            w.str(k, s)?;
        }
        w.count(k, self.prototypes.len())?;
        for p in &self.prototypes {
            w.u16(p.species);
            w.u64(p.seed);
            w.f32(p.height);
            w.f32(p.crown_radius);
            w.count(k, p.positions.len())?;
            w.count(k, p.bark_indices.len())?;
            w.count(k, p.leaf_indices.len())?;
            for l in &p.lods {
                w.u32(l.bark_index_count);
                w.u32(l.leaf_index_count);
            }
            p.positions.iter().for_each(|v| w.f32s(v));
            p.normals.iter().for_each(|v| w.f32s(v));
            p.uvs.iter().for_each(|v| w.f32s(v));
            w.bytes(&p.ao);
            p.bark_indices.iter().chain(&p.leaf_indices).for_each(|&i| w.u32(i));
        }
        Ok(w.0)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let k = Self::KIND;
        let mut r = ByteReader::new(k, raw);
        let ns = r.count(4, "species")?;
        let species = (0..ns).map(|_| r.string(MAX_NAME)).collect::<Result<Vec<_>, _>>()?;
        let np = r.count(50, "prototypes")?;
        let mut prototypes = Vec::with_capacity(np);
        for i in 0..np {
            let species_index = r.u16()?;
            if usize::from(species_index) >= ns {
                return Err(bad(k, format!("prototype {i}: species {species_index} of {ns}")));
            }
            let (seed, height, crown_radius) = (r.u64()?, r.finite("height")?, r.finite("crown radius")?);
            let (v, bi, li) = (r.u32()? as usize, r.u32()? as usize, r.u32()? as usize);
            if v.saturating_mul(33).saturating_add(bi.saturating_add(li).saturating_mul(4)) > r.remaining() + 24 {
                return Err(bad(k, format!("prototype {i}: {v} vertices and {} indices cannot fit", bi + li)));
            }
            let mut lods = [TreeLod::default(); 3];
            for l in &mut lods {
                *l = TreeLod { bark_index_count: r.u32()?, leaf_index_count: r.u32()? };
            }
            let positions = r.finite_arrays::<3>(v, "positions")?;
            let normals = r.finite_arrays::<3>(v, "normals")?;
            let uvs = r.finite_arrays::<2>(v, "texture coordinates")?;
            let ao = r.take(v)?.to_vec();
            let bark_indices = r.u32s(bi)?;
            let leaf_indices = r.u32s(li)?;
            if bi % 3 != 0 || li % 3 != 0 {
                return Err(bad(k, format!("prototype {i}: {bi} bark and {li} leaf indices are not whole triangles")));
            }
            if let Some(&bad_index) = bark_indices.iter().chain(&leaf_indices).find(|&&x| x as usize >= v) {
                return Err(bad(k, format!("prototype {i}: index {bad_index} ≥ {v} vertices")));
            }
            let mut prev = TreeLod { bark_index_count: bi as u32, leaf_index_count: li as u32 };
            for (n, l) in lods.iter().enumerate() {
                let ok = l.bark_index_count <= prev.bark_index_count
                    && l.leaf_index_count <= prev.leaf_index_count
                    && l.bark_index_count % 3 == 0
                    && l.leaf_index_count % 3 == 0;
                if !ok {
                    return Err(bad(k, format!("prototype {i}: LOD {n} {l:?} is not a prefix of the LOD before it")));
                }
                prev = *l;
            }
            prototypes.push(TreePrototype {
                species: species_index,
                seed,
                height,
                crown_radius,
                positions,
                normals,
                uvs,
                ao,
                bark_indices,
                leaf_indices,
                lods,
            });
        }
        r.finish()?;
        Ok(TreePrototypes { species, prototypes })
    }
}

impl TreePrototypes {
    pub(crate) fn summary(&self) -> super::Summary {
        let tris: usize = self.prototypes.iter().map(|p| (p.bark_indices.len() + p.leaf_indices.len()) / 3).sum();
        let n = self.prototypes.len().max(1);
        vec![
            ("species", self.species.join(", ")),
            ("prototypes", self.prototypes.len().to_string()),
            ("mean_triangles", (tris / n).to_string()),
            ("mean_height", format!("{:.3}", self.prototypes.iter().map(|p| p.height as f64).sum::<f64>() / n as f64)),
        ]
    }
}

impl Section for TreeTextures {
    const KIND: SectionKind = SectionKind(*b"TTEX");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut w = ByteWriter::default();
        w.count(Self::KIND, self.species.len())?;
        for s in &self.species {
            write_chain(&mut w, Self::KIND, &s.bark)?;
            write_chain(&mut w, Self::KIND, &s.leaf)?;
        }
        Ok(w.0)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let mut r = ByteReader::new(Self::KIND, raw);
        let n = r.count(8, "species")?;
        let species =
            (0..n).map(|_| Ok(SpeciesTextures { bark: read_chain(&mut r)?, leaf: read_chain(&mut r)? })).collect::<Result<_, FormatError>>()?;
        r.finish()?;
        Ok(TreeTextures { species })
    }
}

impl TreeTextures {
    pub(crate) fn summary(&self) -> super::Summary {
        let side = |c: &[Rgba8Level]| c.first().map_or("-".into(), |l| format!("{}×{}", l.width, l.height));
        self.species.iter().map(|s| ("species", format!("bark {}, leaf {}", side(&s.bark), side(&s.leaf)))).collect()
    }
}

impl Section for TreeImpostors {
    const KIND: SectionKind = SectionKind(*b"TIMP");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut w = ByteWriter(Vec::with_capacity(4 + self.atlases.iter().map(atlas_len).sum::<usize>()));
        w.count(Self::KIND, self.atlases.len())?;
        for a in &self.atlases {
            write_atlas(&mut w, a)?;
        }
        Ok(w.0)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let k = Self::KIND;
        let mut r = ByteReader::new(k, raw);
        let n = r.count(30, "atlases")?;
        let mut atlases = Vec::with_capacity(n);
        for i in 0..n {
            let layout = match r.u8()? {
                0 => ImpostorLayout::Octahedral,
                1 => ImpostorLayout::HemiOctahedral,
                x => return Err(bad(k, format!("atlas {i}: unknown layout {x}"))),
            };
            let (grid, view_px) = (r.u32()?, r.u32()?);
            // u64: a hostile view size times the grid must not overflow before it is refused.
            if !(1..=64).contains(&grid) || !view_px.is_power_of_two() || u64::from(grid) * u64::from(view_px) > u64::from(MAX_SIDE) {
                return Err(bad(k, format!("atlas {i}: {grid}×{grid} views of {view_px} px")));
            }
            let center = [r.finite("centre")?, r.finite("centre")?, r.finite("centre")?];
            let radius = r.finite("radius")?;
            if radius <= 0.0 {
                return Err(bad(k, format!("atlas {i}: radius {radius}")));
            }
            let nl = r.count(4, "levels")?;
            if nl == 0 || nl > view_px.trailing_zeros() as usize + 1 {
                return Err(bad(k, format!("atlas {i}: {nl} levels for {view_px} px views")));
            }
            let mut levels = Vec::with_capacity(nl);
            for l in 0..nl {
                let size = r.u32()?;
                if size != (grid * view_px) >> l {
                    return Err(bad(k, format!("atlas {i}: level {l} is {size} texels, not {}", (grid * view_px) >> l)));
                }
                let texels = size as usize * size as usize;
                let albedo = r.take(4 * texels)?.to_vec();
                let normal = r.take(4 * texels)?.to_vec();
                let depth = r.u16s(texels)?;
                levels.push(AtlasLevel { size, albedo, normal, depth });
            }
            atlases.push(ImpostorAtlas { layout, grid, view_px, center, radius, levels });
        }
        r.finish()?;
        Ok(TreeImpostors { atlases })
    }
}

impl TreeImpostors {
    /// [`Section::encode`]'s bytes as pieces (the count, then one piece per atlas), each atlas
    /// freed once encoded: the trees pack's largest section, never held twice
    /// (see [`PackBuilder::add_pieces`](crate::PackBuilder::add_pieces)).
    pub fn into_pieces(self) -> Result<Vec<Vec<u8>>, FormatError> {
        let mut head = ByteWriter::default();
        head.count(Self::KIND, self.atlases.len())?;
        let mut pieces = vec![head.0];
        for a in self.atlases {
            let mut w = ByteWriter(Vec::with_capacity(atlas_len(&a)));
            write_atlas(&mut w, &a)?;
            pieces.push(w.0);
        }
        Ok(pieces)
    }

    pub(crate) fn summary(&self) -> super::Summary {
        let mut out = vec![("atlases", self.atlases.len().to_string())];
        if let Some(a) = self.atlases.first() {
            out.push(("layout", format!("{:?} {}×{} views of {} px, {} levels", a.layout, a.grid, a.grid, a.view_px, a.levels.len())));
        }
        out
    }
}

/// The bytes [`write_atlas`] writes.
fn atlas_len(a: &ImpostorAtlas) -> usize {
    29 + a.levels.iter().map(|l| 4 + l.albedo.len() + l.normal.len() + 2 * l.depth.len()).sum::<usize>()
}

fn write_atlas(w: &mut ByteWriter, a: &ImpostorAtlas) -> Result<(), FormatError> {
    w.u8(a.layout as u8);
    w.u32(a.grid);
    w.u32(a.view_px);
    w.f32s(&a.center);
    w.f32(a.radius);
    w.count(TreeImpostors::KIND, a.levels.len())?;
    for l in &a.levels {
        w.u32(l.size);
        w.bytes(&l.albedo);
        w.bytes(&l.normal);
        l.depth.iter().for_each(|&d| w.u16(d));
    }
    Ok(())
}

fn write_card(w: &mut ByteWriter, c: &TreeCard) {
    write_level(w, &c.color);
    write_level(w, &c.normal);
}

fn read_card(r: &mut ByteReader) -> Result<TreeCard, FormatError> {
    let (color, normal) = (read_level(r)?, read_level(r)?);
    if (color.width, color.height) != (normal.width, normal.height) {
        return Err(bad(r.kind(), "a card's colour and normal differ in size"));
    }
    Ok(TreeCard { color, normal })
}

impl Section for TreeCards {
    const KIND: SectionKind = SectionKind(*b"TCRD");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut w = ByteWriter::default();
        w.count(Self::KIND, self.cards.len())?;
        for c in &self.cards {
            w.f32s(&c.leaf_extent);
            write_card(&mut w, &c.leaf);
            w.f32s(&c.branch_extent);
            write_card(&mut w, &c.branch);
        }
        Ok(w.0)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let mut r = ByteReader::new(Self::KIND, raw);
        let n = r.count(64, "cards")?;
        let mut cards = Vec::with_capacity(n);
        for _ in 0..n {
            let leaf_extent = r.finite_arrays::<4>(1, "extent")?[0];
            let leaf = read_card(&mut r)?;
            let branch_extent = r.finite_arrays::<4>(1, "extent")?[0];
            let branch = read_card(&mut r)?;
            cards.push(TreePrototypeCards { leaf_extent, leaf, branch_extent, branch });
        }
        r.finish()?;
        Ok(TreeCards { cards })
    }
}

impl TreeCards {
    pub(crate) fn summary(&self) -> super::Summary {
        vec![("prototypes", self.cards.len().to_string())]
    }
}

impl Section for TreeInstances {
    const KIND: SectionKind = SectionKind(*b"TINS");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut w = ByteWriter::default();
        w.u64(self.prototypes_hash);
        w.count(Self::KIND, self.instances.len())?;
        for t in &self.instances {
            w.f32s(&t.position);
            w.f32(t.yaw);
            w.f32(t.scale);
            w.f32s(&t.tint);
            w.u32(t.prototype);
        }
        Ok(w.0)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let mut r = ByteReader::new(Self::KIND, raw);
        let prototypes_hash = r.u64()?;
        let n = r.count(36, "instances")?;
        let mut instances = Vec::with_capacity(n);
        for _ in 0..n {
            let v = r.finite_arrays::<8>(1, "instance values")?[0];
            if v[4] <= 0.0 {
                return Err(bad(Self::KIND, format!("instance scale {}", v[4])));
            }
            instances.push(TreeInstance { position: [v[0], v[1], v[2]], yaw: v[3], scale: v[4], tint: [v[5], v[6], v[7]], prototype: r.u32()? });
        }
        r.finish()?;
        Ok(TreeInstances { prototypes_hash, instances })
    }
}

impl TreeInstances {
    pub(crate) fn summary(&self) -> super::Summary {
        vec![("instances", self.instances.len().to_string()), ("prototypes_pack", format!("{:016x}", self.prototypes_hash))]
    }
}

impl Section for TreeLighting {
    const KIND: SectionKind = SectionKind(*b"TILT");
    const REQUIRED: bool = false;
    fn encode(&self) -> Result<Vec<u8>, FormatError> {
        let mut w = ByteWriter::default();
        w.count(Self::KIND, self.0.len())?;
        self.0.iter().flatten().for_each(|&c| w.u32(rgb9e5::encode(c)));
        Ok(w.0)
    }
    fn decode(raw: &[u8]) -> Result<Self, FormatError> {
        let mut r = ByteReader::new(Self::KIND, raw);
        let n = r.count(12, "instances")?;
        let words = r.u32s(3 * n)?;
        r.finish()?;
        Ok(TreeLighting(words.chunks_exact(3).map(|c| [0, 1, 2].map(|k| rgb9e5::decode(c[k]))).collect()))
    }
}

impl TreeLighting {
    pub(crate) fn summary(&self) -> super::Summary {
        let n = self.0.len().max(1) as f64;
        let up = self.0.iter().map(|l| (l[0][0] + l[0][1] + l[0][2]) as f64 / 3.0).sum::<f64>() / n;
        vec![("instances", self.0.len().to_string()), ("mean_up", format!("{up:.3}"))]
    }
}

#[cfg(test)]
#[path = "trees_tests.rs"]
mod tests;
