//! Round trips, corruption, truncation and versioning of the pack container.

use kiln_formats::container::{HEADER_LEN, MAGIC};
use kiln_formats::sections::{
    EmbeddedFile, EmbeddedFiles, IrradianceGrid, Lattice, Manifest, PackInfo, PackKind, TerrainMesh, TileNode, VertexAo, VertexIrradiance,
};
use kiln_formats::{Codec, FormatError, Pack, PackBuilder, Section, SectionKind};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

fn sample_mesh() -> TerrainMesh {
    let lattice = Lattice { voxel_size: 0.0625, shift: 10, origin: [-64, 128, 0] };
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    for j in 0..6 {
        for i in 0..6 {
            positions.push(lattice.snap([i as f32 * 0.1, 0.5 + j as f32 * 0.1, 0.3 + 0.05 * (i * j) as f32 / 10.0]));
            let n = [0.1 * i as f32, -0.2, 1.0];
            let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            normals.push(n.map(|c| c / l));
        }
    }
    let mut indices = Vec::new();
    for j in 0..5u32 {
        for i in 0..5u32 {
            let a = j * 6 + i;
            indices.extend_from_slice(&[a, a + 1, a + 7, a, a + 7, a + 6]);
        }
    }
    let main_index_count = indices.len() - 6;
    TerrainMesh { lattice, positions, normals, indices, main_index_count }
}

fn sample_manifest() -> Manifest {
    Manifest {
        world_name: "tiny".into(),
        world_hash: 42,
        baker_version: "0.1.0".into(),
        voxel_size: 0.0625,
        volume_dims: [64, 64, 32],
        tile_voxels: 16,
        tiles_per_axis: [4, 4],
        levels: 3,
        bounds_min: [0.0; 3],
        bounds_max: [4.0, 4.0, 2.0],
        nodes: vec![TileNode {
            level: 1,
            x: 1,
            y: 0,
            bounds_min: [2.0, 0.0, 0.0],
            bounds_max: [4.0, 2.0, 2.0],
            geometric_error: 0.01,
            path: "tiles/L1_1_0.kpack".into(),
            content_hash: 7,
            file_len: 100,
            vertex_count: 10,
            triangle_count: 12,
        }],
    }
}

fn small_pack() -> Vec<u8> {
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Tile { level: 0, x: 1, y: 2 }, world_name: "w".into(), inputs_hash: 2 }).unwrap();
    b.add(&sample_mesh()).unwrap();
    b.add(&VertexAo(vec![200; 36])).unwrap();
    b.to_bytes().unwrap()
}

