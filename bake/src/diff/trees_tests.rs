use std::collections::BTreeSet;

use kiln_formats::sections::{TreeInstance, TreeLod, TreePrototype};
use kiln_formats::{Section, SectionKind};

use super::*;
use crate::diff::Tolerances;

fn tree(lift: f32) -> TreePrototypes {
    let p = TreePrototype {
        species: 0,
        seed: 7,
        height: 2.0,
        crown_radius: 1.0,
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0 + lift], [0.0, 1.0, 1.0]],
        normals: vec![[0.0, -1.0, 0.0]; 4],
        uvs: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
        ao: vec![255; 4],
        bark_indices: vec![0, 1, 2],
        leaf_indices: vec![1, 3, 2],
        lods: [TreeLod { bark_index_count: 3, leaf_index_count: 3 }; 3],
    };
    TreePrototypes { species: vec!["oak".into()], prototypes: vec![p] }
}

fn run(f: crate::diff::kinds::DiffFn, a: Vec<u8>, b: Vec<u8>, tol: &Tolerances, changed: &[SectionKind]) -> Judged {
    let changed: BTreeSet<SectionKind> = changed.iter().copied().collect();
    f(&a, &b, &Context { tol, changed: &changed }).unwrap()
}

fn instance(x: f32, yaw: f32) -> TreeInstance {
    TreeInstance { position: [x, 0.0, 0.0], yaw, scale: 1.0, tint: [1.0; 3], prototype: 0 }
}

#[test]
fn prototypes_report_the_largest_vertex_distance() {
    let tol = Tolerances { distance: 0.2, ..Default::default() };
    let j = run(prototypes, tree(0.0).encode().unwrap(), tree(0.25).encode().unwrap(), &tol, &[]);
    assert!(j.beyond);
    assert!((j.details["distance_max"].as_f64().unwrap() - 0.25).abs() < 1e-6, "{:?}", j.details);
    let tol = Tolerances { distance: 0.3, ..Default::default() };
    assert!(!run(prototypes, tree(0.0).encode().unwrap(), tree(0.25).encode().unwrap(), &tol, &[]).beyond);
    let mut renamed = tree(0.0);
    renamed.species[0] = "pine".into();
    let loose = Tolerances { distance: 1e9, field_max: 1e9, ..Default::default() };
    assert!(run(prototypes, tree(0.0).encode().unwrap(), renamed.encode().unwrap(), &loose, &[]).beyond);
}

#[test]
fn reordered_instances_match_by_nearest() {
    let a = TreeInstances { prototypes_hash: 1, instances: vec![instance(0.0, 0.1), instance(10.0, 6.2)] };
    let b = TreeInstances { prototypes_hash: 1, instances: vec![instance(10.01, -0.05), instance(0.0, 0.1)] };
    let tol = Tolerances { distance: 0.02, field_max: 0.2, ..Default::default() };
    let j = run(instances, a.encode().unwrap(), b.encode().unwrap(), &tol, &[]);
    assert_eq!(j.details["matching"], "nearest");
    assert!(!j.beyond, "{:?}", j.details);
    // 6.2 and -0.05 rad are 0.033 rad apart once wrapped.
    assert!(j.details["yaw_max"].as_f64().unwrap() < 0.04, "{:?}", j.details);
    let fewer = TreeInstances { prototypes_hash: 1, instances: vec![instance(0.0, 0.1)] };
    assert!(
        run(instances, a.encode().unwrap(), fewer.encode().unwrap(), &Tolerances { distance: 1e9, field_max: 1e9, ..Default::default() }, &[]).beyond
    );
}

#[test]
fn tree_lighting_counts_follow_the_instances() {
    let (a, b) = (TreeLighting(vec![[[1.0; 3]; 3]]), TreeLighting(vec![[[1.0; 3]; 3], [[2.0; 3]; 3]]));
    let loose = Tolerances { field_max: 1e9, field_rms: 1e9, ..Default::default() };
    assert!(run(lighting, a.encode().unwrap(), b.encode().unwrap(), &loose, &[]).beyond);
    assert!(!run(lighting, a.encode().unwrap(), b.encode().unwrap(), &loose, &[TreeInstances::KIND]).beyond);
    let c = TreeLighting(vec![[[1.0, 1.0, 1.0], [1.0; 3], [0.5, 1.0, 1.0]]]);
    let j = run(lighting, a.encode().unwrap(), c.encode().unwrap(), &Tolerances { field_max: 0.4, field_rms: 0.4, ..Default::default() }, &[]);
    assert!(j.beyond);
    assert!((j.details["max_relative"].as_f64().unwrap() - 0.5).abs() < 0.01, "{:?}", j.details);
}
