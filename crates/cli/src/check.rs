//! `barrier-check check`: its flags, and the run that checks files side by
//! side and prints their reports (text as each file is done; JSON, SARIF
//! and JUnit at the end), compared with their `expect` lines or with a
//! baseline.

use crate::flags::{jobs_or_cores, parse_count, parse_jobs, parse_mib, parse_secs, ModelArgs, ShardArg};
use crate::inputs::{files_of_kinds, read_capped, read_stdin, Input, MAX_BASELINE_BYTES, MAX_LITMUS_BYTES};
use crate::output::{err, out, usage_error, write_file, Refusal};
use crate::progress::Progress;
use barrier_check::options::{default_max_states, Search};
use barrier_check::{CheckOptions, ProgressChoice};
use bc_report::text::TextOptions;
use clap::ValueEnum;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// `check`'s report formats.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    /// SARIF 2.1.0: one result per finding, for code-scanning views.
    Sarif,
    /// JUnit XML: one test case per litmus file, for CI test views.
    Junit,
    /// GitHub Actions workflow commands: an `::error` annotation per
    /// unexpected finding, missing finding, stopped search or input error.
    Github,
}

/// `--fail-fast[=test|run]`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailFast {
    /// Each test's search stops at its first finding its `expect` does
    /// not allow.
    Test,
    /// That, and the run stops at its first failing test: the searches
    /// still going stop where they are (`stop: interrupted`) and tests
    /// not started yet stop at once; every test is still reported.
    Run,
}

/// `--color`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether a stream (a terminal or not) gets colours.
    fn on(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// `check`'s command line.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Litmus files, folders (searched for *.litmus and *.ptx; *.cu with
    /// --cu), `.ptx`/`.cu` kernels, or `-` for one litmus test on standard
    /// input.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The name reports give the test read from standard input (`-`)
    /// [default: <stdin>].
    #[arg(long, value_name = "NAME")]
    stdin_filename: Option<String>,
    #[arg(help_heading = "Output", long, value_enum, default_value = "text")]
    format: Format,
    /// Colour the text report and diagnostics: `auto` on a terminal
    /// unless `NO_COLOR` is set (https://no-color.org).
    #[arg(
        help_heading = "Output",
        long,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    color: ColorChoice,
    #[command(flatten)]
    model: ModelArgs,
    /// Stop a test's search after this many states (reported as `stop`)
    /// [default: 2000000].
    #[arg(help_heading = "Limits", long, value_name = "MAX_STATES", value_parser = parse_count)]
    max_states: Option<u64>,
    /// Stop a test's search after this many seconds (reported as `stop`).
    #[arg(help_heading = "Limits", long, value_name = "SECS", value_parser = parse_secs)]
    timeout: Option<Duration>,
    /// One line per test: no findings or witnesses.
    #[arg(help_heading = "Output", long, short)]
    quiet: bool,
    /// List every outcome the model allows per test: the final values
    /// of registers and atomically touched locations, deadlock and
    /// nontermination, with how many end configurations reach each
    /// (text and JSON; docs/litmus.md, "Outcome sets").
    #[arg(help_heading = "Output", long)]
    outcomes: bool,
    /// Stop each test's search at its first finding that its `expect`
    /// does not allow (reported as `stop: fail-fast`; the test fails
    /// either way); `--fail-fast=run` also stops the whole run at the
    /// first failing test (the others: `stop: interrupted`). With several
    /// jobs, which finding or test comes first may differ between runs.
    #[arg(help_heading = "Limits", long, value_enum, value_name = "SCOPE", num_args = 0..=1, require_equals = true, default_missing_value = "test")]
    fail_fast: Option<FailFast>,
    /// Leave elapsed times out of the text report.
    #[arg(help_heading = "Output", long)]
    no_timing: bool,
    /// Check under this progress model instead of the file's `progress`
    /// line (unfair, fair, hsa, obe, lobe, hsa-obe, each with -strong; cuda).
    #[arg(help_heading = "Model", long, value_name = "NAME")]
    progress: Option<String>,
    /// Skip the fair-cycle (nontermination) analysis (for benchmarks).
    #[arg(long, hide = true)]
    no_liveness: bool,
    /// Reduction off (docs/explorer.md, "Reductions"; verdicts do not
    /// change, only the states): keep the whole history in every state.
    #[arg(help_heading = "Reductions", long)]
    no_compact: bool,
    /// Reduction off: keep a phase's arrivals in the order they happened.
    #[arg(help_heading = "Reductions", long)]
    no_canonical: bool,
    /// Reduction off: do not merge states that differ by a renaming of
    /// interchangeable threads.
    #[arg(help_heading = "Reductions", long)]
    no_symmetry: bool,
    /// Stop a test's search (`stop: memory-limit`) before it holds
    /// more than this many MiB [default: 2048; a search's peak stays
    /// within it plus 64 MiB].
    #[arg(help_heading = "Limits", long, value_name = "MIB", value_parser = parse_mib)]
    max_memory: Option<u64>,
    /// Threads (default: every core): several files are checked side
    /// by side, one search each; a single file's search uses them all.
    /// The output, witnesses and order included, does not depend on it.
    #[arg(help_heading = "Limits", long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Reduction off: delay waits on completed phases, and arrives into
    /// open phases, like any other step.
    #[arg(help_heading = "Reductions", long)]
    no_fuse: bool,
    /// Reduction off: interleave the steps of threads that share no
    /// barrier or location, and every step a barrier phase requires
    /// (partial-order reduction).
    #[arg(help_heading = "Reductions", long)]
    no_por: bool,
    /// Store every state, also one whose reduced choices are a single
    /// step (chains).
    #[arg(help_heading = "Reductions", long)]
    no_chain: bool,
    /// Search every interleaving of a deterministic program too, rather
    /// than deciding it on one execution whose phases no other order
    /// could fill otherwise.
    #[arg(help_heading = "Reductions", long)]
    no_det: bool,
    /// Print the process's peak resident memory to stderr at the end
    /// (for benchmarks).
    #[arg(long, hide = true)]
    report_peak_memory: bool,
    /// Write every test's verdict to FILE (JSON, sorted by file) for a
    /// later `--baseline` run.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Compare every test's verdict with FILE (from `--write-baseline`)
    /// instead of its `expect` line: exit 1 when any differs, with a
    /// table of the differences.
    #[arg(help_heading = "CI gate", long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    #[command(flatten)]
    shard: ShardArg,
    #[command(flatten)]
    kernel: Box<crate::kernels::KernelArgs>,
    #[command(flatten)]
    project: crate::config::ConfigArgs,
}

