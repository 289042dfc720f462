//! The lowered program: threads, instances, code.

use crate::ids::*;
use bc_models::Model;
use bc_syntax::{FindingKind, Quantifier, Span};
use std::collections::BTreeSet;

pub use bc_models::Scope;

#[derive(Clone, Debug)]
pub struct BarrierInstance {
    /// Display name: the declared name, with the scope instance when the
    /// object has several (`B@block1`).
    pub name: String,
    pub decl_name: String,
    /// Expected count set at launch (`barrier B = K`), or `None` (needs `init`).
    pub launch_count: Option<i64>,
    pub decl_span: Span,
    /// Properties of a model's predefined barrier (all false for declared ones).
    pub props: BarrierProps,
    /// For the barrier of one `__syncwarp` mask in one warp: the lanes the
    /// mask names.
    pub syncwarp: Option<SyncwarpMask>,
    /// Whether a thread's end drops this instance: the model says so
    /// (`drop_at_end`), and some operation of the program reads the count a
    /// drop lowers (`lower::only_counted_exit_drops`).
    pub exit_drops: bool,
}

/// One `__syncwarp` mask of one warp ("Synchronization Functions",
/// `__syncwarp`): a thread waits until the lanes named in its mask have
/// executed a `__syncwarp` with the same mask, so each (warp, mask) pair is
/// a barrier of its own whose expected count is the named lanes that exist;
/// a named lane that exits drops it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncwarpMask {
    /// The warp, as an index among the warps of the test (block and warp).
    pub warp: u32,
    /// The mask value (32 bits).
    pub mask: u64,
    /// The threads of the warp whose lanes the mask names.
    pub named: Vec<ThreadId>,
}

impl BarrierInstance {
    /// Whether thread `t` drops this barrier when it ends: its exit drops
    /// are kept ([`BarrierInstance::exit_drops`]), and for a `__syncwarp`
    /// barrier the mask names `t`'s lane.
    pub fn dropped_at_end_by(&self, t: ThreadId) -> bool {
        self.exit_drops && self.syncwarp.as_ref().is_none_or(|w| w.named.contains(&t))
    }
    /// Whether some thread of a program of `threads` threads drops this
    /// barrier when it ends: [`BarrierInstance::dropped_at_end_by`] for
    /// some thread, without asking each.
    pub fn dropped_at_end_by_some(&self, threads: usize) -> bool {
        self.exit_drops
            && match &self.syncwarp {
                None => threads > 0,
                Some(w) => w.named.iter().any(|t| t.index() < threads),
            }
    }
}

pub use bc_models::BarrierProps;

/// Which barrier a barrier instruction acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierSel {
    /// A declaration (user `barrier` or model-predefined), per thread instance.
    Decl(u32),
    /// The member of exclusion group `group` the thread has joined (none: the
    /// operation has no barrier).
    Joined { group: u32 },
    /// `decl`, unless the thread has joined a member of `group`: then that one.
    JoinedOr { group: u32, decl: u32 },
}

impl BarrierSel {
    /// Every declaration the selector may choose, given the exclusion
    /// groups (`Program::groups`): for a run-time choice, all of them.
    pub fn decls(self, groups: &[Vec<u32>]) -> Vec<u32> {
        match self {
            BarrierSel::Decl(d) => vec![d],
            BarrierSel::Joined { group } => groups[group as usize].clone(),
            BarrierSel::JoinedOr { group, decl } => {
                let mut v = groups[group as usize].clone();
                v.push(decl);
                v
            }
        }
    }
}

/// What a barrier instruction writes to its result register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierResult {
    /// A phase token (`t = arrive B`).
    Token(RegId),
    /// 1 if the arrive was the first of its phase (`s_barrier_signal_isfirst`).
    IsFirst(RegId),
    /// The wait's reduction of the phase's predicates (`__syncthreads_count`).
    Reduce(RegId),
    /// Whether a polling wait completed ([`WaitSpec::poll`]).
    Poll(RegId),
}

/// One barrier declaration of the file, an array element standing alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredBarrier {
    pub name: String,
    /// The count set at launch (`barrier B = K`), if any.
    pub launch_count: Option<i64>,
    /// The hidden element an array index out of range selects.
    pub out_of_range: bool,
}

#[derive(Clone, Debug)]
pub struct LocInstance {
    pub name: String,
    pub init: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadKind {
    Device,
    Host,
    /// An asynchronous copy in flight (`cp.async.bulk`): the copy engine
    /// working for one issuing thread, lowered as a thread of its own
    /// ([`CopyPool`]). It is in no barrier's count, starts only when its
    /// issuer issues a copy, and always gets to finish.
    Copy,
}

#[derive(Clone, Debug)]
pub struct ThreadInfo {
    pub name: String,
    pub kind: ThreadKind,
    pub code: CodeId,
    pub block: u32,
    pub cluster: u32,
    pub warp: u32,
    pub tid: u32,
    pub ntid: u32,
    pub lane: u32,
    /// Launched cooperatively (`kernel ... cooperative`).
    pub cooperative: bool,
    /// The lanes (bit per lane) of the threads in this thread's warp.
    pub warp_lanes: u64,
    /// The warp, numbered across the test (grid, block and warp): equal
    /// for the threads of one warp. `u32::MAX` for a host thread.
    pub warp_id: u32,
    /// The block and the cluster, numbered across the test as `warp_id`
    /// is (`u32::MAX` for a host thread).
    pub block_id: u32,
    pub cluster_id: u32,
    /// The named kernel this thread belongs to (index into `Program::kernels`).
    pub kernel: Option<u32>,
    /// Declared barrier index -> the instance this thread touches; `None`
    /// where the thread is in no instance of the object's scope (a host
    /// thread and a block-scope object): lowering rejects such uses.
    pub barriers: Vec<Option<BarrierId>>,
    /// Declared location index -> the instance this thread touches (`None`
    /// as for `barriers`).
    pub locs: Vec<Option<LocId>>,
}

/// A builtin value of kernel bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Tid,
    Bid,
    Warp,
    Lane,
    Ntid,
}

