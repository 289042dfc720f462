//! `hw run` and `hw compare` without a GPU: the runner is driven by a fake
//! `nvcc` on PATH (it "compiles" a program by copying the shell script
//! below its `// nvcc:` line), fake `compute-sanitizer` and `nvidia-smi`,
//! so its manifest handling, parsing, watchdog and sanitizer summaries
//! are tested here; the comparison runs on the recorded observations of
//! crates/hw/tests/fixtures/observed.json.

mod common;

use common::{bin, root, scratch_dir, stderr, stdout};
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
