//! The inspection view modes (keys 1–9, `--mode`) and the LOD level palette.

/// What the terrain pass shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ViewMode {
    /// Sun with shadows, ambient × AO (or baked irradiance), procedural materials, fog, sky.
    Lit,
    /// The baked per-vertex ambient occlusion as grey.
    Ao,
    /// The baked irradiance (flat grey when the bake has none).
    Indirect,
    /// World-space normals as colour (n · 0.5 + 0.5).
    Normals,
    /// Each LOD level in its own colour ([`lod_color`]).
    Lod,
    /// Lit, with every drawn tile's bounding box as lines.
    Bounds,
    /// Triangle edges over a dimmed surface.
    Wireframe,
    /// Lit terrain with each tree coloured by how it is drawn ([`TREE_REPRESENTATION_COLORS`]):
    /// mesh LOD 0, 1, 2 or impostor.
    Trees,
    /// Lit terrain with each grass blade coloured by its level of detail ([`lod_color`]).
    Grass,
    /// The caustic light alone: the sun refracted through the animated water surface onto the
    /// terrain below it (black above the water and where there is none).
    Caustics,
    /// The water mask over dimmed terrain: wet samples blue by depth (lighter shallow, darker
    /// deep), the shore band yellow; dry ground shows through dimmed.
    WaterMask,
}

/// Colours of the trees view mode, linear RGB: mesh LOD 0 red, LOD 1 yellow, LOD 2 green,
/// impostor blue (tests tell them apart by the dominant channel of LOD 0, 2 and impostor).
pub const TREE_REPRESENTATION_COLORS: [[f32; 3]; 4] = [[0.95, 0.12, 0.10], [0.95, 0.80, 0.10], [0.15, 0.85, 0.20], [0.15, 0.30, 0.95]];

impl ViewMode {
    /// All modes, in key order (key 1 is `ALL[0]`).
    pub const ALL: [ViewMode; 11] = [
        ViewMode::Lit,
        ViewMode::Ao,
        ViewMode::Indirect,
        ViewMode::Normals,
        ViewMode::Lod,
        ViewMode::Bounds,
        ViewMode::Wireframe,
        ViewMode::Trees,
        ViewMode::Grass,
        ViewMode::Caustics,
        ViewMode::WaterMask,
    ];

    /// The mode on digit key `digit` (1–9; 10 and 11 are the water modes, on key 0 in turn).
    pub fn from_digit(digit: u32) -> Option<ViewMode> {
        Self::ALL.get((digit as usize).checked_sub(1)?).copied()
    }

    /// The value the terrain shader switches on (`Frame.params.x`); must match `terrain.wgsl`.
    pub fn shader_index(self) -> u32 {
        match self {
            ViewMode::Lit | ViewMode::Bounds | ViewMode::Trees | ViewMode::Grass => 0,
            ViewMode::Ao => 1,
            ViewMode::Indirect => 2,
            ViewMode::Normals => 3,
            ViewMode::Lod => 4,
            ViewMode::Wireframe | ViewMode::Caustics | ViewMode::WaterMask => 5,
        }
    }

    /// Whether the sun's shadow map is drawn and sampled in this mode.
    pub fn shadowed(self) -> bool {
        matches!(
            self,
            ViewMode::Lit | ViewMode::Bounds | ViewMode::Wireframe | ViewMode::Trees | ViewMode::Grass | ViewMode::Caustics | ViewMode::WaterMask
        )
    }

    /// Whether the exposure ([`crate::exposure`]) changes what this mode shows: the modes that
    /// tone-map radiance. The others show data (AO, normals, levels) as they are.
    pub fn uses_exposure(self) -> bool {
        matches!(
            self,
            ViewMode::Lit
                | ViewMode::Indirect
                | ViewMode::Bounds
                | ViewMode::Wireframe
                | ViewMode::Trees
                | ViewMode::Grass
                | ViewMode::Caustics
                | ViewMode::WaterMask
        )
    }

    /// The name used on the command line and in the HUD.
    pub fn name(self) -> &'static str {
        match self {
            ViewMode::Lit => "lit",
            ViewMode::Ao => "ao",
            ViewMode::Indirect => "indirect",
            ViewMode::Normals => "normals",
            ViewMode::Lod => "lod",
            ViewMode::Bounds => "bounds",
            ViewMode::Wireframe => "wireframe",
            ViewMode::Trees => "trees",
            ViewMode::Grass => "grass",
            ViewMode::Caustics => "caustics",
            ViewMode::WaterMask => "water-mask",
        }
    }
}

/// Level colours: saturated, far apart in hue, each with one clearly dominant channel for the first
/// three (tests tell levels apart by it), cycling after eight levels.
const LOD_PALETTE: [[f32; 3]; 8] = [
    [0.90, 0.20, 0.15], // 0: red
    [0.20, 0.85, 0.25], // 1: green
    [0.20, 0.35, 0.95], // 2: blue
    [0.95, 0.85, 0.15], // 3: yellow
    [0.85, 0.25, 0.90], // 4: magenta
    [0.15, 0.85, 0.90], // 5: cyan
    [0.95, 0.55, 0.15], // 6: orange
    [0.85, 0.85, 0.85], // 7: white
];

/// The linear RGB colour of LOD `level` in the `lod` and `bounds` views.
pub fn lod_color(level: u32) -> [f32; 3] {
    LOD_PALETTE[level as usize % LOD_PALETTE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_map_to_modes_in_order() {
        assert_eq!(ViewMode::from_digit(1), Some(ViewMode::Lit));
        assert_eq!(ViewMode::from_digit(7), Some(ViewMode::Wireframe));
        assert_eq!(ViewMode::from_digit(0), None);
        assert_eq!(ViewMode::from_digit(8), Some(ViewMode::Trees));
        assert_eq!(ViewMode::from_digit(9), Some(ViewMode::Grass));
        assert_eq!(ViewMode::from_digit(10), Some(ViewMode::Caustics));
        assert_eq!(ViewMode::from_digit(12), None);
    }

    #[test]
    fn names_round_trip_through_clap() {
        use clap::ValueEnum;
        for m in ViewMode::ALL {
            assert_eq!(ViewMode::from_str(m.name(), false), Ok(m));
        }
    }

    #[test]
    fn first_levels_have_distinct_dominant_channels() {
        let dominant = |c: [f32; 3]| (0..3).max_by(|&a, &b| c[a].total_cmp(&c[b])).unwrap();
        assert_eq!([dominant(lod_color(0)), dominant(lod_color(1)), dominant(lod_color(2))], [0, 1, 2]);
        assert_eq!(lod_color(8), lod_color(0));
    }
}