/// A compiled expression over registers, builtins and (in `await` and
/// assertions) locations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CExpr {
    Int(i64),
    Reg(RegId),
    Builtin(Builtin),
    /// A declared location (index into the declarations; resolved per thread).
    Loc(u32),
    /// `T0:r` in assertions.
    ThreadReg(ThreadId, RegId),
    /// A location instance, in assertions.
    LocInst(LocId),
    Unary(bc_syntax::Op, Box<CExpr>),
    Binary(bc_syntax::Op, Box<CExpr>, Box<CExpr>),
}

/// An abstract barrier operation of the formal model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BarrierOp {
    Init(CExpr),
    Join,
    Drop,
    /// Arrive, optionally setting the expected count first.
    Arrive(ArriveSpec),
    /// Wait: on an entitled phase, a token's phase, or a parity.
    Wait(WaitSpec),
    /// CUDA `arrive_and_drop`: arrive, and lower the expected count of the
    /// following phases by one (one atomic operation). `positive`: that
    /// count must stay at least one (`mbarrier.arrive_drop`).
    ArriveDrop {
        positive: bool,
    },
    /// Raise the transaction count of the current phase (mbarrier).
    ExpectTx(CExpr),
    /// Lower the transaction count (an asynchronous copy completes).
    CompleteTx(CExpr),
    /// Invalidate the barrier object.
    Inval,
}

/// What an arrive carries besides itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArriveSpec {
    /// Set the expected count to this before arriving.
    pub set_count: Option<CExpr>,
    /// Thread-counted block barrier (CUDA `bar.sync`/`bar.arrive`/
    /// `__syncthreads`): `set_count` is not an expected-count update but the
    /// phase's count ([`crate::ArriveCount`]: the block when left out, that
    /// many threads when written); every arrival of the phase must agree,
    /// and a thread arrives at most once in it.
    pub count_match: bool,
    /// `__syncwarp` lane mask.
    pub mask: Option<CExpr>,
    /// Predicate for the phase's reduction.
    pub pred: Option<CExpr>,
    /// A warp intrinsic's value, given to its phase for the wait's
    /// per-lane `reduce` (`bc_models::Reduce::per_lane`), with the form it
    /// belongs to (a phase's lanes must all run one form).
    pub value: Option<(CExpr, bc_models::Reduce)>,
    /// A `cuda::barrier`-style arrive (the abstract `arrive` statement):
    /// the arrive-before-wait rule applies to it.
    pub object: bool,
    /// A cooperative-groups `barrier_arrive` ([`bc_models::LoweredOp::collective`]):
    /// the thread's next arrival on the barrier must follow its own wait.
    pub collective: bool,
    /// Raise the transaction count of the current phase by this much
    /// before arriving, in one step (`mbarrier.arrive.expect_tx`: PTX
    /// performs the expect-tx operation, then the arrive-on operation, as
    /// one instruction).
    pub tx: Option<CExpr>,
    /// An `.aligned` instruction's arrive ([`bc_models::LoweredOp::aligned`]).
    pub aligned: bool,
    /// A relaxed arrive ([`bc_models::LoweredOp::relaxed`]): its
    /// participation in a wait orders no memory.
    pub relaxed: bool,
    /// Count as this many arrivals, in one step (PTX `mbarrier.arrive B,
    /// count`, `cuda::barrier::arrive(n)`); `None` is one. Fewer than one,
    /// or more than the phase still expects, is `ub(count-overflow)`.
    pub arrivals: Option<CExpr>,
}

/// Which phase a wait completes on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WaitSpec {
    /// The phase of the token in this register.
    pub token: Option<RegId>,
    /// The last completed phase, once the current phase's parity differs.
    pub parity: Option<CExpr>,
    /// The reduction written to the result register.
    pub reduce: Option<bc_models::Reduce>,
    /// A shuffle's source lane operand (its lane, delta or lane mask) and
    /// segment width (`bc_models::Reduce::Shfl`).
    pub lane: Option<CExpr>,
    pub width: Option<CExpr>,
    /// A non-blocking test (`r = mbarrier.test_wait.parity B, P`): it
    /// completes when a blocking wait could, writing 1 to its result
    /// ([`BarrierResult::Poll`]), and otherwise writes 0 and has no effect.
    pub poll: bool,
    /// The wait of an `.aligned` split barrier (`barrier.cluster.wait.aligned`):
    /// every lane of the warp waits on the phase through this one
    /// instruction (PTX ISA, `barrier.cluster`; rule `aligned-barrier`).
    pub aligned: bool,
}

/// Which barrier operation an instruction performs, without its operands
/// (an event of an operation that had no effect names it:
/// [`crate::EventKind::NoEffect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierOpName {
    Init,
    Join,
    Drop,
    Arrive,
    Wait,
    ArriveDrop,
    ExpectTx,
    CompleteTx,
    Inval,
}

impl BarrierOpName {
    /// Every name, in declaration order (`ALL[op as usize] == op`).
    pub const ALL: [BarrierOpName; 9] = [
        BarrierOpName::Init,
        BarrierOpName::Join,
        BarrierOpName::Drop,
        BarrierOpName::Arrive,
        BarrierOpName::Wait,
        BarrierOpName::ArriveDrop,
        BarrierOpName::ExpectTx,
        BarrierOpName::CompleteTx,
        BarrierOpName::Inval,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BarrierOpName::Init => "init",
            BarrierOpName::Join => "join",
            BarrierOpName::Drop => "drop",
            BarrierOpName::Arrive => "arrive",
            BarrierOpName::Wait => "wait",
            BarrierOpName::ArriveDrop => "arrive_drop",
            BarrierOpName::ExpectTx => "expect_tx",
            BarrierOpName::CompleteTx => "complete_tx",
            BarrierOpName::Inval => "inval",
        }
    }
}

