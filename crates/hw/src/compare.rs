//! Holding observations against the model (docs/hardware.md, "Comparing"),
//! over plain types: what the model allows of a test ([`Allowed`], built
//! by the cli from a checked test) and what a device showed ([`Observed`],
//! from a run record). A test is
//! - `sound` when every observed final outcome is one the model allows,
//!   and the device hung only where the model has a `deadlock` or
//!   `nontermination` execution;
//! - `UNSOUND` when the device showed an outcome the model forbids: final
//!   values outside its outcome set, or a hang on a test whose every
//!   execution terminates (the run fails);
//! - `ub` when the verdict has an undefined-behaviour or race finding: the
//!   language gives such a program no meaning, so no observation can
//!   contradict the model (observations are shown, never failed).
//!
//! Allowed outcomes that no iteration showed are listed, never failed: a
//! few thousand iterations sample the interleavings, they do not cover them.

use crate::observed;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A final outcome: every observable's value, sorted by name.
pub type Final = Vec<(String, i64)>;

/// Builds a [`Final`] from values in any order.
pub fn final_of(values: impl IntoIterator<Item = (String, i64)>) -> Final {
    let mut f: Final = values.into_iter().collect();
    f.sort();
    f
}

/// What the model allows of one test.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowed {
    /// The final outcome of every terminating execution, with how many
    /// executions reach it; `None` when the outcome set is not known.
    pub finals: Option<BTreeMap<Final, u64>>,
    /// Some execution deadlocks.
    pub deadlock: bool,
    /// Some fair execution runs forever.
    pub nontermination: bool,
    /// The verdict has a `ub(...)` or `race` finding.
    pub ub_or_race: bool,
    /// The search ran to its end (a stopped search may miss outcomes and
    /// non-terminating executions, so nothing is forbidden by it).
    pub complete: bool,
}

/// A compute-sanitizer tool's error count (`None`: not run or no summary).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolSeen {
    pub errors: Option<u64>,
    pub messages: Vec<String>,
    /// The runner killed the tool at its time limit.
    pub timed_out: bool,
    /// Why the tool was not run.
    pub not_run: Option<String>,
}

/// What a device showed of one test.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    pub iterations: u64,
    pub completed: u64,
    pub hung: bool,
    /// Each distinct final outcome with how many iterations ended with it.
    pub finals: BTreeMap<Final, u64>,
    pub compile_error: Option<String>,
    pub cuda_error: Option<String>,
    pub note: Option<String>,
    /// Why the program did not run, or not to its end (the run's deadline).
    pub not_run: Option<String>,
    /// `None` when the sanitizer was not run.
    pub synccheck: Option<ToolSeen>,
    pub racecheck: Option<ToolSeen>,
}

impl Observed {
    /// The plain view of a run record.
    pub fn of_run(r: &observed::Run) -> Observed {
        let mut finals = BTreeMap::new();
        for o in &r.outcomes {
            let f = final_of(o.values.iter().map(|(k, v)| (k.clone(), *v)));
            // Saturating: a record whose counts pass 2^64 is refused by
            // [`inconsistency`], and must not panic on the way.
            let n = finals.entry(f).or_insert(0u64);
            *n = n.saturating_add(o.count);
        }
        let tool = |t: &observed::ToolReport| ToolSeen {
            errors: t.errors,
            messages: t.messages.clone(),
            timed_out: t.timed_out,
            not_run: t.not_run.clone(),
        };
        Observed {
            iterations: r.iterations,
            completed: r.completed,
            hung: r.hung,
            finals,
            compile_error: r.compile_error.clone(),
            cuda_error: r.cuda_error.clone(),
            note: r.note.clone(),
            not_run: r.not_run.clone(),
            synccheck: r.sanitizer.as_ref().map(|s| tool(&s.synccheck)),
            racecheck: r.sanitizer.as_ref().map(|s| tool(&s.racecheck)),
        }
    }
}

