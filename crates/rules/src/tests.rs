//! The rule checker on hand-built executions: each rule firing and not
//! firing, and each structural constraint on participates-in rejecting a
//! bad candidate.

use super::*;
use bc_graph::{ArriveCount, ThreadId, NO_TOKEN_PHASE};
use bc_graph::{EventKind as K, ExecutionBuilder, LocId, Target};

const B: Target = Target::Barrier(BarrierId(0));
const C: Target = Target::Barrier(BarrierId(1));
fn t(i: u32) -> Option<ThreadId> {
    Some(ThreadId(i))
}
fn arrive() -> K {
    K::Arrive {
        set_count: None,
        count: None,
        object: false,
        collective: false,
        relaxed: false,
        arrivals: 1,
        aligned: false,
        syncs: false,
        red: false,
        whole: false,
    }
}
fn wait() -> K {
    K::Wait {
        participants: Default::default(),
        completed: true,
        token_phase: None,
        parity: None,
        aligned: false,
    }
}
fn stuck() -> K {
    K::Wait {
        participants: Default::default(),
        completed: false,
        token_phase: None,
        parity: None,
        aligned: false,
    }
}
fn kinds(v: &[Violation]) -> Vec<String> {
    let mut k: Vec<String> = v
        .iter()
        .map(|v| {
            v.kind
                .map_or_else(|| format!("inconsistent:{}", v.rule), |k| k.to_string())
        })
        .collect();
    k.sort();
    k.dedup();
    k
}
fn judge(b: ExecutionBuilder) -> Vec<String> {
    kinds(&check(&b.finish(), RuleSet::all(), None, &Numbered))
}

/// launch init B = count; two threads each join, arrive, wait, with both
/// waits completing on the one phase.
fn one_phase(count: i64) -> (ExecutionBuilder, [EventId; 2], [EventId; 2]) {
    let mut b = ExecutionBuilder::new(2, 2);
    let init = b.event(None, 0, K::Init { count }, B);
    b.bmo(init);
    let mut arrives = [EventId(0); 2];
    let mut waits = [EventId(0); 2];
    for i in 0..2 {
        b.event(t(i), 0, K::Join, B);
        arrives[i as usize] = b.event(t(i), 1, arrive(), B);
        waits[i as usize] = b.event(t(i), 2, wait(), B);
    }
    for a in arrives {
        b.bmo(a);
    }
    for w in waits {
        b.set_participants(w, arrives.to_vec());
    }
    (b, arrives, waits)
}

#[test]
fn a_valid_phase_is_ok() {
    let (b, _, _) = one_phase(2);
    assert_eq!(judge(b), Vec::<String>::new());
}

#[test]
fn first_bmo_init_fires_without_init() {
    let mut b = ExecutionBuilder::new(1, 1);
    b.event(t(0), 0, K::Join, B);
    let a = b.event(t(0), 1, arrive(), B);
    b.bmo(a);
    b.event(t(0), 2, stuck(), B);
    assert_eq!(judge(b), ["deadlock", "ub(uninitialized-barrier)"]);
}

#[test]
fn participants_must_be_one_whole_phase() {
    // Count 2 but only one participant listed.
    let (mut b, arrives, waits) = one_phase(2);
    b.set_participants(waits[0], vec![arrives[0]]);
    assert_eq!(judge(b), ["inconsistent:participates-in"]);
    // Count 1: two phases; a wait listing both is not one phase.
    let (b, _, _) = one_phase(1);
    assert_eq!(judge(b), ["inconsistent:participates-in"]);
}

#[test]
fn participants_may_not_follow_the_wait() {
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let w = b.event(t(0), 1, wait(), B);
    let a = b.event(t(0), 2, arrive(), B);
    b.bmo(a);
    b.set_participants(w, vec![a]);
    let got = judge(b);
    assert!(got.contains(&"inconsistent:participates-in".to_string()), "{got:?}");
}

/// launch init B = 1; one thread joins, arrives, then waits twice (the
/// participants left to the caller).
fn one_arrive_two_waits() -> (ExecutionBuilder, EventId, [EventId; 2]) {
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let a = b.event(t(0), 1, arrive(), B);
    b.bmo(a);
    let w1 = b.event(t(0), 2, wait(), B);
    let w2 = b.event(t(0), 3, wait(), B);
    (b, a, [w1, w2])
}

#[test]
fn an_op_participates_in_one_wait_per_thread() {
    let (mut b, a, [w1, w2]) = one_arrive_two_waits();
    b.set_participants(w1, vec![a]);
    b.set_participants(w2, vec![a]);
    assert_eq!(judge(b), ["inconsistent:participates-in"]);
}

/// The waits of a phase may share one participant list (`Participants`),
/// which participates-in reads once per list: shared or not, the same
/// verdicts, per wait (a list shared by two waits of one thread still
/// puts its events in two waits of that thread; one that follows one of
/// its waits, but not the other, is judged for that wait).
#[test]
fn shared_participant_lists_are_judged_per_wait() {
    let (mut b, arrives, waits) = one_phase(2);
    let shared: bc_graph::Participants = arrives.to_vec().into();
    for w in waits {
        b.set_participants(w, shared.clone());
    }
    assert_eq!(judge(b), Vec::<String>::new());
    let (mut b, a, [w1, w2]) = one_arrive_two_waits();
    let shared: bc_graph::Participants = vec![a].into();
    b.set_participants(w1, shared.clone());
    b.set_participants(w2, shared);
    let v = check(&b.finish(), RuleSet::all(), None, &Numbered);
    assert!(
        v.iter()
            .any(|v| v.message.contains("participates in two waits of one thread")),
        "{v:?}"
    );
    // T0 waits, then arrives; T1's wait takes that arrive's phase. The
    // shared list follows T0's wait only.
    let mut b = ExecutionBuilder::new(2, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let w0 = b.event(t(0), 1, wait(), B);
    let a = b.event(t(0), 2, arrive(), B);
    b.bmo(a);
    b.event(t(1), 0, K::Join, B);
    let w1 = b.event(t(1), 1, wait(), B);
    let shared: bc_graph::Participants = vec![a].into();
    b.set_participants(w0, shared.clone());
    b.set_participants(w1, shared);
    let v = check(&b.finish(), RuleSet::all(), None, &Numbered);
    let later: Vec<&Violation> = v
        .iter()
        .filter(|v| v.message.contains("participates in the earlier"))
        .collect();
    assert_eq!(later.len(), 1, "{v:?}");
    assert_eq!(later[0].events, vec![w0, a]);
}

#[test]
fn executes_before_must_agree_with_bmo() {
    // T1 arrives after waiting on T0's phase, yet its arrive comes first in bmo.
    let mut b = ExecutionBuilder::new(2, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let a0 = b.event(t(0), 1, arrive(), B);
    b.event(t(1), 0, K::Join, B);
    let w1 = b.event(t(1), 1, wait(), B);
    let a1 = b.event(t(1), 2, arrive(), B);
    b.bmo(a1);
    b.bmo(a0);
    b.set_participants(w1, vec![a0]);
    let got = judge(b);
    assert!(
        got.contains(&"inconsistent:executes-before-consistent".to_string()),
        "{got:?}"
    );
}

#[test]
fn wait_needs_a_joined_before_join() {
    let (mut b, _, _) = one_phase(2);
    // A third thread waits with no join.
    b.event(t(1), 3, wait(), B);
    // T1 already waited on the only phase, so its second wait must not
    // take it; leave it without participants and without join: UB.
    let ex = b.finish();
    let mut ex2 = ex.clone();
    // Remove T1's join to show wait-without-join on its first wait instead.
    let join = ex2.program_order[1][0];
    ex2.events[join.index()].kind = K::Read;
    ex2.events[join.index()].target = Target::Loc(LocId(0));
    let got = kinds(&check(&ex2, RuleSet::all(), None, &Numbered));
    assert!(got.contains(&"ub(wait-without-join)".to_string()), "{got:?}");
}

#[test]
fn mutually_exclusive_join_breaks_joined_before() {
    // T0: join B; join C; arrive B; wait B - with B, C mutually exclusive the
    // join of C ends joined-before for B.
    let build = |exclusive: bool| {
        let mut b = ExecutionBuilder::new(1, 2);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let initc = b.event(None, 0, K::Init { count: 1 }, C);
        b.bmo(initc);
        b.event(t(0), 0, K::Join, B);
        b.event(t(0), 1, K::Join, C);
        let a = b.event(t(0), 2, arrive(), B);
        b.bmo(a);
        let w = b.event(t(0), 3, wait(), B);
        b.set_participants(w, vec![a]);
        if exclusive {
            b.mutually_exclusive(BarrierId(0), BarrierId(1));
        }
        judge(b)
    };
    assert_eq!(build(false), Vec::<String>::new());
    assert_eq!(build(true), ["ub(wait-without-join)"]);
}

#[test]
fn drop_rules() {
    // drop without join, and below zero.
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    let d1 = b.event(t(0), 0, K::Drop, B);
    let d2 = b.event(t(0), 1, K::Drop, B);
    b.bmo(d1);
    b.bmo(d2);
    assert_eq!(judge(b), ["ub(drop-without-join)", "ub(negative-expected-count)"]);
    // join then drop: fine.
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let d = b.event(t(0), 1, K::Drop, B);
    b.bmo(d);
    assert_eq!(judge(b), Vec::<String>::new());
}

#[test]
fn arrive_then_drop() {
    // T0: join; arrive; drop. T1: join; arrive; wait on {A0, A1}: the wait
    // does not execute before T0's drop.
    let build = |t0_waits: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        b.event(t(0), 0, K::Join, B);
        let a0 = b.event(t(0), 1, arrive(), B);
        let w0 = if t0_waits {
            Some(b.event(t(0), 2, wait(), B))
        } else {
            None
        };
        let d0 = b.event(t(0), 3, K::Drop, B);
        b.event(t(1), 0, K::Join, B);
        let a1 = b.event(t(1), 1, arrive(), B);
        let w1 = b.event(t(1), 2, wait(), B);
        b.bmo(a0);
        b.bmo(a1);
        b.bmo(d0);
        b.set_participants(w1, vec![a0, a1]);
        if let Some(w0) = w0 {
            b.set_participants(w0, vec![a0, a1]);
        }
        judge(b)
    };
    assert_eq!(build(false), ["ub(arrive-then-drop)"]);
    assert_eq!(build(true), Vec::<String>::new());
}

#[test]
fn expected_count_update_bound() {
    let build = |set: i64| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 3 }, B);
        b.bmo(init);
        b.event(t(0), 0, K::Join, B);
        let a0 = b.event(t(0), 1, arrive(), B);
        b.event(t(1), 0, K::Join, B);
        let a1 = b.event(
            t(1),
            1,
            K::Arrive {
                set_count: Some(set),
                count: None,
                object: false,
                collective: false,
                relaxed: false,
                arrivals: 1,
                aligned: false,
                syncs: false,
                red: false,
                whole: false,
            },
            B,
        );
        b.bmo(a0);
        b.bmo(a1);
        judge(b)
    };
    // One arrive counted: setting 1 is UB (not above the count), 2 is fine.
    assert!(build(1).contains(&"ub(expected-count-too-small)".to_string()));
    assert!(!build(2).contains(&"ub(expected-count-too-small)".to_string()));
}