impl BarrierOp {
    /// The operation, without its operands.
    pub fn op_name(&self) -> BarrierOpName {
        match self {
            BarrierOp::Init(_) => BarrierOpName::Init,
            BarrierOp::Join => BarrierOpName::Join,
            BarrierOp::Drop => BarrierOpName::Drop,
            BarrierOp::Arrive(_) => BarrierOpName::Arrive,
            BarrierOp::Wait(_) => BarrierOpName::Wait,
            BarrierOp::ArriveDrop { .. } => BarrierOpName::ArriveDrop,
            BarrierOp::ExpectTx(_) => BarrierOpName::ExpectTx,
            BarrierOp::CompleteTx(_) => BarrierOpName::CompleteTx,
            BarrierOp::Inval => BarrierOpName::Inval,
        }
    }

    pub fn name(&self) -> &'static str {
        self.op_name().name()
    }

    /// Whether a warp's lanes may arrive at this operation as one (an
    /// arrive through an `.aligned` form, or a thread-counted arrive with
    /// a count: counted in whole warps where that count is a multiple of
    /// the warp size, which bc-explore's `System::warp_arrive` decides
    /// per state). The static side of that test, for the analyses.
    pub fn warp_may_arrive_as_one(&self) -> bool {
        matches!(self, BarrierOp::Arrive(a) if a.aligned || (a.count_match && a.set_count.is_some()))
    }

    /// Whether the operation joins a phase but orders none of its
    /// thread's accesses for the phase's waiters (only a fence before it
    /// does): a relaxed arrive, and a thread's own `mbarrier.expect_tx`,
    /// whose only semantics PTX gives is `.relaxed`. Its events carry it
    /// ([`crate::EventKind::orders_no_memory`]).
    pub fn orders_no_memory(&self) -> bool {
        match self {
            BarrierOp::Arrive(a) => a.relaxed,
            BarrierOp::ExpectTx(_) => true,
            _ => false,
        }
    }
}

/// Evaluates `e`; `leaf` gives the value of registers, builtins and
/// locations. Arithmetic wraps; division or remainder by zero gives 0, a
/// shift by less than 0 or more than 63 bits shifts every bit out, so
/// evaluation never panics (docs/semantics.md, "Arithmetic"). The explorer
/// and the lowering (static `__syncwarp` masks) share it.
pub fn eval_with(e: &CExpr, leaf: &dyn Fn(&CExpr) -> i64) -> i64 {
    use bc_syntax::Op;
    fn apply(op: Op, a: i64, b: i64) -> i64 {
        match op {
            Op::Add => a.wrapping_add(b),
            Op::Sub => a.wrapping_sub(b),
            Op::Mul => a.wrapping_mul(b),
            Op::Div => a.checked_div(b).unwrap_or(0),
            Op::Rem => a.checked_rem(b).unwrap_or(0),
            Op::Eq => (a == b) as i64,
            Op::Ne => (a != b) as i64,
            Op::Lt => (a < b) as i64,
            Op::Le => (a <= b) as i64,
            Op::Gt => (a > b) as i64,
            Op::Ge => (a >= b) as i64,
            Op::And => (a != 0 && b != 0) as i64,
            Op::Or => (a != 0 || b != 0) as i64,
            Op::Not => (b == 0) as i64,
            Op::BitAnd => a & b,
            Op::BitOr => a | b,
            Op::Xor => a ^ b,
            // A shift by a negative amount or by 64 or more shifts every
            // bit out: 0 to the left, the sign to the right.
            Op::Shl => u32::try_from(b).ok().and_then(|k| a.checked_shl(k)).unwrap_or(0),
            Op::Shr => u32::try_from(b)
                .ok()
                .and_then(|k| a.checked_shr(k))
                .unwrap_or(if a < 0 { -1 } else { 0 }),
        }
    }
    match e {
        CExpr::Int(v) => *v,
        CExpr::Unary(Op::Not, x) => (eval_with(x, leaf) == 0) as i64,
        CExpr::Unary(_, x) => eval_with(x, leaf).wrapping_neg(),
        CExpr::Binary(op, a, b) => apply(*op, eval_with(a, leaf), eval_with(b, leaf)),
        other => leaf(other),
    }
}

impl CExpr {
    /// Whether the expression reads a register or a location (its value
    /// then depends on the execution, not only on the thread's place).
    pub fn reads_state(&self) -> bool {
        match self {
            CExpr::Reg(_) | CExpr::Loc(_) | CExpr::ThreadReg(..) | CExpr::LocInst(_) => true,
            CExpr::Int(_) | CExpr::Builtin(_) => false,
            CExpr::Unary(_, x) => x.reads_state(),
            CExpr::Binary(_, a, b) => a.reads_state() || b.reads_state(),
        }
    }
}

/// The expressions of an instruction, shared or mutable: one list for
/// [`InstrKind::exprs`] and [`InstrKind::exprs_mut`] (a rewrite of the
/// expressions must see exactly those the analyses read).
macro_rules! instr_exprs {
    ($kind:expr, $iter:ident, $as:ident $(, $m:tt)?) => {
        match $kind {
            InstrKind::Barrier { op, .. } => match op {
                BarrierOp::Init(e) | BarrierOp::ExpectTx(e) | BarrierOp::CompleteTx(e) => vec![e],
                BarrierOp::Arrive(a) => a
                    .set_count
                    .$iter()
                    .chain(& $($m)? a.mask)
                    .chain(& $($m)? a.pred)
                    .chain(& $($m)? a.tx)
                    .chain(& $($m)? a.arrivals)
                    .chain(a.value.$as().map(|(v, _)| v))
                    .collect(),
                BarrierOp::Wait(w) => w.parity.$iter().chain(& $($m)? w.lane).chain(& $($m)? w.width).collect(),
                BarrierOp::Join | BarrierOp::Drop | BarrierOp::ArriveDrop { .. } | BarrierOp::Inval => vec![],
            },
            InstrKind::Store { value, .. } | InstrKind::Rmw { value, .. } => vec![value],
            InstrKind::Cas { expected, new, .. } => vec![expected, new],
            InstrKind::Await(e)
            | InstrKind::Assign { value: e, .. }
            | InstrKind::Branch { cond: e, .. }
            | InstrKind::CopyIssue { bytes: e, .. } => vec![e],
            InstrKind::Launch { stream, .. } | InstrKind::StreamQuery { stream, .. } => vec![stream],
            InstrKind::Load { .. }
            | InstrKind::Read { .. }
            | InstrKind::Write { .. }
            | InstrKind::DeviceSync
            | InstrKind::Jump(_)
            | InstrKind::Fence(_)
            | InstrKind::CoalescedSync
            | InstrKind::AsyncGroup { .. }
            | InstrKind::Exit => vec![],
        }
    };
}

