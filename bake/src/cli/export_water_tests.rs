use half::f16;
use kiln_formats::PackBuilder;

use super::*;

const R: usize = 16;

/// A four-frame loop: a caustic line that moves one texel per frame, a tilted normal.
fn waves() -> WaterWaves {
    let h = |v: f32| f16::from_f32(v).to_bits();
    let n = R * R;
    let mut w = WaterWaves {
        patch_size: 4.0,
        period: 2.0,
        resolution: R as u32,
        frames: 4,
        sun_direction: [0.0, 0.0, 1.0],
        ior: 1.333,
        flat_transmittance: 0.98,
        depths: vec![0.5, 1.5],
        ..Default::default()
    };
    for f in 0..4 {
        w.surface.extend((0..n).map(|i| [h(0.0), h(0.0), h(if i % R == f { 0.2 } else { -0.05 }), h(1.0)]));
        w.normals.extend((0..n).map(|_| [h(0.6), h(0.0)]));
        for d in 0..2 {
            w.caustics.extend((0..n).map(|i| h(if i % R == f { 3.0 + d as f32 } else { 0.5 })));
        }
    }
    w
}

fn pack_dir(test: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("kiln-export-water-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&waves()).unwrap();
    let file = dir.join("water-waves.kpack");
    std::fs::write(&file, b.to_bytes().unwrap()).unwrap();
    (dir, file)
}

fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>, png::Info<'static>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes.to_vec())).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let header = reader.info().clone();
    (info, buf, header)
}

#[test]
fn a_frame_exports_its_normals_height_and_every_planes_caustics_with_their_scales() {
    let (dir, file) = pack_dir("frame");
    let out = dir.join("frame2");
    export_frame(&file, 2, &out).unwrap();
    let header: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("water-2.json")).unwrap()).unwrap();
    assert_eq!(header["caustics"]["peaks"], serde_json::json!([3.0, 4.0]));
    assert_eq!(header["time_s"], 1.0);
    let (info, grey, _) = decode(&std::fs::read(out.join("water-2-caustics-1.png")).unwrap());
    assert_eq!((info.width, info.height, info.bit_depth), (R as u32, R as u32, png::BitDepth::Sixteen));
    let at = |x: usize| u16::from_be_bytes([grey[2 * x], grey[2 * x + 1]]);
    assert_eq!(at(2), 65535, "frame 2's bright column is the plane's peak");
    assert_eq!(at(3), (0.5f32 / 4.0 * 65535.0).round() as u16);
    let (_, rgb, _) = decode(&std::fs::read(out.join("water-2-normal.png")).unwrap());
    assert_eq!(&rgb[..2], &[204, 128], "n = (0.6, 0, 0.8) as n · 0.5 + 0.5");
    assert!(rgb[2].abs_diff(230) <= 1, "z = 0.8 (from binary16 x and y) as {}", rgb[2]);
    let missing = export_frame(&file, 4, &out).unwrap_err().to_string();
    assert!(missing.contains("water-waves.kpack") && missing.contains("no water frame 4"), "{missing}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_preview_is_an_animated_png_of_every_frame_at_the_bakes_speed() {
    let (dir, file) = pack_dir("preview");
    let out = dir.join("loop.png");
    export_preview(&file, 1, &out).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let (info, first, header) = decode(&bytes);
    assert_eq!((info.width, info.height), (2 * R as u32, R as u32));
    let actl = header.animation_control.expect("an animated PNG");
    assert_eq!((actl.num_frames, actl.num_plays), (4, 0));
    let fctl = header.frame_control.expect("frame control");
    assert_eq!((fctl.delay_num, fctl.delay_den), (500, 1000), "2 s over 4 frames");
    assert_eq!(first[0], 255, "frame 0's bright caustic column is white");
    assert!(first[1] < 128);
    assert!(export_preview(&file, 2, &out).unwrap_err().to_string().contains("no caustic plane 2"));
    std::fs::remove_dir_all(dir).unwrap();
}
