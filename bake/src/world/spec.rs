//! The world-file schema: every key, its default, and the semantic checks the parser cannot do.
//!
//! Units: sizes are in voxels; every other length (voxel size, floor height, fade, brush radius and
//! position) is in world units; frequencies are in cycles per world unit, so changing
//! `volume.voxel_size` refines the same world instead of rescaling it. World position of voxel
//! `(i, j, k)` is `(i, j, k) * voxel_size`.
//!
//! Adding a table later (the lead's `[ao]` and `[lighting]`) is one field on [`WorldSpec`]:
//! `#[serde(default)] pub ao: crate::ao::AoSettings` with a `Default` impl, plus a line in
//! [`WorldSpec::validate`] if it has semantic checks.

use serde::{Deserialize, Serialize};

/// A complete world description, as read from a world file with all defaults resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// Human-readable world name (required, non-empty).
    pub name: String,
    /// Seed of every random choice in the world. TOML integers are signed 64-bit, so the usable
    /// range is `0..=i64::MAX`.
    #[serde(default)]
    pub seed: u64,
    /// `[volume]`: the sample grid, its spacing and its tiling.
    #[serde(default)]
    pub volume: VolumeSpec,
    /// `[noise]`: the 3D density noise.
    #[serde(default)]
    pub noise: NoiseSpec,
    /// `[floor]`: the ground and the fade to open sky above it.
    #[serde(default)]
    pub floor: FloorSpec,
    /// `[floaters]`: connectivity clean-up (floating solids, sealed air).
    #[serde(default)]
    pub floaters: FloaterSpec,
    /// `[brushes]`: the optional brush file replayed after generation.
    #[serde(default)]
    pub brushes: BrushesSpec,
    /// `[ao]`: per-vertex ambient occlusion (see `worlds/README.md`).
    #[serde(default)]
    pub ao: crate::ao::AoSettings,
    /// `[lighting]`: baked sky, sun, moon and static-light irradiance (see `worlds/README.md`).
    #[serde(default)]
    pub lighting: crate::lighting::LightingSpec,
    /// `[trees]`: species, prototypes, placement and impostors; absent = no trees (see `worlds/README.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trees: Option<super::trees::TreesSpec>,
    /// `[grass]`: blades, patches, levels and where grass grows; absent = no grass (see `worlds/README.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grass: Option<super::grass::GrassSpec>,
    /// `[water]`: the water level, absorption, waves and caustics; absent = no water (see `worlds/README.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub water: Option<super::water::WaterSpec>,
}

/// `[volume]`: the sample grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VolumeSpec {
    /// Samples per axis `[nx, ny, nz]` (Z up).
    pub size: [u32; 3],
    /// Distance between neighbouring samples, in world units.
    pub voxel_size: f64,
    /// Edge of one XY tile in voxel columns; `nx / tile_size` and `ny / tile_size` must be
    /// powers of two because the LOD quadtree halves the tile grid per level.
    pub tile_size: u32,
}

impl Default for VolumeSpec {
    fn default() -> Self {
        VolumeSpec { size: [512, 512, 64], voxel_size: 0.0625, tile_size: 32 }
    }
}

/// Which 3D noise makes the caves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseKind {
    /// Sums of products of sines: separable, so the fastest by far.
    #[default]
    SineProducts,
    /// fBm of gradient noise from the `noise` crate.
    Perlin,
    /// fBm of simplex noise from the `noise` crate.
    Simplex,
}

/// `[noise]`: the 3D density noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NoiseSpec {
    /// Which noise function is summed over the octaves.
    pub kind: NoiseKind,
    /// Number of octaves, 1..=16.
    pub octaves: u32,
    /// Base frequency of the first octave, in cycles per world unit.
    pub frequency: f64,
    /// Frequency multiplier per octave; absent means the kind's reference value
    /// (2.5 for sine_products, 1.92 for perlin and simplex), resolved when the file is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lacunarity: Option<f64>,
    /// Amplitude multiplier per octave, in (0, 1].
    pub gain: f64,
    /// Sine-product terms per octave (sine_products only), 1..=64.
    pub terms: u32,
    /// Scale of the normalised noise (standard deviation 0.5 at amplitude 1) before clipping.
    pub amplitude: f64,
}

impl Default for NoiseSpec {
    fn default() -> Self {
        NoiseSpec { kind: NoiseKind::default(), octaves: 5, frequency: 0.15, lacunarity: None, gain: 0.5, terms: 12, amplitude: 1.0 }
    }
}

