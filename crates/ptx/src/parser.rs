//! A recursive-descent parser of PTX modules. It never panics and never
//! stops at the first error: a statement it cannot read is reported with
//! its position and skipped to the next `;` (or the end of its block), so
//! one run reports every error of a module.

use crate::ast::*;
use crate::lexer::{lex, Tok, Token};
use bc_syntax::{Diagnostic, Span};
use std::collections::{HashMap, HashSet};

/// Parses a PTX module: the tree it could build and every error.
pub fn parse(text: &str) -> (Module, Vec<Diagnostic>) {
    let toks = lex(text);
    let mut p = Parser {
        toks,
        at: 0,
        diags: Vec::new(),
        end: text.len(),
    };
    let m = p.module();
    (m, p.diags)
}

struct Parser {
    toks: Vec<Token>,
    at: usize,
    diags: Vec<Diagnostic>,
    end: usize,
}

/// Directives that end at the end of their line, with nothing the
/// lowering needs.
const LINE_DIRECTIVES: &[&str] = &[
    ".version",
    ".address_size",
    ".minnctapersm",
    ".maxnreg",
    ".maxnctapersm",
];

/// Type suffixes and their sizes in bytes.
pub fn type_bytes(t: &str) -> Option<u32> {
    Some(match t {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => return None,
    })
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.at + k).map(|t| &t.tok)
    }
    fn span(&self) -> Span {
        self.toks
            .get(self.at)
            .map(|t| t.span)
            .unwrap_or(Span::new(self.end, self.end))
    }
    fn prev_end(&self) -> u32 {
        self.at
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.span.end)
    }
    fn bump(&mut self) -> Option<Token> {
        let t = self.toks.get(self.at).cloned();
        if t.is_some() {
            self.at += 1;
        }
        t
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }
    fn expected(&mut self, what: &str) {
        let span = self.span();
        let found = match self.toks.get(self.at) {
            None => "the end of the file".to_string(),
            Some(t) => match &t.tok {
                Tok::Bad(why) => why.clone(),
                Tok::Name(n) => format!("`{n}`"),
                Tok::Int(v) => format!("`{v}`"),
                Tok::Float => "a floating-point number".into(),
                Tok::Str(_) => "a string".into(),
                Tok::Punct(c) => format!("`{c}`"),
            },
        };
        self.err(span, format!("expected {what}, found {found}"));
    }
    /// Skips to just after the next `;` at this nesting depth, or to a `}`
    /// that closes the current block (left in place).
    fn recover(&mut self) {
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            match t {
                Tok::Punct(';') if depth == 0 => {
                    self.at += 1;
                    return;
                }
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.at += 1;
        }
    }
    /// Skips the rest of the current line.
    fn skip_line(&mut self) {
        while let Some(t) = self.toks.get(self.at) {
            if t.line_start {
                return;
            }
            self.at += 1;
        }
    }
    fn name(&mut self, what: &str) -> Option<Ident> {
        match self.toks.get(self.at) {
            Some(Token {
                tok: Tok::Name(n),
                span,
                ..
            }) => {
                let id = Ident {
                    name: n.clone(),
                    span: *span,
                };
                self.at += 1;
                Some(id)
            }
            _ => {
                self.expected(what);
                None
            }
        }
    }
    fn int(&mut self, what: &str) -> Option<i64> {
        let neg = self.eat_punct('-');
        match self.peek() {
            Some(Tok::Int(v)) => {
                let v = *v;
                self.at += 1;
                Some(if neg { v.wrapping_neg() } else { v })
            }
            _ => {
                self.expected(what);
                None
            }
        }
    }

    fn module(&mut self) -> Module {
        let mut m = Module::default();
        while let Some(tok) = self.peek().cloned() {
            let start = self.span();
            match tok {
                Tok::Name(n) if LINE_DIRECTIVES.contains(&n.as_str()) => {
                    self.at += 1;
                    self.skip_line();
                }
                Tok::Name(n) if n == ".target" => {
                    self.at += 1;
                    if let Some(t) = self.name("a target such as `sm_80`") {
                        m.target.get_or_insert(t);
                    }
                    self.skip_line();
                }
                Tok::Name(n) if n == ".file" => {
                    self.at += 1;
                    let num = self.int("a file number");
                    let path = match self.peek() {
                        Some(Tok::Str(s)) => {
                            let s = s.clone();
                            self.at += 1;
                            Some(s)
                        }
                        _ => None,
                    };
                    if let (Some(n), Some(p)) = (num, path) {
                        m.files.push((n as u32, p));
                    }
                    self.skip_line();
                }
                Tok::Name(n) if n == ".section" => {
                    self.at += 1;
                    self.skip_section();
                }
                Tok::Name(n) if n == ".pragma" => {
                    self.at += 1;
                    self.recover();
                }
                Tok::Name(n) if matches!(n.as_str(), ".visible" | ".weak" | ".extern" | ".common") => {
                    // Linkage: what follows decides.
                    if self.peek_at(1) == Some(&Tok::Name(".entry".into()))
                        || self.peek_at(1) == Some(&Tok::Name(".func".into()))
                    {
                        self.at += 1;
                    } else {
                        self.var_statement(&mut m.vars);
                    }
                }
                Tok::Name(n) if n == ".entry" || n == ".func" => {
                    self.at += 1;
                    if let Some(f) = self.func(n == ".entry", start) {
                        m.funcs.push(f);
                    }
                }
                Tok::Name(n) if matches!(n.as_str(), ".global" | ".shared" | ".const") => {
                    self.var_statement(&mut m.vars);
                }
                _ => {
                    self.expected("a PTX directive (`.entry`, `.func`, `.global`, ...)");
                    self.at += 1;
                    self.recover();
                }
            }
        }
        m
    }

    /// `.section NAME { ... }`: debug information, skipped.
    fn skip_section(&mut self) {
        while let Some(t) = self.peek() {
            if *t == Tok::Punct('{') {
                break;
            }
            self.at += 1;
        }
        let mut depth = 0usize;
        while let Some(t) = self.bump() {
            match t.tok {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// After a variable's `=`: its integer elements (`5`, `{1, -2, 3}`,
    /// nested braces flattened), or `None` for anything else. Stops at the
    /// `;` (which the caller's recovery eats).
    fn initializer(&mut self) -> Option<Vec<i64>> {
        self.at += 1;
        let mut out = Vec::new();
        let mut ok = true;
        let mut neg = false;
        while let Some(t) = self.peek().cloned() {
            match t {
                Tok::Punct(';') => break,
                Tok::Punct('{') | Tok::Punct('}') | Tok::Punct(',') => {}
                Tok::Punct('-') => neg = true,
                Tok::Int(v) => {
                    out.push(if neg { v.wrapping_neg() } else { v });
                    neg = false;
                }
                _ => ok = false,
            }
            self.at += 1;
        }
        ok.then_some(out)
    }

    /// A variable declaration statement, up to its `;`: state space,
    /// attributes, type, name, optional `[N]` or `[]`, optional initializer.
    fn var_statement(&mut self, out: &mut Vec<VarDecl>) {
        let start = self.span();
        let mut space = None;
        let mut is_extern = false;
        let mut elem = None;
        let mut align = None;
        loop {
            match self.peek().cloned() {
                Some(Tok::Name(n)) if n.starts_with('.') => {
                    self.at += 1;
                    match n.as_str() {
                        ".extern" => is_extern = true,
                        ".global" => space = Some(Space::Global),
                        ".shared" => space = Some(Space::Shared),
                        ".const" => space = Some(Space::Const),
                        ".local" => space = Some(Space::Local),
                        ".param" => space = Some(Space::Param),
                        ".align" => {
                            align = self.int("an alignment").map(|n| n.max(1) as u64);
                        }
                        ".v2" | ".v4" | ".v8" => {}
                        _ => {
                            if let Some(b) = type_bytes(&n[1..]) {
                                elem = Some(b);
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        let Some(name) = self.name("a variable name") else {
            self.recover();
            return;
        };
        let mut len = None;
        if self.eat_punct('[') {
            if self.eat_punct(']') {
                len = Some(None);
            } else {
                let n = self.int("an array length");
                if !self.eat_punct(']') {
                    self.expected("`]`");
                }
                len = Some(n.map(|n| n.max(0) as u64));
            }
        }
        let init = self.is_punct('=').then(|| self.initializer());
        // Anything else up to the `;`.
        let span = start.to(Span::new(self.prev_end() as usize, self.prev_end() as usize));
        self.recover();
        let Some(space) = space else {
            self.err(
                name.span,
                "a variable without a state space (`.shared`, `.global`, ...)",
            );
            return;
        };
        out.push(VarDecl {
            space,
            name,
            elem_bytes: elem.unwrap_or(1),
            len,
            is_extern,
            init,
            align,
            span,
        });
    }

    fn params(&mut self) -> Vec<Param> {
        let mut out = Vec::new();
        if !self.eat_punct('(') {
            return out;
        }
        while !self.eat_punct(')') {
            if self.peek().is_none() {
                self.expected("`)`");
                return out;
            }
            let mut ty = String::new();
            let mut reg = false;
            while let Some(Tok::Name(n)) = self.peek().cloned() {
                if !n.starts_with('.') {
                    break;
                }
                self.at += 1;
                if n == ".reg" {
                    reg = true;
                } else if n == ".align" {
                    self.int("an alignment");
                } else if type_bytes(&n[1..]).is_some() {
                    ty = n[1..].to_string();
                }
            }
            let Some(name) = self.name("a parameter name") else {
                // Skip to the next `,` or `)`.
                while !matches!(self.peek(), None | Some(Tok::Punct(',')) | Some(Tok::Punct(')'))) {
                    self.at += 1;
                }
                self.eat_punct(',');
                continue;
            };
            let mut len = None;
            if self.eat_punct('[') {
                len = self.int("an array length").map(|n| n.max(0) as u64);
                self.eat_punct(']');
            }
            out.push(Param { name, ty, len, reg });
            if !self.eat_punct(',') && !self.is_punct(')') {
                self.expected("`,` or `)`");
                while !matches!(self.peek(), None | Some(Tok::Punct(')'))) {
                    self.at += 1;
                }
            }
        }
        out
    }

    fn three(&mut self) -> ([u64; 3], Span) {
        let start = self.span();
        let mut v = [1u64; 3];
        for (k, slot) in v.iter_mut().enumerate() {
            if k > 0 && !self.eat_punct(',') {
                break;
            }
            if let Some(n) = self.int("a thread count") {
                *slot = n.max(0) as u64;
            }
        }
        (
            v,
            start.to(Span::new(self.prev_end() as usize, self.prev_end() as usize)),
        )
    }

    fn func(&mut self, entry: bool, start: Span) -> Option<Func> {
        let rets = if !entry && self.is_punct('(') {
            self.params()
        } else {
            Vec::new()
        };
        let name = self.name("a function name")?;
        let params = self.params();
        let mut f = Func {
            entry,
            name,
            params,
            rets,
            maxntid: None,
            reqntid: None,
            reqnctapercluster: None,
            body: None,
            span: start,
        };
        loop {
            match self.peek().cloned() {
                Some(Tok::Punct(';')) => {
                    self.at += 1;
                    return Some(f);
                }
                Some(Tok::Punct('{')) => break,
                Some(Tok::Name(n)) if n == ".maxntid" => {
                    self.at += 1;
                    f.maxntid = Some(self.three());
                }
                Some(Tok::Name(n)) if n == ".reqntid" => {
                    self.at += 1;
                    f.reqntid = Some(self.three());
                }
                Some(Tok::Name(n)) if n == ".reqnctapercluster" => {
                    self.at += 1;
                    f.reqnctapercluster = Some(self.three());
                }
                Some(Tok::Name(n)) if n == ".pragma" => {
                    self.at += 1;
                    self.recover();
                }
                Some(Tok::Name(n)) if n.starts_with('.') => {
                    // Other performance directives (`.minnctapersm`, `.noreturn`, ...).
                    self.at += 1;
                    self.skip_line();
                }
                _ => {
                    self.expected("`{` (a function body) or `;`");
                    self.recover();
                    return Some(f);
                }
            }
        }
        self.at += 1;
        self.scope_registers();
        let mut body = Vec::new();
        let mut depth = 0usize;
        loop {
            match self.peek().cloned() {
                None => {
                    self.err(f.name.span, "this function's body never ends (a `}` is missing)");
                    break;
                }
                Some(Tok::Punct('}')) => {
                    self.at += 1;
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                Some(Tok::Punct('{')) => {
                    self.at += 1;
                    depth += 1;
                }
                _ => self.item(&mut body),
            }
        }
        f.span = start.to(Span::new(self.prev_end() as usize, self.prev_end() as usize));
        f.body = Some(body);
        Some(f)
    }

    /// Registers declared again in a nested `{ }` block (inline assembly)
    /// shadow the outer ones there (PTX scoping): from the current token
    /// to the end of the function body, each such declaration and every
    /// use inside its block is renamed apart (`%r1` becomes `%r1__shadow0`),
    /// so the flat register file the lowering builds keeps both. A range
    /// (`%t<3>`) renames each of its registers.
    fn scope_registers(&mut self) {
        let mut scopes: Vec<HashMap<String, String>> = vec![HashMap::new()];
        // Per scope, the registers it declares (its renames included).
        let mut declared: Vec<HashSet<String>> = vec![HashSet::new()];
        let mut fresh = 0usize;
        let mut i = self.at;
        while i < self.toks.len() {
            match self.toks[i].tok.clone() {
                Tok::Punct('{') => {
                    scopes.push(HashMap::new());
                    declared.push(HashSet::new());
                }
                Tok::Punct('}') => {
                    scopes.pop();
                    declared.pop();
                    if scopes.is_empty() {
                        return;
                    }
                }
                Tok::Name(n) if n == ".reg" => {
                    i += 1;
                    while let Some(t) = self.toks.get(i) {
                        match t.tok.clone() {
                            Tok::Punct(';') | Tok::Punct('}') | Tok::Punct('{') => break,
                            Tok::Name(r) if !r.starts_with('.') => {
                                let count = match (self.toks.get(i + 1), self.toks.get(i + 2), self.toks.get(i + 3)) {
                                    (Some(a), Some(b), Some(c))
                                        if a.tok == Tok::Punct('<') && c.tok == Tok::Punct('>') =>
                                    {
                                        match b.tok {
                                            Tok::Int(k) if (0..=65536).contains(&k) => Some(k as usize),
                                            _ => None,
                                        }
                                    }
                                    _ => None,
                                };
                                let names: Vec<String> = match count {
                                    Some(k) => (0..k).map(|j| format!("{r}{j}")).collect(),
                                    None => vec![r.clone()],
                                };
                                let depth = scopes.len() - 1;
                                let outer = names.iter().any(|m| declared[..depth].iter().any(|d| d.contains(m)));
                                if depth > 0 && outer {
                                    let to = format!("{r}__shadow{fresh}");
                                    fresh += 1;
                                    match count {
                                        Some(k) => {
                                            for j in 0..k {
                                                scopes[depth].insert(format!("{r}{j}"), format!("{to}{j}"));
                                            }
                                        }
                                        None => {
                                            scopes[depth].insert(r.clone(), to.clone());
                                        }
                                    }
                                    self.toks[i].tok = Tok::Name(to);
                                }
                                declared[depth].extend(names);
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    continue;
                }
                Tok::Name(n) => {
                    if let Some(to) = scopes.iter().rev().find_map(|s| s.get(&n)) {
                        self.toks[i].tok = Tok::Name(to.clone());
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn item(&mut self, body: &mut Vec<Item>) {
        match self.peek().cloned() {
            Some(Tok::Name(n)) if n == ".loc" => {
                self.at += 1;
                let file = self.int("a file number");
                let line = self.int("a line number");
                self.skip_line();
                if let (Some(file), Some(line)) = (file, line) {
                    body.push(Item::Loc {
                        file: file as u32,
                        line: line as u32,
                    });
                }
            }
            Some(Tok::Name(n)) if n == ".reg" => {
                self.at += 1;
                let mut names = Vec::new();
                let mut preds = Vec::new();
                let mut pred = false;
                while let Some(tok) = self.toks.get(self.at) {
                    match &tok.tok {
                        Tok::Punct(';') | Tok::Punct('}') => break,
                        Tok::Name(t) if t == ".pred" => pred = true,
                        Tok::Name(r) if !r.starts_with('.') => {
                            let ident = |name: String| Ident { name, span: tok.span };
                            if pred {
                                // `%p<3>`: `%p0`, `%p1`, `%p2`.
                                let range = match (self.toks.get(self.at + 1), self.toks.get(self.at + 2)) {
                                    (Some(a), Some(b)) if a.tok == Tok::Punct('<') => match b.tok {
                                        Tok::Int(k) if (0..=65536).contains(&k) => Some(k),
                                        _ => None,
                                    },
                                    _ => None,
                                };
                                match range {
                                    Some(k) => preds.extend((0..k).map(|j| ident(format!("{r}{j}")))),
                                    None => preds.push(ident(r.clone())),
                                }
                            }
                            if !r.starts_with('%') {
                                names.push(ident(r.clone()));
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
                self.eat_punct(';');
                if !names.is_empty() {
                    body.push(Item::Regs(names));
                }
                if !preds.is_empty() {
                    body.push(Item::Preds(preds));
                }
            }
            Some(Tok::Name(n)) if n == ".pragma" => {
                self.at += 1;
                self.recover();
            }
            Some(Tok::Name(n))
                if matches!(
                    n.as_str(),
                    ".shared" | ".local" | ".param" | ".global" | ".const" | ".extern"
                ) =>
            {
                let mut vars = Vec::new();
                self.var_statement(&mut vars);
                body.extend(vars.into_iter().map(Item::Var));
            }
            Some(Tok::Name(n)) if n.starts_with('.') => {
                let span = self.span();
                self.err(span, format!("the directive `{n}` is not supported in a function body"));
                self.at += 1;
                self.recover();
            }
            Some(Tok::Name(_)) if self.peek_at(1) == Some(&Tok::Punct(':')) => {
                let l = self.name("a label").expect("a name");
                self.at += 1;
                body.push(Item::Label(l));
            }
            Some(Tok::Name(_)) | Some(Tok::Punct('@')) => {
                if let Some(i) = self.instr() {
                    body.push(Item::Instr(i));
                }
            }
            _ => {
                self.expected("an instruction, a label or a directive");
                self.at += 1;
                self.recover();
            }
        }
    }

    fn instr(&mut self) -> Option<Instr> {
        let start = self.span();
        let mut guard = None;
        if self.eat_punct('@') {
            let neg = self.eat_punct('!');
            let Some(p) = self.name("a predicate register") else {
                self.recover();
                return None;
            };
            guard = Some((neg, p));
        }
        let Some(op) = self.name("an instruction") else {
            self.recover();
            return None;
        };
        let mut operands = Vec::new();
        if !self.eat_punct(';') {
            loop {
                match self.operand() {
                    Some(o) => operands.push(o),
                    None => {
                        self.recover();
                        return None;
                    }
                }
                if self.eat_punct(';') {
                    break;
                }
                if !self.eat_punct(',') {
                    self.expected("`,` or `;`");
                    self.recover();
                    return None;
                }
            }
        }
        Some(Instr {
            guard,
            op,
            operands,
            span: start.to(Span::new(self.prev_end() as usize, self.prev_end() as usize)),
        })
    }

    fn operand(&mut self) -> Option<Operand> {
        let start = self.span();
        let close = |p: &Parser| Span::new(start.start as usize, p.prev_end() as usize);
        match self.peek().cloned() {
            Some(Tok::Punct('[')) => {
                self.at += 1;
                let mut base = None;
                let mut offset = 0i64;
                if let Some(Tok::Name(_)) = self.peek() {
                    base = self.name("an address");
                    if self.eat_punct('+') {
                        offset = self.int("an offset")?;
                    } else if self.eat_punct('-') {
                        offset = self.int("an offset")?.wrapping_neg();
                    }
                } else {
                    offset = self.int("an address")?;
                }
                // `[tensorMap, {c0, c1}]` (a tensor copy's, a texture's
                // or surface's coordinates): a bracketed list, which no
                // modelled instruction takes.
                if self.eat_punct(',') {
                    let mut items = vec![Operand::Addr {
                        base,
                        offset,
                        span: close(self),
                    }];
                    loop {
                        items.push(self.operand()?);
                        if self.eat_punct(']') {
                            break;
                        }
                        if !self.eat_punct(',') {
                            self.expected("`,` or `]`");
                            return None;
                        }
                    }
                    return Some(Operand::List(items, close(self)));
                }
                if !self.eat_punct(']') {
                    self.expected("`]`");
                    return None;
                }
                Some(Operand::Addr {
                    base,
                    offset,
                    span: close(self),
                })
            }
            Some(Tok::Punct(c @ ('{' | '('))) => {
                self.at += 1;
                let end = if c == '{' { '}' } else { ')' };
                let mut items = Vec::new();
                if !self.eat_punct(end) {
                    loop {
                        items.push(self.operand()?);
                        if self.eat_punct(end) {
                            break;
                        }
                        if !self.eat_punct(',') {
                            self.expected(&format!("`,` or `{end}`"));
                            return None;
                        }
                    }
                }
                Some(if c == '{' {
                    Operand::Vector(items, close(self))
                } else {
                    Operand::List(items, close(self))
                })
            }
            Some(Tok::Punct('!')) => {
                self.at += 1;
                Some(Operand::Not(self.name("a predicate register")?))
            }
            Some(Tok::Punct('-')) | Some(Tok::Int(_)) => {
                if self.peek_at(usize::from(self.is_punct('-'))) == Some(&Tok::Float) {
                    self.eat_punct('-');
                    self.at += 1;
                    return Some(Operand::Float(close(self)));
                }
                let v = self.int("a number")?;
                Some(Operand::Int(v, close(self)))
            }
            Some(Tok::Float) => {
                self.at += 1;
                Some(Operand::Float(close(self)))
            }
            Some(Tok::Name(_)) => {
                let n = self.name("an operand")?;
                if self.eat_punct('|') {
                    let m = self.name("a predicate register")?;
                    return Some(Operand::Pair(n, m));
                }
                if self.is_punct('+') && matches!(self.peek_at(1), Some(Tok::Int(_))) {
                    self.at += 1;
                    let off = self.int("an offset")?;
                    return Some(Operand::SymOffset(n, off));
                }
                Some(Operand::Name(n))
            }
            _ => {
                self.expected("an operand");
                None
            }
        }
    }
}