impl InstrKind {
    /// Every expression the instruction evaluates as a value (a wait's
    /// token operand is a register, not an expression).
    pub fn exprs(&self) -> Vec<&CExpr> {
        instr_exprs!(self, iter, as_ref)
    }
    /// [`InstrKind::exprs`], mutably.
    pub fn exprs_mut(&mut self) -> Vec<&mut CExpr> {
        instr_exprs!(self, iter_mut, as_mut, mut)
    }
}

impl InstrKind {
    /// The location declaration the instruction reads or writes as its
    /// operand (an access, an atomic), if any; locations inside its
    /// expressions are [`CExpr::loc_decls`]'s.
    pub fn loc_decl(&self) -> Option<u32> {
        match self {
            InstrKind::Store { decl, .. }
            | InstrKind::Load { decl, .. }
            | InstrKind::Rmw { decl, .. }
            | InstrKind::Cas { decl, .. }
            | InstrKind::Read { decl }
            | InstrKind::Write { decl } => Some(*decl),
            _ => None,
        }
    }
}

impl CExpr {
    /// Appends the location declarations the expression reads (`await`
    /// conditions; assertions name instances instead).
    pub fn loc_decls(&self, out: &mut Vec<u32>) {
        match self {
            CExpr::Loc(d) => out.push(*d),
            CExpr::Unary(_, x) => x.loc_decls(out),
            CExpr::Binary(_, a, b) => {
                a.loc_decls(out);
                b.loc_decls(out);
            }
            CExpr::Int(_) | CExpr::Reg(_) | CExpr::Builtin(_) | CExpr::ThreadReg(..) | CExpr::LocInst(_) => {}
        }
    }

