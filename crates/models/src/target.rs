//! Target data: predefined barrier objects and instruction lowerings.

use std::fmt;

/// A scope of a barrier object or location (AMDHSA sync scopes / CUDA
/// thread hierarchy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Thread,
    Warp,
    Block,
    Cluster,
    Device,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s {
            "thread" => Scope::Thread,
            "warp" => Scope::Warp,
            "block" => Scope::Block,
            "cluster" => Scope::Cluster,
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
    /// The number of waves (litmus threads) in the block.
    WavesInBlock,
    /// The number of blocks (workgroups) in the cluster.
    BlocksInCluster,
}

impl fmt::Display for LaunchCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchCount::None => f.write_str("none (needs init)"),
            LaunchCount::Fixed(k) => write!(f, "{k}"),
            LaunchCount::WavesInBlock => f.write_str("waves in the block"),
            LaunchCount::BlocksInCluster => f.write_str("blocks in the cluster"),
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
    /// Every thread of the scope instance joins it at launch.
    pub join_at_launch: bool,
    /// A thread that ends while joined drops it.
    pub drop_at_end: bool,
    /// Only for privileged code: any use is `ub(privileged-barrier)`, then a no-op.
    pub privileged: bool,
    /// Every operation but join is a no-op (the NULL named barrier).
    pub noop: bool,
}

/// The kinds of instruction operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// A constant barrier id of the model's predefined barriers.
    Barrier,
    /// An integer expression.
    Int,
}

/// An abstract operation of the formal model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbstractOp {
    Init,
    Join,
    Drop,
    Arrive,
    Wait,
}

/// Which barrier a lowered operation acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierRef {
    /// The barrier id given as operand N (0-based).
    Operand(usize),
    /// A fixed barrier id.
    Id(i64),
    /// The barrier of exclusion group G that the thread has joined last
    /// (`s_barrier_leave`; `s_barrier_wait` on a named barrier).
    JoinedInGroup(usize),
}

/// One abstract operation of an instruction's lowering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweredOp {
    pub op: AbstractOp,
    pub barrier: BarrierRef,
    /// The count operand of init, or the expected-count update of arrive.
    pub count: Option<usize>,
    /// The instruction's result is 1 if this arrive was the first of its phase.
    pub isfirst: bool,
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
