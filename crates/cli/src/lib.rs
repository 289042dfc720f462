//! The pipeline behind the `barrier-check` command, without I/O: bytes of a
//! litmus file in, a [`TestReport`] out; [`check_all`] checks several side
//! by side, and [`options`] builds the explorer's options from what a
//! command asks. The binary's modules read files, walk directories and
//! print.
use bc_explore::SearchOptions;
use bc_models::Model;
use bc_report::TestReport;
use bc_syntax::{Diagnostic, Severity, SourceFile, Span};

pub mod kernel;
pub mod options;
pub mod schedule;

/// Which progress model a check runs under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgressChoice {
    /// The file's `progress` line, else its model's own.
    #[default]
    File,
    /// The model's own, whatever the file's `progress` line says: `hw
    /// compare` holds a run against what the target promises, not against
    /// a test's assumption (a test may assume weak fairness to ask a
    /// question the hardware does not promise to answer).
    Model,
    /// This one (`--progress`).
    Named(bc_models::ProgressModel),
}

/// How to check a file.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// A model that overrides the file's `model` line (`--model`, `--model-file`).
    pub model: Option<Model>,
    /// The model of a file that has no `model` line (`barrier-check.toml`'s
    /// `model`); [`CheckOptions::model`] wins over it.
    pub default_model: Option<Model>,
    /// How to search (limits, reductions, jobs).
    pub search: SearchOptions,
    /// Which progress model each check runs under.
    pub progress: ProgressChoice,
    /// Where searches add the states they store and the kinds they find
    /// (for a progress bar).
    pub counters: Option<bc_explore::Counters>,
}

/// Decodes a file's bytes; invalid UTF-8 is a diagnostic at the first bad byte.
/// A UTF-8 byte order mark at the start (editors on Windows write one) is
/// not part of the text.
pub fn decode(name: &str, bytes: &[u8]) -> (SourceFile, Option<Diagnostic>) {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => (SourceFile::new(name, text), None),
        Err(e) => {
            let at = e.valid_up_to();
            let file = SourceFile::new(name, String::from_utf8_lossy(bytes).into_owned());
            // Offsets after the first bad byte shift in the lossy text, but
            // the first one is exact.
            (
                file,
                Some(Diagnostic::error(
                    Span::new(at, at + 1),
                    "the file is not valid UTF-8 text",
                )),
            )
        }
    }
}

/// The report of an input that could not be read (missing, too large, an
/// unreadable folder): an error without a span, so every output format
/// lists it as an input error and counts it, as the exit code does.
pub fn unreadable(name: &str, why: &str) -> TestReport {
    TestReport::bare(
        SourceFile::new(name, String::new()),
        vec![Diagnostic::file_error(format!("cannot be read: {why}"))],
    )
}

/// Parses, lowers and explores one file. A panic anywhere in the pipeline
/// (a bug: the explorer hands a worker's panic to its caller) becomes an
/// internal-error diagnostic on this file, so the other files are still
/// checked and the run exits 2 instead of dying or hanging.
pub fn check_bytes(name: &str, bytes: &[u8], opts: &CheckOptions) -> TestReport {
    guarded(name, bytes, || check_bytes_unguarded(name, bytes, opts))
}

/// Checks the inputs with `check` (which reads one and hands its bytes to
/// [`check_bytes`]); `each` sees every report in input order as soon as it
/// and those before it are done, and an error from it (the output failed)
/// ends the run. Several inputs share the options' jobs (each search then
/// runs on one); a single input's search gets them all. Answers never
/// depend on it.
pub fn check_all<I: Sync, E>(
    inputs: &[I],
    opts: &CheckOptions,
    check: impl Fn(&I, &CheckOptions) -> TestReport + Sync,
    mut each: impl FnMut(&TestReport) -> Result<(), E>,
) -> Result<Vec<TestReport>, E> {
    let jobs = opts.jobs().max(1);
    let mut reports = Vec::new();
    let mut take = |r: TestReport| -> Result<(), E> {
        each(&r)?;
        reports.push(r);
        Ok(())
    };
    if jobs == 1 || inputs.len() < 2 {
        for input in inputs {
            take(check(input, opts))?;
        }
    } else {
        let one = opts.one_job();
        schedule::in_order(inputs, jobs, |input| check(input, &one), take)?;
    }
    Ok(reports)
}

/// Runs `check`; when it panics, a report for the file whose only content
/// is an internal-error diagnostic (no outcome, so it counts as an error).
fn guarded(name: &str, bytes: &[u8], check: impl FnOnce() -> TestReport) -> TestReport {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or_else(|payload| {
        let (source, _) = decode(name, bytes);
        TestReport::bare(source, vec![internal_error(payload.as_ref())])
    })
}

/// The diagnostic for a caught panic, with its message when it has one.
pub(crate) fn internal_error(payload: &(dyn std::any::Any + Send)) -> Diagnostic {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    Diagnostic::file_error(format!("internal error (please report): {msg}"))
}

