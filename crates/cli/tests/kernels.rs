//! The compiled-kernel corpus (`kernels/*.cu`, docs/ptx.md): every file is
//! compiled by nvcc (pip's, installed by `.ci/cuda` when `BC_NVCC` is not
//! set) and checked against the `// expect` line of its header; the quiet
//! report is a snapshot. Without an nvcc that can be installed, the corpus
//! test says so loudly and skips.

mod common;
use common::*;
use std::time::Instant;

/// The nvcc the kernel corpus's checks run: a wrapper around pip's that
/// keeps each PTX it wrote for this run of the test binary (keyed by its
/// arguments and the `.cu` file's text; nvcc's `-o -` output), so the
/// three checks of `kernels/` (the corpus, pruned and unpruned) compile
/// each file once. The cache starts empty on every run.
fn cached_nvcc() -> Option<std::path::PathBuf> {
    static WRAPPER: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    WRAPPER
        .get_or_init(|| {
            let real = nvcc()?;
            let dir = scratch_dir("kernels-nvcc-cache");
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("ptx")).unwrap();
            let script = dir.join("nvcc");
            // One compile per key: a second check that wants the same PTX
            // waits on the first's lock, then reads its file.
            let text = format!(
                "#!/bin/sh\n# Test-only: caches nvcc's stdout by arguments and input (kernels.rs).\n\
                 for last; do :; done\n\
                 key=$( {{ printf '%s\\n' \"$@\"; cat \"$last\"; }} | sha256sum | cut -c1-40 )\n\
                 out='{cache}'/ptx/$key.ptx\n\
                 exec 9>\"$out.lock\"\n\
                 flock 9 2>/dev/null\n\
                 if [ -f \"$out\" ]; then exec cat \"$out\"; fi\n\
                 '{real}' \"$@\" > \"$out.$$\" || {{ rc=$?; rm -f \"$out.$$\"; exit $rc; }}\n\
                 mv \"$out.$$\" \"$out\" && exec cat \"$out\"\n",
                cache = dir.display(),
                real = real.display(),
            );
            std::fs::write(&script, text).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            Some(script)
        })
        .clone()
}

fn kernel_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("kernels"))
        .expect("kernels/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_kernel_has_a_launch_and_an_expectation() {
    for f in kernel_files() {
        let text = std::fs::read_to_string(root().join("kernels").join(&f)).unwrap();
        assert!(
            text.contains("\n// barrier-check: "),
            "{f}: no `// barrier-check:` line"
        );
        assert!(text.contains("\n// expect "), "{f}: no `// expect` line");
    }
}

#[test]
fn the_kernel_corpus_gets_its_expected_verdicts() {
    let Some(nvcc) = cached_nvcc() else {
        eprintln!(
            "\n*** SKIPPED: no nvcc (BC_NVCC unset and `.ci/cuda` could not install pip's nvidia-cuda-nvcc): the kernels/ corpus was NOT checked ***\n"
        );
        return;
    };
    // The folder, as a user names it: `--cu` makes it yield its `*.cu` files.
    let files = kernel_files();
    let args = ["check", "--quiet", "--no-timing", "--cu", "kernels"];
    let start = Instant::now();
    let out = bin()
        .args(args)
        .current_dir(root())
        .env("BC_NVCC", &nvcc)
        .output()
        .expect("runs");
    eprintln!(
        "kernels/: {} files checked in {:.1} s",
        files.len(),
        start.elapsed().as_secs_f64()
    );
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn a_cu_file_without_nvcc_says_how_to_get_one() {
    let out = bin()
        .args(["check", "kernels/tiling-ok.cu"])
        .current_dir(root())
        .env("BC_NVCC", "/nonexistent/nvcc")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains("pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl"),
        "{all}"
    );
}

/// Runs the binary in `crates/cli/tests`, so file names in snapshots are
/// short and stable.
fn run_in_tests(args: &[&str]) -> std::process::Output {
    run_in(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").as_path(),
        args,
    )
}

