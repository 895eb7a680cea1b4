//! Packs with valid checksums whose counts, sizes or dimensions lie: each is refused with a clear
//! error before anything large is allocated.

use kiln_formats::container::{raw_budget, HEADER_LEN, MAGIC, RAW_ALLOWANCE};
use kiln_formats::sections::{IrradianceGrid, Lattice, Manifest, PackInfo, PackKind, TerrainMesh, VertexAo, VertexIrradiance};
use kiln_formats::{Codec, FormatError, Pack, PackBuilder, Section, SectionKind, TileContents};
use xxhash_rust::xxh3::xxh3_64;

/// Lays out a pack by hand so that a test can declare any codec and raw length; every checksum is
/// correct, so only the checks under test can refuse it.
fn craft(sections: &[(SectionKind, u8, Vec<u8>, u64)]) -> Vec<u8> {
    let table_end = HEADER_LEN + 48 * sections.len();
    let mut offsets = Vec::new();
    let mut cursor = table_end.div_ceil(16) * 16;
    for (_, _, stored, _) in sections {
        offsets.push(cursor);
        cursor = (cursor + stored.len()).div_ceil(16) * 16;
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
    let mut out = MAGIC.to_vec();
    for v in [1u16, 0, 0, 1, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    out.extend_from_slice(&(file_len as u64).to_le_bytes());
    out.extend_from_slice(&xxh3_64(&table).to_le_bytes());
    let c = xxh3_64(&out[..40]);
    out.extend_from_slice(&c.to_le_bytes());
    out.extend_from_slice(&table);
    for ((_, _, stored, _), &offset) in sections.iter().zip(&offsets) {
        out.resize(offset, 0);
        out.extend_from_slice(stored);
    }
    out
}

fn raw(kind: SectionKind, bytes: Vec<u8>) -> (SectionKind, u8, Vec<u8>, u64) {
    let n = bytes.len() as u64;
    (kind, 0, bytes, n)
}

fn tile_info() -> Vec<u8> {
    PackInfo { kind: PackKind::Tile { level: 0, x: 0, y: 0 }, world_name: "w".into(), inputs_hash: 1 }.encode().unwrap()
}

fn mesh(n: usize) -> TerrainMesh {
    let lattice = Lattice { voxel_size: 0.5, shift: 4, origin: [0, 0, 0] };
    let positions: Vec<[f32; 3]> = (0..n).map(|i| lattice.snap([i as f32 * 0.25, (i % 3) as f32, 1.0])).collect();
    let indices: Vec<u32> = (0..n as u32 / 3 * 3).collect();
    TerrainMesh { lattice, normals: vec![[0.0, 0.0, 1.0]; n], main_index_count: indices.len(), positions, indices }
}

fn layout_reason(bytes: Vec<u8>) -> String {
    match Pack::from_bytes(bytes) {
        Err(e @ FormatError::BadLayout { .. }) => e.to_string(),
        other => panic!("expected a layout error, got {:?}", other.map(|p| p.sections().len())),
    }
}

#[test]
fn a_decompression_bomb_is_refused_before_decompressing() {
    // 256 MiB of zeros is ~8 KB of zstd: far beyond the raw budget of such a small pack.
    let big = 256u64 << 20;
    let zeros = vec![0u8; 1 << 20];
    let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    enc.set_pledged_src_size(Some(big)).unwrap();
    enc.include_contentsize(true).unwrap();
    for _ in 0..256 {
        std::io::Write::write_all(&mut enc, &zeros).unwrap();
    }
    let frame = enc.finish().unwrap();
    assert!(frame.len() < 64 << 10, "{}", frame.len());
    let bytes = craft(&[raw(PackInfo::KIND, tile_info()), (VertexAo::KIND, 1, frame, big)]);
    let reason = layout_reason(bytes.clone());
    assert!(reason.contains("raw bytes") && reason.contains("bomb"), "{reason}");
    assert!(raw_budget(bytes.len() as u64) < big);
}

#[test]
fn the_writer_stores_raw_what_readers_would_refuse_compressed() {
    let n = (RAW_ALLOWANCE + (1 << 20)) as usize;
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&VertexAo(vec![7; n])).unwrap();
    let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
    assert_eq!(pack.sections()[0].codec, Codec::Raw.id());
    assert_eq!(pack.require::<VertexAo>().unwrap().0.len(), n);
    // Well under the allowance, compression is kept however good it is.
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&VertexAo(vec![7; 1 << 20])).unwrap();
    let pack = Pack::from_bytes(b.to_bytes().unwrap()).unwrap();
    assert_eq!(pack.sections()[0].codec, 1);
}

