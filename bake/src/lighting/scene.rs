//! The scene as light transport reads it, prepared from a [`SceneMesh`]: the BVH over the lit
//! triangles and the occluders, the welded surface that receives deposits (parked: compressed
//! until the filter reads it, as tracing never does), and the welded corners of every BVH slot.
//! It owns all it needs, so that a caller holding the mesh in buffers of its own (the bake's
//! level-0 tiles, hundreds of megabytes in a large world) can free them before the paths are
//! traced.

use std::borrow::Cow;

use rayon::prelude::*;

use super::parked::{ParkedSurface, Parking};
use super::{LightingError, SceneMesh};
use crate::rays::{Bvh, IndexedMesh};

/// A [`SceneMesh`] made ready for light transport (see the module's text).
pub struct PreparedScene {
    pub(crate) bvh: Bvh,
    pub(crate) surface: ParkedSurface,
    /// The welded vertex of each of the BVH's vertices (`Bvh::slot_corner_ids` numbers them),
    /// where deposits land; occluders' vertices, which receive nothing, hold 0.
    pub(crate) corner_weld: Vec<u32>,
    /// Material id per lit triangle, if the mesh has them.
    pub(crate) materials: Option<Vec<u16>>,
    /// Lit triangles; the occluders' follow them in the BVH's numbering.
    pub(crate) lit_triangles: usize,
    pub(crate) occluder_albedo: Vec<[f32; 3]>,
    /// Where the surface, and later the pilot's sums, wait while light is traced.
    pub(crate) parking: Parking,
}

impl PreparedScene {
    /// Checks `mesh` and builds what tracing reads from it; what tracing does not read waits
    /// parked as `parking` says.
    pub fn new(mesh: SceneMesh, parking: Parking) -> Result<PreparedScene, LightingError> {
        let lit_triangles = mesh.indices.len() / 3;
        if let Some(m) = mesh.materials {
            if m.len() != lit_triangles {
                return Err(LightingError::Mesh(format!("{} material ids for {lit_triangles} triangles", m.len())));
            }
        }
        // One after the other: built side by side, the surface's adjacency (before it gives back
        // its spare slots) and the BVH's build arrays were live at once, the bake's peak with many
        // threads (the surface, mostly one thread's work, no longer hides beside the build). The
        // surface is parked before the BVH is built.
        let (lit_vertices, materials) = (mesh.positions.len(), mesh.materials.map(<[u16]>::to_vec));
        let surface = ParkedSurface::build(&mesh.positions, &mesh.indices, parking)?;
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
                (vec![lit, IndexedMesh::new(o.positions, o.indices)], Cow::Owned(clusters), o.albedo)
            }
        };
        // The copies the scene keeps are made before the BVH is built, and the BVH's vertex
        // sources become their welded vertices in place: the end of the build is a large world's
        // highest point. An owned mesh is let go of during the build (see `build_meshes_numbered`).
        let occluder_albedo = occluder_albedo.to_vec();
        let (bvh, mut corner_weld) = Bvh::build_meshes_numbered(meshes, &clusters)?;
        let weld = surface.weld()?;
        corner_weld.par_iter_mut().for_each(|s| *s = if (*s as usize) < lit_vertices { weld[*s as usize] } else { 0 });
        Ok(PreparedScene { bvh, surface, corner_weld, materials, lit_triangles, occluder_albedo, parking })
    }

    /// How many of its triangles are occluders (they block and reflect light, and receive none).
    pub fn occluder_triangles(&self) -> usize {
        self.occluder_albedo.len()
    }
}
