//! Bake errors reach the caller typed, with their text and their sources, from the options and the
//! output writer as from inside a product's bake. (That the CLI prints them unchanged is tested in `cli`.)

use std::error::Error as _;
use std::path::{Path, PathBuf};

use kiln_formats::SectionKind;

use super::super::engine::{Engine, KeyCtx, Plan, TileCtx};
use super::super::product::{TileOutput, TileProduct};
use super::super::progress::NoProgress;
use super::super::stage_cache::{StageCache, StageInputs};
use super::super::{bake, BakeOptions, Registry};
use super::BakeError;
use crate::world::World;

fn tiny() -> World {
    crate::world::load_world(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/tiny.toml")).expect("tiny world loads")
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-bake-error-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn options(out_root: PathBuf) -> BakeOptions {
    BakeOptions { jobs: Some(1), ..BakeOptions::new(out_root) }
}

#[test]
fn options_and_output_errors_are_typed_and_keep_their_sources() {
    let world = tiny();
    let dir = scratch("options");
    let file = dir.join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();

    let e = bake(&world, &BakeOptions { jobs: Some(0), ..options(dir.join("out")) }, &NoProgress).unwrap_err();
    assert!(matches!(&e, BakeError::BadOption(m) if m == "--jobs 0: must be 1 to 256"), "{e}");

    let e = bake(&world, &options(file.clone()), &NoProgress).unwrap_err();
    assert!(matches!(&e, BakeError::BadOption(m) if m.ends_with("--out is not a directory")), "{e}");

    let e = bake(&world, &options(file.join("below")), &NoProgress).unwrap_err();
    assert!(matches!(&e, BakeError::Io { path, .. } if *path == file.join("below")), "{e}");
    assert!(e.source().is_some_and(|s| s.is::<std::io::Error>()), "{e:?}");

    let e = bake(&world, &BakeOptions { cache: Some(file.clone()), ..options(dir.join("out")) }, &NoProgress).unwrap_err();
    assert!(matches!(e, BakeError::Cache(_)), "{e}");
    assert!(e.to_string().contains(&file.display().to_string()), "{e}");
    assert!(!dir.join("out").join("tiny").exists(), "nothing is written after an error");
    std::fs::remove_dir_all(&dir).unwrap();
}

const FAIL: SectionKind = SectionKind(*b"FAIL");

#[derive(Debug, thiserror::Error)]
#[error("the oven is cold")]
struct Cold;

/// Fails every tile with an error type of its own.
struct Failing;

impl TileProduct for Failing {
    fn name(&self) -> &'static str {
        "failing"
    }
    fn report_stage(&self) -> &'static str {
        "failing"
    }
    fn inputs(&self, _tile: usize, _keys: &KeyCtx) -> Result<StageInputs, BakeError> {
        Ok(StageInputs::new("failing", 1))
    }
    fn sections(&self) -> &'static [SectionKind] {
        &[FAIL]
    }
    fn bake(&self, _tile: usize, ctx: &TileCtx) -> Result<TileOutput, BakeError> {
        Err(BakeError::Product { world: ctx.plan().world_name(), product: self.name(), source: Box::new(Cold) })
    }
    fn validate(&self, _tile: usize, _output: &TileOutput, _keys: &KeyCtx) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn a_products_own_error_reaches_the_caller_with_its_source() {
    let world = tiny();
    let plan = Plan::new(&world);
    let registry = Registry::standard().tile(Failing);
    let cache = StageCache::new(None, "tiny", false);
    let engine = Engine::new(&plan, &registry, &cache, &NoProgress);
    let e = engine.packs(&[0]).map(|_| ()).expect_err("the failing product fails the bake");
    assert_eq!(e.to_string(), "tiny: failing: the oven is cold");
    assert!(e.source().is_some_and(|s| s.is::<Cold>()), "{e:?}");
}
