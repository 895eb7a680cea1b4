//! `kiln export --prototype N` (a tree prototype as glTF binary with its textures) and
//! `kiln export --impostor N` (a prototype's impostor atlas as PNG maps and a JSON header), read from
//! the bake's shared `tree-prototypes` pack.

use std::path::{Path, PathBuf};

use kiln_formats::sections::{ImpostorAtlas, Manifest, Rgba8Level, SharedPacks, TreeImpostors, TreePrototype, TreePrototypes, TreeTextures};
use kiln_formats::{Pack, Section};
use serde_json::json;

use super::CliError;

/// The product name of the trees' shared pack in the manifest's `SHRD`.
pub const TREES_PRODUCT: &str = "tree-prototypes";

/// The shared trees pack of `path`: the pack itself when `path` is a file, else the pack the bake's
/// `manifest.kpack` lists for [`TREES_PRODUCT`]. Returns its path and the opened pack.
pub fn open_trees_pack(path: &Path) -> Result<(PathBuf, Pack), CliError> {
    open_shared_pack(path, TREES_PRODUCT, "tree prototypes")
}

/// The shared pack of `product` for `path`: the pack itself when `path` is a file, else the pack the
/// bake's `manifest.kpack` lists for `product` in `SHRD` (`what` names it in the error when there is
/// none). Returns its path and the opened pack.
pub fn open_shared_pack(path: &Path, product: &str, what: &str) -> Result<(PathBuf, Pack), CliError> {
    if path.is_file() {
        return Ok((path.to_owned(), Pack::open(path)?));
    }
    let manifest_path = path.join("manifest.kpack");
    let manifest = Pack::open(&manifest_path)?;
    let at = |e: kiln_formats::FormatError| CliError::Failed(format!("{}: {e}", manifest_path.display()));
    // A manifest that does not decode is not a bake; one without SHRD is a bake without the product.
    manifest.require::<Manifest>().map_err(at)?;
    let shared: Option<SharedPacks> = manifest.get().map_err(at)?;
    let entry = shared
        .as_ref()
        .and_then(|s| s.get(product))
        .ok_or_else(|| CliError::Usage(format!("{}: the bake has no {what} (no \"{product}\" pack in SHRD)", manifest_path.display())))?;
    let file = path.join(&entry.path);
    let pack = Pack::open(&file)?;
    Ok((file, pack))
}

/// A required section of the trees pack at `file`, with the file named in the error.
pub(super) fn section<T: Section>(file: &Path, pack: &Pack) -> Result<T, CliError> {
    pack.require().map_err(|e| CliError::Failed(format!("{}: {e}", file.display())))
}

pub(super) fn bad_index(file: &Path, what: &str, n: u32, count: usize) -> CliError {
    let range = if count == 0 { "it has none".to_owned() } else { format!("it has {count}, numbered 0 to {}", count - 1) };
    CliError::Usage(format!("{}: no {what} {n}; {range}", file.display()))
}

