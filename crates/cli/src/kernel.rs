//! Compiled kernels (docs/ptx.md), without I/O: a PTX module's text and
//! the launch asked for become one [`KernelJob`] per `.entry` (a test
//! named `file::entry`), each checked by [`check_kernel`] into the same
//! [`TestReport`] a litmus file gives. The binary reads `.ptx` files, runs
//! nvcc for `.cu` files and merges the header's flags with its own.

use crate::CheckOptions;
use bc_ptx::Launch;
use bc_report::TestReport;
use bc_syntax::{Diagnostic, FindingKind, SourceFile, Span};
use std::collections::BTreeSet;
use std::sync::Arc;

/// One entry of a module to check.
#[derive(Clone, Debug)]
pub struct KernelJob {
    /// The module: its display name (`k.ptx`, or `k.cu.ptx` for nvcc's
    /// output of `k.cu`) and text.
    pub source: Arc<SourceFile>,
    pub entry: String,
    /// `file::entry`.
    pub test: String,
    pub launch: Launch,
    /// `--model`, else the module's `.target`.
    pub model: Option<bc_models::Model>,
    pub expected: Option<BTreeSet<FindingKind>>,
    pub expect_span: Option<Span>,
}

/// The launch flags a header or a command line gives.
#[derive(Clone, Debug, Default)]
pub struct KernelFlags {
    pub entry: Option<String>,
    pub block: Option<[u64; 3]>,
    pub grid: Option<[u64; 3]>,
    pub cluster: Option<[u64; 3]>,
    pub params: Vec<(String, i64)>,
    pub arch: Option<String>,
    /// `--no-prune` (command line only).
    pub every_access: bool,
    /// `--cooperative`: a cooperative launch.
    pub cooperative: bool,
    /// The model (a header's `--model`; the command line's `--model` wins).
    pub model: Option<String>,
}