#[test]
fn phase_with_rule() {
    // T0 and T1 each arrive twice, then wait. bmo: A0 A1 | A0' A1'.
    // T0's wait takes phase 0 and T1's phase 1: A0 -> A0' -> W0 with A0' in
    // phase 1, which T1's wait makes a non-empty class: stale-phase.
    let build = |w1_phase: usize| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let mut a = [[EventId(0); 2]; 2];
        let mut w = [EventId(0); 2];
        for i in 0..2u32 {
            b.event(t(i), 0, K::Join, B);
            a[i as usize][0] = b.event(t(i), 1, arrive(), B);
            a[i as usize][1] = b.event(t(i), 2, arrive(), B);
            w[i as usize] = b.event(t(i), 3, wait(), B);
        }
        for (&x, &y) in a[0].iter().zip(&a[1]).take(2) {
            b.bmo(x);
            b.bmo(y);
        }
        b.set_participants(w[0], vec![a[0][0], a[1][0]]);
        b.set_participants(w[1], vec![a[0][w1_phase], a[1][w1_phase]]);
        judge(b)
    };
    assert_eq!(build(1), ["ub(stale-phase)"]);
    assert_eq!(build(0), Vec::<String>::new());
}

#[test]
fn stuck_wait_is_deadlock_unless_a_phase_was_available() {
    // Count 2, one thread arrives and waits: stuck, deadlock.
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let a = b.event(t(0), 1, arrive(), B);
    b.bmo(a);
    b.event(t(0), 2, stuck(), B);
    assert_eq!(judge(b), ["deadlock"]);
    // Count 1: the phase completed, so a stuck wait means a broken explorer.
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let a = b.event(t(0), 1, arrive(), B);
    b.bmo(a);
    b.event(t(0), 2, stuck(), B);
    assert_eq!(judge(b), ["inconsistent:wait-completes"]);
}

#[test]
fn races_need_executes_before() {
    let x = Target::Loc(LocId(0));
    // Unordered write/read: race. Read/read: none. Ordered by the phase: none.
    let mut b = ExecutionBuilder::new(2, 0);
    b.event(t(0), 0, K::Write, x);
    b.event(t(1), 0, K::Read, x);
    assert_eq!(judge(b), ["race"]);
    let mut b = ExecutionBuilder::new(2, 0);
    b.event(t(0), 0, K::Read, x);
    b.event(t(1), 0, K::Read, x);
    assert_eq!(judge(b), Vec::<String>::new());
    let mut b = ExecutionBuilder::new(2, 1);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Write, x);
    b.event(t(0), 1, K::Join, B);
    let a0 = b.event(t(0), 2, arrive(), B);
    b.event(t(1), 0, K::Join, B);
    let a1 = b.event(t(1), 1, arrive(), B);
    let w1 = b.event(t(1), 2, wait(), B);
    b.event(t(1), 3, K::Read, x);
    b.bmo(a0);
    b.bmo(a1);
    b.set_participants(w1, vec![a0, a1]);
    assert_eq!(judge(b), Vec::<String>::new());
}

/// A barrier that orders memory only through fences
/// (`BarrierProps::needs_fence`): thread 0's write is ordered before
/// thread 1's read only through a fence of thread 0 after the write (`fence`:
/// its scope, and whether it comes before the write instead) whose scope
/// holds both threads (`apart`: the threads are in different blocks of one
/// cluster). The fence may come after thread 0's arrive on the phase, as
/// long as it executes before the read (`late`: behind a second phase).
#[test]
fn races_through_a_fenced_barrier_need_the_writers_fence() {
    use bc_graph::FenceScope;
    let x = Target::Loc(LocId(0));
    let build = |fence: Option<(FenceScope, bool)>, apart: bool, late: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        b.props(
            BarrierId(0),
            bc_models::BarrierProps {
                needs_fence: true,
                ..Default::default()
            },
        );
        b.thread(
            ThreadId(1),
            bc_graph::ThreadFacts {
                block: apart as u32,
                ..Default::default()
            },
        );
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let f = |b: &mut ExecutionBuilder, scope| b.event(t(0), 9, K::Fence { scope }, Target::None);
        if let Some((s, true)) = fence {
            f(&mut b, s);
        }
        b.event(t(0), 0, K::Write, x);
        if let (Some((s, false)), false) = (fence, late) {
            f(&mut b, s);
        }
        b.event(t(0), 1, K::Join, B);
        let a0 = b.event(t(0), 2, arrive(), B);
        b.event(t(1), 0, K::Join, B);
        let a1 = b.event(t(1), 1, arrive(), B);
        let w1 = b.event(t(1), 2, wait(), B);
        b.bmo(a0);
        b.bmo(a1);
        b.set_participants(w1, vec![a0, a1]);
        if late {
            // A second phase carries the late fence to thread 1.
            if let Some((s, false)) = fence {
                f(&mut b, s);
            }
            let a0 = b.event(t(0), 3, arrive(), B);
            let a1 = b.event(t(1), 3, arrive(), B);
            let w1 = b.event(t(1), 4, wait(), B);
            b.bmo(a0);
            b.bmo(a1);
            b.set_participants(w1, vec![a0, a1]);
        }
        b.event(t(1), 5, K::Read, x);
        judge(b)
    };
    let none = Vec::<String>::new();
    assert_eq!(build(None, false, false), ["race"]);
    assert_eq!(build(Some((FenceScope::Cta, false)), false, false), none);
    assert_eq!(build(Some((FenceScope::Sys, false)), false, false), none);
    assert_eq!(build(Some((FenceScope::Cta, true)), false, false), ["race"]);
    assert_eq!(build(Some((FenceScope::ProxyAsync, false)), false, false), ["race"]);
    // A block fence does not hold threads of two blocks; a cluster one does.
    assert_eq!(build(Some((FenceScope::Cta, false)), true, false), ["race"]);
    assert_eq!(build(Some((FenceScope::Cluster, false)), true, false), none);
    // A fence after the first arrive still precedes the read.
    assert_eq!(build(Some((FenceScope::Cta, false)), false, true), none);
    assert_eq!(build(None, false, true), ["race"]);
}

#[test]
fn disabled_rules_are_not_reported() {
    let mut b = ExecutionBuilder::new(1, 1);
    let d = b.event(t(0), 0, K::Drop, B);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    b.bmo(d);
    let got = check(&b.finish(), RuleSet::default(), None, &Numbered);
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn transaction_counts_hold_a_phase_open() {
    // count 1: one arrive, but expect_tx 2 keeps the phase open until
    // complete_tx 2 brings the transaction count back to zero.
    let build = |complete: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        b.event(t(0), 0, K::Join, B);
        let x = b.event(
            t(0),
            0,
            K::Tx {
                delta: 2,
                relaxed: false,
            },
            B,
        );
        let a = b.event(t(0), 1, arrive(), B);
        b.bmo(x);
        b.bmo(a);
        let mut members = vec![x, a];
        if complete {
            let c = b.event(
                t(1),
                0,
                K::Tx {
                    delta: -2,
                    relaxed: false,
                },
                B,
            );
            b.bmo(c);
            members.push(c);
        }
        let w = b.event(t(0), 2, wait(), B);
        b.set_participants(w, members);
        judge(b)
    };
    assert_eq!(build(true), Vec::<String>::new());
    assert_eq!(build(false), ["inconsistent:participates-in"]);
}

