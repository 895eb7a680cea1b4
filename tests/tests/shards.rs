//! Sharded bakes: N shard processes sharing one cache directory, one of them killed (SIGKILL, as
//! `kill -9`) at a named instant and started again, then an assembly: every pack byte-identical to
//! a one-process bake, for N = 1, 2, 3 and 7, on the tiny world and on a larger one with trees,
//! grass and water (whose stored world products the shards claim). Also the local driver
//! (`--local-shards`), the Kubernetes index variable (`--shards`), an assembly that finds the cache
//! incomplete, and the same through an S3-compatible server (moto's, started by the test).

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

/// Where the shards' cache lives: a directory under the test's scratch space, or a bucket prefix
/// on a local S3-compatible server (with the environment that reaches it).
#[derive(Clone, Copy)]
enum Backend<'a> {
    Dir,
    S3(&'a Moto),
}

impl Backend<'_> {
    fn cache(self, dir: &Path) -> String {
        match self {
            Backend::Dir => dir.join("cache").to_str().unwrap().to_owned(),
            Backend::S3(_) => format!("s3://{BUCKET}/{}", dir.file_name().unwrap().to_string_lossy()),
        }
    }
    fn env(self, c: &mut Command) {
        if let Backend::S3(m) = self {
            c.envs(m.env());
        }
    }
}

