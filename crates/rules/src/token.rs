//! The rules on CUDA arrival tokens (`cuda::barrier`, `__mbarrier_*`): a
//! token wait names a phase that is current or just past (token-phase), and
//! a token is one that an arrive on the same barrier returned, waited on
//! once (token-misuse).

use crate::facts::Ordered;
use crate::Checker;
use bc_graph::{EventId, EventKind, Target, NO_TOKEN_PHASE};
use bc_models::Rule;

impl Checker<'_> {
    /// token-phase ("Memory Barrier Primitives API", `__mbarrier_test_wait`:
    /// a token must belong to the barrier's current or immediately
    /// preceding phase). A token wait that completed on phase `pi` is stale
    /// when, in every interleaving, the barrier had already left that
    /// window when it ran - something executes before it that completes
    /// phase `pi + 1` or belongs to a later phase, or an init of the
    /// barrier bmo-after the phase (`__mbarrier_init` restarts the barrier
    /// at phase 0, so the token names a phase of its earlier life). When
    /// executes-before does not fix it, only the interleaving decides, and
    /// that is the explorer's to judge.
    pub(crate) fn token_phase(&mut self, f: &Ordered) {
        if !self.rules.has(Rule::TokenPhase) {
            return;
        }
        let exec = self.exec;
        let phases = &f.replay.phases;
        for e in exec.ids() {
            let ev = exec.event(e);
            let (
                EventKind::Wait {
                    completed: true,
                    token_phase: Some(_),
                    parity: None,
                    ..
                },
                Target::Barrier(b),
            ) = (&ev.kind, ev.target)
            else {
                continue;
            };
            // A token wait on a phase its thread took by a parity or plain
            // wait returns taking nothing: its phase is that one, if this
            // is the token's first use (a second is token-misuse's).
            let taken = || {
                let EventKind::Wait {
                    token_phase: Some(tp), ..
                } = ev.kind
                else {
                    return None;
                };
                let used = f.earlier(e).iter().any(|&w| {
                    exec.event(w).target == ev.target
                        && matches!(exec.event(w).kind, EventKind::Wait { token_phase: Some(p), .. } if p == tp)
                });
                if used {
                    return None;
                }
                f.earlier(e).iter().find_map(|&w| {
                    let plain = exec.event(w).target == ev.target
                        && matches!(exec.event(w).kind, EventKind::Wait { token_phase: None, .. });
                    f.phase_of_wait(w)
                        .filter(|&pi| plain && phases[pi].number == tp as usize)
                })
            };
            let Some(pi) = f.phase_of_wait(e).or_else(taken) else {
                continue;
            };
            let eb = |a: EventId| f.eb(a, e);
            let tp = phases[pi].number;
            let on = phases.iter().filter(|ph| ph.barrier == b).any(|ph| {
                (ph.number >= tp + 2 && ph.members.iter().any(|&x| eb(x)))
                    || (ph.number == tp + 1 && ph.completed && ph.members.last().is_some_and(|&x| eb(x)))
            });
            let last = *phases[pi].members.last().expect("a completed phase has members");
            let order = &exec.bmo[b.index()];
            let after = order.iter().position(|&x| x == last).map_or(order.len(), |i| i + 1);
            let reinit = order[after..].iter().any(|&x| {
                exec.event(x).thread.is_some() && matches!(exec.event(x).kind, EventKind::Init { .. }) && eb(x)
            });
            if on || reinit {
                let why = if reinit {
                    "the barrier was initialized again after that phase"
                } else {
                    "the barrier is two phases past it"
                };
                let msg = format!(
                    "{} waits on {} with a token of phase {tp}, which is neither current nor previous: {why}",
                    self.n(e),
                    self.barrier_name(b)
                );
                self.report(Rule::TokenPhase, msg, vec![e, last]);
            }
        }
    }

    /// token-misuse ("Forged tokens" in `docs/semantics.md`, CUDA section;
    /// cuda-barrier-libcudacxx.txt: a wait takes an arrival token of its own
    /// barrier). A token wait that completed and did nothing is one whose
    /// token the explorer found misused. The execution alone shows it when
    /// the token names no phase of the barrier, names a phase this thread
    /// already waited on, or names phase number `tp` while no arrive of a
    /// phase numbered `tp` or more (in any epoch: a token is any value an
    /// arrive returned, and the numbers below the largest returned one were
    /// all current once) executes before the wait - each executes after
    /// it, or there is none. Otherwise only the interleaving (which arrives
    /// had happened when the wait ran) decides, and that is the explorer's
    /// to judge.
    pub(crate) fn token_misuse(&mut self, f: &Ordered) {
        let exec = self.exec;
        for e in exec.ids() {
            let ev = exec.event(e);
            let (
                EventKind::Wait {
                    participants,
                    completed: true,
                    token_phase: Some(tp),
                    parity: None,
                    ..
                },
                Target::Barrier(b),
            ) = (&ev.kind, ev.target)
            else {
                continue;
            };
            if !participants.is_empty() {
                continue;
            }
            let tp = *tp;
            // Used before: by a token wait that took the phase, or by one
            // that returned taking nothing because a parity or plain wait
            // of the thread had taken the phase already.
            let took_otherwise = f.earlier(e).iter().any(|&w| {
                exec.event(w).target == ev.target
                    && matches!(exec.event(w).kind, EventKind::Wait { token_phase: None, .. })
                    && f.phase_of_wait(w)
                        .is_some_and(|pi| f.replay.phases[pi].number == tp as usize)
            });
            let twice = f.earlier(e).iter().any(|&w| {
                exec.event(w).target == ev.target
                    && matches!(&exec.event(w).kind, EventKind::Wait { token_phase: Some(p), participants, .. }
                        if *p == tp && (!participants.is_empty() || took_otherwise))
            });
            let arrivals: Vec<EventId> = f
                .replay
                .phases
                .iter()
                .filter(|ph| ph.barrier == b && ph.number >= tp as usize)
                .flat_map(|ph| ph.members.iter().copied())
                .filter(|&x| matches!(exec.event(x).kind, EventKind::Arrive { .. }))
                .collect();
            // A phase below the barrier's phase base was forgotten with
            // the arrives that returned it: the execution no longer shows
            // whether one did, so only the explorer can tell a forgery
            // there (a real token of an abandoned phase whose wait is
            // token-phase's no-op has no arrive left after compaction).
            let forgotten = exec.phase_base.get(b.index()).is_some_and(|&base| tp < base);
            let why = if tp == NO_TOKEN_PHASE {
                "a value that is no token of it"
            } else if twice {
                "a token it waited on already"
            } else if !forgotten && arrivals.iter().all(|&a| f.eb(e, a)) {
                "a token of a phase no arrive has returned before it"
            } else {
                continue;
            };
            let msg = format!("{} waits on {} with {why}", self.n(e), self.barrier_name(b));
            self.report(Rule::TokenMisuse, msg, vec![e]);
        }
    }
}
