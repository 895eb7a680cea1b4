//! `find_packs`: every `.kpack` under a directory, sorted, without following directory links.

use std::fs;
use std::path::PathBuf;

use kiln_formats::find_packs;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-find-packs-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn lists_packs_sorted_and_skips_other_files() {
    let dir = scratch("sorted");
    fs::create_dir_all(dir.join("tiles/deeper")).unwrap();
    for f in ["manifest.kpack", "tiles/L0_1_0.kpack", "tiles/L0_0_0.kpack", "tiles/deeper/x.kpack", "notes.txt", "tiles/L0_0_0.kpack.tmp"] {
        fs::write(dir.join(f), b"").unwrap();
    }
    let found: Vec<PathBuf> = find_packs(&dir).unwrap().into_iter().map(|p| p.strip_prefix(&dir).unwrap().to_owned()).collect();
    let expected: Vec<PathBuf> =
        ["manifest.kpack", "tiles/L0_0_0.kpack", "tiles/L0_1_0.kpack", "tiles/deeper/x.kpack"].iter().map(PathBuf::from).collect();
    assert_eq!(found, expected);
    // A file is its own list, whatever its name.
    assert_eq!(find_packs(&dir.join("notes.txt")).unwrap(), vec![dir.join("notes.txt")]);
    assert!(find_packs(&dir.join("missing")).is_err());
    fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn directory_links_are_not_followed_and_file_links_are_listed() {
    let dir = scratch("links");
    fs::create_dir_all(dir.join("a")).unwrap();
    fs::write(dir.join("a/t.kpack"), b"").unwrap();
    // A link to the parent would loop forever if followed.
    std::os::unix::fs::symlink(&dir, dir.join("a/loop")).unwrap();
    std::os::unix::fs::symlink(dir.join("a/t.kpack"), dir.join("link.kpack")).unwrap();
    let found = find_packs(&dir).unwrap();
    assert_eq!(found, vec![dir.join("a/t.kpack"), dir.join("link.kpack")]);
    fs::remove_dir_all(&dir).unwrap();
}
