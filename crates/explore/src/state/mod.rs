//! The explorer's state. Everything that can influence the future or the
//! rule checker's verdict is here, and nothing else: the interleaving
//! itself is not, so equal states are interchangeable.
//!
//! Floor 1 of the explorer (docs/ARCHITECTURE.md, "The explore crate"):
//! the state and the [`Choice`] that steps it, their encoding for the
//! visited set (`encode.rs`), join masks (`jmask.rs`), the resource
//! budget (`budget.rs`), the search options (`options.rs`), the answer
//! types (`answer.rs`) and the concurrent core of the visited set
//! (`par.rs`). It imports nothing of the floors above.

pub(crate) mod answer;
pub(crate) mod budget;
pub(crate) mod encode;
pub(crate) mod jmask;
pub(crate) mod options;
pub use bc_par as par;
pub(crate) mod token;

pub use crate::state::jmask::JoinMask;
use bc_graph::bits::Bits;
use bc_graph::{ArriveCount, Program, Target};

/// The phase of an `owes` debt whose phase compaction forgot.
pub const FORGOTTEN_PHASE: u32 = u32::MAX;

/// The phase of an `owes` debt a cooperative-groups `barrier_arrive` left:
/// any arrival of the thread on the barrier breaks it, and only the
/// thread's own wait pays it.
pub const COLLECTIVE_DEBT: u32 = u32::MAX - 1;

/// Marks launch operations in bmo entries (`(LAUNCH, barrier)`).
pub const LAUNCH: u32 = u32::MAX;

/// In the source of an `extra` edge, `(t, START)` stands for thread `t`'s
/// start (its joins at launch, in models without `joined-before`) once
/// compaction forgot its first event (`Execution::started_before`).
pub const START: u32 = u32::MAX;

/// The pcs of implicit joins at launch and drops at a thread's end in a
/// thread's history, as the execution marks them.
pub use bc_graph::{AT_END, AT_LAUNCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Done,
    /// A thread of a named kernel that has not started (no host launched
    /// it yet, or earlier kernels of its stream are still running).
    NotLaunched,
}

#[derive(Debug, PartialEq, Eq)]
pub struct TState {
    pub pc: u32,
    pub status: Status,
    pub regs: Vec<i64>,
    /// Pair (`u`, `b`) ([`JoinMask::pair`]): the current join of thread
    /// `u` on barrier `b` executes before this thread's current point.
    pub jmask: JoinMask,
    /// Barriers this thread has a joined-before join on (sorted).
    pub joined: Vec<u32>,
    /// (barrier, phase number): this thread's arrive completed that phase
    /// of the barrier and no wait has observed it yet (CUDA
    /// `arrive-before-wait`): a wait of this thread on the barrier, or any
    /// thread's wait on that phase, pays the debt. [`FORGOTTEN_PHASE`]
    /// once history compaction forgot the phase (no wait can take it any
    /// more, and phase numbers restart), so only this thread's own wait
    /// pays; [`COLLECTIVE_DEBT`] after a cooperative-groups
    /// `barrier_arrive`, until the thread's own wait.
    pub owes: Vec<(u32, u32)>,
    /// The thread has taken a step (progress models: "a block has started").
    pub started: bool,
}

/// The members of a phase (arrives and drops, as `(thread, po)`), in bmo
/// order. One list is shared by the phase record and every wait that
/// completed on the phase (its participants): a phase of T threads taken by
/// T waits holds T entries, not T^2, and copying a state copies a pointer
/// per wait (docs/explorer.md, "State"). Sharing is invisible to equality
/// (lists compare by value) and to the encoding (`encode.rs` writes each
/// distinct list once, by value); renaming and compaction map each shared
/// list once ([`MapLists`]). The open phase's list is changed in place
/// (`Arc::make_mut`), and is shared with no wait.
pub type Members = std::sync::Arc<Vec<(u32, u32)>>;

/// Maps each distinct shared member list of a state once (renaming,
/// compaction): the lists that were one before are one after, and a list
/// of T entries shared by T waits costs T, not T^2. Holds the old lists,
/// so their addresses stay theirs while it lives.
pub struct MapLists<F: FnMut(&[(u32, u32)]) -> Vec<(u32, u32)>> {
    done: rustc_hash::FxHashMap<*const Vec<(u32, u32)>, (Members, Members)>,
    f: F,
}

