//! The engine's work for sharded bakes: a shard's way to tile items other shards may be computing,
//! and the progress report of a bake in the cache (`kiln bake --status`).

use kiln_cache::store::Claim;
use rayon::prelude::*;

use super::{Engine, Entry, StageInputs, TileOutput};
use crate::pipeline::failpoint;
use crate::pipeline::progress::StageProgress;
use crate::pipeline::stage_cache::TryClaim;
use crate::pipeline::BakeError;

/// How many of a stage's items the cache holds (see [`Engine::status`]).
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
        decode: impl Fn(&[u8]) -> Result<T, String> + Sync,
    ) -> Result<Vec<T>, BakeError> {
        if !self.role().is_shard() {
            return (0..count).into_par_iter().map(&compute).collect();
        }
        let key = |k: usize| StageInputs::new(stage, 1).with("product", inputs.key().0).with("item", k as u128);
        let label = |k: usize| format!("{stage} {k}");
        let read = |k: usize| self.cache().lookup(&label(k), &key(k), |b| decode(&b));
        let take = |k: usize, claim: Option<Claim>| -> Result<T, BakeError> {
            if let Some(v) = read(k) {
                return Ok(v);
            }
            let v = compute(k)?;
            self.cache().computed(&label(k), &key(k), &encode(&v)?);
            drop(claim);
            Ok(v)
        };
        let order = self.role().rotate(&(0..count).collect::<Vec<_>>());
        // Ok(Err(k)): item k is held by another process.
        let first: Vec<(usize, Result<T, usize>)> = order
            .par_iter()
            .with_max_len(1)
            .map(|&k| {
                if let Some(v) = read(k) {
                    return Ok((k, Ok(v)));
                }
                match self.cache().try_claim(&key(k)) {
                    TryClaim::Taken(claim) => take(k, claim).map(|v| (k, Ok(v))),
                    TryClaim::Busy => Ok((k, Err(k))),
                }
            })
            .collect::<Result<_, BakeError>>()?;
        let mut items: Vec<Option<T>> = (0..count).map(|_| None).collect();
        let mut held = Vec::new();
        for (k, r) in first {
            match r {
                Ok(v) => items[k] = Some(v),
                Err(k) => held.push(k),
            }
        }
        let waited: Vec<(usize, T)> =
            held.par_iter().with_max_len(1).map(|&k| take(k, self.cache().claim(&key(k))).map(|v| (k, v))).collect::<Result<_, _>>()?;
        for (k, v) in waited {
            items[k] = Some(v);
        }
        Ok(items.into_iter().map(|v| v.expect("every item taken or waited for")).collect())
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
                let _ = self.outputs[i][t].set(o);
            })
        };
        let take = |t: usize, claim: Option<Claim>| -> Result<Option<(usize, TileOutput)>, BakeError> {
            if read(t).is_some() {
                return Ok(None);
            }
            if let Some(point) = self.role.failpoint("claimed-tile") {
                failpoint::hit(&point);
            }
            let out = self.bake_tile(i, t, bar)?;
            drop(claim);
            if let Some(point) = self.role.failpoint("tile") {
                failpoint::hit(&point);
            }
            Ok(Some((t, out)))
        };
        let order = self.role.rotate(tiles);
        // Ok(Err(t)): tile t is held by another process.
        let first: Vec<Result<Option<(usize, TileOutput)>, usize>> = order
            .par_iter()
            .with_max_len(1)
            .map(|&t| match self.cache.try_claim(&keys[t]) {
                TryClaim::Taken(claim) => take(t, claim).map(Ok),
                TryClaim::Busy => Ok(Err(t)),
            })
            .collect::<Result<_, BakeError>>()?;
        let mut computed = Vec::new();
        let mut held = Vec::new();
        for r in first {
            match r {
                Ok(done) => computed.extend(done),
                Err(t) => held.push(t),
            }
        }
        let second: Vec<Option<(usize, TileOutput)>> =
            held.par_iter().with_max_len(1).map(|&t| take(t, self.cache.claim(&keys[t]))).collect::<Result<_, _>>()?;
        computed.extend(second.into_iter().flatten());
        Ok(computed)
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
