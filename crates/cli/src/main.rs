//! `barrier-check`: the command line. The only crate that touches files,
//! the environment and standard output.

/// Explorer states are many small vectors cloned and freed at a high rate;
/// glibc's allocator spent most of the search in consolidation and chunk
/// unlinking (perf), and serializes worker threads on its arenas.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod hw;

use barrier_check::{check_bytes, lower_bytes, CheckOptions};
use bc_explore::{Limits, Reductions, SearchOptions};
use bc_models::Model;
use bc_report::text::TextOptions;
use bc_report::TestReport;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "barrier-check",
    version,
    about = "Exhaustive execution-model checker for GPU barrier litmus tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    /// SARIF 2.1.0: one result per finding, for code-scanning views.
    Sarif,
    /// JUnit XML: one test case per litmus file, for CI test views.
    Junit,
}

/// `diff` reports in text or JSON.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphFormat {
    Dot,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExplainFormat {
    Text,
    Dot,
}

#[derive(clap::Args)]
struct ModelArgs {
    /// Check under this built-in model instead of the file's `model` line.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Check under the model in this file (see docs/models.md).
    #[arg(long, value_name = "PATH", conflicts_with = "model")]
    model_file: Option<PathBuf>,
}

#[derive(clap::Args)]
struct ShardArg {
    /// Check only shard K of N (1-based): the K-th of every N files in
    /// sorted order, so N CI machines split a corpus deterministically.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 2/4")?;
    let k: usize = k.trim().parse().map_err(|_| format!("`{k}` is not a shard number"))?;
    let n: usize = n.trim().parse().map_err(|_| format!("`{n}` is not a shard count"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: K must be between 1 and N"));
    }
    Ok((k, n))
}

#[derive(Subcommand)]
enum Command {
    /// Check litmus files (directories are searched for *.litmus).
    Check {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[command(flatten)]
        model: ModelArgs,
        /// Stop a test's search after this many states (reported as `stop`).
        #[arg(long, default_value_t = bc_explore::DEFAULT_MAX_STATES, value_parser = parse_count)]
        max_states: u64,
        /// Stop a test's search after this many seconds (reported as `stop`).
        #[arg(long, value_name = "SECS", value_parser = parse_secs)]
        timeout: Option<Duration>,
        /// One line per test: no findings or witnesses.
        #[arg(long, short)]
        quiet: bool,
        /// List every outcome the model allows per test: the final values
        /// of registers and atomically touched locations, deadlock and
        /// nontermination, with how many end configurations reach each
        /// (text and JSON; docs/litmus.md, "Outcome sets").
        #[arg(long)]
        outcomes: bool,
        /// Leave elapsed times out of the text report.
        #[arg(long)]
        no_timing: bool,
        /// Check under this progress model instead of the file's `progress`
        /// line (unfair, fair, hsa, obe, lobe, hsa-obe, each with -strong; cuda).
        #[arg(long, value_name = "NAME")]
        progress: Option<String>,
        /// Skip the fair-cycle (nontermination) analysis (for benchmarks).
        #[arg(long, hide = true)]
        no_liveness: bool,
        /// Keep the whole history in every state (for comparisons).
        #[arg(long, hide = true)]
        no_compact: bool,
        /// Keep a phase's arrivals in the order they happened (for comparisons).
        #[arg(long, hide = true)]
        no_canonical: bool,
        /// Do not merge states that differ by a renaming of threads.
        #[arg(long, hide = true)]
        no_symmetry: bool,
        /// Stop a test's search (`stop: memory-limit`) before it holds
        /// more than this many MiB [default: 2048; a search's peak stays
        /// within it plus 64 MiB].
        #[arg(long, value_name = "MIB", value_parser = parse_mib)]
        max_memory: Option<u64>,
        /// Threads (default: every core): several files are checked side
        /// by side, one search each; a single file's search uses them all.
        /// The output, witnesses and order included, does not depend on it.
        #[arg(long, value_name = "N", value_parser = parse_jobs)]
        jobs: Option<usize>,
        /// Delay waits on completed phases like any other step.
        #[arg(long, hide = true)]
        no_fuse: bool,
        /// Print the process's peak resident memory to stderr at the end
        /// (for benchmarks).
        #[arg(long, hide = true)]
        report_peak_memory: bool,
        /// Write every test's verdict to FILE (JSON, sorted by file) for a
        /// later `--baseline` run.
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
        /// Compare every test's verdict with FILE (from `--write-baseline`)
        /// instead of its `expect` line: exit 1 when any differs, with a
        /// table of the differences.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        #[command(flatten)]
        shard: ShardArg,
    },
    /// Show one finding's witness execution: as text, or as a DOT graph
    /// (threads as columns, program order, participates-in, bmo, stuck
    /// waits, and the interleaving with a lasso's cycle).
    Explain {
        file: PathBuf,
        /// The finding: its kind (`deadlock`, `ub(stale-phase)`) or its
        /// 1-based place in the report [default: the first].
        #[arg(long, value_name = "K")]
        finding: Option<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: ExplainFormat,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Check a corpus under two models and list the tests whose verdicts
    /// differ, with the witnesses of both (exit 1 when any differs).
    Diff {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// A built-in model (give two, or one and a --model-file: the
        /// --model is the old one).
        #[arg(long = "model", value_name = "NAME")]
        models: Vec<String>,
        /// A model file (give two, or one and a --model; the first is the
        /// old one).
        #[arg(long = "model-file", value_name = "PATH")]
        model_files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: DiffFormat,
        /// Stop a test's search after this many states (reported as `stop`).
        #[arg(long, default_value_t = bc_explore::DEFAULT_MAX_STATES, value_parser = parse_count)]
        max_states: u64,
        /// Stop a test's search after this many seconds.
        #[arg(long, value_name = "SECS", value_parser = parse_secs)]
        timeout: Option<Duration>,
        /// Threads, as for `check`.
        #[arg(long, value_name = "N", value_parser = parse_jobs)]
        jobs: Option<usize>,
        #[command(flatten)]
        shard: ShardArg,
    },
    /// Print a test's operation graph (per-thread control flow and
    /// thread-barrier-order).
    Graph {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "dot")]
        format: GraphFormat,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// List the built-in models, or show one.
    Models { name: Option<String> },
    /// Write a program per test for running it on hardware
    /// (docs/hardware.md).
    Emit {
        #[command(subcommand)]
        target: EmitTarget,
    },
    /// Hold verdicts against a GPU: run emitted CUDA harnesses, compare
    /// what they observed with the model (docs/hardware.md).
    Hw {
        #[command(subcommand)]
        command: HwCommand,
    },
}

#[derive(Subcommand)]
enum EmitTarget {
    /// A self-contained CUDA program (`DIR/NAME.cu`) per CUDA-model test,
    /// and DIR/manifest.json listing what was emitted and what was skipped
    /// and why (directories are searched for *.litmus).
    Cuda {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The output folder (created if missing).
        #[arg(short = 'o', long = "out", value_name = "DIR", required = true)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum HwCommand {
    /// Compile every program of an `emit cuda` folder with nvcc, run each
    /// in its own process, and write what they observed as JSON.
    Run(hw::RunArgs),
    /// Compare observations (from `hw run`) with each test's verdict and
    /// outcome set: exit 1 when the device showed an outcome the model
    /// forbids.
    Compare {
        observed: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: hw::CompareFormat,
        /// Threads checking the litmus files [default: every core].
        #[arg(long, value_name = "N", value_parser = parse_jobs)]
        jobs: Option<usize>,
    },
}

/// Exit code when the report could not be written (stdout or stderr full,
/// closed, or a broken pipe): the run's verdicts were lost, so it must not
/// read as a pass (docs/ci.md, "Exit codes"; docs/reliability.md).
const EXIT_OUTPUT: u8 = 3;

/// Input size caps (docs/reliability.md): a larger input is an error, read
/// no further than one byte past the cap.
const MAX_LITMUS_BYTES: u64 = 1 << 20;
const MAX_MODEL_BYTES: u64 = 1 << 20;
const MAX_BASELINE_BYTES: u64 = 64 << 20;

/// At most this many threads per available core, and never more than
/// [`MAX_JOBS`], whatever `--jobs` asks for.
const JOBS_PER_CORE: usize = 4;
const MAX_JOBS: usize = 256;

/// Writes to stdout. Every byte the program prints goes through this or
/// [`err`], so every write is checked (no `print!` anywhere).
fn out(s: &str) -> io::Result<()> {
    io::stdout().lock().write_all(s.as_bytes())
}

/// Writes to stderr, checked like [`out`].
fn err(s: &str) -> io::Result<()> {
    io::stderr().lock().write_all(s.as_bytes())
}

/// Whether the process started with stdout closed (`>&-`). Rust's runtime
/// reopens a closed standard descriptor on `/dev/null` (read-write) before
/// `main`, so a report written there would vanish with exit 0. A shell's
/// `> /dev/null` opens it write-only, so the two can be told apart (only a
/// deliberate `1<>/dev/null` looks closed). Linux: `/proc/self/fdinfo`.
fn stdout_was_closed() -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (Ok(fd1), Ok(null)) = (std::fs::metadata("/proc/self/fd/1"), std::fs::metadata("/dev/null")) else {
        return false;
    };
    if !(fd1.file_type().is_char_device() && fd1.rdev() == null.rdev()) {
        return false;
    }
    // `flags:` is octal; O_ACCMODE is 3 and O_RDWR 2.
    std::fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| {
        info.lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .is_some_and(|f| f & 3 == 2)
    })
}

