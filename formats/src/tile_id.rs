//! The address of one tile of the LOD quadtree, shared by the baker, the viewer and the tests.

use std::fmt;

/// One node of the tile quadtree: tile (`x`, `y`) of LOD `level`.
///
/// Level 0 is the finest; node (x, y) of level k covers the level-(k-1) nodes (2x + dx, 2y + dy).
/// Ids order by (level, y, x) (the field order): the order in which tiles are baked, listed in the
/// manifest and written to a bake's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileId {
    /// LOD level: 0 is the finest.
    pub level: u32,
    /// Row of the tile within its level.
    pub y: u32,
    /// Column of the tile within its level.
    pub x: u32,
}

impl TileId {
    /// Tile (`x`, `y`) of `level`.
    pub const fn new(level: u32, x: u32, y: u32) -> TileId {
        TileId { level, y, x }
    }

    /// The node one level coarser that covers this one; `None` only where the level cannot grow
    /// (a caller that knows the quadtree's height also stops at its root).
    pub fn parent(self) -> Option<TileId> {
        Some(TileId { level: self.level.checked_add(1)?, x: self.x / 2, y: self.y / 2 })
    }

    /// The four nodes one level finer that this one covers, in (level, y, x) order; `None` at level 0
    /// (and for coordinates whose children would not fit in a `u32`).
    pub fn children(self) -> Option<[TileId; 4]> {
        let level = self.level.checked_sub(1)?;
        let (x, y) = (self.x.checked_mul(2)?.checked_add(1)?, self.y.checked_mul(2)?.checked_add(1)?);
        Some([TileId::new(level, x - 1, y - 1), TileId::new(level, x, y - 1), TileId::new(level, x - 1, y), TileId::new(level, x, y)])
    }

    /// Tiles of `level` along X and Y when level 0 has `level0` of them: halved per level, never
    /// below one (a level of 32 or more is a single tile, not a panic).
    pub fn tiles_at(level0: [u32; 2], level: u32) -> [u32; 2] {
        level0.map(|t| t.checked_shr(level).unwrap_or(0).max(1))
    }

    /// Whether this tile exists in a quadtree of `levels` levels over `level0` level-0 tiles.
    pub fn is_within(self, level0: [u32; 2], levels: u32) -> bool {
        let [nx, ny] = TileId::tiles_at(level0, self.level);
        self.level < levels && self.x < nx && self.y < ny
    }

    /// Every tile of a quadtree of `levels` levels over `level0` level-0 tiles, in (level, y, x) order.
    pub fn all(level0: [u32; 2], levels: u32) -> impl Iterator<Item = TileId> {
        (0..levels).flat_map(move |level| {
            let [nx, ny] = TileId::tiles_at(level0, level);
            (0..ny).flat_map(move |y| (0..nx).map(move |x| TileId::new(level, x, y)))
        })
    }

    /// Where the tile's pack lives inside a bake directory (`/` separators):
    /// `tiles/L{level}_{x}_{y}.kpack`.
    pub fn pack_path(self) -> String {
        format!("tiles/L{}_{}_{}.kpack", self.level, self.x, self.y)
    }

    /// How messages name the tile: `L0 (3,4)` (the same text as its `Display`).
    pub fn label(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for TileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{} ({},{})", self.level, self.x, self.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_and_children_invert_each_other() {
        let t = TileId::new(2, 3, 5);
        let children = t.children().unwrap();
        assert_eq!(children, [TileId::new(1, 6, 10), TileId::new(1, 7, 10), TileId::new(1, 6, 11), TileId::new(1, 7, 11)]);
        assert!(children.windows(2).all(|w| w[0] < w[1]), "children come in (level, y, x) order");
        for c in children {
            assert_eq!(c.parent(), Some(t));
        }
        assert_eq!(TileId::new(0, 1, 1).children(), None);
        assert_eq!(TileId::new(u32::MAX, 0, 0).parent(), None);
        assert_eq!(TileId::new(3, u32::MAX, 0).children(), None);
    }

    #[test]
    fn order_is_level_then_row_then_column() {
        let mut ids = vec![TileId::new(1, 0, 0), TileId::new(0, 0, 1), TileId::new(0, 1, 0), TileId::new(0, 0, 0)];
        ids.sort();
        assert_eq!(ids, [TileId::new(0, 0, 0), TileId::new(0, 1, 0), TileId::new(0, 0, 1), TileId::new(1, 0, 0)]);
    }

    #[test]
    fn tiles_per_level_halve_down_to_one() {
        assert_eq!(TileId::tiles_at([8, 2], 0), [8, 2]);
        assert_eq!(TileId::tiles_at([8, 2], 2), [2, 1]);
        assert_eq!(TileId::tiles_at([8, 2], 40), [1, 1]);
        let all: Vec<TileId> = TileId::all([4, 2], 3).collect();
        assert_eq!(all.len(), 8 + 2 + 1);
        assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted");
        assert!(all.iter().all(|t| t.is_within([4, 2], 3)));
        assert!(!TileId::new(0, 4, 0).is_within([4, 2], 3));
        assert!(!TileId::new(3, 0, 0).is_within([4, 2], 3));
    }

    #[test]
    fn path_and_label() {
        let t = TileId::new(0, 3, 4);
        assert_eq!(t.pack_path(), "tiles/L0_3_4.kpack");
        assert_eq!(t.label(), "L0 (3,4)");
        assert_eq!(format!("{t}"), "L0 (3,4)");
    }
}
