//! The material noise texture: tileable fractal value noise generated on the CPU at start-up and
//! sampled triplanar by the terrain shader.
//!
//! It replaces per-pixel procedural fBm (dozens of hash lookups per pixel, a large share of a frame
//! and most of the lit shader's compile time on lavapipe) with at most six
//! filtered texture reads. Mipmaps do what the procedural version did by hand: octaves finer than
//! a pixel average out to their mean instead of aliasing.
//!
//! Two channels, each a pure function of the texel coordinates (no state, no seed but constants):
//! - R, "coarse": 4 octaves, lattice periods 16, 32, 64 and 128 cells over the texture;
//! - G, "fine": 2 octaves of an independent lattice at [`FINE_SCALE`] times the coarse frequency
//!   (periods 128 and 256).
//!
//! Both live at the same coordinates, so one filtered read per projection plane gives both (three
//! per pixel, not six: on lavapipe each texture read is a large block of JIT-compiled code, and
//! the first frame waits for that compile). Sampled at `uv = p / CELLS` for a shader-side
//! coordinate `p` in lattice units, so one cell of the first coarse octave is one unit of `p`, as
//! in the procedural noise it replaces; the pattern repeats every [`CELLS`] units (96 voxels at the
//! default material scale).

/// Texture edge in texels.
pub const SIZE: u32 = 512;
/// Lattice cells of the first octave across the texture (the shader divides by the same).
pub const CELLS: u32 = 16;
/// Frequency of the fine channel relative to the coarse one (the procedural version used 7.3; a
/// power of two keeps both lattices periodic over the texture).
pub const FINE_SCALE: u32 = 8;
/// Mip levels down to 1×1.
pub const MIP_LEVELS: u32 = SIZE.ilog2() + 1;
/// Two channels: coarse and fine.
pub const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rg8Unorm;

/// Integer hash of a lattice point and a channel seed to [0, 1) (the same mixing as the shader's
/// former `hash2`, so the value distribution is unchanged).
fn hash(x: u32, y: u32, seed: u32) -> f32 {
    let mut h = (x.wrapping_mul(0x8da6_b343) ^ y.wrapping_mul(0xd816_3841)) ^ seed.wrapping_mul(0x9e37_79b9);
    h = (h ^ (h >> 16)).wrapping_mul(0x7feb_352d);
    h = (h ^ (h >> 15)).wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    (h >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// Value noise with `period` cells across the texture, at texel centre (`tx`, `ty`): quintic
/// interpolation between lattice values, the lattice wrapped so the texture tiles seamlessly.
fn value_noise(tx: u32, ty: u32, period: u32, seed: u32) -> f32 {
    let scale = period as f32 / SIZE as f32;
    let (px, py) = ((tx as f32 + 0.5) * scale, (ty as f32 + 0.5) * scale);
    let (ix, iy) = (px.floor(), py.floor());
    let (fx, fy) = (px - ix, py - iy);
    let fade = |f: f32| f * f * f * (f * (f * 6.0 - 15.0) + 10.0);
    let (ux, uy) = (fade(fx), fade(fy));
    let (x0, y0) = (ix as u32 % period, iy as u32 % period);
    let (x1, y1) = ((x0 + 1) % period, (y0 + 1) % period);
    let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
    let top = lerp(hash(x0, y0, seed), hash(x1, y0, seed), ux);
    let bottom = lerp(hash(x0, y1, seed), hash(x1, y1, seed), ux);
    lerp(top, bottom, uy)
}

/// Fractal sum of `octaves` octaves from `first_period` cells across the texture (lacunarity 2,
/// gain 0.5, each octave its own lattice), normalised to [0, 1].
fn fbm(tx: u32, ty: u32, first_period: u32, octaves: u32, seed: u32) -> f32 {
    let (mut sum, mut norm, mut amp) = (0.0, 0.0, 0.5);
    for o in 0..octaves {
        sum += amp * value_noise(tx, ty, first_period << o, seed.wrapping_add(o * 0x632b_e5ab));
        norm += amp;
        amp *= 0.5;
    }
    sum / norm
}

/// Every mip level of the texture, finest first, as RG8 bytes (row-major, no padding). Each level
/// is the 2×2 box average of the one above, computed in f32 from unquantised values so the
/// pyramid is exact, then rounded: a pure function, identical bytes on every machine.
pub fn mip_chain() -> Vec<Vec<u8>> {
    let n = SIZE as usize;
    let mut level: Vec<[f32; 2]> = Vec::with_capacity(n * n);
    for y in 0..SIZE {
        for x in 0..SIZE {
            level.push([fbm(x, y, CELLS, 4, 0x51ed_270b), fbm(x, y, CELLS * FINE_SCALE, 2, 0xa3b1_9535)]);
        }
    }
    let quantise = |v: &[[f32; 2]]| v.iter().flat_map(|c| c.map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u8)).collect::<Vec<u8>>();
    let mut chain = vec![quantise(&level)];
    let mut size = n;
    while size > 1 {
        let half = size / 2;
        let mut next = Vec::with_capacity(half * half);
        for y in 0..half {
            for x in 0..half {
                let at = |dx: usize, dy: usize| level[(2 * y + dy) * size + 2 * x + dx];
                let (a, b, c, d) = (at(0, 0), at(1, 0), at(0, 1), at(1, 1));
                next.push([0, 1].map(|k| 0.25 * (a[k] + b[k] + c[k] + d[k])));
            }
        }
        chain.push(quantise(&next));
        level = next;
        size = half;
    }
    chain
}

/// Creates the texture with its mip chain and returns its view.
pub fn create(device: &wgpu::Device, queue: &wgpu::Queue) -> wgpu::TextureView {
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("material noise"),
        size: wgpu::Extent3d { width: SIZE, height: SIZE, depth_or_array_layers: 1 },
        mip_level_count: MIP_LEVELS,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: FORMAT,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (mip, bytes) in mip_chain().iter().enumerate() {
        let edge = (SIZE >> mip).max(1);
        queue.write_texture(
            wgpu::TexelCopyTextureInfo { texture: &texture, mip_level: mip as u32, origin: wgpu::Origin3d::ZERO, aspect: wgpu::TextureAspect::All },
            bytes,
            wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(2 * edge), rows_per_image: Some(edge) },
            wgpu::Extent3d { width: edge, height: edge, depth_or_array_layers: 1 },
        );
    }
    texture.create_view(&wgpu::TextureViewDescriptor::default())
}

