//! The trees products' work, apart from their registry plumbing: species parameters from the world
//! file, prototypes grown and captured as separate items (shards split each kind; collected in
//! order), their cache forms and pack sections, and the per-instance lighting read from light
//! transport.

use kiln_formats::sections::{
    AtlasLevel, ImpostorAtlas, ImpostorLayout, Rgba8Level, SpeciesTextures, TreeCard, TreeCards, TreeImpostors, TreeInstance, TreeLod, TreePrototype,
    TreePrototypeCards, TreePrototypes, TreeTextures,
};
use kiln_formats::Section;
use rayon::prelude::*;

use super::{format_err, TreesError};
use crate::impostor::capture::srgb_to_linear;
use crate::impostor::mips::coverage_preserving_mips;
use crate::impostor::{self, Image, ImpostorSettings, Layout};
use crate::lighting::LightLookup;
use crate::rng::mix64;
use crate::trees::{self, SpeciesParams, LEAF_ALPHA_TEST};
use crate::world::{ImpostorLayoutSpec, SpeciesSpec, TreesSpec};

/// The species' generator parameters: its preset with the world file's shape overrides.
pub fn species_params(s: &SpeciesSpec) -> SpeciesParams {
    let mut p = trees::preset(&s.preset).expect("the world loader accepts known presets only");
    let o = &s.shape;
    if let Some(b) = o.branches {
        p.branches[0] = [b.min(p.branches[0][0]), b];
    }
    if let Some(d) = o.deflection {
        p.deflection_deg = d.map(|v| v as f32);
    }
    if let Some(u) = o.upwardness {
        p.upwardness = u as f32;
    }
    if let Some(v) = o.radius_variation {
        p.radius_var = 1.0 - v as f32;
    }
    if let Some(v) = o.length_variation {
        p.length_var = 1.0 - v as f32;
    }
    if let Some(v) = o.leaf_size {
        p.leaf_size *= v as f32;
    }
    if let Some(v) = o.leaves {
        p.leaves_per_cylinder *= v as f32;
    }
    if let Some(f) = o.fourth_order {
        p.branches[3] = if f { [1, 3] } else { [0, 0] };
    }
    if let Some(r) = o.roots {
        p.roots = r;
    }
    p
}

/// Radius around a trunk base that must be supported by the ground: a tenth of the species'
/// tallest prototype at its largest scale (trunks are thinner; the ring also keeps roots on the ground).
pub fn trunk_radius(s: &SpeciesSpec) -> f32 {
    (0.05 * s.height[1] * s.scale[1]) as f32
}

/// An image as one level of a section's mip chain.
pub fn level(img: &Image) -> Rgba8Level {
    Rgba8Level { width: img.width, height: img.height, rgba: img.rgba.clone() }
}

/// Length-prefixed parts, the cache form of the trees products' items.
#[derive(Default)]
struct Parts(Vec<u8>);

impl Parts {
    fn part(mut self, bytes: &[u8]) -> Self {
        self.0.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.0.extend_from_slice(bytes);
        self
    }
    fn section(self, s: Result<Vec<u8>, kiln_formats::FormatError>, what: &str) -> Result<Self, TreesError> {
        Ok(self.part(&s.map_err(format_err(what))?))
    }
}

/// Reads [`Parts`] back in order.
struct PartsReader<'b>(&'b [u8]);