impl CheckArgs {
    /// The search options, and how the run reports. Read in this order, the
    /// first that fails refusing the run: the progress model, the model,
    /// the threads, the baseline.
    fn into_options(self) -> Result<(CheckOptions, CheckRun), Refusal> {
        let progress = self
            .progress
            .as_deref()
            .map(bc_models::ProgressModel::parse)
            .transpose()
            .map_err(Refusal::Usage)?;
        let model = self.model.load().map_err(Refusal::Usage)?;
        // The project configuration: its values stand where a flag is not given.
        let config = self.project.load().map_err(Refusal::Input)?;
        let search = Search {
            max_states: (self.max_states.or(config.max_states)).unwrap_or_else(default_max_states),
            timeout: self.timeout.or(config.timeout),
            max_memory_mib: self.max_memory.or(config.max_memory),
            jobs: jobs_or_cores(self.jobs.or(config.jobs))?,
            // SARIF and JUnit have no place for outcomes.
            outcomes: self.outcomes && matches!(self.format, Format::Text | Format::Json),
            no_liveness: self.no_liveness,
            no_compact: self.no_compact,
            no_canonical: self.no_canonical,
            no_symmetry: self.no_symmetry,
            no_fuse: self.no_fuse,
            no_por: self.no_por,
            no_chain: self.no_chain,
            no_det: self.no_det,
            fail_fast: self.fail_fast.is_some(),
        };
        let mut opts = search.options(model, progress.map_or(ProgressChoice::File, ProgressChoice::Named));
        opts.default_model = config.model;
        // The configuration's baseline judges a run that names none and
        // writes none.
        let baseline_path = match (&self.baseline, &self.write_baseline) {
            (Some(b), _) => Some(b.clone()),
            (None, None) => config.baseline,
            (None, Some(_)) => None,
        };
        let baseline = match &baseline_path {
            Some(path) => Some(read_baseline(path).map_err(|e| Refusal::Usage(format!("{}: {e}", path.display())))?),
            None => None,
        };
        use std::io::IsTerminal;
        let run = CheckRun {
            color_out: self.color.on(io::stdout().is_terminal()),
            color_err: self.color.on(io::stderr().is_terminal()),
            paths: self.paths,
            stdin_filename: self.stdin_filename,
            format: self.format,
            quiet: self.quiet,
            timing: !self.no_timing,
            shard: self.shard.shard,
            write_baseline: self.write_baseline,
            baseline,
            peak_memory: self.report_peak_memory,
            kernel: self.kernel,
            stop_run_on_failure: self.fail_fast == Some(FailFast::Run),
            exclude: config.exclude,
        };
        Ok((opts, run))
    }

