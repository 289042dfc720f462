//! Rendering, with no I/O: diagnostics with source excerpts, the per-test
//! text report, and the versioned JSON wire format ([`wire`]). The cli
//! crate decides where the strings go.

pub mod baseline;
pub mod diagnostic;
pub mod explain;
pub mod github;
pub mod junit;
pub mod sarif;
pub mod text;
pub mod wire;

use bc_explore::{Outcome, Stop};
use bc_syntax::{Diagnostic, FindingKind, SourceFile};
use std::collections::BTreeSet;

/// Everything known about one litmus file after checking it.
#[derive(Clone, Debug)]
pub struct TestReport {
    pub source: SourceFile,
    /// The `litmus "NAME"`, when it parsed.
    pub test: Option<String>,
    pub model: Option<String>,
    /// `None` when the file has no `expect` (it passes when ok).
    pub expected: Option<BTreeSet<FindingKind>>,
    /// Where the `expect` line is, when there is one.
    pub expect_span: Option<bc_syntax::Span>,
    /// The exploration, when the file lowered without errors.
    pub outcome: Option<Outcome>,
    /// Parse, lowering or read errors.
    pub diagnostics: Vec<Diagnostic>,
}

impl TestReport {
    /// The report of a file known only by its source so far: no test name,
    /// model, expectation or outcome, and these diagnostics.
    pub fn bare(source: SourceFile, diagnostics: Vec<Diagnostic>) -> TestReport {
        TestReport {
            source,
            test: None,
            model: None,
            expected: None,
            expect_span: None,
            outcome: None,
            diagnostics,
        }
    }

    pub fn is_error(&self) -> bool {
        self.outcome.is_none()
    }
    pub fn verdict(&self) -> BTreeSet<FindingKind> {
        self.outcome.as_ref().map(|o| o.verdict()).unwrap_or_default()
    }
    pub fn stop(&self) -> Option<Stop> {
        self.outcome.as_ref().map(|o| o.stop)
    }
    /// Passes: explored to the end, no internal error, and the verdict is
    /// exactly the expected set (or empty without `expect`).
    pub fn pass(&self) -> bool {
        match &self.outcome {
            None => false,
            Some(o) => {
                o.stop == Stop::Exhausted
                    && o.internal_errors.is_empty()
                    && self.verdict() == self.expected.clone().unwrap_or_default()
            }
        }
    }
}

/// Where a finding is in its file: the statements the explorer located it
/// at (the events the violated rule names, the stuck waits, the statements
/// spinning threads are stuck on, the assertion), else the first step of a
/// lasso's cycle, else the witness's last step; empty when the witness has
/// no steps either (a `sometimes` assertion no execution satisfies is
/// located at the assertion, so this is rare).
pub fn finding_spans(f: &bc_explore::Finding) -> Vec<bc_syntax::Span> {
    let w = &f.witness;
    if !w.spans.is_empty() {
        return w.spans.clone();
    }
    let step = w.cycle_start.and_then(|c| w.steps.get(c)).or(w.steps.last());
    step.map(|s| s.span).into_iter().collect()
}

/// Spells a verdict as `expect` does: `ok`, or kinds joined by `, `.
pub fn verdict_text(v: &BTreeSet<FindingKind>) -> String {
    if v.is_empty() {
        "ok".into()
    } else {
        v.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// Totals over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub tests: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub stopped: usize,
}

pub fn summarize(reports: &[TestReport]) -> Summary {
    let mut s = Summary {
        tests: reports.len(),
        ..Summary::default()
    };
    for r in reports {
        if r.is_error() {
            s.errors += 1;
        } else if r.pass() {
            s.passed += 1;
        } else {
            s.failed += 1;
        }
        if r.stop().is_some_and(|st| st != Stop::Exhausted) {
            s.stopped += 1;
        }
    }
    s
}
