//! Collapsing the binary build tree into 8-wide nodes, numbered depth-first. The top levels are
//! counted and then filled in parallel: each child's subtree gets the slice of the node array its
//! depth-first numbering puts it in, so the nodes are the ones a serial walk would write, in the
//! same places, whatever the thread count.

use super::super::{leaf_word, Aabb, Node, HALVES, WIDTH};
use super::NodeRef;
use glam::Vec4;
use rayon::prelude::*;

/// Wide levels below the root whose children are counted and filled as parallel tasks: up to
/// 8³ subtrees, a few thousand triangles each in the default world.
const PARALLEL_LEVELS: u32 = 3;

fn empty_node() -> Node {
    Node { lo: [[Vec4::splat(f32::INFINITY); HALVES]; 3], hi: [[Vec4::splat(f32::NEG_INFINITY); HALVES]; 3], child: [0; WIDTH], unused: [0; 8] }
}

/// The children of `node`'s wide node: binary levels opened, largest area first (which keeps the
/// collapsed tree SAH-friendly), until there are `WIDTH` or only leaves are left.
fn collapse(node: NodeRef) -> Vec<(NodeRef, Aabb)> {
    let mut slots: Vec<(NodeRef, Aabb)> = node.inner().map_or_else(Vec::new, Vec::from);
    while slots.len() < WIDTH {
        let open =
            slots.iter().enumerate().filter(|(_, (n, _))| n.leaf().is_none()).fold(None, |best: Option<(usize, f32)>, (i, (_, b))| match best {
                Some((_, area)) if area >= b.half_area() => best,
                _ => Some((i, b.half_area())),
            });
        let Some((i, _)) = open else { break };
        if let Some(kids) = slots[i].0.inner() {
            slots.splice(i..=i, kids);
        }
    }
    slots
}

/// How many wide nodes `node`'s subtree becomes: the counts of the top levels, kept for the fill.
struct Count {
    nodes: usize,
    kids: Vec<Count>,
}

fn count(node: NodeRef, parallel_levels: u32) -> Count {
    match node.leaf() {
        // Only an empty mesh yields an empty leaf; it becomes one node of inverted boxes.
        Some((_, 0)) => return Count { nodes: 1, kids: Vec::new() },
        Some(_) => return Count { nodes: 0, kids: Vec::new() },
        None => {}
    }
    let slots = collapse(node);
    if parallel_levels == 0 {
        return Count { nodes: 1 + slots.iter().map(|(k, _)| count(*k, 0).nodes).sum::<usize>(), kids: Vec::new() };
    }
    let kids: Vec<Count> = slots.par_iter().map(|(k, _)| count(*k, parallel_levels - 1)).collect();
    Count { nodes: 1 + kids.iter().map(|c| c.nodes).sum::<usize>(), kids }
}

/// The wide nodes of the tree at `root`, depth-first, and the root's child word.
pub(super) fn flatten(root: NodeRef, first_block: &[u32]) -> (Vec<Node>, u32) {
    let counted = count(root, PARALLEL_LEVELS);
    let mut nodes = crate::mem::huge_vec(counted.nodes);
    nodes.resize(counted.nodes, empty_node());
    let word = fill(root, &counted, first_block, &mut nodes, 0);
    (nodes, word)
}

/// Writes `node`'s wide nodes into `out` (exactly its count long), numbered from `base`, and
/// returns its child word: a node index, or a leaf's word.
fn fill(node: NodeRef, counted: &Count, first_block: &[u32], out: &mut [Node], base: u32) -> u32 {
    if counted.kids.is_empty() {
        let mut next = 0;
        return fill_serial(node, first_block, out, base, &mut next);
    }
    let slots = collapse(node);
    let (head, mut rest) = out.split_first_mut().expect("an inner node counts itself");
    let mut parts = Vec::with_capacity(slots.len());
    let mut at = base + 1;
    for c in &counted.kids {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(c.nodes);
        parts.push((part, at));
        at += c.nodes as u32;
        rest = tail;
    }
    let words: Vec<u32> =
        slots.par_iter().zip(&counted.kids).zip(parts).map(|(((kid, _), c), (part, at))| fill(*kid, c, first_block, part, at)).collect();
    *head = boxes_of(&slots);
    head.child[..words.len()].copy_from_slice(&words);
    base
}

/// [`fill`] on one thread: `next` is the first free slot of `out`.
fn fill_serial(node: NodeRef, first_block: &[u32], out: &mut [Node], base: u32, next: &mut usize) -> u32 {
    match node.leaf() {
        Some((_, 0)) => {
            out[*next] = empty_node();
            *next += 1;
            return base + (*next - 1) as u32;
        }
        Some((start, count)) => return leaf_word(first_block[start as usize], count),
        None => {}
    }
    let slots = collapse(node);
    let index = *next;
    *next += 1;
    let mut n = boxes_of(&slots);
    for (c, (kid, _)) in slots.iter().enumerate() {
        n.child[c] = fill_serial(*kid, first_block, out, base, next);
    }
    out[index] = n;
    base + index as u32
}

/// A wide node with `slots`' boxes; its child words are the caller's to write.
fn boxes_of(slots: &[(NodeRef, Aabb)]) -> Node {
    let mut n = empty_node();
    for (c, (_, b)) in slots.iter().enumerate() {
        for a in 0..3 {
            n.lo[a][c / 4][c % 4] = b.lo[a];
            n.hi[a][c / 4][c % 4] = b.hi[a];
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::super::{build_runs, Prim};
    use super::*;
    use crate::rays::test_rng::Rng;

    #[test]
    fn parallel_fill_writes_the_nodes_of_one_depth_first_walk() {
        let mut rng = Rng::new(11);
        // Clusters of small boxes of uneven sizes, in runs, so the top levels are lopsided.
        let prims: Vec<Prim> = (0..40_000u32)
            .map(|id| {
                let c = [rng.next_f32() * 100.0, rng.next_f32() * 100.0, rng.next_f32() * 10.0 * (id % 7) as f32];
                let r = 0.01 + rng.next_f32() * rng.next_f32();
                Prim { lo: c.map(|x| x - r), id, hi: c.map(|x| x + r) }
            })
            .collect();
        let runs = [15_000, 20_000, 5_000];
        let (tree, _) = build_runs(&|r| prims[r].to_vec(), &runs, &mut vec![0; prims.len()]);
        let root = NodeRef::Boxed(&tree);
        let first_block: Vec<u32> = (0..=40_000u32).map(|t| t / 4).collect();
        let (nodes, word) = flatten(root, &first_block);
        let mut serial = vec![empty_node(); count(root, 0).nodes];
        let mut next = 0;
        let serial_word = fill_serial(root, &first_block, &mut serial, 0, &mut next);
        assert_eq!(next, serial.len(), "the count and the walk agree");
        assert_eq!((nodes.len(), word), (serial.len(), serial_word));
        assert!(nodes.len() > 8 * 8 * 8, "{} nodes: the parallel levels are exercised", nodes.len());
        for (i, (a, b)) in nodes.iter().zip(&serial).enumerate() {
            assert!(a.lo == b.lo && a.hi == b.hi && a.child == b.child, "node {i} differs");
        }
    }
}
