//! Explorer behaviour that the corpus cannot show: limits, and today's
//! handling of cycles in the state graph.

use bc_explore::{explore, Limits, Reductions, SearchOptions, Stop};
use bc_syntax::FindingKind;

fn program(text: &str) -> bc_graph::Program {
    let (lit, diags) = bc_syntax::parse(text);
    assert!(diags.is_empty(), "{diags:?}");
    let model = bc_graph::lower::resolve_model(&lit, None).unwrap();
    bc_graph::lower(&lit, text, model).unwrap()
}

#[test]
fn a_spin_cycle_without_end_state_is_nontermination() {
    // The spin loop can never exit: the state graph has a cycle and no end
    // state, and the cycle is fair (T0 is the only thread and it steps).
    let p = program("litmus \"spin\"\nmodel amdgpu\nvar x = 0\nthread T0 { L: r = load x; if r == 0 { goto L } }\n");
    let o = explore(&p, SearchOptions::default());
    assert_eq!(o.stop, Stop::Exhausted);
    assert_eq!(
        o.verdict().into_iter().collect::<Vec<_>>(),
        [FindingKind::Nontermination]
    );
    assert_eq!(o.stats.executions, 0, "no execution ends");
    let w = &o.findings[0].witness;
    assert!(w.cycle_start.is_some(), "a lasso witness");
    // Without the liveness analysis the cycle goes unreported.
    let o = explore(
        &p,
        SearchOptions {
            liveness: false,
            ..SearchOptions::default()
        },
    );
    assert!(o.verdict().is_empty());
}

#[test]
fn a_local_loop_that_repeats_its_state_is_nontermination() {
    let p = program("litmus \"loop\"\nmodel amdgpu\nthread T0 { L: r = 1 - r; goto L }\n");
    for on in [true, false] {
        let limits = SearchOptions {
            reductions: Reductions {
                compact: on,
                canonical: on,
                symmetry: on,
                fuse: on,
                por: on,
                chain: on,
                det: on,
            },
            ..SearchOptions::default()
        };
        let o = explore(&p, limits);
        assert_eq!(o.stop, Stop::Exhausted);
        assert_eq!(
            o.verdict().into_iter().collect::<Vec<_>>(),
            [FindingKind::Nontermination]
        );
    }
}

/// A local loop whose counter never repeats (2^64 wrapping values) is
/// stored every 100,000 local steps and runs into the state limit: `stop`,
/// never a finding made up from the step bound.
#[test]
fn a_local_loop_that_never_repeats_stops_at_a_limit() {
    let p = program("litmus \"loop\"\nmodel amdgpu\nthread T0 { while 1 { r = r + 1 } }\n");
    let o = explore(
        &p,
        SearchOptions {
            limits: Limits {
                states: 20,
                ..Limits::default()
            },
            ..SearchOptions::default()
        },
    );
    assert_eq!(o.stop, Stop::StateLimit);
    assert!(o.verdict().is_empty(), "{:?}", o.verdict());
}

#[test]
fn the_state_limit_stops_the_search() {
    let p = program("litmus \"big\"\nmodel amdgpu\nbarrier B = 3\nkernel blocks=1 threads=3 { join B; repeat 3 { arrive B; wait B } }\n");
    let full = explore(&p, SearchOptions::default());
    assert_eq!(full.stop, Stop::Exhausted);
    let cut = explore(
        &p,
        SearchOptions {
            limits: Limits {
                states: full.stats.states / 2,
                ..Limits::default()
            },
            ..SearchOptions::default()
        },
    );
    assert_eq!(cut.stop, Stop::StateLimit);
    assert!(cut.stats.states <= full.stats.states / 2);
}

#[test]
fn findings_and_witnesses_are_deterministic() {
    let text = "litmus \"d\"\nmodel amdgpu\nbarrier B = 2\nvar x\nthread T0 { join B; arrive B; write x; wait B }\nthread T1 { join B; arrive B; wait B; read x }\nthread T2 { join B; arrive B; wait B }\n";
    let a = explore(&program(text), SearchOptions::default());
    let b = explore(&program(text), SearchOptions::default());
    assert_eq!(a.findings, b.findings);
    assert_eq!(a.stats.states, b.stats.states);
}

