//! Synthetic trees for the fixture world, written with `kiln-formats` alone: a shared trees pack
//! (two prototypes: a cylinder trunk with a crown of leaf quads on a sphere; an analytic impostor
//! atlas of trunk and crown ray-cast per view) and `TINS`/`TILT` added to every tile pack whose
//! footprint holds a tree, the manifest rewritten with the new hashes and its `SHRD`.

use std::path::Path;

use kiln_formats::sections::{
    AtlasLevel, ImpostorAtlas, ImpostorLayout, Manifest, PackInfo, PackKind, Rgba8Level, SharedPack, SharedPacks, SpeciesTextures, TreeImpostors,
    TreeInstance, TreeInstances, TreeLighting, TreeLod, TreePrototype, TreePrototypes, TreeTextures,
};
use kiln_formats::{write_atomic, Pack, PackBuilder, TileContents};

use super::synth::Synth;

/// Crown sphere centre height and radius, trunk radius and height (object space, world units).
pub const CROWN: (f32, f32) = (4.0, 2.0);
const TRUNK: (f32, f32) = (0.25, 3.5);
const SPHERE: ([f32; 3], f32) = ([0.0, 0.0, 3.0], 3.2);

fn mips(size: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Vec<Rgba8Level> {
    let mut rgba = Vec::new();
    for y in 0..size {
        for x in 0..size {
            rgba.extend(f(x, y));
        }
    }
    let mut chain = vec![Rgba8Level { width: size, height: size, rgba }];
    while chain.last().unwrap().width > 1 {
        let p = chain.last().unwrap();
        let s = p.width / 2;
        let mut rgba = Vec::new();
        for y in 0..s {
            for x in 0..s {
                for c in 0..4 {
                    let at = |dx: u32, dy: u32| p.rgba[(((2 * y + dy) * p.width + 2 * x + dx) * 4 + c) as usize] as u32;
                    rgba.push(((at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1) + 2) / 4) as u8);
                }
            }
        }
        chain.push(Rgba8Level { width: s, height: s, rgba });
    }
    chain
}

fn prototype(seed: u64) -> TreePrototype {
    let mut p = TreePrototype { species: 0, seed, height: CROWN.0 + CROWN.1, crown_radius: CROWN.1, ..Default::default() };
    let sides = 8;
    for k in 0..=sides {
        let a = k as f32 / sides as f32 * std::f32::consts::TAU;
        for z in [0.0, TRUNK.1] {
            p.positions.push([TRUNK.0 * a.cos(), TRUNK.0 * a.sin(), z]);
            p.normals.push([a.cos(), a.sin(), 0.0]);
            p.uvs.push([k as f32 / sides as f32, z / 2.0]);
            p.ao.push(if z == 0.0 { 120 } else { 220 });
        }
    }
    for k in 0..sides {
        let (a, b, c, d) = (2 * k, 2 * k + 2, 2 * k + 3, 2 * k + 1);
        p.bark_indices.extend([a, b, c, a, c, d]);
    }
    let leaves = 260 + (seed as u32 % 3) * 20;
    for q in 0..leaves {
        // Scattered order, so that every leaf prefix (the LODs) covers the whole crown.
        let k = (q * 97) % leaves;
        let z = 1.0 - 2.0 * (k as f32 + 0.5) / leaves as f32;
        let r = (1.0 - z * z).sqrt();
        let a = k as f32 * 2.399_963 + seed as f32;
        let n = [r * a.cos(), r * a.sin(), z];
        let c = [n[0] * CROWN.1 * 0.92, n[1] * CROWN.1 * 0.92, CROWN.0 + n[2] * CROWN.1 * 0.92];
        // Two axes across the leaf, perpendicular to its outward normal.
        let t = if n[2].abs() < 0.9 { [-n[1], n[0], 0.0] } else { [1.0, 0.0, 0.0] };
        let tl = (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt();
        let t = t.map(|v| v / tl);
        let b = [n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0]];
        let base = p.positions.len() as u32;
        for (u, v) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
            let (su, sv) = ((u - 0.5) * 0.9, (v - 0.5) * 0.9);
            p.positions.push([c[0] + t[0] * su + b[0] * sv, c[1] + t[1] * su + b[1] * sv, c[2] + t[2] * su + b[2] * sv]);
            p.normals.push(n);
            p.uvs.push([u, v]);
            p.ao.push((150.0 + 100.0 * (z * 0.5 + 0.5)) as u8);
        }
        p.leaf_indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    let (b, l) = (p.bark_indices.len() as u32, p.leaf_indices.len() as u32);
    let third = |n: u32| n / 3 / 3 * 3;
    p.lods = [
        TreeLod { bark_index_count: b, leaf_index_count: l },
        TreeLod { bark_index_count: b, leaf_index_count: third(l * 2) },
        TreeLod { bark_index_count: b, leaf_index_count: (l / 4) / 6 * 6 },
    ];
    p
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    v.map(|c| c / l)
}