/// The sampler: repeat (the texture tiles), trilinear (mips stand in for the footprint fade).
pub fn sampler(device: &wgpu::Device) -> wgpu::Sampler {
    device.create_sampler(&wgpu::SamplerDescriptor {
        label: Some("material noise"),
        address_mode_u: wgpu::AddressMode::Repeat,
        address_mode_v: wgpu::AddressMode::Repeat,
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        mipmap_filter: wgpu::MipmapFilterMode::Linear,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texel(level: &[u8], size: usize, x: usize, y: usize, c: usize) -> i32 {
        i32::from(level[2 * (y * size + x) + c])
    }

    #[test]
    fn shader_constants_match() {
        let wgsl = include_str!("../shaders/terrain.wgsl");
        assert!(wgsl.contains(&format!("const NOISE_CELLS: f32 = {CELLS}.0;")), "terrain.wgsl's NOISE_CELLS differs from noise::CELLS");
        assert!(
            !wgsl.contains("NOISE_TEXELS") || wgsl.contains(&format!("const NOISE_TEXELS: f32 = {SIZE}.0;")),
            "terrain.wgsl's NOISE_TEXELS differs from noise::SIZE"
        );
    }

    #[test]
    fn chain_has_every_level_down_to_one_texel() {
        let chain = mip_chain();
        assert_eq!(chain.len() as u32, MIP_LEVELS);
        for (i, l) in chain.iter().enumerate() {
            let edge = (SIZE as usize) >> i;
            assert_eq!(l.len(), 2 * edge * edge, "level {i}");
        }
    }

    #[test]
    fn noise_tiles_seamlessly_and_is_smooth() {
        let chain = mip_chain();
        let (l, n) = (&chain[0], SIZE as usize);
        for c in 0..2 {
            // The jump across the wrap-around edge is no larger than the largest step inside:
            // a lattice that did not wrap would show a seam.
            let inner = (0..n)
                .flat_map(|y| (0..n - 1).map(move |x| (x, y)))
                .map(|(x, y)| (texel(l, n, x + 1, y, c) - texel(l, n, x, y, c)).abs())
                .max()
                .unwrap();
            let seam_x = (0..n).map(|y| (texel(l, n, 0, y, c) - texel(l, n, n - 1, y, c)).abs()).max().unwrap();
            let seam_y = (0..n).map(|x| (texel(l, n, x, 0, c) - texel(l, n, x, n - 1, c)).abs()).max().unwrap();
            assert!(seam_x <= inner && seam_y <= inner, "channel {c}: seams {seam_x}, {seam_y}, inner steps up to {inner}");
            assert!(inner < 100, "channel {c}: neighbouring texels differ by {inner}: not smooth noise");
        }
    }

    #[test]
    fn channels_span_the_range_around_one_half_and_are_independent() {
        let chain = mip_chain();
        let l = &chain[0];
        for c in 0..2 {
            let v: Vec<f64> = l.iter().skip(c).step_by(2).map(|&b| f64::from(b) / 255.0).collect();
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let (lo, hi) = v.iter().fold((1.0f64, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            assert!((mean - 0.5).abs() < 0.05, "channel {c}: mean {mean}");
            assert!(lo < 0.25 && hi > 0.75, "channel {c}: range {lo}..{hi} too narrow for material variation");
        }
        // Different lattices: the channels are not (anti)correlated copies of each other.
        let r: Vec<f64> = l.iter().step_by(2).map(|&b| f64::from(b)).collect();
        let g: Vec<f64> = l.iter().skip(1).step_by(2).map(|&b| f64::from(b)).collect();
        let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (mr, mg) = (m(&r), m(&g));
        let cov: f64 = r.iter().zip(&g).map(|(a, b)| (a - mr) * (b - mg)).sum();
        let var = |v: &[f64], mu: f64| v.iter().map(|a| (a - mu) * (a - mu)).sum::<f64>();
        let corr = cov / (var(&r, mr) * var(&g, mg)).sqrt();
        assert!(corr.abs() < 0.1, "correlation {corr}");
    }

    #[test]
    fn mips_average_to_the_mean_and_generation_is_deterministic() {
        let a = mip_chain();
        assert_eq!(a, mip_chain());
        let last = a.last().unwrap();
        for (c, &v) in last.iter().enumerate() {
            assert!((i32::from(v) - 128).abs() < 16, "1×1 mip channel {c} = {v}: far octaves must fade to the mean");
        }
        // A level-1 texel is the rounded average of its four level-0 texels (±1 for rounding).
        let (l0, l1, n) = (&a[0], &a[1], SIZE as usize);
        let avg = (texel(l0, n, 10, 20, 0) + texel(l0, n, 11, 20, 0) + texel(l0, n, 10, 21, 0) + texel(l0, n, 11, 21, 0)) as f64 / 4.0;
        assert!((f64::from(texel(l1, n / 2, 5, 10, 0)) - avg).abs() <= 1.0);
    }
}
