//! The `__syncwarp` mask rule (CUDA Programming Guide, "Synchronization
//! Functions").

use crate::facts::{closure, Ordered};
use crate::Checker;
use bc_graph::{BarrierId, EventId, EventKind, ThreadId};
use bc_models::Rule;

impl Checker<'_> {
    /// syncwarp-mask ("Synchronization Functions": the non-exited lanes a
    /// `__syncwarp` mask names must execute a `__syncwarp` with the same
    /// mask). For a phase of a mask's barrier with an arrive, and a lane
    /// the mask names that does not arrive in it: an arrive of that lane on
    /// another mask's barrier of the same warp that some interleaving of
    /// this execution places while the phase is open (after its first
    /// member, before its last when it completed) is `ub(syncwarp-mask)`.
    /// An interleaving follows program order, participates-in and every
    /// bmo, so the arrive must not precede the first member in that order,
    /// nor follow the last. An open phase is judged only in an execution
    /// that ended (`Execution::partial` is false).
    pub(crate) fn syncwarp_mask(&mut self, f: &Ordered) {
        let exec = self.exec;
        if !self.rules.has(Rule::SyncwarpMask) || !exec.syncwarp.iter().any(Option::is_some) {
            return;
        }
        let Ok(order) = closure(exec, true) else {
            return;
        };
        let before = |a: EventId, b: EventId| order[b.index()].get(a.index());
        let info = |b: BarrierId| exec.syncwarp.get(b.index()).and_then(Option::as_ref);
        for p in &f.replay.phases {
            let Some(w) = info(p.barrier) else {
                continue;
            };
            let arrivers: Vec<Option<ThreadId>> = p
                .members
                .iter()
                .filter(|&&x| matches!(exec.event(x).kind, EventKind::Arrive { .. }))
                .map(|&x| exec.event(x).thread)
                .collect();
            let (Some(&first), false) = (p.members.first(), arrivers.is_empty()) else {
                continue;
            };
            // In a prefix of a run, the lanes an open phase lacks may still
            // arrive in it (then the other mask was no stray).
            if exec.partial && !p.completed {
                continue;
            }
            let last = p.members.last().copied().filter(|_| p.completed);
            for &l in &w.named {
                if arrivers.contains(&Some(l)) {
                    continue;
                }
                let stray = exec.program_order[l.index()].iter().copied().find(|&a| {
                    let ev = exec.event(a);
                    matches!(ev.kind, EventKind::Arrive { .. })
                        && ev
                            .barrier()
                            .is_some_and(|o| o != p.barrier && info(o).is_some_and(|ow| ow.warp == w.warp))
                        && !before(a, first)
                        && last.is_none_or(|z| !before(z, a))
                });
                if let Some(a) = stray {
                    let msg = format!(
                        "{} executes a __syncwarp with another mask while a phase of {} (mask {:#x}), which names its thread, is open, and never arrives in that phase",
                        self.n(a),
                        self.barrier_name(p.barrier),
                        w.mask
                    );
                    self.report(Rule::SyncwarpMask, msg, vec![a, first]);
                }
            }
        }
    }
}
