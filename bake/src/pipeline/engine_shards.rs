//! The engine's work for sharded bakes: a shard's way to tile items other shards may be computing,
//! and the progress report of a bake in the cache (`kiln bake --status`).

use kiln_cache::store::Claim;
use rayon::prelude::*;

use super::{Engine, Entry, StageInputs, TileOutput};
use crate::pipeline::failpoint;
use crate::pipeline::machine_once::MachineOnce;
use crate::pipeline::progress::StageProgress;
use crate::pipeline::stage_cache::{TryClaim, Waited};
use crate::pipeline::BakeError;

/// How many of a stage's items the cache holds (see `Engine::status`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageStatus {
    /// The product's name, or `packs`.
    pub name: &'static str,
    /// Items in the cache.
    pub present: usize,
    /// Items of the bake.
    pub items: usize,
    /// Why the items could not be looked for (a product their keys need is not stored yet).
    pub waiting: Option<String>,
}

impl Engine<'_> {
    /// How this process makes a world-wide step that every shard needs whole: `Some` in a shard
    /// that shares its machine with others, `None` where it makes the step itself (see
    /// `machine_once.rs`).
    pub(crate) fn machine_once(&self) -> Option<MachineOnce<'_>> {
        (self.role().is_shard() && self.machine_threads > 1 && self.cache().has_store()).then(|| MachineOnce {
            cache: self.cache(),
            threads: self.machine_threads,
            failpoint: self.role().failpoint("machine-step"),
        })
    }

    /// Items of one world product's computation that shards split among them (tree prototypes):
    /// `count` items of `stage`, item `k` keyed by the product's `inputs` and `k`. A whole bake
    /// computes every item here, in parallel, and stores none; a shard takes the items nobody
    /// holds (starting at its share), computing and storing each under a claim, then reads the
    /// ones others hold once stored (computing one whose holder died). Returns every item, in order.
    pub fn shared_items<T: Send>(
        &self,
        stage: &'static str,
        inputs: &StageInputs,
        count: usize,
        compute: impl Fn(usize) -> Result<T, BakeError> + Sync,
        encode: impl Fn(&T) -> Result<Vec<u8>, BakeError> + Sync,
        decode: impl Fn(usize, &[u8]) -> Result<T, String> + Sync,
    ) -> Result<Vec<T>, BakeError> {
        if !self.role().is_shard() {
            return (0..count).into_par_iter().map(&compute).collect();
        }
        let key = |k: usize| item_key(stage, inputs, k);
        let read = |k: usize| self.cache().lookup(&item_label(stage, k), &key(k), |b| decode(k, &b));
        let store = |k: usize| -> Result<T, BakeError> {
            let v = compute(k)?;
            self.cache().computed(&item_label(stage, k), &key(k), &encode(&v)?);
            Ok(v)
        };
        let mut items = self.claim_each(&(0..count).collect::<Vec<_>>(), key, read, store)?;
        items.sort_unstable_by_key(|(k, _)| *k);
        Ok(items.into_iter().map(|(_, v)| v).collect())
    }

    /// This shard's share of [`Engine::shared_items`]' items, without reading any: every item
    /// neither stored nor held by another process is computed and stored under a claim, starting
    /// at the shard's share. What another process holds is left to it (and to whoever puts the
    /// items together, who waits for it).
    pub fn share_items<T: Send>(
        &self,
        stage: &'static str,
        inputs: &StageInputs,
        count: usize,
        compute: impl Fn(usize) -> Result<T, BakeError> + Sync,
        encode: impl Fn(&T) -> Result<Vec<u8>, BakeError> + Sync,
    ) -> Result<(), BakeError> {
        if !self.role().is_shard() {
            return Ok(());
        }
        let key = |k: usize| item_key(stage, inputs, k);
        self.role().rotate(&(0..count).collect::<Vec<_>>()).par_iter().with_max_len(1).try_for_each(|&k| {
            if self.cache().contains(&key(k)) {
                return Ok(());
            }
            match self.cache().try_claim(&key(k)) {
                TryClaim::Taken(_claim) if !self.cache().contains(&key(k)) => {
                    self.cache().computed(&item_label(stage, k), &key(k), &encode(&compute(k)?)?);
                    Ok(())
                }
                _ => Ok(()),
            }
        })
    }

    /// The claim loop of shards: each of `items`, taken in this shard's order, is read when stored
    /// (`read`), else claimed under `key` and, unless stored meanwhile, computed (`compute`, which
    /// stores it); items another process holds are waited for afterwards, then read, or computed
    /// if their holder died without storing them. Returns `(item, value)` for every item.
    fn claim_each<T: Send>(
        &self,
        items: &[usize],
        key: impl Fn(usize) -> StageInputs + Sync,
        read: impl Fn(usize) -> Option<T> + Sync,
        compute: impl Fn(usize) -> Result<T, BakeError> + Sync,
    ) -> Result<Vec<(usize, T)>, BakeError> {
        let take = |k: usize, claim: Option<Claim>| -> Result<(usize, T), BakeError> {
            let v = match read(k) {
                Some(v) => v,
                None => compute(k)?,
            };
            drop(claim);
            Ok((k, v))
        };
        // Err(k): item k is held by another process.
        let first: Vec<Result<(usize, T), usize>> = self
            .role()
            .rotate(items)
            .par_iter()
            .with_max_len(1)
            .map(|&k| match read(k) {
                Some(v) => Ok(Ok((k, v))),
                None => match self.cache().try_claim(&key(k)) {
                    TryClaim::Taken(claim) => take(k, claim).map(Ok),
                    TryClaim::Busy => Ok(Err(k)),
                },
            })
            .collect::<Result<_, BakeError>>()?;
        let mut done = Vec::with_capacity(items.len());
        let mut held = Vec::new();
        for r in first {
            match r {
                Ok(item) => done.push(item),
                Err(k) => held.push(k),
            }
        }
        let waited: Vec<(usize, T)> = held
            .par_iter()
            .with_max_len(1)
            .map(|&k| match self.cache().claim_or_read(&key(k), &key(k), || read(k)) {
                Waited::Read(v) => Ok((k, v)),
                Waited::Claimed(claim) => take(k, claim),
            })
            .collect::<Result<_, _>>()?;
        done.extend(waited);
        Ok(done)
    }

    /// A shard's way to the outputs of tile product `i` for `tiles`: first every tile nobody
    /// holds (computed under a claim, starting at this shard's share), then the held ones, each
    /// read once its holder has stored it, or computed here if the holder died without storing it.
    /// Returns the tiles computed here; the others are read into the engine directly.
    pub(super) fn bake_shared_tiles(&self, i: usize, tiles: &[usize], bar: &dyn StageProgress) -> Result<Vec<(usize, TileOutput)>, BakeError> {
        let p = self.tile_product(i);
        let keys = self.tile_keys(p.name())?;
        let read = |t: usize| {
            let o = self.cache.lookup(&self.plan.tiles[t].label(), &keys[t], |b| {
                let o = TileOutput::from_bytes(&b).ok_or("not a well-formed product output")?;
                p.validate(t, &o, self).map(|()| o)
            });
            o.map(|o| {
                bar.advance(1);
                self.set_output(i, t, o);
            })
        };
        let compute = |t: usize| -> Result<Option<TileOutput>, BakeError> {
            if let Some(point) = self.role.failpoint("claimed-tile") {
                failpoint::hit(&point);
            }
            let out = self.bake_tile(i, t, bar)?;
            if let Some(point) = self.role.failpoint("tile") {
                failpoint::hit(&point);
            }
            Ok(Some(out))
        };
        // `None`: read from the cache into the engine.
        let found = self.claim_each(tiles, |t| keys[t].clone(), |t| read(t).map(|()| None), compute)?;
        Ok(found.into_iter().filter_map(|(t, out)| out.map(|o| (t, o))).collect())
    }

    /// How much of the bake the cache holds, per stored product in registry order, then the packs.
    /// Reads keys only; where a key needs a stored world product that is not there yet, its items
    /// count as missing, with the reason.
    pub fn status(&self) -> Vec<StageStatus> {
        let row = |name, present, items, waiting| StageStatus { name, present, items, waiting };
        let tiles = self.plan.tiles.len();
        let mut out = Vec::new();
        for e in self.registry.entries() {
            match e {
                Entry::World(p) if p.stored() => out.push(match self.world_key(p.name()) {
                    Ok(key) => row(p.name(), self.cache.contains(key) as usize, 1, None),
                    Err(e) => row(p.name(), 0, 1, Some(e.to_string())),
                }),
                Entry::World(_) => {}
                Entry::Tile(p) => match self.tile_keys(p.name()) {
                    // A product the world does not have.
                    Ok(keys) if keys.iter().all(StageInputs::is_absent) => {}
                    Ok(keys) => out.push(row(p.name(), keys.iter().filter(|k| self.cache.contains(k)).count(), tiles, None)),
                    Err(e) => out.push(row(p.name(), 0, tiles, Some(e.to_string()))),
                },
            }
        }
        let packs: Result<Vec<StageInputs>, BakeError> = (0..tiles).map(|t| self.pack_key(t)).collect();
        out.push(match packs {
            Ok(keys) => row("packs", keys.iter().filter(|k| self.cache.contains(k)).count(), tiles, None),
            Err(e) => row("packs", 0, tiles, Some(e.to_string())),
        });
        out
    }
}

/// How the cache's log and counts name item `k` of `stage`.
fn item_label(stage: &'static str, k: usize) -> String {
    format!("{stage} {k}")
}

/// The cache key of item `k` of a product's `stage` items ([`Engine::shared_items`]).
fn item_key(stage: &'static str, inputs: &StageInputs, k: usize) -> StageInputs {
    StageInputs::new(stage, 1).with("product", inputs.key().0).with("item", k as u128)
}