/// A PTX module with two entries, each with its own `// expect NAME:`
/// line: both tests, with the race's witness naming PTX lines.
#[test]
fn a_ptx_module_is_one_test_per_entry() {
    let out = run_in_tests(&["check", "--no-timing", "ptx/two-entries.ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

/// A folder yields its `*.ptx` files (and `*.cu` only with `--cu`).
#[test]
fn folders_yield_ptx_modules() {
    let out = run_in_tests(&["check", "--quiet", "--no-timing", "ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).ends_with("4 passed, 0 failed\n"), "{}", stdout(&out));
}

/// `// barrier-check NAME:` gives one entry its own launch over the
/// file's (a namespaced kernel named by its source name `ns::own`): the
/// two entries differ only in their parameter, which decides the race.
#[test]
fn each_entry_takes_its_own_launch_line() {
    let out = run_in_tests(&["check", "--quiet", "--no-timing", "ptx/entry-launches.ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

/// Header lines that name no entry, or set what only the file can, are
/// errors at their lines, all of them at once.
#[test]
fn entry_header_lines_are_checked_against_the_module() {
    let dir = scratch_dir("entry-headers");
    std::fs::create_dir_all(&dir).unwrap();
    let good =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx/entry-launches.ptx"))
            .unwrap();
    let bad = format!(
        "// barrier-check nosuch: --block 4\n// barrier-check ns::own: --arch sm_90\n// barrier-check ns::neighbour: --frobnicate\n// expect missing: race\n{good}"
    );
    let file = dir.join("bad.ptx");
    std::fs::write(&file, bad).unwrap();
    let out = run_in(&dir, &["check", "--no-timing", "bad.ptx"]);
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    for want in [
        "bad.ptx:1:1: error: `// barrier-check nosuch:` names no entry of this module",
        "bad.ptx:2:1: error: `// barrier-check ns::own:` sets `--entry` or `--arch`",
        "bad.ptx:3:1: error: in the `// barrier-check ns::neighbour:` header: unknown flag `--frobnicate`",
        "bad.ptx:4:1: error: `// expect missing:` names no entry of this module",
    ] {
        assert!(err.contains(want), "missing {want:?} in\n{err}");
    }
}

#[test]
fn entry_picks_one_entry_by_its_source_name() {
    let out = run_in_tests(&[
        "check",
        "--quiet",
        "--no-timing",
        "--entry",
        "exchange_racy",
        "ptx/two-entries.ptx",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("\"two-entries.ptx::exchange_racy\"  verdict: race"),
        "{text}"
    );
    assert!(!text.contains("::exchange\""), "{text}");
    assert!(text.ends_with("1 passed, 0 failed\n"), "{text}");
}

/// SARIF of a `.cu` kernel points into the `.cu` (issue 35): the race's
/// two accesses at their CUDA lines, and the artifact is the `.cu`, not
/// nvcc's PTX, which is not a file on disk.
#[test]
fn sarif_of_a_cu_kernel_points_into_the_cu() {
    let Some(nvcc) = nvcc() else {
        eprintln!("\n*** SKIPPED: no nvcc: SARIF regions in the .cu were NOT checked ***\n");
        return;
    };
    let out = bin()
        .args(["check", "--format", "sarif", "kernels/tiling-missing-barrier-race.cu"])
        .current_dir(root())
        .env("BC_NVCC", &nvcc)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(
        run["artifacts"][0]["location"]["uri"],
        "kernels/tiling-missing-barrier-race.cu"
    );
    let race = &run["results"][0];
    assert_eq!(race["ruleId"], "race");
    let at: Vec<(String, u64, String)> = race["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let p = &l["physicalLocation"];
            (
                p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                p["region"]["startLine"].as_u64().unwrap(),
                p["region"]["snippet"]["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let cu = "kernels/tiling-missing-barrier-race.cu".to_string();
    // The two accesses, in the order the witness ran them.
    let mut at = at;
    at.sort();
    assert_eq!(
        at,
        vec![
            (cu.clone(), 12, "tile[t] = in[k * blockDim.x + t];".to_string()),
            (cu, 14, "acc += tile[(t + 1) % blockDim.x];".to_string()),
        ]
    );
}

/// Pruning (the accesses of locations that cannot race are left out) is
/// held against the unpruned lowering: `--no-prune` gives every kernel of
/// the corpus the same verdict, with at least as many states.
/// Kernels whose search without pruning stops at the state limit of the
/// test, so that no verdict can be compared: each costs the unpruned
/// lowering its locations that cannot race (a lane's own `out[lane]`, the
/// producer's loads of `in[k]`), whose accesses interleave with the
/// pipeline's (docs/ptx.md, "Pruning").
const UNPRUNED_STOPS: &[&str] = &[
    "mbarrier-pipeline-ok.cu::pipeline",
    "mbarrier-pipeline-release-before-syncwarp-race.cu::pipeline",
];

#[test]
fn pruned_and_unpruned_kernels_get_the_same_verdicts() {
    let Some(nvcc) = cached_nvcc() else {
        eprintln!("\n*** SKIPPED: no nvcc: pruning was NOT held against --no-prune ***\n");
        return;
    };
    let report = |extra: &[&str]| -> Vec<(String, serde_json::Value, u64, String)> {
        let out = bin()
            .args(["check", "--format", "json", "--cu", "kernels"])
            .args(extra)
            .current_dir(root())
            .env("BC_NVCC", &nvcc)
            .output()
            .expect("runs");
        // Exit 0 when every kernel passes; 1 when some search stopped
        // (only the unpruned run may, and only where UNPRUNED_STOPS says).
        assert!(matches!(out.status.code(), Some(0 | 1)), "{extra:?}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["test"].as_str().unwrap().to_string(),
                    r["verdict"].clone(),
                    r["stats"]["states"].as_u64().unwrap(),
                    r["stop"].as_str().unwrap_or("exhausted").to_string(),
                )
            })
            .collect()
    };
    // The unpruned limit: every kernel that exhausts needs at most 10,160
    // states (session 28); the two stops reach it in 12 s instead of 31 s
    // at 50,000. The unpruned reference runs without chains (docs/explorer.md,
    // "Reductions", item 9; held against the search without them by the
    // corpus and property tests): their chains reach deep states, where
    // each step of the two stops costs 20 times a shallow one's, and the
    // same limit took 230 s.
    let (pruned, full) = (
        report(&[]),
        report(&["--no-prune", "--no-chain", "--max-states", "20000"]),
    );
    assert_eq!(pruned.len(), full.len());
    for (p, f) in pruned.iter().zip(&full) {
        assert_eq!(p.3, "exhausted", "{}: the pruned search stopped", p.0);
        if f.3 != "exhausted" {
            assert!(
                UNPRUNED_STOPS.contains(&p.0.as_str()),
                "{}: the unpruned search stopped ({}) and is not in UNPRUNED_STOPS",
                p.0,
                f.3
            );
            continue;
        }
        assert_eq!((&p.0, &p.1), (&f.0, &f.1), "pruning changed a verdict");
    }
    // Pruning removes steps; the states of each kernel are in the
    // snapshot of the corpus run (docs/ptx.md says where it costs).
    for (p, f) in pruned.iter().zip(&full) {
        eprintln!("{}: {} states pruned, {} with --no-prune", p.0, p.2, f.2);
    }
}

/// `--timeout` covers the lowering: 64 threads that each run a loop of
/// 750,000 instructions take seconds to pre-evaluate, so a 0.2 s timeout
/// stops there, before any state (`stop: timeout`, exit 1, never a pass).
#[test]
fn the_timeout_covers_lowering() {
    let dir = scratch_dir("kernels-timeout-lowering");
    std::fs::write(
        dir.join("slow.ptx"),
        "// barrier-check: --block 64\n.version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry slow()\n{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\nmov.u32 %r1, 0;\n\
         $L_loop:\nadd.s32 %r1, %r1, 1;\nsetp.lt.s32 %p1, %r1, 250000;\n@%p1 bra $L_loop;\n\
         bar.sync 0;\nret;\n}\n",
    )
    .unwrap();
    let out = run_in(&dir, &["check", "--format", "json", "--timeout", "0.2", "slow.ptx"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["stop"], "timeout");
    assert_eq!(r["stats"]["states"], 0);
    assert_eq!(r["pass"], false);
}

/// The JSON report of a kernel: its test name, model from `.target`,
/// verdict and expectation from the header.
#[test]
fn kernels_report_in_json() {
    let out = run_in_tests(&["check", "--format", "json", "ptx/two-entries.ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"].as_array().unwrap()[1];
    assert_eq!(r["test"], "two-entries.ptx::exchange_racy");
    assert_eq!(r["model"], "cuda-sm80");
    assert_eq!(r["verdict"], serde_json::json!(["race"]));
    assert_eq!(r["expected"], serde_json::json!(["race"]));
    assert_eq!(r["pass"], true);
}

/// Without the parameter the header passes, the exchange distance is
/// unknown and reaches an address: inconclusive, an input error (exit 2)
/// that names the `ld.param` and the flag to pass. A `--param` on the
/// command line overrides the header's.
#[test]
fn an_unknown_parameter_is_inconclusive_never_ok() {
    let dir = scratch_dir("kernels-unknown-param");
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx/two-entries.ptx"))
            .unwrap();
    let f = dir.join("no-param.ptx");
    std::fs::write(&f, text.replace(" --param 0=1", "")).unwrap();
    let out = run_in(&dir, &["check", "--no-timing", "--entry", "exchange", "no-param.ptx"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(format!("{}{}", stdout(&out), stderr(&out)));
    let out = run_in(
        &dir,
        &["check", "--quiet", "--no-timing", "--param", "0=2", "no-param.ptx"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `explain` takes a kernel file: one entry's finding, and without
/// `--entry` on a module of two entries, an error.
#[test]
fn explain_takes_one_entry_of_a_module() {
    let out = run_in_tests(&["explain", "--entry", "exchange_racy", "ptx/two-entries.ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The race of the two instructions, in whichever order the witness
    // ran them.
    let race = stdout(&out)
        .lines()
        .find(|l| l.contains("race: "))
        .unwrap_or_default()
        .to_string();
    assert!(
        race.contains("st.shared.u32 [%r4], %r1") && race.contains("ld.shared.u32 %r5, [%r8]"),
        "{}",
        stdout(&out)
    );
    let out = run_in_tests(&["explain", "ptx/two-entries.ptx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("2 entries (exchange, exchange_racy); pick one with --entry"),
        "{}",
        stderr(&out)
    );
}

/// `graph` takes one entry of a kernel file, as `explain` does.
#[test]
fn graph_takes_one_entry_of_a_module() {
    let out = run_in_tests(&["graph", "--entry", "exchange", "ptx/two-entries.ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dot = stdout(&out);
    assert!(dot.starts_with("digraph \"two-entries.ptx::exchange\""), "{dot}");
    assert!(dot.contains("bar.sync 0"), "{dot}");
    let out = run_in_tests(&["graph", "ptx/two-entries.ptx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("2 entries (exchange, exchange_racy); pick one with --entry"),
        "{}",
        stderr(&out)
    );
}