#[test]
fn a_zstd_frame_larger_than_declared_is_refused() {
    let frame = zstd::bulk::compress(&[1u8; 4000], 3).unwrap();
    let pack = Pack::from_bytes(craft(&[(VertexAo::KIND, 1, frame, 100)])).unwrap();
    let err = pack.get::<VertexAo>().unwrap_err().to_string();
    assert!(err.contains("frame holds 4000 bytes"), "{err}");
}

#[test]
fn volume_dimensions_must_be_non_zero_and_not_overflow() {
    let header = |dims: [u32; 3]| {
        let mut v = Vec::new();
        for f in [0f32, 0.0, 0.0, 1.0, 1.0, 1.0] {
            v.extend_from_slice(&f.to_le_bytes());
        }
        for d in dims {
            v.extend_from_slice(&d.to_le_bytes());
        }
        v
    };
    let zero = IrradianceGrid::decode(&header([0, 4, 4])).unwrap_err().to_string();
    assert!(zero.contains("at least 1"), "{zero}");
    // 2^31 · 2^31 · 4 wraps a u64 product to 0 cells, which a 36-byte section would have matched.
    let wrap = IrradianceGrid::decode(&header([1 << 31, 1 << 31, 4])).unwrap_err().to_string();
    assert!(wrap.contains("exceed the limit"), "{wrap}");
    let huge = IrradianceGrid::decode(&header([u32::MAX; 3])).unwrap_err().to_string();
    assert!(huge.contains("exceed the limit"), "{huge}");
    let mut short = header([2, 2, 2]);
    short.extend_from_slice(&[0; 48 * 8 - 1]);
    assert!(IrradianceGrid::decode(&short).unwrap_err().to_string().contains("need"));
}

#[test]
fn mesh_counts_and_lattices_that_lie_are_refused() {
    let good = mesh(12).encode().unwrap();
    let patch = |at: usize, v: &[u8]| {
        let mut b = good.clone();
        b[at..at + v.len()].copy_from_slice(v);
        b
    };
    // More vertices than bytes.
    let e = TerrainMesh::decode(&patch(0, &(1u32 << 30).to_le_bytes())).unwrap_err().to_string();
    assert!(e.contains("need") && e.contains("section has"), "{e}");
    // A voxel size that sends positions to infinity.
    let e = TerrainMesh::decode(&patch(16, &3e38f32.to_le_bytes())).unwrap_err().to_string();
    assert!(e.contains("non-finite"), "{e}");
    // Index count not whole triangles.
    let e = TerrainMesh::decode(&patch(8, &5u32.to_le_bytes())).unwrap_err().to_string();
    assert!(e.contains("whole triangles"), "{e}");
}

fn tile_pack(sections: &[(SectionKind, Vec<u8>)]) -> Pack {
    let mut all = vec![raw(PackInfo::KIND, tile_info())];
    all.extend(sections.iter().map(|(k, b)| raw(*k, b.clone())));
    Pack::from_bytes(craft(&all)).unwrap()
}

#[test]
fn tile_contents_checks_every_cross_section_invariant() {
    let m = mesh(12);
    let ok = tile_pack(&[
        (TerrainMesh::KIND, m.encode().unwrap()),
        (VertexAo::KIND, vec![1; 12]),
        (VertexIrradiance::KIND, VertexIrradiance(vec![[1.0; 3]; 12]).encode().unwrap()),
    ]);
    let t = TileContents::read(&ok).unwrap();
    assert_eq!(t.mesh.as_ref().unwrap().positions.len(), 12);
    assert_eq!(t.id(), kiln_formats::TileId::new(0, 0, 0));

    let ao = tile_pack(&[(TerrainMesh::KIND, m.encode().unwrap()), (VertexAo::KIND, vec![1; 11])]);
    let e = TileContents::read(&ao).unwrap_err().to_string();
    assert!(e.contains("VXAO") && e.contains("11 values for 12"), "{e}");

    let ir = tile_pack(&[(TerrainMesh::KIND, m.encode().unwrap()), (VertexIrradiance::KIND, VertexIrradiance(vec![[1.0; 3]; 13]).encode().unwrap())]);
    let e = TileContents::read(&ir).unwrap_err().to_string();
    assert!(e.contains("VXIR") && e.contains("13 values for 12"), "{e}");

    let orphan = tile_pack(&[(VertexAo::KIND, vec![1; 3])]);
    assert!(TileContents::read(&orphan).unwrap_err().to_string().contains("without a TMSH"));

    let manifest_info = PackInfo { kind: PackKind::Manifest, world_name: "w".into(), inputs_hash: 1 }.encode().unwrap();
    let not_tile = Pack::from_bytes(craft(&[raw(PackInfo::KIND, manifest_info)])).unwrap();
    assert!(TileContents::read(&not_tile).unwrap_err().to_string().contains("not a tile"));
}

