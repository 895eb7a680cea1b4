//! World-wide steps that every shard needs whole (light transport, the density volume), made
//! once by the shards that share a machine.
//!
//! Shards on separate machines each make such a step themselves: waiting for another's would
//! take no less time and add the transfer. Shards that share a machine (`--local-shards`) would
//! make it N times over at once, each on its share of the cores. Instead the first to claim it
//! makes it on every thread of the machine, stores it, and the others read it. They lose
//! nothing by waiting: a world-wide step reads everything before it, so they arrive at it
//! together with nothing else to do. The value is the same bytes whoever makes it, on any
//! number of threads.

use super::engine::{driven_by, driver};
use super::stage_cache::{StageCache, StageInputs, Waited};

/// How a shard makes a step that every shard on its machine needs whole (see the module's text).
pub(crate) struct MachineOnce<'a> {
    pub(super) cache: &'a StageCache,
    /// The machine's threads: this shard's times the shards on the machine.
    pub(super) threads: usize,
    /// Where a test kills this shard with a step made and not yet stored ([`super::failpoint`]).
    pub(super) failpoint: Option<String>,
}

impl MachineOnce<'_> {
    /// The value stored under `key` (`label` names it in messages), else made by `make` on the
    /// machine's threads and stored in `encode`'s form, under a claim so that the other shards
    /// wait and read it.
    /// A shard whose maker died without storing it makes it itself.
    pub(crate) fn make<T: Send, E: Send>(
        &self,
        label: &str,
        key: &StageInputs,
        make: impl FnOnce() -> Result<T, E> + Send,
        encode: impl FnOnce(&T) -> Vec<u8>,
        decode: impl Fn(Vec<u8>) -> Result<T, String>,
    ) -> Result<T, E> {
        let read = || self.cache.lookup(label, key, &decode);
        let claim = match self.cache.read_or_claim(key, key, read) {
            Waited::Read(v) => return Ok(v),
            Waited::Claimed(claim) => claim,
        };
        let v = self.run(make)?;
        if let Some(point) = &self.failpoint {
            super::failpoint::hit(point);
        }
        self.cache.computed(label, key, &encode(&v));
        drop(claim);
        Ok(v)
    }

    /// Runs `f` on the machine's threads (in a pool of its own when the current one has fewer):
    /// for a step the other shards on the machine are waiting for. The steps `f` takes count in
    /// the report as steps of the caller's (see `engine_clock.rs`).
    pub(crate) fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        if rayon::current_num_threads() >= self.threads {
            return f();
        }
        match rayon::ThreadPoolBuilder::new().num_threads(self.threads).thread_name(|i| format!("kiln-machine-{i}")).build() {
            Ok(pool) => {
                let caller = driver();
                pool.install(|| driven_by(caller, f))
            }
            Err(_) => f(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_cache::store::Store;

    #[test]
    fn the_first_maker_stores_on_the_machines_threads_and_the_others_read() {
        let dir = std::env::temp_dir().join(format!("kiln-machine-once-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = StageCache::new(Some(Store::open(&dir).expect("a store")), "w", false);
        let once = MachineOnce { cache: &cache, threads: 3, failpoint: None };
        let key = StageInputs::new("transport", 1).with("transport", 42);
        let encode = |v: &usize| v.to_le_bytes().to_vec();
        let decode = |b: Vec<u8>| -> Result<usize, String> { Ok(usize::from_le_bytes(b.try_into().map_err(|_| "length")?)) };
        let made = pool(1).install(|| once.make("transport", &key, || Ok::<_, ()>(rayon::current_num_threads()), encode, decode));
        assert_eq!(made, Ok(3), "made on the machine's threads, not the shard's one");
        let read = once.make("transport", &key, || Err::<usize, _>("made again"), encode, decode);
        assert_eq!(read, Ok(3), "read, not made again");
        let other = StageInputs::new("transport", 1).with("transport", 43);
        assert_eq!(once.make("transport", &other, || Err::<usize, _>("failed"), encode, decode), Err("failed"), "an error is passed on");
        assert_eq!(once.make("transport", &other, || Ok::<usize, ()>(5), encode, decode), Ok(5), "and nothing was stored for it");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }
}
