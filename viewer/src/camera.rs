//! The fly camera: pose, projection (reverse-Z), and the input-driven controller.
//!
//! Conventions: Z is up, world units. Yaw is measured from +X toward +Y; pitch is positive looking up.
//! The projection is reverse-Z (near plane → depth 1, far plane → depth 0) with a finite far plane:
//! float depth then has its precision where it is needed, and the view-projection still maps the
//! frustum to wgpu's clip space z ∈ [0, 1], as the streaming contract requires.

use glam::{Mat4, Vec2, Vec3};

use crate::streaming::CameraView;

/// A camera position and orientation as given on the command line (`X,Y,Z,YAW,PITCH`, degrees).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPose {
    /// Eye position in world units.
    pub position: Vec3,
    /// Degrees from +X toward +Y.
    pub yaw_deg: f32,
    /// Degrees, positive looking up; a camera clamps it to ±89.5°.
    pub pitch_deg: f32,
}

impl std::str::FromStr for CameraPose {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let v: Vec<f32> = s.split(',').map(|p| p.trim().parse::<f32>().map_err(|_| format!("{p:?} is not a number"))).collect::<Result<_, _>>()?;
        match v[..] {
            [x, y, z, yaw, pitch] if v.iter().all(|c| c.is_finite()) => {
                Ok(CameraPose { position: Vec3::new(x, y, z), yaw_deg: yaw, pitch_deg: pitch })
            }
            _ => Err(format!("expected X,Y,Z,YAW,PITCH (5 finite numbers), got {s:?}")),
        }
    }
}

/// Largest |pitch|: looking exactly along ±Z would make the view basis degenerate.
const MAX_PITCH: f32 = 89.5 * std::f32::consts::PI / 180.0;

/// A perspective camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position in world units.
    pub position: Vec3,
    /// Radians from +X toward +Y.
    pub yaw: f32,
    /// Radians, positive up, clamped to ±89.5°.
    pub pitch: f32,
    /// Vertical field of view, radians.
    pub fov_y: f32,
    /// Distance to the near clip plane in world units (depth 1 in reverse-Z).
    pub near: f32,
    /// Distance to the far clip plane in world units (depth 0); [`Camera::from_pose`] puts it beyond
    /// the farthest world corner.
    pub far: f32,
}

impl Camera {
    /// A camera at `pose` with a 60° vertical field of view and clip planes fitted to the world.
    pub fn from_pose(pose: CameraPose, world_min: Vec3, world_max: Vec3) -> Camera {
        let mut c = Camera {
            position: pose.position,
            yaw: pose.yaw_deg.to_radians(),
            pitch: pose.pitch_deg.to_radians().clamp(-MAX_PITCH, MAX_PITCH),
            fov_y: 60f32.to_radians(),
            near: 0.1,
            far: 1000.0,
        };
        c.fit_clip_planes(world_min, world_max);
        c
    }

    /// The default view of a world: from above its south-west corner, looking at its centre.
    pub fn overview(world_min: Vec3, world_max: Vec3) -> Camera {
        let size = world_max - world_min;
        let centre = (world_min + world_max) * 0.5;
        let eye = Vec3::new(world_min.x - 0.15 * size.x, world_min.y - 0.15 * size.y, world_max.z + 0.35 * size.x.max(size.y));
        let d = centre - eye;
        let pose =
            CameraPose { position: eye, yaw_deg: d.y.atan2(d.x).to_degrees(), pitch_deg: d.z.atan2(Vec2::new(d.x, d.y).length()).to_degrees() };
        Camera::from_pose(pose, world_min, world_max)
    }

    /// The pose (for `--camera` round trips and the HUD).
    pub fn pose(&self) -> CameraPose {
        CameraPose { position: self.position, yaw_deg: self.yaw.to_degrees(), pitch_deg: self.pitch.to_degrees() }
    }

    /// Unit view direction.
    pub fn forward(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        Vec3::new(cp * cy, cp * sy, sp)
    }

    /// Unit vector to the camera's right, horizontal.
    pub fn right(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        Vec3::new(sy, -cy, 0.0)
    }

