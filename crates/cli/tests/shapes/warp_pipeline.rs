//! A warp-specialized mbarrier pipeline kernel, shared by the targets
//! bench (`benches/targets.rs`) and the reliability tests (a search of
//! many states): included by `#[path]`, not a test target of its own.

/// The litmus text of a warp-specialized mbarrier pipeline named `name`:
/// warp 0 produces into `stages` slots guarded by full/empty mbarriers
/// with parity waits, the other warps consume, for `iters` iterations;
/// every thread is a CUDA thread. The stage index is unrolled into an
/// if-chain (the language has no barrier arrays yet).
pub fn warp_pipeline(name: &str, threads: u32, stages: u32, iters: u32) -> String {
    let consumers = threads - 32;
    let mut decls = String::new();
    for s in 0..stages {
        decls += &format!("barrier full{s}\nbarrier empty{s}\nvar slot{s} scope=block\n");
    }
    let mut init = String::from("  if tid == 0 {");
    for s in 0..stages {
        init += &format!(" mbarrier.init full{s}, 32; mbarrier.init empty{s}, {consumers};");
    }
    init += " }\n  __syncthreads\n";
    // One role's loop body: the if-chain over the stage index.
    let chain = |wait: &str, act: &dyn Fn(u32) -> String, arrive: &str| {
        let mut c = String::new();
        for s in 0..stages {
            let kw = if s == 0 { "if" } else { "} else if" };
            c += &format!(
                "      {kw} s == {s} {{\n        mbarrier.try_wait.parity {wait}{s}, ph\n        {}\n        mbarrier.arrive {arrive}{s}\n",
                act(s)
            );
        }
        c + "      }\n"
    };
    let step = format!("      s = s + 1\n      if s == {stages} {{ s = 0; ph = 1 - ph }}\n");
    let producer = chain("empty", &|s| format!("if tid == 0 {{ write slot{s} }}"), "full");
    let consumer = chain("full", &|s| format!("read slot{s}"), "empty");
    let body = format!(
        "{init}  if warp == 0 {{\n    s = 0\n    ph = 1\n    repeat {iters} {{\n{producer}{step}    }}\n  }} else {{\n    s = 0\n    ph = 0\n    repeat {iters} {{\n{consumer}{step}    }}\n  }}"
    );
    format!("litmus \"{name}\"\nmodel cuda-sm90\n{decls}kernel blocks=1 threads={threads} {{\n{body}\n}}\n")
}