/// Why a run record cannot be what a harness observed of the litmus test
/// named `litmus` (its `litmus "NAME"`; `None` when the file did not
/// parse), or `None` when it can: its outcome counts add up, with checked
/// arithmetic, to `completed`, which is at most the iterations asked, and
/// it names that test. A harness counts each completed iteration's outcome
/// once, so a record that breaks this was edited, damaged, or is paired
/// with a litmus file that changed since the run; compared anyway, it
/// could read as `sound` on observations that never happened.
pub fn inconsistency(run: &observed::Run, litmus: Option<&str>) -> Option<String> {
    if let Some(name) = litmus.filter(|n| *n != run.test) {
        return Some(format!(
            "the record is of test `{}`, the litmus file's is `{name}` (did the file change since the run?)",
            run.test
        ));
    }
    if run.completed > run.iterations {
        return Some(format!(
            "the record completed {} of {} iterations",
            run.completed, run.iterations
        ));
    }
    match run.outcomes.iter().try_fold(0u64, |sum, o| sum.checked_add(o.count)) {
        None => Some("the record's outcome counts add up to more than 2^64".into()),
        Some(sum) if sum != run.completed => Some(format!(
            "the record's outcome counts add up to {sum}, not the {} completed",
            run.completed
        )),
        Some(_) => None,
    }
}

/// A test's standing after the comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Sound,
    Unsound,
    Ub,
    /// Nothing contradicts the model, but the outcome set needed to say
    /// `sound` is not known (why).
    Unknown(String),
    /// The program never ran an iteration (a compile error, or the harness
    /// failed before its first iteration).
    NotRun(String),
    /// The test could not be compared (its litmus file does not check, or
    /// the device's value names are not the model's).
    Error(String),
}

impl Status {
    /// The status column's word.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Sound => "sound",
            Status::Unsound => "UNSOUND",
            Status::Ub => "ub",
            Status::Unknown(_) => "unknown",
            Status::NotRun(_) => "not-run",
            Status::Error(_) => "error",
        }
    }
    fn why(&self) -> Option<&str> {
        match self {
            Status::Unknown(w) | Status::NotRun(w) | Status::Error(w) => Some(w),
            _ => None,
        }
    }
}

/// The comparison of one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    pub status: Status,
    /// Observed final outcomes the model forbids, with their counts.
    pub forbidden: Vec<(Final, u64)>,
    /// The device hung where the model has no non-terminating execution.
    pub forbidden_hang: bool,
    /// Allowed final outcomes no iteration showed, with how many
    /// executions reach each.
    pub unobserved: Vec<(Final, u64)>,
}

impl Comparison {
    /// A test that could not be compared.
    pub fn error(why: impl Into<String>) -> Comparison {
        Comparison {
            status: Status::Error(why.into()),
            forbidden: Vec::new(),
            forbidden_hang: false,
            unobserved: Vec::new(),
        }
    }
}

/// The names of an outcome.
fn names(f: &Final) -> Vec<&str> {
    f.iter().map(|(n, _)| n.as_str()).collect()
}