impl KernelFlags {
    /// Reads header flags (`--block 64 --param n=3 --entry k --arch sm_90
    /// --model cuda-sm90-nofence`).
    pub fn parse(args: &[String]) -> Result<KernelFlags, String> {
        let mut f = KernelFlags::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (key, inline) = match a.split_once('=') {
                Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
                _ => (a.as_str(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or(format!("`{key}` needs a value"))
            };
            match key {
                "--entry" => f.entry = Some(value()?),
                "--block" => f.block = Some(bc_ptx::parse_dims(&value()?)?),
                "--grid" => f.grid = Some(bc_ptx::parse_dims(&value()?)?),
                "--cluster" => f.cluster = Some(bc_ptx::parse_dims(&value()?)?),
                "--param" => f.params.push(bc_ptx::parse_param(&value()?)?),
                "--arch" => f.arch = Some(value()?),
                "--model" => f.model = Some(value()?),
                "--cooperative" if inline.is_none() => f.cooperative = true,
                other => {
                    return Err(format!(
                        "unknown flag `{other}` (known: --entry, --block, --grid, --cluster, --cooperative, --param, --arch, --model)"
                    ))
                }
            }
        }
        Ok(f)
    }

    /// These flags, overridden by `over` where it says something.
    pub fn merged(&self, over: &KernelFlags) -> KernelFlags {
        let mut params = self.params.clone();
        params.extend(over.params.iter().cloned());
        KernelFlags {
            entry: over.entry.clone().or_else(|| self.entry.clone()),
            block: over.block.or(self.block),
            grid: over.grid.or(self.grid),
            cluster: over.cluster.or(self.cluster),
            params,
            arch: over.arch.clone().or_else(|| self.arch.clone()),
            model: over.model.clone().or_else(|| self.model.clone()),
            every_access: self.every_access || over.every_access,
            cooperative: self.cooperative || over.cooperative,
        }
    }

    pub fn launch(&self) -> Launch {
        Launch {
            block: self.block,
            grid: self.grid,
            cluster: self.cluster,
            params: self.params.iter().cloned().collect(),
            every_access: self.every_access,
            cooperative: self.cooperative,
        }
    }
}

/// The jobs of one module: one per entry (or the one `--entry` names), or
/// the report of a module that cannot be checked. `file` names the tests
/// (`file::entry`); `header` gives the expectations, whose spans are
/// kept when `spans_in_source` (the header is in this source), and each
/// entry's own flags (`// barrier-check NAME: FLAGS`), which apply over
/// the file's header `flags` and under the command line's `cli`.
pub fn kernel_jobs(
    source: SourceFile,
    file: &str,
    flags: &KernelFlags,
    cli: &KernelFlags,
    model: Option<bc_models::Model>,
    header: &bc_ptx::Header,
    spans_in_source: bool,
) -> Result<Vec<KernelJob>, Box<TestReport>> {
    let (module, diags) = bc_ptx::parse(&source.text);
    if !diags.is_empty() {
        let mut diags = diags;
        bc_report::diagnostic::cap(&mut diags);
        return Err(module_error(source, file, diags));
    }
    let all = bc_ptx::entries(&module);
    // Each entry's own header line: it names an entry and sets its launch
    // or model only (the file is compiled once, for one architecture).
    let mut errors = Vec::new();
    let at = |span: Span, m: String| {
        if spans_in_source {
            Diagnostic::error(span, m)
        } else {
            Diagnostic::file_error(m)
        }
    };
    let mut own: Vec<(&str, KernelFlags)> = Vec::new();
    for (name, args, span) in &header.entry_args {
        if !all.iter().any(|e| bc_ptx::entry_matches(e, name)) {
            errors.push(at(
                *span,
                format!("`// barrier-check {name}:` names no entry of this module"),
            ));
        }
        match KernelFlags::parse(args) {
            Ok(f) if f.entry.is_some() || f.arch.is_some() => errors.push(at(
                *span,
                format!("`// barrier-check {name}:` sets `--entry` or `--arch`, which are the file's (give them in `// barrier-check:`)"),
            )),
            Ok(f) => own.push((name, f)),
            Err(e) => errors.push(at(*span, format!("in the `// barrier-check {name}:` header: {e}"))),
        }
    }
    for (name, _, span) in &header.expect_entry {
        if !all.iter().any(|e| bc_ptx::entry_matches(e, name)) {
            errors.push(at(*span, format!("`// expect {name}:` names no entry of this module")));
        }
    }
    if !errors.is_empty() {
        return Err(module_error(source, file, errors));
    }
    let chosen: Vec<&str> = match cli.entry.as_ref().or(flags.entry.as_ref()) {
        Some(e) => all.iter().copied().filter(|n| bc_ptx::entry_matches(n, e)).collect(),
        None => all.clone(),
    };
    if chosen.is_empty() {
        let why = match cli.entry.as_ref().or(flags.entry.as_ref()) {
            Some(e) => format!(
                "no entry `{e}` in this module (entries: {})",
                all.iter().map(|n| bc_ptx::short_name(n)).collect::<Vec<_>>().join(", ")
            ),
            None => "the module has no `.entry` with a body".to_string(),
        };
        return Err(module_error(source, file, vec![Diagnostic::file_error(why)]));
    }
    let target = bc_ptx::model_for_target(&module);
    let mut jobs = Vec::new();
    let source = Arc::new(source);
    for e in chosen {
        let lines = own.iter().filter(|(n, _)| bc_ptx::entry_matches(e, n));
        let flags = lines.fold(flags.clone(), |f, (_, o)| f.merged(o)).merged(cli);
        let named = flags.model.as_deref().map(bc_models::lookup).transpose();
        let model = match (&model, named) {
            (Some(m), _) => m.clone(),
            (None, Err(e)) => return Err(module_error((*source).clone(), file, vec![Diagnostic::file_error(e)])),
            (None, Ok(Some(m))) => m,
            (None, Ok(None)) => match target
                .clone()
                .and_then(|n| bc_models::lookup(n).map_err(Diagnostic::file_error))
            {
                Ok(m) => m,
                Err(d) => return Err(module_error((*source).clone(), file, vec![d])),
            },
        };
        // The source name when it is unique among the entries.
        let short = bc_ptx::short_name(e);
        let unique = all.iter().filter(|n| bc_ptx::short_name(n) == short).count() == 1;
        let expected = header.expect_of(e);
        jobs.push(KernelJob {
            source: source.clone(),
            entry: e.to_string(),
            test: format!("{file}::{}", if unique { &*short } else { e }),
            launch: flags.launch(),
            model: Some(model),
            expected: expected.as_ref().map(|(k, _)| k.clone()),
            expect_span: expected.filter(|_| spans_in_source).map(|(_, s)| s),
        });
    }
    Ok(jobs)
}

/// The report of a module that cannot be checked, named after its file.
fn module_error(source: SourceFile, file: &str, diags: Vec<Diagnostic>) -> Box<TestReport> {
    let mut r = TestReport::bare(source, diags);
    r.test = Some(file.to_string());
    Box::new(r)
}

/// Lowers one entry (for `graph`): the program, or every error.
pub fn lower_kernel(job: &KernelJob, model: Option<bc_models::Model>) -> Result<bc_graph::Program, Vec<Diagnostic>> {
    let model = model
        .or_else(|| job.model.clone())
        .ok_or_else(|| vec![Diagnostic::file_error("no model")])?;
    let (module, _) = bc_ptx::parse(&job.source.text);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        bc_ptx::lower_entry(&module, &job.source.text, &job.test, &job.entry, &job.launch, model)
    }))
    .unwrap_or_else(|payload| Err(vec![crate::internal_error(payload.as_ref())]))
}

