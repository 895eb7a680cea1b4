//! `kiln verify`, `inspect` and `diff` on hostile packs: corruptions with valid checksums that only
//! cross-section checks can see, a missing manifest, a manifest claiming a huge grid, a
//! decompression bomb (whose peak memory is measured in a child process), non-pack inputs and
//! tolerances that cannot be compared with.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kiln_e2e::{copy_dir, kiln, manifest, scratch, tiny_bake};
use kiln_formats::sections::{IrradianceGrid, Manifest, PackInfo, PackKind, TerrainMesh, VertexIrradiance};
use kiln_formats::{Pack, PackBuilder, Section, SectionKind};

/// Rewrites the pack at `path` with every section passed through `edit` (valid checksums result).
fn rewrite(path: &Path, edit: impl Fn(SectionKind, Vec<u8>) -> Vec<u8>) {
    let pack = Pack::open(path).unwrap();
    let mut b = PackBuilder::new(pack.header().writer_version);
    for (i, e) in pack.sections().iter().enumerate() {
        b.add_raw(e.kind, e.required(), edit(e.kind, pack.raw_section(i).unwrap())).unwrap();
    }
    fs::write(path, b.to_bytes().unwrap()).unwrap();
}

fn problems_of(dir: &Path) -> Vec<String> {
    kiln_bake::cli::verify::check(dir).unwrap().0
}

fn assert_reported(problems: &[String], file: &Path, what: &str) {
    let name = file.display().to_string();
    assert!(problems.iter().any(|p| p.contains(&name) && p.contains(what)), "no '{what}' problem for {name} in {problems:#?}");
}

#[test]
fn verify_reports_cross_section_corruptions_with_valid_checksums() {
    let copy = scratch("verify-cross");
    copy_dir(tiny_bake(), &copy);
    let m = manifest(&copy);
    let tile = |i: usize| copy.join(&m.nodes[i].path);
    // 1: one irradiance value more than there are vertices.
    rewrite(&tile(0), |k, raw| {
        if k != VertexIrradiance::KIND {
            return raw;
        }
        let mut v = VertexIrradiance::decode(&raw).unwrap();
        v.0.push([1.0; 3]);
        v.encode().unwrap()
    });
    // 2: an irradiance volume with a zero dimension; 3: one whose dimensions overflow a u64 product.
    for (i, dims) in [(1, [0u32, 4, 4]), (2, [1 << 31, 1 << 31, 4])] {
        rewrite(&tile(i), |k, mut raw| {
            if k == IrradianceGrid::KIND {
                for (a, d) in dims.iter().enumerate() {
                    raw[24 + 4 * a..28 + 4 * a].copy_from_slice(&d.to_le_bytes());
                }
                raw.truncate(if dims[0] == 0 { 36 } else { raw.len() });
            }
            raw
        });
    }
    // 4: a mesh whose lattice puts positions at infinity.
    rewrite(&tile(3), |k, mut raw| {
        if k == TerrainMesh::KIND {
            raw[16..20].copy_from_slice(&3e38f32.to_le_bytes());
        }
        raw
    });
    // 5: a mesh lifted above the bounds the manifest gives for it.
    rewrite(&tile(4), |k, raw| {
        if k != TerrainMesh::KIND {
            return raw;
        }
        let mut mesh = TerrainMesh::decode(&raw).unwrap();
        let lift = 64.0 * mesh.lattice.step();
        for p in &mut mesh.positions {
            p[2] += lift;
        }
        mesh.encode().unwrap()
    });
    let problems = problems_of(&copy);
    assert_reported(&problems, &tile(4), "outside the manifest's bounds");
    assert_reported(&problems, &tile(0), "VXIR");
    assert_reported(&problems, &tile(0), "values for");
    assert_reported(&problems, &tile(1), "at least 1");
    assert_reported(&problems, &tile(2), "exceed the limit");
    assert_reported(&problems, &tile(3), "non-finite");
    assert_eq!(kiln(&["verify", copy.to_str().unwrap()]), 1);
    // inspect describes them all but says they are corrupt.
    assert_eq!(kiln(&["inspect", tile(0).to_str().unwrap()]), 1);
    assert_eq!(kiln(&["inspect", "--json", copy.to_str().unwrap()]), 1);
}

#[test]
fn verify_reports_a_missing_manifest() {
    let copy = scratch("verify-no-manifest");
    copy_dir(tiny_bake(), &copy);
    fs::remove_file(copy.join("manifest.kpack")).unwrap();
    let problems = problems_of(&copy);
    assert_reported(&problems, &copy.join("manifest.kpack"), "missing");
    assert_eq!(kiln(&["verify", copy.to_str().unwrap()]), 1);
    // An empty directory is not a bake either.
    let empty = scratch("verify-empty");
    assert_eq!(kiln(&["verify", empty.to_str().unwrap()]), 1);
}

