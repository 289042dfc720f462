//! Explorer tests that need its internals (fault injection, outcome sets).

use crate::search::Explorer;
use crate::*;
use bc_graph::Program;

fn program(text: &str) -> Program {
    let (lit, diags) = bc_syntax::parse(text);
    assert!(diags.is_empty(), "{diags:?}");
    let model = bc_graph::lower::resolve_model(&lit, None).unwrap();
    bc_graph::lower(&lit, text, model).unwrap()
}

/// A search with the default options but `reductions`.
fn explore_with(p: &Program, reductions: Reductions) -> Outcome {
    explore(
        p,
        SearchOptions {
            reductions,
            ..SearchOptions::default()
        },
    )
}

/// The default search of `p` with the encoding checked on every state,
/// exhausted with a finding, and the searches with each of `offs`,
/// exhausted with the same verdict (`what` names the case in a failure);
/// both handed back for further checks.
fn verdict_kept(p: &Program, what: &str, offs: &[Reductions]) -> (Outcome, Vec<Outcome>) {
    let on = explore(
        p,
        SearchOptions {
            verify_encoding: true,
            ..SearchOptions::default()
        },
    );
    assert_eq!(on.stop, Stop::Exhausted, "{what}");
    assert!(!on.findings.is_empty(), "{what}");
    let offs: Vec<Outcome> = offs
        .iter()
        .map(|&off| {
            let o = explore_with(p, off);
            assert_eq!(o.stop, Stop::Exhausted, "{what} {off:?}");
            assert_eq!(on.verdict(), o.verdict(), "{what} {off:?}");
            o
        })
        .collect();
    (on, offs)
}

/// Runs a search whose expansion of state `fault_at` panics, on a
/// thread with a deadline: `Some(Err)` when the panic reached the
/// caller, `None` when the search was still running after 60 s (a hang).
fn run_with_fault(p: &Program, jobs: usize, fault_at: u32) -> Option<std::thread::Result<Outcome>> {
    let p = p.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let opts = SearchOptions {
                jobs,
                reductions: Reductions {
                    det: false,
                    ..Reductions::default()
                },
                ..SearchOptions::default()
            };
            let mut e = Explorer::new(&p, opts);
            e.fault_at = Some(fault_at);
            e.run()
        }));
        let _ = tx.send(r);
    });
    rx.recv_timeout(Duration::from_secs(60)).ok()
}

/// The outcome set with `reductions` on or off.
fn outcome_set(p: &Program, on: bool, jobs: usize) -> Outcomes {
    let opts = SearchOptions {
        outcomes: true,
        reductions: if on { Reductions::default() } else { Reductions::NONE },
        jobs,
        ..SearchOptions::default()
    };
    let o = explore(p, opts);
    assert_eq!(o.stop, Stop::Exhausted);
    o.outcomes.expect("asked for")
}

/// Symmetry stores one arrangement of interchangeable threads; the
/// outcome set lists every arrangement, with the counts a search
/// without symmetry finds - also when members with equal observed
/// values differ in what is not observed (tokens: phase numbers).
#[test]
fn outcome_sets_expand_symmetric_arrangements() {
    let p = program(
        "litmus \"t\"\nmodel cuda-sm90\nbarrier B = 2\nvar c = 0\n\
         kernel blocks=1 threads=4 { t = arrive B; wait B, t; r = fetch_add c, 1 }\n",
    );
    let on = outcome_set(&p, true, 1);
    assert_eq!(on, outcome_set(&p, false, 1));
    assert_eq!(on, outcome_set(&p, true, 2));
    assert_eq!(on.observables, ["b0t0:r", "b0t1:r", "b0t2:r", "b0t3:r", "c"]);
    // 4! ticket orders, each ending c = 4.
    assert_eq!(on.classes.len(), 24);
    assert!(on
        .classes
        .iter()
        .all(|c| matches!(&c.kind, OutcomeKind::Final(v) if v[4] == 4)));
    // Only `c` observed: one outcome, reached by every arrangement of
    // the tokens (phases 0, 0, 1, 1 over four threads: 6).
    let p = program(
        "litmus \"t\"\nmodel cuda-sm90\nbarrier B = 2\nvar c = 0\n\
         kernel blocks=1 threads=4 { t = arrive B; wait B, t; store c, 1 }\n",
    );
    let on = outcome_set(&p, true, 1);
    assert_eq!(on, outcome_set(&p, false, 1));
    assert_eq!(on.observables, ["c"]);
    assert_eq!(
        on.classes,
        [OutcomeClass {
            kind: OutcomeKind::Final(vec![1]),
            executions: 6
        }]
    );
}

