//! Command-line pieces several subcommands share: the model flags, the
//! shard flag, and the parsers and clamps of numeric flag values.

use crate::inputs::read_model_file;
use crate::output::err;
use bc_models::Model;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// `--model NAME` or `--model-file PATH` (`check`, `explain`, `graph`).
#[derive(clap::Args)]
#[command(next_help_heading = "Model")]
pub struct ModelArgs {
    /// Check under this built-in model instead of the file's `model` line.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Check under the model in this file (see docs/models.md).
    #[arg(long, value_name = "PATH", conflicts_with = "model")]
    pub model_file: Option<PathBuf>,
}

/// `--shard K/N` (`check`, `diff`).
#[derive(clap::Args)]
#[command(next_help_heading = "CI gate")]
pub struct ShardArg {
    /// Check only shard K of N (1-based): the K-th of every N files in
    /// sorted order, so N CI machines split a corpus deterministically.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

/// `--shard K/N`: 1 <= K <= N.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 2/4")?;
    let k: usize = k.trim().parse().map_err(|_| format!("`{k}` is not a shard number"))?;
    let n: usize = n.trim().parse().map_err(|_| format!("`{n}` is not a shard count"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: K must be between 1 and N"));
    }
    Ok((k, n))
}

impl ModelArgs {
    /// The model asked for: a built-in one, one read from a file, or none
    /// (each file's `model` line).
    pub fn load(&self) -> Result<Option<Model>, String> {
        if let Some(name) = &self.model {
            return bc_models::lookup(name).map(Some);
        }
        if let Some(path) = &self.model_file {
            return read_model_file(path).map(Some);
        }
        Ok(None)
    }
}

/// At most this many threads per available core, and never more than
/// [`MAX_JOBS`], whatever `--jobs` asks for.
pub const JOBS_PER_CORE: usize = 4;
pub const MAX_JOBS: usize = 256;

/// `--max-states N`: a whole number, at least 1.
pub fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("needs at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a whole number from 1 to {}: {e}", u64::MAX)),
    }
}

/// `--timeout SECS`: a positive, finite number of seconds. One too large
/// for a `Duration` (about 584 billion years) saturates: no search runs
/// that long.
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let t: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(t > 0.0 && t.is_finite()) {
        return Err("needs a positive, finite number of seconds".into());
    }
    Ok(Duration::try_from_secs_f64(t).unwrap_or(Duration::MAX))
}

/// `--max-memory MIB`: at least 1; the bytes saturate at `u64::MAX`
/// instead of wrapping.
pub fn parse_mib(s: &str) -> Result<u64, String> {
    parse_count(s)
}

/// `--jobs N`: at least 1 (clamped to the machine by [`jobs_or_cores`]).
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    parse_count(s).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// `--jobs N`, by default every core; at most [`JOBS_PER_CORE`] threads per
/// core and [`MAX_JOBS`] in all (a warning on stderr says when it clamps):
/// more only contend, and thousands fail to spawn.
pub fn jobs_or_cores(jobs: Option<usize>) -> io::Result<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = cores.saturating_mul(JOBS_PER_CORE).clamp(1, MAX_JOBS);
    let asked = jobs.unwrap_or(cores).max(1);
    if asked > most {
        if jobs.is_some() {
            err(&format!(
                "barrier-check: warning: --jobs {asked}: using {most} ({JOBS_PER_CORE} per core, at most {MAX_JOBS})\n"
            ))?;
        }
        return Ok(most);
    }
    Ok(asked)
}
