//! `hw run` and `hw compare` without a GPU: the runner is driven by a fake
//! `nvcc` on PATH (it "compiles" a program by copying the shell script
//! below its `// nvcc:` line), fake `compute-sanitizer` and `nvidia-smi`,
//! so its manifest handling, parsing, watchdog and sanitizer summaries
//! are tested here; the comparison runs on the recorded observations of
//! crates/hw/tests/fixtures/observed.json.

mod common;

use common::{bin, root, scratch_dir, stderr, stdout, with_default_signals};
use std::path::Path;
use std::time::{Duration, Instant};

fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A folder of fake CUDA tools, and a PATH that finds them first.
fn fake_tools(name: &str) -> (std::path::PathBuf, String) {
    let dir = scratch_dir(name);
    write_exec(
        &dir.join("nvcc"),
        r#"#!/bin/sh
# A stand-in for nvcc: the program is the source without its first line.
echo "$*" >> nvcc.log
out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    *.cu) src="$1" ;;
  esac
  shift
done
if grep -q COMPILE_ERROR "$src"; then echo "$src(2): error: this does not compile" >&2; exit 1; fi
tail -n +2 "$src" > "$out" && chmod +x "$out"
"#,
    );
    write_exec(
        &dir.join("compute-sanitizer"),
        r#"#!/bin/sh
tool="$2"; shift 2
echo "========= COMPUTE-SANITIZER"
"$@" > /dev/null
if [ "$tool" = synccheck ]; then
  echo "========= Barrier error detected. Divergent thread(s) in block"
  echo "=========     at 0x1f0 in k.cu:3:kernel()"
  echo "========= Barrier error detected. Divergent thread(s) in block"
  echo "========= ERROR SUMMARY: 2 errors"
else
  # racecheck 2025.3 prints no ERROR SUMMARY
  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
fi
"#,
    );
    write_exec(&dir.join("nvidia-smi"), "#!/bin/sh\necho 'Fake GPU 9000'\n");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    (dir, path)
}

/// A program printing a report like a harness: `$1` iterations, all done.
const OK: &str = r#"// nvcc: -arch=sm_90 -O2 ok.cu -o ok
#!/bin/sh
echo "starting"
echo '{"schema":1,"test":"ok","mapping":"warp","iterations":'$1',"completed":'$1',"hung":false,"cuda_error":null,"outcomes":[{"values":{"b0t0:r":1,"x":2},"count":'$1'}]}'
"#;

/// A program that reports a hang itself and leaves through `_exit`.
const HUNG: &str = r#"// nvcc: -arch=sm_90
#!/bin/sh
echo '{"schema":1,"test":"hung","mapping":"lane","iterations":'$1',"completed":3,"hung":true,"cuda_error":null,"outcomes":[{"values":{"x":1},"count":3}]}'
exit 1
"#;

/// A program whose host is stuck too: only the runner's watchdog ends it
/// (`sleep` is a child of the shell, so the whole group must be killed for
/// its pipes to close).
const STUCK: &str = "// nvcc: -arch=sm_90 stuck.cu -o stuck\n#!/bin/sh\nsleep 1000\necho never\n";

const CRASH: &str = "// nvcc: -arch=sm_90\n#!/bin/sh\necho 'segfault ahead' >&2\nkill -SEGV $$\n";

const BROKEN: &str = "// nvcc: -arch=sm_90\nCOMPILE_ERROR\n";

