//! A CI gate that never aborts: input nested far deeper than the parser's
//! bound (which used to overflow the stack and abort the process, at a
//! depth that depended on `--jobs`) gives exit 2 and the same positioned
//! error whatever the number of jobs; input at the bound is checked even
//! on the smallest stack a thread gets.

/// The allocator the shipped binary uses (`src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use barrier_check::{check_bytes, CheckOptions};
use bc_syntax::MAX_NESTING;
use common::{run, scratch_dir, stderr, stdout};

const HEAD: &str = "litmus \"deep\"\nmodel cuda-sm90\nvar x = 0\n";

/// One file per shape, each far past the bound.
fn deep_shapes() -> Vec<(&'static str, String)> {
    let blocks = |open: &str, n: usize| {
        format!(
            "{HEAD}thread T0 {{\nr = 1\n{}r = 2\n{}}}\n",
            format!("{open} {{\n").repeat(n),
            "}\n".repeat(n)
        )
    };
    let expr = |e: String| format!("{HEAD}thread T0 {{\nr = 1\nr = {e}\n}}\n");
    vec![
        ("if", blocks("if r == 0", 6_300)),
        ("repeat", blocks("repeat 2", 9_600)),
        ("while", blocks("while r < 1", 9_600)),
        (
            "else-if",
            format!(
                "{HEAD}thread T0 {{\nr = 1\nif r == 0 {{ }}{}\n}}\n",
                " else if r == 1 { }".repeat(20_000)
            ),
        ),
        ("parens", expr(format!("{}r{}", "(".repeat(3_700), ")".repeat(3_700)))),
        ("not", expr(format!("{}r", "!".repeat(22_000)))),
        ("sum", expr(vec!["r"; 31_000].join(" + "))),
        (
            "assert",
            format!(
                "{HEAD}thread T0 {{ store x, 1 }}\nassert always {}\n",
                vec!["x == 1"; 31_000].join(" || ")
            ),
        ),
    ]
}

#[test]
fn deep_nesting_is_an_error_whatever_the_jobs() {
    let dir = scratch_dir("robust-deep");
    let ok = dir.join("ok.litmus");
    std::fs::write(&ok, format!("{HEAD}thread T0 {{ r = 1 }}\n")).unwrap();
    for (shape, text) in deep_shapes() {
        let f = dir.join(format!("{shape}.litmus"));
        std::fs::write(&f, &text).unwrap();
        let f = f.to_str().unwrap();
        let mut seen = Vec::new();
        for jobs in ["1", "2"] {
            // Alone (the search gets the jobs) and beside another file
            // (each file on a thread of its own).
            for files in [vec![f], vec![f, ok.to_str().unwrap()]] {
                let mut args = vec!["check", "-q", "--no-timing", "--jobs", jobs];
                args.extend(&files);
                let o = run(&args);
                assert_eq!(o.status.code(), Some(2), "{shape} --jobs {jobs}: {}", stderr(&o));
                let err = stderr(&o);
                let first = err.lines().next().unwrap_or("").to_string();
                assert!(first.contains("nested too deeply"), "{shape}: {first}");
                assert_eq!(err.matches("error:").count(), 1, "{shape}: {err}");
                seen.push((first, stdout(&o).lines().next().unwrap_or("").to_string()));
            }
        }
        seen.dedup();
        assert_eq!(seen.len(), 1, "{shape}: output depends on --jobs: {seen:?}");
    }
}

/// The deepest accepted program (blocks and an expression both at the
/// bound) runs through the whole pipeline on a 2 MiB stack, the default
/// of a spawned thread and the smallest any checking thread gets.
#[test]
fn the_deepest_accepted_program_fits_a_small_stack() {
    let n = MAX_NESTING;
    let e = format!("{}r{}", "(".repeat(n - 1), ")".repeat(n - 1));
    let sum = vec!["r"; n].join(" + ");
    let cond = vec!["r"; n - 1].join(" + ");
    let text = format!(
        "{HEAD}thread T0 {{\nr = 1\n{}r = {e}\nr = {sum}\nif {cond} == 0 {{ r = 2 }}\n{}}}\nassert always T0:r == {}\n",
        "if r > 0 {\n".repeat(n - 1),
        "}\n".repeat(n - 1),
        n
    );
    let r = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || check_bytes("deepest.litmus", text.as_bytes(), &CheckOptions::default()))
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let o = r.outcome.expect("explored");
    assert!(o.internal_errors.is_empty());
    assert!(o.verdict().is_empty(), "{:?}", o.findings);
}
