//! copy-not-waited: an asynchronous copy's completion must be observed by
//! the program before it ends (the CUDA guide's one-dimensional TMA
//! example waits at the end of the kernel for the copy to be done with
//! shared memory, whose lifetime is the block's; `docs/semantics.md`,
//! "Asynchronous copies").

use crate::facts::Ordered;
use crate::Checker;
use bc_graph::{EventId, EventKind};
use bc_models::Rule;

impl Checker<'_> {
    /// copy-not-waited, on an execution that ended with every thread
    /// finished ([`bc_graph::Execution::finished`]): the latest completion
    /// of each copying agent the explorer does not know observed
    /// ([`bc_graph::ThreadFacts::copies`]: its latest arrive or lowered
    /// transaction count) executes before some event of a thread
    /// that is not an agent. Not judged on a prefix, where a wait may still
    /// come, nor where a thread is stuck or spins forever (deadlock and
    /// nontermination say more).
    pub(crate) fn copy_not_waited(&mut self, f: &Ordered) {
        let exec = self.exec;
        if exec.partial || !exec.finished || !self.rules.has(Rule::CopyNotWaited) {
            return;
        }
        let facts = |e: EventId| exec.event(e).thread.map(|t| exec.thread(t));
        let users: Vec<EventId> = exec.ids().filter(|&e| facts(e).is_some_and(|t| !t.agent)).collect();
        for (t, po) in exec.program_order.iter().enumerate() {
            if !exec.thread(bc_graph::ThreadId(t as u32)).copies {
                continue;
            }
            let latest = po.iter().rev().copied().find(|&e| match exec.event(e).kind {
                // A bulk-group copy's arrives around its write are not its
                // completion.
                EventKind::Arrive { .. } => match exec.event(e).target {
                    bc_graph::Target::Barrier(b) => !exec.props(b).copy_written,
                    _ => true,
                },
                EventKind::Tx { delta, .. } => delta <= 0,
                _ => false,
            });
            let Some(e) = latest else { continue };
            if !users.iter().any(|&u| f.eb(e, u)) {
                let msg = format!(
                    "{} completes a copy that no thread waits for: nothing of the program is ordered after it",
                    self.n(e)
                );
                self.report(Rule::CopyNotWaited, msg, vec![e]);
            }
        }
    }
}
