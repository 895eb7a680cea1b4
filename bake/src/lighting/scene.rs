//! The scene as light transport reads it, prepared from a [`SceneMesh`]: the BVH over the lit
//! triangles and the occluders, the welded surface that receives deposits, and the welded corners
//! of every BVH slot. It owns all it needs, so that a caller holding the mesh in buffers of its
//! own (the bake's level-0 tiles, hundreds of megabytes in a large world) can free them before
//! the paths are traced.

use std::borrow::Cow;

use rayon::prelude::*;

use super::surface::Surface;
use super::{LightingError, SceneMesh};
use crate::le::{LeReader, LeWriter};
use crate::mem;
use crate::rays::{Bvh, IndexedMesh};

/// A [`SceneMesh`] made ready for light transport (see the module's text).
pub struct PreparedScene {
    pub(crate) bvh: Bvh,
    pub(crate) surface: Surface,
    /// The welded vertex of each of the BVH's vertices (`Bvh::slot_corner_ids` numbers them),
    /// where deposits land; occluders' vertices, which receive nothing, hold 0.
    pub(crate) corner_weld: Vec<u32>,
    /// Material id per lit triangle, if the mesh has them.
    pub(crate) materials: Option<Vec<u16>>,
    /// Lit triangles; the occluders' follow them in the BVH's numbering.
    pub(crate) lit_triangles: usize,
    pub(crate) occluder_albedo: Vec<[f32; 3]>,
}

impl PreparedScene {
    /// Checks `mesh` and builds what tracing reads from it.
    pub fn new(mesh: &SceneMesh) -> Result<PreparedScene, LightingError> {
        let lit_triangles = mesh.indices.len() / 3;
        if let Some(m) = mesh.materials {
            if m.len() != lit_triangles {
                return Err(LightingError::Mesh(format!("{} material ids for {lit_triangles} triangles", m.len())));
            }
        }
        // Occluders go into the BVH after the lit triangles; the surface (deposits, filtering,
        // queries) is the lit triangles alone.
        let lit = IndexedMesh { positions: mesh.positions, indices: mesh.indices };
        let (meshes, clusters, occluder_albedo) = match &mesh.occluders {
            None => (vec![lit], Cow::Borrowed(mesh.clusters), &[][..]),
            Some(o) => {
                if o.albedo.len() * 3 != o.indices.len() {
                    return Err(LightingError::Mesh(format!("{} occluder albedos for {} triangles", o.albedo.len(), o.indices.len() / 3)));
                }
                let clusters = match (mesh.clusters.is_empty(), o.clusters.is_empty()) {
                    (false, false) => [mesh.clusters, o.clusters].concat(),
                    _ => Vec::new(),
                };
                (vec![lit, IndexedMesh { positions: o.positions, indices: o.indices }], Cow::Owned(clusters), o.albedo)
            }
        };
        // One after the other: built side by side, the surface's adjacency (before it gives back
        // its spare slots) and the BVH's build arrays were live at once, the bake's peak with many
        // threads (the surface, mostly one thread's work, no longer hides beside the build).
        let surface = Surface::new(mesh.positions, mesh.indices);
        let (bvh, sources) = Bvh::build_meshes_numbered(&meshes, &clusters)?;
        let lit_vertices = mesh.positions.len();
        let mut corner_weld: Vec<u32> = mem::huge_vec(sources.len());
        corner_weld.par_extend(sources.par_iter().map(|&s| if (s as usize) < lit_vertices { surface.weld[s as usize] } else { 0 }));
        Ok(PreparedScene {
            bvh,
            surface,
            corner_weld,
            materials: mesh.materials.map(<[u16]>::to_vec),
            lit_triangles,
            occluder_albedo: occluder_albedo.to_vec(),
        })
    }
}

/// Version of [`PreparedScene::write`]'s layout, for the keys of stored scenes.
pub const SCENE_LAYOUT: u32 = 1;

impl PreparedScene {
    /// Writes the scene's little-endian form into `w`, bit for bit (see [`crate::le`]):
    /// processes that share a machine prepare it once and read it from the stage cache.
    pub(crate) fn write(&self, w: &mut LeWriter) {
        w.u64(self.lit_triangles as u64);
        w.u32s(&self.corner_weld);
        w.u64(self.materials.is_some() as u64);
        w.u16s(self.materials.as_deref().unwrap_or_default());
        w.f32s(self.occluder_albedo.as_flattened());
        self.surface.write(w);
        self.bvh.write(w);
    }

