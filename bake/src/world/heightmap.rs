//! 16-bit height images for `floor.kind = "heightmap"`.
//!
//! Orientation: the image is a map seen from above with north up, so pixel column `i` runs along
//! +X and the *top* row is the far (+Y) edge of the world. The image covers the volume's XY extent
//! exactly, corner to corner (its first and last columns sit on the first and last voxel columns),
//! and is resampled bilinearly to the volume's grid.

use std::io::Cursor;

use thiserror::Error;

/// Why a heightmap could not be decoded.
#[derive(Debug, Error)]
pub enum HeightmapError {
    /// The PNG decoder refused the file.
    #[error("not a readable PNG: {0}")]
    Png(#[from] png::DecodingError),
    /// The PNG has colour or alpha channels; holds its colour type.
    #[error("PNG must be grayscale (8- or 16-bit) without alpha; got {0:?}")]
    NotGrayscale(png::ColorType),
    /// The grayscale PNG has 1, 2 or 4 bits per sample; holds its bit depth.
    #[error("PNG grayscale must be 8- or 16-bit; got {0:?}")]
    BitDepth(png::BitDepth),
    #[error("raw heightmap of {width} x {height} needs {expected} bytes (16-bit little-endian); the file has {actual}")]
    /// A raw heightmap's file length is not two bytes per pixel of its declared size.
    RawSize {
        /// Declared width in pixels.
        width: u32,
        /// Declared height in pixels.
        height: u32,
        /// `width * height * 2` bytes.
        expected: u64,
        /// The file's length in bytes.
        actual: u64,
    },
    #[error("image of {width} x {height} is larger than the limit of {max} x {max} pixels", max = MAX_HEIGHTMAP_SIDE)]
    /// A side is zero or longer than [`MAX_HEIGHTMAP_SIDE`].
    TooLarge {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
}

/// Largest heightmap side in pixels; the volume has at most 4096 samples per axis, so a larger
/// image would only be resampled away.
pub const MAX_HEIGHTMAP_SIDE: u32 = 8192;

fn check_dims(width: u32, height: u32) -> Result<(), HeightmapError> {
    if width == 0 || height == 0 || width > MAX_HEIGHTMAP_SIDE || height > MAX_HEIGHTMAP_SIDE {
        return Err(HeightmapError::TooLarge { width, height });
    }
    Ok(())
}

/// Height samples in `[0, 65535]`, row-major, row 0 = the +Y (north, image top) edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heightmap {
    /// Pixels per row (along +X), in 1..=[`MAX_HEIGHTMAP_SIDE`].
    pub width: u32,
    /// Rows (along Y), in 1..=[`MAX_HEIGHTMAP_SIDE`].
    pub height: u32,
    /// `width * height` heights; 8-bit images are scaled up to the full 16-bit range.
    pub samples: Vec<u16>,
}

/// Largest PNG decode buffer accepted: an 8192 × 8192 16-bit image is 128 MiB, plus the decoder's
/// own buffers.
const PNG_LIMIT_BYTES: usize = 160 << 20;

impl Heightmap {
    /// Decodes a grayscale PNG; 8-bit samples are widened to 16 bits (`v * 257`) so 255 maps to
    /// 65535.
    pub fn from_png(bytes: &[u8]) -> Result<Heightmap, HeightmapError> {
        let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: PNG_LIMIT_BYTES });
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder.read_info()?;
        // The header's dimensions are checked before the frame buffer is allocated: a small file
        // may declare a huge image.
        check_dims(reader.info().width, reader.info().height)?;
        let (color, depth) = reader.output_color_type();
        if color != png::ColorType::Grayscale {
            return Err(HeightmapError::NotGrayscale(color));
        }
        let size = reader.output_buffer_size().ok_or(png::DecodingError::LimitsExceeded)?;
        let mut buf = vec![0u8; size];
        let frame = reader.next_frame(&mut buf)?;
        let (width, height) = (frame.width, frame.height);
        let mut samples = Vec::with_capacity(width as usize * height as usize);
        for row in buf.chunks_exact(frame.line_size).take(height as usize) {
            match depth {
                png::BitDepth::Sixteen => samples.extend(row[..width as usize * 2].chunks_exact(2).map(|b| u16::from_be_bytes([b[0], b[1]]))),
                png::BitDepth::Eight => samples.extend(row[..width as usize].iter().map(|&b| u16::from(b) * 257)),
                other => return Err(HeightmapError::BitDepth(other)),
            }
        }
        Ok(Heightmap { width, height, samples })
    }

    /// Reads headerless little-endian 16-bit samples, row-major, top (+Y) row first.
    pub fn from_r16(bytes: &[u8], width: u32, height: u32) -> Result<Heightmap, HeightmapError> {
        check_dims(width, height)?;
        // Cannot overflow once both sides are at most MAX_HEIGHTMAP_SIDE.
        let expected = u64::from(width) * u64::from(height) * 2;
        if bytes.len() as u64 != expected {
            return Err(HeightmapError::RawSize { width, height, expected, actual: bytes.len() as u64 });
        }
        let samples = bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        Ok(Heightmap { width, height, samples })
    }

    /// Bilinear height in `[0, 1]` at `u` (0 = west/-X edge, 1 = east) and `v` (0 = south/-Y
    /// edge, 1 = north); coordinates outside are clamped to the edge. An empty map reads 0.
    pub fn sample(&self, u: f64, v: f64) -> f64 {
        let (w, h) = (self.width as usize, self.height as usize);
        if w == 0 || h == 0 || self.samples.len() < w * h {
            return 0.0;
        }
        let fx = u.clamp(0.0, 1.0) * (w - 1) as f64;
        // Row 0 is north (v = 1).
        let fy = (1.0 - v.clamp(0.0, 1.0)) * (h - 1) as f64;
        let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (tx, ty) = (fx - x0 as f64, fy - y0 as f64);
        let at = |x: usize, y: usize| f64::from(self.samples[x + w * y]) / 65535.0;
        let top = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * tx;
        let bottom = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * tx;
        top + (bottom - top) * ty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode_png16(width: u32, height: u32, samples: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        let mut writer = enc.write_header().unwrap();
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_be_bytes()).collect();
        writer.write_image_data(&bytes).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn png16_and_r16_decode_to_the_same_samples() {
        let samples = [0u16, 1000, 65535, 30000, 7, 12345];
        let png = Heightmap::from_png(&encode_png16(3, 2, &samples)).unwrap();
        let raw_bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let raw = Heightmap::from_r16(&raw_bytes, 3, 2).unwrap();
        assert_eq!(png, raw);
        assert_eq!(png.samples, samples);
    }

    #[test]
    fn r16_size_mismatch_is_an_error() {
        let err = Heightmap::from_r16(&[0u8; 10], 3, 2).unwrap_err();
        assert!(err.to_string().contains("needs 12 bytes"), "{err}");
        assert!(Heightmap::from_png(b"not a png").is_err());
    }

    #[test]
    fn huge_declared_sizes_are_refused_before_allocating() {
        // A raw size whose byte count wraps in 32 or 64 bits.
        for (w, h) in [(u32::MAX, u32::MAX), (1 << 31, 4), (65536, 65536), (MAX_HEIGHTMAP_SIDE + 1, 1), (0, 5)] {
            let e = Heightmap::from_r16(&[0u8; 8], w, h).unwrap_err();
            assert!(matches!(e, HeightmapError::TooLarge { .. }), "{w} x {h}: {e}");
        }
        // A PNG whose header claims 30000 x 30000 but whose data is a few bytes: refused from the
        // header, with the size in the message.
        let mut png = encode_png16(2, 2, &[1, 2, 3, 4]);
        png[16..20].copy_from_slice(&30000u32.to_be_bytes());
        png[20..24].copy_from_slice(&30000u32.to_be_bytes());
        let crc = crc32(&png[12..29]);
        png[29..33].copy_from_slice(&crc.to_be_bytes());
        let e = Heightmap::from_png(&png).unwrap_err();
        assert!(e.to_string().contains("30000 x 30000 is larger than the limit"), "{e}");
        let side = encode_png16(MAX_HEIGHTMAP_SIDE + 1, 1, &vec![0; MAX_HEIGHTMAP_SIDE as usize + 1]);
        assert!(matches!(Heightmap::from_png(&side).unwrap_err(), HeightmapError::TooLarge { .. }));
    }

    /// The PNG chunk CRC (ISO 3309), for patching a header in tests.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
        }
        !c
    }

    #[test]
    fn bilinear_sampling_is_corner_aligned_and_north_up() {
        // 2 x 2: top row (north) = [0, 65535], bottom row (south) = [65535, 65535].
        let hm = Heightmap { width: 2, height: 2, samples: vec![0, 65535, 65535, 65535] };
        assert_eq!(hm.sample(0.0, 1.0), 0.0); // north-west corner
        assert_eq!(hm.sample(1.0, 0.0), 1.0);
        assert!((hm.sample(0.5, 1.0) - 0.5).abs() < 1e-12);
        assert!((hm.sample(0.5, 0.5) - 0.75).abs() < 1e-12);
        assert_eq!(hm.sample(-3.0, 9.0), 0.0); // clamped
        let one = Heightmap { width: 1, height: 1, samples: vec![65535] };
        assert_eq!(one.sample(0.3, 0.7), 1.0);
    }
}
