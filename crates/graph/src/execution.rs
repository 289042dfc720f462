//! One candidate execution of a program, in the terms of the formal model:
//! the events of each thread in program order, the
//! barrier-modification-order (bmo) of every barrier object and the
//! barrier-participates-in relation (each wait lists its participants).
//!
//! The explorer builds executions; the rule checker judges them without
//! knowing how they were found. Nothing here depends on the interleaving
//! that produced the execution.

use crate::ids::*;

/// The `token_phase` of a wait whose token names no phase of its barrier
/// (an integer that is no token, or another barrier's token).
pub const NO_TOKEN_PHASE: u32 = u32::MAX;

/// The [`Event::pc`] of a thread's implicit join at launch (a barrier its
/// model joins every thread to when it starts).
pub const AT_LAUNCH: u32 = u32::MAX;
/// The [`Event::pc`] of a thread's implicit drop at its end (a barrier its
/// model drops for a thread that exits while joined: an exit drop).
pub const AT_END: u32 = u32::MAX - 1;

/// The count a phase of a thread-counted CUDA block barrier completes at,
/// as one arrival gives it (`bar.sync ID[, COUNT]`, `bar.arrive ID, COUNT`,
/// `__syncthreads`; `cuda-barrier-builtins-lowering.txt`, "Convergence
/// Contract and Deadlock Conditions"). The phase takes the latest arrival's
/// count; arrivals of one phase with different counts are
/// `ub(count-mismatch)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArriveCount {
    /// The whole block: the barrier's own expected count (its launch count,
    /// lowered by exited threads where the model releases the barrier for
    /// them: barriers 0-15). `__syncthreads` and `bar.sync ID` without a
    /// count.
    Block,
    /// A written thread count (`bar.sync ID, N`), whatever its value: a
    /// rendezvous that completes at exactly this many arrivals; exited
    /// threads do not release it.
    Threads(i64),
}

impl ArriveCount {
    /// The arrivals a phase with this count completes at, given the
    /// barrier's own expected count.
    pub fn needed(self, expected: i64) -> i64 {
        match self {
            ArriveCount::Block => expected,
            ArriveCount::Threads(k) => k,
        }
    }
}

