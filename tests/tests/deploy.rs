//! The shipped deployment files (`deploy/`): the fields a sharded bake relies on, and the
//! Kubernetes pods' own command lines run here (the tiny world in place of the default one, a
//! scratch directory in place of the shared volume) with the index Kubernetes would give each pod:
//! the assembled output must be the one-process bake's.

use std::path::Path;
use std::process::Command;

use kiln_e2e::{files_under, repo_root, scratch};
use yaml_rust2::{Yaml, YamlLoader};

fn load(relative: &str) -> Vec<Yaml> {
    let text = std::fs::read_to_string(repo_root().join(relative)).unwrap();
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn of_kind<'a>(docs: &'a [Yaml], kind: &str) -> Vec<&'a Yaml> {
    docs.iter().filter(|d| d["kind"].as_str() == Some(kind)).collect()
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec().unwrap_or_else(|| panic!("not a list: {y:?}")).iter().map(|v| v.as_str().expect("a string").to_owned()).collect()
}

/// The value after `flag` in a command line.
fn flag<'a>(command: &'a [String], flag: &str) -> Option<&'a str> {
    command.iter().position(|a| a == flag).and_then(|i| command.get(i + 1)).map(String::as_str)
}

/// A Job's one container's command, and where each of its volumes is mounted, by volume name.
fn container(job: &Yaml) -> (Vec<String>, Vec<(String, String)>) {
    let pod = &job["spec"]["template"]["spec"];
    let containers = pod["containers"].as_vec().expect("containers");
    assert_eq!(containers.len(), 1, "one container");
    let c = &containers[0];
    let mounts = c["volumeMounts"]
        .as_vec()
        .expect("volume mounts")
        .iter()
        .map(|m| (m["name"].as_str().unwrap().to_owned(), m["mountPath"].as_str().unwrap().to_owned()));
    (strings(&c["command"]), mounts.collect())
}

/// The volume source of volume `name` in a Job's pod.
fn volume<'a>(job: &'a Yaml, name: &str) -> &'a Yaml {
    let volumes = job["spec"]["template"]["spec"]["volumes"].as_vec().expect("volumes");
    volumes.iter().find(|v| v["name"].as_str() == Some(name)).unwrap_or_else(|| panic!("no volume {name}"))
}

/// Maps a path inside the pod to this machine: the world's mount to the repo's worlds, the shared
/// volume's mount to `shared`.
fn local(path: &str, mounts: &[(String, String)], shared: &Path) -> String {
    let world = &mounts.iter().find(|m| m.0 == "world").expect("a world mount").1;
    let share = &mounts.iter().find(|m| m.0 == "shared").expect("a shared mount").1;
    if let Some(rest) = path.strip_prefix(world.as_str()) {
        let file = rest.trim_start_matches('/').replace("ice_caves.toml", "tiny.toml");
        return repo_root().join("worlds").join(file).to_str().unwrap().to_owned();
    }
    let rest = path.strip_prefix(share.as_str()).unwrap_or_else(|| panic!("{path} is on neither the world nor the shared volume"));
    shared.join(rest.trim_start_matches('/')).to_str().unwrap().to_owned()
}