#[test]
fn parity_waits() {
    // Two phases of count 1 by T0; T1 waits for parity 1 (phase 1).
    let build = |parity: u8, completed: bool, on_phase: Option<usize>| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let a0 = b.event(t(0), 0, arrive(), B);
        let a1 = b.event(t(0), 1, arrive(), B);
        b.bmo(a0);
        b.bmo(a1);
        let w = b.event(
            t(1),
            0,
            K::Wait {
                participants: Default::default(),
                completed,
                token_phase: None,
                parity: Some(parity),
                aligned: false,
            },
            B,
        );
        if let Some(ph) = on_phase {
            b.set_participants(w, vec![[a0, a1][ph]]);
        }
        judge(b)
    };
    assert_eq!(build(1, true, Some(1)), Vec::<String>::new());
    assert_eq!(build(1, true, Some(0)), ["inconsistent:participates-in"]);
    // Two phases done: the current phase (2) has parity 0, so a wait for
    // parity 0 is stuck - the phase two behind aliases.
    assert_eq!(build(0, false, None), ["deadlock"]);
    assert_eq!(build(1, false, None), ["inconsistent:wait-completes"]);
}

#[test]
fn extra_edges_order_accesses() {
    // Two plain accesses of different threads: a race, unless an extra
    // executes-before edge (a summary of forgotten events) orders them.
    let x = Target::Loc(LocId(0));
    let build = |extra: bool| {
        let mut b = ExecutionBuilder::new(2, 0);
        let w = b.event(t(0), 0, K::Write, x);
        let r = b.event(t(1), 0, K::Read, x);
        if extra {
            b.extra_eb(w, r);
        }
        judge(b)
    };
    assert_eq!(build(false), ["race"]);
    assert_eq!(build(true), Vec::<String>::new());
}

/// A launch init that stands for forgotten phases numbers the phases after
/// it from its base: a token wait naming that number is fine, one naming
/// the number counted from 0 is not its phase.
#[test]
fn phase_base_numbers_phases_after_a_forgetting_init() {
    for (base, token, ok) in [(3, 3, true), (3, 0, false), (0, 0, true)] {
        let (mut b, _, waits) = one_phase(2);
        b.phase_base(BarrierId(0), base);
        let mut exec = b.finish();
        for w in waits {
            if let K::Wait { token_phase, .. } = &mut exec.events[w.index()].kind {
                *token_phase = Some(token);
            }
        }
        let found = kinds(&check(&exec, RuleSet::all(), None, &Numbered));
        assert_eq!(found.is_empty(), ok, "base {base}, token {token}: {found:?}");
    }
}

fn parity_wait(parity: u8, completed: bool) -> K {
    K::Wait {
        participants: Default::default(),
        completed,
        token_phase: None,
        parity: Some(parity),
        aligned: false,
    }
}

/// The hardware table on a fresh barrier (project notes, section 3): no
/// phase has completed, yet parity 1 reads as complete and parity 0 not.
#[test]
fn parity_waits_on_a_fresh_barrier() {
    let build = |parity: u8, completed: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        b.event(t(0), 0, parity_wait(parity, completed), B);
        judge(b)
    };
    assert_eq!(build(1, true), Vec::<String>::new());
    assert_eq!(build(0, false), ["deadlock"]);
    assert_eq!(build(1, false), ["inconsistent:wait-completes"]);
    // Parity 0 names phase 0, which has not happened: taking nothing is
    // no valid completion.
    assert_eq!(build(0, true), ["inconsistent:participates-in"]);
}

/// A launch init that stands for forgotten phases (base 3, parity
/// counted from phase 0 of the forgotten init): the current phase is 3,
/// of parity 1, so a parity-1 wait is stuck (deadlock) and a parity-0
/// wait that did not complete is inconsistent; a parity-0 wait that
/// completed with no participants may have waited on a forgotten phase.
/// Without the epoch base, parity would count from the launch init.
#[test]
fn parity_after_a_forgetting_launch_init() {
    let build = |parity: u8, completed: bool, epoch: Option<u32>| {
        let mut b = ExecutionBuilder::new(1, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        b.phase_base(BarrierId(0), 3);
        if let Some(e) = epoch {
            b.epoch_base(BarrierId(0), e);
        }
        b.event(t(0), 0, parity_wait(parity, completed), B);
        judge(b)
    };
    assert_eq!(build(1, false, Some(0)), ["deadlock"]);
    assert_eq!(build(0, false, Some(0)), ["inconsistent:wait-completes"]);
    assert_eq!(build(0, true, Some(0)), Vec::<String>::new());
    // Counted from the launch init (phase 3 is then its first, parity 0).
    assert_eq!(build(0, false, None), ["deadlock"]);
    assert_eq!(build(1, false, None), ["inconsistent:wait-completes"]);
}

/// An init restarts the phase numbers: after a completed phase and a
/// re-init, parity 1 reads as complete again and parity 0 does not.
#[test]
fn parity_restarts_at_init() {
    let build = |parity: u8| {
        let mut b = ExecutionBuilder::new(1, 1);
        let i0 = b.event(t(0), 0, K::Init { count: 1 }, B);
        let a = b.event(t(0), 1, arrive(), B);
        let i1 = b.event(t(0), 2, K::Init { count: 1 }, B);
        for e in [i0, a, i1] {
            b.bmo(e);
        }
        b.event(t(0), 3, parity_wait(parity, false), B);
        judge(b)
    };
    assert_eq!(build(0), ["deadlock"]);
    assert_eq!(build(1), ["inconsistent:wait-completes"]);
}

/// A parity-1 wait that passes on a fresh barrier has no participants, so
/// it orders nothing: a write before an arrive (of a phase that does not
/// complete) races with a read after the wait.
#[test]
fn a_fresh_parity_wait_orders_nothing() {
    let x = Target::Loc(LocId(0));
    let mut b = ExecutionBuilder::new(2, 1);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Write, x);
    let a = b.event(t(0), 1, arrive(), B);
    b.bmo(a);
    b.event(t(1), 0, parity_wait(1, true), B);
    b.event(t(1), 1, K::Read, x);
    assert_eq!(judge(b), ["race"]);
}

/// A repeated parity wait on a phase the thread took already has no
/// participants; with parity 0 that is valid only after such a wait.
#[test]
fn a_repeated_parity_wait_takes_nothing() {
    let build = |first: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let a = b.event(t(0), 0, arrive(), B);
        b.bmo(a);
        if first {
            let w = b.event(t(1), 0, parity_wait(0, true), B);
            b.set_participants(w, vec![a]);
        }
        b.event(t(1), 1, parity_wait(0, true), B);
        judge(b)
    };
    assert_eq!(build(true), Vec::<String>::new());
    assert_eq!(build(false), ["inconsistent:participates-in"]);
}

fn token_wait(phase: u32, completed: bool) -> K {
    K::Wait {
        participants: Default::default(),
        completed,
        token_phase: Some(phase),
        parity: None,
        aligned: false,
    }
}

/// token-misuse on a wait that did nothing: what the execution shows
/// decides it; a token whose arrive is unordered with the wait is left to
/// the explorer, which saw which one ran first.
#[test]
fn forged_tokens() {
    // T0: arrive (phase 0 of a count-1 barrier), then a wait naming
    // `named` that took nothing, then (optionally) an arrive of phase 1;
    // T1 (optionally) arrives in phase 1, unordered with T0's wait.
    let build = |named: u32, later: bool, other: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let a0 = b.event(t(0), 0, arrive(), B);
        b.bmo(a0);
        b.event(t(0), 1, token_wait(named, true), B);
        if later {
            let a1 = b.event(t(0), 2, arrive(), B);
            b.bmo(a1);
        }
        if other {
            let a1 = b.event(t(1), 0, arrive(), B);
            b.bmo(a1);
        }
        judge(b)
    };
    let misuse = ["ub(token-misuse)"];
    // An integer that names no phase of the barrier.
    assert_eq!(build(NO_TOKEN_PHASE, false, false), misuse);
    // Phase 1: nobody arrives in it, or only after the wait.
    assert_eq!(build(1, false, false), misuse);
    assert_eq!(build(1, true, false), misuse);
    // Phase 1 begun by an arrive unordered with the wait: undecided here.
    assert_eq!(build(1, false, true), Vec::<String>::new());
    // Phase 0 was returned before the wait, which took nothing: only the
    // explorer knows why (it never claims this without a reason).
    assert_eq!(build(0, false, false), Vec::<String>::new());
}

