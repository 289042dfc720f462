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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphFormat {
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
        /// Worker threads per search (default: every core). The answer,
        /// witnesses included, does not depend on it.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// Delay waits on completed phases like any other step.
        #[arg(long, hide = true)]
        no_fuse: bool,
        /// Print the process's peak resident memory to stderr at the end
        /// (for benchmarks).
        #[arg(long, hide = true)]
        report_peak_memory: bool,
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
        } => {
            if let Some(p) = &progress {
                if bc_explore::liveness::Progress::parse(p).is_none() {
                    return usage_error(&format!("unknown progress model `{p}`"));
                }
            }
            let model = match load_model(&model) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            let timeout = match timeout {
                Some(t) if !(t > 0.0 && t.is_finite()) => {
                    return usage_error("--timeout needs a positive number of seconds")
                }
                Some(t) => Some(Duration::from_secs_f64(t)),
                None => None,
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
                    jobs: jobs
                        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                        .max(1),
                    verify_encoding: false,
                },
                progress,
            };
            let code = check(&paths, format, &opts, quiet, !no_timing);
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
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        return Model::from_toml(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()));
    }
    Ok(None)
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

fn check(paths: &[PathBuf], format: Format, opts: &CheckOptions, quiet: bool, timing: bool) -> ExitCode {
    let files = match collect(paths) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    if files.is_empty() {
        return usage_error("no .litmus files found");
    }
    let text_opts = TextOptions {
        witnesses: !quiet,
        timing,
    };
    let mut reports = Vec::new();
    let mut unreadable = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for f in &files {
        let name = f.display().to_string();
        let bytes = match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("barrier-check: error: {name}: {e}");
                unreadable = true;
                continue;
            }
        };
        let r = check_bytes(&name, &bytes, opts);
        if format == Format::Text {
            if r.is_error() {
                eprint!("{}", bc_report::diagnostic::render_all(&r.source, &r.diagnostics));
            }
            let _ = out.write_all(bc_report::text::test(&r, &text_opts).as_bytes());
            let _ = out.flush();
        }
        reports.push(r);
    }
    let summary = bc_report::summarize(&reports);
    match format {
        Format::Text => {
            let _ = writeln!(out, "{}", bc_report::text::summary(&summary));
        }
        Format::Json => {
            let _ = writeln!(out, "{}", bc_report::wire::to_json(&reports));
        }
    }
    if unreadable || summary.errors > 0 {
        ExitCode::from(2)
    } else if summary.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
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
