//! `emit cuda` (docs/hardware.md): snapshots of representative harnesses,
//! the whole CUDA corpus emitted with a short, reasoned skip list, and a
//! host-side syntax check of every emitted program with g++ against the
//! stand-in headers in `tests/cuda-stub/` (plus an nvcc build where nvcc is
//! installed; no device runs here).

use bc_hw::emit::{emit_cuda, emit_kernel_only, CudaProgram, Refusal};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Emits one litmus file (a path under the repository root).
fn emit(rel: &str) -> Result<CudaProgram, Refusal> {
    let text = std::fs::read_to_string(root().join(rel)).expect("readable");
    emit_text(&text, rel)
}

fn emit_text(text: &str, rel: &str) -> Result<CudaProgram, Refusal> {
    let (lit, diags) = bc_syntax::parse(text);
    assert!(diags.is_empty(), "{rel}: {diags:?}");
    let model = bc_graph::lower::resolve_model(&lit, None).expect("model");
    let prog = bc_graph::lower::lower(&lit, text, model).expect("lowers");
    let stem = Path::new(rel).file_stem().unwrap().to_string_lossy().into_owned();
    emit_cuda(&lit, &prog, &stem)
}

/// The test-specific part of a harness: the fixed helpers and runtime
/// (the same in every file, checked by the syntax check) are cut out.
fn specific(src: &str) -> String {
    let cut = |s: &str, from: &str, to: &str| -> String {
        match (s.find(from), s.find(to)) {
            (Some(a), Some(b)) if a < b => format!("{}{}\n{}", &s[..a], from, &s[b..]),
            _ => s.to_string(),
        }
    };
    let s = cut(src, "// ---- barrier-check harness helpers", "// ---- the test ----");
    cut(&s, "// ---- harness runtime", "static long long* bc_host_ptr")
}

macro_rules! snap {
    ($name:ident, $file:expr) => {
        #[test]
        fn $name() {
            let p = emit($file).unwrap_or_else(|r| panic!("{}: skipped: {r}", $file));
            assert!(p.source.starts_with(&format!("// nvcc: {}\n", p.nvcc)));
            insta::assert_snapshot!(stringify!($name), specific(&p.source));
        }
    };
}

snap!(syncthreads_basic, "litmus/cuda/syncthreads-basic.litmus");
snap!(syncthreads_count, "litmus/cuda/syncthreads-count.litmus");
snap!(named_producer_consumer, "litmus/cuda/named-producer-consumer.litmus");
snap!(mbarrier_pipeline_parity, "litmus/cuda/mbarrier-pipeline.litmus");
snap!(cuda_barrier_tokens, "litmus/cuda/cuda-barrier-token.litmus");
snap!(cluster_split, "litmus/cuda/sm90-cluster-split.litmus");
snap!(grid_sync_cooperative, "litmus/cuda/grid-sync-cooperative.litmus");
snap!(host_named_kernel, "litmus/progress/cuda-host-launch-then-flag.litmus");
snap!(syncwarp_lane_mapping, "litmus/cuda/syncwarp-disjoint-halves-ok.litmus");

/// `emit cuda --kernel-only` of one litmus file.
fn kernel_only(rel: &str) -> Result<CudaProgram, Refusal> {
    let text = std::fs::read_to_string(root().join(rel)).expect("readable");
    let (lit, _) = bc_syntax::parse(&text);
    let model = bc_graph::lower::resolve_model(&lit, None).expect("model");
    let prog = bc_graph::lower::lower(&lit, &text, model).expect("lowers");
    emit_kernel_only(&lit, &prog, "k")
}

macro_rules! snap_kernel_only {
    ($name:ident, $file:expr) => {
        #[test]
        fn $name() {
            let p = kernel_only($file).unwrap_or_else(|r| panic!("{}: skipped: {r}", $file));
            insta::assert_snapshot!(stringify!($name), specific(&p.source));
        }
    };
}

// Warp mapping: `.aligned` named barriers, no `__syncwarp` after a lane-0
// statement, `__device__` words for device locations, no tables.
snap_kernel_only!(
    kernel_only_named_producer_consumer,
    "litmus/cuda/named-producer-consumer.litmus"
);
// Lane mapping: the litmus `.aligned` forms kept, places from the builtins.
snap_kernel_only!(
    kernel_only_aligned_lanes,
    "litmus/cuda/ptx-barrier-aligned-three-warps-over-count.litmus"
);

/// A kernel-only file is one launch of device threads at their CUDA
/// places, under the model's own progress rules.
#[test]
fn kernel_only_refuses_what_one_launch_cannot_say() {
    let why = |rel: &str| kernel_only(rel).err().map(|r| r.0).unwrap_or_default();
    assert!(why("litmus/progress/cuda-host-launch-then-flag.litmus").contains("host threads"));
    assert!(why("litmus/cuda/thread-beside-kernel-ok.litmus").contains("2 launches"));
    assert!(why("litmus/cuda/sm90-cp-async-bulk-poll-unfair-ok.litmus").contains("progress unfair"));
    assert!(why("litmus/cuda/cg-coalesced-sync-divergent-ok.litmus").contains("several instances"));
    // The harness of the same tests is emitted.
    assert!(emit("litmus/cuda/thread-beside-kernel-ok.litmus").is_ok());
}

