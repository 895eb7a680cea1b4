//! Per frame, on the CPU: which representation each tree is drawn with, from the size of its
//! bounding sphere on screen, and the dithered cross-fade between neighbouring representations.
//!
//! Representations: mesh LOD 0, 1, 2, impostor (3). Tree `m` pixels across (its sphere's
//! diameter, times a per-tree stagger so that switches do not draw a ring around the camera) is
//! drawn as LOD `i` = the number of thresholds above `m`: [`LOD_PX`], then the impostor's, where
//! an atlas texel is a screen pixel ([`IMPOSTOR_TEXELS_PER_PX`]). Just above each threshold a
//! band of relative width [`BAND`] draws both neighbours, with complementary screen-space dither
//! (3DWorld's scheme): the nearer keeps noise ∈ [t, 1), the farther [0, t), with `t` going from 0
//! at the top of the band to 1 at the threshold, so every pixel of the tree is drawn by exactly
//! one of them and nothing is blended.

/// Sphere diameters in pixels at and above which mesh LOD 0 and 1 are drawn.
pub const LOD_PX: [f32; 2] = [420.0, 220.0];
/// Below this many atlas view texels per screen pixel across the tree's bounding sphere, the
/// impostor replaces mesh LOD 2: at 1 the tree's diameter on screen is its atlas view's side, an
/// impostor texel per screen pixel, which is where the bake's fidelity test measures
/// (`kiln_bake::impostor::reconstruct::sweep` renders at `view_px` pixels across the sphere).
pub const IMPOSTOR_TEXELS_PER_PX: f32 = 1.0;
/// The cross-fade band above each threshold, relative to it.
pub const BAND: f32 = 0.3;
/// Per-tree stagger of the thresholds: ± this fraction.
pub const STAGGER: f32 = 0.12;

/// A tree's representation this frame: `near` (0–3), and when `t > 0` also `near + 1`, the two
/// split by the dither threshold `t` ∈ (0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// The representation drawn (the nearer one in a band).
    pub near: u32,
    /// 0 outside a band; in a band, the share of pixels the farther representation takes.
    pub t: f32,
}

/// The representation of a tree `px` pixels across with hash `hash`; `view_px` is the side of its
/// impostor's atlas views (`None` without atlases: LOD 2 is the last).
pub fn classify(px: f32, hash: u32, view_px: Option<u32>) -> Choice {
    let u = (hash >> 8) as f32 / 16_777_216.0;
    let m = px * (1.0 + STAGGER * (2.0 * u - 1.0));
    let last = if view_px.is_some() { 3 } else { 2 };
    let thresholds = [LOD_PX[0], LOD_PX[1], view_px.map_or(0.0, |v| v as f32 / IMPOSTOR_TEXELS_PER_PX)];
    let near = (thresholds.iter().filter(|&&t| t > m).count() as u32).min(last);
    // The band above the threshold below `near`: the next coarser representation fades in.
    if near < last {
        let threshold = thresholds[near as usize];
        let top = threshold * (1.0 + BAND);
        if m < top {
            return Choice { near, t: ((top - m) / (top - threshold)).clamp(0.0, 1.0) };
        }
    }
    Choice { near, t: 0.0 }
}

/// The atlas mip for a tree `px` pixels across whose views are `view_px` texels at level 0.
pub fn atlas_mip(px: f32, view_px: u32, levels: usize) -> f32 {
    let lod = (view_px as f32 / px.max(1e-3)).log2();
    lod.clamp(0.0, levels.saturating_sub(1) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representation_falls_with_size_and_bands_cross_fade() {
        let mid = 0x8000_0000; // stagger 0
        let v = Some(32);
        assert_eq!(classify(2000.0, mid, v), Choice { near: 0, t: 0.0 });
        assert_eq!(classify(300.0, mid, v), Choice { near: 1, t: 0.0 });
        assert_eq!(classify(160.0, mid, v), Choice { near: 2, t: 0.0 });
        assert_eq!(classify(20.0, mid, v), Choice { near: 3, t: 0.0 });
        assert_eq!(classify(20.0, mid, None), Choice { near: 2, t: 0.0 }, "no atlases: the coarsest mesh");
        // The switch sits where the sphere is as many pixels across as a view has texels.
        assert_eq!(classify(31.9, mid, v).near, 3);
        assert_eq!(classify(32.1, mid, v).near, 2);
        assert_eq!(classify(63.9, mid, Some(64)).near, 3);
        // In the band above the impostor threshold both are drawn, the impostor's share growing
        // toward the threshold, continuous at both ends.
        let top = 32.0 * (1.0 + BAND);
        let a = classify(top - 0.01, mid, v);
        let b = classify(32.0 + 0.01, mid, v);
        assert_eq!((a.near, b.near), (2, 2));
        assert!(a.t < 0.01 && b.t > 0.99, "{a:?} {b:?}");
        assert_eq!(classify(32.0 - 0.01, mid, v).near, 3);
        assert!(top < LOD_PX[1], "the impostor band stays below LOD 1's threshold");
    }

    #[test]
    fn thresholds_are_staggered_per_tree() {
        // At one size, trees with different hashes make different choices: no ring.
        let px = 32.0 * 1.05;
        let choices: Vec<Choice> = (0..64u32).map(|i| classify(px, i.wrapping_mul(0x9e37_79b9), Some(32))).collect();
        assert!(choices.iter().any(|c| c.near == 3) && choices.iter().any(|c| c.near == 2));
        let ts: Vec<u32> = choices.iter().map(|c| (c.t * 100.0) as u32).collect();
        assert!(ts.iter().min() != ts.iter().max());
    }

    #[test]
    fn atlas_mips_follow_screen_size() {
        assert_eq!(atlas_mip(128.0, 128, 8), 0.0);
        assert_eq!(atlas_mip(32.0, 128, 8), 2.0);
        assert_eq!(atlas_mip(0.5, 128, 4), 3.0);
        assert_eq!(atlas_mip(1000.0, 128, 8), 0.0);
    }
}