/// Compares one test's observations with what the model allows.
pub fn compare(allowed: &Allowed, seen: &Observed) -> Comparison {
    let mut c = Comparison {
        status: Status::Sound,
        forbidden: Vec::new(),
        forbidden_hang: false,
        unobserved: Vec::new(),
    };
    if let Some(e) = &seen.compile_error {
        c.status = Status::NotRun(format!("compile error: {}", first_line(e)));
        return c;
    }
    // A run its deadline cut short: what it showed may be a part of an
    // iteration (a watchdog that never fired is no hang), so nothing counts.
    if let Some(why) = &seen.not_run {
        c.status = Status::NotRun(first_line(why).to_string());
        return c;
    }
    if seen.completed == 0 && !seen.hung {
        let why = seen
            .cuda_error
            .as_deref()
            .or(seen.note.as_deref())
            .unwrap_or("no iteration completed");
        c.status = Status::NotRun(first_line(why).to_string());
        return c;
    }
    if let Some(finals) = &allowed.finals {
        // The model's names: those of any allowed outcome (all have the
        // same). With no terminating execution allowed, any final is
        // forbidden whatever its names.
        if let Some(model) = finals.keys().next() {
            if let Some(f) = seen.finals.keys().find(|f| names(f) != names(model)) {
                return Comparison::error(format!(
                    "the device reports values of {{{}}}, the model's outcomes name {{{}}}",
                    names(f).join(", "),
                    names(model).join(", ")
                ));
            }
        }
        c.unobserved = finals
            .iter()
            .filter(|(f, _)| !seen.finals.contains_key(*f))
            .map(|(f, n)| (f.clone(), *n))
            .collect();
    }
    if allowed.ub_or_race {
        c.status = Status::Ub;
        return c;
    }
    if allowed.complete {
        c.forbidden_hang = seen.hung && !allowed.deadlock && !allowed.nontermination;
        if let Some(finals) = &allowed.finals {
            c.forbidden = seen
                .finals
                .iter()
                .filter(|(f, _)| !finals.contains_key(*f))
                .map(|(f, n)| (f.clone(), *n))
                .collect();
        }
    }
    c.status = if c.forbidden_hang || !c.forbidden.is_empty() {
        Status::Unsound
    } else if !allowed.complete {
        Status::Unknown("the model's search stopped before its end".into())
    } else if allowed.finals.is_none() && !seen.finals.is_empty() {
        Status::Unknown("the model's outcome set is not known".into())
    } else {
        Status::Sound
    };
    c
}

fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
}

/// One test of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub file: String,
    pub test: String,
    pub mapping: Option<String>,
    /// barrier-check's verdict (`ok`, `deadlock, race`), or `error`.
    pub verdict: String,
    /// The verdict's finding kinds (`race`, `ub(divergent-barrier)`).
    pub findings: Vec<String>,
    /// `None` when the litmus file could not be checked.
    pub allowed: Option<Allowed>,
    pub observed: Observed,
    pub comparison: Comparison,
}

/// Every test of one device's runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub device: String,
    pub iterations: u64,
    pub rows: Vec<Row>,
}

impl Table {
    fn count(&self, word: &str) -> usize {
        self.rows.iter().filter(|r| r.comparison.status.word() == word).count()
    }
    /// 1 when a test is UNSOUND; else 2 when a test could not be compared;
    /// else 0 (tests that did not run are reported, not failed).
    pub fn exit_code(&self) -> u8 {
        if self.count("UNSOUND") > 0 {
            1
        } else if self.count("error") > 0 {
            2
        } else {
            0
        }
    }
    /// One line of totals.
    pub fn summary(&self) -> String {
        let words = ["sound", "UNSOUND", "ub", "unknown", "not-run", "error"];
        let parts: Vec<String> = words
            .iter()
            .map(|w| (w, self.count(w)))
            .filter(|(w, n)| *n > 0 || **w == "UNSOUND")
            .map(|(w, n)| format!("{n} {w}"))
            .collect();
        format!("{} tests on {}: {}", self.rows.len(), self.device, parts.join(", "))
    }
}

/// Spells an outcome as `b0t0:r=1 x=2`.
pub fn final_text(f: &Final) -> String {
    if f.is_empty() {
        return "(no values)".into();
    }
    f.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(" ")
}

/// The model's findings a tool looks for: synccheck reports barriers that
/// not every thread reaches or that get bad arguments (divergence, a
/// `__syncwarp` mask, a `bar.sync` count), mbarriers used before `init` or
/// after `inval` (its `Missing init`), and a thread arriving on an mbarrier
/// again before waiting on the phase it arrived on (its `Missing wait`, as
/// compute-sanitizer 2025.3 printed it on an H100); racecheck reports
/// shared-memory races.
fn tool_findings<'a>(tool: &str, findings: &'a [String]) -> Vec<&'a str> {
    let sync = [
        "ub(divergent-barrier)",
        "ub(syncwarp-mask)",
        "ub(count-mismatch)",
        "ub(invalid-barrier)",
        "ub(uninitialized-barrier)",
        "ub(arrive-before-wait)",
    ];
    findings
        .iter()
        .map(String::as_str)
        .filter(|f| {
            if tool == "synccheck" {
                sync.contains(f)
            } else {
                *f == "race"
            }
        })
        .collect()
}

