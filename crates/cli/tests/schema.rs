//! The JSON the command line prints validates against
//! `docs/verdict.schema.json`: `check` over the whole corpus, a file that
//! does not parse, a stopped search, a baseline comparison, a baseline file
//! and a `diff`. The schema forbids undocumented fields, so a new field must
//! be documented there first.

mod common;

use common::{root, run_in};
use serde_json::Value;
use std::path::Path;

const ID: &str = "https://barrier-check.invalid/verdict.schema.json";

fn json(args: &[&str]) -> Value {
    let o = run_in(root(), args);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e})"))
}

struct Validator {
    schemas: boon::Schemas,
    top: boon::SchemaIndex,
    baseline: boon::SchemaIndex,
    diff: boon::SchemaIndex,
}

impl Validator {
    fn new() -> Validator {
        let text = std::fs::read_to_string(root().join("docs/verdict.schema.json")).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.add_resource(ID, schema).unwrap();
        let mut at = |loc: &str| {
            compiler
                .compile(loc, &mut schemas)
                .unwrap_or_else(|e| panic!("{loc}: {e}"))
        };
        let top = at(ID);
        let baseline = at(&format!("{ID}#/$defs/baseline"));
        let diff = at(&format!("{ID}#/$defs/diff"));
        Validator {
            schemas,
            top,
            baseline,
            diff,
        }
    }
    fn check(&self, v: &Value, idx: boon::SchemaIndex, what: &str) {
        if let Err(e) = self.schemas.validate(v, idx) {
            panic!("{what} does not validate: {e:#}");
        }
    }
}

#[test]
fn check_output_validates() {
    let v = Validator::new();
    let corpus = json(&["check", "--format", "json", "litmus"]);
    v.check(&corpus, v.top, "the corpus report");
    // Every finding of the corpus is located somewhere in its file.
    for r in corpus["results"].as_array().unwrap() {
        for f in r["findings"].as_array().unwrap() {
            assert!(
                !f["locations"].as_array().unwrap().is_empty(),
                "{}: {} has no location",
                r["file"],
                f["kind"]
            );
        }
    }
    // A stopped search and a file that does not parse.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.litmus");
    std::fs::write(&bad, "litmus \"bad\"\nmodel amdgpu\nthread T0 { frobnicate }\n").unwrap();
    let doc = json(&[
        "check",
        "--format",
        "json",
        "--max-states",
        "2",
        "litmus/amdgpu/phase-three-threads-two-rounds.litmus",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(doc["results"][0]["stop"], "state-limit");
    assert!(doc["results"][1]["error"].is_string());
    v.check(&doc, v.top, "a stopped search and a parse error");
    // Outcome sets (`--outcomes`), over the whole corpus.
    let outcomes = json(&["check", "--format", "json", "--outcomes", "litmus"]);
    assert!(outcomes["results"][0]["outcomes"].is_array());
    v.check(&outcomes, v.top, "the corpus report with outcomes");
}

/// Inputs that could not be checked (a missing file, a file over the size
/// cap, a 32 KB file of NUL bytes with its diagnostics capped) are results
/// with `error` set, valid like any other.
#[test]
fn unreadable_inputs_validate() {
    let v = Validator::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let nul = dir.join("nul.litmus");
    std::fs::write(&nul, [0u8; 32 * 1024]).unwrap();
    let many = dir.join("many.litmus");
    std::fs::write(&many, format!("litmus \"x\"\nmodel amdgpu-gfx12\n{}", "$ ".repeat(100))).unwrap();
    let doc = json(&[
        "check",
        "--format",
        "json",
        "/nonexistent/missing.litmus",
        "/dev/zero",
        nul.to_str().unwrap(),
        many.to_str().unwrap(),
        "litmus/amdgpu/phase-basic.litmus",
    ]);
    assert_eq!(doc["summary"]["errors"], 4);
    for r in &doc["results"].as_array().unwrap()[..4] {
        assert!(r["error"].is_string(), "{r}");
    }
    v.check(&doc, v.top, "unreadable inputs");
}

#[test]
fn baseline_and_diff_output_validate() {
    let v = Validator::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("baseline.json");
    let base_s = base.to_str().unwrap();
    json(&[
        "check",
        "--format",
        "json",
        "litmus/amdgpu-gfx12",
        "--write-baseline",
        base_s,
    ]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    v.check(&written, v.baseline, "a baseline file");
    let changed =
        std::fs::read_to_string(&base)
            .unwrap()
            .replacen("\"verdict\": \"ok\"", "\"verdict\": \"deadlock\"", 1);
    std::fs::write(&base, changed).unwrap();
    let doc = json(&["check", "--format", "json", "litmus/amdgpu-gfx12", "--baseline", base_s]);
    assert_eq!(doc["baseline_changes"].as_array().map(Vec::len), Some(1));
    v.check(&doc, v.top, "a report against a baseline");
    let doc = json(&[
        "diff",
        "litmus/cuda",
        "--model",
        "cuda-sm80",
        "--model",
        "cuda-sm90",
        "--format",
        "json",
    ]);
    assert!(!doc["flipped"].as_array().unwrap().is_empty());
    v.check(&doc, v.diff, "a diff");
}

/// The validation can fail: a wrong kind, a missing field and an
/// undocumented field are each rejected.
#[test]
fn the_schema_rejects_bad_documents() {
    let v = Validator::new();
    let good = json(&[
        "check",
        "--format",
        "json",
        "litmus/amdgpu/deadlock-third-thread.litmus",
    ]);
    v.check(&good, v.top, "the report");
    let mut wrong_kind = good.clone();
    wrong_kind["results"][0]["verdict"] = serde_json::json!(["stuck"]);
    let mut missing = good.clone();
    missing["results"][0].as_object_mut().unwrap().remove("pass");
    let mut extra = good.clone();
    extra["results"][0]["colour"] = serde_json::json!("red");
    for (what, doc) in [
        ("a wrong kind", wrong_kind),
        ("a missing field", missing),
        ("an extra field", extra),
    ] {
        assert!(v.schemas.validate(&doc, v.top).is_err(), "{what} passes the schema");
    }
}

/// Reports of PTX kernels (docs/ptx.md) are results like any other: a
/// module of two entries (one with a race located at its PTX lines) and
/// an inconclusive entry (an input error) validate.
#[test]
fn kernel_reports_validate() {
    let v = Validator::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let module = root().join("crates/cli/tests/ptx/two-entries.ptx");
    let text = std::fs::read_to_string(&module).unwrap();
    let unknown = dir.join("no-param.ptx");
    std::fs::write(&unknown, text.replace(" --param 0=1", "")).unwrap();
    let doc = json(&[
        "check",
        "--format",
        "json",
        module.to_str().unwrap(),
        unknown.to_str().unwrap(),
    ]);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(results[1]["verdict"], serde_json::json!(["race"]));
    assert!(!results[1]["findings"][0]["locations"].as_array().unwrap().is_empty());
    assert!(results[2]["error"].is_string() && results[3]["error"].is_string());
    v.check(&doc, v.top, "kernel reports");
}
