//! The commit of a bake: whatever instant a bake is killed at, `OUT/<name>` is the previous complete
//! bake or the new one, and the next bake cleans up what the killed one left. Also the checks made
//! before any work (`--out`, `--jobs`, the lock against a concurrent bake of the same world).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use kiln_e2e::{files_under, kiln, repo_root, scratch};

fn kiln_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kiln-under-test")
}

fn bake_cmd(world: &Path, out: &Path) -> Command {
    let mut c = Command::new(kiln_bin());
    c.args(["bake", world.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--no-cache"]);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("kiln-under-test runs")
}

/// The names in `out` besides the bake itself.
fn leftovers(out: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n != "tiny").collect();
    v.sort();
    v
}

/// tiny.toml and a copy with another seed (same name, different output).
fn two_worlds(dir: &Path) -> (PathBuf, PathBuf) {
    let tiny = repo_root().join("worlds/tiny.toml");
    let text = fs::read_to_string(&tiny).unwrap();
    assert!(text.contains("seed = 7"), "tiny.toml sets seed 7");
    let other = dir.join("tiny-reseeded.toml");
    fs::write(&other, text.replace("seed = 7", "seed = 8")).unwrap();
    (tiny, other)
}

/// The complete bakes of both worlds, made once in their own directories.
fn references(dir: &Path, a: &Path, b: &Path) -> [BTreeMap<PathBuf, Vec<u8>>; 2] {
    [a, b].map(|w| {
        let out = dir.join(format!("ref-{}", w.file_stem().unwrap().to_string_lossy()));
        assert!(run(bake_cmd(w, &out)).status.success());
        files_under(&out.join("tiny"))
    })
}

/// Which reference `OUT/tiny` is (panics if neither), after checking that `kiln verify` passes it.
fn which(out: &Path, refs: &[BTreeMap<PathBuf, Vec<u8>>; 2], when: &str) -> usize {
    let dest = out.join("tiny");
    assert!(dest.join("manifest.kpack").is_file(), "{when}: no complete bake at {}", dest.display());
    assert_eq!(kiln(&["verify", dest.to_str().unwrap()]), 0, "{when}: the bake in place fails verify");
    let now = files_under(&dest);
    refs.iter().position(|r| *r == now).unwrap_or_else(|| panic!("{when}: {} is neither the old nor the new bake", dest.display()))
}

#[cfg(unix)]
fn killed_by_sigkill(o: &Output) -> bool {
    use std::os::unix::process::ExitStatusExt;
    o.status.signal() == Some(9)
}

#[test]
#[cfg(unix)]
fn a_bake_killed_at_any_instant_leaves_the_old_or_the_new_bake() {
    let dir = scratch("commit-kill");
    let (a, b) = two_worlds(&dir);
    let refs = references(&dir, &a, &b);
    assert_ne!(refs[0], refs[1], "the two worlds bake differently");
    let out = dir.join("out");
    assert!(run(bake_cmd(&a, &out)).status.success());
    let mut state = 0;
    let mut duration = Duration::ZERO;
    let kills = 32;
    let mut seen = [0usize; 2];
    for k in 0..kills {
        let world = |state: usize| if state == 0 { &b } else { &a };
        if k % 8 == 0 {
            // A complete bake (timed, so the kills spread over a bake's whole duration even as the
            // machine's load changes) cleans up every leftover of the killed ones.
            let clock = Instant::now();
            assert!(run(bake_cmd(world(state), &out)).status.success());
            duration = clock.elapsed();
            state = which(&out, &refs, &format!("complete bake before kill {k}"));
            assert_eq!(leftovers(&out), Vec::<String>::new(), "after the complete bake before kill {k}");
        }
        // Always bake the world that is not in place, so each kill can catch the switch.
        let mut child = bake_cmd(world(state), &out).stderr(Stdio::null()).spawn().unwrap();
        let delay = duration.mul_f64(1.3 * (k % 8 * 4 + k / 8) as f64 / kills as f64);
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        let now = which(&out, &refs, &format!("kill {k} after {delay:?}"));
        seen[usize::from(now != state)] += 1;
        state = now;
        for l in leftovers(&out) {
            assert!(l.starts_with(".tiny.staging-") || l.starts_with(".tiny.old-") || l == ".tiny.lock", "kill {k} left {l} in {}", out.display());
        }
    }
    eprintln!("{kills} kills: {} left the old bake, {} the new one", seen[0], seen[1]);
    assert!(seen[0] > 0, "no kill landed before the commit: {seen:?}");
    // A complete bake cleans up every leftover.
    let world = if state == 0 { &b } else { &a };
    assert!(run(bake_cmd(world, &out)).status.success());
    assert_eq!(which(&out, &refs, "after the last bake"), 1 - state);
    assert_eq!(leftovers(&out), Vec::<String>::new());
}

/// Kills the bake at every named step of the write and the commit, with the exchange and with the
/// fallback, and checks what is in place after the kill and after the next (complete) bake.
#[test]
#[cfg(unix)]
fn a_bake_killed_at_each_step_of_the_commit_leaves_a_complete_bake() {
    let dir = scratch("commit-steps");
    let (a, b) = two_worlds(&dir);
    let refs = references(&dir, &a, &b);
    // (fail point, use the fallback, start without a previous bake, expected afterwards: 0 old, 1 new, None absent)
    let cases: [(&str, bool, bool, Option<usize>); 12] = [
        ("write:after-file", false, false, Some(0)),
        ("commit:before-sync", false, false, Some(0)),
        ("commit:after-sync", false, false, Some(0)),
        ("commit:after-exchange", false, false, Some(1)),
        ("commit:during-remove", false, false, Some(1)),
        ("commit:after-rename", false, true, Some(1)),
        ("commit:after-sync", false, true, None),
        ("commit:after-sync", true, false, Some(0)),
        ("commit:after-move-aside", true, false, None),
        ("commit:after-rename", true, false, Some(1)),
        ("commit:during-remove", true, false, Some(1)),
        ("commit:after-rename", true, true, Some(1)),
    ];
    for (i, &(point, fallback, fresh, expected)) in cases.iter().enumerate() {
        let out = dir.join(format!("out-{i}"));
        let when = format!("{point} (fallback {fallback}, fresh {fresh})");
        if !fresh {
            assert!(run(bake_cmd(&a, &out)).status.success());
        }
        let mut c = bake_cmd(&b, &out);
        c.env("KILN_FAILPOINT", point);
        if fallback {
            c.env("KILN_TEST_NO_EXCHANGE", "1");
        }
        let o = run(c);
        assert!(killed_by_sigkill(&o), "{when}: the bake was not killed there: {:?} {}", o.status, String::from_utf8_lossy(&o.stderr));
        match expected {
            Some(e) => assert_eq!(which(&out, &refs, &when), e, "{when}"),
            None => assert!(!out.join("tiny").exists(), "{when}: expected no bake in place yet"),
        }
        if point == "commit:after-move-aside" {
            // The only instant without a bake in place: the next bake first puts the old one back
            // (it is killed right after, before it could replace it).
            let mut c = bake_cmd(&b, &out);
            c.env("KILN_FAILPOINT", "commit:before-sync");
            assert!(killed_by_sigkill(&run(c)), "{when}: the repairing bake was not killed");
            assert_eq!(which(&out, &refs, &format!("{when}, after repair")), 0);
        }
        let o = run(bake_cmd(&b, &out));
        assert!(o.status.success(), "{when}: the next bake failed: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(which(&out, &refs, &format!("{when}, next bake")), 1);
        assert_eq!(leftovers(&out), Vec::<String>::new(), "{when}: leftovers after the next bake");
    }
}

#[test]
fn a_second_bake_of_the_same_world_into_the_same_place_fails_at_once() {
    let dir = scratch("commit-lock");
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    // Holding the lock as a running bake would (flock: a second open file conflicts even in one process).
    let lock = fs::OpenOptions::new().create(true).truncate(false).write(true).open(out.join(".tiny.lock")).unwrap();
    lock.lock().unwrap();
    let clock = Instant::now();
    let o = run(bake_cmd(&repo_root().join("worlds/tiny.toml"), &out));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("another kiln bake") && err.contains(".tiny.lock"), "{err}");
    assert!(clock.elapsed() < Duration::from_secs(5), "refused before any work");
    assert!(!out.join("tiny").exists());
    drop(lock);
    assert!(run(bake_cmd(&repo_root().join("worlds/tiny.toml"), &out)).status.success());
    assert_eq!(leftovers(&out), Vec::<String>::new(), "the lock file goes with its bake");
}

#[test]
fn bad_out_and_jobs_are_refused_before_any_work() {
    let dir = scratch("commit-args");
    let world = repo_root().join("worlds/tiny.toml");
    let file = dir.join("a-file");
    fs::write(&file, b"not a directory").unwrap();
    let o = run(bake_cmd(&world, &file));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(file.to_str().unwrap()) && err.contains("not a directory"), "{err}");
    let o = run(bake_cmd(&world, &file.join("below")));
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));

    // Something at OUT/<name> that is not a bake is the user's: left alone.
    let out = dir.join("out");
    fs::create_dir_all(out.join("tiny")).unwrap();
    fs::write(out.join("tiny/notes.txt"), b"mine").unwrap();
    let o = run(bake_cmd(&world, &out));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a Kiln bake"), "{err}");
    assert_eq!(fs::read(out.join("tiny/notes.txt")).unwrap(), b"mine");

    for jobs in ["0", "257", "1000", "-1"] {
        let mut c = bake_cmd(&world, &dir.join("jobs"));
        c.arg(format!("--jobs={jobs}"));
        let o = run(c);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--jobs {jobs}: {err}");
        assert!(err.contains("--jobs"), "--jobs {jobs}: {err}");
    }
    assert!(!dir.join("jobs").exists(), "nothing written for a refused --jobs");
    // The largest value is accepted (and runs no more threads than the machine has cores).
    let mut c = bake_cmd(&world, &dir.join("jobs"));
    c.args(["--jobs", "256"]);
    assert!(run(c).status.success());
}

