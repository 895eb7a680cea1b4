//! `make bench` part: pack write and read throughput on a realistic terrain mesh payload.
//!
//! The payload is a 1000×1000-vertex noise heightfield (1M vertices, 2M triangles) on the baker's
//! lattice. Throughput is MB/s of *raw payload*: the decoded arrays a renderer uses (f32 positions,
//! f32 normals, u32 indices), including checksums and (de)compression.

use std::time::Instant;

use kiln_formats::sections::{Lattice, TerrainMesh};
use kiln_formats::{Pack, PackBuilder};

fn height(x: f32, y: f32) -> f32 {
    // A few octaves of sines: smooth like terrain, with no dependency on a noise crate.
    let mut h = 0.0;
    let (mut f, mut a) = (0.05, 8.0);
    for o in 0..6 {
        h += a * (x * f + o as f32).sin() * (y * f * 1.3 + 2.0 * o as f32).cos();
        f *= 2.1;
        a *= 0.5;
    }
    h
}

fn main() {
    let n = 1000usize;
    let lattice = Lattice { voxel_size: 0.0625, shift: 6, origin: [0, 0, -1000] };
    let s = 0.05f32; // world units between grid vertices
    let mut positions = Vec::with_capacity(n * n);
    let mut normals = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let (x, y) = (i as f32 * s, j as f32 * s);
            let z = height(i as f32, j as f32) * s;
            positions.push(lattice.snap([x, y, z]));
            let dx = (height(i as f32 + 0.5, j as f32) - height(i as f32 - 0.5, j as f32)) * s;
            let dy = (height(i as f32, j as f32 + 0.5) - height(i as f32, j as f32 - 0.5)) * s;
            let l = (dx * dx + dy * dy + s * s).sqrt();
            normals.push([-dx / l, -dy / l, s / l]);
        }
    }
    let mut indices = Vec::with_capacity((n - 1) * (n - 1) * 6);
    for j in 0..n as u32 - 1 {
        for i in 0..n as u32 - 1 {
            let a = j * n as u32 + i;
            indices.extend_from_slice(&[a, a + 1, a + n as u32 + 1, a, a + n as u32 + 1, a + n as u32]);
        }
    }
    let main_index_count = indices.len();
    let mesh = TerrainMesh { lattice, positions, normals, indices, main_index_count };
    let raw_f32_bytes = (mesh.positions.len() * 24 + mesh.indices.len() * 4) as f64;

    let runs = 5;
    let mut best_write = f64::MAX;
    let mut bytes = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut b = PackBuilder::new([0, 1, 0]);
        b.add(&mesh).expect("encode");
        bytes = b.to_bytes().expect("write");
        best_write = best_write.min(t.elapsed().as_secs_f64());
    }
    let mut best_read = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let pack = Pack::from_bytes(bytes.clone()).expect("open");
        let back: TerrainMesh = pack.require().expect("decode");
        best_read = best_read.min(t.elapsed().as_secs_f64());
        assert_eq!(back.indices.len(), mesh.indices.len());
    }
    if std::env::var_os("KILN_BENCH_BREAKDOWN").is_some() {
        for _ in 0..3 {
            breakdown(&bytes);
        }
    }
    let mb = raw_f32_bytes / 1e6;
    println!("pack bench: terrain mesh, {} vertices, {} triangles, raw f32 payload {:.1} MB", mesh.positions.len(), mesh.indices.len() / 3, mb);
    println!("  write (quantise + encode + zstd L3 + checksum): {:>7.0} MB/s  ({:.1} ms)", mb / best_write, best_write * 1e3);
    println!("  read  (checksum + zstd + decode):               {:>7.0} MB/s  ({:.1} ms)", mb / best_read, best_read * 1e3);
    println!("  stored/raw f32 size: {:.1}% ({} bytes stored)", bytes.len() as f64 / raw_f32_bytes * 100.0, bytes.len());
}

#[allow(dead_code)]
fn breakdown(bytes: &[u8]) {
    let pack = Pack::from_bytes(bytes.to_vec()).expect("open");
    let t = Instant::now();
    let raw = pack.raw_section(0).unwrap();
    let t1 = t.elapsed();
    let t = Instant::now();
    let _m = <TerrainMesh as kiln_formats::Section>::decode(&raw).unwrap();
    eprintln!("checksum+zstd {:?} ({} raw bytes), decode {:?}", t1, raw.len(), t.elapsed());
}