/// A token waited on a second time is misuse; the first wait took its phase.
#[test]
fn token_used_twice() {
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    let a = b.event(t(0), 0, arrive(), B);
    b.bmo(a);
    let w = b.event(t(0), 1, token_wait(0, true), B);
    b.set_participants(w, vec![a]);
    b.event(t(0), 2, token_wait(0, true), B);
    // CUDA barriers have no joins: every thread is joined at launch.
    let cuda = Rule::ALL
        .into_iter()
        .filter(|&r| r != Rule::JoinedBefore)
        .fold(RuleSet::default(), |s, r| s.with(r));
    assert_eq!(kinds(&check(&b.finish(), cuda, None, &Numbered)), ["ub(token-misuse)"]);
}

/// Two `__syncwarp` barriers of one warp: B for mask 0x3 (threads 0, 1)
/// and C for mask 0x6 (threads 1, 2). Thread 0 and 1 complete a phase of
/// B; thread 2 arrives on C; thread 1 either arrives on C too (`joins_c`)
/// or exits, its drop completing C's phase.
fn two_masks(joins_c: bool) -> Vec<String> {
    use bc_graph::SyncwarpMask;
    let mut b = ExecutionBuilder::new(3, 2);
    for (bar, mask, named) in [(B, 0x3, [0, 1]), (C, 0x6, [1, 2])] {
        let init = b.event(None, 0, K::Init { count: 2 }, bar);
        b.bmo(init);
        let Target::Barrier(id) = bar else { unreachable!() };
        b.syncwarp(
            id,
            SyncwarpMask {
                warp: 0,
                mask,
                named: named.iter().map(|&i| ThreadId(i)).collect(),
            },
        );
    }
    let a0 = b.event(t(0), 0, arrive(), B);
    let a1 = b.event(t(1), 0, arrive(), B);
    b.bmo(a0);
    b.bmo(a1);
    let w0 = b.event(t(0), 1, wait(), B);
    let w1 = b.event(t(1), 1, wait(), B);
    b.set_participants(w0, vec![a0, a1]);
    b.set_participants(w1, vec![a0, a1]);
    let a2 = b.event(t(2), 0, arrive(), C);
    b.bmo(a2);
    let other = if joins_c {
        let a = b.event(t(1), 2, arrive(), C);
        b.event(t(1), 3, wait(), C);
        a
    } else {
        b.event(t(1), u32::MAX - 1, K::Drop, C)
    };
    b.bmo(other);
    let w2 = b.event(t(2), 1, wait(), C);
    b.set_participants(w2, vec![a2, other]);
    if joins_c {
        let w = EventId(other.0 + 1);
        b.set_participants(w, vec![a2, other]);
    }
    let rules = [
        Rule::FirstBmoInit,
        Rule::ParticipatesIn,
        Rule::ExecutesBeforeConsistent,
        Rule::WaitCompletes,
        Rule::SyncwarpMask,
    ]
    .into_iter()
    .fold(RuleSet::default(), |s, r| s.with(r));
    kinds(&check(&b.finish(), rules, None, &Numbered))
}

#[test]
fn syncwarp_named_lane_with_another_mask_is_ub() {
    assert_eq!(two_masks(false), ["ub(syncwarp-mask)"]);
}

#[test]
fn syncwarp_named_lane_that_arrives_later_is_fine() {
    assert_eq!(two_masks(true), Vec::<String>::new());
}

fn counted(c: ArriveCount) -> K {
    K::Arrive {
        set_count: None,
        count: Some(c),
        object: false,
        collective: false,
        relaxed: false,
        arrivals: 1,
        aligned: false,
        syncs: false,
        red: false,
        whole: false,
    }
}

/// Launch init `B = block`; each thread joins, then makes the arrivals
/// `arrivals[i]` (in this bmo order), then waits once. `complete` lists
/// the arrivals (indices) of the phase every wait completes on, or none:
/// every wait is stuck. Thread `dropper`, if any, drops at its end first
/// (a member of that phase too).
fn counted_phase(
    block: i64,
    arrivals: &[(u32, ArriveCount)],
    complete: Option<&[usize]>,
    dropper: Option<u32>,
) -> Vec<String> {
    let threads = arrivals
        .iter()
        .map(|a| a.0 + 1)
        .chain(dropper.map(|d| d + 1))
        .max()
        .unwrap_or(1);
    let mut b = ExecutionBuilder::new(threads as usize, 1);
    let init = b.event(None, 0, K::Init { count: block }, B);
    b.bmo(init);
    for i in 0..threads {
        b.event(t(i), 0, K::Join, B);
    }
    let mut dropped = Vec::new();
    if let Some(d) = dropper {
        let e = b.event(t(d), 1, K::Drop, B);
        b.bmo(e);
        dropped.push(e);
    }
    let mut ids = Vec::new();
    for &(th, c) in arrivals {
        let a = b.event(t(th), 1, counted(c), B);
        b.bmo(a);
        ids.push(a);
    }
    let mut waiters: Vec<u32> = arrivals.iter().map(|a| a.0).collect();
    waiters.dedup();
    for th in waiters {
        match complete {
            Some(members) => {
                let w = b.event(t(th), 2, wait(), B);
                let ps = dropped.iter().copied().chain(members.iter().map(|&i| ids[i]));
                b.set_participants(w, ps.collect::<Vec<_>>());
            }
            None => {
                b.event(t(th), 2, stuck(), B);
            }
        }
    }
    judge(b)
}

/// A counted phase (`bar.sync 0, 2` in a block of three) completes at its
/// count, not at the block's (cuda-barrier-builtins-lowering.txt: a count
/// below the block size serves a sub-CTA rendezvous).
#[test]
fn a_counted_phase_completes_at_its_count() {
    let two = ArriveCount::Threads(2);
    assert!(counted_phase(3, &[(0, two), (1, two)], Some(&[0, 1]), None).is_empty());
    // Stuck although two arrived: a block phase needs three.
    let block = ArriveCount::Block;
    assert_eq!(counted_phase(3, &[(0, block), (1, block)], None, None), ["deadlock"]);
    // Claiming a completion the counted phase never had is inconsistent.
    let got = counted_phase(
        3,
        &[(0, ArriveCount::Threads(3)), (1, ArriveCount::Threads(3))],
        Some(&[0, 1]),
        None,
    );
    assert!(got.contains(&"inconsistent:participates-in".to_string()), "{got:?}");
}

/// An exit (drop) lowers the block count but does not release a counted
/// phase.
#[test]
fn exits_do_not_release_a_counted_phase() {
    let two = ArriveCount::Threads(2);
    assert_eq!(counted_phase(3, &[(0, two)], None, Some(2)), ["deadlock"]);
    // The block form is released: three threads, one exited, two arrive.
    let block = ArriveCount::Block;
    assert!(counted_phase(3, &[(0, block), (1, block)], Some(&[0, 1]), Some(2)).is_empty());
}

#[test]
fn counts_of_one_phase_must_match() {
    let got = counted_phase(2, &[(0, ArriveCount::Block), (1, ArriveCount::Threads(1))], None, None);
    assert_eq!(got, ["deadlock", "ub(count-mismatch)"]);
    let two = ArriveCount::Threads(2);
    assert!(counted_phase(3, &[(0, two), (1, two)], Some(&[0, 1]), None).is_empty());
}

/// Project notes, section 3: a thread that arrives twice on a named barrier
/// before it resets is UB; arriving again after the reset is fine.
#[test]
fn a_thread_arrives_once_per_phase() {
    let three = ArriveCount::Threads(3);
    let got = counted_phase(3, &[(0, three), (0, three), (1, three)], Some(&[0, 1, 2]), None);
    assert_eq!(got, ["ub(arrive-twice)"]);
    // Two phases of count 1, one arrival each: no finding.
    let one = ArriveCount::Threads(1);
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    for pc in [1, 3] {
        let a = b.event(t(0), pc, counted(one), B);
        b.bmo(a);
        let w = b.event(t(0), pc + 1, wait(), B);
        b.set_participants(w, vec![a]);
    }
    assert_eq!(judge(b), Vec::<String>::new());
    // Arrives without a thread count (mbarrier, cuda::barrier) may repeat.
    let (mut b, _, _) = one_phase(3);
    let extra = b.event(t(0), 3, arrive(), B);
    b.bmo(extra);
    let got = judge(b);
    assert!(!got.contains(&"ub(arrive-twice)".to_string()), "{got:?}");
}

/// `mbarrier.arrive_drop` must leave a count of at least one (PTX gives
/// mbarrier counts 1..2^20-1); the abstract `arrive_drop` may reach zero.
#[test]
fn a_positive_arrive_drop_to_zero_is_ub() {
    for (count, positive, want) in [
        (1, true, vec!["ub(negative-expected-count)"]),
        (1, false, vec![]),
        (2, true, vec![]),
    ] {
        let mut b = ExecutionBuilder::new(1, 1);
        let init = b.event(None, 0, K::Init { count }, B);
        b.bmo(init);
        b.event(t(0), 0, K::Join, B);
        let mut members = Vec::new();
        for pc in 1..count {
            let a = b.event(t(0), pc as u32, arrive(), B);
            b.bmo(a);
            members.push(a);
        }
        let d = b.event(t(0), 10, K::ArriveDrop { positive }, B);
        b.bmo(d);
        members.push(d);
        let w = b.event(t(0), 11, wait(), B);
        b.set_participants(w, members);
        assert_eq!(judge(b), want, "count {count}, positive {positive}");
    }
}

