//! The rules on which barriers a thread may use at all: privileged
//! barriers (privileged-barrier), grid barriers outside a cooperative launch
//! (uncooperative-grid-sync), barriers after `mbarrier.inval`
//! (invalid-barrier) and waits on barriers no init has reached
//! (wait-after-init). An explorer makes the offending operation have no
//! effect and records it as an [`EventKind::NoEffect`] event; the inval is
//! an [`EventKind::Inval`] event. The implicit joins at launch and drops at
//! a thread's end ([`Event::is_implicit`]) are no use by the thread.
//!
//! [`Event::is_implicit`]: bc_graph::Event::is_implicit

use crate::facts::Ordered;
use crate::Checker;
use bc_graph::{BarrierId, BarrierOpName, EventId, EventKind};
use bc_models::Rule;

impl Checker<'_> {
    /// The thread events (not implicit) on a barrier, with the barrier.
    fn uses(&self) -> impl Iterator<Item = (EventId, BarrierId)> + '_ {
        let exec = self.exec;
        exec.ids().filter_map(move |e| {
            let ev = exec.event(e);
            (ev.thread.is_some() && !ev.is_implicit())
                .then(|| ev.barrier())
                .flatten()
                .map(|b| (e, b))
        })
    }

    /// privileged-barrier ("Barrier Implementations on AMDGPU Targets",
    /// the GFX12 barrier table: the trap barriers belong to the trap
    /// handler, in privileged mode, and shader code cannot reach them). Any
    /// operation of a thread on a barrier the model marks privileged.
    pub(crate) fn privileged_barrier(&mut self) {
        let exec = self.exec;
        let found: Vec<(EventId, BarrierId)> = self.uses().filter(|&(_, b)| exec.props(b).privileged).collect();
        for (e, b) in found {
            let msg = format!("{} uses the privileged barrier {}", self.n(e), self.barrier_name(b));
            self.report(Rule::PrivilegedBarrier, msg, vec![e]);
        }
    }

    /// uncooperative-grid-sync (CUDA guide, "Grid Synchronization": a
    /// grid-wide sync needs the kernel launched through the cooperative
    /// launch API). Any operation on a grid barrier by a thread whose
    /// kernel was not launched cooperatively.
    pub(crate) fn uncooperative_grid_sync(&mut self) {
        let exec = self.exec;
        let found: Vec<(EventId, BarrierId)> = self
            .uses()
            .filter(|&(e, b)| {
                let t = exec.event(e).thread.expect("uses are thread events");
                exec.props(b).cooperative && !exec.thread(t).cooperative
            })
            .collect();
        for (e, b) in found {
            let msg = format!(
                "{} uses {} in a kernel not launched cooperatively",
                self.n(e),
                self.barrier_name(b)
            );
            self.report(Rule::CooperativeGridSync, msg, vec![e]);
        }
    }

    /// invalid-barrier (CUDA guide, "Memory Barrier Primitives API",
    /// `__mbarrier_inval`: invalidating the barrier is what lets its memory
    /// be used for something else, so it is no barrier until initialized
    /// again). An inval of a barrier executes before an operation on it
    /// other than an init, and every init of the barrier executes before
    /// the inval or after that operation (none can fall between them).
    /// Where executes-before leaves an init unordered, only the
    /// interleaving decides, and that is the explorer's to judge: the
    /// checker's findings are a subset of the explorer's.
    pub(crate) fn invalid_barrier(&mut self, f: &Ordered) {
        if !self.rules.has(Rule::InvalidBarrier) {
            return;
        }
        let exec = self.exec;
        let invals: Vec<EventId> = exec
            .ids()
            .filter(|&e| matches!(exec.event(e).kind, EventKind::Inval))
            .collect();
        let mut found = Vec::new();
        for (u, b) in self.uses() {
            if matches!(exec.event(u).kind, EventKind::Init { .. }) {
                continue;
            }
            let inval = invals.iter().copied().find(|&i| {
                i != u
                    && exec.event(i).barrier() == Some(b)
                    && f.eb(i, u)
                    && exec.ids().all(|x| {
                        !matches!(exec.event(x).kind, EventKind::Init { .. })
                            || exec.event(x).barrier() != Some(b)
                            || f.eb(x, i)
                            || f.eb(u, x)
                    })
            });
            if let Some(i) = inval {
                found.push((i, u, b));
            }
        }
        // An array index out of range selects the array's hidden element.
        let stray: Vec<(EventId, BarrierId)> = self.uses().filter(|&(_, b)| exec.props(b).out_of_range).collect();
        for (u, b) in stray {
            let msg = format!(
                "{} indexes {} out of range",
                self.n(u),
                self.barrier_name(b).split("[?]").next().unwrap_or("")
            );
            self.report(Rule::InvalidBarrier, msg, vec![u]);
        }
        for (i, u, b) in found {
            let msg = format!(
                "{} uses {} after {} invalidated it, with no init in between",
                self.n(u),
                self.barrier_name(b),
                self.n(i)
            );
            self.report(Rule::InvalidBarrier, msg, vec![u, i]);
        }
    }

    /// wait-after-init (CUDA guide, "Initialization": before any thread
    /// participates in a barrier it must be initialized; an mbarrier poll
    /// reads state only an init defines). A wait of a thread (one that took
    /// a phase, or the no-effect event an explorer leaves for a wait it ran
    /// before any init) on a barrier with no init at launch, where every
    /// init of the barrier executes after the wait, or there is none: no
    /// interleaving initializes the barrier first. Where an init is
    /// unordered with the wait, only the interleaving decides, and that is
    /// the explorer's to judge: the checker's findings of this rule are a
    /// subset of the explorer's.
    pub(crate) fn wait_after_init(&mut self, f: &Ordered) {
        if !self.rules.has(Rule::WaitAfterInit) {
            return;
        }
        let exec = self.exec;
        let is_wait = |e: EventId| {
            matches!(
                exec.event(e).kind,
                EventKind::Wait { .. }
                    | EventKind::NoEffect {
                        op: BarrierOpName::Wait
                    }
            )
        };
        let inits_of = |b: BarrierId| {
            exec.ids().filter(move |&x| {
                exec.event(x).barrier() == Some(b) && matches!(exec.event(x).kind, EventKind::Init { .. })
            })
        };
        let found: Vec<(EventId, BarrierId)> = self
            .uses()
            // An index out of range names the array's hidden element, which
            // no init reaches: that wait is invalid-barrier's, not this rule's.
            .filter(|&(e, b)| {
                is_wait(e)
                    && !exec.props(b).out_of_range
                    && inits_of(b).all(|i| exec.event(i).thread.is_some() && f.eb(e, i))
            })
            .collect();
        for (e, b) in found {
            let msg = format!("{} waits on {} before any init of it", self.n(e), self.barrier_name(b));
            self.report(Rule::WaitAfterInit, msg, vec![e]);
        }
    }
}
