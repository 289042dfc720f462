//! `check --format sarif` and `--format junit`: the output validates against
//! the formats' published schemas, and says what the run found; `--format
//! github` annotates what SARIF shows unsuppressed.
//!
//! The two published schemas are vendored in `tests/schemas/` (their
//! origins, licenses and SHA-256 in `tests/schemas/README.md`), so the
//! test needs no network for them:
//! - SARIF 2.1.0 (the final "rtm.5" JSON schema, SchemaStore's copy, as
//!   the npm package `@microsoft/jest-sarif` 1.0.0-beta.0 ships it);
//!   validated here with boon (draft-04).
//! - JUnit: `junit-10.xsd`, the Jenkins/Surefire JUnit schema that pytest
//!   validates its own JUnit XML against (pytest 8.3.3's
//!   `testing/example_scripts/`); validated with the Python `xmlschema`
//!   3.4.3 package, which the test installs once per target directory
//!   with `python3 -m pip`. Without pip or a registry the JUnit schema
//!   checks say so loudly and are skipped (CI has both).

mod common;

use common::{root, run_in};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const SARIF_SHA256: &str = "2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8";
const JUNIT_SHA256: &str = "a1a816f58d1bf95ebabf371994df0b9246dee66ea9572fbec4f9296f1b2c0ff6";

fn sha256(path: &Path) -> String {
    let o = Command::new("sha256sum").arg(path).output().expect("sha256sum runs");
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A vendored schema, checked against its pinned SHA-256.
fn vendored(name: &str, sha: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas").join(name);
    assert_eq!(sha256(&path), sha, "tests/schemas/{name} is not the pinned file");
    path
}

struct External {
    sarif_schema: PathBuf,
    junit_xsd: PathBuf,
    /// A `PYTHONPATH` holding `xmlschema`; `None` when it cannot be
    /// installed (no pip, no registry).
    python_path: Option<PathBuf>,
}

/// The vendored schemas, and the XSD validator installed once (see the
/// module doc).
fn external() -> &'static External {
    static EXTERNAL: OnceLock<External> = OnceLock::new();
    EXTERNAL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("external-schemas");
        std::fs::create_dir_all(&dir).unwrap();
        let python_path = dir.join("py");
        let installed = python_path.join("xmlschema").exists()
            || Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--target",
                ])
                .arg(&python_path)
                .arg("xmlschema==3.4.3")
                .output()
                .is_ok_and(|o| o.status.success());
        if !installed {
            eprintln!(
                "\n*** SKIPPED: `python3 -m pip install xmlschema==3.4.3` failed: JUnit output was NOT validated against junit-10.xsd ***\n"
            );
        }
        External {
            sarif_schema: vendored("sarif-2.1.0-rtm.5.json", SARIF_SHA256),
            junit_xsd: vendored("junit-10.xsd", JUNIT_SHA256),
            python_path: installed.then_some(python_path),
        }
    })
}

/// Runs the binary in `dir`; returns stdout and the exit code.
fn output(dir: &Path, args: &[&str]) -> (String, i32) {
    let o = run_in(dir, args);
    (String::from_utf8(o.stdout).unwrap(), o.status.code().unwrap_or(-1))
}

/// A folder of small tests with relative names: one that fails its
/// `expect`, one that does not parse, one whose search is cut short, and
/// one whose expected finding is found.
fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("format-fixtures");
    let cases = dir.join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    let files = [
        (
            "wrong.litmus",
            "litmus \"a <lone> wave & its barrier\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { join B; arrive B; wait B }\nexpect ok\n",
        ),
        (
            "bad.litmus",
            "litmus \"bad\"\nmodel amdgpu\nthread T0 { frobnicate }\nthread T1 { arrive }\n",
        ),
        (
            "expected.litmus",
            "litmus \"expected deadlock\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { join B; arrive B; wait B }\nexpect deadlock\n",
        ),
        (
            "missing.litmus",
            "litmus \"expects a race that is not there\"\nmodel amdgpu\nbarrier B = 1\nthread T0 { join B; arrive B; wait B }\nexpect race\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(cases.join(name), text).unwrap();
    }
    dir
}

fn sarif_validator() -> (boon::Schemas, boon::SchemaIndex) {
    let text = std::fs::read_to_string(&external().sarif_schema).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let id = "https://barrier-check.invalid/sarif-2.1.0-rtm.5.json";
    compiler.add_resource(id, schema).unwrap();
    let idx = compiler.compile(id, &mut schemas).unwrap();
    (schemas, idx)
}

fn validate_sarif(v: &(boon::Schemas, boon::SchemaIndex), text: &str, what: &str) -> Value {
    let doc: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e})"));
    if let Err(e) = v.0.validate(&doc, v.1) {
        panic!("{what} does not validate against SARIF 2.1.0: {e:#}");
    }
    doc
}

