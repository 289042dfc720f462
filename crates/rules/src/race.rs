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
    pub(crate) fn race(&mut self, f: &Ordered) {
        let exec = self.exec;
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
                if !f.eb(a, b) && !f.eb(b, a) {
                    let msg = format!("{} and {} are not ordered by executes-before", self.n(a), self.n(b));
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
