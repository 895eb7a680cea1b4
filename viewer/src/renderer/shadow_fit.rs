//! Fitting the sun's orthographic shadow projection to the view.
//!
//! The map covers the bounding sphere of the view frustum cut at a fixed shadow distance (or the
//! world's bounding sphere, when that is smaller). A sphere does not change size when the camera
//! turns, and its centre is snapped to whole shadow texels in light space, so the shadow edges do
//! not crawl as the camera moves. The depth range spans the whole world so that casters outside the
//! view (a ridge behind the camera) still cast.

use glam::{Mat4, Vec3};

use crate::camera::Camera;

/// The light's view-projection and the world size of one shadow texel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowFit {
    /// World space to the shadow map's clip space (orthographic, looking along the sun's rays).
    pub light_view_proj: Mat4,
    /// World units covered by one shadow texel (receivers are pushed along their normal by a multiple of it).
    pub texel_world: f32,
}

/// The centre distance (along the view axis) and radius of the smallest sphere around the frustum
/// slice `[near, far]` of a symmetric perspective with `tan_half_diag` = tan of the half diagonal
/// angle (the corner at distance d lies `d · tan_half_diag` off the axis).
fn frustum_slice_sphere(near: f32, far: f32, tan_half_diag: f32) -> (f32, f32) {
    let k2 = tan_half_diag * tan_half_diag;
    // Equidistant from the near and far corners; clamped to the far cap for wide frusta.
    let t = ((1.0 + k2) * (far + near) * 0.5).min(far);
    let r = ((far - t).powi(2) + k2 * far * far).sqrt().max(((t - near).powi(2) + k2 * near * near).sqrt());
    (t, r)
}