/// Validates an XML file against `junit-10.xsd` with `xmlschema`; `None`
/// without the validator (said loudly once, in `external`).
fn xmlschema_validate(file: &Path) -> Option<std::process::Output> {
    let ext = external();
    let python_path = ext.python_path.as_ref()?;
    let o = Command::new("python3")
        .env("PYTHONPATH", python_path)
        .args([
            "-c",
            "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
        ])
        .arg(&ext.junit_xsd)
        .arg(file)
        .output()
        .expect("python3 runs");
    Some(o)
}

fn validate_junit(xml: &str, what: &str) {
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("junit-{what}.xml"));
    std::fs::write(&file, xml).unwrap();
    let Some(o) = xmlschema_validate(&file) else { return };
    assert!(
        o.status.success(),
        "{what} does not validate against junit-10.xsd:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn results(doc: &Value) -> &Vec<Value> {
    doc["runs"][0]["results"].as_array().unwrap()
}

#[test]
fn sarif_of_the_corpus_validates_with_one_result_per_finding() {
    let v = sarif_validator();
    let (text, code) = output(root(), &["check", "--format", "sarif", "litmus"]);
    assert_eq!(code, 0);
    let doc = validate_sarif(&v, &text, "the corpus's SARIF");
    // The same run as JSON: every finding is one result of its kind's rule,
    // suppressed because every corpus test expects its findings.
    let (json, _) = output(root(), &["check", "--format", "json", "litmus"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    let mut want: Vec<(String, String)> = Vec::new();
    for r in json["results"].as_array().unwrap() {
        for f in r["findings"].as_array().unwrap() {
            want.push((r["file"].as_str().unwrap().into(), f["kind"].as_str().unwrap().into()));
        }
    }
    let got: Vec<(String, String)> = results(&doc)
        .iter()
        .map(|r| {
            let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap();
            (uri.to_string(), r["ruleId"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(got, want);
    assert!(want.len() > 100, "the corpus has findings ({})", want.len());
    for r in results(&doc) {
        assert_eq!(r["suppressions"][0]["kind"], "inSource", "{r}");
        // Every location is a region of the file (line and column).
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().is_some_and(|l| l >= 1), "{r}");
        // A rule index points at the rule of the same id.
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(doc["runs"][0]["tool"]["driver"]["rules"][i]["id"], r["ruleId"]);
    }
}

#[test]
fn sarif_reports_unexpected_findings_errors_and_stops() {
    let v = sarif_validator();
    let dir = fixtures();
    let (text, code) = output(&dir, &["check", "--format", "sarif", "cases"]);
    assert_eq!(code, 2, "a file does not parse");
    let doc = validate_sarif(&v, &text, "the fixtures' SARIF");
    assert_eq!(doc["runs"][0]["invocations"][0]["executionSuccessful"], false);
    let summary: Vec<String> = results(&doc)
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            format!(
                "{} {} {}:{}:{} suppressed={}",
                r["ruleId"].as_str().unwrap(),
                loc["artifactLocation"]["uri"].as_str().unwrap(),
                loc["region"]["startLine"],
                loc["region"]["startColumn"],
                loc["region"]["snippet"]["text"],
                r.get("suppressions").is_some()
            )
        })
        .collect();
    insta::assert_snapshot!("sarif_fixtures", summary.join("\n"));
    // The witness of the unexpected deadlock is a code flow in step order.
    let wrong = results(&doc)
        .iter()
        .find(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "cases/wrong.litmus")
        .unwrap();
    let steps: Vec<u64> = wrong["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["executionOrder"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2]);
    // A search cut short is an error result, never silence.
    let (text, code) = output(
        root(),
        &[
            "check",
            "--format",
            "sarif",
            "--max-states",
            "3",
            "litmus/amdgpu/deadlock-third-thread.litmus",
        ],
    );
    assert_eq!(code, 1);
    let doc = validate_sarif(&v, &text, "a stopped search's SARIF");
    assert!(results(&doc).iter().any(|r| r["ruleId"] == "search-stopped"), "{doc}");
}

/// The SARIF of one corpus test with a deadlock.
fn deadlock_sarif() -> String {
    let file = "litmus/amdgpu/deadlock-third-thread.litmus";
    output(root(), &["check", "--format", "sarif", file]).0
}

#[test]
fn sarif_snapshot_of_a_deadlock() {
    let text = deadlock_sarif();
    validate_sarif(&sarif_validator(), &text, "one test's SARIF");
    let text = text.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    insta::assert_snapshot!("sarif_deadlock", text);
}

/// `--format github`: one workflow command per result SARIF shows
/// unsuppressed, at the same place, and nothing for a passing corpus.
#[test]
fn github_annotations_are_the_unsuppressed_sarif_results() {
    let dir = fixtures();
    let (text, code) = output(&dir, &["check", "--format", "github", "cases"]);
    assert_eq!(code, 2, "a file does not parse");
    insta::assert_snapshot!("github_fixtures", text);
    // The same results, at the same places, as the SARIF log's unsuppressed ones.
    let (sarif, _) = output(&dir, &["check", "--format", "sarif", "cases"]);
    let doc: Value = serde_json::from_str(&sarif).unwrap();
    let shown: Vec<String> = (results(&doc).iter())
        .filter(|r| r.get("suppressions").is_none())
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            format!(
                "title=barrier-check ({}),file={},line={},col={}",
                r["ruleId"].as_str().unwrap(),
                loc["artifactLocation"]["uri"].as_str().unwrap(),
                loc["region"]["startLine"],
                loc["region"]["startColumn"],
            )
        })
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), shown.len(), "{text}");
    for (line, want) in lines.iter().zip(&shown) {
        assert!(line.starts_with(&format!("::error {want},")), "{line}\nwant {want}");
    }
    // A passing corpus annotates nothing; a stopped search is an error.
    let (text, code) = output(root(), &["check", "--format", "github", "litmus/amdgpu"]);
    assert_eq!((text.as_str(), code), ("", 0));
    let (text, code) = output(
        root(),
        &[
            "check",
            "--format",
            "github",
            "--max-states",
            "3",
            "litmus/amdgpu/deadlock-third-thread.litmus",
        ],
    );
    assert_eq!(code, 1);
    assert!(
        text.starts_with(
            "::error title=barrier-check (search-stopped),file=litmus/amdgpu/deadlock-third-thread.litmus::"
        ),
        "{text}"
    );
    // Against a baseline, a changed verdict is the annotation (an expected
    // deadlock the baseline calls ok), and a held baseline prints nothing.
    let baseline = dir.join("baseline.json");
    let text = "{\"schema\": 1, \"baseline\": [{\"file\": \"cases/expected.litmus\", \"verdict\": \"ok\"}]}";
    std::fs::write(&baseline, text).unwrap();
    let args = [
        "check",
        "--format",
        "github",
        "--baseline",
        "baseline.json",
        "cases/expected.litmus",
    ];
    let (text, code) = output(&dir, &args);
    assert_eq!(code, 1);
    assert_eq!(
        text,
        "::error title=barrier-check (baseline),file=cases/expected.litmus::cases/expected.litmus: baseline \"expected deadlock\": the baseline's verdict is ok, this run's deadlock (first finding: deadlock: stuck forever: T0 at `wait B` (2 steps))\n"
    );
    let held = "{\"schema\": 1, \"baseline\": [{\"file\": \"cases/expected.litmus\", \"verdict\": \"deadlock\"}]}";
    std::fs::write(&baseline, held).unwrap();
    assert_eq!(output(&dir, &args), (String::new(), 0));
}

