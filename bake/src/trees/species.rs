//! Species parameters and the named presets, after the reference generator's five deciduous types
//! (maple, live oak, two generic broadleaves, papaya; `/work/shared/notes/3dworld.md` §3.1) plus a pine.
//!
//! Lengths are in generator units (the trunk's nominal length is 1); [`super::grow`] scales the
//! finished tree to the requested height, so only proportions matter here.

/// Deciduous trees branch recursively from a trunk that ends in the crown; conifers keep a straight
/// leader to the top with whorls of drooping branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Trunk, first-order branches from its upper part, recursive children, leaves on level ≥ 2.
    Deciduous,
    /// Straight leader, whorls of first-order branches shortening upwards, needle cards on level-2 twigs.
    Conifer,
}

/// The leaf texture's outline (alpha) and vein pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafShape {
    /// Rounded lobes along both edges (oak).
    Lobed,
    /// Five pointed lobes from one point (maple).
    Palmate,
    /// A small pointed oval with a toothed edge (birch).
    Serrated,
    /// A plain elongated oval (live oak).
    Oval,
    /// Seven deep lobes (papaya).
    DeepPalmate,
    /// A spray of needles on a twig (pine).
    Needles,
}

/// The bark texture's pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarkStyle {
    /// Vertical ridges and furrows.
    Furrowed,
    /// White with dark horizontal lenticels and patches.
    Birch,
    /// Reddish plates split by dark cracks.
    Plated,
    /// Smooth grey with horizontal leaf-scar rings.
    Ringed,
}

/// Everything that shapes one species. Ranges are inclusive `[min, max]`; `u32` ranges are counts.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeciesParams {
    /// The preset name, carried into [`super::Prototype::species`].
    pub name: String,
    /// Deciduous or conifer growth.
    pub form: Form,
    /// Cylinders in the trunk (the reference uses 5 × height scale).
    pub trunk_cylinders: u32,
    /// Trunk base radius as a fraction of the trunk's length.
    pub trunk_radius: f32,
    /// Trunk top radius as a fraction of its base radius.
    pub trunk_taper: f32,
    /// Where along the trunk (0 = base, 1 = top) first-order branches start.
    pub branch_start: f32,
    /// Branch counts per order: first order per trunk (≤ 8; conifer: per whorl), second order per
    /// first-order branch (4–6), third order (6–10), fourth order (`[0, 0]` = none).
    pub branches: [[u32; 2]; 4],
    /// Conifer only: whorls of first-order branches along the trunk.
    pub whorls: u32,
    /// Length of an order-k branch relative to its parent (order 1: relative to the trunk).
    pub branch_length: [f32; 4],
    /// Cylinders per branch of each order.
    pub branch_cylinders: [u32; 4],
    /// Angle of a first-order branch from the vertical, degrees.
    pub first_angle_deg: [f32; 2],
    /// Deflection of a child branch from its parent's direction, degrees (reference: 20–40).
    pub deflection_deg: [f32; 2],
    /// Random bend per cylinder, degrees (gnarliness).
    pub wander_deg: f32,
    /// Pull of each cylinder's direction towards +Z (negative: droop), per cylinder (reference 0.9 over a branch).
    pub upwardness: f32,
    /// A child branch's base radius relative to its parent's radius where it attaches.
    pub radius_ratio: f32,
    /// Radius variation: each branch's radius is scaled by a uniform factor in `[radius_var, 1]` (reference 0.64).
    pub radius_var: f32,
    /// Length variation: each branch's length is scaled by a uniform factor in `[length_var, 1]` (reference 0.85).
    pub length_var: f32,
    /// Roots (10–12 surface roots of 3 cylinders) on or off.
    pub roots: bool,
    /// Leaf length relative to the trunk length.
    pub leaf_size: f32,
    /// Leaf width over length (the reference's leaf_x_ar).
    pub leaf_aspect: f32,
    /// Mean leaves per level ≥ 2 cylinder (fractional counts accumulate).
    pub leaves_per_cylinder: f32,
    /// Cylinder sides for the trunk and branch orders 1..4 (the reference uses 20/16/12/8/4).
    pub sides: [u32; 5],
    /// Bark colour, sRGB.
    pub bark_colour: [u8; 3],
    /// Leaf colour, sRGB.
    pub leaf_colour: [u8; 3],
    /// Per-instance tint range (tint = 1 ± colour_var, applied by placement) and texture mottling.
    pub colour_var: f32,
    /// Leaf texture outline.
    pub leaf_shape: LeafShape,
    /// Bark texture pattern.
    pub bark_style: BarkStyle,
}

/// The preset names [`preset`] knows.
pub const PRESETS: &[&str] = &["oak", "maple", "birch", "pine", "live_oak", "papaya"];