/// Where barrier-check and a sanitizer tool stand on a test: `both`,
/// `model only`, `tool only`, `neither`, or `-` when the tool gave no count.
pub fn side_by_side(tool: &str, findings: &[String], seen: Option<&ToolSeen>) -> &'static str {
    let Some(errors) = seen.and_then(|t| t.errors) else {
        return "-";
    };
    match (!tool_findings(tool, findings).is_empty(), errors > 0) {
        (true, true) => "both",
        (true, false) => "model only",
        (false, true) => "tool only",
        (false, false) => "neither",
    }
}

fn tool_cell(tool: &str, r: &Row) -> String {
    let seen = if tool == "synccheck" {
        &r.observed.synccheck
    } else {
        &r.observed.racecheck
    };
    match seen {
        Some(ToolSeen { errors: Some(n), .. }) => {
            format!("{n} ({})", side_by_side(tool, &r.findings, seen.as_ref()))
        }
        Some(ToolSeen { not_run: Some(_), .. }) => "not run".into(),
        Some(t) if t.timed_out => {
            // Error lines it printed before it was killed still count as
            // reports, but not as a complete count.
            let lines = t.messages.iter().filter(|m| !m.starts_with("killed after")).count();
            format!("? (killed, {lines} error lines)")
        }
        Some(_) => "? (no summary)".into(),
        None => "-".into(),
    }
}

fn allowed_cell(a: Option<&Allowed>) -> String {
    let Some(a) = a else { return "-".into() };
    let mut s = a.finals.as_ref().map_or("?".to_string(), |f| f.len().to_string());
    if a.deadlock {
        s += " +deadlock";
    }
    if a.nontermination {
        s += " +nontermination";
    }
    if !a.complete {
        s += " (stopped)";
    }
    s
}

fn observed_cell(o: &Observed) -> String {
    if o.compile_error.is_some() {
        return "compile error".into();
    }
    let hung = if o.hung { ", hung" } else { "" };
    format!("{}/{}{hung}, {} distinct", o.completed, o.iterations, o.finals.len())
}