fn main() -> ExitCode {
    if stdout_was_closed() {
        let _ = err("barrier-check: error: stdout is closed: the report cannot be written\n");
        return ExitCode::from(EXIT_OUTPUT);
    }
    match run().and_then(|code| io::stdout().flush().map(|()| code)) {
        Ok(code) => code,
        // A reader that stops early (`| head`): no message, but not a pass.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_OUTPUT),
        Err(e) => {
            // stderr may be the stream that failed; nothing more can be done then.
            let _ = err(&format!("barrier-check: error: cannot write the report: {e}\n"));
            ExitCode::from(EXIT_OUTPUT)
        }
    }
}

/// Parses the command line (help and version go through [`out`], usage
/// errors exit 2) and runs the command.
fn run() -> io::Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            e.print()?;
            return Ok(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    match cli.command {
        Command::Check {
            paths,
            format,
            model,
            max_states,
            timeout,
            quiet,
            outcomes,
            no_timing,
            progress,
            no_liveness,
            no_compact,
            no_canonical,
            no_symmetry,
            no_fuse,
            max_memory,
            jobs,
            report_peak_memory,
            write_baseline,
            baseline,
            shard,
        } => {
            let progress = match progress.as_deref().map(bc_models::ProgressModel::parse).transpose() {
                Ok(p) => p,
                Err(e) => return usage_error(&e),
            };
            let model = match load_model(&model) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            let opts = CheckOptions {
                model,
                search: SearchOptions {
                    limits: Limits {
                        states: max_states,
                        time: timeout,
                        memory: max_memory.map_or(bc_explore::DEFAULT_MAX_MEMORY, |m| m.saturating_mul(1 << 20)),
                    },
                    reductions: Reductions {
                        compact: !no_compact,
                        canonical: !no_canonical,
                        symmetry: !no_symmetry,
                        fuse: !no_fuse,
                    },
                    liveness: !no_liveness,
                    jobs: jobs_or_cores(jobs)?,
                    verify_encoding: false,
                    // SARIF and JUnit have no place for outcomes.
                    outcomes: outcomes && matches!(format, Format::Text | Format::Json),
                },
                progress,
                states: None,
            };
            let baseline = match &baseline {
                Some(path) => match read_capped(path, MAX_BASELINE_BYTES)
                    .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
                    .and_then(|t| bc_report::wire::parse_baseline(&t))
                {
                    Ok(b) => Some(b),
                    Err(e) => return usage_error(&format!("{}: {e}", path.display())),
                },
                None => None,
            };
            let run = CheckRun {
                format,
                quiet,
                timing: !no_timing,
                shard: shard.shard,
                write_baseline,
                baseline,
            };
            let code = check(&paths, &opts, &run)?;
            if report_peak_memory {
                // VmHWM: the peak resident set size, in kB (Linux).
                let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
                if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
                    err(&format!(
                        "peak-memory-kb: {}\n",
                        line.trim_start_matches("VmHWM:").trim().trim_end_matches(" kB")
                    ))?;
                }
            }
            Ok(code)
        }
        Command::Hw {
            command: HwCommand::Run(args),
        } => hw::run(&args),
        Command::Hw {
            command: HwCommand::Compare { observed, format, jobs },
        } => hw::compare(&observed, format, jobs),
        Command::Graph {
            file,
            format: GraphFormat::Dot,
            model,
        } => {
            let model = match load_model(&model) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            let bytes = match read_capped(&file, MAX_LITMUS_BYTES) {
                Ok(b) => b,
                Err(e) => return usage_error(&format!("{}: {e}", file.display())),
            };
            let (source, result) = lower_bytes(&file.display().to_string(), &bytes, model);
            match result {
                Ok(p) => {
                    out(&bc_graph::dot::to_dot(&p))?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(ds) => {
                    err(&bc_report::diagnostic::render_all(&source, &ds))?;
                    Ok(ExitCode::from(2))
                }
            }
        }
        Command::Diff {
            paths,
            models,
            model_files,
            format,
            max_states,
            timeout,
            jobs,
            shard,
        } => {
            let mut named: Vec<(String, Model)> = Vec::new();
            for m in &models {
                match bc_models::lookup(m) {
                    Ok(model) => named.push((m.clone(), model)),
                    Err(e) => return usage_error(&e),
                }
            }
            for path in &model_files {
                match read_model_file(path) {
                    Ok(model) => named.push((path.display().to_string(), model)),
                    Err(e) => return usage_error(&e),
                }
            }
            if named.len() != 2 {
                return usage_error(
                    "diff needs two models: --model A --model B, --model A --model-file B, or two --model-file",
                );
            }
            let search = SearchOptions {
                limits: Limits {
                    states: max_states,
                    time: timeout,
                    ..Limits::default()
                },
                jobs: jobs_or_cores(jobs)?,
                ..SearchOptions::default()
            };
            let new = named.pop().expect("two models");
            let old = named.pop().expect("two models");
            diff(&paths, old, new, search, format, shard.shard)
        }
        Command::Explain {
            file,
            finding,
            format,
            model,
        } => {
            let model = match load_model(&model) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            let opts = CheckOptions {
                model,
                search: SearchOptions {
                    jobs: jobs_or_cores(None)?,
                    ..SearchOptions::default()
                },
                progress: None,
                states: None,
            };
            let r = check_file(&Input::File(file.clone()), &opts);
            if r.is_error() {
                err(&bc_report::diagnostic::render_all(&r.source, &r.diagnostics))?;
                return Ok(ExitCode::from(2));
            }
            let findings = r.outcome.as_ref().map_or(&[][..], |o| &o.findings[..]);
            let chosen = match &finding {
                None => findings.first(),
                Some(k) => match k.parse::<usize>() {
                    Ok(i) => i.checked_sub(1).and_then(|i| findings.get(i)),
                    Err(_) => findings.iter().find(|f| f.kind.to_string() == *k),
                },
            };
            let Some(f) = chosen else {
                err(&format!(
                    "barrier-check: {}: no such finding (verdict: {})\n",
                    file.display(),
                    bc_report::verdict_text(&r.verdict())
                ))?;
                return Ok(ExitCode::from(1));
            };
            match format {
                ExplainFormat::Text => out(&bc_report::text::finding(&r, f))?,
                ExplainFormat::Dot => out(&bc_report::explain::to_dot(&r, f))?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Models { name } => models(name.as_deref()),
        Command::Emit {
            target: EmitTarget::Cuda { paths, out },
        } => emit_cuda(&paths, &out),
    }
}

/// `emit cuda`: one `.cu` per CUDA-model test; the rest are skipped with a
/// reason (stderr and the manifest). Exit 2 when an input is unreadable or
/// does not parse, else 0.
fn emit_cuda(paths: &[PathBuf], dir: &Path) -> io::Result<ExitCode> {
    use bc_hw::observed::{Emitted, Skipped};
    if let Err(e) = std::fs::create_dir_all(dir) {
        return usage_error(&format!("{}: {e}", dir.display()));
    }
    let mut emitted = Vec::new();
    let mut skipped = Vec::new();
    let mut stems = std::collections::HashSet::new();
    let mut bad = false;
    for input in collect(paths) {
        let file = match input {
            Input::File(f) => f,
            Input::Unreadable(p, why) => {
                err(&format!("barrier-check: error: {}: {why}\n", p.display()))?;
                bad = true;
                continue;
            }
        };
        let name = file.display().to_string();
        let bytes = match read_capped(&file, MAX_LITMUS_BYTES) {
            Ok(b) => b,
            Err(e) => {
                err(&format!("barrier-check: error: {name}: {e}\n"))?;
                bad = true;
                continue;
            }
        };
        let (source, result) = lower_bytes(&name, &bytes, None);
        let prog = match result {
            Ok(p) => p,
            Err(ds) => {
                err(&bc_report::diagnostic::render_all(&source, &ds))?;
                bad = true;
                continue;
            }
        };
        let (lit, _) = bc_syntax::parse(&source.text);
        // A file name, told apart from another folder's file of that name.
        let base: String = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut stem = base.clone();
        let mut n = 1;
        while !stems.insert(stem.clone()) {
            n += 1;
            stem = format!("{base}-{n}");
        }
        match bc_hw::emit::emit_cuda(&lit, &prog, &stem) {
            Ok(p) => {
                let cu = format!("{stem}.cu");
                if let Err(e) = std::fs::write(dir.join(&cu), &p.source) {
                    return usage_error(&format!("{}: {e}", dir.join(&cu).display()));
                }
                emitted.push(Emitted {
                    file: name,
                    cu,
                    test: p.test,
                    mapping: Some(p.mapping.name().to_string()),
                    nvcc: Some(p.nvcc),
                });
            }
            Err(r) => {
                stems.remove(&stem);
                err(&format!("skipped {name}: {r}\n"))?;
                skipped.push(Skipped {
                    file: name,
                    reason: r.0,
                });
            }
        }
    }
    let manifest = dir.join("manifest.json");
    let counts = (emitted.len(), skipped.len());
    if let Err(e) = std::fs::write(&manifest, bc_hw::emit::manifest(emitted, skipped)) {
        return usage_error(&format!("{}: {e}", manifest.display()));
    }
    err(&format!(
        "emitted {} program(s), skipped {} test(s); manifest: {}\n",
        counts.0,
        counts.1,
        manifest.display()
    ))?;
    Ok(ExitCode::from(if bad { 2 } else { 0 }))
}

fn usage_error(msg: &str) -> io::Result<ExitCode> {
    err(&format!("barrier-check: error: {msg}\n"))?;
    Ok(ExitCode::from(2))
}

fn load_model(args: &ModelArgs) -> Result<Option<Model>, String> {
    if let Some(name) = &args.model {
        return bc_models::lookup(name).map(Some);
    }
    if let Some(path) = &args.model_file {
        return read_model_file(path).map(Some);
    }
    Ok(None)
}

/// Reads at most `cap` bytes of a file: a longer one (or an endless one
/// such as `/dev/zero`) is an error after `cap + 1` bytes, never a read
/// until memory runs out.
fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "larger than {} MiB, the limit for this input (see docs/reliability.md)",
            cap >> 20
        ));
    }
    Ok(bytes)
}

