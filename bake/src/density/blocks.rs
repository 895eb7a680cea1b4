//! Connectivity by blocks: floater removal and sealed-air filling with each block of the volume
//! labelled on its own, then joined by a union-find over the blocks' components across block
//! faces. A block's labelling reads only that block (the work a shard or a bounded-memory pass
//! can do alone, in parallel); only its components' summaries (ground or open boundary touched,
//! samples) and its border runs take part in the join. The result is the global flood's
//! (`floaters.rs`) by construction: two samples are connected through solid (or air) exactly when
//! a chain of within-block connections and face crossings joins their runs. The tests compare the
//! two on worlds built to defeat a local view (a spiral, a chain through many blocks, random
//! fields).

use rayon::prelude::*;

use super::DensityVolume;

/// Runs of one block: rows `ly + sy * lz` of the block, each run `[x0, x1)` in global X.
struct Block {
    origin: [usize; 3],
    size: [usize; 3],
    row_start: Vec<u32>,
    spans: Vec<[u32; 2]>,
    /// Component of each run, numbered from 0 within the block.
    label: Vec<u32>,
    /// Per component: touches the seed set, and its sample count.
    components: Vec<(bool, u64)>,
}

/// A union-find with path halving; the smaller index becomes the root, so roots do not depend
/// on the order of unions.
struct UnionFind(Vec<u32>);

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind((0..n as u32).collect())
    }
    fn find(&mut self, mut i: u32) -> u32 {
        while self.0[i as usize] != i {
            let up = self.0[self.0[i as usize] as usize];
            self.0[i as usize] = up;
            i = up;
        }
        i
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (lo, hi) = (a.min(b), a.max(b));
            self.0[hi as usize] = lo;
        }
    }
}

impl Block {
    fn row(&self, r: usize) -> &[[u32; 2]] {
        &self.spans[self.row_start[r] as usize..self.row_start[r + 1] as usize]
    }
    fn first_run(&self, r: usize) -> usize {
        self.row_start[r] as usize
    }

    /// Labels the runs of matching samples in the block at `origin` of `size`; `is_seed(y, z, span)`.
    fn label(
        vol: &DensityVolume,
        origin: [usize; 3],
        size: [usize; 3],
        matches: &(impl Fn(f32) -> bool + Sync),
        is_seed: &(impl Fn(usize, usize, [u32; 2]) -> bool + Sync),
    ) -> Block {
        let [sx, sy, sz] = size;
        let mut row_start = Vec::with_capacity(sy * sz + 1);
        let mut spans = Vec::new();
        row_start.push(0);
        for lz in 0..sz {
            for ly in 0..sy {
                let base = vol.index(origin[0], origin[1] + ly, origin[2] + lz);
                let row = &vol.data[base..base + sx];
                let mut x = 0;
                while x < sx {
                    if matches(row[x]) {
                        let start = x;
                        while x < sx && matches(row[x]) {
                            x += 1;
                        }
                        spans.push([(origin[0] + start) as u32, (origin[0] + x) as u32]);
                    } else {
                        x += 1;
                    }
                }
                row_start.push(spans.len() as u32);
            }
        }
        let mut block = Block { origin, size, row_start, spans, label: Vec::new(), components: Vec::new() };
        let mut uf = UnionFind::new(block.spans.len());
        for lz in 0..sz {
            for ly in 0..sy {
                let r = ly + sy * lz;
                // Joins with the rows before (y - 1, z - 1): every adjacency is seen once.
                for q in [(ly > 0).then(|| r - 1), (lz > 0).then(|| r - sy)].into_iter().flatten() {
                    overlaps(block.row(r), block.row(q), |i, j| uf.union((block.first_run(r) + i) as u32, (block.first_run(q) + j) as u32));
                }
            }
        }
        let mut number = vec![u32::MAX; block.spans.len()];
        block.label = (0..block.spans.len() as u32)
            .map(|i| {
                let root = uf.find(i) as usize;
                if number[root] == u32::MAX {
                    number[root] = block.components.len() as u32;
                    block.components.push((false, 0));
                }
                number[root]
            })
            .collect();
        for lz in 0..sz {
            for ly in 0..sy {
                let r = ly + sy * lz;
                for i in block.row_start[r] as usize..block.row_start[r + 1] as usize {
                    let span = block.spans[i];
                    let c = &mut block.components[block.label[i] as usize];
                    c.0 |= is_seed(origin[1] + ly, origin[2] + lz, span);
                    c.1 += (span[1] - span[0]) as u64;
                }
            }
        }
        block
    }
}