#[test]
fn mappings_follow_syncwarp() {
    assert_eq!(
        emit("litmus/cuda/syncthreads-basic.litmus").unwrap().mapping.name(),
        "warp"
    );
    assert_eq!(emit("litmus/cuda/syncwarp-full.litmus").unwrap().mapping.name(), "lane");
}

/// A bulk copy is a real TMA copy between scratch buffers, completing on
/// the litmus barrier, after a proxy fence; its agents run no harness code.
#[test]
fn bulk_copies_are_emitted_as_tma_copies() {
    let p = emit("litmus/cuda/sm90-gemm-mainloop-ok.litmus").expect("emitted");
    let issue = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes";
    assert!(p.source.contains(issue), "{}", p.source);
    assert!(p.source.contains("fence.proxy.async.shared::cta"));
    assert!(p
        .source
        .contains("__shared__ __align__(16) unsigned char bc_tma_dst[128];"));
    assert_eq!(
        p.source
            .matches("bc_cp_async_bulk(bc_tma_dst, bc_tma_src, 128LL, &bc_bar_")
            .count(),
        4
    );
    assert!(!p.source.contains("P.copy"), "no harness thread runs an agent");
}

#[test]
fn constructs_without_an_exact_form_are_refused() {
    let refused = |body: &str| {
        let t = format!("litmus \"t\"\nmodel cuda-sm90\n{body}\n");
        emit_text(&t, "t.litmus").err().map(|r| r.0)
    };
    assert!(
        refused("barrier B = 2 scope=cluster\nkernel blocks=1 threads=2 { arrive_wait B }")
            .is_some_and(|r| r.contains("scope cluster"))
    );
    assert!(refused("barrier B = 2\nkernel blocks=1 threads=2 { arrive B, 3 }")
        .is_some_and(|r| r.contains("sets the expected count")));
    assert!(refused("kernel blocks=1 threads=3 { bar.sync 1, 3; __syncwarp 0x7 }")
        .is_some_and(|r| r.contains("multiple of 32")));
    assert!(refused("var x\nkernel blocks=1 threads=2 { write x; store x, 1 }")
        .is_some_and(|r| r.contains("plain and atomic")));
    assert!(refused(
        "thread A { __syncthreads }\nthread B block=1 { __syncthreads }\nthread C block=1 { __syncthreads }"
    )
    .is_some_and(|r| r.contains("different sizes")));
    assert!(refused(
        "var f\nkernel K blocks=1 threads=1 { r = fetch_add f, 1 }\nhost H { launch K, stream=0; await f == 1 }"
    )
    .is_some_and(|r| r.contains("read-modify-write")));
    let copy = |bytes: &str| {
        format!("barrier M = 1\nvar s scope=block\nvar g\nthread T {{ r = 64; r = r + 64; cp.async.bulk s, g, {bytes}, M }}")
    };
    assert!(refused(&copy("r")).is_some_and(|r| r.contains("constant byte count")));
    assert!(refused(&copy("100")).is_some_and(|r| r.contains("multiple of 16")));
    assert!(refused(&copy("32768")).is_some_and(|r| r.contains("multiple of 16")));
    let amd = "litmus \"t\"\nmodel amdgpu\nbarrier B = 1\nthread T0 { join B; arrive B; wait B }\n";
    assert!(emit_text(amd, "t.litmus")
        .err()
        .is_some_and(|r| r.0.contains("not a CUDA model")));
}

/// (folder/file, harness) of each emitted test; (folder/file, reason) of each skipped one.
type Emitted = (Vec<(String, CudaProgram)>, Vec<(String, String)>);

/// Every CUDA-model file of the corpus, emitted.
fn corpus() -> Emitted {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(root().join("litmus")).unwrap() {
        // The folders of the corpus (beside them, its baseline file).
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(dir).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "litmus") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut emitted, mut skipped) = (Vec::new(), Vec::new());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        if !text.lines().any(|l| l.trim_start().starts_with("model cuda")) {
            continue;
        }
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let parent = f.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        match emit_text(&text, &format!("{parent}/{name}")) {
            Ok(p) => emitted.push((format!("{parent}/{name}"), p)),
            Err(r) => skipped.push((format!("{parent}/{name}"), r.0)),
        }
    }
    (emitted, skipped)
}

