//! GitHub Actions workflow commands (`check --format github`), as ruff's
//! `--output-format github` writes them: one `::error` line per result
//! that the SARIF log shows unsuppressed (a finding the test's `expect`
//! line does not list, an expected kind that no execution shows, a search
//! stopped at a limit, an input error, an internal error), which the
//! runner turns into an annotation at its file and lines of the pull
//! request. The results and their regions are [`crate::sarif`]'s, so the
//! two formats cannot disagree; a passing corpus prints nothing. Against a
//! baseline (`--baseline`), as the text report does, the run is judged by
//! the baseline instead: one `::error` per test whose verdict changed,
//! with its old and new verdicts and first finding.
//!
//! Syntax: `::error title=T,file=F,line=L,col=C,endLine=L2,endColumn=C2::MESSAGE`
//! (GitHub docs, "Workflow commands for GitHub Actions", "Setting an error
//! message"). Property values escape `%`, CR, LF, `:` and `,`; the message
//! escapes `%`, CR and LF.

use crate::baseline::Change;
use crate::TestReport;

/// The workflow commands of a check run: one line per unsuppressed result,
/// or with `changes` (a run against a baseline) one per changed verdict.
pub fn to_github(reports: &[TestReport], changes: Option<&[Change]>) -> String {
    let mut out = String::new();
    if let Some(changes) = changes {
        for c in changes {
            let name = c.test.as_deref().map_or(String::new(), |t| format!(" \"{t}\""));
            let message = format!(
                "{}: baseline{name}: the baseline's verdict is {}, this run's {} (first finding: {})",
                c.file, c.old, c.new, c.witness
            );
            out.push_str(&format!(
                "::error title={},file={}::{}\n",
                property("barrier-check (baseline)"),
                property(&c.file),
                data(&message)
            ));
        }
        return out;
    }
    for a in crate::sarif::annotations(reports) {
        if a.suppressed {
            continue;
        }
        let mut props = vec![format!("title={}", property(&format!("barrier-check ({})", a.rule)))];
        let mut at = a.path.clone();
        if !a.path.is_empty() {
            props.push(format!("file={}", property(&a.path)));
        }
        if let Some((line, col, end_line, end_col)) = a.region {
            props.push(format!("line={line}"));
            props.push(format!("col={col}"));
            props.push(format!("endLine={end_line}"));
            props.push(format!("endColumn={end_col}"));
            at = format!("{at}:{line}:{col}");
        }
        let mut message = format!("{at}: {} {}", a.rule, a.message);
        if !a.also.is_empty() {
            let also: Vec<String> = a.also.iter().map(|(l, c)| format!("{l}:{c}")).collect();
            message.push_str(&format!(" (also at {})", also.join(", ")));
        }
        out.push_str(&format!("::error {}::{}\n", props.join(","), data(&message)));
    }
    out
}

/// A message: `%`, CR and LF escaped.
fn data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property value: as [`data`], and `:` and `,`, which end a value.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::{data, property};

    #[test]
    fn escapes() {
        assert_eq!(data("50% a\nb\r"), "50%25 a%0Ab%0D");
        assert_eq!(property("x: y, z"), "x%3A y%2C z");
    }
}