#[test]
fn names_outside_out_are_refused_and_nothing_is_written_outside_out() {
    let dir = scratch("commit-names");
    let text = fs::read_to_string(repo_root().join("worlds/tiny.toml")).unwrap();
    let out = dir.join("a/out");
    fs::create_dir_all(&out).unwrap();
    let victim = dir.join("a/victim");
    fs::create_dir_all(&victim).unwrap();
    fs::write(victim.join("keep.txt"), b"keep").unwrap();
    for (i, name) in ["../victim", "..", ".", "/tmp", victim.to_str().unwrap(), "x/../../victim", ".tiny.staging-1", ""].iter().enumerate() {
        let world = dir.join(format!("w{i}.toml"));
        fs::write(&world, text.replace("name = \"tiny\"", &format!("name = {name:?}"))).unwrap();
        let o = run(bake_cmd(&world, &out));
        assert_eq!(o.status.code(), Some(2), "name {name:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(fs::read(victim.join("keep.txt")).unwrap(), b"keep");
    let mut names: Vec<_> = fs::read_dir(dir.join("a")).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["out", "victim"]);
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "nothing written in --out either");
}

/// A full disk while writing: the error names the file, the staging directory is removed and the
/// previous bake stays. Needs a small tmpfs (root); skipped with a message otherwise.
#[test]
#[cfg(target_os = "linux")]
fn a_full_disk_leaves_the_previous_bake() {
    let dir = scratch("commit-enospc");
    let (a, b) = two_worlds(&dir);
    let refs = references(&dir, &a, &b);
    let size: usize = refs[0].values().map(Vec::len).sum();
    let mnt = dir.join("mnt");
    fs::create_dir_all(&mnt).unwrap();
    // Room for the first bake and a half of the second (tmpfs rounds to pages; files take whole pages).
    let room = size + size / 2 + 4096 * (refs[0].len() + 8);
    let mounted =
        Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={room}"), "tmpfs", mnt.to_str().unwrap()]).stderr(Stdio::null()).status();
    if !mounted.is_ok_and(|s| s.success()) {
        eprintln!("skipped: cannot mount a small tmpfs here (needs root)");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let out = mnt.join("out");
    let o = run(bake_cmd(&a, &out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(bake_cmd(&b, &out));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("No space left") && err.contains(".tiny.staging-") && err.contains(".kpack"), "{err}");
    assert_eq!(which(&out, &refs, "after ENOSPC"), 0);
    assert_eq!(leftovers(&out), Vec::<String>::new());
}
