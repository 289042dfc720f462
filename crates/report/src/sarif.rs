//! SARIF 2.1.0 output (`check --format sarif`), for code-scanning views.
//!
//! One run of one tool. Every finding is a result whose rule is the finding
//! kind as `expect` spells it, located at the statements the finding is
//! about (the events the violated rule names, else the stuck waits, else the
//! assertion, else the witness's last step), with the witness execution as a
//! code flow: one thread flow per thread, steps numbered in interleaving
//! order. A finding the test's `expect` line lists is reported *suppressed
//! in source*, so a viewer shows only what nobody expected. Besides
//! findings: `missing-finding` (an expected kind that no execution shows,
//! at the `expect` line), `search-stopped` (a search that hit a limit: the
//! verdict is unknown), `input-error` (parse and lowering errors at their
//! spans) and `internal-error` (the explorer and the rule checker
//! disagree). Columns count Unicode code points, as in text diagnostics.
//!
//! Serde types live only here, named after the SARIF objects they write.

use crate::TestReport;
use bc_explore::Stop;
use bc_syntax::{FindingKind, SourceFile, Span};
use serde::Serialize;
use std::collections::BTreeMap;

pub const VERSION: &str = "2.1.0";
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    column_kind: &'static str,
    artifacts: Vec<Artifact>,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: String,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    short_description: Message,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
}

#[derive(Serialize)]
struct Artifact {
    location: ArtifactLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Message,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    properties: ResultProperties,
}

#[derive(Serialize)]
struct ResultProperties {
    test: Option<String>,
    verdict: String,
    expected: Option<String>,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    index: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
    end_line: u32,
    end_column: u32,
    snippet: Message,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    message: Message,
    thread_flows: Vec<ThreadFlow>,
}

#[derive(Serialize)]
struct ThreadFlow {
    id: String,
    locations: Vec<ThreadFlowLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThreadFlowLocation {
    execution_order: usize,
    location: Location,
    /// `["cycle"]` on the steps of a lasso's cycle (they repeat forever).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    kinds: Vec<&'static str>,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    justification: String,
}

/// The rules that are not finding kinds.
const MISSING: &str = "missing-finding";
const STOPPED: &str = "search-stopped";
const INPUT: &str = "input-error";
const INTERNAL: &str = "internal-error";

fn other_rule_summary(id: &str) -> &'static str {
    match id {
        MISSING => "the test expects a finding that no execution shows",
        STOPPED => "the search stopped at a limit before exploring every execution: the verdict is unknown",
        INPUT => "the litmus file does not parse or lower",
        _ => "the explorer and the rule checker disagree on an execution (a checker bug)",
    }
}

/// A path as a URI reference: relative paths stay relative (to the
/// directory the run started in), absolute ones become `file://` URIs;
/// bytes outside the unreserved set and `/` are percent-encoded.
pub fn uri_of(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The file a report's locations are in: its source, or the file that
/// source was generated from.
fn artifact_uri(source: &SourceFile) -> String {
    uri_of(artifact_path(source))
}

/// The path of the file a report's locations are in, as given (not a URI).
fn artifact_path(source: &SourceFile) -> &str {
    source.origin.as_ref().map_or(&source.name, |o| &o.source.name)
}

/// The region of the origin's line that generated-text span `span` stands
/// for: from its column to the end of the line.
fn origin_region(o: &bc_syntax::source::Origin, span: Span) -> Option<Region> {
    let at = o.at(span.start)?;
    if at.line > o.source.line_col(o.source.text.len() as u32).line {
        return None;
    }
    let text = o.source.line_text(at.line);
    let len = text.trim_end().chars().count() as u32;
    let col = at.col.min(len.max(1));
    Some(Region {
        start_line: at.line,
        start_column: col,
        end_line: at.line,
        end_column: len.max(col) + 1,
        snippet: Message {
            text: text.trim_end().chars().skip(col as usize - 1).collect(),
        },
    })
}

fn region(source: &SourceFile, span: Span) -> Region {
    let (start, end) = source.range(span);
    Region {
        start_line: start.line,
        start_column: start.col,
        end_line: end.line,
        end_column: end.col,
        snippet: Message {
            text: source.snippet(span).to_string(),
        },
    }
}

/// Builds results for one run: the rules used (listed sorted by id at the
/// end, which numbers them) and the results in order.
struct Builder {
    rules: BTreeMap<String, &'static str>,
    results: Vec<SarifResult>,
}

impl Builder {
    /// The results of every report, in order.
    fn of(reports: &[TestReport]) -> Builder {
        let mut b = Builder {
            rules: BTreeMap::new(),
            results: Vec::new(),
        };
        for (i, r) in reports.iter().enumerate() {
            add_report(&mut b, i, r);
        }
        b
    }

    /// A location in `source`, or where `source` was generated from a file
    /// (nvcc's PTX of a `.cu`), in that file: the line the span stands for,
    /// or the whole file where it stands for none.
    fn location(source: &SourceFile, index: usize, span: Option<Span>, message: Option<String>) -> Location {
        let region = match &source.origin {
            Some(o) => span.and_then(|s| origin_region(o, s)),
            None => span.map(|s| region(source, s)),
        };
        Location {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation {
                    uri: artifact_uri(source),
                    index,
                },
                region,
            },
            message: message.map(|text| Message { text }),
        }
    }

    /// Adds a result; `summary` describes its rule.
    fn push(&mut self, summary: &'static str, result: SarifResult) {
        self.rules.entry(result.rule_id.clone()).or_insert(summary);
        self.results.push(result);
    }

    /// Adds a result of one of the rules that are not finding kinds.
    fn push_other(&mut self, rule: &str, text: String, locations: Vec<Location>, r: &TestReport) {
        self.push(other_rule_summary(rule), result(rule, text, locations, r));
    }
}