/// The table as text: one line per test, and below it what makes it
/// UNSOUND, the allowed outcomes not observed, notes and sanitizer lines.
pub fn text(t: &Table) -> String {
    let head = [
        "file",
        "verdict",
        "allowed",
        "observed",
        "status",
        "synccheck",
        "racecheck",
    ];
    let cells: Vec<[String; 7]> = t
        .rows
        .iter()
        .map(|r| {
            [
                r.file.clone(),
                r.verdict.clone(),
                allowed_cell(r.allowed.as_ref()),
                observed_cell(&r.observed),
                r.comparison.status.word().to_string(),
                tool_cell("synccheck", r),
                tool_cell("racecheck", r),
            ]
        })
        .collect();
    let mut width = head.map(str::len);
    for c in &cells {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |c: &[String]| {
        let mut s = String::new();
        for (i, (cell, w)) in c.iter().zip(width).enumerate() {
            if i + 1 == c.len() {
                s += cell;
            } else {
                let _ = write!(s, "{cell:<w$}  ");
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&head.map(String::from));
    for (r, c) in t.rows.iter().zip(&cells) {
        out += &line(c);
        let cmp = &r.comparison;
        if let Some(w) = cmp.status.why() {
            let _ = writeln!(out, "    {}: {w}", cmp.status.word());
        }
        if cmp.forbidden_hang {
            let _ = writeln!(
                out,
                "    forbidden: a hang (the model has no deadlock or nontermination)"
            );
        }
        for (f, n) in &cmp.forbidden {
            let _ = writeln!(out, "    forbidden: {} (x{n})", final_text(f));
        }
        for (f, n) in &cmp.unobserved {
            let _ = writeln!(out, "    unobserved: {} ({n} executions)", final_text(f));
        }
        for note in [&r.observed.cuda_error, &r.observed.note].into_iter().flatten() {
            let _ = writeln!(out, "    note: {}", first_line(note));
        }
        for (tool, seen) in [
            ("synccheck", &r.observed.synccheck),
            ("racecheck", &r.observed.racecheck),
        ] {
            for m in seen.iter().flat_map(|s| s.not_run.iter().chain(&s.messages)) {
                let _ = writeln!(out, "    {tool}: {m}");
            }
        }
    }
    out + &t.summary() + "\n"
}

/// The table as markdown (for docs/hardware.md): one row per test.
pub fn markdown(t: &Table) -> String {
    let mut out = format!(
        "Device: {}, {} iterations per test.\n\n\
         | test | verdict | allowed | observed | status | synccheck | racecheck |\n\
         |---|---|---|---|---|---|---|\n",
        t.device, t.iterations
    );
    let esc = |s: &str| s.replace('|', "\\|");
    for r in &t.rows {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            esc(&r.file),
            esc(&r.verdict),
            esc(&allowed_cell(r.allowed.as_ref())),
            esc(&observed_cell(&r.observed)),
            r.comparison.status.word(),
            esc(&tool_cell("synccheck", r)),
            esc(&tool_cell("racecheck", r)),
        );
    }
    out + "\n" + &t.summary() + "\n"
}

fn final_json(f: &Final, key: &str, n: u64) -> Value {
    let values: serde_json::Map<String, Value> = f.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    json!({ "values": values, key: n })
}

fn tool_json(t: &Option<ToolSeen>) -> Value {
    match t {
        Some(t) => json!({
            "errors": t.errors,
            "messages": t.messages,
            "timed_out": t.timed_out,
            "not_run": t.not_run,
        }),
        None => Value::Null,
    }
}

/// The table as JSON (schema 1).
pub fn to_json(t: &Table) -> String {
    let tests: Vec<Value> = t
        .rows
        .iter()
        .map(|r| {
            let c = &r.comparison;
            json!({
                "file": r.file,
                "test": r.test,
                "mapping": r.mapping,
                "verdict": r.verdict,
                "findings": r.findings,
                "allowed": r.allowed.as_ref().map(|a| json!({
                    "finals": a.finals.as_ref().map(|f| f.len()),
                    "deadlock": a.deadlock,
                    "nontermination": a.nontermination,
                    "complete": a.complete,
                })),
                "observed": {
                    "iterations": r.observed.iterations,
                    "completed": r.observed.completed,
                    "hung": r.observed.hung,
                    "distinct": r.observed.finals.len(),
                    "compile_error": r.observed.compile_error,
                    "cuda_error": r.observed.cuda_error,
                },
                "status": c.status.word(),
                "reason": c.status.why(),
                "forbidden_hang": c.forbidden_hang,
                "forbidden": c.forbidden.iter().map(|(f, n)| final_json(f, "count", *n)).collect::<Vec<_>>(),
                "unobserved": c.unobserved.iter().map(|(f, n)| final_json(f, "executions", *n)).collect::<Vec<_>>(),
                "sanitizer": {
                    "synccheck": tool_json(&r.observed.synccheck),
                    "racecheck": tool_json(&r.observed.racecheck),
                    "synccheck_side": side_by_side("synccheck", &r.findings, r.observed.synccheck.as_ref()),
                    "racecheck_side": side_by_side("racecheck", &r.findings, r.observed.racecheck.as_ref()),
                },
            })
        })
        .collect();
    let words = ["sound", "UNSOUND", "ub", "unknown", "not-run", "error"];
    let summary: serde_json::Map<String, Value> = words.iter().map(|w| (w.to_string(), json!(t.count(w)))).collect();
    let doc = json!({
        "schema": 1,
        "device": t.device,
        "iterations": t.iterations,
        "tests": tests,
        "summary": summary,
    });
    serde_json::to_string_pretty(&doc).expect("JSON values always serialize") + "\n"
}

#[cfg(test)]
mod tests;
