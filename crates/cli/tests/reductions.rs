//! Property test: the explorer's reductions (history compaction, phase-order
//! canonicalization, symmetry) never change a verdict. Random small litmus
//! programs - a kernel or explicit threads doing barrier operations, plain
//! accesses and atomics in loops - are checked with every reduction on and
//! with all of them off; when both searches finish, the verdicts must agree,
//! the rule checker must accept every explored execution, and the explorer
//! and the rule checker must agree on the kinds both decide.

use barrier_check::{check_bytes, CheckOptions};
use bc_explore::{Limits, Stop};
use bc_syntax::{FindingKind, UbKind};
use proptest::prelude::*;

fn stmt() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "arrive B",
        "wait B",
        "arrive_wait B",
        "join B",
        "drop B",
        "arrive_drop B",
        "arrive B, 2",
        "arrive C",
        "wait C",
        "join C",
        "read x",
        "write x",
        "read y",
        "write y",
        "r = fetch_add f, 1",
        "store f, 1",
        "r = load f",
        "t = arrive B",
        "wait B, t",
    ])
    .prop_map(str::to_string)
}

fn body() -> impl Strategy<Value = String> {
    (prop::collection::vec(stmt(), 1..5), prop::bool::ANY, 0u8..3).prop_map(|(stmts, looped, reps)| {
        let inner = stmts.join("; ");
        if looped {
            format!("repeat {} {{ {inner} }}", reps + 1)
        } else {
            inner
        }
    })
}

fn program() -> impl Strategy<Value = String> {
    (prop::collection::vec(body(), 2..4), prop::bool::ANY, 1i64..4, 1i64..4).prop_map(|(bodies, kernel, b, c)| {
        let mut s = format!(
            "litmus \"p\"\nmodel amdgpu\nbarrier B = {b}\nbarrier C = {c}\nvar x scope=block\nvar y\nvar f = 0\n"
        );
        if kernel {
            s += &format!("kernel blocks=1 threads={} {{ join B; {} }}\n", bodies.len(), bodies[0]);
        } else {
            for (i, body) in bodies.iter().enumerate() {
                s += &format!("thread T{i} {{ join B; {body} }}\n");
            }
        }
        s
    })
}

fn run(text: &str, on: bool) -> Option<bc_explore::Outcome> {
    let limits = Limits {
        max_states: 20_000,
        compact: on,
        canonical: on,
        symmetry: on,
        fuse: on,
        ..Limits::default()
    };
    check_bytes(
        "p.litmus",
        text.as_bytes(),
        &CheckOptions {
            limits,
            ..CheckOptions::default()
        },
    )
    .outcome
}

/// Reductions on and off give the same verdict, every explored execution
/// is valid, and explorer and rule checker agree on the kinds both decide.
fn compare(text: &str) -> Result<(), TestCaseError> {
    let (Some(reduced), Some(full)) = (run(text, true), run(text, false)) else {
        return Ok(());
    };
    prop_assert!(
        reduced.internal_errors.is_empty(),
        "{text}\n{:?}",
        reduced.internal_errors
    );
    prop_assert!(full.internal_errors.is_empty(), "{text}\n{:?}", full.internal_errors);
    if reduced.stop == Stop::Exhausted && full.stop == Stop::Exhausted {
        prop_assert_eq!(reduced.verdict(), full.verdict(), "{}", text);
    }
    if full.stop == Stop::Exhausted {
        let shared = |k: &&FindingKind| {
            matches!(
                k,
                FindingKind::Deadlock
                    | FindingKind::Ub(
                        UbKind::UninitializedBarrier
                            | UbKind::DropWithoutJoin
                            | UbKind::NegativeExpectedCount
                            | UbKind::WaitWithoutJoin
                            | UbKind::ExpectedCountTooSmall
                    )
            )
        };
        let op: Vec<_> = full.operational.iter().filter(shared).collect();
        let judged: Vec<_> = full.judged.iter().filter(shared).collect();
        prop_assert_eq!(op, judged, "{}", text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(250))]

    #[test]
    fn reductions_keep_verdicts(text in program()) {
        compare(&text)?;
    }
}

fn cuda_stmt() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "__syncthreads",
        "bar.sync 1, 2",
        "bar.arrive 1, 2",
        "bar.sync 2",
        "r = __syncthreads_count 1",
        "t = arrive B",
        "wait B, t",
        "arrive_wait B",
        "arrive_drop B",
        "mbarrier.arrive M",
        "mbarrier.try_wait.parity M, 0",
        "mbarrier.try_wait.parity M, 1",
        "mbarrier.expect_tx M, 2",
        "mbarrier.complete_tx M, 2",
        "read x",
        "write x",
        "store f, 1",
        "r = load f",
        "__syncwarp 0x3",
        "cluster.sync",
    ])
    .prop_map(str::to_string)
}

fn cuda_program() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::collection::vec(cuda_stmt(), 1..5), 2..4),
        prop::bool::ANY,
    )
        .prop_map(|(bodies, kernel)| {
            let mut s =
                "litmus \"c\"\nmodel cuda-sm90\nbarrier B = 2\nbarrier M\nvar x scope=block\nvar f = 0\n".to_string();
            let init = "mbarrier.init M, 1";
            if kernel {
                s += &format!(
                    "kernel blocks=1 threads={} {{ {init}; {} }}\n",
                    bodies.len(),
                    bodies[0].join("; ")
                );
            } else {
                for (i, body) in bodies.iter().enumerate() {
                    let init = if i == 0 { format!("{init}; ") } else { String::new() };
                    s += &format!("thread T{i} {{ {init}{} }}\n", body.join("; "));
                }
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn reductions_keep_cuda_verdicts(text in cuda_program()) {
        compare(&text)?;
    }
}
