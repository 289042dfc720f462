//! The rule checker: judges one [`Execution`] against the rules of the AMDGPU
//! barrier execution model ("AMDGPU Execution Synchronization", section
//! "Execution Model"), by name, plus the CUDA rules and the race rule of
//! `docs/semantics.md`.
//!
//! It is deliberately independent of the explorer: it recomputes the phases
//! of every barrier from its bmo, joined-before from program order, and
//! executes-before as a transitive closure, and it checks that the
//! participates-in relation the explorer chose is one the model allows. An
//! execution that breaks those structural constraints is reported as
//! [`Violation::inconsistent`] - a bug in whoever built it, never a user
//! finding.
//!
//! The shared facts are computed once (`facts.rs`, with the bmo replay in
//! `phases.rs`); each rule is one function named as in `Rule::name()`, in a
//! module per family: `structure.rs` (bmo, participates-in,
//! executes-before-consistent), `counts.rs` (first-bmo-init,
//! drop-not-negative, expected-count-update, count-mismatch, arrive-twice),
//! `join.rs` (joined-before, drop-needs-join, arrive-then-drop,
//! wait-needs-join), `wait.rs` (wait-completes, phase-with,
//! arrive-before-wait), `token.rs` (token-phase, token-misuse),
//! `syncwarp.rs` (syncwarp-mask), `divergent.rs` (divergent-barrier),
//! `usage.rs` (privileged-barrier, uncooperative-grid-sync,
//! invalid-barrier), `copies.rs` (copy-not-waited) and `race.rs`.
//! `docs/ARCHITECTURE.md` lists them with the explorer's counterparts.
//!
//! [`Violation::inconsistent`]: Violation::is_inconsistent

use bc_graph::{BarrierId, EventId, Execution};
use bc_models::{Rule, RuleSet};
use bc_syntax::FindingKind;

mod copies;
mod counts;
mod divergent;
mod facts;
mod join;
mod joined;
mod phases;
mod race;
mod structure;
mod syncwarp;
mod token;
mod usage;
mod wait;

pub use facts::{executes_before, memory_order};

/// One broken rule in one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The finding, or `None` when the execution itself is not a valid
    /// candidate (a structural constraint is broken).
    pub kind: Option<FindingKind>,
    /// The rule's name (as in `docs/semantics.md`).
    pub rule: &'static str,
    pub message: String,
    /// The events that show it, most important first.
    pub events: Vec<EventId>,
}

impl Violation {
    pub fn is_inconsistent(&self) -> bool {
        self.kind.is_none()
    }
}

/// How messages name events and barrier objects (the checker has no program).
pub trait Names {
    fn event(&self, e: EventId) -> String;
    fn barrier(&self, b: BarrierId) -> String;
    fn thread(&self, t: bc_graph::ThreadId) -> String {
        format!("thread {}", t.0)
    }
}

/// Names by number, for tests and hand-built executions.
pub struct Numbered;

impl Names for Numbered {
    fn event(&self, e: EventId) -> String {
        format!("event {}", e.0)
    }
    fn barrier(&self, b: BarrierId) -> String {
        format!("barrier {}", b.0)
    }
}

/// Judges `exec` against the enabled `rules` of a model whose counts stay
/// at most `max_count` (the model's, if it has one).
pub fn check(exec: &Execution, rules: RuleSet, max_count: Option<i64>, name: &dyn Names) -> Vec<Violation> {
    check_ordered(exec, None, rules, max_count, name)
}

/// [`check`], given the closure [`executes_before`] already computed for
/// `exec` (the explorer computes it to compact a history, then has the
/// same execution judged; a closure of a thousand-event history is a
/// sizable part of the cost of a state).
pub fn check_ordered(
    exec: &Execution,
    before: Option<Vec<bc_graph::bits::Bits>>,
    rules: RuleSet,
    max_count: Option<i64>,
    name: &dyn Names,
) -> Vec<Violation> {
    let mut c = Checker {
        exec,
        before,
        rules,
        max_count,
        name,
        out: Vec::new(),
    };
    c.run();
    c.out
}

struct Checker<'a> {
    exec: &'a Execution,
    /// executes-before's closure, when the caller had it ([`check_ordered`]).
    before: Option<Vec<bc_graph::bits::Bits>>,
    rules: RuleSet,
    max_count: Option<i64>,
    name: &'a dyn Names,
    out: Vec<Violation>,
}

impl Checker<'_> {
    /// Every rule, in a fixed order: the explorer keeps the first violation
    /// of each finding kind, so rules that report one kind run in the order
    /// of their findings' precedence (token-phase before phase-with).
    fn run(&mut self) {
        let f = facts::Facts::new(self.exec, self.rules);
        self.bmo(&f);
        self.first_bmo_init();
        self.drop_not_negative(&f);
        self.expected_count_update(&f);
        self.count_mismatch(&f);
        self.arrive_twice(&f);
        self.count_overflow(&f);
        self.divergent_barrier(&f);
        self.aligned_barrier(&f);
        self.barrier_forms(&f);
        self.aligned_wait();
        self.privileged_barrier();
        self.uncooperative_grid_sync();
        self.participates_in(&f);
        // The rules below read executes-before, which needs no cycle.
        let Some(f) = self.executes_before_consistent(f) else {
            return;
        };
        self.drop_needs_join(&f);
        self.arrive_then_drop(&f);
        self.arrive_before_wait(&f);
        self.token_misuse(&f);
        self.token_phase(&f);
        self.wait_needs_join(&f);
        self.wait_completes(&f);
        self.phase_with(&f);
        self.syncwarp_mask(&f);
        self.invalid_barrier(&f);
        self.wait_after_init(&f);
        self.copy_not_waited(&f);
        self.init_seen_by_async_proxy(&f);
        self.race(&f);
    }

    /// Records a violation of `rule` when the model enables it; what it
    /// reports is the rule's finding ([`Rule::finding`]).
    fn report(&mut self, rule: Rule, message: String, events: Vec<EventId>) {
        if self.rules.has(rule) {
            let kind = rule.finding().expect("reported rules have a finding");
            self.out.push(Violation {
                kind: Some(kind),
                rule: rule.name(),
                message,
                events,
            });
        }
    }

    /// Records a broken structural constraint (whatever the model enables).
    fn inconsistent(&mut self, rule: &'static str, message: String, events: Vec<EventId>) {
        self.out.push(Violation {
            kind: None,
            rule,
            message,
            events,
        });
    }

    fn n(&self, e: EventId) -> String {
        self.name.event(e)
    }

    fn barrier_name(&self, b: BarrierId) -> String {
        self.name.barrier(b)
    }

    fn thread_name(&self, t: bc_graph::ThreadId) -> String {
        self.name.thread(t)
    }
}

#[cfg(test)]
mod tests;
