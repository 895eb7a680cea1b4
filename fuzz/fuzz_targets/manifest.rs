//! The manifest reader: any bytes as a manifest pack and as a raw `MNFT` payload, then as the
//! `manifest.kpack` of a bake directory that `kiln verify` checks (its tiles absent), which is
//! where a manifest's claimed tile grid meets the files actually present.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use kiln_formats::sections::{EmbeddedFiles, Manifest};
use kiln_formats::{Pack, Section};
use libfuzzer_sys::fuzz_target;

fn bake_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kiln-fuzz-manifest-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("tiles")).expect("create the fuzz bake directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let _ = Manifest::decode(data);
    let _ = EmbeddedFiles::decode(data);
    let Ok(pack) = Pack::from_bytes(data.to_vec()) else {
        return;
    };
    if pack.require::<Manifest>().is_err() {
        return;
    }
    let _ = pack.get::<EmbeddedFiles>();
    // Only a manifest that decodes reaches verify's cross-checks: the rest was covered above.
    let dir = bake_dir();
    if std::fs::write(dir.join("manifest.kpack"), data).is_ok() {
        let _ = kiln_bake::cli::verify::check(dir);
    }
});
