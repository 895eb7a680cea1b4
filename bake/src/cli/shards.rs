//! The command line's sharded bakes: `--shard K/N`, `--shards N` (the index from the
//! environment, as a Kubernetes Indexed Job gives it), `--assemble`, and `--local-shards N`, which
//! runs N shard processes of this same binary on this machine, starts again any that was killed,
//! and then assembles the output.

use std::path::Path;
use std::process::{Command, ExitStatus};

use super::CliError;
use crate::pipeline::BakeRole;

/// The variable a Kubernetes Indexed Job sets to each pod's index (0 to completions − 1).
pub const INDEX_VARIABLE: &str = "JOB_COMPLETION_INDEX";

/// Times a killed shard is started again before the bake gives up.
const RESTARTS: u32 = 3;

/// Parses `K/N` (`0 <= K < N`).
pub fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let (k, n) = s.split_once('/').ok_or_else(|| format!("expected K/N (shard K of N, from 0), got {s:?}"))?;
    let p = |v: &str| v.trim().parse::<u32>().map_err(|_| format!("{v:?} in {s:?} is not a whole number"));
    let (k, n) = (p(k)?, p(n)?);
    BakeRole::shard(k, n)?;
    Ok((k, n))
}

/// The role the flags ask for: `--shard K/N`, `--shards N` with the index from
/// [`INDEX_VARIABLE`], `--assemble`, or a whole bake.
pub fn role(shard: Option<(u32, u32)>, shards: Option<u32>, assemble: bool) -> Result<BakeRole, CliError> {
    if let Some((k, n)) = shard {
        return BakeRole::shard(k, n).map_err(CliError::Usage);
    }
    if let Some(n) = shards {
        let v = std::env::var(INDEX_VARIABLE)
            .map_err(|_| CliError::Usage(format!("--shards {n} takes this shard's index from ${INDEX_VARIABLE}, which is not set")))?;
        let k = v.trim().parse::<u32>().map_err(|_| CliError::Usage(format!("${INDEX_VARIABLE} is {v:?}, not a whole number")))?;
        return BakeRole::shard(k, n).map_err(|e| CliError::Usage(format!("--shards {n} with ${INDEX_VARIABLE}={k}: {e}")));
    }
    Ok(if assemble { BakeRole::Assemble } else { BakeRole::Whole })
}

/// Runs `count` shard processes of `world` against `cache` with `jobs` threads and at most
/// `memory_budget` bytes each (none: each checks the machine's memory), restarting
/// one killed by a signal (at most `RESTARTS` times, without the test hook `KILN_FAILPOINT`, which
/// arms the first start only). Fails if a shard fails (exits with an error) or keeps dying.
pub fn run_local(world: &Path, cache: &Path, count: u32, jobs: usize, memory_budget: Option<u64>, quiet: bool) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::Failed(format!("cannot find this program to start shards: {e}")))?;
    let start = |k: u32, attempt: u32| {
        let mut cmd = Command::new(&exe);
        cmd.arg("bake").arg(world).arg("--shard").arg(format!("{k}/{count}")).arg("--cache").arg(cache);
        cmd.arg("--jobs").arg(jobs.to_string()).arg("--quiet").arg("--machine-share").arg(count.to_string());
        if let Some(bytes) = memory_budget {
            cmd.arg("--memory-budget").arg(bytes.to_string());
        }
        if attempt > 0 {
            cmd.env_remove(crate::pipeline::FAILPOINT_VARIABLE);
        }
        cmd.spawn().map_err(|e| CliError::Failed(format!("cannot start shard {k}/{count}: {e}")))
    };
    let mut running: Vec<(u32, u32, std::process::Child)> = (0..count).map(|k| Ok((k, 0, start(k, 0)?))).collect::<Result<_, CliError>>()?;
    let mut failure = None;
    while let Some((k, attempt, mut child)) = running.pop() {
        let status = child.wait().map_err(|e| CliError::Failed(format!("waiting for shard {k}/{count}: {e}")))?;
        match outcome(&status) {
            Outcome::Done => {
                if !quiet {
                    eprintln!("kiln: shard {k}/{count} done");
                }
            }
            Outcome::Killed(sig) if attempt < RESTARTS => {
                eprintln!("kiln: shard {k}/{count} was killed by signal {sig}; starting it again");
                running.insert(0, (k, attempt + 1, start(k, attempt + 1)?));
            }
            Outcome::Killed(sig) => failure = Some(format!("shard {k}/{count} was killed by signal {sig} {} times", RESTARTS + 1)),
            Outcome::Failed(code) => failure = failure.or(Some(format!("shard {k}/{count} failed (exit status {code}); its error is above"))),
        }
    }
    failure.map_or(Ok(()), |f| Err(CliError::Failed(format!("{}: {f}", world.display()))))
}

/// `kiln bake WORLD --status`: per stage, the items the cache holds.
pub fn print_status(world_path: &Path, opts: &crate::pipeline::BakeOptions) -> Result<(), CliError> {
    let world = crate::world::load_world(world_path)?;
    let rows = crate::pipeline::status(&world, opts)?;
    let cache = opts.cache.as_deref().map_or("".into(), |c| c.display().to_string());
    println!("{} in {cache}: items in the cache per stage", world.spec.name);
    for crate::pipeline::StageStatus { name, present: done, items: total, waiting } in rows {
        let state = if done == total { "done".to_owned() } else { format!("{:.0} %", 100.0 * done as f64 / total.max(1) as f64) };
        match waiting {
            Some(w) => println!("  {name:<16} {done:>6} / {total:<6} waiting: {w}"),
            None => println!("  {name:<16} {done:>6} / {total:<6} {state}"),
        }
    }
    Ok(())
}

enum Outcome {
    Done,
    Killed(i32),
    Failed(i32),
}

fn outcome(status: &ExitStatus) -> Outcome {
    #[cfg(unix)]
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(status) {
        return Outcome::Killed(sig);
    }
    match status.code() {
        Some(0) => Outcome::Done,
        Some(c) => Outcome::Failed(c),
        None => Outcome::Failed(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_shard;

    #[test]
    fn shard_flags_parse_and_refuse_out_of_range_indices() {
        assert_eq!(parse_shard("2/7"), Ok((2, 7)));
        assert!(parse_shard("7/7").is_err());
        assert!(parse_shard("0/0").is_err());
        assert!(parse_shard("1").unwrap_err().contains("K/N"));
        assert!(parse_shard("a/2").is_err());
    }
}
