//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack ffca73dac47c9077
tiles/L0_0_0.kpack ca47d3a99b0f5bf8
tiles/L0_0_1.kpack 3ead54e9a2e2e2fe
tiles/L0_0_2.kpack e81fdb020cb8bfe3
tiles/L0_0_3.kpack 0cf337a7532f36d2
tiles/L0_1_0.kpack 9ae661e6c9f77cf6
tiles/L0_1_1.kpack 41b9c4c833075916
tiles/L0_1_2.kpack 47ce08e6b1a2d680
tiles/L0_1_3.kpack 13d4ea1c8f26dd83
tiles/L0_2_0.kpack 029dca6f6d4019cf
tiles/L0_2_1.kpack 297901be49f4a09c
tiles/L0_2_2.kpack b3ac6fe479c7fd01
tiles/L0_2_3.kpack 11c1f0537370665e
tiles/L0_3_0.kpack 0cf3dc259aa8d543
tiles/L0_3_1.kpack 7c8b51d141964b42
tiles/L0_3_2.kpack 7fb73a13b784ceeb
tiles/L0_3_3.kpack 61662389921c5c1d
tiles/L1_0_0.kpack a6f3789080149712
tiles/L1_0_1.kpack 6563efd4fa4e42ec
tiles/L1_1_0.kpack 1f12dbf5f253bdf1
tiles/L1_1_1.kpack 0d4d6a39ed23523a
tiles/L2_0_0.kpack 89167dd1a3e4f251
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
