//! A BVH written out of memory and read back by the same process, for a caller that needs its
//! memory for a while (light transport's filter, between its two phases of paths). The arrays
//! are written as they lie in memory: a scratch copy, never a format, so it is not meant to be
//! read by another build or another machine.

use std::io::{self, Read, Write};

use glam::Vec4;

use super::triangle::TriBlock;
use super::{Bvh, Node};
use crate::mem::huge_vec;

/// What [`Bvh::write_out`] keeps in memory: everything but the arrays.
#[derive(Debug)]
pub struct WrittenBvh {
    nodes: usize,
    blocks: usize,
    positions: usize,
    tri_count: usize,
    root: u32,
    lo: [f32; 3],
    hi: [f32; 3],
}

impl Bvh {
    /// Writes the tree's arrays to `out` and lets go of them; [`WrittenBvh::read_back`] makes the
    /// same tree again from what was written.
    pub fn write_out(self, out: &mut impl Write) -> io::Result<WrittenBvh> {
        out.write_all(bytemuck::cast_slice(&self.nodes))?;
        out.write_all(bytemuck::cast_slice(&self.blocks))?;
        out.write_all(bytemuck::cast_slice(&self.positions))?;
        let Bvh { nodes, blocks, positions, tri_count, root, lo, hi } = self;
        Ok(WrittenBvh { nodes: nodes.len(), blocks: blocks.len(), positions: positions.len(), tri_count, root, lo, hi })
    }
}

impl WrittenBvh {
    /// The tree [`Bvh::write_out`] wrote to what `from` reads, from where it began.
    pub fn read_back(self, from: &mut impl Read) -> io::Result<Bvh> {
        Ok(Bvh {
            nodes: read_array::<Node>(from, self.nodes)?,
            blocks: read_array::<TriBlock>(from, self.blocks)?,
            positions: read_array::<Vec4>(from, self.positions)?,
            tri_count: self.tri_count,
            root: self.root,
            lo: self.lo,
            hi: self.hi,
        })
    }
}

/// `n` values read from `from`, on memory advised onto huge pages before it is written, as the
/// build makes the arrays that tracing reads.
fn read_array<T: bytemuck::Pod>(from: &mut impl Read, n: usize) -> io::Result<Vec<T>> {
    let mut v: Vec<T> = huge_vec(n);
    v.resize(n, T::zeroed());
    from.read_exact(bytemuck::cast_slice_mut(&mut v))?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rays::{IndexedMesh, Ray};

    #[test]
    fn a_tree_read_back_answers_as_it_did() {
        // A bumpy grid: every query's answer, and every array, the same after the round trip.
        let n = 60usize;
        let positions: Vec<[f32; 3]> = (0..n * n).map(|i| [(i % n) as f32, (i / n) as f32, ((i * 7) % 5) as f32 * 0.1]).collect();
        let mut indices = Vec::new();
        for y in 0..n - 1 {
            for x in 0..n - 1 {
                let v = (y * n + x) as u32;
                indices.extend([v, v + 1, v + n as u32, v + 1, v + n as u32 + 1, v + n as u32]);
            }
        }
        let build = || Bvh::build_meshes(vec![IndexedMesh::new(&positions, &indices)], &[]).unwrap();
        let bvh = build();
        let rays: Vec<Ray> = (0..500)
            .map(|i| {
                let origin = glam::Vec3A::new((i % 50) as f32 * 1.1 + 0.3, (i / 50) as f32 * 5.7 + 0.2, 3.0);
                let dir = glam::Vec3A::new(0.1 * ((i % 7) as f32 - 3.0), 0.05 * ((i % 5) as f32 - 2.0), -1.0);
                Ray { origin, dir, tmin: 0.0, tmax: f32::INFINITY }
            })
            .collect();
        let before: Vec<_> = rays.iter().map(|r| bvh.intersect(r).map(|h| (h.t.to_bits(), h.tri))).collect();
        let (nodes, blocks, positions) = (bvh.nodes.clone(), bvh.blocks.clone(), bvh.positions.clone());
        let mut file = Vec::new();
        let written = bvh.write_out(&mut file).unwrap();
        let back = written.read_back(&mut file.as_slice()).unwrap();
        assert_eq!(bytemuck::cast_slice::<Node, u8>(&back.nodes), bytemuck::cast_slice::<Node, u8>(&nodes));
        assert_eq!(bytemuck::cast_slice::<TriBlock, u8>(&back.blocks), bytemuck::cast_slice::<TriBlock, u8>(&blocks));
        assert_eq!(back.positions, positions);
        let after: Vec<_> = rays.iter().map(|r| back.intersect(r).map(|h| (h.t.to_bits(), h.tri))).collect();
        assert!(before.iter().any(Option::is_some));
        assert_eq!(after, before);
        let written = build().write_out(&mut Vec::new()).unwrap();
        assert!(written.read_back(&mut &file[..file.len() - 1]).is_err(), "a short file is an error");
    }
}
