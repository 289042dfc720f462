//! `barrier-check explain`: one finding's witness execution, as text or as
//! a DOT graph.

use crate::flags::{jobs_or_cores, ModelArgs};
use crate::inputs::check_file;
use crate::output::{err, out, Refusal};
use barrier_check::options::{default_max_states, Search};
use barrier_check::{CheckOptions, ProgressChoice};
use clap::ValueEnum;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

/// `explain`'s output formats.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    Text,
    Dot,
    /// `{"schema": 1, "file", "test", "model", "finding"}`, the finding as
    /// in `check --format json`.
    Json,
}

/// `explain`'s command line.
#[derive(clap::Args)]
pub struct ExplainArgs {
    file: PathBuf,
    /// The finding: its kind (`deadlock`, `ub(stale-phase)`) or its
    /// 1-based place in the report [default: the first].
    #[arg(long, value_name = "K")]
    finding: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
    #[command(flatten)]
    model: ModelArgs,
    /// A `.ptx` or `.cu` file's launch (docs/ptx.md); a module of several
    /// entries needs `--entry`.
    #[command(flatten)]
    kernel: Box<crate::kernels::KernelArgs>,
    #[command(flatten)]
    project: crate::config::ConfigArgs,
}

impl ExplainArgs {
    /// The search options: the project configuration's model and limits
    /// (docs/litmus.md, "Project configuration"), else the explorer's
    /// defaults, on every core.
    fn options(&self) -> Result<CheckOptions, Refusal> {
        let model = self.model.load().map_err(Refusal::Usage)?;
        let config = self.project.load().map_err(Refusal::Input)?;
        let search = Search {
            max_states: config.max_states.unwrap_or_else(default_max_states),
            timeout: config.timeout,
            max_memory_mib: config.max_memory,
            jobs: jobs_or_cores(config.jobs)?,
            ..Search::default()
        };
        let mut opts = search.options(model, ProgressChoice::File);
        opts.default_model = config.model;
        Ok(opts)
    }

    /// `barrier-check explain FILE`: exit 1 when the file has no such
    /// finding, 2 when it does not check.
    pub fn run(self) -> io::Result<ExitCode> {
        let opts = match self.options() {
            Ok(o) => o,
            Err(r) => return r.report(),
        };
        // A kernel file is one input per entry: explain needs exactly one.
        let input = match crate::kernels::one_entry(&self.file, &self.kernel, opts.model.as_ref()) {
            Ok(i) => i,
            Err(m) => {
                err(&format!("barrier-check: error: {m}\n"))?;
                return Ok(ExitCode::from(2));
            }
        };
        let r = check_file(&input, &opts);
        if r.is_error() {
            err(&bc_report::diagnostic::render_all(&r.source, &r.diagnostics))?;
            return Ok(ExitCode::from(2));
        }
        // A kind that no finding can have is a usage error (exit 2), with
        // the nearest kind's name; a real kind the file does not have is
        // an answer (exit 1).
        if let Some(k) = self.finding.as_deref().filter(|k| k.parse::<usize>().is_err()) {
            if bc_syntax::FindingKind::parse(k).is_none() {
                let kinds = bc_syntax::kinds::finding_kind_names();
                let hint = bc_syntax::kinds::closest(k, kinds.iter().map(String::as_str))
                    .map(|c| format!(" (did you mean `{c}`?)"))
                    .unwrap_or_default();
                err(&format!(
                    "barrier-check: error: `--finding {k}`: not a finding kind or a finding's number{hint}\n"
                ))?;
                return Ok(ExitCode::from(2));
            }
        }
        let findings = r.outcome.as_ref().map_or(&[][..], |o| &o.findings[..]);
        let chosen = match &self.finding {
            None => findings.first(),
            Some(k) => match k.parse::<usize>() {
                Ok(i) => i.checked_sub(1).and_then(|i| findings.get(i)),
                Err(_) => findings.iter().find(|f| f.kind.to_string() == *k),
            },
        };
        let Some(f) = chosen else {
            // A stopped search is never an answer of `ok`: say where it stopped.
            let verdict = bc_report::verdict_text(&r.verdict());
            let verdict = match r.outcome.as_ref().map(|o| o.stop) {
                Some(stop) if stop != bc_explore::Stop::Exhausted => {
                    format!("the search stopped: {}; verdict so far: {verdict}", stop.name())
                }
                _ => format!("verdict: {verdict}"),
            };
            err(&format!(
                "barrier-check: {}: no such finding ({verdict})\n",
                self.file.display(),
            ))?;
            return Ok(ExitCode::from(1));
        };
        match self.format {
            ExplainFormat::Text => out(&bc_report::text::finding(&r, f))?,
            ExplainFormat::Dot => out(&bc_report::explain::to_dot(&r, f))?,
            ExplainFormat::Json => out(&format!("{}\n", bc_report::wire::explain_json(&r, f)))?,
        }
        Ok(ExitCode::SUCCESS)
    }
}
