//! The human-readable report: one line per test, then each finding with its
//! witness (steps, bmo per barrier, participates-in, stuck waits).

use crate::{verdict_text, Summary, TestReport};
use bc_explore::{Finding, OutcomeKind, Outcomes, Stop};
use std::fmt::Write;

pub struct TextOptions {
    /// Print findings and witnesses (otherwise one line per test).
    pub witnesses: bool,
    /// Print elapsed times (off for reproducible snapshots).
    pub timing: bool,
    /// ANSI colours: the status (`ok` green, `FAIL` and `ERROR` red) and
    /// a stop (yellow). The command line decides (`--color`, `NO_COLOR`,
    /// a terminal or not).
    pub color: bool,
}

/// `s` in ANSI colour `code` (SGR parameters, e.g. `1;31`) when `on`.
pub fn paint(s: &str, code: &str, on: bool) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// The one-line summary of a test.
pub fn line(r: &TestReport, opts: &TextOptions) -> String {
    let (status, code) = if r.is_error() {
        ("ERROR", "1;31")
    } else if r.pass() {
        ("ok", "32")
    } else {
        ("FAIL", "1;31")
    };
    let name = r.test.as_deref().unwrap_or("?");
    let status = paint(&format!("{status:<5}"), code, opts.color);
    let mut out = format!("{status} {}  \"{name}\"", r.source.name);
    let Some(o) = &r.outcome else {
        let _ = write!(out, "  {} error(s)", r.diagnostics.len());
        return out;
    };
    let _ = write!(out, "  verdict: {}", verdict_text(&r.verdict()));
    if !r.pass() {
        let exp = r.expected.clone().unwrap_or_default();
        let _ = write!(out, " (expected {})", verdict_text(&exp));
    }
    let _ = write!(out, "  [{} states, {} executions", o.stats.states, o.stats.executions);
    if opts.timing {
        let _ = write!(out, ", {:.1} ms", o.stats.elapsed.as_secs_f64() * 1000.0);
    }
    out.push(']');
    if o.stop != Stop::Exhausted {
        let stop = if o.stop == Stop::FailFast {
            "stop: fail-fast (at the first finding its expect does not allow)".to_string()
        } else {
            format!("stop: {} (inconclusive)", o.stop.name())
        };
        let _ = write!(out, "  {}", paint(&stop, "33", opts.color));
    }
    out
}

pub fn finding(r: &TestReport, f: &Finding) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  {}: {}", f.kind, f.message);
    let w = &f.witness;
    if w.steps.is_empty() && w.bmo.is_empty() {
        return out;
    }
    let _ = writeln!(out, "    witness:");
    let tw = w.steps.iter().map(|s| s.thread.len()).max().unwrap_or(0);
    let sw = w.steps.iter().map(|s| s.text.len()).max().unwrap_or(0);
    for (i, s) in w.steps.iter().enumerate() {
        if w.cycle_start == Some(i) {
            let _ = writeln!(out, "      -- cycle: the steps below repeat forever --");
        }
        let lc = r.source.line_col(s.span.start);
        let effect = if s.effect.is_empty() {
            String::new()
        } else {
            format!("  {}", s.effect)
        };
        let _ = writeln!(
            out,
            "      {:>3}. {:<tw$}  {:<sw$}  (line {}){effect}",
            i + 1,
            s.thread,
            s.text,
            lc.line
        );
    }
    for (b, ops) in &w.bmo {
        let _ = writeln!(out, "    bmo {b}: {}", ops.join(", "));
    }
    for (wait, ps) in &w.participates_in {
        let ps = if ps.is_empty() {
            "(none: no effect)".to_string()
        } else {
            ps.join(", ")
        };
        let _ = writeln!(out, "    participates-in {wait} <- {ps}");
    }
    for s in &w.stuck {
        let _ = writeln!(out, "    never completes: {s}");
    }
    out
}

/// The whole report of one test (the summary line, then its findings).
pub fn test(r: &TestReport, opts: &TextOptions) -> String {
    let mut out = line(r, opts);
    out.push('\n');
    if let Some(o) = &r.outcome {
        for e in &o.internal_errors {
            let _ = writeln!(out, "  internal error (please report): {e}");
        }
        if let Some(set) = &o.outcomes {
            out.push_str(&outcomes(set, o.stop));
        }
        if opts.witnesses {
            for f in &o.findings {
                out.push_str(&finding(r, f));
            }
        }
    }
    out
}

/// The outcome set, herd-style (`check --outcomes`): a count line, then
/// one line per outcome with how many end configurations reach it.
///
/// ```text
/// Outcomes 3:
///   1 execution : b0t0:r=0; b0t1:r=1; x=1;
///   2 executions: b0t0:r=1; b0t1:r=1; x=2;
///   1 execution : deadlock
/// ```
pub fn outcomes(set: &Outcomes, stop: Stop) -> String {
    let mut out = format!("Outcomes {}:", set.classes.len());
    if stop != Stop::Exhausted {
        let _ = write!(out, " (partial: stopped at {})", stop.name());
    }
    out.push('\n');
    let counts: Vec<String> = set
        .classes
        .iter()
        .map(|c| {
            let word = if c.executions == 1 { "execution " } else { "executions" };
            format!("{} {word}", c.executions)
        })
        .collect();
    let w = counts.iter().map(|c| c.len()).max().unwrap_or(0);
    for (c, count) in set.classes.iter().zip(counts) {
        let what = match &c.kind {
            OutcomeKind::Final(values) if values.is_empty() => "(no observable values)".to_string(),
            OutcomeKind::Final(values) => set
                .observables
                .iter()
                .zip(values)
                .map(|(n, v)| format!("{n}={v};"))
                .collect::<Vec<_>>()
                .join(" "),
            OutcomeKind::Deadlock => "deadlock".into(),
            OutcomeKind::Nontermination => "nontermination".into(),
        };
        let _ = writeln!(out, "  {count:>w$}: {what}");
    }
    out
}

pub fn summary(s: &Summary) -> String {
    let mut out = format!("{} passed, {} failed", s.passed, s.failed);
    if s.errors > 0 {
        let _ = write!(out, ", {} error(s)", s.errors);
    }
    if s.stopped > 0 {
        let _ = write!(out, " ({} stopped at a limit)", s.stopped);
    }
    out
}
