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