    /// Whether the expression reads a builtin.
    pub fn reads_builtin(&self) -> bool {
        match self {
            CExpr::Builtin(_) => true,
            CExpr::Unary(_, x) => x.reads_builtin(),
            CExpr::Binary(_, a, b) => a.reads_builtin() || b.reads_builtin(),
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rmw {
    Exch,
    FetchAdd,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InstrKind {
    /// A barrier operation on a declared barrier (index into declarations).
    Barrier {
        op: BarrierOp,
        sel: BarrierSel,
        result: Option<BarrierResult>,
    },
    Store {
        decl: u32,
        value: CExpr,
    },
    Load {
        decl: u32,
        dest: Option<RegId>,
    },
    Rmw {
        rmw: Rmw,
        decl: u32,
        value: CExpr,
        dest: Option<RegId>,
    },
    Cas {
        decl: u32,
        expected: CExpr,
        new: CExpr,
        dest: Option<RegId>,
    },
    /// Block until the condition (over locations and registers) holds.
    Await(CExpr),
    Read {
        decl: u32,
    },
    Write {
        decl: u32,
    },
    /// Host: start named kernel `kernel` in a stream.
    Launch {
        kernel: u32,
        stream: CExpr,
    },
    /// Host: block until every launched kernel has finished.
    DeviceSync,
    /// Host: 1 if every kernel launched into the stream has finished, else 0.
    StreamQuery {
        stream: CExpr,
        dest: Option<RegId>,
    },
    Assign {
        dest: RegId,
        value: CExpr,
    },
    /// Go to `then` if the condition is non-zero, else to `els`.
    Branch {
        cond: CExpr,
        then: u32,
        els: u32,
    },
    Jump(u32),
    Exit,
    /// Issue asynchronous copy `site` (`cp.async.bulk DST, SRC, BYTES,
    /// B`, `memcpy_async DST, SRC, BYTES, B`): one of the issuing thread's agents for the site
    /// ([`Program::copy_agents`]) starts, after an arrive of the issuer on
    /// the agent's start barrier, with `bytes` (evaluated now) to complete.
    CopyIssue {
        site: u32,
        bytes: CExpr,
        /// `memcpy_async` with a barrier, and `cp.async.mbarrier.arrive`
        /// without `.noinc`: the issue first holds the current phase of
        /// this barrier declaration for the copy (one more transaction,
        /// which the copy or the arrive agent completes).
        hold: Option<u32>,
        /// `cp.async`: the first of the issuer's registers holding the
        /// async-group age of each agent of the site (agent `k` in
        /// register `age + k`; see [`AsyncGroupOp`]). The issue sets the
        /// chosen agent's to 1 (issued, not committed).
        age: Option<RegId>,
    },
    /// A `cp.async` async-group statement (`cp.async.commit_group`,
    /// `cp.async.wait_group N`, `cp.async.wait_all`, and the thread-scope
    /// `cuda::pipeline` calls lowered onto them): a local no-op marking
    /// the statement, followed by the `len` instructions that implement
    /// it on the issuer's age registers and the agents' start barriers
    /// (see `lower::expand_async_groups`).
    AsyncGroup {
        op: AsyncGroupOp,
        len: u32,
    },
    /// A memory fence (`membar.*`, `fence.*`, `__threadfence*`). Under the
    /// ISA's reading, where a completed barrier orders its participants'
    /// accesses, a fence adds nothing the race rule reads (atomics never
    /// race, and executes-before has no fence edges): a local step. Where
    /// a barrier orders memory only through fences
    /// ([`BarrierProps::needs_fence`], [`Program::fence_events`]) it is
    /// still local but leaves a fence event in the thread's history.
    Fence(FenceScope),
    /// `cooperative_groups::coalesced_threads().sync()` ("Group Types",
    /// coalesced groups; "Independent Thread Scheduling": the active
    /// threads are those of the warp on the current instruction, and
    /// threads may diverge and reconverge at any granularity). The group
    /// is whichever lanes happen to run the call together, which may be
    /// the caller alone; the sync has no result, so that choice allows
    /// every interleaving and orders nothing, and any other choice only
    /// removes interleavings and adds order. A local step with no effect
    /// is exactly its set of findings.
    CoalescedSync,
}

/// What an async-group statement does (PTX ISA, `cp.async.commit_group`
/// and `cp.async.wait_group`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AsyncGroupOp {
    /// Close the thread's open group (the copies issued since the last
    /// commit, possibly none) and make it the newest committed group.
    Commit,
    /// Wait until at most `N` of the newest committed groups may still be
    /// pending: every copy of an older group has completed.
    Wait(u32),
    /// Commit, then wait for every group.
    WaitAll,
    /// Thread-scope `cuda::pipeline` (libcudacxx `pipeline<thread_scope_thread>`,
    /// two counters, head and tail): `producer_acquire` and
    /// `consumer_release` do nothing; `producer_commit` commits and
    /// advances head; `consumer_wait`, when head is not tail, waits with
    /// `N = min(head - tail - 1, 8)` (the oldest stage) and advances tail.
    PipelineAcquire,
    PipelineCommit,
    PipelineWait,
    PipelineRelease,
    /// The bulk async-groups (PTX ISA, `cp.async.bulk.commit_group`,
    /// `cp.async.bulk.wait_group`): the same bookkeeping over the thread's
    /// bulk copies without an mbarrier (a group sequence of their own,
    /// apart from `cp.async`'s). `BulkWaitRead`: `.read`, waiting only
    /// until those copies have read their sources.
    BulkCommit,
    BulkWait(u32),
    BulkWaitRead(u32),
}

/// The scope a fence orders accesses at (PTX `membar`/`fence` scopes), or
/// the proxy fence between the generic and the async proxy. Ordered by
/// width (the proxy fence last: it orders no generic access).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FenceScope {
    Cta,
    Cluster,
    Gpu,
    Sys,
    ProxyAsync,
    /// `fence.mbarrier_init`: orders the thread's earlier `mbarrier.init`s
    /// before what it executes before, for the async proxy too; no plain
    /// access (docs/semantics.md, "The async proxy", barrier inits).
    MbarrierInit,
}

impl FenceScope {
    /// Whether the fence orders accesses among the threads of a `scope`
    /// instance (PTX ISA, "Memory Consistency Model: Scope": `.cta` is the
    /// block, `.gpu` the device, `.sys` everything; `membar.gl` is `.gpu`).
    /// The proxy fence orders none: it is about the async proxy.
    pub fn covers(self, scope: bc_models::Scope) -> bool {
        use bc_models::Scope;
        match self {
            FenceScope::Cta => scope <= Scope::Block,
            FenceScope::Cluster => scope <= Scope::Cluster,
            FenceScope::Gpu => scope <= Scope::Device,
            FenceScope::Sys => true,
            FenceScope::ProxyAsync | FenceScope::MbarrierInit => false,
        }
    }
    /// A proxy fence (not a generic one): it leaves an event where some
    /// copy runs in the async proxy (`Program::proxy_events`).
    pub fn is_proxy(self) -> bool {
        matches!(self, FenceScope::ProxyAsync | FenceScope::MbarrierInit)
    }
    /// Whether the fence makes the thread's earlier `mbarrier.init`s
    /// visible to the async proxy (the guide's TMA example fences with
    /// `fence.proxy.async`; `fence.mbarrier_init` exists for inits).
    pub fn publishes_inits(self) -> bool {
        self.is_proxy()
    }
    pub fn name(self) -> &'static str {
        match self {
            FenceScope::Cta => "cta",
            FenceScope::Cluster => "cluster",
            FenceScope::Gpu => "gpu",
            FenceScope::Sys => "sys",
            FenceScope::ProxyAsync => "proxy.async",
            FenceScope::MbarrierInit => "mbarrier_init",
        }
    }
}

impl InstrKind {
    /// Local instructions touch only the thread's own registers and pc.
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            InstrKind::Assign { .. }
                | InstrKind::Branch { .. }
                | InstrKind::Jump(_)
                | InstrKind::Fence(_)
                | InstrKind::CoalescedSync
                | InstrKind::AsyncGroup { .. }
        )
    }
}

#[derive(Clone, Debug)]
pub struct Instr {
    pub kind: InstrKind,
    pub span: Span,
    /// The source text of the statement, for witnesses and graphs.
    pub text: String,
}

/// One lowered body: straight-line instructions with explicit jumps. The pc
/// one past the last instruction is the end of the body.
#[derive(Clone, Debug, Default)]
pub struct Code {
    pub instrs: Vec<Instr>,
    pub regs: Vec<String>,
    /// The pcs of the jumps and branches that close loops known to be
    /// bounded: `repeat` loops (their hidden counter bounds them), and
    /// every loop of a PTX kernel (its pre-evaluation ran each thread's
    /// whole path, which depends on the thread's place alone: `bc_ptx`).
    pub counted_loops: Vec<u32>,
}

impl Code {
    /// Every run of this body ends: it has no `await` and every backward
    /// jump closes a `repeat` loop (no `while`, no backward `goto`).
    pub fn terminates(&self) -> bool {
        self.terminates_where(&|_| true)
    }
    /// [`Code::terminates`] for a thread that runs only the instructions
    /// `reachable` says (`classes::reachable_pcs`): a jump to an
    /// instruction it never runs closes no loop of its.
    pub fn terminates_where(&self, reachable: &dyn Fn(usize) -> bool) -> bool {
        self.instrs.iter().enumerate().all(|(pc, i)| {
            if !reachable(pc) || self.counted_loops.contains(&(pc as u32)) {
                return !matches!(i.kind, InstrKind::Await(_)) || !reachable(pc);
            }
            match &i.kind {
                InstrKind::Await(_) => false,
                _ => self
                    .successors(pc as u32)
                    .iter()
                    .all(|&s| (s as usize) > pc || !reachable(s as usize)),
            }
        })
    }
    pub fn reg(&self, name: &str) -> Option<RegId> {
        self.regs.iter().position(|r| r == name).map(|i| RegId(i as u32))
    }
    /// Control-flow successors of pc (the end pc has none).
    pub fn successors(&self, pc: u32) -> Vec<u32> {
        let end = self.instrs.len() as u32;
        match self.instrs.get(pc as usize).map(|i| &i.kind) {
            None | Some(InstrKind::Exit) => vec![],
            Some(InstrKind::Jump(t)) => vec![*t],
            Some(InstrKind::Branch { then, els, .. }) => vec![*then, *els],
            Some(_) => vec![(pc + 1).min(end)],
        }
    }
}