/// Writes prototype `n` of the bake at `bake` (or of the trees pack `bake`) at LOD `lod` (0 full,
/// 1 reduced branches, 2 fewest leaves) to `out` as glTF binary: the LOD's bark and leaf triangles and
/// only the vertices they use, bark and leaf level-0 textures embedded as PNG, bark opaque, leaves
/// alpha-tested at 0.5 and double-sided.
pub fn export_prototype(bake: &Path, n: u32, lod: u32, out: &Path) -> Result<(), CliError> {
    let (file, pack) = open_trees_pack(bake)?;
    let protos: TreePrototypes = section(&file, &pack)?;
    let p = protos.prototypes.get(n as usize).ok_or_else(|| bad_index(&file, "prototype", n, protos.prototypes.len()))?;
    let l = p.lods.get(lod as usize).ok_or_else(|| CliError::Usage(format!("--lod {lod}: a prototype has LODs 0, 1 and 2")))?;
    if l.bark_index_count + l.leaf_index_count == 0 {
        return Err(CliError::Usage(format!("{}: prototype {n} has no triangles at LOD {lod}", file.display())));
    }
    let textures: TreeTextures = section(&file, &pack)?;
    let species = textures.species.get(usize::from(p.species)).ok_or_else(|| {
        CliError::Failed(format!("{}: prototype {n} is of species {} but TTEX has {} species", file.display(), p.species, textures.species.len()))
    })?;
    let level0 = |chain: &[Rgba8Level], what: &str| {
        chain.first().ok_or_else(|| CliError::Failed(format!("{}: species {} has no {what} texture", file.display(), p.species))).and_then(png_rgba)
    };
    let images = [level0(&species.bark, "bark")?, level0(&species.leaf, "leaf")?];
    let name = protos.species.get(usize::from(p.species)).map_or("tree", String::as_str);
    let bytes = prototype_glb(p, &format!("{name} prototype {n} LOD {lod}"), l.bark_index_count as usize, l.leaf_index_count as usize, &images);
    kiln_formats::write_atomic(out, &bytes).map_err(CliError::Pack)
}