/// The participants of a wait (barrier-participates-in). The waits of one
/// phase may share one list: a phase of T threads then holds T entries,
/// not T^2, and a rule that reads only the list's contents can read each
/// distinct list once (by its address).
pub type Participants = std::sync::Arc<[EventId]>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    Init {
        count: i64,
    },
    Join,
    Drop,
    /// Arrive, optionally setting the expected count to `set_count` first.
    /// `count` is set for an arrival on a thread-counted CUDA block barrier
    /// (`bar.sync`, `bar.arrive`, `__syncthreads`): the count its phase
    /// completes at. `object`: an arrive on a `cuda::barrier` object, which
    /// the arrive-before-wait rule judges; `collective`: a cooperative
    /// groups `barrier_arrive`, after which the thread's next arrival on
    /// the barrier must follow its own wait (the same rule).
    Arrive {
        set_count: Option<i64>,
        count: Option<ArriveCount>,
        object: bool,
        collective: bool,
        /// A relaxed arrive (`ArriveSpec::relaxed`): its participation in
        /// a wait orders no memory (`memory_order`).
        relaxed: bool,
        /// How many arrivals it counts as: one but for a counted arrive
        /// (`ArriveSpec::arrivals`), whose count is clamped to 0 ..=
        /// `u32::MAX` (a count below one counts none, and is
        /// `ub(count-overflow)` as a count above the pending arrivals is).
        arrivals: u32,
        /// Made by an `.aligned` instruction (`ArriveSpec::aligned`).
        aligned: bool,
        /// A sync's arrive (its wait follows, from the same statement): on
        /// the device `BAR.SYNC`, where an arrive alone is `BAR.ARV` (the
        /// barrier-forms rule).
        syncs: bool,
        /// A reduction's arrive (`bar.red`: `ArriveSpec::pred`).
        red: bool,
        /// A lane's arrive that its warp makes as one, counted in whole
        /// warps (the explorer's `System::warp_counted`: a device lane's
        /// thread count that is a positive multiple of the warp size).
        whole: bool,
    },
    /// `arrive_drop`: arrive, and lower the expected count of later phases.
    /// `positive`: that count must stay at least one (`mbarrier.arrive_drop`;
    /// `ub(negative-expected-count)` otherwise).
    ArriveDrop {
        positive: bool,
    },
    /// A wait. `completed` is false for a wait that is stuck forever (the
    /// execution ends with the thread blocked on it). `token_phase` is the
    /// bmo phase number a token wait names ([`NO_TOKEN_PHASE`] for none). A
    /// completed token wait with no participants did nothing: its token was
    /// misused (forged, another barrier's, or used twice).
    Wait {
        participants: Participants,
        completed: bool,
        token_phase: Option<u32>,
        /// A parity wait (mbarrier): it completes on the last completed
        /// phase once the current phase's parity differs. It has no
        /// participants when that phase is one the thread waited on
        /// already, or the phase "before" a fresh barrier's first (parity
        /// 1 right after an init), which never happened.
        parity: Option<u8>,
        /// Made by an `.aligned` wait (`WaitSpec::aligned`).
        aligned: bool,
    },
    /// A change of the transaction count (mbarrier `expect_tx` raises it,
    /// `complete_tx` lowers it); a phase completes only at count zero.
    Tx {
        delta: i64,
        /// A thread's own `mbarrier.expect_tx`, which is `.relaxed` (PTX
        /// ISA, `mbarrier.expect_tx`: `.relaxed` is its only semantics):
        /// it orders none of the thread's accesses for a waiter, as a
        /// relaxed arrive orders none (only a fence before it does). The
        /// expect-tx half of `mbarrier.arrive.expect_tx` is not: the
        /// arrive after it releases.
        relaxed: bool,
    },
    Read,
    Write,
    /// `mbarrier.inval`: the barrier may not be used again before an init
    /// (invalid-barrier). Not a modification: bmo and the phase replay
    /// leave it out.
    Inval,
    /// An operation that had no effect because it broke one of the rules
    /// privileged-barrier, uncooperative-grid-sync or invalid-barrier (an
    /// explorer records it only where the model has that rule); `op` is
    /// the operation. Not a modification, and no wait's participant.
    NoEffect {
        op: crate::BarrierOpName,
    },
    /// A memory fence, recorded where some barrier orders memory only
    /// through fences (`BarrierProps::needs_fence`): a participant's
    /// accesses before it are ordered before the waits of a phase it then
    /// arrives on; and a proxy fence (`fence.proxy.async`), recorded where
    /// some copy runs in the async proxy (`Program::proxy_events`): the
    /// writer's proxy fence orders its generic writes before what the
    /// fence executes before in the async proxy. Its target is
    /// [`Target::None`].
    Fence {
        scope: crate::FenceScope,
    },
}

impl EventKind {
    /// A relaxed arrive, or a thread's relaxed expect-tx
    /// ([`crate::BarrierOp::orders_no_memory`]): it joins its phase but
    /// orders none of its thread's accesses for the waiters.
    pub fn orders_no_memory(&self) -> bool {
        matches!(
            self,
            EventKind::Arrive { relaxed: true, .. } | EventKind::Tx { relaxed: true, .. }
        )
    }

