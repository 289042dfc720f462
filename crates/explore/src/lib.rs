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
mod compact;
mod eval;
pub mod liveness;
mod outcomes;
mod state;

pub use outcomes::{OutcomeClass, OutcomeKind, Outcomes};

use bc_graph::bits::Bits;
use bc_graph::*;
use bc_syntax::{FindingKind, Quantifier, Span};
use state::{State, Status};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

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
}

impl Default for Reductions {
    fn default() -> Reductions {
        Reductions {
            compact: true,
            canonical: true,
            symmetry: true,
            fuse: true,
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
    /// decodes back to the state.
    pub verify_encoding: bool,
    /// Collect the outcome set ([`Outcome::outcomes`], `check
    /// --outcomes`); off, the search does no extra work.
    pub outcomes: bool,
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
        }
    }
}

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
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Exhausted => "exhausted",
            Stop::StateLimit => "state-limit",
            Stop::MemoryLimit => "memory-limit",
            Stop::Timeout => "timeout",
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

/// A choice at one state: thread `thread` steps; for a wait, `phase` picks
/// the completed phase (index into the barrier's done list) it completes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    thread: u32,
    phase: Option<u32>,
}

/// Per state number: its parent's number and the choice that reached it
/// (`u32::MAX` and `None` for the initial state).
type SearchTree = Vec<(u32, Option<Choice>)>;

/// Frontier states expanded between two merges.
const BATCH: usize = 256;

/// A batch of frontier states to expand: `items[start..end]`, in chunks
/// of `chunk` claimed from `queue` (set by the pool).
#[derive(Clone)]
struct Batch {
    /// Batches are numbered in submission order.
    seq: u64,
    items: std::sync::Arc<Vec<Item>>,
    start: usize,
    end: usize,
    chunk: usize,
    queue: std::sync::Arc<par::ChunkQueue>,
    /// When the state limit is reached already (the states numbered before
    /// this level, `Some(their count)`): see [`Explorer::expand`].
    spent: Option<u32>,
}

/// Expands batches: `submit` starts one, `collect` returns the expanded
/// states of the oldest batch not yet collected, in frontier order (at
/// most [`IN_FLIGHT`] batches are submitted and not collected).
trait Expander<'p> {
    fn submit(&mut self, batch: Batch);
    fn collect(&mut self) -> Vec<Part>;
    /// Batches submitted and not yet collected.
    fn in_flight(&self) -> usize;
}

/// Batches submitted ahead of the merge: with two, a worker that finishes
/// its share of one batch goes on with the next instead of waiting for the
/// slowest chunk of the batch and for the merge.
const IN_FLIGHT: usize = 2;

/// Expanded states of one chunk and their successors, in order (the
/// successors of `heads[0]` first): two allocations per chunk, not per
/// state.
#[derive(Default)]
struct Part {
    heads: Vec<Expanded>,
    succs: Vec<Succ>,
}

/// One job: the batch is expanded on this thread when collected.
struct Inline<'p> {
    worker: Explorer<'p>,
    batches: std::collections::VecDeque<Batch>,
}

impl<'p> Expander<'p> for Inline<'p> {
    fn submit(&mut self, batch: Batch) {
        self.batches.push_back(batch);
    }
    fn in_flight(&self) -> usize {
        self.batches.len()
    }
    fn collect(&mut self) -> Vec<Part> {
        let b = self.batches.pop_front().expect("a batch was submitted");
        let mut part = Part::default();
        for it in &b.items[b.start..b.end] {
            let head = self.worker.expand(it, &mut part.succs, b.spent);
            part.heads.push(head);
        }
        vec![part]
    }
}

/// What a worker hands back for a batch: its chunks, or the panic that
/// ended it (its claimed chunks are then lost, so the search cannot go on).
type WorkerResult = Result<Vec<(usize, Part)>, Box<dyn std::any::Any + Send>>;

/// The stack of each exploration worker. Parsing bounds every nesting
/// (`bc_syntax::MAX_NESTING`), so any program's walks fit well within
/// the default 2 MiB; an explicit size keeps the answer from depending on
/// the platform's default for spawned threads.
pub const WORKER_STACK: usize = 16 << 20;

/// Several jobs: every worker thread gets the batch and claims chunks.
struct Pool {
    jobs: Vec<std::sync::mpsc::Sender<Batch>>,
    /// Each worker's chunks of a batch, tagged with the batch's number, or
    /// the payload of the panic that ended the worker.
    results: std::sync::mpsc::Receiver<(u64, WorkerResult)>,
    /// Submitted batches not yet collected: number and chunk count.
    pending: std::collections::VecDeque<(u64, usize)>,
    /// Results of later batches that arrived while collecting an earlier one.
    early: Vec<(u64, Vec<(usize, Part)>)>,
}

impl<'p> Expander<'p> for Pool {
    fn submit(&mut self, mut batch: Batch) {
        let len = batch.end - batch.start;
        batch.chunk = (len / (self.jobs.len() * 8)).clamp(1, 64);
        let nchunks = len.div_ceil(batch.chunk);
        batch.queue = std::sync::Arc::new(par::ChunkQueue::new(nchunks));
        self.pending.push_back((batch.seq, nchunks));
        for tx in &self.jobs {
            // A worker that panicked has stopped listening; its panic is
            // waiting in `results`, where `collect` raises it.
            let _ = tx.send(batch.clone());
        }
    }
    fn collect(&mut self) -> Vec<Part> {
        let (seq, nchunks) = self.pending.pop_front().expect("a batch was submitted");
        let mut parts = Vec::with_capacity(self.jobs.len());
        self.early.retain_mut(|(s, p)| {
            if *s == seq {
                parts.push(std::mem::take(p));
            }
            *s != seq
        });
        while parts.len() < self.jobs.len() {
            let (s, p) = self.results.recv().expect("an exploration worker stopped");
            // A worker panicked: its chunks are lost. Panic on this thread
            // with its payload; unwinding drops the pool (the job channels
            // close), so the other workers finish their batch and end, the
            // scope joins them, and the panic reaches the caller instead
            // of this thread waiting for the lost chunks forever.
            let p = p.unwrap_or_else(|payload| std::panic::resume_unwind(payload));
            if s == seq {
                parts.push(p);
            } else {
                self.early.push((s, p));
            }
        }
        par::merge(parts, nchunks)
    }
    fn in_flight(&self) -> usize {
        self.pending.len()
    }
}

/// The merging thread's side of the search.
#[derive(Default)]
struct Search {
    /// States numbered so far (numbers are given in the order found).
    count: u32,
    /// The state graph for the liveness analysis (when it runs).
    nodes: Vec<liveness::Node>,
    edges: Vec<liveness::Edge>,
    /// Step labels: each distinct step key gets the next number.
    labels: std::collections::HashMap<liveness::StepKey, u32>,
    /// New states: the next level.
    next: Vec<Item>,
    /// Search-tree entries of this merge, appended to the tree at its end.
    tree_tail: SearchTree,
    stored_bytes: u64,
    /// The state graph's bytes as last charged to the budget.
    graph_bytes: u64,
    /// The heap bytes of the state graph's nodes (their large sets).
    node_heap: u64,
}

impl Search {
    /// The label of step `key`, numbered on first sight.
    fn label(labels: &mut std::collections::HashMap<liveness::StepKey, u32>, key: liveness::StepKey) -> u32 {
        let next = labels.len() as u32;
        *labels.entry(key).or_insert(next)
    }
}

/// A state of the current search level, with its number, its parent's
/// and the choice that reached it.
struct Item {
    id: u32,
    parent: u32,
    via: Option<Choice>,
    state: par::SlotRef<par::Bytes>,
    /// `Explorer::ident` for this state (`None`: the identity).
    ident: Option<std::sync::Arc<[u32]>>,
}

