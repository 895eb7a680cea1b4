//! The world parser: any UTF-8 text through `World::from_str`, with referenced files resolved in a
//! directory holding a valid brush file and heightmaps (so `brushes.file = "b.toml"` and
//! `floor.file = "h.png"` reach their loaders).
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kiln_bake::world::World;
use libfuzzer_sys::fuzz_target;

fn base_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kiln-fuzz-world-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the fuzz base directory");
        let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        for name in ["b.toml", "h.png", "h.r16"] {
            std::fs::copy(seeds.join(name), dir.join(name)).expect("copy a fuzz seed file");
        }
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = World::from_str(text, Path::new("fuzz.toml"), base_dir());
});
