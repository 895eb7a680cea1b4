//! The scene as light transport reads it, prepared from a [`SceneMesh`]: the BVH over the lit
//! triangles and the occluders, the welded surface that receives deposits, and the welded corners
//! of every BVH slot. It owns all it needs, so that a caller holding the mesh in buffers of its
//! own (the bake's level-0 tiles, hundreds of megabytes in a large world) can free them before
//! the paths are traced.

use std::borrow::Cow;

use rayon::prelude::*;

use super::surface::Surface;
use super::{LightingError, SceneMesh};
use crate::mem;
use crate::rays::{Bvh, IndexedMesh};

/// A [`SceneMesh`] made ready for light transport (see the module's text).
pub struct PreparedScene {
    pub(crate) bvh: Bvh,
    pub(crate) surface: Surface,
    /// Welded corner vertices of the triangle in each BVH leaf slot (see `Bvh::slot_ids`).
    pub(crate) slot_verts: Vec<[u32; 3]>,
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
        let (bvh, surface) = rayon::join(|| Bvh::build_meshes(&meshes, &clusters), || Surface::new(mesh.positions, mesh.indices));
        let bvh = bvh?;
        let mut slot_verts: Vec<[u32; 3]> = mem::huge_vec(bvh.slot_count());
        // Unused lanes are never hit; their entry is a placeholder.
        slot_verts.par_extend(bvh.slot_ids().map(|t| match t {
            Some(t) if (t as usize) < lit_triangles => [0, 1, 2].map(|k| surface.weld[mesh.indices[3 * t as usize + k] as usize]),
            _ => [0; 3],
        }));
        Ok(PreparedScene {
            bvh,
            surface,
            slot_verts,
            materials: mesh.materials.map(<[u16]>::to_vec),
            lit_triangles,
            occluder_albedo: occluder_albedo.to_vec(),
        })
    }
}
