//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the stage whose output changed (`stage_version`
//! in `bake/src/pipeline/mod.rs`), which keeps stale cache entries from being used.

use kiln_e2e::tiny_bake;
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack 4a30d186d5f3780b
tiles/L0_0_0.kpack f67fe0d70ed6efc4
tiles/L0_0_1.kpack da8ce7250cf1a3a8
tiles/L0_0_2.kpack e759cdd6ebf7fc40
tiles/L0_0_3.kpack 0a28b3429de5edb3
tiles/L0_1_0.kpack a8605388abf7315a
tiles/L0_1_1.kpack 3d0b7086006148be
tiles/L0_1_2.kpack 066e6e53ff13a651
tiles/L0_1_3.kpack 81cbf31074984abf
tiles/L0_2_0.kpack 5c2ab4b8ca62479e
tiles/L0_2_1.kpack db3999cf51c35c18
tiles/L0_2_2.kpack 0ee3d1d979d657a8
tiles/L0_2_3.kpack 918a20b5ba02b745
tiles/L0_3_0.kpack 0953dd7fa4581faa
tiles/L0_3_1.kpack 00aa98f1000b28f7
tiles/L0_3_2.kpack 212c42d5561bd087
tiles/L0_3_3.kpack 56a403ab410ff342
tiles/L1_0_0.kpack 2cb1513909795ce5
tiles/L1_0_1.kpack a684f90aa2236687
tiles/L1_1_0.kpack 6ea701e05b584f21
tiles/L1_1_1.kpack bc3f4a2048ec9d31
tiles/L2_0_0.kpack 6237f01bc3ddde7c
";

fn pack_hashes(dir: &std::path::Path) -> String {
    let mut files: Vec<String> = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                files.push(format!("{rel} {:016x}\n", xxh3_64(&std::fs::read(&p).unwrap())));
            }
        }
    }
    files.sort();
    files.concat()
}

#[test]
fn the_tiny_worlds_packs_are_the_pinned_bytes() {
    let actual = pack_hashes(tiny_bake());
    assert!(
        actual == TINY_PACKS,
        "the tiny world's packs changed. If that is deliberate, bump the changed stage's version and pin the new \
         hashes:\n{actual}"
    );
}
