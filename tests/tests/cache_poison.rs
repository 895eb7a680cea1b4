//! Cache entries whose header and checksum are consistent but whose contents are wrong (another
//! item's artifact, written under this key): each is reported, rebuilt, and never written out.

use std::fs;
use std::path::{Path, PathBuf};

use kiln_bake::pipeline::{bake, BakeOptions, BakeReport};
use kiln_bake::world::load_world;
use kiln_e2e::{files_under, repo_root, scratch};
use xxhash_rust::xxh3::xxh3_64;

/// The store's entry header: magic, key, payload length, xxh3-64 of the payload (cache/src/store.rs).
const HEADER: usize = 8 + 16 + 8 + 8;
const PACK_MAGIC: [u8; 8] = *b"\x89KPK\r\n\x1a\n";
/// The tile summary that precedes pack and geometry payloads.
const SUMMARY: usize = 36;

fn bake_into(out: &Path, cache: Option<&Path>) -> BakeReport {
    let w = load_world(&repo_root().join("worlds/tiny.toml")).unwrap();
    let opts = BakeOptions { cache: cache.map(Path::to_owned), ..BakeOptions::new(out.to_owned()) };
    bake(&w, &opts, &kiln_bake::pipeline::progress::NoProgress).unwrap()
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Pack,
    Geometry,
    Lighting,
}

/// What a payload is, from its layout: a pack is a tile summary then the pack's bytes; a product's
/// output (pipeline/product.rs) is a summary flag, the summary if any, a section count and sections,
/// each beginning with its kind.
fn kind(p: &[u8]) -> Option<Kind> {
    if p.get(SUMMARY..SUMMARY + 8) == Some(&PACK_MAGIC[..]) {
        return Some(Kind::Pack);
    }
    let sections_at = match p.first()? {
        0 => 1,
        1 => 1 + SUMMARY,
        _ => return None,
    };
    match p.get(sections_at + 4..sections_at + 8)? {
        b"TMSH" => Some(Kind::Geometry),
        b"VXIR" => Some(Kind::Lighting),
        _ => None,
    }
}

/// Gives each entry of `kind` the payload of the next one of that kind, with a valid header and
/// checksum: every such entry is well-formed bytes of the wrong item. Returns how many.
fn poison(cache: &Path, which: &[Kind]) -> usize {
    let mut entries: Vec<(PathBuf, Vec<u8>, Kind)> = Vec::new();
    for d in fs::read_dir(cache.join("objects")).unwrap() {
        for f in fs::read_dir(d.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "entry") {
                let bytes = fs::read(&p).unwrap();
                if let Some(k) = kind(&bytes[HEADER..]).filter(|k| which.contains(k)) {
                    entries.push((p, bytes, k));
                }
            }
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut count = 0;
    for k in which {
        let group: Vec<&(PathBuf, Vec<u8>, Kind)> = entries.iter().filter(|e| e.2 == *k).collect();
        assert!(group.len() > 1, "{k:?}: need two entries to swap, found {}", group.len());
        for (i, (path, bytes, _)) in group.iter().enumerate() {
            let other = &group[(i + 1) % group.len()].1[HEADER..];
            let mut e = bytes[..24].to_vec();
            e.extend_from_slice(&(other.len() as u64).to_le_bytes());
            e.extend_from_slice(&xxh3_64(other).to_le_bytes());
            e.extend_from_slice(other);
            fs::write(path, e).unwrap();
            count += 1;
        }
    }
    count
}

fn computed(r: &BakeReport, stage: &str) -> usize {
    r.tallies.iter().find(|(s, _)| *s == stage).map_or(0, |(_, t)| t.computed)
}

#[test]
fn a_poisoned_cache_entry_is_reported_rebuilt_and_never_written_out() {
    let dir = scratch("cache-poison");
    let cache = dir.join("cache");
    let cold = bake_into(&dir.join("cold"), Some(&cache));
    bake_into(&dir.join("ref"), None);
    let reference = files_under(&dir.join("ref/tiny"));
    assert_eq!(files_under(&dir.join("cold/tiny")), reference);

    // Every pack entry holds another tile's pack: all refused and reassembled, while the geometry
    // and lighting they are assembled from are still good hits (no false refusal).
    let packs = poison(&cache, &[Kind::Pack]);
    assert_eq!(packs, cold.tiles);
    let r = bake_into(&dir.join("packs"), Some(&cache));
    let refused = r.cache_warnings.iter().filter(|w| w.contains("not a well-formed pack artifact")).count();
    assert_eq!(refused, packs, "{:#?}", r.cache_warnings);
    assert_eq!(computed(&r, "pack"), packs);
    assert_eq!(computed(&r, "geometry") + computed(&r, "tile lighting"), 0, "{:?}", r.tallies);
    assert_eq!(files_under(&dir.join("packs/tiny")), reference);

    // Now geometry and lighting too (packs again, so that they are looked up).
    let n = poison(&cache, &[Kind::Pack, Kind::Geometry, Kind::Lighting]);
    let r = bake_into(&dir.join("all"), Some(&cache));
    for stage in ["pack", "geometry", "tile lighting"] {
        let refused = r.cache_warnings.iter().filter(|w| w.contains(&format!("not a well-formed {stage} artifact"))).count();
        assert!(refused > 0, "{stage}: {:#?}", r.cache_warnings);
    }
    assert!(r.cache_warnings.len() <= n, "each bad entry reported once: {:#?}", r.cache_warnings);
    assert_eq!(files_under(&dir.join("all/tiny")), reference, "output byte-identical to a --no-cache bake");

    // The rebuilt entries are good: the next bake is all hits.
    let r = bake_into(&dir.join("again"), Some(&cache));
    assert!(r.cache_warnings.is_empty(), "{:#?}", r.cache_warnings);
    assert_eq!(r.tallies.iter().map(|(_, t)| t.computed).sum::<usize>(), 0, "{:?}", r.tallies);
    assert_eq!(files_under(&dir.join("again/tiny")), reference);
}
