//! Level-of-detail selection over the manifest's tile quadtree: frustum culling, screen-space
//! error, and the prefetch candidates around the selected cut.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use glam::{Mat4, Vec3, Vec4};
use kiln_formats::sections::{Manifest, TileNode};

use super::{CameraView, TileId};

/// How far ahead (seconds) the velocity prefetch looks.
pub const LOOKAHEAD_SECONDS: f32 = 1.0;

/// The manifest's quadtree, indexed by key. Every non-root node's parent exists (checked on
/// construction), so walking up from any node reaches a root.
pub(crate) struct Quadtree {
    manifest: Manifest,
    index: BTreeMap<TileId, usize>,
    roots: Vec<TileId>,
}

impl Quadtree {
    /// Indexes `manifest`, or says what makes it unusable for streaming.
    pub(crate) fn new(manifest: Manifest) -> Result<Self, String> {
        let mut index = BTreeMap::new();
        for (i, n) in manifest.nodes.iter().enumerate() {
            let key = n.id();
            if index.insert(key, i).is_some() {
                return Err(format!("tile {key} appears twice in the quadtree"));
            }
            let finite = n.bounds_min.iter().chain(&n.bounds_max).all(|v| v.is_finite());
            if !finite || (0..3).any(|a| n.bounds_min[a] > n.bounds_max[a]) {
                return Err(format!("tile {key} has invalid bounds {:?}..{:?}", n.bounds_min, n.bounds_max));
            }
            if !(n.geometric_error.is_finite() && n.geometric_error >= 0.0) {
                return Err(format!("tile {key} has an invalid geometric error {}", n.geometric_error));
            }
        }
        let top = manifest.levels - 1;
        for &key in index.keys() {
            if key.level >= top {
                continue;
            }
            match key.parent() {
                Some(p) if index.contains_key(&p) => {}
                Some(p) => return Err(format!("tile {key} has no parent {p} in the quadtree")),
                None => return Err(format!("tile {key} has no parent in the quadtree")),
            }
        }
        let roots: Vec<TileId> = index.keys().copied().filter(|k| k.level == top).collect();
        if roots.is_empty() {
            return Err(format!("the quadtree has no tile at its root level {top}"));
        }
        Ok(Quadtree { manifest, index, roots })
    }

    pub(crate) fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub(crate) fn node(&self, key: TileId) -> Option<&TileNode> {
        self.index.get(&key).map(|&i| &self.manifest.nodes[i])
    }

    /// The nodes of the coarsest level, in key order.
    pub(crate) fn roots(&self) -> &[TileId] {
        &self.roots
    }

    /// The parent of `key` in the tree; `None` for a root.
    pub(crate) fn parent(&self, key: TileId) -> Option<TileId> {
        let p = key.parent()?;
        (p.level < self.manifest.levels && self.index.contains_key(&p)).then_some(p)
    }

    /// `key`, then its parent, up to its root.
    pub(crate) fn self_and_ancestors(&self, key: TileId) -> impl Iterator<Item = TileId> + '_ {
        std::iter::successors(Some(key), move |&k| self.parent(k))
    }

    /// The children of `key` that the bake holds (none at level 0, fewer than four at the world's edge).
    pub(crate) fn children(&self, key: TileId) -> impl Iterator<Item = TileId> + '_ {
        key.children().into_iter().flatten().filter(|k| self.index.contains_key(k))
    }

    /// The up to eight same-level neighbours of `key` that the bake holds (diagonals included: the
    /// planet text notes that without them a diagonal move finds nothing prefetched).
    pub(crate) fn neighbours(&self, key: TileId) -> impl Iterator<Item = TileId> + '_ {
        (-1i64..=1)
            .flat_map(|dy| (-1i64..=1).map(move |dx| (dx, dy)))
            .filter(|&d| d != (0, 0))
            .filter_map(move |(dx, dy)| {
                let x = u32::try_from(i64::from(key.x) + dx).ok()?;
                let y = u32::try_from(i64::from(key.y) + dy).ok()?;
                Some(TileId { level: key.level, x, y })
            })
            .filter(|k| self.index.contains_key(k))
    }
}

