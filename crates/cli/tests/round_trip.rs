//! The round trip of the PTX front end (issue 35; docs/ptx.md, "The round
//! trip"): every CUDA-model test of the corpus that `emit cuda
//! --kernel-only` emits is compiled by nvcc (pip's, as for `kernels/`) and
//! checked from its PTX, and must get its litmus file's verdict, or be one
//! of the exceptions below, each with its reason. The whole table (every
//! test and what its PTX gave) is a snapshot, so a change of any row shows
//! in review. Without an nvcc that can be installed, the test says so
//! loudly and skips, as the kernels test does.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::time::Instant;

/// Why a kind of inconclusive answer is expected, by the instruction
/// family the PTX front end stops at.
const ERROR_REASONS: &[(&str, &str)] = &[
    (
        "unsupported mbarrier",
        "the mbarrier forms the front end rejects with their reason (docs/ptx.md): `.noComplete`, which the sm_80 harness uses for cuda::barrier's arrive(n); `.shared::cluster`; `.relaxed` arrives and waits",
    ),
    ("unsupported cp.async.bulk", "bulk copies (TMA): issue 37"),
    (
        "trap reached",
        "grid.sync in a kernel that is not launched cooperatively: nvcc's grid sync traps when the driver's grid workspace (%envreg1/2) is null, and the front end does not model a trap; the litmus file's ub(uncooperative-grid-sync) has no other trace in the PTX (docs/ptx.md, \"Grid sync\")",
    ),
    (
        "unknown value",
        "a value the front end does not know (loaded from memory outside a spin loop, __activemask, a bar.red result) steers control flow: the explicit inconclusive answer of the unknown-value rule",
    ),
];

/// Tests whose PTX answer differs from the litmus verdict, or stops at
/// the limit, and why (each must still differ: a fixed one leaves here).
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "shfl-sync-lane-at-syncthreads-deadlock",
        "both find the deadlock; the litmus `__syncthreads` also judges its block-wide rule on the stuck phase (lanes 0-2 never reach it: ub(divergent-barrier)), while nvcc's `bar.sync 0` is `barrier.sync.aligned 0`, whose rule is the warp's (its lanes arrive together), and a phase that only a deadlock leaves open is not judged by it",
    ),
    (
        "cuda-barrier-arrive-before-wait",
        "a cuda::barrier API rule (arrive-before-wait: a thread's arrive before its wait on the same phase), which the litmus `barrier` object carries and PTX's mbarrier does not: the harness's PTX is mbarrier.arrive / try_wait, which PTX allows in any order",
    ),
    ("cuda-barrier-reuse-before-any-wait", "as cuda-barrier-arrive-before-wait"),
    ("sm90-barrier-arrive-tx-then-arrive-none-pending", "as cuda-barrier-arrive-before-wait (the count-overflow stays)"),
    (
        "cuda-barrier-arrive-n-zero",
        "the sm_80 harness has no arrive count (PTX's count operand is sm_90): arrive(0) becomes one plain arrive, so the API's count rule leaves no trace in the PTX",
    ),
    (
        "barrier-array-index-out-of-range",
        "an index past a litmus barrier array is ub(invalid-barrier); in the PTX it is an address in another shared variable, which no init made an mbarrier: ub(uninitialized-barrier)",
    ),
    ("mbarrier-wait-array-out-of-range", "as barrier-array-index-out-of-range"),
    (
        "cuda-barrier-token-of-abandoned-phase-deadlock",
        "explicit litmus threads with different numbers of `__syncthreads` become one kernel whose warps reach different `bar.sync 0` instructions in one phase: ub(divergent-barrier) under PTX's `.aligned` (all threads of the CTA execute the same instruction) and CUDA's rule for `__syncthreads`; the litmus reading exempts explicit thread bodies (docs/semantics.md)",
    ),
    (
        "mbarrier-runtime-init-unsynchronized",
        "stops at the state limit: 32 lanes arrive one by one on an mbarrier that a lane inits without a barrier before the arrives, so no point comes after which no init can come, where arrives would fuse (docs/explorer.md, item 6); every subset of arrived lanes is a state (issue 36)",
    ),
    (
        "cuda-barrier-last-drop-ok",
        "cuda::barrier's arrive_and_drop lets the last participant leave (later phases may expect none); the harness's PTX is `mbarrier.arrive_drop`, whose count must stay positive (the litmus file's own note), so the PTX answer is PTX's rule: ub(negative-expected-count)",
    ),
    (
        "cg-block-barrier-arrive-twice",
        "sm_80: nvcc compiles cooperative groups' barrier_arrive to nothing and barrier_wait to `barrier.sync 0`, so the API's token rules that the litmus test breaks leave no trace in the PTX, which is a correct __syncthreads",
    ),
    ("cg-block-barrier-wait-twice", "as cg-block-barrier-arrive-twice"),
    ("cg-block-sync-between-arrive-and-wait", "as cg-block-barrier-arrive-twice"),
    (
        "syncthreads-count-wrong-assumption",
        "an `assert` over values: the PTX front end does not track data",
    ),
    (
        "cg-tile-sync-mixed-sizes",
        "stops at the state limit: lanes at `bar.warp.sync` with two masks (issue 36, the explorer's scale)",
    ),
    (
        "sm90-memcpy-async-tma-ok",
        "stops at the state limit: the sm_90 harness's memcpy_async into shared memory is a cp.async with an mbarrier arrive per lane-0 thread, and each cp.async site has four copy agents per issuing thread, whose starts and completions interleave (issue 36)",
    ),
    (
        "sm90-cg-cluster-sync-between-arrive-and-wait",
        "stops at the state limit: 64 lanes at the non-aligned `barrier.cluster.arrive`/`wait` arrive one by one; the litmus UB is about the cooperative-groups token, which has no PTX trace",
    ),
];

