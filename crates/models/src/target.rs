//! Target data: predefined barrier objects and instruction lowerings.

use std::fmt;

/// A scope of a barrier object or location (AMDHSA sync scopes / CUDA
/// thread hierarchy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Thread,
    Warp,
    Block,
    Cluster,
    /// One instance per grid: the threads of one kernel launch (the
    /// explicit `thread`s together form one grid of their own). Model data
    /// only: litmus declarations name the five scopes of the format.
    Grid,
    Device,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s {
            "thread" => Scope::Thread,
            "warp" => Scope::Warp,
            "block" => Scope::Block,
            "cluster" => Scope::Cluster,
            "grid" => Scope::Grid,
            "device" => Scope::Device,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Scope::Thread => "thread",
            Scope::Warp => "warp",
            Scope::Block => "block",
            Scope::Cluster => "cluster",
            Scope::Grid => "grid",
            Scope::Device => "device",
        }
    }
}

/// How a predefined barrier's expected count is set when the grid launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchCount {
    /// Not initialized at launch: needs an init instruction.
    None,
    Fixed(i64),
    /// The number of waves or threads (litmus threads) in the block.
    WavesInBlock,
    /// The number of blocks (workgroups) in the cluster.
    BlocksInCluster,
    /// The number of threads in the cluster.
    ThreadsInCluster,
    /// The number of device threads in the grid.
    ThreadsInGrid,
}

impl fmt::Display for LaunchCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchCount::None => f.write_str("none (needs init)"),
            LaunchCount::Fixed(k) => write!(f, "{k}"),
            LaunchCount::WavesInBlock => f.write_str("waves in the block"),
            LaunchCount::BlocksInCluster => f.write_str("blocks in the cluster"),
            LaunchCount::ThreadsInCluster => f.write_str("threads in the cluster"),
            LaunchCount::ThreadsInGrid => f.write_str("threads in the grid"),
        }
    }
}

/// A barrier object the hardware provides, named by an integer id in
/// instructions (`s_barrier_signal -1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredefinedBarrier {
    pub id: i64,
    pub name: String,
    pub scope: Scope,
    pub count: LaunchCount,
    /// What the barrier does beyond the formal model.
    pub props: BarrierProps,
    /// Instructions may name it by an id operand (`bar.sync 3`); barriers
    /// only fixed lowerings use (the warp barrier of `__syncwarp`) say no.
    pub operand: bool,
}

/// The kinds of instruction operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// A constant barrier id of the model's predefined barriers.
    Barrier,
    /// A declared barrier object (`barrier B`).
    Object,
    /// An integer expression.
    Int,
    /// A register (a phase token).
    Reg,
}

/// An abstract operation of the formal model, plus the mbarrier
/// transaction-count and invalidation operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AbstractOp {
    Init,
    Join,
    Drop,
    #[default]
    Arrive,
    ArriveDrop,
    Wait,
    /// Raise the transaction count of the current phase.
    ExpectTx,
    /// Lower the transaction count (an asynchronous copy completing).
    CompleteTx,
    /// Invalidate the barrier: any later use is `ub(invalid-barrier)`.
    Inval,
}

/// Which barrier a lowered operation acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierRef {
    /// A declared barrier object named by operand N (`mbarrier.arrive B`).
    Object(usize),
    /// The barrier id given as operand N (0-based).
    Operand(usize),
    /// A fixed barrier id.
    Id(i64),
    /// The barrier of exclusion group G that the thread has joined last
    /// (`s_barrier_leave`; `s_barrier_wait` on a named barrier).
    JoinedInGroup(usize),
}

/// The reduction a block barrier's wait returns (`__syncthreads_count` etc.),
/// or the result a warp intrinsic's wait computes from the values its
/// phase's lanes gave (`__shfl_sync`, `__ballot_sync`, ...: the arrive's
/// `value=`; docs/semantics.md, "Warp intrinsics").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// How many participants' predicates were non-zero.
    Popc,
    And,
    Or,
    /// `__shfl*_sync`: the value of the lane the mode picks (the wait's
    /// `lane=` operand, within its `width=` segment).
    Shfl(ShflMode),
    /// `__ballot_sync`: the lanes whose value is non-zero, as a mask.
    Ballot,
    /// `__all_sync`, `__any_sync`, `__uni_sync`: whether every lane's
    /// value is non-zero, some lane's is, or all are alike (zero or not).
    VoteAll,
    VoteAny,
    VoteUni,
    /// `__match_any_sync`: the lanes whose value equals the caller's;
    /// `__match_all_sync`: all the lanes when every value is alike, else 0.
    MatchAny,
    MatchAll,
    /// `__reduce_*_sync`: the lanes' values combined.
    Redux(ReduxOp),
    /// PTX `elect.sync`: the lane id of the leader, the lowest lane of
    /// the phase (the non-exited lanes of the mask). The PTX ISA says
    /// only that the election is deterministic for a mask; an H200 elects
    /// the lowest non-exited lane of the mask (docs/hardware.md).
    Elect,
}