/// A state expanded by a worker (its successors follow in its `Part`).
struct Expanded {
    id: u32,
    node: Option<liveness::Node>,
    /// The self-loops of its `await` spins, with their step keys.
    spin_edges: Vec<(liveness::Edge, liveness::StepKey)>,
    nsuccs: u32,
}

/// One successor: the choice, the twins it stands for, the normalized
/// state, and the renaming.
struct Succ {
    choice: Choice,
    twins: Vec<u32>,
    /// The successor in the visited set (equal states share a slot).
    slot: par::SlotRef<par::Bytes>,
    ident: Option<std::sync::Arc<[u32]>>,
    query: bool,
    /// The step taken, without its thread: (site, phase, outcome).
    key: (u32, u32, u32),
}

impl Succ {
    /// The bytes the record holds until it is merged.
    fn bytes(&self) -> u64 {
        (std::mem::size_of::<Succ>() + self.twins.capacity() * 4 + self.ident.as_ref().map_or(0, |i| 16 + i.len() * 4))
            as u64
    }
}

/// The heap bytes of a state-graph node (its sets of more than 128 threads).
fn node_heap(n: &liveness::Node) -> u64 {
    (n.enabled.bytes() + n.alive.bytes() + n.started.bytes() + n.at_wait.bytes()) as u64
}

/// The hash of an encoded state (computed once, by the worker that made it).
fn hash_of(words: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(words)
}

/// What a stored state costs besides its encoding: its slot and table
/// entry (64), its search-tree entry (16), and what comes with them as
/// allocated: arena and table spare capacity, and the frontier entry while
/// the state waits for expansion (96, measured: at a 300 MiB budget the
/// 13-thread barrier test peaks at 290-300 MiB resident beyond the
/// process's own). The state graph is counted apart.
const STATE_OVERHEAD: u64 = 64 + 16 + 96;

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

/// What the explorer computes once per program, before the search, and
/// shares with its workers (read-only).
struct Analyses {
    /// Barriers some parity wait uses: their last completed phase is kept.
    parity_barriers: Vec<bool>,
    /// The barrier whose phases are kept sorted (canon.rs), if any.
    sortable: Option<usize>,
    /// Classes of interchangeable threads (symmetry.rs).
    sym_classes: Vec<Vec<usize>>,
    /// Barriers whose phase numbers matter (tokens, parity).
    token_barriers: Vec<bool>,
    /// Barriers whose history is never forgotten: parity barriers, and
    /// token barriers when a token may reach memory (compact.rs).
    pinned: Vec<bool>,
    /// Barriers whose completed waits may be fused (fuse.rs).
    lockstep: Vec<bool>,
    /// Per code and pc: the barrier and location declarations the thread
    /// may still operate on from there (history compaction).
    touches: Vec<Vec<(Vec<bool>, Vec<bool>)>>,
    /// Every thread's body ends (no `await`, no loop but `repeat`): every
    /// execution is finite, so the state graph has no cycle, there is no
    /// fair cycle to look for and no graph to record.
    finite: bool,
}

pub(crate) struct Explorer<'p> {
    p: &'p Program,
    opts: SearchOptions,
    start: Instant,
    findings: BTreeMap<FindingKind, Finding>,
    operational: std::collections::BTreeSet<FindingKind>,
    judged: std::collections::BTreeSet<FindingKind>,
    internal_errors: Vec<String>,
    sometimes_holds: Vec<bool>,
    path: Vec<Step>,
    executions: u64,
    /// Findings raised while computing the current step (operational).
    /// (kind, message, objectless): objectless findings come from operations
    /// that act on no barrier object, so no execution can show them.
    pending: Vec<(FindingKind, String, bool)>,
    /// For the state being worked on: which declared thread each thread
    /// index stands for (symmetry renames threads; witnesses show the
    /// declared names along the path).
    ident: Vec<u32>,
    objectless: std::collections::BTreeSet<FindingKind>,
    /// Per finding kind, where it was found in search order: (state
    /// number, 0 for the state itself or 1 + the choice index).
    keys: BTreeMap<FindingKind, (u32, u32)>,
    /// The search position being worked on (the key of new findings).
    key: (u32, u32),
    /// While a worker expands a state, `path` holds only the current
    /// transition's steps; this is the state the path starts from.
    prefix: Option<u32>,
    /// The search tree: per state number, its parent and the choice that
    /// reached it (shared by the workers; written between levels).
    tree: std::sync::Arc<std::sync::RwLock<SearchTree>>,
    /// Replaying a path for a witness: record nothing.
    replaying: bool,
    /// The visited set of encoded states, shared by the workers.
    visited: std::sync::Arc<par::VisitedSet<par::Bytes>>,
    /// A worker's state to build successors in (`expand`).
    scratch: Option<State>,
    /// A worker's buffer to encode successors in.
    words: Vec<u8>,
    /// A worker's state to decode expanded states into.
    parent: Option<State>,
    /// A worker's state to try fusible waits on (`fuse.rs`).
    fuse_scratch: Option<State>,
    /// The static analyses of the program, shared by the workers.
    an: std::sync::Arc<Analyses>,
    /// Where to count stored states for a progress display, if anywhere.
    counter: Option<std::sync::Arc<AtomicU64>>,
    /// The resource budget, shared by the workers.
    budget: std::sync::Arc<budget::Budget>,
    /// The bytes of working states this worker has charged to the budget.
    working: u64,
    /// The end configurations seen (when collecting outcomes).
    ends: rustc_hash::FxHashSet<outcomes::EndConfig>,
    /// The kinds fair cycles showed (when collecting outcomes).
    cycle_ends: std::collections::BTreeSet<outcomes::End>,
    /// Steps are being taken for the search, not for a witness: leave out
    /// their texts (a witness replays them).
    quiet: bool,
    /// The choice being expanded from the state `prefix` names.
    current: Option<Choice>,
    /// Testing aid: expanding the state with this number panics (a stand-in
    /// for any bug in a step), to check that a worker's panic ends the
    /// search instead of hanging it.
    #[cfg(test)]
    fault_at: Option<u32>,
}

impl<'p> Explorer<'p> {
    fn new(p: &'p Program, opts: SearchOptions) -> Explorer<'p> {
        let lockstep = fuse::lockstep_barriers(p);
        let sortable = if opts.reductions.canonical {
            canon::sortable_barrier(p, &lockstep)
        } else {
            None
        };
        let an = std::sync::Arc::new(Analyses {
            parity_barriers: Self::barriers_where(p, |op, _| matches!(op, BarrierOp::Wait(w) if w.parity.is_some())),
            touches: compact::touches(p),
            finite: p.threads.iter().all(|t| p.codes[t.code.index()].terminates()),
            lockstep,
            pinned: compact::pinned_barriers(p),
            sortable,
            sym_classes: if opts.reductions.symmetry {
                symmetry::classes(p)
            } else {
                Vec::new()
            },
            token_barriers: Self::barriers_where(p, |op, result| {
                matches!(op, BarrierOp::Wait(w) if w.token.is_some() || w.parity.is_some())
                    || matches!(result, Some(BarrierResult::Token(_)))
            }),
        });
        Explorer::with(p, opts, an, std::sync::Arc::new(par::VisitedSet::new(64)))
    }

    /// An explorer with nothing found yet, on given analyses and visited set.
    fn with(
        p: &'p Program,
        opts: SearchOptions,
        an: std::sync::Arc<Analyses>,
        visited: std::sync::Arc<par::VisitedSet<par::Bytes>>,
    ) -> Explorer<'p> {
        Explorer {
            p,
            opts,
            start: Instant::now(),
            findings: BTreeMap::new(),
            operational: Default::default(),
            judged: Default::default(),
            internal_errors: Vec::new(),
            sometimes_holds: vec![false; p.asserts.len()],
            path: Vec::new(),
            executions: 0,
            pending: Vec::new(),
            objectless: Default::default(),
            keys: BTreeMap::new(),
            key: (0, 0),
            prefix: None,
            tree: Default::default(),
            replaying: false,
            visited,
            scratch: None,
            words: Vec::new(),
            parent: None,
            fuse_scratch: None,
            quiet: false,
            current: None,
            ident: (0..p.threads.len() as u32).collect(),
            an,
            counter: None,
            #[cfg(test)]
            fault_at: None,
            budget: std::sync::Arc::new(budget::Budget::new(&opts.limits, Instant::now())),
            working: 0,
            ends: Default::default(),
            cycle_ends: Default::default(),
        }
    }