/// Stuck end states are deadlock, with the number of distinct stuck
/// configurations (which thread is left over, and the tickets).
#[test]
fn stuck_end_states_are_counted_per_configuration() {
    let p = program(
        "litmus \"t\"\nmodel cuda-sm80\nvar c = 0\n\
         kernel blocks=1 threads=3 { r = fetch_add c, 1; bar.sync 1, 2 }\n",
    );
    let on = outcome_set(&p, true, 1);
    assert_eq!(on, outcome_set(&p, false, 1));
    assert_eq!(
        on.classes,
        [OutcomeClass {
            kind: OutcomeKind::Deadlock,
            executions: 18
        }]
    );
    // Not asked: nothing collected.
    assert!(explore(&p, SearchOptions::default()).outcomes.is_none());
}

/// A panic while a worker expands a state used to leave the merging
/// thread waiting for the worker's chunks forever (0% CPU, and
/// `--timeout` never checked). Now it reaches the caller, whatever the
/// number of jobs and whichever state it happens at.
#[test]
fn a_worker_panic_ends_the_search() {
    let p = program(
        "litmus \"wide\"\nmodel amdgpu\nvar x = 0\n\
         thread T0 { r = fetch_add x, 1\nr = fetch_add x, 1 }\n\
         thread T1 { r = fetch_add x, 1\nr = fetch_add x, 1 }\n\
         thread T2 { r = fetch_add x, 1\nr = fetch_add x, 1 }\n",
    );
    // Faults are injected by state number: the states stored (by the
    // search: the one run of this deterministic program stores none).
    let search = Reductions {
        det: false,
        ..Reductions::default()
    };
    let states = explore_with(&p, search).stats.stored as u32;
    assert!(states > 4, "{states}");
    for jobs in [1, 2, 4] {
        for fault_at in [0, 1, states / 2, states - 1] {
            let r = run_with_fault(&p, jobs, fault_at)
                .unwrap_or_else(|| panic!("jobs {jobs}, fault at {fault_at}: the search hangs"));
            let Err(payload) = r else {
                panic!("jobs {jobs}, fault at {fault_at}: the injected panic does not reach the caller")
            };
            let msg = payload.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(msg.contains("injected fault"), "{msg}");
        }
    }
}

/// The explorer's own history rules (`rules.rs`, `System::history_rules`)
/// see phase-with, arrive-then-drop and race by themselves: what they find
/// is in `operational`, where the rule checker's findings never go, with
/// every reduction on and off; the fixed programs break none.
#[test]
fn history_rules_decide_by_themselves() {
    let head = "litmus \"t\"\nmodel amdgpu\nbarrier B = 2\nvar x scope=block\n";
    let cases = [
        (
            "thread T0 { join B; arrive B; arrive B; wait B }\nthread T1 { join B; arrive B; arrive B; wait B }\n",
            "thread T0 { join B; arrive B; wait B; arrive B; wait B }\nthread T1 { join B; arrive B; wait B; arrive B; wait B }\n",
            FindingKind::Ub(bc_syntax::UbKind::StalePhase),
        ),
        (
            "thread T0 { join B; arrive B; drop B }\nthread T1 { join B; arrive B; wait B }\n",
            "thread T0 { join B; arrive B; wait B; drop B }\nthread T1 { join B; arrive B; wait B }\n",
            FindingKind::Ub(bc_syntax::UbKind::ArriveThenDrop),
        ),
        (
            "thread T0 { join B; write x; arrive B; wait B }\nthread T1 { join B; read x; arrive B; wait B }\n",
            "thread T0 { join B; write x; arrive B; wait B }\nthread T1 { join B; arrive B; wait B; read x }\n",
            FindingKind::Race,
        ),
    ];
    for (broken, fixed, kind) in cases {
        for reductions in [Reductions::default(), Reductions::NONE] {
            let run = |body: &str| {
                let opts = SearchOptions {
                    reductions,
                    ..SearchOptions::default()
                };
                explore(&program(&format!("{head}{body}")), opts)
            };
            let o = run(broken);
            assert!(o.operational.contains(&kind), "{kind:?} not seen in {broken}");
            assert!(o.judged.contains(&kind), "the rule checker disagrees on {broken}");
            let o = run(fixed);
            assert!(!o.operational.contains(&kind), "{kind:?} seen in {fixed}");
        }
    }
}

