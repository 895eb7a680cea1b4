//! LOD math on its own: screen-space error, frustum planes, selection order, prefetch candidates.

use glam::{Mat4, Vec3};
use kiln_formats::sections::Manifest;
use kiln_formats::Pack;

use super::super::lod::{prefetch, select, Frustum, LodCamera, Quadtree};
use super::fixture::{self, camera, key};

fn tree() -> Quadtree {
    let nodes = fixture::all_keys().into_iter().map(|k| fixture::tile_pack(k, 0.0).1).collect();
    let pack = Pack::from_bytes(fixture::manifest_pack(nodes)).unwrap();
    Quadtree::new(pack.require::<Manifest>().unwrap()).unwrap()
}

#[test]
fn screen_space_error_follows_the_formula() {
    let tree = tree();
    let mut cam = camera([0.0, 0.0, 100.0], [0.0, 0.0, 0.0], [0.0; 3]);
    cam.viewport_height_px = 1000.0;
    cam.fov_y_radians = 90f32.to_radians();
    let cam = LodCamera::new(&cam);
    let mut node = tree.node(key(1, 0, 0)).unwrap().clone();
    node.geometric_error = 1.0;
    node.bounds_min = [-10.0, -10.0, -5.0];
    node.bounds_max = [10.0, 10.0, 0.0];
    // 1 unit · 1000 px / (2 · tan 45° · 100 units) = 5 px.
    assert!((cam.screen_error(&node) - 5.0).abs() < 1e-4, "{}", cam.screen_error(&node));
    node.bounds_max[2] = 150.0; // the eye inside the box
    assert_eq!(cam.screen_error(&node), f32::INFINITY);
    node.geometric_error = 0.0;
    assert_eq!(cam.screen_error(&node), 0.0);
}

#[test]
fn frustum_planes_use_wgpu_depth() {
    // At the origin looking along +X; near 0.5, far 2000.
    let proj = Mat4::perspective_rh(60f32.to_radians(), 1.0, 0.5, 2_000.0);
    let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::X, Vec3::Z);
    let f = Frustum::from_view_proj(proj * view);
    let sees = |min: [f32; 3], max: [f32; 3]| f.intersects(Vec3::from(min), Vec3::from(max));
    assert!(sees([10.0, -1.0, -1.0], [20.0, 1.0, 1.0]), "ahead");
    assert!(sees([-5.0, -5.0, -5.0], [5.0, 5.0, 5.0]), "around the eye");
    assert!(!sees([-20.0, -1.0, -1.0], [-10.0, 1.0, 1.0]), "behind");
    assert!(!sees([10.0, 50.0, -1.0], [20.0, 60.0, 1.0]), "left of a 60° view");
    assert!(!sees([10.0, -1.0, 30.0], [20.0, 1.0, 40.0]), "above");
    assert!(!sees([2_100.0, -1.0, -1.0], [2_200.0, 1.0, 1.0]), "beyond the far plane");
    // Between the eye and the near plane: outside for clip z in [0, w] (an OpenGL-style
    // extraction, z in [-w, w], would keep it).
    assert!(!sees([0.1, -0.01, -0.01], [0.3, 0.01, 0.01]), "closer than the near plane");
    assert!(sees([0.1, -0.01, -0.01], [0.6, 0.01, 0.01]), "reaching past the near plane");
}

#[test]
fn selection_refines_by_screen_error_within_the_budget() {
    let tree = tree();
    let cam = LodCamera::new(&camera([20.0, 20.0, 12.0], [200.0, 200.0, 0.0], [0.0; 3]));
    let cut = select(&tree, &cam, 2.0, u64::MAX, |_| 1);
    assert_eq!(cut.len(), 7);
    // (1,0) and (0,1) are equally far: key order, which compares level, then y, then x (a manifest's order).
    assert_eq!(&cut[..3], &[key(1, 1, 0), key(1, 0, 1), key(1, 1, 1)], "coarse first, then nearest, then key");
    assert_eq!(cut[3], key(0, 0, 0));
    // A coarser threshold keeps level 1 near the camera too.
    assert_eq!(select(&tree, &cam, 1_000.0, u64::MAX, |_| 1), vec![key(2, 0, 0)]);
    // Budget: the root and the four level-1 tiles (5 units) fit; refining L1 (0,0) would add four more.
    let cut = select(&tree, &cam, 2.0, 8, |_| 1);
    assert!(cut.iter().all(|k| k.level == 1) && cut.len() == 4, "{cut:?}");
    assert_eq!(select(&tree, &cam, 2.0, 9, |_| 1).len(), 7);
}

#[test]
fn prefetch_takes_children_and_neighbours_of_the_nearest_deepest_tile_then_the_look_ahead() {
    let tree = tree();
    let view = camera([20.0, 20.0, 12.0], [200.0, 200.0, 0.0], [0.0; 3]);
    let cam = LodCamera::new(&view);
    // A coarse cut: the nearest deepest tile is L1 (0,0); its neighbours are all in the cut.
    let cut = [key(1, 0, 0), key(1, 1, 0), key(1, 0, 1), key(1, 1, 1)];
    let p = prefetch(&tree, &cam, &cut, &[]);
    // L0 (1,0) and L0 (0,1) are equally far: key order.
    assert_eq!(p, vec![key(0, 0, 0), key(0, 1, 0), key(0, 0, 1), key(0, 1, 1)], "children, nearest first");
    // A level-0 cut: no children; the neighbours (diagonals too) that are not in the cut.
    let cut = [key(0, 1, 1), key(1, 1, 1)];
    let p = prefetch(&tree, &cam, &cut, &[key(1, 1, 1), key(0, 3, 3)]);
    assert_eq!(&p[..3], &[key(0, 0, 0), key(0, 1, 0), key(0, 0, 1)]);
    assert_eq!(p.len(), 9, "8 neighbours less one in the cut, then the look-ahead tile: {p:?}");
    assert_eq!(p[8], key(0, 3, 3));
}

#[test]
fn the_look_ahead_camera_is_the_camera_moved_along_its_velocity() {
    let tree = tree();
    let moving = camera([20.0, 40.0, 12.0], [200.0, 40.0, 0.0], [150.0, 0.0, 0.0]);
    let ahead = LodCamera::predicted(&moving, 1.0).expect("moving");
    let there = LodCamera::new(&camera([170.0, 40.0, 12.0], [350.0, 40.0, 0.0], [0.0; 3]));
    assert_eq!(ahead.position, there.position);
    let a = select(&tree, &ahead, 2.0, u64::MAX, |_| 1);
    assert_eq!(a, select(&tree, &there, 2.0, u64::MAX, |_| 1));
    assert!(a.contains(&key(0, 2, 0)) && !a.contains(&key(0, 0, 0)), "{a:?}");
    assert!(LodCamera::predicted(&camera([0.0; 3], [1.0, 0.0, 0.0], [0.0; 3]), 1.0).is_none());
}
