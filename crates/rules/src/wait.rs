//! The rules on what a wait completes on ("AMDGPU Execution
//! Synchronization", "Execution Model" and its "Informational Notes"):
//! every wait completes (wait-completes), and a wait's participants are not
//! separated from it by an operation of another phase (phase-with); and,
//! for `cuda::barrier` objects, a thread waits on the phase its arrive
//! completed before it arrives again (arrive-before-wait).

use crate::facts::Ordered;
use crate::Checker;
use bc_graph::{BarrierId, EventId, EventKind, Target};
use bc_models::Rule;

impl Checker<'_> {
    /// wait-completes ("Informational Notes": it is undefined behaviour for
    /// a barrier wait never to complete; we report it as `deadlock`). A
    /// stuck wait is a deadlock unless the execution was cut short while a
    /// phase it could take existed (then the execution is inconsistent). A
    /// parity wait waits for the phase of its parity (project notes,
    /// section 3, mbarrier); a wait with no joined-before join is
    /// wait-needs-join's.
    pub(crate) fn wait_completes(&mut self, f: &Ordered) {
        let exec = self.exec;
        let phases = &f.replay.phases;
        for e in exec.ids() {
            let ev = exec.event(e);
            let (
                EventKind::Wait {
                    completed: false,
                    token_phase,
                    parity,
                    ..
                },
                Target::Barrier(b),
            ) = (&ev.kind, ev.target)
            else {
                continue;
            };
            if let Some(p) = parity {
                // The current phase's number since the latest init (not a
                // count of the phases the execution holds: a launch init
                // may stand for forgotten ones).
                let current = f.replay.since_init[b.index()];
                if current % 2 != *p as usize {
                    let msg = format!("{} is stuck although its parity phase completed", self.n(e));
                    self.inconsistent("wait-completes", msg, vec![e]);
                } else {
                    let msg = format!("{} on {} never sees its parity", self.n(e), self.barrier_name(b));
                    self.report(Rule::WaitCompletes, msg, vec![e]);
                }
                continue;
            }
            let Some(j) = f.joined[e.index()] else {
                continue;
            };
            let t = ev.thread.expect("waits belong to threads");
            let own = f.own_counted_arrive(e);
            let eligible = phases.iter().find(|p| {
                p.barrier == b
                    && p.completed
                    && own.is_none_or(|a| p.members.contains(&a))
                    && token_phase.is_none_or(|tp| tp as usize == p.number)
                    && p.members.iter().any(|&x| f.entitles(j, x))
                    && !p
                        .members
                        .iter()
                        .any(|&x| f.waits_of(x).iter().any(|&w| exec.event(w).thread == Some(t)))
            });
            if let Some(p) = eligible {
                let msg = format!(
                    "{} is stuck although a completed phase (first op {}) could complete it",
                    self.n(e),
                    self.n(p.members[0])
                );
                self.inconsistent("wait-completes", msg, vec![e, p.members[0]]);
            } else {
                let msg = format!("{} on {} never completes", self.n(e), self.barrier_name(b));
                let mut evs = vec![e];
                evs.extend(j.events());
                self.report(Rule::WaitCompletes, msg, evs);
            }
        }
    }

    /// phase-with ("Execution Model", barrier-phase-with: for an operation A
    /// that participates in wait W, no operation X on the object with
    /// A -> X -> W in barrier-executes-before is phase-with a non-empty set
    /// of operations that does not include W). Reported as
    /// `ub(stale-phase)`.
    pub(crate) fn phase_with(&mut self, f: &Ordered) {
        if !self.rules.has(Rule::PhaseWith) {
            return;
        }
        let exec = self.exec;
        let class = self.phase_classes();
        'waits: for w in exec.ids() {
            let ev = exec.event(w);
            let EventKind::Wait {
                participants,
                completed: true,
                ..
            } = &ev.kind
            else {
                continue;
            };
            for &a in participants.iter() {
                for x in exec.ids() {
                    let ex = exec.event(x);
                    if x == a
                        || x == w
                        || ex.target != ev.target
                        || class[x.index()].1 < 2
                        || class[x.index()].0 == class[w.index()].0
                    {
                        continue;
                    }
                    if f.eb(a, x) && f.eb(x, w) {
                        let msg = format!(
                            "{} participates in {}, but {} of another phase executes between them",
                            self.n(a),
                            self.n(w),
                            self.n(x)
                        );
                        self.report(Rule::PhaseWith, msg, vec![w, a, x]);
                        continue 'waits;
                    }
                }
            }
        }
    }

    /// The classes of barrier-phase-with (participates-in and its inverse,
    /// closed transitively), by union-find: for each event, its class's
    /// representative and the class's size.
    fn phase_classes(&self) -> Vec<(usize, usize)> {
        let exec = self.exec;
        let n = exec.events.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for w in exec.ids() {
            for &x in exec.participants(w) {
                let (a, b) = (find(&mut parent, w.index()), find(&mut parent, x.index()));
                parent[a] = b;
            }
        }
        let roots: Vec<usize> = (0..n).map(|x| find(&mut parent, x)).collect();
        let mut size = vec![0usize; n];
        for &r in &roots {
            size[r] += 1;
        }
        roots.iter().map(|&r| (r, size[r])).collect()
    }
}

