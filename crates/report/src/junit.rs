//! JUnit XML output (`check --format junit`), in the form CI test views
//! read (the Jenkins/Surefire `junit-10.xsd` shape).
//!
//! One `<testcase>` per litmus file, grouped into one `<testsuite>` per
//! directory in file order. A test whose verdict differs from its `expect`
//! has a `<failure type="verdict">`; a file that does not parse or lower an
//! `<error type="input-error">`; a search stopped at a limit an
//! `<error type="search-stopped">` (the verdict is unknown, never a pass);
//! an internal error an `<error type="internal-error">`. The body of each is
//! the text report with witnesses. `classname` is the file's path without
//! `.litmus`, dotted; `name` is the test's `litmus` name (the file name when
//! it has none).

use crate::text::TextOptions;
use crate::TestReport;
use bc_explore::Stop;
use std::fmt::Write;

/// Escapes text for XML 1.0 content and attribute values; characters that
/// XML 1.0 cannot carry (most C0 controls) become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `time` attributes: seconds with three decimals.
fn seconds(d: std::time::Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

fn classname(file: &str) -> String {
    let path = file.replace('\\', "/");
    let stem = path.strip_suffix(".litmus").unwrap_or(&path);
    stem.trim_start_matches("./").trim_start_matches('/').replace('/', ".")
}

fn suite_name(file: &str) -> String {
    let path = file.replace('\\', "/");
    match path.rfind('/') {
        Some(i) => path[..i].to_string(),
        None => ".".into(),
    }
}

/// A test and what it reports: nothing (passed), or (element, type,
/// message) per problem.
type Case<'a> = (&'a TestReport, Vec<(&'static str, &'static str, String)>);

/// What a test case reports: nothing (passed), or (element, type, message).
fn outcome(r: &TestReport) -> Vec<(&'static str, &'static str, String)> {
    let mut out = Vec::new();
    let Some(o) = &r.outcome else {
        let first = r.diagnostics.first().map_or("does not parse", |d| d.message.as_str());
        out.push((
            "error",
            "input-error",
            format!("{} error(s): {first}", r.diagnostics.len()),
        ));
        return out;
    };
    if o.stop != Stop::Exhausted {
        out.push((
            "error",
            "search-stopped",
            format!(
                "the search stopped at {} after {} states; the verdict is unknown",
                o.stop.name(),
                o.stats.states
            ),
        ));
    } else if !r.pass() && o.internal_errors.is_empty() {
        let exp = r.expected.clone().unwrap_or_default();
        out.push((
            "failure",
            "verdict",
            format!(
                "verdict {}, expected {}",
                crate::verdict_text(&r.verdict()),
                crate::verdict_text(&exp)
            ),
        ));
    }
    if !o.internal_errors.is_empty() {
        out.push(("error", "internal-error", o.internal_errors.join("; ")));
    }
    out
}

/// The JUnit XML of a check run; `timing: false` leaves out `time`
/// attributes (for reproducible output).
pub fn to_junit(reports: &[TestReport], timing: bool) -> String {
    // Each test's results, once; then suites by directory, in order of
    // first appearance.
    let cases: Vec<Case> = reports.iter().map(|r| (r, outcome(r))).collect();
    let mut suites: Vec<(String, Vec<&Case>)> = Vec::new();
    for c in &cases {
        let name = suite_name(&c.0.source.name);
        match suites.iter_mut().find(|(n, _)| *n == name) {
            Some((_, cs)) => cs.push(c),
            None => suites.push((name, vec![c])),
        }
    }
    let time_of = |cs: &[&Case]| -> std::time::Duration {
        cs.iter()
            .filter_map(|c| c.0.outcome.as_ref())
            .map(|o| o.stats.elapsed)
            .sum()
    };
    let time_attr = |d: std::time::Duration| {
        if timing {
            format!(" time=\"{}\"", seconds(d))
        } else {
            String::new()
        }
    };
    let count = |cs: &[&Case], what: &str| cs.iter().filter(|c| c.1.iter().any(|(e, _, _)| *e == what)).count();
    let all: Vec<&Case> = cases.iter().collect();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"barrier-check\" tests=\"{}\" failures=\"{}\" errors=\"{}\"{}>",
        all.len(),
        count(&all, "failure"),
        count(&all, "error"),
        time_attr(time_of(&all))
    );
    let body_opts = TextOptions {
        witnesses: true,
        timing: false,
        color: false,
    };
    for (name, cs) in &suites {
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\"{}>",
            escape(name),
            cs.len(),
            count(cs, "failure"),
            count(cs, "error"),
            time_attr(time_of(cs))
        );
        for (r, results) in cs.iter().copied() {
            let test = r.test.clone().unwrap_or_else(|| {
                let f = r.source.name.replace('\\', "/");
                f.rsplit('/').next().unwrap_or(&f).to_string()
            });
            let _ = write!(
                x,
                "    <testcase name=\"{}\" classname=\"{}\"{}",
                escape(&test),
                escape(&classname(&r.source.name)),
                time_attr(r.outcome.as_ref().map(|o| o.stats.elapsed).unwrap_or_default())
            );
            if results.is_empty() {
                x.push_str("/>\n");
                continue;
            }
            x.push_str(">\n");
            let body = if r.is_error() {
                crate::diagnostic::render_all(&r.source, &r.diagnostics)
            } else {
                crate::text::test(r, &body_opts)
            };
            for (element, kind, message) in results {
                let _ = writeln!(
                    x,
                    "      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>",
                    escape(message),
                    escape(&body)
                );
            }
            x.push_str("    </testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(escape("x\u{1}y\tz\n"), "x\u{FFFD}y\tz\n");
    }

    #[test]
    fn names_from_paths() {
        assert_eq!(classname("litmus/amdgpu/a.litmus"), "litmus.amdgpu.a");
        assert_eq!(classname("./x.litmus"), "x");
        assert_eq!(suite_name("litmus/amdgpu/a.litmus"), "litmus/amdgpu");
        assert_eq!(suite_name("a.litmus"), ".");
    }
}
