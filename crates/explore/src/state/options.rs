//! How to search: the resource [`Limits`] (states, time, memory) with the
//! one test of them, [`Limits::limit_reached`]; the state-space
//! [`Reductions`]; and the [`SearchOptions`] that bundle them with what to
//! do besides exploring (jobs, liveness, outcomes). A search never changes
//! its options.

use crate::state::answer::Stop;
use std::time::Duration;

/// The default memory budget of a search: everything it holds is charged
/// as it is built (`budget.rs`), so its peak stays within the budget plus
/// 64 MiB (measured in docs/reliability.md).
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;

/// The default state limit of a search.
pub const DEFAULT_MAX_STATES: u64 = 2_000_000;

/// The resource limits of a search: when one is reached, the search stops
/// with the matching [`Stop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Stop (`state-limit`) before numbering more than this many states.
    pub states: u64,
    /// Stop (`timeout`) once this much time has passed.
    pub time: Option<Duration>,
    /// Stop (`memory-limit`) before the search holds more than this many
    /// bytes (`budget.rs`).
    pub memory: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            states: DEFAULT_MAX_STATES,
            time: None,
            memory: DEFAULT_MAX_MEMORY,
        }
    }
}

impl Limits {
    /// The limit a search has reached, if any, with `states` states
    /// numbered, `bytes` bytes held and `elapsed` time passed (each `None`
    /// where it is not measured at this point). The state limit is tested
    /// first, then memory, then time. Every test of a limit goes through
    /// here.
    pub fn limit_reached(&self, states: Option<u64>, bytes: Option<u64>, elapsed: Option<Duration>) -> Option<Stop> {
        if states.is_some_and(|n| n >= self.states) {
            Some(Stop::StateLimit)
        } else if bytes.is_some_and(|b| b > self.memory) {
            Some(Stop::MemoryLimit)
        } else if elapsed.is_some_and(|t| self.time.is_some_and(|max| t >= max)) {
            Some(Stop::Timeout)
        } else {
            None
        }
    }
}

/// The state-space reductions (docs/explorer.md); each one on by default.
/// None of them changes the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reductions {
    /// Forget settled history, so loops that synchronize repeat their
    /// states.
    pub compact: bool,
    /// Keep the arrivals of a phase sorted, where sound.
    pub canonical: bool,
    /// Merge states that differ by a renaming of interchangeable threads.
    pub symmetry: bool,
    /// Take a wait whose phase has completed right away, in the step that
    /// made it possible (completed-wait fusion).
    pub fuse: bool,
    /// Where every execution is finite, step only the first group of
    /// threads (connected by shared objects) that can step, and within it
    /// a fusible barrier's opening arrive or a step its phase requires
    /// alone (partial-order reduction, `por.rs`, `required.rs`).
    pub por: bool,
    /// Where every execution is finite, a state whose reduced choices are
    /// a single step is not stored: the search takes that step in the same
    /// transition (chains, docs/explorer.md, "Reductions", item 9).
    pub chain: bool,
    /// Where the program is deterministic (`analysis/determinism.rs`),
    /// run one execution, and decide every other by it when its phases
    /// could have been filled no other way (`search/det.rs`,
    /// `reductions/det.rs`); else search as usual.
    pub det: bool,
}

impl Default for Reductions {
    fn default() -> Reductions {
        Reductions {
            compact: true,
            canonical: true,
            symmetry: true,
            fuse: true,
            por: true,
            chain: true,
            det: true,
        }
    }
}

impl Reductions {
    /// Every reduction off.
    pub const NONE: Reductions = Reductions {
        compact: false,
        canonical: false,
        symmetry: false,
        fuse: false,
        por: false,
        chain: false,
        det: false,
    };
}

/// How to search: the limits, the reductions, and what to do besides
/// exploring. Read only: a search never changes its options.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions {
    pub limits: Limits,
    pub reductions: Reductions,
    /// Look for fair cycles (nontermination) after the search (skipped on
    /// programs whose every execution is finite).
    pub liveness: bool,
    /// Worker threads that expand each search level (1: no threads).
    /// The answer does not depend on it.
    pub jobs: usize,
    /// Testing aid: check that every stored state's compact encoding
    /// decodes back to the state, and that the steps partial-order
    /// reduction leaves for later commute with the ones it takes
    /// (`reductions/por.rs`, `check_independent`) and compaction forgets
    /// nothing where it says it cannot. The last two, which cost far more,
    /// run on every state of a search's first 2,048 and on every eighth
    /// after (`search/mod.rs`, `VERIFY_ALL`).
    pub verify_encoding: bool,
    /// Collect the outcome set ([`Outcome::outcomes`], `check
    /// --outcomes`); off, the search does no extra work.
    pub outcomes: bool,
    /// `check --fail-fast`: the kinds the test's `expect` allows; the
    /// search stops (`Stop::FailFast`) at the first finding of another.
    pub fail_fast: Option<bc_syntax::KindSet>,
    /// Cancels the search once set (by another thread, or a signal
    /// handler of the caller): it stops with `Stop::Interrupted`, keeping
    /// what it found, at its next check of the budget.
    pub cancel: Option<&'static std::sync::atomic::AtomicBool>,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions {
            limits: Limits::default(),
            reductions: Reductions::default(),
            liveness: true,
            jobs: 1,
            verify_encoding: false,
            outcomes: false,
            fail_fast: None,
            cancel: None,
        }
    }
}