fn run_pod(command: &[String], mounts: &[(String, String)], shared: &Path, index: Option<u32>) {
    assert_eq!(command[0], "kiln");
    let args: Vec<String> = command[1..].iter().map(|a| if a.starts_with('/') { local(a, mounts, shared) } else { a.clone() }).collect();
    let mut c = Command::new(env!("CARGO_BIN_EXE_kiln-under-test"));
    c.args(&args).env_remove("KILN_FAILPOINT").env_remove("JOB_COMPLETION_INDEX");
    if let Some(k) = index {
        c.env("JOB_COMPLETION_INDEX", k.to_string());
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{args:?} (index {index:?}): {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_kubernetes_jobs_shard_and_assemble_like_one_process() {
    let bake = load("deploy/kubernetes/kiln-bake.yaml");
    let assemble = load("deploy/kubernetes/kiln-assemble.yaml");
    let pvc = of_kind(&bake, "PersistentVolumeClaim");
    assert_eq!(pvc.len(), 1);
    assert!(strings(&pvc[0]["spec"]["accessModes"]).contains(&"ReadWriteMany".to_owned()), "every shard pod, on any node, writes the cache");
    let claim_name = pvc[0]["metadata"]["name"].as_str().unwrap();

    let [job] = of_kind(&bake, "Job")[..] else { panic!("one shard Job") };
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"), "the index comes from an Indexed Job");
    let n = spec["completions"].as_i64().expect("completions");
    assert_eq!(spec["parallelism"].as_i64(), Some(n), "all shards run at once");
    assert!(spec["backoffLimitPerIndex"].as_i64().is_some_and(|b| b >= 1), "a dead pod is started again with its index");
    assert_eq!(spec["template"]["spec"]["restartPolicy"].as_str(), Some("Never"), "backoffLimitPerIndex needs restartPolicy Never");
    let (command, mounts) = container(job);
    assert_eq!(flag(&command, "--shards"), Some(n.to_string().as_str()), "--shards N agrees with completions");
    let cache = flag(&command, "--cache").expect("--cache");
    let shared_mount = &mounts.iter().find(|m| m.0 == "shared").expect("the shared volume is mounted").1;
    assert!(cache.starts_with(shared_mount.as_str()), "the cache {cache} is on the shared volume {shared_mount}");
    assert_eq!(volume(job, "shared")["persistentVolumeClaim"]["claimName"].as_str(), Some(claim_name));

    let [assembler] = of_kind(&assemble, "Job")[..] else { panic!("one assemble Job") };
    let (a_command, a_mounts) = container(assembler);
    assert!(a_command.contains(&"--assemble".to_owned()));
    assert_eq!(a_command[2], command[2], "the same world");
    assert_eq!(flag(&a_command, "--cache"), Some(cache), "the same cache");
    assert_eq!(volume(assembler, "shared")["persistentVolumeClaim"]["claimName"].as_str(), Some(claim_name));

    // The pods' command lines, here: n shards (as Kubernetes would start them, all at once), then
    // the assembly.
    let shared = scratch("deploy-kubernetes");
    std::thread::scope(|s| {
        for k in 0..n as u32 {
            let (command, mounts, shared) = (&command, &mounts, &shared);
            s.spawn(move || run_pod(command, mounts, shared, Some(k)));
        }
    });
    run_pod(&a_command, &a_mounts, &shared, None);
    let out = local(flag(&a_command, "--out").expect("--out"), &a_mounts, &shared);
    let reference = scratch("deploy-reference");
    let o = Command::new(env!("CARGO_BIN_EXE_kiln-under-test"))
        .args(["bake", repo_root().join("worlds/tiny.toml").to_str().unwrap(), "--out", reference.to_str().unwrap(), "--no-cache", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(files_under(&reference.join("tiny")) == files_under(&Path::new(&out).join("tiny")), "the assembled bake differs from one process's");
}

#[test]
fn the_github_matrix_covers_every_shard_and_assembles_after_them() {
    let docs = load("deploy/github-actions/kiln-sharded-bake.yml");
    let wf = &docs[0];
    let cache = wf["env"]["KILN_CACHE"].as_str().expect("KILN_CACHE");
    assert!(cache.starts_with("s3://"), "runners share no file system: the cache is a bucket");
    for var in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
        assert!(!wf["env"][var].is_badvalue(), "{var} reaches the steps");
    }
    let runs = |job: &str| -> Vec<String> {
        wf["jobs"][job]["steps"].as_vec().expect("steps").iter().filter_map(|s| s["run"].as_str().map(str::to_owned)).collect()
    };
    let shard_line = runs("shard").into_iter().find(|r| r.contains("--shard ")).expect("a step runs a shard");
    // `--shard ${{ matrix.shard }}/N` (the expression has spaces inside).
    let spec = shard_line.split("--shard ").nth(1).unwrap().split(" --").next().unwrap().trim();
    let (index, n) = spec.rsplit_once('/').expect("K/N");
    assert_eq!(index, "${{ matrix.shard }}");
    let n: i64 = n.parse().unwrap();
    let matrix: Vec<i64> = wf["jobs"]["shard"]["strategy"]["matrix"]["shard"].as_vec().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(matrix, (0..n).collect::<Vec<_>>(), "the matrix lists 0..{n}");
    assert!(shard_line.contains("--cache \"$KILN_CACHE\""));
    assert_eq!(wf["jobs"]["assemble"]["needs"].as_str(), Some("shard"), "assembly waits for every shard");
    let assemble_line = runs("assemble").into_iter().find(|r| r.contains("--assemble")).expect("a step assembles");
    assert!(assemble_line.contains("--cache \"$KILN_CACHE\""), "the same cache");
}