#[test]
fn a_barrier_inside_a_spin_loop_repeats_its_state() {
    // With settled history forgotten, each iteration ends in a state seen
    // before: the loop is a cycle, and the progress model decides it.
    let text = "litmus \"bsl\"\nmodel amdgpu-gfx11\nvar flag = 0\nthread T0 { L: s_barrier; r = load flag; if r == 0 { goto L } }\nthread T1 { L: s_barrier; r = load flag; if r == 0 { goto L } }\nthread T2 block=1 { store flag, 1 }\n";
    let mut p = program(text);
    p.progress = bc_models::ProgressModel::parse("fair").unwrap();
    let o = explore(&p, SearchOptions::default());
    assert_eq!(o.stop, Stop::Exhausted);
    assert!(o.verdict().is_empty(), "{:?}", o.verdict());
    p.progress = bc_models::ProgressModel::parse("obe").unwrap();
    let o = explore(&p, SearchOptions::default());
    assert_eq!(
        o.verdict().into_iter().collect::<Vec<_>>(),
        [FindingKind::Nontermination]
    );
    // Keeping the whole history, no state repeats: the search stops.
    let o = explore(
        &p,
        SearchOptions {
            reductions: Reductions {
                compact: false,
                ..Reductions::default()
            },
            limits: Limits {
                memory: 64 << 20,
                ..Limits::default()
            },
            ..SearchOptions::default()
        },
    );
    assert_eq!(o.stop, Stop::MemoryLimit);
}

#[test]
fn an_unsettled_loop_stops_at_the_memory_limit() {
    // FIXME: T1 may still read x (it waits for a flag nobody sets), so T0's
    // writes never settle and the execution grows each iteration: the search
    // stops at the memory budget (inconclusive, never ok). Knowing that T1
    // can never pass its await would let them settle.
    let p = program("litmus \"grow\"\nmodel amdgpu\nvar x\nvar go = 0\nthread T0 { L: write x; goto L }\nthread T1 { await go == 1; read x }\n");
    let o = explore(
        &p,
        SearchOptions {
            limits: Limits {
                memory: 64 << 20,
                ..Limits::default()
            },
            ..SearchOptions::default()
        },
    );
    assert_eq!(o.stop, Stop::MemoryLimit);
}

/// Levels wider than a batch keep several batches in flight; any number
/// of jobs gives the same answer as one, for a search that ends and for
/// one cut short by the state limit (the batches in flight are drained).
#[test]
fn many_batches_in_flight_give_the_same_answer_for_any_job_count() {
    // Seven threads, no symmetry, fusion or partial-order reduction
    // (arrive fusion takes a phase's arrives in one step, and partial-order
    // reduction each plain access alone): levels of up to a thousand
    // states, and a race between T0's write and T6's read for a finding
    // with a witness.
    let mut text = String::from("litmus \"wide\"\nmodel amdgpu\nbarrier B = 7\nvar x scope=block\n");
    for t in 0..7 {
        let access = match t {
            0 => "write x; ",
            6 => "read x; ",
            _ => "",
        };
        text += &format!("thread T{t} {{ {access}join B; arrive B; wait B }}\n");
    }
    let p = program(&text);
    for max_states in [u64::MAX, 3_000] {
        let run = |jobs: usize| {
            explore(
                &p,
                SearchOptions {
                    jobs,
                    reductions: Reductions {
                        symmetry: false,
                        fuse: false,
                        por: false,
                        ..Reductions::default()
                    },
                    limits: Limits {
                        states: max_states,
                        ..Limits::default()
                    },
                    ..SearchOptions::default()
                },
            )
        };
        let one = run(1);
        assert!(one.stats.states >= 3_000, "{} states", one.stats.states);
        if max_states == u64::MAX {
            assert!(one.verdict().contains(&FindingKind::Race));
        } else {
            assert_eq!(one.stop, Stop::StateLimit);
        }
        for jobs in [2, 3, 4] {
            let many = run(jobs);
            assert_eq!(many.findings, one.findings, "{jobs} jobs, max {max_states}");
            assert_eq!(
                (many.stats.states, many.stats.executions, many.stop),
                (one.stats.states, one.stats.executions, one.stop),
                "{jobs} jobs, max {max_states}"
            );
        }
    }
}

