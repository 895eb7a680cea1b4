//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the product whose output changed (the
//! `*_VERSION` constant beside it in `bake/src/pipeline/`), which keeps stale cache entries from
//! being used.

use kiln_e2e::{files_under, tiny_bake};
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack c976b1cb8c4461e2
tiles/L0_0_0.kpack 808fccfade521a4d
tiles/L0_0_1.kpack b796bc1a8998d037
tiles/L0_0_2.kpack 5b591b65a22a3c61
tiles/L0_0_3.kpack 9d646502e6e5dcd0
tiles/L0_1_0.kpack b48b013390a0728b
tiles/L0_1_1.kpack 9c524f87733dae95
tiles/L0_1_2.kpack 0fe1652a3fa9e959
tiles/L0_1_3.kpack 803ec13f3f9a6b8e
tiles/L0_2_0.kpack 4b369f0490c908a5
tiles/L0_2_1.kpack 80a1f43e3dc1023e
tiles/L0_2_2.kpack 27e9779acc4c05c6
tiles/L0_2_3.kpack 61c7ce872f8e9051
tiles/L0_3_0.kpack 16ba5e7ba5f05fdd
tiles/L0_3_1.kpack d052e9ecf49053ab
tiles/L0_3_2.kpack 3666e28fc4f07e52
tiles/L0_3_3.kpack c747a51c4584955b
tiles/L1_0_0.kpack d8134170efd5b064
tiles/L1_0_1.kpack 2c7828c45195c6c0
tiles/L1_1_0.kpack 311a6ad3a1df0557
tiles/L1_1_1.kpack 1e52c3447c294b13
tiles/L2_0_0.kpack 6a2782feafe0b4e6
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
