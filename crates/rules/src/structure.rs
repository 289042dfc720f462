//! The structural constraints of "AMDGPU Execution Synchronization",
//! "Execution Model": what makes an execution a valid candidate at all
//! (barrier-modification-order, barrier-participates-in,
//! barrier-executes-before). A broken one is [`Violation::inconsistent`],
//! a bug in whoever built the execution, never a user finding.
//!
//! [`Violation::inconsistent`]: crate::Violation::is_inconsistent

use crate::facts::{closure, Facts, Ordered};
use crate::Checker;
use bc_graph::bits::Bits;
use bc_graph::{BarrierId, EventId, EventKind, Target, ThreadId};

impl Checker<'_> {
    /// barrier-modification-order ("Execution Model": all modification
    /// operations on a barrier object, in one strict total order): a bmo
    /// holds only modifications of its own barrier.
    pub(crate) fn bmo(&mut self, f: &Facts) {
        for (b, order) in self.exec.bmo.iter().enumerate() {
            for (&e, _) in order.iter().zip(&f.replay.counts[b]).filter(|(_, c)| c.is_none()) {
                let msg = format!(
                    "{} is in the bmo of {}",
                    self.n(e),
                    self.barrier_name(BarrierId(b as u32))
                );
                self.inconsistent("bmo", msg, vec![e]);
            }
        }
    }

    /// participates-in ("Execution Model", barrier-participates-in: an
    /// arrive or drop of the wait's barrier object, of no other wait of the
    /// same thread, not after the wait in its thread; the participants of a
    /// wait are one uninterrupted bmo interval from arrive count zero to
    /// the completing operation, that is one completed phase). Also the
    /// project's readings of which phase a wait may take: a parity wait a
    /// phase of its parity (or, on parity 1, the virtual phase before the
    /// first; project notes, section 3, mbarrier), a token wait the phase
    /// its token names, a plain wait after a thread-counted arrive that
    /// arrive's phase (section 3, counted named barriers).
    pub(crate) fn participates_in(&mut self, f: &Facts) {
        let exec = self.exec;
        let phases = &f.replay.phases;
        // The waits of one phase may share their list (`Participants`):
        // what depends on the list alone is found once per distinct list
        // (a phase of T threads has T waits of T participants).
        let mut lists: rustc_hash::FxHashMap<*const [EventId], ListFacts> = Default::default();
        // Per thread, how many of its waits have participants: only a
        // thread with two or more can have an event in two of them (or
        // one list can, listing an event twice).
        let mut waits_of = vec![0usize; exec.program_order.len()];
        for w in exec.ids() {
            if let (EventKind::Wait { participants, .. }, Some(t)) = (&exec.event(w).kind, exec.event(w).thread) {
                waits_of[t.index()] += usize::from(!participants.is_empty());
            }
        }
        // Per thread with two such waits, the events that participate in
        // one of them (a set per thread, not a hash of pairs).
        let mut used: Vec<Option<Bits>> = vec![None; exec.program_order.len()];
        for w in exec.ids() {
            let ev = exec.event(w);
            let EventKind::Wait {
                participants,
                completed,
                token_phase,
                parity,
                ..
            } = &ev.kind
            else {
                continue;
            };
            if matches!(ev.target, Target::Barrier(_)) {
                self.wait_takes_its_phase(f, w);
            }
            if participants.is_empty() {
                continue;
            }
            if !completed {
                self.inconsistent(
                    "participates-in",
                    format!("stuck {} has participants", self.n(w)),
                    vec![w],
                );
                continue;
            }
            let t = ev.thread.expect("waits belong to threads");
            let list = lists
                .entry(std::sync::Arc::as_ptr(participants))
                .or_insert_with(|| ListFacts::of(f, participants));
            let phase = f.replay.phase_of[participants[0].index()];
            if list.target != Some(ev.target) || !list.whole_phase {
                let msg = format!(
                    "the participants of {} are not exactly one completed phase of its barrier",
                    self.n(w)
                );
                self.inconsistent("participates-in", msg, vec![w]);
                continue;
            }
            if let (Some(p), Some(pi)) = (parity, phase) {
                let since_init = phases[pi].number - phases[pi].epoch_start;
                if since_init % 2 != *p as usize {
                    let msg = format!("{} completes on a phase of the other parity", self.n(w));
                    self.inconsistent("participates-in", msg, vec![w]);
                }
            }
            if let (Some(tp), Some(pi)) = (token_phase, phase) {
                if phases[pi].number != *tp as usize {
                    self.inconsistent(
                        "participates-in",
                        format!("{} completes on another phase than its token names", self.n(w)),
                        vec![w],
                    );
                }
            }
            let later: Vec<EventId> = list
                .of_thread(t)
                .iter()
                .filter(|&&x| f.po_index[x.index()] > f.po_index[w.index()])
                .copied()
                .collect();
            for x in later {
                self.inconsistent(
                    "participates-in",
                    format!("{} participates in the earlier {}", self.n(x), self.n(w)),
                    vec![w, x],
                );
            }
            let again: Vec<EventId> = if waits_of[t.index()] >= 2 {
                let mine = used[t.index()].get_or_insert_with(|| Bits::new(exec.events.len()));
                let mut again = Vec::new();
                for &x in participants.iter() {
                    if mine.get(x.index()) {
                        again.push(x);
                    }
                    mine.set(x.index());
                }
                again
            } else {
                list.twice.clone()
            };
            for x in again {
                let msg = format!("{} participates in two waits of one thread", self.n(x));
                self.inconsistent("participates-in", msg, vec![w, x]);
            }
        }
    }

    /// The part of participates-in that concerns a completed wait `w` on a
    /// barrier and the phase it took (or did not take).
    fn wait_takes_its_phase(&mut self, f: &Facts, w: EventId) {
        let exec = self.exec;
        let ev = exec.event(w);
        let EventKind::Wait {
            participants,
            completed: true,
            token_phase,
            parity,
            ..
        } = &ev.kind
        else {
            return;
        };
        if let Some(p) = parity {
            // A parity wait completes on the last completed phase once the
            // current phase's parity differs from p (project notes,
            // section 3, mbarrier: on a fresh barrier parity 1 counts as
            // completed). With no participants there is nothing to take:
            // the phase "before" phase 0 of an epoch (odd), or a phase of
            // parity p this thread waited on already.
            if participants.is_empty() {
                let phases = &f.replay.phases;
                let again = f.earlier(w).iter().any(|&x| {
                    exec.event(x).target == ev.target
                        && exec.participants(x).first().is_some_and(|y| {
                            f.replay.phase_of[y.index()]
                                .is_some_and(|pi| (phases[pi].number - phases[pi].epoch_start) % 2 == *p as usize)
                        })
                });
                // Where a launch init stands for forgotten phases (a base
                // above 0), the earlier wait may be among them.
                let forgotten = match ev.target {
                    bc_graph::Target::Barrier(b) => {
                        (exec.bmo[b.index()].first()).is_some_and(|&x| exec.event(x).thread.is_none())
                            && exec.phase_base.get(b.index()).is_some_and(|&n| n > 0)
                    }
                    bc_graph::Target::Loc(_) | bc_graph::Target::None => false,
                };
                if *p != 1 && !again && !forgotten {
                    let msg = format!(
                        "{} completes with no participants although parity {p} names no virtual phase",
                        self.n(w)
                    );
                    self.inconsistent("participates-in", msg, vec![w]);
                }
            }
            return;
        }
        if participants.is_empty() {
            // A token wait that took nothing is token-misuse's to judge, a
            // wait with no joined-before join wait-needs-join's.
            if token_phase.is_none() && f.joined[w.index()].is_some() {
                self.inconsistent(
                    "participates-in",
                    format!("{} completes with no participant", self.n(w)),
                    vec![w],
                );
            }
            return;
        }
        // A token names its phase itself (cooperative groups' block
        // `barrier_wait` on the counted block barrier).
        if let Some(a) = f.own_counted_arrive(w).filter(|_| token_phase.is_none()) {
            if !participants.contains(&a) {
                let msg = format!(
                    "{} completes on a phase without its thread's counted arrive {}",
                    self.n(w),
                    self.n(a)
                );
                self.inconsistent("participates-in", msg, vec![w, a]);
            }
        }
    }

    /// executes-before-consistent ("Execution Model": barrier-executes-before
    /// is the transitive closure of program order and participates-in, and
    /// is consistent with every barrier-modification-order). Computes it;
    /// `None` (after reporting the cycle) when it has one.
    pub(crate) fn executes_before_consistent<'a>(&mut self, facts: Facts<'a>) -> Option<Ordered<'a>> {
        let given = self.before.take().map(Ok);
        let before = match given.unwrap_or_else(|| closure(self.exec, false)) {
            Ok(before) => before,
            Err(stuck) => {
                self.inconsistent(
                    "executes-before-consistent",
                    "executes-before has a cycle".into(),
                    stuck,
                );
                return None;
            }
        };
        let f = Ordered::new(facts, before);
        for order in &self.exec.bmo {
            for (i, &a) in order.iter().enumerate() {
                for &b in &order[i + 1..] {
                    if f.eb(b, a) {
                        let msg = format!("{} executes before {} but follows it in bmo", self.n(b), self.n(a));
                        self.inconsistent("executes-before-consistent", msg, vec![a, b]);
                    }
                }
            }
        }
        Some(f)
    }
}

