//! Frustum culling of tile bounding boxes, for the main view and for the sun's shadow volume.
//!
//! The streamer already culls its draw list against the camera, but the renderer draws the list
//! twice (shadow map and view) and each pass only needs the tiles inside its own volume; culling
//! here also keeps the renderer correct with a streamer that culls loosely or not at all.

use glam::{Mat4, Vec3, Vec4};

/// The six planes (`n·p + d ≥ 0` inside) of the volume a wgpu-style projection keeps:
/// −w ≤ x ≤ w, −w ≤ y ≤ w, 0 ≤ z ≤ w (so reverse-Z and orthographic projections work alike).
pub fn planes(view_proj: Mat4) -> [Vec4; 6] {
    let r = |i| view_proj.row(i);
    let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
    [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2]
}

/// Whether the box `[min, max]` touches the volume bounded by `planes` (conservative: a box near a
/// corner outside all planes' intersection may still be kept, never the reverse).
pub fn intersects(planes: &[Vec4; 6], min: Vec3, max: Vec3) -> bool {
    planes.iter().all(|p| {
        // The box corner farthest along the plane normal.
        let far = Vec3::new(if p.x >= 0.0 { max.x } else { min.x }, if p.y >= 0.0 { max.y } else { min.y }, if p.z >= 0.0 { max.z } else { min.z });
        p.truncate().dot(far) + p.w >= 0.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::{Camera, CameraPose};

    #[test]
    fn keeps_boxes_in_view_and_drops_boxes_behind_or_beside() {
        let cam = Camera::from_pose(CameraPose { position: Vec3::ZERO, yaw_deg: 0.0, pitch_deg: 0.0 }, Vec3::splat(-500.0), Vec3::splat(500.0));
        let p = planes(cam.view_proj(16.0 / 9.0));
        let unit = |c: Vec3| (c - Vec3::splat(0.5), c + Vec3::splat(0.5));
        let visible = |c: Vec3| {
            let (lo, hi) = unit(c);
            intersects(&p, lo, hi)
        };
        assert!(visible(Vec3::new(10.0, 0.0, 0.0)), "straight ahead");
        assert!(!visible(Vec3::new(-10.0, 0.0, 0.0)), "behind");
        assert!(!visible(Vec3::new(10.0, 50.0, 0.0)), "far to the left");
        assert!(!visible(Vec3::new(10.0, 0.0, 50.0)), "far above");
        assert!(!visible(Vec3::new(cam.far + 10.0, 0.0, 0.0)), "beyond the far plane");
        // A box straddling the view's edge is kept.
        assert!(intersects(&p, Vec3::new(5.0, 0.0, -1.0), Vec3::new(6.0, 40.0, 1.0)));
        // The camera's own position inside a box.
        assert!(intersects(&p, Vec3::splat(-1.0), Vec3::splat(1.0)));
    }

    #[test]
    fn works_for_orthographic_volumes() {
        let ortho = Mat4::orthographic_rh(-10.0, 10.0, -10.0, 10.0, 0.0, 100.0) * Mat4::look_to_rh(Vec3::ZERO, -Vec3::Z, Vec3::Y);
        let p = planes(ortho);
        assert!(intersects(&p, Vec3::new(-1.0, -1.0, -50.0), Vec3::new(1.0, 1.0, -40.0)));
        assert!(!intersects(&p, Vec3::new(20.0, 0.0, -50.0), Vec3::new(21.0, 1.0, -40.0)));
        assert!(!intersects(&p, Vec3::new(0.0, 0.0, 5.0), Vec3::new(1.0, 1.0, 6.0)), "behind the light's near plane");
    }
}
