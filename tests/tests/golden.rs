//! The tiny world's packs, pinned: every change of Kiln's output shows up here, so that it is made on
//! purpose, together with a bump of the version of the stage whose output changed (`stage_version`
//! in `bake/src/pipeline/mod.rs`), which keeps stale cache entries from being used.

use kiln_e2e::tiny_bake;
use xxhash_rust::xxh3::xxh3_64;

/// xxh3 of every pack of `worlds/tiny.toml`'s bake, by path inside the bake.
const TINY_PACKS: &str = "\
manifest.kpack bf90ac91ba481c67
tiles/L0_0_0.kpack 78a3c307d55d13d2
tiles/L0_0_1.kpack 90a30a89bc0ffd49
tiles/L0_0_2.kpack 52815853f6cb2493
tiles/L0_0_3.kpack c42359c36534b19b
tiles/L0_1_0.kpack 435ef78d6e72af0c
tiles/L0_1_1.kpack 86589a1c087df298
tiles/L0_1_2.kpack 9e9347b8bd9da676
tiles/L0_1_3.kpack 435e06d21a7d350a
tiles/L0_2_0.kpack 2fa57d4c2c9a6e28
tiles/L0_2_1.kpack 5e516e289aedc376
tiles/L0_2_2.kpack fbc391496e61df85
tiles/L0_2_3.kpack 408a573aa2a5f40f
tiles/L0_3_0.kpack f0fe439b29c1a071
tiles/L0_3_1.kpack d42e5980521165ae
tiles/L0_3_2.kpack 4698101b5b3e6bff
tiles/L0_3_3.kpack e8892b12ccb64642
tiles/L1_0_0.kpack ac9a12a6b70851f6
tiles/L1_0_1.kpack 9917391e9c5c88ff
tiles/L1_1_0.kpack 858b710e8bddc079
tiles/L1_1_1.kpack 4bc70f2e407fb58c
tiles/L2_0_0.kpack 2bfed670d452b4d9
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
