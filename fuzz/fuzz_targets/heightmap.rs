//! The heightmap loader: any bytes as a PNG, and as a headerless raw image whose width and height
//! are the input's first eight bytes (so lying and wrapping sizes are explored too).
#![no_main]

use kiln_bake::world::Heightmap;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(map) = Heightmap::from_png(data) {
        let _ = map.sample(0.5, 0.5);
    }
    if data.len() >= 8 {
        let width = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        let height = u32::from_le_bytes([data[4], data[5], data[6], data[7]]);
        if let Ok(map) = Heightmap::from_r16(&data[8..], width, height) {
            let _ = map.sample(0.25, 0.75);
        }
    }
});
