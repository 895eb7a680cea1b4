//! The brush-file parser: any UTF-8 text through `parse_brushes`.
#![no_main]

use std::path::Path;

use kiln_bake::world::parse_brushes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_brushes(text, Path::new("fuzz.brushes.toml"));
});