#[derive(Clone, Debug)]
pub struct AssertSpec {
    pub quantifier: Quantifier,
    pub cond: CExpr,
    pub span: Span,
    pub text: String,
}

/// A lowered litmus test, ready to explore.
#[derive(Clone, Debug)]
pub struct Program {
    pub test: String,
    pub about: Option<String>,
    pub model: Model,
    pub progress: bc_models::ProgressModel,
    pub threads: Vec<ThreadInfo>,
    pub codes: Vec<Code>,
    pub barriers: Vec<BarrierInstance>,
    /// The file's barrier declarations with arrays expanded, by
    /// declaration index (the first entries of `ThreadInfo::barriers`): a
    /// `barrier full[2]` line is `full[0]`, `full[1]` and the hidden
    /// out-of-range `full[?]`.
    pub declared_barriers: Vec<DeclaredBarrier>,
    pub locs: Vec<LocInstance>,
    /// Pairs of barrier instances that are barrier-mutually-exclusive.
    pub mutually_exclusive: Vec<(BarrierId, BarrierId)>,
    /// Exclusion groups of the model, as barrier declaration indices.
    pub groups: Vec<Vec<u32>>,
    /// Named kernels: started only by a host `launch`.
    pub kernels: Vec<KernelInfo>,
    pub asserts: Vec<AssertSpec>,
    /// `None` when the file has no `expect` (then it passes when ok).
    pub expect: Option<BTreeSet<FindingKind>>,
    /// The agents that perform the asynchronous copies a thread issues,
    /// per (issuer, copy site).
    pub copy_pools: Vec<CopyPool>,
    /// Per copy site (`CopyIssue::site`): what it issues and where its
    /// agents' declarations and codes start.
    pub copy_sites: Vec<CopySiteInfo>,
    /// The first start-barrier declaration and the first agent code of the
    /// copy sites ([`Program::copy_start_decl`], [`Program::copy_code`]).
    pub copy_first_decl: u32,
    pub copy_first_code: u32,
    /// Fences leave events in the history: some barrier of the program
    /// orders memory only through fences ([`BarrierProps::needs_fence`]),
    /// or some arrive is relaxed ([`ArriveSpec::relaxed`]), and the program
    /// has plain accesses, which the race rule judges.
    pub fence_events: bool,
    /// Proxy fences (`fence.proxy.async`) leave events in the history: some
    /// copy site performs its accesses in the async proxy
    /// ([`CopySiteInfo::async_proxy`]), and the race rule orders a generic
    /// write before such an access only through a proxy fence of the
    /// writer (docs/semantics.md, "The async proxy").
    pub proxy_events: bool,
    /// Per-thread and per-barrier lookups built once, on first use
    /// ([`ProgramIndex`]): the setup analyses ask them per thread and per
    /// instance, and a scan of every barrier or copy pool for each made
    /// setup quadratic (issue 33).
    pub(crate) index: std::sync::OnceLock<Box<ProgramIndex>>,
}

/// Lookups over a [`Program`] that would otherwise scan every barrier
/// instance or copy pool per question (built once, lazily: the program
/// is complete by the time anything asks).
#[derive(Clone, Debug, Default)]
pub struct ProgramIndex {
    /// Per thread, the `__syncwarp` mask barriers naming it, ascending.
    masks_naming: Vec<Vec<BarrierId>>,
    /// Per thread, whether it is an agent that performs copies.
    copy_performer: Vec<bool>,
    /// Per thread, whether it issues copies (has a copy pool).
    copy_issuer: Vec<bool>,
    /// Per barrier instance that is a copy agent's start barrier, its
    /// pool (an index into `copy_pools`) and agent.
    copy_start: Vec<Option<(usize, ThreadId)>>,
    /// The copy pool of each (issuer, site).
    copy_pool: std::collections::HashMap<(u32, u32), usize>,
    /// Per thread, whether it is an agent whose accesses are in the async
    /// proxy ([`CopySiteInfo::async_proxy`]).
    async_agent: Vec<bool>,
    /// Per location instance, whether some such agent reads or writes it.
    async_loc: Vec<bool>,
    /// Per barrier instance, whether some such agent completes
    /// transactions on it.
    async_barrier: Vec<bool>,
}

