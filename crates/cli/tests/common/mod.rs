//! Helpers the command-line integration tests share: running the built
//! binary, the repository's folders, and scratch folders under the target
//! directory. Each test crate uses some of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `barrier-check` binary under test.
/// Gives `cmd` the default dispositions of SIGINT and SIGTERM, as a
/// terminal's foreground job has them: a test run in the background
/// (`nohup`, `cmd &` in a script) inherits SIGINT ignored, which the
/// command keeps ignored (`signals.rs`), so a test that interrupts it
/// would wait in vain.
#[allow(dead_code)]
pub fn with_default_signals(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        })
    }
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_barrier-check"))
}

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A path in the corpus (`litmus/`).
pub fn corpus(rel: &str) -> PathBuf {
    root().join("litmus").join(rel)
}

/// Runs the binary in the current directory.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

/// Runs the binary in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().args(args).current_dir(dir).output().expect("runs")
}

/// Runs with the corpus root as working directory, so reported file names
/// are stable in snapshots.
pub fn run_in_corpus(args: &[&str]) -> Output {
    run_in(&corpus(""), args)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch folder of this name under the target directory (created).
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `file` of each result of a `--format json` report, in report order.
pub fn result_files(json: &[u8]) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_slice(json).unwrap();
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap().to_string())
        .collect()
}

/// A property test's configuration: `default` cases (`PROPTEST_CASES`
/// sets another number), drawn from a fixed seed so that `cargo test` and
/// CI explore the same programs on every run; `PROPTEST_RNG_SEED` picks
/// another seed (`just props` draws fresh ones, to search further).
pub fn proptest_config(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let mut config = proptest::test_runner::Config::with_cases(cases);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(0x6261_7272_6965_7221);
    }
    config
}

/// [`proptest_config`] for part `part` of a property split into several
/// tests of one strategy: each part draws from its own fixed seed, so the
/// parts together test as many distinct cases as one test of their sum,
/// and the harness runs them side by side (a long property alone on one
/// core kept the other idle for a minute).
pub fn proptest_config_part(default: u32, part: u64) -> proptest::test_runner::Config {
    let mut config = proptest_config(default);
    if let proptest::test_runner::RngSeed::Fixed(seed) = config.rng_seed {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(seed.wrapping_add(part));
    }
    config
}

/// An nvcc: `BC_NVCC`, else the one `.ci/cuda` installs (pip's, no GPU
/// needed); `None` when neither works.
pub fn nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BC_NVCC").map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(p);
    }
    let out = std::process::Command::new("bash")
        .arg(root().join(".ci/cuda"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && path.is_file()).then_some(path)
}
