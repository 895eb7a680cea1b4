//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack e48482871069d839
tiles/L0_0_0.kpack c8236aefb381313c
tiles/L0_0_1.kpack 4632df3a75360554
tiles/L0_0_2.kpack e6243d60e904a77f
tiles/L0_0_3.kpack 11670919d9775f69
tiles/L0_1_0.kpack f47bac672deba373
tiles/L0_1_1.kpack 07f59f9f8d3d5cd3
tiles/L0_1_2.kpack 04c2a350f906c00b
tiles/L0_1_3.kpack a7e8503d661ca1e1
tiles/L0_2_0.kpack 17e83790b5f7fb57
tiles/L0_2_1.kpack 1c0fed2aa60188f3
tiles/L0_2_2.kpack e8c2917f000ba793
tiles/L0_2_3.kpack 1fe2ba6470d7460a
tiles/L0_3_0.kpack 5acaf95a7aaa4559
tiles/L0_3_1.kpack c875873ff5e07bbc
tiles/L0_3_2.kpack e3c90d4383b2aa3b
tiles/L0_3_3.kpack 8f28bb3325ddd2e3
tiles/L1_0_0.kpack c37a29acd50f3c49
tiles/L1_0_1.kpack 9c4ebbc02d4dcad3
tiles/L1_1_0.kpack 7dd83a46413ab89c
tiles/L1_1_1.kpack 6917e19135965fa3
tiles/L2_0_0.kpack 476b5bf030a84ec6
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