/// Independent groups (`por.rs`): the blocks of a kernel whose objects are
/// block-scoped; one group as soon as a location is global, or an exit
/// drops a barrier another thread uses (CUDA threads of one block hold
/// its block barrier even where the body never names it).
#[test]
fn threads_are_grouped_by_the_objects_they_may_touch() {
    let groups = |text: &str| {
        let p = program(text);
        crate::analysis::groups::groups(&p, &crate::analysis::warps::aligned_warps(&p))
    };
    let head = "litmus \"g\"\nmodel cuda-sm80\nvar s scope=block\nvar g\n";
    assert_eq!(
        groups(&format!(
            "{head}kernel blocks=3 threads=2 {{ write s; __syncthreads }}\n"
        )),
        [0, 0, 2, 2, 4, 4]
    );
    assert_eq!(
        groups(&format!(
            "{head}kernel blocks=2 threads=2 {{ if bid == 1 {{ read g }} }}\n"
        )),
        [0, 1, 2, 2],
        "an instruction only block 1 can reach (its branch is on builtins alone) is no object of block 0's threads, which touch nothing shared"
    );
    assert_eq!(
        groups(&format!("{head}kernel blocks=2 threads=2 {{ read g }}\n")),
        [0, 0, 0, 0]
    );
    // Explicit threads that touch nothing: the sm80 block barrier is not
    // dropped at a thread's end, so nothing ties them.
    assert_eq!(
        groups(&format!("{head}thread T0 {{ r = 1 }}\nthread T1 {{ q = 2 }}\n")),
        [0, 1]
    );
    // A `__syncwarp` mask's barrier is dropped by the end of each lane it
    // names: lane 1 is tied to lane 0's `__syncwarp`, lane 2 is not.
    assert_eq!(
        groups(&format!(
            "{head}thread T0 {{ __syncwarp 0x3 }}\nthread T1 {{ r = 1 }}\nthread T2 {{ q = 1 }}\n"
        )),
        [0, 0, 2]
    );
    // A host's `device_sync` waits for every device thread's end.
    let kernels = "kernel K blocks=1 threads=1 { r = 1 }\nkernel blocks=2 threads=1 { q = 1 }\n";
    assert_eq!(
        groups(&format!("{head}{kernels}host H {{ launch K }}\n")),
        [0, 1, 2, 0],
        "without device_sync the unnamed kernel's blocks are apart (K's thread is with its host)"
    );
    assert_eq!(
        groups(&format!("{head}{kernels}host H {{ launch K; device_sync }}\n")),
        [0, 0, 0, 0]
    );
    let amd = "litmus \"a\"\nmodel amdgpu\nbarrier B = 2\nbarrier C = 2\nvar x\n";
    assert_eq!(
        groups(&format!(
            "{amd}thread T0 {{ join B }}\nthread T1 {{ join C }}\nthread T2 {{ join B; read x }}\nthread T3 {{ write x }}\n"
        )),
        [0, 1, 0, 0]
    );
}

/// A warp-specialized mbarrier pipeline (2 producers, 4 consumers, 2
/// stages, 4 iterations) is decided with each thread run until it blocks
/// (required.rs): 69 states, where partial-order reduction by groups alone
/// timed out at 400,000 states in 15 s. A bound, not the exact count, so
/// that an unrelated change of state shape does not trip it; a reduction
/// that stops firing does.
#[test]
fn a_pipeline_runs_each_thread_until_it_blocks() {
    let mut text = String::from("litmus \"p\"\nmodel cuda-sm90\n");
    for s in 0..2 {
        text += &format!("barrier full{s}\nbarrier empty{s}\nvar slot{s} scope=block\n");
    }
    text += "kernel blocks=1 threads=6 {\n  if tid == 0 { mbarrier.init full0, 2; mbarrier.init empty0, 4; \
             mbarrier.init full1, 2; mbarrier.init empty1, 4 }\n  __syncthreads\n";
    let side = |wait: &str, access: &str, arrive: &str, ph: u8| {
        format!(
            "s = 0; ph = {ph}; repeat 4 {{ if s == 0 {{ mbarrier.try_wait.parity {wait}0, ph; {access}0; \
             mbarrier.arrive {arrive}0 }} else {{ mbarrier.try_wait.parity {wait}1, ph; {access}1; \
             mbarrier.arrive {arrive}1 }}; s = s + 1; if s == 2 {{ s = 0; ph = 1 - ph }} }}"
        )
    };
    text += &format!(
        "  if tid < 2 {{ {} }} else {{ {} }}\n}}\n",
        side("empty", "if tid == 0 { write slot", "full", 1)
            .replace("slot0;", "slot0 };")
            .replace("slot1;", "slot1 };"),
        side("full", "read slot", "empty", 0)
    );
    let p = program(&text);
    let o = explore(&p, SearchOptions::default());
    assert_eq!(o.stop, Stop::Exhausted);
    assert!(o.findings.is_empty(), "{:?}", o.findings);
    assert!(o.stats.states <= 150, "{} states", o.stats.states);
}

