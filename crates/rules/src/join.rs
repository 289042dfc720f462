//! The rules around joins ("AMDGPU Execution Synchronization", "Execution
//! Model"): barrier-joined-before, and what a drop and a wait need from it;
//! with arrive-then-drop, the other rule on drops.

use crate::facts::{Facts, Ordered};
use crate::joined::Join;
use crate::Checker;
use bc_graph::{ArriveCount, EventKind, Target};
use bc_models::Rule;

impl Checker<'_> {
    /// How a message names a join.
    fn join_name(&self, j: Join) -> String {
        match j {
            Join::Event(j) => self.n(j),
            Join::Launch(_) => "its join at launch".to_string(),
        }
    }

    /// drop-needs-join ("Execution Model", for every barrier drop: there is
    /// a join that is barrier-joined-before it, otherwise the behaviour is
    /// undefined).
    pub(crate) fn drop_needs_join(&mut self, f: &Facts) {
        let exec = self.exec;
        for e in exec.ids() {
            let ev = exec.event(e);
            let (EventKind::Drop, Target::Barrier(b)) = (&ev.kind, ev.target) else {
                continue;
            };
            if f.joined[e.index()].is_none() {
                let msg = format!(
                    "{} drops {} with no joined-before join",
                    self.n(e),
                    self.barrier_name(b)
                );
                self.report(Rule::DropNeedsJoin, msg, vec![e]);
            }
        }
    }

    /// arrive-then-drop ("Execution Model", for every arrive A and drop D of
    /// one object with A before D in thread-barrier-order: A participates
    /// in no wait, or in one that executes before D; "Informational Notes":
    /// a thread may not arrive and then drop unless the barrier completes
    /// first). An arrive with a thread count (`bar.arrive 0, N`) is exempt:
    /// its phase completes at N arrivals, which a drop (an exit lowering
    /// the block's count) never changes.
    pub(crate) fn arrive_then_drop(&mut self, f: &Ordered) {
        let exec = self.exec;
        for e in exec.ids() {
            let ev = exec.event(e);
            let (EventKind::Drop, Target::Barrier(_)) = (&ev.kind, ev.target) else {
                continue;
            };
            for &a in f.earlier(e) {
                let ea = exec.event(a);
                if ea.target != ev.target
                    || !matches!(ea.kind, EventKind::Arrive { .. })
                    || matches!(
                        ea.kind,
                        EventKind::Arrive {
                            count: Some(ArriveCount::Threads(_)),
                            ..
                        }
                    )
                {
                    continue;
                }
                let ws = f.waits_of(a);
                if !ws.is_empty() && !ws.iter().any(|&w| f.eb(w, e)) {
                    let msg = format!(
                        "{} arrives, then {} drops before any wait its arrive participates in has completed (e.g. {})",
                        self.n(a),
                        self.n(e),
                        self.n(ws[0])
                    );
                    self.report(Rule::ArriveThenDrop, msg, vec![a, e, ws[0]]);
                }
            }
        }
    }

    /// wait-needs-join ("Execution Model", for every barrier wait W: there
    /// is a join J barrier-joined-before W, and J barrier-executes-before
    /// at least one operation that participates in W, otherwise the
    /// behaviour is undefined). Parity waits (which take no join) and token
    /// waits that took nothing (token-misuse's) are not judged here.
    pub(crate) fn wait_needs_join(&mut self, f: &Ordered) {
        let exec = self.exec;
        for e in exec.ids() {
            let ev = exec.event(e);
            let (
                EventKind::Wait {
                    participants,
                    completed,
                    token_phase,
                    parity: None,
                    ..
                },
                Target::Barrier(b),
            ) = (&ev.kind, ev.target)
            else {
                continue;
            };
            if *completed && participants.is_empty() && token_phase.is_some() {
                continue;
            }
            let Some(j) = f.joined[e.index()] else {
                let msg = format!(
                    "{} waits on {} with no joined-before join",
                    self.n(e),
                    self.barrier_name(b)
                );
                self.report(Rule::WaitNeedsJoin, msg, vec![e]);
                continue;
            };
            if *completed && !participants.is_empty() && !participants.iter().any(|&x| f.entitles(j, x)) {
                let msg = format!(
                    "{} completes on a phase that {} does not execute before",
                    self.n(e),
                    self.join_name(j)
                );
                let mut evs = vec![e];
                evs.extend(j.events());
                self.report(Rule::WaitNeedsJoin, msg, evs);
            }
        }
    }
}