impl<F: FnMut(&[(u32, u32)]) -> Vec<(u32, u32)>> MapLists<F> {
    pub fn new(f: F) -> Self {
        MapLists {
            done: Default::default(),
            f,
        }
    }

    /// Replaces `l` by its image (computed once per distinct list).
    pub fn apply(&mut self, l: &mut Members) {
        let key = std::sync::Arc::as_ptr(l);
        let new = match self.done.get(&key) {
            Some((_, n)) => n.clone(),
            None => {
                let n = Members::new((self.f)(l));
                self.done.insert(key, (l.clone(), n.clone()));
                n
            }
        };
        *l = new;
    }
}

/// A phase of a barrier: its members (arrives and drops, as `(thread, po)`),
/// the joins that execute before some member, and which threads' waits
/// completed on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub number: u32,
    pub members: Members,
    /// The joins that execute before some member ([`JoinMask::pair`]).
    pub mask: JoinMask,
    pub bound: Bits,
    /// Arrivals, and how many carried a non-zero predicate (reductions).
    pub arrivals: i64,
    pub preds: i64,
    /// The count of a thread-counted barrier's phase: its latest counted
    /// arrival's (`None` before one).
    pub count: Option<ArriveCount>,
    /// The instruction site (code, pc) of the first arrival, and whether
    /// another site of the same code arrived too. Only compared against
    /// the first arrival's code, which is exact where a phase's arrivals
    /// share one code (a kernel's block: its threads run one body; copy
    /// agents arrive only on barriers of their own). Explicit threads have
    /// a code each, so sites of two of them are never compared (the
    /// divergent-barrier reading exempts explicit bodies); one of them
    /// arriving twice in a phase (itself `arrive-twice`) sets the flag
    /// only in the orders where it arrived first, which the search also
    /// explores. A phase mixing a kernel's code with others would need
    /// the set of sites.
    pub site: Option<(u32, u32)>,
    pub mixed_sites: bool,
    /// A thread's end dropped the barrier in this phase.
    pub exit_drop: bool,
    /// `__syncwarp` barriers: threads named by the mask that arrived on a
    /// barrier of another mask of the warp while this phase was open, and
    /// have not arrived in it since.
    pub strays: Bits,
    /// Warp intrinsics: the value each lane's arrive gave, sorted by
    /// thread (symmetry renames them with the threads).
    pub vals: Vec<LaneValue>,
}

