//! Progress reporting as a sink, so the bake never knows how (or whether) progress is shown: the
//! CLI draws bars, tests and cluster workers pass [`NoProgress`] or their own reporter.

/// Receives the start of each stage's batch of items.
pub trait Progress: Sync {
    /// A batch of `items` items of `stage` starts; the returned handle counts them off.
    fn start(&self, stage: &str, items: u64) -> Box<dyn StageProgress + '_>;
    /// A step of `stage` (a world product, a product's tiles, the packs) begins (`true`) or ends;
    /// steps nest where one resolves what it reads. For reporters that follow the bake step by
    /// step (a memory profile per stage).
    fn step(&self, _stage: &str, _begins: bool) {}
}

/// One batch in progress. Called from worker threads.
pub trait StageProgress: Sync {
    /// `n` more items are done.
    fn advance(&self, n: u64);
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _stage: &str, _items: u64) -> Box<dyn StageProgress + '_> {
        Box::new(NoProgress)
    }
}

impl StageProgress for NoProgress {
    fn advance(&self, _n: u64) {}
}