/// A thread that arrives on a counted phase and exits before it completes
/// (`bar.arrive 0, 2; exit`) did nothing wrong: the exit's drop lowers only
/// the block's count, which the counted phase does not read. With the block
/// count the same drop would change the phase: arrive-then-drop.
#[test]
fn an_exit_after_a_counted_arrive_is_not_arrive_then_drop() {
    for (c, want) in [
        (ArriveCount::Threads(2), vec![]),
        (ArriveCount::Block, vec!["ub(arrive-then-drop)"]),
    ] {
        // Block of 3: T0 arrives and drops; T1 arrives and waits.
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 3 }, B);
        b.bmo(init);
        b.event(t(0), 0, K::Join, B);
        b.event(t(1), 0, K::Join, B);
        let a0 = b.event(t(0), 1, counted(c), B);
        let d0 = b.event(t(0), 2, K::Drop, B);
        let a1 = b.event(t(1), 1, counted(c), B);
        let w1 = b.event(t(1), 2, wait(), B);
        for e in [a0, d0, a1] {
            b.bmo(e);
        }
        b.set_participants(w1, vec![a0, d0, a1]);
        assert_eq!(judge(b), want, "{c:?}");
    }
}

/// An init abandons the open phase ("Execution Model": participants are an
/// uninterrupted bmo interval from arrive count zero); phase numbers keep
/// counting across it, so a token names one phase of the barrier's life.
#[test]
fn an_init_abandons_the_open_phase_and_numbers_keep_counting() {
    // launch B = 2; T0 arrives; T1 inits B, 1; T1 arrives (phase 1, alone).
    let build = |t0_token: Option<u32>, t0_on: bool, t1_token: Option<u32>| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        b.event(t(0), 0, K::Join, B);
        let a0 = b.event(t(0), 1, arrive(), B);
        b.bmo(a0);
        b.event(t(1), 0, K::Join, B);
        let i1 = b.event(t(1), 1, K::Init { count: 1 }, B);
        b.bmo(i1);
        let a1 = b.event(t(1), 2, arrive(), B);
        b.bmo(a1);
        let wait = |completed: bool, token_phase: Option<u32>| K::Wait {
            participants: Default::default(),
            completed,
            token_phase,
            parity: None,
            aligned: false,
        };
        let w1 = b.event(t(1), 3, wait(true, t1_token), B);
        b.set_participants(w1, vec![a1]);
        let w0 = b.event(t(0), 2, wait(t0_on, t0_token), B);
        if t0_on {
            b.set_participants(w0, vec![a0]);
        }
        judge(b)
    };
    // T1's phase after the init is number 1, not 0.
    assert_eq!(build(Some(0), false, Some(1)), ["deadlock"]);
    assert_eq!(
        build(Some(0), false, Some(0)),
        ["deadlock", "inconsistent:participates-in"]
    );
    // T0's abandoned arrive is no completed phase.
    assert_eq!(build(Some(0), true, Some(1)), ["inconsistent:participates-in"]);
    // T0's plain wait is entitled to no phase (its join executes before no
    // member of T1's phase): stuck is a deadlock.
    assert_eq!(build(None, false, None), ["deadlock"]);
}

/// A token of a phase completed before an init still names it: a wait
/// stuck on it is no valid execution, one completing on it is fine. That
/// is the AMDGPU reading (no token-phase rule); under the CUDA models'
/// token-phase rule the same wait is stale (`token_phase_rule`).
#[test]
fn a_token_of_a_phase_before_an_init_names_it() {
    let build = |completed: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let mut a = [EventId(0); 2];
        for i in 0..2u32 {
            b.event(t(i), 0, K::Join, B);
            a[i as usize] = b.event(t(i), 1, arrive(), B);
            b.bmo(a[i as usize]);
        }
        let i1 = b.event(t(1), 2, K::Init { count: 1 }, B);
        b.bmo(i1);
        let w = b.event(
            t(1),
            3,
            K::Wait {
                participants: Default::default(),
                completed,
                token_phase: Some(0),
                parity: None,
                aligned: false,
            },
            B,
        );
        if completed {
            b.set_participants(w, a.to_vec());
        }
        kinds(&check(
            &b.finish(),
            RuleSet::all().without(Rule::TokenPhase),
            None,
            &Numbered,
        ))
    };
    assert_eq!(build(true), Vec::<String>::new());
    assert_eq!(build(false), ["inconsistent:wait-completes"]);
}

/// Parity counts from the latest init: after an init the first phase has
/// parity 0 again, whatever its number.
#[test]
fn parity_counts_from_the_latest_init() {
    let build = |parity: u8| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let a0 = b.event(t(0), 0, arrive(), B);
        b.bmo(a0);
        let i = b.event(t(0), 1, K::Init { count: 1 }, B);
        b.bmo(i);
        let a1 = b.event(t(0), 2, arrive(), B);
        b.bmo(a1);
        let w = b.event(
            t(1),
            0,
            K::Wait {
                participants: Default::default(),
                completed: true,
                token_phase: None,
                parity: Some(parity),
                aligned: false,
            },
            B,
        );
        b.set_participants(w, vec![a1]);
        judge(b)
    };
    // a1's phase is number 1 but the first since the init: parity 0.
    assert_eq!(build(0), Vec::<String>::new());
    assert_eq!(build(1), ["inconsistent:participates-in"]);
}

/// Models without `joined-before` join every thread at launch; the join
/// executes before what the thread's start does. Thread 0's first kept
/// event arrives on a later phase, so only `started_before` (recorded when
/// an explorer forgot thread 0's real first event) entitles its wait to the
/// phase of threads 1 and 2: directly, or through an event before it.
#[test]
fn launch_join_reads_started_before() {
    let cuda = Rule::ALL
        .into_iter()
        .filter(|&r| r != Rule::JoinedBefore)
        .fold(RuleSet::default(), |s, r| s.with(r));
    let x = Target::Loc(LocId(0));
    let build = |start: Option<usize>| {
        let mut b = ExecutionBuilder::new(3, 1);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let r1 = b.event(t(1), 0, K::Read, x);
        let a1 = b.event(t(1), 1, arrive(), B);
        let a2 = b.event(t(2), 0, arrive(), B);
        let a0 = b.event(t(0), 0, arrive(), B);
        let w0 = b.event(t(0), 1, wait(), B);
        for a in [a1, a2, a0] {
            b.bmo(a);
        }
        b.set_participants(w0, vec![a1, a2]);
        match start {
            Some(0) => b.started_before(ThreadId(0), a1),
            Some(_) => b.started_before(ThreadId(0), r1),
            None => {}
        }
        kinds(&check(&b.finish(), cuda, None, &Numbered))
    };
    assert_eq!(build(None), ["ub(wait-without-join)"]);
    assert_eq!(build(Some(0)), Vec::<String>::new());
    assert_eq!(build(Some(1)), Vec::<String>::new());
}

/// A thread-counted arrive (`bar.sync`) binds its thread's next wait to its
/// own phase. Threads 1 and 2 complete phase 0 of a count-2 barrier;
/// thread 0's surplus arrival opens phase 1. Its wait taking phase 0 is no
/// valid candidate; stuck, it is a deadlock (phase 0 does not count as one
/// it could take); without the thread count the stuck wait could have taken
/// phase 0.
#[test]
fn counted_arrive_binds_the_wait_to_its_phase() {
    let cuda = Rule::ALL
        .into_iter()
        .filter(|&r| r != Rule::JoinedBefore)
        .fold(RuleSet::default(), |s, r| s.with(r));
    let counted = K::Arrive {
        set_count: None,
        count: Some(ArriveCount::Threads(2)),
        object: false,
        collective: false,
        relaxed: false,
        arrivals: 1,
        aligned: false,
        syncs: false,
        red: false,
        whole: false,
    };
    let build = |kind: K, done: bool, count: bool| {
        let mut b = ExecutionBuilder::new(3, 1);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let arrive = if count { counted.clone() } else { arrive() };
        let mut arrives = Vec::new();
        for i in [1, 2, 0] {
            arrives.push(b.event(t(i), 0, arrive.clone(), B));
        }
        let w0 = b.event(t(0), 1, kind, B);
        for &a in &arrives {
            b.bmo(a);
        }
        // Thread 0's start executes before the phase-0 arrivals (as after
        // a `cluster.sync` compaction forgot): it is entitled to phase 0.
        b.started_before(ThreadId(0), arrives[0]);
        if done {
            b.set_participants(w0, arrives[..2].to_vec());
        }
        kinds(&check(&b.finish(), cuda, None, &Numbered))
    };
    assert_eq!(build(wait(), true, true), ["inconsistent:participates-in"]);
    assert_eq!(build(wait(), true, false), Vec::<String>::new());
    assert_eq!(build(stuck(), false, true), ["deadlock"]);
    assert_eq!(build(stuck(), false, false), ["inconsistent:wait-completes"]);
}

