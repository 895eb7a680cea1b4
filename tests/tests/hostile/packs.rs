//! Hostile bakes for `kiln verify`, `inspect`, `diff` and `export`: copies of a real bake of
//! `worlds/tiny.toml` with one file truncated, bit-flipped, overwritten, removed, or rebuilt with
//! valid checksums around lying counts, dimensions and non-finite values.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_formats::sections::{IrradianceGrid, Manifest, TerrainMesh, VertexAo, VertexIrradiance};
use kiln_formats::{Pack, PackBuilder, Section, SectionKind};

use super::rng::Rng;
use super::runner::{Case, Expect};

/// How the library itself judges a pack's bytes: the oracle the commands must agree with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Health {
    /// Absent, or not a pack at all (`Pack::from_bytes` refuses it).
    Unreadable,
    /// Opens, but a section fails its checksum or does not decode.
    CorruptSection,
    /// Every section decodes, but a planted lie breaks a cross-section invariant.
    Inconsistent,
    /// Every section decodes and nothing known is wrong (possibly a harmless change).
    Sound,
}

fn health(bytes: Option<&[u8]>) -> Health {
    match bytes.map(|b| Pack::from_bytes(b.to_vec())) {
        None | Some(Err(_)) => Health::Unreadable,
        Some(Ok(p)) if !p.verify().is_empty() => Health::CorruptSection,
        Some(Ok(_)) => Health::Sound,
    }
}

/// Whether a section that `export` reads (the manifest, the mesh and its per-vertex fields) fails
/// its checksum or does not decode.
fn export_reads_corrupt(bytes: Option<&[u8]>) -> bool {
    let Some(Ok(pack)) = bytes.map(|b| Pack::from_bytes(b.to_vec())) else {
        return true;
    };
    let read = [Manifest::KIND, TerrainMesh::KIND, VertexAo::KIND, VertexIrradiance::KIND];
    pack.sections().iter().enumerate().filter(|(_, e)| read.contains(&e.kind)).any(|(i, e)| match pack.raw_section(i) {
        Err(_) => true,
        Ok(raw) => kiln_formats::sections::section_type(e.kind).is_some_and(|t| (t.summarize)(&raw).is_err()),
    })
}

/// A corrupted copy of the bake: the file changed and its new bytes (`None`: removed), plus any
/// other file rewritten to keep the lie consistent (the manifest's hash of a rebuilt tile).
struct Mutation {
    what: String,
    file: String,
    bytes: Option<Vec<u8>>,
    extra: Vec<(String, Vec<u8>)>,
    /// A planted lie the library cannot see by itself.
    lie: bool,
}

fn rebuild(pack_bytes: &[u8], mut edit: impl FnMut(SectionKind, Vec<u8>) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
    let pack = Pack::from_bytes(pack_bytes.to_vec()).ok()?;
    let mut b = PackBuilder::new(pack.header().writer_version);
    for (i, e) in pack.sections().iter().enumerate() {
        let raw = pack.raw_section(i).ok()?;
        let raw = edit(e.kind, raw)?;
        b.add_raw(e.kind, e.required(), raw).ok()?;
    }
    b.to_bytes().ok()
}

fn typed<T: Section>(f: impl Fn(&mut T)) -> impl FnMut(SectionKind, Vec<u8>) -> Option<Vec<u8>> {
    move |kind, raw| {
        if kind != T::KIND {
            return Some(raw);
        }
        let mut v = T::decode(&raw).ok()?;
        f(&mut v);
        v.encode().ok()
    }
}

/// The manifest with `node_path`'s hash and length updated to `bytes`, so only the planted lie remains.
fn rehash_manifest(bake: &Path, node_path: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    let manifest_bytes = fs::read(bake.join("manifest.kpack")).ok()?;
    rebuild(
        &manifest_bytes,
        typed(|m: &mut Manifest| {
            for n in m.nodes.iter_mut().filter(|n| n.path == node_path) {
                n.content_hash = xxhash_rust::xxh3::xxh3_64(bytes);
                n.file_len = bytes.len() as u64;
            }
        }),
    )
}

