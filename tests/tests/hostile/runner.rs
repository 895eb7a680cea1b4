//! Runs one `kiln` command on one hostile input in a fresh directory, under a memory limit and a
//! wall-clock timeout, and judges the outcome against the Goals.

use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address-space limit of every child: far above what a refused input may use (checked through
/// max RSS), low enough that an unbounded allocation fails fast instead of swapping the machine.
pub const ADDRESS_SPACE_LIMIT: u64 = 2 << 30;
/// Wall-clock limit of every child; a case that needs longer is reported as a hang.
pub const TIMEOUT: Duration = Duration::from_secs(20);
/// The Goals' bound on a refused input's peak memory: 256 MiB + 10 × the input's size.
pub fn memory_bound(input_bytes: u64) -> u64 {
    (256 << 20) + 10 * input_bytes
}

/// What a case is allowed to end with.
#[derive(Clone, Debug)]
pub struct Expect {
    /// Exit codes that are correct for this input and command.
    pub codes: Vec<i32>,
    /// Text that the first error line (exit 2) or the report (exit 1) must contain: the file or
    /// the option at fault, and where known the key.
    pub mentions: Vec<String>,
}

impl Expect {
    pub fn error(mentions: &[&str]) -> Self {
        Expect { codes: vec![2], mentions: mentions.iter().map(|s| s.to_string()).collect() }
    }
    pub fn codes(codes: &[i32], mentions: &[&str]) -> Self {
        Expect { codes: codes.to_vec(), mentions: mentions.iter().map(|s| s.to_string()).collect() }
    }
}

/// Changes a case's input directory after its files are written (e.g. corrupts a copied bake).
pub type Prepare = Box<dyn Fn(&Path) + Send + Sync>;

/// One hostile input: files to create, the command line, and the expected outcome.
/// In `args` and file contents, `{case}` is replaced by the case's directory, `{in}` by its input
/// directory and `{out}` by the `--out` directory.
pub struct Case {
    /// Names the input in every failure message (family, index and what was done to it).
    pub name: String,
    /// Files under `{in}`: (relative path, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// A directory tree copied to `{in}/<name>` first (a bake to corrupt), with its mutation.
    pub tree: Option<(PathBuf, String)>,
    /// Applied to `{in}` after the files are written (mutating a copied bake).
    pub prepare: Option<Prepare>,
    pub args: Vec<String>,
    pub expect: Expect,
    /// Bytes of the input that the memory bound scales with (0: sum of the regular files in `{in}`).
    pub input_bytes: Option<u64>,
}

/// The measured outcome of one case.
pub struct Outcome {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub max_rss: u64,
    pub stdout: String,
    pub stderr: String,
}

fn subst(s: &str, case: &Path) -> String {
    s.replace("{in}", &case.join("in").display().to_string())
        .replace("{out}", &case.join("out").display().to_string())
        .replace("{case}", &case.display().to_string())
}

/// Every path under `dir` except `skip`, with its size and a hash of its contents.
fn snapshot(dir: &Path, skip: &[PathBuf], into: &mut Vec<(PathBuf, u64, u64)>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if skip.contains(&p) {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            into.push((p.clone(), u64::MAX, 0));
            snapshot(&p, skip, into);
        } else {
            let hash = if meta.is_file() && meta.len() <= 4 << 20 { fs::read(&p).map(|b| xxhash_rust::xxh3::xxh3_64(&b)).unwrap_or(0) } else { 0 };
            into.push((p, meta.len(), hash));
        }
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// Runs `kiln` with `args`; stdout and stderr go to files so a chatty child cannot block on a pipe.
fn run_limited(kiln: &Path, args: &[String], case: &Path) -> Outcome {
    let out_file = fs::File::create(case.join("stdout")).expect("create stdout file");
    let err_file = fs::File::create(case.join("stderr")).expect("create stderr file");
    let home = case.join("home");
    let mut cmd = Command::new(kiln);
    cmd.args(args)
        .current_dir(case)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        // glibc reserves 64 MiB of address space per thread arena; keep the limit about memory.
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file);
    // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = |r: u64| libc::rlimit { rlim_cur: r, rlim_max: r };
            if libc::setrlimit(libc::RLIMIT_AS, &lim(ADDRESS_SPACE_LIMIT)) != 0 || libc::setrlimit(libc::RLIMIT_CORE, &lim(0)) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("spawn kiln");
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    loop {
        // SAFETY: waits for our own child; `status` and `usage` are valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if r < 0 {
            panic!("wait4 failed: {}", std::io::Error::last_os_error());
        }
        if start.elapsed() > TIMEOUT && !timed_out {
            timed_out = true;
            // SAFETY: signals our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(if start.elapsed() < Duration::from_millis(100) { 2 } else { 20 }));
    }
    std::mem::forget(child); // reaped above
    let st = std::process::ExitStatus::from_raw(status);
    let read = |name: &str| {
        let mut s = Vec::new();
        if let Ok(f) = fs::File::open(case.join(name)) {
            let _ = f.take(1 << 20).read_to_end(&mut s);
        }
        String::from_utf8_lossy(&s).into_owned()
    };
    Outcome {
        code: st.code(),
        signal: st.signal(),
        timed_out,
        max_rss: usage.ru_maxrss as u64 * 1024,
        stdout: read("stdout"),
        stderr: read("stderr"),
    }
}

/// Runs `case` in `root/<index>`; returns the measured outcome and every broken promise.
pub fn run_case(kiln: &Path, root: &Path, index: usize, case: &Case) -> (Outcome, Vec<String>) {
    let dir = root.join(format!("{index:05}"));
    let _ = fs::remove_dir_all(&dir);
    let input = dir.join("in");
    let outside = dir.join("outside");
    for d in [&input, &outside, &dir.join("home")] {
        fs::create_dir_all(d).expect("create case dirs");
    }
    fs::write(outside.join("keep.txt"), b"must survive").expect("write sentinel");
    fs::create_dir_all(dir.join("out")).expect("create --out");
    if let Some((tree, name)) = &case.tree {
        kiln_e2e::copy_dir(tree, &input.join(name));
    }
    for (rel, bytes) in &case.files {
        let path = input.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create input parent");
        }
        let text = String::from_utf8(bytes.clone()).map(|s| subst(&s, &dir).into_bytes()).unwrap_or_else(|e| e.into_bytes());
        fs::write(&path, text).expect("write input file");
    }
    if let Some(prepare) = &case.prepare {
        prepare(&input);
    }
    let input_bytes = case.input_bytes.unwrap_or_else(|| dir_bytes(&input));
    let args: Vec<String> = case.args.iter().map(|a| subst(a, &dir)).collect();

    // The child's own stdout/stderr files are the only writes allowed outside `--out`.
    let skip = [dir.join("out"), dir.join("stdout"), dir.join("stderr")];
    let mut before = Vec::new();
    snapshot(&dir, &skip, &mut before);
    let outcome = run_limited(kiln, &args, &dir);
    let mut after = Vec::new();
    snapshot(&dir, &skip, &mut after);

    let mut problems = Vec::new();
    let first_err = outcome.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
    if outcome.timed_out {
        problems.push(format!("hang: still running after {} s", TIMEOUT.as_secs()));
    } else if let Some(sig) = outcome.signal {
        problems.push(format!("killed by signal {sig} (abort or crash); stderr: {}", tail(&outcome.stderr)));
    }
    if outcome.stderr.contains("panicked") {
        problems.push(format!("panicked: {}", tail(&outcome.stderr)));
    }
    if matches!(outcome.code, Some(101) | Some(134)) {
        problems.push(format!("exit {} (panic or abort)", outcome.code.unwrap_or(0)));
    }
    if let Some(code) = outcome.code {
        if !case.expect.codes.contains(&code) {
            problems.push(format!("exit {code}, expected {:?}; stderr: {}", case.expect.codes, tail(&outcome.stderr)));
        } else if code == 2 {
            let clear = first_err.starts_with("kiln: error: ") || first_err.starts_with("error: ");
            let missing: Vec<_> = case.expect.mentions.iter().filter(|m| !first_err.contains(m.as_str())).collect();
            if !clear || !missing.is_empty() {
                problems.push(format!("unclear error line (needs \"kiln: error:\" and {missing:?}): {first_err:?}"));
            }
        } else if code == 1 {
            let report = format!("{}{}", outcome.stdout, outcome.stderr);
            let missing: Vec<_> = case.expect.mentions.iter().filter(|m| !report.contains(m.as_str())).collect();
            if !missing.is_empty() {
                problems.push(format!("check failure does not name {missing:?}: {}", tail(&report)));
            }
        }
        if code != 0 && outcome.max_rss > memory_bound(input_bytes) {
            problems.push(format!(
                "refused input used {} MiB peak, over the bound of {} MiB for {} input bytes",
                outcome.max_rss >> 20,
                memory_bound(input_bytes) >> 20,
                input_bytes
            ));
        }
    }
    if before != after {
        let changed: Vec<String> = after
            .iter()
            .filter(|e| !before.contains(e))
            .map(|e| format!("+{}", e.0.display()))
            .chain(before.iter().filter(|e| !after.contains(e)).map(|e| format!("-{}", e.0.display())))
            .take(4)
            .collect();
        problems.push(format!("wrote outside --out: {changed:?}"));
    }
    if problems.is_empty() {
        let _ = fs::remove_dir_all(&dir);
    }
    (outcome, problems)
}

fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = &t[t.len().saturating_sub(2)..];
    let mut j = last.join(" | ");
    if j.len() > 300 {
        let mut cut = 300;
        while !j.is_char_boundary(cut) {
            cut -= 1;
        }
        j.truncate(cut);
        j.push('…');
    }
    j
}