    /// Init, drop, arrive: the operations ordered by bmo.
    pub fn is_modification(&self) -> bool {
        matches!(
            self,
            EventKind::Init { .. }
                | EventKind::Drop
                | EventKind::Arrive { .. }
                | EventKind::ArriveDrop { .. }
                | EventKind::Tx { .. }
        )
    }
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Init { .. } => "init",
            EventKind::Join => "join",
            EventKind::Drop => "drop",
            EventKind::Arrive { .. } => "arrive",
            EventKind::ArriveDrop { .. } => "arrive_drop",
            EventKind::Wait { .. } => "wait",
            EventKind::Tx { .. } => "tx",
            EventKind::Read => "read",
            EventKind::Write => "write",
            EventKind::Inval => "inval",
            EventKind::NoEffect { .. } => "no effect",
            EventKind::Fence { .. } => "fence",
        }
    }
}

/// What an event operates on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Barrier(BarrierId),
    Loc(LocId),
    /// No object: a fence.
    None,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// `None` for the launch: the initialization of `barrier B = K`
    /// objects, program-order-before every thread's first event.
    pub thread: Option<ThreadId>,
    /// The pc of the instruction that performed it (0 for launch events;
    /// [`AT_LAUNCH`] and [`AT_END`] for a thread's implicit joins and
    /// drops).
    pub pc: u32,
    pub kind: EventKind,
    pub target: Target,
}

impl Event {
    pub fn barrier(&self) -> Option<BarrierId> {
        match self.target {
            Target::Barrier(b) => Some(b),
            Target::Loc(_) | Target::None => None,
        }
    }
    /// A thread's implicit join at launch or drop at its end: no
    /// instruction of the thread performed it.
    pub fn is_implicit(&self) -> bool {
        self.thread.is_some() && (self.pc == AT_LAUNCH || self.pc == AT_END)
    }
}

/// What the rules read of a thread beyond its events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadFacts {
    /// The code (thread body) it runs: two events are at one instruction
    /// site when their threads run one code and their pcs are equal.
    pub code: u32,
    /// Launched cooperatively (`kernel ... cooperative`).
    pub cooperative: bool,
    /// Its warp (`ThreadInfo::warp_id`; `u32::MAX` for a host thread).
    pub warp: u32,
    /// Its block and cluster (`ThreadInfo::block_id`, `cluster_id`).
    pub block: u32,
    pub cluster: u32,
    /// A copy agent (`ThreadKind::Copy`): the hardware's, not the
    /// program's.
    pub agent: bool,
    /// An agent that performs copies (not an arrive agent) whose latest
    /// completion (its latest arrive or `complete_tx` event) the explorer
    /// does not know to be observed: it must execute before some event of
    /// a thread that is not an agent by the end of the execution
    /// (copy-not-waited). Its earlier completions are observed (an agent
    /// serves a new copy only once everything it did executes before the
    /// issuer), and a completion observed before the explorer forgot what
    /// orders it is cleared (a summary, like `extra_eb`).
    pub copies: bool,
    /// An agent whose reads and writes are in the async proxy
    /// (`Program::async_agent`): a generic write is ordered before them
    /// only through a proxy fence of the writer (the race rule).
    pub async_proxy: bool,
}

impl ThreadFacts {
    /// The narrowest scope whose one instance holds both threads: what a
    /// fence must cover to order one's accesses for the other.
    pub fn shared_scope(&self, other: &ThreadFacts) -> bc_models::Scope {
        shared_scope((self.block, self.cluster), (other.block, other.cluster))
    }
}

/// The narrowest scope whose one instance holds two threads, given each
/// one's (block, cluster) numbered across the test.
pub fn shared_scope(a: (u32, u32), b: (u32, u32)) -> bc_models::Scope {
    use bc_models::Scope;
    if a.0 == b.0 {
        Scope::Block
    } else if a.1 == b.1 {
        Scope::Cluster
    } else {
        Scope::Device
    }
}