fn mutations(bake: &Path, rng: &mut Rng) -> Vec<Mutation> {
    let manifest = kiln_e2e::manifest(bake);
    let tile0 = manifest.node(0, 0, 0).expect("L0 (0,0) in the tiny bake").path.clone();
    let others: Vec<String> = manifest.nodes.iter().map(|n| n.path.clone()).filter(|p| *p != tile0).collect();
    let mut files = vec!["manifest.kpack".to_string(), tile0.clone()];
    files.push(others[rng.below(others.len())].clone());
    let mut out = Vec::new();
    let m = |what: String, file: &str, bytes: Option<Vec<u8>>| Mutation { what, file: file.to_string(), bytes, extra: vec![], lie: false };

    for file in &files {
        let orig = fs::read(bake.join(file)).expect("read baked pack");
        let len = orig.len();
        out.push(m("removed".into(), file, None));
        // Truncations: empty, inside the header, inside the table, and at random points.
        let mut cuts = vec![0, 1, 8, 47, 48, 60, 95, 96, len - 1];
        cuts.extend((0..14).map(|_| rng.below(len)));
        for cut in cuts {
            out.push(m(format!("truncated to {cut} of {len} bytes"), file, Some(orig[..cut].to_vec())));
        }
        // Bit flips: anywhere, and concentrated in the header and section table.
        for i in 0..40 {
            let mut b = orig.clone();
            let span = if i % 2 == 0 { len } else { len.min(48 + 48 * 8) };
            let flips = 1 + rng.below(if i % 5 == 0 { 16 } else { 2 });
            let mut at = Vec::new();
            for _ in 0..flips {
                let (o, bit) = (rng.below(span), rng.below(8));
                b[o] ^= 1 << bit;
                at.push(o);
            }
            if b != orig {
                out.push(m(format!("bits flipped at {at:?}"), file, Some(b)));
            }
        }
        // Header and table fields overwritten with lying values (counts, lengths, offsets).
        for _ in 0..16 {
            let mut b = orig.clone();
            let o = rng.below(len.min(48 + 48 * 8).saturating_sub(8)) & !3;
            let v: u64 = [0, 1, u64::MAX, u32::MAX as u64, 1 << 31, 1 << 40, len as u64 * 2][rng.below(7)];
            let width = if rng.below(2) == 0 { 4 } else { 8 };
            b[o..o + width].copy_from_slice(&v.to_le_bytes()[..width]);
            if b != orig {
                out.push(m(format!("{width} bytes at {o} set to {v:#x}"), file, Some(b)));
            }
        }
        // Grown: trailing garbage and a doubled file.
        let mut grown = orig.clone();
        grown.extend_from_slice(&[0xAB; 100]);
        out.push(m("100 trailing bytes".into(), file, Some(grown)));
        out.push(m("doubled".into(), file, Some([orig.clone(), orig.clone()].concat())));
        // Raw section payloads with lying words, re-checksummed, so the decoders see the lie.
        for _ in 0..14 {
            let (word, v) = (rng.below(12), [0u32, 1, u32::MAX, 0x8000_0000, 0x1000_0000, 0xFFFF][rng.below(6)]);
            let target = rng.below(8);
            let mut n = 0;
            let Some(b) = rebuild(&orig, |_, mut raw| {
                n += 1;
                if n - 1 == target && raw.len() >= 4 * word + 4 {
                    raw[4 * word..4 * word + 4].copy_from_slice(&v.to_le_bytes());
                }
                Some(raw)
            }) else {
                continue;
            };
            if b == orig {
                continue;
            }
            let mut mu = m(format!("section #{target} word {word} set to {v:#x}, re-checksummed"), file, Some(b.clone()));
            if file != "manifest.kpack" {
                mu.extra = rehash_manifest(bake, file, &b).map(|mb| vec![("manifest.kpack".to_string(), mb)]).unwrap_or_default();
            }
            out.push(mu);
        }
    }

    // Typed lies inside the tile, with the manifest rehashed: only cross-section checks can see them.
    let tile_bytes = fs::read(bake.join(&tile0)).expect("read tile");
    let mut lie = |what: &str, b: Option<Vec<u8>>| {
        if let Some(b) = b {
            let extra = rehash_manifest(bake, &tile0, &b).map(|mb| vec![("manifest.kpack".to_string(), mb)]).unwrap_or_default();
            out.push(Mutation { what: what.into(), file: tile0.clone(), bytes: Some(b), extra, lie: true });
        }
    };
    lie(
        "VXIR one value short",
        rebuild(
            &tile_bytes,
            typed(|v: &mut VertexIrradiance| {
                v.0.pop();
            }),
        ),
    );
    lie("VXIR one value extra", rebuild(&tile_bytes, typed(|v: &mut VertexIrradiance| v.0.push([1.0; 3]))));
    lie("VXIR empty", rebuild(&tile_bytes, typed(|v: &mut VertexIrradiance| v.0.clear())));
    lie(
        "VXAO one value short",
        rebuild(
            &tile_bytes,
            typed(|v: &mut VertexAo| {
                v.0.pop();
            }),
        ),
    );
    lie("VXAO doubled", rebuild(&tile_bytes, typed(|v: &mut VertexAo| v.0 = v.0.repeat(2))));
    lie("TMSH lattice voxel size NaN", rebuild(&tile_bytes, typed(|t: &mut TerrainMesh| t.lattice.voxel_size = f32::NAN)));
    lie("TMSH lattice voxel size inf", rebuild(&tile_bytes, typed(|t: &mut TerrainMesh| t.lattice.voxel_size = f32::INFINITY)));
    lie("TMSH lattice voxel size 1e38", rebuild(&tile_bytes, typed(|t: &mut TerrainMesh| t.lattice.voxel_size = 1e38)));
    lie("TMSH lattice origin near i32::MAX", rebuild(&tile_bytes, typed(|t: &mut TerrainMesh| t.lattice.origin = [i32::MAX - 5; 3])));
    // IRVL dimensions with raw bytes (the encoder refuses inconsistent grids): dims are words 6..9.
    for (what, dims) in [
        ("IRVL dims zero", [0u32, 4, 4]),
        ("IRVL dims overflowing", [u32::MAX, u32::MAX, 2]),
        ("IRVL dims 2^21 each", [1 << 21, 1 << 21, 1 << 21]),
        ("IRVL dims one larger", [0, 0, 0]),
    ] {
        let b = rebuild(&tile_bytes, |kind, mut raw| {
            if kind == IrradianceGrid::KIND && raw.len() >= 36 {
                for (k, d) in dims.iter().enumerate() {
                    let cur = u32::from_le_bytes(raw[24 + 4 * k..28 + 4 * k].try_into().unwrap());
                    let d = if what.ends_with("larger") { cur + 1 } else { *d };
                    raw[24 + 4 * k..28 + 4 * k].copy_from_slice(&d.to_le_bytes());
                }
            }
            Some(raw)
        });
        lie(what, b);
    }
    lie("IRVL bounds NaN", rebuild(&tile_bytes, typed(|g: &mut IrradianceGrid| g.min = [f32::NAN; 3])));

    // Manifest lies with valid checksums: huge grids, node lists, unsafe paths, non-finite values.
    let man_bytes = fs::read(bake.join("manifest.kpack")).unwrap();
    let mut mlie = |what: &str, f: &dyn Fn(&mut Manifest)| {
        if let Some(b) = rebuild(&man_bytes, typed(f)) {
            out.push(Mutation { what: what.into(), file: "manifest.kpack".into(), bytes: Some(b), extra: vec![], lie: true });
        }
    };
    mlie("manifest claims a 2^30-tile grid", &|m| m.tiles_per_axis = [1 << 30, 1 << 30]);
    mlie("manifest claims 2^31 tiles and 32 levels", &|m| {
        m.tiles_per_axis = [1 << 31, 1 << 31];
        m.levels = 32;
    });
    mlie("manifest volume dims u32::MAX", &|m| m.volume_dims = [u32::MAX; 3]);
    mlie("manifest tile_voxels 0", &|m| m.tile_voxels = 0);
    mlie("manifest voxel size NaN", &|m| m.voxel_size = f32::NAN);
    mlie("manifest bounds inf", &|m| m.bounds_max = [f32::INFINITY; 3]);
    mlie("manifest without nodes", &|m| m.nodes.clear());
    mlie("manifest nodes duplicated", &|m| m.nodes = [m.nodes.clone(), m.nodes.clone()].concat());
    mlie("manifest node path ../outside/keep.txt", &|m| m.nodes[0].path = "../../outside/keep.txt".into());
    mlie("manifest node path absolute", &|m| m.nodes[0].path = "/etc/passwd".into());
    mlie("manifest node path a directory", &|m| m.nodes[0].path = "tiles".into());
    mlie("manifest node file_len u64::MAX", &|m| m.nodes[0].file_len = u64::MAX);
    mlie("manifest node vertex count u32::MAX", &|m| m.nodes[0].vertex_count = u32::MAX);
    mlie("manifest node bounds NaN", &|m| m.nodes[0].bounds_min = [f32::NAN; 3]);
    mlie("manifest node geometric error -inf", &|m| m.nodes[0].geometric_error = f32::NEG_INFINITY);
    mlie("manifest world name with ../", &|m| m.world_name = "../../x".into());
    out
}

