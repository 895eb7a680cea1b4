//! `kiln export --grass-patch N [--level K]`: one level of one unique grass patch as a mesh, every
//! blade as the curved tapered strip the viewer draws (`grass::blade_mesh`, with the level's
//! segments), read from the bake's shared grass pack.

use std::path::Path;

use kiln_formats::sections::{GrassBlade, GrassPatches};
use serde_json::json;

use super::export::MeshFormat;
use super::export_trees::{bad_index, open_shared_pack, section, z_up_mesh_document, Glb, ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, FLOAT, UNSIGNED_INT};
use super::CliError;

/// The product name of the grass shared pack in the manifest's `SHRD`.
pub const GRASS_PRODUCT: &str = "grass-patches";

/// One patch level as triangles: per vertex a position (patch-local, base at z = 0, Z up), the
/// blade's face normal and its linear RGB colour.
#[derive(Clone, Debug, Default)]
pub struct GrassMesh {
    /// Vertex positions in patch-local world units.
    pub positions: Vec<[f32; 3]>,
    /// The blade's unit face normal at each of its vertices.
    pub normals: Vec<[f32; 3]>,
    /// The blade's linear RGB colour at each of its vertices.
    pub colors: Vec<[f32; 3]>,
    /// Triangles, counter-clockwise seen from the normal's side.
    pub triangles: Vec<[u32; 3]>,
}

fn to_blade(b: &GrassBlade) -> crate::grass::Blade {
    crate::grass::Blade {
        position: b.position,
        direction: b.direction,
        normal: b.normal,
        length: b.length,
        width: b.width,
        bend: b.bend,
        color: b.color,
        parent: b.parent,
    }
}

/// Level `level` of patch `n` as a mesh: `blades × (2·segments − 1)` triangles.
pub fn patch_mesh(patches: &GrassPatches, n: usize, level: usize) -> Option<GrassMesh> {
    let l = patches.patches.get(n)?.levels.get(level)?;
    let mut m = GrassMesh::default();
    for b in &l.blades {
        let (vertices, triangles) = crate::grass::blade_mesh(&to_blade(b), l.segments, 1.0);
        let first = m.positions.len() as u32;
        m.triangles.extend(triangles.iter().map(|t| t.map(|i| i + first)));
        m.normals.extend(std::iter::repeat_n(b.normal, vertices.len()));
        m.colors.extend(std::iter::repeat_n(b.color, vertices.len()));
        m.positions.extend(vertices);
    }
    Some(m)
}

/// Writes level `level` of grass patch `n` of the bake at `bake` (or of the grass pack `bake`) to
/// `out` as PLY or glTF binary.
pub fn export_patch(bake: &Path, n: u32, level: u32, format: MeshFormat, out: &Path) -> Result<(), CliError> {
    let (file, pack) = open_shared_pack(bake, GRASS_PRODUCT, "grass")?;
    let patches: GrassPatches = section(&file, &pack)?;
    let count = patches.patches.len();
    if n as usize >= count {
        return Err(bad_index(&file, "grass patch", n, count));
    }
    let levels = patches.levels();
    let mesh = patch_mesh(&patches, n as usize, level as usize)
        .ok_or_else(|| CliError::Usage(format!("{}: no level {level}; a patch has levels 0 to {}", file.display(), levels.saturating_sub(1))))?;
    if mesh.triangles.is_empty() {
        return Err(CliError::Usage(format!("{}: grass patch {n} has no blades at level {level}", file.display())));
    }
    let name = format!("grass patch {n} level {level}");
    let bytes = match format {
        MeshFormat::Ply => ply_bytes(&mesh, &name),
        MeshFormat::Glb => glb_bytes(&mesh, &name),
    };
    kiln_formats::write_atomic(out, &bytes).map_err(CliError::Pack)
}

/// A linear value in [0, 1] as an 8-bit sRGB code, as PLY viewers expect colours.
fn srgb8(linear: f32) -> u8 {
    let c = linear.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 { 12.92 * c } else { 1.055 * libm::powf(c, 1.0 / 2.4) - 0.055 };
    (s * 255.0).round() as u8
}

