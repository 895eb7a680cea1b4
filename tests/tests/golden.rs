//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack 1ebc2dbe55b067e2
tiles/L0_0_0.kpack 18e48ea3f3c3ce30
tiles/L0_0_1.kpack 3b73682106643b7a
tiles/L0_0_2.kpack 96ec584c897124fe
tiles/L0_0_3.kpack 32c02bb1d4421b28
tiles/L0_1_0.kpack 7f933ce6beb844e6
tiles/L0_1_1.kpack c425ceb1de9c94ed
tiles/L0_1_2.kpack 737476b0af916829
tiles/L0_1_3.kpack 0a1f0017106c0014
tiles/L0_2_0.kpack 5a72accdcce48bf4
tiles/L0_2_1.kpack 92f729d1d17deac7
tiles/L0_2_2.kpack f8b3d447a1bd0fca
tiles/L0_2_3.kpack 4fdfacd0a7a91688
tiles/L0_3_0.kpack 0d30d2bc20408ee8
tiles/L0_3_1.kpack b89e9544ba2df6e5
tiles/L0_3_2.kpack 24ce85ece656eac0
tiles/L0_3_3.kpack b7ce08e5605762d9
tiles/L1_0_0.kpack feb077249675c2db
tiles/L1_0_1.kpack a5aaf38fcc11e8e3
tiles/L1_1_0.kpack 047a139ecea432d4
tiles/L1_1_1.kpack 88f4c37bb95026f2
tiles/L2_0_0.kpack aeb4660baa044c46
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
