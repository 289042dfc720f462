//! What a search answers, as plain data: why it ended ([`Stop`]), and its
//! findings ([`Finding`]) with their witness executions ([`Witness`], made
//! of [`Step`]s). Every floor of the explorer reports in these terms; the
//! facade (`lib.rs`) re-exports them.

use bc_syntax::{FindingKind, Span};

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
    /// `check --fail-fast`: a finding the test's `expect` does not allow
    /// was found; the verdict already fails.
    FailFast,
    /// The caller cancelled the search (`SearchOptions::cancel`: the
    /// command line on Ctrl-C or SIGTERM); what it found so far is kept.
    Interrupted,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Exhausted => "exhausted",
            Stop::StateLimit => "state-limit",
            Stop::MemoryLimit => "memory-limit",
            Stop::Timeout => "timeout",
            Stop::CopyLimit => "copy-limit",
            Stop::FailFast => "fail-fast",
            Stop::Interrupted => "interrupted",
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
    /// The events it added to the execution, by the labels' ids (`T1#2`:
    /// the thread's second event), so that bmo and participates-in can be
    /// joined to the steps; none for a step that added none (a spin, a
    /// local continuation).
    pub events: Vec<String>,
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