impl Reduce {
    /// Whether the wait reads the lanes' own values (`value=` on the
    /// arrive) rather than the phase's predicate count.
    pub fn per_lane(self) -> bool {
        !matches!(self, Reduce::Popc | Reduce::And | Reduce::Or)
    }

    /// A small number naming the form, the same for the arrive and the
    /// wait of one intrinsic (a phase's lanes must all run one form).
    pub fn code(self) -> u8 {
        match self {
            Reduce::Popc => 0,
            Reduce::And => 1,
            Reduce::Or => 2,
            Reduce::Shfl(m) => 3 + m as u8,
            Reduce::Ballot => 7,
            Reduce::VoteAll => 8,
            Reduce::VoteAny => 9,
            Reduce::VoteUni => 10,
            Reduce::MatchAny => 11,
            Reduce::MatchAll => 12,
            Reduce::Redux(o) => 13 + o as u8,
            Reduce::Elect => 19,
        }
    }
}

/// The source lane of a shuffle (PTX ISA, `shfl.sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShflMode {
    Idx = 0,
    Up = 1,
    Down = 2,
    Bfly = 3,
}

/// How `redux.sync` combines the lanes' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add = 0,
    Min = 1,
    Max = 2,
    And = 3,
    Or = 4,
    Xor = 5,
}

/// One abstract operation of an instruction's lowering, with the options
/// the lowering text gives it (see docs/models.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweredOp {
    pub op: AbstractOp,
    pub barrier: BarrierRef,
    /// The count operand of init, the expected-count update of arrive, or
    /// the amount of expect_tx / complete_tx.
    pub count: Option<usize>,
    /// Counted barrier (`bar.sync ID, COUNT`): each arrive sets the phase's
    /// expected count (the barrier's launch count when the operand is left
    /// out); arrivals of one phase with different counts are
    /// `ub(count-mismatch)`.
    pub count_match: bool,
    /// `arrive_drop` whose lowered expected count must stay at least one
    /// (`mbarrier.arrive_drop`: PTX gives mbarrier counts the range
    /// 1..2^20-1); a drop to zero is `ub(negative-expected-count)`.
    pub positive: bool,
    /// `__syncwarp MASK`: the operand is a lane mask; the expected count is
    /// the lanes in it; the caller's lane must be in it and every arrival of
    /// a phase must use the same mask (`ub(syncwarp-mask)`).
    pub mask: Option<usize>,
    /// A cooperative-groups tile (`tile.sync N`): the operand is the tile
    /// size N (a constant 1, 2, 4, ..., up to the warp size), and the
    /// instruction acts as `mask=` with the lanes of the caller's tile, the
    /// N consecutive lanes that hold it (`thread_block_tile<N>::sync` is a
    /// `__syncwarp` over the tile's lanes).
    pub tile: Option<usize>,
    /// An `.aligned` PTX barrier instruction: the threads of a warp that
    /// arrive in one phase do so through this one instruction, all of
    /// them (`ub(divergent-barrier)`, rule `aligned-barrier`).
    pub aligned: bool,
    /// A relaxed arrive (PTX `barrier.cluster.arrive.relaxed`): it orders
    /// no memory, so the accesses before it are ordered for a waiter only
    /// through a fence (docs/semantics.md, "Barriers and memory").
    pub relaxed: bool,
    /// An arrive of a split-phase barrier whose phase some wait must
    /// observe before the thread arrives again (`ub(arrive-before-wait)`):
    /// the abstract `arrive` (`cuda::barrier`).
    pub object: bool,
    /// A cooperative-groups `barrier_arrive`: until the thread's own wait
    /// on the barrier completes, any other arrival of the thread on it (a
    /// collective of the group, another `barrier_arrive`) is
    /// `ub(arrive-before-wait)` (CUDA guide, `barrier_arrive` and
    /// `barrier_wait`).
    pub collective: bool,
    /// A predicate operand, reduced over the phase by the wait's `reduce`.
    pub pred: Option<usize>,
    pub reduce: Option<Reduce>,
    /// The value operand a warp intrinsic's arrive gives its phase, for
    /// the wait's per-lane `reduce` (`value=`).
    pub value: Option<usize>,
    /// A shuffle wait's source lane, delta or lane mask (`lane=`), and the
    /// width of its lane segments (`width=`, 32 when left out).
    pub lane: Option<usize>,
    pub width: Option<usize>,
    /// The instruction's result is 1 if this arrive was the first of its phase.
    pub isfirst: bool,
    /// The instruction's result is this arrive's phase token.
    pub token_result: bool,
    /// A wait for the phase of the token in this operand (a register).
    pub token: Option<usize>,
    /// A wait until the phase of this parity has completed (mbarrier).
    pub parity: Option<usize>,
    /// An arrive that first raises the transaction count of the phase by
    /// this operand, in the same step (`mbarrier.arrive.expect_tx`).
    pub tx: Option<usize>,
    /// An arrive that counts as this operand's number of arrivals, in one
    /// step (PTX `mbarrier.arrive` with a count, `cuda::barrier::arrive(n)`,
    /// `cuda::device::barrier_arrive_tx`); left out (or the operand left
    /// out), one.
    pub arrivals: Option<usize>,
    /// A wait that does not block: it completes if it can and writes 1 to
    /// its result, else writes 0 and does nothing (`mbarrier.test_wait`).
    pub poll: bool,
    /// A poll when written with a result register (`r = ...`), the
    /// blocking wait when written without (`mbarrier.try_wait`: its
    /// statement form is the format's blocking wait).
    pub poll_with_result: bool,
}

