//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack d96f23de2f4da8f6
tiles/L0_0_0.kpack 35d2349bd8a3a87e
tiles/L0_0_1.kpack 34529d4d1f818ba0
tiles/L0_0_2.kpack 1ddf66fbd56c3924
tiles/L0_0_3.kpack ba559bc72a9cc185
tiles/L0_1_0.kpack b4430cd6e6d91fd6
tiles/L0_1_1.kpack 252b305a008fe824
tiles/L0_1_2.kpack a846f7b7c777705f
tiles/L0_1_3.kpack 15cbae56fc9b19e3
tiles/L0_2_0.kpack d91f5ca0d0fdfac2
tiles/L0_2_1.kpack 888cc1ac8e1292b0
tiles/L0_2_2.kpack a6c39a9a9c671811
tiles/L0_2_3.kpack 757d7759e9babe2a
tiles/L0_3_0.kpack 0fc999bf293d442f
tiles/L0_3_1.kpack 019b43f0bed27f10
tiles/L0_3_2.kpack a4108055350c390a
tiles/L0_3_3.kpack 8be1adc21f3e1ae1
tiles/L1_0_0.kpack 6b749cce64a31f00
tiles/L1_0_1.kpack 0d466b7a0ce7f47f
tiles/L1_1_0.kpack 7b0f747e97d70363
tiles/L1_1_1.kpack 2475d9fcb4e88a41
tiles/L2_0_0.kpack 48f9ea1fc8bd48f7
";

fn pack_hashes(dir: &std::path::Path) -> String {
    let line = |(path, bytes): (std::path::PathBuf, Vec<u8>)| format!("{} {:016x}\n", path.to_string_lossy().replace('\\', "/"), xxh3_64(&bytes));
    files_under(dir).into_iter().map(line).collect()
}

#[test]
fn the_tiny_worlds_packs_are_the_pinned_bytes() {
    let actual = pack_hashes(tiny_bake());
    assert!(
        actual == TINY_PACKS,
        "the tiny world's packs changed. If that is deliberate, bump the changed product's version and pin the new \
         hashes:\n{actual}"
    );
}