/// Symmetry puts threads that tie on their own state in bmo order
/// (symmetry.rs, `bmo_positions`): 12 identical threads `bar.arrive 1, 12`
/// and 12 `bar.sync 1, 12` fill two phases, and the executions that differ
/// only in which of the identical threads took the first phase are one.
/// Before, the end states differed by the subset (4,095 executions and
/// 19,540 states); now by how many of each class took it. A bound, as
/// above.
#[test]
fn symmetric_threads_in_different_phases_meet_in_one_state() {
    let p = program(
        "litmus \"p\"\nmodel cuda-sm90\nkernel blocks=1 threads=24 {\n  \
         if tid < 12 { bar.arrive 1, 12 } else { bar.sync 1, 12 }\n}\n",
    );
    let o = explore(&p, SearchOptions::default());
    assert_eq!(o.stop, Stop::Exhausted);
    assert!(o.findings.is_empty(), "{:?}", o.findings);
    assert!(o.stats.executions <= 40, "{} executions", o.stats.executions);
    assert!(o.stats.states <= 6000, "{} states", o.stats.states);
}

/// Thread-counted arrives with different counts on one barrier (canon.rs,
/// "Thread counts that differ"): the orders of a phase's members that
/// keep each prefix's count meet in one state. 16 threads, half of them
/// `bar.arrive 1, 16` and half `bar.sync 1, 8`: 2,452 states, where the
/// phases kept in arrival order passed 749,000 states in 30 s. A bound.
#[test]
fn mixed_thread_counts_meet_in_one_state() {
    let p = program(
        "litmus \"p\"\nmodel cuda-sm90\nkernel blocks=1 threads=16 {\n  \
         if tid < 8 { bar.arrive 1, 16 } else { bar.sync 1, 8 }\n}\n",
    );
    let o = explore(&p, SearchOptions::default());
    assert_eq!(o.stop, Stop::Exhausted);
    assert_eq!(
        o.verdict().iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["deadlock", "ub(count-mismatch)"],
        "{:?}",
        o.findings
    );
    assert!(o.stats.states <= 5000, "{} states", o.stats.states);
}

/// The same ordering keeps the verdicts of the unsorted search, counts
/// written in either order, a third count, and a barrier the threads
/// share with `__syncthreads` (executes-before decides there).
#[test]
fn mixed_thread_counts_keep_the_unsorted_verdicts() {
    for body in [
        "if tid < 3 { bar.arrive 1, 6 } else { bar.sync 1, 3 }",
        "if tid < 3 { bar.sync 1, 3 } else { bar.arrive 1, 6 }",
        "if tid < 2 { bar.sync 1, 2 } else if tid < 4 { bar.arrive 1, 4 } else { bar.sync 1, 5 }",
        "if tid < 3 { bar.arrive 1, 4 } else { bar.sync 1, 2 }\n  __syncthreads\n  if tid < 2 { bar.sync 1, 2 } else { bar.arrive 1, 4 }",
    ] {
        let threads = if body.contains("__syncthreads") { 5 } else { 6 };
        let text = format!("litmus \"p\"\nmodel cuda-sm90\nkernel blocks=1 threads={threads} {{\n  {body}\n}}\n");
        let unsorted = Reductions {
            canonical: false,
            ..Reductions::default()
        };
        let (on, off) = verdict_kept(&program(&text), &text, &[unsorted]);
        let off = &off[0];
        assert!(on.stats.states < off.stats.states, "{text}: {} against {}", on.stats.states, off.stats.states);
    }
}