    /// Whether the search records the state graph, for the liveness
    /// analysis after it.
    fn graph(&self) -> bool {
        self.opts.liveness && !self.an.finite
    }

    /// Barrier instances some instruction of a thread applies `pred` to.
    fn barriers_where(p: &Program, pred: impl Fn(&BarrierOp, &Option<BarrierResult>) -> bool) -> Vec<bool> {
        let mut out = vec![false; p.barriers.len()];
        for t in &p.threads {
            for ins in &p.codes[t.code.index()].instrs {
                if let InstrKind::Barrier { op, sel, result } = &ins.kind {
                    let decl = match sel {
                        BarrierSel::Decl(d) | BarrierSel::JoinedOr { decl: d, .. } => *d,
                        BarrierSel::Joined { .. } => continue,
                    };
                    if pred(op, result) {
                        if let Some(b) = t.barriers[decl as usize] {
                            out[b.index()] = true;
                        }
                    }
                }
            }
        }
        out
    }

    fn run(mut self) -> Outcome {
        let mut init = State::initial(self.p);
        for t in 0..self.p.threads.len() {
            self.run_local(&mut init, t);
        }
        self.flush_pending(&init, &[]);
        let jobs = self.opts.jobs.max(1);
        let mut search = Search {
            count: 1,
            ..Search::default()
        };
        let mut words = Vec::new();
        encode::encode(&init, &mut words);
        // The decoded initial state is not kept (workers decode it again).
        drop(init);
        self.budget.charge(words.len() as u64 + STATE_OVERHEAD);
        let init = self
            .visited
            .intern_ref(hash_of(&words), &words[..], |w, arena| arena.store(w));
        // SAFETY: the visited set is cleared only after the search.
        unsafe { init.get() }.set_id(0);
        if let Some(c) = &self.counter {
            c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.tree.write().expect("tree lock").push((u32::MAX, None));
        let frontier = vec![Item {
            id: 0,
            parent: u32::MAX,
            via: None,
            state: init,
            ident: self.ident_arc(),
        }];
        let (stop, workers) = if jobs == 1 {
            let mut inline = Inline {
                worker: self.worker(),
                batches: std::collections::VecDeque::new(),
            };
            let stop = self.levels(frontier, &mut search, &mut inline);
            // Free the visited states now, as the workers of a pool do
            // (nothing after the search reads them).
            // SAFETY: the search is over; nothing reads a slot after it.
            unsafe { self.visited.clear(0, 1) };
            (stop, vec![inline.worker])
        } else {
            // A pool of workers for the whole search: each expands the
            // chunks it claims of every batch it is sent, and hands its
            // explorer back at the end.
            // Every batch was merged: the workers may free the set.
            let finished = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                let (result_tx, result_rx) = std::sync::mpsc::channel();
                let mut job_txs = Vec::new();
                let mut handles = Vec::new();
                let finished = &finished;
                for part in 0..jobs {
                    let (job_tx, job_rx) = std::sync::mpsc::channel::<Batch>();
                    job_txs.push(job_tx);
                    let result_tx = result_tx.clone();
                    let mut w = self.worker();
                    let spawned = std::thread::Builder::new()
                        .name(format!("explore-{part}"))
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(scope, move || {
                            for batch in job_rx {
                                // A panic while expanding is caught here and
                                // handed to the merging thread, which stops
                                // the search (see `Pool::collect`).
                                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    let b = &batch.items[batch.start..batch.end];
                                    let chunk = batch.chunk;
                                    par::drain(&batch.queue, |c| {
                                        let mut part = Part::default();
                                        for it in &b[c * chunk..((c + 1) * chunk).min(b.len())] {
                                            let head = w.expand(it, &mut part.succs, batch.spent);
                                            part.heads.push(head);
                                        }
                                        part
                                    })
                                }));
                                let failed = done.is_err();
                                if result_tx.send((batch.seq, done)).is_err() || failed {
                                    break;
                                }
                            }
                            // The search is over: free the visited states in
                            // parallel (nothing after the search reads them).
                            // Not after a panic: other workers may still be
                            // expanding then, and the set is freed when its
                            // last handle drops.
                            if finished.load(std::sync::atomic::Ordering::SeqCst) {
                                // SAFETY: `finished` is set only after the
                                // last merge, when every batch was collected
                                // (so every worker is done with every slot);
                                // nothing reads a slot after.
                                unsafe { w.visited.clear(part, jobs) };
                            }
                            w
                        });
                    handles.push(spawned.expect("spawning an exploration worker"));
                }
                drop(result_tx);
                let mut pool = Pool {
                    jobs: job_txs,
                    results: result_rx,
                    pending: std::collections::VecDeque::new(),
                    early: Vec::new(),
                };
                let stop = self.levels(frontier, &mut search, &mut pool);
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
                drop(pool);
                let workers: Vec<Explorer<'p>> = handles
                    .into_iter()
                    .map(|h| h.join().expect("an exploration worker panicked"))
                    .collect();
                (stop, workers)
            })
        };
        let Search {
            count,
            nodes,
            edges,
            graph_bytes,
            ..
        } = search;
        let states = count as u64;
        for w in workers {
            self.absorb(w);
        }
        self.prefix = None;
        self.path.clear();
        self.key = (u32::MAX, 0);
        let searched = stop;
        let mut stop = stop;
        if stop == Stop::Exhausted && self.graph() {
            // The visited set is freed: the search holds its state graph
            // and its tree; the analysis charges what it builds on top.
            let tree = self.tree.read().expect("tree lock").capacity() as u64 * 16;
            self.budget.set_held(graph_bytes + tree);
            if let Err(why) = self.liveness(&nodes, &edges) {
                stop = why;
            }
        }
        // `sometimes` assertions fail when no finished execution satisfies
        // them (the search saw every one, even if the liveness analysis
        // stopped at a limit).
        if searched == Stop::Exhausted {
            for (i, a) in self.p.asserts.iter().enumerate() {
                if a.quantifier == Quantifier::Sometimes && !self.sometimes_holds[i] {
                    let msg = format!(
                        "`{}`: no execution that ends with every thread finished satisfies it",
                        a.text
                    );
                    let w = Witness {
                        spans: vec![a.span],
                        ..Witness::default()
                    };
                    self.record(FindingKind::Assertion, msg, w, false);
                }
            }
        }
        self.internal_errors.sort();
        self.internal_errors.dedup();
        self.internal_errors.truncate(8);
        let outcomes = self
            .opts
            .outcomes
            .then(|| outcomes::outcome_set(self.p, &self.an.sym_classes, &self.ends, &self.cycle_ends));
        Outcome {
            findings: self.findings.into_values().collect(),
            stats: Stats {
                states,
                executions: self.executions,
                elapsed: self.start.elapsed(),
            },
            stop,
            operational: self.operational,
            judged: self.judged,
            objectless: self.objectless,
            internal_errors: self.internal_errors,
            outcomes,
        }
    }

    /// The breadth-first search, level by level in batches: while the
    /// expander works on the next [`IN_FLIGHT`] batches, this thread merges
    /// the one before. Merges happen in frontier order, so numbering does
    /// not depend on the expander. On a stop, the batches in flight are
    /// still expanded (so the findings seen do not depend on it either).
    fn levels(&mut self, frontier: Vec<Item>, search: &mut Search, expander: &mut dyn Expander<'p>) -> Stop {
        let mut frontier = std::sync::Arc::new(frontier);
        let mut seq = 0u64;
        while !frontier.is_empty() {
            let n = frontier.len();
            let mut start = 0;
            // Every state numbered from here on reaches the state limit.
            let spent = self
                .opts
                .limits
                .limit_reached(Some(search.count as u64), None, None)
                .map(|_| search.count);
            // Submits batches of this level until IN_FLIGHT are out.
            let mut fill = |expander: &mut dyn Expander<'p>| {
                while expander.in_flight() < IN_FLIGHT && start < n {
                    let end = (start + BATCH).min(n);
                    expander.submit(Batch {
                        seq,
                        items: frontier.clone(),
                        start,
                        end,
                        chunk: 0,
                        queue: std::sync::Arc::new(par::ChunkQueue::new(0)),
                        spent,
                    });
                    seq += 1;
                    start = end;
                }
            };
            let drain = |expander: &mut dyn Expander<'p>| {
                while expander.in_flight() > 0 {
                    expander.collect();
                }
            };
            loop {
                if let Some(why) = self.budget.check() {
                    drain(expander);
                    return why;
                }
                fill(expander);
                if expander.in_flight() == 0 {
                    break;
                }
                let ex = expander.collect();
                // A batch expanded in part (a worker stopped at a limit) is
                // not merged.
                if let Some(why) = self.budget.halted() {
                    drain(expander);
                    return why;
                }
                // Keep the workers busy while this batch merges.
                fill(expander);
                if let Some(why) = self.merge(ex, search) {
                    drain(expander);
                    return why;
                }
            }
            frontier = std::sync::Arc::new(std::mem::take(&mut search.next));
        }
        Stop::Exhausted
    }

    /// Merges expanded states into the search, in their order: numbers new
    /// successors, records the state graph and the search tree, and queues
    /// the new states for the next level. Returns why the search must stop,
    /// if a limit was reached (the rule checker then judges the state that
    /// reached it).
    fn merge(&mut self, parts: Vec<Part>, search: &mut Search) -> Option<Stop> {
        let before = search.count;
        let stop = self.merge_parts(parts, search);
        let graph = Self::graph_bytes(search);
        if graph > search.graph_bytes {
            self.budget.charge(graph - search.graph_bytes);
            search.graph_bytes = graph;
        }
        if let Some(c) = &self.counter {
            c.fetch_add((search.count - before) as u64, std::sync::atomic::Ordering::Relaxed);
        }
        // The search tree grows once per merge (workers read it only to
        // replay witnesses).
        self.tree.write().expect("tree lock").append(&mut search.tree_tail);
        stop
    }

    /// The state graph's bytes as allocated (vector capacities and the
    /// nodes' large sets).
    fn graph_bytes(search: &Search) -> u64 {
        (search.nodes.capacity() * std::mem::size_of::<liveness::Node>()
            + search.edges.capacity() * std::mem::size_of::<liveness::Edge>()) as u64
            + search.node_heap
    }

    fn merge_parts(&mut self, parts: Vec<Part>, search: &mut Search) -> Option<Stop> {
        let record = self.graph();
        // The merge stops at the memory limit less a reserve for the
        // batches in flight (the budget itself is the hard bound).
        let limits = Limits {
            memory: budget::soft_memory(self.opts.limits.memory),
            ..self.opts.limits
        };
        for part in parts {
            // The successor records are merged now.
            self.budget.release(part.succs.iter().map(Succ::bytes).sum());
            let mut succs = part.succs.into_iter();
            for ex in part.heads {
                if let Some(node) = ex.node {
                    search.node_heap += node_heap(&node);
                    search.nodes.push(node);
                    for (mut e, key) in ex.spin_edges {
                        e.label = Search::label(&mut search.labels, key);
                        search.edges.push(e);
                    }
                }
                for ci in 0..ex.nsuccs {
                    let succ = succs.next().expect("a part holds its states' successors");
                    // SAFETY: the visited set is cleared only after the search.
                    let slot = unsafe { succ.slot.get() };
                    let seen = slot.id();
                    let to = seen.unwrap_or(search.count);
                    if record {
                        let c = succ.choice;
                        let (site, phase, outcome) = succ.key;
                        let label = Search::label(&mut search.labels, (c.thread, site, phase, outcome));
                        search.edges.push(liveness::Edge {
                            from: ex.id,
                            to,
                            thread: c.thread,
                            label,
                            query: succ.query,
                            spin: false,
                            choice: c,
                        });
                        // A twin's step leads to this state up to renaming: its
                        // edge counts for its thread (fairness) and replays as
                        // the representative's choice (witnesses).
                        for &u in &succ.twins {
                            let label = Search::label(&mut search.labels, (u, site, phase, outcome));
                            search.edges.push(liveness::Edge {
                                from: ex.id,
                                to,
                                thread: u,
                                label,
                                query: succ.query,
                                spin: false,
                                choice: c,
                            });
                        }
                    }
                    if seen.is_some() {
                        continue;
                    }
                    // Every stored state carries its threads and its execution
                    // so far: bound their estimated total size.
                    search.stored_bytes += slot.key.len() as u64 + STATE_OVERHEAD;
                    // Its renaming stays with it in the frontier (counted
                    // for good: a conservative bound).
                    let ident = succ.ident.as_ref().map_or(0, |i| 16 + 4 * i.len() as u64);
                    search.stored_bytes += ident;
                    self.budget.charge(ident);
                    let graph = Self::graph_bytes(search);
                    // The clock is read every 1024 states.
                    let elapsed =
                        (search.count.is_multiple_of(1024) && limits.time.is_some()).then(|| self.start.elapsed());
                    let limit =
                        limits.limit_reached(Some(search.count as u64), Some(search.stored_bytes + graph), elapsed);
                    search.tree_tail.push((ex.id, Some(succ.choice)));
                    if let Some(why) = limit {
                        self.tree.write().expect("tree lock").append(&mut search.tree_tail);
                        self.key = (ex.id, ci + 1);
                        self.prefix = Some(to);
                        self.path.clear();
                        self.set_ident(&succ.ident);
                        self.judge_stopped(&encode::decode(&slot.key));
                        return Some(why);
                    }
                    slot.set_id(to);
                    search.count += 1;
                    search.next.push(Item {
                        id: to,
                        parent: ex.id,
                        via: Some(succ.choice),
                        state: succ.slot,
                        ident: succ.ident,
                    });
                }
            }
        }
        None
    }

    /// A worker: this explorer's configuration, with nothing found yet.
    fn worker(&self) -> Explorer<'p> {
        let mut w = Explorer::with(self.p, self.opts, self.an.clone(), self.visited.clone());
        w.start = self.start;
        w.tree = self.tree.clone();
        #[cfg(test)]
        {
            w.fault_at = self.fault_at;
        }
        w.budget = self.budget.clone();
        w
    }

    /// Takes in a worker's findings: for each kind, the one found first in
    /// search order (the smallest key) wins, so the answer does not depend
    /// on which worker expanded which state.
    fn absorb(&mut self, w: Explorer<'p>) {
        for (kind, f) in w.findings {
            let key = w.keys[&kind];
            if self.keys.get(&kind).is_none_or(|&k| key < k) {
                self.keys.insert(kind, key);
                self.findings.insert(kind, f);
            }
        }
        self.operational.extend(w.operational);
        self.judged.extend(w.judged);
        self.objectless.extend(w.objectless);
        self.internal_errors.extend(w.internal_errors);
        self.executions += w.executions;
        self.ends.extend(w.ends);
        for (mine, theirs) in self.sometimes_holds.iter_mut().zip(w.sometimes_holds) {
            *mine |= theirs;
        }
    }

    /// Expands one state of the frontier: its analysis record, whether it
    /// ends an execution (judged here), and its successors, normalized and
    /// hashed, in choice order.
    ///
    /// `spent`: the state limit is reached already, by the `Some(n)` states
    /// numbered before this level. The merge then stops at the first
    /// successor, in frontier order, not numbered before this level, so the
    /// expansion stops after its own first such successor (nothing after it
    /// is ever merged), and symmetric choices are not pruned (only the
    /// order up to that successor matters). Whether a successor was
    /// numbered before the level does not depend on the workers' timing.
    ///
    /// A budget limit (memory, deadline) stops the expansion at once; the
    /// partial result is never merged.
    fn expand(&mut self, it: &Item, succs: &mut Vec<Succ>, spent: Option<u32>) -> Expanded {
        let halted = Expanded {
            id: it.id,
            node: None,
            spin_edges: Vec::new(),
            nsuccs: 0,
        };
        #[cfg(test)]
        if self.fault_at == Some(it.id) {
            panic!("injected fault expanding state {}", it.id);
        }
        if self.budget.check().is_some() {
            return halted;
        }
        // SAFETY: the visited set is cleared only after the search.
        let key = unsafe { &it.state.get().key };
        let parent = match self.parent.take() {
            Some(mut p) => {
                encode::decode_into(key, &mut p);
                p
            }
            None => encode::decode(key),
        };
        if self.opts.verify_encoding {
            assert!(parent == encode::decode(key), "decoding into a used state");
        }
        // The copies of a state this worker holds while expanding it.
        let working = budget::WORKING_COPIES * budget::state_bytes(&parent);
        if working > self.working {
            self.budget.charge(working - self.working);
            self.working = working;
        }
        if self.budget.check().is_some() {
            self.parent = Some(parent);
            return halted;
        }
        let head = self.expand_decoded(it, &parent, succs, spent);
        self.parent = Some(parent);
        head
    }

    /// [`Explorer::expand`] on the decoded state `s`.
    fn expand_decoded(&mut self, it: &Item, s: &State, succs: &mut Vec<Succ>, spent: Option<u32>) -> Expanded {
        self.key = (it.id, 0);
        self.prefix = Some(it.id);
        self.path.clear();
        self.set_ident(&it.ident);
        let choices = self.choices(s);
        let mut spin_edges = Vec::new();
        let node = self
            .graph()
            .then(|| self.node(s, &choices, it.parent, it.via, &mut spin_edges, it.id));
        let (choices, twins) = if spent.is_some() {
            let n = choices.len();
            (choices, vec![Vec::new(); n])
        } else {
            self.prune_symmetric(s, choices)
        };
        if self.budget.check().is_some() {
            return Expanded {
                id: it.id,
                node: None,
                spin_edges: Vec::new(),
                nsuccs: 0,
            };
        }
        if choices.is_empty() {
            self.at_end(s);
        }
        let mut nsuccs = 0;
        for (ci, (choice, twins)) in choices.into_iter().zip(twins).enumerate() {
            if self.budget.check().is_some() {
                break;
            }
            self.key = (it.id, ci as u32 + 1);
            self.prefix = Some(it.id);
            self.set_ident(&it.ident);
            self.path.clear();
            self.current = Some(choice);
            self.quiet = true;
            // The successor is built in the scratch state (its vectors
            // reused) and copied out only when it is new.
            let mut n = State::copy_in(&mut self.scratch, s);
            let step = self.step(&mut n, choice);
            self.path.push(step);
            let key = self.step_key(s, &n, choice);
            self.fuse_waits(&mut n);
            self.flush_pending(&n, &[]);
            self.normalize(&mut n);
            self.quiet = false;
            self.current = None;
            let query = self.is_query(s, choice);
            if self.budget.halted().is_some() {
                // Normalizing stopped part way: the state is not whole.
                self.scratch = Some(n);
                break;
            }
            let mut words = std::mem::take(&mut self.words);
            words.clear();
            encode::encode(&n, &mut words);
            if self.opts.verify_encoding {
                assert!(encode::decode(&words) == n, "a state decodes to itself");
            }
            let mut new = false;
            let slot = self.visited.intern_ref(hash_of(&words), &words[..], |w, arena| {
                new = true;
                arena.store(w)
            });
            if new {
                self.budget.charge(words.len() as u64 + STATE_OVERHEAD);
            }
            self.words = words;
            self.scratch = Some(n);
            let succ = Succ {
                choice,
                twins,
                slot,
                ident: self.ident_arc(),
                query,
                key,
            };
            self.budget.charge(succ.bytes());
            succs.push(succ);
            nsuccs += 1;
            // SAFETY: the visited set is cleared only after the search.
            let before_level = unsafe { slot.get() }.id().is_some_and(|id| Some(id) < spent);
            if spent.is_some() && !before_level {
                break;
            }
        }
        Expanded {
            id: it.id,
            node,
            spin_edges,
            nsuccs,
        }
    }

    /// The steps from the initial state to state `id` of the search tree,
    /// then the choice `then` (the transition being expanded, up to where
    /// a finding came up), replayed (witnesses are built only when a
    /// finding needs one).
    fn replay_to(&mut self, id: u32, then: Option<Choice>) -> Vec<Step> {
        let mut chain = Vec::new();
        {
            let tree = self.tree.read().expect("tree lock");
            let mut at = id;
            while let (parent, Some(c)) = tree[at as usize] {
                chain.push(c);
                at = parent;
            }
        }
        chain.reverse();
        let replayed = self.replay(&chain, false, |e, mut s, mut steps| {
            if let Some(c) = then {
                steps.push(e.step(&mut s, c));
                steps.extend(e.fused_steps(&mut s));
            }
            Ok(steps)
        });
        replayed.expect("a replay without the budget never stops")
    }

    /// The one replayer: replays `chain` from the initial state in
    /// declaration order (thread renaming starting from the identity),
    /// each choice with its fused steps and the reductions after it, then
    /// hands the state reached and the steps to `then`, still replaying
    /// (nothing is recorded unless `then` ends the replay). The path, the
    /// pending findings, the renaming and the step modes are saved before
    /// and restored after. `budgeted`: the budget is checked before each
    /// step (`Err` at a limit).
    fn replay<R>(
        &mut self,
        chain: &[Choice],
        budgeted: bool,
        then: impl FnOnce(&mut Self, State, Vec<Step>) -> Result<R, Stop>,
    ) -> Result<R, Stop> {
        let saved = (
            std::mem::take(&mut self.path),
            std::mem::take(&mut self.pending),
            std::mem::replace(&mut self.ident, (0..self.p.threads.len() as u32).collect()),
            self.replaying,
            self.quiet,
        );
        self.replaying = true;
        self.quiet = false;
        let run = || {
            let mut s = State::initial(self.p);
            for t in 0..self.p.threads.len() {
                self.run_local(&mut s, t);
            }
            let mut steps = Vec::new();
            for &c in chain {
                if budgeted {
                    self.budget.go_on()?;
                }
                steps.push(self.step(&mut s, c));
                steps.extend(self.fused_steps(&mut s));
                self.normalize(&mut s);
            }
            then(self, s, steps)
        };
        let r = run();
        (self.path, self.pending, self.ident, self.replaying, self.quiet) = saved;
        r
    }

    /// Makes `self.path` the whole path from the initial state. While a
    /// worker expands a state, the path is not kept (steps are taken
    /// quietly, without their texts): it is replayed from the search tree
    /// to the expanded state, then the choice being taken.
    fn materialize_path(&mut self) {
        if let Some(id) = self.prefix.take() {
            let then = self.current.take();
            self.path = self.replay_to(id, then);
        }
    }

    /// The step thread `c.thread` took from `before` to `after` (before
    /// fusion and normalization), without its thread: its site, the phase
    /// a wait chose, and its outcome class (liveness::StepKey).
    fn step_key(&self, before: &State, after: &State, c: Choice) -> (u32, u32, u32) {
        let t = c.thread as usize;
        let outcome = match after.threads[t].status {
            Status::Running => after.threads[t].pc,
            _ => liveness::OUTCOME_END,
        };
        (before.threads[t].pc, c.phase.unwrap_or(liveness::NO_PHASE), outcome)
    }

    /// The analysis record of a new state, and the self-loops of its spins.
    fn node(
        &self,
        s: &State,
        choices: &[Choice],
        parent: u32,
        via: Option<Choice>,
        edges: &mut Vec<(liveness::Edge, liveness::StepKey)>,
        me: u32,
    ) -> liveness::Node {
        let n = self.p.threads.len();
        let mut node = liveness::Node {
            parent,
            via,
            enabled: Bits::new(n),
            alive: Bits::new(n),
            started: Bits::new(n),
            at_wait: Bits::new(n),
            host_sync: false,
        };
        for c in choices {
            node.enabled.set(c.thread as usize);
        }
        for (t, th) in s.threads.iter().enumerate() {
            if !matches!(th.status, Status::Done | Status::NotLaunched) {
                node.alive.set(t);
            }
            if th.started {
                node.started.set(t);
            }
            if node.enabled.get(t) || matches!(th.status, Status::Done | Status::NotLaunched) {
                continue;
            }
            let ins = self.p.instr(ThreadId(t as u32), th.pc).map(|i| &i.kind);
            let spins = matches!(ins, Some(InstrKind::Await(_)));
            if spins {
                node.enabled.set(t);
                let choice = Choice {
                    thread: t as u32,
                    phase: None,
                };
                let edge = liveness::Edge {
                    from: me,
                    to: me,
                    thread: t as u32,
                    label: u32::MAX,
                    query: false,
                    spin: true,
                    choice,
                };
                let key = (t as u32, th.pc, liveness::NO_PHASE, th.pc);
                edges.push((edge, key));
            } else if self.at_wait(s, t) {
                node.at_wait.set(t);
            } else if matches!(ins, Some(InstrKind::DeviceSync)) && self.p.threads[t].kind == ThreadKind::Host {
                node.host_sync = true;
            }
        }
        node
    }

    /// Whether thread `c.thread`'s next step in `s` is a `stream_query`.
    fn is_query(&self, s: &State, c: Choice) -> bool {
        let t = c.thread as usize;
        matches!(
            self.p.instr(ThreadId(c.thread), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::StreamQuery { .. })
        )
    }

    /// Looks for a fair cycle in which some thread never ends, and records
    /// it as `nontermination` (or `deadlock`, when a thread waits on a
    /// barrier throughout it) with a lasso witness.
    ///
    /// The analysis and the replays charge the search's budget; at a limit
    /// it ends with `Err` (the search's stop), keeping only the findings
    /// whose witnesses were replayed in full.
    fn liveness(&mut self, nodes: &[liveness::Node], edges: &[liveness::Edge]) -> Result<(), Stop> {
        let budget = self.budget.clone();
        let analysis = liveness::Analysis::new(
            self.p,
            self.p.progress.kind,
            self.p.progress.strong,
            nodes,
            edges,
            &budget,
        )?;
        let (cycles, bottoms) = analysis.find()?;
        for cycle in cycles {
            self.fair_cycle(&analysis, &cycle, nodes, edges)?;
        }
        for entry in bottoms {
            self.judge_at(nodes, entry, &[])?;
        }
        Ok(())
    }

    /// The rule checker judges the execution of state `id` with the waits
    /// of `stuck` stuck (the state replayed along the search tree; its steps
    /// are the witness path).
    fn judge_at(&mut self, nodes: &[liveness::Node], id: u32, stuck: &[usize]) -> Result<(), Stop> {
        let stem = liveness::stem(nodes, id);
        self.replay(&stem, true, |e, s, steps| {
            // The replay ends: the rule checker's findings are recorded,
            // with the replayed steps as the whole path.
            e.replaying = false;
            e.prefix = None;
            e.path = steps;
            e.judge_stuck(&s, stuck);
            Ok(())
        })
    }

    /// Records fair cycle `cycle` as `nontermination` (or `deadlock`, when
    /// a thread waits on a barrier throughout it) with a lasso witness.
    fn fair_cycle(
        &mut self,
        analysis: &liveness::Analysis,
        cycle: &liveness::FairCycle,
        nodes: &[liveness::Node],
        edges: &[liveness::Edge],
    ) -> Result<(), Stop> {
        let kind = if !cycle.stuck.is_empty() {
            FindingKind::Deadlock
        } else {
            FindingKind::Nontermination
        };
        if self.opts.outcomes {
            self.cycle_ends.insert(if kind == FindingKind::Deadlock {
                outcomes::End::Deadlock
            } else {
                outcomes::End::Nontermination
            });
        }
        let alive: Vec<String> = (0..self.p.threads.len())
            .filter(|&t| nodes[cycle.entry as usize].alive.get(t))
            .map(|t| self.name_of(t).to_string())
            .collect();
        let message = match cycle.stuck.first() {
            Some(&t) => format!(
                "{} waits on a barrier forever while others run on (a fair cycle under progress model `{}`)",
                self.name_of(t as usize),
                self.p.progress
            ),
            None => format!(
                "a fair infinite execution under progress model `{}` in which {} never finish",
                self.p.progress,
                alive.join(", ")
            ),
        };
        // The lasso: the stem along search-tree parents, then the cycle.
        let stem = liveness::stem(nodes, cycle.entry);
        if self.findings.contains_key(&kind) {
            self.operational.insert(kind);
        } else {
            let loop_edges: Vec<liveness::Edge> =
                analysis.cycle(cycle)?.into_iter().map(|e| edges[e as usize]).collect();
            let witness = self.lasso(&stem, &loop_edges)?;
            self.operational.insert(kind);
            self.insert_finding(Finding { kind, message, witness });
        }
        if !cycle.stuck.is_empty() {
            // Waits stuck throughout a fair cycle never complete: the rule
            // checker judges the execution with them stuck, as at an end
            // state (where a spinning `await` leaves them; its load-loop
            // form leaves them here).
            let stuck: Vec<usize> = cycle.stuck.iter().map(|&t| t as usize).collect();
            self.judge_at(nodes, cycle.entry, &stuck)?;
        }
        Ok(())
    }

    /// The reductions applied to every new state, in order. Renames
    /// `self.ident` along with the threads.
    fn normalize(&mut self, s: &mut State) {
        if self.opts.reductions.compact {
            self.compact(s);
        }
        self.canonicalize(s);
        if let Some(perm) = self.symmetrize(s) {
            self.ident = perm.iter().map(|&old| self.ident[old]).collect();
            // The renaming may leave a phase's arrivals out of order.
            self.canonicalize(s);
        }
    }

    /// The span and text of instruction `pc` in the body of the thread that
    /// index `t` stands for (symmetry may map a thread onto another one's
    /// identical body).
    pub(crate) fn declared_site(&self, t: usize, pc: u32) -> (Span, String) {
        self.p
            .instr(ThreadId(self.ident[t]), pc)
            .map_or((Span::default(), "...".to_string()), |i| (i.span, i.text.clone()))
    }

    /// `self.ident` to keep with a state: `None` for the identity (no
    /// allocation in the common case).
    fn ident_arc(&self) -> Option<std::sync::Arc<[u32]>> {
        let identity = self.ident.iter().enumerate().all(|(i, &t)| i as u32 == t);
        (!identity).then(|| self.ident.as_slice().into())
    }

    /// Sets `self.ident` from a state's kept renaming.
    fn set_ident(&mut self, ident: &Option<std::sync::Arc<[u32]>>) {
        self.ident.clear();
        match ident {
            Some(v) => self.ident.extend_from_slice(v),
            None => self.ident.extend(0..self.p.threads.len() as u32),
        }
    }

    /// The declared name of thread index `t` in the current state.
    pub(crate) fn name_of(&self, t: usize) -> &str {
        &self.p.threads[self.ident[t] as usize].name
    }

    /// The lasso witness: `stem`, then `cycle` (`Err` when the budget ends
    /// the replay).
    fn lasso(&mut self, stem: &[Choice], cycle: &[liveness::Edge]) -> Result<Witness, Stop> {
        self.replay(stem, true, |e, mut s, mut steps| {
            let entry = s.clone();
            let cycle_start = steps.len();
            for edge in cycle {
                e.budget.go_on()?;
                if edge.spin {
                    let t = edge.thread as usize;
                    let (span, text) = e.declared_site(t, s.threads[t].pc);
                    steps.push(Step {
                        thread: e.name_of(t).to_string(),
                        span,
                        text,
                        effect: "spins: the condition does not hold".into(),
                    });
                } else {
                    steps.push(e.step(&mut s, edge.choice));
                    steps.extend(e.fused_steps(&mut s));
                    e.normalize(&mut s);
                }
            }
            e.replaying = false;
            e.path = steps;
            let mut w = e.witness(&entry, &[], &[]);
            w.cycle_start = Some(cycle_start);
            Ok(w)
        })
    }

    fn record(&mut self, kind: FindingKind, message: String, witness: Witness, judged: bool) {
        if self.replaying {
            return;
        }
        if judged {
            self.judged.insert(kind);
        } else {
            self.operational.insert(kind);
        }
        self.insert_finding(Finding { kind, message, witness });
    }

    /// The first finding of its kind (in this explorer's search order) stays.
    fn insert_finding(&mut self, f: Finding) {
        if !self.findings.contains_key(&f.kind) {
            self.keys.insert(f.kind, self.key);
            self.findings.insert(f.kind, f);
        }
    }

    /// Records the operational findings of the last step, with the path so
    /// far (and the `stuck` threads, blocked for good) as witness. A finding
    /// with no stuck wait to point at (a thread spinning forever) is placed
    /// at the statements the stuck threads are blocked on.
    fn flush_pending(&mut self, s: &State, stuck: &[usize]) {
        if self.replaying {
            self.pending.clear();
            return;
        }
        for (kind, msg, objectless) in std::mem::take(&mut self.pending) {
            if objectless {
                self.objectless.insert(kind);
            } else {
                self.operational.insert(kind);
            }
            if !self.findings.contains_key(&kind) {
                self.materialize_path();
                let mut w = self.witness(s, stuck, &[]);
                if w.spans.is_empty() {
                    w.spans = stuck
                        .iter()
                        .filter_map(|&t| self.p.instr(ThreadId(t as u32), s.threads[t].pc))
                        .map(|i| i.span)
                        .collect();
                }
                self.insert_finding(Finding {
                    kind,
                    message: msg,
                    witness: w,
                });
            }
        }
    }

    /// A state with no choice: every thread finished, or the rest are stuck.
    fn at_end(&mut self, s: &State) {
        self.executions += 1;
        let blocked: Vec<usize> = (0..s.threads.len())
            .filter(|&t| !matches!(s.threads[t].status, Status::Done | Status::NotLaunched))
            .collect();
        let stuck_waits: Vec<usize> = blocked.iter().copied().filter(|&t| self.at_wait(s, t)).collect();
        if self.opts.outcomes && !self.replaying {
            let end = if blocked.is_empty() {
                outcomes::End::Final
            } else if stuck_waits.is_empty() {
                outcomes::End::Nontermination
            } else {
                outcomes::End::Deadlock
            };
            let config = outcomes::EndConfig::of(s, end, &self.an.sym_classes);
            let bytes = config.bytes();
            if self.ends.insert(config) {
                self.budget.charge(bytes);
            }
        }
        self.uniform_stuck(s, &stuck_waits);
        // A `__syncwarp` phase left open: a lane its mask names that
        // executed another mask meanwhile never comes.
        for b in 0..s.bars.len() {
            if let Some(msg) = s.bars[b].open.as_ref().and_then(|ph| self.stray_message(b, ph)) {
                self.ub(bc_syntax::UbKind::SyncwarpMask, msg);
            }
        }
        if !blocked.is_empty() {
            let at = |ts: &[usize]| {
                let names: Vec<String> = ts
                    .iter()
                    .map(|&t| format!("{} at `{}`", self.name_of(t), self.instr_text(s, t)))
                    .collect();
                names.join(", ")
            };
            let finding = if stuck_waits.is_empty() {
                Some((FindingKind::Nontermination, format!("spins forever: {}", at(&blocked))))
            } else if self.p.model.rules.has(bc_models::Rule::WaitCompletes) {
                Some((FindingKind::Deadlock, format!("stuck forever: {}", at(&stuck_waits))))
            } else {
                None
            };
            if let Some((kind, msg)) = finding {
                self.pending.push((kind, msg, false));
            }
        }
        // Only waits enter the execution as stuck events; the others
        // (spinning threads) still locate a nontermination finding.
        self.flush_pending(s, &blocked);
        // The rule checker judges the execution.
        let (exec, names) = self.execution(s, &stuck_waits);
        self.judge(&exec, &names);
        self.judge_finished(s, blocked.is_empty(), &exec, &names);
    }

    /// Waits stuck forever in `s` (at an end state, or throughout a fair
    /// cycle): the uniform-barrier check, then the rule checker judges the
    /// execution with them stuck.
    fn judge_stuck(&mut self, s: &State, stuck_waits: &[usize]) {
        self.uniform_stuck(s, stuck_waits);
        self.flush_pending(s, stuck_waits);
        let (exec, names) = self.execution(s, stuck_waits);
        self.judge(&exec, &names);
    }

    /// A uniform (block-wide) barrier that some threads reached while
    /// others never will: divergent.
    fn uniform_stuck(&mut self, s: &State, stuck_waits: &[usize]) {
        for &t in stuck_waits {
            if let Some(InstrKind::Barrier { sel, .. }) =
                self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind)
            {
                if let Some(b) = self.resolve(s, t, *sel) {
                    if self.p.barriers[b].props.uniform && s.bars[b].open.as_ref().is_some_and(|p| p.is_block_wide()) {
                        let msg = format!(
                            "{} is reached by only some threads of its scope",
                            self.p.barriers[b].name
                        );
                        self.ub(bc_syntax::UbKind::DivergentBarrier, msg);
                    }
                }
            }
        }
    }

    /// Assertions over an execution that ended (`finished`: every thread
    /// finished).
    fn judge_finished(&mut self, s: &State, finished: bool, exec: &Execution, names: &witness::ExecNames) {
        // Assertions over finished executions.
        if finished {
            for (i, a) in self.p.asserts.iter().enumerate() {
                let holds = eval::eval_final(self.p, s, &a.cond) != 0;
                let bad = match a.quantifier {
                    Quantifier::Always => !holds,
                    Quantifier::Never => holds,
                    Quantifier::Sometimes => {
                        self.sometimes_holds[i] |= holds;
                        false
                    }
                };
                if bad && !self.findings.contains_key(&FindingKind::Assertion) && !self.replaying {
                    self.materialize_path();
                    let what = if holds { "holds" } else { "does not hold" };
                    let msg = format!(
                        "`{}` {what} in this execution ({})",
                        a.text,
                        eval::describe_final(self.p, s, &a.cond)
                    );
                    let mut w = self.witness_with(exec, names, &[]);
                    w.spans = vec![a.span];
                    self.record(FindingKind::Assertion, msg, w, false);
                } else if bad {
                    self.operational.insert(FindingKind::Assertion);
                }
            }
        }
    }

    /// At a search limit, the rule checker still judges the execution that
    /// reached it, so a stopped search reports what it saw.
    fn judge_stopped(&mut self, s: &State) {
        let (exec, names) = self.execution(s, &[]);
        self.judge(&exec, &names);
    }

    /// The rule checker judges an execution; its findings are recorded with
    /// the current path as witness.
    pub(crate) fn judge(&mut self, exec: &Execution, names: &witness::ExecNames) {
        if self.replaying {
            return;
        }
        for v in bc_rules::check(exec, self.p.model.rules, names) {
            match v.kind {
                None => {
                    if self.internal_errors.len() < 8 {
                        self.internal_errors.push(format!("{}: {}", v.rule, v.message));
                    }
                }
                Some(kind) => {
                    if !self.findings.contains_key(&kind) {
                        self.materialize_path();
                        let w = self.witness_with(exec, names, &v.events);
                        self.record(kind, v.message, w, true);
                    } else {
                        self.judged.insert(kind);
                    }
                }
            }
        }
    }

    fn at_wait(&self, s: &State, t: usize) -> bool {
        matches!(
            self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::Barrier {
                op: BarrierOp::Wait(_),
                ..
            })
        )
    }

    fn instr_text(&self, s: &State, t: usize) -> String {
        self.p
            .instr(ThreadId(t as u32), s.threads[t].pc)
            .map_or_else(|| "end".into(), |i| i.text.clone())
    }
}