/// A candidate execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Execution {
    pub events: Vec<Event>,
    /// Per thread, its events in program order.
    pub program_order: Vec<Vec<EventId>>,
    /// Per barrier instance, its modification events in bmo.
    pub bmo: Vec<Vec<EventId>>,
    /// Symmetric pairs of barrier-mutually-exclusive objects.
    pub mutually_exclusive: Vec<(BarrierId, BarrierId)>,
    /// Executes-before edges that summarize paths through events an
    /// explorer has forgotten (see docs/explorer.md): `(a, b)` means `a`
    /// executes before `b`.
    pub extra_eb: Vec<(EventId, EventId)>,
    /// Where a model joins every thread at launch (no `joined-before`
    /// rule), the join executes before whatever the thread's first event
    /// executes before. Once an explorer has forgotten that event, an
    /// entry `(ts, es)` records that the start of each thread of `ts`
    /// executes before each event of `es` (and so before everything they
    /// execute before); otherwise the first event kept stands for the
    /// start. Factored (a phase of T threads leaves every start before
    /// every thread's wait: T^2 pairs, in one entry of T and T); `es` may
    /// list a thread's own events, which its start precedes anyway.
    pub started_before: Vec<(Vec<ThreadId>, Vec<EventId>)>,
    /// Per barrier instance (missing = 0): the number of the first phase
    /// after a launch init that stands for forgotten phases, so phase
    /// numbers (tokens) keep counting from where the forgotten ones ended.
    pub phase_base: Vec<u32>,
    /// Per barrier instance (missing = its `phase_base`): the number of the
    /// first phase after the latest init, where that init was forgotten
    /// too; parity waits count parity from it (the phases after the
    /// launch init keep the parity they had).
    pub epoch_base: Vec<u32>,
    /// Per barrier instance (missing = none): the `__syncwarp` mask it
    /// stands for, with its warp and the threads the mask names.
    pub syncwarp: Vec<Option<crate::SyncwarpMask>>,
    /// Per barrier instance (missing = default): the model's properties of
    /// it (privileged, uniform, cooperative are what rules read).
    pub props: Vec<crate::BarrierProps>,
    /// Per thread (missing = default): its code and launch.
    pub threads: Vec<ThreadFacts>,
    /// A prefix of a longer run (what history compaction forgets, or where
    /// a search stopped at a limit), not an end: a phase still open may
    /// yet gather the arrivals it lacks.
    pub partial: bool,
    /// The run ended with every thread finished (not stuck, not spinning,
    /// not a prefix): what copy-not-waited needs to know that no wait can
    /// come any more.
    pub finished: bool,
}

impl Execution {
    pub fn event(&self, e: EventId) -> &Event {
        &self.events[e.index()]
    }
    pub fn ids(&self) -> impl Iterator<Item = EventId> {
        (0..self.events.len() as u32).map(EventId)
    }
    /// Participants of a wait (empty for other events).
    pub fn participants(&self, w: EventId) -> &[EventId] {
        match &self.events[w.index()].kind {
            EventKind::Wait { participants, .. } => participants,
            _ => &[],
        }
    }
    /// The model's properties of barrier `b`.
    pub fn props(&self, b: BarrierId) -> crate::BarrierProps {
        self.props.get(b.index()).copied().unwrap_or_default()
    }
    /// What the rules read of thread `t`.
    pub fn thread(&self, t: ThreadId) -> ThreadFacts {
        self.threads.get(t.index()).copied().unwrap_or_default()
    }
    pub fn mutually_exclusive(&self, a: BarrierId, b: BarrierId) -> bool {
        a != b
            && self
                .mutually_exclusive
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    }
}

/// Builds executions by hand (tests) or from explorer history.
#[derive(Default)]
pub struct ExecutionBuilder {
    exec: Execution,
}

