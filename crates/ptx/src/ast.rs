//! The syntax tree of a PTX module: what the lowering reads, every node
//! with its byte span. Directives that cannot change a kernel's
//! synchronization (`.version`, `.pragma`, debug sections) are skipped by
//! the parser; `.loc` and `.file` are kept to name CUDA source lines.

use bc_syntax::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Module {
    /// `.target sm_80` (the first target name).
    pub target: Option<Ident>,
    /// Module-scope variables (`.global`, `.shared`, `.const`).
    pub vars: Vec<VarDecl>,
    pub funcs: Vec<Func>,
    /// `.file N "path"`: file number and path.
    pub files: Vec<(u32, String)>,
}

/// A state space of a variable or an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Const,
    Local,
    Param,
}

#[derive(Clone, Debug)]
pub struct VarDecl {
    pub space: Space,
    pub name: Ident,
    /// Bytes of one element (`.b8` 1, `.u32` 4, ...).
    pub elem_bytes: u32,
    /// `[N]`: `Some(Some(N))`; `[]`: `Some(None)`; a scalar: `None`.
    pub len: Option<Option<u64>>,
    pub is_extern: bool,
    /// `= v` or `= {v, ...}`: the integer elements (`Some(Some(..))`), or
    /// an initializer of another kind (`Some(None)`: floats, addresses).
    /// Without one, a `.global` variable starts at zero (PTX ISA,
    /// "Initializers").
    pub init: Option<Option<Vec<i64>>>,
    /// `.align N`, where written (PTX ISA, "Variables": without it a
    /// variable is aligned to its element type's size).
    pub align: Option<u64>,
    pub span: Span,
}

impl VarDecl {
    /// The variable's size in bytes, when known (`[]` is not).
    pub fn bytes(&self) -> Option<u64> {
        match self.len {
            None => Some(self.elem_bytes as u64),
            Some(Some(n)) => Some(n * self.elem_bytes as u64),
            Some(None) => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    /// The type suffix written (`u64`, `b32`, `b8`, ...).
    pub ty: String,
    /// `[N]` for an array (byte-array struct parameters).
    pub len: Option<u64>,
    /// Declared `.reg` (a `.func`'s register formal, passed by value),
    /// else `.param`.
    pub reg: bool,
}

#[derive(Clone, Debug)]
pub struct Func {
    /// `.entry` (a kernel) or `.func`.
    pub entry: bool,
    pub name: Ident,
    pub params: Vec<Param>,
    /// A `.func`'s return parameters.
    pub rets: Vec<Param>,
    pub maxntid: Option<([u64; 3], Span)>,
    pub reqntid: Option<([u64; 3], Span)>,
    /// `.reqnctapercluster X, Y, Z` (`__cluster_dims__`).
    pub reqnctapercluster: Option<([u64; 3], Span)>,
    /// `None` for a declaration without a body.
    pub body: Option<Vec<Item>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Item {
    Label(Ident),
    Instr(Instr),
    /// A variable declared in a body (`.shared`, `.local`, `.param`).
    Var(VarDecl),
    /// `.reg .TYPE a, b;`: registers named without `%` (inline assembly's
    /// `.reg .pred p;`); `%` names are registers anyway.
    Regs(Vec<Ident>),
    /// The predicate registers a `.reg .pred` declares (`%p<3>` as `%p0`,
    /// `%p1`, `%p2`): what tells `cp.async`'s `ignore-src` predicate from
    /// its `src-size` integer.
    Preds(Vec<Ident>),
    /// `.loc FILE LINE COL`: the CUDA line of the instructions that follow.
    Loc {
        file: u32,
        line: u32,
    },
}

#[derive(Clone, Debug)]
pub struct Instr {
    /// `@%p` (false) or `@!%p` (true).
    pub guard: Option<(bool, Ident)>,
    /// The whole dotted opcode (`ld.global.f32`).
    pub op: Ident,
    pub operands: Vec<Operand>,
    pub span: Span,
}

impl Instr {
    /// The opcode's dot-separated parts (`["ld", "global", "f32"]`).
    pub fn parts(&self) -> Vec<&str> {
        self.op.name.split('.').collect()
    }
}

#[derive(Clone, Debug)]
pub enum Operand {
    /// A register, special register, symbol or label.
    Name(Ident),
    /// `!%p`.
    Not(Ident),
    Int(i64, Span),
    Float(Span),
    /// `[base+offset]`, `[base]`, `[offset]`.
    Addr {
        base: Option<Ident>,
        offset: i64,
        span: Span,
    },
    /// `{a, b, ...}`.
    Vector(Vec<Operand>, Span),
    /// `(a, b)` of a call.
    List(Vec<Operand>, Span),
    /// `%p|%q`: the two results of `setp`.
    Pair(Ident, Ident),
    /// `sym+4`.
    SymOffset(Ident, i64),
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Name(n) | Operand::Not(n) => n.span,
            Operand::Int(_, s) | Operand::Float(s) => *s,
            Operand::Addr { span, .. } | Operand::Vector(_, span) | Operand::List(_, span) => *span,
            Operand::Pair(a, b) => a.span.to(b.span),
            Operand::SymOffset(n, _) => n.span,
        }
    }
}