/// The six clip planes of a view-projection matrix (wgpu conventions: clip z in [0, w]), as
/// `(normal, d)` with the inside where `normal · p + d ≥ 0`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frustum {
    planes: [Vec4; 6],
}

impl Frustum {
    /// Gribb–Hartmann extraction: for clip = M · p, `-w ≤ x ≤ w` gives `row3 ± row0`, likewise y,
    /// and wgpu's `0 ≤ z ≤ w` gives `row2` and `row3 - row2`.
    pub(crate) fn from_view_proj(m: Mat4) -> Self {
        let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
        Frustum { planes: [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2] }
    }

    /// Whether the box may be visible: false only when it lies wholly outside one plane. (Boxes
    /// near a frustum corner can pass although outside; they are merely drawn for nothing.)
    pub(crate) fn intersects(&self, min: Vec3, max: Vec3) -> bool {
        self.planes.iter().all(|p| {
            let n = p.truncate();
            // The box corner farthest along the plane normal.
            let corner = Vec3::select(n.cmpge(Vec3::ZERO), max, min);
            n.dot(corner) + p.w >= 0.0
        })
    }
}

/// What LOD selection needs of a camera.
pub(crate) struct LodCamera {
    pub(crate) position: Vec3,
    frustum: Frustum,
    /// `viewport_height_px / (2 tan(fov_y / 2))`: pixels per world unit at distance 1.
    pixels_per_unit: f32,
}

impl LodCamera {
    pub(crate) fn new(view: &CameraView) -> Self {
        LodCamera {
            position: Vec3::from_array(view.position),
            frustum: Frustum::from_view_proj(Mat4::from_cols_array_2d(&view.view_proj)),
            pixels_per_unit: view.viewport_height_px / (2.0 * (view.fov_y_radians * 0.5).tan()),
        }
    }

    /// The same camera `seconds` later at its current velocity; `None` when it is not moving.
    pub(crate) fn predicted(view: &CameraView, seconds: f32) -> Option<Self> {
        let offset = Vec3::from_array(view.velocity) * seconds;
        if !offset.is_finite() || offset == Vec3::ZERO {
            return None;
        }
        let mut cam = LodCamera::new(view);
        cam.position += offset;
        // Moving the eye by `offset` with the same orientation moves the world by `-offset` before projection.
        let moved = Mat4::from_cols_array_2d(&view.view_proj) * Mat4::from_translation(-offset);
        cam.frustum = Frustum::from_view_proj(moved);
        Some(cam)
    }

    pub(crate) fn sees(&self, node: &TileNode) -> bool {
        self.frustum.intersects(Vec3::from_array(node.bounds_min), Vec3::from_array(node.bounds_max))
    }

    /// Distance from the eye to the node's box (0 inside it).
    pub(crate) fn distance(&self, node: &TileNode) -> f32 {
        let closest = self.position.clamp(Vec3::from_array(node.bounds_min), Vec3::from_array(node.bounds_max));
        closest.distance(self.position)
    }

    /// The node's geometric error projected to pixels: `error · viewport_h / (2 tan(fov/2) · distance)`.
    /// Infinite when the eye is inside the box (unless the error is 0): such a node always refines.
    pub(crate) fn screen_error(&self, node: &TileNode) -> f32 {
        let d = self.distance(node);
        if node.geometric_error == 0.0 {
            return 0.0;
        }
        if d <= 0.0 {
            return f32::INFINITY;
        }
        node.geometric_error * self.pixels_per_unit / d
    }
}