mod encode;
mod fuse;
pub mod par;
mod step;
mod symmetry;
pub(crate) mod witness;

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        let (lit, diags) = bc_syntax::parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = bc_graph::lower::resolve_model(&lit, None).unwrap();
        bc_graph::lower(&lit, text, model).unwrap()
    }

    /// Runs a search whose expansion of state `fault_at` panics, on a
    /// thread with a deadline: `Some(Err)` when the panic reached the
    /// caller, `None` when the search was still running after 60 s (a hang).
    fn run_with_fault(p: &Program, jobs: usize, fault_at: u32) -> Option<std::thread::Result<Outcome>> {
        let p = p.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let opts = SearchOptions {
                    jobs,
                    ..SearchOptions::default()
                };
                let mut e = Explorer::new(&p, opts);
                e.fault_at = Some(fault_at);
                e.run()
            }));
            let _ = tx.send(r);
        });
        rx.recv_timeout(Duration::from_secs(60)).ok()
    }

    /// The outcome set with `reductions` on or off.
    fn outcome_set(p: &Program, on: bool, jobs: usize) -> Outcomes {
        let opts = SearchOptions {
            outcomes: true,
            reductions: if on { Reductions::default() } else { Reductions::NONE },
            jobs,
            ..SearchOptions::default()
        };
        let o = explore(p, opts);
        assert_eq!(o.stop, Stop::Exhausted);
        o.outcomes.expect("asked for")
    }

    /// Symmetry stores one arrangement of interchangeable threads; the
    /// outcome set lists every arrangement, with the counts a search
    /// without symmetry finds - also when members with equal observed
    /// values differ in what is not observed (tokens: phase numbers).
    #[test]
    fn outcome_sets_expand_symmetric_arrangements() {
        let p = program(
            "litmus \"t\"\nmodel cuda-sm90\nbarrier B = 2\nvar c = 0\n\
             kernel blocks=1 threads=4 { t = arrive B; wait B, t; r = fetch_add c, 1 }\n",
        );
        let on = outcome_set(&p, true, 1);
        assert_eq!(on, outcome_set(&p, false, 1));
        assert_eq!(on, outcome_set(&p, true, 2));
        assert_eq!(on.observables, ["b0t0:r", "b0t1:r", "b0t2:r", "b0t3:r", "c"]);
        // 4! ticket orders, each ending c = 4.
        assert_eq!(on.classes.len(), 24);
        assert!(on
            .classes
            .iter()
            .all(|c| matches!(&c.kind, OutcomeKind::Final(v) if v[4] == 4)));
        // Only `c` observed: one outcome, reached by every arrangement of
        // the tokens (phases 0, 0, 1, 1 over four threads: 6).
        let p = program(
            "litmus \"t\"\nmodel cuda-sm90\nbarrier B = 2\nvar c = 0\n\
             kernel blocks=1 threads=4 { t = arrive B; wait B, t; store c, 1 }\n",
        );
        let on = outcome_set(&p, true, 1);
        assert_eq!(on, outcome_set(&p, false, 1));
        assert_eq!(on.observables, ["c"]);
        assert_eq!(
            on.classes,
            [OutcomeClass {
                kind: OutcomeKind::Final(vec![1]),
                executions: 6
            }]
        );
    }

    /// Stuck end states are deadlock, with the number of distinct stuck
    /// configurations (which thread is left over, and the tickets).
    #[test]
    fn stuck_end_states_are_counted_per_configuration() {
        let p = program(
            "litmus \"t\"\nmodel cuda-sm80\nvar c = 0\n\
             kernel blocks=1 threads=3 { r = fetch_add c, 1; bar.sync 1, 2 }\n",
        );
        let on = outcome_set(&p, true, 1);
        assert_eq!(on, outcome_set(&p, false, 1));
        assert_eq!(
            on.classes,
            [OutcomeClass {
                kind: OutcomeKind::Deadlock,
                executions: 18
            }]
        );
        // Not asked: nothing collected.
        assert!(explore(&p, SearchOptions::default()).outcomes.is_none());
    }

    /// A panic while a worker expands a state used to leave the merging
    /// thread waiting for the worker's chunks forever (0% CPU, and
    /// `--timeout` never checked). Now it reaches the caller, whatever the
    /// number of jobs and whichever state it happens at.
    #[test]
    fn a_worker_panic_ends_the_search() {
        let p = program(
            "litmus \"wide\"\nmodel amdgpu\nvar x = 0\n\
             thread T0 { r = fetch_add x, 1\nr = fetch_add x, 1 }\n\
             thread T1 { r = fetch_add x, 1\nr = fetch_add x, 1 }\n\
             thread T2 { r = fetch_add x, 1\nr = fetch_add x, 1 }\n",
        );
        let states = explore(&p, SearchOptions::default()).stats.states as u32;
        assert!(states > 4, "{states}");
        for jobs in [1, 2, 4] {
            for fault_at in [0, 1, states / 2, states - 1] {
                let r = run_with_fault(&p, jobs, fault_at)
                    .unwrap_or_else(|| panic!("jobs {jobs}, fault at {fault_at}: the search hangs"));
                let Err(payload) = r else {
                    panic!("jobs {jobs}, fault at {fault_at}: the injected panic does not reach the caller")
                };
                let msg = payload.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(msg.contains("injected fault"), "{msg}");
            }
        }
    }
}
