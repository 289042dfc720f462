//! The race rule (`docs/semantics.md`, "The rules, by name"; project notes,
//! section 6, memory): barriers only order execution, so two plain
//! accesses must be ordered by barrier-executes-before ("Execution Model",
//! its note on memory visibility).

use crate::facts::Ordered;
use crate::{Checker, Violation};
use bc_graph::{EventId, EventKind};
use bc_syntax::FindingKind;

impl Checker<'_> {
    /// race: plain accesses of one location from different threads, one a
    /// write, unordered by executes-before. Always on (no model data name).
    /// Where some barrier orders memory only through fences
    /// (`BarrierProps::needs_fence`), or some arrive is relaxed, unordered by
    /// [`crate::facts::memory_order`] instead.
    pub(crate) fn race(&mut self, f: &Ordered) {
        let exec = self.exec;
        let fenced = exec.props.iter().any(|p| p.needs_fence)
            || exec
                .events
                .iter()
                .any(|e| matches!(e.kind, EventKind::Arrive { relaxed: true, .. }));
        let memory = if fenced {
            match crate::facts::memory_order(exec) {
                Ok(m) => Some(m),
                // A cycle: executes-before-consistent reports it.
                Err(_) => return,
            }
        } else {
            None
        };
        let ordered = |a: EventId, b: EventId| match &memory {
            Some(m) => m[b.index()].get(a.index()),
            None => f.eb(a, b),
        };
        let order = if fenced {
            "executes-before through fences"
        } else {
            "executes-before"
        };
        let plain: Vec<EventId> = exec
            .ids()
            .filter(|&e| matches!(exec.event(e).kind, EventKind::Read | EventKind::Write))
            .collect();
        for (i, &a) in plain.iter().enumerate() {
            for &b in &plain[i + 1..] {
                let (ea, ebv) = (exec.event(a), exec.event(b));
                if ea.target != ebv.target || ea.thread == ebv.thread {
                    continue;
                }
                if !matches!(ea.kind, EventKind::Write) && !matches!(ebv.kind, EventKind::Write) {
                    continue;
                }
                if !ordered(a, b) && !ordered(b, a) {
                    let msg = format!("{} and {} are not ordered by {order}", self.n(a), self.n(b));
                    self.out.push(Violation {
                        kind: Some(FindingKind::Race),
                        rule: "race",
                        message: msg,
                        events: vec![a, b],
                    });
                }
            }
        }
    }
}
