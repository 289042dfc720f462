//! The command line end to end: exit codes, JSON, limits, bad input,
//! directories, model selection, `graph` and `models`; insta snapshots pin
//! the text and JSON renderings.

mod common;

use common::{bin, corpus, result_files, root, run, run_in, run_in_corpus, scratch_dir, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A scratch file under the target directory.
fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch_dir("cli-tests").join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn text_report_snapshots() {
    for name in [
        "amdgpu/deadlock-third-thread.litmus",
        "amdgpu/stale-phase.litmus",
        "amdgpu/race-split-work-between.litmus",
        "amdgpu/phase-basic.litmus",
    ] {
        let o = run_in_corpus(&["check", "--no-timing", name]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        insta::assert_snapshot!(name.replace(['/', '.'], "_"), stdout(&o));
    }
}

#[test]
fn json_snapshot() {
    let o = run_in_corpus(&[
        "check",
        "--format",
        "json",
        "amdgpu/wait-after-drop.litmus",
        "amdgpu/phase-basic.litmus",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    insta::assert_json_snapshot!("json_two_tests", v, { ".results[].stats.elapsed_ms" => "[ms]" });
}

#[test]
fn json_has_the_spec_fields() {
    let o = run(&[
        "check",
        "--format",
        "json",
        corpus("amdgpu/deadlock-too-few.litmus").to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["schema"], 1);
    let r = &v["results"][0];
    for field in [
        "file", "test", "model", "verdict", "expected", "pass", "findings", "stats", "stop",
    ] {
        assert!(r.get(field).is_some(), "missing {field}");
    }
    assert_eq!(r["verdict"], serde_json::json!(["deadlock"]));
    assert_eq!(r["stop"], "exhausted");
    assert!(r["stats"]["states"].as_u64().unwrap() > 0);
    assert!(r["stats"]["executions"].as_u64().unwrap() > 0);
    assert!(r["stats"]["elapsed_ms"].is_number());
    let f = &r["findings"][0];
    assert_eq!(f["kind"], "deadlock");
    assert!(!f["witness"]["steps"].as_array().unwrap().is_empty());
    assert!(v["summary"]["tests"] == 1);
}

#[test]
fn output_is_deterministic() {
    let args = ["check", "--format", "json", "amdgpu"];
    let strip = |o: Output| {
        let mut v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        for r in v["results"].as_array_mut().unwrap() {
            r["stats"]["elapsed_ms"] = serde_json::Value::Null;
        }
        v
    };
    let a = strip(run_in_corpus(&args));
    let b = strip(run_in_corpus(&args));
    assert_eq!(a, b);
}

#[test]
fn exit_codes() {
    // 0: every verdict as expected.
    assert_eq!(
        run(&["check", "-q", corpus("amdgpu/phase-basic.litmus").to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    // 1: a verdict differs from `expect`.
    let wrong = scratch(
        "wrong.litmus",
        b"litmus \"w\"\nmodel amdgpu\nbarrier B = 3\nthread T0 { join B; arrive B; wait B }\nexpect ok\n",
    );
    let o = run(&["check", wrong.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL"), "{}", stdout(&o));
    assert!(stdout(&o).contains("(expected ok)"));
    // No expect: passes only when ok.
    let noexp = scratch(
        "noexp.litmus",
        b"litmus \"n\"\nmodel amdgpu\nvar x\nthread T0 { write x }\nthread T1 { write x }\n",
    );
    assert_eq!(run(&["check", noexp.to_str().unwrap()]).status.code(), Some(1));
    // 2: parse error, unreadable file, usage error.
    let bad = scratch("bad.litmus", b"litmus \"b\"\nmodel amdgpu\nthread T0 { arrive }\n");
    assert_eq!(run(&["check", bad.to_str().unwrap()]).status.code(), Some(2));
    assert_eq!(run(&["check", "/no/such/file.litmus"]).status.code(), Some(2));
    assert_eq!(run(&["check", "--format", "yaml", "x"]).status.code(), Some(2));
    assert_eq!(
        run(&["check", "--model", "nope", corpus("amdgpu").to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_search_stopped_at_a_limit_is_never_ok() {
    let p = corpus("amdgpu/phase-three-threads-two-rounds.litmus");
    // The search of the file stores 3 states.
    let o = run(&["check", "--max-states", "2", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("stop: state-limit"), "{}", stdout(&o));
    let o = run(&["check", "--format", "json", "--max-states", "2", p.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["results"][0]["stop"], "state-limit");
    assert_eq!(v["results"][0]["pass"], false);
    assert_eq!(v["summary"]["stopped"], 1);
    // A timeout that cannot be met stops too.
    let o = run(&[
        "check",
        "--timeout",
        "0.000001",
        "--format",
        "json",
        corpus("amdgpu/kernel-device-scope.litmus").to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let stop = v["results"][0]["stop"].as_str().unwrap().to_string();
    // The deadline is checked every 1024 states; the test is small, so it
    // may finish first - but it must never report a stopped search as ok.
    assert!(stop == "timeout" || stop == "exhausted", "{stop}");
    if stop == "timeout" {
        assert_eq!(o.status.code(), Some(1));
    }
    assert_eq!(
        run(&["check", "--timeout", "-1", p.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

#[test]
fn bad_input_gets_diagnostics_not_panics() {
    let cases: &[(&str, &[u8])] = &[
        ("empty.litmus", b""),
        ("garbage.litmus", b"@@@ $$$ ~~~\n{{{ }}} ((((\n"),
        (
            "binary.litmus",
            &[0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0xff, 0xfe, 0x00, 0x9c],
        ),
        (
            "truncated.litmus",
            b"litmus \"t\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { join B; arr",
        ),
        ("unclosed.litmus", b"litmus \"u\nmodel amdgpu\n"),
    ];
    for (name, bytes) in cases {
        let p = scratch(name, bytes);
        let o = run(&["check", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("{name}:")) && err.contains(": error: "),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
        let o = run(&["check", "--format", "json", p.to_str().unwrap()]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert!(v["results"][0]["error"].is_string(), "{name}");
    }
}

#[test]
fn diagnostics_snapshot() {
    let p = scratch(
        "errors.litmus",
        b"litmus \"errors\"\nmodel amdgpu\nbarrier B = 2\nthread T0 {\n  join B; arrive B, ; wait C\n  s_barrier\n  r = 1 +\n  goto NOWHERE\n}\nexpect bogus\n",
    );
    let o = bin()
        .args(["check", "errors.litmus"])
        .current_dir(p.parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("diagnostics", stderr(&o));
}

#[test]
fn model_not_providing_a_construct_is_an_error() {
    let p = scratch(
        "cuda.litmus",
        b"litmus \"c\"\nmodel amdgpu\nthread T0 { __syncthreads }\n",
    );
    let o = run(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("model `amdgpu` does not provide `__syncthreads`"),
        "{}",
        stderr(&o)
    );
    let p = scratch("host.litmus", b"litmus \"c\"\nmodel amdgpu\nhost H { device_sync }\n");
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("model `amdgpu` has no host threads"),
        "{}",
        stderr(&o)
    );
    let p = scratch(
        "sm80cluster.litmus",
        b"litmus \"c\"\nmodel cuda-sm80\nthread T0 { cluster.sync }\n",
    );
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("does not provide `cluster.sync` (it is provided by cuda-sm90)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn model_override_and_model_file() {
    let p = scratch(
        "nomodel.litmus",
        b"litmus \"n\"\nbarrier B = 1\nthread T0 { join B; arrive B; wait B }\nexpect ok\n",
    );
    assert_eq!(run(&["check", p.to_str().unwrap()]).status.code(), Some(2));
    assert_eq!(
        run(&["check", "--model", "amdgpu", p.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/amdgpu.toml");
    assert_eq!(
        run(&["check", "--model-file", models.to_str().unwrap(), p.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    // An edited model without the wait-needs-join rule: the join-less wait
    // still has no effect, but it is no longer reported.
    let edited = std::fs::read_to_string(&models)
        .unwrap()
        .replace("  \"wait-needs-join\",\n", "");
    let m = scratch("edited.toml", edited.as_bytes());
    let q = scratch("nojoin.litmus", b"litmus \"n\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { arrive B; wait B }\nthread T1 { join B; arrive B; wait B }\n");
    let o = run(&["check", "--format", "json", q.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["results"][0]["verdict"], serde_json::json!(["ub(wait-without-join)"]));
    let o = run(&[
        "check",
        "--format",
        "json",
        "--model-file",
        m.to_str().unwrap(),
        q.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["results"][0]["verdict"],
        serde_json::json!([]),
        "neither the explorer nor the rule checker reports a disabled rule"
    );
    let broken = scratch("broken.toml", b"format = 1\nname = 3\n");
    assert_eq!(
        run(&["check", "--model-file", broken.to_str().unwrap(), p.to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn directories_recurse_in_sorted_order() {
    let o = run(&["check", "-q", "--format", "json", corpus("").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let files = result_files(&o.stdout);
    // Sorted by path components (a directory's files before a sibling
    // directory whose name extends it: `amdgpu/` before `amdgpu-gfx11/`).
    let mut sorted: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    sorted.sort();
    assert_eq!(
        files,
        sorted.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()
    );
    assert!(files.len() >= 40);
}

#[test]
fn graph_prints_dot() {
    let o = run(&[
        "graph",
        corpus("amdgpu/phase-three-threads-two-rounds.litmus").to_str().unwrap(),
        "--format",
        "dot",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let dot = stdout(&o);
    assert!(dot.starts_with("digraph"));
    assert!(dot.contains("subgraph cluster_t2"));
    assert!(dot.contains("label=\"tbo\""), "thread-barrier-order edges");
    insta::assert_snapshot!(
        "graph_phase_basic",
        stdout(&run_in_corpus(&["graph", "amdgpu/phase-basic.litmus"]))
    );
}

#[test]
fn models_lists_and_shows() {
    let o = run(&["models"]);
    assert!(stdout(&o).starts_with("amdgpu "));
    let o = run(&["models", "amdgpu"]);
    assert!(stdout(&o).contains("rules: first-bmo-init"));
    assert_eq!(run(&["models", "nope"]).status.code(), Some(2));
}

#[test]
fn a_model_without_joined_before_joins_every_thread_at_launch() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/amdgpu.toml");
    let edited = std::fs::read_to_string(&models)
        .unwrap()
        .replace("  \"joined-before\",\n", "");
    let m = scratch("nojb.toml", edited.as_bytes());
    let ok = scratch("nojoins.litmus", b"litmus \"n\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { arrive B; wait B }\nthread T1 { arrive B; wait B }\nexpect ok\n");
    assert_eq!(
        run(&["check", ok.to_str().unwrap()]).status.code(),
        Some(1),
        "the full model reports the missing joins"
    );
    let o = run(&["check", "--model-file", m.to_str().unwrap(), ok.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let dl = scratch("nojoins-dl.litmus", b"litmus \"n\"\nmodel amdgpu\nbarrier B = 3\nthread T0 { arrive B; wait B }\nthread T1 { arrive B; wait B }\nexpect deadlock\n");
    let o = run(&["check", "--model-file", m.to_str().unwrap(), dl.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn another_targets_instruction_or_barrier_is_an_error_naming_the_target() {
    let cases: &[(&str, &str)] = &[
        (
            "model amdgpu-gfx11\nthread T0 { s_barrier_signal -1 }",
            "model `amdgpu-gfx11` does not provide `s_barrier_signal` (it is provided by amdgpu-gfx12, amdgpu-gfx1250)",
        ),
        (
            "model amdgpu-gfx12\nthread T0 { s_barrier_join 1 }",
            "(it is provided by amdgpu-gfx1250)",
        ),
        (
            "model amdgpu-gfx12\nthread T0 { s_barrier_signal -3 }",
            "barrier id -3 is not a barrier of model `amdgpu-gfx12` (it is in amdgpu-gfx1250)",
        ),
        (
            "model amdgpu\nthread T0 { s_barrier }",
            "(it is provided by amdgpu-gfx11, amdgpu-gfx12, amdgpu-gfx1250)",
        ),
        (
            "model amdgpu-gfx1250\nthread T0 { s_barrier_signal r }",
            "needs a constant barrier id",
        ),
        (
            "model amdgpu-gfx1250\nthread T0 { s_barrier_init 1 }",
            "`s_barrier_init` takes 2 operand(s), found 1",
        ),
        (
            "model amdgpu-gfx1250\nthread T0 { r = s_barrier_wait -1 }",
            "`s_barrier_wait` returns no value",
        ),
    ];
    for (i, (body, msg)) in cases.iter().enumerate() {
        let p = scratch(
            &format!("target{i}.litmus"),
            format!("litmus \"t\"\n{body}\n").as_bytes(),
        );
        let o = run(&["check", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{body}");
        assert!(stderr(&o).contains(msg), "{body}: {}", stderr(&o));
    }
}

#[test]
fn models_name_prints_barriers_and_instructions() {
    let o = run(&["models", "amdgpu-gfx1250"]);
    insta::assert_snapshot!("models_gfx1250", stdout(&o));
}

/// Checks `text` as a scratch file: the exit code and the `file:line:col:
/// error: message` lines of stderr.
fn check_errors(name: &str, text: &str, extra: &[&str]) -> (Option<i32>, Vec<String>) {
    let p = scratch(name, text.as_bytes());
    let mut args = vec!["check"];
    args.extend_from_slice(extra);
    args.push(name);
    let o = bin().args(&args).current_dir(p.parent().unwrap()).output().unwrap();
    let lines = stderr(&o)
        .lines()
        .filter(|l| l.starts_with(&format!("{name}:")))
        .map(str::to_string)
        .collect();
    (o.status.code(), lines)
}

/// Numbers that used to be truncated (and so changed verdicts: a deadlock in
/// block 4294967296 became an `ok` in block 0) or crashed the checker are
/// all reported at once, with their positions, and exit 2.
#[test]
fn out_of_range_numbers_and_duplicate_attributes_exit_2() {
    let (code, lines) = check_errors(
        "ranges.litmus",
        "litmus \"r\"\nmodel amdgpu\nbarrier B = 2\n\
         thread T0 { join B; arrive B; wait B }\n\
         thread T1 block=4294967296 { join B; arrive B; wait B }\n\
         thread T2 cluster=4294967296 { }\n\
         thread T3 block=1 block=2 { }\n\
         expect deadlock\n",
        &[],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        lines,
        [
            "ranges.litmus:5:17: error: `block` must be an integer from 0 to 4095, found 4294967296",
            "ranges.litmus:6:19: error: `cluster` must be an integer from 0 to 4095, found 4294967296",
            "ranges.litmus:7:19: error: duplicate attribute `block` (each attribute may be given once)",
        ]
    );
    let (code, lines) = check_errors(
        "kernels.litmus",
        "litmus \"k\"\nmodel cuda-sm90\n\
         kernel blocks=4611686018427387904 threads=2 { __syncthreads }\n\
         kernel blocks=2 threads=4096 { }\n\
         kernel cluster_size=4294967296 { }\n\
         expect ok\n",
        &[],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        lines,
        [
            "kernels.litmus:3:15: error: `blocks` must be an integer from 1 to 4096, found 4611686018427387904",
            "kernels.litmus:4:1: error: kernel creates 8192 threads; at most 4096 are supported",
            "kernels.litmus:5:21: error: `cluster_size` must be an integer from 1 to 4096, found 4294967296",
        ]
    );
}

/// A progress model is checked wherever it is given: litmus line, flag and
/// model file. A model file with an unknown one used to load and silently
/// switch the fair-cycle analysis off.
#[test]
fn unknown_progress_models_are_errors_everywhere() {
    let ok = "litmus \"p\"\nmodel amdgpu\nvar x\nthread T0 { await x == 1 }\nexpect nontermination\n";
    let (code, lines) = check_errors(
        "progress-bogus.litmus",
        &ok.replace("expect", "progress bogus\nexpect"),
        &[],
    );
    assert_eq!(code, Some(2));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("progress-bogus.litmus:5:10: error: unknown progress model `bogus` (known: unfair, fair,"),
        "{lines:?}"
    );
    let p = scratch("progress-ok.litmus", ok.as_bytes());
    let o = run(&["check", "--progress", "bogus", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown progress model `bogus`"), "{}", stderr(&o));
    let o = run(&["check", "--progress", "fair", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/amdgpu.toml");
    let text = std::fs::read_to_string(&models).unwrap();
    assert!(text.contains("progress = \"obe\""));
    let m = scratch(
        "obe-upper.toml",
        text.replace("progress = \"obe\"", "progress = \"OBE\"").as_bytes(),
    );
    let o = run(&["check", "--model-file", m.to_str().unwrap(), p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`progress`: unknown progress model `OBE`"),
        "{}",
        stderr(&o)
    );
}

/// A misspelt model hides no other error: the file's lowering errors under
/// the nearest model come with it, each with a note naming that model; a
/// model name near none gives its own error only.
#[test]
fn a_misspelt_model_hides_no_other_error() {
    let text =
        "litmus \"x\"\nmodel cuda-sm99\nvar s scope=blok\nkernel blocks=1 threads=2 {\n  write s\n  arive_wait\n}\n";
    let (code, lines) = check_errors("misspelt-model.litmus", text, &[]);
    assert_eq!(code, Some(2));
    let at: Vec<&str> = lines.iter().map(|l| l.split(": error:").next().unwrap()).collect();
    assert_eq!(
        at,
        [
            "misspelt-model.litmus:2:7",
            "misspelt-model.litmus:3:13",
            "misspelt-model.litmus:6:3"
        ],
        "{lines:?}"
    );
    let p = scratch("misspelt-model.litmus", text.as_bytes());
    let o = bin()
        .args(["check", "misspelt-model.litmus"])
        .current_dir(p.parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(
        stderr(&o)
            .matches("= note: lowered under `cuda-sm90`, the nearest model")
            .count(),
        2
    );
    let (code, lines) = check_errors("far-model.litmus", &text.replace("cuda-sm99", "nvidia"), &[]);
    assert_eq!(code, Some(2));
    assert_eq!(lines.len(), 1, "{lines:?}");
}

/// Misspelt instructions and registers that are read but never written are
/// errors with positions, not verdicts.
#[test]
fn typos_that_parse_are_errors() {
    let (code, lines) = check_errors(
        "typos.litmus",
        "litmus \"t\"\nmodel cuda-sm90\nkernel blocks=2 threads=1 cluster_size=2 {\n\
         \x20 t = cluster.barrier_arive\n\
         \x20 cluster.barrier_wait t\n\
         \x20 r = s_get_barrier_state -1\n\
         }\nexpect ok\n",
        &[],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        lines,
        [
            "typos.litmus:4:7: error: unknown instruction `cluster.barrier_arive` (did you mean `cluster.barrier_arrive`?)",
            "typos.litmus:6:7: error: register `s_get_barrier_state` is never written (registers start at 0, so this reads the constant 0); an instruction?",
        ]
    );
    // `r = r + 1` reads r before writing it: legal (registers start at 0).
    let (code, lines) = check_errors(
        "counter.litmus",
        "litmus \"c\"\nmodel amdgpu\nthread T0 { r = r + 1 }\nassert always T0:r == 1\nexpect ok\n",
        &[],
    );
    assert_eq!((code, lines), (Some(0), vec![]));
}

/// Test files for the outcome-set snapshots, independent of the corpus:
/// store buffering with atomics, interchangeable threads taking tickets
/// (symmetry: the outcomes are every arrangement), a surplus thread that
/// deadlocks, and a flag another block may never set (nontermination).
const OUTCOME_TESTS: &[(&str, &str)] = &[
    (
        "counter.litmus",
        "litmus \"three interchangeable threads take tickets\"\nmodel cuda-sm80\nvar c = 0\n\
         kernel blocks=1 threads=3 { r = fetch_add c, 1; __syncthreads }\nexpect ok\n",
    ),
    (
        "sb.litmus",
        "litmus \"store buffering with atomics\"\nmodel cuda-sm80\nvar x = 0\nvar y = 0\n\
         thread T0 { store x, 1; r = load y }\nthread T1 { store y, 1; r = load x }\nexpect ok\n",
    ),
    (
        "spin.litmus",
        "litmus \"block 0 waits for a flag block 1 may never set\"\nmodel cuda-sm80\nvar flag = 0\n\
         kernel blocks=2 threads=1 { if bid == 0 { await flag == 1; r = 1 } else { store flag, 1 } }\n\
         expect nontermination\n",
    ),
    (
        "surplus.litmus",
        "litmus \"a third thread on bar.sync 1, 2 waits forever\"\nmodel cuda-sm80\nvar c = 0\n\
         kernel blocks=1 threads=3 { r = fetch_add c, 1; bar.sync 1, 2 }\nexpect deadlock\n",
    ),
];

/// A folder holding [`OUTCOME_TESTS`].
fn outcome_dir() -> PathBuf {
    let dir = scratch_dir("cli-outcomes");
    for (name, text) in OUTCOME_TESTS {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

#[test]
fn outcome_text_snapshot() {
    let o = run_in(&outcome_dir(), &["check", "--outcomes", "--no-timing", "-q", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("outcomes_text", stdout(&o));
}

#[test]
fn outcome_json_snapshot() {
    let o = run_in(&outcome_dir(), &["check", "--outcomes", "--format", "json", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let outcomes: Vec<_> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| serde_json::json!({"file": r["file"], "stop": r["stop"], "outcomes": r["outcomes"]}))
        .collect();
    insta::assert_json_snapshot!("outcomes_json", outcomes);
    // Values keep the observables' order (threads, then locations), not
    // the alphabetical order of a JSON object's keys.
    let text = stdout(&o);
    let first = text.find("\"b0t0:r\"").unwrap();
    assert!(first < text.find("\"c\"").unwrap());
}

/// Without `--outcomes` the JSON has no `outcomes` field (the default
/// document is unchanged), and SARIF and JUnit ignore the flag.
#[test]
fn outcomes_only_when_asked() {
    let dir = outcome_dir();
    let plain = common::run_in(&dir, &["check", "--format", "json", "."]);
    assert!(!stdout(&plain).contains("\"outcomes\""));
    for format in ["sarif", "junit"] {
        let a = common::run_in(&dir, &["check", "--format", format, "--no-timing", "."]);
        let b = common::run_in(&dir, &["check", "--format", format, "--no-timing", "--outcomes", "."]);
        let strip = |s: String| {
            // Times vary between runs.
            s.lines().filter(|l| !l.contains("time")).collect::<Vec<_>>().join("\n")
        };
        assert_eq!(strip(stdout(&a)), strip(stdout(&b)), "{format}");
    }
}

/// A search stopped at a limit says its outcome list is partial.
#[test]
fn partial_outcomes_say_so() {
    let o = common::run_in(
        &outcome_dir(),
        &[
            "check",
            "--outcomes",
            "--no-timing",
            "-q",
            "--max-states",
            "2",
            "counter.litmus",
        ],
    );
    assert!(
        stdout(&o).contains("(partial: stopped at state-limit)"),
        "{}",
        stdout(&o)
    );
}

/// Runs the binary with `input` on standard input.
fn with_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `check -` reads one litmus test from standard input (issue 38,
/// point 4), named `<stdin>` or `--stdin-filename`, in its place among
/// the other paths; a UTF-8 byte order mark is not part of a file.
#[test]
fn check_reads_standard_input_and_skips_a_bom() {
    let text = std::fs::read(corpus("cuda/named-arrive-twice.litmus")).unwrap();
    let o = with_stdin(&["check", "--quiet", "--no-timing", "-"], &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("ok    <stdin>  \"a thread arrives twice"),
        "{}",
        stdout(&o)
    );

    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(&text);
    let o = with_stdin(
        &[
            "check",
            "--format",
            "json",
            "--stdin-filename",
            "from/editor.litmus",
            "-",
        ],
        &bom,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["results"][0]["file"], "from/editor.litmus");
    assert_eq!(doc["results"][0]["verdict"], serde_json::json!(["ub(arrive-twice)"]));

    // Beside files, in order; a file with a BOM too.
    let f = scratch("bom.litmus", &bom);
    let o = with_stdin(&["check", "--format", "json", f.to_str().unwrap(), "-"], &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec![f.to_str().unwrap(), "<stdin>"]);
}

/// Shell completions and the man page come from the clap definition, so
/// they know every subcommand and flag (issue 38, point 4).
#[test]
fn completions_and_man_page_know_the_flags() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(
            script.contains("stdin-filename") && script.contains("max-states"),
            "{shell}"
        );
    }
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH barrier-check 1"), "{page}");
    for sub in ["check", "explain", "diff", "emit", "completions"] {
        assert!(page.contains(sub), "the man page lists `{sub}`");
    }
}

/// `--version` names the commit (issue 38, point 4): `barrier-check
/// 0.1.0 (abc1234)`, with `-modified` for a tree with changes, `unknown`
/// outside git.
#[test]
fn version_names_the_commit() {
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    let v = stdout(&o);
    let inner = v
        .trim()
        .strip_prefix(concat!("barrier-check ", env!("CARGO_PKG_VERSION"), " ("))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{v}"));
    let hash = inner.trim_end_matches("-modified");
    assert!(
        hash == "unknown" || (hash.len() == 7 && hash.chars().all(|c| c.is_ascii_hexdigit())),
        "{v}"
    );
}

/// `check --help` groups its options (output, model, limits, reductions,
/// CI gate, kernels) and states the exit codes (issue 38, point 4).
#[test]
fn check_help_groups_options_and_states_exit_codes() {
    let o = run(&["check", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o).replace('\n', " ");
    for heading in [
        "Output:",
        "Model:",
        "Limits:",
        "Reductions:",
        "CI gate:",
        "Kernels (PTX and CUDA):",
    ] {
        assert!(help.contains(heading), "no `{heading}` in check --help");
    }
    assert!(help.contains("Exit codes: 0 every verdict is as expected;"), "{help}");
}

/// `--color` (issue 38, point 4): `always` colours the status and the
/// diagnostics' `error:`, `never` and `auto` off a terminal do not.
#[test]
fn color_is_asked_for_or_off_a_terminal() {
    let ok = corpus("cuda/named-arrive-twice.litmus");
    let bad = scratch("no-model.litmus", b"litmus \"x\"\n");
    let args = |c: &str| {
        vec![
            "check".to_string(),
            "--quiet".into(),
            "--color".into(),
            c.into(),
            ok.display().to_string(),
            bad.display().to_string(),
        ]
    };
    let runs = |c: &str| {
        let a = args(c);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&a)
    };
    let o = runs("always");
    assert!(stdout(&o).contains("\x1b[32mok   \x1b[0m"), "{}", stdout(&o));
    assert!(stderr(&o).contains("\x1b[1;31merror:\x1b[0m"), "{}", stderr(&o));
    for c in ["never", "auto"] {
        let o = runs(c);
        assert!(
            !stdout(&o).contains('\x1b') && !stderr(&o).contains('\x1b'),
            "--color {c}"
        );
    }
}

/// `--fail-fast` (issue 38, point 3): a search stops at its first finding
/// that the test's `expect` does not allow. The named barrier with
/// counts 64 and 32 among 64 threads ran into the memory limit; with the
/// flag it stops after the 2-step witness, and the test fails (exit 1).
/// The kernel is deterministic, but its one run (docs/explorer.md, item
/// 10) hands it to the search at the mismatch (counts that differ in a
/// phase), so the witness is the search's with or without `--no-det`.
/// A test whose findings are all allowed runs to the end as before.
#[test]
fn fail_fast_stops_at_the_first_finding_not_expected() {
    let f = scratch(
        "fail-fast.litmus",
        b"litmus \"x\"\nmodel cuda-sm80\nkernel blocks=1 threads=64 { if tid < 32 { bar.arrive 1, 64 } else { bar.sync 1, 32 } }\nexpect ok\n",
    );
    for (flags, steps) in [(&[][..], 2), (&["--no-det"][..], 2)] {
        let mut args = vec!["check", "--format", "json", "--fail-fast", "--jobs", "1"];
        args.extend_from_slice(flags);
        args.push(f.to_str().unwrap());
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = &doc["results"][0];
        assert_eq!(r["stop"], "fail-fast", "{flags:?}");
        assert_eq!(r["verdict"], serde_json::json!(["ub(count-mismatch)"]), "{flags:?}");
        assert_eq!(
            r["findings"][0]["witness"]["steps"].as_array().unwrap().len(),
            steps,
            "{flags:?}"
        );
        assert!(r["stats"]["states"].as_u64().unwrap() < 100, "{flags:?}");
    }
    // Allowed findings do not stop the search.
    let o = run(&[
        "check",
        "--format",
        "json",
        "--fail-fast",
        corpus("cuda/named-arrive-twice.litmus").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["results"][0]["stop"], "exhausted");
}

/// Every error of the program itself, clap's usage errors included, has
/// one prefix: `barrier-check: error:` (an input's errors are
/// `PATH:LINE:COL: error:`).
#[test]
fn usage_errors_have_the_programs_prefix() {
    for args in [
        &["check", "--jobs", "0", "x.litmus"][..],
        &["chek"][..],
        &["models", "nosuch"][..],
    ] {
        let o = bin().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).starts_with("barrier-check: error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// `models --format json`: the list and one model as versioned documents,
/// with what the text form prints (names; barriers and instructions).
#[test]
fn models_as_json() {
    let o = bin().args(["models", "--format", "json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], 1);
    let names: Vec<&str> = (doc["models"].as_array().unwrap().iter())
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let text = bin().args(["models"]).output().unwrap();
    let text_names: Vec<String> = (stdout(&text).lines())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(names, text_names);
    let o = bin()
        .args(["models", "cuda-sm90", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &doc["model"];
    assert_eq!(m["name"], "cuda-sm90");
    assert_eq!(
        m["barriers"][0]["properties"],
        serde_json::json!(["dropped at thread exit"])
    );
    let text = stdout(&bin().args(["models", "cuda-sm90"]).output().unwrap());
    let instrs = text
        .lines()
        .skip_while(|l| *l != "instructions:")
        .skip(1)
        .filter(|l| l.contains(" -> "))
        .count();
    assert_eq!(m["instructions"].as_array().unwrap().len(), instrs);
    assert!(m["rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "uncooperative-grid-sync"));
    let o = bin().args(["models", "nosuch", "--format", "json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `explain --format json` gives the finding exactly as `check --format
/// json` does, with its file, test and model.
#[test]
fn explain_as_json_is_checks_finding() {
    let file = "litmus/amdgpu/race-split-work-between.litmus";
    let o = run_in(root(), &["explain", file, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let one: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let o = run_in(root(), &["check", file, "--format", "json"]);
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &all["results"][0];
    assert_eq!(one["schema"], 1);
    assert_eq!(one["file"], r["file"]);
    assert_eq!(one["test"], r["test"]);
    assert_eq!(one["model"], r["model"]);
    assert_eq!(one["finding"], r["findings"][0]);
}

/// `graph --format json`: the DOT graph's nodes and edges as data (one
/// node per DOT node, `po` edges solid and `tbo` edges dashed there).
#[test]
fn graph_as_json_matches_the_dot() {
    let file = "litmus/cuda/syncthreads-basic.litmus";
    let o = run_in(root(), &["graph", file, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], 1);
    let dot = stdout(&run_in(root(), &["graph", file]));
    let nodes = doc["nodes"].as_array().unwrap();
    let edges = doc["edges"].as_array().unwrap();
    assert_eq!(
        nodes.len(),
        dot.lines()
            .filter(|l| l.trim_start().starts_with('n') && l.contains("[label="))
            .count()
    );
    let tbo = edges.iter().filter(|e| e["kind"] == "tbo").count();
    assert_eq!(
        tbo,
        dot.lines().filter(|l| l.contains("->") && l.contains("dashed")).count()
    );
    assert!(tbo > 0);
    assert!(nodes
        .iter()
        .any(|n| n["statement"] == "__syncthreads" && n["barrier"].is_string()));
}

/// A project with a `barrier-check.toml` at its root and a `litmus/`
/// folder: a test without a `model` line, one whose search needs more
/// than 3 states, and a `wip/` folder of a test that fails.
fn configured_project(name: &str, config: &str) -> PathBuf {
    let dir = scratch_dir(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("litmus/wip")).unwrap();
    std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    std::fs::write(dir.join("barrier-check.toml"), config).unwrap();
    std::fs::write(
        dir.join("litmus/no-model.litmus"),
        "litmus \"no model line\"\nthread T0 { __syncthreads }\nthread T1 { __syncthreads }\nexpect ok\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("litmus/wip/draft.litmus"),
        "litmus \"draft\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { join B; arrive B; wait B }\nexpect ok\n",
    )
    .unwrap();
    dir
}

/// `explain` and `graph` read the project configuration too: its model
/// serves a file without a `model` line (and `explain` stops at its
/// state limit, as `check` does); `--isolated` reads none and
/// `--config` names one.
#[test]
fn explain_and_graph_read_the_project_configuration() {
    let dir = configured_project("config-explain", "model = \"cuda-sm80\"\n");
    let deeper = dir.join("sub/deeper");
    let file = "../../litmus/no-model.litmus";
    let o = run_in(&deeper, &["explain", file]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("no such finding (verdict: ok)"), "{}", stderr(&o));
    let o = run_in(&deeper, &["graph", file]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("digraph"), "{}", stdout(&o));
    for cmd in ["explain", "graph"] {
        let o = run_in(&deeper, &[cmd, "--isolated", file]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stdout(&o));
        assert!(stderr(&o).contains("no `model` line"), "{cmd}: {}", stderr(&o));
    }
    std::fs::write(dir.join("limit.toml"), "model = \"cuda-sm80\"\nmax-states = 1\n").unwrap();
    let o = run_in(&deeper, &["explain", "--config", "../../limit.toml", file]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no such finding (the search stopped: state-limit; verdict so far: ok)"),
        "{}",
        stderr(&o)
    );
    std::fs::write(dir.join("bad.toml"), "modle = 1\n").unwrap();
    for cmd in ["explain", "graph"] {
        let o = run_in(&deeper, &[cmd, "--config", "../../bad.toml", file]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(stderr(&o).contains("bad.toml:1:1"), "{cmd}: {}", stderr(&o));
    }
}

/// `barrier-check.toml`, found in the current folder or above it: its
/// model serves files without a `model` line, its `exclude` leaves paths
/// out of folder walks (not paths named on the command line), its limits
/// stand where no flag is given, and `--isolated` ignores it.
#[test]
fn the_project_configuration_gives_defaults_that_flags_override() {
    let dir = configured_project(
        "config-project",
        "# the project's defaults\nmodel = \"cuda-sm80\"\nexclude = [\"wip\"]\nmax-states = 1\n",
    );
    let quiet = |cwd: &Path, args: &[&str]| {
        let o = run_in(cwd, args);
        (o.status.code(), stdout(&o), stderr(&o))
    };
    // Found from a folder below the project's root; `wip/` is left out,
    // and the search stops at the configured 1 state.
    let (code, out, _) = quiet(&dir.join("sub/deeper"), &["check", "-q", "../../litmus"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("no-model.litmus") && out.contains("state-limit"), "{out}");
    assert!(!out.contains("draft"), "{out}");
    // A flag wins over the file.
    let (code, out, _) = quiet(&dir, &["check", "-q", "--max-states", "1000", "litmus"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("1 passed") || out.contains("1 test"), "{out}");
    // A path named on the command line is checked even when excluded.
    let (code, out, _) = quiet(
        &dir,
        &["check", "-q", "--max-states", "1000", "litmus/wip/draft.litmus"],
    );
    assert_eq!(code, Some(1), "{out}");
    // --isolated: no model for the file, and `wip/` is walked again.
    let (code, _, err) = quiet(&dir, &["check", "-q", "--isolated", "litmus"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no `model` line and no `--model` given"), "{err}");
    // The configured baseline judges a run that names none and writes
    // none (paths relative to the file's folder, found from below it).
    std::fs::write(
        dir.join("baseline.toml"),
        "model = \"cuda-sm80\"\nbaseline = \"litmus/b.json\"\n",
    )
    .unwrap();
    let b = "{\"schema\": 1, \"baseline\": [{\"file\": \"../../litmus/no-model.litmus\", \"verdict\": \"deadlock\"}]}";
    std::fs::write(dir.join("litmus/b.json"), b).unwrap();
    let args = [
        "check",
        "-q",
        "--config",
        "../../baseline.toml",
        "../../litmus/no-model.litmus",
    ];
    let (code, out, _) = quiet(&dir.join("sub/deeper"), &args);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("1 verdict(s) differ from the baseline"), "{out}");
    let mut write = args.to_vec();
    write.extend(["--write-baseline", "new.json"]);
    let (code, out, _) = quiet(&dir.join("sub/deeper"), &write);
    assert_eq!(code, Some(0), "{out}");
    // --config names another file.
    std::fs::write(dir.join("other.toml"), "model = \"amdgpu\"\n").unwrap();
    let (code, _, err) = quiet(
        &dir,
        &["check", "-q", "--config", "other.toml", "litmus/no-model.litmus"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("model `amdgpu` does not provide `__syncthreads`"), "{err}");
}

/// A configuration with errors refuses the run (exit 2) with each error at
/// its line and column, and a misspelt key names the keys there are.
#[test]
fn configuration_errors_are_positioned() {
    let dir = configured_project("config-errors", "model = \"cuda-sm8\"\nmax-states = 0\n");
    let o = run_in(&dir, &["check", "litmus"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("barrier-check.toml:1:1: error:") && err.contains("cuda-sm80"),
        "{err}"
    );
    assert!(
        err.contains("barrier-check.toml:2:1: error: `max-states` needs at least 1"),
        "{err}"
    );
    std::fs::write(
        dir.join("barrier-check.toml"),
        "model = \"cuda-sm80\"\nmax_states = 5\n",
    )
    .unwrap();
    let o = run_in(&dir, &["check", "litmus"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("barrier-check.toml:2:1: error: configuration: unknown field `max_states`"),
        "{err}"
    );
    assert!(err.contains("max-states"), "{err}");
}