impl Checker<'_> {
    /// arrive-before-wait (project notes section 3, `cuda::barrier`; CUDA
    /// guide, "A Barrier's Phase: Arrival, Countdown, Completion, and
    /// Reset": "a call to bar.wait(...) must happen before the barrier can
    /// be reused"). Per thread in program order: once an arrive on a
    /// `cuda::barrier` object completes its phase, the thread owes a wait
    /// on that phase; a wait of the thread itself that completes on a
    /// phase of the barrier pays the debt, and so does any thread's wait
    /// on that phase that came before the thread's next arrive (the guide's
    /// producer/consumer: the consumer only arrives, the producer waits).
    /// An arrive on the object while the debt is open is the violation.
    /// "Came before" is the interleaving's order, which the explorer sees
    /// (a flag the waiter sets after its wait orders the reuse after it,
    /// though executes-before has no edge for it); the execution fixes it
    /// only where the next arrive executes before every wait on the phase,
    /// so that is when the checker reports: its findings are a subset of
    /// the explorer's, as for token-phase and invalid-barrier. A
    /// cooperative-groups `barrier_arrive` (`collective`) leaves a debt
    /// that only the thread's own wait pays and that any arrival of the
    /// thread on the barrier breaks (the guide, `barrier_arrive` and
    /// `barrier_wait`: a collective or another arrival with the group is
    /// undefined until `barrier_wait` observed the phase).
    pub(crate) fn arrive_before_wait(&mut self, f: &Ordered) {
        if !self.rules.has(Rule::ArriveBeforeWait) {
            return;
        }
        let exec = self.exec;
        let mut waits_on: Vec<Vec<EventId>> = vec![Vec::new(); f.replay.phases.len()];
        for w in exec.ids() {
            if let EventKind::Wait { completed: true, .. } = exec.event(w).kind {
                if let Some(pi) = f.phase_of_wait(w) {
                    waits_on[pi].push(w);
                }
            }
        }
        for evs in &exec.program_order {
            // (barrier, the index of the phase the thread's arrive
            // completed; `None` for a group arrival's debt)
            let mut owes: Vec<(BarrierId, Option<usize>)> = Vec::new();
            for &e in evs {
                let ev = exec.event(e);
                let Some(b) = ev.barrier() else {
                    continue;
                };
                match &ev.kind {
                    &EventKind::Arrive { object, collective, .. } => {
                        owes.retain(|&(x, pi)| x != b || pi.is_none_or(|pi| waits_on[pi].iter().all(|&w| f.eb(e, w))));
                        if let Some(&(_, debt)) = owes.iter().find(|&&(x, pi)| x == b && (object || pi.is_none())) {
                            let what = if debt.is_none() {
                                "its barrier_wait observed the phase of its barrier_arrive"
                            } else {
                                "any wait observed the phase its earlier arrive completed"
                            };
                            let msg = format!("{} arrives on {} again before {what}", self.n(e), self.barrier_name(b));
                            self.report(Rule::ArriveBeforeWait, msg, vec![e]);
                        }
                        let completed = f.replay.phase_of[e.index()].filter(|&pi| {
                            let p = &f.replay.phases[pi];
                            p.completed && p.members.last() == Some(&e)
                        });
                        let debt = if collective {
                            Some(None)
                        } else {
                            completed.filter(|_| object).map(Some)
                        };
                        if let Some(debt) = debt {
                            if !owes.iter().any(|&(x, _)| x == b) {
                                owes.push((b, debt));
                            }
                        }
                    }
                    EventKind::Wait {
                        participants,
                        completed: true,
                        ..
                    } if !participants.is_empty() => owes.retain(|&(x, _)| x != b),
                    _ => {}
                }
            }
        }
    }
}
