//! barrier-joined-before ("AMDGPU Execution Synchronization", "Execution
//! Model"): for each event, the join that is joined-before it, a fact
//! the shared facts hold (`facts.rs`) and the join rules read
//! (`join.rs`).

use bc_graph::{BarrierId, EventId, EventKind, Execution, Target, ThreadId};
use bc_models::{Rule, RuleSet};

/// The join that entitles a wait: a join event, or (for models without
/// the `joined-before` rule) the thread's implicit join at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Join {
    Event(EventId),
    Launch(ThreadId),
}

impl Join {
    /// The events that show the join (none for the join at launch).
    pub fn events(self) -> Vec<EventId> {
        match self {
            Join::Event(j) => vec![j],
            Join::Launch(_) => vec![],
        }
    }
}

/// joined-before ("Execution Model", barrier-joined-before: a join J is
/// joined-before X when J precedes X in thread-barrier-order, X is no join,
/// no join or drop of the object comes between them, and no join of a
/// barrier-mutually-exclusive object comes between them in program order):
/// for each event, the join that is joined-before it, if any. A model
/// without the `joined-before` rule joins every thread to every barrier at
/// launch (the join at launch of "Barrier Implementations on AMDGPU
/// Targets": any thread launched within a workgroup joins its barrier).
pub(crate) fn joined_before(exec: &Execution, rules: RuleSet) -> Vec<Option<Join>> {
    let mut jb = vec![None; exec.events.len()];
    if !rules.has(Rule::JoinedBefore) {
        for (t, evs) in exec.program_order.iter().enumerate() {
            for &e in evs {
                jb[e.index()] = Some(Join::Launch(ThreadId(t as u32)));
            }
        }
        return jb;
    }
    for evs in &exec.program_order {
        let mut joined: Vec<(BarrierId, EventId)> = Vec::new();
        for &e in evs {
            let ev = exec.event(e);
            let Target::Barrier(b) = ev.target else {
                continue;
            };
            match ev.kind {
                EventKind::Join => {
                    joined.retain(|&(o, _)| o != b && !exec.mutually_exclusive(o, b));
                    joined.push((b, e));
                }
                EventKind::Drop => {
                    jb[e.index()] = joined.iter().find(|&&(o, _)| o == b).map(|&(_, j)| Join::Event(j));
                    joined.retain(|&(o, _)| o != b);
                }
                _ => jb[e.index()] = joined.iter().find(|&&(o, _)| o == b).map(|&(_, j)| Join::Event(j)),
            }
        }
    }
    jb
}
