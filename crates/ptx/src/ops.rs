//! The meaning of each PTX instruction the front end knows, as an [`Op`]
//! over expressions of registers, the thread's place and constants
//! ([`PExpr`]). Three outcomes per instruction: modelled (arithmetic the
//! checker computes, branches, accesses, barriers, fences); on the list of
//! instructions whose results cannot be known here ([`UNKNOWN_RESULT`] and
//! every floating-point form: their results are unknown values, see
//! docs/ptx.md); or rejected with a positioned error.

use crate::ast::*;
use crate::flatten::is_special;
use bc_syntax::{Diagnostic, Op as BOp, Span};
use std::collections::HashMap;

/// A value expression. Registers are interned ([`Regs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PExpr {
    Int(i64),
    /// The address of a kernel pointer parameter's buffer: a known value
    /// that must not steer control flow (it is only an address here).
    Ptr(i64),
    Reg(usize),
    /// `tid`, `bid` or `lane` of the litmus language.
    Builtin(&'static str),
    /// A value the checker does not know.
    Unknown,
    Un(BOp, Box<PExpr>),
    Bin(BOp, Box<PExpr>, Box<PExpr>),
}

fn bin(op: BOp, a: PExpr, b: PExpr) -> PExpr {
    if let (PExpr::Int(x), PExpr::Int(y)) = (&a, &b) {
        // A division by zero stays for the thread that evaluates it to
        // find unknown (`trace.rs`).
        if !(matches!(op, BOp::Div | BOp::Rem) && *y == 0) {
            return PExpr::Int(apply(op, *x, *y));
        }
    }
    PExpr::Bin(op, Box::new(a), Box::new(b))
}

/// One operator on two values, exactly as the explorer evaluates it.
pub fn apply(op: BOp, a: i64, b: i64) -> i64 {
    use bc_graph::CExpr;
    bc_graph::eval_with(
        &CExpr::Binary(op, Box::new(CExpr::Int(a)), Box::new(CExpr::Int(b))),
        &|_| 0,
    )
}

/// What a memory instruction is in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A plain load (`read`: can race).
    Read,
    /// A plain store (`write`: can race).
    Write,
    /// A strong load (`.volatile`, `.relaxed`, `.acquire`): `load`.
    Load,
    /// A strong store: `store`.
    Store,
    /// `atom`/`red`: an atomic read-modify-write (`fetch_add`).
    Rmw,
}

impl MemKind {
    /// An access that never races (the race rule reads plain accesses
    /// only) and whose value is not tracked.
    pub fn is_atomic(self) -> bool {
        matches!(self, MemKind::Load | MemKind::Store | MemKind::Rmw)
    }
}

/// A bulk copy's operands beyond its addresses (PTX ISA,
/// "cp.async.bulk"): the byte count, and the mbarrier its `complete_tx`
/// goes to; without one it is a `.bulk_group` copy from shared to global
/// memory (a TMA store), the litmus `cp.async.bulk DST, SRC, BYTES`.
#[derive(Clone, Debug)]
pub struct Bulk {
    pub bytes: PExpr,
    pub bar: Option<PExpr>,
    /// The source is the issuing CTA's shared memory (a copy within the
    /// block's shared memory, or a TMA store), not global memory.
    pub src_shared: bool,
}

/// The bytes of a `cp.async` (PTX ISA, "cp.async"): it writes `bytes`
/// (`cp-size`: 4, 8 or 16) at the destination and reads what `src` says
/// at the source.
#[derive(Clone, Debug)]
pub struct PlainSize {
    pub bytes: u32,
    pub src: SrcBytes,
}

/// How many source bytes a `cp.async` reads.
#[derive(Clone, Debug)]
pub enum SrcBytes {
    /// All `cp-size` of them.
    All,
    /// `src-size` of them (an integer operand; the rest of the
    /// destination is zero-filled).
    Size(PExpr),
    /// None where the `ignore-src` predicate is true, all otherwise.
    Ignore(PExpr),
}

impl SrcBytes {
    /// The operand that chooses the bytes read, and whether it is the
    /// `ignore-src` predicate (`None`: every byte is read).
    pub fn operand(&self) -> Option<(&PExpr, bool)> {
        match self {
            SrcBytes::All => None,
            SrcBytes::Size(e) => Some((e, false)),
            SrcBytes::Ignore(e) => Some((e, true)),
        }
    }
}

impl Op {
    /// Whether a copy's destination and its source are in shared memory
    /// (else global memory): a `cp.async` and a TMA load copy from global
    /// to shared memory, a TMA store from shared to global memory.
    pub fn copy_spaces(bulk: &Option<Bulk>) -> (bool, bool) {
        match bulk {
            None => (true, false),
            Some(b) => (b.bar.is_some(), b.src_shared),
        }
    }
}

#[derive(Clone, Debug)]
pub enum Op {
    /// Register definitions, all computed before any is written.
    Defs(Vec<(usize, PExpr)>),
    /// Registers whose new values are unknown.
    Unknown(Vec<usize>),
    /// No effect on the model.
    Nop,
    Bra(String),
    Exit,
    /// `trap`: the kernel aborts. Never modelled: a thread that reaches
    /// one makes the kernel inconclusive (trace.rs).
    Trap,
    /// `cp.async.{ca,cg}.shared.global [dst], [src], size`: the litmus
    /// `cp.async DST, SRC` (PTX ISA, "cp.async"; docs/ptx.md, "Async
    /// copies"); with `bulk`, a `cp.async.bulk` (TMA) copy.
    Copy {
        dst: PExpr,
        src: PExpr,
        bulk: Option<Bulk>,
        /// A non-bulk copy's bytes (`None` for a bulk copy, whose size is
        /// `Bulk::bytes`).
        plain: Option<PlainSize>,
    },
    /// The thread's async-groups: `cp.async.commit_group`,
    /// `cp.async.wait_group N` (`n`), `cp.async.wait_all`.
    Group {
        name: String,
        n: Option<i64>,
    },
    Mem {
        kind: MemKind,
        addr: PExpr,
        elems: u32,
        esize: u32,
        dsts: Vec<usize>,
        /// The element type (a loaded value is normalized to it).
        ty: Ty,
        /// The state space the instruction names: `Some(true)` for
        /// `.shared`, `Some(false)` for `.global`, `None` for a generic
        /// address (either). An address in the other space is undefined
        /// behaviour (PTX ISA, "State spaces"): inconclusive.
        shared: Option<bool>,
        /// The values a store writes (one per element), or an atomic's
        /// operands after the address (`cas`: the compared and the new
        /// value). Only a location that a spin loop waits on needs them
        /// (docs/ptx.md, "Spin loops").
        vals: Vec<PExpr>,
        /// An atomic's operation (`add`, `exch`, `cas`, ...).
        rmw: Option<&'static str>,
    },
    /// A barrier instruction of the model, by its litmus name. `sel` is
    /// the operand the model needs as a constant (the barrier id, the
    /// `__syncwarp` mask): one statement per value a thread gives it.
    Bar {
        name: String,
        sel: Option<PExpr>,
        count: Option<PExpr>,
        pred: Option<PExpr>,
        dst: Option<usize>,
        /// A warp intrinsic's operands after its mask (the value, and a
        /// shuffle's source lane and width), each with whether the
        /// pre-evaluation must know it (a source lane decides which lane
        /// is read, so the finding for a lane outside the phase; a value
        /// is data).
        args: Vec<(PExpr, bool)>,
        /// A second result the model does not compute (`shfl.sync`'s and
        /// `match.all.sync`'s predicate): unknown.
        pdst: Option<usize>,
        /// `elect.sync`'s predicate, true in the elected lane: written
        /// after the intrinsic as `p = d == lane` (`dst` is then the
        /// leader's lane id, a register of its own where PTX sinks it).
        leader: Option<usize>,
    },
    /// A fence, by its litmus name, with what it orders ([`FenceKind`]),
    /// decided here where its name is split.
    Fence {
        name: String,
        kind: FenceKind,
    },
    /// An mbarrier instruction (PTX ISA, "Parallel Synchronization and
    /// Communication Instructions: mbarrier"), by its litmus name
    /// (docs/litmus.md): the object is the 8-byte shared location at
    /// `addr`. `args` are the operands after the address (count,
    /// transaction count, parity or token); `dst` the token an arrive
    /// returns, or the predicate a poll (`test_wait`, `try_wait`) sets.
    MBar {
        name: String,
        addr: PExpr,
        args: Vec<MArg>,
        dst: Option<usize>,
        poll: bool,
    },
}

/// What a fence orders, as the pre-evaluation's checks read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceKind {
    /// `membar`, `fence.sc`, `fence.acq_rel` (a scope of the block or
    /// wider): with a strong write after it, a release pattern.
    Memory,
    /// `fence.proxy.async`; `shared_only` for the `.shared::cta` and
    /// `.shared::cluster` forms, which order shared memory alone.
    Proxy { shared_only: bool },
    /// `fence.mbarrier_init`.
    Other,
}

/// An operand of an mbarrier instruction after its address.
#[derive(Clone, Debug, PartialEq)]
pub enum MArg {
    /// A count, a transaction count or a parity: a value the checker must
    /// know for every thread.
    Value(PExpr),
    /// A token: the state an arrive returned, carried through registers.
    Token(PExpr),
}

impl MArg {
    /// The operand's expression, whichever kind it is.
    pub fn expr(&self) -> &PExpr {
        match self {
            MArg::Value(e) | MArg::Token(e) => e,
        }
    }
}

/// A classified instruction.
#[derive(Clone, Debug)]
pub struct CInstr {
    pub op: Op,
    /// `@p` / `@!p`: (negated, register).
    pub guard: Option<(bool, usize)>,
    pub span: Span,
    /// Said when a value this instruction makes unknown reaches a place
    /// where the checker needs it (e.g. which `--param` to pass).
    pub note: Option<String>,
    pub loc: Option<(u32, u32)>,
    /// The threads of a warp (or warpgroup) run it together: its opcode
    /// has `.sync` or `.aligned`, or is a matrix or election form (`mma`,
    /// `wmma`, `wgmma`, `ldmatrix`, `elect`, `tcgen05`, ...). Which
    /// threads run it is then never data (trace.rs).
    pub collective: bool,
}