    /// Sets the far plane just beyond the farthest world corner (and at least 10 units) and the
    /// near plane from it: reverse-Z keeps precision over a 10^6 ratio.
    pub fn fit_clip_planes(&mut self, world_min: Vec3, world_max: Vec3) {
        let mut far: f32 = 10.0;
        for i in 0..8 {
            let c = Vec3::new(
                if i & 1 == 0 { world_min.x } else { world_max.x },
                if i & 2 == 0 { world_min.y } else { world_max.y },
                if i & 4 == 0 { world_min.z } else { world_max.z },
            );
            far = far.max(c.distance(self.position) * 1.05);
        }
        self.far = far;
        self.near = (far * 1e-6).max(0.01);
    }

    /// World → view (right-handed, looking down -Z in view space).
    pub fn view(&self) -> Mat4 {
        Mat4::look_to_rh(self.position, self.forward(), Vec3::Z)
    }

    /// View → clip, reverse-Z: swapping near and far in the `[0, 1]` projection maps near to 1, far to 0.
    pub fn proj(&self, aspect: f32) -> Mat4 {
        Mat4::perspective_rh(self.fov_y, aspect.max(1e-3), self.far, self.near)
    }

    /// World → clip.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        self.proj(aspect) * self.view()
    }

    /// The world-space ray through pixel `px` (origin top-left) of a `size` viewport.
    pub fn ray_through(&self, px: Vec2, size: Vec2) -> (Vec3, Vec3) {
        let ndc = Vec2::new(2.0 * px.x / size.x - 1.0, 1.0 - 2.0 * px.y / size.y);
        let inv = self.view_proj(size.x / size.y).inverse();
        let p = inv.project_point3(ndc.extend(0.5));
        (self.position, (p - self.position).normalize())
    }

    /// The streaming contract's view of this camera.
    pub fn stream_view(&self, size: [u32; 2], velocity: Vec3) -> CameraView {
        CameraView {
            position: self.position.to_array(),
            view_proj: self.view_proj(size[0] as f32 / size[1].max(1) as f32).to_cols_array_2d(),
            velocity: velocity.to_array(),
            viewport_height_px: size[1] as f32,
            fov_y_radians: self.fov_y,
        }
    }
}

/// Movement keys the controller knows, independent of the windowing library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// Along the view direction (W).
    Forward,
    /// Against the view direction (S).
    Back,
    /// Horizontally to the left (A).
    Left,
    /// Horizontally to the right (D).
    Right,
    /// Straight down, along -Z (Q).
    Down,
    /// Straight up, along +Z (E).
    Up,
    /// While held, moves four times faster (Shift).
    Fast,
}

/// Turns held keys, mouse motion and the wheel into camera motion.
#[derive(Clone, Debug)]
pub struct FlyController {
    held: [bool; 7],
    /// World units per second.
    pub speed: f32,
    /// Radians per pixel of mouse motion.
    pub sensitivity: f32,
}

impl FlyController {
    /// A controller whose base speed crosses a world of `extent` units in about 20 s.
    pub fn new(extent: f32) -> Self {
        FlyController { held: [false; 7], speed: (extent / 20.0).max(1.0), sensitivity: 0.0025 }
    }

    /// Whether Shift is held.
    pub fn fast(&self) -> bool {
        self.held[Move::Fast as usize]
    }

    /// Records a key press or release.
    pub fn set(&mut self, m: Move, down: bool) {
        self.held[m as usize] = down;
    }

    /// Releases every key (on focus loss, so a key released elsewhere does not stick).
    pub fn release_all(&mut self) {
        self.held = [false; 7];
    }

