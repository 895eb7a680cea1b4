//! Ray-cast every tree preset from the side (top row) and from 35° above (bottom row) into one PNG,
//! with alpha-tested leaves, the species textures, a sun and the baked self-AO, to look at them.
//!
//! `cargo run --release -p kiln-bake --example tree_preview [out.png] [seed] [lod] [ao]`
//! (defaults: trees.png, seed 1, LOD 0; a fourth argument `ao` shows the self-AO as grey).

use glam::Vec3A;
use kiln_bake::rays::{Bvh, Ray};
use kiln_bake::trees::{self, grow, preset, PRESETS};

const W: usize = 240;
const H: usize = 300;

fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let s = if c <= 0.0031308 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0).round() as u8
}

/// Renders one prototype into a W×H tile viewed along `forward` (orthographic).
fn render(proto: &trees::Prototype, tex: &trees::SpeciesTextures, lod: usize, elevation: f32, ao_only: bool) -> (Vec<[u8; 3]>, usize) {
    let m = &proto.mesh;
    let l = m.lods[lod];
    let bark = &m.bark_indices[..l.bark_index_count as usize];
    let leaf = &m.leaf_indices[..l.leaf_index_count as usize];
    let indices: Vec<u32> = bark.iter().chain(leaf).copied().collect();
    let bark_tris = bark.len() / 3;
    let bvh = Bvh::build(&m.positions, &indices).expect("finite mesh");
    let (ce, se) = (elevation.cos(), elevation.sin());
    let forward = Vec3A::new(0.0, ce, -se);
    let right = Vec3A::X;
    let up = right.cross(forward).normalize();
    let sun = Vec3A::new(-0.5, -0.6, 0.7).normalize();
    let extent = proto.height.max(2.0 * proto.radius) * 1.1;
    let centre = Vec3A::new(0.0, 0.0, proto.height * 0.5);
    let mut out = vec![[0u8; 3]; W * H];
    let mut covered = 0;
    for py in 0..H {
        for px in 0..W {
            let sx = (px as f32 + 0.5) / W as f32 - 0.5;
            let sy = 0.5 - (py as f32 + 0.5) / H as f32;
            let origin = centre + right * sx * extent * W as f32 / H as f32 + up * sy * extent - forward * 10.0;
            let mut ray = Ray { origin, dir: forward, tmin: 0.0, tmax: 100.0 };
            let mut colour = if py as f32 > H as f32 * (0.5 + 0.5 * (1.0 - se)) && elevation == 0.0 { [0.25, 0.22, 0.18] } else { [0.55, 0.7, 0.9] };
            while let Some(hit) = bvh.intersect(&ray) {
                let t = &indices[3 * hit.tri as usize..3 * hit.tri as usize + 3];
                let w = [1.0 - hit.u - hit.v, hit.u, hit.v];
                let uv = (0..3).fold([0.0f32; 2], |a, k| {
                    let q = m.uvs[t[k] as usize];
                    [a[0] + q[0] * w[k], a[1] + q[1] * w[k]]
                });
                let n: Vec3A = (0..3).map(|k| Vec3A::from(m.normals[t[k] as usize]) * w[k]).sum::<Vec3A>().normalize();
                let ao: f32 = (0..3).map(|k| m.ao[t[k] as usize] * w[k]).sum();
                let is_leaf = hit.tri as usize >= bark_tris;
                let texel = if is_leaf { tex.leaf.sample(uv) } else { tex.bark.sample(uv) };
                if is_leaf && texel[3] < 0.5 {
                    ray.tmin = hit.t + 1e-5;
                    continue;
                }
                let n = if n.dot(forward) > 0.0 { -n } else { n };
                let diffuse = n.dot(sun).max(0.0);
                let light = 0.45 * ao + 0.75 * diffuse * (0.4 + 0.6 * ao);
                covered += 1;
                colour = if ao_only { [ao; 3] } else { std::array::from_fn(|c| srgb_to_linear(texel[c]) * light) };
                break;
            }
            out[py * W + px] = colour.map(linear_to_srgb);
        }
    }
    (out, covered)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "trees.png".into());
    let seed: u64 = args.next().map_or(1, |s| s.parse().expect("seed is a number"));
    let lod: usize = args.next().map_or(0, |s| s.parse().expect("lod is 0, 1 or 2"));
    let ao_only = args.next().is_some_and(|s| s == "ao");
    let cols = PRESETS.len();
    let rows = 2;
    let mut img = vec![0u8; cols * W * rows * H * 3];
    for (c, name) in PRESETS.iter().enumerate() {
        let p = preset(name).expect("preset");
        let proto = grow(&p, seed, 1.2);
        let tex = trees::textures(&p);
        let m = &proto.mesh;
        println!(
            "{name}: {} bark + {} leaf triangles, {} vertices, height {:.3}, radius {:.3}",
            m.bark_indices.len() / 3,
            m.leaf_indices.len() / 6,
            m.positions.len(),
            proto.height,
            proto.radius
        );
        // Screen coverage of each LOD from the side, relative to the full mesh: what thinning leaves costs.
        let cover: Vec<usize> = (0..3).map(|l| render(&proto, &tex, l, 0.0, false).1).collect();
        println!("  side coverage: LOD1 {:.3}, LOD2 {:.3} of full", cover[1] as f32 / cover[0] as f32, cover[2] as f32 / cover[0] as f32);
        for (r, elevation) in [0.0f32, 35f32.to_radians()].into_iter().enumerate() {
            let (tile, _) = render(&proto, &tex, lod, elevation, ao_only);
            for y in 0..H {
                for x in 0..W {
                    let o = (((r * H + y) * cols * W) + c * W + x) * 3;
                    img[o..o + 3].copy_from_slice(&tile[y * W + x]);
                }
            }
        }
    }
    let file = std::fs::File::create(&path).expect("create PNG");
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), (cols * W) as u32, (rows * H) as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().and_then(|mut w| w.write_image_data(&img)).expect("write PNG");
    println!("wrote {path}");
}