/// The token-phase rule alone (the CUDA models' rule set has no phase-with):
/// T0 arrives (completing phase 0 of a one-thread barrier), then `extra`
/// runs, then T0 waits on its phase-0 token.
fn token_wait_after(extra: &[K]) -> Vec<String> {
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count: 1 }, B);
    b.bmo(init);
    let a = b.event(t(0), 0, arrive(), B);
    b.bmo(a);
    let mut po = 1;
    let mut later = Vec::new();
    for k in extra {
        let x = b.event(t(0), po, k.clone(), B);
        b.bmo(x);
        if matches!(k, K::Arrive { .. }) {
            later.push(x);
        }
        po += 1;
    }
    let w = b.event(
        t(0),
        po,
        K::Wait {
            participants: Default::default(),
            completed: true,
            token_phase: Some(0),
            parity: None,
            aligned: false,
        },
        B,
    );
    b.set_participants(w, vec![a]);
    let rules = RuleSet::default()
        .with(Rule::ParticipatesIn)
        .with(Rule::ExecutesBeforeConsistent)
        .with(Rule::TokenPhase);
    kinds(&check(&b.finish(), rules, None, &Numbered))
}

#[test]
fn token_phase_rule() {
    // Nothing since the token's phase: current window.
    assert_eq!(token_wait_after(&[]), Vec::<String>::new());
    // Phase 1 completed too: the barrier is in phase 2, so phase 0 is
    // neither current nor preceding.
    assert_eq!(token_wait_after(&[arrive()]), ["ub(stale-phase)"]);
    assert_eq!(token_wait_after(&[arrive(), arrive()]), ["ub(stale-phase)"]);
    // An init after the phase restarts the barrier: the token is of its
    // earlier life ("Memory Barrier Primitives API").
    assert_eq!(token_wait_after(&[K::Init { count: 1 }]), ["ub(stale-phase)"]);
}

/// count-overflow: an init or an arrive's count above the model's
/// maximum, and none without a maximum or within it.
#[test]
fn count_overflow_fires_above_the_maximum_only() {
    let build = |k: i64, counted: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        let kind = if counted {
            K::Arrive {
                set_count: None,
                count: Some(ArriveCount::Threads(k)),
                object: false,
                collective: false,
                relaxed: false,
                arrivals: 1,
                aligned: false,
                syncs: false,
                red: false,
                whole: false,
            }
        } else {
            K::Init { count: k }
        };
        let e = b.event(t(0), 0, kind, B);
        if !counted {
            b.bmo(e);
        }
        b.finish()
    };
    let only = |v: Vec<Violation>| -> Vec<&'static str> { v.iter().map(|v| v.rule).collect() };
    let rules = RuleSet::default().with(Rule::CountOverflow);
    for counted in [false, true] {
        assert_eq!(
            only(check(&build(5, counted), rules, Some(4), &Numbered)),
            ["count-overflow"]
        );
        assert!(only(check(&build(4, counted), rules, Some(4), &Numbered)).is_empty());
        assert!(only(check(&build(5, counted), rules, None, &Numbered)).is_empty());
    }
}

/// arrive-before-wait: a thread arrives again on a `cuda::barrier` whose
/// phase its earlier arrive completed, before any wait of it completed on
/// it; not with the wait in between, nor for arrives that are not on an
/// object.
#[test]
fn arrive_before_wait_fires_without_the_wait_between() {
    let build = |wait_between: bool, object: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let arrive = K::Arrive {
            set_count: None,
            count: None,
            object,
            collective: false,
            relaxed: false,
            arrivals: 1,
            aligned: false,
            syncs: false,
            red: false,
            whole: false,
        };
        let a1 = b.event(t(0), 0, arrive.clone(), B);
        b.bmo(a1);
        if wait_between {
            let w = b.event(t(0), 1, wait(), B);
            b.set_participants(w, vec![a1]);
        }
        let a2 = b.event(t(0), 2, arrive, B);
        b.bmo(a2);
        b
    };
    let rules = RuleSet::all().without(Rule::JoinedBefore);
    let judge = |b: ExecutionBuilder| kinds(&check(&b.finish(), rules, None, &Numbered));
    assert_eq!(judge(build(false, true)), ["ub(arrive-before-wait)"]);
    assert_eq!(judge(build(true, true)), Vec::<String>::new());
    assert_eq!(judge(build(false, false)), Vec::<String>::new());
}

/// arrive-before-wait, the guide's producer/consumer (issue 32, point 3):
/// thread 1's arrive completes phase 0 and thread 1 arrives again. Thread
/// 0's wait on phase 0 pays the debt when it executes before the second
/// arrive (through a second barrier C); the checker reports the arrive
/// when it executes before that wait (C the other way round); unordered,
/// only the interleaving decides, which is the explorer's to judge.
#[test]
fn arrive_before_wait_is_paid_by_another_threads_wait_before_the_reuse() {
    const C: Target = Target::Barrier(BarrierId(1));
    let object = || K::Arrive {
        set_count: None,
        count: None,
        object: true,
        collective: false,
        relaxed: false,
        arrivals: 1,
        aligned: false,
        syncs: false,
        red: false,
        whole: false,
    };
    // 0: the wait before the reuse; 1: unordered; 2: the reuse first.
    let build = |order: u8| {
        let mut b = ExecutionBuilder::new(2, 2);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let init_c = b.event(None, 0, K::Init { count: 1 }, C);
        b.bmo(init_c);
        let a0 = b.event(t(0), 0, object(), B);
        b.bmo(a0);
        let a1 = b.event(t(1), 0, object(), B);
        b.bmo(a1);
        match order {
            0 => {
                // Thread 0 waits, then signals C; thread 1 waits on C.
                let w0 = b.event(t(0), 1, wait(), B);
                b.set_participants(w0, vec![a0, a1]);
                let s = b.event(t(0), 2, arrive(), C);
                b.bmo(s);
                let wc = b.event(t(1), 1, wait(), C);
                b.set_participants(wc, vec![s]);
                let again = b.event(t(1), 2, object(), B);
                b.bmo(again);
            }
            1 => {
                let w0 = b.event(t(0), 1, wait(), B);
                b.set_participants(w0, vec![a0, a1]);
                let again = b.event(t(1), 1, object(), B);
                b.bmo(again);
            }
            _ => {
                // Thread 1 arrives again, then signals C; thread 0 waits on
                // C before its wait on B.
                let again = b.event(t(1), 1, object(), B);
                b.bmo(again);
                let s = b.event(t(1), 2, arrive(), C);
                b.bmo(s);
                let wc = b.event(t(0), 1, wait(), C);
                b.set_participants(wc, vec![s]);
                let w0 = b.event(t(0), 2, wait(), B);
                b.set_participants(w0, vec![a0, a1]);
            }
        }
        b
    };
    let rules = RuleSet::all().without(Rule::JoinedBefore);
    let judge = |b: ExecutionBuilder| kinds(&check(&b.finish(), rules, None, &Numbered));
    let abw = "ub(arrive-before-wait)".to_string();
    assert!(!judge(build(0)).contains(&abw));
    assert!(!judge(build(1)).contains(&abw));
    assert!(judge(build(2)).contains(&abw));
}

/// arrive-before-wait, cooperative groups (issue 32, point 5): after a
/// `barrier_arrive` (`collective`), any arrival of the thread on the
/// barrier before its own wait breaks the rule, a plain one included; the
/// thread's own wait in between pays.
#[test]
fn arrive_before_wait_after_a_group_arrival_fires_on_any_arrival() {
    let build = |wait_between: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let group = K::Arrive {
            set_count: None,
            count: None,
            object: false,
            collective: true,
            relaxed: false,
            arrivals: 1,
            aligned: false,
            syncs: false,
            red: false,
            whole: false,
        };
        let a1 = b.event(t(0), 0, group, B);
        b.bmo(a1);
        if wait_between {
            let w = b.event(t(0), 1, wait(), B);
            b.set_participants(w, vec![a1]);
        }
        let a2 = b.event(t(0), 2, arrive(), B);
        b.bmo(a2);
        b
    };
    let rules = RuleSet::all().without(Rule::JoinedBefore);
    let judge = |b: ExecutionBuilder| kinds(&check(&b.finish(), rules, None, &Numbered));
    assert!(judge(build(false)).contains(&"ub(arrive-before-wait)".to_string()));
    assert!(!judge(build(true)).contains(&"ub(arrive-before-wait)".to_string()));
}