    /// Mouse-look by a pixel delta.
    pub fn look(&self, camera: &mut Camera, dx: f64, dy: f64) {
        camera.yaw -= dx as f32 * self.sensitivity;
        camera.yaw = camera.yaw.rem_euclid(std::f32::consts::TAU);
        camera.pitch = (camera.pitch - dy as f32 * self.sensitivity).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Scales the speed by 1.2 per wheel notch (exponential: useful from metres to kilometres).
    pub fn wheel(&mut self, notches: f32) {
        self.speed = (self.speed * 1.2f32.powf(notches)).clamp(0.01, 1e6);
    }

    /// Moves `camera` for `dt` seconds; returns its velocity (world units per second).
    pub fn advance(&self, camera: &mut Camera, dt: f32) -> Vec3 {
        let h = |m: Move| if self.held[m as usize] { 1.0 } else { 0.0 };
        let dir = camera.forward() * (h(Move::Forward) - h(Move::Back))
            + camera.right() * (h(Move::Right) - h(Move::Left))
            + Vec3::Z * (h(Move::Up) - h(Move::Down));
        let v = dir.normalize_or_zero() * self.speed * if self.held[Move::Fast as usize] { 4.0 } else { 1.0 };
        camera.position += v * dt;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam(yaw: f32, pitch: f32) -> Camera {
        Camera::from_pose(CameraPose { position: Vec3::new(1.0, 2.0, 3.0), yaw_deg: yaw, pitch_deg: pitch }, Vec3::ZERO, Vec3::splat(100.0))
    }

    #[test]
    fn yaw_zero_looks_along_x_and_yaw_90_along_y() {
        assert!(cam(0.0, 0.0).forward().abs_diff_eq(Vec3::X, 1e-6));
        assert!(cam(90.0, 0.0).forward().abs_diff_eq(Vec3::Y, 1e-6));
        assert!(cam(0.0, 45.0).forward().z > 0.7);
        // Right is forward × up: with yaw 0 (looking +X), right is -Y.
        assert!(cam(0.0, 0.0).right().abs_diff_eq(-Vec3::Y, 1e-6));
    }

    #[test]
    fn projection_is_reverse_z_in_zero_one_and_z_up_is_screen_up() {
        let c = cam(0.0, 0.0);
        let vp = c.view_proj(16.0 / 9.0);
        let near = vp.project_point3(c.position + Vec3::X * c.near);
        let far = vp.project_point3(c.position + Vec3::X * c.far);
        assert!((near.z - 1.0).abs() < 1e-4, "{near}");
        assert!(far.z.abs() < 1e-4, "{far}");
        let above = vp.project_point3(c.position + Vec3::new(10.0, 0.0, 1.0));
        assert!(above.y > 0.0, "a point above the view axis must be in the upper half of NDC");
        let right = vp.project_point3(c.position + Vec3::new(10.0, -1.0, 0.0));
        assert!(right.x > 0.0, "-Y is to the right when looking along +X");
    }

    #[test]
    fn ray_through_centre_is_forward_and_through_top_points_up() {
        let c = cam(30.0, -20.0);
        let size = Vec2::new(640.0, 480.0);
        let (o, d) = c.ray_through(size / 2.0, size);
        assert_eq!(o, c.position);
        assert!(d.abs_diff_eq(c.forward(), 1e-4), "{d} vs {}", c.forward());
        let (_, top) = c.ray_through(Vec2::new(320.0, 0.0), size);
        assert!(top.z > d.z);
    }

    #[test]
    fn clip_planes_cover_the_world() {
        let c = cam(0.0, 0.0);
        let far_corner = Vec3::splat(100.0);
        assert!(c.far >= far_corner.distance(c.position));
        assert!(c.near > 0.0 && c.near < 1.0);
    }

    #[test]
    fn pose_parses_and_rejects_bad_input() {
        let p: CameraPose = "-10, 5.5,3,90,-20".parse().unwrap();
        assert_eq!(p.position, Vec3::new(-10.0, 5.5, 3.0));
        assert_eq!((p.yaw_deg, p.pitch_deg), (90.0, -20.0));
        assert!("1,2,3,4".parse::<CameraPose>().is_err());
        assert!("1,2,3,4,x".parse::<CameraPose>().is_err());
        assert!("1,2,3,4,NaN".parse::<CameraPose>().is_err());
    }

    #[test]
    fn controller_moves_along_view_and_clamps_pitch() {
        let mut c = cam(90.0, 0.0);
        let mut f = FlyController::new(200.0);
        f.set(Move::Forward, true);
        let start = c.position;
        let v = f.advance(&mut c, 0.5);
        assert!((c.position - start).abs_diff_eq(Vec3::Y * f.speed * 0.5, 1e-4));
        assert!(v.abs_diff_eq(Vec3::Y * f.speed, 1e-4));
        f.release_all();
        assert_eq!(f.advance(&mut c, 1.0), Vec3::ZERO);
        f.look(&mut c, 0.0, -1e6);
        assert!((c.pitch - MAX_PITCH).abs() < 1e-6);
        let s = f.speed;
        f.wheel(2.0);
        assert!((f.speed - s * 1.44).abs() < 1e-3);
    }
}
