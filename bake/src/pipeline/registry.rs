//! The products a bake makes, in dependency order: adding a product is one line here.

use super::grass::{GrassGroundProduct, GrassPatchesProduct, GrassProduct, GrassShapeProduct};
use super::lighting::{LightingProduct, TransportProduct};
use super::product::{TileProduct, WorldProduct};
use super::terrain::TerrainProduct;
use super::trees::{TreeLightingProduct, TreePlacementProduct, TreePrototypesProduct, TreeShapesProduct, TreesProduct};
use super::volume::{DensityProduct, TileInputsProduct};
use super::water::{WaterBodyProduct, WaterProduct, WaterWavesProduct};
use super::BakeError;

/// One registered product.
pub enum Entry {
    World(Box<dyn WorldProduct>),
    Tile(Box<dyn TileProduct>),
}

/// The ordered products of a bake. A product may read only products registered before it, and a
/// tile's pack holds the tile products' sections in this order.
#[derive(Default)]
pub struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    /// Every product Kiln bakes.
    pub fn standard() -> Self {
        Registry::default()
            .world(DensityProduct)
            .world(TileInputsProduct)
            .world(WaterBodyProduct)
            .tile(TerrainProduct::default())
            .world(TreeShapesProduct)
            .world(TreePlacementProduct)
            // Before light transport, while the bake holds the density volume for the trees.
            .world(GrassShapeProduct)
            .world(TransportProduct)
            .tile(LightingProduct)
            .tile(TreeLightingProduct)
            .world(GrassPatchesProduct)
            .world(GrassGroundProduct)
            .tile(GrassProduct)
            // After light transport, so that a bake captures the impostors while it traces the
            // light: the instances name the shared pack by its content hash.
            .world(TreePrototypesProduct)
            .tile(TreesProduct)
            .world(WaterWavesProduct)
            .tile(WaterProduct)
    }

    /// Appends a world product.
    pub fn world(mut self, p: impl WorldProduct + 'static) -> Self {
        self.entries.push(Entry::World(Box::new(p)));
        self
    }

    /// Appends a tile product.
    pub fn tile(mut self, p: impl TileProduct + 'static) -> Self {
        self.entries.push(Entry::Tile(Box::new(p)));
        self
    }

    /// Every product, world and tile, in registration order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The tile products, in order.
    pub fn tile_products(&self) -> impl Iterator<Item = &dyn TileProduct> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Tile(p) => Some(p.as_ref()),
            Entry::World(_) => None,
        })
    }

    /// The position of the product called `name`.
    pub fn index(&self, name: &str) -> Result<usize, BakeError> {
        self.entries
            .iter()
            .position(|e| match e {
                Entry::World(p) => p.name() == name,
                Entry::Tile(p) => p.name() == name,
            })
            .ok_or_else(|| BakeError::Internal(format!("internal error: no product named {name:?} is registered")))
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