/// A model file (`--model-file`), errors naming the file.
fn read_model_file(path: &Path) -> Result<Model, String> {
    let text = read_capped(path, MAX_MODEL_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Model::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `--max-states N`: a whole number, at least 1.
pub(crate) fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("needs at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a whole number from 1 to {}: {e}", u64::MAX)),
    }
}

/// `--timeout SECS`: a positive, finite number of seconds. One too large
/// for a `Duration` (about 584 billion years) saturates: no search runs
/// that long.
pub(crate) fn parse_secs(s: &str) -> Result<Duration, String> {
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
fn parse_mib(s: &str) -> Result<u64, String> {
    parse_count(s)
}

/// `--jobs N`: at least 1 (clamped to the machine by [`jobs_or_cores`]).
pub(crate) fn parse_jobs(s: &str) -> Result<usize, String> {
    parse_count(s).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// `--jobs N`, by default every core; at most [`JOBS_PER_CORE`] threads per
/// core and [`MAX_JOBS`] in all (a warning on stderr says when it clamps):
/// more only contend, and thousands fail to spawn.
fn jobs_or_cores(jobs: Option<usize>) -> io::Result<usize> {
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

/// One input of a run: a file to check, or a path that could not be
/// listed or read (reported as an input error, like a parse error).
enum Input {
    File(PathBuf),
    Unreadable(PathBuf, String),
}

/// Expands directories to their `*.litmus` files, sorted within each
/// folder. Each real file is listed once, however many symbolic links lead
/// to it, and each real folder is walked once (a link back to a folder
/// being walked, or already walked, is skipped), so link loops end. Links
/// are followed only after the real tree under an argument is walked, so a
/// file is named by its real path when it has one there. Folders and
/// entries that cannot be read are listed as [`Input::Unreadable`], and
/// the rest is still checked.
fn collect(paths: &[PathBuf]) -> Vec<Input> {
    use std::collections::HashSet;
    struct Walk {
        dirs: HashSet<PathBuf>,
        files: HashSet<PathBuf>,
        /// Symbolic links met in the walk, followed after it.
        links: Vec<PathBuf>,
        out: Vec<Input>,
    }
    impl Walk {
        fn file(&mut self, p: &Path) {
            // A path that does not resolve is kept: reading it reports why.
            if std::fs::canonicalize(p).map_or(true, |c| self.files.insert(c)) {
                self.out.push(Input::File(p.to_path_buf()));
            }
        }
        fn unreadable(&mut self, p: &Path, e: impl ToString) {
            self.out.push(Input::Unreadable(p.to_path_buf(), e.to_string()));
        }
        /// A path the walk met: a folder is walked, a `*.litmus` file
        /// listed; a dangling or looping link is an error only when it is
        /// named like a litmus file.
        fn entry(&mut self, p: &Path) {
            let litmus = p.extension().is_some_and(|e| e == "litmus");
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => self.dir(p),
                Ok(m) if litmus && !m.is_file() => self.unreadable(p, "not a regular file (not read)"),
                Ok(_) if litmus => self.file(p),
                Ok(_) => {}
                Err(_) if !litmus && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink()) => {}
                Err(e) => self.unreadable(p, e),
            }
        }
        fn dir(&mut self, dir: &Path) {
            let real = match std::fs::canonicalize(dir) {
                Ok(r) => r,
                Err(e) => return self.unreadable(dir, e),
            };
            if !self.dirs.insert(real) {
                return;
            }
            let listing = match std::fs::read_dir(dir) {
                Ok(l) => l,
                Err(e) => return self.unreadable(dir, e),
            };
            let mut entries = Vec::new();
            for e in listing {
                match e {
                    Ok(e) => entries.push(e.path()),
                    Err(e) => self.unreadable(dir, e),
                }
            }
            entries.sort();
            for p in entries {
                if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_symlink()) {
                    self.links.push(p);
                } else {
                    self.entry(&p);
                }
            }
        }
    }
    let mut walk = Walk {
        dirs: HashSet::new(),
        files: HashSet::new(),
        links: Vec::new(),
        out: Vec::new(),
    };
    for p in paths {
        if p.is_dir() {
            walk.dir(p);
            // Following a link can meet more links: in the order met.
            let mut next = 0;
            while let Some(link) = walk.links.get(next).cloned() {
                walk.entry(&link);
                next += 1;
            }
            walk.links.clear();
        } else {
            walk.file(p);
        }
    }
    walk.out
}

