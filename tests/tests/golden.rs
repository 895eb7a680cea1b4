//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack f4332c350d890c70
tiles/L0_0_0.kpack 2751efa7b9ed913f
tiles/L0_0_1.kpack a88edd8440a5152c
tiles/L0_0_2.kpack eec2fad01d5dff6b
tiles/L0_0_3.kpack d38e2a98fbedbe1b
tiles/L0_1_0.kpack c790571d2c758966
tiles/L0_1_1.kpack 4ea8281dee71d168
tiles/L0_1_2.kpack d81ff0a9ffc318e4
tiles/L0_1_3.kpack 8732bdc9b84eefea
tiles/L0_2_0.kpack 5a008633f004306d
tiles/L0_2_1.kpack a5a1d834617e741c
tiles/L0_2_2.kpack d9ce966570e5e77f
tiles/L0_2_3.kpack f1cf6956a61a3695
tiles/L0_3_0.kpack b5cb42cac3a3eac7
tiles/L0_3_1.kpack adb06de756db06e5
tiles/L0_3_2.kpack 233d2ca1bbc4bc7a
tiles/L0_3_3.kpack eaff164e553d31b7
tiles/L1_0_0.kpack d5b1d4fbaeadcdf8
tiles/L1_0_1.kpack 2e1b1a354f5a7809
tiles/L1_1_0.kpack 5c9233565ca72f40
tiles/L1_1_1.kpack 98aca962d4acb45a
tiles/L2_0_0.kpack 4a306a3eb8d483b2
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