    /// `barrier-check check`.
    pub fn run(self) -> io::Result<ExitCode> {
        let (opts, run) = match self.into_options() {
            Ok(o) => o,
            Err(r) => return r.report(),
        };
        let code = check(&opts, &run)?;
        if run.peak_memory {
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
}

/// A baseline file (`--baseline`, from `--write-baseline`).
fn read_baseline(path: &Path) -> Result<Vec<bc_report::baseline::Entry>, String> {
    read_capped(path, MAX_BASELINE_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .and_then(|t| bc_report::wire::parse_baseline(&t))
}

/// What a `check` run checks, and how it reports.
struct CheckRun {
    /// Colours on stdout (the report) and stderr (diagnostics).
    color_out: bool,
    color_err: bool,
    paths: Vec<PathBuf>,
    stdin_filename: Option<String>,
    format: Format,
    quiet: bool,
    timing: bool,
    shard: Option<(usize, usize)>,
    write_baseline: Option<PathBuf>,
    baseline: Option<Vec<bc_report::baseline::Entry>>,
    /// Print the peak resident memory at the end.
    peak_memory: bool,
    kernel: Box<crate::kernels::KernelArgs>,
    /// `--fail-fast=run`: the first failing test cancels the others.
    stop_run_on_failure: bool,
    /// What folder walks leave out (the configuration's `exclude`).
    exclude: crate::inputs::Exclude,
}

/// Checks the files side by side and prints their reports: text as each
/// file is done (behind the progress bar), JSON, SARIF and JUnit at the end.
fn check(opts: &CheckOptions, run: &CheckRun) -> io::Result<ExitCode> {
    // `-`: one litmus test from standard input, named `--stdin-filename`.
    let stdin = if run.paths.iter().any(|p| p.as_os_str() == "-") {
        let name = run.stdin_filename.clone().unwrap_or_else(|| "<stdin>".into());
        Some(match read_stdin(MAX_LITMUS_BYTES) {
            Ok(bytes) => Input::Text(name, bytes),
            Err(e) => Input::Unreadable(PathBuf::from(name), e),
        })
    } else {
        None
    };
    let files = match files_of_kinds(&run.paths, run.shard, run.kernel.folder_kinds(), stdin, &run.exclude) {
        Ok(f) => crate::kernels::expand(f, &run.kernel, opts.model.as_ref(), opts.jobs()),
        Err(e) => return usage_error(&e),
    };
    let text_opts = TextOptions {
        witnesses: !run.quiet,
        timing: run.timing,
        color: run.color_out,
    };
    let mut progress = Progress::new(files.len());
    // Ctrl-C or SIGTERM stops every search where it is (`stop:
    // interrupted`, its findings kept) and the report is printed in full.
    crate::signals::catch_interrupts();
    let mut counting = opts.counting_into(progress.counters());
    counting.search.cancel = Some(&crate::signals::CANCEL);
    let current = progress.current();
    let check_one = |input: &Input, o: &CheckOptions| {
        if let Ok(mut c) = current.lock() {
            *c = input_name(input);
        }
        crate::inputs::check_file(input, o)
    };
    let result: io::Result<Vec<_>> = barrier_check::check_all(&files, &counting, check_one, |r| {
        progress.suspend(|| -> io::Result<()> {
            if run.format == Format::Text {
                if r.is_error() {
                    let text = bc_report::diagnostic::render_all(&r.source, &r.diagnostics);
                    let painted = bc_report::text::paint("error:", "1;31", true);
                    err(&if run.color_err {
                        text.replace(": error: ", &format!(": {painted} "))
                    } else {
                        text
                    })?;
                }
                // Against a baseline each line says whether the verdict
                // is the baseline's, not whether it is the `expect`.
                let old = run.baseline.as_ref().map(|b| bc_report::baseline::verdict_in(b, r));
                out(&bc_report::text::test_against(r, &text_opts, old.as_deref()))?;
                io::stdout().flush()?;
            }
            Ok(())
        })?;
        progress.done_one(r.pass());
        if run.stop_run_on_failure && !r.pass() {
            // `--fail-fast=run`: the flag Ctrl-C sets, without a signal
            // (so the exit code stays the verdicts').
            crate::signals::CANCEL.store(true, std::sync::atomic::Ordering::SeqCst);
        }
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
            match &changes {
                // The summary judges against the baseline too.
                Some(changes) => out(&format!(
                    "{} as in the baseline, {} changed{}\n",
                    reports.len() - changes.len(),
                    changes.len(),
                    if summary.stopped > 0 {
                        format!(" ({} stopped at a limit)", summary.stopped)
                    } else {
                        String::new()
                    }
                ))?,
                None => out(&format!("{}\n", bc_report::text::summary(&summary)))?,
            }
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
        Format::Github => {
            out(&bc_report::github::to_github(&reports, changes.as_deref()))?;
        }
    }
    io::stdout().flush()?;
    if let Some(path) = &run.write_baseline {
        if let Err(e) = write_file(path, bc_report::wire::baseline_json(&reports).as_bytes()) {
            return usage_error(&format!("{}: {e}", path.display()));
        }
    }
    Ok(if let Some(sig) = crate::signals::interrupted() {
        // The shell's convention for a run a signal ended (130 for Ctrl-C),
        // after the report.
        ExitCode::from(128 + sig as u8)
    } else if !inputs_ok {
        ExitCode::from(2)
    } else if run.write_baseline.is_some() && changes.is_none() {
        // Writing a baseline records the verdicts, whatever they are.
        ExitCode::SUCCESS
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

/// An input's name for the progress bar.
fn input_name(input: &Input) -> String {
    match input {
        Input::File(p) | Input::Unreadable(p, _) => p.display().to_string(),
        Input::Kernel(job) => job.test.clone(),
        Input::Failed(r) => r.source.name.clone(),
        Input::Text(name, _) => name.clone(),
    }
}
