//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack b75f195d1f720249
tiles/L0_0_0.kpack ef74e73578c40311
tiles/L0_0_1.kpack 5a2a155e99dc6fff
tiles/L0_0_2.kpack 03c3a9a566dd286c
tiles/L0_0_3.kpack ff425a7d7ae536e7
tiles/L0_1_0.kpack 108d6cc8d0cc1382
tiles/L0_1_1.kpack e16cf83307c5bdae
tiles/L0_1_2.kpack f9126dfa2b343d00
tiles/L0_1_3.kpack bc14748f2214d9bd
tiles/L0_2_0.kpack c6f625d139ab6081
tiles/L0_2_1.kpack 5f06ddb6dbe8f7a7
tiles/L0_2_2.kpack 83ae6e19c246847d
tiles/L0_2_3.kpack c170768a4aaecbee
tiles/L0_3_0.kpack f78420a448d78e5e
tiles/L0_3_1.kpack faba0b5b446015e6
tiles/L0_3_2.kpack 7418d57e2b7a2a7f
tiles/L0_3_3.kpack 8fc3e605c8525fb4
tiles/L1_0_0.kpack 7f328986d3f31da9
tiles/L1_0_1.kpack e03e2434faaa96db
tiles/L1_1_0.kpack f63f68bea01e734c
tiles/L1_1_1.kpack 30fcabe6c165027d
tiles/L2_0_0.kpack 926a85ce865bc79f
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