/// A target instruction and its lowering to abstract operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub name: String,
    /// Operand kinds; the last `optional` ones may be left out.
    pub operands: Vec<OperandKind>,
    pub optional: usize,
    /// Whether `r = INSTR ...` is allowed.
    pub result: bool,
    pub lowering: Vec<LoweredOp>,
    /// The original lowering text, for `barrier-check models NAME`.
    pub text: String,
}

impl Default for BarrierRef {
    fn default() -> BarrierRef {
        BarrierRef::Operand(0)
    }
}

/// What a target's predefined barrier does beyond the formal model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BarrierProps {
    /// Every thread of the scope instance joins it at launch.
    pub join_at_launch: bool,
    /// A thread that ends while joined drops it.
    pub drop_at_end: bool,
    /// Only for privileged code: any use is `ub(privileged-barrier)`, then a no-op.
    pub privileged: bool,
    /// Every operation but join is a no-op (the NULL named barrier).
    pub noop: bool,
    /// Every phase must be completed by one instruction site reached by
    /// every thread of the scope (`ub(divergent-barrier)` otherwise).
    pub uniform: bool,
    /// Only in a cooperative launch (`ub(uncooperative-grid-sync)` otherwise,
    /// then a no-op).
    pub cooperative: bool,
    /// The hidden element of a barrier array that an index out of range
    /// selects (set by lowering, never by a model file): every use is
    /// `ub(invalid-barrier)`, then a no-op.
    pub out_of_range: bool,
    /// Its phases order execution but not memory (model files write
    /// `orders_memory = false`): the race rule orders a participant's
    /// earlier accesses after the phase only through a fence of that
    /// participant (docs/semantics.md, "Barriers and memory"). The PTX
    /// ISA's reading of `bar.sync` ("Parallel Synchronization and
    /// Communication Instructions: bar, barrier": a completed barrier
    /// orders the participants' prior accesses) leaves it false; the CUDA
    /// barrier builtins lowering notes' reading of SM70+ (a `bar.sync`
    /// without a `membar.cta` is a reorder hazard) sets it
    /// (`cuda-sm90-nofence`).
    pub needs_fence: bool,
    /// A copy holds its phases (set by lowering, never by a model file):
    /// `memcpy_async` with the barrier, or `cp.async.mbarrier.arrive`
    /// without `.noinc`, raises the pending count of the current phase,
    /// which the model keeps as one more transaction. So a plain arrive
    /// that finds no arrival pending while transactions are outstanding
    /// may be one the raised count absorbs: count-overflow does not judge
    /// it here (docs/semantics.md, "Counted arrivals").
    pub held: bool,
    /// The `written` barrier of a bulk-group copy's agent (set by lowering,
    /// never by a model file): its arrives mark where the copy's write
    /// lies, and are not the copy's completion (copy-not-waited reads the
    /// arrive on the agent's start barrier, after its reads).
    pub copy_written: bool,
}