/// A progress bar on stderr, only when stderr is a terminal, and only
/// once the run has taken a second (short runs and piped or redirected
/// output stay exactly as they are).
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// States stored by the searches so far (shown on the bar).
    states: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The thread that shows the bar after a second and keeps it current,
    /// and the flag that stops it.
    ticker: Option<(
        std::thread::JoinHandle<()>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    )>,
}

impl Progress {
    /// A bar over `files` files, drawn only when stderr is a terminal and
    /// only once the run has taken a second; it shows the files done, the
    /// states stored so far (so one long search shows progress too) and
    /// the elapsed time.
    fn new(files: usize) -> Progress {
        use std::io::IsTerminal;
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let states = std::sync::Arc::new(AtomicU64::new(0));
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar =
                indicatif::ProgressBar::with_draw_target(Some(files as u64), indicatif::ProgressDrawTarget::hidden());
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} files, {msg} states, {elapsed}")
                    .expect("a valid template"),
            );
            bar.set_message("0");
            bar
        });
        let ticker = bar.clone().map(|bar| {
            let stop = std::sync::Arc::new(AtomicBool::new(false));
            let (stop2, states2) = (stop.clone(), states.clone());
            let handle = std::thread::spawn(move || {
                let start = std::time::Instant::now();
                while !stop2.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if start.elapsed() < Duration::from_secs(1) {
                        continue;
                    }
                    if bar.is_hidden() {
                        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    }
                    bar.set_message(states2.load(Ordering::Relaxed).to_string());
                }
            });
            (handle, stop)
        });
        Progress { bar, states, ticker }
    }
    /// The counter searches add their stored states to, when a bar may show.
    fn counter(&self) -> Option<std::sync::Arc<std::sync::atomic::AtomicU64>> {
        self.bar.as_ref().map(|_| self.states.clone())
    }
    /// Runs `f` (which prints) with the bar out of the way.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
    fn done_one(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
    fn finish(&mut self) {
        if let Some((handle, stop)) = self.ticker.take() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = handle.join();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// How a `check` run reports.
struct CheckRun {
    format: Format,
    quiet: bool,
    timing: bool,
    shard: Option<(usize, usize)>,
    write_baseline: Option<PathBuf>,
    baseline: Option<Vec<bc_report::baseline::Entry>>,
}

/// The inputs to check: directories expanded and sorted, then this shard's
/// part (every N-th input from the K-th).
fn files_of(paths: &[PathBuf], shard: Option<(usize, usize)>) -> Result<Vec<Input>, String> {
    let mut files = collect(paths);
    if files.is_empty() {
        return Err("no .litmus files found".into());
    }
    if let Some((k, n)) = shard {
        files = files.into_iter().skip(k - 1).step_by(n).collect();
    }
    Ok(files)
}

/// Checks one input. One that cannot be read (missing, too large, an
/// unreadable folder) is a report with a file-level error, so every output
/// format lists it and counts it as an error, as the exit code does.
fn check_file(input: &Input, opts: &CheckOptions) -> TestReport {
    match input {
        Input::File(f) => {
            let name = f.display().to_string();
            match read_capped(f, MAX_LITMUS_BYTES) {
                Ok(bytes) => check_bytes(&name, &bytes, opts),
                Err(e) => barrier_check::unreadable(&name, &e),
            }
        }
        Input::Unreadable(p, e) => barrier_check::unreadable(&p.display().to_string(), e),
    }
}

/// Checks the inputs; `each` sees every report in input order as soon as
/// it and those before it are done, and an error from it (the output
/// failed) ends the run. Several files share the `--jobs` threads (each
/// search then runs on one); a single file's search gets them all.
/// Answers never depend on it.
fn check_files(
    files: &[Input],
    opts: &CheckOptions,
    mut each: impl FnMut(&TestReport) -> io::Result<()>,
) -> io::Result<Vec<TestReport>> {
    let jobs = opts.search.jobs.max(1);
    let mut reports = Vec::new();
    let mut take = |r: TestReport| -> io::Result<()> {
        each(&r)?;
        reports.push(r);
        Ok(())
    };
    if jobs == 1 || files.len() < 2 {
        for f in files {
            take(check_file(f, opts))?;
        }
        return Ok(reports);
    }
    let one = CheckOptions {
        search: SearchOptions { jobs: 1, ..opts.search },
        ..opts.clone()
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let mut spawned = 0;
        for _ in 0..jobs.min(files.len()) {
            let (tx, next, one) = (tx.clone(), &next, &one);
            let worker = std::thread::Builder::new()
                // The stack the explorer's workers get, so no answer depends
                // on which thread checks a file.
                .stack_size(bc_explore::WORKER_STACK)
                .spawn_scoped(scope, move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(f) = files.get(i) else { break };
                    if tx.send((i, check_file(f, one))).is_err() {
                        break;
                    }
                });
            // The system may refuse threads: check with those it gave.
            match worker {
                Ok(_) => spawned += 1,
                Err(_) => break,
            }
        }
        if spawned == 0 {
            // No worker at all: this thread does the work.
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(f) = files.get(i) else { break };
                if tx.send((i, check_file(f, &one))).is_err() {
                    break;
                }
            }
        }
        drop(tx);
        // In input order: hold early finishers until those before are in.
        let mut held = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx {
            held.insert(i, r);
            while let Some(r) = held.remove(&due) {
                take(r)?;
                due += 1;
            }
        }
        Ok::<(), io::Error>(())
    })?;
    Ok(reports)
}

