//! One entry's body as a flat list of labels and instructions: nested
//! `{ }` blocks are already flat in the tree, and every `call` of a `.func`
//! with a body is inlined here (its registers, labels and `.param`
//! variables renamed per call site, its formal parameters renamed to the
//! call's actual ones, its `ret` a branch to the end of the copy).

use crate::ast::*;
use bc_syntax::{Diagnostic, Span};
use std::collections::{HashMap, HashSet};

/// External functions without a body that cannot synchronize: a call
/// does nothing here and its results are unknown (`printf`'s `vprintf`).
pub const EXTERNAL_NOPS: &[&str] = &["vprintf"];

/// Calls nested deeper than this are an error (recursion is not modelled).
pub const MAX_INLINE_DEPTH: usize = 16;

#[derive(Clone, Debug)]
pub enum FItem {
    Label(String, Span),
    Ins {
        ins: Instr,
        /// The CUDA source line (`.loc` file and line) in effect.
        loc: Option<(u32, u32)>,
    },
}

/// The flattened entry, the variables its bodies declare (`.shared`,
/// `.local` and call-site `.param`), and errors.
pub struct Flat {
    pub items: Vec<FItem>,
    pub vars: Vec<VarDecl>,
    /// Registers declared without `%` (after renaming).
    pub plain_regs: Vec<String>,
    /// Registers declared `.pred` (after renaming).
    pub pred_regs: Vec<String>,
}

/// Whether a `%` name is a special register (never renamed).
pub fn is_special(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%tid"
            | "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%laneid"
            | "%warpid"
            | "%nwarpid"
            | "%smid"
            | "%nsmid"
            | "%gridid"
            | "%clock"
            | "%clock64"
            | "%clock_hi"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%reserved_smem_offset_0"
            | "%reserved_smem_offset_1"
            | "%is_explicit_cluster"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
            | "%cluster_ctarank"
            | "%cluster_nctarank"
            | "%current_graph_exec"
            | "%pm0"
            | "%pm1"
            | "%pm2"
            | "%pm3"
            | "%pm4"
            | "%pm5"
            | "%pm6"
            | "%pm7"
    ) || base.starts_with("%envreg")
}

struct Flattener<'a> {
    module: &'a Module,
    out: Vec<FItem>,
    vars: Vec<VarDecl>,
    plain_regs: Vec<String>,
    pred_regs: Vec<String>,
    diags: Vec<Diagnostic>,
    calls: usize,
}

/// Flattens `entry`, inlining calls.
pub fn flatten(module: &Module, entry: &Func) -> (Flat, Vec<Diagnostic>) {
    let mut f = Flattener {
        module,
        out: Vec::new(),
        vars: Vec::new(),
        plain_regs: Vec::new(),
        pred_regs: Vec::new(),
        diags: Vec::new(),
        calls: 0,
    };
    f.body(entry.body.as_deref().unwrap_or(&[]), &Rename::default(), 0, None);
    (
        Flat {
            items: f.out,
            vars: f.vars,
            plain_regs: f.plain_regs,
            pred_regs: f.pred_regs,
        },
        f.diags,
    )
}

/// How one inlined copy renames names.
#[derive(Default)]
struct Rename {
    suffix: String,
    labels: HashSet<String>,
    params: HashMap<String, String>,
    locals: HashSet<String>,
}