/// Lowers and explores one entry (a panic is an internal error of the
/// entry, as for a litmus file).
pub fn check_kernel(job: &KernelJob, opts: &CheckOptions) -> TestReport {
    let run = || {
        let mut report = TestReport::bare((*job.source).clone(), Vec::new());
        report.test = Some(job.test.clone());
        let model = opts.model.clone().or_else(|| job.model.clone());
        report.model = model.as_ref().map(|m| m.name.clone());
        report.expected = job.expected.clone();
        report.expect_span = job.expect_span;
        let Some(model) = model else {
            report.diagnostics.push(Diagnostic::file_error("no model"));
            return report;
        };
        let (module, _) = bc_ptx::parse(&job.source.text);
        // `--timeout` covers the lowering (the pre-evaluation of every
        // thread) and the search together.
        let start = std::time::Instant::now();
        let limit = opts.search.limits.time;
        let deadline = limit.map(|t| start + t);
        match bc_ptx::lower_entry_until(
            &module,
            &job.source.text,
            &job.test,
            &job.entry,
            &job.launch,
            model,
            deadline,
        ) {
            Ok(program) => {
                let mut opts = opts.clone();
                opts.search.limits.time = limit.map(|t| t.saturating_sub(start.elapsed()));
                report.outcome = Some(crate::explore_program(program, &opts, job.expected.as_ref()));
            }
            Err(bc_ptx::LowerError::Timeout) => report.outcome = Some(timed_out_in_lowering(start.elapsed())),
            Err(bc_ptx::LowerError::Input(mut ds)) => {
                ds.sort_by_key(|d| d.span.map(|s| (s.start, s.end)));
                ds.dedup();
                bc_report::diagnostic::cap(&mut ds);
                report.diagnostics = ds;
            }
        }
        report
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|payload| {
        TestReport::bare((*job.source).clone(), vec![crate::internal_error(payload.as_ref())])
    })
}

/// The answer of an entry whose lowering outlived `--timeout`: no
/// findings, no states, `stop: timeout` (inconclusive, never a pass).
fn timed_out_in_lowering(elapsed: std::time::Duration) -> bc_explore::Outcome {
    bc_explore::Outcome {
        findings: Vec::new(),
        stats: bc_explore::Stats {
            states: 0,
            stored: 0,
            executions: 0,
            elapsed,
            one_run: false,
        },
        stop: bc_explore::Stop::Timeout,
        operational: Default::default(),
        judged: Default::default(),
        objectless: Default::default(),
        internal_errors: Vec::new(),
        outcomes: None,
    }
}
