//! The trees products' work, apart from their registry plumbing: species parameters from the world
//! file, prototypes grown and captured in parallel (collected in order), their pack sections, and
//! the per-instance lighting read from light transport.

use kiln_formats::sections::{
    AtlasLevel, ImpostorAtlas, ImpostorLayout, Rgba8Level, SpeciesTextures, TreeCard, TreeCards, TreeImpostors, TreeInstance, TreeLod,
    TreePrototype, TreePrototypeCards, TreePrototypes, TreeTextures,
};
use kiln_formats::Section;
use rayon::prelude::*;

use super::{format_err, product_err, TreesError};
use crate::impostor::{self, Image, ImpostorSettings, Layout};
use crate::lighting::BakedLighting;
use crate::pipeline::product::RawSection;
use crate::pipeline::BakeError;
use crate::rng::mix64;
use crate::trees::{self, SpeciesParams};
use crate::world::{ImpostorLayoutSpec, SpeciesSpec, TreesSpec};

/// World size of an impostor texel for a prototype of bounding-sphere radius 1 when the world file
/// leaves `trees.impostor.texel` at 0: 64 texels across the sphere, so a 1-unit tree gets 32 px views.
const AUTO_TEXELS_PER_DIAMETER: f32 = 64.0;

/// Everything the shared trees pack holds, decoded.
pub struct Built {
    pub prototypes: TreePrototypes,
    pub textures: TreeTextures,
    pub impostors: TreeImpostors,
    pub cards: Option<TreeCards>,
}

impl Built {
    pub fn triangles(&self) -> usize {
        self.prototypes.prototypes.iter().map(|p| (p.bark_indices.len() + p.leaf_indices.len()) / 3).sum()
    }

    /// The pack's sections: `TPRO`, `TTEX`, `TIMP` and, if baked, `TCRD`.
    pub fn sections(&self) -> Result<Vec<RawSection>, BakeError> {
        let raw = |kind, required, bytes| RawSection { kind, required, bytes };
        let mut out = vec![
            raw(TreePrototypes::KIND, TreePrototypes::REQUIRED, self.prototypes.encode().map_err(format_err("encoding prototypes"))?),
            raw(TreeTextures::KIND, TreeTextures::REQUIRED, self.textures.encode().map_err(format_err("encoding textures"))?),
            raw(TreeImpostors::KIND, TreeImpostors::REQUIRED, self.impostors.encode().map_err(format_err("encoding impostors"))?),
        ];
        if let Some(c) = &self.cards {
            out.push(raw(TreeCards::KIND, TreeCards::REQUIRED, c.encode().map_err(format_err("encoding cards"))?));
        }
        Ok(out)
    }
}

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

fn level(img: &Image) -> Rgba8Level {
    Rgba8Level { width: img.width, height: img.height, rgba: img.rgba.clone() }
}

/// Grows every prototype of every species (in parallel, collected in order) and captures its impostor.
pub fn prototypes(spec: &TreesSpec, world_seed: u64) -> Result<Built, BakeError> {
    let params: Vec<SpeciesParams> = spec.species.iter().map(species_params).collect();
    let textures: Vec<trees::SpeciesTextures> = params.par_iter().map(trees::textures).collect();
    let jobs: Vec<(usize, u32)> = spec.species.iter().enumerate().flat_map(|(s, sp)| (0..sp.prototypes).map(move |k| (s, k))).collect();
    let settings = |texel: f32| ImpostorSettings {
        layout: match spec.impostor.layout {
            ImpostorLayoutSpec::Octahedral => Layout::Octahedral,
            ImpostorLayoutSpec::HemiOctahedral => Layout::HemiOctahedral,
        },
        grid: spec.impostor.grid,
        texel,
        cards: spec.impostor.cards,
        ..ImpostorSettings::default()
    };
    let grown: Vec<(TreePrototype, ImpostorAtlas, Option<TreePrototypeCards>)> = jobs
        .par_iter()
        .enumerate()
        .map(|(index, &(s, k))| {
            let sp = &spec.species[s];
            let n = sp.prototypes as f64;
            let height = (sp.height[0] + (sp.height[1] - sp.height[0]) * (k as f64 + 0.5) / n) as f32;
            let seed = mix64(world_seed ^ mix64(((s as u64) << 32) | u64::from(k)).wrapping_add(0x5452_4545)); // "TREE"
            let proto = trees::grow(&params[s], seed, height);
            let capture = proto.mesh.capture_mesh(&textures[s]);
            let texel = match spec.impostor.texel {
                t if t > 0.0 => t as f32,
                _ => 2.0 * proto.radius.max(proto.height * 0.5) / AUTO_TEXELS_PER_DIAMETER,
            };
            let imp = impostor::bake(&capture, &settings(texel))
                .map_err(|e| product_err(TreesError::Impostor { index, species: sp.preset.clone(), reason: e.to_string() }))?;
            Ok((prototype_section(s, &proto), atlas_section(&imp), imp.cards.as_ref().map(cards_section)))
        })
        .collect::<Result<_, BakeError>>()?;
    let mut built = Built {
        prototypes: TreePrototypes { species: spec.species.iter().map(|s| s.preset.clone()).collect(), prototypes: Vec::new() },
        textures: TreeTextures {
            species: textures
                .iter()
                .map(|t| SpeciesTextures {
                    bark: impostor::box_mips(&t.bark).iter().map(level).collect(),
                    leaf: impostor::coverage_preserving_mips(&t.leaf, 0.5).iter().map(level).collect(),
                })
                .collect(),
        },
        impostors: TreeImpostors { atlases: Vec::new() },
        cards: spec.impostor.cards.then(|| TreeCards { cards: Vec::new() }),
    };
    for (p, a, c) in grown {
        built.prototypes.prototypes.push(p);
        built.impostors.atlases.push(a);
        if let (Some(cards), Some(c)) = (&mut built.cards, c) {
            cards.cards.push(c);
        }
    }
    Ok(built)
}

fn prototype_section(species: usize, p: &trees::Prototype) -> TreePrototype {
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
    let card = |k: &impostor::Card| TreeCard { color: level(&k.color), normal: level(&k.normal) };
    TreePrototypeCards { leaf_extent: c.leaf.extent, leaf: card(&c.leaf), branch_extent: c.branch.extent, branch: card(&c.branch) }
}

/// Each instance's crown irradiance (ambient: sky and bounces) for normals up, down and sideways
/// (the mean of ±X and ±Y), read from the transport's irradiance volume, which saw the trees.
pub fn instance_lighting(baked: &BakedLighting, instances: &[TreeInstance], sizes: &[(f32, f32)]) -> Vec<[[f32; 3]; 3]> {
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
