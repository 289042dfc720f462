//! Verdict baselines for CI gates: every test's verdict written once
//! (`check --write-baseline`), then compared with a later run (`check
//! --baseline`), and the tests whose verdicts differ between two runs
//! (`barrier-check diff`, two models). I/O-free: the cli crate reads and
//! writes the files; the JSON form is in [`crate::wire`].

use crate::{verdict_text, TestReport};
use bc_explore::Stop;

/// One test's verdict as a baseline records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub file: String,
    pub test: Option<String>,
    pub model: Option<String>,
    /// The verdict as `expect` spells it (`ok`, `deadlock, race`), with
    /// ` (stop: LIMIT)` when the search stopped at a limit, or `error` when
    /// the file did not parse or lower.
    pub verdict: String,
}

/// A test's verdict in the baseline form.
pub fn verdict_of(r: &TestReport) -> String {
    match &r.outcome {
        None => "error".into(),
        Some(o) if o.stop != Stop::Exhausted => {
            format!("{} (stop: {})", verdict_text(&o.verdict()), o.stop.name())
        }
        Some(o) => verdict_text(&o.verdict()),
    }
}

/// The baseline of a run, sorted by file (a stable order whatever the
/// paths given or the shard).
pub fn entries(reports: &[TestReport]) -> Vec<Entry> {
    let mut v: Vec<Entry> = reports
        .iter()
        .map(|r| Entry {
            file: r.source.name.clone(),
            test: r.test.clone(),
            model: r.model.clone(),
            verdict: verdict_of(r),
        })
        .collect();
    v.sort_by(|a, b| a.file.cmp(&b.file));
    v
}

/// A test whose verdict differs from the baseline (or from the other
/// model's run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub file: String,
    pub test: Option<String>,
    /// `missing` when the baseline has no entry for the file.
    pub old: String,
    pub new: String,
    /// The new run's first finding, in one line (`-` when it has none).
    pub witness: String,
}

/// The first finding of a report in one line: kind, message, and how many
/// steps its witness takes.
pub fn witness_summary(r: &TestReport) -> String {
    match r.outcome.as_ref().and_then(|o| o.findings.first()) {
        Some(f) => format!("{}: {} ({} steps)", f.kind, f.message, f.witness.steps.len()),
        None => "-".into(),
    }
}

/// The baseline's verdict for the test of report `r` (`missing` when the
/// baseline has no entry for its file).
pub fn verdict_in(baseline: &[Entry], r: &TestReport) -> String {
    baseline
        .iter()
        .find(|e| e.file == r.source.name)
        .map_or_else(|| "missing".to_string(), |e| e.verdict.clone())
}

/// The tests of `reports` whose verdict differs from `baseline`, in file
/// order. Baseline entries for files not in `reports` are not compared (a
/// shard checks part of a corpus).
pub fn compare(baseline: &[Entry], reports: &[TestReport]) -> Vec<Change> {
    let mut changes: Vec<Change> = reports
        .iter()
        .filter_map(|r| {
            let new = verdict_of(r);
            let old = verdict_in(baseline, r);
            (old != new).then(|| Change {
                file: r.source.name.clone(),
                test: r.test.clone(),
                old,
                new,
                witness: witness_summary(r),
            })
        })
        .collect();
    changes.sort_by(|a, b| a.file.cmp(&b.file));
    changes
}

/// The changes as a text table: test, old verdict, new verdict, first
/// finding's witness summary.
pub fn render_changes(changes: &[Change]) -> String {
    let mut out = String::from("| test | old verdict | new verdict | first finding |\n|---|---|---|---|\n");
    for c in changes {
        let name = c.test.as_deref().map_or(String::new(), |t| format!(" \"{t}\""));
        out += &format!(
            "| {}{} | {} | {} | {} |\n",
            c.file,
            name,
            c.old,
            c.new,
            c.witness.replace('|', "\\|")
        );
    }
    out
}
