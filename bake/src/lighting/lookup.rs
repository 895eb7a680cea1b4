//! The filtered irradiance of a finished bake, looked up at any point: the welded vertices and
//! their filtered values, a grid over them, and the irradiance volume for points far from the
//! surface. It is what a bake's readers keep (the tiles' vertices and volume slices, the trees'
//! crowns) once the tracer and the surface's adjacency are no longer needed
//! ([`BakedLighting::into_lookup`](super::BakedLighting::into_lookup)).

use glam::Vec3A;
use rayon::prelude::*;

use super::surface::{Surface, VertexGrid};
use super::{BakeStats, Irradiance, IrradianceVolume, LightingError};

/// See the module's text.
pub struct LightLookup {
    /// Input vertex → welded vertex.
    pub(super) weld: Vec<u32>,
    pub(super) pos: Vec<Vec3A>,
    pub(super) normal: Vec<Vec3A>,
    /// Ambient irradiance per welded vertex, after filtering.
    pub(super) ambient: Vec<[f32; 3]>,
    /// The static lights' direct irradiance per welded vertex, after filtering; `None` in a scene
    /// without static lights (zero everywhere).
    pub(super) lights: Option<Vec<[f32; 3]>>,
    pub(super) grid: VertexGrid,
    pub(super) lookup_radius: f32,
    pub(super) volume: IrradianceVolume,
    pub(super) stats: BakeStats,
}

/// Refuses queries whose arrays differ in length or hold a value that is not finite.
pub(super) fn check_queries(positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Result<(), LightingError> {
    if positions.len() != normals.len() {
        return Err(LightingError::Query(format!("{} positions but {} normals", positions.len(), normals.len())));
    }
    if let Some(i) = positions.iter().chain(normals).position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(LightingError::Query(format!("entry {} is not finite", i % positions.len().max(1))));
    }
    Ok(())
}

impl LightLookup {
    pub(super) fn new(
        surface: Surface,
        ambient: Vec<[f32; 3]>,
        lights: Option<Vec<[f32; 3]>>,
        grid: VertexGrid,
        lookup_radius: f32,
        volume: IrradianceVolume,
        stats: BakeStats,
    ) -> LightLookup {
        let Surface { weld, pos, normal, .. } = surface;
        LightLookup { weld, pos, normal, ambient, lights, grid, lookup_radius, volume, stats }
    }

    /// `(ambient, lights)` at welded vertex `v`.
    fn vertex(&self, v: usize) -> ([f32; 3], [f32; 3]) {
        (self.ambient[v], self.lights.as_ref().map_or([0.0; 3], |l| l[v]))
    }

    /// The filtered irradiance (`ambient` and `lights`; `sun_moon` left zero) at points on or
    /// near the baked surface, with their unit normals: from the nearest baked vertices that
    /// face the same way (inverse-distance weights, up to 4 within 2.5 mean edge lengths; a
    /// point at a baked vertex gets exactly its value), widening the search 4× if none qualify,
    /// and falling back to the irradiance volume for points far from the surface.
    pub fn filtered_at(&self, positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Result<Vec<Irradiance>, LightingError> {
        check_queries(positions, normals)?;
        Ok(positions
            .par_iter()
            .zip(normals)
            .map(|(p, n)| {
                let (ambient, lights) = self.filtered(Vec3A::from(*p), Vec3A::from(*n).normalize_or_zero());
                Irradiance { ambient, lights, ..Irradiance::default() }
            })
            .collect())
    }

    /// [`LightLookup::filtered_at`] for points that are most likely vertices of the baked mesh:
    /// `baked_vertex[i]` is the index (into the baked mesh's `positions`) of the vertex expected at
    /// `positions[i]`. Where that vertex sits exactly at the point, its value is read without the
    /// search; elsewhere the point is looked up as usual. The results equal `filtered_at`'s.
    pub fn filtered_at_baked_vertices(
        &self,
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        baked_vertex: &[u32],
    ) -> Result<Vec<Irradiance>, LightingError> {
        if baked_vertex.len() != positions.len() {
            return Err(LightingError::Query(format!("{} positions but {} baked vertices", positions.len(), baked_vertex.len())));
        }
        check_queries(positions, normals)?;
        Ok(positions
            .par_iter()
            .zip(normals)
            .zip(baked_vertex)
            .map(|((p, n), &b)| {
                let p = Vec3A::from(*p);
                // The search's exact-match case: welded vertices have distinct positions, so the
                // vertex at `p` is the one welded from `b`.
                let welded = self.weld.get(b as usize).map(|&w| w as usize);
                let (ambient, lights) = match welded.filter(|&w| self.pos[w] == p) {
                    Some(w) => self.vertex(w),
                    None => self.filtered(p, Vec3A::from(*n).normalize_or_zero()),
                };
                Irradiance { ambient, lights, ..Irradiance::default() }
            })
            .collect())
    }

    /// `(ambient, lights)` at `p` with unit normal `n` (see [`LightLookup::filtered_at`]).
    pub(super) fn filtered(&self, p: Vec3A, n: Vec3A) -> ([f32; 3], [f32; 3]) {
        let found = self.nearest(p, n, self.lookup_radius, true).or_else(|| self.nearest(p, n, 4.0 * self.lookup_radius, false));
        match found {
            Some(v) => v,
            None => self.volume.sample(p.into(), n.into()),
        }
    }

    /// Inverse-distance blend of up to 4 nearest welded vertices within `r` (facing within 75°
    /// of `n` and near its tangent plane when `oriented`).
    fn nearest(&self, p: Vec3A, n: Vec3A, r: f32, oriented: bool) -> Option<([f32; 3], [f32; 3])> {
        // Queries at the baked vertices themselves (the common case) need only their own cell.
        let mut exact = None;
        self.grid.for_each_near(p, 0.0, |v| {
            if exact.is_none() && self.pos[v as usize] == p {
                exact = Some(v);
            }
        });
        if let Some(v) = exact {
            return Some(self.vertex(v as usize));
        }
        let mut best = [(f32::INFINITY, u32::MAX); 4];
        self.grid.for_each_near(p, r, |v| {
            let d = self.pos[v as usize] - p;
            let d2 = d.length_squared();
            if d2 > r * r || (oriented && (self.normal[v as usize].dot(n) < 0.25 || d.dot(n).abs() > 0.5 * r)) {
                return;
            }
            // Insertion into a sorted array of 4; ties broken by index for determinism.
            let mut item = (d2, v);
            for slot in best.iter_mut() {
                if item.0 < slot.0 || (item.0 == slot.0 && item.1 < slot.1) {
                    std::mem::swap(slot, &mut item);
                }
            }
        });
        if best[0].1 == u32::MAX {
            return None;
        }
        let (mut amb, mut lit, mut wsum) = ([0.0f32; 3], [0.0f32; 3], 0.0f32);
        for &(d2, v) in best.iter().filter(|b| b.1 != u32::MAX) {
            let w = 1.0 / d2.sqrt();
            let (a, l) = self.vertex(v as usize);
            for c in 0..3 {
                amb[c] += w * a[c];
                lit[c] += w * l[c];
            }
            wsum += w;
        }
        Some((amb.map(|x| x / wsum), lit.map(|x| x / wsum)))
    }

    /// The irradiance volume.
    pub fn volume(&self) -> &IrradianceVolume {
        &self.volume
    }

    /// Counts describing the bake.
    pub fn stats(&self) -> &BakeStats {
        &self.stats
    }
}
