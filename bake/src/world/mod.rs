//! World files: the TOML description of one world, parsed, validated and with its referenced
//! files (brushes, heightmap) loaded.
//!
//! Every error is one line that names the file, the dotted key and the `line:column`:
//! `worlds/x.toml:12:8: volume.size: nx and ny must be positive multiples of ...`.
//! The key reference is `worlds/README.md`.

mod brush;
mod embed;
mod files;
mod grass;
mod heightmap;
mod name;
mod source;
mod spec;
mod trees;
mod validate;
mod water;

use std::fmt;
use std::path::{Path, PathBuf};

pub use brush::{parse_brushes, strokes_to_toml, BrushShape, BrushStroke, Falloff, MAX_STROKES};
pub use files::{MAX_BRUSH_FILE_BYTES, MAX_HEIGHTMAP_FILE_BYTES, MAX_WORLD_FILE_BYTES};
pub use grass::{GrassSpec, MAX_GRASS_LEVELS, MAX_GRASS_PATCHES, MAX_PATCH_BLADES, MIN_GRASS_LEVELS};
pub use heightmap::{Heightmap, HeightmapError, MAX_HEIGHTMAP_SIDE};
pub use name::{name_problem, MAX_NAME_LEN};
pub use spec::{BrushesSpec, FloaterSpec, FloorKind, FloorSpec, NoiseKind, NoiseSpec, VolumeSpec, WorldSpec};
pub use trees::{ImpostorLayoutSpec, ImpostorSpec, ShapeOverrides, SpeciesSpec, TreesSpec, MAX_PROTOTYPES, MAX_SPECIES};
pub use validate::{
    heightmap_is_raw, SpecIssue, MAX_AXIS, MAX_LACUNARITY, MAX_NOISE_AMPLITUDE, MAX_NOISE_CYCLES, MAX_OCTAVES, MAX_TERMS, MAX_TILES_PER_AXIS,
    MAX_VOXELS, MAX_VOXEL_SIZE, MIN_VOXEL_SIZE,
};
pub use water::{
    CausticDepthsSpec, CausticsSpec, SpectrumKind, WaterSpec, WavesSpec, CLEAR_SEA_ABSORPTION_PER_METRE, MAX_CAUSTIC_DEPTHS, MAX_WAVE_FRAMES,
    MAX_WAVE_RESOLUTION, MAX_WAVE_TEXEL_FRAMES, MIN_WAVE_RESOLUTION,
};

use source::SourceDoc;

/// A world file (or a file it references) that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// The world file itself could not be read (missing, not a regular file, over the size limit).
    #[error("{}: cannot read world file: {reason}", .file.display())]
    Read {
        /// The world file.
        file: PathBuf,
        /// Why it cannot be read, for the user.
        reason: String,
    },
    /// Bad content at `file:line:column`; `key` is the dotted key path (`stroke[2].radius`),
    /// empty when the problem is not inside any key (e.g. a syntax error between tables).
    #[error("{}:{line}:{column}: {}{message}", .file.display(), KeyPrefix(.key))]
    Invalid {
        /// The file at fault: the world file, its brush file, or the pack whose embedded sources were read.
        file: PathBuf,
        /// 1-based line, or 0 when the problem has no position (sources embedded in a pack).
        line: usize,
        /// 1-based column in characters, or 0 with `line`.
        column: usize,
        /// Dotted key path, or empty (see the variant).
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
}

/// Renders `key: ` or nothing.
struct KeyPrefix<'a>(&'a str);

impl fmt::Display for KeyPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "{}: ", self.0)
        }
    }
}

/// A loaded, validated world: its spec plus the contents of the files it references.
#[derive(Clone, Debug, PartialEq)]
pub struct World {
    /// The spec with every default resolved.
    pub spec: WorldSpec,
    /// The world file's path as given (used in messages and reports).
    pub path: PathBuf,
    /// Brush strokes in replay order, sweeps expanded (empty without a brush file).
    pub brushes: Vec<BrushStroke>,
    /// The decoded height image when `floor.kind = "heightmap"`.
    pub heightmap: Option<Heightmap>,
    /// Per `[[trees.species]]` entry, its `density_image` (the file's bytes and their decoded values), if it names one.
    pub tree_density: Vec<Option<DensityImage>>,
    /// `[grass] density_image`, if it names one.
    pub grass_density: Option<DensityImage>,
}

/// A greyscale image read from the world's directory: the file's bytes (embedded in the bake's
/// manifest) and the values decoded from them.
#[derive(Clone, Debug, PartialEq)]
pub struct DensityImage {
    /// The PNG file's bytes.
    pub png: Vec<u8>,
    /// Its samples, row 0 at y = 0.
    pub map: Heightmap,
}

/// Reads, parses and validates the world file at `path`, loading referenced files relative to
/// its directory.
pub fn load_world(path: &Path) -> Result<World, WorldError> {
    let bytes = files::read_limited(path, MAX_WORLD_FILE_BYTES).map_err(|reason| WorldError::Read { file: path.to_owned(), reason })?;
    let text = utf8(bytes, path)?;
    let base_dir = path.parent().unwrap_or(Path::new(""));
    World::from_str(&text, path, base_dir)
}

