//! The binary tree the SAH build makes before it is collapsed into 8-wide nodes. Its top levels,
//! built in parallel, are boxed nodes; every subtree built on one thread is stored compactly in
//! an array of its own as soon as it is made ([`BuildNode::compact`]). A boxed pair of nodes took
//! 176 bytes of heap with the allocator's header, where an array node takes 64; for the default
//! world's two million-odd nodes that is where the build peaked. [`NodeRef`] reads both forms alike.

use glam::Vec3A;

use super::super::Aabb;

pub(super) enum BuildNode {
    Leaf {
        start: u32,
        count: u32,
    },
    Inner {
        boxes: [Aabb; 2],
        kids: Box<[BuildNode; 2]>,
    },
    /// A subtree in an array (see [`CompactTree`]); never a lone leaf.
    Compact(CompactTree),
}

/// An inner node of a [`CompactTree`]: its children's boxes and what they are.
#[derive(Clone, Copy)]
struct CompactNode {
    lo: [[f32; 3]; 2],
    hi: [[f32; 3]; 2],
    kids: [Kid; 2],
}

/// A child in a [`CompactTree`]: a leaf's `(start, count)`, or `(index, INNER)` for an inner node.
#[derive(Clone, Copy)]
struct Kid(u32, u32);

const INNER: u32 = u32::MAX;

/// A subtree whose inner nodes lie in one array, its root first.
pub(super) struct CompactTree {
    nodes: Vec<CompactNode>,
}

impl BuildNode {
    /// The same subtree, of boxed nodes only (as a serial build makes it), with its inner nodes in
    /// one array (a leaf stays as it is).
    pub(super) fn compact(self) -> BuildNode {
        if !matches!(self, BuildNode::Inner { .. }) {
            return self;
        }
        let mut nodes = Vec::with_capacity(inner_count(&self));
        push_compact(&self, &mut nodes);
        drop(self);
        BuildNode::Compact(CompactTree { nodes })
    }
}

/// Inner nodes of a subtree of boxed nodes (a serial build makes no compact subtree inside one).
fn inner_count(node: &BuildNode) -> usize {
    match node {
        BuildNode::Inner { kids, .. } => 1 + inner_count(&kids[0]) + inner_count(&kids[1]),
        _ => 0,
    }
}

/// Appends `node` (an inner node of boxed nodes) and its descendants depth-first; returns its index.
fn push_compact(node: &BuildNode, nodes: &mut Vec<CompactNode>) -> u32 {
    let BuildNode::Inner { boxes, kids } = node else { unreachable!("only inner nodes are pushed") };
    let index = nodes.len();
    nodes.push(CompactNode { lo: boxes.map(|b| b.lo.into()), hi: boxes.map(|b| b.hi.into()), kids: [Kid(0, 0); 2] });
    for (k, kid) in kids.iter().enumerate() {
        let word = match kid {
            BuildNode::Leaf { start, count } => Kid(*start, *count),
            _ => Kid(push_compact(kid, nodes), INNER),
        };
        nodes[index].kids[k] = word;
    }
    index as u32
}

/// A node of the build tree, boxed or in a compact subtree.
#[derive(Clone, Copy)]
pub(super) enum NodeRef<'a> {
    Boxed(&'a BuildNode),
    Compact(&'a CompactTree, u32),
    Leaf(u32, u32),
}

impl<'a> NodeRef<'a> {
    /// `(start, count)` of a leaf.
    pub(super) fn leaf(self) -> Option<(u32, u32)> {
        match self {
            NodeRef::Boxed(BuildNode::Leaf { start, count }) => Some((*start, *count)),
            NodeRef::Leaf(start, count) => Some((start, count)),
            _ => None,
        }
    }

    /// An inner node's two children with their boxes.
    pub(super) fn inner(self) -> Option<[(NodeRef<'a>, Aabb); 2]> {
        match self {
            NodeRef::Boxed(BuildNode::Leaf { .. }) | NodeRef::Leaf(..) => None,
            NodeRef::Boxed(BuildNode::Inner { boxes, kids }) => Some([(NodeRef::Boxed(&kids[0]), boxes[0]), (NodeRef::Boxed(&kids[1]), boxes[1])]),
            NodeRef::Boxed(BuildNode::Compact(t)) => NodeRef::Compact(t, 0).inner(),
            NodeRef::Compact(t, i) => {
                let n = &t.nodes[i as usize];
                Some([0, 1].map(|k| {
                    let kid = match n.kids[k] {
                        Kid(index, INNER) => NodeRef::Compact(t, index),
                        Kid(start, count) => NodeRef::Leaf(start, count),
                    };
                    (kid, Aabb { lo: Vec3A::from(n.lo[k]), hi: Vec3A::from(n.hi[k]) })
                }))
            }
        }
    }

    /// Every non-empty leaf's `(start, count)`, depth-first.
    pub(super) fn collect_leaves(self, out: &mut Vec<(u32, u32)>) {
        match (self.leaf(), self.inner()) {
            (Some((_, 0)), _) => {}
            (Some(leaf), _) => out.push(leaf),
            (None, Some(kids)) => kids.iter().for_each(|(k, _)| k.collect_leaves(out)),
            (None, None) => {}
        }
    }
}