impl<'b> PartsReader<'b> {
    fn part(&mut self) -> Result<&'b [u8], String> {
        let take = |b: &'b [u8], n: usize| if b.len() < n { Err("truncated".to_owned()) } else { Ok(b.split_at(n)) };
        let (len, rest) = take(self.0, 8)?;
        let (part, rest) = take(rest, u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize)?;
        self.0 = rest;
        Ok(part)
    }
    fn f32s(&mut self) -> Result<Vec<f32>, String> {
        let b = self.part()?;
        if b.len() % 4 != 0 {
            return Err("a float array of odd length".into());
        }
        Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }
    fn f64(&mut self) -> Result<f64, String> {
        let b = self.part()?;
        Ok(f64::from_le_bytes(b.try_into().map_err(|_| "not an f64".to_owned())?))
    }
    fn end(self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err("trailing bytes".into())
        }
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One prototype grown: the unit of `tree-shapes`' work that shards split (see [`Growing`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub prototype: TreePrototype,
    /// Its self-AO per vertex as computed (the section rounds it to bytes): what its impostor is
    /// captured with.
    pub ao: Vec<f32>,
    /// CPU seconds growing it (for the report only, never in a pack).
    pub cpu: f64,
}

impl Shape {
    /// The cache form: the `TPRO` section of this prototype alone, its AO, then the CPU seconds.
    pub fn to_bytes(&self, species: &[String]) -> Result<Vec<u8>, TreesError> {
        let one = TreePrototypes { species: species.to_vec(), prototypes: vec![self.prototype.clone()] };
        let parts = Parts::default().section(one.encode(), "a grown prototype")?;
        Ok(parts.part(&f32_bytes(&self.ao)).part(&self.cpu.to_le_bytes()).0)
    }

    /// Reads [`Shape::to_bytes`]' form back, checking it.
    pub fn from_bytes(b: &[u8], species: &[String]) -> Result<Shape, String> {
        let mut r = PartsReader(b);
        let mut protos = TreePrototypes::decode(r.part()?).map_err(|e| e.to_string())?;
        let (ao, cpu) = (r.f32s()?, r.f64()?);
        r.end()?;
        if protos.species != species || protos.prototypes.len() != 1 || protos.prototypes[0].positions.len() != ao.len() {
            return Err("not one prototype of this world's species".into());
        }
        Ok(Shape { prototype: protos.prototypes.remove(0), ao, cpu })
    }
}

/// The mesh prototype `p` was grown as, with its AO unrounded (`ao`): what its impostor captures.
fn grown_mesh(p: &TreePrototype, ao: &[f32]) -> trees::TreeMesh {
    trees::TreeMesh {
        positions: p.positions.clone(),
        normals: p.normals.clone(),
        uvs: p.uvs.clone(),
        ao: ao.to_vec(),
        bark_indices: p.bark_indices.clone(),
        leaf_indices: p.leaf_indices.clone(),
        lods: p.lods.map(|l| trees::Lod { bark_index_count: l.bark_index_count, leaf_index_count: l.leaf_index_count }),
    }
}

/// One prototype's impostor: the unit of `tree-prototypes`' work that shards split.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    pub atlas: ImpostorAtlas,
    pub cards: Option<TreePrototypeCards>,
    /// CPU seconds capturing it (for the report only, never in a pack).
    pub cpu: f64,
}

impl Capture {
    /// The cache form: the `TIMP` and `TCRD` sections holding this prototype alone, then the CPU seconds.
    pub fn to_bytes(&self) -> Result<Vec<u8>, TreesError> {
        let parts = Parts::default()
            .section(TreeImpostors { atlases: vec![self.atlas.clone()] }.encode(), "a captured prototype")?
            .section(TreeCards { cards: self.cards.iter().cloned().collect() }.encode(), "a captured prototype")?;
        Ok(parts.part(&self.cpu.to_le_bytes()).0)
    }

    /// Reads [`Capture::to_bytes`]' form back, checking each section.
    pub fn from_bytes(b: &[u8]) -> Result<Capture, String> {
        let mut r = PartsReader(b);
        let mut atlases = TreeImpostors::decode(r.part()?).map_err(|e| e.to_string())?;
        let cards = TreeCards::decode(r.part()?).map_err(|e| e.to_string())?;
        let cpu = r.f64()?;
        r.end()?;
        if atlases.atlases.len() != 1 || cards.cards.len() > 1 {
            return Err("not one prototype's impostor".into());
        }
        Ok(Capture { atlas: atlases.atlases.remove(0), cards: cards.cards.into_iter().next(), cpu })
    }
}

