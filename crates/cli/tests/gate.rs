//! The CI gate end to end: verdict baselines (`check --write-baseline`,
//! `check --baseline`), `diff` between two models, and `--shard`.

mod common;

use common::{corpus, result_files, root, run_in_corpus, scratch_dir, stderr, stdout};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    scratch_dir("gate-tests").join(name)
}

fn model_text(name: &str) -> String {
    std::fs::read_to_string(root().join("models").join(name)).unwrap()
}

/// A copy of the GFX12 model without the privileged-barrier rule flips
/// exactly the tests that use the trap barrier; a copy of the GFX11 model
/// whose `s_barrier` no longer waits flips exactly the tests that rely on it.
#[test]
fn diff_lists_exactly_the_tests_a_model_edit_flips() {
    let edited =
        model_text("amdgpu-gfx12.toml").replace("\"wait-completes\", \"privileged-barrier\",", "\"wait-completes\",");
    assert_ne!(edited, model_text("amdgpu-gfx12.toml"), "the edit applies");
    let path = scratch("gfx12-without-privileged.toml");
    std::fs::write(&path, edited).unwrap();
    let path = path.to_str().unwrap();
    let o = run_in_corpus(&[
        "diff",
        "amdgpu-gfx12",
        "--model",
        "amdgpu-gfx12",
        "--model-file",
        path,
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "a flip exits 1");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let flipped: Vec<&str> = doc["flipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        flipped,
        [
            "amdgpu-gfx12/trap-barrier.litmus",
            "amdgpu-gfx12/trap-signal-forever.litmus",
            "amdgpu-gfx12/trap-signal-in-loop.litmus"
        ]
    );
    let f = &doc["flipped"][0];
    assert_eq!(f["old"]["verdict"], serde_json::json!(["ub(privileged-barrier)"]));
    assert_eq!(f["new"]["verdict"], serde_json::json!([]));
    assert!(
        !f["old"]["findings"][0]["witness"]["steps"]
            .as_array()
            .unwrap()
            .is_empty(),
        "old witness"
    );
    assert_eq!(doc["tests"], 14);

    // The same model twice: nothing flips, exit 0.
    let o = run_in_corpus(&[
        "diff",
        "amdgpu-gfx12",
        "--model",
        "amdgpu-gfx12",
        "--model",
        "amdgpu-gfx12",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("14 tests, 0 flipped"), "{}", stdout(&o));

    // s_barrier lowered to an arrive alone: the tests whose waves must wait
    // at s_barrier flip (text output names each with both verdicts).
    let gfx11 = model_text("amdgpu-gfx11.toml");
    let edited = gfx11.replace("lowering = \"arrive -1; wait -1\"", "lowering = \"arrive -1\"");
    assert_ne!(edited, gfx11, "the edit applies");
    let path = scratch("gfx11-no-wait.toml");
    std::fs::write(&path, edited).unwrap();
    let o = run_in_corpus(&[
        "diff",
        "amdgpu-gfx11",
        "--model",
        "amdgpu-gfx11",
        "--model-file",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    let flipped: Vec<&str> = text.lines().filter(|l| l.starts_with("flipped")).collect();
    insta::assert_snapshot!("gfx11_without_wait_flips", flipped.join("\n"));
}

/// The CI-gate use of issue 18's item 7: the built-in variant that reads
/// `bar.sync` as ordering memory only through fences flips exactly the
/// unfenced hand-offs from ok to race; a user's file that `extends` the
/// base the same way flips the same tests.
#[test]
fn diff_lists_what_the_nofence_reading_flips() {
    let flips = |args: &[&str]| {
        let mut all = vec!["diff", "cuda-nofence", "--model", "cuda-sm90"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--format", "json"]);
        let o = run_in_corpus(&all);
        assert_eq!(o.status.code(), Some(1), "a flip exits 1");
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["tests"], 14);
        doc["flipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                assert_eq!(f["old"]["verdict"], serde_json::json!([]));
                assert_eq!(f["new"]["verdict"], serde_json::json!(["race"]));
                f["file"].as_str().unwrap().to_string()
            })
            .collect::<Vec<_>>()
    };
    let builtin = flips(&["--model", "cuda-sm90-nofence"]);
    assert_eq!(
        builtin,
        [
            "cuda-nofence/nofence-chain-unfenced-race.litmus",
            "cuda-nofence/nofence-double-buffer-unfenced-release-race.litmus",
            "cuda-nofence/nofence-fence-after-barrier-race.litmus",
            "cuda-nofence/nofence-proxy-fence-only-race.litmus",
            "cuda-nofence/nofence-proxy-fence-race.litmus",
            "cuda-nofence/nofence-syncthreads-no-fence-race.litmus",
        ]
    );
    let mut own = String::from("format = 1\nextends = \"cuda-sm90\"\nname = \"mine\"\ndescription = \"d\"\n");
    for id in 0..16 {
        own.push_str(&format!("[[barrier]]\nid = {id}\norders_memory = false\n"));
    }
    let path = scratch("nofence-by-hand.toml");
    std::fs::write(&path, own).unwrap();
    assert_eq!(flips(&["--model-file", path.to_str().unwrap()]), builtin);
}

/// `diff -q` prints one line per flip; `--fail-fast` stops at the first
/// file with a flip and says so; `--max-memory` is taken as by `check`.
#[test]
fn diff_quiet_and_fail_fast() {
    let base = [
        "diff",
        "cuda-nofence",
        "--model",
        "cuda-sm90",
        "--model",
        "cuda-sm90-nofence",
    ];
    let o = run_in_corpus(&[&base[..], &["-q"]].concat());
    assert_eq!(o.status.code(), Some(1), "a flip exits 1");
    let text = stdout(&o);
    assert!(!text.contains("under "), "no witnesses with -q:\n{text}");
    let json = run_in_corpus(&[&base[..], &["--format", "json"]].concat());
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let all = doc["flipped"].as_array().unwrap().len();
    assert!(all > 1);
    assert_eq!(text.lines().filter(|l| l.starts_with("flipped")).count(), all, "{text}");
    let o = run_in_corpus(&[&base[..], &["-q", "--fail-fast", "--max-memory", "512"]].concat());
    assert_eq!(o.status.code(), Some(1), "a flip exits 1");
    let text = stdout(&o);
    assert_eq!(text.lines().filter(|l| l.starts_with("flipped")).count(), 1, "{text}");
    assert!(
        text.contains("1 flipped (cuda-sm90 -> cuda-sm90-nofence); stopped at the first flip (--fail-fast)"),
        "{text}"
    );
}

#[test]
fn diff_needs_two_models() {
    let o = run_in_corpus(&["diff", "amdgpu", "--model", "amdgpu"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn baseline_round_trip_and_a_changed_verdict() {
    let base = scratch("baseline.json");
    let base_s = base.to_str().unwrap();
    let o = run_in_corpus(&["check", "-q", "amdgpu-gfx12", "--write-baseline", base_s]);
    assert_eq!(o.status.code(), Some(0));
    let written = std::fs::read_to_string(&base).unwrap();
    // Stable: a second run writes the same bytes.
    run_in_corpus(&["check", "-q", "amdgpu-gfx12", "--write-baseline", base_s]);
    assert_eq!(std::fs::read_to_string(&base).unwrap(), written);
    let doc: serde_json::Value = serde_json::from_str(&written).unwrap();
    let files: Vec<&str> = doc["baseline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted, "sorted by file");

    let o = run_in_corpus(&["check", "-q", "amdgpu-gfx12", "--baseline", base_s]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("every verdict equals the baseline"));

    // A baseline that remembers another verdict: exit 1 and a table row.
    let changed = written.replacen("\"verdict\": \"ub(privileged-barrier)\"", "\"verdict\": \"ok\"", 1);
    assert_ne!(changed, written);
    let old = scratch("baseline-old.json");
    std::fs::write(&old, changed).unwrap();
    let o = run_in_corpus(&["check", "-q", "amdgpu-gfx12", "--baseline", old.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.contains("1 verdict(s) differ from the baseline"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("| ") && l.contains("trap-barrier.litmus"))
        .expect("a row for the test");
    assert!(
        row.contains("| ok | ub(privileged-barrier) | ub(privileged-barrier): "),
        "{row}"
    );
    // JSON carries the same change.
    let o = run_in_corpus(&[
        "check",
        "-q",
        "amdgpu-gfx12",
        "--baseline",
        old.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["baseline_changes"][0]["old"], "ok");
    assert_eq!(doc["baseline_changes"][0]["new"], "ub(privileged-barrier)");

    // Against a baseline, each line and the summary say whether the
    // verdict is the baseline's (the changed test's `expect` holds, yet it
    // is CHANGED).
    let o = run_in_corpus(&["check", "-q", "amdgpu-gfx12", "--baseline", old.to_str().unwrap()]);
    let text = stdout(&o);
    let line = text.lines().find(|l| l.contains("trap-barrier.litmus")).unwrap();
    assert!(line.starts_with("CHANGED"), "{line}");
    assert!(line.contains("(baseline: ok)"), "{line}");
    assert!(text.contains(" as in the baseline, 1 changed"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");

    // Not a baseline file: a usage error.
    let bad = scratch("not-a-baseline.json");
    std::fs::write(&bad, "{}").unwrap();
    let o = run_in_corpus(&["check", "-q", "amdgpu-gfx12", "--baseline", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

/// A baseline records the verdicts whatever they are: writing one exits 0
/// even where a test's `expect` fails, and checking against it judges the
/// lines and the summary by the baseline (a CI gate on a corpus with known
/// failures).
#[test]
fn baselines_judge_by_the_baseline_not_by_expect() {
    let dir = scratch("known-failure");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("wrong-expect.litmus"),
        "litmus \"a deadlock whose expect says ok\"\nmodel amdgpu\nbarrier B = 2\nthread T0 { arrive B; wait B }\nthread T1 { }\nexpect ok\n",
    )
    .unwrap();
    let base = dir.join("baseline.json");
    let d = dir.to_str().unwrap();
    let o = run_in_corpus(&["check", "-q", d, "--write-baseline", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(std::fs::read_to_string(&base).unwrap().contains("deadlock"));
    let o = run_in_corpus(&["check", "-q", d, "--baseline", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text.starts_with("ok "), "{text}");
    assert!(text.contains("1 as in the baseline, 0 changed"), "{text}");
    // Without a baseline the same run fails on the `expect`.
    let o = run_in_corpus(&["check", "-q", d]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn shards_split_a_corpus_into_disjoint_parts() {
    let names = |args: &[&str]| -> Vec<String> { result_files(&run_in_corpus(args).stdout) };
    let all = names(&["check", "--format", "json", "amdgpu-gfx12"]);
    let mut parts = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        parts.extend(names(&["check", "--format", "json", "--shard", &shard, "amdgpu-gfx12"]));
    }
    parts.sort();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(parts, sorted, "the shards cover the corpus once");
    for bad in ["0/3", "4/3", "x/2", "1"] {
        let o = run_in_corpus(&["check", "--shard", bad, "amdgpu-gfx12"]);
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
    }
}

/// Files checked side by side (`--jobs` across files) report exactly what
/// one job reports, in the same order.
#[test]
fn jobs_across_files_change_nothing() {
    let report = |jobs: &str| {
        let o = run_in_corpus(&["check", "--format", "json", "--jobs", jobs, "amdgpu", "cuda"]);
        let mut doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for r in doc["results"].as_array_mut().unwrap() {
            r["stats"]["elapsed_ms"] = serde_json::Value::Null;
        }
        doc
    };
    let one = report("1");
    let litmus_files = |dir: &str| {
        std::fs::read_dir(corpus(dir))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "litmus"))
            .count()
    };
    assert_eq!(
        one["results"].as_array().unwrap().len(),
        litmus_files("amdgpu") + litmus_files("cuda")
    );
    assert_eq!(report("3"), one);
}

/// The progress bar is for terminals only: piped, stderr stays empty and
/// stdout holds only the report.
#[test]
fn no_progress_bar_when_piped() {
    let o = run_in_corpus(&["check", "-q", "--jobs", "1", "amdgpu"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).lines().all(|l| l.starts_with("ok ") || l.contains("passed")));
}

/// `explain`: a finding's witness as DOT (threads as columns, program
/// order, participates-in, bmo, the stuck wait, the interleaving; a lasso's
/// cycle loops back), picked by kind or place; a missing finding exits 1.
#[test]
fn explain_renders_a_witness_graph() {
    let o = run_in_corpus(&["explain", "amdgpu/deadlock-third-thread.litmus", "--format", "dot"]);
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("explain_deadlock_dot", stdout(&o));
    let dot = stdout(&o);
    assert!(dot.contains("color=red") && dot.contains("participates-in") && dot.contains("bmo B"));

    let o = run_in_corpus(&[
        "explain",
        "progress/toggle-livelock-unfair-strong.litmus",
        "--finding",
        "nontermination",
        "--format",
        "dot",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("repeats forever"), "{}", stdout(&o));

    let by_index = run_in_corpus(&["explain", "amdgpu/deadlock-third-thread.litmus", "--finding", "1"]);
    let by_kind = run_in_corpus(&[
        "explain",
        "amdgpu/deadlock-third-thread.litmus",
        "--finding",
        "deadlock",
    ]);
    assert_eq!(by_index.status.code(), Some(0));
    assert_eq!(stdout(&by_index), stdout(&by_kind));
    assert!(stdout(&by_kind).contains("never completes"));

    let o = run_in_corpus(&["explain", "amdgpu/deadlock-third-thread.litmus", "--finding", "race"]);
    assert_eq!(o.status.code(), Some(1));
    // A misspelt kind is a usage error, with the kind it was likely meant.
    let o = run_in_corpus(&["explain", "amdgpu/deadlock-third-thread.litmus", "--finding", "racee"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("did you mean `race`?"), "{}", stderr(&o));
}

/// The GitHub Actions example of docs/ci.md runs as written: every `run:`
/// step that calls barrier-check, for each of its four shards, from a
/// folder that holds the corpus and the models (the checkout), with the
/// binary under test for `./target/release/barrier-check` and the base
/// branch's model copied where the example runs `git show`. The baseline
/// step must pass on every shard: the committed `litmus/verdicts.json` is
/// the corpus's verdicts (regenerate it with `barrier-check check litmus
/// --write-baseline litmus/verdicts.json` when a verdict or a file changes).
#[test]
fn the_ci_doc_example_runs_as_written() {
    let doc = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let start = doc.find("```yaml\n").expect("a yaml block") + 8;
    let yaml = &doc[start..start + doc[start..].find("```").unwrap()];
    // Each `run:` step's script: a folded (`>`) one joined into one line,
    // a literal (`|`) one kept with its line continuations.
    let lines: Vec<&str> = yaml.lines().collect();
    let mut steps: Vec<(String, String)> = Vec::new();
    let mut name = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        if let Some(n) = l.strip_prefix("- name: ") {
            name = n.to_string();
        }
        if let Some(rest) = l.strip_prefix("run: ") {
            let indent = lines[i].len() - l.len();
            let mut body: Vec<&str> = Vec::new();
            if rest == ">" || rest == "|" {
                while i + 1 < lines.len() && lines[i + 1].len() - lines[i + 1].trim_start().len() > indent {
                    i += 1;
                    body.push(lines[i].trim());
                }
            } else {
                body.push(rest);
            }
            let sep = if rest == ">" { " " } else { "\n" };
            steps.push((name.clone(), body.join(sep)));
        }
        i += 1;
    }
    let steps: Vec<_> = steps.into_iter().filter(|(_, s)| s.contains("barrier-check")).collect();
    assert_eq!(steps.len(), 3, "the example's barrier-check steps: {steps:?}");
    let dir = scratch("ci-example");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for d in ["litmus", "models"] {
        std::os::unix::fs::symlink(root().join(d), dir.join(d)).unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let old_model = dir.join("old.toml");
    for shard in 1..=4 {
        for (name, script) in &steps {
            let script = script
                .replace("./target/release/barrier-check", bin)
                .replace("${{ matrix.shard }}", &shard.to_string())
                .replace("/tmp/old.toml", old_model.to_str().unwrap());
            let script = script
                .lines()
                .map(|l| {
                    if l.starts_with("git show ") {
                        format!("cp models/amdgpu-gfx12.toml {}", old_model.display())
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            let o = std::process::Command::new("bash")
                .args(["-euo", "pipefail", "-c", &script])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "shard {shard}, step {name:?}:\n{script}\n{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        for out in [
            format!("flips-{shard}.json"),
            format!("verdicts-{shard}.sarif"),
            format!("verdicts-{shard}.xml"),
        ] {
            let text = std::fs::read_to_string(dir.join(&out)).unwrap_or_else(|e| panic!("{out}: {e}"));
            assert!(!text.trim().is_empty(), "{out} is empty");
        }
        // The same model on both sides flips nothing.
        let flips: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("flips-{shard}.json"))).unwrap()).unwrap();
        assert_eq!(flips["flipped"].as_array().map(Vec::len), Some(0), "{flips}");
    }
}
