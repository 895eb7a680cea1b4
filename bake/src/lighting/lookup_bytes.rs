//! The little-endian form of a [`LightLookup`] (see [`crate::le`]): shards that share a machine
//! make the world's light transport once, and the others read its lookup from the stage cache.
//! The vertex grid is not written: it is a function of the positions and the lookup radius.

use glam::Vec3A;

use super::lookup::LightLookup;
use super::surface::VertexGrid;
use super::{BakeStats, IrradianceVolume};
use crate::le::{LeReader, LeWriter};

/// Version of [`LightLookup::write`]'s layout, for the keys of stored lookups.
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
            let rows = r.pod_into::<[f32; 3]>(Vec::with_capacity).map_err(|e| format!("{what}: {e}"))?;
            Ok(rows.into_iter().map(Vec3A::from).collect())
        };
        let pos = points("positions")?;
        let normal = points("normals")?;
        let ambient: Vec<[f32; 3]> = r.pod_into(Vec::with_capacity)?;
        let has_lights = r.u64()? != 0;
        let lights: Vec<[f32; 3]> = r.pod_into(Vec::with_capacity)?;
        let lookup_radius = one(r.f32s()?, "the lookup radius")?;
        let corner = |r: &mut LeReader, what: &str| -> Result<[f32; 3], String> {
            r.f32s()?.try_into().map_err(|v: Vec<f32>| format!("the volume's {what} corner has {} coordinates", v.len()))
        };
        let (min, max) = (corner(r, "low")?, corner(r, "high")?);
        let mut dims = [0usize; 3];
        for d in &mut dims {
            *d = usize::try_from(r.u64()?).map_err(|e| format!("volume dimensions: {e}"))?;
        }
        let (volume_ambient, direct, air) = (r.pod_into(Vec::with_capacity)?, r.pod_into(Vec::with_capacity)?, r.f32s()?);
        let paths = r.pod_into::<[u32; 2]>(Vec::with_capacity)?.into_iter().map(|[lo, hi]| u64::from(lo) | u64::from(hi) << 32).collect();
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
                cells
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