/// Calls `f(i, j)` for every pair of overlapping spans of two sorted, disjoint rows.
fn overlaps(a: &[[u32; 2]], b: &[[u32; 2]], mut f: impl FnMut(usize, usize)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i][0] < b[j][1] && b[j][0] < a[i][1] {
            f(i, j);
        }
        if a[i][1] < b[j][1] {
            i += 1;
        } else {
            j += 1;
        }
    }
}

/// One of the two connectivity clean-ups, with what it reads besides the volume.
#[derive(Clone, Copy, Debug)]
pub enum Flood<'a> {
    /// Solid samples not joined to the ground become air.
    Floaters {
        /// Per column (`x + nx·y`), the layers below which solid is ground; `None`: the bottom layer.
        ground_layers: Option<&'a [u32]>,
    },
    /// Air not joined to the world's open sides or top becomes solid.
    SealedAir {
        /// Only pockets of fewer samples are filled; `None`: every sealed pocket.
        smaller_than: Option<usize>,
    },
}

impl Flood<'_> {
    /// Whether this clean-up can change nothing (no block need be labelled).
    pub fn changes_nothing(&self) -> bool {
        matches!(self, Flood::SealedAir { smaller_than: Some(0) })
    }
}

/// What went wrong joining block labels (only labels read back from a cache can be wrong).
#[derive(Debug, thiserror::Error)]
pub enum BlockError {
    /// The labels are not those of the volume's blocks, in order.
    #[error("block labels: {0}")]
    Malformed(String),
}

/// The runs of one block and their components within the block: what a shard computes of a
/// connectivity clean-up and shares with the others ([`BlockLabels::to_bytes`]).
pub struct BlockLabels(Block);

/// How many blocks of `block` samples cover `dims`, per axis.
fn block_counts(dims: [usize; 3], block: [usize; 3]) -> [usize; 3] {
    [0, 1, 2].map(|a| dims[a].div_ceil(block[a].max(1)))
}

/// The number of blocks of `block` samples over a volume of `dims`.
pub fn block_count(dims: [usize; 3], block: [usize; 3]) -> usize {
    block_counts(dims, block).iter().product()
}

/// Origin and size of block `index` (X fastest, then Y, then Z).
fn block_box(dims: [usize; 3], block: [usize; 3], index: usize) -> ([usize; 3], [usize; 3]) {
    let c = block_counts(dims, block);
    let b = [index % c[0], (index / c[0]) % c[1], index / (c[0] * c[1])];
    let origin = [0, 1, 2].map(|a| b[a] * block[a].max(1));
    (origin, [0, 1, 2].map(|a| block[a].max(1).min(dims[a] - origin[a])))
}

/// Labels block `index` of `block` samples for `flood`: the part of a clean-up that reads only
/// that block, and that blocks can do apart (threads, shards).
pub fn label_block(vol: &DensityVolume, flood: Flood, block: [usize; 3], index: usize) -> BlockLabels {
    let (origin, size) = block_box(vol.dims, block, index);
    let [nx, ny, nz] = vol.dims;
    BlockLabels(match flood {
        Flood::Floaters { ground_layers } => {
            let is_seed =
                |y: usize, z: usize, [a, b]: [u32; 2]| z == 0 || ground_layers.is_some_and(|g| (a..b).any(|x| (z as u32) < g[x as usize + nx * y]));
            Block::label(vol, origin, size, &|d: f32| d > 0.0, &is_seed)
        }
        Flood::SealedAir { .. } => {
            let is_seed = |y: usize, z: usize, [a, b]: [u32; 2]| z + 1 == nz || y == 0 || y + 1 == ny || a == 0 || b as usize == nx;
            Block::label(vol, origin, size, &|d: f32| d.is_nan() || d <= 0.0, &is_seed)
        }
    })
}