#[test]
fn a_manifest_claiming_a_huge_grid_is_refused_without_walking_it() {
    let copy = scratch("verify-huge-grid");
    copy_dir(tiny_bake(), &copy);
    let path = copy.join("manifest.kpack");
    let claim = |tiles: [u32; 2], levels: u32| {
        rewrite(&path, |k, raw| {
            if k != Manifest::KIND {
                return raw;
            }
            let mut m: Manifest = Manifest::decode(&raw).unwrap();
            m.tiles_per_axis = tiles;
            m.levels = levels;
            // A consistent lie: the volume grows with the grid it claims.
            m.volume_dims = [tiles[0].saturating_mul(m.tile_voxels), tiles[1].saturating_mul(m.tile_voxels), m.volume_dims[2]];
            m.encode().unwrap()
        })
    };
    // Within the decoder's limits but far more tiles than listed: one line, at once.
    claim([1 << 16, 1 << 16], 17);
    let clock = std::time::Instant::now();
    let problems = problems_of(&copy);
    assert!(clock.elapsed().as_secs() < 5);
    assert_reported(&problems, &path, "needs 5726623061 tiles but the manifest lists");
    assert!(problems.len() < 50, "{}", problems.len());
    // Beyond the limits: the manifest itself is refused.
    claim([1 << 31, 1 << 31], 32);
    assert_reported(&problems_of(&copy), &path, "power of two in");
    assert_eq!(kiln(&["verify", copy.to_str().unwrap()]), 1);
}

/// A zstd frame that declares `size` zero bytes, made of run-length blocks (4 bytes per 128 KiB):
/// a 1 GiB section in 32 KiB, as a hostile pack would carry it.
fn rle_frame(size: u64) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0]; // magic; single segment, 8-byte content size
    f.extend_from_slice(&size.to_le_bytes());
    let block = 128u64 << 10;
    let mut left = size;
    while left > 0 {
        let n = left.min(block);
        left -= n;
        let header = u32::from(left == 0) | 1 << 1 | (n as u32) << 3; // last flag, RLE type, size
        f.extend_from_slice(&header.to_le_bytes()[..3]);
        f.push(0);
    }
    f
}

/// Writes a 1 GiB-declaring bomb and a pack at the edge of the raw budget into `dir`.
fn write_bombs(dir: &Path) -> u64 {
    // The bomb: a PINF and a VXIR frame declaring 2^30 bytes (4 GiB of decoded floats once read).
    let frame = rle_frame(1 << 30);
    let info = PackInfo { kind: PackKind::Tile { level: 0, x: 0, y: 0 }, world_name: "bomb".into(), inputs_hash: 0 }.encode().unwrap();
    let bomb = kiln_formats_craft(&[(PackInfo::KIND, 0, info.clone(), info.len() as u64), (VertexIrradiance::KIND, 1, frame, 1 << 30)]);
    fs::write(dir.join("bomb.kpack"), &bomb).unwrap();
    // The largest a small pack may decode to, with a count that does not match (no mesh).
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Tile { level: 0, x: 1, y: 0 }, world_name: "bomb".into(), inputs_hash: 0 }).unwrap();
    b.add_raw(VertexIrradiance::KIND, false, vec![0; 15 << 20]).unwrap();
    let edge = b.to_bytes().unwrap();
    fs::write(dir.join("edge.kpack"), &edge).unwrap();
    (bomb.len() + edge.len()) as u64
}