/// Register names, interned.
#[derive(Default, Debug)]
pub struct Regs {
    pub names: Vec<String>,
    ix: HashMap<String, usize>,
}

impl Regs {
    pub fn id(&mut self, n: &str) -> usize {
        if let Some(&i) = self.ix.get(n) {
            return i;
        }
        self.names.push(n.to_string());
        self.ix.insert(n.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }
}

/// A kernel parameter's value.
#[derive(Clone, Copy, Debug)]
pub enum ParamValue {
    Known(i64),
    /// A pointer parameter: the base address of its own buffer.
    Pointer(i64),
    Unknown,
}

/// Whether a shuffle's width `32 - (c >> 8)` comes from a clamp operand `c`
/// of the two forms nvcc writes for a segment of `w` lanes,
/// `((32 - w) << 8) | 31`, or `(32 - w) << 8` for `.up` (PTX ISA,
/// `shfl.sync`: the segment mask is `c[12:8]`, the clamp `c[4:0]`), with
/// `w` a power of two; the model knows no other clamp.
pub fn shfl_clamp_ok(name: &str, c: i64) -> bool {
    let w = 32 - (c >> 8);
    let form = if name == "__shfl_up_sync" {
        (32 - w) << 8
    } else {
        ((32 - w) << 8) | 31
    };
    c == form && (1..=32).contains(&w) && w & (w - 1) == 0
}

/// What classification needs to know about the launch and the module.
pub struct Ctx<'a> {
    pub regs: Regs,
    pub block: [u64; 3],
    pub grid: [u64; 3],
    /// Blocks per cluster (1-D; 1 without clusters) and whether the
    /// launch names clusters.
    pub cluster: u64,
    pub explicit_cluster: bool,
    /// Symbols (variables) and their base addresses.
    pub symbols: HashMap<String, i64>,
    pub params: HashMap<String, ParamValue>,
    /// `.local` variables: thread-private, their addresses unknown.
    pub locals: std::collections::HashSet<String>,
    /// Registers declared without `%` (inline assembly).
    pub plain_regs: std::collections::HashSet<String>,
    /// Registers declared `.pred`.
    pub pred_regs: std::collections::HashSet<String>,
    /// The `--param` spelling to suggest per parameter.
    pub param_hint: HashMap<String, String>,
    pub labels: &'a std::collections::HashSet<String>,
    /// The grid workspace's address on a cooperative launch (`%envreg1`
    /// and `%envreg2`: cooperative groups' `get_grid_workspace`, whose
    /// `barrier` word nvcc's grid sync counts on); `None`: they are 0.
    pub workspace: Option<i64>,
}

/// Instructions whose results are unknown values (they cannot change
/// which barriers and accesses a thread performs except through a value,
/// and such a value is checked where it is used): floating point,
/// tensor-core math, bit manipulation the checker does not compute, and
/// the warp forms without a member mask (`activemask`, `vote` and `shfl`
/// without `.sync`; the `.sync` forms are modelled: `Ctx::warp_intrinsic`,
/// and `elect.sync`: `Ctx::elect`).
pub const UNKNOWN_RESULT: &[&str] = &[
    "fma",
    "rcp",
    "sqrt",
    "rsqrt",
    "ex2",
    "lg2",
    "sin",
    "cos",
    "tanh",
    "copysign",
    "testp",
    "mma",
    "shfl",
    "vote",
    "match",
    "activemask",
    "redux",
    "popc",
    "clz",
    "brev",
    "bfe",
    "bfind",
    "prmt",
    "dp4a",
    "dp2a",
    "lop3",
    "shf",
    "sad",
    "fns",
    "cnot",
    "set",
    "slct",
    "addc",
    "subc",
    "madc",
    "mul24",
    "mad24",
    "szext",
    "bmsk",
    "createpolicy",
    "fmin",
    "fmax",
    "cvt.rn",
    "getctarank",
    "isspacep",
    "istypep",
    "suq",
    "txq",
];

/// The operations of `atom` and `red` (PTX ISA, "atom").
const RMW_OPS: &[&str] = &["add", "exch", "cas", "inc", "dec", "and", "or", "xor", "min", "max"];

/// A type suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ty {
    pub bits: u32,
    pub signed: bool,
    pub float: bool,
    pub pred: bool,
}

pub fn ty(s: &str) -> Option<Ty> {
    let t = |bits, signed, float| {
        Some(Ty {
            bits,
            signed,
            float,
            pred: false,
        })
    };
    match s {
        "pred" => Some(Ty {
            bits: 1,
            signed: false,
            float: false,
            pred: true,
        }),
        "u8" | "b8" => t(8, false, false),
        "s8" => t(8, true, false),
        "u16" | "b16" => t(16, false, false),
        "s16" => t(16, true, false),
        "u32" | "b32" => t(32, false, false),
        "s32" => t(32, true, false),
        "u64" | "b64" => t(64, false, false),
        "s64" => t(64, true, false),
        "b128" => t(128, false, false),
        // Floating-point types with their widths (PTX ISA, "Fundamental
        // Types"): the element size of a memory access (a `.v2.f64` is 16
        // bytes; before session 36 every float was 4, so the second
        // double of a vector and the upper half of each were missed).
        "e4m3" | "e5m2" => t(8, false, true),
        "f16" | "bf16" | "e4m3x2" | "e5m2x2" => t(16, false, true),
        "f16x2" | "bf16x2" | "f32" | "tf32" => t(32, false, true),
        "f64" => t(64, false, true),
        _ => None,
    }
}

/// `e` as a value of type `t`: wrapped to its width, sign-extended for a
/// signed type (registers hold values so normalized; a signed read of an
/// unsigned value reinterprets its bits).
pub fn norm(t: Ty, e: PExpr) -> PExpr {
    if t.pred || t.bits >= 64 || t.float {
        return e;
    }
    let m = (1i64 << t.bits) - 1;
    // Already of this type: a mask within the width, or this very
    // sign extension.
    match &e {
        PExpr::Bin(BOp::BitAnd, _, k) if !t.signed && matches!(**k, PExpr::Int(k) if (0..=m).contains(&k)) => return e,
        PExpr::Bin(BOp::Sub, x, k) if t.signed && **k == PExpr::Int(1i64 << (t.bits - 1)) => {
            if let PExpr::Bin(BOp::Xor, y, _) = &**x {
                if matches!(&**y, PExpr::Bin(BOp::BitAnd, _, mm) if **mm == PExpr::Int(m)) {
                    return e;
                }
            }
        }
        _ => {}
    }
    if t.signed {
        let s = 1i64 << (t.bits - 1);
        bin(
            BOp::Sub,
            bin(BOp::Xor, bin(BOp::BitAnd, e, PExpr::Int(m)), PExpr::Int(s)),
            PExpr::Int(s),
        )
    } else {
        bin(BOp::BitAnd, e, PExpr::Int(m))
    }
}

fn is_float_part(p: &str) -> bool {
    ty(p).is_some_and(|t| t.float)
}

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(span, msg)
}