/// Shard `k` of `n`, one of `machine_share` on this machine (as `--local-shards` runs them), or of
/// none.
fn shard(world: &Path, cache: &str, backend: Backend, k: u32, n: u32, machine_share: u32, failpoint: Option<&str>) -> Child {
    let (spec, share) = (format!("{k}/{n}"), machine_share.to_string());
    let mut c = kiln_cmd(&["bake", world.to_str().unwrap(), "--shard", &spec, "--cache", cache, "--jobs", "1", "--machine-share", &share, "--quiet"]);
    backend.env(&mut c);
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

/// Bakes `r` as `n` shards, then assembles; returns the assembled files. Shard `victim` starts
/// first, alone, and is killed at `point` (alone, it surely gets there: with the others running it
/// might find that work done); then it starts again together with all the others, which find
/// what it left: stored items, and claims of a dead process. With `one_machine`, the shards know
/// they share this machine, and make its world-wide steps once.
fn sharded(r: &Reference, backend: Backend, n: u32, one_machine: bool, victim: u32, point: &str, label: &str) -> BTreeMap<PathBuf, Vec<u8>> {
    let dir = scratch(&format!("shards-{label}-{n}"));
    let cache = backend.cache(&dir);
    let share = if one_machine { n } else { 1 };
    let first = shard(&r.world, &cache, backend, victim, n, share, Some(point)).wait_with_output().unwrap();
    assert!(
        killed(&first.status),
        "{label}: shard {victim}/{n} reached {point} and was killed: {:?} {}",
        first.status,
        String::from_utf8_lossy(&first.stderr)
    );
    let children: Vec<(u32, Child)> = (0..n).map(|k| (k, shard(&r.world, &cache, backend, k, n, share, None))).collect();
    for (k, child) in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {k}/{n}: {:?} {}", o.status, String::from_utf8_lossy(&o.stderr));
    }
    let out = dir.join("out");
    let mut assemble = kiln_cmd(&["bake", r.world.to_str().unwrap(), "--assemble", "--cache", &cache, "--out", out.to_str().unwrap()]);
    backend.env(&mut assemble);
    let o = assemble.output().unwrap();
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
/// on the first tile item it computes, just after storing one, or holding the claim on a
/// world-wide step it made for the shards on its machine (the light-transport scene) before
/// storing it.
const POINTS: [&str; 4] = ["transport-part", "claimed-tile", "tile", "machine-step"];

#[test]
#[cfg(unix)]
fn any_number_of_shards_with_one_killed_gives_the_bytes_of_one_process() {
    for (r, label) in [(tiny(), "tiny"), (larger(), "larger")] {
        for (i, n) in [1u32, 2, 3, 7].into_iter().enumerate() {
            let victim = (i as u32 * 2) % n;
            let point = POINTS[i % POINTS.len()];
            // Half of them as shards that share this machine: the machine-step point is one's.
            let one_machine = i % 2 == 1;
            let files = sharded(r, Backend::Dir, n, one_machine, victim, point, label);
            if let Err(e) = same_files(&r.files, &files) {
                panic!("{label}, {n} shards (one machine: {one_machine}; shard {victim} killed at {point}): {e}");
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
        "2",
        "--cache",
        dir.join("cache").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    // Each shard dies at the first tile it computes, so neither can do the other's work first.
    .env("KILN_FAILPOINT", "shard0:claimed-tile,shard1:claimed-tile")
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for k in 0..2 {
        assert!(err.contains(&format!("shard {k}/2 was killed by signal 9; starting it again")), "{err}");
    }
    same_files(&r.files, &files_under(&out.join("tiny"))).unwrap();
}

#[test]
fn local_shards_each_keep_to_their_share_of_the_memory_budget() {
    let r = tiny();
    let dir = scratch("shards-budget");
    let out = dir.join("out");
    let bake = |budget: &str| {
        let cache = dir.join(format!("cache-{budget}"));
        let args = ["bake", r.world.to_str().unwrap(), "--local-shards", "2", "--cache", cache.to_str().unwrap(), "--out", out.to_str().unwrap()];
        kiln_cmd(&args).args(["--memory-budget", budget]).output().unwrap()
    };
    // 48M in all is 24M a shard, under what a shard of tiny measures (about 40 MiB): each stops,
    // naming its share, and nothing is assembled.
    let o = bake("48M");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("over --memory-budget (24 MiB)"), "{err}");
    assert!(err.contains("failed (exit status 2); its error is above"), "{err}");
    assert!(!out.join("tiny").exists(), "{err}");
    // With room, the shards and the assembly give the one-process bytes.
    let o = bake("2G");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    same_files(&r.files, &files_under(&out.join("tiny"))).unwrap();
}

/// `(cached, computed)` of `stage` in a bake report's `cache` line, if it is there.
fn cache_tally(report: &str, stage: &str) -> Option<(u32, u32)> {
    let line = report.lines().find_map(|l| l.trim_start().strip_prefix("cache"))?;
    line.split(", ").find_map(|item| {
        let (cached, computed) = item.trim().strip_prefix(stage)?.strip_prefix(' ')?.split_once(" cached / ")?;
        Some((cached.parse().ok()?, computed.strip_suffix(" computed")?.parse().ok()?))
    })
}

#[test]
#[cfg(unix)]
fn shards_that_share_a_machine_make_the_density_volume_once() {
    let r = larger();
    for (share, label) in [(3, "one machine"), (1, "three machines")] {
        let dir = scratch(&format!("shards-density-{share}"));
        let cache = Backend::Dir.cache(&dir);
        let children: Vec<Child> = (0..3)
            .map(|k| {
                let (spec, share) = (format!("{k}/3"), share.to_string());
                let mut c =
                    kiln_cmd(&["bake", r.world.to_str().unwrap(), "--shard", &spec, "--cache", &cache, "--jobs", "1", "--machine-share", &share]);
                c.stderr(std::process::Stdio::piped()).spawn().expect("kiln-under-test starts")
            })
            .collect();
        let reports: Vec<String> = children
            .into_iter()
            .map(|child| {
                let o = child.wait_with_output().unwrap();
                assert!(o.status.success(), "{label}: {}", String::from_utf8_lossy(&o.stderr));
                String::from_utf8_lossy(&o.stderr).into_owned()
            })
            .collect();
        let made: u32 = reports.iter().filter_map(|rep| cache_tally(rep, "density")).map(|t| t.1).sum();
        let planes: u32 = reports.iter().filter_map(|rep| cache_tally(rep, "density plane")).map(|t| t.1).sum();
        if share > 1 {
            // One shard makes the volume whole; the others read it, and nobody splits the noise.
            assert_eq!((made, planes), (1, 0), "{label}: {reports:#?}");
        } else {
            // They split the noise into planes, and each that finds no volume stored joins it.
            assert!(made >= 1 && planes > 0, "{label}: {reports:#?}");
        }
        let out = dir.join("out");
        let o = kiln_cmd(&["bake", r.world.to_str().unwrap(), "--assemble", "--cache", &cache, "--out", out.to_str().unwrap(), "--quiet"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        same_files(&r.files, &files_under(&out.join(r.name))).unwrap();
    }
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
    // The progress report: the shard's own half of the packs (tiles 0, 2, 4, … of 21), all of
    // the density.
    let status = |c: &Path| {
        let o = kiln_cmd(&["bake", world, "--status", "--cache", c.to_str().unwrap()]).stdout(Stdio::piped()).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let report = status(&cache);
    let row = |name: &str| {
        report.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("no {name} in\n{report}")).to_owned()
    };
    assert!(row("packs").contains("11 / 21"), "{report}");
    assert!(row("volume").contains("1 / 1") && row("volume").contains("done"), "{report}");
    assert!(!report.lines().any(|l| l.split_whitespace().next() == Some("grass")), "the tiny world has no grass tiles: {report}");
    let fresh = status(&dir.join("empty"));
    assert!(fresh.contains("waiting: tile-inputs is not in the cache yet"), "{fresh}");
    let out = dir.join("out");
    let o = kiln_cmd(&["bake", world, "--assemble", "--cache", cache.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the cache lacks") && err.contains("tiny"), "{err}");
    assert!(!out.join("tiny").exists(), "nothing written");
    let no_cache = kiln_cmd(&["bake", world, "--shard", "0/2", "--no-cache"]).output().unwrap();
    assert_eq!(no_cache.status.code(), Some(2), "a shard needs a cache");
}

const BUCKET: &str = "kiln-shards";

/// A local S3-compatible server (moto's standalone server, which `make test` installs), stopped
/// when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Moto {
    /// Starts one on a free port with the test bucket, or `None` when moto is not installed (an
    /// error instead where `KILN_REQUIRE_MOTO` is set, as CI sets it).
    fn start() -> Option<Moto> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let available = Command::new("python3").args(["-c", "import moto.server, flask"]).status().is_ok_and(|s| s.success());
        if !available {
            assert!(std::env::var_os("KILN_REQUIRE_MOTO").is_none(), "python3 cannot import moto.server; `make test` installs moto[server]");
            eprintln!("skipping the S3 tests: python3 cannot import moto.server; `make test` installs moto[server]");
            return None;
        }
        let child = Command::new("python3")
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 starts moto's server");
        let moto = Moto { child, endpoint: format!("http://127.0.0.1:{port}") };
        let start = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed().as_secs() < 30, "moto_server did not listen on port {port}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let cfg = kiln_cache::s3::S3Config {
            endpoint: moto.endpoint.clone(),
            path_style: true,
            bucket: BUCKET.into(),
            prefix: String::new(),
            region: "us-east-1".into(),
            access_key: "testing".into(),
            secret_key: "testing".into(),
            session_token: None,
        };
        kiln_cache::s3::S3Client::new(cfg).create_bucket().unwrap();
        Some(moto)
    }

    /// The environment a kiln process reaches it with; a short claim lease, so a killed holder's
    /// claims are taken over within seconds.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("KILN_S3_LEASE_SECONDS", "3".into()),
        ]
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg(unix)]
fn shards_sharing_an_s3_bucket_give_the_bytes_of_one_process() {
    let Some(moto) = Moto::start() else { return };
    let runs = [(tiny(), "s3-tiny", 1u32), (tiny(), "s3-tiny", 2), (tiny(), "s3-tiny", 3), (tiny(), "s3-tiny", 7), (larger(), "s3-larger", 3)];
    for (i, (r, label, n)) in runs.into_iter().enumerate() {
        let victim = (i as u32 * 2) % n;
        let point = POINTS[i % POINTS.len()];
        let files = sharded(r, Backend::S3(&moto), n, i % 2 == 1, victim, point, label);
        if let Err(e) = same_files(&r.files, &files) {
            panic!("{label}, {n} shards through S3 (shard {victim} killed at {point}): {e}");
        }
    }
    // A plain bake against the bucket finds everything there: it writes the same packs and
    // assembles none of them.
    let dir = scratch("shards-s3-tiny-3");
    let out = dir.join("again");
    let mut c = kiln_cmd(&["bake", tiny().world.to_str().unwrap(), "--cache", &Backend::S3(&moto).cache(&dir), "--out", out.to_str().unwrap()]);
    Backend::S3(&moto).env(&mut c);
    let o = c.output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains(" 0 assembled"), "{}", String::from_utf8_lossy(&o.stderr));
    same_files(&tiny().files, &files_under(&out.join("tiny"))).unwrap();
}
