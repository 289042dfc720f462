//! The explorer: a stateful, breadth-first model checker over the interleavings
//! of a [`Program`]'s threads.
//!
//! It is operational: threads step one visible operation at a time, barrier
//! objects count arrivals and cut phases, and a wait may complete on any
//! completed phase it is entitled to (`docs/semantics.md`), so every bmo
//! order and every participates-in choice is enumerated. A state holds the
//! threads, memory, barrier counters and the *history* in the formal
//! model's own terms (each thread's events, each bmo, each wait's
//! participants) but not the interleaving, so interleavings that differ only
//! in the order of independent operations meet in one visited state, while
//! executions the rules could tell apart never do.
//!
//! The explorer flags the findings it can see operationally (deadlock,
//! uninitialized barrier, joins missing, counts) and hands every finished or
//! stuck execution to the independent rule checker (`bc-rules`); the two
//! verdicts are kept apart in [`Outcome`] so tests can compare them.

mod budget;
mod canon;
mod choices;
mod compact;
mod encode;
mod eval;
mod expand;
mod explorer;
mod fair;
mod fuse;
mod jmask;
pub mod liveness;
mod options;
mod outcomes;
pub mod par;
mod por;
mod record;
mod replay;
mod required;
mod rules;
mod search;
mod state;
mod step;
mod symmetry;
mod system;
pub(crate) mod witness;
mod worker;

pub use options::{Limits, Reductions, SearchOptions, DEFAULT_MAX_MEMORY, DEFAULT_MAX_STATES};
pub use outcomes::{OutcomeClass, OutcomeKind, Outcomes};
pub use search::WORKER_STACK;
pub(crate) use system::Choice;

use bc_graph::Program;
use bc_syntax::{FindingKind, Span};
use explorer::Explorer;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Why the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every reachable state was visited.
    Exhausted,
    StateLimit,
    /// The stored executions grew past the memory budget (a loop that
    /// performs barrier operations or plain accesses forever: each
    /// iteration extends the execution, so no state repeats).
    MemoryLimit,
    Timeout,
    /// A thread issued a copy while every agent of its copy site was still
    /// busy ([`bc_graph::copies::COPY_AGENTS`] and the other pool sizes there): the search cannot run the
    /// copy without ordering it after another.
    CopyLimit,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Exhausted => "exhausted",
            Stop::StateLimit => "state-limit",
            Stop::MemoryLimit => "memory-limit",
            Stop::Timeout => "timeout",
            Stop::CopyLimit => "copy-limit",
        }
    }
}

/// One visible step of a witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub thread: String,
    pub span: Span,
    /// The statement, e.g. `arrive B`.
    pub text: String,
    /// What it did, e.g. `B: arrive count 1 of 2`.
    pub effect: String,
}

/// A witness execution: the interleaving that reached the finding, and the
/// execution in formal terms (bmo per barrier, participates-in per wait).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    pub steps: Vec<Step>,
    /// Per barrier instance with operations: (name, labels of its ops in bmo).
    pub bmo: Vec<(String, Vec<String>)>,
    /// Per completed wait: (label of the wait, labels of its participants).
    pub participates_in: Vec<(String, Vec<String>)>,
    /// Labels of waits that never complete.
    pub stuck: Vec<String>,
    /// Labels of the events the finding is about.
    pub focus: Vec<String>,
    /// For a lasso (a fair infinite execution): the step where the cycle
    /// begins; the steps from there on repeat forever.
    pub cycle_start: Option<usize>,
    /// Where the finding is in the source: the statements of the `focus`
    /// events, else of the stuck waits, else of the violated assertion.
    /// Empty when none of these exists (the last step is then the place).
    pub spans: Vec<Span>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
    pub witness: Witness,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Distinct states visited.
    pub states: u64,
    /// Distinct executions that ended (every thread finished, or stuck).
    pub executions: u64,
    pub elapsed: Duration,
}

/// The result of exploring one program.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// One finding per kind (the first found in search order), sorted by kind.
    pub findings: Vec<Finding>,
    pub stats: Stats,
    pub stop: Stop,
    /// Kinds the explorer saw operationally.
    pub operational: std::collections::BTreeSet<FindingKind>,
    /// Kinds the rule checker reported on finished or stuck executions.
    pub judged: std::collections::BTreeSet<FindingKind>,
    /// Kinds the explorer saw only on operations that act on no barrier
    /// object (e.g. `s_barrier_leave` with nothing joined): no execution
    /// shows them, so the rule checker cannot judge them.
    pub objectless: std::collections::BTreeSet<FindingKind>,
    /// Executions the rule checker found structurally invalid (explorer bugs).
    pub internal_errors: Vec<String>,
    /// The outcome set, when [`SearchOptions::outcomes`] asked for it (partial
    /// when `stop` is not `Exhausted`).
    pub outcomes: Option<Outcomes>,
}

impl Outcome {
    pub fn verdict(&self) -> std::collections::BTreeSet<FindingKind> {
        self.findings.iter().map(|f| f.kind).collect()
    }
}

/// Explores every reachable state of `program`.
pub fn explore(program: &Program, opts: SearchOptions) -> Outcome {
    Explorer::new(program, opts).run()
}

/// [`explore`], adding the number of states it stores to `states` as the
/// search goes (after every batch), for a progress display.
pub fn explore_counting(program: &Program, opts: SearchOptions, states: std::sync::Arc<AtomicU64>) -> Outcome {
    let mut e = Explorer::new(program, opts);
    e.counter = Some(states);
    e.run()
}

#[cfg(test)]
mod tests;
