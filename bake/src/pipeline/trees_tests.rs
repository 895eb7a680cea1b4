//! One tree on a flat plane under a uniform sky: the ground under it receives the sky the real,
//! alpha-tested tree leaves visible, although light transport sees only its proxy.

use glam::Vec3A;

use super::build::{self, level, Proxy};
use crate::impostor::Image;
use crate::lighting::{bake_lighting, LightingSpec, Occluders, SceneMesh, VolumeDesc};
use crate::rays::{Bvh, Ray};
use crate::rng::Rng;
use crate::trees;
use kiln_formats::sections::{SpeciesTextures, TreePrototypes, TreeTextures};

/// The cosine-weighted share of the sky the real tree leaves open above `p`: rays through the
/// mesh, passing leaf texels whose alpha is below the test.
fn open_sky(tree: &trees::Prototype, leaf: &Image, at: [f32; 3], rays: usize) -> f64 {
    let m = &tree.mesh;
    let indices = [m.bark_indices.as_slice(), m.leaf_indices.as_slice()].concat();
    let first_leaf = (m.bark_indices.len() / 3) as u32;
    let bvh = Bvh::build(&m.positions, &indices).unwrap();
    let mut rng = Rng::keyed(3, "test.sky", 0);
    let mut open = 0usize;
    for _ in 0..rays {
        let (u1, u2) = (rng.unit() as f32, rng.unit() as f32);
        let (r, phi) = (u1.sqrt(), std::f32::consts::TAU * u2);
        let dir = Vec3A::new(r * phi.cos(), r * phi.sin(), (1.0 - u1).sqrt());
        let mut ray = Ray { origin: Vec3A::from(at), dir, tmin: 1e-4, tmax: f32::INFINITY };
        let blocked = loop {
            let Some(h) = bvh.intersect(&ray) else { break false };
            if h.tri < first_leaf {
                break true;
            }
            let t = &indices[3 * h.tri as usize..3 * h.tri as usize + 3];
            let uv = [0, 1].map(|k| (1.0 - h.u - h.v) * m.uvs[t[0] as usize][k] + h.u * m.uvs[t[1] as usize][k] + h.v * m.uvs[t[2] as usize][k]);
            if leaf.sample(uv)[3] >= 0.5 {
                break true;
            }
            ray.tmin = h.t * (1.0 + 1e-6) + 1e-6;
        };
        open += usize::from(!blocked);
    }
    open as f64 / rays as f64
}

#[test]
fn the_ground_under_one_tree_gets_the_sky_its_real_leaves_leave_open() {
    let params = trees::preset("oak").unwrap();
    let tree = trees::grow(&params, 11, 3.0);
    let tex = trees::textures(&params);
    let protos = TreePrototypes { species: vec!["oak".into()], prototypes: vec![build::prototype_section(0, &tree)] };
    let textures = TreeTextures { species: vec![SpeciesTextures { bark: vec![level(&tex.bark)], leaf: vec![level(&tex.leaf)] }] };
    let proxy: Proxy = build::proxies(&protos, &textures).remove(0);

    // A 16 × 16 plane with the tree in its middle; nothing reflects, so the ground gets exactly the sky it sees.
    let (size, n) = (16.0f32, 128usize);
    let mut pos = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            pos.push([size * i as f32 / n as f32 - size / 2.0, size * j as f32 / n as f32 - size / 2.0, 0.0]);
        }
    }
    let w = n as u32 + 1;
    let idx: Vec<u32> = (0..n as u32)
        .flat_map(|j| {
            (0..n as u32).flat_map(move |i| [j * w + i, j * w + i + 1, (j + 1) * w + i + 1, j * w + i, (j + 1) * w + i + 1, (j + 1) * w + i])
        })
        .collect();
    let black = vec![[0.0f32; 3]; proxy.indices.len() / 3];
    let occluders = Occluders { positions: &proxy.positions, indices: &proxy.indices, albedo: &black, clusters: &[] };
    let mesh = SceneMesh { occluders: Some(occluders), ..SceneMesh::new(&pos, &idx) };
    let mut spec = LightingSpec::default();
    spec.sky.color = [1.0; 3];
    spec.sun.intensity = 0.0;
    spec.moon.intensity = 0.0;
    spec.albedo = [0.0; 3];
    spec.paths_per_area = 2000.0;
    spec.smoothing = 4;
    let none = VolumeDesc { min: [0.0; 3], max: [1.0; 3], dims: [0, 0, 0] };
    let baked = bake_lighting(&mesh, ([-size / 2.0, -size / 2.0, 0.0], [size / 2.0, size / 2.0, 4.0]), &none, &spec, 21).unwrap();

    // Ground points on rings around the trunk: under the crown, at its rim, beyond it.
    let rim = tree.radius;
    for (ring, r) in [("under the crown", 0.5 * rim), ("at the rim", rim), ("beyond", 2.0 * rim)] {
        let points: Vec<[f32; 3]> = (0..16).map(|k| std::f32::consts::TAU * k as f32 / 16.0).map(|a| [r * a.cos(), r * a.sin(), 0.0]).collect();
        let got: f64 =
            baked.irradiance_at(&points, &vec![[0.0, 0.0, 1.0]; points.len()]).unwrap().iter().map(|e| e.ambient[1] as f64).sum::<f64>() / 16.0;
        let want = std::f64::consts::PI * points.iter().map(|&p| open_sky(&tree, &tex.leaf, p, 4000)).sum::<f64>() / 16.0;
        let hidden = (std::f64::consts::PI - want) / std::f64::consts::PI;
        assert!(
            (got - want).abs() < 0.02 * std::f64::consts::PI + 0.1 * (std::f64::consts::PI - want),
            "{ring} (r = {r:.2}): the proxy gives {got:.3}, the real tree {want:.3} ({:.0} % of the sky hidden)",
            100.0 * hidden
        );
    }
}