/// Opens and fully verifies a pack, turning any problem into an error.
fn open_and_verify(bytes: Vec<u8>) -> Result<(), FormatError> {
    let pack = Pack::from_bytes(bytes)?;
    match pack.verify().into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn with_header_fixed(mut bytes: Vec<u8>) -> Vec<u8> {
    let c = xxh3_64(&bytes[..40]);
    bytes[40..48].copy_from_slice(&c.to_le_bytes());
    bytes
}

#[test]
fn every_section_kind_round_trips() {
    let mesh = sample_mesh();
    let info = PackInfo { kind: PackKind::Manifest, world_name: "w".into(), inputs_hash: 4 };
    let files = EmbeddedFiles { files: vec![EmbeddedFile { name: "world.toml".into(), bytes: b"name = \"w\"".to_vec() }] };
    let mut b = PackBuilder::new([1, 2, 3]);
    b.add(&info).unwrap().add(&mesh).unwrap().add(&VertexAo(vec![0, 1, 255])).unwrap();
    b.add(&sample_manifest()).unwrap().add(&files).unwrap();
    let irradiance = VertexIrradiance(vec![[0.5, 0.25, 2.0], [0.0, 0.0, 0.0], [3.0, 3.0, 3.0]]);
    b.add(&irradiance).unwrap();
    let grid = IrradianceGrid {
        min: [0.0, 0.0, 0.0],
        max: [2.0, 2.0, 1.0],
        dims: [2, 1, 1],
        ambient: vec![[[1.0, 0.5, 0.25]; 6], [[0.0; 3]; 6]],
        direct: vec![[[2.0, 2.0, 2.0]; 6], [[0.125, 0.0, 4.0]; 6]],
    };
    b.add(&grid).unwrap();
    let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
    assert_eq!(pack.header().writer_version, [1, 2, 3]);
    assert_eq!(pack.require::<PackInfo>().unwrap(), info);
    let back = pack.require::<TerrainMesh>().unwrap();
    assert_eq!(back.positions, mesh.positions, "snapped positions survive exactly");
    assert_eq!(back.indices, mesh.indices);
    assert_eq!(back.main_index_count, mesh.main_index_count);
    for (a, b) in back.normals.iter().zip(&mesh.normals) {
        let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        assert!(dot > 0.99999, "normal {a:?} vs {b:?}");
    }
    assert_eq!(pack.require::<VertexAo>().unwrap().0, vec![0, 1, 255]);
    assert_eq!(pack.require::<Manifest>().unwrap(), sample_manifest());
    assert_eq!(pack.require::<EmbeddedFiles>().unwrap(), files);
    assert_eq!(pack.require::<VertexIrradiance>().unwrap(), irradiance, "these values are exact in RGB9E5");
    assert_eq!(pack.require::<IrradianceGrid>().unwrap(), grid);
    assert!(pack.verify().is_empty());
}

#[test]
fn raw_codec_round_trips() {
    let mut b = PackBuilder::new([0, 1, 0]).codec(Codec::Raw);
    b.add(&VertexAo(vec![9; 100])).unwrap();
    let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
    assert_eq!(pack.sections()[0].stored_len, 100);
    assert_eq!(pack.require::<VertexAo>().unwrap().0, vec![9; 100]);
}

/// A large section (over `PARALLEL_SECTION_LEN`): compressible but not trivially so.
fn large_section() -> VertexAo {
    let len = kiln_formats::container::PARALLEL_SECTION_LEN + 3 * (1 << 20) + 17;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 56) as u8
    };
    VertexAo((0..len).map(|i| if i % 7 == 0 { noise() } else { (i / 4096) as u8 }).collect())
}

#[test]
fn large_sections_are_the_same_bytes_for_any_number_of_threads() {
    let section = large_section();
    let pack_with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut b = PackBuilder::new([0, 1, 0]);
            b.add(&section).unwrap();
            b.to_bytes().unwrap()
        })
    };
    let one = pack_with(1);
    for threads in [2, 3, 8] {
        assert!(pack_with(threads) == one, "{threads} threads gave other bytes than 1");
    }
    let pack = Pack::from_bytes(one).unwrap();
    let entry = pack.sections()[0];
    assert_eq!(entry.codec, Codec::Zstd(0).id());
    assert!(entry.stored_len < entry.raw_len / 2, "{} of {}", entry.stored_len, entry.raw_len);
    assert!(pack.require::<VertexAo>().unwrap().0 == section.0, "the section decodes to what was added");
}

#[test]
fn a_section_added_in_pieces_is_the_section_added_whole() {
    // Cuts that fall inside and across the compressor's feed size, an empty piece, one piece, and
    // a section below the multithreaded size.
    let large = large_section();
    let small = VertexAo(large.0[..100_000].to_vec());
    for section in [&large, &small] {
        let raw = section.encode().unwrap();
        let whole = {
            let mut b = PackBuilder::new([0, 1, 0]);
            b.add(section).unwrap();
            b.to_bytes().unwrap()
        };
        for cuts in [vec![], vec![0, 0, 5], vec![1 << 20, (1 << 20) + 1], vec![333, 4_000_000, 4_000_001, 9_000_000]] {
            let mut pieces = Vec::new();
            let mut start = 0;
            for &c in cuts.iter().filter(|&&c| c <= raw.len()) {
                pieces.push(raw[start..c.max(start)].to_vec());
                start = c.max(start);
            }
            pieces.push(raw[start..].to_vec());
            let mut b = PackBuilder::new([0, 1, 0]);
            b.add_pieces::<VertexAo>(pieces).unwrap();
            assert!(b.to_bytes().unwrap() == whole, "{} bytes cut at {cuts:?}", raw.len());
        }
    }
}

