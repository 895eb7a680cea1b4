//! RGBA8 images shared by tree textures and impostor atlases.

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
    /// An image of `width` × `height` texels, all zero.
    pub fn new(width: u32, height: u32) -> Image {
        Image { width, height, rgba: vec![0; width as usize * height as usize * 4] }
    }

    fn offset(&self, x: u32, y: u32) -> usize {
        (y as usize * self.width as usize + x as usize) * 4
    }

    /// The texel at column `x`, row `y`.
    pub fn texel(&self, x: u32, y: u32) -> [u8; 4] {
        let o = self.offset(x, y);
        [self.rgba[o], self.rgba[o + 1], self.rgba[o + 2], self.rgba[o + 3]]
    }

    /// Sets the texel at column `x`, row `y`.
    pub fn set(&mut self, x: u32, y: u32, v: [u8; 4]) {
        let o = self.offset(x, y);
        self.rgba[o..o + 4].copy_from_slice(&v);
    }

    /// Bilinear sample with wrapping (repeat) at normalised uv, in [0,1] floats per channel.
    pub fn sample(&self, uv: [f32; 2]) -> [f32; 4] {
        if self.width == 0 || self.height == 0 {
            return [0.0; 4];
        }
        let (w, h) = (self.width as f32, self.height as f32);
        let fx = uv[0] * w - 0.5;
        let fy = uv[1] * h - 0.5;
        let (x0, y0) = (fx.floor(), fy.floor());
        let (tx, ty) = (fx - x0, fy - y0);
        let wrap = |v: f32, n: u32| (v as i64).rem_euclid(i64::from(n)) as u32;
        let (xa, xb) = (wrap(x0, self.width), wrap(x0 + 1.0, self.width));
        let (ya, yb) = (wrap(y0, self.height), wrap(y0 + 1.0, self.height));
        let (a, b, c, d) = (self.texel(xa, ya), self.texel(xb, ya), self.texel(xa, yb), self.texel(xb, yb));
        std::array::from_fn(|i| {
            let top = f32::from(a[i]) * (1.0 - tx) + f32::from(b[i]) * tx;
            let bottom = f32::from(c[i]) * (1.0 - tx) + f32::from(d[i]) * tx;
            (top * (1.0 - ty) + bottom * ty) / 255.0
        })
    }
}