/// The outcome of one emitted kernel: `same`, or a key of the tables above.
fn outcome(r: &serde_json::Value) -> (String, String) {
    let list = |v: &serde_json::Value| -> String {
        let kinds: Vec<&str> = v
            .as_array()
            .map(|a| a.iter().filter_map(|k| k.as_str()).collect())
            .unwrap_or_default();
        if kinds.is_empty() {
            "ok".into()
        } else {
            kinds.join(", ")
        }
    };
    if let Some(e) = r["error"].as_str() {
        let first = e.lines().next().unwrap_or_default();
        if let Some(rest) = first
            .split("error: `")
            .nth(1)
            .filter(|_| first.contains("is not supported") || first.contains("is not modelled"))
        {
            let op = rest.split('`').next().unwrap_or_default();
            let family = ["mbarrier", "cp.async.bulk", "cp.async", "barrier.cluster", "fence"]
                .iter()
                .find(|f| op.starts_with(*f))
                .map_or(op.split(' ').next().unwrap_or_default(), |f| *f);
            return (format!("unsupported {family}"), format!("`{op}`"));
        }
        if first.contains("`trap` is reached") {
            return ("trap reached".into(), "`trap`".into());
        }
        if first.contains("inconclusive") {
            let from = e
                .split("from `")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .unwrap_or("?");
            return ("unknown value".into(), format!("from `{from}`"));
        }
        return (
            "other error".into(),
            first.rsplit("error: ").next().unwrap_or_default().to_string(),
        );
    }
    let stop = r["stop"].as_str().unwrap_or_default();
    if stop != "exhausted" {
        return ("stop".into(), format!("{stop}, verdict so far {}", list(&r["verdict"])));
    }
    if r["pass"].as_bool() == Some(true) {
        return ("same".into(), list(&r["verdict"]));
    }
    (
        "differs".into(),
        format!("PTX: {}; litmus: {}", list(&r["verdict"]), list(&r["expected"])),
    )
}