/// Own-phase waits and spent arrives (docs/explorer.md, "History
/// compaction"): 32 threads `bar.arrive 1, 36` and exit while 4 others
/// `bar.sync 1, 4`, so phases of the second warp complete many times
/// over. Completed phases are retired once no member's wait is pending,
/// the first warp's arrives are forgotten though no later member is
/// ordered after them, and the wait half is taken alone: 1,348 states,
/// where every partition of the arrivals into phases was kept (10,337
/// with item 4's order alone, and a timeout at 64 threads). A bound.
#[test]
fn phases_of_arrive_only_threads_are_forgotten() {
    let p = program(
        "litmus \"p\"\nmodel cuda-sm90\nkernel blocks=1 threads=36 {\n  \
         if tid < 32 { bar.arrive 1, 36 } else { bar.sync 1, 4 }\n}\n",
    );
    let o = explore(&p, SearchOptions::default());
    assert_eq!(o.stop, Stop::Exhausted);
    assert!(o.stats.states <= 2000, "{} states", o.stats.states);
}

/// The same mechanisms keep the verdicts of the search without
/// compaction, without partial-order reduction and without any
/// reduction: a write before an arrive-only thread's arrive races with
/// the readers of the phases it is not in, counts that differ, a thread
/// arriving twice; and (from review) counted and whole-block barrier 0
/// in one kernel, a loop of them, `.aligned` spellings and two blocks.
#[test]
fn spent_arrives_and_own_phase_waits_keep_the_verdicts() {
    for (blocks, threads, body) in [
        (
            1,
            5,
            "if tid == 0 { write d; bar.arrive 1, 2 } else { bar.sync 1, 2; read d }",
        ),
        (
            1,
            5,
            "if tid < 2 { write d; bar.arrive 1, 4 } else { bar.sync 1, 2; read d }",
        ),
        (
            1,
            5,
            "if tid < 3 { bar.arrive 1, 4; bar.arrive 1, 2 } else { bar.sync 1, 2 }",
        ),
        (1, 4, "if tid < 2 { bar.sync 0, 2 } else { __syncthreads }"),
        (
            1,
            3,
            "repeat 2 { if tid == 0 { bar.arrive 1, 2 } else { bar.sync 1, 2 } }",
        ),
        (
            1,
            4,
            "if tid == 0 { write d; barrier.cta.arrive.aligned 1, 4 } else { barrier.sync.aligned 1, 2; read d }",
        ),
        (
            2,
            3,
            "if tid == 0 { write d; bar.arrive 1, 3 } else { bar.sync 1, 2; read d }",
        ),
    ] {
        let text = format!(
            "litmus \"p\"\nmodel cuda-sm90\nvar d scope=block\nkernel blocks={blocks} threads={threads} {{\n  {body}\n}}\n"
        );
        let offs = [
            Reductions {
                compact: false,
                ..Reductions::default()
            },
            Reductions {
                por: false,
                ..Reductions::default()
            },
            Reductions::NONE,
        ];
        verdict_kept(&program(&text), &text, &offs);
    }
}

/// A CudaDMA-style named-barrier pipeline, one thread per warp:
/// `consumers` threads `bar.arrive` on the empty barrier and `bar.sync` on
/// the full one, a producer the other way, `rounds` rounds (WEFT's `saxpy`
/// shape), every arrive counting `k` threads.
fn cudadma(consumers: u32, rounds: u32, k: u32, producer_waits_on: u32) -> String {
    format!(
        "litmus \"d\"\nmodel cuda-sm90\nvar s scope=block\nkernel blocks=1 threads={} {{\n  if tid < {consumers} {{\n    \
         bar.arrive 2, {k}\n    repeat {rounds} {{ bar.sync 1, {k}; read s; bar.arrive 2, {k} }}\n  }} else {{\n    \
         repeat {rounds} {{ bar.sync {producer_waits_on}, {k}; write s; bar.arrive 1, {k} }}\n  }}\n}}\n",
        consumers + 1
    )
}

