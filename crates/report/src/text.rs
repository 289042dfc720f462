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
    line_against(r, opts, None)
}

/// [`line`], judged against a baseline's verdict for the test when one is
/// given (`check --baseline`): `ok` when the verdict is the baseline's,
/// `CHANGED` with the baseline's verdict when it is not, whatever the
/// file's `expect` says.
pub fn line_against(r: &TestReport, opts: &TextOptions, baseline: Option<&str>) -> String {
    let same = baseline.map(|b| crate::baseline::verdict_of(r) == b);
    let (status, code) = if r.is_error() && same != Some(true) {
        ("ERROR", "1;31")
    } else if same == Some(false) {
        ("CHANGED", "1;31")
    } else if same == Some(true) || r.pass() {
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
    match (baseline, same) {
        (Some(b), Some(false)) => {
            let _ = write!(out, " (baseline: {b})");
        }
        (Some(_), _) => {}
        (None, _) if !r.pass() => {
            let exp = r.expected.clone().unwrap_or_default();
            let _ = write!(out, " (expected {})", verdict_text(&exp));
        }
        (None, _) => {}
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

/// The witness's steps as the text shows them: runs of at least
/// [`LANE_RUN`] consecutive steps by consecutive lanes of one warp
/// (`bBtT`, one block, one warp of 32) with the same statement and the
/// same effect (the lanes' wait completions of one `bar.sync` phase, each
/// naming the same participants) are one line, numbered `FIRST-LAST`
/// (issue 38: a lane-level kernel's witness had a line per lane, each
/// thousands of characters long). Never across the start of a cycle; the
/// JSON, SARIF and DOT witnesses keep every step.
fn lane_runs(w: &bc_explore::Witness) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < w.steps.len() {
        let mut j = i;
        while let Some(next) = w.steps.get(j + 1) {
            let cur = &w.steps[j];
            let same = next.text == cur.text
                && next.effect == cur.effect
                && w.cycle_start != Some(j + 1)
                && matches!((lane(&cur.thread), lane(&next.thread)),
                    (Some((b, t)), Some((c, u))) if b == c && u == t + 1 && u / 32 == t / 32);
            if !same {
                break;
            }
            j += 1;
        }
        if j + 1 - i >= LANE_RUN {
            runs.push((i, j));
        } else {
            runs.extend((i..=j).map(|k| (k, k)));
        }
        i = j + 1;
    }
    runs
}

/// A lane's thread name, `bBtT`: its block and thread.
fn lane(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix('b')?;
    let (b, t) = rest.split_once('t')?;
    Some((b.parse().ok()?, t.parse().ok()?))
}

/// The shortest run of lanes' steps the text folds into one line.
const LANE_RUN: usize = 4;

pub fn finding(r: &TestReport, f: &Finding) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  {}: {}", f.kind, f.message);
    let w = &f.witness;
    if w.steps.is_empty() && w.bmo.is_empty() {
        return out;
    }
    let _ = writeln!(out, "    witness:");
    let runs = lane_runs(w);
    let name = |&(a, b): &(usize, usize)| {
        if a == b {
            w.steps[a].thread.clone()
        } else {
            format!("{}..{}", w.steps[a].thread, w.steps[b].thread)
        }
    };
    let number = |&(a, b): &(usize, usize)| {
        if a == b {
            format!("{}.", a + 1)
        } else {
            format!("{}-{}.", a + 1, b + 1)
        }
    };
    let tw = runs.iter().map(|r| name(r).len()).max().unwrap_or(0);
    let nw = runs.iter().map(|r| number(r).len()).max().unwrap_or(0).max(4);
    let sw = w.steps.iter().map(|s| s.text.len()).max().unwrap_or(0);
    for run in &runs {
        let s = &w.steps[run.0];
        if w.cycle_start == Some(run.0) {
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
            "      {:>nw$} {:<tw$}  {:<sw$}  (line {}){effect}",
            number(run),
            name(run),
            s.text,
            lc.line
        );
    }
    for (b, ops) in &w.bmo {
        let _ = writeln!(out, "    bmo {b}: {}", fold_labels(ops).join(", "));
    }
    // The waits that took one phase name the same participants: one line
    // for all of them, where the first of them stood.
    let mut groups: Vec<(Vec<String>, &Vec<String>)> = Vec::new();
    let mut at: std::collections::HashMap<&[String], usize> = std::collections::HashMap::new();
    for (wait, ps) in &w.participates_in {
        match at.get(ps.as_slice()) {
            Some(&g) => groups[g].0.push(wait.clone()),
            None => {
                at.insert(ps.as_slice(), groups.len());
                groups.push((vec![wait.clone()], ps));
            }
        }
    }
    for (waits, ps) in groups {
        let ps = if ps.is_empty() {
            "(none: no effect)".to_string()
        } else {
            fold_labels(ps).join(", ")
        };
        let _ = writeln!(out, "    participates-in {} <- {ps}", fold_labels(&waits).join(", "));
    }
    for s in fold_labels(&w.stuck) {
        let _ = writeln!(out, "    never completes: {s}");
    }
    out
}

/// Event labels as the text shows them: a run of at least [`LANE_RUN`]
/// labels `bBtT#N STATEMENT` of consecutive lanes of one warp (as
/// [`lane_runs`] reads them) with the same `N` and statement is one label,
/// `bBtT..bBtU#N STATEMENT`: event `N` of each of those lanes, in that
/// order. A lane-level kernel's bmo and participates-in lines listed
/// every lane's event, once per wait of the phase (27 MB of text for one
/// deadlock of 8 blocks of 256 threads); the JSON, SARIF and DOT
/// witnesses keep every label.
fn fold_labels(labels: &[String]) -> Vec<String> {
    // (block, lane, event number, statement).
    fn parts(l: &str) -> Option<(u64, u64, &str, &str)> {
        let (thread, rest) = l.split_once('#')?;
        let (b, t) = lane(thread)?;
        let (n, text) = rest.split_once(' ').unwrap_or((rest, ""));
        Some((b, t, n, text))
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < labels.len() {
        let mut j = i;
        if let Some((b, t, n, text)) = parts(&labels[i]) {
            while let Some((c, u, m, rest)) = labels.get(j + 1).and_then(|l| parts(l)) {
                let t_j = t + (j - i) as u64;
                if c != b || u != t_j + 1 || u / 32 != t / 32 || m != n || rest != text {
                    break;
                }
                j += 1;
            }
            if j + 1 - i >= LANE_RUN {
                let last = t + (j - i) as u64;
                let sep = if text.is_empty() { "" } else { " " };
                out.push(format!("b{b}t{t}..b{b}t{last}#{n}{sep}{text}"));
                i = j + 1;
                continue;
            }
        }
        out.push(labels[i].clone());
        i += 1;
    }
    out
}

/// The whole report of one test (the summary line, then its findings).
pub fn test(r: &TestReport, opts: &TextOptions) -> String {
    test_against(r, opts, None)
}

/// [`test`] with its line judged against a baseline verdict
/// ([`line_against`]).
pub fn test_against(r: &TestReport, opts: &TextOptions, baseline: Option<&str>) -> String {
    let mut out = line_against(r, opts, baseline);
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

#[cfg(test)]
mod tests {
    //! The lane runs the text folds (`lane_runs`), firing and not.
    use super::*;
    use bc_explore::{Step, Witness};

    fn step(thread: &str, text: &str) -> Step {
        Step {
            thread: thread.into(),
            span: bc_syntax::Span::default(),
            text: text.into(),
            effect: "completes on phase 0 of bar0(0)".into(),
            events: vec![format!("{thread}#1")],
        }
    }

    fn runs(threads: &[&str], cycle_start: Option<usize>) -> Vec<(usize, usize)> {
        let w = Witness {
            steps: threads.iter().map(|t| step(t, "bar.sync 0")).collect(),
            cycle_start,
            ..Witness::default()
        };
        lane_runs(&w)
    }

    #[test]
    fn consecutive_lanes_of_one_warp_fold_from_four_on() {
        assert_eq!(runs(&["b0t0", "b0t1", "b0t2", "b0t3", "b0t4"], None), [(0, 4)]);
        // Three lanes stay three lines.
        assert_eq!(runs(&["b0t0", "b0t1", "b0t2"], None), [(0, 0), (1, 1), (2, 2)]);
        // A gap, another block, a warp boundary or a cycle's start ends a run.
        assert_eq!(runs(&["b0t0", "b0t1", "b0t3", "b0t4"], None).len(), 4);
        assert_eq!(runs(&["b0t0", "b0t1", "b1t2", "b1t3"], None).len(), 4);
        assert_eq!(
            runs(
                &["b0t28", "b0t29", "b0t30", "b0t31", "b0t32", "b0t33", "b0t34", "b0t35"],
                None
            ),
            [(0, 3), (4, 7)]
        );
        assert_eq!(runs(&["b0t0", "b0t1", "b0t2", "b0t3"], Some(2)).len(), 4);
        // Explicit threads are never folded.
        assert_eq!(runs(&["T0", "T1", "T2", "T3"], None).len(), 4);
    }
}

#[cfg(test)]
mod fold_tests {
    use super::fold_labels;

    fn labels(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn runs_of_lanes_fold_and_nothing_else_does() {
        let lanes = |from: u64, to: u64, n: u32| -> Vec<String> {
            (from..=to).map(|t| format!("b0t{t}#{n} __syncthreads")).collect()
        };
        // Four consecutive lanes fold; three do not.
        assert_eq!(fold_labels(&lanes(1, 4, 2)), labels(&["b0t1..b0t4#2 __syncthreads"]));
        assert_eq!(fold_labels(&lanes(1, 3, 2)), lanes(1, 3, 2));
        // A run stops at a warp's end, at another event number, statement,
        // block or a gap.
        assert_eq!(
            fold_labels(&lanes(28, 39, 1)),
            labels(&["b0t28..b0t31#1 __syncthreads", "b0t32..b0t39#1 __syncthreads"])
        );
        let mut mixed = lanes(0, 4, 1);
        mixed.extend(lanes(5, 9, 2));
        mixed.push("b0t10#2 wait M".into());
        mixed.push("b1t11#2 wait M".into());
        mixed.extend(lanes(13, 16, 2));
        assert_eq!(
            fold_labels(&mixed),
            labels(&[
                "b0t0..b0t4#1 __syncthreads",
                "b0t5..b0t9#2 __syncthreads",
                "b0t10#2 wait M",
                "b1t11#2 wait M",
                "b0t13..b0t16#2 __syncthreads",
            ])
        );
        // Names that are not lanes stay as they are.
        let named = labels(&["T0#1 arrive B", "T1#1 arrive B", "T2#1 arrive B", "T3#1 arrive B"]);
        assert_eq!(fold_labels(&named), named);
    }
}