/// The value a lane's warp intrinsic gave its phase (`ArriveSpec::value`),
/// with its thread and the form it ran (`bc_models::Reduce::code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneValue {
    pub thread: u32,
    pub form: u8,
    pub value: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BState {
    pub init: bool,
    pub expected: i64,
    pub arrived: i64,
    pub pending_drop: i64,
    /// Transaction count (mbarrier); a phase completes only at zero.
    pub tx: i64,
    /// Invalidated (`mbarrier.inval`).
    pub invalid: bool,
    /// The expected count when the barrier's completed phases were last
    /// forgotten: the count of its launch event from then on.
    pub base: Option<i64>,
    /// How many bmo entries the completed phases take (a bmo prefix).
    pub settled_len: u32,
    /// For a barrier whose phase numbers matter (tokens): the number of the
    /// first phase after the launch init that stands for forgotten phases.
    /// Tokens below it belong to forgotten phases (since the latest init).
    pub phase_base: u32,
    /// The expected count right after the latest completed phase.
    pub after_completion: i64,
    /// Per completed phase still in the bmo since the latest init, in bmo
    /// order: the bmo length at its completion, the expected count right
    /// after it and its number (not kept for barriers some thread waits on
    /// both with a token and otherwise). Compaction may forget the bmo up
    /// to one of these (`compact/cuts.rs`: a prefix of completed phases),
    /// so that a barrier whose earliest phases are closed sheds them while
    /// a later phase is still in use, whenever the search passes by
    /// (forgetting the barrier's history only whole made what was kept
    /// depend on when the states between were normalized).
    pub cuts: Vec<(u32, i64, u32)>,
    /// The number the next phase gets. Numbers keep counting across inits,
    /// so a token names one phase of the barrier's whole life.
    pub next_phase: u32,
    /// One past the largest phase number an arrive on this barrier has
    /// returned as a token, over all its inits (0: none). Kept only for
    /// barriers whose phase numbers matter (tokens); see `wait_plan`.
    pub returned: u32,
    /// The number of the first phase after the latest init: parity counts
    /// from it (`mbarrier.init` clears the parity).
    pub epoch_start: u32,
    /// Barriers whose phase numbers matter (tokens): the numbers of phases
    /// an init abandoned (open, never completed) that a register may still
    /// name. A token of one of them below `phase_base` names no forgotten
    /// completed phase and was never used: a wait on it blocks, as it does
    /// while the history is whole.
    pub abandoned: Vec<u32>,
    pub open: Option<Phase>,
    /// Completed phases some thread may still complete a wait on.
    pub done: Vec<Phase>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HKind {
    Init(i64),
    Join,
    Drop,
    /// An arrive: its expected-count update, its phase count and how many
    /// arrivals it counts (`EventKind::Arrive::arrivals`).
    Arrive(Option<i64>, Option<ArriveCount>, u32),
    /// An arrive_drop; whether the lowered count must stay positive.
    ArriveDrop(bool),
    /// `participants`: the members of the phase it took (shared with the
    /// phase record, [`Members`]); empty when it took none.
    Wait {
        participants: Members,
        token_phase: Option<u32>,
        parity: Option<u8>,
        /// The number of the phase a parity or plain wait took, on a
        /// barrier some thread waits on both with a token and otherwise
        /// (`Analyses::mixed_waits`): a later token wait of the thread on
        /// that phase returns at once (`WaitPlan::Taken`, `semantics/choices.rs`).
        /// `None` elsewhere.
        took: Option<u32>,
    },
    Tx(i64),
    Read,
    Write,
    /// `mbarrier.inval` (no bmo entry, no phase: the barrier's `invalid`).
    Inval,
    /// An operation that broke privileged-barrier, uncooperative-grid-sync
    /// or invalid-barrier and had no effect (`System::neutral`), recorded
    /// where the model has the rule, for the rule checker.
    NoEffect(bc_graph::BarrierOpName),
    /// A fence (`Program::fence_events`; target `Target::None`).
    Fence(bc_graph::FenceScope),
}

impl HKind {
    /// The kind's number, without its payload: the tag the state encoding
    /// writes first, and the key symmetry orders a thread's events by.
    pub fn tag(&self) -> u8 {
        match self {
            HKind::Init(_) => 0,
            HKind::Join => 1,
            HKind::Drop => 2,
            HKind::Arrive(..) => 3,
            HKind::ArriveDrop(_) => 4,
            HKind::Wait { .. } => 5,
            HKind::Tx(_) => 6,
            HKind::Read => 7,
            HKind::Write => 8,
            HKind::Inval => 9,
            HKind::NoEffect(_) => 10,
            HKind::Fence(_) => 11,
        }
    }
}

/// One event of a thread's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HEvent {
    pub pc: u32,
    pub kind: HKind,
    pub target: Target,
}

#[derive(Debug, PartialEq, Eq)]
pub struct State {
    pub threads: Vec<TState>,
    pub mem: Vec<i64>,
    pub bars: Vec<BState>,
    /// Per thread, its events in program order.
    pub hist: Vec<Vec<HEvent>>,
    /// Per barrier, its modification operations in bmo.
    pub bmo: Vec<Vec<(u32, u32)>>,
    /// Named kernels a host has launched.
    pub launched: Vec<bool>,
    /// Per stream (sorted by id), the launched kernels that have not
    /// finished, in launch order; the first one runs.
    pub streams: Vec<(i64, Vec<u32>)>,
    /// Executes-before edges between kept events whose paths ran through
    /// forgotten ones (see `compact.rs`); a source `(t, START)` is thread
    /// `t`'s start. Factored into fans ([`Fan`], [`fans`]): in their
    /// canonical form, sorted by sources.
    pub extra: Vec<Fan>,
}

