//! `barrier-check diff`: a corpus checked under two models, listing the
//! tests whose verdicts differ with the witnesses of both.

use crate::flags::{jobs_or_cores, parse_count, parse_jobs, parse_mib, parse_secs, ShardArg};
use crate::inputs::{check_files, files_of, read_model_file};
use crate::output::{err, out, usage_error, Refusal};
use barrier_check::options::{default_max_states, Search};
use barrier_check::{CheckOptions, ProgressChoice};
use bc_models::Model;
use bc_report::text::TextOptions;
use bc_report::TestReport;
use clap::ValueEnum;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `diff` reports in text or JSON.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
}

/// `diff`'s command line.
#[derive(clap::Args)]
pub struct DiffArgs {
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
    #[arg(long, default_value_t = default_max_states(), value_parser = parse_count)]
    max_states: u64,
    /// Stop a test's search after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    timeout: Option<Duration>,
    /// Stop a test's search (`stop: memory-limit`) before it holds more
    /// than this many MiB, as for `check` [default: 2048].
    #[arg(long, value_name = "MIB", value_parser = parse_mib)]
    max_memory: Option<u64>,
    /// Threads, as for `check`.
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// One line per flipped test: no witnesses.
    #[arg(long, short)]
    quiet: bool,
    /// Stop at the first file with a flipped test: files are checked one
    /// at a time, in order, under both models (the summary says where it
    /// stopped).
    #[arg(long)]
    fail_fast: bool,
    #[command(flatten)]
    shard: ShardArg,
}

/// A `diff` run: the check options under the old and the new model, each
/// with the model's label (its name or its file).
struct DiffRun {
    paths: Vec<PathBuf>,
    old: (String, CheckOptions),
    new: (String, CheckOptions),
    format: DiffFormat,
    shard: Option<(usize, usize)>,
    quiet: bool,
    fail_fast: bool,
}

impl DiffArgs {
    /// The check options under each of the two models (the `--model`s
    /// first, then the `--model-file`s; the first is the old one).
    fn into_options(self) -> Result<DiffRun, Refusal> {
        let mut named: Vec<(String, Model)> = Vec::new();
        for m in &self.models {
            let model = bc_models::lookup(m).map_err(Refusal::Usage)?;
            named.push((m.clone(), model));
        }
        for path in &self.model_files {
            let model = read_model_file(path).map_err(Refusal::Usage)?;
            named.push((path.display().to_string(), model));
        }
        if named.len() != 2 {
            return Err(Refusal::Usage(
                "diff needs two models: --model A --model B, --model A --model-file B, or two --model-file".into(),
            ));
        }
        let search = Search {
            max_states: self.max_states,
            timeout: self.timeout,
            max_memory_mib: self.max_memory,
            jobs: jobs_or_cores(self.jobs)?,
            ..Search::default()
        };
        let options = |(label, model): (String, Model)| (label, search.options(Some(model), ProgressChoice::File));
        let new = options(named.pop().expect("two models"));
        let old = options(named.pop().expect("two models"));
        Ok(DiffRun {
            paths: self.paths,
            old,
            new,
            format: self.format,
            shard: self.shard.shard,
            quiet: self.quiet,
            fail_fast: self.fail_fast,
        })
    }

    /// `barrier-check diff`: exit 1 when any verdict differs, 2 when an
    /// input could not be checked.
    pub fn run(self) -> io::Result<ExitCode> {
        match self.into_options() {
            Ok(d) => diff(&d),
            Err(r) => r.report(),
        }
    }
}

/// The corpus under the two models, paired by file.
fn diff(d: &DiffRun) -> io::Result<ExitCode> {
    let files = match files_of(&d.paths, d.shard) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    let (old, new) = (&d.old, &d.new);
    let flipped =
        |a: &TestReport, b: &TestReport| bc_report::baseline::verdict_of(a) != bc_report::baseline::verdict_of(b);
    let (before, after, stopped) = if d.fail_fast {
        // One file at a time under both models, up to the first flip.
        let (mut before, mut after) = (Vec::new(), Vec::new());
        let mut stopped = None;
        for (i, f) in files.iter().enumerate() {
            let a = check_files(std::slice::from_ref(f), &old.1, |_| Ok(()))?;
            let b = check_files(std::slice::from_ref(f), &new.1, |_| Ok(()))?;
            let flip = a.iter().zip(&b).any(|(a, b)| flipped(a, b));
            before.extend(a);
            after.extend(b);
            if flip && i + 1 < files.len() {
                stopped = Some(files.len() - i - 1);
                break;
            }
        }
        (before, after, stopped)
    } else {
        let before = check_files(&files, &old.1, |_| Ok(()))?;
        let after = check_files(&files, &new.1, |_| Ok(()))?;
        (before, after, None)
    };
    // Inputs that could not be checked, once (both runs see the same ones).
    for r in before.iter().filter(|r| r.is_error()) {
        err(&bc_report::diagnostic::render_all(&r.source, &r.diagnostics))?;
    }
    let pairs: Vec<(&TestReport, &TestReport)> = before.iter().zip(&after).filter(|(a, b)| flipped(a, b)).collect();
    match d.format {
        DiffFormat::Text => {
            let text_opts = TextOptions {
                witnesses: true,
                timing: false,
                color: false,
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
                if d.quiet {
                    continue;
                }
                for (label, r) in [(&old.0, a), (&new.0, b)] {
                    text += &format!("  under {label}:\n");
                    for line in bc_report::text::test(r, &text_opts).lines() {
                        text += &format!("    {line}\n");
                    }
                }
            }
            let rest = stopped.map_or(String::new(), |n| {
                format!("; stopped at the first flip (--fail-fast), {n} file(s) not checked")
            });
            text += &format!(
                "{} tests, {} flipped ({} -> {}){rest}\n",
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
