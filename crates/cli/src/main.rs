//! `barrier-check`: the command line. The only crate that touches files,
//! the environment and standard output.

/// Explorer states are many small vectors cloned and freed at a high rate;
/// glibc's allocator spent most of the search in consolidation and chunk
/// unlinking (perf), and serializes worker threads on its arenas.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod check;
mod config;
mod diff;
mod emit;
mod explain;
mod flags;
mod graph;
mod hw;
mod inputs;
mod kernels;
mod models;
mod output;
mod progress;
mod signals;

use clap::{Parser, Subcommand};
use output::{err, stdout_open, EXIT_OUTPUT};
use std::io::{self, Write};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "barrier-check",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("BC_GIT_HASH"), ")"),
    about = "Exhaustive execution-model checker for GPU barrier litmus tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check litmus files, PTX modules (.ptx) and CUDA files (.cu, compiled
    /// by nvcc); directories are searched for *.litmus and *.ptx.
    #[command(
        after_help = "Exit codes: 0 every verdict is as expected; 1 some test differs, or a search \
stopped at a limit (inconclusive); 2 usage error, unreadable file or parse error; 3 the report \
could not be written (disk full, closed stdout, broken pipe); 130/143 interrupted by Ctrl-C or SIGTERM (after the report)."
    )]
    Check(check::CheckArgs),
    /// Show one finding's witness execution: as text, or as a DOT graph
    /// (threads as columns, program order, participates-in, bmo, stuck
    /// waits, and the interleaving with a lasso's cycle).
    Explain(explain::ExplainArgs),
    /// Check a corpus under two models and list the tests whose verdicts
    /// differ, with the witnesses of both (exit 1 when any differs).
    Diff(diff::DiffArgs),
    /// Print a test's operation graph (per-thread control flow and
    /// thread-barrier-order).
    Graph(graph::GraphArgs),
    /// List the built-in models, or show one.
    Models(models::ModelsArgs),
    /// Write a program per test for running it on hardware
    /// (docs/hardware.md).
    Emit {
        #[command(subcommand)]
        target: emit::EmitTarget,
    },
    /// Hold verdicts against a GPU: run emitted CUDA harnesses, compare
    /// what they observed with the model (docs/hardware.md).
    Hw {
        #[command(subcommand)]
        command: hw::HwCommand,
    },
    /// Print a shell completion script to standard output (e.g.
    /// `barrier-check completions bash > /etc/bash_completion.d/barrier-check`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to standard output (e.g.
    /// `barrier-check man > barrier-check.1`).
    Man,
}

fn main() -> ExitCode {
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

/// Parses the command line (help and version on stdout, usage errors exit
/// 2) and runs the command.
fn run() -> io::Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                // Help and version are the report.
                stdout_open()?;
            }
            if !e.use_stderr() {
                e.print()?;
                return Ok(ExitCode::SUCCESS);
            }
            // Usage errors carry the program's prefix, as every other
            // error of the tool does (`barrier-check: error: ...`).
            err(&format!("barrier-check: {}", e.render()))?;
            return Ok(ExitCode::from(2));
        }
    };
    match cli.command {
        Command::Check(args) => args.run(),
        Command::Explain(args) => args.run(),
        Command::Diff(args) => args.run(),
        Command::Graph(args) => args.run(),
        Command::Models(args) => args.run(),
        Command::Emit { target } => target.run(),
        Command::Hw { command } => command.run(),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "barrier-check",
                &mut script,
            );
            io::stdout().write_all(&script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut page = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut page)?;
            io::stdout().write_all(&page)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
