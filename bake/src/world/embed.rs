//! A world carried inside its own bake: the resolved definition and every file it references, so a
//! bake can be reproduced or explained (`kiln export --density`) from its output alone.

use std::path::Path;

use kiln_formats::sections::{EmbeddedFile, EmbeddedFiles};

use super::{FloorKind, World, WorldError};

/// The embedded world definition's file name.
pub const WORLD_FILE: &str = "world.toml";
const BRUSH_FILE: &str = "brushes.toml";
const HEIGHTMAP_FILE: &str = "heightmap.r16";

impl World {
    /// The world as self-contained files: a canonical `world.toml` (defaults resolved) whose file
    /// references point at the resolved brush strokes and the decoded heightmap (raw r16) beside it.
    pub fn embedded_sources(&self) -> EmbeddedFiles {
        let mut spec = self.spec.clone();
        let mut files = Vec::new();
        if spec.brushes.file.is_some() {
            spec.brushes.file = Some(BRUSH_FILE.to_owned());
            files.push(EmbeddedFile { name: BRUSH_FILE.to_owned(), bytes: self.brushes_toml().into_bytes() });
        }
        if let (FloorKind::Heightmap, Some(h)) = (&spec.floor.kind, &self.heightmap) {
            spec.floor.file = Some(HEIGHTMAP_FILE.to_owned());
            spec.floor.raw_size = Some([h.width, h.height]);
            let bytes = h.samples.iter().flat_map(|s| s.to_le_bytes()).collect();
            files.push(EmbeddedFile { name: HEIGHTMAP_FILE.to_owned(), bytes });
        }
        if let Some(trees) = &mut spec.trees {
            for (i, (species, image)) in trees.species.iter_mut().zip(&self.tree_density).enumerate() {
                if let Some(image) = image {
                    let name = format!("trees-density-{i}.png");
                    species.density_image = Some(name.clone());
                    files.push(EmbeddedFile { name, bytes: image.png.clone() });
                }
            }
        }
        if let (Some(grass), Some(image)) = (&mut spec.grass, &self.grass_density) {
            let name = "grass-density.png".to_owned();
            grass.density_image = Some(name.clone());
            files.push(EmbeddedFile { name, bytes: image.png.clone() });
        }
        files.insert(0, EmbeddedFile { name: WORLD_FILE.to_owned(), bytes: spec.canonical_toml().into_bytes() });
        EmbeddedFiles { files }
    }

    /// Rebuilds a world from [`World::embedded_sources`]. `origin` (the pack they came from) names
    /// the source in error messages.
    pub fn from_embedded(files: &EmbeddedFiles, origin: &Path) -> Result<World, WorldError> {
        let invalid = |message: String| WorldError::Invalid { file: origin.to_owned(), line: 0, column: 0, key: String::new(), message };
        let text = files.get(WORLD_FILE).ok_or_else(|| invalid(format!("no embedded {WORLD_FILE}")))?;
        let text = std::str::from_utf8(text).map_err(|_| invalid(format!("embedded {WORLD_FILE} is not UTF-8")))?;
        // Referenced files are read from disk by the loader: give it a private directory holding them,
        // one per call, so that two threads rebuilding the same world never remove each other's.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let dir = std::env::temp_dir().join(format!("kiln-embedded-{}-{call}-{hash:016x}", std::process::id()));
        let io = |e: std::io::Error| invalid(format!("cannot unpack embedded files into {}: {e}", dir.display()));
        std::fs::create_dir_all(&dir).map_err(io)?;
        let result = (|| {
            for f in &files.files {
                if f.name.contains(['/', '\\']) || f.name.starts_with('.') {
                    return Err(invalid(format!("embedded file name {:?} is not a plain file name", f.name)));
                }
                std::fs::write(dir.join(&f.name), &f.bytes).map_err(io)?;
            }
            World::from_str(text, &origin.join(WORLD_FILE), &dir)
        })();
        let _ = std::fs::remove_dir_all(&dir);
        result
    }
}
