//! The tree as bytes ([`Bvh::to_bytes`]), for processes that share one build through the stage
//! cache, and read back ([`Bvh::from_bytes`]) only when every walk over it stays in bounds.

use glam::Vec4;

use super::triangle::{TriBlock, BLOCK};
use super::{leaf_range, Bvh, Node, HALVES, LEAF_FLAG, STACK, WIDTH};
use crate::le::{LeReader, LeWriter};
use crate::mem::huge_vec;

/// Numbers per node: the low and high box corners of its children.
const NODE_FLOATS: usize = 2 * 3 * HALVES * 4;
/// Deepest node a walk's stack holds (see [`STACK`]: up to 7 pushes a level).
const MAX_DEPTH: usize = (STACK - 1) / 7;

impl Bvh {
    /// The tree's little-endian form: every node, leaf block and vertex position, bit for bit.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = LeWriter::with_capacity(self.byte_len());
        self.write(&mut w);
        w.finish()
    }

    /// Bytes of [`Bvh::to_bytes`]' form, about.
    pub(crate) fn byte_len(&self) -> usize {
        64 + self.nodes.len() * 4 * (NODE_FLOATS + WIDTH) + self.blocks.len() * 64 + self.positions.len() * 16
    }

    /// Writes [`Bvh::to_bytes`]' form into `w`.
    pub(crate) fn write(&self, w: &mut LeWriter) {
        w.u64(self.tri_count as u64);
        w.u64(self.root as u64);
        w.f32s(&[self.lo, self.hi].concat());
        let nodes = self.nodes.len();
        w.pod_runs(nodes * NODE_FLOATS, self.nodes.iter().flat_map(|n| [&n.lo, &n.hi]));
        w.pod_runs(nodes * WIDTH, self.nodes.iter().map(|n| &n.child));
        w.pod(&self.blocks);
        w.pod(&self.positions);
    }

    /// Reads [`Bvh::to_bytes`]' form, checking what a walk relies on: every child a later node
    /// or a leaf inside the blocks, no deeper than a walk's stack, every corner a stored vertex,
    /// every triangle id below the triangle count.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bvh, String> {
        let mut r = LeReader::new(bytes);
        let bvh = Bvh::read(&mut r)?;
        r.end()?;
        Ok(bvh)
    }

    /// Reads what [`Bvh::write`] wrote, checked as [`Bvh::from_bytes`] checks it.
    pub(crate) fn read(r: &mut LeReader) -> Result<Bvh, String> {
        let tri_count = usize::try_from(r.u64()?).map_err(|e| e.to_string())?;
        let root = u32::try_from(r.u64()?).map_err(|e| format!("root: {e}"))?;
        let bounds = r.f32s()?;
        let [l0, l1, l2, h0, h1, h2] = bounds[..].try_into().map_err(|_| format!("{} bound numbers, not 6", bounds.len()))?;
        let (floats, children) = (r.words()?, r.words()?);
        if floats.len() != children.len() / WIDTH * NODE_FLOATS || !children.len().is_multiple_of(WIDTH) {
            return Err(format!("{} box numbers for {} child words", floats.len(), children.len()));
        }
        // Into huge pages, as the build puts them: walks read these arrays at random.
        let mut nodes: Vec<Node> = huge_vec(children.len() / WIDTH);
        nodes.extend((0..children.len() / WIDTH).map(|i| Node {
            lo: floats.pod_at(i * NODE_FLOATS),
            hi: floats.pod_at(i * NODE_FLOATS + NODE_FLOATS / 2),
            child: children.pod_at(i * WIDTH),
        }));
        let blocks: Vec<TriBlock> = r.pod_into(huge_vec).map_err(|e| format!("leaf blocks: {e}"))?;
        let positions: Vec<Vec4> = r.pod_into(huge_vec).map_err(|e| format!("vertex positions: {e}"))?;
        let bvh = Bvh { nodes, blocks, positions, tri_count, root, lo: [l0, l1, l2], hi: [h0, h1, h2] };
        bvh.check()?;
        Ok(bvh)
    }

    /// Vertices the tree stores (those its triangles use).
    pub(crate) fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// See [`Bvh::from_bytes`].
    fn check(&self) -> Result<(), String> {
        if self.tri_count >= 1 << 28 {
            return Err(format!("{} triangles", self.tri_count));
        }
        let leaf = |word: u32| -> Result<(), String> {
            let (first, count) = leaf_range(word);
            match first.checked_add(count.div_ceil(BLOCK)) {
                Some(end) if end <= self.blocks.len() => Ok(()),
                _ => Err(format!("a leaf at block {first} of {}", self.blocks.len())),
            }
        };
        // Nodes come in walk order, each after its parent: a node's depth is final when it is
        // reached, and no child word can lead back up.
        let mut depth = vec![0usize; self.nodes.len()];
        if self.tri_count > 0 {
            match self.root & LEAF_FLAG != 0 {
                true => leaf(self.root)?,
                false if (self.root as usize) < self.nodes.len() => depth[self.root as usize] = 1,
                false => return Err(format!("root node {} of {}", self.root, self.nodes.len())),
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let reached = depth[i];
            for (c, &word) in n.child.iter().enumerate() {
                let (h, lane) = (c / 4, c % 4);
                let lo = [0, 1, 2].map(|a| n.lo[a][h][lane]);
                let hi = [0, 1, 2].map(|a| n.hi[a][h][lane]);
                if lo.iter().chain(&hi).any(|v| v.is_nan()) {
                    return Err(format!("node {i} has a box with no number"));
                }
                // A slot no ray enters (its box inside out) is never followed.
                if (0..3).any(|a| lo[a] > hi[a]) {
                    continue;
                }
                if word & LEAF_FLAG != 0 {
                    leaf(word)?;
                } else if (word as usize) <= i || word as usize >= self.nodes.len() {
                    return Err(format!("node {i} has child {word} of {}", self.nodes.len()));
                } else if reached > 0 {
                    if reached + 1 > MAX_DEPTH {
                        return Err(format!("node {word} is deeper than {MAX_DEPTH} levels"));
                    }
                    depth[word as usize] = depth[word as usize].max(reached + 1);
                }
            }
        }
        let vertices = self.positions.len() as u64;
        for (k, b) in self.blocks.iter().enumerate() {
            if b.corner.iter().flatten().any(|&v| v as u64 >= vertices) {
                return Err(format!("block {k} names a vertex past {vertices}"));
            }
            if b.ids.iter().any(|&t| t != u32::MAX && t as usize >= self.tri_count) {
                return Err(format!("block {k} names a triangle past {}", self.tri_count));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_rng::Rng;
    use super::super::{Cull, Ray};
    use super::*;
    use glam::Vec3A;

    fn soup(n: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut rng = Rng::new(5);
        let mut positions = Vec::new();
        for _ in 0..n {
            let c = [rng.next_f32() * 50.0, rng.next_f32() * 50.0, rng.next_f32() * 5.0];
            for _ in 0..3 {
                positions.push([c[0] + rng.next_f32(), c[1] + rng.next_f32(), c[2] + rng.next_f32()]);
            }
        }
        let indices = (0..3 * n as u32).collect();
        (positions, indices)
    }

    #[test]
    fn a_tree_read_back_is_the_same_tree_and_answers_the_same() {
        for n in [0, 1, 9, 5000] {
            let (positions, indices) = soup(n);
            let bvh = Bvh::build(&positions, &indices).unwrap();
            let bytes = bvh.to_bytes();
            let back = Bvh::from_bytes(&bytes).unwrap();
            assert_eq!(back.to_bytes(), bytes, "{n} triangles");
            let mut rng = Rng::new(6);
            for _ in 0..500 {
                let origin = Vec3A::new(rng.next_f32() * 50.0, rng.next_f32() * 50.0, 20.0);
                let dir = Vec3A::new(rng.next_f32() - 0.5, rng.next_f32() - 0.5, -1.0).normalize();
                let ray = Ray { origin, dir, tmin: 0.0, tmax: f32::INFINITY };
                let (a, b) = (bvh.intersect(&ray), back.intersect(&ray));
                assert_eq!(a.map(|h| (h.tri, h.t.to_bits())), b.map(|h| (h.tri, h.t.to_bits())));
                assert_eq!(bvh.occluded(&ray, Cull::None), back.occluded(&ray, Cull::None));
            }
        }
    }

    #[test]
    fn a_tree_whose_walks_would_leave_it_is_refused() {
        let (positions, indices) = soup(3000);
        let bvh = Bvh::build(&positions, &indices).unwrap();
        assert!(bvh.nodes.len() > 2, "the test needs inner nodes");
        let broken = |f: &dyn Fn(&mut Bvh)| {
            let mut b = Bvh::from_bytes(&bvh.to_bytes()).unwrap();
            f(&mut b);
            Bvh::from_bytes(&b.to_bytes()).unwrap_err()
        };
        assert!(broken(&|b| b.nodes[1].child[0] = 0).contains("child"), "a child that leads back up");
        assert!(broken(&|b| b.nodes[0].child[0] = 1 << 30).contains("child"), "a child past the nodes");
        assert!(broken(&|b| b.nodes[1].child[0] = LEAF_FLAG | (1 << 28)).contains("leaf"), "a leaf past the blocks");
        assert!(broken(&|b| b.blocks[0].corner[1][0] = u32::MAX - 1).contains("vertex"));
        assert!(broken(&|b| b.blocks[0].ids[0] = 3000).contains("triangle"));
        assert!(broken(&|b| b.root = 1 << 30).contains("root"));
        assert!(broken(&|b| b.nodes[0].lo[0][0] = Vec4::splat(f32::NAN)).contains("number"));
        let bytes = bvh.to_bytes();
        assert!(Bvh::from_bytes(&bytes[..bytes.len() - 3]).is_err(), "a truncated tree");
    }

    #[test]
    fn a_chain_deeper_than_a_walk_can_follow_is_refused() {
        let (positions, indices) = soup(1);
        let mut bvh = Bvh::build(&positions, &indices).unwrap();
        let leaf = if bvh.root & LEAF_FLAG != 0 { bvh.root } else { bvh.nodes[bvh.root as usize].child[0] };
        let open = |child: u32| {
            let mut n = Node { lo: [[Vec4::splat(f32::INFINITY); HALVES]; 3], hi: [[Vec4::splat(f32::NEG_INFINITY); HALVES]; 3], child: [0; WIDTH] };
            for a in 0..3 {
                n.lo[a][0][0] = -1e9;
                n.hi[a][0][0] = 1e9;
            }
            n.child[0] = child;
            n
        };
        let chain = |levels: usize| -> Vec<Node> { (0..levels).map(|i| open(if i + 1 == levels { leaf } else { i as u32 + 1 })).collect() };
        bvh.root = 0;
        bvh.nodes = chain(MAX_DEPTH);
        Bvh::from_bytes(&bvh.to_bytes()).expect("as deep as a walk follows");
        bvh.nodes = chain(MAX_DEPTH + 1);
        assert!(Bvh::from_bytes(&bvh.to_bytes()).unwrap_err().contains("deeper"));
    }
}