fn check(paths: &[PathBuf], opts: &CheckOptions, run: &CheckRun) -> io::Result<ExitCode> {
    let files = match files_of(paths, run.shard) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    let text_opts = TextOptions {
        witnesses: !run.quiet,
        timing: run.timing,
    };
    let mut progress = Progress::new(files.len());
    let counting = CheckOptions {
        states: progress.counter(),
        ..opts.clone()
    };
    let result = check_files(&files, &counting, |r| {
        progress.suspend(|| -> io::Result<()> {
            if run.format == Format::Text {
                if r.is_error() {
                    err(&bc_report::diagnostic::render_all(&r.source, &r.diagnostics))?;
                }
                out(&bc_report::text::test(r, &text_opts))?;
                io::stdout().flush()?;
            }
            Ok(())
        })?;
        progress.done_one();
        Ok(())
    });
    progress.finish();
    let reports = result?;
    let summary = bc_report::summarize(&reports);
    let changes = run.baseline.as_ref().map(|b| bc_report::baseline::compare(b, &reports));
    // Every input was read and parsed (otherwise the exit code is 2).
    let inputs_ok = summary.errors == 0;
    match run.format {
        Format::Text => {
            out(&format!("{}\n", bc_report::text::summary(&summary)))?;
            if let Some(changes) = &changes {
                if changes.is_empty() {
                    out("every verdict equals the baseline\n")?;
                } else {
                    out(&format!(
                        "{} verdict(s) differ from the baseline:\n{}",
                        changes.len(),
                        bc_report::baseline::render_changes(changes)
                    ))?;
                }
            }
        }
        Format::Json => {
            out(&format!(
                "{}\n",
                bc_report::wire::to_json_with_changes(&reports, changes.as_deref())
            ))?;
        }
        Format::Sarif => {
            let log = bc_report::sarif::to_sarif(&reports, env!("CARGO_PKG_VERSION"), inputs_ok);
            out(&format!("{log}\n"))?;
        }
        Format::Junit => {
            out(&bc_report::junit::to_junit(&reports, run.timing))?;
        }
    }
    io::stdout().flush()?;
    if let Some(path) = &run.write_baseline {
        if let Err(e) = std::fs::write(path, bc_report::wire::baseline_json(&reports)) {
            return usage_error(&format!("{}: {e}", path.display()));
        }
    }
    Ok(if !inputs_ok {
        ExitCode::from(2)
    } else if let Some(changes) = changes {
        // Against a baseline, the verdicts must equal the baseline's (a
        // search stopped at a limit shows as a changed verdict).
        if changes.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    } else if summary.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `barrier-check diff`: the corpus under two models, paired by file.
fn diff(
    paths: &[PathBuf],
    old: (String, Model),
    new: (String, Model),
    search: SearchOptions,
    format: DiffFormat,
    shard: Option<(usize, usize)>,
) -> io::Result<ExitCode> {
    let files = match files_of(paths, shard) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    let run = |m: &Model| {
        let opts = CheckOptions {
            model: Some(m.clone()),
            search,
            progress: None,
            states: None,
        };
        check_files(&files, &opts, |_| Ok(()))
    };
    let before = run(&old.1)?;
    let after = run(&new.1)?;
    // Inputs that could not be checked, once (both runs see the same ones).
    for r in before.iter().filter(|r| r.is_error()) {
        err(&bc_report::diagnostic::render_all(&r.source, &r.diagnostics))?;
    }
    let pairs: Vec<(&TestReport, &TestReport)> = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| bc_report::baseline::verdict_of(a) != bc_report::baseline::verdict_of(b))
        .collect();
    match format {
        DiffFormat::Text => {
            let text_opts = TextOptions {
                witnesses: true,
                timing: false,
            };
            let mut text = String::new();
            for (a, b) in &pairs {
                let name = a.test.as_deref().map_or(String::new(), |t| format!("  \"{t}\""));
                text += &format!(
                    "flipped  {}{name}  {} -> {}\n",
                    a.source.name,
                    bc_report::baseline::verdict_of(a),
                    bc_report::baseline::verdict_of(b)
                );
                for (label, r) in [(&old.0, a), (&new.0, b)] {
                    text += &format!("  under {label}:\n");
                    for line in bc_report::text::test(r, &text_opts).lines() {
                        text += &format!("    {line}\n");
                    }
                }
            }
            text += &format!(
                "{} tests, {} flipped ({} -> {})\n",
                before.len(),
                pairs.len(),
                old.0,
                new.0
            );
            out(&text)?;
        }
        DiffFormat::Json => {
            out(&format!(
                "{}\n",
                bc_report::wire::diff_json(&old.0, &new.0, &pairs, before.len())
            ))?;
        }
    }
    io::stdout().flush()?;
    let errors = before.iter().chain(&after).any(|r| r.is_error());
    Ok(if errors {
        ExitCode::from(2)
    } else if pairs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn models(name: Option<&str>) -> io::Result<ExitCode> {
    match name {
        None => {
            let mut text = String::new();
            for m in bc_models::builtin().iter() {
                text += &format!("{:<16} {}\n", m.name, m.description);
            }
            for p in bc_models::PLANNED {
                text += &format!("{p:<16} (part of the litmus format; not available in this build yet)\n");
            }
            out(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(n) => match bc_models::lookup(n) {
            Ok(m) => {
                out(&describe_model(&m))?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => usage_error(&e),
        },
    }
}

/// `barrier-check models NAME`: the model's parameters, barriers and instructions.
fn describe_model(m: &Model) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "model {}: {}", m.name, m.description);
    let _ = writeln!(out, "warp size: {}", m.warp_size);
    let _ = writeln!(out, "default progress model: {}", m.default_progress);
    let rules: Vec<&str> = bc_models::Rule::ALL
        .into_iter()
        .filter(|r| m.rules.has(*r))
        .map(|r| r.name())
        .collect();
    let _ = writeln!(out, "rules: {}", rules.join(", "));
    let abstract_ops: Vec<&str> = m
        .statements
        .iter()
        .map(String::as_str)
        .filter(|s| m.instruction(s).is_none())
        .collect();
    let _ = writeln!(out, "statements: {}", abstract_ops.join(", "));
    if !m.barriers.is_empty() {
        let _ = writeln!(out, "barriers:");
        for b in &m.barriers {
            let mut flags = Vec::new();
            if b.props.join_at_launch {
                flags.push("joined at launch");
            }
            if b.props.drop_at_end {
                flags.push("dropped at wave end");
            }
            if b.props.privileged {
                flags.push("privileged");
            }
            if b.props.noop {
                flags.push("no-op but join");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!("; {}", flags.join(", "))
            };
            let _ = writeln!(
                out,
                "  {:>3}  {:<15} scope {:<8} count {}{flags}",
                b.id,
                b.name,
                b.scope.name(),
                b.count
            );
        }
    }
    for g in &m.groups {
        let ids: Vec<String> = g.ids.iter().map(|i| i.to_string()).collect();
        let wait = if g.wait_on_joined {
            " (a wait on a member waits on the member joined last)"
        } else {
            ""
        };
        let _ = writeln!(out, "mutually exclusive `{}`: {}{wait}", g.name, ids.join(", "));
    }
    if !m.instructions.is_empty() {
        let _ = writeln!(out, "instructions:");
        for i in &m.instructions {
            let ops: Vec<String> = i
                .operands
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let opt = if k >= i.operands.len() - i.optional { "?" } else { "" };
                    match o {
                        bc_models::OperandKind::Barrier => format!("ID{opt}"),
                        bc_models::OperandKind::Int => format!("K{opt}"),
                        bc_models::OperandKind::Object => format!("B{opt}"),
                        bc_models::OperandKind::Reg => format!("t{opt}"),
                    }
                })
                .collect();
            let res = if i.result { "r = " } else { "" };
            let sig = format!("{res}{} {}", i.name, ops.join(", "));
            let _ = writeln!(out, "  {:<38} -> {}", sig.trim_end(), i.text);
        }
    }
    out
}