/// Every block labelled, on every thread.
pub fn label_blocks(vol: &DensityVolume, flood: Flood, block: [usize; 3]) -> Vec<BlockLabels> {
    (0..block_count(vol.dims, block)).into_par_iter().map(|i| label_block(vol, flood, block, i)).collect()
}

impl BlockLabels {
    /// The labels as bytes (little-endian): origin and size, run and component counts, the rows'
    /// first runs, the runs, each run's component, each component's seed flag and samples.
    pub fn to_bytes(&self) -> Vec<u8> {
        let b = &self.0;
        let mut out = Vec::with_capacity(4 * (8 + b.row_start.len() + 3 * b.spans.len()) + 9 * b.components.len());
        let mut put = |v: u32| out.extend_from_slice(&v.to_le_bytes());
        b.origin.iter().chain(&b.size).for_each(|&v| put(v as u32));
        put(b.spans.len() as u32);
        put(b.components.len() as u32);
        b.row_start.iter().for_each(|&v| put(v));
        b.spans.iter().flatten().for_each(|&v| put(v));
        b.label.iter().for_each(|&v| put(v));
        for &(seed, n) in &b.components {
            out.push(u8::from(seed));
            out.extend_from_slice(&n.to_le_bytes());
        }
        out
    }

    /// Parses [`BlockLabels::to_bytes`] for block `index` of `block` samples over `dims`,
    /// checking every count, run and label against that block, so that joining them can neither
    /// index out of bounds nor touch a sample outside the block.
    pub fn from_bytes(bytes: &[u8], dims: [usize; 3], block: [usize; 3], index: usize) -> Result<BlockLabels, String> {
        if index >= block_count(dims, block) {
            return Err(format!("block {index} of {}", block_count(dims, block)));
        }
        let mut words = bytes.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")));
        let mut word = || words.next().ok_or("truncated");
        let (origin, size) = block_box(dims, block, index);
        let stored: Vec<usize> = (0..6).map(|_| word().map(|v| v as usize)).collect::<Result<_, _>>()?;
        if stored[..3] != origin || stored[3..] != size {
            return Err(format!("labels of block {:?}+{:?}, not block {index} ({origin:?}+{size:?})", &stored[..3], &stored[3..]));
        }
        let (runs, component_count) = (word()? as usize, word()? as usize);
        let rows = size[1] * size[2];
        let expected = 4 * (8 + rows + 1 + 3 * runs) + 9 * component_count;
        if bytes.len() != expected {
            return Err(format!("{} bytes, not the {expected} of {runs} runs and {component_count} components", bytes.len()));
        }
        let row_start: Vec<u32> = (0..=rows).map(|_| word()).collect::<Result<_, _>>()?;
        let spans: Vec<[u32; 2]> = (0..runs).map(|_| Ok::<_, &str>([word()?, word()?])).collect::<Result<_, _>>()?;
        let label: Vec<u32> = (0..runs).map(|_| word()).collect::<Result<_, _>>()?;
        let tail = &bytes[4 * (8 + rows + 1 + 3 * runs)..];
        let components: Vec<(bool, u64)> =
            tail.chunks_exact(9).map(|c| (c[0] != 0, u64::from_le_bytes(c[1..].try_into().expect("8 bytes")))).collect();
        if row_start[0] != 0 || row_start[rows] as usize != runs || row_start.windows(2).any(|w| w[0] > w[1]) {
            return Err("rows' first runs out of order".into());
        }
        let (x0, x1) = (origin[0] as u32, (origin[0] + size[0]) as u32);
        for r in 0..rows {
            let row = &spans[row_start[r] as usize..row_start[r + 1] as usize];
            // Runs of a row are separated by at least one other sample.
            let sorted = row.windows(2).all(|w| w[0][1] < w[1][0]);
            if !sorted || row.iter().any(|&[a, b]| a < x0 || b > x1 || a >= b) {
                return Err(format!("row {r}: runs outside the block or out of order"));
            }
        }
        // Components are numbered in the order of their first run, as labelling numbers them, so
        // each has a run and the join's union-find is no larger than the runs.
        let mut samples = vec![0u64; component_count];
        let mut seen = 0u32;
        for (span, &l) in spans.iter().zip(&label) {
            if l > seen || l as usize >= component_count {
                return Err(format!("component {l} of {component_count}, after {seen} numbered"));
            }
            seen = seen.max(l + 1);
            samples[l as usize] += u64::from(span[1] - span[0]);
        }
        if seen as usize != component_count {
            return Err(format!("{component_count} components, {seen} of them with runs"));
        }
        if samples.iter().zip(&components).any(|(n, c)| *n != c.1) {
            return Err("components' samples do not add up their runs".into());
        }
        Ok(BlockLabels(Block { origin, size, row_start, spans, label, components }))
    }
}