fn emission(name: &str) -> std::path::PathBuf {
    let dir = scratch_dir(name);
    for (cu, text) in [
        ("ok.cu", OK),
        ("hung.cu", HUNG),
        ("stuck.cu", STUCK),
        ("crash.cu", CRASH),
        ("broken.cu", BROKEN),
    ] {
        std::fs::write(dir.join(cu), text).unwrap();
    }
    let _ = std::fs::remove_file(dir.join("nvcc.log"));
    let entry = |t: &str| format!(r#"{{"file":"litmus/cuda/{t}.litmus","cu":"{t}.cu","test":"{t}"}}"#);
    let emitted: Vec<String> = ["ok", "hung", "stuck", "crash", "broken"]
        .iter()
        .map(|t| entry(t))
        .collect();
    std::fs::write(
        dir.join("manifest.json"),
        format!(
            r#"{{"schema":1,"emitted":[{}],"skipped":[{{"file":"litmus/cuda/z.litmus","reason":"a host thread"}}]}}"#,
            emitted.join(",")
        ),
    )
    .unwrap();
    dir
}

#[test]
fn hw_run_compiles_runs_watches_and_sanitizes_each_program() {
    let (_tools, path) = fake_tools("hw-tools-run");
    let dir = emission("hw-run");
    let observed = dir.join("observed.json");
    let start = Instant::now();
    let o = bin()
        .env("PATH", &path)
        .env_remove("CUDA_HOME")
        .args(["hw", "run"])
        .arg(&dir)
        .args([
            "--iterations",
            "5",
            "--seed",
            "9",
            "--timeout-ms",
            "100",
            "--margin-ms",
            "400",
        ])
        .args([
            "--jobs",
            "5",
            "--sanitizer",
            "--sanitizer-iterations",
            "2",
            "--sanitizer-timeout",
            "1",
            "-o",
        ])
        .arg(&observed)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // The stuck programs cost their limits, not the run.
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    let err = stderr(&o);
    assert!(err.contains("skipped  litmus/cuda/z.litmus: a host thread"), "{err}");
    assert!(
        err.contains("5 programs on Fake GPU 9000: 1 did not compile, 2 hung"),
        "{err}"
    );
    let log = std::fs::read_to_string(dir.join("nvcc.log")).unwrap();
    assert!(log.contains("-arch=sm_90 -O2 ok.cu -o ok"), "{log}");
    // The file and the output are added when the line leaves them out.
    assert!(log.contains("-arch=sm_90 hung.cu -o hung"), "{log}");

    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&observed).unwrap()).unwrap();
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["device"], "Fake GPU 9000");
    assert_eq!((doc["iterations"].as_u64(), doc["seed"].as_u64()), (Some(5), Some(9)));
    let runs = doc["runs"].as_array().unwrap();
    let tests: Vec<&str> = runs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    assert_eq!(tests, ["ok", "hung", "stuck", "crash", "broken"], "manifest order");

    let ok = &runs[0];
    assert_eq!((ok["completed"].as_u64(), ok["hung"].as_bool()), (Some(5), Some(false)));
    assert_eq!(ok["mapping"], "warp");
    assert_eq!(ok["outcomes"][0]["values"]["x"], 2);
    assert_eq!(ok["outcomes"][0]["count"], 5);
    assert!(ok["cuda_error"].is_null() && ok["compile_error"].is_null());
    assert_eq!(ok["sanitizer"]["synccheck"]["errors"], 2);
    assert_eq!(
        ok["sanitizer"]["synccheck"]["messages"],
        serde_json::json!(["Barrier error detected. Divergent thread(s) in block"])
    );
    assert_eq!(ok["sanitizer"]["racecheck"]["errors"], 0);

    let hung = &runs[1];
    assert_eq!(
        (hung["completed"].as_u64(), hung["hung"].as_bool()),
        (Some(3), Some(true))
    );
    assert!(hung["note"].is_null(), "a hang the program reports is no crash");

    let stuck = &runs[2];
    assert_eq!(
        (stuck["completed"].as_u64(), stuck["hung"].as_bool()),
        (Some(0), Some(true))
    );
    assert!(
        stuck["note"].as_str().unwrap().contains("watchdog after 505 ms"),
        "{stuck}"
    );
    // Under the sanitizer too, the tool's time limit ends it.
    assert_eq!(stuck["sanitizer"]["synccheck"]["timed_out"], true);
    assert!(stuck["sanitizer"]["synccheck"]["errors"].is_null());

    let crash = &runs[3];
    assert!(!crash["hung"].as_bool().unwrap());
    let why = crash["cuda_error"].as_str().unwrap();
    assert!(why.contains("signal 11") && why.contains("segfault ahead"), "{why}");

    let broken = &runs[4];
    assert!(broken["compile_error"]
        .as_str()
        .unwrap()
        .contains("this does not compile"));
    assert!(broken["sanitizer"].is_null());
}

#[test]
fn hw_run_without_nvcc_says_so() {
    if Path::new("/usr/local/cuda/bin/nvcc").exists() {
        return; // found there whatever PATH says
    }
    let dir = emission("hw-run-no-nvcc");
    let empty = scratch_dir("hw-empty-path");
    let o = bin()
        .env("PATH", &empty)
        .env_remove("CUDA_HOME")
        .args(["hw", "run"])
        .arg(&dir)
        .args(["-o"])
        .arg(dir.join("observed.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nvcc not found"), "{}", stderr(&o));
    assert!(!dir.join("observed.json").exists());
}