impl ExecutionBuilder {
    pub fn new(threads: usize, barriers: usize) -> ExecutionBuilder {
        ExecutionBuilder {
            exec: Execution {
                program_order: vec![Vec::new(); threads],
                bmo: vec![Vec::new(); barriers],
                ..Default::default()
            },
        }
    }
    /// Adds an event at the end of its thread's program order (launch events
    /// have no thread). Modification events are not put in bmo: call
    /// [`ExecutionBuilder::bmo`].
    pub fn event(&mut self, thread: Option<ThreadId>, pc: u32, kind: EventKind, target: Target) -> EventId {
        let id = EventId(self.exec.events.len() as u32);
        self.exec.events.push(Event {
            thread,
            pc,
            kind,
            target,
        });
        if let Some(t) = thread {
            self.exec.program_order[t.index()].push(id);
        }
        id
    }
    /// Appends `e` to the bmo of its barrier.
    pub fn bmo(&mut self, e: EventId) {
        let b = self.exec.events[e.index()]
            .barrier()
            .expect("bmo events are barrier events");
        self.exec.bmo[b.index()].push(e);
    }
    /// Sets the participants of `wait`: a list of its own, or one shared
    /// with the other waits of its phase ([`Participants`]).
    pub fn set_participants(&mut self, wait: EventId, ps: impl Into<Participants>) {
        if let EventKind::Wait { participants, .. } = &mut self.exec.events[wait.index()].kind {
            *participants = ps.into();
        }
    }
    pub fn mutually_exclusive(&mut self, a: BarrierId, b: BarrierId) {
        self.exec.mutually_exclusive.push((a, b));
    }
    /// Records that `a` executes before `b` through forgotten events.
    pub fn extra_eb(&mut self, a: EventId, b: EventId) {
        self.exec.extra_eb.push((a, b));
    }
    /// Records that thread `t`'s start executes before `e` through
    /// forgotten events (see [`Execution::started_before`]).
    pub fn started_before(&mut self, t: ThreadId, e: EventId) {
        self.exec.started_before.push((vec![t], vec![e]));
    }
    /// Records that the start of each of `ts` executes before each of
    /// `es` through forgotten events.
    pub fn starts_before(&mut self, ts: Vec<ThreadId>, es: Vec<EventId>) {
        if !ts.is_empty() && !es.is_empty() {
            self.exec.started_before.push((ts, es));
        }
    }
    /// Phases after `b`'s launch init are numbered from `n` on.
    pub fn phase_base(&mut self, b: BarrierId, n: u32) {
        let bases = &mut self.exec.phase_base;
        if bases.len() <= b.index() {
            bases.resize(b.index() + 1, 0);
        }
        bases[b.index()] = n;
    }
    /// Parity on `b` after its launch init counts from phase `n` (at most
    /// its `phase_base`): the latest init was forgotten with the phases
    /// the launch init stands for.
    pub fn epoch_base(&mut self, b: BarrierId, n: u32) {
        let bases = &mut self.exec.epoch_base;
        if bases.len() <= b.index() {
            bases.resize(b.index() + 1, u32::MAX);
        }
        bases[b.index()] = n;
    }
    /// Barrier `b` is the `__syncwarp` barrier of mask `w`.
    pub fn syncwarp(&mut self, b: BarrierId, w: crate::SyncwarpMask) {
        let v = &mut self.exec.syncwarp;
        if v.len() <= b.index() {
            v.resize(b.index() + 1, None);
        }
        v[b.index()] = Some(w);
    }
    /// Barrier `b` has the model's properties `props`.
    pub fn props(&mut self, b: BarrierId, props: crate::BarrierProps) {
        let v = &mut self.exec.props;
        if v.len() <= b.index() {
            v.resize(b.index() + 1, Default::default());
        }
        v[b.index()] = props;
    }
    /// Thread `t` runs code `code`, launched cooperatively or not.
    pub fn thread(&mut self, t: ThreadId, facts: ThreadFacts) {
        let v = &mut self.exec.threads;
        if v.len() <= t.index() {
            v.resize(t.index() + 1, ThreadFacts::default());
        }
        v[t.index()] = facts;
    }
    pub fn finish(self) -> Execution {
        self.exec
    }
}