/// The shadow projection for `camera` (with `aspect`), sun direction `to_sun` (unit, pointing to
/// the sun), a world box, the shadow distance and the map size in texels.
pub fn fit(camera: &Camera, aspect: f32, to_sun: Vec3, world_min: Vec3, world_max: Vec3, shadow_distance: f32, map_size: u32) -> ShadowFit {
    let tan_y = (camera.fov_y * 0.5).tan();
    let tan_half_diag = tan_y * (1.0 + aspect * aspect).sqrt();
    let (t, r_view) = frustum_slice_sphere(camera.near, shadow_distance.max(camera.near * 2.0), tan_half_diag);
    let world_centre = (world_min + world_max) * 0.5;
    let r_world = (world_max - world_min).length() * 0.5;
    let (centre, radius) = if r_world < r_view { (world_centre, r_world) } else { (camera.position + camera.forward() * t, r_view) };
    let radius = radius.max(1e-3);

    let up = if to_sun.z.abs() > 0.99 { Vec3::X } else { Vec3::Z };
    let light_view = Mat4::look_to_rh(Vec3::ZERO, -to_sun, up);
    // One texel of margin on each side so the snapped box still contains the whole sphere; the
    // snapping grid and the projection's texel grid must be the same size or snapping is useless.
    let texel = 2.0 * radius / (map_size as f32 - 2.0);
    let half = texel * map_size as f32 * 0.5;
    let c = light_view.transform_point3(centre);
    let (cx, cy) = ((c.x / texel).floor() * texel, (c.y / texel).floor() * texel);

    // Light space looks down -Z: visible points have negative z. Cover the world and the sphere.
    let (mut zmin, mut zmax) = (c.z - radius, c.z + radius);
    for i in 0..8 {
        let corner = Vec3::new(
            if i & 1 == 0 { world_min.x } else { world_max.x },
            if i & 2 == 0 { world_min.y } else { world_max.y },
            if i & 4 == 0 { world_min.z } else { world_max.z },
        );
        let z = light_view.transform_point3(corner).z;
        zmin = zmin.min(z);
        zmax = zmax.max(z);
    }
    let margin = 0.01 * (zmax - zmin) + 1.0;
    let proj = Mat4::orthographic_rh(cx - half, cx + half, cy - half, cy + half, -zmax - margin, -zmin + margin);
    ShadowFit { light_view_proj: proj * light_view, texel_world: texel }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::CameraPose;

    fn sun() -> Vec3 {
        Vec3::new(-0.5, 0.4, 0.7).normalize()
    }

    fn camera(pos: Vec3, yaw: f32) -> Camera {
        Camera::from_pose(CameraPose { position: pos, yaw_deg: yaw, pitch_deg: -15.0 }, Vec3::ZERO, Vec3::new(4096.0, 4096.0, 300.0))
    }

    fn corners(c: &Camera, aspect: f32, d: f32) -> Vec<Vec3> {
        let up = c.right().cross(c.forward());
        let h = d * (c.fov_y * 0.5).tan();
        let w = h * aspect;
        let mut v = Vec::new();
        for (sx, sy) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
            v.push(c.position + c.forward() * d + c.right() * (sx * w) + up * (sy * h));
        }
        v
    }

    #[test]
    fn frustum_slice_and_world_fit_inside_the_shadow_volume() {
        let (wmin, wmax) = (Vec3::ZERO, Vec3::new(4096.0, 4096.0, 300.0));
        for yaw in [0.0, 37.0, 123.0, 260.0] {
            let c = camera(Vec3::new(1000.0, 1500.0, 250.0), yaw);
            let f = fit(&c, 16.0 / 9.0, sun(), wmin, wmax, 600.0, 2048);
            let pts: Vec<Vec3> = corners(&c, 16.0 / 9.0, c.near).into_iter().chain(corners(&c, 16.0 / 9.0, 600.0)).collect();
            for p in pts {
                let q = f.light_view_proj.project_point3(p);
                assert!(q.x.abs() <= 1.0 && q.y.abs() <= 1.0, "yaw {yaw}: {p} → {q}");
                assert!((0.0..=1.0).contains(&q.z), "yaw {yaw}: depth {}", q.z);
            }
            // Every world corner (a caster anywhere) lies inside the depth range.
            for i in 0..8 {
                let p = Vec3::new(if i & 1 == 0 { 0.0 } else { 4096.0 }, if i & 2 == 0 { 0.0 } else { 4096.0 }, if i & 4 == 0 { 0.0 } else { 300.0 });
                let q = f.light_view_proj.project_point3(p);
                assert!((0.0..=1.0).contains(&q.z), "world corner depth {}", q.z);
            }
        }
    }

    #[test]
    fn nearer_to_the_sun_is_smaller_depth() {
        let c = camera(Vec3::new(100.0, 100.0, 100.0), 0.0);
        let f = fit(&c, 1.0, sun(), Vec3::ZERO, Vec3::splat(200.0), 600.0, 1024);
        let p = Vec3::splat(100.0);
        let a = f.light_view_proj.project_point3(p).z;
        let b = f.light_view_proj.project_point3(p + sun() * 10.0).z;
        assert!(b < a, "the comparison sampler (LessEqual) relies on this");
    }

    #[test]
    fn camera_motion_moves_the_map_by_whole_texels() {
        let (wmin, wmax) = (Vec3::ZERO, Vec3::new(4096.0, 4096.0, 300.0));
        let probe = Vec3::new(1234.5, 2345.25, 50.0);
        let texel_phase = |cam_x: f32| {
            let c = camera(Vec3::new(cam_x, 1500.0, 250.0), 20.0);
            let f = fit(&c, 1.5, sun(), wmin, wmax, 600.0, 2048);
            let q = f.light_view_proj.project_point3(probe);
            ((q.x * 0.5 + 0.5) * 2048.0, (q.y * 0.5 + 0.5) * 2048.0, f.texel_world)
        };
        let (x0, y0, t0) = texel_phase(1000.0);
        for dx in [0.37, 3.3, 41.0] {
            let (x1, y1, t1) = texel_phase(1000.0 + dx);
            assert_eq!(t0, t1, "the shadow texel size must not depend on the camera position");
            let (fx, fy) = ((x1 - x0).fract().abs(), (y1 - y0).fract().abs());
            assert!(fx.min(1.0 - fx) < 0.02 && fy.min(1.0 - fy) < 0.02, "moved by {dx}: sub-texel shift {fx},{fy}");
        }
    }

    #[test]
    fn small_worlds_use_the_world_sphere() {
        let c = camera(Vec3::new(10.0, 10.0, 10.0), 0.0);
        let f = fit(&c, 1.0, sun(), Vec3::ZERO, Vec3::splat(20.0), 600.0, 1024);
        assert!(f.texel_world < 0.05, "a 20-unit world must get fine texels, got {}", f.texel_world);
    }
}
