//! The RGBA8 image shared by the tree generator (its textures) and the impostor baker (its inputs).

/// An RGBA8 image, rows top to bottom, 4 bytes per texel, straight (not premultiplied) alpha.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// `width * height * 4` bytes, row-major from the top row.
    pub rgba: Vec<u8>,
}

impl Image {
    /// An image of the given size, every byte zero.
    pub fn new(width: u32, height: u32) -> Image {
        Image { width, height, rgba: vec![0; width as usize * height as usize * 4] }
    }

    /// The texel at column `x`, row `y` (panics outside the image).
    pub fn texel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2], self.rgba[i + 3]]
    }

    /// Writes the texel at column `x`, row `y` (panics outside the image).
    pub fn set(&mut self, x: u32, y: u32, v: [u8; 4]) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.rgba[i..i + 4].copy_from_slice(&v);
    }

    /// Bilinear sample with wrapping (repeat) at normalised uv, in \[0,1\] floats per channel.
    /// Texel centres sit at `(i + 0.5) / size`, as on a GPU; an empty image samples as zero.
    pub fn sample(&self, uv: [f32; 2]) -> [f32; 4] {
        if self.width == 0 || self.height == 0 {
            return [0.0; 4];
        }
        let (w, h) = (self.width as i64, self.height as i64);
        let fx = uv[0] * self.width as f32 - 0.5;
        let fy = uv[1] * self.height as f32 - 0.5;
        if !fx.is_finite() || !fy.is_finite() {
            return [0.0; 4];
        }
        let (x0, y0) = (fx.floor(), fy.floor());
        let (tx, ty) = (fx - x0, fy - y0);
        // Inside the image (the common case) no division is needed.
        let wrap = |v: i64, n: i64| if v >= 0 && v < n { v as u32 } else { v.rem_euclid(n) as u32 };
        let (xa, xb) = (wrap(x0 as i64, w), wrap(x0 as i64 + 1, w));
        let (ya, yb) = (wrap(y0 as i64, h), wrap(y0 as i64 + 1, h));
        let (a, b, c, d) = (self.texel(xa, ya), self.texel(xb, ya), self.texel(xa, yb), self.texel(xb, yb));
        std::array::from_fn(|k| {
            let top = a[k] as f32 * (1.0 - tx) + b[k] as f32 * tx;
            let bottom = c[k] as f32 * (1.0 - tx) + d[k] as f32 * tx;
            (top * (1.0 - ty) + bottom * ty) / 255.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_hits_texel_centres_and_wraps() {
        let mut img = Image::new(2, 2);
        img.set(0, 0, [255, 0, 0, 255]);
        img.set(1, 0, [0, 255, 0, 255]);
        img.set(0, 1, [0, 0, 255, 0]);
        img.set(1, 1, [255, 255, 255, 0]);
        assert_eq!(img.texel(1, 0), [0, 255, 0, 255]);
        assert_eq!(img.sample([0.25, 0.25]), [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(img.sample([0.75, 0.75]), [1.0, 1.0, 1.0, 0.0]);
        // Halfway between the two top texels.
        assert_eq!(img.sample([0.5, 0.25]), [0.5, 0.5, 0.0, 1.0]);
        // uv 0 is halfway between the last and the first column (repeat).
        assert_eq!(img.sample([0.0, 0.25]), [0.5, 0.5, 0.0, 1.0]);
        assert_eq!(img.sample([1.25, -0.75]), img.sample([0.25, 0.25]));
        assert_eq!(Image::new(0, 0).sample([0.3, 0.3]), [0.0; 4]);
    }
}