/// divergent-barrier: a block-wide phase of a uniform barrier completed
/// from two sites of one code, or with an exit drop; a wait stuck on its
/// open block-wide phase. Not from one site, nor on a barrier that is not
/// uniform, nor for a phase counted with a thread count.
#[test]
fn divergent_barrier_fires_on_mixed_sites_exits_and_stuck_waits() {
    let uniform = bc_models::BarrierProps {
        uniform: true,
        ..Default::default()
    };
    // Two threads of one code arrive at pcs `pcs`, each then waits.
    let completed = |pcs: [u32; 2], props: bc_models::BarrierProps, count: Option<ArriveCount>| {
        let mut b = ExecutionBuilder::new(2, 1);
        b.props(BarrierId(0), props);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let arrives: Vec<EventId> = (0..2)
            .map(|i| {
                let kind = K::Arrive {
                    set_count: None,
                    count,
                    object: false,
                    collective: false,
                    relaxed: false,
                    arrivals: 1,
                    aligned: false,
                    syncs: false,
                    red: false,
                    whole: false,
                };
                b.event(t(i), pcs[i as usize], kind, B)
            })
            .collect();
        for &a in &arrives {
            b.bmo(a);
        }
        for i in 0..2 {
            let w = b.event(t(i), 9, wait(), B);
            b.set_participants(w, arrives.clone());
        }
        b
    };
    let rules = RuleSet::all().without(Rule::JoinedBefore);
    let judge_no_join = |b: ExecutionBuilder| kinds(&check(&b.finish(), rules, None, &Numbered));
    let divergent = ["ub(divergent-barrier)"];
    assert_eq!(judge_no_join(completed([1, 2], uniform, None)), divergent);
    assert_eq!(judge_no_join(completed([1, 1], uniform, None)), Vec::<String>::new());
    assert_eq!(
        judge_no_join(completed([1, 2], Default::default(), None)),
        Vec::<String>::new()
    );
    assert_eq!(
        judge_no_join(completed([1, 2], uniform, Some(ArriveCount::Threads(2)))),
        Vec::<String>::new()
    );
    // Threads of different codes compare no sites.
    let mut b = completed([1, 2], uniform, None);
    b.thread(
        ThreadId(1),
        bc_graph::ThreadFacts {
            code: 1,
            cooperative: false,
            warp: 0,
            ..Default::default()
        },
    );
    assert_eq!(judge_no_join(b), Vec::<String>::new());
    // T1 exits, its drop completes the phase T0 arrived in.
    let exit = |props| {
        let mut b = ExecutionBuilder::new(2, 1);
        b.props(BarrierId(0), props);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let a = b.event(t(0), 0, arrive(), B);
        let d = b.event(t(1), bc_graph::AT_END, K::Drop, B);
        b.bmo(a);
        b.bmo(d);
        let w = b.event(t(0), 1, wait(), B);
        b.set_participants(w, vec![a, d]);
        b
    };
    assert_eq!(judge_no_join(exit(uniform)), divergent);
    assert_eq!(judge_no_join(exit(Default::default())), Vec::<String>::new());
    // T0 arrives and is stuck; T1 never comes.
    let stuck_on = |props| {
        let mut b = ExecutionBuilder::new(2, 1);
        b.props(BarrierId(0), props);
        let init = b.event(None, 0, K::Init { count: 2 }, B);
        b.bmo(init);
        let a = b.event(t(0), 0, arrive(), B);
        b.bmo(a);
        b.event(t(0), 1, stuck(), B);
        b
    };
    assert_eq!(judge_no_join(stuck_on(uniform)), ["deadlock", "ub(divergent-barrier)"]);
    assert_eq!(judge_no_join(stuck_on(Default::default())), ["deadlock"]);
}

fn no_effect(op: bc_graph::BarrierOpName) -> K {
    K::NoEffect { op }
}
/// Judged by a model that joins every thread at launch (the CUDA ones).
fn judge_no_join(b: ExecutionBuilder) -> Vec<String> {
    kinds(&check(
        &b.finish(),
        RuleSet::all().without(Rule::JoinedBefore),
        None,
        &Numbered,
    ))
}

#[test]
fn privileged_barrier_fires_on_any_thread_use_but_implicit_ones() {
    use bc_graph::BarrierOpName as Op;
    let privileged = bc_models::BarrierProps {
        privileged: true,
        join_at_launch: true,
        ..Default::default()
    };
    // T0 joins at launch (implicit), then signals the barrier: no effect.
    let run = |props, signal: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        b.props(BarrierId(0), props);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        b.event(t(0), bc_graph::AT_LAUNCH, K::Join, B);
        if signal {
            b.event(t(0), 0, no_effect(Op::Arrive), B);
            b.event(t(0), 1, no_effect(Op::Wait), B);
        }
        b.event(t(0), bc_graph::AT_END, K::Drop, B);
        judge_no_join(b)
    };
    assert_eq!(run(privileged, true), ["ub(privileged-barrier)"]);
    assert_eq!(run(privileged, false), Vec::<String>::new());
    assert_eq!(run(Default::default(), true), Vec::<String>::new());
    // A model without the rule reports nothing.
    let mut b = ExecutionBuilder::new(1, 1);
    b.props(BarrierId(0), privileged);
    b.event(t(0), 0, no_effect(Op::Arrive), B);
    let rules = RuleSet::all().without(Rule::PrivilegedBarrier);
    assert!(kinds(&check(&b.finish(), rules, None, &Numbered)).is_empty());
}

#[test]
fn uncooperative_grid_sync_fires_outside_a_cooperative_launch_only() {
    use bc_graph::BarrierOpName as Op;
    let grid = bc_models::BarrierProps {
        cooperative: true,
        ..Default::default()
    };
    let run = |props, cooperative: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        b.props(BarrierId(0), props);
        b.thread(
            ThreadId(0),
            bc_graph::ThreadFacts {
                code: 0,
                cooperative,
                warp: 0,
                ..Default::default()
            },
        );
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        if cooperative {
            // In a cooperative launch the grid barrier works.
            let a = b.event(t(0), 0, arrive(), B);
            b.bmo(a);
            let w = b.event(t(0), 1, wait(), B);
            b.set_participants(w, vec![a]);
        } else {
            b.event(t(0), 0, no_effect(Op::Arrive), B);
            b.event(t(0), 1, no_effect(Op::Wait), B);
        }
        judge_no_join(b)
    };
    assert_eq!(run(grid, false), ["ub(uncooperative-grid-sync)"]);
    assert_eq!(run(grid, true), Vec::<String>::new());
    assert_eq!(run(Default::default(), false), Vec::<String>::new());
}

#[test]
fn invalid_barrier_fires_on_a_use_after_inval_without_an_init_between() {
    use bc_graph::BarrierOpName as Op;
    // T0: init B, inval B, then (`reinit`) init B again, then arrive on B
    // (no effect after the inval, an arrive after the init).
    let one_thread = |reinit: bool| {
        let mut b = ExecutionBuilder::new(1, 1);
        let i = b.event(t(0), 0, K::Init { count: 1 }, B);
        b.bmo(i);
        b.event(t(0), 1, K::Inval, B);
        if reinit {
            let i2 = b.event(t(0), 2, K::Init { count: 1 }, B);
            b.bmo(i2);
            let a = b.event(t(0), 3, arrive(), B);
            b.bmo(a);
        } else {
            b.event(t(0), 3, no_effect(Op::Arrive), B);
        }
        judge_no_join(b)
    };
    assert_eq!(one_thread(false), ["ub(invalid-barrier)"]);
    assert_eq!(one_thread(true), Vec::<String>::new());
    // An inval with nothing after it is fine.
    let mut b = ExecutionBuilder::new(1, 1);
    let i = b.event(t(0), 0, K::Init { count: 1 }, B);
    b.bmo(i);
    b.event(t(0), 1, K::Inval, B);
    assert_eq!(judge_no_join(b), Vec::<String>::new());
    // T0 invalidates B, T1 uses it. Only where the inval executes before
    // the use (here through a wait on C) does the checker decide it;
    // otherwise the interleaving decides, and that is the explorer's to
    // judge. An init of B between the two keeps it silent.
    let two_threads = |ordered: bool, init_between: bool, reinit_first: bool| {
        let mut b = ExecutionBuilder::new(2, 2);
        let ic = b.event(None, 0, K::Init { count: 2 }, C);
        b.bmo(ic);
        let i = b.event(t(0), 0, K::Init { count: 1 }, B);
        b.bmo(i);
        b.event(t(0), 1, K::Inval, B);
        if reinit_first {
            let i3 = b.event(t(0), 2, K::Init { count: 1 }, B);
            b.bmo(i3);
        }
        let a = b.event(t(0), 3, arrive(), C);
        b.bmo(a);
        if ordered {
            let a1 = b.event(t(1), 0, arrive(), C);
            b.bmo(a1);
            let w = b.event(t(1), 1, wait(), C);
            b.set_participants(w, vec![a, a1]);
        }
        if init_between {
            let i2 = b.event(t(1), 2, K::Init { count: 1 }, B);
            b.bmo(i2);
            let x = b.event(t(1), 3, arrive(), B);
            b.bmo(x);
        } else {
            b.event(t(1), 3, no_effect(Op::Arrive), B);
        }
        judge_no_join(b)
    };
    assert_eq!(two_threads(true, false, false), ["ub(invalid-barrier)"]);
    assert_eq!(two_threads(true, true, false), Vec::<String>::new());
    assert_eq!(two_threads(false, false, false), Vec::<String>::new());
    // The init after the inval in T0 is ordered before T1's use: silent.
    assert_eq!(two_threads(true, false, true), Vec::<String>::new());
    // A model without the rule reports nothing.
    let mut b = ExecutionBuilder::new(1, 1);
    b.event(t(0), 0, K::Inval, B);
    b.event(t(0), 1, no_effect(Op::Arrive), B);
    let rules = RuleSet::all().without(Rule::InvalidBarrier);
    assert!(!kinds(&check(&b.finish(), rules, None, &Numbered)).contains(&"ub(invalid-barrier)".to_string()));
}

