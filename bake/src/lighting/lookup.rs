//! The filtered irradiance of a finished bake, looked up at any point: the welded vertices and
//! their filtered values, a grid over them, and the irradiance volume for points far from the
//! surface. It is what a bake's readers keep (the tiles' vertices and volume slices, the trees'
//! crowns) once the tracer and the surface's adjacency are no longer needed
//! ([`BakedLighting::into_lookup`](super::BakedLighting::into_lookup)). Shards that share a
//! machine make light transport once and the others read its lookup from the stage cache, in
//! [`LightLookup::write`]'s little-endian form (see [`crate::le`]); the vertex grid is not
//! written, being a function of the positions and the lookup radius.

use glam::Vec3A;
use rayon::prelude::*;

use super::surface::VertexGrid;
use super::{BakeStats, Irradiance, IrradianceVolume, LightingError};
use crate::le::{LeReader, LeWriter};

/// See the module's text.
pub struct LightLookup {
    /// Input vertex → welded vertex.
    weld: Vec<u32>,
    pos: Vec<Vec3A>,
    normal: Vec<Vec3A>,
    /// Ambient irradiance per welded vertex, after filtering.
    ambient: Vec<[f32; 3]>,
    /// The static lights' direct irradiance per welded vertex, after filtering; `None` in a scene
    /// without static lights (zero everywhere).
    lights: Option<Vec<[f32; 3]>>,
    grid: VertexGrid,
    lookup_radius: f32,
    volume: IrradianceVolume,
    stats: BakeStats,
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
    /// The lookup over the welded vertices (`weld`, `pos`, `normal`: the surface's) and their
    /// filtered irradiance.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        weld: Vec<u32>,
        pos: Vec<Vec3A>,
        normal: Vec<Vec3A>,
        ambient: Vec<[f32; 3]>,
        lights: Option<Vec<[f32; 3]>>,
        grid: VertexGrid,
        lookup_radius: f32,
        volume: IrradianceVolume,
        stats: BakeStats,
    ) -> LightLookup {
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

/// Version of the layout of a stored lookup (`LightLookup::write`'s little-endian form), for its keys.
pub const LOOKUP_LAYOUT: u32 = 2;

impl LightLookup {
    /// Bytes of [`LightLookup::write`]'s form, about.
    pub(crate) fn byte_len(&self) -> usize {
        let cells = self.volume.air.len();
        4 * self.weld.len() + 36 * self.pos.len() + self.lights.as_ref().map_or(0, |l| 12 * l.len()) + 148 * cells + 256
    }

    /// Writes the lookup, bit for bit.
    pub(crate) fn write(&self, w: &mut LeWriter) {
        w.u32s(&self.weld);
        w.f32_iter(3 * self.pos.len(), self.pos.iter().flat_map(|p| p.to_array()));
        w.f32_iter(3 * self.normal.len(), self.normal.iter().flat_map(|p| p.to_array()));
        w.pod(&self.ambient);
        w.u64(self.lights.is_some() as u64);
        w.pod(self.lights.as_deref().unwrap_or_default());
        w.f32s(&[self.lookup_radius]);
        let v = &self.volume;
        w.f32s(&v.min);
        w.f32s(&v.max);
        v.dims.iter().for_each(|&d| w.u64(d as u64));
        w.pod(&v.ambient);
        w.pod(&v.direct);
        w.f32s(&v.air);
        let s = &self.stats;
        // As (low, high) word pairs: an array the reader bounds by what is left.
        w.pod(&s.paths.iter().map(|&p| [p as u32, (p >> 32) as u32]).collect::<Vec<[u32; 2]>>());
        [s.flights, s.vertices as u64, s.triangles as u64].into_iter().for_each(|n| w.u64(n));
        w.f64(s.area);
    }

    /// Reads what [`LightLookup::write`] wrote, checking that its arrays agree: one normal and
    /// one value per welded vertex, every weld naming one, one entry of each kind per volume cell.
    pub(crate) fn read(r: &mut LeReader) -> Result<LightLookup, String> {
        let weld = r.u32s()?;
        let mut points = |what: &str| -> Result<Vec<Vec3A>, String> {
            let rows = r.pod::<[f32; 3]>().map_err(|e| format!("{what}: {e}"))?;
            Ok(rows.into_iter().map(Vec3A::from).collect())
        };
        let pos = points("positions")?;
        let normal = points("normals")?;
        let ambient: Vec<[f32; 3]> = r.pod()?;
        let has_lights = r.u64()? != 0;
        let lights: Vec<[f32; 3]> = r.pod()?;
        let lookup_radius = one(r.f32s()?, "the lookup radius")?;
        let corner = |r: &mut LeReader, what: &str| -> Result<[f32; 3], String> {
            r.f32s()?.try_into().map_err(|v: Vec<f32>| format!("the volume's {what} corner has {} coordinates", v.len()))
        };
        let (min, max) = (corner(r, "low")?, corner(r, "high")?);
        let mut dims = [0usize; 3];
        for d in &mut dims {
            *d = usize::try_from(r.u64()?).map_err(|e| format!("volume dimensions: {e}"))?;
        }
        let (volume_ambient, direct, air) = (r.pod()?, r.pod()?, r.f32s()?);
        let paths = r.pod::<[u32; 2]>()?.into_iter().map(|[lo, hi]| u64::from(lo) | u64::from(hi) << 32).collect();
        let [flights, vertices, triangles] = [r.u64()?, r.u64()?, r.u64()?];
        let stats = BakeStats { paths, flights, vertices: vertices as usize, triangles: triangles as usize, area: r.f64()? };
        let n = pos.len();
        if normal.len() != n || ambient.len() != n || (has_lights && lights.len() != n) || (!has_lights && !lights.is_empty()) {
            return Err(format!("{n} welded vertices with {} normals, {} ambient and {} light values", normal.len(), ambient.len(), lights.len()));
        }
        if weld.iter().any(|&v| v as usize >= n) {
            return Err(format!("a weld names a vertex past the {n} welded ones"));
        }
        if !(lookup_radius.is_finite() && lookup_radius > 0.0 && min.iter().chain(&max).all(|c| c.is_finite())) {
            return Err(format!("lookup radius {lookup_radius}, volume box {min:?}..{max:?}"));
        }
        let cells = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or("the volume's cell count overflows")?;
        let volume = IrradianceVolume { min, max, dims, ambient: volume_ambient, direct, air };
        if volume.ambient.len() != cells || volume.direct.len() != cells || volume.air.len() != cells {
            return Err(format!(
                "a volume of {dims:?} cells with {} ambient, {} direct and {} air entries",
                volume.ambient.len(),
                volume.direct.len(),
                volume.air.len()
            ));
        }
        let grid = VertexGrid::new(&pos, lookup_radius);
        Ok(LightLookup { weld, pos, normal, ambient, lights: has_lights.then_some(lights), grid, lookup_radius, volume, stats })
    }
}

fn one(v: Vec<f32>, what: &str) -> Result<f32, String> {
    match v[..] {
        [x] => Ok(x),
        _ => Err(format!("{what} is not one number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(lookup: &LightLookup) -> Result<LightLookup, String> {
        let mut w = LeWriter::default();
        lookup.write(&mut w);
        let bytes = w.finish();
        let mut r = LeReader::new(&bytes);
        LightLookup::read(&mut r).and_then(|l| r.end().map(|()| l))
    }

    fn bytes_of(lookup: &LightLookup) -> Vec<u8> {
        let mut w = LeWriter::default();
        lookup.write(&mut w);
        w.finish()
    }

    #[test]
    fn a_lookup_read_back_answers_every_query_as_the_original() {
        let mut lookup = crate::lighting::tests::small_lookup();
        // A world with a hundred static lights, one of them traced past 2^32 paths.
        lookup.stats.paths.extend((0..100).map(|i| (i as u64) << 27));
        let back = round_trip(&lookup).expect("reads back");
        assert_eq!(bytes_of(&back), bytes_of(&lookup), "the same bytes again");
        // Points on the surface, near it, and far from it (answered by the volume).
        let points: Vec<[f32; 3]> = (0..200).map(|i| [(i % 20) as f32 * 0.37, (i / 20) as f32 * 0.41, (i % 7) as f32 * 0.9 - 1.0]).collect();
        let normals: Vec<[f32; 3]> = (0..200).map(|i| [0.1 * (i % 3) as f32, 0.2, 1.0]).collect();
        let (a, b) = (lookup.filtered_at(&points, &normals).unwrap(), back.filtered_at(&points, &normals).unwrap());
        assert!(a.iter().zip(&b).all(|(a, b)| a.ambient == b.ambient && a.lights == b.lights));
        assert_eq!(back.stats().paths, lookup.stats().paths);
    }

    #[test]
    fn a_damaged_lookup_is_refused() {
        let bytes = bytes_of(&crate::lighting::tests::small_lookup());
        for cut in [0, 7, bytes.len() / 3, bytes.len() - 1] {
            assert!(LightLookup::read(&mut LeReader::new(&bytes[..cut])).is_err(), "cut at {cut}");
        }
        // The first weld entry names a vertex far past the last.
        let mut bad = bytes.clone();
        bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(LightLookup::read(&mut LeReader::new(&bad)).is_err(), "a weld past the vertices");
    }
}