impl NoiseSpec {
    /// The reference lacunarity of each kind, used when the file does not set one.
    pub fn default_lacunarity(kind: NoiseKind) -> f64 {
        match kind {
            NoiseKind::SineProducts => 2.5,
            NoiseKind::Perlin | NoiseKind::Simplex => 1.92,
        }
    }

    /// The lacunarity in effect (the file's value or the kind's default).
    pub fn lacunarity(&self) -> f64 {
        self.lacunarity.unwrap_or_else(|| Self::default_lacunarity(self.kind))
    }
}

/// How the ground under the caves is shaped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloorKind {
    /// No ground: only the noise (fade heights are measured from z = 0).
    None,
    /// A 2D Perlin fBm height field.
    #[default]
    Noise,
    /// A 16-bit height image (`floor.file`).
    Heightmap,
}

/// `[floor]`: the solid ground and the fade to open sky above it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FloorSpec {
    /// Where the ground height comes from.
    pub kind: FloorKind,
    /// Lowest floor height, in world units above z = 0.
    pub height: f64,
    /// Floor heights span `[height, height + amplitude]` (world units).
    pub amplitude: f64,
    /// Base frequency of the floor noise, cycles per world unit (kind = "noise").
    pub frequency: f64,
    /// Octaves of the floor noise, 1..=16 (kind = "noise").
    pub octaves: u32,
    /// Height image for kind = "heightmap": a grayscale PNG (8- or 16-bit) or raw little-endian
    /// 16-bit samples (`.r16` / `.raw`), path relative to the world file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `[width, height]` of a raw heightmap (raw files carry no header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_size: Option<[u32; 2]>,
    /// Height above the local floor (world units) where the noise starts fading to air.
    pub fade_start: f64,
    /// Thickness of the fade (world units); above `fade_start + fade` everything is air.
    pub fade: f64,
}

impl Default for FloorSpec {
    fn default() -> Self {
        FloorSpec {
            kind: FloorKind::default(),
            height: 0.25,
            amplitude: 0.5,
            frequency: 0.1,
            octaves: 4,
            file: None,
            raw_size: None,
            fade_start: 2.25,
            fade: 0.75,
        }
    }
}

/// `[floaters]`: connectivity clean-up and the world's closed sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FloaterSpec {
    /// Turn solid voxels not connected to the ground into air.
    pub remove: bool,
    /// Wall the world's four sides below its surface, so it looks like a block of ground from
    /// outside its footprint (see `density::close_sides`).
    pub close_sides: bool,
    /// Turn every air voxel not connected to the open top or sides into solid.
    pub fill_sealed_air: bool,
    /// Turn sealed air pockets (as above) of fewer than this many samples into solid: specks
    /// nobody can see that still cost triangles. 0 turns it off; `fill_sealed_air` fills all.
    pub fill_sealed_air_below: u32,
}

/// Default `fill_sealed_air_below`: a pocket of 64 samples is a 4-voxel cube, a quarter of a
/// world unit across in the default world; the specks it removes are one to a few samples.
pub const DEFAULT_FILL_SEALED_AIR_BELOW: u32 = 64;

impl Default for FloaterSpec {
    fn default() -> Self {
        FloaterSpec { remove: true, close_sides: true, fill_sealed_air: false, fill_sealed_air_below: DEFAULT_FILL_SEALED_AIR_BELOW }
    }
}

/// `[brushes]`: edits replayed after generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrushesSpec {
    /// Brush file (TOML, see worlds/README.md), relative to the world file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl WorldSpec {
    /// The samples per axis as `usize`.
    pub fn dims(&self) -> [usize; 3] {
        self.volume.size.map(|n| n as usize)
    }

    /// Tiles per XY axis (`size / tile_size`).
    pub fn tiles_per_axis(&self) -> [usize; 2] {
        let t = self.volume.tile_size.max(1) as usize;
        [self.volume.size[0] as usize / t, self.volume.size[1] as usize / t]
    }

    /// Fills in defaults that depend on other keys (currently `noise.lacunarity`), so the spec
    /// states every value explicitly. Loading a world does this; call it on hand-built specs.
    pub fn resolve_defaults(&mut self) {
        self.noise.lacunarity = Some(self.noise.lacunarity());
    }

    /// All keys with defaults resolved, as TOML; deserialising it gives back an equal spec.
    /// This is what a bake records (and hashes) as the world it was made from.
    ///
    /// # Panics
    /// Only for a spec that fails [`validate`](Self::validate) (a seed above `i64::MAX` has
    /// no TOML form); loaded worlds are always validated.
    pub fn canonical_toml(&self) -> String {
        let mut resolved = self.clone();
        resolved.resolve_defaults();
        toml::to_string(&resolved).expect("a validated WorldSpec always serialises to TOML")
    }
}