#[test]
fn trees_never_change_the_density_key() {
    let text = |trees: &str| format!("name = 't'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n{trees}");
    let load = |t: &str| crate::world::World::from_str(&text(t), std::path::Path::new("w.toml"), std::path::Path::new(".")).unwrap();
    let (plain, trees) = (load(""), load("[[trees.species]]\npreset = 'pine'\n"));
    assert_eq!(super::super::inputs::density_hash(&plain), super::super::inputs::density_hash(&trees));
}

#[test]
fn every_species_leaf_mips_keep_their_alpha_tested_coverage() {
    use crate::impostor::mips::{coverage_preserving_mips, passing};
    for name in trees::PRESETS {
        let leaf = trees::textures(&trees::preset(name).unwrap()).leaf;
        let levels = coverage_preserving_mips(&leaf, trees::LEAF_ALPHA_TEST);
        let share = |img: &Image| passing(img.rgba.chunks_exact(4).map(|t| t[3]), trees::LEAF_ALPHA_TEST) as f64 / (img.width * img.height) as f64;
        let base = share(&levels[0]);
        for (l, img) in levels.iter().enumerate() {
            // Levels where fewer than 10 texels should pass cannot hold a share to 5 %.
            if base * ((img.width * img.height) as f64) < 10.0 {
                continue;
            }
            assert!((share(img) - base).abs() <= 0.05 * base, "{name}: level {l} covers {:.3}, level 0 {base:.3}", share(img));
        }
    }
}

#[test]
fn trees_keep_out_of_the_water_by_their_height_band() {
    let text = |water: &str| format!("name = 'w'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n{water}");
    let dry = crate::world::World::from_str(&text(""), std::path::Path::new("w.toml"), std::path::Path::new(".")).unwrap();
    let wet = crate::world::World::from_str(&text("[water]\nlevel = 1.5\n"), std::path::Path::new("w.toml"), std::path::Path::new(".")).unwrap();
    assert_eq!(super::dry_band(&dry, [0.0, 3.0]), [0.0, 3.0]);
    assert_eq!(super::dry_band(&wet, [0.0, 3.0]), [1.5, 3.0], "the band starts at the level");
    assert_eq!(super::dry_band(&wet, [2.0, 3.0]), [2.0, 3.0], "a band above the level is unchanged");
    assert_eq!(super::dry_band(&wet, [0.0, 1.0]), [1.5, 1.5], "a band under water keeps only the shore line, still ordered");
}