/// Each consumer's arrive is a step its phase cannot do without
/// (required.rs, "Thread-counted barriers"), taken alone: eight consumers
/// and three rounds in 90 states, where every subset of arrived consumers
/// timed out at 178,000 states in 30 s. A bound, as above.
#[test]
fn named_pipeline_arrives_are_taken_one_warp_at_a_time() {
    let search = Reductions {
        det: false,
        ..Reductions::default()
    };
    let o = explore_with(&program(&cudadma(8, 3, 9, 2)), search);
    assert_eq!(o.stop, Stop::Exhausted);
    assert!(o.findings.is_empty(), "{:?}", o.findings);
    assert!(o.stats.states <= 200, "{} states", o.stats.states);
}

/// The reduction keeps the bugs of the same kernel: a count one short
/// (the last consumer's arrive starts a phase of its own) and a producer
/// that waits on the full barrier it should fill give the findings of the
/// search without partial-order reduction (three consumers, two rounds:
/// 60,851 states without it).
#[test]
fn named_pipeline_bugs_survive_the_reduction() {
    for text in [cudadma(3, 2, 3, 2), cudadma(3, 2, 3, 1), cudadma(3, 2, 4, 1)] {
        let p = program(&text);
        let on = explore_with(
            &p,
            Reductions {
                det: false,
                ..Reductions::default()
            },
        );
        let off = explore_with(
            &p,
            Reductions {
                por: false,
                det: false,
                ..Reductions::default()
            },
        );
        assert_eq!(on.stop, Stop::Exhausted, "{text}");
        assert_eq!(off.stop, Stop::Exhausted, "{text}");
        assert!(!on.findings.is_empty(), "{text}");
        assert_eq!(on.verdict(), off.verdict(), "{text}");
    }
}

/// A FlashAttention-3-style mainloop (the corpus's
/// `cuda/sm90-fa3-mainloop-ok` at `iters` iterations, with `variant`
/// applied): a producer fills K and V stages through TMA copies, two
/// consumer warpgroups of two threads take turns on named barriers 1
/// and 2, and every stage's full and empty mbarriers are waited by
/// parity with tokens returned.
fn fa3(iters: u32, variant: &dyn Fn(String) -> String) -> String {
    let text = format!(
        "litmus \"p\"\nmodel cuda-sm90\n\
         barrier full_k[2] = 1\nbarrier full_v[2] = 1\nbarrier empty_k[2] = 4\nbarrier empty_v[2] = 4\n\
         var k0 scope=block\nvar k1 scope=block\nvar v0 scope=block\nvar v1 scope=block\nvar tile\n\
         kernel blocks=1 threads=6 {{\n  n = 0\n  if tid == 0 {{\n    repeat {iters} {{\n      s = n % 2\n      ph = n / 2 % 2\n\
         mbarrier.try_wait.parity empty_k[s], ph ^ 1\n      t = mbarrier.arrive.expect_tx full_k[s], 128\n\
         if s == 0 {{ cp.async.bulk k0, tile, 128, full_k[0] }} else {{ cp.async.bulk k1, tile, 128, full_k[1] }}\n\
         mbarrier.try_wait.parity empty_v[s], ph ^ 1\n      t = mbarrier.arrive.expect_tx full_v[s], 128\n\
         if s == 0 {{ cp.async.bulk v0, tile, 128, full_v[0] }} else {{ cp.async.bulk v1, tile, 128, full_v[1] }}\n\
         n = n + 1\n    }}\n  }} else if tid >= 2 {{\n    w = (tid - 2) / 2\n    if w == 1 {{ bar.arrive 1, 4 }}\n\
         repeat {iters} {{\n      s = n % 2\n      ph = n / 2 % 2\n      mbarrier.try_wait.parity full_k[s], ph\n\
         bar.sync 1 + w, 4\n      if s == 0 {{ read k0 }} else {{ read k1 }}\n\
         if w == 0 || n < {last} {{ bar.arrive 2 - w, 4 }}\n      t = mbarrier.arrive empty_k[s]\n\
         mbarrier.try_wait.parity full_v[s], ph\n      if s == 0 {{ read v0 }} else {{ read v1 }}\n\
         t = mbarrier.arrive empty_v[s]\n      n = n + 1\n    }}\n  }}\n}}\n",
        last = iters - 1
    );
    variant(text)
}