#[test]
fn the_cuda_corpus_is_emitted_with_few_reasoned_skips() {
    let (emitted, skipped) = corpus();
    let names: Vec<&str> = skipped.iter().map(|(f, _)| f.as_str()).collect();
    // Each forges or launders a phase token: the model's phase numbers have
    // no counterpart in a GPU's opaque token word; or waits on a
    // cuda::barrier without a token, which no GPU form does; or issues a
    // bulk copy of zero bytes, which the hardware's copy does not take; or
    // places an explicit thread at a lane other than its index in the
    // block (`warp=`), which the dense lane mapping cannot.
    assert_eq!(
        names,
        [
            "cuda/cuda-barrier-plain-then-token-wait-ok.litmus",
            "cuda/cuda-barrier-token-forged-arithmetic.litmus",
            "cuda/cuda-barrier-token-forged-future-phase.litmus",
            "cuda/cuda-barrier-token-integers.litmus",
            "cuda/cuda-barrier-token-through-memory.litmus",
            "cuda/sm90-cluster-barrier-wait-integer.litmus",
            "cuda/sm90-cp-async-bulk-zero-bytes-never-waited.litmus",
            "cuda/syncwarp-lane-counts-within-warp-not-in-mask.litmus",
            "cuda/syncwarp-lane-counts-within-warp-ok.litmus",
        ],
        "{skipped:#?}"
    );
    assert!(
        skipped.iter().all(|(_, r)| r.contains("token")
            || r.contains("positive multiple of 16")
            || r.contains("in the lane mapping a thread's warp is its index / 32")),
        "{skipped:#?}"
    );
    assert!(emitted.len() >= 100, "{}", emitted.len());
}

/// Shapes the corpus lacks, checked with it by the host syntax check.
const SYNTAX_CASES: &[(&str, &str)] = &[
    // A grid of explicit threads that copies (`cp.async.bulk`) beside a
    // kernel that copies nothing: the copy's shared destination belongs to
    // the copying grid alone (an unused `__shared__` array fails
    // `-Wall -Wextra -Werror`; issue 39).
    (
        "copying-grid-beside-one-without.litmus",
        "litmus \"t\"\nmodel cuda-sm90\nbarrier M\nvar stage scope=block\nvar tile\n\
         thread T0 { mbarrier.init M, 1; write tile; t = mbarrier.arrive.expect_tx M, 128; \
         cp.async.bulk stage, tile, 128, M; mbarrier.try_wait.parity M, 0; read stage }\n\
         kernel K blocks=1 threads=2 { __syncthreads }\n",
    ),
];

/// The emitted programs parse and type-check as C++ against the stand-in
/// CUDA headers: emitter bugs show without nvcc or a GPU.
#[test]
fn every_emitted_program_passes_a_host_syntax_check() {
    if Command::new("g++").arg("--version").output().is_err() {
        eprintln!("g++ not found: host syntax check skipped");
        return;
    }
    let (mut emitted, _) = corpus();
    for (name, text) in SYNTAX_CASES {
        let p = emit_text(text, name).unwrap_or_else(|r| panic!("{name}: skipped: {r}"));
        emitted.push((name.to_string(), p));
    }
    let dir = std::env::temp_dir().join(format!("bc-hw-emit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (i, (_, p)) in emitted.iter().enumerate() {
        let f = dir.join(format!("t{i}.cu"));
        std::fs::write(&f, &p.source).unwrap();
        paths.push(f);
    }
    let stub = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cuda-stub");
    let flags = ["-std=c++17", "-Wall", "-Wextra", "-Werror"];
    // The harness's headers, parsed once: every emitted program starts with
    // the same `#include`s (the helpers), which are most of g++'s time on
    // one (0.6 s a file, 0.17 s with them precompiled). Their guards make a
    // program's own `#include`s of them no-ops after `-include`. Where g++
    // cannot precompile them, each file parses them itself.
    let includes: Vec<&str> = (emitted[0].1.source.lines())
        .filter(|l| l.starts_with("#include <"))
        .collect();
    let pch = dir.join("bc_pch.h");
    std::fs::write(&pch, includes.join("\n") + "\n").unwrap();
    let precompiled = Command::new("g++")
        .args(flags)
        .args(["-x", "c++-header", "-I"])
        .arg(&stub)
        .arg(&pch)
        .arg("-o")
        .arg(dir.join("bc_pch.h.gch"))
        .status()
        .is_ok_and(|s| s.success());
    // One g++ per core, each on its share of the files (g++ checks the
    // files of one command line one after another).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = paths.len().div_ceil(cores).max(1);
    let outs: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = paths
            .chunks(chunk)
            .map(|part| {
                let (stub, pch) = (&stub, &pch);
                s.spawn(move || {
                    let mut cmd = Command::new("g++");
                    cmd.arg("-fsyntax-only").args(flags).args(["-I"]).arg(stub);
                    if precompiled {
                        cmd.arg("-include").arg(pch);
                    }
                    cmd.args(["-x", "c++"]).args(part).output().unwrap()
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let _ = std::fs::remove_dir_all(&dir);
    for out in outs {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Where nvcc is installed, one harness builds with its own nvcc line.
#[test]
fn one_program_builds_with_nvcc_where_installed() {
    if Command::new("nvcc").arg("--version").output().is_err() {
        eprintln!("nvcc not found: nvcc build skipped (the host syntax check still runs)");
        return;
    }
    let p = emit("litmus/cuda/mbarrier-pipeline.litmus").unwrap();
    let dir = std::env::temp_dir().join(format!("bc-hw-nvcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mbarrier-pipeline.cu"), &p.source).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(&p.nvcc)
        .current_dir(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