fn properties(r: &TestReport) -> ResultProperties {
    ResultProperties {
        test: r.test.clone(),
        verdict: if r.is_error() {
            "error".into()
        } else {
            crate::verdict_text(&r.verdict())
        },
        expected: r.expected.as_ref().map(crate::verdict_text),
    }
}

/// An error-level result (its rule index is set when the rules are listed).
fn result(rule: &str, text: String, locations: Vec<Location>, r: &TestReport) -> SarifResult {
    SarifResult {
        rule_id: rule.to_string(),
        rule_index: 0,
        level: "error",
        message: Message { text },
        locations,
        code_flows: Vec::new(),
        suppressions: Vec::new(),
        properties: properties(r),
    }
}

fn add_report(b: &mut Builder, index: usize, r: &TestReport) {
    let src = &r.source;
    let name = r.test.as_deref().unwrap_or("?");
    let file_level = || vec![Builder::location(src, index, None, None)];
    if r.is_error() {
        for d in &r.diagnostics {
            let loc = vec![Builder::location(src, index, d.span, None)];
            b.push_other(INPUT, d.message.clone(), loc, r);
        }
        return;
    }
    let Some(o) = &r.outcome else { return };
    let expected = r.expected.clone().unwrap_or_default();
    for f in &o.findings {
        let w = &f.witness;
        let spans = crate::finding_spans(f);
        let locations = if spans.is_empty() {
            file_level()
        } else {
            spans
                .iter()
                .map(|&s| Builder::location(src, index, Some(s), None))
                .collect()
        };
        let mut res = result(&f.kind.to_string(), format!("{name}: {}", f.message), locations, r);
        if !w.steps.is_empty() {
            // One thread flow per thread, in order of first step.
            let mut flows: Vec<ThreadFlow> = Vec::new();
            for (i, s) in w.steps.iter().enumerate() {
                let loc = ThreadFlowLocation {
                    execution_order: i + 1,
                    location: Builder::location(src, index, Some(s.span), Some(format!("{}: {}", s.text, s.effect))),
                    kinds: if w.cycle_start.is_some_and(|c| i >= c) {
                        vec!["cycle"]
                    } else {
                        Vec::new()
                    },
                };
                match flows.iter_mut().find(|t| t.id == s.thread) {
                    Some(t) => t.locations.push(loc),
                    None => flows.push(ThreadFlow {
                        id: s.thread.clone(),
                        locations: vec![loc],
                    }),
                }
            }
            let what = if w.cycle_start.is_some() {
                "a fair execution that runs forever (steps marked `cycle` repeat)"
            } else {
                "the witness execution"
            };
            res.code_flows.push(CodeFlow {
                message: Message { text: what.into() },
                thread_flows: flows,
            });
        }
        if expected.contains(&f.kind) {
            res.suppressions.push(Suppression {
                kind: "inSource",
                justification: format!("the test's `expect` line lists {}", f.kind),
            });
        }
        b.push(f.kind.summary(), res);
    }
    let stopped = o.stop != Stop::Exhausted;
    if !stopped {
        let found: std::collections::BTreeSet<FindingKind> = o.findings.iter().map(|f| f.kind).collect();
        for k in expected.difference(&found) {
            let loc = vec![Builder::location(src, index, r.expect_span, None)];
            let text = format!(
                "{name}: expects {k}, but no execution shows it (verdict: {})",
                crate::verdict_text(&r.verdict())
            );
            b.push_other(MISSING, text, loc, r);
        }
    } else {
        let text = format!(
            "{name}: the search stopped at {} after {} states; the verdict is unknown",
            o.stop.name(),
            o.stats.states
        );
        b.push_other(STOPPED, text, file_level(), r);
    }
    for e in &o.internal_errors {
        b.push_other(INTERNAL, format!("{name}: {e}"), file_level(), r);
    }
}