/// Every prototype of a world grown, with the species' textures: what light transport and
/// instance lighting read of the trees, and what their impostors are captured from.
pub struct Shapes {
    pub prototypes: TreePrototypes,
    pub textures: TreeTextures,
    /// Per prototype, its [`Shape::ao`].
    pub ao: Vec<Vec<f32>>,
    /// CPU seconds growing them (for the report only).
    pub cpu: f64,
}

impl Shapes {
    /// No trees.
    pub fn none() -> Shapes {
        Shapes {
            prototypes: TreePrototypes { species: Vec::new(), prototypes: Vec::new() },
            textures: TreeTextures { species: Vec::new() },
            ao: Vec::new(),
            cpu: 0.0,
        }
    }

    /// Each prototype's height and crown radius (object space), what instance lighting reads.
    pub fn sizes(&self) -> Vec<(f32, f32)> {
        self.prototypes.prototypes.iter().map(|p| (p.height, p.crown_radius)).collect()
    }

    pub fn triangles(&self) -> usize {
        self.prototypes.prototypes.iter().map(|p| (p.bark_indices.len() + p.leaf_indices.len()) / 3).sum()
    }

    /// The cache form: `TPRO`, `TTEX`, then every prototype's AO.
    pub fn to_bytes(&self) -> Result<Vec<u8>, TreesError> {
        let mut parts = Parts::default()
            .section(self.prototypes.encode(), "encoding prototypes")?
            .section(self.textures.encode(), "encoding textures")?
            .part(&self.cpu.to_le_bytes());
        for ao in &self.ao {
            parts = parts.part(&f32_bytes(ao));
        }
        Ok(parts.0)
    }

    /// Reads [`Shapes::to_bytes`]' form back, checking that it holds `species`' prototypes.
    pub fn from_bytes(b: &[u8], species: &[String]) -> Result<Shapes, String> {
        let mut r = PartsReader(b);
        let prototypes = TreePrototypes::decode(r.part()?).map_err(|e| e.to_string())?;
        let textures = TreeTextures::decode(r.part()?).map_err(|e| e.to_string())?;
        let cpu = r.f64()?;
        let ao = prototypes.prototypes.iter().map(|_| r.f32s()).collect::<Result<Vec<_>, _>>()?;
        r.end()?;
        if prototypes.species != species || textures.species.len() != species.len() {
            return Err("not this world's species".into());
        }
        if prototypes.prototypes.iter().zip(&ao).any(|(p, ao)| p.positions.len() != ao.len()) {
            return Err("an AO array of the wrong length".into());
        }
        Ok(Shapes { prototypes, textures, ao, cpu })
    }
}

/// The species names of a `[trees]` section, in the world file's order: what the prototypes'
/// sections and cache forms name.
pub fn species_names(spec: &TreesSpec) -> Vec<String> {
    spec.species.iter().map(|s| s.preset.clone()).collect()
}

/// The prototypes of a `[trees]` section as separate pieces of work: [`Growing::grow`] makes one
/// and [`Growing::capture`] its impostor (any of them, in any process), [`Growing::shapes`] puts
/// the grown ones together in order.
pub struct Growing<'a> {
    spec: &'a TreesSpec,
    world_seed: u64,
    params: Vec<SpeciesParams>,
    textures: Vec<trees::SpeciesTextures>,
    /// (species, prototype within it) per prototype.
    jobs: Vec<(usize, u32)>,
}

