//! Sharded bakes: N shard processes sharing one cache directory, one of them killed (SIGKILL, as
//! `kill -9`) at a named instant and started again, then an assembly: every pack byte-identical to
//! a one-process bake, for N = 1, 2, 3 and 7, on the tiny world and on a larger one with trees,
//! grass and water (whose stored world products the shards claim). Also the local driver
//! (`--local-shards`), the Kubernetes index variable (`--shards`), and an assembly that finds the
//! cache incomplete.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use kiln_e2e::{files_under, repo_root, scratch};

fn kiln_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kiln-under-test")
}

fn kiln_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(kiln_bin());
    c.args(args).env_remove("KILN_FAILPOINT").env_remove("JOB_COMPLETION_INDEX");
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// tiny.toml four times the area (8 × 8 level-0 tiles) with trees that occlude light, grass and
/// water: every kind of world product a shard claims or computes.
fn larger_world(dir: &Path) -> PathBuf {
    let tiny = std::fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    assert!(tiny.contains("size = [64, 64, 32]"), "tiny.toml's size");
    let mut text = tiny.replace("name = \"tiny\"", "name = \"shardland\"").replace("size = [64, 64, 32]", "size = [128, 128, 32]");
    text.push_str(
        r#"
[trees]
occlude_light = true
impostor = { grid = 6, texel = 0.2 }

[[trees.species]]
preset = "oak"
prototypes = 3
height = [2.5, 3.5]
density = 0.05
min_spacing = 2.0

[grass]
density = 200.0
patches = 4

[water]
level = 1.0

[water.waves]
frames = 4
resolution = 32
patch_size = 4.0
wind_speed = 6.0
"#,
    );
    let path = dir.join("shardland.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A world file and its one-process bake's files.
struct Reference {
    world: PathBuf,
    name: &'static str,
    files: BTreeMap<PathBuf, Vec<u8>>,
}

fn reference(world: PathBuf, name: &'static str, label: &str) -> Reference {
    let out = scratch(&format!("shards-ref-{label}"));
    let o = kiln_cmd(&["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files = files_under(&out.join(name));
    assert!(files.len() > 20, "the reference bake has its packs");
    Reference { world, name, files }
}

fn tiny() -> &'static Reference {
    static R: OnceLock<Reference> = OnceLock::new();
    R.get_or_init(|| reference(repo_root().join("worlds/tiny.toml"), "tiny", "tiny"))
}

fn larger() -> &'static Reference {
    static R: OnceLock<Reference> = OnceLock::new();
    R.get_or_init(|| reference(larger_world(&scratch("shards-world")), "shardland", "larger"))
}

fn shard(world: &Path, cache: &Path, k: u32, n: u32, failpoint: Option<&str>) -> Child {
    let spec = format!("{k}/{n}");
    let mut c = kiln_cmd(&["bake", world.to_str().unwrap(), "--shard", &spec, "--cache", cache.to_str().unwrap(), "--jobs", "1", "--quiet"]);
    if let Some(point) = failpoint {
        c.env("KILN_FAILPOINT", format!("shard{k}:{point}"));
    }
    c.spawn().expect("kiln-under-test starts")
}

#[cfg(unix)]
fn killed(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(9)
}

/// Bakes `r` as `n` shards, shard `victim` killed at `point` and started again, then assembles;
/// returns the assembled files.
fn sharded(r: &Reference, n: u32, victim: u32, point: &str, label: &str) -> BTreeMap<PathBuf, Vec<u8>> {
    let dir = scratch(&format!("shards-{label}-{n}"));
    let cache = dir.join("cache");
    let children: Vec<(u32, Child)> = (0..n).map(|k| (k, shard(&r.world, &cache, k, n, (k == victim).then_some(point)))).collect();
    let mut was_killed = false;
    for (k, child) in children {
        let o = child.wait_with_output().unwrap();
        if k == victim && killed(&o.status) {
            was_killed = true;
            let again = shard(&r.world, &cache, k, n, None).wait_with_output().unwrap();
            assert!(again.status.success(), "shard {k}/{n} again: {}", String::from_utf8_lossy(&again.stderr));
        } else {
            assert!(o.status.success(), "shard {k}/{n}: {:?} {}", o.status, String::from_utf8_lossy(&o.stderr));
        }
    }
    assert!(was_killed, "{label}: shard {victim}/{n} reached {point} and was killed");
    let out = dir.join("out");
    let o = kiln_cmd(&["bake", r.world.to_str().unwrap(), "--assemble", "--cache", cache.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "assemble: {}", String::from_utf8_lossy(&o.stderr));
    let report = String::from_utf8_lossy(&o.stderr);
    assert!(report.contains(" 0 assembled"), "the assembly computed nothing:\n{report}");
    files_under(&out.join(r.name))
}

fn same_files(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Result<(), String> {
    if a.keys().ne(b.keys()) {
        return Err(format!("different files: {:?} vs {:?}", a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>()));
    }
    match a.iter().find(|(p, bytes)| b[*p] != **bytes) {
        Some((p, _)) => Err(format!("{} differs", p.display())),
        None => Ok(()),
    }
}

/// Where a shard is killed: after storing its first light-transport part, while holding the claim
/// on the first tile item it computes, or just after storing one.
const POINTS: [&str; 3] = ["transport-part", "claimed-tile", "tile"];

#[test]
#[cfg(unix)]
fn any_number_of_shards_with_one_killed_gives_the_bytes_of_one_process() {
    for (r, label) in [(tiny(), "tiny"), (larger(), "larger")] {
        for (i, n) in [1u32, 2, 3, 7].into_iter().enumerate() {
            let victim = (i as u32 * 2) % n;
            let point = POINTS[i % POINTS.len()];
            let files = sharded(r, n, victim, point, label);
            if let Err(e) = same_files(&r.files, &files) {
                panic!("{label}, {n} shards (shard {victim} killed at {point}): {e}");
            }
        }
    }
}

#[test]
#[cfg(unix)]
fn local_shards_start_a_killed_shard_again_and_assemble() {
    let r = tiny();
    let dir = scratch("shards-local");
    let out = dir.join("out");
    let o = kiln_cmd(&[
        "bake",
        r.world.to_str().unwrap(),
        "--local-shards",
        "3",
        "--cache",
        dir.join("cache").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .env("KILN_FAILPOINT", "shard1:transport-part")
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("shard 1/3 was killed by signal 9; starting it again"), "{err}");
    same_files(&r.files, &files_under(&out.join("tiny"))).unwrap();
}

#[test]
fn the_kubernetes_index_variable_names_the_shard() {
    let r = tiny();
    let dir = scratch("shards-index");
    let cache = dir.join("cache");
    let world = r.world.to_str().unwrap();
    let no_index = kiln_cmd(&["bake", world, "--shards", "2", "--cache", cache.to_str().unwrap()]).output().unwrap();
    assert_eq!(no_index.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_index.stderr).contains("JOB_COMPLETION_INDEX"), "{}", String::from_utf8_lossy(&no_index.stderr));
    let bad = kiln_cmd(&["bake", world, "--shards", "2", "--cache", cache.to_str().unwrap()]).env("JOB_COMPLETION_INDEX", "2").output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "index 2 of 2 is out of range");
    for k in ["0", "1"] {
        let o = kiln_cmd(&["bake", world, "--shards", "2", "--cache", cache.to_str().unwrap(), "--quiet"])
            .env("JOB_COMPLETION_INDEX", k)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let out = dir.join("out");
    let o = kiln_cmd(&["bake", world, "--assemble", "--cache", cache.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    same_files(&r.files, &files_under(&out.join("tiny"))).unwrap();
}

#[test]
fn assembling_an_incomplete_cache_fails_naming_what_is_missing_and_writes_nothing() {
    let r = tiny();
    let dir = scratch("shards-incomplete");
    let cache = dir.join("cache");
    let world = r.world.to_str().unwrap();
    // One shard of two: half the tiles are missing.
    let o = kiln_cmd(&["bake", world, "--shard", "0/2", "--cache", cache.to_str().unwrap(), "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out");
    let o = kiln_cmd(&["bake", world, "--assemble", "--cache", cache.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the cache lacks") && err.contains("tiny"), "{err}");
    assert!(!out.join("tiny").exists(), "nothing written");
    let no_cache = kiln_cmd(&["bake", world, "--shard", "0/2", "--no-cache"]).output().unwrap();
    assert_eq!(no_cache.status.code(), Some(2), "a shard needs a cache");
}
