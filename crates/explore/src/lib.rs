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

mod analysis;
mod explorer;
mod reductions;
mod search;
mod semantics;
mod state;

pub use search::driver::WORKER_STACK;
pub use search::liveness;
pub use search::outcomes::{OutcomeClass, OutcomeKind, Outcomes};
pub use state::answer::{Finding, Step, Stop, Witness};
pub use state::options::{Limits, Reductions, SearchOptions, DEFAULT_MAX_MEMORY, DEFAULT_MAX_STATES};
pub use state::par;

use bc_graph::Program;
use bc_syntax::FindingKind;
use search::Explorer;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Distinct states visited (a state a chain passed through counts
    /// each time: docs/explorer.md, "Reductions", item 9).
    pub states: u64,
    /// The states among them the search stored (all but those chains
    /// passed through).
    pub stored: u64,
    /// Distinct executions that ended (every thread finished, or stuck).
    pub executions: u64,
    pub elapsed: Duration,
    /// Decided on one execution (`Reductions::det`, `search/det.rs`).
    pub one_run: bool,
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

/// What a search adds to as it goes, for a progress display shared by the
/// searches of a run.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// States stored (after every batch).
    pub states: std::sync::Arc<AtomicU64>,
    /// Finding kinds found so far: each search adds one per kind, when a
    /// worker first finds it (before the witness is shortened, and before
    /// the fair-cycle analysis that runs after the search).
    pub findings: std::sync::Arc<AtomicU64>,
}

/// [`explore`], adding to `counters` as the search goes.
pub fn explore_counting(program: &Program, opts: SearchOptions, counters: &Counters) -> Outcome {
    let mut e = Explorer::new(program, opts);
    e.counter = Some(counters.states.clone());
    e.kinds = Some(std::sync::Arc::new(search::KindsSeen {
        seen: std::sync::Mutex::new(std::collections::BTreeSet::new()),
        findings: counters.findings.clone(),
    }));
    e.run()
}

#[cfg(test)]
mod tests;