/// The fidelity sweep for every shipped species, as the bake captures it (its materials,
/// its automatic texel): the impostor must come as close to its mesh as the mesh's own exact
/// capture does when drawn half a texel off (`reconstruct::resampling_ceiling`). The issue's
/// absolute bar (IoU ≥ 0.95, depth ≤ 2 %) is beyond that capture for every species: see
/// BENCHMARKS.md, "Trees".
#[test]
fn every_species_impostor_comes_as_close_to_its_mesh_as_an_exact_capture_half_a_texel_off() {
    use crate::impostor::reconstruct::{fibonacci_directions, resampling_ceiling, sweep};
    use crate::impostor::{bake, ImpostorSettings};
    let dirs = fibonacci_directions(64);
    for name in trees::PRESETS {
        let params = trees::preset(name).unwrap();
        let m = trees::grow(&params, 7, 12.0).mesh;
        let settings = ImpostorSettings { texel: m.auto_impostor_texel(), ..ImpostorSettings::default() };
        let (s, capture, px) = m.with_capture_mesh(0, &trees::textures(&params), |mesh| {
            let imp = bake(mesh, &settings).unwrap();
            (sweep(mesh, &imp, &dirs).unwrap(), resampling_ceiling(mesh, &dirs, imp.view_px).unwrap(), imp.view_px)
        });
        println!("{name}: impostor {s}; exact capture half a texel off: {capture}");
        if let Err(e) = s.mean.against_exact_capture(&capture.mean, px) {
            panic!("{name}: {e}");
        }
    }
}

/// The key of world product `product` for the world `text` describes.
fn world_key(text: &str, product: &str) -> u128 {
    use crate::pipeline::{progress::NoProgress, Engine, Plan, Registry, StageCache};
    let world = crate::world::World::from_str(text, std::path::Path::new("w.toml"), std::path::Path::new(".")).unwrap();
    let (plan, registry, cache) = (Plan::new(&world), Registry::standard(), StageCache::new(None, "keys", false));
    let engine = Engine::new(&plan, &registry, &cache, &NoProgress);
    engine.world_key(product).unwrap().key().0
}

#[test]
fn impostor_settings_never_retrace_the_light_but_shapes_do() {
    let text = |species: &str, impostor: &str| {
        format!("name = 't'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n[[trees.species]]\npreset = 'pine'\n{species}\n[trees.impostor]\n{impostor}\n")
    };
    let (plain, views, taller) = (text("", ""), text("", "grid = 8"), text("height = [2.0, 3.0]", ""));
    assert_eq!(world_key(&plain, "transport"), world_key(&views, "transport"), "an impostor setting retraced the light");
    assert_ne!(world_key(&plain, "tree-prototypes"), world_key(&views, "tree-prototypes"), "an impostor setting kept the atlases");
    assert_ne!(world_key(&plain, "transport"), world_key(&taller, "transport"), "taller trees kept the light");
    assert_ne!(world_key(&plain, "tree-shapes"), world_key(&taller, "tree-shapes"));
}

#[test]
fn grown_and_captured_prototypes_come_back_from_their_cache_forms_and_damaged_ones_do_not() {
    let spec = crate::world::World::from_str(
        "name = 't'\n[volume]\nsize = [64, 64, 32]\nvoxel_size = 0.25\ntile_size = 16\n[[trees.species]]\npreset = 'pine'\nprototypes = 2\n",
        std::path::Path::new("w.toml"),
        std::path::Path::new("."),
    )
    .unwrap()
    .spec
    .trees
    .unwrap();
    let growing = build::Growing::new(&spec, 7);
    let species = growing.species();
    let shape = growing.grow(1);
    let bytes = shape.to_bytes(&species).unwrap();
    assert_eq!(build::Shape::from_bytes(&bytes, &species).unwrap(), shape);
    assert!(build::Shape::from_bytes(&bytes[..bytes.len() - 1], &species).is_err(), "a truncated shape was read");
    assert!(build::Shape::from_bytes(&bytes, &["oak".to_owned()]).is_err(), "another world's shape was read");

    let shapes = growing.shapes(vec![growing.grow(0), shape]);
    let capture = growing.capture(1, &shapes).unwrap();
    let bytes = capture.to_bytes().unwrap();
    assert_eq!(build::Capture::from_bytes(&bytes).unwrap(), capture);
    assert!(build::Capture::from_bytes(&[bytes.as_slice(), &[0]].concat()).is_err(), "trailing bytes were read");

    let bytes = shapes.to_bytes().unwrap();
    let back = build::Shapes::from_bytes(&bytes, &species).unwrap();
    assert_eq!((&back.prototypes, &back.textures, &back.ao), (&shapes.prototypes, &shapes.textures, &shapes.ao));
    assert!(build::Shapes::from_bytes(&bytes[..bytes.len() / 2], &species).is_err(), "a truncated set of shapes was read");
}
