//! The grass products' rules on small hand-made grounds: AO pruning, slope compensation, no grass
//! on cliffs or under overhangs, instances tiling the tile, and the irradiance volume put back
//! together from tile slices, and the map's bands joining into the map whatever rows they hold.

use super::build::{tile_section, SlicedVolume};
use super::ground::{self, ao_keep, slope_keep, GroundMap, ShapeInputs, ShapeRows};
use super::*;
use crate::ao::{AoSettings, OccupancyField};
use crate::density::DensityVolume;
use crate::lighting::{IrradianceVolume, VolumeDesc};
use kiln_formats::sections::rgb9e5;

const VS: f32 = 0.25;

fn volume(dims: [usize; 3], f: impl Fn(f32, f32, f32) -> f32) -> Volume {
    let density = DensityVolume::from_fn(dims, |i, j, k| f(i as f32 * VS, j as f32 * VS, k as f32 * VS).clamp(-1.0, 1.0));
    let occupancy = OccupancyField::from_densities(density.dims, &density.data).unwrap();
    Volume { density, occupancy }
}

/// A uniformly lit volume: every bin of every cell holds `rgb`.
fn light(rgb: [f32; 3]) -> IrradianceVolume {
    IrradianceVolume {
        min: [0.0; 3],
        max: [8.0, 8.0, 8.0],
        dims: [2, 2, 2],
        ambient: vec![[rgb; 6]; 8],
        direct: vec![[[0.0; 3]; 6]; 8],
        air: Vec::new(),
    }
}

fn map(v: &Volume, spec: &GrassSpec) -> GroundMap {
    with_inputs(v, spec, |inputs| {
        let n = inputs.samples();
        let shape = ground::join_shape(n, VS, (0..ground::band_count(n)).map(|b| ground::shape_band(inputs, b).unwrap()).collect());
        let l = light([0.5, 0.6, 0.7]);
        ground::map(&shape, (0..ground::band_count(n)).map(|b| ground::light_band(&shape, &l, VS, b)).collect()).0
    })
}

fn with_inputs<T>(v: &Volume, spec: &GrassSpec, f: impl FnOnce(&ShapeInputs) -> T) -> T {
    let ao = AoSettings { radius_voxels: 16.0, ..AoSettings::default() };
    f(&ShapeInputs { volume: v, voxel_size: VS, spec, ao: &ao, image: None, water_level: None })
}

fn keep_at(m: &GroundMap, x: f32, y: f32) -> f32 {
    let (i, j) = ((x / m.spacing).round() as usize, (y / m.spacing).round() as usize);
    f32::from(m.keep[j * m.n[0] + i]) / 255.0
}

#[test]
fn ao_pruning_is_the_reference_rule() {
    for (ao, want) in [(0.0, 0.0), (0.8, 0.0), (0.85, 0.25), (0.9, 0.5), (0.99, 0.95), (1.0, 1.0)] {
        assert!((ao_keep(ao) - want).abs() < 1e-6, "AO {ao}: {}", ao_keep(ao));
    }
}

#[test]
fn slope_compensation_gives_the_same_blades_per_unit_of_surface() {
    // Patches are grown at density / cos(max) per unit² of horizontal area; a horizontal unit² of
    // ground with normal n_z holds 1 / n_z units² of surface, and keeps cos(max) / n_z of them.
    let spec = GrassSpec { max_slope: 40.0, ..GrassSpec::default() };
    let cos_limit = libm::cos(40f64.to_radians()) as f32;
    for deg in [0.0f64, 10.0, 25.0, 39.0] {
        let n_z = libm::cos(deg.to_radians()) as f32;
        let per_horizontal = spec.patch_density() as f32 * slope_keep(n_z, cos_limit);
        let per_surface = per_horizontal * n_z;
        assert!((per_surface - spec.density as f32).abs() < 1e-2, "{deg}°: {per_surface} per unit² of surface");
    }
    assert_eq!(slope_keep(libm::cos(41f64.to_radians()) as f32, cos_limit), 0.0, "above the limit");
}

