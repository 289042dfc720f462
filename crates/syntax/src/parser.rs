//! Recursive-descent parser over the token stream. Each error is recorded
//! and the parser skips to the end of the statement, so one pass reports every
//! error of a file.

use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::kinds::{is_instruction, FindingKind};
use crate::lexer::{lex, Tok, Token};
use crate::source::Span;

/// The deepest nesting the parser accepts, for blocks (`if`, `else if`,
/// `repeat`, `while` bodies) and, separately, for expressions (operators,
/// unary chains and parentheses: the depth of the tree they build).
/// Parsing, lowering and evaluation walk these trees recursively, so an
/// unbounded nesting would overflow a thread's stack and abort the
/// process; with this bound every walk fits easily in the smallest stack a
/// checking thread gets (2 MiB), so the answer never depends on `--jobs`.
/// Deeper input is reported as an error at the first place that passes it.
pub const MAX_NESTING: usize = 256;

/// Parses a whole litmus file. The tree is usable only when no diagnostic is
/// an error.
pub fn parse(text: &str) -> (Litmus, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let toks = lex(text, &mut diags);
    let mut p = Parser {
        toks,
        pos: 0,
        diags,
        blocks: 0,
        nest: 0,
    };
    let lit = p.file();
    let mut diags = p.diags;
    diags.sort_by_key(|d| d.span.map(|s| (s.start, s.end)));
    diags.dedup();
    (lit, diags)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Blocks (and `else if` links) open around the current position.
    blocks: usize,
    /// Parentheses and unary operators open in the current expression.
    nest: usize,
}