/// Joins every block's labels (`labels[i]` of block `i`) by a union-find across block faces,
/// marks each joined component reached when it touches the seed set or, for sealed air with a
/// limit, holds at least that many samples, and applies `flood` to every sample of an unreached
/// one. Returns how many samples changed.
pub fn join_blocks(vol: &mut DensityVolume, flood: Flood, block: [usize; 3], labels: &[BlockLabels]) -> Result<usize, BlockError> {
    let dims = vol.dims;
    let counts = block_counts(dims, block);
    if labels.len() != block_count(dims, block) {
        return Err(BlockError::Malformed(format!("{} labelled blocks of {}", labels.len(), block_count(dims, block))));
    }
    if let Some(i) = (0..labels.len()).find(|&i| (labels[i].0.origin, labels[i].0.size) != block_box(dims, block, i)) {
        return Err(BlockError::Malformed(format!("the labels given for block {i} are another block's")));
    }
    let (limit, f): (Option<u64>, fn(f32) -> f32) = match flood {
        Flood::Floaters { .. } => (None, |d| -d),
        Flood::SealedAir { smaller_than } => (smaller_than.map(|n| n as u64), |d| if d < 0.0 { -d } else { f32::MIN_POSITIVE }),
    };
    let blocks: Vec<&Block> = labels.iter().map(|l| &l.0).collect();
    let index = |b: [usize; 3]| b[0] + counts[0] * (b[1] + counts[1] * b[2]);
    let coords: Vec<[usize; 3]> = (0..counts[2]).flat_map(|z| (0..counts[1]).flat_map(move |y| (0..counts[0]).map(move |x| [x, y, z]))).collect();
    // Components of all blocks in one numbering.
    let mut first = Vec::with_capacity(blocks.len() + 1);
    first.push(0u32);
    for b in &blocks {
        first.push(first.last().copied().unwrap_or(0) + b.components.len() as u32);
    }
    let mut uf = UnionFind::new(*first.last().unwrap_or(&0) as usize);
    let id = |bi: usize, run: usize| first[bi] + blocks[bi].label[run];
    for (ai, &c) in coords.iter().enumerate() {
        let a = &blocks[ai];
        let [sx, sy, sz] = a.size;
        // +X: a row's last run ending at the face meets the neighbour row's first run starting there.
        if c[0] + 1 < counts[0] {
            let bi = index([c[0] + 1, c[1], c[2]]);
            let b = &blocks[bi];
            for r in 0..sy * sz {
                let (ra, rb) = (a.row(r), b.row(r));
                if let (Some(last), Some(first_b)) = (ra.last(), rb.first()) {
                    if last[1] as usize == a.origin[0] + sx && first_b[0] as usize == b.origin[0] {
                        uf.union(id(ai, a.first_run(r) + ra.len() - 1), id(bi, b.first_run(r)));
                    }
                }
            }
        }
        // +Y: the block's last Y row against the neighbour's first, for every z.
        if c[1] + 1 < counts[1] {
            let bi = index([c[0], c[1] + 1, c[2]]);
            let b = &blocks[bi];
            for lz in 0..sz {
                let (ra, rb) = (sy - 1 + sy * lz, b.size[1] * lz);
                overlaps(a.row(ra), b.row(rb), |i, j| uf.union(id(ai, a.first_run(ra) + i), id(bi, b.first_run(rb) + j)));
            }
        }
        // +Z: the block's top slice against the neighbour's bottom one.
        if c[2] + 1 < counts[2] {
            let bi = index([c[0], c[1], c[2] + 1]);
            let b = &blocks[bi];
            for ly in 0..sy {
                let (ra, rb) = (ly + sy * (sz - 1), ly);
                overlaps(a.row(ra), b.row(rb), |i, j| uf.union(id(ai, a.first_run(ra) + i), id(bi, b.first_run(rb) + j)));
            }
        }
    }
    // Per joined component: seeded, samples.
    let total = uf.0.len();
    let mut seeded = vec![false; total];
    let mut samples = vec![0u64; total];
    for (bi, b) in blocks.iter().enumerate() {
        for (k, &(seed, n)) in b.components.iter().enumerate() {
            let root = uf.find(first[bi] + k as u32) as usize;
            seeded[root] |= seed;
            samples[root] += n;
        }
    }
    let reached = |root: usize| seeded[root] || limit.is_some_and(|l| samples[root] >= l);
    // Unreached runs as (z, y, x0, x1), applied slice by slice.
    let mut unreached: Vec<[u32; 4]> = Vec::new();
    for (bi, b) in blocks.iter().enumerate() {
        let [_, sy, sz] = b.size;
        for lz in 0..sz {
            for ly in 0..sy {
                let r = ly + sy * lz;
                for (k, span) in b.row(r).iter().enumerate() {
                    if !reached(uf.find(id(bi, b.first_run(r) + k)) as usize) {
                        unreached.push([(b.origin[2] + lz) as u32, (b.origin[1] + ly) as u32, span[0], span[1]]);
                    }
                }
            }
        }
    }
    unreached.sort_unstable();
    let [nx, ny, _] = dims;
    let changed = vol
        .data
        .par_chunks_mut(nx * ny)
        .enumerate()
        .map(|(z, slice)| {
            let start = unreached.partition_point(|u| (u[0] as usize) < z);
            let end = unreached.partition_point(|u| (u[0] as usize) <= z);
            let mut changed = 0;
            for &[_, y, a, b] in &unreached[start..end] {
                for d in &mut slice[y as usize * nx + a as usize..y as usize * nx + b as usize] {
                    *d = f(*d);
                }
                changed += (b - a) as usize;
            }
            changed
        })
        .sum();
    Ok(changed)
}

