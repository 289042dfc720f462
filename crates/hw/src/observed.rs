//! The wire formats of hardware runs, schema 1 (docs/hardware.md, "Running
//! on a GPU"): what `emit cuda` leaves next to its programs
//! (`manifest.json`, read by [`parse_manifest`]), the one JSON object a
//! harness program prints ([`parse_program_output`]), and the record of a
//! whole `hw run`, `OBSERVED.json` ([`Observed`]).
//!
//! The comparison works on plain types ([`crate::compare`]); these types
//! only carry the bytes. A field added later gets a serde default, so a
//! reader of schema 1 keeps reading older files; a change of meaning bumps
//! [`SCHEMA`].

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version this module reads and writes.
pub const SCHEMA: u32 = 1;

/// `manifest.json` of an emission folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    /// One program per emitted test.
    pub emitted: Vec<Emitted>,
    /// Tests that got no program, with why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
}

/// One emitted program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emitted {
    /// The litmus file, as `emit cuda` was given it.
    pub file: String,
    /// The program's source, relative to the manifest's folder.
    pub cu: String,
    /// The litmus test's name.
    pub test: String,
    /// How litmus threads map to GPU threads: `warp` or `lane`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<String>,
    /// The nvcc command line (run in the manifest's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvcc: Option<String>,
}

/// A test that got no program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// One final outcome and how many iterations ended with it: every
/// observable's value by its name (`b0t0:r`, `x`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCount {
    pub values: BTreeMap<String, i64>,
    pub count: u64,
}

/// What a harness program prints: one JSON object on stdout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramOutput {
    pub schema: u32,
    pub test: String,
    /// How litmus threads map to GPU threads: `warp` or `lane`.
    pub mapping: String,
    pub iterations: u64,
    /// Iterations that finished before the deadline.
    pub completed: u64,
    /// Whether an iteration missed the program's own deadline.
    pub hung: bool,
    pub cuda_error: Option<String>,
    pub outcomes: Vec<OutcomeCount>,
}

/// One compute-sanitizer tool's findings on a test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolReport {
    /// The count of its `ERROR SUMMARY: N errors` line; `None` when the
    /// tool printed none (it was killed, or could not start).
    pub errors: Option<u64>,
    /// The first few distinct error lines (addresses masked), or why the
    /// tool gave no summary.
    pub messages: Vec<String>,
    /// Whether the runner killed the tool at its time limit.
    #[serde(default)]
    pub timed_out: bool,
    /// Why the tool was not run (the program hung in the plain run and
    /// `--sanitizer-skip-hung` was given, or the run's `--deadline` had
    /// passed); then `errors` is `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

/// Both compute-sanitizer tools' findings on a test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sanitizer {
    pub synccheck: ToolReport,
    pub racecheck: ToolReport,
}

/// One test's runs on the device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// The litmus file (from the manifest).
    pub file: String,
    pub test: String,
    /// `warp` or `lane`; `None` when the program never ran.
    pub mapping: Option<String>,
    /// Iterations asked for.
    pub iterations: u64,
    pub completed: u64,
    /// The program missed its deadline, or the runner's watchdog killed it.
    pub hung: bool,
    pub cuda_error: Option<String>,
    /// nvcc's messages when the program did not compile (then it never ran).
    pub compile_error: Option<String>,
    pub outcomes: Vec<OutcomeCount>,
    /// `None` without `--sanitizer`, or when the program did not compile.
    pub sanitizer: Option<Sanitizer>,
    /// What the runner saw besides the program's report: its watchdog
    /// killed the program, or the program crashed or printed no report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the program did not run (or did not run to its end): the run's
    /// `--deadline` passed before it started or while it ran, or the
    /// record was written while the run was still going. Nothing observed
    /// of such a test counts for or against the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