#[test]
fn emitted_kernels_checked_from_ptx_get_their_litmus_verdicts() {
    let Some(nvcc) = nvcc() else {
        eprintln!(
            "\n*** SKIPPED: no nvcc (BC_NVCC unset and `.ci/cuda` could not install pip's nvidia-cuda-nvcc): the round trip was NOT checked ***\n"
        );
        return;
    };
    let dir = scratch_dir("round-trip");
    let _ = std::fs::remove_dir_all(&dir);
    let start = Instant::now();
    let emit = bin()
        .args(["emit", "cuda", "--kernel-only", "-o"])
        .arg(&dir)
        .arg("litmus")
        .current_dir(root())
        .output()
        .expect("runs");
    assert_eq!(emit.status.code(), Some(0), "{}", stderr(&emit));
    // One translation unit per architecture: nvcc's fixed cost (about
    // 0.65 s a file, parsing the CUDA runtime's headers) is paid twice,
    // not once per test.
    let (bundles, tests) = bundle(&dir);
    // The state limit keeps the stops deterministic (the timeout is a
    // guard only); it is above what every `same` row needs (8,191 states
    // at most in session 28), and the four rows that stop stop at 50,000
    // too, with the same verdicts.
    let check = bin()
        .args([
            "check",
            "--format",
            "json",
            "--no-timing",
            "--max-states",
            "12000",
            "--timeout",
            "600",
            "--jobs",
            "2",
        ])
        .args(&bundles)
        .env("BC_NVCC", &nvcc)
        .output()
        .expect("runs");
    eprintln!(
        "round trip: emitted and checked in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let doc: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", stdout(&check), stderr(&check));
    });
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();

    let stem = |file: &str| -> String {
        let name = file.rsplit('/').next().unwrap_or_default();
        name.trim_end_matches(".ptx")
            .trim_end_matches(".cu")
            .trim_end_matches(".litmus")
            .to_string()
    };
    let mut rows: BTreeMap<String, (String, String)> = BTreeMap::new();
    for r in doc["results"].as_array().unwrap() {
        // `bundle-sm_80.cu::NAMESPACE::KERNEL`: the namespace names the test.
        let test = r["test"].as_str().unwrap_or_default();
        let ns = test.split("::").nth(1).unwrap_or(test);
        let name = tests
            .get(ns)
            .cloned()
            .unwrap_or_else(|| format!("{test} (not an emitted test)"));
        assert!(rows.insert(name.clone(), outcome(r)).is_none(), "{name}: two results");
    }
    assert_eq!(rows.len(), tests.len(), "a result for every emitted kernel");
    let mut refused = BTreeMap::new();
    for s in manifest["skipped"].as_array().unwrap() {
        let reason = s["reason"].as_str().unwrap();
        if !reason.contains("is not a CUDA model") {
            refused.insert(stem(s["file"].as_str().unwrap()), reason.to_string());
        }
    }

    // Every row is the litmus verdict or an exception with its reason.
    let mut unexplained = Vec::new();
    for (name, (key, detail)) in &rows {
        let known = match key.as_str() {
            "same" => true,
            "differs" | "stop" => DIFFERENCES.iter().any(|(n, _)| n == name),
            k => ERROR_REASONS.iter().any(|(e, _)| *e == k),
        };
        if !known {
            unexplained.push(format!("{name}: {key} ({detail})"));
        }
    }
    assert!(
        unexplained.is_empty(),
        "PTX answers that differ from the litmus verdict without a reason (a wrong verdict in the emitter, the front end or the model, or a new exception to explain):\n{}",
        unexplained.join("\n")
    );
    let stale: Vec<String> = (DIFFERENCES.iter())
        .filter_map(|(name, _)| {
            let row = rows.get(*name).map(|(k, _)| k.as_str());
            (!matches!(row, Some("differs" | "stop"))).then(|| format!("{name}: {row:?}"))
        })
        .collect();
    assert!(
        stale.is_empty(),
        "listed as exceptions, but the PTX answer is no longer a difference: remove them from DIFFERENCES\n{}",
        stale.join("\n")
    );

    // The table: counts, then every row.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (key, _) in rows.values() {
        *counts.entry(key.as_str()).or_default() += 1;
    }
    let mut table = format!(
        "emitted {}, refused by the emitter {} (CUDA models only)\n",
        rows.len(),
        refused.len()
    );
    for (k, n) in &counts {
        table.push_str(&format!("{k}: {n}\n"));
    }
    table.push_str("\n# the emitted kernels\n");
    for (name, (key, detail)) in &rows {
        table.push_str(&format!("{name}  {key}  {detail}\n"));
    }
    table.push_str("\n# refused by `emit cuda --kernel-only`\n");
    for (name, reason) in &refused {
        table.push_str(&format!("{name}  {reason}\n"));
    }
    insta::assert_snapshot!(table);
}

