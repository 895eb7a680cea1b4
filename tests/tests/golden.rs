//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack ebd1df5b26e2b809
tiles/L0_0_0.kpack 53b6e83ca048b45b
tiles/L0_0_1.kpack 366af0b712316c8f
tiles/L0_0_2.kpack 166dafb5c1ad6960
tiles/L0_0_3.kpack 0f3a01b9e70a6b92
tiles/L0_1_0.kpack ac71be6b000d7c8f
tiles/L0_1_1.kpack 89504487e498d74c
tiles/L0_1_2.kpack 162e33fd25b8f730
tiles/L0_1_3.kpack 1b70b1a96dd2a14f
tiles/L0_2_0.kpack 7954eec3a4964f25
tiles/L0_2_1.kpack 092658ef256ee631
tiles/L0_2_2.kpack 946a603271ab5f5c
tiles/L0_2_3.kpack c76691226434a7d1
tiles/L0_3_0.kpack 355df34556af4ae1
tiles/L0_3_1.kpack dfcdbb7a344e587a
tiles/L0_3_2.kpack b032fabab5a02d8e
tiles/L0_3_3.kpack ec0dca2541abeed1
tiles/L1_0_0.kpack 35fd2bccbd544b30
tiles/L1_0_1.kpack c7c65b06405b4a1c
tiles/L1_1_0.kpack 40c1279c5b9bfa35
tiles/L1_1_1.kpack a272befc44ded80b
tiles/L2_0_0.kpack f4e5cd894be1b24e
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