/// The named preset, or `None` for an unknown name.
pub fn preset(name: &str) -> Option<SpeciesParams> {
    let base = SpeciesParams {
        name: name.to_owned(),
        form: Form::Deciduous,
        trunk_cylinders: 5,
        trunk_radius: 0.085,
        trunk_taper: 0.55,
        branch_start: 0.4,
        branches: [[5, 7], [4, 6], [6, 9], [0, 0]],
        whorls: 0,
        branch_length: [1.2, 0.5, 0.38, 0.3],
        branch_cylinders: [6, 4, 2, 2],
        first_angle_deg: [40.0, 70.0],
        deflection_deg: [30.0, 50.0],
        wander_deg: 12.0,
        upwardness: 0.12,
        radius_ratio: 0.6,
        radius_var: 0.64,
        length_var: 0.85,
        roots: false,
        leaf_size: 0.085,
        leaf_aspect: 0.8,
        leaves_per_cylinder: 2.0,
        sides: [10, 7, 4, 3, 3],
        bark_colour: [0x5c, 0x4b, 0x3b],
        leaf_colour: [0x3e, 0x6b, 0x27],
        colour_var: 0.1,
        leaf_shape: LeafShape::Lobed,
        bark_style: BarkStyle::Furrowed,
    };
    Some(match name {
        // Short stout trunk, wide irregular crown, gnarly branches.
        "oak" => SpeciesParams {
            wander_deg: 20.0,
            trunk_radius: 0.1,
            first_angle_deg: [50.0, 80.0],
            branch_length: [1.35, 0.5, 0.38, 0.3],
            upwardness: 0.13,
            leaf_size: 0.12,
            leaf_aspect: 0.63,
            ..base
        },
        // Rounded dense crown, upward first-order branches, big palmate leaves.
        "maple" => SpeciesParams {
            branches: [[6, 8], [4, 6], [6, 9], [0, 0]],
            first_angle_deg: [25.0, 50.0],
            upwardness: 0.18,
            trunk_radius: 0.075,
            leaf_size: 0.1,
            leaf_aspect: 1.0,
            leaves_per_cylinder: 1.8,
            bark_colour: [0x6b, 0x5d, 0x4c],
            leaf_colour: [0x4a, 0x78, 0x22],
            leaf_shape: LeafShape::Palmate,
            ..base
        },
        // Slender white trunk, narrow oval crown, small leaves on drooping twigs.
        "birch" => SpeciesParams {
            trunk_cylinders: 8,
            trunk_radius: 0.045,
            trunk_taper: 0.5,
            branch_start: 0.35,
            branches: [[6, 8], [4, 5], [6, 7], [0, 0]],
            branch_length: [0.6, 0.5, 0.4, 0.3],
            first_angle_deg: [25.0, 45.0],
            deflection_deg: [25.0, 45.0],
            wander_deg: 10.0,
            upwardness: 0.06,
            leaf_size: 0.055,
            leaf_aspect: 0.81,
            leaves_per_cylinder: 1.7,
            bark_colour: [0xd8, 0xd2, 0xc4],
            leaf_colour: [0x6a, 0x8e, 0x2e],
            colour_var: 0.01,
            leaf_shape: LeafShape::Serrated,
            bark_style: BarkStyle::Birch,
            ..base
        },
        // Straight leader, whorls of drooping branches shortening towards the top, needle cards.
        "pine" => SpeciesParams {
            form: Form::Conifer,
            trunk_cylinders: 10,
            trunk_radius: 0.035,
            trunk_taper: 0.15,
            branch_start: 0.22,
            branches: [[5, 6], [4, 6], [0, 0], [0, 0]],
            whorls: 9,
            branch_length: [0.42, 0.4, 0.0, 0.0],
            branch_cylinders: [3, 1, 0, 0],
            first_angle_deg: [70.0, 85.0],
            deflection_deg: [45.0, 70.0],
            wander_deg: 6.0,
            upwardness: -0.08,
            radius_ratio: 0.45,
            leaf_size: 0.12,
            leaf_aspect: 0.7,
            leaves_per_cylinder: 3.5,
            sides: [8, 4, 3, 3, 3],
            bark_colour: [0x7a, 0x4e, 0x36],
            leaf_colour: [0x34, 0x5e, 0x30],
            leaf_shape: LeafShape::Needles,
            bark_style: BarkStyle::Plated,
            ..base
        },
        // Low, very wide crown of long near-horizontal limbs, surface roots, narrow leaves.
        "live_oak" => SpeciesParams {
            trunk_cylinders: 5,
            trunk_radius: 0.14,
            branch_start: 0.45,
            branches: [[5, 7], [4, 6], [6, 9], [0, 0]],
            branch_length: [1.5, 0.5, 0.36, 0.3],
            branch_cylinders: [7, 4, 2, 2],
            first_angle_deg: [55.0, 80.0],
            wander_deg: 16.0,
            upwardness: 0.07,
            roots: true,
            leaf_size: 0.13,
            leaf_aspect: 0.5,
            leaves_per_cylinder: 2.0,
            bark_colour: [0x55, 0x4c, 0x44],
            leaf_colour: [0x35, 0x55, 0x28],
            leaf_shape: LeafShape::Oval,
            ..base
        },
        // Tall bare trunk, a cluster of long petioles at the top carrying huge deeply lobed leaves.
        "papaya" => SpeciesParams {
            trunk_cylinders: 8,
            trunk_radius: 0.05,
            trunk_taper: 0.6,
            branch_start: 0.92,
            branches: [[7, 8], [4, 5], [0, 0], [0, 0]],
            branch_length: [0.35, 0.25, 0.0, 0.0],
            branch_cylinders: [3, 1, 0, 0],
            first_angle_deg: [35.0, 75.0],
            deflection_deg: [10.0, 30.0],
            wander_deg: 8.0,
            upwardness: 0.0,
            radius_ratio: 0.35,
            leaf_size: 0.25,
            leaf_aspect: 1.0,
            leaves_per_cylinder: 1.0,
            sides: [10, 5, 3, 3, 3],
            bark_colour: [0x8a, 0x80, 0x70],
            leaf_colour: [0x3c, 0x72, 0x24],
            leaf_shape: LeafShape::DeepPalmate,
            bark_style: BarkStyle::Ringed,
            ..base
        },
        _ => return None,
    })
}