/// One arrive of `n` arrivals by thread 0 on a launch init of `count`,
/// and thread 0's wait on its phase.
fn counted_arrive(count: i64, n: u32) -> ExecutionBuilder {
    let mut b = ExecutionBuilder::new(1, 1);
    let init = b.event(None, 0, K::Init { count }, B);
    b.bmo(init);
    b.event(t(0), 0, K::Join, B);
    let a = b.event(
        t(0),
        1,
        K::Arrive {
            set_count: None,
            count: None,
            object: false,
            collective: false,
            relaxed: false,
            arrivals: n,
            aligned: false,
            syncs: false,
            red: false,
            whole: false,
        },
        B,
    );
    b.bmo(a);
    let w = b.event(t(0), 2, wait(), B);
    b.set_participants(w, vec![a]);
    b
}

/// count-overflow on counted arrivals: an arrive of n completes a phase
/// of n alone; more than the phase expects, or none, breaks the rule
/// (and the replay still completes the phase: the wait is no internal
/// error); fewer leaves the phase open, so a wait that took it is an
/// invalid candidate.
#[test]
fn counted_arrivals_complete_a_phase_and_overflow() {
    assert_eq!(judge(counted_arrive(3, 3)), Vec::<String>::new());
    assert_eq!(judge(counted_arrive(2, 3)), ["ub(count-overflow)"]);
    assert!(judge(counted_arrive(3, 2)).contains(&"inconsistent:participates-in".to_string()));
    assert!(judge(counted_arrive(1, 0)).contains(&"ub(count-overflow)".to_string()));
}

/// Two threads of one warp (or of two), each arriving on B at `pcs[i]`
/// (`aligned[i]`: through an `.aligned` instruction), completing one phase
/// of 2; waits left out.
fn aligned_phase(pcs: [u32; 2], aligned: [bool; 2], warps: [u32; 2]) -> ExecutionBuilder {
    let mut b = ExecutionBuilder::new(2, 1);
    let init = b.event(None, 0, K::Init { count: 2 }, B);
    b.bmo(init);
    for i in 0..2 {
        b.thread(
            ThreadId(i),
            bc_graph::ThreadFacts {
                code: 0,
                cooperative: false,
                warp: warps[i as usize],
                ..Default::default()
            },
        );
        let a = b.event(
            t(i),
            pcs[i as usize],
            K::Arrive {
                set_count: None,
                count: Some(ArriveCount::Threads(2)),
                object: false,
                collective: false,
                relaxed: false,
                arrivals: 1,
                aligned: aligned[i as usize],
                syncs: true,
                red: false,
                whole: false,
            },
            B,
        );
        b.bmo(a);
    }
    b
}

/// aligned-barrier: one warp's threads arrive through one `.aligned`
/// instruction (fine), through two sites, or one through an `.aligned`
/// one and the other through a plain one (divergent); threads of two
/// warps may use different sites.
#[test]
fn aligned_barrier_needs_one_site_per_warp() {
    let judge_no_join = |b: ExecutionBuilder| {
        kinds(&check(
            &b.finish(),
            RuleSet::all().without(Rule::WaitNeedsJoin),
            None,
            &Numbered,
        ))
    };
    assert_eq!(
        judge_no_join(aligned_phase([1, 1], [true, true], [0, 0])),
        Vec::<String>::new()
    );
    assert_eq!(
        judge_no_join(aligned_phase([1, 2], [true, true], [0, 0])),
        ["ub(divergent-barrier)"]
    );
    assert_eq!(
        judge_no_join(aligned_phase([1, 2], [true, false], [0, 0])),
        ["ub(divergent-barrier)"]
    );
    assert_eq!(
        judge_no_join(aligned_phase([1, 2], [true, true], [0, 1])),
        Vec::<String>::new()
    );
    assert_eq!(
        judge_no_join(aligned_phase([1, 2], [false, false], [0, 0])),
        Vec::<String>::new()
    );
}

/// copy-not-waited: a copying agent (thread 1) started by thread 0's arrive
/// on its start barrier (B, count 1 at launch) completes with an arrive on
/// it; the rule fires when no event of thread 0 follows that completion,
/// and only on an execution that finished.
#[test]
fn copy_not_waited_fires_on_a_finished_execution_only() {
    let build = |observed: bool, copies: bool| {
        let mut b = ExecutionBuilder::new(2, 1);
        let init = b.event(None, 0, K::Init { count: 1 }, B);
        b.bmo(init);
        let issue = b.event(t(0), 0, arrive(), B);
        b.bmo(issue);
        let start = b.event(t(1), 0, wait(), B);
        b.set_participants(start, vec![issue]);
        b.event(t(1), 1, K::Write, Target::Loc(LocId(0)));
        let done = b.event(t(1), 2, arrive(), B);
        b.bmo(done);
        if observed {
            let w = b.event(t(0), 1, wait(), B);
            b.set_participants(w, vec![done]);
        }
        b.thread(
            ThreadId(1),
            bc_graph::ThreadFacts {
                agent: true,
                copies,
                ..Default::default()
            },
        );
        b
    };
    let judge_ended = |b: ExecutionBuilder, finished: bool| {
        let mut e = b.finish();
        e.finished = finished;
        kinds(&check(&e, only_copy_rules(), None, &Numbered))
    };
    // An agent joins nothing: the join rules are not what this judges.
    fn only_copy_rules() -> RuleSet {
        RuleSet::all().without(Rule::JoinedBefore).without(Rule::WaitNeedsJoin)
    }
    assert_eq!(judge_ended(build(false, true), true), ["ub(copy-not-waited)"]);
    // A wait of the issuer on the completion phase observes it.
    assert_eq!(judge_ended(build(true, true), true), Vec::<String>::new());
    // Not an end: a wait may still come.
    assert_eq!(judge_ended(build(false, true), false), Vec::<String>::new());
    // The explorer knows the completion was observed (what ordered it is
    // forgotten).
    assert_eq!(judge_ended(build(false, false), true), Vec::<String>::new());
    // Off where the model has no such rule.
    let mut e = build(false, true).finish();
    e.finished = true;
    let rules = only_copy_rules().without(Rule::CopyNotWaited);
    assert_eq!(kinds(&check(&e, rules, None, &Numbered)), Vec::<String>::new());
}

/// Two threads (warps `warps`), each arriving on barrier `bars[i]` (B or
/// C, each expecting 2 at launch) in the form `forms[i]` = (syncs, red),
/// counted in whole warps (`whole`, thread count 64), not `.aligned`;
/// waits left out.
fn forms_phase(bars: [Target; 2], forms: [(bool, bool); 2], warps: [u32; 2]) -> ExecutionBuilder {
    let mut b = ExecutionBuilder::new(2, 2);
    for bar in [B, C] {
        let init = b.event(None, 0, K::Init { count: 2 }, bar);
        b.bmo(init);
    }
    for i in 0..2 {
        b.thread(
            ThreadId(i),
            bc_graph::ThreadFacts {
                code: i,
                cooperative: false,
                warp: warps[i as usize],
                ..Default::default()
            },
        );
        let (syncs, red) = forms[i as usize];
        let a = b.event(
            t(i),
            0,
            K::Arrive {
                set_count: None,
                count: None,
                object: false,
                collective: false,
                relaxed: false,
                arrivals: 1,
                aligned: false,
                syncs,
                red,
                whole: true,
            },
            bars[i as usize],
        );
        b.bmo(a);
    }
    b
}

/// barrier-forms: a reduction's arrival in a phase with a sync's is
/// undefined, across warps too; two warps may mix a sync and an arrive;
/// one warp's lanes may not (nor use two barriers); one kind in one warp
/// is fine.
#[test]
fn barrier_forms_fire_on_mixed_forms_only() {
    let judge_forms = |b: ExecutionBuilder| {
        let mut k = kinds(&check(
            &b.finish(),
            RuleSet::all().without(Rule::WaitNeedsJoin),
            None,
            &Numbered,
        ));
        k.retain(|x| x == "ub(divergent-barrier)");
        k
    };
    let (sync, arrive, red) = ((true, false), (false, false), (true, true));
    let ub: &[&str] = &["ub(divergent-barrier)"];
    // (barriers, forms, warps, findings)
    type Case<'a> = ([Target; 2], [(bool, bool); 2], [u32; 2], &'a [&'a str]);
    let cases: [Case; 7] = [
        ([B, B], [red, sync], [0, 1], ub),
        ([B, B], [red, red], [0, 1], &[]),
        ([B, B], [arrive, sync], [0, 1], &[]),
        ([B, B], [arrive, sync], [0, 0], ub),
        ([B, C], [sync, sync], [0, 0], ub),
        ([B, B], [sync, sync], [0, 0], &[]),
        ([B, C], [sync, sync], [0, 1], &[]),
    ];
    for (bars, forms, warps, want) in cases {
        assert_eq!(
            judge_forms(forms_phase(bars, forms, warps)),
            want,
            "{bars:?} {forms:?} {warps:?}"
        );
    }
}