fn basename(file: &str) -> String {
    Path::new(file).file_name().unwrap().to_string_lossy().into_owned()
}

/// Every pack case: each corrupted copy of the bake under `verify`, and in turn under `inspect`,
/// `diff` against the sound bake, and `export`.
pub fn cases(bake: &Path, rng: &mut Rng) -> Vec<Case> {
    let bake_dir: PathBuf = bake.to_owned();
    let manifest = kiln_e2e::manifest(bake);
    let tile0 = manifest.node(0, 0, 0).unwrap().path.clone();
    let mut cases = Vec::new();
    for (i, mu) in mutations(bake, rng).into_iter().enumerate() {
        let h = match health(mu.bytes.as_deref()) {
            Health::Sound if mu.lie => Health::Inconsistent,
            h => h,
        };
        let name = basename(&mu.file);
        let mu = Arc::new(mu);
        let prep = {
            let mu = Arc::clone(&mu);
            move |input: &Path| {
                let bake = input.join("bake");
                let target = bake.join(&mu.file);
                match &mu.bytes {
                    None => fs::remove_file(&target).expect("remove a pack"),
                    Some(b) => fs::write(&target, b).expect("write a corrupt pack"),
                }
                for (f, b) in &mu.extra {
                    fs::write(bake.join(f), b).expect("write a rehashed manifest");
                }
            }
        };
        let what = format!("{} {}", mu.file, mu.what);
        let case = |cmd: &str, args: Vec<String>, expect: Expect| Case {
            name: format!("pack#{i} {cmd}: {what}"),
            files: vec![],
            tree: Some((bake_dir.clone(), "bake".into())),
            prepare: Some(Box::new(prep.clone())),
            args,
            expect,
            input_bytes: None,
        };
        // verify: every change to a tile breaks the manifest's content hash; a manifest change is
        // harmless only if the library reads the same manifest back.
        let benign_manifest = mu.file == "manifest.kpack"
            && h == Health::Sound
            && mu.bytes.as_deref().and_then(|b| Pack::from_bytes(b.to_vec()).ok()).and_then(|p| p.require::<Manifest>().ok()).as_ref()
                == Some(&manifest);
        // A raw lie re-checksummed under a rehashed manifest may be a harmless change of values.
        let rehashed_sound = !mu.extra.is_empty() && h == Health::Sound;
        let verify_codes: &[i32] = if benign_manifest || rehashed_sound { &[0, 1] } else { &[1] };
        // A manifest's lie about a node is rightly reported against that node's pack, saying
        // what the manifest claims.
        let culprit = if mu.file == "manifest.kpack" { "manifest".to_string() } else { name.clone() };
        cases.push(case("verify", vec!["verify".into(), "{in}/bake".into()], Expect::codes(verify_codes, &[&culprit])));

        let s = |v: &str| v.to_string();
        let (cmd, args, expect) = match i % 3 {
            0 => {
                let codes: &[i32] = match h {
                    // An unreadable pack is an error (2) or reported as a corrupt pack (1).
                    Health::Unreadable => &[1, 2],
                    Health::CorruptSection => &[1],
                    Health::Inconsistent => &[0, 1],
                    Health::Sound => &[0],
                };
                ("inspect", vec![s("inspect"), format!("{{in}}/bake/{}", mu.file)], Expect::codes(codes, &[&name]))
            }
            1 => {
                let codes: &[i32] = match h {
                    // Metadata is judged only through the content it follows from (README).
                    Health::Inconsistent if mu.file == "manifest.kpack" => &[0, 1, 2],
                    Health::Unreadable | Health::CorruptSection | Health::Inconsistent => &[1, 2],
                    Health::Sound => &[0, 1, 2],
                };
                let good = bake_dir.display().to_string();
                ("diff", vec![s("diff"), good, s("{in}/bake")], Expect::codes(codes, &[&name]))
            }
            _ => {
                let reads = mu.file == tile0 || mu.file == "manifest.kpack";
                let codes: &[i32] = match h {
                    _ if !reads => &[0, 2],
                    _ if export_reads_corrupt(mu.bytes.as_deref()) => &[2],
                    _ => &[0, 2],
                };
                let args = vec![s("export"), s("{in}/bake"), s("--tile"), s("0,0"), s("--format"), s("ply"), s("--out"), s("{out}/t.ply")];
                ("export", args, Expect::codes(codes, &["/in/bake"]))
            }
        };
        cases.push(case(cmd, args, expect));
    }
    cases
}