impl<'a> Growing<'a> {
    /// The species' parameters and textures (shared by every prototype of a species).
    pub fn new(spec: &'a TreesSpec, world_seed: u64) -> Growing<'a> {
        let params: Vec<SpeciesParams> = spec.species.iter().map(species_params).collect();
        let textures: Vec<trees::SpeciesTextures> = params.par_iter().map(trees::textures).collect();
        let jobs: Vec<(usize, u32)> = spec.species.iter().enumerate().flat_map(|(s, sp)| (0..sp.prototypes).map(move |k| (s, k))).collect();
        Growing { spec, world_seed, params, textures, jobs }
    }

    /// How many prototypes.
    pub fn count(&self) -> usize {
        self.jobs.len()
    }

    /// The species names, in the world file's order.
    pub fn species(&self) -> Vec<String> {
        species_names(self.spec)
    }

    /// Grows prototype `index`.
    pub fn grow(&self, index: usize) -> Shape {
        let (s, k) = self.jobs[index];
        let sp = &self.spec.species[s];
        let n = sp.prototypes as f64;
        let height = (sp.height[0] + (sp.height[1] - sp.height[0]) * (k as f64 + 0.5) / n) as f32;
        let seed = mix64(self.world_seed ^ mix64(((s as u64) << 32) | u64::from(k)).wrapping_add(0x5452_4545)); // "TREE"
        let clock = std::time::Instant::now();
        let proto = trees::grow(&self.params[s], seed, height);
        let cpu = clock.elapsed().as_secs_f64();
        Shape { prototype: prototype_section(s, &proto), ao: proto.mesh.ao, cpu }
    }

    /// Captures the impostor of prototype `index` of `shapes` (what [`Growing::shapes`] made).
    pub fn capture(&self, index: usize, shapes: &Shapes) -> Result<Capture, TreesError> {
        let spec = self.spec;
        let s = self.jobs[index].0;
        let m = grown_mesh(&shapes.prototypes.prototypes[index], &shapes.ao[index]);
        let texel = match spec.impostor.texel {
            t if t > 0.0 => t as f32,
            _ => m.auto_impostor_texel(),
        };
        let settings = ImpostorSettings {
            layout: match spec.impostor.layout {
                ImpostorLayoutSpec::Octahedral => Layout::Octahedral,
                ImpostorLayoutSpec::HemiOctahedral => Layout::HemiOctahedral,
            },
            grid: spec.impostor.grid,
            texel,
            cards: spec.impostor.cards,
            ..ImpostorSettings::default()
        };
        let clock = std::time::Instant::now();
        let imp = m.with_capture_mesh(0, &self.textures[s], |capture| impostor::bake(capture, &settings)).map_err(|e| TreesError::Impostor {
            index,
            species: spec.species[s].preset.clone(),
            reason: e.to_string(),
        })?;
        Ok(Capture { atlas: atlas_section(&imp), cards: imp.cards.as_ref().map(cards_section), cpu: clock.elapsed().as_secs_f64() })
    }

    /// Every prototype (`grown[i]` from [`Growing::grow`]`(i)`) with the species' textures.
    pub fn shapes(&self, grown: Vec<Shape>) -> Shapes {
        let textures = TreeTextures {
            species: self
                .textures
                .iter()
                .map(|t| SpeciesTextures {
                    bark: coverage_preserving_mips(&t.bark, 0.5).iter().map(level).collect(),
                    leaf: coverage_preserving_mips(&t.leaf, LEAF_ALPHA_TEST).iter().map(level).collect(),
                })
                .collect(),
        };
        let cpu = grown.iter().map(|g| g.cpu).sum();
        let (prototypes, ao) = grown.into_iter().map(|g| (g.prototype, g.ao)).unzip();
        Shapes { prototypes: TreePrototypes { species: self.species(), prototypes }, textures, ao, cpu }
    }
}

pub fn prototype_section(species: usize, p: &trees::Prototype) -> TreePrototype {
    let m = &p.mesh;
    TreePrototype {
        species: species as u16,
        seed: p.seed,
        height: p.height,
        crown_radius: p.radius,
        positions: m.positions.clone(),
        normals: m.normals.clone(),
        uvs: m.uvs.clone(),
        ao: m.ao.iter().map(|&a| (a.clamp(0.0, 1.0) * 255.0).round() as u8).collect(),
        bark_indices: m.bark_indices.clone(),
        leaf_indices: m.leaf_indices.clone(),
        lods: m.lods.map(|l| TreeLod { bark_index_count: l.bark_index_count, leaf_index_count: l.leaf_index_count }),
    }
}

fn atlas_section(imp: &impostor::Impostor) -> ImpostorAtlas {
    ImpostorAtlas {
        layout: match imp.layout {
            Layout::Octahedral => ImpostorLayout::Octahedral,
            Layout::HemiOctahedral => ImpostorLayout::HemiOctahedral,
        },
        grid: imp.grid,
        view_px: imp.view_px,
        center: imp.center,
        radius: imp.radius,
        levels: imp
            .levels
            .iter()
            .map(|l| AtlasLevel { size: l.size, albedo: l.albedo.clone(), normal: l.normal.clone(), depth: l.depth.clone() })
            .collect(),
    }
}

fn cards_section(c: &impostor::Cards) -> TreePrototypeCards {
    // A tree without leaves (or branches) gets a 1×1 empty card of that kind.
    let card = |k: &Option<impostor::Card>| match k {
        Some(k) => (
            [k.lo[0], k.lo[2], k.hi[0], k.hi[2]],
            TreeCard {
                color: Rgba8Level { width: k.width, height: k.height, rgba: k.albedo.clone() },
                normal: Rgba8Level { width: k.width, height: k.height, rgba: k.normal.clone() },
            },
        ),
        None => {
            let empty = Rgba8Level { width: 1, height: 1, rgba: vec![0; 4] };
            ([0.0; 4], TreeCard { color: empty.clone(), normal: empty })
        }
    };
    let ((leaf_extent, leaf), (branch_extent, branch)) = (card(&c.leaf), card(&c.branch));
    TreePrototypeCards { leaf_extent, leaf, branch_extent, branch }
}

/// Each instance's crown irradiance (ambient: sky and bounces) for normals up, down and sideways
/// (the mean of ±X and ±Y), read from the transport's irradiance volume, which saw the trees.
pub fn instance_lighting(baked: &LightLookup, instances: &[TreeInstance], sizes: &[(f32, f32)]) -> Vec<[[f32; 3]; 3]> {
    let volume = baked.volume();
    instances
        .iter()
        .map(|t| {
            let (height, _) = sizes.get(t.prototype as usize).copied().unwrap_or((1.0, 0.5));
            let p = [t.position[0], t.position[1], t.position[2] + 0.6 * height * t.scale];
            let at = |n: [f32; 3]| volume.sample(p, n).0;
            let sides = [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]].map(at);
            let side = [0, 1, 2].map(|c| sides.iter().map(|s| s[c]).sum::<f32>() / 4.0);
            [at([0.0, 0.0, 1.0]), at([0.0, 0.0, -1.0]), side]
        })
        .collect()
}