#[test]
fn sections_are_aligned_and_checked_lazily() {
    let bytes = small_pack();
    let pack = Pack::from_bytes(bytes).unwrap();
    assert!(pack.sections().iter().all(|e| e.offset % 16 == 0));
    assert_eq!(pack.get::<Manifest>().unwrap(), None);
    assert!(matches!(pack.require::<Manifest>(), Err(FormatError::MissingSection { .. })));
}

#[test]
fn one_section_read_in_place_is_the_section_the_opened_pack_gives() {
    let bytes = small_pack();
    let pack = Pack::from_bytes(bytes.clone()).unwrap();
    assert_eq!(Pack::section_in::<TerrainMesh>(&bytes).unwrap(), pack.get::<TerrainMesh>().unwrap());
    assert_eq!(Pack::section_in::<VertexAo>(&bytes).unwrap(), Some(VertexAo(vec![200; 36])));
    assert_eq!(Pack::section_in::<Manifest>(&bytes).unwrap(), None);
    // A damaged byte of the section read is its checksum's failure, not a wrong value.
    let ao = pack.sections().iter().find(|e| e.kind == VertexAo::KIND).unwrap();
    let mut damaged = bytes.clone();
    damaged[ao.offset as usize] ^= 0x40;
    assert!(Pack::section_in::<VertexAo>(&damaged).is_err());
    assert!(Pack::section_in::<VertexAo>(&bytes[..bytes.len() - 1]).is_err(), "a truncated pack is refused");
}

#[test]
fn every_single_byte_flip_is_detected() {
    let bytes = small_pack();
    open_and_verify(bytes.clone()).unwrap();
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= mask;
            assert!(open_and_verify(b).is_err(), "flip of byte {i} with {mask:#x} went unnoticed");
        }
    }
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    let bytes = small_pack();
    for len in 0..bytes.len() {
        let err = open_and_verify(bytes[..len].to_vec()).unwrap_err();
        assert!(matches!(err, FormatError::Truncated { .. }), "truncated to {len}: {err}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(open_and_verify(longer), Err(FormatError::LengthMismatch { .. })));
}

#[test]
fn newer_major_is_refused_naming_both_versions() {
    let mut bytes = small_pack();
    bytes[8..10].copy_from_slice(&2u16.to_le_bytes());
    bytes[10..12].copy_from_slice(&0u16.to_le_bytes());
    let err = Pack::from_bytes(with_header_fixed(bytes)).err().unwrap();
    assert_eq!(err, FormatError::UnsupportedVersion { found: (2, 0), supported: (1, kiln_formats::FORMAT_MINOR) });
    let text = err.to_string();
    assert!(text.contains("2.0") && text.contains(&format!("1.{}", kiln_formats::FORMAT_MINOR)), "{text}");
}

#[test]
fn newer_minor_is_read() {
    let mut bytes = small_pack();
    bytes[10..12].copy_from_slice(&7u16.to_le_bytes());
    let pack = Pack::from_bytes(with_header_fixed(bytes)).unwrap();
    assert_eq!(pack.header().minor, 7);
    assert!(pack.verify().is_empty());
}

#[test]
fn unknown_optional_sections_are_skipped_and_unknown_required_refused() {
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&VertexAo(vec![1, 2])).unwrap();
    b.add_raw(SectionKind(*b"ZZZZ"), false, vec![1, 2, 3]).unwrap();
    let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
    assert_eq!(pack.require::<VertexAo>().unwrap().0, vec![1, 2]);
    assert!(pack.verify().is_empty());

    let mut b = PackBuilder::new([0, 1, 0]);
    b.add_raw(SectionKind(*b"ZZZZ"), true, vec![1, 2, 3]).unwrap();
    let err = Pack::from_bytes(b.to_bytes().unwrap()).err().unwrap();
    assert_eq!(err, FormatError::UnknownRequiredSection { section: SectionKind(*b"ZZZZ") });
}