/// `OBSERVED.json`: every test's runs on one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    pub schema: u32,
    /// The GPU's name as `nvidia-smi` gives it, or `unknown`.
    pub device: String,
    /// Iterations asked of each test.
    pub iterations: u64,
    /// The seed every program got.
    #[serde(default)]
    pub seed: u64,
    /// Set while the run is still going: `hw run` rewrites the record
    /// after each finished test, so a run that is killed leaves what it
    /// finished, with this line saying how far it got. `None` once the run
    /// ended (its deadline included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    pub runs: Vec<Run>,
}

/// Checks a document's `schema` field before reading the rest, so a newer
/// file gets a clear message instead of a missing-field error.
fn check_schema(v: &serde_json::Value, what: &str) -> Result<(), String> {
    match v.get("schema").and_then(serde_json::Value::as_u64) {
        Some(s) if s == u64::from(SCHEMA) => Ok(()),
        Some(s) => Err(format!("{what} has schema {s}; this build reads schema {SCHEMA}")),
        None => Err(format!("{what} has no `schema` number")),
    }
}

fn parse_doc<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("{what} is not JSON: {e}"))?;
    check_schema(&v, what)?;
    serde_json::from_value(v).map_err(|e| format!("{what}: {e}"))
}

/// Reads a `manifest.json`.
pub fn parse_manifest(text: &str) -> Result<Manifest, String> {
    parse_doc(text, "the manifest")
}

/// Reads an `OBSERVED.json`.
pub fn parse_observed(text: &str) -> Result<Observed, String> {
    parse_doc(text, "the observations")
}

/// Writes an `OBSERVED.json` (pretty, with a final newline).
pub fn to_json(o: &Observed) -> String {
    serde_json::to_string_pretty(o).expect("the wire types always serialize") + "\n"
}

/// Reads a harness program's stdout: the whole of it is one JSON object,
/// or, when the program or its runtime printed other lines too, the last
/// line that is one.
pub fn parse_program_output(stdout: &str) -> Result<ProgramOutput, String> {
    let whole = stdout.trim();
    if whole.starts_with('{') {
        if let Ok(p) = parse_doc(whole, "the program's report") {
            return Ok(p);
        }
    }
    let last = stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| "the program printed no JSON report".to_string())?;
    parse_doc(last, "the program's report")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_report_is_read_whole_or_from_its_last_json_line() {
        let report = r#"{"schema":1,"test":"t","mapping":"warp","iterations":2,"completed":2,"hung":false,"cuda_error":null,"outcomes":[{"values":{"b0t0:r":1,"x":2},"count":2}]}"#;
        let p = parse_program_output(report).unwrap();
        assert_eq!(p.completed, 2);
        assert_eq!(p.outcomes[0].values["b0t0:r"], 1);
        let noisy = format!("warming up\n{report}\n");
        assert_eq!(parse_program_output(&noisy).unwrap(), p);
        assert!(parse_program_output("Segmentation fault\n")
            .unwrap_err()
            .contains("no JSON report"));
    }

    #[test]
    fn another_schema_is_refused_by_name() {
        let e = parse_manifest(r#"{"schema":2,"emitted":[]}"#).unwrap_err();
        assert!(e.contains("schema 2"), "{e}");
        let m = parse_manifest(r#"{"schema":1,"emitted":[{"file":"a.litmus","cu":"a.cu","test":"a"}]}"#).unwrap();
        assert_eq!(m.emitted[0].cu, "a.cu");
        assert!(m.skipped.is_empty());
    }

    #[test]
    fn observations_round_trip() {
        let o = Observed {
            schema: SCHEMA,
            device: "unknown".into(),
            iterations: 10,
            seed: 7,
            partial: None,
            runs: vec![Run {
                file: "a.litmus".into(),
                test: "a".into(),
                mapping: None,
                iterations: 10,
                completed: 0,
                hung: false,
                cuda_error: None,
                compile_error: Some("error: x".into()),
                outcomes: vec![],
                sanitizer: None,
                note: None,
                not_run: None,
            }],
        };
        assert_eq!(parse_observed(&to_json(&o)).unwrap(), o);
    }
}