/// [`remove_floaters`](super::remove_floaters) by blocks of `block` samples: the same result.
pub fn remove_floaters_by_blocks(vol: &mut DensityVolume, ground_layers: Option<&[u32]>, block: [usize; 3]) -> usize {
    flood_by_blocks(vol, Flood::Floaters { ground_layers }, block)
}

/// [`fill_sealed_air`](super::fill_sealed_air) by blocks of `block` samples: the same result.
pub fn fill_sealed_air_by_blocks(vol: &mut DensityVolume, smaller_than: Option<usize>, block: [usize; 3]) -> usize {
    flood_by_blocks(vol, Flood::SealedAir { smaller_than }, block)
}

/// A clean-up by blocks on this machine's threads.
fn flood_by_blocks(vol: &mut DensityVolume, flood: Flood, block: [usize; 3]) -> usize {
    if flood.changes_nothing() {
        return 0;
    }
    let labels = label_blocks(vol, flood, block);
    join_blocks(vol, flood, block, &labels).expect("labels made here are of their own blocks")
}

#[cfg(test)]
mod tests {
    use super::super::{fill_sealed_air, remove_floaters};
    use super::*;

    /// A field of `dims` with `solid(x, y, z)` solid (0.5) and the rest air (-0.25).
    fn field(dims: [usize; 3], solid: impl Fn(usize, usize, usize) -> bool) -> DensityVolume {
        DensityVolume::from_fn(dims, |x, y, z| if solid(x, y, z) { 0.5 } else { -0.25 })
    }