#[test]
fn foreign_files_are_bad_magic() {
    assert!(matches!(Pack::from_bytes(b"PK\x03\x04 a zip file, not a pack at all......".to_vec()), Err(FormatError::BadMagic { .. })));
    // A text-mode transfer turns CR LF into LF.
    let mut bytes = small_pack();
    bytes.remove(4);
    assert!(matches!(Pack::from_bytes(bytes), Err(FormatError::BadMagic { .. })));
    assert_eq!(&small_pack()[..8], &MAGIC);
    assert!(small_pack().len() > HEADER_LEN);
}

#[test]
fn duplicate_sections_are_refused_by_the_writer() {
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&VertexAo(vec![1])).unwrap();
    assert!(matches!(b.add(&VertexAo(vec![2])), Err(FormatError::DuplicateSection { .. })));
}

#[test]
fn mesh_decoder_rejects_inconsistent_contents() {
    let mut raw = kiln_formats::Section::encode(&sample_mesh()).unwrap();
    // An index pointing past the vertices.
    let n = 36usize;
    let idx_start = 32 + 10 * n;
    raw[idx_start] = 0xfe;
    assert!(<TerrainMesh as kiln_formats::Section>::decode(&raw).is_err());
    // A vertex count that does not match the length.
    let mut raw = kiln_formats::Section::encode(&sample_mesh()).unwrap();
    raw[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(<TerrainMesh as kiln_formats::Section>::decode(&raw).is_err());
}

#[test]
fn atomic_write_replaces_whole_files() {
    let dir = std::env::temp_dir().join(format!("kiln-formats-atomic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.kpack");
    kiln_formats::write_atomic(&path, b"old").unwrap();
    kiln_formats::write_atomic(&path, &small_pack()).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), small_pack());
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "temporary files left behind: {leftovers:?}");
    let missing = dir.join("no/such/dir/x.kpack");
    let err = kiln_formats::write_atomic(&missing, b"x").unwrap_err();
    assert!(err.to_string().contains("x.kpack"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_sections_round_trip(payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..600), 1..6), raw in any::<bool>()) {
        let mut b = PackBuilder::new([0, 1, 0]);
        if raw { b = b.codec(Codec::Raw); }
        for (i, p) in payloads.iter().enumerate() {
            b.add_raw(SectionKind([b'T', b'S', b'T', b'0' + i as u8]), false, p.clone()).unwrap();
        }
        let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
        for (i, p) in payloads.iter().enumerate() {
            prop_assert_eq!(&pack.raw_section(i).unwrap(), p);
        }
    }

    #[test]
    fn random_corruption_never_panics_and_is_detected(pos in any::<prop::sample::Index>(), val in any::<u8>(), cut in any::<prop::sample::Index>(), truncate in any::<bool>()) {
        let mut bytes = small_pack();
        if truncate {
            let len = cut.index(bytes.len());
            bytes.truncate(len);
            prop_assert!(open_and_verify(bytes).is_err());
        } else {
            let i = pos.index(bytes.len());
            let changed = bytes[i] != val;
            bytes[i] = val;
            let result = open_and_verify(bytes);
            prop_assert!(!changed || result.is_err());
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), keep_magic in any::<bool>()) {
        let mut bytes = bytes;
        if keep_magic && bytes.len() >= 8 { bytes[..8].copy_from_slice(&MAGIC); }
        let _ = open_and_verify(bytes);
    }

    #[test]
    fn mesh_decoder_never_panics(raw in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = <TerrainMesh as kiln_formats::Section>::decode(&raw);
        let _ = <Manifest as kiln_formats::Section>::decode(&raw);
        let _ = <PackInfo as kiln_formats::Section>::decode(&raw);
        let _ = <EmbeddedFiles as kiln_formats::Section>::decode(&raw);
    }
}