#[test]
fn grass_grows_on_open_ground_not_on_cliffs_or_under_an_overhang() {
    // Ground at z = 1 for x < 4, a cliff up to z = 3 beyond; an overhang (a slab from z = 4.5 to 5)
    // over 1 < y < 3 for x < 3, with open ground beside it.
    let v = volume([33, 33, 33], |x, y, z| {
        let ground = if x < 4.0 { 1.0 } else { 3.0 };
        let slab = x < 3.0 && y > 1.0 && y < 3.0 && z > 4.5 && z < 5.0;
        if slab {
            1.0
        } else {
            (ground - z) / VS
        }
    });
    let spec = GrassSpec { ao_prune: false, ..GrassSpec::default() };
    let m = map(&v, &spec);
    assert!(keep_at(&m, 2.0, 6.0) > 0.7, "open flat ground: {}", keep_at(&m, 2.0, 6.0));
    assert!(keep_at(&m, 6.0, 6.0) > 0.7, "the upper ground");
    // The face lies between the density samples at x = 3.75 and 4.0.
    for x in [3.75, 3.875, 4.0] {
        assert_eq!(keep_at(&m, x, 6.0), 0.0, "at the cliff, x = {x}");
    }
    // Under the overhang the topmost surface is the slab's top, ground "open to the sky" there;
    // its edges are cliffs, and the ground beneath it is never in the map.
    let h = m.height[(2.0 / m.spacing) as usize * m.n[0] + (1.0 / m.spacing) as usize];
    assert!((h - 5.0).abs() < 0.2, "the slab's top is the ground there: {h}");
    for y in [1.125, 1.25, 2.75, 2.875] {
        assert_eq!(keep_at(&m, 1.0, y), 0.0, "the slab's edge at y = {y}");
    }
}

#[test]
fn ao_pruning_thins_grass_in_a_pit_and_keeps_it_in_the_open() {
    // A flat field with a narrow, deep pit around (4, 4).
    let v = volume([33, 33, 33], |x, y, z| {
        let pit = (x - 4.0).abs() < 0.6 && (y - 4.0).abs() < 0.6;
        let ground = if pit { 1.0 } else { 5.0 };
        (ground - z) / VS
    });
    let spec = GrassSpec { max_slope: 85.0, ..GrassSpec::default() };
    let m = map(&v, &spec);
    assert_eq!(keep_at(&m, 4.0, 4.0), 0.0, "the pit's floor sees little sky");
    assert!(keep_at(&m, 1.5, 6.5) > 0.0, "open ground keeps grass");
}

#[test]
fn instances_cover_the_grassy_tile_with_patches_that_tile_it_exactly() {
    let v = volume([33, 33, 17], |_, _, z| (1.0 - z) / VS);
    let spec = GrassSpec { patch_size: 1.0, ao_prune: false, ..GrassSpec::default() };
    let m = map(&v, &spec);
    let tiling = Tiling::new([32, 32, 17], 16, VS);
    let a = tile_section(&m, &tiling, TileId { level: 0, x: 1, y: 0 }, &spec, 7, 42);
    assert_eq!((a.size, a.spacing, a.origin, a.patches_hash), (33, 0.125, [4.0, 0.0], 42));
    assert_eq!(a.instances.len(), 16, "4 × 4 patches of 1 unit over a 4-unit tile");
    let mut origins: Vec<[f32; 2]> = a.instances.iter().map(|i| i.origin).collect();
    origins.sort_by(|p, q| p.partial_cmp(q).unwrap());
    let want: Vec<[f32; 2]> = (0..4).flat_map(|x| (0..4).map(move |y| [4.0 + x as f32, y as f32])).collect();
    assert_eq!(origins, want);
    assert!(a.instances.iter().all(|i| i.rotation < 4 && usize::from(i.patch) < spec.patches as usize && (0.8..=1.2).contains(&i.height_scale)));
    // Flat open ground: the tallest instances.
    assert!(a.instances.iter().all(|i| i.height_scale > 1.15), "{:?}", a.instances[0]);
    assert!((a.height_at(5.3, 2.2) - 1.0).abs() < 1e-3);
    // The same bake again gives the same section; another seed other patches.
    assert_eq!(tile_section(&m, &tiling, TileId { level: 0, x: 1, y: 0 }, &spec, 7, 42), a);
    let b = tile_section(&m, &tiling, TileId { level: 0, x: 1, y: 0 }, &spec, 8, 42);
    assert_ne!(a.instances, b.instances);
    // Coarser tiles have the map over their footprint and no instances.
    let top = tile_section(&m, &tiling, TileId { level: 1, x: 0, y: 0 }, &spec, 7, 42);
    assert_eq!((top.size, top.spacing, top.instances.len()), (33, 0.25, 0));
}

