//! Optics of a smooth interface between two media, shared by every stage that sends light through
//! water (the caustics bake and light transport): Snell refraction and the unpolarised Fresnel
//! transmittance. Plain functions of directions; nothing of rays, surfaces or light transport.

use glam::Vec3;

/// Refractive index of water for visible light (fresh and sea water lie within 1.33–1.34).
pub const WATER_IOR: f32 = 1.333;

/// The direction of `incident` (unit, travelling toward the surface) after it crosses a surface
/// with unit normal `normal` (on the incident side, `incident · normal < 0`) from a medium of index
/// `n1` into one of index `n2`, or `None` at total internal reflection.
pub fn refract(incident: Vec3, normal: Vec3, n1: f32, n2: f32) -> Option<Vec3> {
    let eta = n1 / n2;
    let cos_i = (-incident.dot(normal)).clamp(0.0, 1.0);
    let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
    if sin2_t > 1.0 {
        return None;
    }
    let cos_t = (1.0 - sin2_t).sqrt();
    Some((eta * incident + (eta * cos_i - cos_t) * normal).normalize())
}

/// The fraction of unpolarised light's power transmitted across the interface from index `n1` into
/// `n2` at incidence cosine `cos_incident` (the mean of the s and p Fresnel transmittances); 0 at
/// total internal reflection.
pub fn fresnel_transmittance(cos_incident: f32, n1: f32, n2: f32) -> f32 {
    let cos_i = cos_incident.clamp(0.0, 1.0);
    let sin_t = n1 / n2 * (1.0 - cos_i * cos_i).sqrt();
    if sin_t >= 1.0 {
        return 0.0;
    }
    let cos_t = (1.0 - sin_t * sin_t).sqrt();
    let rs = ((n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)).powi(2);
    let rp = ((n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i)).powi(2);
    1.0 - 0.5 * (rs + rp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_incidence_reflects_the_textbook_two_percent() {
        let t = fresnel_transmittance(1.0, 1.0, WATER_IOR);
        let r = ((WATER_IOR - 1.0) / (WATER_IOR + 1.0)).powi(2);
        assert!((1.0 - t - r).abs() < 1e-6, "R = {}, expected {r}", 1.0 - t);
        assert!((0.979..0.981).contains(&t));
        // Reciprocity: the same cosine pair transmits the same fraction in both directions.
        let d = Vec3::new(0.6, 0.0, -0.8);
        let down = refract(d, Vec3::Z, 1.0, WATER_IOR).unwrap();
        let back = fresnel_transmittance(-down.z, WATER_IOR, 1.0);
        assert!((back - fresnel_transmittance(0.8, 1.0, WATER_IOR)).abs() < 1e-5);
    }

    #[test]
    fn snell_holds_and_grazing_light_is_reflected() {
        let d = Vec3::new(0.8, 0.0, -0.6);
        let t = refract(d, Vec3::Z, 1.0, WATER_IOR).unwrap();
        assert!((t.length() - 1.0).abs() < 1e-6);
        let (sin_i, sin_t) = (d.x, t.x);
        assert!((sin_i - WATER_IOR * sin_t).abs() < 1e-6, "n1 sin i = n2 sin t");
        assert!(t.z < 0.0, "the refracted ray goes on down");
        assert!(fresnel_transmittance(0.0, 1.0, WATER_IOR) < 1e-6, "grazing light is all reflected");
        // From below, beyond the critical angle (asin(1/1.333) ≈ 48.6°), light is trapped.
        let up = Vec3::new(0.8, 0.0, 0.6);
        assert!(refract(up, -Vec3::Z, WATER_IOR, 1.0).is_none());
        assert_eq!(fresnel_transmittance(0.6, WATER_IOR, 1.0), 0.0);
        assert!(refract(Vec3::new(0.5, 0.0, 0.866), -Vec3::Z, WATER_IOR, 1.0).is_some());
    }
}