/// Lays out a pack by hand so that any codec and raw length can be declared, with valid checksums.
fn kiln_formats_craft(sections: &[(SectionKind, u8, Vec<u8>, u64)]) -> Vec<u8> {
    use xxhash_rust::xxh3::xxh3_64;
    let table_end = 48 + 48 * sections.len();
    let mut offsets = Vec::new();
    let mut cursor = table_end.div_ceil(16) * 16;
    for s in sections {
        offsets.push(cursor);
        cursor = (cursor + s.2.len()).div_ceil(16) * 16;
    }
    let file_len = offsets.last().map_or(table_end, |o| o + sections.last().unwrap().2.len());
    let mut table = Vec::new();
    for ((kind, codec, stored, raw_len), offset) in sections.iter().zip(&offsets) {
        table.extend_from_slice(&kind.0);
        table.extend_from_slice(&u16::from(kind.0 == *b"PINF").to_le_bytes());
        table.extend_from_slice(&[*codec, 0]);
        for v in [*offset as u64, stored.len() as u64, *raw_len, xxh3_64(stored), 0] {
            table.extend_from_slice(&v.to_le_bytes());
        }
    }
    let mut out = kiln_formats::container::MAGIC.to_vec();
    for v in [1u16, 0, 0, 1, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    out.extend_from_slice(&(file_len as u64).to_le_bytes());
    out.extend_from_slice(&xxh3_64(&table).to_le_bytes());
    let c = xxh3_64(&out[..40]);
    out.extend_from_slice(&c.to_le_bytes());
    out.extend_from_slice(&table);
    for (s, &offset) in sections.iter().zip(&offsets) {
        out.resize(offset, 0);
        out.extend_from_slice(&s.2);
    }
    out
}

/// Runs `kiln verify DIR` as a process of its own and returns its exit code, its standard output
/// and its peak resident memory (from `wait4`'s rusage), so the figure is verify's alone.
fn verify_in_a_process(dir: &Path) -> (Option<i32>, String, u64) {
    let stdout = dir.with_extension("stdout");
    let child = Command::new(env!("CARGO_BIN_EXE_kiln-under-test"))
        .arg("verify")
        .arg(dir)
        .stdout(fs::File::create(&stdout).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn kiln");
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child once; `status` and `usage` are valid out-pointers.
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert!(r > 0, "wait4: {}", std::io::Error::last_os_error());
    std::mem::forget(child); // reaped above
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, fs::read_to_string(&stdout).unwrap(), usage.ru_maxrss as u64 * 1024)
}

#[test]
fn verify_memory_stays_bounded_on_bombs() {
    let dir = scratch("verify-bomb");
    let input = write_bombs(&dir);
    assert!(input < 1 << 20, "{input}");
    let (code, stdout, peak) = verify_in_a_process(&dir);
    assert_eq!(code, Some(1), "{stdout}");
    let bomb = dir.join("bomb.kpack").display().to_string();
    assert!(stdout.lines().any(|l| l.contains(&bomb) && l.contains("bomb")), "{stdout}");
    assert!(stdout.lines().any(|l| l.contains("edge.kpack") && l.contains("without a TMSH")), "{stdout}");
    let limit = (256 << 20) + 10 * input;
    eprintln!("verify peak on bombs: {} MiB for {input} bytes of packs", peak >> 20);
    assert!(peak < limit, "verify peaked at {} MiB (limit {} MiB)", peak >> 20, limit >> 20);
}

#[test]
fn inspect_exit_codes() {
    let copy = scratch("inspect-codes");
    copy_dir(tiny_bake(), &copy);
    assert_eq!(kiln(&["inspect", copy.to_str().unwrap()]), 0);
    let m = manifest(&copy);
    let tile = copy.join(&m.nodes[0].path);
    let mut bytes = fs::read(&tile).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&tile, &bytes).unwrap();
    assert_eq!(kiln(&["inspect", tile.to_str().unwrap()]), 1);
    assert_eq!(kiln(&["inspect", copy.to_str().unwrap()]), 1);
    // A header that does not parse is corrupt too; a path that is not there is an error.
    fs::write(&tile, b"not a pack").unwrap();
    assert_eq!(kiln(&["inspect", copy.to_str().unwrap()]), 1);
    assert_eq!(kiln(&["inspect", copy.join("nothing-here").to_str().unwrap()]), 2);
}

fn two_files(name: &str, bytes: &[u8]) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let (a, b) = (dir.join("a.kpack"), dir.join("b.kpack"));
    fs::write(&a, bytes).unwrap();
    fs::write(&b, bytes).unwrap();
    (a, b)
}

#[test]
fn diff_refuses_non_packs_and_tolerances_it_cannot_compare_with() {
    let (a, b) = two_files("diff-non-pack", b"hello, not a pack");
    assert_eq!(kiln(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]), 2);
    let err = kiln_bake::diff::diff(&a, &b, &Default::default()).unwrap_err().to_string();
    assert!(err.contains("a.kpack") && err.contains("magic"), "{err}");
    let empty = scratch("diff-empty");
    assert_eq!(kiln(&["diff", empty.to_str().unwrap(), empty.to_str().unwrap()]), 2);

    let pack = tiny_bake().join("manifest.kpack");
    let p = pack.to_str().unwrap();
    assert_eq!(kiln(&["diff", p, p]), 0);
    for (flag, value) in [("--field-max", "nan"), ("--distance", "-1"), ("--field-rms", "inf")] {
        let arg = format!("{flag}={value}");
        assert_eq!(kiln(&["diff", p, p, &arg]), 2, "{arg}");
        let parsed: f32 = value.parse().unwrap();
        let err = kiln_bake::diff::check_tolerance(flag, parsed).unwrap_err().to_string();
        assert!(err.contains(flag), "{err}");
    }
    let tol = scratch("diff-bad-tol").join("tol.toml");
    fs::write(&tol, "distance = nan\n").unwrap();
    assert_eq!(kiln(&["diff", p, p, "--tolerances", tol.to_str().unwrap()]), 2);
    let err = kiln_bake::diff::Tolerances::from_file(&tol).unwrap_err().to_string();
    assert!(err.contains("tol.toml") && err.contains("distance"), "{err}");
}
