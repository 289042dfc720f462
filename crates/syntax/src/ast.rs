//! The syntax tree of one litmus file. Every node keeps its byte span; names
//! are plain strings here (the graph crate resolves them to ids).

pub use crate::lexer::Op;
use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Litmus {
    pub name: Option<Ident>,
    pub model: Option<Ident>,
    pub about: Option<String>,
    pub barriers: Vec<BarrierDecl>,
    pub vars: Vec<VarDecl>,
    pub threads: Vec<ThreadDecl>,
    pub progress: Option<Ident>,
    pub expect: Option<Expect>,
    pub asserts: Vec<Assert>,
}

/// `key=value` or a bare `key` flag on a declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    pub key: Ident,
    pub value: Option<(i64, Span)>,
    /// A name value such as `scope=cluster`.
    pub name_value: Option<Ident>,
}

#[derive(Clone, Debug)]
pub struct BarrierDecl {
    pub name: Ident,
    /// `barrier full[4]`: an array of that many barriers.
    pub len: Option<(i64, Span)>,
    pub count: Option<(i64, Span)>,
    pub attrs: Vec<Attr>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct VarDecl {
    pub name: Ident,
    pub init: i64,
    pub attrs: Vec<Attr>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadForm {
    /// `thread NAME attrs { }`
    Thread,
    /// `kernel [NAME] attrs { }`
    Kernel,
    /// `host NAME { }`
    Host,
}

#[derive(Clone, Debug)]
pub struct ThreadDecl {
    pub form: ThreadForm,
    pub name: Option<Ident>,
    pub attrs: Vec<Attr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub labels: Vec<Ident>,
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `[dest =] name arg, arg` - every barrier, memory and host instruction.
    Instr {
        dest: Option<Ident>,
        name: Ident,
        args: Vec<Arg>,
    },
    /// `r = expr`
    Assign {
        dest: Ident,
        expr: Expr,
    },
    /// `await cond`
    Await(Expr),
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    Repeat {
        count: Expr,
        body: Vec<Stmt>,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
    },
    Goto(Ident),
    Exit,
    /// A label standing alone (e.g. `END:` on the last line).
    Nop,
}

#[derive(Clone, Debug)]
pub enum Arg {
    Expr(Expr),
    /// `stream=0`
    Key(Ident, Expr),
    /// `[a, b, c]`: a list of locations, the operand of a copy that
    /// reads or writes several (`cp.async [d0, d1], [s0, s1]`); possibly
    /// empty (`[]`). The span covers the brackets.
    List(Vec<Expr>, Span),
}

impl Arg {
    pub fn span(&self) -> Span {
        match self {
            Arg::Expr(e) => e.span,
            Arg::Key(k, e) => k.span.to(e.span),
            Arg::List(_, span) => *span,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    /// A register, builtin, location or barrier name.
    Name(String),
    /// `full[s]`: an element of a barrier array.
    Index(Ident, Box<Expr>),
    /// `T0:r` in assertions.
    Qualified(Ident, Ident),
    Unary(Op, Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug)]
pub struct Expect {
    pub kinds: Vec<Ident>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    Always,
    Sometimes,
    Never,
}

#[derive(Clone, Debug)]
pub struct Assert {
    pub quantifier: Quantifier,
    pub cond: Expr,
    pub span: Span,
}