#[test]
fn junit_of_the_corpus_validates_with_one_testcase_per_file() {
    let (xml, code) = output(root(), &["check", "--format", "junit", "litmus"]);
    assert_eq!(code, 0);
    validate_junit(&xml, "corpus");
    let files = xml.matches("<testcase ").count();
    let (json, _) = output(root(), &["check", "--format", "json", "litmus"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(files, json["results"].as_array().unwrap().len());
    assert!(xml.contains(&format!(
        "<testsuites name=\"barrier-check\" tests=\"{files}\" failures=\"0\" errors=\"0\""
    )));
}

#[test]
fn junit_reports_failures_errors_and_stops() {
    let dir = fixtures();
    let (xml, code) = output(&dir, &["check", "--format", "junit", "--no-timing", "cases"]);
    assert_eq!(code, 2);
    validate_junit(&xml, "fixtures");
    insta::assert_snapshot!("junit_fixtures", xml);
    let (xml, code) = output(
        root(),
        &[
            "check",
            "--format",
            "junit",
            "--max-states",
            "3",
            "litmus/amdgpu/deadlock-third-thread.litmus",
        ],
    );
    assert_eq!(code, 1);
    validate_junit(&xml, "stopped");
    assert!(xml.contains("<error type=\"search-stopped\""), "{xml}");
}

#[test]
fn diff_takes_text_and_json_only() {
    let (_, code) = output(
        root(),
        &[
            "diff",
            "litmus/amdgpu",
            "--model",
            "amdgpu",
            "--model",
            "amdgpu-gfx12",
            "--format",
            "sarif",
        ],
    );
    assert_eq!(code, 2);
}

/// The validators are not vacuous: documents that break the formats' rules
/// are rejected.
#[test]
fn the_validators_reject_broken_documents() {
    let v = sarif_validator();
    let text = deadlock_sarif();
    let good: Value = serde_json::from_str(&text).unwrap();
    type Breakage = (&'static str, fn(&mut Value));
    let breakages: [Breakage; 3] = [
        ("a line 0", |d| {
            d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into()
        }),
        ("another version", |d| d["version"] = "2.0.0".into()),
        ("a result without message", |d| {
            d["runs"][0]["results"][0].as_object_mut().unwrap().remove("message");
        }),
    ];
    for (what, breakage) in breakages {
        let mut bad = good.clone();
        breakage(&mut bad);
        assert!(v.0.validate(&bad, v.1).is_err(), "SARIF with {what} validates");
    }
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("junit-broken.xml");
    // A test case without its required `name`.
    std::fs::write(
        &file,
        "<testsuites><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\"><testcase classname=\"c\"/></testsuite></testsuites>",
    )
    .unwrap();
    let Some(o) = xmlschema_validate(&file) else { return };
    assert!(!o.status.success(), "a testcase without a name validates");
}