fn manifest(tiles: [u32; 2], levels: u32) -> Manifest {
    Manifest {
        world_name: "w".into(),
        world_hash: 1,
        baker_version: "0".into(),
        voxel_size: 1.0,
        volume_dims: [tiles[0].wrapping_mul(16), tiles[1].wrapping_mul(16), 16],
        tile_voxels: 16,
        tiles_per_axis: tiles,
        levels,
        bounds_min: [0.0; 3],
        bounds_max: [1.0; 3],
        nodes: Vec::new(),
    }
}

#[test]
fn manifest_tile_grids_are_bounded_and_consistent() {
    let decode = |m: Manifest| Manifest::decode(&m.encode().unwrap());
    let ok = decode(manifest([4, 2], 3)).unwrap();
    assert_eq!(ok.expected_node_count(), 8 + 2 + 1);
    for (tiles, levels, what) in
        [([1 << 31, 1 << 31], 32, "power of two in"), ([6, 4], 2, "power of two"), ([0, 4], 1, "power of two"), ([4, 4], 32, "does not match")]
    {
        let e = decode(manifest(tiles, levels)).unwrap_err().to_string();
        assert!(e.contains(what), "{tiles:?} {levels}: {e}");
    }
    for (dims, tile_voxels) in [([u32::MAX, 64, 16], 16), ([64, 64, 16], 0), ([64, 64, 1], 16)] {
        let mut m = manifest([4, 4], 3);
        (m.volume_dims, m.tile_voxels) = (dims, tile_voxels);
        assert!(decode(m).unwrap_err().to_string().contains("does not match"), "{dims:?} {tile_voxels}");
    }
    let mut m = manifest([4, 4], 3);
    m.bounds_max[1] = f32::NAN;
    assert!(decode(m).unwrap_err().to_string().contains("not finite"));
}

fn volume(dims: [u32; 3]) -> IrradianceGrid {
    let n = (dims[0] * dims[1] * dims[2]) as usize;
    IrradianceGrid { min: [0.0; 3], max: [1.0; 3], dims, ambient: vec![[[0.5; 3]; 6]; n], direct: vec![[[0.25; 3]; 6]; n] }
}

proptest::proptest! {
    /// Valid sections with one byte changed (checksums kept valid): decoded and cross-checked
    /// without a panic, and either accepted with consistent counts or refused.
    #[test]
    fn tile_contents_never_panics_on_mutated_sections(
        which in 0usize..4,
        at in proptest::prelude::any::<proptest::sample::Index>(),
        value in proptest::prelude::any::<u8>(),
        extra in 0usize..3,
    ) {
        let m = mesh(12);
        let mut sections = vec![
            (TerrainMesh::KIND, m.encode().unwrap()),
            (VertexAo::KIND, vec![9; 12]),
            (VertexIrradiance::KIND, VertexIrradiance(vec![[2.0; 3]; 12]).encode().unwrap()),
            (IrradianceGrid::KIND, volume([2, 1, 3]).encode().unwrap()),
        ];
        let target = &mut sections[which].1;
        let i = at.index(target.len());
        target[i] = value;
        target.extend(std::iter::repeat_n(value, extra));
        if let Ok(t) = TileContents::read(&tile_pack(&sections)) {
            let v = t.mesh.as_ref().map_or(0, |m| m.positions.len());
            proptest::prop_assert!(t.ao.as_ref().is_none_or(|a| a.0.len() == v));
            proptest::prop_assert!(t.irradiance.as_ref().is_none_or(|r| r.0.len() == v));
            proptest::prop_assert!(t.mesh.as_ref().is_none_or(|m| m.indices.iter().all(|&i| (i as usize) < v)));
        }
    }
}

#[test]
fn a_tile_written_by_to_pack_reads_back_identical_and_its_node_describes_it() {
    let id = kiln_formats::TileId::new(2, 1, 3);
    let mut t = TileContents::new(id, "w", 42);
    t.mesh = Some(mesh(12));
    t.ao = Some(VertexAo(vec![7; 12]));
    t.irradiance = Some(VertexIrradiance(vec![[0.5; 3]; 12]));
    let bytes = t.to_pack([0, 1, 0]).unwrap();
    let back = TileContents::read(&Pack::from_bytes(bytes.clone()).unwrap()).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.id(), id);
    let node = t.node(&bytes, 0.5);
    assert_eq!(node.id(), id);
    assert_eq!(node.path, "tiles/L2_1_3.kpack");
    assert_eq!((node.file_len, node.vertex_count), (bytes.len() as u64, 12));
    assert_eq!(node.content_hash, xxh3_64(&bytes));

    // The writer writes what it is given; the reader still refuses what does not fit together.
    t.ao = Some(VertexAo(vec![7; 11]));
    let bad = t.to_pack([0, 1, 0]).unwrap();
    let e = TileContents::read(&Pack::from_bytes(bad).unwrap()).unwrap_err().to_string();
    assert!(e.contains("11 values for 12"), "{e}");
}