#[test]
fn the_irradiance_volume_comes_back_from_its_tile_slices() {
    let desc = VolumeDesc { min: [0.0; 3], max: [4.0, 4.0, 2.0], dims: [4, 4, 2] };
    let cell = |x: usize, y: usize, z: usize| [[(x + 4 * y + 16 * z) as f32; 3]; 6];
    // Two slices, each with a halo column the other also holds.
    let slice = |x0: usize, x1: usize| kiln_formats::sections::IrradianceGrid {
        min: [x0 as f32, 0.0, 0.0],
        max: [x1 as f32, 4.0, 2.0],
        dims: [(x1 - x0) as u32, 4, 2],
        ambient: (0..2).flat_map(|z| (0..4).flat_map(move |y| (x0..x1).map(move |x| cell(x, y, z)))).collect(),
        direct: vec![[[0.0; 3]; 6]; (x1 - x0) * 8],
    };
    let mut sliced = SlicedVolume::new(desc);
    sliced.add(&slice(0, 3));
    sliced.add(&slice(1, 4));
    let v = sliced.finish();
    for z in 0..2 {
        for y in 0..4 {
            for x in 0..4 {
                assert_eq!(v.ambient[x + 4 * (y + 4 * z)], cell(x, y, z));
            }
        }
    }
}

#[test]
fn the_world_files_blade_defaults_are_the_generators() {
    // The world schema and the generator each state the defaults; this keeps them one set. Density is
    // left out: the pipeline raises it by 1 / cos(max_slope) on purpose.
    let spec = GrassSpec::default();
    let grown = patch_spec(&spec, 2.0 * f64::from(PatchSpec::default().patch_size));
    let generator = PatchSpec::default();
    assert_eq!(PatchSpec { density: generator.density, ..grown }, generator);
    assert_eq!(spec.density as f32, generator.density);
}

/// A volume whose ambient light changes from cell to cell, so that a sample's light says where
/// it was read.
fn varied_light() -> IrradianceVolume {
    let dims = [5, 5, 4];
    let ambient = (0..dims[0] * dims[1] * dims[2]).map(|c| std::array::from_fn(|bin| [c as f32 * 0.01, bin as f32 * 0.1, 0.3])).collect();
    IrradianceVolume { min: [0.0; 3], max: [10.0, 10.0, 6.0], dims, ambient, direct: Vec::new(), air: Vec::new() }
}

