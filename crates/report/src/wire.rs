//! The JSON wire format, schema 1 (`docs/litmus.md`, "Outputs";
//! `docs/verdict.schema.json`). Serde types live only here; fields may be added, never
//! changed in meaning without a new schema number.

use crate::{summarize, TestReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA: u32 = 1;

#[derive(Serialize)]
pub struct Document {
    pub schema: u32,
    pub results: Vec<Result>,
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct Result {
    pub file: String,
    pub test: Option<String>,
    pub model: Option<String>,
    pub verdict: Vec<String>,
    pub expected: Option<Vec<String>>,
    pub pass: bool,
    pub findings: Vec<Finding>,
    pub stats: Option<Stats>,
    pub stop: Option<String>,
    /// The outcome set (`check --outcomes` only, so the default document
    /// is unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Vec<OutcomeClass>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub internal_errors: Vec<String>,
}

#[derive(Serialize)]
pub struct Diagnostic {
    pub line: Option<u32>,
    pub col: Option<u32>,
    pub message: String,
}

#[derive(Serialize)]
pub struct Finding {
    pub kind: String,
    pub message: String,
    /// Where the finding is: the statements it is about (see
    /// [`crate::finding_spans`]), as 1-based line and column ranges.
    pub locations: Vec<Location>,
    pub witness: Witness,
}

/// A source range: start line and column, and the line and column just
/// past its end (columns count Unicode code points).
#[derive(Serialize)]
pub struct Location {
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

#[derive(Serialize)]
pub struct Witness {
    pub steps: Vec<Step>,
    pub bmo: BTreeMap<String, Vec<String>>,
    pub participates_in: Vec<Participation>,
    pub stuck: Vec<String>,
    pub focus: Vec<String>,
    /// For a lasso (nontermination): the index in `steps` where the cycle
    /// begins; the steps from there on repeat forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle_start: Option<usize>,
}

#[derive(Serialize)]
pub struct Step {
    pub thread: String,
    pub statement: String,
    pub line: u32,
    pub col: u32,
    pub effect: String,
    /// The ids (`T#n`, the n-th event of thread `T`) of the events the
    /// step added, as the labels in `bmo`, `participates_in`, `stuck` and
    /// `focus` begin.
    pub events: Vec<String>,
}

#[derive(Serialize)]
pub struct Participation {
    pub wait: String,
    pub participants: Vec<String>,
}

/// One outcome: `{"kind": "final", "values": {...}, "executions": N}`, or
/// `deadlock` / `nontermination` without values.
#[derive(Serialize)]
pub struct OutcomeClass {
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Values>,
    pub executions: u64,
}

/// Observable values as a JSON object in the observables' order. The
/// names are shared by every outcome of a set: a copy per outcome made
/// the wire form of a large set (millions of outcomes) several times the
/// size of the set itself (issue 33, point 9).
pub struct Values {
    pub names: std::sync::Arc<[String]>,
    pub values: Vec<i64>,
}

impl Serialize for Values {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.values.len()))?;
        for (k, v) in self.names.iter().zip(&self.values) {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The wire form of an outcome set.
fn outcome_classes(set: &bc_explore::Outcomes) -> Vec<OutcomeClass> {
    let names: std::sync::Arc<[String]> = set.observables.clone().into();
    set.classes
        .iter()
        .map(|c| match &c.kind {
            bc_explore::OutcomeKind::Final(values) => OutcomeClass {
                kind: "final",
                values: Some(Values {
                    names: names.clone(),
                    values: values.clone(),
                }),
                executions: c.executions,
            },
            bc_explore::OutcomeKind::Deadlock => OutcomeClass {
                kind: "deadlock",
                values: None,
                executions: c.executions,
            },
            bc_explore::OutcomeKind::Nontermination => OutcomeClass {
                kind: "nontermination",
                values: None,
                executions: c.executions,
            },
        })
        .collect()
}

#[derive(Serialize)]
pub struct Stats {
    pub states: u64,
    pub executions: u64,
    pub elapsed_ms: f64,
}

#[derive(Serialize)]
pub struct Summary {
    pub tests: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub stopped: usize,
}

fn kinds(v: &std::collections::BTreeSet<bc_syntax::FindingKind>) -> Vec<String> {
    v.iter().map(|k| k.to_string()).collect()
}

pub fn result(r: &TestReport) -> Result {
    let error = if r.is_error() {
        Some(crate::diagnostic::render_all(&r.source, &r.diagnostics))
    } else {
        None
    };
    let diagnostics = r
        .diagnostics
        .iter()
        .map(|d| {
            let lc = d.span.map(|s| r.source.line_col(s.start));
            Diagnostic {
                line: lc.map(|l| l.line),
                col: lc.map(|l| l.col),
                message: d.message.clone(),
            }
        })
        .collect();
    let findings = r
        .outcome
        .iter()
        .flat_map(|o| &o.findings)
        .map(|f| finding(r, f))
        .collect();
    Result {
        file: r.source.name.clone(),
        test: r.test.clone(),
        model: r.model.clone(),
        verdict: kinds(&r.verdict()),
        expected: r.expected.as_ref().map(kinds),
        pass: r.pass(),
        findings,
        stats: r.outcome.as_ref().map(|o| Stats {
            states: o.stats.states,
            executions: o.stats.executions,
            elapsed_ms: (o.stats.elapsed.as_secs_f64() * 1e6).round() / 1e3,
        }),
        stop: r.outcome.as_ref().map(|o| o.stop.name().to_string()),
        outcomes: r
            .outcome
            .as_ref()
            .and_then(|o| o.outcomes.as_ref())
            .map(outcome_classes),
        error,
        diagnostics,
        internal_errors: r
            .outcome
            .as_ref()
            .map(|o| o.internal_errors.clone())
            .unwrap_or_default(),
    }
}

pub fn document(reports: &[TestReport]) -> Document {
    let s = summarize(reports);
    Document {
        schema: SCHEMA,
        results: reports.iter().map(result).collect(),
        summary: Summary {
            tests: s.tests,
            passed: s.passed,
            failed: s.failed,
            errors: s.errors,
            stopped: s.stopped,
        },
    }
}

pub fn to_json(reports: &[TestReport]) -> String {
    serde_json::to_string_pretty(&document(reports)).expect("the wire types always serialize")
}

/// A check run compared with a baseline: the schema-1 document with the
/// differences added (`baseline_changes`; absent without a baseline).
#[derive(Serialize)]
struct WithChanges {
    #[serde(flatten)]
    document: Document,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_changes: Option<Vec<Change>>,
}

/// A test whose verdict differs from the baseline.
#[derive(Serialize)]
pub struct Change {
    pub file: String,
    pub test: Option<String>,
    pub old: String,
    pub new: String,
    pub first_finding: String,
}

pub fn to_json_with_changes(reports: &[TestReport], changes: Option<&[crate::baseline::Change]>) -> String {
    let doc = WithChanges {
        document: document(reports),
        baseline_changes: changes.map(|cs| {
            cs.iter()
                .map(|c| Change {
                    file: c.file.clone(),
                    test: c.test.clone(),
                    old: c.old.clone(),
                    new: c.new.clone(),
                    first_finding: c.witness.clone(),
                })
                .collect()
        }),
    };
    serde_json::to_string_pretty(&doc).expect("the wire types always serialize")
}

/// A verdict baseline file (`check --write-baseline`): schema, then one
/// entry per test, sorted by file.
#[derive(Serialize, Deserialize)]
pub struct BaselineFile {
    pub schema: u32,
    pub baseline: Vec<BaselineEntry>,
}

#[derive(Serialize, Deserialize)]
pub struct BaselineEntry {
    pub file: String,
    pub test: Option<String>,
    pub model: Option<String>,
    pub verdict: String,
}

/// The baseline of a run as JSON (stable: sorted, no timings).
pub fn baseline_json(reports: &[TestReport]) -> String {
    let doc = BaselineFile {
        schema: SCHEMA,
        baseline: crate::baseline::entries(reports)
            .into_iter()
            .map(|e| BaselineEntry {
                file: e.file,
                test: e.test,
                model: e.model,
                verdict: e.verdict,
            })
            .collect(),
    };
    serde_json::to_string_pretty(&doc).expect("the wire types always serialize") + "\n"
}

/// Reads a baseline file's JSON.
pub fn parse_baseline(text: &str) -> std::result::Result<Vec<crate::baseline::Entry>, String> {
    let doc: BaselineFile = serde_json::from_str(text).map_err(|e| format!("not a baseline file: {e}"))?;
    if doc.schema != SCHEMA {
        return Err(format!("baseline schema {} (this build reads {SCHEMA})", doc.schema));
    }
    Ok(doc
        .baseline
        .into_iter()
        .map(|e| crate::baseline::Entry {
            file: e.file,
            test: e.test,
            model: e.model,
            verdict: e.verdict,
        })
        .collect())
}

/// The tests whose verdicts differ between two models (`barrier-check
/// diff`), with both runs' full results (witnesses included).
#[derive(Serialize)]
pub struct DiffDocument {
    pub schema: u32,
    pub old_model: String,
    pub new_model: String,
    pub tests: usize,
    pub flipped: Vec<Flip>,
}

#[derive(Serialize)]
pub struct Flip {
    pub file: String,
    pub test: Option<String>,
    pub old: Result,
    pub new: Result,
}

/// The diff of two runs over the same files (paired by file) as JSON.
pub fn diff_json(old_model: &str, new_model: &str, pairs: &[(&TestReport, &TestReport)], tests: usize) -> String {
    let doc = DiffDocument {
        schema: SCHEMA,
        old_model: old_model.to_string(),
        new_model: new_model.to_string(),
        tests,
        flipped: pairs
            .iter()
            .map(|(o, n)| Flip {
                file: o.source.name.clone(),
                test: o.test.clone(),
                old: result(o),
                new: result(n),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&doc).expect("the wire types always serialize")
}

/// `models --format json`: the built-in models (and the format's
/// planned ones, `available: false`).
#[derive(Serialize)]
pub struct ModelList {
    pub schema: u32,
    pub models: Vec<ModelEntry>,
}

#[derive(Serialize)]
pub struct ModelEntry {
    pub name: String,
    pub description: String,
    pub available: bool,
}

/// `models NAME --format json`: one model, as the text form describes it.
#[derive(Serialize)]
pub struct ModelDocument {
    pub schema: u32,
    pub model: ModelInfo,
}

#[derive(Serialize)]
pub struct ModelInfo {
    pub name: String,
    pub description: String,
    pub warp_size: u32,
    pub default_progress: String,
    /// The rules the model judges (`Rule::name`).
    pub rules: Vec<String>,
    /// The abstract statements it provides (the instructions apart).
    pub statements: Vec<String>,
    pub barriers: Vec<ModelBarrier>,
    pub groups: Vec<ModelGroup>,
    pub instructions: Vec<ModelInstruction>,
}

#[derive(Serialize)]
pub struct ModelBarrier {
    pub id: i64,
    pub name: String,
    pub scope: String,
    /// The count at launch, as the text form prints it (`64`, `none
    /// (needs init)`, `threads in the grid`).
    pub count: String,
    /// `joined at launch`, `dropped at thread exit`, `privileged`, ...
    pub properties: Vec<String>,
}

#[derive(Serialize)]
pub struct ModelGroup {
    pub name: String,
    pub ids: Vec<i64>,
    pub wait_on_joined: bool,
}

#[derive(Serialize)]
pub struct ModelInstruction {
    pub name: String,
    /// The operand kinds: `barrier`, `int`, `object`, `register`.
    pub operands: Vec<String>,
    /// How many of the last operands may be left out.
    pub optional: usize,
    pub result: bool,
    /// What it lowers to, in words.
    pub text: String,
}

/// A wire document (`ModelList`, `ModelDocument`) as pretty JSON.
pub fn document_json<T: Serialize>(doc: &T) -> String {
    serde_json::to_string_pretty(doc).expect("the wire types always serialize")
}

/// One finding of `r` on the wire (`check`'s `findings[]`, `explain
/// --format json`).
pub fn finding(r: &TestReport, f: &bc_explore::Finding) -> Finding {
    Finding {
        kind: f.kind.to_string(),
        message: f.message.clone(),
        locations: crate::finding_spans(f)
            .into_iter()
            .map(|sp| {
                let (a, b) = r.source.range(sp);
                Location {
                    line: a.line,
                    col: a.col,
                    end_line: b.line,
                    end_col: b.col,
                }
            })
            .collect(),
        witness: Witness {
            steps: f
                .witness
                .steps
                .iter()
                .map(|s| {
                    let lc = r.source.line_col(s.span.start);
                    Step {
                        thread: s.thread.clone(),
                        statement: s.text.clone(),
                        line: lc.line,
                        col: lc.col,
                        effect: s.effect.clone(),
                        events: s.events.clone(),
                    }
                })
                .collect(),
            bmo: f.witness.bmo.iter().cloned().collect(),
            participates_in: f
                .witness
                .participates_in
                .iter()
                .map(|(w, ps)| Participation {
                    wait: w.clone(),
                    participants: ps.clone(),
                })
                .collect(),
            stuck: f.witness.stuck.clone(),
            focus: f.witness.focus.clone(),
            cycle_start: f.witness.cycle_start,
        },
    }
}

/// `explain --format json`: one finding of one test.
#[derive(Serialize)]
pub struct ExplainDocument {
    pub schema: u32,
    pub file: String,
    pub test: Option<String>,
    pub model: Option<String>,
    pub finding: Finding,
}

/// [`ExplainDocument`] for finding `f` of `r`, as pretty JSON.
pub fn explain_json(r: &TestReport, f: &bc_explore::Finding) -> String {
    let doc = ExplainDocument {
        schema: SCHEMA,
        file: r.source.name.clone(),
        test: r.test.clone(),
        model: r.model.clone(),
        finding: finding(r, f),
    };
    document_json(&doc)
}

/// `graph --format json`: the operation graph (`bc_graph::dot`), one node
/// per instruction of each thread and its program-order and
/// thread-barrier-order edges.
#[derive(Serialize)]
pub struct GraphDocument {
    pub schema: u32,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
}

#[derive(Serialize)]
pub struct GraphNode {
    pub thread: String,
    pub pc: u32,
    pub statement: String,
    pub line: u32,
    pub col: u32,
    /// The barrier instance a barrier instruction names.
    pub barrier: Option<String>,
}

#[derive(Serialize)]
pub struct GraphEdge {
    /// Indices into `nodes`.
    pub from: usize,
    pub to: usize,
    /// `po` (program order) or `tbo` (thread-barrier-order).
    pub kind: &'static str,
}

/// [`GraphDocument`] of program `p` lowered from `source`, as pretty JSON.
pub fn graph_json(p: &bc_graph::Program, source: &bc_syntax::SourceFile) -> String {
    use petgraph::visit::EdgeRef;
    let g = bc_graph::dot::operation_graph(p);
    let nodes = (g.node_indices())
        .map(|n| {
            let op = &g[n];
            let lc = source.line_col(op.span.start);
            GraphNode {
                thread: p.threads[op.thread.index()].name.clone(),
                pc: op.pc,
                statement: op.text.clone(),
                line: lc.line,
                col: lc.col,
                barrier: op.barrier.map(|b| p.barriers[b.index()].name.clone()),
            }
        })
        .collect();
    let edges = (g.edge_references())
        .map(|e| GraphEdge {
            from: e.source().index(),
            to: e.target().index(),
            kind: match e.weight() {
                bc_graph::dot::OpEdge::ProgramOrder => "po",
                bc_graph::dot::OpEdge::ThreadBarrierOrder => "tbo",
            },
        })
        .collect();
    let doc = GraphDocument {
        schema: SCHEMA,
        nodes,
        edges,
    };
    document_json(&doc)
}