    /// How many of its triangles are occluders (they block and reflect light, and receive none).
    pub fn occluder_triangles(&self) -> usize {
        self.occluder_albedo.len()
    }

    /// Bytes of [`PreparedScene::write`]'s form, about.
    pub(crate) fn byte_len(&self) -> usize {
        self.bvh.byte_len() + 4 * self.corner_weld.len() + 2 * self.lit_triangles + 12 * self.occluder_albedo.len() + 64 * self.surface.pos.len()
    }

    /// Reads what [`PreparedScene::write`] wrote, checking that its parts agree: every BVH vertex
    /// has a welded corner on the surface, and every triangle a material and occluder albedo
    /// where it needs them.
    pub(crate) fn read(r: &mut LeReader) -> Result<PreparedScene, String> {
        let lit_triangles = usize::try_from(r.u64()?).map_err(|e| e.to_string())?;
        let corner_weld: Vec<u32> = r.pod_into(mem::huge_vec)?;
        let has_materials = r.u64()? != 0;
        let materials = r.u16s()?;
        let occluder_albedo = r.pod_into::<[f32; 3]>(Vec::with_capacity).map_err(|e| format!("occluder albedo: {e}"))?;
        let surface = Surface::read(r)?;
        let bvh = Bvh::read(r).map_err(|e| format!("its BVH: {e}"))?;
        let triangles = bvh.triangle_count();
        if lit_triangles > triangles || occluder_albedo.len() != triangles - lit_triangles {
            return Err(format!("{lit_triangles} lit triangles and {} occluder albedos for {triangles} triangles", occluder_albedo.len()));
        }
        if has_materials && materials.len() != lit_triangles {
            return Err(format!("{} material ids for {lit_triangles} lit triangles", materials.len()));
        }
        if corner_weld.len() != bvh.vertex_count() || corner_weld.iter().any(|&v| v as usize >= surface.pos.len().max(1)) {
            return Err("the welded corners do not match the BVH's vertices and the surface".into());
        }
        Ok(PreparedScene { bvh, surface, corner_weld, materials: has_materials.then_some(materials), lit_triangles, occluder_albedo })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lighting::{Occluders, SceneMesh};

    #[test]
    fn a_scene_read_back_is_the_same_scene() {
        // A ridged sheet of lit triangles with two materials, and an occluding quad above it.
        let n = 12usize;
        let positions: Vec<[f32; 3]> = (0..n * n).map(|i| [(i % n) as f32, (i / n) as f32, ((i * 7) % 5) as f32 * 0.1]).collect();
        let mut indices = Vec::new();
        for y in 0..n - 1 {
            for x in 0..n - 1 {
                let i = (y * n + x) as u32;
                indices.extend([i, i + 1, i + n as u32, i + 1, i + n as u32 + 1, i + n as u32]);
            }
        }
        let materials: Vec<u16> = (0..indices.len() / 3).map(|t| (t % 2) as u16).collect();
        let occluder_positions = [[2.0, 2.0, 3.0], [6.0, 2.0, 3.0], [2.0, 6.0, 3.0], [6.0, 6.0, 3.0]];
        let occluder_indices = [0, 1, 2, 1, 3, 2];
        let occluders = Occluders { positions: &occluder_positions, indices: &occluder_indices, albedo: &[[0.2, 0.3, 0.1]; 2], clusters: &[] };
        let mesh = SceneMesh { positions: &positions, indices: &indices, materials: Some(&materials), clusters: &[], occluders: Some(occluders) };
        let scene = PreparedScene::new(&mesh).unwrap();
        let to_bytes = |s: &PreparedScene| {
            let mut w = LeWriter::default();
            s.write(&mut w);
            w.finish()
        };
        let from_bytes = |b: &[u8]| {
            let mut r = LeReader::new(b);
            PreparedScene::read(&mut r).and_then(|s| r.end().map(|()| s)).map(|s| to_bytes(&s))
        };
        let bytes = to_bytes(&scene);
        assert_eq!(from_bytes(&bytes).unwrap(), bytes);
        for cut in [0, 7, 8, 100, bytes.len() / 2, bytes.len() - 1] {
            assert!(from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut wrong = scene;
        wrong.corner_weld[0] = wrong.surface.pos.len() as u32;
        assert!(from_bytes(&to_bytes(&wrong)).unwrap_err().contains("welded"));
    }
}