/// Marker: an error was recorded; the caller recovers.
struct Fail;
type R<T> = Result<T, Fail>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn at(&self, t: &Tok) -> bool {
        self.peek() == t
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.at(t) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn at_ident(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == kw)
    }
    fn error<T>(&mut self, span: Span, msg: impl Into<String>) -> R<T> {
        self.diags.push(Diagnostic::error(span, msg));
        Err(Fail)
    }
    fn unexpected<T>(&mut self, what: &str) -> R<T> {
        let found = self.peek().describe();
        let span = self.span();
        self.error(span, format!("expected {what}, found {found}"))
    }
    fn expect(&mut self, t: Tok, what: &str) -> R<Span> {
        if self.at(&t) {
            Ok(self.bump().span)
        } else {
            self.unexpected(what)
        }
    }
    fn ident(&mut self, what: &str) -> R<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => self.unexpected(what),
        }
    }
    /// A name that may contain dashes written without spaces: `cuda-sm90`,
    /// `obe-strong`, `wait-without-join`.
    fn dashed_name(&mut self, what: &str) -> R<Ident> {
        let mut id = self.ident(what)?;
        while self.at(&Tok::Op(Op::Sub)) && self.span().start == id.span.end {
            let next = &self.toks[(self.pos + 1).min(self.toks.len() - 1)];
            if next.span.start != self.span().end {
                break;
            }
            let part = match &next.tok {
                Tok::Ident(s) => s.clone(),
                Tok::Int(i) => i.to_string(),
                _ => break,
            };
            self.bump();
            let end = self.bump().span.end;
            id.name.push('-');
            id.name.push_str(&part);
            id.span.end = end;
        }
        Ok(id)
    }
    fn string(&mut self, what: &str) -> R<(String, Span)> {
        match self.peek().clone() {
            Tok::Str(s) => Ok((s, self.bump().span)),
            _ => self.unexpected(what),
        }
    }
    fn signed_int(&mut self, what: &str) -> R<(i64, Span)> {
        let start = self.span();
        let neg = self.eat(&Tok::Op(Op::Sub));
        match *self.peek() {
            Tok::Int(v) => {
                let end = self.bump().span;
                Ok((if neg { v.wrapping_neg() } else { v }, start.to(end)))
            }
            _ => self.unexpected(what),
        }
    }
    /// End of a statement: a newline, `;`, or (without consuming) `}` / EOF.
    fn end_of_stmt(&mut self) -> R<()> {
        match self.peek() {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::RBrace | Tok::Eof => Ok(()),
            _ => self.unexpected("end of statement"),
        }
    }
    /// Skips to the end of the current statement (not past a `}` of an
    /// enclosing block).
    fn recover(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Newline if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }
    fn skip_newlines(&mut self) {
        while self.eat(&Tok::Newline) {}
    }

    fn file(&mut self) -> Litmus {
        let mut lit = Litmus::default();
        self.skip_newlines();
        let mut first = true;
        while !self.at(&Tok::Eof) {
            if self.at(&Tok::RBrace) {
                let s = self.span();
                let _: R<()> = self.error(s, "unmatched `}`");
                self.bump();
                continue;
            }
            let is_litmus = self.at_ident("litmus");
            if first && !is_litmus {
                let s = self.span();
                self.diags
                    .push(Diagnostic::error(s, "a litmus file must start with `litmus \"NAME\"`"));
            }
            first = false;
            if self.top_item(&mut lit).is_err() {
                self.recover();
            }
            self.skip_newlines();
        }
        if first {
            let s = self.span();
            self.diags.push(Diagnostic::error(
                s,
                "empty file: a litmus file must start with `litmus \"NAME\"`",
            ));
        }
        lit
    }

    fn top_item(&mut self, lit: &mut Litmus) -> R<()> {
        let kw = self.ident("a declaration (`litmus`, `model`, `barrier`, `var`, `thread`, `kernel`, `host`, `progress`, `expect`, `assert`)")?;
        match kw.name.as_str() {
            "litmus" => {
                let (name, span) = self.string("the test name as a string")?;
                if lit.name.is_some() {
                    return self.error(kw.span, "duplicate `litmus` line");
                }
                lit.name = Some(Ident { name, span });
                self.end_of_stmt()
            }
            "model" => {
                let m = self.dashed_name("a model name")?;
                if lit.model.is_some() {
                    return self.error(kw.span, "duplicate `model` line");
                }
                lit.model = Some(m);
                self.end_of_stmt()
            }
            "about" => {
                let (text, _) = self.string("a string")?;
                lit.about = Some(text);
                self.end_of_stmt()
            }
            "progress" => {
                let m = self.dashed_name("a progress model name")?;
                if lit.progress.is_some() {
                    return self.error(kw.span, "duplicate `progress` line");
                }
                lit.progress = Some(m);
                self.end_of_stmt()
            }
            "barrier" => {
                let name = self.ident("a barrier name")?;
                let len = if self.eat(&Tok::LBracket) {
                    let n = self.signed_int("the array length (an integer)")?;
                    self.expect(Tok::RBracket, "`]`")?;
                    Some(n)
                } else {
                    None
                };
                let count = if self.eat(&Tok::Assign) {
                    Some(self.signed_int("the expected count (an integer)")?)
                } else {
                    None
                };
                let attrs = self.attrs()?;
                let span = kw.span.to(self.prev_span());
                lit.barriers.push(BarrierDecl {
                    name,
                    len,
                    count,
                    attrs,
                    span,
                });
                self.end_of_stmt()
            }
            "var" => {
                let name = self.ident("a location name")?;
                let init = if self.eat(&Tok::Assign) {
                    self.signed_int("an initial value")?.0
                } else {
                    0
                };
                let attrs = self.attrs()?;
                let span = kw.span.to(self.prev_span());
                lit.vars.push(VarDecl {
                    name,
                    init,
                    attrs,
                    span,
                });
                self.end_of_stmt()
            }
            "thread" | "host" => {
                let form = if kw.name == "thread" {
                    ThreadForm::Thread
                } else {
                    ThreadForm::Host
                };
                let name = self.ident("a thread name")?;
                let attrs = self.attrs()?;
                let body = self.block()?;
                let span = kw.span.to(self.prev_span());
                lit.threads.push(ThreadDecl {
                    form,
                    name: Some(name),
                    attrs,
                    body,
                    span,
                });
                self.end_of_stmt()
            }
            "kernel" => {
                // `kernel K1 blocks=1 ...`: a name is an identifier not followed by `=`.
                let name = match (self.peek(), self.peek_at(1)) {
                    (Tok::Ident(_), t) if *t != Tok::Assign => Some(self.ident("a kernel name")?),
                    _ => None,
                };
                let attrs = self.attrs()?;
                let body = self.block()?;
                let span = kw.span.to(self.prev_span());
                lit.threads.push(ThreadDecl {
                    form: ThreadForm::Kernel,
                    name,
                    attrs,
                    body,
                    span,
                });
                self.end_of_stmt()
            }
            "expect" => {
                let mut kinds = Vec::new();
                loop {
                    let k = self.finding_kind()?;
                    kinds.push(k);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let span = kw.span.to(self.prev_span());
                if lit.expect.is_some() {
                    return self.error(kw.span, "duplicate `expect` line");
                }
                lit.expect = Some(Expect { kinds, span });
                self.end_of_stmt()
            }
            "assert" => {
                let q = self.ident("`always`, `sometimes` or `never`")?;
                let quantifier = match q.name.as_str() {
                    "always" => Quantifier::Always,
                    "sometimes" => Quantifier::Sometimes,
                    "never" => Quantifier::Never,
                    _ => {
                        return self.error(
                            q.span,
                            format!("expected `always`, `sometimes` or `never`, found `{}`", q.name),
                        )
                    }
                };
                let cond = self.expr()?;
                let span = kw.span.to(cond.span);
                lit.asserts.push(Assert { quantifier, cond, span });
                self.end_of_stmt()
            }
            other => self.error(kw.span, format!("unknown declaration `{other}`")),
        }
    }

    fn finding_kind(&mut self) -> R<Ident> {
        let id = self.dashed_name("a finding kind (`ok`, `deadlock`, `ub(KIND)`, ...)")?;
        let mut name = id.name;
        let mut span = id.span;
        if name == "ub" && self.at(&Tok::LParen) {
            self.bump();
            let inner = self.dashed_name("an undefined-behaviour kind")?;
            let close = self.expect(Tok::RParen, "`)`")?;
            name = format!("ub({})", inner.name);
            span = span.to(close);
        }
        if name != "ok" && FindingKind::parse(&name).is_none() {
            let kinds = crate::kinds::finding_kind_names();
            let hint = crate::kinds::closest(&name, kinds.iter().map(String::as_str).chain(["ok"]))
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return self.error(span, format!("unknown finding kind `{name}`{hint}"));
        }
        Ok(Ident { name, span })
    }

    fn attrs(&mut self) -> R<Vec<Attr>> {
        let mut out = Vec::new();
        while let Tok::Ident(_) = self.peek() {
            let key = self.ident("an attribute")?;
            let (mut value, mut name_value) = (None, None);
            if self.eat(&Tok::Assign) {
                if let Tok::Ident(_) = self.peek() {
                    name_value = Some(self.dashed_name("a value")?);
                } else {
                    value = Some(self.signed_int("an integer value")?);
                }
            }
            // A repeated attribute is an error, and only the first one is
            // kept, so lowering never sees two values for one key.
            if out.iter().any(|a: &Attr| a.key.name == key.name) {
                self.diags.push(Diagnostic::error(
                    key.span,
                    format!("duplicate attribute `{}` (each attribute may be given once)", key.name),
                ));
                continue;
            }
            out.push(Attr { key, value, name_value });
        }
        Ok(out)
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        if self.blocks > MAX_NESTING {
            return self.too_deep_blocks();
        }
        self.blocks += 1;
        let body = self.block_inner();
        self.blocks -= 1;
        body
    }

    fn too_deep_blocks<T>(&mut self) -> R<T> {
        let s = self.span();
        self.error(
            s,
            format!("blocks nested too deeply: at most {MAX_NESTING} levels of `if`, `else if`, `repeat` and `while` are supported"),
        )
    }

    fn block_inner(&mut self) -> R<Vec<Stmt>> {
        let open = self.expect(Tok::LBrace, "`{`")?;
        let mut body = Vec::new();
        self.skip_newlines();
        loop {
            match self.peek() {
                Tok::RBrace => {
                    self.bump();
                    return Ok(body);
                }
                Tok::Eof => {
                    self.diags.push(Diagnostic::error(open, "this `{` is never closed"));
                    return Err(Fail);
                }
                _ => {
                    match self.stmt() {
                        Ok(s) => body.push(s),
                        Err(Fail) => self.recover(),
                    }
                    self.skip_newlines();
                }
            }
        }
    }

    fn stmt(&mut self) -> R<Stmt> {
        let start = self.span();
        let mut labels = Vec::new();
        while matches!(self.peek(), Tok::Ident(_)) && *self.peek_at(1) == Tok::Colon {
            labels.push(self.ident("a label")?);
            self.bump();
            if matches!(self.peek(), Tok::Newline | Tok::RBrace | Tok::Eof) {
                self.end_of_stmt()?;
                return Ok(Stmt {
                    labels,
                    kind: StmtKind::Nop,
                    span: start.to(self.prev_span()),
                });
            }
        }
        let kind = self.stmt_kind()?;
        let span = start.to(self.prev_span());
        self.end_of_stmt()?;
        Ok(Stmt { labels, kind, span })
    }

    fn stmt_kind(&mut self) -> R<StmtKind> {
        let head = self.ident("a statement")?;
        match head.name.as_str() {
            "if" => self.if_rest(),
            "repeat" => {
                let count = self.expr()?;
                let body = self.block()?;
                Ok(StmtKind::Repeat { count, body })
            }
            "while" => {
                let cond = self.expr()?;
                let body = self.block()?;
                Ok(StmtKind::While { cond, body })
            }
            "goto" => Ok(StmtKind::Goto(self.ident("a label")?)),
            "exit" => Ok(StmtKind::Exit),
            "await" => Ok(StmtKind::Await(self.expr()?)),
            "else" => self.error(head.span, "`else` without `if`"),
            _ if self.at(&Tok::Assign) => {
                self.bump();
                match self.peek().clone() {
                    // A dotted name is never a register or a value, so after
                    // `=` it is an instruction (lowering reports an unknown one).
                    Tok::Ident(n) if is_instruction(n.as_str()) || n.contains('.') => {
                        let name = self.ident("an instruction")?;
                        let args = self.args()?;
                        Ok(StmtKind::Instr {
                            dest: Some(head),
                            name,
                            args,
                        })
                    }
                    _ => {
                        let expr = self.expr()?;
                        Ok(StmtKind::Assign { dest: head, expr })
                    }
                }
            }
            _ => {
                let args = self.args()?;
                Ok(StmtKind::Instr {
                    dest: None,
                    name: head,
                    args,
                })
            }
        }
    }

    fn if_rest(&mut self) -> R<StmtKind> {
        let cond = self.expr()?;
        let then = self.block()?;
        // `else` may follow on the same line or after newlines.
        let save = self.pos;
        self.skip_newlines();
        let els = if self.at_ident("else") {
            self.bump();
            if self.at_ident("if") {
                // An `else if` nests one more `if` in the tree.
                if self.blocks > MAX_NESTING {
                    return self.too_deep_blocks();
                }
                let start = self.bump().span;
                self.blocks += 1;
                let kind = self.if_rest();
                self.blocks -= 1;
                let kind = kind?;
                vec![Stmt {
                    labels: vec![],
                    kind,
                    span: start.to(self.prev_span()),
                }]
            } else {
                self.block()?
            }
        } else {
            self.pos = save;
            vec![]
        };
        Ok(StmtKind::If { cond, then, els })
    }

    fn args(&mut self) -> R<Vec<Arg>> {
        let mut args = Vec::new();
        if matches!(self.peek(), Tok::Newline | Tok::RBrace | Tok::Eof) {
            return Ok(args);
        }
        loop {
            if matches!(self.peek(), Tok::Ident(_)) && *self.peek_at(1) == Tok::Assign {
                let key = self.ident("a key")?;
                self.bump();
                let e = self.expr()?;
                args.push(Arg::Key(key, e));
            } else if self.at(&Tok::LBracket) {
                let open = self.span();
                self.bump();
                let mut items = Vec::new();
                if !self.at(&Tok::RBracket) {
                    loop {
                        items.push(self.expr()?);
                        if !self.eat(&Tok::Comma) {
                            break;
                        }
                    }
                }
                let close = self.expect(Tok::RBracket, "`]`")?;
                args.push(Arg::List(items, open.to(close)));
            } else {
                args.push(Arg::Expr(self.expr()?));
            }
            if !self.eat(&Tok::Comma) {
                return Ok(args);
            }
        }
    }

    /// A whole expression (of a statement, an argument or an assertion).
    fn expr(&mut self) -> R<Expr> {
        self.nest = 0;
        Ok(self.binary(0)?.0)
    }

    fn too_deep_expr<T>(&mut self, at: Span) -> R<T> {
        self.error(
            at,
            format!(
                "expression nested too deeply: at most {MAX_NESTING} levels of operators and parentheses are supported"
            ),
        )
    }

    /// Enters a parenthesis or a unary operator at `at`.
    fn enter(&mut self, at: Span) -> R<()> {
        if self.nest >= MAX_NESTING {
            return self.too_deep_expr(at);
        }
        self.nest += 1;
        Ok(())
    }

    /// An expression and the depth of its tree, parentheses counted.
    fn binary(&mut self, level: usize) -> R<(Expr, usize)> {
        // C's precedence, loosest first.
        const LEVELS: &[&[Op]] = &[
            &[Op::Or],
            &[Op::And],
            &[Op::BitOr],
            &[Op::Xor],
            &[Op::BitAnd],
            &[Op::Eq, Op::Ne],
            &[Op::Lt, Op::Le, Op::Gt, Op::Ge],
            &[Op::Shl, Op::Shr],
            &[Op::Add, Op::Sub],
            &[Op::Mul, Op::Div, Op::Rem],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let (mut lhs, mut depth) = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Op(op) if LEVELS[level].contains(op) => *op,
                _ => return Ok((lhs, depth)),
            };
            let at = self.bump().span;
            let (rhs, rd) = self.binary(level + 1)?;
            // A long chain such as a sum of many terms builds a deep tree
            // (operators associate to the left).
            depth = depth.max(rd) + 1;
            if depth > MAX_NESTING {
                return self.too_deep_expr(at);
            }
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
    }

    fn unary(&mut self) -> R<(Expr, usize)> {
        let start = self.span();
        match self.peek() {
            Tok::Op(op @ (Op::Not | Op::Sub)) => {
                let op = *op;
                self.enter(start)?;
                self.bump();
                let (e, depth) = self.unary()?;
                self.nest -= 1;
                if depth + 1 > MAX_NESTING {
                    return self.too_deep_expr(start);
                }
                let span = start.to(e.span);
                if let (Op::Sub, ExprKind::Int(v)) = (op, &e.kind) {
                    return Ok((
                        Expr {
                            kind: ExprKind::Int(v.wrapping_neg()),
                            span,
                        },
                        depth + 1,
                    ));
                }
                Ok((
                    Expr {
                        kind: ExprKind::Unary(op, Box::new(e)),
                        span,
                    },
                    depth + 1,
                ))
            }
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> R<(Expr, usize)> {
        match self.peek().clone() {
            Tok::Int(v) => {
                let span = self.bump().span;
                Ok((
                    Expr {
                        kind: ExprKind::Int(v),
                        span,
                    },
                    1,
                ))
            }
            Tok::Ident(_) => {
                let id = self.ident("a name")?;
                if self.at(&Tok::Colon) && matches!(self.peek_at(1), Tok::Ident(_)) {
                    self.bump();
                    let reg = self.ident("a register")?;
                    let span = id.span.to(reg.span);
                    return Ok((
                        Expr {
                            kind: ExprKind::Qualified(id, reg),
                            span,
                        },
                        1,
                    ));
                }
                if self.at(&Tok::LBracket) {
                    let open = self.span();
                    self.enter(open)?;
                    self.bump();
                    let (index, depth) = self.binary(0)?;
                    self.nest -= 1;
                    if depth + 1 > MAX_NESTING {
                        return self.too_deep_expr(open);
                    }
                    let close = self.expect(Tok::RBracket, "`]`")?;
                    let span = id.span.to(close);
                    return Ok((
                        Expr {
                            kind: ExprKind::Index(id, Box::new(index)),
                            span,
                        },
                        depth + 1,
                    ));
                }
                Ok((
                    Expr {
                        kind: ExprKind::Name(id.name),
                        span: id.span,
                    },
                    1,
                ))
            }
            Tok::LParen => {
                let open = self.span();
                self.enter(open)?;
                self.bump();
                let (mut e, depth) = self.binary(0)?;
                self.nest -= 1;
                if depth + 1 > MAX_NESTING {
                    return self.too_deep_expr(open);
                }
                let close = self.expect(Tok::RParen, "`)`")?;
                e.span = open.to(close);
                Ok((e, depth + 1))
            }
            _ => self.unexpected("an expression"),
        }
    }
}