impl ProgramIndex {
    fn build(p: &Program) -> ProgramIndex {
        let mut ix = ProgramIndex {
            masks_naming: vec![Vec::new(); p.threads.len()],
            copy_performer: vec![false; p.threads.len()],
            copy_issuer: vec![false; p.threads.len()],
            copy_start: vec![None; p.barriers.len()],
            copy_pool: Default::default(),
            async_agent: vec![false; p.threads.len()],
            async_loc: vec![false; p.locs.len()],
            async_barrier: vec![false; p.barriers.len()],
        };
        for (b, inst) in p.barriers.iter().enumerate() {
            if let Some(w) = &inst.syncwarp {
                for t in &w.named {
                    let list = &mut ix.masks_naming[t.index()];
                    // Barriers come in order: a lane named twice by one
                    // mask is listed once.
                    if list.last() != Some(&BarrierId(b as u32)) {
                        list.push(BarrierId(b as u32));
                    }
                }
            }
        }
        for (i, c) in p.copy_pools.iter().enumerate() {
            ix.copy_pool.entry((c.issuer.0, c.site)).or_insert(i);
            ix.copy_issuer[c.issuer.index()] = true;
            let performs = !matches!(p.copy_sites[c.site as usize].kind, CopySite::Arrive { .. });
            let async_proxy = p.copy_sites[c.site as usize].async_proxy;
            for &(a, s) in &c.agents {
                ix.copy_performer[a.index()] |= performs;
                ix.copy_start[s.index()] = Some((i, a));
                if !async_proxy {
                    continue;
                }
                ix.async_agent[a.index()] = true;
                let th = &p.threads[a.index()];
                for ins in &p.codes[th.code.index()].instrs {
                    if let InstrKind::Read { decl } | InstrKind::Write { decl } = ins.kind {
                        if let Some(Some(l)) = th.locs.get(decl as usize) {
                            ix.async_loc[l.index()] = true;
                        }
                    }
                    if let InstrKind::Barrier {
                        op: BarrierOp::CompleteTx(_),
                        sel: BarrierSel::Decl(d),
                        ..
                    } = ins.kind
                    {
                        if let Some(Some(b)) = th.barriers.get(d as usize) {
                            ix.async_barrier[b.index()] = true;
                        }
                    }
                }
            }
        }
        ix
    }
}

/// The agents of one thread's copies from one `cp.async.bulk` site. A copy
/// runs as a thread of its own so that its events are ordered after its
/// issue (through the start barrier: the issuer arrives, the agent's
/// first step waits on that phase) and before nothing of its issuer or of
/// another copy: neither program order nor a shared agent ties two copies
/// together. An agent serves another copy only once everything it did
/// executes before the new issue (then reusing it orders nothing new).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyPool {
    pub issuer: ThreadId,
    pub site: u32,
    /// Each agent thread and its start barrier.
    pub agents: Vec<(ThreadId, BarrierId)>,
}

/// The barrier id that stands for "no barrier": a barrier operand computed
/// at run time (`bar.sync r, 64`) whose value is none of the model's
/// addressable ids names the out-of-range barrier of this id, whose every
/// use is `ub(invalid-barrier)` (docs/litmus.md, "Barrier ids in a
/// register").
pub const OUT_OF_RANGE_BARRIER_ID: i64 = i64::MIN;

/// Register numbers of an agent's code ([`CopyPool`]).
pub const COPY_PARITY_REG: RegId = RegId(0);
pub const COPY_BYTES_REG: RegId = RegId(1);
/// An arrive agent's first tracking flag ([`CopySite::Arrive`]).
pub const COPY_FLAGS_REG: RegId = RegId(2);
/// A copying agent's flag: its latest completion is not known to be
/// observed yet (set by its code at the completion; cleared by the
/// explorer once some thread of the program is ordered after it; read by
/// copy-not-waited).
pub const COPY_PENDING_REG: RegId = RegId(2);

/// What the agents of one copy site do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CopySite {
    /// `cp.async.bulk` and `memcpy_async`: the copy completes transactions
    /// on an mbarrier.
    Bulk,
    /// `cp.async`: the copy's completion is its agent's own arrive on its
    /// start barrier (see [`AsyncGroupOp`]).
    Plain,
    /// `cp.async.bulk DST, SRC, BYTES` without an mbarrier: a bulk copy
    /// whose completion only the issuer's bulk async-group waits observe.
    /// Its agent arrives on its start barrier once it has read the source
    /// (the copy's completion for `.read` waits and for copy-not-waited)
    /// and on a second barrier of its own, `written`, before and after it
    /// writes the destination.
    BulkGroup,
    /// `cp.async.mbarrier.arrive[.noinc] B`: the agent waits for the
    /// completion of each `cp.async` agent of the issuer that its flags
    /// name (the `Plain` sites `tracks`, their agents in order), then
    /// completes the transaction the issue held on `B`, or with `.noinc`
    /// arrives on `B`.
    Arrive { tracks: Vec<u32>, noinc: bool },
}

/// One copy site: its kind, how many agents each issuer has for it, and
/// its agents' first slot among the start declarations and agent codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopySiteInfo {
    pub kind: CopySite,
    pub agents: u32,
    pub first: u32,
    /// Its agents read and write in the async proxy (PTX ISA, "Proxies":
    /// `cp.async.bulk` operations are performed in the async proxy): a
    /// `cp.async.bulk` copy. `cp.async` copies are generic-proxy
    /// operations; `memcpy_async` is read as generic too (libcu++ picks
    /// the instruction; docs/semantics.md, "The async proxy").
    pub async_proxy: bool,
    /// For a [`CopySite::BulkGroup`] site: its agents' first slot among the
    /// `written` declarations, which follow every start declaration
    /// ([`Program::copy_written_decl`]).
    pub written: Option<u32>,
}