/// Frame direction and basis, as `bake/src/impostor/octahedral.rs` defines them.
fn frame(grid: u32, i: u32, j: u32) -> ([f32; 3], [f32; 3], [f32; 3]) {
    let n = (grid - 1) as f32;
    let (mut a, mut b) = (i as f32 / n * 2.0 - 1.0, j as f32 / n * 2.0 - 1.0);
    let z = 1.0 - a.abs() - b.abs();
    if z < 0.0 {
        let s = |x: f32| if x >= 0.0 { 1.0 } else { -1.0 };
        let (fa, fb) = ((1.0 - b.abs()) * s(a), (1.0 - a.abs()) * s(b));
        a = fa;
        b = fb;
    }
    let d = normalize([a, b, z]);
    let h = d[0] * d[0] + d[1] * d[1];
    let right = if h > 1e-12 { [-d[1] / h.sqrt(), d[0] / h.sqrt(), 0.0] } else { [1.0, 0.0, 0.0] };
    let up = [d[1] * right[2] - d[2] * right[1], d[2] * right[0] - d[0] * right[2], d[0] * right[1] - d[1] * right[0]];
    (d, right, up)
}

/// The analytic atlas: per view, rays against the crown sphere and the trunk cylinder.
fn atlas(grid: u32, view_px: u32) -> ImpostorAtlas {
    let size = grid * view_px;
    let (c, r) = SPHERE;
    let mut albedo = vec![0u8; (size * size * 4) as usize];
    let mut normal = vec![0u8; (size * size * 4) as usize];
    let mut depth = vec![65535u16; (size * size) as usize];
    for j in 0..grid {
        for i in 0..grid {
            let (d, right, up) = frame(grid, i, j);
            for y in 0..view_px {
                for x in 0..view_px {
                    let (u, v) = ((x as f32 + 0.5) / view_px as f32 * 2.0 - 1.0, 1.0 - (y as f32 + 0.5) / view_px as f32 * 2.0);
                    let p: [f32; 3] = std::array::from_fn(|k| c[k] + (right[k] * u + up[k] * v) * r);
                    let o: [f32; 3] = std::array::from_fn(|k| p[k] + d[k] * 2.0 * r);
                    let dir = d.map(|x| -x);
                    let mut best: Option<(f32, [f32; 3], [u8; 3])> = None;
                    // Crown.
                    let oc = [o[0], o[1], o[2] - CROWN.0];
                    let bq = oc[0] * dir[0] + oc[1] * dir[1] + oc[2] * dir[2];
                    let cq = oc[0] * oc[0] + oc[1] * oc[1] + oc[2] * oc[2] - CROWN.1 * CROWN.1;
                    if bq * bq - cq >= 0.0 {
                        let t = -bq - (bq * bq - cq).sqrt();
                        let h: [f32; 3] = std::array::from_fn(|k| oc[k] + dir[k] * t);
                        best = Some((t, normalize(h), [46, 92, 30]));
                    }
                    // Trunk (infinite cylinder clipped to its height).
                    let (a2, b2) = (dir[0] * dir[0] + dir[1] * dir[1], o[0] * dir[0] + o[1] * dir[1]);
                    let c2 = o[0] * o[0] + o[1] * o[1] - TRUNK.0 * TRUNK.0;
                    if a2 > 1e-9 && b2 * b2 - a2 * c2 >= 0.0 {
                        let t = (-b2 - (b2 * b2 - a2 * c2).sqrt()) / a2;
                        let z = o[2] + dir[2] * t;
                        if (0.0..=TRUNK.1).contains(&z) && best.is_none_or(|b| t < b.0) {
                            let hx = o[0] + dir[0] * t;
                            let hy = o[1] + dir[1] * t;
                            best = Some((t, normalize([hx, hy, 0.0]), [90, 62, 40]));
                        }
                    }
                    let at = ((j * view_px + y) * size + i * view_px + x) as usize;
                    match best {
                        Some((t, n, col)) => {
                            albedo[at * 4..at * 4 + 4].copy_from_slice(&[col[0], col[1], col[2], 255]);
                            let e = |x: f32| ((x * 0.5 + 0.5) * 255.0).round() as u8;
                            normal[at * 4..at * 4 + 4].copy_from_slice(&[e(n[0]), e(n[1]), e(n[2]), 220]);
                            let hit: [f32; 3] = std::array::from_fn(|k| o[k] + dir[k] * t - c[k]);
                            // Positive toward the viewer (along d), as the bake stores it.
                            let s = (hit[0] * d[0] + hit[1] * d[1] + hit[2] * d[2]) / r;
                            depth[at] = ((s * 0.5 + 0.5).clamp(0.0, 1.0) * 65535.0).round() as u16;
                        }
                        None => {
                            albedo[at * 4..at * 4 + 4].copy_from_slice(&[46, 92, 30, 0]);
                            normal[at * 4..at * 4 + 4].copy_from_slice(&[128, 128, 255, 255]);
                        }
                    }
                }
            }
        }
    }
    let mut levels = vec![AtlasLevel { size, albedo, normal, depth }];
    while levels.last().unwrap().size % 2 == 0 && levels.last().unwrap().size > grid {
        let p = levels.last().unwrap();
        let s = p.size / 2;
        let (mut al, mut no, mut de) = (Vec::new(), Vec::new(), Vec::new());
        for y in 0..s {
            for x in 0..s {
                let idx = |dx: u32, dy: u32| ((2 * y + dy) * p.size + 2 * x + dx) as usize;
                let four = [idx(0, 0), idx(1, 0), idx(0, 1), idx(1, 1)];
                for ch in 0..4 {
                    al.push((four.iter().map(|&k| p.albedo[k * 4 + ch] as u32).sum::<u32>() / 4) as u8);
                    no.push((four.iter().map(|&k| p.normal[k * 4 + ch] as u32).sum::<u32>() / 4) as u8);
                }
                de.push(four.iter().map(|&k| p.depth[k]).min().unwrap());
            }
        }
        levels.push(AtlasLevel { size: s, albedo: al, normal: no, depth: de });
    }
    ImpostorAtlas { layout: ImpostorLayout::Octahedral, grid, view_px, center: c, radius: r, levels }
}