impl Rename {
    fn name(&self, n: &str) -> String {
        if self.suffix.is_empty() {
            return n.to_string();
        }
        if let Some(p) = self.params.get(n) {
            return p.clone();
        }
        if (n.starts_with('%') && !is_special(n)) || self.labels.contains(n) || self.locals.contains(n) {
            return format!("{n}@{}", self.suffix);
        }
        n.to_string()
    }
    fn ident(&self, i: &Ident) -> Ident {
        Ident {
            name: self.name(&i.name),
            span: i.span,
        }
    }
    fn operand(&self, o: &Operand) -> Operand {
        match o {
            Operand::Name(n) => Operand::Name(self.ident(n)),
            Operand::Not(n) => Operand::Not(self.ident(n)),
            Operand::Addr { base, offset, span } => Operand::Addr {
                base: base.as_ref().map(|b| self.ident(b)),
                offset: *offset,
                span: *span,
            },
            Operand::Vector(v, s) => Operand::Vector(v.iter().map(|o| self.operand(o)).collect(), *s),
            Operand::List(v, s) => Operand::List(v.iter().map(|o| self.operand(o)).collect(), *s),
            Operand::Pair(a, b) => Operand::Pair(self.ident(a), self.ident(b)),
            Operand::SymOffset(n, k) => Operand::SymOffset(self.ident(n), *k),
            Operand::Int(..) | Operand::Float(_) => o.clone(),
        }
    }
    fn instr(&self, i: &Instr) -> Instr {
        Instr {
            guard: i.guard.as_ref().map(|(neg, p)| (*neg, self.ident(p))),
            op: i.op.clone(),
            operands: i.operands.iter().map(|o| self.operand(o)).collect(),
            span: i.span,
        }
    }
}