/// An executes-before edge between kept events (or a thread's start,
/// `START`) and a kept event or a live thread's next event slot.
pub type Edge = ((u32, u32), (u32, u32));

/// Summary edges in factored form: every source executes before every
/// target of *another* thread. Compaction leaves each settled event (and
/// each thread's start) before the next event slot of nearly every live
/// thread, about T^2 edges on T threads; a fan holds them in about 2T
/// entries, so that renaming, comparing, encoding and copying a state do not
/// grow with T^2 (docs/explorer.md, "History compaction"). The edges are
/// expanded only where an execution is built or executes-before computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fan {
    /// Sorted; no source is in two fans.
    pub sources: Vec<(u32, u32)>,
    /// Sorted.
    pub targets: Vec<(u32, u32)>,
}

impl Fan {
    /// The edges this fan stands for, sources first.
    pub fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        self.sources
            .iter()
            .flat_map(move |&x| self.targets.iter().filter(move |y| y.0 != x.0).map(move |&y| (x, y)))
    }
}

/// A set of summary edges under construction, one target set per source
/// (bits over every thread's slots: its kept events, then its next event
/// slot), so that compaction never materializes the T^2 edges of a phase
/// of T threads one by one. [`EdgeSets::fans`] factors them.
pub(crate) struct EdgeSets {
    /// Per thread, the index of its first slot; one more entry at the end.
    offsets: Vec<u32>,
    /// Per source, its targets.
    targets: std::collections::BTreeMap<(u32, u32), bc_graph::bits::Bits>,
}

impl EdgeSets {
    /// No edges, over threads with `slots[u]` slots each (kept events and
    /// the next event slot).
    pub fn new(slots: impl IntoIterator<Item = u32>) -> EdgeSets {
        let mut offsets = vec![0];
        for k in slots {
            offsets.push(offsets.last().copied().unwrap_or(0) + k);
        }
        EdgeSets {
            offsets,
            targets: Default::default(),
        }
    }

    fn slots(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0) as usize
    }

    /// Adds edge `x -> y` (of two threads; `y` within its thread's slots).
    pub fn insert(&mut self, x: (u32, u32), y: (u32, u32)) {
        debug_assert_ne!(x.0, y.0, "no summary edge joins two events of one thread");
        let slot = (self.offsets[y.0 as usize] + y.1) as usize;
        debug_assert!(
            slot < self.offsets[y.0 as usize + 1] as usize,
            "a target within its thread's slots"
        );
        let n = self.slots();
        let set = self.targets.entry(x).or_insert_with(|| bc_graph::bits::Bits::new(n));
        set.set(slot);
    }

    /// A set of slots, for [`EdgeSets::insert_set`].
    pub fn slot_set(&self, slots: impl IntoIterator<Item = (u32, u32)>) -> bc_graph::bits::Bits {
        let mut set = bc_graph::bits::Bits::new(self.slots());
        for y in slots {
            set.set((self.offsets[y.0 as usize] + y.1) as usize);
        }
        set
    }

    /// Adds an edge from `x` to each slot of `set` ([`EdgeSets::slot_set`])
    /// of a thread other than `x`'s.
    pub fn insert_set(&mut self, x: (u32, u32), set: &bc_graph::bits::Bits) {
        let (lo, hi) = (
            self.offsets[x.0 as usize] as usize,
            self.offsets[x.0 as usize + 1] as usize,
        );
        let n = self.slots();
        let mine = self.targets.entry(x).or_insert_with(|| bc_graph::bits::Bits::new(n));
        mine.union_with(set);
        for i in lo..hi {
            mine.clear(i);
        }
        if mine.count() == 0 {
            self.targets.remove(&x);
        }
    }

    /// The slot of bit `i`.
    fn slot_at(&self, i: usize) -> (u32, u32) {
        let u = self.offsets.partition_point(|&o| o as usize <= i) - 1;
        (u as u32, i as u32 - self.offsets[u])
    }

    /// The canonical fans of the edges. Each source's *extended* target
    /// set is its targets plus every target of its own thread that some
    /// edge has (those are not its edges, since a fan leaves out its
    /// sources' own threads); sources with equal extended sets share a
    /// fan. This depends on the edges alone and commutes with renaming
    /// threads, so equal edge sets, and edge sets equal up to a renaming,
    /// give equal fans after the renaming (symmetry compares states by
    /// their encodings).
    pub fn fans(self) -> Vec<Fan> {
        let mut all = bc_graph::bits::Bits::new(self.slots());
        for set in self.targets.values() {
            all.union_with(set);
        }
        // Per extended target set, its sources (in order: sources are
        // visited sorted).
        let mut groups: rustc_hash::FxHashMap<bc_graph::bits::Bits, Vec<(u32, u32)>> = Default::default();
        let mut order = Vec::new();
        for (x, mut ext) in self.targets.iter().map(|(&x, set)| (x, set.clone())) {
            let t = x.0 as usize;
            for i in self.offsets[t] as usize..self.offsets[t + 1] as usize {
                if all.get(i) {
                    ext.set(i);
                }
            }
            let sources = groups.entry(ext).or_insert_with_key(|ext| {
                order.push(ext.clone());
                Vec::new()
            });
            sources.push(x);
        }
        // Groups in the order of their first sources: sorted by sources.
        order
            .into_iter()
            .map(|ext| {
                let sources = groups.remove(&ext).expect("every group was recorded");
                let targets = (0..self.slots())
                    .filter(|&i| ext.get(i))
                    .map(|i| self.slot_at(i))
                    .collect();
                Fan { sources, targets }
            })
            .collect()
    }
}