/// A prototype reduced for light transport: the far LOD's bark (trunk and main branches) and the
/// quarter of the leaves it keeps, each kept leaf grown so that the leaves' total area times their
/// texture's coverage is the full tree's (the ray engine has no alpha test: opaque quads of the
/// same mean coverage block the same share of light on average). Leaves face both ways.
#[derive(Clone, Debug, Default)]
pub struct Proxy {
    pub positions: Vec<[f32; 3]>,
    pub indices: Vec<u32>,
    pub albedo: Vec<[f32; 3]>,
}

/// Mean linear colour of the texels with alpha ≥ 0.5, and the share of such texels.
fn covered_colour(level: &Rgba8Level) -> ([f32; 3], f32) {
    let mut sum = [0.0f64; 3];
    let mut n = 0usize;
    for t in level.rgba.chunks_exact(4).filter(|t| t[3] >= 128) {
        (0..3).for_each(|c| sum[c] += srgb_to_linear(f32::from(t[c]) / 255.0) as f64);
        n += 1;
    }
    let texels = (level.rgba.len() / 4).max(1);
    (sum.map(|s| (s / n.max(1) as f64) as f32), n as f32 / texels as f32)
}

/// The light-transport proxy of every prototype.
pub fn proxies(protos: &TreePrototypes, textures: &TreeTextures) -> Vec<Proxy> {
    // (bark albedo, leaf albedo, leaf coverage) of a species' textures, with stand-ins for a
    // species without them; read once for all its prototypes.
    let colours_of = |t: Option<&SpeciesTextures>| {
        let (bark, _) = t.and_then(|t| t.bark.first()).map_or(([0.3, 0.25, 0.2], 1.0), covered_colour);
        let (leaf, coverage) = t.and_then(|t| t.leaf.first()).map_or(([0.1, 0.2, 0.05], 0.5), covered_colour);
        (bark, leaf, coverage)
    };
    let colours: Vec<([f32; 3], [f32; 3], f32)> = textures.species.par_iter().map(|t| colours_of(Some(t))).collect();
    protos
        .prototypes
        .par_iter()
        .map(|p| {
            let (bark_albedo, leaf_albedo, coverage) = colours.get(usize::from(p.species)).copied().unwrap_or_else(|| colours_of(None));
            let lod2 = p.lods[2];
            let mut out = Proxy::default();
            let bark = &p.bark_indices[..lod2.bark_index_count as usize];
            out.positions.extend_from_slice(&p.positions);
            out.indices.extend_from_slice(bark);
            out.albedo.extend(std::iter::repeat_n(bark_albedo, bark.len() / 3));
            let kept = &p.leaf_indices[..lod2.leaf_index_count as usize];
            let area = |idx: &[u32]| -> f64 {
                idx.chunks_exact(3)
                    .map(|t| {
                        let [a, b, c] = [0, 1, 2].map(|k| glam::Vec3::from(p.positions[t[k] as usize]));
                        0.5 * (b - a).cross(c - a).length() as f64
                    })
                    .sum()
            };
            let (full, kept_area) = (area(&p.leaf_indices), area(kept));
            let grow = if kept_area > 0.0 { ((full * coverage as f64 / kept_area).sqrt()) as f32 } else { 1.0 };
            // Leaves are quads of two triangles (6 indices): grow each about its centre.
            for quad in kept.chunks(6) {
                let mut corners: Vec<u32> = quad.to_vec();
                corners.sort_unstable();
                corners.dedup();
                let centre = corners.iter().fold(glam::Vec3::ZERO, |a, &v| a + glam::Vec3::from(p.positions[v as usize])) / corners.len() as f32;
                let base = out.positions.len() as u32;
                let local = |v: u32| base + corners.iter().position(|&c| c == v).expect("a corner of its quad") as u32;
                for &v in &corners {
                    out.positions.push((centre + (glam::Vec3::from(p.positions[v as usize]) - centre) * grow).into());
                }
                for t in quad.chunks_exact(3) {
                    out.indices.extend([local(t[0]), local(t[1]), local(t[2])]);
                    out.indices.extend([local(t[0]), local(t[2]), local(t[1])]);
                    out.albedo.extend([leaf_albedo, leaf_albedo]);
                }
            }
            out
        })
        .collect()
}

/// An instance's proxy in world space: rotated by its yaw, scaled and moved to its trunk base.
pub fn occluder<'p>(proxy: &'p Proxy, t: &TreeInstance) -> (Vec<[f32; 3]>, &'p [u32], &'p [[f32; 3]]) {
    let (s, c) = (libm::sinf(t.yaw), libm::cosf(t.yaw));
    let positions = proxy
        .positions
        .iter()
        .map(|p| {
            let [x, y, z] = p.map(|v| v * t.scale);
            [t.position[0] + c * x - s * y, t.position[1] + s * x + c * y, t.position[2] + z]
        })
        .collect();
    (positions, &proxy.indices, &proxy.albedo)
}