/// `bytes` as text, or an error at the first invalid byte's line, column and byte offset.
fn utf8(bytes: Vec<u8>, file: &Path) -> Result<String, WorldError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
        let (line, column) = source::line_col(valid, at);
        let byte = e.as_bytes()[at];
        let message = format!("not UTF-8 text: invalid byte 0x{byte:02x} at byte offset {at}");
        WorldError::Invalid { file: file.to_owned(), line, column, key: String::new(), message }
    })
}

impl World {
    /// Parses world-file `text`; `path_for_messages` names it in errors, referenced files are
    /// resolved against `base_dir`.
    pub fn from_str(text: &str, path_for_messages: &Path, base_dir: &Path) -> Result<World, WorldError> {
        let src = SourceDoc::new(path_for_messages, text);
        let mut spec: WorldSpec = toml::from_str(text).map_err(|e| src.error_from_toml(&e))?;
        src.check_array_lengths(&spec)?;
        spec.resolve_defaults();
        spec.validate().map_err(|SpecIssue { key, message }| src.error_at_key(&key, message))?;

        let read = |key: &str, rel: &str, limit: u64| -> Result<Vec<u8>, WorldError> {
            let full = files::resolve_inside(base_dir, rel).map_err(|e| src.error_at_key(key, format!("{rel:?}: {e}")))?;
            files::read_limited(&full, limit).map_err(|e| src.error_at_key(key, format!("cannot read {:?} ({}): {e}", rel, full.display())))
        };

        let brushes = match &spec.brushes.file {
            None => Vec::new(),
            Some(rel) => {
                let bytes = read("brushes.file", rel, MAX_BRUSH_FILE_BYTES)?;
                let brush_path = base_dir.join(rel);
                let strokes = parse_brushes(&utf8(bytes, &brush_path)?, &brush_path)?;
                brush::check_work(&strokes, &spec).map_err(|m| src.error_at_key("brushes.file", format!("{rel:?}: {m}")))?;
                strokes
            }
        };

        let heightmap = match (&spec.floor.kind, &spec.floor.file) {
            (FloorKind::Heightmap, Some(rel)) => {
                let bytes = read("floor.file", rel, MAX_HEIGHTMAP_FILE_BYTES)?;
                let decoded = match (heightmap_is_raw(rel), spec.floor.raw_size) {
                    (Some(true), Some([w, h])) => Heightmap::from_r16(&bytes, w, h),
                    _ => Heightmap::from_png(&bytes),
                };
                Some(decoded.map_err(|e| src.error_at_key("floor.file", format!("{rel:?}: {e}")))?)
            }
            _ => None,
        };

        let mut tree_density = Vec::new();
        for (i, species) in spec.trees.iter().flat_map(|t| &t.species).enumerate() {
            tree_density.push(match &species.density_image {
                None => None,
                Some(rel) => {
                    let key = format!("trees.species[{i}].density_image");
                    let png = read(&key, rel, MAX_HEIGHTMAP_FILE_BYTES)?;
                    let map = Heightmap::from_png(&png).map_err(|e| src.error_at_key(&key, format!("{rel:?}: {e}")))?;
                    Some(DensityImage { png, map })
                }
            });
        }

        let grass_density = match spec.grass.as_ref().and_then(|g| g.density_image.as_ref()) {
            None => None,
            Some(rel) => {
                let key = "grass.density_image";
                let png = read(key, rel, MAX_HEIGHTMAP_FILE_BYTES)?;
                let map = Heightmap::from_png(&png).map_err(|e| src.error_at_key(key, format!("{rel:?}: {e}")))?;
                Some(DensityImage { png, map })
            }
        };

        Ok(World { spec, path: path_for_messages.to_owned(), brushes, heightmap, tree_density, grass_density })
    }

    /// Samples per axis `[nx, ny, nz]`.
    pub fn dims(&self) -> [usize; 3] {
        self.spec.dims()
    }

    /// World units between neighbouring samples.
    pub fn voxel_size(&self) -> f64 {
        self.spec.volume.voxel_size
    }

    /// The resolved brush strokes as a brush file, for embedding in a bake's manifest.
    pub fn brushes_toml(&self) -> String {
        strokes_to_toml(&self.brushes)
    }

    /// A 64-bit content hash of everything that determines the density volume: the canonical
    /// spec, the resolved strokes and the heightmap samples. Stable across runs and machines.
    pub fn fingerprint(&self) -> u64 {
        use xxhash_rust::xxh3::Xxh3;
        let mut h = Xxh3::new();
        // Length-prefix each part so that no two different worlds hash the same byte stream.
        for part in [self.spec.canonical_toml(), self.brushes_toml()] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        match &self.heightmap {
            None => h.update(&[0]),
            Some(hm) => {
                h.update(&[1]);
                h.update(&hm.width.to_le_bytes());
                h.update(&hm.height.to_le_bytes());
                let bytes: Vec<u8> = hm.samples.iter().flat_map(|s| s.to_le_bytes()).collect();
                h.update(&bytes);
            }
        }
        h.digest()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_grass;
#[cfg(test)]
mod tests_hostile;
#[cfg(test)]
mod tests_trees;
#[cfg(test)]
mod tests_water;