#[test]
fn hw_run_refuses_a_missing_or_foreign_manifest() {
    let dir = scratch_dir("hw-run-bad-manifest");
    std::fs::write(dir.join("manifest.json"), r#"{"schema":7,"emitted":[]}"#).unwrap();
    let o = bin()
        .args(["hw", "run"])
        .arg(&dir)
        .args(["-o", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("schema 7"), "{}", stderr(&o));
}

/// `hw run -o` onto its own input (the manifest, or a program the manifest
/// names, however the path is spelt) is refused before anything runs: the
/// record would replace the emission it runs. Before, the run overwrote
/// it and exited 0.
#[test]
fn hw_run_refuses_to_write_over_its_own_input() {
    let (_tools, path) = fake_tools("hw-tools-own-input");
    let dir = emission("hw-run-own-input");
    let link = dir.join("link.json");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("manifest.json", &link).unwrap();
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    for (target, names) in [
        (dir.join("manifest.json"), "manifest.json"),
        (sub.join("../manifest.json"), "manifest.json"),
        (link.clone(), "manifest.json"),
        (dir.join("ok.cu"), "ok.cu"),
        (dir.join("./broken.cu"), "broken.cu"),
    ] {
        let o = bin()
            .env("PATH", &path)
            .env_remove("CUDA_HOME")
            .args([
                "hw",
                "run",
                "--iterations",
                "1",
                "--timeout-ms",
                "100",
                "--margin-ms",
                "400",
            ])
            .arg(&dir)
            .arg("-o")
            .arg(&target)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}: {}", target.display(), stderr(&o));
        assert!(
            stderr(&o).contains(names) && stderr(&o).contains("reads"),
            "{}: {}",
            target.display(),
            stderr(&o)
        );
        assert!(!dir.join("nvcc.log").exists(), "{}: something ran", target.display());
    }
    assert_eq!(std::fs::read_to_string(dir.join("manifest.json")).unwrap(), manifest);
    assert_eq!(std::fs::read_to_string(dir.join("ok.cu")).unwrap(), OK);
    assert_eq!(std::fs::read_to_string(dir.join("broken.cu")).unwrap(), BROKEN);
}

/// `hw compare --format json` on a record, run from the repository root
/// (the records name corpus files relative to it), with its parsed output.
fn compare_json(record: &std::path::Path) -> (std::process::Output, serde_json::Value) {
    let o = bin()
        .current_dir(root())
        .args(["hw", "compare", "--format", "json"])
        .arg(record)
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&o.stdout).unwrap();
    (o, doc)
}

#[test]
fn hw_compare_fails_on_an_unsound_observation() {
    let fixture = root().join("crates/hw/tests/fixtures/observed.json");
    let (o, doc) = compare_json(&fixture);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let status: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert!(!doc["tests"][0]["allowed"]["finals"].is_null());
    assert_eq!(status, ["sound", "UNSOUND", "UNSOUND", "ub", "ub", "sound", "not-run"]);
    assert_eq!(doc["tests"][2]["forbidden_hang"], true);
    assert_eq!(doc["tests"][3]["verdict"], "ub(divergent-barrier)");
    assert_eq!(doc["tests"][3]["sanitizer"]["synccheck_side"], "both");

    let text = bin()
        .current_dir(root())
        .args(["hw", "compare"])
        .arg(&fixture)
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(1));
    assert!(stdout(&text).contains("forbidden: a hang (the model has no deadlock or nontermination)"));
    let md = bin()
        .current_dir(root())
        .args(["hw", "compare", "--format", "markdown"])
        .arg(&fixture)
        .output()
        .unwrap();
    assert!(
        stdout(&md).contains("| `litmus/cuda/syncthreads-basic.litmus` | ok |"),
        "{}",
        stdout(&md)
    );
}

#[test]
fn hw_compare_reports_unreadable_inputs() {
    let dir = scratch_dir("hw-compare-bad");
    std::fs::write(dir.join("bad.json"), "{").unwrap();
    let o = bin()
        .args(["hw", "compare"])
        .arg(dir.join("bad.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not JSON"), "{}", stderr(&o));
    // A run of a litmus file that is not there cannot be compared: exit 2.
    std::fs::write(
        dir.join("missing.json"),
        r#"{"schema":1,"device":"d","iterations":1,"runs":[{"file":"no/such.litmus","test":"t","mapping":"warp","iterations":1,"completed":1,"hung":false,"cuda_error":null,"compile_error":null,"outcomes":[],"sanitizer":null}]}"#,
    )
    .unwrap();
    let o = bin()
        .args(["hw", "compare"])
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("error: no/such.litmus: cannot be read"),
        "{}",
        stdout(&o)
    );
}

