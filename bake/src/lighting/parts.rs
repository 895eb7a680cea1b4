//! Light transport's phases as work that can be split into parts, and where a bake gets each
//! phase's sums (see [`PathParts`]).

use super::{LightSums, LightingError};

/// The two phases of light transport: the pilot paths, then the rest (which read the pilot's
/// sums); see [`super::bake_lighting`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathPhase {
    /// One in `PILOT_DIVISOR` (32) paths of every source, continued by Russian roulette.
    Pilot = 0,
    /// The other paths, continued by the weight window the pilot's sums give.
    Rest = 1,
}

impl PathPhase {
    /// The phase's name, for cache keys and messages.
    pub fn name(self) -> &'static str {
        match self {
            PathPhase::Pilot => "pilot",
            PathPhase::Rest => "rest",
        }
    }
}

/// One phase's light paths, as work that can be split: part `k` of `n` is the `k`-th of `n`
/// equal runs of every source's path indices. Parts' sums add up exactly (see [`LightSums`]), so
/// any split gives the same bytes.
pub struct PhaseWork<'a> {
    /// Which phase's paths.
    pub phase: PathPhase,
    pub(super) trace: &'a (dyn Fn(u32, u32, &mut LightSums) + Sync),
    pub(super) zeroed: &'a (dyn Fn() -> LightSums + Sync),
}

impl PhaseWork<'_> {
    /// Traces part `k` of `n` of the phase's paths, adding to `into`.
    pub fn trace(&self, k: u32, n: u32, into: &mut LightSums) {
        (self.trace)(k, n, into)
    }
    /// Zero sums of this bake's shape (to trace a part alone, or to read one into).
    pub fn zeroed(&self) -> LightSums {
        (self.zeroed)()
    }
}

/// Where each phase's sums come from: traced here in one piece ([`AllPathsHere`]), or put
/// together from parts that several processes trace (the pipeline's sharded bakes).
pub trait PathParts: Sync {
    /// The sums of every path of `work`'s phase.
    fn sums(&self, work: &PhaseWork) -> Result<LightSums, LightingError>;
}

/// Every path traced in this process, in one piece.
pub struct AllPathsHere;

impl PathParts for AllPathsHere {
    fn sums(&self, work: &PhaseWork) -> Result<LightSums, LightingError> {
        let mut sums = work.zeroed();
        work.trace(0, 1, &mut sums);
        Ok(sums)
    }
}