impl Phase {
    /// A phase with no members yet.
    pub fn new(number: u32, bound: Bits) -> Phase {
        Phase {
            number,
            members: Members::default(),
            mask: JoinMask::default(),
            strays: bound.clone(),
            bound,
            arrivals: 0,
            preds: 0,
            count: None,
            site: None,
            mixed_sites: false,
            exit_drop: false,
            vals: Vec::new(),
        }
    }
}

impl Phase {
    /// Arrivals were made and none named a thread count: the phase is the
    /// block-wide barrier, where the uniformity rule applies.
    pub fn is_block_wide(&self) -> bool {
        self.arrivals > 0 && !matches!(self.count, Some(ArriveCount::Threads(_)))
    }
}

impl BState {
    /// The arrivals that complete the open phase: a phase counted with a
    /// thread count completes at that many, whatever the barrier's own
    /// count (and its exits) say; otherwise the expected count.
    pub fn needed(&self) -> i64 {
        match self.open.as_ref().and_then(|p| p.count) {
            Some(c) => c.needed(self.expected),
            None => self.expected,
        }
    }

    /// A barrier at launch: initialized when it has a launch count.
    pub fn at_launch(launch_count: Option<i64>) -> BState {
        BState {
            init: launch_count.is_some(),
            expected: launch_count.unwrap_or(0).max(0),
            arrived: 0,
            pending_drop: 0,
            tx: 0,
            invalid: false,
            base: None,
            settled_len: 0,
            phase_base: 0,
            after_completion: 0,
            cuts: Vec::new(),
            next_phase: 0,
            returned: 0,
            epoch_start: 0,
            abandoned: Vec::new(),
            open: None,
            done: Vec::new(),
        }
    }
}

impl State {
    /// A copy of `s`, built in the state `spare` holds if it holds one (its
    /// vectors keep their allocations: workers copy states on hot paths).
    pub fn copy_in(spare: &mut Option<State>, s: &State) -> State {
        match spare.take() {
            Some(mut n) => {
                n.clone_from(s);
                n
            }
            None => s.clone(),
        }
    }

