//! What one process does of a bake: all of it, one shard of it, or the assembly of the output
//! from what the shards left in a shared cache.
//!
//! A shard computes a deterministic share of every stage into the stage cache and writes no
//! output: it owns every `count`-th tile (by index in the bake's tile list) and the `index`-th part
//! of each light-transport phase. Items another shard needs first and owns later (level-0 geometry
//! that light transport reads, a stored world product) are claimed in the cache before they are
//! computed: a shard takes an item nobody holds, waits for one somebody holds and then reads it,
//! and computes it after all if its holder died (the kernel releases a dead process's claims).
//! There is no deadlock: a claim on a tile item is held only while computing it from inputs already
//! resolved, so its holder waits for nobody; a claim on a stored world product may be held while
//! its holder waits for what that product reads, and products read only products before them (the
//! registry is a DAG), so no chain of waits comes back to it.
//!
//! Every item is a pure function of its inputs, so which shard computes it, and how often, never
//! changes the bytes: the output assembled from any number of shards equals a one-process bake.

/// A bake's share of the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BakeRole {
    /// Everything, and the output (the cache, if any, only saves work).
    Whole,
    /// Shard `index` of `count` (`index < count`): its share into the cache, no output.
    Shard {
        /// This shard, from 0.
        index: u32,
        /// How many shards share the bake.
        count: u32,
    },
    /// The output from the cache alone: packaging what the shards computed, recomputing nothing;
    /// an item missing from the cache is an error naming it.
    Assemble,
}

impl BakeRole {
    /// Checks `index < count` and `count >= 1`.
    pub fn shard(index: u32, count: u32) -> Result<BakeRole, String> {
        if count == 0 || index >= count {
            return Err(format!("shard {index}/{count}: the index must be below the count, from 0"));
        }
        Ok(BakeRole::Shard { index, count })
    }

    /// Whether this process computes items for others (claims them first).
    pub fn is_shard(self) -> bool {
        matches!(self, BakeRole::Shard { .. })
    }

    /// Whether tile `t` is this process's to finish (a shard's own tiles; every tile otherwise).
    pub fn owns(self, t: usize) -> bool {
        match self {
            BakeRole::Shard { index, count } => t % count as usize == index as usize,
            _ => true,
        }
    }

    /// `items` put in the order this process takes them: a shard starts at its own share
    /// (`index / count` of the way along) so that shards starting together take different items.
    pub fn rotate<T: Copy>(self, items: &[T]) -> Vec<T> {
        let start = match self {
            BakeRole::Shard { index, count } => items.len() * index as usize / count as usize,
            _ => 0,
        };
        items[start..].iter().chain(&items[..start]).copied().collect()
    }

    /// The failpoint name of `point` in this role (`shard1:tile`), so a test can kill one shard.
    pub fn failpoint(self, point: &str) -> Option<String> {
        match self {
            BakeRole::Shard { index, .. } => Some(format!("shard{index}:{point}")),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BakeRole;

    #[test]
    fn shards_own_every_count_th_tile_and_start_at_their_share() {
        let r = BakeRole::shard(1, 3).unwrap();
        assert_eq!((0..9).filter(|&t| r.owns(t)).collect::<Vec<_>>(), vec![1, 4, 7]);
        assert_eq!(r.rotate(&[0, 1, 2, 3, 4, 5]), vec![2, 3, 4, 5, 0, 1]);
        assert_eq!(BakeRole::Whole.rotate(&[0, 1, 2]), vec![0, 1, 2]);
        assert!(BakeRole::shard(3, 3).is_err() && BakeRole::shard(0, 0).is_err());
        let owners: Vec<usize> = (0..7).map(|t| (0..3).filter(|&k| BakeRole::shard(k, 3).unwrap().owns(t)).count()).collect();
        assert_eq!(owners, vec![1; 7], "every tile has exactly one owner");
    }
}