/// The prototype's triangles `bark[..bark_count]` and `leaf[..leaf_count]` as a GLB document.
fn prototype_glb(p: &TreePrototype, name: &str, bark_count: usize, leaf_count: usize, images: &[Vec<u8>; 2]) -> Vec<u8> {
    let (bark, leaf) = (&p.bark_indices[..bark_count], &p.leaf_indices[..leaf_count]);
    // Only the vertices this LOD uses, in the prototype's order, so no vertex is a loose point.
    let mut remap = vec![u32::MAX; p.positions.len()];
    for &i in bark.iter().chain(leaf) {
        remap[i as usize] = 0;
    }
    let kept: Vec<usize> = (0..remap.len()).filter(|&i| remap[i] == 0).collect();
    for (new, &old) in kept.iter().enumerate() {
        remap[old] = new as u32;
    }
    let mut g = Glb::default();
    let f32s = |it: &mut dyn Iterator<Item = f32>| it.flat_map(f32::to_le_bytes).collect::<Vec<u8>>();
    let positions: Vec<[f32; 3]> = kept.iter().map(|&i| p.positions[i]).collect();
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for v in &positions {
        for a in 0..3 {
            (lo[a], hi[a]) = (lo[a].min(v[a]), hi[a].max(v[a]));
        }
    }
    let count = kept.len();
    let pos = g.view(f32s(&mut positions.iter().flatten().copied()), Some(ARRAY_BUFFER));
    let pos = g.accessor(json!({ "bufferView": pos, "componentType": FLOAT, "count": count, "type": "VEC3", "min": lo, "max": hi }));
    let nrm = g.view(f32s(&mut kept.iter().flat_map(|&i| p.normals[i])), Some(ARRAY_BUFFER));
    let nrm = g.accessor(json!({ "bufferView": nrm, "componentType": FLOAT, "count": count, "type": "VEC3" }));
    let uv = g.view(f32s(&mut kept.iter().flat_map(|&i| p.uvs[i])), Some(ARRAY_BUFFER));
    let uv = g.accessor(json!({ "bufferView": uv, "componentType": FLOAT, "count": count, "type": "VEC2" }));
    let ao = g.view(f32s(&mut kept.iter().map(|&i| f32::from(p.ao[i]) / 255.0)), Some(ARRAY_BUFFER));
    let ao = g.accessor(json!({ "bufferView": ao, "componentType": FLOAT, "count": count, "type": "SCALAR" }));
    let mut primitives = Vec::new();
    for (material, indices) in [bark, leaf].into_iter().enumerate() {
        if indices.is_empty() {
            continue; // glTF accessors hold at least one element
        }
        let view = g.view(indices.iter().flat_map(|&i| remap[i as usize].to_le_bytes()).collect(), Some(ELEMENT_ARRAY_BUFFER));
        let acc = g.accessor(json!({ "bufferView": view, "componentType": UNSIGNED_INT, "count": indices.len(), "type": "SCALAR" }));
        primitives.push(
            json!({ "attributes": { "POSITION": pos, "NORMAL": nrm, "TEXCOORD_0": uv, "_AO": ao }, "indices": acc, "material": material, "mode": 4 }),
        );
    }
    let image_views: Vec<usize> = images.iter().map(|png| g.view(png.clone(), None)).collect();
    let pbr = |texture: usize| json!({ "baseColorTexture": { "index": texture }, "metallicFactor": 0.0, "roughnessFactor": 1.0 });
    let mut doc = z_up_mesh_document(name, json!(primitives));
    doc["materials"] = json!([
        { "name": "bark", "pbrMetallicRoughness": pbr(0) },
        { "name": "leaves", "pbrMetallicRoughness": pbr(1), "alphaMode": "MASK", "alphaCutoff": 0.5, "doubleSided": true },
    ]);
    doc["samplers"] = json!([{ "magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497 }]);
    doc["textures"] = json!([{ "sampler": 0, "source": 0 }, { "sampler": 0, "source": 1 }]);
    doc["images"] = json!(image_views
        .iter()
        .zip(["bark", "leaves"])
        .map(|(v, n)| json!({ "name": n, "bufferView": v, "mimeType": "image/png" }))
        .collect::<Vec<_>>());
    g.finish(doc)
}

/// A glTF document holding one mesh `name` of `primitives`, under a root node that turns Kiln's Z up
/// into glTF's Y up (rotate −90° about X) so the data keeps object coordinates; callers add materials.
pub(super) fn z_up_mesh_document(name: &str, primitives: serde_json::Value) -> serde_json::Value {
    json!({
        "asset": { "version": "2.0", "generator": concat!("kiln ", env!("CARGO_PKG_VERSION")) },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [
            { "name": "kiln-object-z-up", "rotation": [-std::f32::consts::FRAC_1_SQRT_2, 0.0, 0.0, std::f32::consts::FRAC_1_SQRT_2], "children": [1] },
            { "name": name, "mesh": 0 },
        ],
        "meshes": [{ "name": name, "primitives": primitives }],
    })
}

pub(super) const FLOAT: u32 = 5126;
pub(super) const UNSIGNED_INT: u32 = 5125;
pub(super) const ARRAY_BUFFER: u32 = 34962;
pub(super) const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// A GLB under construction: one binary buffer of 4-byte aligned views, and the accessors over them.
#[derive(Default)]
pub(super) struct Glb {
    bin: Vec<u8>,
    views: Vec<serde_json::Value>,
    accessors: Vec<serde_json::Value>,
}

impl Glb {
    pub(super) fn view(&mut self, data: Vec<u8>, target: Option<u32>) -> usize {
        let offset = self.bin.len();
        self.bin.extend_from_slice(&data);
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = json!({ "buffer": 0, "byteOffset": offset, "byteLength": data.len() });
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.views.push(v);
        self.views.len() - 1
    }

    pub(super) fn accessor(&mut self, a: serde_json::Value) -> usize {
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    pub(super) fn finish(self, mut doc: serde_json::Value) -> Vec<u8> {
        doc["buffers"] = json!([{ "byteLength": self.bin.len() }]);
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
        let mut json_bytes = serde_json::to_vec(&doc).expect("JSON values serialise");
        while !json_bytes.len().is_multiple_of(4) {
            json_bytes.push(b' ');
        }
        let total = 12 + 8 + json_bytes.len() + 8 + self.bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json_bytes);
        out.extend_from_slice(&(self.bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&self.bin);
        out
    }
}

/// PNG bytes of `data` (rows top to bottom) in `color` at `depth` (16-bit samples big-endian).
pub(super) fn png(width: u32, height: u32, color: png::ColorType, depth: png::BitDepth, data: &[u8]) -> Result<Vec<u8>, CliError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(color);
    enc.set_depth(depth);
    let failed = |e: png::EncodingError| CliError::Failed(format!("PNG encoding of a {width}×{height} image: {e}"));
    enc.write_header().and_then(|mut w| w.write_image_data(data)).map_err(failed)?;
    Ok(out)
}

fn png_rgba(l: &Rgba8Level) -> Result<Vec<u8>, CliError> {
    png(l.width, l.height, png::ColorType::Rgba, png::BitDepth::Eight, &l.rgba)
}

/// Writes impostor `n`'s atlas level 0 into directory `out` as `impostor-N-albedo.png` (RGBA),
/// `-normal.png` (RGB), `-ao.png` (grey), `-depth.png` (16-bit grey) and `impostor-N.json` (layout,
/// grid, view size, bounding sphere, encodings).
pub fn export_impostor(bake: &Path, n: u32, out: &Path) -> Result<(), CliError> {
    let (file, pack) = open_trees_pack(bake)?;
    let atlases: TreeImpostors = section(&file, &pack)?;
    let a = atlases.atlases.get(n as usize).ok_or_else(|| bad_index(&file, "impostor", n, atlases.atlases.len()))?;
    std::fs::create_dir_all(out).map_err(|e| CliError::io(out, e))?;
    let files = impostor_pngs(a)?;
    let stem = format!("impostor-{n}");
    let mut names = serde_json::Map::new();
    for (map, bytes) in &files {
        let name = format!("{stem}-{map}.png");
        kiln_formats::write_atomic(&out.join(&name), bytes).map_err(CliError::Pack)?;
        names.insert((*map).to_owned(), json!(name));
    }
    let l0 = &a.levels[0];
    let header = json!({
        "format": "kiln impostor export v1",
        "prototype": n,
        "layout": match a.layout {
            kiln_formats::sections::ImpostorLayout::Octahedral => "octahedral",
            kiln_formats::sections::ImpostorLayout::HemiOctahedral => "hemi-octahedral",
        },
        "grid": a.grid,
        "view_px": a.view_px,
        "size": l0.size,
        "levels": a.levels.len(),
        "center": a.center,
        "radius": a.radius,
        "files": names,
        "albedo": "sRGB colour, alpha = coverage",
        "normal": "object-space normal n * 0.5 + 0.5 (Z up)",
        "ao": "ambient occlusion, 255 = open",
        "depth": "16-bit along the view direction from the centre: 0 = -radius (toward the viewer), 65535 = +radius",
    });
    let bytes = serde_json::to_vec_pretty(&header).expect("JSON values serialise");
    kiln_formats::write_atomic(&out.join(format!("{stem}.json")), &bytes).map_err(CliError::Pack)
}

/// Level 0 of an atlas as PNG maps: albedo, normal, AO, depth.
fn impostor_pngs(a: &ImpostorAtlas) -> Result<[(&'static str, Vec<u8>); 4], CliError> {
    // The decoder guarantees at least one level of `size²` texels in every map.
    let l = &a.levels[0];
    let rgb: Vec<u8> = l.normal.chunks_exact(4).flat_map(|t| [t[0], t[1], t[2]]).collect();
    let ao: Vec<u8> = l.normal.chunks_exact(4).map(|t| t[3]).collect();
    let depth: Vec<u8> = l.depth.iter().flat_map(|d| d.to_be_bytes()).collect();
    use png::{BitDepth, ColorType};
    Ok([
        ("albedo", png(l.size, l.size, ColorType::Rgba, BitDepth::Eight, &l.albedo)?),
        ("normal", png(l.size, l.size, ColorType::Rgb, BitDepth::Eight, &rgb)?),
        ("ao", png(l.size, l.size, ColorType::Grayscale, BitDepth::Eight, &ao)?),
        ("depth", png(l.size, l.size, ColorType::Grayscale, BitDepth::Sixteen, &depth)?),
    ])
}