/// One result as a line-oriented format shows it (`github`): its rule,
/// message, the file it is in (a path as given, not a URI) and its first
/// region, the further regions' starts, and whether the test's `expect`
/// line suppresses it.
pub(crate) struct Annotation {
    pub rule: String,
    pub message: String,
    pub path: String,
    /// (start line, start column, end line, end column), 1-based; the end
    /// column is one past the last character, as SARIF's.
    pub region: Option<(u32, u32, u32, u32)>,
    pub also: Vec<(u32, u32)>,
    pub suppressed: bool,
}

/// The results of [`to_sarif`], in its order, for the line-oriented
/// formats: one source of which results exist and where.
pub(crate) fn annotations(reports: &[TestReport]) -> Vec<Annotation> {
    let b = Builder::of(reports);
    let regions = |l: &Location| {
        (l.physical_location.region.as_ref()).map(|r| (r.start_line, r.start_column, r.end_line, r.end_column))
    };
    (b.results.into_iter())
        .map(|res| {
            let first = res.locations.first();
            let source = first.map(|l| &reports[l.physical_location.artifact_location.index].source);
            Annotation {
                rule: res.rule_id,
                message: res.message.text,
                path: source.map_or_else(String::new, |s| artifact_path(s).to_string()),
                region: first.and_then(regions),
                also: (res.locations.iter().skip(1))
                    .filter_map(regions)
                    .map(|(l, c, _, _)| (l, c))
                    .collect(),
                suppressed: !res.suppressions.is_empty(),
            }
        })
        .collect()
}

/// The SARIF log of a check run. `successful`: every file was read and
/// parsed (the run's exit code is not 2).
pub fn to_sarif(reports: &[TestReport], tool_version: &str, successful: bool) -> String {
    let b = Builder::of(reports);
    let index: BTreeMap<&String, usize> = b.rules.keys().enumerate().map(|(i, k)| (k, i)).collect();
    let results = b
        .results
        .into_iter()
        .map(|mut res| {
            res.rule_index = index[&res.rule_id];
            res
        })
        .collect();
    let rules = b
        .rules
        .iter()
        .map(|(id, summary)| Rule {
            id: id.clone(),
            short_description: Message {
                text: summary.to_string(),
            },
            default_configuration: Configuration { level: "error" },
        })
        .collect();
    let log = Log {
        schema: SCHEMA_URI,
        version: VERSION,
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "barrier-check",
                    version: tool_version.to_string(),
                    rules,
                },
            },
            invocations: vec![Invocation {
                execution_successful: successful,
            }],
            column_kind: "unicodeCodePoints",
            artifacts: reports
                .iter()
                .enumerate()
                .map(|(index, r)| Artifact {
                    location: ArtifactLocation {
                        uri: artifact_uri(&r.source),
                        index,
                    },
                })
                .collect(),
            results,
        }],
    };
    serde_json::to_string_pretty(&log).expect("the SARIF types always serialize")
}

#[cfg(test)]
mod tests {
    use super::uri_of;

    #[test]
    fn uris_of_paths() {
        assert_eq!(uri_of("litmus/amdgpu/a-b_c.litmus"), "litmus/amdgpu/a-b_c.litmus");
        assert_eq!(uri_of("/tmp/my test.litmus"), "file:///tmp/my%20test.litmus");
        assert_eq!(uri_of("dir\\x#1.litmus"), "dir/x%231.litmus");
    }
}