/// A refinement candidate, largest screen error first (ties: smaller key first).
struct Candidate {
    error: f32,
    key: TileId,
}
impl PartialEq for Candidate {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Candidate {
    fn cmp(&self, o: &Self) -> Ordering {
        self.error.total_cmp(&o.error).then_with(|| o.key.cmp(&self.key))
    }
}

/// Selects the LOD cut: from the roots, refine every visible node whose screen error exceeds
/// `max_error_px`, dropping children outside the frustum. Refinement goes largest error first and
/// skips a refinement whose children would take the estimated bytes past `budget_bytes`; the
/// estimate counts the roots (always kept) and every refined node besides the cut, since a parent
/// stays resident as the stand-in while its children load. With an ample budget the order does not
/// matter and the cut is the plain top-down one.
///
/// Returns the cut in load priority order: coarse levels first (they are the fallbacks), then
/// nearest first, then by key.
pub(crate) fn select(tree: &Quadtree, cam: &LodCamera, max_error_px: f32, budget_bytes: u64, estimate: impl Fn(TileId) -> u64) -> Vec<TileId> {
    let mut cut = BTreeSet::new();
    let mut bytes: u64 = tree.roots().iter().map(|&k| estimate(k)).sum();
    let mut heap = BinaryHeap::new();
    let consider = |key: TileId, cut: &mut BTreeSet<TileId>, heap: &mut BinaryHeap<Candidate>| {
        cut.insert(key);
        if let Some(node) = tree.node(key) {
            let error = cam.screen_error(node);
            if key.level > 0 && error > max_error_px {
                heap.push(Candidate { error, key });
            }
        }
    };
    for &root in tree.roots() {
        if tree.node(root).is_some_and(|n| cam.sees(n)) {
            consider(root, &mut cut, &mut heap);
        }
    }
    while let Some(Candidate { key, .. }) = heap.pop() {
        let children: Vec<TileId> = tree.children(key).filter(|&c| tree.node(c).is_some_and(|n| cam.sees(n))).collect();
        let added: u64 = children.iter().map(|&c| estimate(c)).sum();
        if bytes.saturating_add(added) > budget_bytes {
            continue;
        }
        bytes += added;
        cut.remove(&key);
        for c in children {
            consider(c, &mut cut, &mut heap);
        }
    }
    let mut cut: Vec<TileId> = cut.into_iter().collect();
    sort_by_priority(tree, cam, &mut cut);
    cut
}

/// Coarse first (the fallbacks), then nearest, then by key.
pub(crate) fn sort_by_priority(tree: &Quadtree, cam: &LodCamera, keys: &mut [TileId]) {
    // Cached keys: one node lookup and distance per tile instead of two per comparison.
    keys.sort_by_cached_key(|&k| (Reverse(k.level), distance_key(tree, cam, k), k));
}

/// Sorts front to back (nearest box first, ties by key): the order that lets the depth test reject most.
pub(crate) fn sort_front_to_back(tree: &Quadtree, cam: &LodCamera, keys: &mut [TileId]) {
    keys.sort_by_cached_key(|&k| (distance_key(tree, cam, k), k));
}

/// The eye's distance to a tile as an integer that orders like `f32::total_cmp` (unknown tiles last).
fn distance_key(tree: &Quadtree, cam: &LodCamera, key: TileId) -> i32 {
    let d = tree.node(key).map_or(f32::INFINITY, |n| cam.distance(n));
    let bits = d.to_bits() as i32;
    // Flipping the magnitude bits of negative values makes the two's-complement order the total order.
    bits ^ (((bits >> 31) as u32) >> 1) as i32
}

/// Prefetch candidates, in priority order, none of them in `cut`: after the planet text, the
/// children of the nearest node at the deepest selected level (needed as soon as the camera comes
/// closer) and its neighbours (needed when it moves sideways); then the cut the camera would need
/// `LOOKAHEAD_SECONDS` ahead along its velocity (`predicted`), which the text lists as its next step.
pub(crate) fn prefetch(tree: &Quadtree, cam: &LodCamera, cut: &[TileId], predicted: &[TileId]) -> Vec<TileId> {
    let Some(nearest) = cut.iter().copied().min_by_key(|&k| (k.level, distance_key(tree, cam, k), k)) else {
        return Vec::new();
    };
    let by_distance = |mut keys: Vec<TileId>| {
        sort_front_to_back(tree, cam, &mut keys);
        keys
    };
    let children = by_distance(tree.children(nearest).collect());
    let neighbours = by_distance(tree.neighbours(nearest).collect());
    let in_cut: BTreeSet<TileId> = cut.iter().copied().collect();
    let mut seen = BTreeSet::new();
    children.into_iter().chain(neighbours).chain(predicted.iter().copied()).filter(|k| !in_cut.contains(k) && seen.insert(*k)).collect()
}