impl Program {
    /// The `__syncwarp` mask barriers whose mask names thread `t`'s lane,
    /// held by `t` or not (a mask another lane computed may name it).
    pub fn masks_naming(&self, t: ThreadId) -> impl Iterator<Item = BarrierId> + '_ {
        self.index().masks_naming[t.index()].iter().copied()
    }
    /// The program's lookups, built on first use.
    pub fn index(&self) -> &ProgramIndex {
        self.index.get_or_init(|| Box::new(ProgramIndex::build(self)))
    }
    /// Whether thread `t` issues asynchronous copies (has agents of its own).
    pub fn copy_issuer(&self, t: ThreadId) -> bool {
        self.index().copy_issuer[t.index()]
    }
    pub fn thread(&self, t: ThreadId) -> &ThreadInfo {
        &self.threads[t.index()]
    }
    pub fn code_of(&self, t: ThreadId) -> &Code {
        &self.codes[self.threads[t.index()].code.index()]
    }
    pub fn instr(&self, t: ThreadId, pc: u32) -> Option<&Instr> {
        self.code_of(t).instrs.get(pc as usize)
    }
    /// Whether thread `t`'s instruction `pc` is a sync's arrive: the
    /// instruction after it is a wait lowered from the same statement (on
    /// the device `BAR.SYNC`, where an arrive alone is `BAR.ARV`).
    pub fn sync_arrive(&self, t: ThreadId, pc: u32) -> bool {
        let (Some(a), Some(w)) = (self.instr(t, pc), self.instr(t, pc + 1)) else {
            return false;
        };
        w.span == a.span
            && matches!(
                &w.kind,
                InstrKind::Barrier {
                    op: BarrierOp::Wait(_),
                    ..
                }
            )
    }
    /// Whether thread `t`'s arrive `a`, with thread count `count()` (the
    /// evaluated `set_count`, asked last), is counted in whole warps: a thread-counted
    /// arrive by a device lane with a warp, whose count is a positive
    /// multiple of the warp size (the explorer's `System::warp_counted`;
    /// docs/semantics.md, "A warp counts whole").
    pub fn counted_in_whole_warps(&self, t: ThreadId, a: &ArriveSpec, count: impl FnOnce() -> Option<i64>) -> bool {
        let info = &self.threads[t.index()];
        a.count_match
            && a.arrivals.is_none()
            && a.tx.is_none()
            && info.kind == ThreadKind::Device
            && info.warp_id != u32::MAX
            && count().is_some_and(|k| self.model.counts_whole_warps(k))
    }
    /// The agents thread `t` issues copy `site` to (none for a thread that
    /// cannot reach the site).
    pub fn copy_agents(&self, t: ThreadId, site: u32) -> &[(ThreadId, BarrierId)] {
        (self.index().copy_pool.get(&(t.0, site))).map_or(&[], |&i| &self.copy_pools[i].agents[..])
    }
    /// The declaration of the start barrier of agent `k` of copy `site`
    /// (an issuer holds the instances of its agents, an agent its own).
    pub fn copy_start_decl(&self, site: u32, k: usize) -> u32 {
        self.copy_first_decl + self.copy_sites[site as usize].first + k as u32
    }
    /// The declaration of the `written` barrier of agent `k` of a
    /// [`CopySite::BulkGroup`] site.
    pub fn copy_written_decl(&self, site: u32, k: usize) -> Option<u32> {
        let w = self.copy_sites[site as usize].written?;
        Some(self.copy_first_decl + w + k as u32)
    }
    /// The code of agent `k` of copy `site`.
    pub fn copy_code(&self, site: u32, k: usize) -> CodeId {
        CodeId(self.copy_first_code + self.copy_sites[site as usize].first + k as u32)
    }
    /// How many agents each issuer has for copy `site`.
    pub fn copy_site_agents(&self, site: u32) -> usize {
        self.copy_sites[site as usize].agents as usize
    }
    /// The flags of an arrive agent of site `arrive` ([`CopySite::Arrive`]):
    /// per tracked `cp.async` site and agent, its register.
    pub fn copy_flags(&self, arrive: u32) -> Vec<(u32, usize, RegId)> {
        let CopySite::Arrive { tracks, .. } = &self.copy_sites[arrive as usize].kind else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &s in tracks {
            for k in 0..self.copy_site_agents(s) {
                out.push((s, k, RegId(COPY_FLAGS_REG.0 + out.len() as u32)));
            }
        }
        out
    }
    /// Whether barrier `b` is the start barrier of a copy agent.
    pub fn is_copy_start(&self, b: BarrierId) -> bool {
        self.index().copy_start[b.index()].is_some()
    }
    /// The pool and the agent whose start barrier `b` is, if it is one.
    pub fn copy_start_owner(&self, b: BarrierId) -> Option<(&CopyPool, ThreadId)> {
        (self.index().copy_start[b.index()]).map(|(i, a)| (&self.copy_pools[i], a))
    }
    /// Whether thread `t` is an agent that performs copies (of a
    /// `cp.async.bulk`, `memcpy_async` or `cp.async` site; not an arrive
    /// agent).
    pub fn copy_performer(&self, t: ThreadId) -> bool {
        self.index().copy_performer[t.index()]
    }
    /// Whether thread `t` is a copy agent whose accesses are in the async
    /// proxy ([`CopySiteInfo::async_proxy`]).
    pub fn async_agent(&self, t: ThreadId) -> bool {
        self.index().async_agent[t.index()]
    }
    /// Whether some async-proxy agent may complete transactions on barrier
    /// instance `b`.
    pub fn async_barrier(&self, b: BarrierId) -> bool {
        self.index().async_barrier.get(b.index()).copied().unwrap_or(false)
    }
    /// Whether some async-proxy agent may read or write location `l`.
    pub fn async_loc(&self, l: LocId) -> bool {
        self.index().async_loc.get(l.index()).copied().unwrap_or(false)
    }
    /// Whether the program issues asynchronous copies.
    pub fn has_copies(&self) -> bool {
        !self.copy_pools.is_empty()
    }
}

/// A named kernel (`kernel K ...`).
#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub name: String,
    pub threads: Vec<ThreadId>,
}

#[cfg(test)]
mod tests {
    /// The body of the single thread of a litmus test whose thread body
    /// is `body`.
    fn code(body: &str) -> crate::Code {
        let text = format!("litmus \"t\"\nmodel amdgpu\nvar x = 0\nbarrier B = 1\nthread T0 {{ {body} }}\n");
        let (lit, diags) = bc_syntax::parse(&text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = bc_models::lookup("amdgpu").expect("built-in model");
        let p = crate::lower::lower(&lit, &text, model).expect("lowers");
        p.codes[p.threads[0].code.index()].clone()
    }

    #[test]
    fn terminates_only_without_unbounded_loops() {
        assert!(code("join B; arrive B; wait B").terminates());
        assert!(code("repeat 3 { arrive B; wait B }").terminates());
        assert!(code("repeat 2 { repeat 2 { r = load x } }").terminates());
        assert!(code("r = load x; if r == 0 { store x, 1 }").terminates());
        assert!(!code("await x == 1").terminates());
        assert!(!code("r = load x; while r == 0 { r = load x }").terminates());
        assert!(!code("L: r = load x; goto L").terminates());
    }
}