/// The shared trees pack's bytes (two prototypes of one species).
pub fn shared_pack() -> Vec<u8> {
    let protos = TreePrototypes { species: vec!["synthetic oak".into()], prototypes: vec![prototype(1), prototype(2)] };
    let bark = mips(16, |x, y| {
        let v = ((x * 7 + y * 13) % 5) as u8 * 6;
        [90 + v, 62 + v, 40 + v, 255]
    });
    let leaf = mips(16, |x, y| {
        let (dx, dy) = (x as f32 - 7.5, y as f32 - 7.5);
        let inside = dx * dx + dy * dy < 56.0;
        [40 + (x * 3) as u8, 96 + (y * 2) as u8, 30, if inside { 255 } else { 0 }]
    });
    let textures = TreeTextures { species: vec![SpeciesTextures { bark, leaf }] };
    let a = atlas(8, 32);
    let impostors = TreeImpostors { atlases: vec![a.clone(), a] };
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Shared { product: "tree-prototypes".into() }, world_name: "synth".into(), inputs_hash: 11 }).unwrap();
    b.add(&protos).unwrap();
    b.add(&textures).unwrap();
    b.add(&impostors).unwrap();
    b.to_bytes().unwrap()
}

/// Adds the shared trees pack and `trees` (base x, y; on the terrain) to the bake at `dir`.
pub fn add_trees(dir: &Path, synth: &Synth, trees: &[[f32; 2]]) {
    let shared = shared_pack();
    let hash = xxhash_rust::xxh3::xxh3_64(&shared);
    std::fs::create_dir_all(dir.join("shared")).unwrap();
    write_atomic(&dir.join("shared/tree-prototypes.kpack"), &shared).unwrap();
    let mpack = Pack::open(&dir.join("manifest.kpack")).unwrap();
    let mut manifest: Manifest = mpack.require().unwrap();
    for node in &mut manifest.nodes {
        let span = (synth.cells << node.level) as f32;
        let (x0, y0) = (node.x as f32 * span, node.y as f32 * span);
        let mine: Vec<(usize, [f32; 2])> =
            trees.iter().copied().enumerate().filter(|(_, p)| p[0] >= x0 && p[0] < x0 + span && p[1] >= y0 && p[1] < y0 + span).collect();
        if mine.is_empty() {
            continue;
        }
        let path = dir.join(&node.path);
        let tile = TileContents::read(&Pack::open(&path).unwrap()).unwrap();
        let instances = mine
            .iter()
            .map(|&(k, p)| TreeInstance {
                position: [p[0], p[1], synth.height(p[0], p[1]) - 0.1],
                yaw: k as f32 * 1.3,
                scale: 0.9 + 0.05 * (k % 5) as f32,
                tint: [1.0, 1.0 - 0.03 * (k % 4) as f32, 1.0],
                prototype: (k % 2) as u32,
            })
            .collect();
        let lighting = TreeLighting(mine.iter().map(|_| [[0.55, 0.62, 0.75], [0.12, 0.11, 0.09], [0.35, 0.38, 0.45]]).collect());
        let mut b = PackBuilder::new([0, 1, 0]);
        b.add(&tile.info).unwrap();
        b.add(tile.mesh.as_ref().unwrap()).unwrap();
        if let Some(ao) = &tile.ao {
            b.add(ao).unwrap();
        }
        b.add(&TreeInstances { prototypes_hash: hash, instances }).unwrap();
        b.add(&lighting).unwrap();
        let bytes = b.to_bytes().unwrap();
        write_atomic(&path, &bytes).unwrap();
        node.content_hash = xxhash_rust::xxh3::xxh3_64(&bytes);
        node.file_len = bytes.len() as u64;
    }
    let mut b = PackBuilder::new([0, 1, 0]);
    b.add(&PackInfo { kind: PackKind::Manifest, world_name: manifest.world_name.clone(), inputs_hash: manifest.world_hash }).unwrap();
    b.add(&manifest).unwrap();
    b.add(&SharedPacks(vec![SharedPack {
        product: "tree-prototypes".into(),
        path: "shared/tree-prototypes.kpack".into(),
        content_hash: hash,
        file_len: shared.len() as u64,
    }]))
    .unwrap();
    write_atomic(&dir.join("manifest.kpack"), &b.to_bytes().unwrap()).unwrap();
}

/// A forest for the fixture: a grid of trees over the world (away from the trench).
pub fn forest(synth: &Synth) -> Vec<[f32; 2]> {
    let w = synth.width();
    let mut out = Vec::new();
    let mut k = 0u32;
    let mut y = 3.0;
    while y < w - 2.0 {
        let mut x = 3.0 + (k % 2) as f32 * 2.5;
        while x < w - 2.0 {
            if (x - synth.trench_x()).abs() > 5.0 {
                out.push([x, y]);
            }
            x += 7.0;
        }
        y += 6.0;
        k += 1;
    }
    out
}