fn check_bytes_unguarded(name: &str, bytes: &[u8], opts: &CheckOptions) -> TestReport {
    let (source, bad) = decode(name, bytes);
    let mut report = TestReport::bare(source, Vec::new());
    if let Some(d) = bad {
        report.diagnostics.push(d);
        return report;
    }
    let (lit, diags) = bc_syntax::parse(&report.source.text);
    report.test = lit.name.as_ref().map(|n| n.name.clone());
    // `--model` wins over the file's line, which wins over the project
    // configuration's default.
    let model = (opts.model.clone()).or_else(|| lit.model.is_none().then(|| opts.default_model.clone()).flatten());
    report.model = (model.as_ref())
        .map(|m| m.name.clone())
        .or_else(|| lit.model.as_ref().map(|m| m.name.clone()));
    report.expected = lit.expect.as_ref().map(|e| {
        e.kinds
            .iter()
            .filter_map(|k| bc_syntax::FindingKind::parse(&k.name))
            .collect()
    });
    report.expect_span = lit.expect.as_ref().map(|e| e.span);
    let result = lower_parsed(&report.source, &lit, diags, model);
    match result {
        Ok(program) => report.outcome = Some(explore_program(program, opts, report.expected.as_ref())),
        Err(mut ds) => {
            bc_report::diagnostic::cap(&mut ds);
            report.diagnostics = ds;
        }
    }
    report
}

/// Lowers a parsed file. Lowering runs even after parse errors (on the
/// recovered tree) so one run reports every error of the file.
/// Explores a lowered program under `opts`: its progress model as the
/// command chose it, counting states for the progress bar when asked.
/// Litmus files and compiled kernels (`kernel.rs`) alike.
pub(crate) fn explore_program(
    mut program: bc_graph::Program,
    opts: &CheckOptions,
    expected: Option<&std::collections::BTreeSet<bc_syntax::FindingKind>>,
) -> bc_explore::Outcome {
    // `--fail-fast`: the kinds this test allows (none without `expect`).
    let mut search = opts.search;
    if search.fail_fast.is_some() {
        search.fail_fast = Some(bc_syntax::KindSet::of(expected.into_iter().flatten()));
    }
    match opts.progress {
        ProgressChoice::File => {}
        ProgressChoice::Model => program.progress = program.model.default_progress,
        ProgressChoice::Named(p) => program.progress = p,
    }
    match &opts.counters {
        Some(c) => bc_explore::explore_counting(&program, search, c),
        None => bc_explore::explore(&program, search),
    }
}

fn lower_parsed(
    source: &SourceFile,
    lit: &bc_syntax::Litmus,
    mut diags: Vec<Diagnostic>,
    model: Option<Model>,
) -> Result<bc_graph::Program, Vec<Diagnostic>> {
    let explicit = model.is_some();
    let lowered = bc_graph::lower::resolve_model(lit, model)
        .map_err(|d| {
            // A misspelt model hides no other error: the file is lowered
            // under the nearest built-in model too, and its errors are
            // reported with the model's (all errors at once).
            let nearest = (lit.model.as_ref())
                .filter(|_| !explicit)
                .and_then(|id| bc_models::closest_builtin(&id.name))
                .and_then(|k| Some((k, bc_models::lookup(k).ok()?)));
            let mut out = vec![d];
            if let Some((name, m)) = nearest {
                if let Err(more) = bc_graph::lower(lit, &source.text, m) {
                    out.extend(more.into_iter().map(|mut e| {
                        e.notes.push(format!("lowered under `{name}`, the nearest model"));
                        e
                    }));
                }
            }
            out
        })
        .and_then(|m| bc_graph::lower(lit, &source.text, m));
    let has_errors = diags.iter().any(|d| d.severity == Severity::Error);
    match lowered {
        Ok(p) if !has_errors => Ok(p),
        Ok(_) => Err(diags),
        Err(more) => {
            diags.extend(more);
            if diags.is_empty() {
                diags.push(Diagnostic::file_error("the file does not describe a litmus test"));
            }
            diags.sort_by_key(|d| d.span.map(|s| (s.start, s.end)));
            diags.dedup();
            Err(diags)
        }
    }
}

/// Parses and lowers a file for `graph`; diagnostics on failure.
pub fn lower_bytes(
    name: &str,
    bytes: &[u8],
    model: Option<Model>,
    default_model: Option<Model>,
) -> (SourceFile, Result<bc_graph::Program, Vec<Diagnostic>>) {
    let (source, bad) = decode(name, bytes);
    if let Some(d) = bad {
        return (source, Err(vec![d]));
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (lit, diags) = bc_syntax::parse(&source.text);
        // As `check_bytes`: `model`, else the file's line, else `default_model`.
        let model = model.or_else(|| lit.model.is_none().then_some(default_model).flatten());
        lower_parsed(&source, &lit, diags, model)
    }));
    let result = result
        .unwrap_or_else(|payload| Err(vec![internal_error(payload.as_ref())]))
        .map_err(|mut ds| {
            bc_report::diagnostic::cap(&mut ds);
            ds
        });
    (source, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic in the pipeline is one file's internal error, not the run's end.
    #[test]
    fn a_panic_is_an_internal_error_of_the_file() {
        let r = guarded("t.litmus", b"litmus \"t\"\n", || panic!("boom"));
        assert!(r.is_error());
        assert_eq!(r.source.name, "t.litmus");
        assert_eq!(r.diagnostics.len(), 1);
        assert_eq!(r.diagnostics[0].message, "internal error (please report): boom");
        assert_eq!(r.diagnostics[0].span, None);
    }
}
