//! Light transport shared by the shards of a bake: each phase's paths split into one part per
//! shard, each part's sums stored (compressed) in the stage cache, and every shard adding up all
//! the parts. The sums are exact (`lighting::LightSums`), so the total is the same bytes as one
//! process tracing every path.
//!
//! A shard traces its own part first, then any part nobody holds (a shard that has not started,
//! or died before storing its part), then waits for the parts others are tracing and reads them;
//! a part whose holder died without storing it is traced after all.

use kiln_cache::store::Claim;

use super::failpoint;
use super::role::BakeRole;
use super::stage_cache::{StageCache, StageInputs, TryClaim};
use crate::lighting::{LightSums, LightingError, PathParts, PhaseWork};

/// zstd level of stored parts: sums of nearby vertices share their high bytes, and level 3
/// keeps compression a small fraction of tracing.
const PART_COMPRESSION: i32 = 3;

/// The parts of light transport in the stage cache, seen from shard `index` of `count`.
pub(super) struct CachedParts<'a> {
    pub(super) cache: &'a StageCache,
    /// The transport's cache key (every input of light transport).
    pub(super) transport: u128,
    pub(super) version: u32,
    pub(super) role: BakeRole,
}

impl CachedParts<'_> {
    fn split(&self) -> (u32, u32) {
        match self.role {
            BakeRole::Shard { index, count } => (index, count),
            _ => (0, 1),
        }
    }

    fn key(&self, work: &PhaseWork, k: u32, n: u32) -> StageInputs {
        StageInputs::new("transport part", self.version)
            .with("transport", self.transport)
            .with("phase", work.phase as u128)
            .with("part", k as u128)
            .with("parts", n as u128)
    }

    /// Adds part `k`'s stored sums to `into`; false when it is not (soundly) stored.
    fn read(&self, work: &PhaseWork, k: u32, n: u32, into: &mut LightSums) -> bool {
        let label = format!("{} part {k}/{n}", work.phase.name());
        let part = self.cache.lookup(&label, &self.key(work, k, n), |bytes| {
            let raw = zstd::decode_all(&bytes[..]).map_err(|e| format!("decompressing: {e}"))?;
            let mut sums = work.zeroed();
            sums.read_bytes(&raw)?;
            Ok(sums)
        });
        part.map(|p| into.merge(&p)).is_some()
    }

    /// Traces part `k`, stores it and adds it to `into` (under `claim`, released afterwards).
    fn trace(&self, work: &PhaseWork, k: u32, n: u32, into: &mut LightSums, claim: Option<Claim>) -> Result<(), LightingError> {
        let mut part = work.zeroed();
        work.trace(k, n, &mut part);
        let bytes = zstd::encode_all(&part.to_bytes()[..], PART_COMPRESSION).map_err(|e| LightingError::Parts(format!("compressing: {e}")))?;
        self.cache.computed(&format!("{} part {k}/{n}", work.phase.name()), &self.key(work, k, n), &bytes);
        drop(claim);
        if let Some(point) = self.role.failpoint("transport-part") {
            failpoint::hit(&point);
        }
        into.merge(&part);
        Ok(())
    }
}

impl PathParts for CachedParts<'_> {
    fn sums(&self, work: &PhaseWork, into: &mut LightSums) -> Result<(), LightingError> {
        let (index, n) = self.split();
        let mut held = Vec::new();
        for k in (0..n).map(|j| (index + j) % n) {
            if self.read(work, k, n, into) {
                continue;
            }
            match self.cache.try_claim(&self.key(work, k, n)) {
                TryClaim::Taken(claim) => {
                    // Another shard may have stored it between the lookup and the claim.
                    if !self.read(work, k, n, into) {
                        self.trace(work, k, n, into, claim)?;
                    }
                }
                TryClaim::Busy => held.push(k),
            }
        }
        for k in held {
            let claim = self.cache.claim(&self.key(work, k, n));
            if !self.read(work, k, n, into) {
                self.trace(work, k, n, into, claim)?;
            }
        }
        Ok(())
    }
}
