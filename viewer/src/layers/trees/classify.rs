//! Per frame, on the CPU: which representation each tree is drawn with, from the size of its
//! bounding sphere on screen, and the dithered cross-fade between neighbouring representations.
//!
//! Representations: mesh LOD 0, 1, 2, impostor (3). Tree `m` pixels across (its sphere's
//! diameter, times a per-tree stagger so that switches do not draw a ring around the camera) is
//! drawn as LOD `i` = the number of thresholds [`LOD_PX`] above `m`. Just above each threshold a
//! band of relative width [`BAND`] draws both neighbours, with complementary screen-space dither
//! (3DWorld's scheme): the nearer keeps noise ∈ [t, 1), the farther [0, t), with `t` going from 0
//! at the top of the band to 1 at the threshold, so every pixel of the tree is drawn by exactly
//! one of them and nothing is blended.

/// Sphere diameters in pixels at and above which mesh LOD 0, 1 and 2 are drawn; below the last,
/// the impostor. The atlas views are 64–128 px: an impostor is drawn near its own resolution.
pub const LOD_PX: [f32; 3] = [420.0, 220.0, 110.0];
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

/// The representation of a tree `px` pixels across with hash `hash`; `impostors` is whether the
/// bake has atlases (without them LOD 2 is the last).
pub fn classify(px: f32, hash: u32, impostors: bool) -> Choice {
    let u = (hash >> 8) as f32 / 16_777_216.0;
    let m = px * (1.0 + STAGGER * (2.0 * u - 1.0));
    let last = if impostors { 3 } else { 2 };
    let near = (LOD_PX.iter().filter(|&&t| t > m).count() as u32).min(last);
    // The band above the threshold below `near`: the next coarser representation fades in.
    if near < last {
        let threshold = LOD_PX[near as usize];
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
        assert_eq!(classify(2000.0, mid, true), Choice { near: 0, t: 0.0 });
        assert_eq!(classify(300.0, mid, true), Choice { near: 1, t: 0.0 });
        assert_eq!(classify(160.0, mid, true), Choice { near: 2, t: 0.0 });
        assert_eq!(classify(50.0, mid, true), Choice { near: 3, t: 0.0 });
        assert_eq!(classify(50.0, mid, false), Choice { near: 2, t: 0.0 }, "no atlases: the coarsest mesh");
        // In the band above the impostor threshold both are drawn, the impostor's share growing
        // toward the threshold, continuous at both ends.
        let top = LOD_PX[2] * (1.0 + BAND);
        let a = classify(top - 0.01, mid, true);
        let b = classify(LOD_PX[2] + 0.01, mid, true);
        assert_eq!((a.near, b.near), (2, 2));
        assert!(a.t < 0.01 && b.t > 0.99, "{a:?} {b:?}");
        assert_eq!(classify(LOD_PX[2] - 0.01, mid, true).near, 3);
    }

    #[test]
    fn thresholds_are_staggered_per_tree() {
        // At one size, trees with different hashes make different choices: no ring.
        let px = LOD_PX[2] * 1.05;
        let choices: Vec<Choice> = (0..64u32).map(|i| classify(px, i.wrapping_mul(0x9e37_79b9), true)).collect();
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