/// Compaction forgets a prefix of a barrier's completed phases where it
/// cannot forget the whole history, and runs again while it forgets a
/// barrier's history (`compact/cuts.rs`), so what a state keeps does not
/// depend on where the search normalized it: the mainloop stores no more
/// states than without compaction (599 against 331 when histories went
/// only whole and in one pass; at 8 iterations 14,274 against 951).
#[test]
fn compacted_pipeline_states_meet_as_uncompacted_ones() {
    let p = program(&fa3(3, &|t| t));
    let on = explore(&p, SearchOptions::default());
    let off = explore_with(
        &p,
        Reductions {
            compact: false,
            ..Reductions::default()
        },
    );
    assert_eq!(on.stop, Stop::Exhausted);
    assert!(on.findings.is_empty(), "{:?}", on.findings);
    assert!(
        on.stats.states <= off.stats.states,
        "{} states compacted, {} not",
        on.stats.states,
        off.stats.states
    );
}

/// Cut histories keep the verdicts of the search without compaction, the
/// encoding checked on every state: a read racing a copy after named
/// barrier and mbarrier phases were cut, a handoff that never comes, a
/// count mismatch on the named barrier, and a wrong release.
#[test]
fn cut_histories_keep_the_verdicts() {
    let variants: [(&str, &dyn Fn(String) -> String); 4] = [
        ("read before wait", &|t: String| {
            t.replace(
                "mbarrier.try_wait.parity full_v[s], ph\n      if s == 0 { read v0 } else { read v1 }",
                "if s == 0 { read v0 } else { read v1 }\n      mbarrier.try_wait.parity full_v[s], ph",
            )
        }),
        ("no first turn", &|t: String| {
            t.replace("    if w == 1 { bar.arrive 1, 4 }\n", "")
        }),
        ("count mismatch", &|t: String| {
            t.replace("bar.arrive 2 - w, 4", "bar.arrive 2 - w, 6")
        }),
        ("wrong release", &|t: String| {
            t.replace(
                "t = mbarrier.arrive empty_v[s]",
                "t = mbarrier.arrive empty_v[(s + 1) % 2]",
            )
        }),
    ];
    for (name, variant) in variants {
        // Two iterations: the count mismatch without compaction is 262,750
        // states at three.
        let text = fa3(2, variant);
        assert_ne!(text, fa3(2, &|t| t), "{name}: the variant changes the kernel");
        let uncompacted = Reductions {
            compact: false,
            ..Reductions::default()
        };
        verdict_kept(&program(&text), name, &[uncompacted]);
    }
}

/// One execution for all (`Reductions::det`, `search/det.rs`): a program
/// is decided on one run only where it is deterministic
/// (`analysis/determinism.rs`: not where a loaded value steers a branch,
/// a thread spins, or a barrier is an mbarrier) and where no other order
/// could fill its phases otherwise (`reductions/det.rs`: not a surplus
/// arrival, nor a producer that arrives again before its consumers
/// waited); every verdict is the search's.
#[test]
fn one_run_decides_only_where_one_run_tells_all() {
    let kernel = |body: &str| {
        format!(
            "litmus \"k\"\nmodel cuda-sm90\nbarrier M\nvar s scope=block\nvar f\nkernel blocks=1 threads=2 {{ {body} }}\n"
        )
    };
    // (case, program, deterministic, decided by the one run)
    let cases = [
        ("named pipeline", cudadma(3, 2, 4, 2), true, true),
        ("producer waits on its own barrier", cudadma(3, 2, 4, 1), true, false),
        ("count one short", cudadma(3, 2, 3, 2), true, false),
        // Long enough that the run stores (compacts) its state on the way.
        ("long pipeline", cudadma(4, 40, 5, 2), true, true),
        (
            "race after a long pipeline",
            cudadma(4, 40, 5, 2).replace("write s; bar.arrive 1, 5 }", "write s; bar.arrive 1, 5 }\n    write s"),
            true,
            true,
        ),
        ("race in one run", kernel("if tid == 0 { write s }; read s"), true, true),
        ("deadlock in one run", kernel("write s; bar.sync 1, 3"), true, true),
        (
            "divergent in one run",
            kernel("if tid == 0 { __syncthreads }; read s"),
            true,
            true,
        ),
        (
            "arrives again before the consumer waited (WEFT's over)",
            kernel("if tid == 0 { bar.arrive 1, 2; bar.arrive 1, 2 } else { bar.sync 1, 2; bar.sync 1, 2 }"),
            true,
            false,
        ),
        (
            "loaded value steers a branch",
            kernel("r = load f; store f, 1; if r == 0 { write s }; __syncthreads"),
            false,
            false,
        ),
        (
            "loaded value only stored",
            kernel("r = load f; store f, r; __syncthreads; read s"),
            true,
            true,
        ),
        (
            "spin",
            kernel("if tid == 0 { store f, 1 } else { await f == 1 }; write s"),
            false,
            false,
        ),
        (
            "mbarrier",
            kernel(
                "if tid == 0 { mbarrier.init M, 2 }; __syncthreads; mbarrier.arrive M; mbarrier.try_wait.parity M, 0",
            ),
            false,
            false,
        ),
    ];
    for (case, text, deterministic, decided) in cases {
        let p = program(&text);
        let budget = crate::state::budget::Budget::new(&Limits::default(), std::time::Instant::now());
        let an = crate::analysis::Analyses::new(&p, &Reductions::default(), false, &budget).unwrap();
        assert_eq!(an.deterministic, deterministic, "{case}");
        let one = explore(
            &p,
            SearchOptions {
                verify_encoding: true,
                ..SearchOptions::default()
            },
        );
        let all = explore_with(
            &p,
            Reductions {
                det: false,
                ..Reductions::default()
            },
        );
        assert_eq!(one.stats.one_run, decided, "{case}");
        if case.starts_with("race") {
            assert!(
                one.verdict().contains(&FindingKind::Race),
                "{case}: {:?}",
                one.verdict()
            );
        }
        if case.contains("long") {
            assert!(
                one.stats.states > 2 * crate::search::CHAIN_MAX as u64,
                "{case}: {}",
                one.stats.states
            );
        }
        assert_eq!((one.stop, all.stop), (Stop::Exhausted, Stop::Exhausted), "{case}");
        assert_eq!(one.verdict(), all.verdict(), "{case}");
        assert!(one.internal_errors.is_empty(), "{case}: {:?}", one.internal_errors);
    }
}