impl Ctx<'_> {
    fn dims(&self, v: [u64; 3], what: &str, comp: &str, builtin: &'static str, n: u64) -> PExpr {
        let _ = (what, n);
        let b = PExpr::Builtin(builtin);
        match comp {
            "x" if v[1] * v[2] == 1 => b,
            "x" => bin(BOp::Rem, b, PExpr::Int(v[0] as i64)),
            "y" => bin(
                BOp::Rem,
                bin(BOp::Div, b, PExpr::Int(v[0] as i64)),
                PExpr::Int(v[1] as i64),
            ),
            _ => bin(BOp::Div, b, PExpr::Int((v[0] * v[1]) as i64)),
        }
    }

    /// A special register's value, and a note when it is unknown.
    fn special(&self, n: &str) -> (PExpr, Option<String>) {
        let (base, comp) = n.split_once('.').unwrap_or((n, ""));
        let comp_ix = match comp {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => 3,
        };
        let lane = || PExpr::Builtin("lane");
        let one = PExpr::Int(1);
        let full = PExpr::Int(0xffff_ffff);
        let le = || {
            bin(
                BOp::Sub,
                bin(BOp::Shl, PExpr::Int(1), bin(BOp::Add, lane(), PExpr::Int(1))),
                PExpr::Int(1),
            )
        };
        let lt = || bin(BOp::Sub, bin(BOp::Shl, PExpr::Int(1), lane()), PExpr::Int(1));
        let v = match (base, comp_ix) {
            ("%tid", c) if c < 3 => self.dims(self.block, "block", comp, "tid", 0),
            ("%ctaid", c) if c < 3 => self.dims(self.grid, "grid", comp, "bid", 0),
            ("%ntid", c) if c < 3 => PExpr::Int(self.block[c] as i64),
            ("%nctaid", c) if c < 3 => PExpr::Int(self.grid[c] as i64),
            ("%cluster_ctarank", _) | ("%cluster_ctaid", 0) => bin(BOp::Rem, PExpr::Builtin("bid"), PExpr::Int(self.cluster as i64)),
            ("%cluster_nctarank", _) | ("%cluster_nctaid", 0) => PExpr::Int(self.cluster as i64),
            ("%cluster_ctaid", 1 | 2) | ("%clusterid", 1 | 2) => PExpr::Int(0),
            ("%cluster_nctaid", 1 | 2) | ("%nclusterid", 1 | 2) => PExpr::Int(1),
            ("%clusterid", 0) => bin(BOp::Div, PExpr::Builtin("bid"), PExpr::Int(self.cluster as i64)),
            ("%nclusterid", 0) => PExpr::Int((self.grid[0] / self.cluster) as i64),
            ("%is_explicit_cluster", _) => PExpr::Int(self.explicit_cluster as i64),
            ("%laneid", _) => lane(),
            ("%lanemask_eq", _) => bin(BOp::Shl, one, lane()),
            ("%lanemask_lt", _) => lt(),
            ("%lanemask_le", _) => le(),
            ("%lanemask_gt", _) => bin(BOp::Xor, full, le()),
            ("%lanemask_ge", _) => bin(BOp::Xor, full, lt()),
            // The driver's grid workspace pointer, high and low halves
            // (cooperative_groups/details/driver_abi.h: `load_env_reg64<1,
            // 2>`): set on a cooperative launch; 0 otherwise, which
            // cooperative groups' grid sync tests before it traps.
            ("%envreg1", _) => PExpr::Int(self.workspace.map_or(0, |w| (w >> 32) & 0xffff_ffff)),
            ("%envreg2", _) => PExpr::Int(self.workspace.map_or(0, |w| w & 0xffff_ffff)),
            ("%warpid", _) | ("%nwarpid", _) => {
                return (
                    PExpr::Unknown,
                    Some(format!(
                        "`{n}` is the physical warp of the hardware, which may change while a thread runs: it is unknown here (compute the warp as %tid.x / 32)"
                    )),
                )
            }
            _ => {
                return (
                    PExpr::Unknown,
                    Some(format!("the special register `{n}` is not modelled: its value is unknown")),
                )
            }
        };
        (v, None)
    }

    /// An operand read as a value of type `t`.
    fn val(&mut self, o: &Operand, t: Ty, note: &mut Option<String>) -> Result<PExpr, Diagnostic> {
        Ok(match o {
            Operand::Name(n) if n.name == "WARP_SZ" => PExpr::Int(32),
            Operand::Name(n) if n.name.starts_with('%') && is_special(&n.name) => {
                let (v, why) = self.special(&n.name);
                if why.is_some() {
                    *note = why;
                }
                norm(t, v)
            }
            Operand::Name(n) if n.name.starts_with('%') || self.plain_regs.contains(&n.name) => {
                norm(t, PExpr::Reg(self.regs.id(&n.name)))
            }
            Operand::Name(n) if self.locals.contains(&n.name) => {
                *note = Some(format!(
                    "`{}` is thread-private (`.local`): its address is not modelled",
                    n.name
                ));
                PExpr::Unknown
            }
            Operand::Name(n) => match self.symbols.get(&n.name) {
                Some(&a) => PExpr::Int(a),
                None => return Err(err(n.span, format!("unknown name `{}`", n.name))),
            },
            Operand::SymOffset(n, k) => match self.symbols.get(&n.name) {
                Some(&a) => PExpr::Int(a + k),
                None => return Err(err(n.span, format!("unknown name `{}`", n.name))),
            },
            Operand::Int(v, _) => norm(t, PExpr::Int(*v)),
            Operand::Not(n) => bin(BOp::Eq, PExpr::Reg(self.regs.id(&n.name)), PExpr::Int(0)),
            Operand::Float(_) | Operand::Vector(..) => PExpr::Unknown,
            Operand::Addr { span, .. } | Operand::List(_, span) => {
                return Err(err(*span, "an address or list where a value is expected"))
            }
            Operand::Pair(a, _) => return Err(err(a.span, "a register pair where a value is expected")),
        })
    }

    fn dst(&mut self, o: &Operand) -> Result<Vec<usize>, Diagnostic> {
        Ok(match o {
            Operand::Name(n) if n.name == "_" => vec![],
            Operand::Name(n)
                if (n.name.starts_with('%') && !is_special(&n.name)) || self.plain_regs.contains(&n.name) =>
            {
                vec![self.regs.id(&n.name)]
            }
            Operand::Vector(v, _) => {
                let mut out = Vec::new();
                for o in v {
                    out.extend(self.dst(o)?);
                }
                out
            }
            Operand::Pair(a, b) => vec![self.regs.id(&a.name), self.regs.id(&b.name)],
            other => return Err(err(other.span(), "expected a destination register")),
        })
    }

    fn reg(&mut self, o: &Operand) -> Result<usize, Diagnostic> {
        match self.dst(o)?.as_slice() {
            [r] => Ok(*r),
            _ => Err(err(o.span(), "expected one register")),
        }
    }

    /// An address operand as a value (the register plus the offset, or a
    /// symbol's address plus the offset).
    fn addr(&mut self, o: &Operand) -> Result<PExpr, Diagnostic> {
        let Operand::Addr { base, offset, span } = o else {
            return Err(err(o.span(), "expected an address `[...]`"));
        };
        let b = match base {
            None => PExpr::Int(0),
            Some(n) if n.name.starts_with('%') || self.plain_regs.contains(&n.name) => {
                PExpr::Reg(self.regs.id(&n.name))
            }
            Some(n) => match self.symbols.get(&n.name) {
                Some(&a) => PExpr::Int(a),
                None => return Err(err(*span, format!("`{}` names no variable of this module", n.name))),
            },
        };
        Ok(bin(BOp::Add, b, PExpr::Int(*offset)))
    }

    /// Classifies one instruction.
    pub fn classify(&mut self, ins: &Instr, loc: Option<(u32, u32)>) -> Result<CInstr, Diagnostic> {
        let guard = ins.guard.as_ref().map(|(neg, p)| (*neg, self.regs.id(&p.name)));
        let mut note = None;
        let op = self.op(ins, &mut note)?;
        let parts = ins.parts();
        let collective = parts.iter().any(|p| matches!(*p, "sync" | "aligned"))
            || matches!(
                parts[0],
                "mma"
                    | "wmma"
                    | "wgmma"
                    | "ldmatrix"
                    | "stmatrix"
                    | "movmatrix"
                    | "elect"
                    | "tcgen05"
                    | "shfl"
                    | "vote"
                    | "match"
                    | "redux"
            );
        Ok(CInstr {
            op,
            guard,
            span: ins.span,
            note,
            loc,
            collective,
        })
    }

    fn op(&mut self, ins: &Instr, note: &mut Option<String>) -> Result<Op, Diagnostic> {
        let parts = ins.parts();
        let o = &ins.operands;
        let base = parts[0];
        let want = |n: usize| -> Result<(), Diagnostic> {
            if o.len() < n {
                Err(err(ins.span, format!("`{}` needs {n} operands", ins.op.name)))
            } else {
                Ok(())
            }
        };
        let last_ty = parts.iter().rev().find_map(|p| ty(p));
        let unsupported = || {
            err(
                ins.op.span,
                format!(
                    "`{}` is not supported: it is neither modelled nor on the list of instructions that cannot affect synchronization (docs/ptx.md)",
                    ins.op.name
                ),
            )
        };
        // The warp intrinsics with a member mask: their synchronization
        // is modelled (docs/ptx.md); `activemask` and the forms without
        // `.sync` stay unknown results.
        if matches!(base, "shfl" | "vote" | "match" | "redux") && parts.contains(&"sync") {
            return self.warp_intrinsic(ins, &parts);
        }
        if ins.op.name == "elect.sync" {
            return self.elect(ins);
        }
        // Instructions that touch memory in ways the model does not have,
        // whatever their element type: a warp's matrix load or store
        // (`wmma.load`, `wmma.store`: which lane accesses which element is
        // unspecified), `wgmma` (reads shared memory through descriptors,
        // in the async proxy), bulk reductions (`cp.reduce.async.bulk`),
        // `multimem`, surface accesses, and `st.async`/`red.async`. The
        // floating-point forms of most were unknown results before session
        // 36 (so a race on a `wmma.store`d tile was `ok`), and `st.async`
        // a plain store: they are rejected at their line until modelled.
        let touches_memory = (base == "wmma" && matches!(parts.get(1), Some(&"load") | Some(&"store")))
            || (matches!(base, "st" | "red") && parts.get(1) == Some(&"async"))
            || matches!(base, "wgmma" | "multimem" | "sust" | "sured" | "suld")
            || (base == "cp" && parts.get(1) == Some(&"reduce"));
        if touches_memory {
            return Err(err(
                ins.op.span,
                format!(
                    "`{}` accesses memory in a way that is not modelled (a warp's matrix, bulk or asynchronous access): rejected rather than left out, since a race on it would be missed (docs/ptx.md)",
                    ins.op.name
                ),
            ));
        }
        // Every floating-point form and the listed instructions: unknown results.
        let float = parts.iter().skip(1).any(|p| is_float_part(p))
            && !matches!(
                base,
                "ld" | "st" | "atom" | "red" | "ldu" | "mov" | "selp" | "bar" | "barrier"
            );
        let listed = UNKNOWN_RESULT.iter().any(|u| {
            ins.op.name == *u || ins.op.name.starts_with(&format!("{u}.")) || (*u == base && !u.contains('.'))
        }) || (base == "wmma" && parts.get(1) == Some(&"mma"));
        if float || listed {
            let dsts = match o.first() {
                Some(d) => self.dst(d).unwrap_or_default(),
                None => vec![],
            };
            return Ok(Op::Unknown(dsts));
        }
        match base {
            "mov" => {
                want(2)?;
                let t = last_ty.ok_or_else(|| err(ins.op.span, "`mov` without a type"))?;
                if let Operand::Vector(..) = &o[0] {
                    return Ok(Op::Unknown(self.dst(&o[0])?));
                }
                let d = self.reg(&o[0])?;
                let v = self.val(&o[1], t, note)?;
                Ok(Op::Defs(vec![(d, norm(t, v))]))
            }
            "add" | "sub" | "mul" | "mad" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr"
            | "neg" | "not" | "abs" => self.arith(ins, &parts, note),
            "cvt" => {
                want(2)?;
                let tys: Vec<Ty> = parts.iter().filter_map(|p| ty(p)).collect();
                let plain = parts.len() == 3 && tys.len() == 2 && !tys[0].float && !tys[1].float;
                if !plain {
                    return Ok(Op::Unknown(self.dst(&o[0])?));
                }
                let d = self.reg(&o[0])?;
                let a = self.val(&o[1], tys[1], note)?;
                Ok(Op::Defs(vec![(d, norm(tys[0], a))]))
            }
            "cvta" => {
                want(2)?;
                let d = self.reg(&o[0])?;
                let a = match &o[1] {
                    Operand::Name(n) if !n.name.starts_with('%') => match self.symbols.get(&n.name) {
                        Some(&a) => PExpr::Int(a),
                        None => return Err(err(n.span, format!("unknown name `{}`", n.name))),
                    },
                    other => self.val(other, ty("u64").expect("a type"), note)?,
                };
                Ok(Op::Defs(vec![(d, a)]))
            }
            "setp" => self.setp(ins, &parts, note),
            "selp" => {
                want(4)?;
                let t = last_ty.ok_or_else(|| err(ins.op.span, "`selp` without a type"))?;
                if t.float {
                    return Ok(Op::Unknown(self.dst(&o[0])?));
                }
                let d = self.reg(&o[0])?;
                let a = self.val(&o[1], t, note)?;
                let b = self.val(&o[2], t, note)?;
                let c = self.val(&o[3], ty("pred").expect("a type"), note)?;
                let c = bin(BOp::Ne, c, PExpr::Int(0));
                Ok(Op::Defs(vec![(
                    d,
                    bin(BOp::Add, b.clone(), bin(BOp::Mul, bin(BOp::Sub, a, b), c)),
                )]))
            }
            "ld" | "ldu" | "st" | "atom" | "red" => self.mem(ins, &parts, note),
            "bra" => match o.first() {
                Some(Operand::Name(l)) if self.labels.contains(&l.name) => Ok(Op::Bra(l.name.clone())),
                Some(other) => Err(err(
                    other.span(),
                    "`bra` to something that is not a label of this function",
                )),
                None => Err(err(ins.span, "`bra` without a target")),
            },
            "ret" | "exit" => Ok(Op::Exit),
            "trap" => Ok(Op::Trap),
            // bfi d, a, b, pos, len (PTX ISA, "bfi"): `len` low bits of `a`
            // put into `b` from bit `pos`; computed for constant `pos` and
            // `len` within the type, unknown otherwise.
            "bfi" => {
                want(5)?;
                let t = last_ty.ok_or_else(|| err(ins.op.span, "`bfi` without a type"))?;
                let d = self.reg(&o[0])?;
                match (&o[3], &o[4]) {
                    (Operand::Int(pos, _), Operand::Int(len, _))
                        if *pos >= 0 && *len >= 0 && pos + len <= t.bits as i64 && *len < 64 =>
                    {
                        let a = self.val(&o[1], t, note)?;
                        let b = self.val(&o[2], t, note)?;
                        let m = (1i64 << len) - 1;
                        let field = bin(BOp::Shl, bin(BOp::BitAnd, a, PExpr::Int(m)), PExpr::Int(*pos));
                        let rest = bin(BOp::BitAnd, b, PExpr::Int(!(m << pos)));
                        Ok(Op::Defs(vec![(d, norm(t, bin(BOp::BitOr, rest, field)))]))
                    }
                    _ => Ok(Op::Unknown(vec![d])),
                }
            }
            "nanosleep" | "pmevent" | "prefetch" | "prefetchu" | "applypriority" => Ok(Op::Nop),
            // PTX ISA, "discard": a weak write of an unstable
            // indeterminate value to the `size` bytes at `a` (128, the one
            // size it takes) of global memory; it races as a store does.
            // The generic form, whose address must lie in global memory
            // (undefined behaviour otherwise), is not read.
            "discard" => {
                if !parts.contains(&"global") {
                    return Err(err(
                        ins.op.span,
                        "`discard` without `.global` (a generic address, undefined behaviour outside global memory) is not supported: write `discard.global.L2`",
                    ));
                }
                if o.len() != 2 || !matches!(o[1], Operand::Int(128, _)) {
                    return Err(err(ins.span, "`discard` takes an address and the size 128"));
                }
                let addr = self.addr(&o[0])?;
                Ok(Op::Mem {
                    kind: MemKind::Write,
                    addr,
                    elems: 1,
                    esize: 128,
                    dsts: vec![],
                    ty: ty("b8").expect("a type"),
                    shared: Some(false),
                    vals: vec![PExpr::Unknown],
                    rmw: None,
                })
            }
            "membar" => Ok(Op::Fence {
                name: ins.op.name.clone(),
                kind: FenceKind::Memory,
            }),
            "fence" => {
                // The model's proxy fence covers every state space; the
                // `.global` form orders global memory alone, so reading it
                // as the proxy fence would order shared-memory writes and
                // mbarrier inits it does not order.
                if parts.starts_with(&["fence", "proxy", "async", "global"]) {
                    return Err(err(
                        ins.op.span,
                        format!(
                            "`{}` is not supported: it orders only global memory, and the model's proxy fence does not tell state spaces apart (docs/ptx.md)",
                            ins.op.name
                        ),
                    ));
                }
                let (name, kind) = match parts.as_slice() {
                    ["fence", s @ ("cta" | "cluster" | "gpu" | "sys")] => {
                        (format!("fence.acq_rel.{s}"), FenceKind::Memory)
                    }
                    // The proxy fence (no state space, `.shared::cta`,
                    // `.shared::cluster`), and the fence for
                    // mbarrier inits (`.release.cluster`): the litmus
                    // statements of those names.
                    ["fence", "proxy", "async", rest @ ..] => (
                        "fence.proxy.async".to_string(),
                        FenceKind::Proxy {
                            shared_only: rest.first().is_some_and(|p| p.starts_with("shared")),
                        },
                    ),
                    ["fence", "mbarrier_init", ..] => ("fence.mbarrier_init".to_string(), FenceKind::Other),
                    ["fence", "sc" | "acq_rel", ..] => (ins.op.name.clone(), FenceKind::Memory),
                    _ => (ins.op.name.clone(), FenceKind::Other),
                };
                Ok(Op::Fence { name, kind })
            }
            "bar" | "barrier" => self.barrier(ins, &parts),
            "mbarrier" => self.mbarrier(ins, &parts),
            "cp" if parts.get(1) == Some(&"async") && parts.get(2) == Some(&"bulk") => self.cp_async_bulk(ins, &parts),
            "cp" if parts.get(1) == Some(&"async") => self.cp_async(ins, &parts),
            "call" => Err(err(ins.span, "this call could not be inlined")),
            _ => Err(unsupported()),
        }
    }

    /// The non-bulk `cp.async` family (PTX ISA, "cp.async",
    /// "cp.async.commit_group", "cp.async.wait_group",
    /// "cp.async.mbarrier.arrive"), each the litmus statement of its name.
    fn cp_async(&mut self, ins: &Instr, parts: &[&str]) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        match parts.get(2).copied() {
            Some("commit_group") | Some("wait_all") => Ok(Op::Group {
                name: format!("cp.async.{}", parts[2]),
                n: None,
            }),
            Some("wait_group") => match o.first() {
                Some(Operand::Int(n, _)) if *n >= 0 => Ok(Op::Group {
                    name: "cp.async.wait_group".into(),
                    n: Some(*n),
                }),
                _ => Err(err(ins.span, "`cp.async.wait_group` needs a constant count")),
            },
            Some("mbarrier") => {
                let noinc = parts.contains(&"noinc");
                let Some(a) = o.first() else {
                    return Err(err(ins.span, "`cp.async.mbarrier.arrive` needs an address operand"));
                };
                Ok(Op::MBar {
                    name: if noinc {
                        "cp.async.mbarrier.arrive.noinc".into()
                    } else {
                        "cp.async.mbarrier.arrive".into()
                    },
                    addr: self.addr(a)?,
                    args: Vec::new(),
                    dst: None,
                    poll: false,
                })
            }
            Some("ca") | Some("cg") => {
                if !(parts.iter().any(|p| p.starts_with("shared")) && parts.contains(&"global")) || o.len() < 3 {
                    return Err(err(ins.span, "`cp.async` copies from `.global` to `.shared`: `cp.async.ca.shared.global [dst], [src], size`"));
                }
                // `cp-size` is an immediate, 4, 8 or 16; then an optional
                // `src-size` (an integer) or `ignore-src` (a predicate),
                // then with `.L2::cache_hint` a cache policy.
                let bytes = match &o[2] {
                    Operand::Int(n @ (4 | 8 | 16), _) => *n as u32,
                    other => return Err(err(other.span(), "`cp.async`'s size is a constant: 4, 8 or 16")),
                };
                let hint = parts.iter().any(|p| p.ends_with("cache_hint"));
                let src = match o.get(3) {
                    Some(_) if hint && o.len() == 4 => SrcBytes::All,
                    None => SrcBytes::All,
                    Some(x) => {
                        // `!p` negates only a predicate.
                        let is_pred = match x {
                            Operand::Not(_) => true,
                            Operand::Name(n) => self.pred_regs.contains(&n.name),
                            _ => false,
                        };
                        if is_pred {
                            SrcBytes::Ignore(self.val(x, ty("pred").expect("a type"), &mut None)?)
                        } else {
                            SrcBytes::Size(self.val(x, ty("u32").expect("a type"), &mut None)?)
                        }
                    }
                };
                Ok(Op::Copy {
                    dst: self.addr(&o[0])?,
                    src: self.addr(&o[1])?,
                    bulk: None,
                    plain: Some(PlainSize { bytes, src }),
                })
            }
            _ => Err(err(
                ins.op.span,
                format!(
                    "`{}` is not supported: it is neither modelled nor on the list of instructions that cannot affect synchronization (docs/ptx.md)",
                    ins.op.name
                ),
            )),
        }
    }

    /// The bulk copies and their groups (PTX ISA, "cp.async.bulk",
    /// "cp.async.bulk.commit_group", "cp.async.bulk.wait_group"), each
    /// the litmus statement of its name (docs/litmus.md, "Asynchronous
    /// copies"): a global-to-shared copy that completes on an mbarrier
    /// (`.shared::cluster.global.mbarrier::complete_tx::bytes`, or
    /// `.shared::cta` as PTX 8.6 also spells it), and a shared-to-global
    /// copy into the thread's bulk async-group (`.global.shared::cta
    /// .bulk_group`). A `.shared::cluster` destination is the issuing
    /// CTA's own shared memory unless a `mapa` made it a peer's, and the
    /// front end rejects `mapa`; so `.shared::cluster.shared::cta` is a
    /// copy within the block's shared memory. Rejected with their reasons:
    /// `.multicast` (one copy into several CTAs), tensor copies (`.tensor`: the tensor map is not modelled),
    /// `.cp_mask`; an `.L2::cache_hint` operand is a hint and ignored,
    /// and `cp.async.bulk.prefetch` (into L2) has no effect on the model.
    fn cp_async_bulk(&mut self, ins: &Instr, parts: &[&str]) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        let reject = |why: &str| {
            Err(err(
                ins.op.span,
                format!(
                    "`{}` is not supported: {why} (docs/ptx.md, \"Async copies\")",
                    ins.op.name
                ),
            ))
        };
        match parts.get(3).copied() {
            Some("commit_group") => {
                return Ok(Op::Group {
                    name: "cp.async.bulk.commit_group".into(),
                    n: None,
                })
            }
            Some("wait_group") => {
                let read = match &parts[4..] {
                    [] => false,
                    ["read"] => true,
                    _ => return reject("only `.wait_group` and `.wait_group.read` are modelled"),
                };
                return match o.first() {
                    Some(Operand::Int(n, _)) if *n >= 0 => Ok(Op::Group {
                        name: if read {
                            "cp.async.bulk.wait_group.read".into()
                        } else {
                            "cp.async.bulk.wait_group".into()
                        },
                        n: Some(*n),
                    }),
                    _ => Err(err(ins.span, "`cp.async.bulk.wait_group` needs a constant count")),
                };
            }
            Some("prefetch") => return Ok(Op::Nop),
            Some("tensor") => return reject("a tensor copy's tensor map is not modelled"),
            _ => {}
        }
        if parts.iter().any(|p| p.starts_with("multicast")) {
            return reject("a multicast copy writes the shared memory of several CTAs, which is not modelled");
        }
        if parts.contains(&"cp_mask") {
            return reject("a byte-masked copy is not modelled");
        }
        if parts
            .iter()
            .any(|p| *p == "ignore_oob" || p.starts_with("mbarrier::report"))
        {
            return reject("its out-of-bounds and validity-report forms are not modelled");
        }
        let hint = usize::from(parts.iter().any(|p| p.starts_with("L2::cache_hint")));
        // Into shared memory from global memory, or from the block's own
        // shared memory (`.shared::cluster.shared::cta`: without `mapa`
        // the destination is the issuing block's too).
        let src_shared = parts.get(4) == Some(&"shared::cta");
        let to_shared = matches!(parts.get(3).copied(), Some("shared::cluster" | "shared::cta"))
            && (parts.get(4) == Some(&"global") || (parts.get(3) == Some(&"shared::cluster") && src_shared))
            && parts.iter().any(|p| p.starts_with("mbarrier::complete_tx"));
        let to_global = parts.get(3) == Some(&"global")
            && matches!(parts.get(4).copied(), Some("shared::cta"))
            && parts.contains(&"bulk_group");
        let needed = if to_shared { 4 } else { 3 } + hint;
        if to_shared || to_global {
            if o.len() != needed {
                return Err(err(ins.span, format!("`{}` takes {needed} operands", ins.op.name)));
            }
            let mut none = None;
            let bytes = self.val(&o[2], ty("u32").expect("a type"), &mut none)?;
            return Ok(Op::Copy {
                dst: self.addr(&o[0])?,
                src: self.addr(&o[1])?,
                bulk: Some(Bulk {
                    bytes,
                    bar: if to_shared { Some(self.addr(&o[3])?) } else { None },
                    src_shared,
                }),
                plain: None,
            });
        }
        reject("it is neither modelled nor on the list of instructions that cannot affect synchronization")
    }

    fn arith(&mut self, ins: &Instr, parts: &[&str], note: &mut Option<String>) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        let base = parts[0];
        let Some(t) = parts.iter().rev().find_map(|p| ty(p)) else {
            return Err(err(ins.op.span, format!("`{}` without a type", ins.op.name)));
        };
        if parts.iter().any(|p| matches!(*p, "sat" | "cc" | "relu")) || t.bits > 64 {
            return Ok(Op::Unknown(
                self.dst(o.first().ok_or_else(|| err(ins.span, "no operands"))?)?,
            ));
        }
        let unary = matches!(base, "neg" | "not" | "abs");
        let n = if unary {
            2
        } else if base == "mad" {
            4
        } else {
            3
        };
        if o.len() < n {
            return Err(err(ins.span, format!("`{}` needs {n} operands", ins.op.name)));
        }
        let d = self.reg(&o[0])?;
        let wide = parts.contains(&"wide");
        let hi = parts.contains(&"hi");
        let wt = Ty {
            bits: (t.bits * 2).min(64),
            ..t
        };
        // Shift amounts are unsigned 32-bit.
        let bt = if matches!(base, "shl" | "shr") {
            ty("u32").expect("a type")
        } else {
            t
        };
        let a = self.val(&o[1], t, note)?;
        let b = if unary {
            PExpr::Int(0)
        } else {
            self.val(&o[2], bt, note)?
        };
        // Values are 64-bit signed integers: a 64-bit unsigned division,
        // remainder, minimum, maximum or right shift would be computed
        // signed, so its result is unknown rather than guessed (docs/ptx.md,
        // "Values"). (A division by zero, which PTX leaves unspecified, is
        // unknown where a thread evaluates it: `trace.rs`.)
        if t.bits >= 64 && !t.signed && matches!(base, "div" | "rem" | "min" | "max" | "shr") {
            // Except a logical right shift by a constant, which is the
            // arithmetic one with the copies of the sign bit masked off
            // (nvcc's signed division by a power of two starts with
            // `shr.u64 %t, %x, 63`). PTX clamps the amount to 64 bits.
            if let ("shr", PExpr::Int(n)) = (base, &b) {
                let e = match *n {
                    0 => a,
                    n @ 1..=63 => bin(
                        BOp::BitAnd,
                        bin(BOp::Shr, a, PExpr::Int(n)),
                        PExpr::Int(i64::MAX >> (n - 1)),
                    ),
                    _ => PExpr::Int(0),
                };
                return Ok(Op::Defs(vec![(d, e)]));
            }
            return Ok(Op::Unknown(vec![d]));
        }
        let e = match base {
            "add" => norm(t, bin(BOp::Add, a, b)),
            "sub" => norm(t, bin(BOp::Sub, a, b)),
            "mul" | "mad" => {
                if hi && t.bits >= 64 {
                    return Ok(Op::Unknown(vec![d]));
                }
                let p = bin(BOp::Mul, a, b);
                let (p, rt) = if wide {
                    (p, wt)
                } else if hi {
                    (bin(BOp::Shr, p, PExpr::Int(t.bits as i64)), t)
                } else {
                    (p, t)
                };
                if base == "mad" {
                    let c = self.val(&o[3], rt, note)?;
                    norm(rt, bin(BOp::Add, p, c))
                } else {
                    norm(rt, p)
                }
            }
            "div" => norm(t, bin(BOp::Div, a, b)),
            "rem" => norm(t, bin(BOp::Rem, a, b)),
            "min" | "max" => {
                let lt = if base == "min" {
                    bin(BOp::Lt, a.clone(), b.clone())
                } else {
                    bin(BOp::Gt, a.clone(), b.clone())
                };
                bin(BOp::Add, b.clone(), bin(BOp::Mul, bin(BOp::Sub, a, b), lt))
            }
            "and" => bin(BOp::BitAnd, a, b),
            "or" => bin(BOp::BitOr, a, b),
            "xor" => bin(BOp::Xor, a, b),
            "not" if t.pred => bin(BOp::Eq, a, PExpr::Int(0)),
            "not" => norm(t, bin(BOp::Xor, a, PExpr::Int(-1))),
            "neg" => norm(t, bin(BOp::Sub, PExpr::Int(0), a)),
            "abs" => {
                let s = bin(BOp::Shr, a.clone(), PExpr::Int(63));
                norm(t, bin(BOp::Sub, bin(BOp::Xor, a, s.clone()), s))
            }
            "shl" => norm(t, bin(BOp::Shl, a, b)),
            _ => norm(t, bin(BOp::Shr, a, b)),
        };
        Ok(Op::Defs(vec![(d, e)]))
    }

    fn setp(&mut self, ins: &Instr, parts: &[&str], note: &mut Option<String>) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        if o.len() < 3 {
            return Err(err(ins.span, "`setp` needs 3 operands"));
        }
        let dsts = self.dst(&o[0])?;
        let Some(t) = parts.iter().rev().find_map(|p| ty(p)) else {
            return Err(err(ins.op.span, "`setp` without a type"));
        };
        let cmp = parts.get(1).copied().unwrap_or("");
        let op = match cmp {
            "eq" => BOp::Eq,
            "ne" => BOp::Ne,
            "lt" | "lo" => BOp::Lt,
            "le" | "ls" => BOp::Le,
            "gt" | "hi" => BOp::Gt,
            "ge" | "hs" => BOp::Ge,
            _ => return Ok(Op::Unknown(dsts)),
        };
        if t.float {
            return Ok(Op::Unknown(dsts));
        }
        // A 64-bit unsigned ordering would compare signed values: unknown
        // rather than guessed (equality is the same either way).
        if t.bits >= 64 && (!t.signed || matches!(cmp, "lo" | "ls" | "hi" | "hs")) && !matches!(cmp, "eq" | "ne") {
            return Ok(Op::Unknown(dsts));
        }
        // Unsigned comparisons read both operands unsigned.
        let t = if matches!(cmp, "lo" | "ls" | "hi" | "hs") {
            Ty { signed: false, ..t }
        } else {
            t
        };
        let a = self.val(&o[1], t, note)?;
        let b = self.val(&o[2], t, note)?;
        let c = bin(op, a, b);
        let boolop = parts.iter().find_map(|p| match *p {
            "and" => Some(BOp::BitAnd),
            "or" => Some(BOp::BitOr),
            "xor" => Some(BOp::Xor),
            _ => None,
        });
        let (p, q) = match boolop {
            Some(bo) => {
                let Some(x) = o.get(3) else {
                    return Err(err(ins.span, "`setp` with a boolean operation needs a fourth operand"));
                };
                let x = self.val(x, ty("pred").expect("a type"), note)?;
                let x = bin(BOp::Ne, x, PExpr::Int(0));
                (
                    bin(bo, c.clone(), x.clone()),
                    bin(bo, bin(BOp::Eq, c, PExpr::Int(0)), x),
                )
            }
            None => (c.clone(), bin(BOp::Eq, c, PExpr::Int(0))),
        };
        Ok(Op::Defs(match dsts.as_slice() {
            [p0] => vec![(*p0, p)],
            [p0, q0] => vec![(*p0, p), (*q0, q)],
            _ => return Err(err(o[0].span(), "expected one or two predicate registers")),
        }))
    }

    fn mem(&mut self, ins: &Instr, parts: &[&str], note: &mut Option<String>) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        let base = parts[0];
        let space = parts.iter().find_map(|p| {
            let p = p.split("::").next().unwrap_or(p);
            match p {
                "global" => Some(Space::Global),
                "shared" => Some(Space::Shared),
                "local" => Some(Space::Local),
                "param" => Some(Space::Param),
                "const" => Some(Space::Const),
                _ => None,
            }
        });
        let strong = parts
            .iter()
            .any(|p| matches!(*p, "volatile" | "relaxed" | "acquire" | "release" | "acq_rel" | "mmio"));
        let elems = parts
            .iter()
            .find_map(|p| match *p {
                "v2" => Some(2),
                "v4" => Some(4),
                "v8" => Some(8),
                _ => None,
            })
            .unwrap_or(1);
        let Some(t) = parts.iter().rev().find_map(|p| ty(p)) else {
            return Err(err(ins.op.span, format!("`{}` without a type", ins.op.name)));
        };
        let esize = if t.pred { 1 } else { (t.bits / 8).max(1) };
        let (kind, addr_at, dsts) = match base {
            "ld" | "ldu" => {
                if o.len() < 2 {
                    return Err(err(ins.span, "`ld` needs 2 operands"));
                }
                (if strong { MemKind::Load } else { MemKind::Read }, 1, self.dst(&o[0])?)
            }
            "st" => {
                if o.len() < 2 {
                    return Err(err(ins.span, "`st` needs 2 operands"));
                }
                (if strong { MemKind::Store } else { MemKind::Write }, 0, vec![])
            }
            "atom" => {
                if o.len() < 3 {
                    return Err(err(ins.span, "`atom` needs 3 operands"));
                }
                (MemKind::Rmw, 1, self.dst(&o[0])?)
            }
            _ => {
                if o.len() < 2 {
                    return Err(err(ins.span, "`red` needs 2 operands"));
                }
                (MemKind::Rmw, 0, vec![])
            }
        };
        match space {
            Some(Space::Param) => return self.param(ins, kind, &o[addr_at], o, t, esize, note),
            Some(Space::Local) | Some(Space::Const) => return Ok(Op::Unknown(dsts)),
            _ => {}
        }
        let addr = self.addr(&o[addr_at])?;
        // The operands after the address: a store's value (a vector for
        // `.v2`/`.v4`), an atomic's operands.
        // Only a spin loop's location needs them, and the pre-evaluation
        // reports an unknown one there: an operand that is no value (`_`)
        // is unknown here, never an error of its own.
        let mut vals = Vec::new();
        let mut scratch = None;
        for v in o.iter().skip(addr_at + 1) {
            let xs = match v {
                Operand::Vector(xs, _) => xs.iter().collect(),
                x => vec![x],
            };
            for x in xs {
                vals.push(self.val(x, t, &mut scratch).unwrap_or(PExpr::Unknown));
            }
        }
        let rmw = matches!(base, "atom" | "red")
            .then(|| RMW_OPS.iter().copied().find(|op| parts.iter().any(|p| p == op)))
            .flatten();
        Ok(Op::Mem {
            kind,
            addr,
            elems,
            esize,
            dsts,
            ty: t,
            shared: match space {
                Some(Space::Shared) => Some(true),
                Some(Space::Global) => Some(false),
                _ => None,
            },
            vals,
            rmw,
        })
    }

    /// `ld.param`/`st.param`: a kernel parameter's value, or the `.param`
    /// variables of a call, which are registers here.
    #[allow(clippy::too_many_arguments)]
    fn param(
        &mut self,
        ins: &Instr,
        kind: MemKind,
        at: &Operand,
        o: &[Operand],
        t: Ty,
        esize: u32,
        note: &mut Option<String>,
    ) -> Result<Op, Diagnostic> {
        let Operand::Addr {
            base: Some(name),
            offset,
            ..
        } = at
        else {
            return Err(err(at.span(), "a `.param` access needs a parameter name"));
        };
        // A slot per (variable, byte offset, width): a load reads what a
        // store of its own width at its own offset wrote (nvcc passes each
        // argument so), anything else (a narrower load of a wider store,
        // bytes stored one by one and loaded as a word) reads a slot no
        // store wrote, an unknown value, where one slot per offset gave
        // the wider value untruncated.
        let slot = |k: usize| format!("%param:{}+{}:{esize}", name.name, offset + (k as i64) * esize as i64);
        match kind {
            MemKind::Read | MemKind::Load => {
                let dsts = self.dst(&o[0])?;
                if let Some(p) = self.params.get(&name.name).copied() {
                    let v = match p {
                        ParamValue::Known(v) if *offset == 0 => norm(t, PExpr::Int(v)),
                        // A guessed buffer address, loaded whole (a
                        // narrower load takes bits of the guess).
                        ParamValue::Pointer(a) if *offset == 0 && t.bits >= 64 => PExpr::Ptr(a),
                        _ => {
                            *note = Some(match self.param_hint.get(&name.name) {
                                Some(h) => format!(
                                    "the kernel parameter `{}` is unknown: pass `--param {h}=VALUE`",
                                    name.name
                                ),
                                None => format!("the kernel parameter `{}` is unknown", name.name),
                            });
                            PExpr::Unknown
                        }
                    };
                    // A vector load of a parameter: the value given is its
                    // first element's; the others are unknown.
                    return Ok(Op::Defs(
                        dsts.into_iter()
                            .enumerate()
                            .map(|(k, d)| (d, if k == 0 { v.clone() } else { PExpr::Unknown }))
                            .collect(),
                    ));
                }
                let defs = dsts
                    .into_iter()
                    .enumerate()
                    .map(|(k, d)| (d, norm(t, PExpr::Reg(self.regs.id(&slot(k))))))
                    .collect();
                Ok(Op::Defs(defs))
            }
            _ => {
                if self.params.contains_key(&name.name) {
                    return Err(err(ins.span, "a store to a kernel parameter"));
                }
                let vals: Vec<&Operand> = match &o[1] {
                    Operand::Vector(v, _) => v.iter().collect(),
                    other => vec![other],
                };
                let mut defs = Vec::new();
                for (k, v) in vals.into_iter().enumerate() {
                    let e = self.val(v, t, note)?;
                    defs.push((self.regs.id(&slot(k)), norm(t, e)));
                }
                Ok(Op::Defs(defs))
            }
        }
    }

    /// The mbarrier forms of the CTA's own shared memory (PTX ISA,
    /// "mbarrier": `init`, `inval`, `arrive` with its count and
    /// `expect_tx` variants, `arrive_drop`, `expect_tx`, `complete_tx`,
    /// `test_wait` and `try_wait` with or without `.parity`). Rejected
    /// with the reason: a peer CTA's barrier (`.shared::cluster`), the
    /// `.relaxed` arrive and wait (they order no memory, which the model's
    /// arrive and wait always do), `.noComplete`, and `pending_count`.
    fn mbarrier(&mut self, ins: &Instr, parts: &[&str]) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        let u32t = ty("u32").expect("a type");
        let reject = |why: &str| {
            Err(err(
                ins.op.span,
                format!("`{}` is not modelled: {why} (docs/ptx.md)", ins.op.name),
            ))
        };
        if parts.contains(&"shared::cluster") {
            return reject(
                "a barrier addressed through `.shared::cluster` may be a peer CTA's (distributed shared memory)",
            );
        }
        if parts.contains(&"noComplete") {
            return reject("`.noComplete` (an arrive that must not complete the phase)");
        }
        let op = parts.get(1).copied().unwrap_or("");
        let relaxed = parts.contains(&"relaxed");
        let addr_at = match op {
            "init" | "inval" | "expect_tx" | "complete_tx" => 0,
            "arrive" | "arrive_drop" | "test_wait" | "try_wait" => 1,
            _ => return reject("only `init`, `inval`, `arrive`, `arrive_drop`, `expect_tx`, `complete_tx`, `test_wait` and `try_wait` are"),
        };
        if relaxed && matches!(op, "arrive" | "arrive_drop" | "test_wait" | "try_wait") {
            return reject("`.relaxed` orders no memory, while the model's arrive releases and its wait acquires");
        }
        let Some(a) = o.get(addr_at) else {
            return Err(err(ins.span, format!("`{}` needs an address operand", ins.op.name)));
        };
        let addr = self.addr(a)?;
        let dst = if addr_at == 1 {
            self.dst(&o[0])?.first().copied()
        } else {
            None
        };
        let mut none = None;
        let mut value = |s: &mut Self, k: usize| -> Result<Option<PExpr>, Diagnostic> {
            o.get(k).map(|x| s.val(x, u32t, &mut none)).transpose()
        };
        let parity = parts.contains(&"parity");
        let expect_tx = parts.contains(&"expect_tx");
        let (name, args, poll): (&str, Vec<MArg>, bool) = match op {
            "init" => {
                let n = value(self, 1)?.ok_or_else(|| err(ins.span, "`mbarrier.init` needs a count"))?;
                ("mbarrier.init", vec![MArg::Value(n)], false)
            }
            "inval" => ("mbarrier.inval", vec![], false),
            "expect_tx" | "complete_tx" => {
                let n = value(self, 1)?
                    .ok_or_else(|| err(ins.span, format!("`{}` needs a transaction count", ins.op.name)))?;
                (
                    if op == "expect_tx" {
                        "mbarrier.expect_tx"
                    } else {
                        "mbarrier.complete_tx"
                    },
                    vec![MArg::Value(n)],
                    false,
                )
            }
            "arrive" if expect_tx => {
                let n = value(self, 2)?
                    .ok_or_else(|| err(ins.span, "`mbarrier.arrive.expect_tx` needs a transaction count"))?;
                ("mbarrier.arrive.expect_tx", vec![MArg::Value(n)], false)
            }
            "arrive" => (
                "mbarrier.arrive",
                value(self, 2)?.map(MArg::Value).into_iter().collect(),
                false,
            ),
            "arrive_drop" => {
                // The `.expect_tx` form raises the transaction count first;
                // its operand is bytes, not an arrival count (session 37
                // noted the message called it a count).
                if expect_tx {
                    return reject("`arrive_drop.expect_tx` (an arrive-drop that raises the transaction count)");
                }
                if o.len() > 2 {
                    return reject("`arrive_drop` with a count");
                }
                ("mbarrier.arrive_drop", vec![], false)
            }
            _ => {
                // test_wait / try_wait: `p, [addr], state|parity{, hint}`.
                let Some(x) = o.get(2) else {
                    return Err(err(
                        ins.span,
                        format!("`{}` needs a state or parity operand", ins.op.name),
                    ));
                };
                if dst.is_none() {
                    return Err(err(
                        ins.span,
                        format!("`{}` needs a predicate destination", ins.op.name),
                    ));
                }
                if parity {
                    let v = self.val(x, u32t, &mut none)?;
                    ("mbarrier.try_wait.parity", vec![MArg::Value(v)], true)
                } else {
                    let v = self.val(x, ty("u64").expect("a type"), &mut none)?;
                    ("mbarrier.try_wait", vec![MArg::Token(v)], true)
                }
            }
        };
        Ok(Op::MBar {
            name: name.into(),
            addr,
            args,
            dst,
            poll,
        })
    }

    /// `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync` (PTX ISA,
    /// "Parallel Synchronization and Communication Instructions"): the
    /// litmus warp intrinsic of the same form, whose mask is the last
    /// operand. A shuffle's `c` operand must be one of the two forms nvcc
    /// writes for a segment width `w` (`((32 - w) << 8) | 31`, or
    /// `(32 - w) << 8` for `.up`).
    fn warp_intrinsic(&mut self, ins: &Instr, parts: &[&str]) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        let u32t = ty("u32").expect("a type");
        let t = parts.iter().rev().find_map(|p| ty(p)).unwrap_or(u32t);
        let mode = parts
            .iter()
            .copied()
            .find(|p| !matches!(*p, "sync") && ty(p).is_none() && *p != parts[0]);
        let (name, n) = match (parts[0], mode) {
            ("shfl", Some("idx")) => ("__shfl_sync", 5),
            ("shfl", Some("up")) => ("__shfl_up_sync", 5),
            ("shfl", Some("down")) => ("__shfl_down_sync", 5),
            ("shfl", Some("bfly")) => ("__shfl_xor_sync", 5),
            ("vote", Some("all")) => ("__all_sync", 3),
            ("vote", Some("any")) => ("__any_sync", 3),
            ("vote", Some("uni")) => ("__uni_sync", 3),
            ("vote", Some("ballot")) => ("__ballot_sync", 3),
            ("match", Some("any")) => ("__match_any_sync", 3),
            ("match", Some("all")) => ("__match_all_sync", 3),
            ("redux", Some("add")) => ("__reduce_add_sync", 3),
            ("redux", Some("min")) => ("__reduce_min_sync", 3),
            ("redux", Some("max")) => ("__reduce_max_sync", 3),
            ("redux", Some("and")) => ("__reduce_and_sync", 3),
            ("redux", Some("or")) => ("__reduce_or_sync", 3),
            ("redux", Some("xor")) => ("__reduce_xor_sync", 3),
            _ => {
                return Err(err(
                    ins.op.span,
                    format!("`{}` is not a warp intrinsic form this front end supports", ins.op.name),
                ))
            }
        };
        if o.len() != n {
            return Err(err(ins.span, format!("`{}` needs {n} operands", ins.op.name)));
        }
        let dsts = self.dst(&o[0])?;
        let (dst, pdst) = (dsts.first().copied(), dsts.get(1).copied());
        let mut none = None;
        let sel = Some(self.val(&o[n - 1], u32t, &mut none)?);
        // A float value (`redux.sync` on `.f32`) is data the model does
        // not compute: 0 stands for it, as for any unknown data.
        let value = if t.float {
            PExpr::Unknown
        } else {
            self.val(&o[1], t, &mut None)?
        };
        let mut args = vec![(value, false)];
        if parts[0] == "shfl" {
            let lane = self.val(&o[2], u32t, &mut None)?;
            // The clamp `c` (often a register nvcc set to a constant): the
            // pre-evaluation checks its form (`shfl_clamp_ok`), and the
            // litmus width is `32 - (c >> 8)`.
            let c = self.val(&o[3], u32t, &mut None)?;
            // Not folded: the pre-evaluation reads `c` back out of it.
            let width = PExpr::Bin(
                BOp::Sub,
                Box::new(PExpr::Int(32)),
                Box::new(PExpr::Bin(BOp::Shr, Box::new(c), Box::new(PExpr::Int(8)))),
            );
            args.push((lane, true));
            args.push((width, true));
        }
        Ok(Op::Bar {
            name: name.into(),
            sel,
            count: None,
            pred: None,
            dst,
            args,
            pdst,
            leader: None,
        })
    }

    /// `elect.sync d|p, membermask` (PTX ISA, sm_90): the litmus
    /// `d = elect.sync membermask`, a warp intrinsic whose result is the
    /// leader's lane id (the lowest non-exited lane of the mask, as an
    /// H200 elects: docs/hardware.md, session 39), and `p = d == lane`.
    /// A sunk `d` (`_`) gets a register of its own.
    fn elect(&mut self, ins: &Instr) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        if o.len() != 2 {
            return Err(err(ins.span, format!("`{}` needs 2 operands", ins.op.name)));
        }
        // PTX ISA: `elect.sync d|p, membermask`, `d` may be the sink `_`,
        // `p` a predicate (ptxas rejects `d` alone, or `p` sunk).
        let (d, p) = match &o[0] {
            Operand::Pair(a, b) if b.name != "_" => (a, b),
            other => {
                return Err(err(
                    other.span(),
                    "`elect.sync` writes `d|p`: a register or `_`, and a predicate",
                ))
            }
        };
        let d = if d.name == "_" {
            self.regs.id(&format!("%elect_leader_{}", ins.span.start))
        } else {
            self.regs.id(&d.name)
        };
        let leader = Some(self.regs.id(&p.name));
        let u32t = ty("u32").expect("a type");
        let sel = Some(self.val(&o[1], u32t, &mut None)?);
        Ok(Op::Bar {
            name: "elect.sync".into(),
            sel,
            count: None,
            pred: None,
            dst: Some(d),
            args: vec![],
            pdst: None,
            leader,
        })
    }

    fn barrier(&mut self, ins: &Instr, parts: &[&str]) -> Result<Op, Diagnostic> {
        let o = &ins.operands;
        let bar = parts[0] == "bar";
        let cta = parts.contains(&"cta");
        let aligned = parts.contains(&"aligned");
        let rest: Vec<&str> = parts[1..]
            .iter()
            .copied()
            .filter(|p| *p != "cta" && *p != "aligned")
            .collect();
        let mut none = None;
        let u32t = ty("u32").expect("a type");
        let mut v = |s: &mut Self, k: usize| -> Result<Option<PExpr>, Diagnostic> {
            o.get(k).map(|x| s.val(x, u32t, &mut none)).transpose()
        };
        match rest.as_slice() {
            // PTX's `bar.sync` and `bar.arrive` are `barrier.sync.aligned`
            // and `barrier.arrive.aligned` (PTX ISA, `bar`): here a thread
            // is a lane, so the `.aligned` warp rule applies (the litmus
            // `bar.sync` leaves it out for threads that stand for warps,
            // docs/semantics.md, "The .aligned forms").
            ["sync"] => {
                let name = if bar || aligned {
                    "barrier.sync.aligned"
                } else if cta {
                    "barrier.cta.sync"
                } else {
                    "barrier.sync"
                };
                let sel = v(self, 0)?;
                let count = v(self, 1)?;
                if sel.is_none() {
                    return Err(err(ins.span, format!("`{}` needs a barrier operand", ins.op.name)));
                }
                Ok(Op::Bar {
                    name: name.into(),
                    sel,
                    count,
                    pred: None,
                    dst: None,
                    args: vec![],
                    pdst: None,
                    leader: None,
                })
            }
            ["arrive"] => {
                let name = if bar || aligned {
                    "barrier.cta.arrive.aligned"
                } else if cta {
                    "barrier.cta.arrive"
                } else {
                    "barrier.arrive"
                };
                let sel = v(self, 0)?;
                let count = v(self, 1)?;
                if sel.is_none() || count.is_none() {
                    return Err(err(
                        ins.span,
                        format!("`{}` needs a barrier and a thread count", ins.op.name),
                    ));
                }
                Ok(Op::Bar {
                    name: name.into(),
                    sel,
                    count,
                    pred: None,
                    dst: None,
                    args: vec![],
                    pdst: None,
                    leader: None,
                })
            }
            ["red", r @ ("popc" | "and" | "or"), _ty] => {
                if o.len() == 4 {
                    return Err(err(
                        ins.span,
                        format!(
                            "`{}` with a thread count is not modelled (only the whole-block form)",
                            ins.op.name
                        ),
                    ));
                }
                if o.len() != 3 {
                    return Err(err(ins.span, format!("`{}` needs 3 operands", ins.op.name)));
                }
                let dst = self.reg(&o[0])?;
                let sel = v(self, 1)?;
                let pred = self.val(&o[2], ty("pred").expect("a type"), &mut None)?;
                // PTX's `bar.red` is the `.aligned` form, as `bar.sync`
                // is (PTX ISA, `barrier{.cta}`; review, session 37: lanes
                // of one warp at two `bar.red` sites were `ok`).
                Ok(Op::Bar {
                    name: format!("barrier.red.{r}.aligned"),
                    sel,
                    count: None,
                    pred: Some(bin(BOp::Ne, pred, PExpr::Int(0))),
                    dst: Some(dst),
                    args: vec![],
                    pdst: None,
                    leader: None,
                })
            }
            ["warp", "sync"] => {
                let sel = v(self, 0)?;
                if sel.is_none() {
                    return Err(err(ins.span, "`bar.warp.sync` needs a member mask"));
                }
                Ok(Op::Bar {
                    name: "__syncwarp".into(),
                    sel,
                    count: None,
                    pred: None,
                    dst: None,
                    args: vec![],
                    pdst: None,
                    leader: None,
                })
            }
            ["cluster", ..] if o.is_empty() => Ok(Op::Bar {
                name: ins.op.name.clone(),
                sel: None,
                count: None,
                pred: None,
                dst: None,
                args: vec![],
                pdst: None,
                leader: None,
            }),
            _ => Err(err(
                ins.op.span,
                format!(
                    "`{}` is not a barrier form this front end supports (docs/ptx.md)",
                    ins.op.name
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The integer semantics, data-driven: each row runs a few
    //! instructions on constants and states a register's final value
    //! (as the explorer would compute it: the front end's expressions
    //! evaluated with the explorer's operators).
    use super::*;
    use std::collections::HashSet;

    /// Runs `body` (one instruction per line, constants only) and returns
    /// every register's value (`None`: unknown).
    fn run(body: &str) -> HashMap<String, Option<i64>> {
        let text = format!(".version 9.5\n.target sm_80\n.visible .entry t()\n{{\n{body}\n}}\n");
        let (m, diags) = crate::parse(&text);
        assert!(diags.is_empty(), "{diags:?}");
        let f = &m.funcs[0];
        let labels = HashSet::new();
        let mut ctx = Ctx {
            regs: Regs::default(),
            block: [1, 1, 1],
            grid: [1, 1, 1],
            cluster: 1,
            explicit_cluster: false,
            symbols: HashMap::new(),
            params: HashMap::new(),
            param_hint: HashMap::new(),
            locals: HashSet::new(),
            plain_regs: HashSet::new(),
            pred_regs: HashSet::new(),
            labels: &labels,
            workspace: None,
        };
        let mut env: HashMap<usize, Option<i64>> = HashMap::new();
        fn eval(e: &PExpr, env: &HashMap<usize, Option<i64>>) -> Option<i64> {
            match e {
                PExpr::Int(v) | PExpr::Ptr(v) => Some(*v),
                PExpr::Reg(r) => env.get(r).copied().flatten(),
                PExpr::Builtin(_) => Some(0),
                PExpr::Unknown => None,
                PExpr::Un(op, x) => Some(apply(*op, 0, eval(x, env)?)),
                PExpr::Bin(op, a, b) => Some(apply(*op, eval(a, env)?, eval(b, env)?)),
            }
        }
        for item in f.body.as_ref().unwrap() {
            let crate::ast::Item::Instr(i) = item else { continue };
            let c = ctx
                .classify(i, None)
                .unwrap_or_else(|d| panic!("{}: {}", i.op.name, d.message));
            match c.op {
                Op::Defs(defs) => {
                    let vals: Vec<_> = defs.iter().map(|(_, e)| eval(e, &env)).collect();
                    for ((r, _), v) in defs.iter().zip(vals) {
                        env.insert(*r, v);
                    }
                }
                Op::Unknown(rs) => {
                    for r in rs {
                        env.insert(r, None);
                    }
                }
                other => panic!("not a register instruction: {other:?}"),
            }
        }
        env.into_iter().map(|(r, v)| (ctx.regs.names[r].clone(), v)).collect()
    }

    #[test]
    fn integer_semantics() {
        let cases: &[(&str, &str, Option<i64>)] = &[
            ("mov.u32 %r1, -1;", "%r1", Some(0xffff_ffff)),
            ("mov.s32 %r1, -1;", "%r1", Some(-1)),
            ("mov.u32 %r1, -1; add.s32 %r2, %r1, 0;", "%r2", Some(-1)),
            (
                "mov.u32 %r1, 0x7fffffff; add.s32 %r2, %r1, 1;",
                "%r2",
                Some(-0x8000_0000),
            ),
            ("mov.u32 %r1, 0xffffffff; add.u32 %r2, %r1, 1;", "%r2", Some(0)),
            (
                "mov.u64 %rd1, 0xffffffff; add.u64 %rd2, %rd1, 1;",
                "%rd2",
                Some(0x1_0000_0000),
            ),
            ("mov.s32 %r1, -8; shr.s32 %r2, %r1, 1;", "%r2", Some(-4)),
            ("mov.s32 %r1, -8; shr.u32 %r2, %r1, 1;", "%r2", Some(0x7fff_fffc)),
            ("mov.s32 %r1, -8; shr.b32 %r2, %r1, 28;", "%r2", Some(15)),
            ("mov.u32 %r1, 1; shl.b32 %r2, %r1, 31;", "%r2", Some(0x8000_0000)),
            ("mov.u32 %r1, 1; shl.b32 %r2, %r1, 32;", "%r2", Some(0)),
            ("mov.u32 %r1, 1; shl.b32 %r2, %r1, 40;", "%r2", Some(0)),
            ("mov.u32 %r1, 0x10000; mul.lo.u32 %r2, %r1, %r1;", "%r2", Some(0)),
            ("mov.u32 %r1, 0x10000; mul.hi.u32 %r2, %r1, %r1;", "%r2", Some(1)),
            (
                "mov.u32 %r1, 0x10000; mul.wide.u32 %rd2, %r1, %r1;",
                "%rd2",
                Some(0x1_0000_0000),
            ),
            ("mov.s32 %r1, -3; mul.wide.s32 %rd2, %r1, 4;", "%rd2", Some(-12)),
            (
                "mov.u32 %r1, -3; mul.wide.u32 %rd2, %r1, 4;",
                "%rd2",
                Some(0xffff_fffd * 4),
            ),
            ("mov.s32 %r1, -7; div.s32 %r2, %r1, 2;", "%r2", Some(-3)),
            ("mov.s32 %r1, -7; rem.s32 %r2, %r1, 2;", "%r2", Some(-1)),
            ("mov.s32 %r1, -7; div.u32 %r2, %r1, 2;", "%r2", Some(0x7fff_fffc)),
            ("mov.s32 %r1, -7; min.s32 %r2, %r1, 3;", "%r2", Some(-7)),
            ("mov.s32 %r1, -7; min.u32 %r2, %r1, 3;", "%r2", Some(3)),
            ("mov.s32 %r1, -7; max.s32 %r2, %r1, 3;", "%r2", Some(3)),
            ("mov.s32 %r1, -7; abs.s32 %r2, %r1;", "%r2", Some(7)),
            ("mov.s32 %r1, 7; neg.s32 %r2, %r1;", "%r2", Some(-7)),
            ("mov.u32 %r1, 5; not.b32 %r2, %r1;", "%r2", Some(0xffff_fffa)),
            ("mov.u32 %r1, 6; and.b32 %r2, %r1, 3;", "%r2", Some(2)),
            ("mov.u32 %r1, 6; xor.b32 %r2, %r1, 3;", "%r2", Some(5)),
            // bfi: the low `len` bits of a into b from bit `pos`.
            (
                "mov.u64 %rd1, 0x12; mov.u64 %rd2, 0xabcd; bfi.b64 %rd3, %rd1, %rd2, 32, 32;",
                "%rd3",
                Some(0x12_0000_abcd),
            ),
            (
                "mov.u32 %r1, 0xff; mov.u32 %r2, 0; bfi.b32 %r3, %r1, %r2, 4, 4;",
                "%r3",
                Some(0xf0),
            ),
            (
                "mov.u32 %r1, 0; mov.u32 %r2, -1; bfi.b32 %r3, %r1, %r2, 28, 4;",
                "%r3",
                Some(0x0fff_ffff),
            ),
            // A position from a register: unknown.
            (
                "mov.u32 %r1, 1; mov.u32 %r2, 0; bfi.b32 %r3, %r1, %r2, %r1, 4;",
                "%r3",
                None,
            ),
            ("mov.u32 %r1, 2; mad.lo.s32 %r2, %r1, 3, 4;", "%r2", Some(10)),
            (
                "mov.u32 %r1, 0x10000; mad.wide.u32 %rd2, %r1, %r1, 1;",
                "%rd2",
                Some(0x1_0000_0001),
            ),
            ("mov.s32 %r1, -1; cvt.s64.s32 %rd2, %r1;", "%rd2", Some(-1)),
            ("mov.s32 %r1, -1; cvt.u64.u32 %rd2, %r1;", "%rd2", Some(0xffff_ffff)),
            (
                "mov.u64 %rd1, 0x1ffffffff; cvt.u32.u64 %r2, %rd1;",
                "%r2",
                Some(0xffff_ffff),
            ),
            ("mov.u32 %r1, 200; cvt.s8.s32 %rs2, %r1;", "%rs2", Some(-56)),
            ("mov.s32 %r1, -1; setp.lt.s32 %p1, %r1, 0;", "%p1", Some(1)),
            ("mov.s32 %r1, -1; setp.lt.u32 %p1, %r1, 0;", "%p1", Some(0)),
            ("mov.s32 %r1, -1; setp.hi.s32 %p1, %r1, 0;", "%p1", Some(1)),
            ("mov.u32 %r1, 3; setp.eq.u32 %p1|%p2, %r1, 3;", "%p2", Some(0)),
            (
                "mov.u32 %r1, 3; setp.eq.u32 %p1, %r1, 3; setp.ne.and.u32 %p2, %r1, 0, %p1;",
                "%p2",
                Some(1),
            ),
            (
                "mov.u32 %r1, 3; setp.eq.u32 %p1, %r1, 4; selp.b32 %r2, 10, 20, %p1;",
                "%r2",
                Some(20),
            ),
            (
                "mov.u32 %r1, 3; setp.eq.u32 %p1, %r1, 4; not.pred %p2, %p1;",
                "%p2",
                Some(1),
            ),
            ("mov.u32 %r1, 1; add.f32 %f1, %f2, %f3;", "%f1", None),
            ("mov.u32 %r1, 1; popc.b32 %r2, %r1;", "%r2", None),
            ("mov.u32 %r1, %warpid;", "%r1", None),
            ("mov.u64 %rd1, 1; mul.hi.u64 %rd2, %rd1, %rd1;", "%rd2", None),
            ("mov.u32 %r1, 1; add.sat.s32 %r2, %r1, %r1;", "%r2", None),
        ];
        for (body, reg, want) in cases {
            let got = run(body).get(*reg).copied().flatten();
            assert_eq!(got, *want, "{body} -> {reg}");
        }
    }
}