/// What participates-in reads of a participant list alone, found once per
/// distinct list ([`Checker::participates_in`]).
struct ListFacts {
    /// The barrier every member operates on, when all are arrives, drops
    /// or transaction changes of one barrier.
    target: Option<Target>,
    /// The members are exactly one completed phase.
    whole_phase: bool,
    /// The members by thread (sorted by thread, then event).
    by_thread: Vec<(ThreadId, EventId)>,
    /// Members the list holds twice (each repeat).
    twice: Vec<EventId>,
}

impl ListFacts {
    fn of(f: &Facts, participants: &[EventId]) -> ListFacts {
        let exec = f.exec;
        let phases = &f.replay.phases;
        let first = exec.event(participants[0]).target;
        let kinds_ok = participants.iter().all(|&x| {
            let ex = exec.event(x);
            ex.target == first
                && matches!(
                    ex.kind,
                    EventKind::Arrive { .. } | EventKind::Drop | EventKind::ArriveDrop { .. } | EventKind::Tx { .. }
                )
        });
        let phase = f.replay.phase_of[participants[0].index()];
        let whole_phase = phase.is_some_and(|pi| {
            if phases[pi].members[..] == *participants {
                return phases[pi].completed;
            }
            let mut a = phases[pi].members.clone();
            let mut b = participants.to_vec();
            a.sort();
            b.sort();
            phases[pi].completed && a == b
        });
        let mut by_thread: Vec<(ThreadId, EventId)> = participants
            .iter()
            .filter_map(|&x| exec.event(x).thread.map(|t| (t, x)))
            .collect();
        by_thread.sort_unstable();
        let mut seen = Bits::new(exec.events.len());
        let mut twice = Vec::new();
        for &x in participants {
            if seen.get(x.index()) {
                twice.push(x);
            }
            seen.set(x.index());
        }
        ListFacts {
            target: kinds_ok.then_some(first),
            whole_phase,
            by_thread,
            twice,
        }
    }

    /// The members of thread `t`, in list order of events.
    fn of_thread(&self, t: ThreadId) -> Vec<EventId> {
        let lo = self.by_thread.partition_point(|&(u, _)| u < t);
        let hi = self.by_thread.partition_point(|&(u, _)| u <= t);
        self.by_thread[lo..hi].iter().map(|&(_, x)| x).collect()
    }
}