/// The progress counters end at the number of stored states, and at one
/// per finding kind the search found (a deadlock and a race here; two
/// workers finding the same kind count it once).
#[test]
fn the_progress_counters_count_the_stored_states_and_the_kinds_found() {
    let p = program("litmus \"c\"\nmodel amdgpu\nbarrier B = 3\nvar x\nthread T0 { join B; write x; arrive B; wait B }\nthread T1 { join B; write x; arrive B; wait B }\nthread T2 { join B; arrive B; wait B }\nthread T3 { join B; arrive B; wait B }\n");
    for jobs in [1, 2] {
        let counters = bc_explore::Counters::default();
        let limits = SearchOptions {
            jobs,
            reductions: Reductions {
                symmetry: false,
                ..Reductions::default()
            },
            ..SearchOptions::default()
        };
        let o = bc_explore::explore_counting(&p, limits, &counters);
        assert_eq!(
            counters.states.load(std::sync::atomic::Ordering::Relaxed),
            o.stats.states,
            "{jobs} jobs"
        );
        assert_eq!(o.findings.len(), 2, "{:?}", o.verdict());
        assert_eq!(
            counters.findings.load(std::sync::atomic::Ordering::Relaxed),
            2,
            "{jobs} jobs"
        );
    }
}

/// Chains (docs/explorer.md, "Reductions", item 9): where the reductions
/// leave a single execution, the search stores a few states instead of
/// one per step, and finds the same findings with the same witnesses,
/// one raised at the end (a deadlock) and one inside a chain (a race: a
/// stage read while its copy may still be in flight). Without chains the
/// state counts are those of one state per step.
#[test]
fn chains_store_fewer_states_and_keep_witnesses() {
    let deadlock = "litmus \"odd\"\nmodel cuda-sm90\nbarrier M scope=block\n\
        kernel blocks=2 threads=32 {\n  if tid == 0 { mbarrier.init M, 32 }\n  __syncthreads\n\
        if bid == 1 && tid == 31 { } else { t = mbarrier.arrive M }\n  mbarrier.try_wait.parity M, 0\n}\n";
    let race = "litmus \"early\"\nmodel cuda-sm80\nvar s0 scope=thread\nvar s1 scope=thread\nvar g\n\
        kernel blocks=1 threads=8 {\n  cp.async s0, g\n  cp.async.commit_group\n  cp.async s1, g\n\
        cp.async.commit_group\n  cp.async.wait_group 2\n  __syncthreads\n  read s0\n  cp.async.wait_all\n}\n";
    for (text, kind) in [(deadlock, FindingKind::Deadlock), (race, FindingKind::Race)] {
        let p = program(text);
        let run = |chain| {
            explore(
                &p,
                SearchOptions {
                    reductions: Reductions {
                        chain,
                        ..Reductions::default()
                    },
                    verify_encoding: true,
                    ..SearchOptions::default()
                },
            )
        };
        let (on, off) = (run(true), run(false));
        assert_eq!((on.stop, off.stop), (Stop::Exhausted, Stop::Exhausted), "{text}");
        assert!(on.internal_errors.is_empty(), "{:?}", on.internal_errors);
        assert_eq!(on.verdict(), off.verdict(), "{text}");
        assert!(on.verdict().contains(&kind), "{text}: {:?}", on.verdict());
        assert!(
            on.stats.stored * 4 < off.stats.stored,
            "{text}: {} states stored with chains, {} without",
            on.stats.stored,
            off.stats.stored
        );
        assert_eq!(off.stats.stored, off.stats.states, "{text}");
        let found = |o: &bc_explore::Outcome| o.findings.iter().find(|f| f.kind == kind).cloned().expect("found");
        // The same finding in the same execution, up to the order of
        // interchangeable threads (symmetry renames them at the stored
        // states, which differ): the same words in the message; the
        // deadlock's steps and stuck waits alike. A race is judged when
        // compaction forgets its accesses, at the end of a chain: its
        // witness holds the steps of the one without chains, and the
        // chain's steps after them.
        let (a, b) = (found(&on), found(&off));
        let words = |m: &str| {
            let mut w: Vec<String> = m.split([' ', ',']).map(str::to_string).collect();
            w.sort();
            w
        };
        assert_eq!(words(&a.message), words(&b.message), "{text}");
        let steps = |w: &bc_explore::Witness| {
            let mut s: Vec<(String, String)> = w.steps.iter().map(|s| (s.thread.clone(), s.text.clone())).collect();
            s.sort();
            s
        };
        let (sa, mut sb) = (steps(&a.witness), steps(&b.witness));
        if kind == FindingKind::Deadlock {
            assert_eq!(sa, sb, "{text}");
            assert_eq!(a.witness.stuck.len(), b.witness.stuck.len(), "{text}");
        } else {
            assert!(sa.len() > sb.len(), "{text}");
            sb.retain(|x| !sa.contains(x));
            assert!(sb.is_empty(), "{text}: steps only without chains: {sb:?}");
        }
    }
}