    /// Both clean-ups, global and by `block`: the same counts and the same samples.
    fn same_as_global(vol: &DensityVolume, ground: Option<&[u32]>, block: [usize; 3]) {
        let (mut g, mut b) = (vol.clone(), vol.clone());
        assert_eq!(remove_floaters(&mut g, ground), remove_floaters_by_blocks(&mut b, ground, block), "floaters, blocks {block:?}");
        assert!(g == b, "floaters by blocks {block:?} differ");
        for limit in [None, Some(1), Some(5), Some(40)] {
            let (mut g, mut b) = (vol.clone(), vol.clone());
            assert_eq!(fill_sealed_air(&mut g, limit), fill_sealed_air_by_blocks(&mut b, limit, block), "sealed air {limit:?}, blocks {block:?}");
            assert!(g == b, "sealed air {limit:?} by blocks {block:?} differ");
        }
    }

    #[test]
    fn random_fields_clean_up_alike_for_any_block_size() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let dims = [23, 19, 17];
        for density in [35, 50, 62] {
            let bits: Vec<bool> = (0..dims[0] * dims[1] * dims[2]).map(|_| next() % 100 < density).collect();
            let vol = field(dims, |x, y, z| bits[x + dims[0] * (y + dims[1] * z)]);
            let ground: Vec<u32> = (0..dims[0] * dims[1]).map(|_| (next() % 4) as u32).collect();
            for block in [[4, 4, 4], [5, 3, 7], [1, 1, 1], [23, 19, 17], [64, 64, 64], [8, 19, 2]] {
                same_as_global(&vol, None, block);
                same_as_global(&vol, Some(&ground), block);
            }
        }
    }

    #[test]
    fn labels_read_back_from_bytes_join_to_the_same_volume_and_damaged_ones_are_refused() {
        let dims = [23, 19, 17];
        let vol = field(dims, |x, y, z| (x * 7 + y * 3 + z * 5) % 11 < 5 || z == 3);
        let block = [8, 8, 8];
        for flood in [Flood::Floaters { ground_layers: None }, Flood::SealedAir { smaller_than: Some(30) }] {
            let here = label_blocks(&vol, flood, block);
            let read: Vec<BlockLabels> =
                here.iter().enumerate().map(|(i, l)| BlockLabels::from_bytes(&l.to_bytes(), dims, block, i).unwrap()).collect();
            let (mut a, mut b) = (vol.clone(), vol.clone());
            let changed = join_blocks(&mut a, flood, block, &here).unwrap();
            assert!(changed > 0, "{flood:?} changes something in this field");
            assert_eq!(join_blocks(&mut b, flood, block, &read).unwrap(), changed);
            assert!(a == b, "{flood:?}: labels read back join to another volume");
            // Another block's labels, a truncated or extended entry, and runs moved out of their block.
            let bytes = here[5].to_bytes();
            assert!(BlockLabels::from_bytes(&bytes, dims, block, 4).is_err());
            assert!(BlockLabels::from_bytes(&bytes[..bytes.len() - 1], dims, block, 5).is_err());
            assert!(BlockLabels::from_bytes(&[&bytes[..], &[0]].concat(), dims, block, 5).is_err());
            let rows = 8 * 8;
            let first_span = 4 * (8 + rows + 1);
            let mut moved = bytes.clone();
            moved[first_span..first_span + 4].copy_from_slice(&0u32.to_le_bytes());
            assert!(BlockLabels::from_bytes(&moved, dims, block, 5).is_err(), "a run starting outside its block");
            assert!(join_blocks(&mut b, flood, block, &read[1..]).is_err(), "a block's labels missing");
            let components_at = 4 * 7;
            let mut more = bytes.clone();
            let n = u32::from_le_bytes(more[components_at..components_at + 4].try_into().unwrap());
            more[components_at..components_at + 4].copy_from_slice(&(n + 1).to_le_bytes());
            more.extend_from_slice(&[0; 9]);
            assert!(BlockLabels::from_bytes(&more, dims, block, 5).is_err(), "a component without a run");
        }
    }

    #[test]
    fn a_spiral_through_many_blocks_is_one_body() {
        // A square spiral one sample thick winding outwards at z = 5, joined to the ground only by
        // a pillar at its outer end: every block sees only pieces of it, none touching the ground.
        let n = 40;
        let mut solid = vec![false; n * n];
        let (mut x, mut y, mut len, mut dir) = (20i32, 20i32, 1, 0);
        let mut end = (0usize, 0usize);
        'walk: loop {
            for _ in 0..2 {
                for _ in 0..len {
                    if !(1..n as i32 - 1).contains(&x) || !(1..n as i32 - 1).contains(&y) {
                        break 'walk;
                    }
                    solid[x as usize + n * y as usize] = true;
                    end = (x as usize, y as usize);
                    let d = [(1, 0), (0, 1), (-1, 0), (0, -1)][dir];
                    x += d.0;
                    y += d.1;
                }
                dir = (dir + 1) % 4;
            }
            len += 2;
        }
        let dims = [n, n, 8];
        let spiral = |x: usize, y: usize, z: usize| z == 5 && solid[x + n * y];
        let pillar = |x: usize, y: usize, z: usize| (x, y) == end && z <= 5;
        let grounded = field(dims, |x, y, z| spiral(x, y, z) || pillar(x, y, z));
        for block in [[4, 4, 8], [6, 5, 3], [40, 40, 8]] {
            same_as_global(&grounded, None, block);
            let mut b = grounded.clone();
            assert_eq!(remove_floaters_by_blocks(&mut b, None, block), 0, "the spiral holds on to its pillar");
        }
        // Without the pillar the whole spiral floats and goes, whatever the blocks.
        let floating = field(dims, spiral);
        let samples = solid.iter().filter(|&&s| s).count();
        for block in [[4, 4, 8], [6, 5, 3]] {
            same_as_global(&floating, None, block);
            let mut b = floating.clone();
            assert_eq!(remove_floaters_by_blocks(&mut b, None, block), samples);
        }
    }

    #[test]
    fn a_body_reaching_the_ground_through_a_chain_of_blocks_is_kept() {
        // A slab floating at z = 6 over the far corner, reaching the ground only through a
        // staircase that crosses every block of a diagonal on its way down, and a sealed air pocket
        // whose walls cross block faces.
        let dims = [48, 48, 12];
        let stair = |x: usize, y: usize, z: usize| x == y && x < 36 && z == 6 - (x / 6).min(6);
        let column = |x: usize, y: usize, z: usize| x == y && x.is_multiple_of(6) && x < 36 && z <= 6 - (x / 6).min(6) + 1 && z >= 6 - (x / 6).min(6);
        let slab = |x: usize, y: usize, z: usize| (36..48).contains(&x) && (36..48).contains(&y) && (6..=9).contains(&z);
        let bridge = |x: usize, y: usize, z: usize| (33..37).contains(&x) && y == x && z == 6;
        let vol = field(dims, |x, y, z| z == 0 || stair(x, y, z) || column(x, y, z) || slab(x, y, z) || bridge(x, y, z));
        let mut vol = vol;
        for (x, y, z) in [(40, 40, 7), (41, 40, 7), (41, 41, 7), (41, 41, 8)] {
            let i = vol.index(x, y, z);
            vol.data[i] = -0.25;
        }
        for block in [[4, 4, 4], [8, 8, 12], [5, 6, 2]] {
            same_as_global(&vol, None, block);
        }
    }
}