/// The emitted kernel-only files of `dir` as one `.cu` file per
/// architecture (written into `dir`): each file's text in a namespace of
/// its own (`t_` and its stem), its `#include`s hoisted to the top (the
/// host-only ones, under `#ifndef BC_KERNEL_ONLY`, left out), its macros
/// undefined before it, and its header turned into the entry's own lines
/// (`// barrier-check NS::KERNEL:` without `--arch`, `// expect NS::KERNEL:`).
/// Returns the bundles and, by namespace, the test stem.
fn bundle(dir: &std::path::Path) -> (Vec<std::path::PathBuf>, BTreeMap<String, String>) {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    let mut per_arch: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut tests = BTreeMap::new();
    let mut includes: Vec<String> = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let ns: String = "t_"
            .chars()
            .chain(stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }))
            .collect();
        assert!(
            tests.insert(ns.clone(), stem.clone()).is_none(),
            "{stem}: namespace {ns} taken"
        );
        let mut flags: Vec<&str> = Vec::new();
        let mut arch = None;
        let mut kinds = "ok";
        let mut kernel = None;
        let mut body = String::new();
        let mut host_only = 0usize;
        for line in text.lines() {
            let t = line.trim();
            if let Some(f) = t.strip_prefix("// barrier-check:") {
                let mut it = f.split_whitespace();
                while let Some(a) = it.next() {
                    if a == "--arch" {
                        arch = it.next();
                    } else {
                        flags.push(a);
                    }
                }
                continue;
            }
            if let Some(k) = t.strip_prefix("// expect ") {
                kinds = k;
                continue;
            }
            if t.starts_with("#if") {
                if host_only > 0 || t == "#ifndef BC_KERNEL_ONLY" {
                    host_only += 1;
                }
            } else if t.starts_with("#endif") && host_only > 0 {
                host_only -= 1;
            }
            if t.starts_with("#include") {
                if host_only == 0 && !includes.iter().any(|i| i == t) {
                    includes.push(t.to_string());
                }
                continue;
            }
            if let Some(name) = t.strip_prefix("#define ").and_then(|d| d.split_whitespace().next()) {
                body.push_str(&format!("#undef {name}\n"));
            }
            if let Some(rest) = t.strip_prefix("__global__ void") {
                // `__global__ void [__cluster_dims__(X, Y, Z)] NAME(`.
                let rest = match rest.trim_start().strip_prefix("__cluster_dims__") {
                    Some(r) => r.split_once(')').map_or(r, |(_, r)| r),
                    None => rest,
                };
                kernel = rest.trim_start().split('(').next().map(str::to_string);
            }
            body.push_str(line);
            body.push('\n');
        }
        let arch = arch
            .unwrap_or_else(|| panic!("{stem}: no --arch in its header"))
            .to_string();
        let kernel = kernel.unwrap_or_else(|| panic!("{stem}: no __global__ function"));
        let (head, text) = per_arch.entry(arch).or_default();
        head.push_str(&format!(
            "// barrier-check {ns}::{kernel}: {}\n// expect {ns}::{kernel}: {kinds}\n",
            flags.join(" ")
        ));
        text.push_str(&format!("namespace {ns} {{\n{body}}}\n"));
    }
    let mut bundles = Vec::new();
    for (arch, (head, text)) in per_arch {
        let path = dir.join(format!("bundle-{arch}.cu"));
        let out = format!(
            "// barrier-check: --arch {arch}\n{head}#define BC_KERNEL_ONLY\n#define BC_USES_CG\n#define BC_USES_ATOMIC_REF\n{}\n{text}",
            includes.join("\n")
        );
        std::fs::write(&path, out).unwrap();
        bundles.push(path);
    }
    (bundles, tests)
}