fn ply_bytes(m: &GrassMesh, name: &str) -> Vec<u8> {
    let header = format!(
        "ply\nformat binary_little_endian 1.0\ncomment Kiln {name}: patch-local world units, Z up, colours sRGB\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nelement face {}\nproperty list uchar uint vertex_indices\nend_header\n",
        m.positions.len(),
        m.triangles.len()
    );
    let mut out = header.into_bytes();
    for i in 0..m.positions.len() {
        for v in m.positions[i].iter().chain(&m.normals[i]) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend(m.colors[i].map(srgb8));
    }
    for t in &m.triangles {
        out.push(3);
        for i in t {
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
    out
}

fn glb_bytes(m: &GrassMesh, name: &str) -> Vec<u8> {
    let mut g = Glb::default();
    let f32s = |v: &[[f32; 3]]| v.iter().flatten().flat_map(|c| c.to_le_bytes()).collect::<Vec<u8>>();
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in &m.positions {
        for a in 0..3 {
            (lo[a], hi[a]) = (lo[a].min(p[a]), hi[a].max(p[a]));
        }
    }
    let count = m.positions.len();
    let pos = g.view(f32s(&m.positions), Some(ARRAY_BUFFER));
    let pos = g.accessor(json!({ "bufferView": pos, "componentType": FLOAT, "count": count, "type": "VEC3", "min": lo, "max": hi }));
    let nrm = g.view(f32s(&m.normals), Some(ARRAY_BUFFER));
    let nrm = g.accessor(json!({ "bufferView": nrm, "componentType": FLOAT, "count": count, "type": "VEC3" }));
    // glTF's COLOR_0 is linear, as the pack's colours are.
    let col = g.view(f32s(&m.colors), Some(ARRAY_BUFFER));
    let col = g.accessor(json!({ "bufferView": col, "componentType": FLOAT, "count": count, "type": "VEC3" }));
    let idx = g.view(m.triangles.iter().flatten().flat_map(|i| i.to_le_bytes()).collect(), Some(ELEMENT_ARRAY_BUFFER));
    let idx = g.accessor(json!({ "bufferView": idx, "componentType": UNSIGNED_INT, "count": 3 * m.triangles.len(), "type": "SCALAR" }));
    let primitives = json!([{ "attributes": { "POSITION": pos, "NORMAL": nrm, "COLOR_0": col }, "indices": idx, "material": 0, "mode": 4 }]);
    let mut doc = z_up_mesh_document(name, primitives);
    // Blades are seen from both sides.
    doc["materials"] = json!([{ "name": "grass", "pbrMetallicRoughness": { "metallicFactor": 0.0, "roughnessFactor": 1.0 }, "doubleSided": true }]);
    g.finish(doc)
}

#[cfg(test)]
mod tests {
    use kiln_formats::sections::{GrassLevel, GrassPatch, NO_PARENT};

    use super::*;

    fn blade(x: f32, bend: f32) -> GrassBlade {
        let d = [0.6f32, 0.0, 0.8];
        GrassBlade {
            position: [x, 0.5],
            direction: d,
            normal: [-0.8, 0.0, 0.6],
            length: 0.05,
            width: 0.004,
            bend,
            color: [0.2, 0.5, 0.1],
            parent: NO_PARENT,
        }
    }

    fn area(m: &GrassMesh) -> f64 {
        m.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| m.positions[i as usize].map(f64::from));
                let (u, v) = ([0, 1, 2].map(|k| b[k] - a[k]), [0, 1, 2].map(|k| c[k] - a[k]));
                let x = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
                0.5 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt()
            })
            .sum()
    }

    #[test]
    fn a_level_has_the_strips_triangles_and_area() {
        for (segments, bend) in [(4, 0.0), (3, 0.0), (1, 0.0), (4, 0.5)] {
            let level = GrassLevel { segments, blades: vec![blade(0.2, bend), blade(0.7, bend)] };
            let patches = GrassPatches { patch_size: 1.0, tint: [0.2; 3], patches: vec![GrassPatch { levels: vec![level], flowers: Vec::new() }] };
            let m = patch_mesh(&patches, 0, 0).unwrap();
            assert_eq!(m.triangles.len(), 2 * (2 * segments as usize - 1));
            assert_eq!((m.positions.len(), m.colors.len(), m.normals.len()), (2 * (2 * segments as usize + 1), m.positions.len(), m.positions.len()));
            let want = 2.0 * 0.5 * 0.004 * 0.05;
            let rel = (area(&m) - want).abs() / want;
            assert!(rel < if bend == 0.0 { 1e-5 } else { 0.05 }, "{segments} segments, bend {bend}: {} vs {want}", area(&m));
            assert!(patch_mesh(&patches, 1, 0).is_none() && patch_mesh(&patches, 0, 1).is_none());
        }
    }

    #[test]
    fn colours_are_srgb_coded() {
        assert_eq!((srgb8(0.0), srgb8(1.0), srgb8(2.0), srgb8(-1.0)), (0, 255, 255, 0));
        assert_eq!((srgb8(0.05), srgb8(0.002)), (63, 7)); // 0.2478 · 255 on the curve, 0.0258 · 255 on the linear toe
    }
}
