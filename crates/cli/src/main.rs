//! `barrier-check`: the command line. The only crate that touches files,
//! the environment and standard output.

/// Explorer states are many small vectors cloned and freed at a high rate;
/// glibc's allocator spent most of the search in consolidation and chunk
/// unlinking (perf), and serializes worker threads on its arenas.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use barrier_check::{check_bytes, lower_bytes, CheckOptions};
use bc_explore::Limits;
use bc_models::Model;
use bc_report::text::TextOptions;
use bc_report::TestReport;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
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
        #[arg(long, default_value_t = Limits::default().max_states)]
        max_states: u64,
        /// Stop a test's search after this many seconds (reported as `stop`).
        #[arg(long, value_name = "SECS")]
        timeout: Option<f64>,
        /// One line per test: no findings or witnesses.
        #[arg(long, short)]
        quiet: bool,
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
        /// Stop a test's search (`stop: memory-limit`) when its stored
        /// states' size passes this many MiB [default: 2048, which keeps
        /// the process under 4 GiB].
        #[arg(long, value_name = "MIB")]
        max_memory: Option<u64>,
        /// Threads (default: every core): several files are checked side
        /// by side, one search each; a single file's search uses them all.
        /// The output, witnesses and order included, does not depend on it.
        #[arg(long, value_name = "N")]
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
        #[arg(long, default_value_t = 2_000_000)]
        max_states: u64,
        /// Stop a test's search after this many seconds.
        #[arg(long, value_name = "SECS")]
        timeout: Option<f64>,
        /// Threads, as for `check`.
        #[arg(long, value_name = "N")]
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check {
            paths,
            format,
            model,
            max_states,
            timeout,
            quiet,
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
            let timeout = match parse_timeout(timeout) {
                Ok(t) => t,
                Err(e) => return usage_error(&e),
            };
            let opts = CheckOptions {
                model,
                limits: Limits {
                    max_states,
                    timeout,
                    max_memory: max_memory.map_or(bc_explore::DEFAULT_MAX_MEMORY, |m| m.max(1) << 20),
                    liveness: !no_liveness,
                    compact: !no_compact,
                    canonical: !no_canonical,
                    symmetry: !no_symmetry,
                    fuse: !no_fuse,
                    jobs: jobs_or_cores(jobs),
                    verify_encoding: false,
                },
                progress,
                states: None,
            };
            let baseline = match &baseline {
                Some(path) => match std::fs::read_to_string(path)
                    .map_err(|e| e.to_string())
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
            let code = check(&paths, &opts, &run);
            if report_peak_memory {
                // VmHWM: the peak resident set size, in kB (Linux).
                let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
                if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
                    eprintln!(
                        "peak-memory-kb: {}",
                        line.trim_start_matches("VmHWM:").trim().trim_end_matches(" kB")
                    );
                }
            }
            code
        }
        Command::Graph {
            file,
            format: GraphFormat::Dot,
            model,
        } => {
            let model = match load_model(&model) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            let bytes = match std::fs::read(&file) {
                Ok(b) => b,
                Err(e) => return usage_error(&format!("{}: {e}", file.display())),
            };
            let (source, result) = lower_bytes(&file.display().to_string(), &bytes, model);
            match result {
                Ok(p) => {
                    print!("{}", bc_graph::dot::to_dot(&p));
                    ExitCode::SUCCESS
                }
                Err(ds) => {
                    eprint!("{}", bc_report::diagnostic::render_all(&source, &ds));
                    ExitCode::from(2)
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
            let timeout = match parse_timeout(timeout) {
                Ok(t) => t,
                Err(e) => return usage_error(&e),
            };
            let limits = Limits {
                max_states,
                timeout,
                jobs: jobs_or_cores(jobs),
                ..Limits::default()
            };
            let new = named.pop().expect("two models");
            let old = named.pop().expect("two models");
            diff(&paths, old, new, limits, format, shard.shard)
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
                limits: Limits {
                    jobs: jobs_or_cores(None),
                    ..Limits::default()
                },
                progress: None,
                states: None,
            };
            let r = match check_file(&file, &opts) {
                Ok(r) => r,
                Err(e) => return usage_error(&e),
            };
            if r.is_error() {
                eprint!("{}", bc_report::diagnostic::render_all(&r.source, &r.diagnostics));
                return ExitCode::from(2);
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
                eprintln!(
                    "barrier-check: {}: no such finding (verdict: {})",
                    file.display(),
                    bc_report::verdict_text(&r.verdict())
                );
                return ExitCode::from(1);
            };
            match format {
                ExplainFormat::Text => print!("{}", bc_report::text::finding(&r, f)),
                ExplainFormat::Dot => print!("{}", bc_report::explain::to_dot(&r, f)),
            }
            ExitCode::SUCCESS
        }
        Command::Models { name } => models(name.as_deref()),
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("barrier-check: error: {msg}");
    ExitCode::from(2)
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

/// A model file (`--model-file`), errors naming the file.
fn read_model_file(path: &Path) -> Result<Model, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Model::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `--timeout SECS`: a positive, finite number of seconds.
fn parse_timeout(secs: Option<f64>) -> Result<Option<Duration>, String> {
    match secs {
        Some(t) if !(t > 0.0 && t.is_finite()) => Err("--timeout needs a positive number of seconds".into()),
        Some(t) => Ok(Some(Duration::from_secs_f64(t))),
        None => Ok(None),
    }
}

/// `--jobs N`, by default every core.
fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// Expands directories to their `*.litmus` files, sorted.
fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "litmus") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
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
    fn suspend(&self, f: impl FnOnce()) {
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

/// The files to check: directories expanded and sorted, then this shard's
/// part (every N-th file from the K-th).
fn files_of(paths: &[PathBuf], shard: Option<(usize, usize)>) -> Result<Vec<PathBuf>, String> {
    let mut files = collect(paths)?;
    if files.is_empty() {
        return Err("no .litmus files found".into());
    }
    if let Some((k, n)) = shard {
        files = files.into_iter().skip(k - 1).step_by(n).collect();
    }
    Ok(files)
}

/// Checks one file (`Err`: it could not be read).
fn check_file(f: &Path, opts: &CheckOptions) -> Result<TestReport, String> {
    let name = f.display().to_string();
    std::fs::read(f)
        .map(|bytes| check_bytes(&name, &bytes, opts))
        .map_err(|e| format!("{name}: {e}"))
}

/// Checks the files; `each` sees every report in file order as soon as it
/// and those before it are done. Several files share the `--jobs` threads
/// (each search then runs on one); a single file's search gets them all.
/// Answers never depend on it. Returns the reports and whether some file
/// could not be read.
fn check_files(files: &[PathBuf], opts: &CheckOptions, mut each: impl FnMut(&TestReport)) -> (Vec<TestReport>, bool) {
    let jobs = opts.limits.jobs.max(1);
    let mut reports = Vec::new();
    let mut unreadable = false;
    let mut take = |r: Result<TestReport, String>| match r {
        Ok(r) => {
            each(&r);
            reports.push(r);
        }
        Err(e) => {
            eprintln!("barrier-check: error: {e}");
            unreadable = true;
        }
    };
    if jobs == 1 || files.len() < 2 {
        for f in files {
            take(check_file(f, opts));
        }
    } else {
        let one = CheckOptions {
            limits: Limits { jobs: 1, ..opts.limits },
            ..opts.clone()
        };
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            for _ in 0..jobs.min(files.len()) {
                let (tx, next, one) = (tx.clone(), &next, &one);
                // The stack the explorer's workers get, so no answer depends
                // on which thread checks a file.
                std::thread::Builder::new()
                    .stack_size(bc_explore::WORKER_STACK)
                    .spawn_scoped(scope, move || loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        if tx.send((i, check_file(f, one))).is_err() {
                            break;
                        }
                    })
                    .expect("spawning a checking thread");
            }
            drop(tx);
            // In file order: hold early finishers until those before are in.
            let mut held = std::collections::BTreeMap::new();
            let mut due = 0;
            for (i, r) in rx {
                held.insert(i, r);
                while let Some(r) = held.remove(&due) {
                    take(r);
                    due += 1;
                }
            }
        });
    }
    (reports, unreadable)
}