#[test]
fn bands_of_any_rows_join_into_the_map_of_one_band() {
    // Rolling ground with cliffs and a pit, so the slope test and the AO between lattice rows read
    // samples across every band's border.
    let v = volume([40, 37, 24], |x, y, z| {
        let cliff = if (x + 0.5 * y) % 3.0 < 1.5 { 1.5 } else { 0.0 };
        let pit = if (x - 5.0).abs() < 0.7 && (y - 4.0).abs() < 0.7 { -2.0 } else { 0.0 };
        (2.5 + 0.8 * (1.3 * x).sin() * (0.9 * y).cos() + cliff + pit - z) / VS
    });
    let spec = GrassSpec { max_slope: 50.0, ..GrassSpec::default() };
    with_inputs(&v, &spec, |inputs| {
        let n = inputs.samples();
        let whole = ground::shape_rows(inputs, 0..n[1]).unwrap();
        assert!(whole.keep.iter().any(|&k| k > 0) && whole.keep.contains(&0), "grass and bare ground");
        let bits = |b: &ShapeRows| {
            (b.height.iter().map(|h| h.to_bits()).collect::<Vec<_>>(), b.normal.iter().flatten().map(|c| c.to_bits()).collect::<Vec<_>>())
        };
        for rows_per_band in [1, 2, 3, 7, ground::BAND_ROWS] {
            let bands: Vec<ShapeRows> = (0..n[1].div_ceil(rows_per_band))
                .map(|b| ground::shape_rows(inputs, b * rows_per_band..((b + 1) * rows_per_band).min(n[1])).unwrap())
                .collect();
            let joined = ground::join_shape(n, VS, bands);
            assert_eq!(bits(&joined.rows), bits(&whole), "heights and normals, bands of {rows_per_band} rows");
            assert_eq!((&joined.rows.keep, &joined.rows.vigour), (&whole.keep, &whole.vigour), "bands of {rows_per_band} rows");
        }
        // The bake's bands, through their cache forms: the shape's, then the light's.
        let shape = ground::join_shape(
            n,
            VS,
            (0..ground::band_count(n))
                .map(|b| ShapeRows::from_bytes(&ground::shape_band(inputs, b).unwrap().to_bytes(), ground::band_samples(n, b)).unwrap())
                .collect(),
        );
        assert_eq!(bits(&shape.rows), bits(&whole));
        let l = varied_light();
        let light: Vec<Vec<u32>> = (0..ground::band_count(n))
            .map(|b| ground::light_from_bytes(&ground::light_bytes(&ground::light_band(&shape, &l, VS, b)), ground::band_samples(n, b)).unwrap())
            .collect();
        let (map, _) = ground::map(&shape, light);
        assert_eq!((map.n, &map.keep, &map.vigour), (n, &whole.keep, &whole.vigour));
        // Each sample's light is the volume's, half a voxel above the ground along its normal.
        let mut lit = 0;
        for (s, &h) in whole.height.iter().enumerate() {
            let want = if h.is_finite() {
                let (i, j, nrm) = ((s % n[0]) as f32, (s / n[0]) as f32, whole.normal[s]);
                let p = [i * 0.5 * VS + 0.5 * VS * nrm[0], j * 0.5 * VS + 0.5 * VS * nrm[1], h + 0.5 * VS * nrm[2]];
                lit += 1;
                rgb9e5::encode(l.sample_ambient(p, nrm))
            } else {
                0
            };
            assert_eq!(map.light[s], want, "sample {s}");
        }
        assert!(lit > 0 && map.light.iter().collect::<std::collections::HashSet<_>>().len() > 10, "light that varies over the map");
    });
}

#[test]
fn a_ground_shape_or_light_band_of_the_wrong_length_is_refused() {
    let rows = ShapeRows { height: vec![1.5, f32::NAN], normal: vec![[0.0, 0.6, 0.8], [0.0; 3]], keep: vec![3, 0], vigour: vec![9, 0] };
    let bytes = rows.to_bytes();
    let back = ShapeRows::from_bytes(&bytes, 2).unwrap();
    assert_eq!(
        (back.height[0], back.height[1].is_nan(), &back.normal, &back.keep, &back.vigour),
        (1.5, true, &rows.normal, &rows.keep, &rows.vigour)
    );
    assert!(ShapeRows::from_bytes(&bytes, 3).is_err());
    assert!(ShapeRows::from_bytes(&bytes[..bytes.len() - 1], 2).is_err());
    let light = ground::light_bytes(&[7, 0, 9]);
    assert_eq!(ground::light_from_bytes(&light, 3).unwrap(), vec![7, 0, 9]);
    assert!(ground::light_from_bytes(&light, 2).is_err());
    assert!(ground::light_from_bytes(&light[..11], 3).is_err());
}