impl Flattener<'_> {
    /// Appends a body. `end`: the label a `ret` of an inlined copy jumps to.
    fn body(&mut self, items: &[Item], rn: &Rename, depth: usize, end: Option<&str>) {
        let mut loc = None;
        for item in items {
            match item {
                Item::Loc { file, line } => loc = Some((*file, *line)),
                Item::Regs(names) => self.plain_regs.extend(names.iter().map(|n| rn.name(&n.name))),
                Item::Preds(names) => self.pred_regs.extend(names.iter().map(|n| rn.name(&n.name))),
                Item::Label(l) => self.out.push(FItem::Label(rn.name(&l.name), l.span)),
                Item::Var(v) => {
                    let mut v = v.clone();
                    v.name = rn.ident(&v.name);
                    self.vars.push(v);
                }
                Item::Instr(i) => {
                    let i = rn.instr(i);
                    let parts = i.parts();
                    if parts[0] == "call" {
                        self.call(&i, depth, loc);
                    } else if parts[0] == "ret" && end.is_some() {
                        let mut bra = i.clone();
                        bra.op = Ident {
                            name: "bra".into(),
                            span: i.op.span,
                        };
                        bra.operands = vec![Operand::Name(Ident {
                            name: end.unwrap_or_default().to_string(),
                            span: i.op.span,
                        })];
                        self.out.push(FItem::Ins { ins: bra, loc });
                    } else {
                        self.out.push(FItem::Ins { ins: i, loc });
                    }
                }
            }
        }
    }

    fn call(&mut self, call: &Instr, depth: usize, loc: Option<(u32, u32)>) {
        // The result and argument lists, operand by operand: an immediate
        // argument keeps its place (dropping it bound the formals after
        // it to the wrong actuals).
        let mut rets: Vec<Operand> = Vec::new();
        let mut args: Vec<Operand> = Vec::new();
        let mut callee = None;
        for o in &call.operands {
            match o {
                Operand::List(items, _) => {
                    if callee.is_none() {
                        rets = items.clone();
                    } else {
                        args = items.clone();
                    }
                }
                Operand::Name(n) if callee.is_none() => callee = Some(n.clone()),
                _ => {}
            }
        }
        let Some(callee) = callee else {
            self.diags
                .push(Diagnostic::error(call.span, "a `call` without a function name"));
            return;
        };
        if call.guard.is_some() {
            self.diags.push(Diagnostic::error(
                call.span,
                "a predicated `call` is not supported (inlining needs an unconditional call)",
            ));
            return;
        }
        if EXTERNAL_NOPS.contains(&callee.name.as_str()) {
            // Its results (`retval0`) stay unwritten: unknown values.
            return;
        }
        let Some(f) = self
            .module
            .funcs
            .iter()
            .find(|f| f.name.name == callee.name && f.body.is_some())
        else {
            self.diags.push(Diagnostic::error(
                callee.span,
                format!(
                    "`{}` has no body in this module: only calls of `.func`s defined here are inlined",
                    callee.name
                ),
            ));
            return;
        };
        if depth >= MAX_INLINE_DEPTH {
            self.diags.push(Diagnostic::error(
                call.span,
                format!("calls nested more than {MAX_INLINE_DEPTH} deep (recursion is not modelled)"),
            ));
            return;
        }
        self.calls += 1;
        let suffix = format!("c{}", self.calls);
        let body = f.body.as_deref().unwrap_or(&[]);
        let mut rn = Rename {
            suffix: suffix.clone(),
            ..Rename::default()
        };
        for item in body {
            match item {
                Item::Label(l) => {
                    rn.labels.insert(l.name.clone());
                }
                Item::Var(v) if matches!(v.space, Space::Param | Space::Local) => {
                    rn.locals.insert(v.name.name.clone());
                }
                Item::Regs(names) => rn.locals.extend(names.iter().map(|n| n.name.clone())),
                _ => {}
            }
        }
        if args.len() != f.params.len() || rets.len() != f.rets.len() {
            self.diags.push(Diagnostic::error(
                call.span,
                format!(
                    "this `call` passes {} argument(s) and {} result(s); `{}` declares {} and {}",
                    args.len(),
                    rets.len(),
                    callee.name,
                    f.params.len(),
                    f.rets.len()
                ),
            ));
            return;
        }
        // A `.param` formal names the caller's `.param` variable (the
        // caller's `st.param` and the callee's `ld.param` meet there). A
        // `.reg` formal is passed by value (PTX ISA, "Function
        // declarations and definitions"): a register of the copy of its
        // own, set from the actual argument (a register or an immediate)
        // before the body, so that the callee writing it leaves the
        // caller's register alone; a `.reg` result is copied into the
        // caller's register after the body.
        let mut moves_in = Vec::new();
        let mut moves_out = Vec::new();
        for (formal, actual, result) in (f.params.iter().zip(&args).map(|(f, a)| (f, a, false)))
            .chain(f.rets.iter().zip(&rets).map(|(f, a)| (f, a, true)))
        {
            if !formal.reg {
                match actual {
                    Operand::Name(n) => {
                        rn.params.insert(formal.name.name.clone(), n.name.clone());
                    }
                    other => self.diags.push(Diagnostic::error(
                        other.span(),
                        format!(
                            "`{}` is a `.param` formal: the call must pass a `.param` variable",
                            formal.name.name
                        ),
                    )),
                }
                continue;
            }
            if formal.ty.is_empty() || formal.len.is_some() {
                self.diags.push(Diagnostic::error(
                    formal.name.span,
                    "a `.reg` formal parameter without a scalar type is not supported",
                ));
                continue;
            }
            rn.locals.insert(formal.name.name.clone());
            let own = rn.name(&formal.name.name);
            if formal.ty == "pred" {
                self.pred_regs.push(own.clone());
            } else if !own.starts_with('%') {
                self.plain_regs.push(own.clone());
            }
            let own = Operand::Name(Ident {
                name: own,
                span: formal.name.span,
            });
            let mov = |dst: Operand, src: Operand| Instr {
                guard: None,
                op: Ident {
                    name: format!("mov.{}", formal.ty),
                    span: call.op.span,
                },
                operands: vec![dst, src],
                span: call.span,
            };
            if result {
                if !matches!(actual, Operand::Name(_)) {
                    self.diags
                        .push(Diagnostic::error(actual.span(), "a call's result must be a register"));
                    continue;
                }
                moves_out.push(mov(actual.clone(), own));
            } else {
                moves_in.push(mov(own, actual.clone()));
            }
        }
        for ins in moves_in {
            self.out.push(FItem::Ins { ins, loc });
        }
        let end = format!("$ret@{suffix}");
        self.body(body, &rn, depth + 1, Some(&end));
        self.out.push(FItem::Label(end, call.span));
        for ins in moves_out {
            self.out.push(FItem::Ins { ins, loc });
        }
    }
}