fn check(paths: &[PathBuf], opts: &CheckOptions, run: &CheckRun) -> ExitCode {
    let files = match files_of(paths, run.shard) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    let text_opts = TextOptions {
        witnesses: !run.quiet,
        timing: run.timing,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut progress = Progress::new(files.len());
    let counting = CheckOptions {
        states: progress.counter(),
        ..opts.clone()
    };
    let (reports, unreadable) = check_files(&files, &counting, |r| {
        progress.suspend(|| {
            if run.format == Format::Text {
                if r.is_error() {
                    eprint!("{}", bc_report::diagnostic::render_all(&r.source, &r.diagnostics));
                }
                let _ = out.write_all(bc_report::text::test(r, &text_opts).as_bytes());
                let _ = out.flush();
            }
        });
        progress.done_one();
    });
    progress.finish();
    let summary = bc_report::summarize(&reports);
    let changes = run.baseline.as_ref().map(|b| bc_report::baseline::compare(b, &reports));
    // Every file was read and parsed (otherwise the exit code is 2).
    let inputs_ok = !unreadable && summary.errors == 0;
    match run.format {
        Format::Text => {
            let _ = writeln!(out, "{}", bc_report::text::summary(&summary));
            if let Some(changes) = &changes {
                if changes.is_empty() {
                    let _ = writeln!(out, "every verdict equals the baseline");
                } else {
                    let _ = write!(
                        out,
                        "{} verdict(s) differ from the baseline:\n{}",
                        changes.len(),
                        bc_report::baseline::render_changes(changes)
                    );
                }
            }
        }
        Format::Json => {
            let _ = writeln!(
                out,
                "{}",
                bc_report::wire::to_json_with_changes(&reports, changes.as_deref())
            );
        }
        Format::Sarif => {
            let log = bc_report::sarif::to_sarif(&reports, env!("CARGO_PKG_VERSION"), inputs_ok);
            let _ = writeln!(out, "{log}");
        }
        Format::Junit => {
            let _ = write!(out, "{}", bc_report::junit::to_junit(&reports, run.timing));
        }
    }
    if let Some(path) = &run.write_baseline {
        if let Err(e) = std::fs::write(path, bc_report::wire::baseline_json(&reports)) {
            return usage_error(&format!("{}: {e}", path.display()));
        }
    }
    if !inputs_ok {
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
    }
}

/// `barrier-check diff`: the corpus under two models, paired by file.
fn diff(
    paths: &[PathBuf],
    old: (String, Model),
    new: (String, Model),
    limits: Limits,
    format: DiffFormat,
    shard: Option<(usize, usize)>,
) -> ExitCode {
    let files = match files_of(paths, shard) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    let run = |m: &Model| {
        let opts = CheckOptions {
            model: Some(m.clone()),
            limits,
            progress: None,
            states: None,
        };
        check_files(&files, &opts, |_| {})
    };
    let (before, unreadable_a) = run(&old.1);
    let (after, unreadable_b) = run(&new.1);
    let pairs: Vec<(&TestReport, &TestReport)> = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| bc_report::baseline::verdict_of(a) != bc_report::baseline::verdict_of(b))
        .collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        DiffFormat::Text => {
            let text_opts = TextOptions {
                witnesses: true,
                timing: false,
            };
            for (a, b) in &pairs {
                let name = a.test.as_deref().map_or(String::new(), |t| format!("  \"{t}\""));
                let _ = writeln!(
                    out,
                    "flipped  {}{name}  {} -> {}",
                    a.source.name,
                    bc_report::baseline::verdict_of(a),
                    bc_report::baseline::verdict_of(b)
                );
                for (label, r) in [(&old.0, a), (&new.0, b)] {
                    let _ = writeln!(out, "  under {label}:");
                    for line in bc_report::text::test(r, &text_opts).lines() {
                        let _ = writeln!(out, "    {line}");
                    }
                }
            }
            let _ = writeln!(
                out,
                "{} tests, {} flipped ({} -> {})",
                before.len(),
                pairs.len(),
                old.0,
                new.0
            );
        }
        DiffFormat::Json => {
            let _ = writeln!(
                out,
                "{}",
                bc_report::wire::diff_json(&old.0, &new.0, &pairs, before.len())
            );
        }
    }
    let errors = before.iter().chain(&after).any(|r| r.is_error());
    if unreadable_a || unreadable_b || errors {
        ExitCode::from(2)
    } else if pairs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn models(name: Option<&str>) -> ExitCode {
    match name {
        None => {
            for m in bc_models::builtin().iter() {
                println!("{:<16} {}", m.name, m.description);
            }
            for p in bc_models::PLANNED {
                println!("{p:<16} (part of the litmus format; not available in this build yet)");
            }
            ExitCode::SUCCESS
        }
        Some(n) => match bc_models::lookup(n) {
            Ok(m) => {
                print!("{}", describe_model(&m));
                ExitCode::SUCCESS
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