/// The reach tables (one row per strongly connected part of a code's
/// control flow) agree with the plain fixed point over every pc, on
/// corpus programs with loops, nested branches, exits and copies.
#[test]
fn reach_rows_agree_with_the_fixed_point() {
    use crate::analysis::reach;
    use bc_graph::InstrKind;
    let texts = [
        include_str!("../../../litmus/cuda/mbarrier-warp-pipeline-wrong-stage-release.litmus"),
        include_str!("../../../litmus/cuda/tma-pipeline-release-without-syncwarp-race.litmus"),
        include_str!("../../../litmus/cuda/sm90-mbarrier-token-polls-ok.litmus"),
        include_str!("../../../litmus/cuda/cp-async-aligned-barrier-warp-ok.litmus"),
        include_str!("../../../litmus/cuda/aligned-arrive-twice-warp-arrives-together.litmus"),
        include_str!("../../../litmus/cuda-nofence/nofence-double-buffer-loop-ok.litmus"),
    ];
    let mut rows_checked = 0;
    for text in texts {
        let p = program(text);
        let nl = p.threads.first().map_or(0, |t| t.locs.len());
        let nb = p.threads.first().map_or(0, |t| t.barriers.len());
        let own_loc = |kind: &InstrKind, acc: &mut dyn FnMut(u32)| match kind {
            InstrKind::Write { decl } | InstrKind::Read { decl } => acc(*decl),
            _ => {}
        };
        let own_bar = |kind: &InstrKind, acc: &mut dyn FnMut(u32)| {
            if let InstrKind::Barrier { sel, .. } = kind {
                for d in sel.decls(&p.groups) {
                    acc(d);
                }
            }
        };
        for (n, fast, slow) in [
            (
                nl,
                reach::reachable_decls(&p, nl, own_loc),
                reach::reachable_decls_by_fixed_point(&p, nl, own_loc),
            ),
            (
                nb,
                reach::reachable_decls(&p, nb, own_bar),
                reach::reachable_decls_by_fixed_point(&p, nb, own_bar),
            ),
        ] {
            for (c, rows) in slow.iter().enumerate() {
                for (pc, row) in rows.iter().enumerate() {
                    let got: Vec<bool> = (0..n).map(|d| fast.at(c, pc).get(d)).collect();
                    assert_eq!(&got, row, "{}: code {c}, pc {pc}", p.test);
                    rows_checked += 1;
                }
            }
        }
    }
    assert!(rows_checked > 100, "{rows_checked} rows");
}