    /// The state at launch. A model without the `joined-before` rule joins
    /// every thread to every barrier at launch.
    pub fn initial(p: &Program) -> State {
        let nt = p.threads.len();
        let joined_at_launch = !p.model.rules.has(bc_models::Rule::JoinedBefore);
        let mut s = State {
            threads: p
                .threads
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut jmask = JoinMask::default();
                    let mut joined = Vec::new();
                    // A copy agent joins nothing: it is in no barrier's
                    // count and no phase waits for it.
                    let agent = t.kind == bc_graph::ThreadKind::Copy;
                    if joined_at_launch && !agent {
                        // Only the instances this thread can reach, and
                        // every `__syncwarp` mask that names its lane: a
                        // mask another lane computed may name it, and its
                        // exit must release that phase too ("exited
                        // threads named in mask" need not execute it).
                        let named = p.masks_naming(bc_graph::ThreadId(i as u32));
                        for b in t.barriers.iter().flatten().copied().chain(named) {
                            jmask.set(JoinMask::pair(nt, i, b.index()));
                            joined.push(b.0);
                        }
                        joined.sort_unstable();
                        joined.dedup();
                    }
                    TState {
                        pc: 0,
                        status: if t.kernel.is_some() || agent {
                            Status::NotLaunched
                        } else {
                            Status::Running
                        },
                        regs: vec![0; p.codes[t.code.index()].regs.len()],
                        jmask,
                        joined,
                        owes: Vec::new(),
                        started: false,
                    }
                })
                .collect(),
            mem: p.locs.iter().map(|l| l.init).collect(),
            bars: p.barriers.iter().map(|b| BState::at_launch(b.launch_count)).collect(),
            hist: vec![Vec::new(); nt],
            bmo: p
                .barriers
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if b.launch_count.is_some() {
                        vec![(LAUNCH, i as u32)]
                    } else {
                        vec![]
                    }
                })
                .collect(),
            launched: vec![false; p.kernels.len()],
            streams: Vec::new(),
            extra: Vec::new(),
        };
        // Implicit joins at launch (the workgroup barrier of the GFX targets).
        for (i, t) in p.threads.iter().enumerate() {
            if t.kind == bc_graph::ThreadKind::Copy {
                continue;
            }
            let mut seen = Vec::new();
            for &b in t.barriers.iter().flatten() {
                if !p.barriers[b.index()].props.join_at_launch || seen.contains(&b) {
                    continue;
                }
                seen.push(b);
                let th = &mut s.threads[i];
                th.jmask.set(JoinMask::pair(nt, i, b.index()));
                if !th.joined.contains(&b.0) {
                    th.joined.push(b.0);
                    th.joined.sort_unstable();
                }
                s.hist[i].push(HEvent {
                    pc: AT_LAUNCH,
                    kind: HKind::Join,
                    target: Target::Barrier(b),
                });
            }
        }
        s
    }
}

// `clone_from` field by field: the explorer clones each expanded state into
// one scratch state per worker, so duplicates (most successors) cost no
// allocation (derived `Clone` would replace every vector).
impl Clone for TState {
    fn clone(&self) -> TState {
        TState {
            pc: self.pc,
            status: self.status,
            regs: self.regs.clone(),
            jmask: self.jmask.clone(),
            joined: self.joined.clone(),
            owes: self.owes.clone(),
            started: self.started,
        }
    }
    fn clone_from(&mut self, o: &TState) {
        self.pc = o.pc;
        self.status = o.status;
        self.regs.clone_from(&o.regs);
        self.jmask.clone_from(&o.jmask);
        self.joined.clone_from(&o.joined);
        self.owes.clone_from(&o.owes);
        self.started = o.started;
    }
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            threads: self.threads.clone(),
            mem: self.mem.clone(),
            bars: self.bars.clone(),
            hist: self.hist.clone(),
            bmo: self.bmo.clone(),
            launched: self.launched.clone(),
            streams: self.streams.clone(),
            extra: self.extra.clone(),
        }
    }
    fn clone_from(&mut self, o: &State) {
        self.threads.clone_from(&o.threads);
        self.mem.clone_from(&o.mem);
        self.bars.clone_from(&o.bars);
        self.hist.clone_from(&o.hist);
        self.bmo.clone_from(&o.bmo);
        self.launched.clone_from(&o.launched);
        self.streams.clone_from(&o.streams);
        self.extra.clone_from(&o.extra);
    }
}

/// A choice at one state: thread `thread` steps; for a wait, `phase` picks
/// the completed phase (index into the barrier's done list) it completes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) thread: u32,
    pub(crate) phase: Option<u32>,
}
