//! The one place where what a command asks of its searches becomes the
//! explorer's options: every subcommand states its flags as a [`Search`]
//! and calls [`Search::options`]; no other code of the command line builds
//! a [`SearchOptions`] or a [`CheckOptions`] (the tests build their own).

use crate::{CheckOptions, ProgressChoice};
use bc_explore::{Limits, Reductions, SearchOptions};
use bc_models::Model;
use std::time::Duration;

/// What a command asks of every search, in the command line's terms.
#[derive(Clone, Copy, Debug)]
pub struct Search {
    /// `--max-states`.
    pub max_states: u64,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--max-memory`, in MiB; none: the explorer's default budget.
    pub max_memory_mib: Option<u64>,
    /// Threads, already clamped to the machine (`--jobs`).
    pub jobs: usize,
    /// Collect the outcome set (`--outcomes`).
    pub outcomes: bool,
    /// `--fail-fast`: each test's search stops at its first finding that
    /// the test's `expect` does not allow.
    pub fail_fast: bool,
    /// The switches that turn an analysis or a reduction off (the hidden
    /// `--no-liveness`; `--no-compact`, `--no-canonical`, `--no-symmetry`,
    /// `--no-fuse`, `--no-por`, `--no-chain`, `--no-det`).
    pub no_liveness: bool,
    pub no_compact: bool,
    pub no_canonical: bool,
    pub no_symmetry: bool,
    pub no_fuse: bool,
    pub no_por: bool,
    pub no_chain: bool,
    pub no_det: bool,
}

/// `--max-states`' default.
pub fn default_max_states() -> u64 {
    bc_explore::DEFAULT_MAX_STATES
}

impl Default for Search {
    /// The explorer's defaults, on one thread.
    fn default() -> Search {
        Search {
            max_states: default_max_states(),
            timeout: None,
            max_memory_mib: None,
            jobs: 1,
            outcomes: false,
            fail_fast: false,
            no_liveness: false,
            no_compact: false,
            no_canonical: false,
            no_symmetry: false,
            no_fuse: false,
            no_por: false,
            no_chain: false,
            no_det: false,
        }
    }
}

impl Search {
    /// The options of a check under `model` (overriding the file's line
    /// when given) and the progress model `progress` chooses.
    pub fn options(self, model: Option<Model>, progress: ProgressChoice) -> CheckOptions {
        CheckOptions {
            model,
            search: SearchOptions {
                limits: Limits {
                    states: self.max_states,
                    time: self.timeout,
                    memory: self
                        .max_memory_mib
                        .map_or(bc_explore::DEFAULT_MAX_MEMORY, |m| m.saturating_mul(1 << 20)),
                },
                reductions: Reductions {
                    compact: !self.no_compact,
                    canonical: !self.no_canonical,
                    symmetry: !self.no_symmetry,
                    fuse: !self.no_fuse,
                    por: !self.no_por,
                    chain: !self.no_chain,
                    det: !self.no_det,
                },
                liveness: !self.no_liveness,
                jobs: self.jobs,
                verify_encoding: false,
                outcomes: self.outcomes,
                // Asked for here; each test's `expect` fills it in
                // (`explore_program`).
                fail_fast: self.fail_fast.then(bc_syntax::KindSet::default),
                // `check` sets it (signals.rs).
                cancel: None,
            },
            progress,
            counters: None,
            default_model: None,
        }
    }
}

impl CheckOptions {
    /// The threads a check may use: for one search, or shared by several
    /// files checked side by side ([`crate::check_all`]).
    pub fn jobs(&self) -> usize {
        self.search.jobs
    }

    /// These options with one thread per search, for files checked side
    /// by side.
    pub fn one_job(&self) -> CheckOptions {
        CheckOptions {
            search: SearchOptions { jobs: 1, ..self.search },
            ..self.clone()
        }
    }

    /// These options with every search adding the states it stores and
    /// the kinds it finds to `counters` (for a progress bar).
    pub fn counting_into(&self, counters: Option<bc_explore::Counters>) -> CheckOptions {
        CheckOptions {
            counters,
            ..self.clone()
        }
    }
}