/// A record that contradicts itself or its litmus file compares as
/// `error` (exit 2), never `sound`: outcome counts that do not add up to
/// `completed` (also when their sum wraps past 2^64 onto it), more
/// iterations completed than asked, a test name that is not the litmus
/// file's. Each of these was `sound` before.
#[test]
fn hw_compare_refuses_an_impossible_record() {
    let dir = scratch_dir("hw-compare-impossible");
    let name = "__syncthreads_count counts the non-zero predicates of the block";
    let run = |test: &str, completed: u64, counts: &[u64]| {
        let outcomes: Vec<String> = counts
            .iter()
            .map(|n| format!(r#"{{"values":{{"b0t0:r":2,"b0t1:r":2,"b0t2:r":2}},"count":{n}}}"#))
            .collect();
        format!(
            r#"{{"file":"litmus/cuda/syncthreads-count.litmus","test":"{test}","mapping":"warp","iterations":10,"completed":{completed},"hung":false,"cuda_error":null,"compile_error":null,"outcomes":[{}],"sanitizer":null}}"#,
            outcomes.join(",")
        )
    };
    let cases = [
        (run(name, 10, &[10]), "sound", ""),
        (run(name, 10, &[4, 6]), "sound", ""),
        (run(name, 1000, &[]), "error", "completed 1000 of 10 iterations"),
        (run(name, 10, &[u64::MAX, 11]), "error", "more than 2^64"),
        (run(name, 10, &[5]), "error", "add up to 5, not the 10 completed"),
        (run("another test", 10, &[10]), "error", "`another test`"),
    ];
    for (i, (r, status, why)) in cases.iter().enumerate() {
        let record = dir.join(format!("case-{i}.json"));
        std::fs::write(
            &record,
            format!(r#"{{"schema":1,"device":"d","iterations":10,"runs":[{r}]}}"#),
        )
        .unwrap();
        let (o, doc) = compare_json(&record);
        let test = &doc["tests"][0];
        assert_eq!(test["status"], *status, "case {i}: {test}");
        assert_eq!(
            o.status.code(),
            Some(if *status == "error" { 2 } else { 0 }),
            "case {i}"
        );
        if !why.is_empty() {
            let reason = test["reason"].as_str().unwrap_or("");
            assert!(reason.contains(why), "case {i}: {reason}");
        }
    }
}

/// The H100 run of the CUDA corpus (docs/hardware.md, "Results"): the rows
/// the device and the model disagree on, pinned so a model change that
/// flips one is seen.
#[test]
fn recorded_h100_run_compares_as_documented() {
    let (o, doc) = compare_json(&root().join("crates/hw/tests/fixtures/h100-2026-11-23-observed.json"));
    let with = |status: &str| -> Vec<String> {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["status"] == status)
            .map(|t| t["file"].as_str().unwrap().to_string())
            .collect()
    };
    // The three rows this run found UNSOUND were fixed in the model
    // (docs/hardware.md, "Where the device and the model disagreed"): a
    // token from before an init is stale, a count-less named barrier is
    // released by exits, and the comparison uses the model's own progress
    // model. The three renamed files ran the same programs.
    assert_eq!(with("UNSOUND"), Vec::<String>::new());
    assert_eq!(
        with("ub").iter().filter(|f| f.contains("reinit-stale-token")).count(),
        1
    );
    for f in [
        "litmus/cuda/host-named-kernel-exit-releases-ok.litmus",
        "litmus/progress/cuda-two-streams-fair.litmus",
        "litmus/cuda/bar-sync0-block-count-exit-hangs.litmus",
    ] {
        assert!(with("sound").iter().any(|s| s == f), "{f}");
    }
    assert_eq!(with("sound").len(), 87);
    assert_eq!(with("ub").len(), 32);
    assert_eq!(with("not-run").len(), 5);
    assert_eq!(o.status.code(), Some(0));
}

/// `hw run` with the fake tools on `tests` (names of the programs above,
/// in manifest order), returning the child so a test can kill it.
fn hw_run_child(name: &str, tests: &[(&str, &str)], args: &[&str]) -> (std::process::Child, std::path::PathBuf) {
    hw_run_child_with(name, tests, args, None)
}

/// [`hw_run_child`], with `nvcc` (a shell script) in place of the fake one.
fn hw_run_child_with(
    name: &str,
    tests: &[(&str, &str)],
    args: &[&str],
    nvcc: Option<&str>,
) -> (std::process::Child, std::path::PathBuf) {
    let (tools, path) = fake_tools(&format!("{name}-tools"));
    if let Some(script) = nvcc {
        write_exec(&tools.join("nvcc"), script);
    }
    let dir = scratch_dir(name);
    for (cu, text) in tests {
        std::fs::write(dir.join(format!("{cu}.cu")), text).unwrap();
    }
    let entries: Vec<String> = tests
        .iter()
        .map(|(t, _)| format!(r#"{{"file":"litmus/cuda/{t}.litmus","cu":"{t}.cu","test":"{t}"}}"#))
        .collect();
    std::fs::write(
        dir.join("manifest.json"),
        format!(r#"{{"schema":1,"emitted":[{}]}}"#, entries.join(",")),
    )
    .unwrap();
    let observed = dir.join("observed.json");
    let _ = std::fs::remove_file(&observed);
    let mut cmd = bin();
    with_default_signals(&mut cmd);
    let child = cmd
        .env("PATH", &path)
        .env_remove("CUDA_HOME")
        .args(["hw", "run"])
        .arg(&dir)
        .args(args)
        .arg("-o")
        .arg(&observed)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, observed)
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Time flags too large for an `Instant`: `--deadline 1e30` panicked
/// ("overflow when adding duration to instant", exit 101); like
/// `check --timeout 1e30` it saturates, a deadline that never comes.
#[test]
fn hw_run_saturates_a_deadline_beyond_the_clock() {
    let (child, observed) = hw_run_child(
        "hw-run-far-deadline",
        &[("ok", OK), ("hung", HUNG)],
        &[
            "--iterations",
            "2",
            "--deadline",
            "1e30",
            "--sanitizer",
            "--sanitizer-timeout",
            "1e30",
            "--sanitizer-hung-timeout",
            "1e30",
        ],
    );
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let doc = read_json(&observed);
    assert!(doc["partial"].is_null(), "the run ended: {doc}");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["completed"], 2);
    assert!(runs.iter().all(|r| r["not_run"].is_null()), "{doc}");
    assert_eq!(runs[0]["sanitizer"]["synccheck"]["errors"], 2, "{doc}");
}

#[test]
fn hw_run_stops_at_its_deadline_and_records_the_rest_as_not_run() {
    // One worker: `ok` runs, `stuck` would run 60 s but the deadline stops
    // it, `hung` never starts. The sanitizer pass (after all plain runs)
    // skips what did not finish.
    let (child, observed) = hw_run_child(
        "hw-run-deadline",
        &[("ok", OK), ("stuck", STUCK), ("hung", HUNG)],
        &[
            "--jobs",
            "1",
            "--iterations",
            "3",
            "--timeout-ms",
            "60000",
            "--deadline",
            "2",
            "--sanitizer",
        ],
    );
    let start = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(15), "{:?}", start.elapsed());
    assert!(
        stderr(&o).contains("2 not run (the run's --deadline)"),
        "{}",
        stderr(&o)
    );
    let doc = read_json(&observed);
    assert!(doc["partial"].is_null(), "the run ended: {doc}");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["completed"], 3);
    assert!(runs[0]["not_run"].is_null());
    let stuck = &runs[1];
    assert_eq!(
        stuck["hung"], false,
        "a test the deadline stopped did not hang: {stuck}"
    );
    assert!(stuck["not_run"]
        .as_str()
        .unwrap()
        .contains("deadline stopped the program"));
    // Its sanitizer turn never came (a turn that came would be skipped: the
    // plain run did not finish).
    assert!(stuck["sanitizer"]["synccheck"]["not_run"]
        .as_str()
        .unwrap()
        .contains("--deadline of 2 s"));
    assert!(runs[2]["not_run"]
        .as_str()
        .unwrap()
        .contains("not started: the run's --deadline of 2 s had passed"));
    // `ok` finished its plain run; its sanitizer turn came after the deadline.
    assert!(runs[0]["sanitizer"]["racecheck"]["not_run"]
        .as_str()
        .unwrap()
        .contains("--deadline of 2 s"));
    // (`hw compare` reads such runs as not-run: compare/tests.rs.)
}

#[test]
fn a_killed_hw_run_leaves_the_tests_it_finished() {
    let (mut child, observed) = hw_run_child(
        "hw-run-killed",
        // The program the killed runner leaves behind ends by itself.
        &[("ok", OK), ("stuck", "// nvcc: -arch=sm_90\n#!/bin/sh\nsleep 5\n")],
        &["--jobs", "1", "--iterations", "4", "--timeout-ms", "60000"],
    );
    // Wait for `ok` to be written, then kill the run as an outer limit would.
    let start = Instant::now();
    let doc = loop {
        assert!(start.elapsed() < Duration::from_secs(20), "ok was never recorded");
        if let Ok(t) = std::fs::read_to_string(&observed) {
            let doc: serde_json::Value = serde_json::from_str(&t).expect("never half a record");
            if doc["runs"][0]["completed"] == 4 {
                break doc;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    let _ = child.wait();
    assert!(doc["partial"].as_str().unwrap().contains("1 of 2 plain runs finished"));
    assert!(doc["runs"][0]["not_run"].is_null());
    assert!(doc["runs"][1]["not_run"].as_str().unwrap().contains("still going"));
    assert_eq!(doc["runs"][1]["hung"], false);
}

#[test]
fn hw_run_skips_or_shortens_the_sanitizer_on_a_program_that_hung() {
    let (child, observed) = hw_run_child(
        "hw-run-skip-hung",
        &[("ok", OK), ("hung", HUNG)],
        &[
            "--jobs",
            "2",
            "--iterations",
            "3",
            "--sanitizer",
            "--sanitizer-skip-hung",
        ],
    );
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&observed);
    assert_eq!(doc["runs"][0]["sanitizer"]["synccheck"]["errors"], 2);
    let hung = &doc["runs"][1]["sanitizer"];
    assert!(hung["synccheck"]["errors"].is_null());
    assert!(
        hung["racecheck"]["not_run"]
            .as_str()
            .unwrap()
            .contains("hung in the plain run"),
        "{hung}"
    );
}

/// `barrier-check emit cuda ARGS -o OUT`, from the repository root.
fn emit_cuda(args: &[&str], out: &Path) -> std::process::Output {
    bin()
        .current_dir(root())
        .args(["emit", "cuda"])
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn emit_cuda_writes_a_manifest_of_emitted_and_skipped_tests() {
    let dir = scratch_dir("emit-cuda-manifest");
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let o = emit_cuda(
        &[
            "litmus/cuda/syncthreads-basic.litmus",
            "litmus/cuda/cuda-barrier-token-integers.litmus",
            "litmus/amdgpu/arrive-drop-ok.litmus",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = read_json(&out.join("manifest.json"));
    assert_eq!(m["schema"], 1);
    let emitted = m["emitted"].as_array().unwrap();
    assert_eq!(emitted.len(), 1);
    assert_eq!(emitted[0]["file"], "litmus/cuda/syncthreads-basic.litmus");
    assert_eq!(emitted[0]["cu"], "syncthreads-basic.cu");
    assert_eq!(emitted[0]["mapping"], "warp");
    assert!(emitted[0]["nvcc"].as_str().unwrap().starts_with("nvcc -arch=sm_90"));
    let cu = std::fs::read_to_string(out.join("syncthreads-basic.cu")).unwrap();
    assert!(cu.starts_with("// nvcc: nvcc -arch=sm_90"), "{}", &cu[..80]);
    let skipped: Vec<(&str, &str)> = m["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["file"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped
        .iter()
        .any(|(f, r)| f.ends_with("cuda-barrier-token-integers.litmus") && r.contains("used as a number")));
    assert!(skipped
        .iter()
        .any(|(f, r)| f.ends_with("arrive-drop-ok.litmus") && r.contains("not a CUDA model")));
    assert!(
        stderr(&o).contains("emitted 1 program(s), skipped 2 test(s)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn emit_cuda_reports_bad_input_with_its_position_and_emits_the_rest() {
    let dir = scratch_dir("emit-cuda-bad");
    std::fs::write(
        dir.join("bad.litmus"),
        "litmus \"bad\"\nmodel cuda-sm80\nkernel blocks=1 threads=2 {\n  __syncthreads @\n}\nexpect ok\n",
    )
    .unwrap();
    std::fs::copy(
        root().join("litmus/cuda/syncthreads-basic.litmus"),
        dir.join("good.litmus"),
    )
    .unwrap();
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let o = bin()
        .current_dir(&dir)
        .args([
            "emit",
            "cuda",
            "bad.litmus",
            "good.litmus",
            "missing.litmus",
            "-o",
            "out",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.litmus:4:17: error: unexpected character `@`"),
        "{err}"
    );
    assert!(err.contains("missing.litmus"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let m = read_json(&out.join("manifest.json"));
    assert_eq!(m["emitted"][0]["file"], "good.litmus");
    assert_eq!(m["emitted"].as_array().unwrap().len(), 1);
}

/// The H100 run with compute-sanitizer (docs/hardware.md, "compute-sanitizer
/// side by side"): each CUDA test's status, and where synccheck and
/// racecheck stand beside the model's findings, pinned row by row.
#[test]
fn recorded_h100_sanitizer_run_compares_as_documented() {
    let (o, doc) = compare_json(&root().join("crates/hw/tests/fixtures/h100-2026-11-23-sanitizer-observed.json"));
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 129);
    let rows = |key: &str, word: &str| -> Vec<String> {
        tests
            .iter()
            .filter(|t| t["sanitizer"][key] == word)
            .map(|t| t["file"].as_str().unwrap().trim_start_matches("litmus/").to_string())
            .collect()
    };
    let with = |status: &str| -> Vec<String> {
        tests
            .iter()
            .filter(|t| t["status"] == status)
            .map(|t| t["file"].as_str().unwrap().trim_start_matches("litmus/").to_string())
            .collect()
    };
    // The three rows this run first showed UNSOUND were model fixes
    // (docs/hardware.md, "Where the device and a verdict disagreed"); the
    // renamed files hold the same programs.
    assert_eq!(with("UNSOUND"), Vec::<String>::new());
    assert_eq!(
        with("not-run"),
        [
            "cuda/bar-sync0-mixed-forms.litmus",
            "cuda/grid-sync-uncooperative.litmus",
            "cuda/mbarrier-uninitialized.litmus",
            "cuda/named-count-mismatch.litmus",
            "cuda/syncwarp-not-in-mask.litmus",
        ]
    );
    assert_eq!((with("sound").len(), with("ub").len()), (92, 32));
    assert_eq!(o.status.code(), Some(0));
    // synccheck beside the model.
    assert_eq!(
        rows("synccheck_side", "both"),
        [
            "cuda/cuda-barrier-arrive-before-wait.litmus",
            "cuda/cuda-barrier-init-no-sync.litmus",
            "cuda/mbarrier-inval.litmus",
            "cuda/mbarrier-uninitialized.litmus",
            "cuda/syncthreads-both-branches.litmus",
            "cuda/syncwarp-not-in-mask.litmus",
        ]
    );
    // The mbarrier rows are synccheck's `Missing wait`; in
    // thread-beside-kernel-ok two explicit threads reach `__syncthreads`
    // (the `.aligned` `bar.sync 0`) from branches of their own. Counted
    // `bar.sync`/`bar.arrive` are emitted as the non-aligned
    // `barrier.sync`/`barrier.arrive`, which synccheck does not flag.
    assert_eq!(
        rows("synccheck_side", "tool only"),
        [
            "cuda/cuda-barrier-stale-token.litmus",
            "cuda/mbarrier-parity-alias.litmus",
            "cuda/thread-beside-kernel-ok.litmus",
        ]
    );
    assert_eq!(
        rows("synccheck_side", "model only"),
        [
            // Both faulted on the device (illegal instruction, not run);
            // the non-aligned barrier.sync gives synccheck nothing to say.
            "cuda/bar-sync0-mixed-forms.litmus",
            "cuda/named-count-mismatch.litmus",
            "cuda/syncthreads-early-exit-second-phase.litmus",
            "cuda/syncthreads-one-branch-exit.litmus",
            "cuda/syncthreads-one-branch-spin.litmus",
            "cuda/syncwarp-mask-mismatch.litmus",
            "cuda/syncwarp-overlapping-masks.litmus",
        ]
    );
    // racecheck beside the model.
    assert_eq!(
        rows("racecheck_side", "both"),
        [
            "cuda/bar-sync0-counted-outsider-race.litmus",
            "cuda/cuda-barrier-split-race.litmus",
            "cuda/mbarrier-fresh-parity1-orders-nothing.litmus",
            "cuda/mbarrier-pipeline-no-empty.litmus",
            "cuda/named-double-buffer-missing-ready.litmus",
            "cuda/named-producer-consumer-race.litmus",
            "cuda/sm90-mbarrier-pipeline-cutlass-consumer-parity1.litmus",
            "cuda/sm90-tma-no-expect-race.litmus",
            "cuda/syncthreads-missing-race.litmus",
        ]
    );
    assert_eq!(
        rows("racecheck_side", "tool only"),
        [
            // The re-init races, for racecheck, with the other warp's
            // earlier accesses to the barrier word, ordered only by a
            // relaxed flag; the model has no race rule on barrier objects
            // (docs/hardware.md).
            "cuda/cuda-barrier-reinit-fresh-token-ok.litmus",
            "cuda/cuda-barrier-reinit-wait-before-init-ok.litmus",
            "cuda/sm90-tma-early.litmus",
            "cuda/sm90-tma-exact.litmus",
        ]
    );
    assert_eq!(
        rows("racecheck_side", "model only"),
        [
            "cuda/grid-sync-uncooperative.litmus",
            "cuda/sm90-cluster-split-race.litmus",
            "cuda/sm90-cluster-sync-across-clusters-race.litmus",
            "cuda/syncthreads-global-across-blocks-race.litmus",
            "cuda/syncwarp-disjoint-halves-race.litmus",
            "cuda/syncwarp-named-lane-beside-twin.litmus",
            "cuda/syncwarp-race-outside-mask.litmus",
        ]
    );
    // Tools killed at --sanitizer-hung-timeout on programs that hung: no count.
    assert_eq!(rows("synccheck_side", "-").len(), 2);
    assert_eq!(rows("racecheck_side", "-").len(), 8);
}

/// Whether process group `pgid` still has a member.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only asks; plain integers.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Ctrl-C (SIGINT) or SIGTERM to `hw run` ends the process groups it
/// started: here an "nvcc" that sleeps in its own group, which the
/// terminal's signal never reaches. Before, `hw run` died of the signal
/// and the compiler (or a program, or compute-sanitizer) ran on.
#[test]
fn an_interrupted_hw_run_ends_the_processes_it_started() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let name = format!("hw-run-interrupted-{sig}");
        // An nvcc that never ends, its `sleep` a child in its group.
        let nvcc = "#!/bin/sh\necho $$ > nvcc.pid\nsleep 1000\n";
        let _ = std::fs::remove_file(scratch_dir(&name).join("nvcc.pid"));
        let (mut child, observed) = hw_run_child_with(&name, &[("ok", OK)], &["--jobs", "1"], Some(nvcc));
        let dir = observed.parent().unwrap().to_path_buf();
        let pid_file = dir.join("nvcc.pid");
        let start = Instant::now();
        let pgid = loop {
            if let Some(p) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break p;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "nvcc never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        // SAFETY: plain integers; the child is ours and not yet reaped.
        unsafe { libc::kill(child.id() as i32, sig) };
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if start.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut gone = false;
        for _ in 0..100 {
            if !group_alive(pgid) {
                gone = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !gone {
            // SAFETY: as above; the test's own leftover.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        assert!(gone, "signal {sig}: nvcc's group {pgid} outlived hw run ({status:?})");
        assert_eq!(status.code(), Some(code), "signal {sig}");
        let doc = read_json(&observed);
        assert!(doc["partial"].as_str().unwrap().contains("interrupted"), "{doc}");
    }
}

/// `emit cuda --arch sm_80` builds a cuda-sm80 test's harness for an A100
/// and skips a test of an sm_90 model with the reason; a malformed
/// architecture is skipped likewise.
#[test]
fn emit_cuda_for_another_architecture() {
    let dir = scratch_dir("emit-cuda-arch");
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let o = emit_cuda(
        &[
            "--arch",
            "sm_80",
            "litmus/cuda/fence-sm80-forms-ok.litmus",
            "litmus/cuda/sm90-cp-async-bulk-ok.litmus",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = read_json(&out.join("manifest.json"));
    let emitted = m["emitted"].as_array().unwrap();
    assert_eq!(emitted.len(), 1, "{m}");
    assert!(emitted[0]["nvcc"].as_str().unwrap().starts_with("nvcc -arch=sm_80 "));
    let cu = std::fs::read_to_string(out.join("fence-sm80-forms-ok.cu")).unwrap();
    assert!(cu.starts_with("// nvcc: nvcc -arch=sm_80 "), "{}", &cu[..80]);
    let reason = m["skipped"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("is an sm_90 model"), "{reason}");
    let o = emit_cuda(&["--arch", "ampere", "litmus/cuda/fence-sm80-forms-ok.litmus"], &out);
    let m = read_json(&out.join("manifest.json"));
    assert!(
        m["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("`sm_` and a number"),
        "{m} {}",
        stderr(&o)
    );
}

/// `emit` and `hw run` name their output alike: `-o`, `--output`, and
/// `--out` as an alias of both.
#[test]
fn emit_and_hw_run_share_the_output_flag() {
    let dir = scratch_dir("emit-output-flag");
    for flag in ["--output", "--out"] {
        let out = dir.join(flag.trim_start_matches('-'));
        let _ = std::fs::remove_dir_all(&out);
        let o = bin()
            .current_dir(root())
            .args(["emit", "cuda", "litmus/cuda/syncthreads-basic.litmus", flag])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{flag}: {}", stderr(&o));
        assert!(out.join("manifest.json").exists(), "{flag}");
    }
    let o = bin().args(["hw", "run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--output") && help.contains("[alias: --out]"), "{help}");
}
