//! The classified, pre-evaluated entry as a litmus syntax tree whose spans
//! point into the PTX text: one `kernel` of the launch's blocks and
//! threads, a `var` per location the threads touch, and one statement (or
//! a small `if` tree over the address or barrier operand) per PTX
//! instruction. `bc_graph::lower` then builds the program exactly as it
//! does for a litmus file, so every barrier statement means what the
//! model's lowering of that statement says.

use crate::ops::{CInstr, MemKind, Op, PExpr};
use crate::trace::{CopyKey, CopyLocs, Grid, LocKey, Region, Site, Trace, SPIN};
use bc_syntax::{
    Arg, Attr, BarrierDecl, Expr, ExprKind, Ident, Litmus, Op as BOp, Span, Stmt, StmtKind, ThreadDecl, ThreadForm,
    VarDecl,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub struct Emitter<'a> {
    pub code: &'a [CInstr],
    pub sites: &'a [Site],
    /// The locations that can race (`Trace::racy`): with `prune`, the only
    /// ones modelled.
    pub racy: &'a HashSet<LocKey>,
    /// The locations a spin loop polls (`Trace::awaited`): always
    /// modelled, and their stores carry their values.
    pub awaited: &'a HashSet<LocKey>,
    /// nvcc's grid sync in its split form (`Trace::grid_split`).
    pub grid_split: bool,
    /// The locations `cp.async` copies touch (`Trace::copied`): always
    /// modelled.
    pub copied: &'a HashSet<LocKey>,
    /// The trace, for the pieces a plain access covers (`Trace::parts`).
    pub trace: &'a Trace,
    pub prune: bool,
    pub regs: &'a [String],
    pub regions: &'a [Region],
    /// Labels before each instruction (index `code.len()`: at the end).
    pub labels: &'a [Vec<(String, Span)>],
    /// Registers some emitted instruction writes.
    pub written: HashSet<usize>,
    /// Locations used, in first-use order.
    pub locs: Vec<LocKey>,
    /// Threads per block and blocks of the launch.
    pub threads: u64,
    pub blocks: u64,
    loc_ix: HashMap<LocKey, usize>,
    /// Locations used as mbarrier objects, in first-use order: each a
    /// `barrier` of block scope.
    pub mbars: Vec<LocKey>,
}

/// The register that carries a split grid sync's token from its arrive to
/// its wait.
const GRID_TOKEN: &str = "%grid_token";

/// Whether a later definition of `defs` reads a register an earlier one
/// writes (emitted one by one, it would read the new value).
fn overlapping_defs(defs: &[(usize, PExpr)]) -> bool {
    fn reads(e: &PExpr, r: usize) -> bool {
        match e {
            PExpr::Reg(x) => *x == r,
            PExpr::Un(_, x) => reads(x, r),
            PExpr::Bin(_, a, b) => reads(a, r) || reads(b, r),
            _ => false,
        }
    }
    defs.iter()
        .enumerate()
        .any(|(k, (_, e))| defs[..k].iter().any(|(r, _)| reads(e, *r)))
}

/// For a memory access whose threads each use several addresses (a loop
/// that walks its own output words): runs of threads (each run's first
/// thread, the first from thread 0) with the addresses each run uses,
/// where a tree by the place and then by the address is at most twice
/// the size of the tree by the address alone. Per-thread analyses
/// (`bc_graph::classes::reachable_pcs`) then see each thread reach only
/// its own leaves, where a tree by the address alone gives every thread
/// every thread's locations (so every thread may still touch each of
/// them, and history compaction keeps them all). `None` where each thread
/// uses one address (`Emitter::selector` chooses by the place then), where
/// the threads' addresses overlap (a window each thread slides over
/// shared data) or where the pre-evaluation did not keep them.
fn place_groups(site: &Site) -> Option<Vec<(u64, Vec<i64>)>> {
    if !site.place_varies || site.place_addrs_lost || site.place_addrs.is_empty() {
        return None;
    }
    let mut per: Vec<(u64, Vec<i64>)> = Vec::new();
    for &(g, a) in &site.place_addrs {
        match per.last_mut() {
            Some((h, v)) if *h == g => v.push(a),
            _ => per.push((g, vec![a])),
        }
    }
    for (_, v) in &mut per {
        v.sort_unstable();
        v.dedup();
    }
    let groups = runs(per);
    let leaves: usize = groups.iter().map(|(_, v)| v.len()).sum();
    (groups.len() > 1 && leaves <= 2 * site.addrs.len()).then_some(groups)
}

/// Runs of equal values over threads in order: each run's first thread
/// and value (the first run from thread 0: threads that never reach the
/// site may take any value).
fn runs<T: PartialEq>(list: impl IntoIterator<Item = (u64, T)>) -> Vec<(u64, T)> {
    let mut out: Vec<(u64, T)> = Vec::new();
    for (g, v) in list {
        if out.last().map(|l| &l.1) != Some(&v) {
            out.push((g, v));
        }
    }
    if let Some(f) = out.first_mut() {
        f.0 = 0;
    }
    out
}

fn id(name: &str, span: Span) -> Ident {
    Ident {
        name: name.to_string(),
        span,
    }
}

/// `scope=block`: one instance per block (shared memory, its mbarriers).
fn block_scope(span: Span) -> Attr {
    Attr {
        key: id("scope", span),
        value: None,
        name_value: Some(id("block", span)),
    }
}

fn ex(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt {
        labels: Vec::new(),
        kind,
        span,
    }
}

impl<'a> Emitter<'a> {
    pub fn new(
        code: &'a [CInstr],
        trace: &'a crate::trace::Trace,
        regs: &'a [String],
        regions: &'a [Region],
        labels: &'a [Vec<(String, Span)>],
        blocks: u64,
        threads: u64,
    ) -> Emitter<'a> {
        let sites = &trace.sites;
        let mut written = HashSet::new();
        for (c, s) in code.iter().zip(sites) {
            if !s.visited {
                continue;
            }
            match &c.op {
                Op::Defs(d) => written.extend(d.iter().map(|(r, _)| *r)),
                // A spin loop's poll loads its value (`Site::spin`).
                Op::Mem { dsts, .. } if s.poll => written.extend(dsts.iter().copied()),
                Op::MBar { name, .. } if name == "mbarrier.arrive_drop" => {}
                Op::Bar {
                    dst: Some(r), leader, ..
                } => {
                    written.insert(*r);
                    written.extend(leader);
                }
                Op::MBar { dst: Some(r), .. } => {
                    written.insert(*r);
                }
                _ => {}
            }
        }
        Emitter {
            code,
            sites,
            racy: &trace.racy,
            awaited: &trace.awaited,
            grid_split: trace.grid_split,
            copied: &trace.copied,
            trace,
            prune: true,
            regs,
            regions,
            labels,
            written,
            locs: Vec::new(),
            threads,
            blocks,
            loc_ix: HashMap::new(),
            mbars: Vec::new(),
        }
    }

    /// A register's name in the litmus tree: PTX's, with inline
    /// assembly's `%`-less registers as `%asm:p` (never a builtin such as
    /// `lane`).
    fn reg_name(&self, r: usize) -> String {
        let n = &self.regs[r];
        if n.starts_with('%') {
            n.clone()
        } else {
            format!("%asm:{n}")
        }
    }

    /// The name of a location: its region and byte offset.
    pub fn loc_name(&self, l: LocKey) -> String {
        if l.1 < 0 {
            format!("{}{}", self.regions[l.0].name, l.1)
        } else {
            format!("{}+{}", self.regions[l.0].name, l.1)
        }
    }

    fn expr(&self, e: &PExpr, span: Span) -> Expr {
        self.expr_in(e, span, None)
    }

    /// `e`, with `spin` for the polled value of a spin loop's condition
    /// (`PExpr::Reg(SPIN)`).
    fn expr_in(&self, e: &PExpr, span: Span, spin: Option<&Expr>) -> Expr {
        let k = match e {
            PExpr::Reg(r) if *r == SPIN => return spin.expect("a spin loop's location").clone(),
            PExpr::Int(v) | PExpr::Ptr(v) => ExprKind::Int(*v),
            // A register no emitted instruction writes holds an unknown
            // value that reaches no control flow: 0 stands for it.
            PExpr::Reg(r) if !self.written.contains(r) => ExprKind::Int(0),
            PExpr::Reg(r) => ExprKind::Name(self.reg_name(*r)),
            PExpr::Builtin(b) => ExprKind::Name(b.to_string()),
            PExpr::Unknown => ExprKind::Int(0),
            PExpr::Un(op, x) => ExprKind::Unary(*op, Box::new(self.expr_in(x, span, spin))),
            PExpr::Bin(op, a, b) => ExprKind::Binary(
                *op,
                Box::new(self.expr_in(a, span, spin)),
                Box::new(self.expr_in(b, span, spin)),
            ),
        };
        ex(k, span)
    }

    fn mbar(&mut self, l: LocKey, span: Span) -> Expr {
        if !self.mbars.contains(&l) {
            self.mbars.push(l);
        }
        ex(ExprKind::Name(self.loc_name(l)), span)
    }

    fn loc(&mut self, l: LocKey, span: Span) -> Expr {
        if !self.loc_ix.contains_key(&l) {
            self.loc_ix.insert(l, self.locs.len());
            self.locs.push(l);
        }
        ex(ExprKind::Name(self.loc_name(l)), span)
    }

    /// A tree of `if`s over `sel` choosing among `keys` (ascending), with
    /// `leaf` for each.
    fn choose<K: Copy>(
        &mut self,
        sel: &Expr,
        keys: &[(i64, K)],
        span: Span,
        leaf: &mut dyn FnMut(&mut Self, K) -> Vec<Stmt>,
    ) -> Vec<Stmt> {
        if keys.len() == 1 {
            return leaf(self, keys[0].1);
        }
        let m = keys.len() / 2;
        let cond = ex(
            ExprKind::Binary(
                BOp::Lt,
                Box::new(sel.clone()),
                Box::new(ex(ExprKind::Int(keys[m].0), span)),
            ),
            span,
        );
        let then = self.choose(sel, &keys[..m], span, leaf);
        let els = self.choose(sel, &keys[m..], span, leaf);
        vec![stmt(StmtKind::If { cond, then, els }, span)]
    }

    /// A tree of `if`s choosing among the copies `ixs` of a site by their
    /// keys' components from `k` on (`sels[k]` is component `k`'s
    /// expression); a component on which they all agree needs no `if`.
    fn choose_copy(
        &mut self,
        sels: &[Expr],
        k: usize,
        ixs: &[usize],
        copies: &[(CopyKey, CopyLocs)],
        span: Span,
        leaf: &mut dyn FnMut(&mut Self, usize) -> Vec<Stmt>,
    ) -> Vec<Stmt> {
        if ixs.len() == 1 || k == sels.len() {
            return leaf(self, ixs[0]);
        }
        let part = |key: &CopyKey| [key.0, key.1, key.2, key.3][k];
        let mut groups: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for &i in ixs {
            groups.entry(part(&copies[i].0)).or_default().push(i);
        }
        if groups.len() == 1 {
            return self.choose_copy(sels, k + 1, ixs, copies, span, leaf);
        }
        let keys: Vec<(i64, i64)> = groups.keys().map(|&v| (v, v)).collect();
        self.choose(&sels[k], &keys, span, &mut |me, v| {
            me.choose_copy(sels, k + 1, &groups[&v], copies, span, leaf)
        })
    }

    /// The thread's index in the grid, as an expression of builtins.
    fn place_expr(&self, span: Span) -> Expr {
        let tid = ex(ExprKind::Name("tid".into()), span);
        if self.blocks == 1 {
            return tid;
        }
        let bid = ex(ExprKind::Name("bid".into()), span);
        let base = ex(
            ExprKind::Binary(
                BOp::Mul,
                Box::new(bid),
                Box::new(ex(ExprKind::Int(self.threads as i64), span)),
            ),
            span,
        );
        ex(ExprKind::Binary(BOp::Add, Box::new(base), Box::new(tid)), span)
    }

    /// What chooses among a site's values (addresses, barrier operands):
    /// when each thread uses one value, the thread's place (a condition
    /// of builtins alone, which the explorer's static analyses resolve per
    /// thread, so a thread's code names only its own locations), else the
    /// operand itself; with the keys to compare it with and the value of
    /// each choice.
    fn selector(
        &self,
        site: &Site,
        operand: &PExpr,
        values: impl Iterator<Item = i64>,
        span: Span,
    ) -> (Expr, Vec<(i64, i64)>) {
        if !site.place_varies && !site.place.is_empty() {
            let keys = runs(site.place.iter().copied())
                .into_iter()
                .map(|(g, v)| (g as i64, v))
                .collect();
            return (self.place_expr(span), keys);
        }
        let keys = values.collect::<BTreeSet<_>>().into_iter().map(|v| (v, v)).collect();
        (self.expr(operand, span), keys)
    }

    fn instr_stmt(name: &str, dest: Option<Ident>, args: Vec<Expr>, span: Span) -> Stmt {
        stmt(
            StmtKind::Instr {
                dest,
                name: id(name, span),
                args: args.into_iter().map(Arg::Expr).collect(),
            },
            span,
        )
    }

    /// The statements of instruction `i` (without its guard).
    fn body(&mut self, i: usize) -> Vec<Stmt> {
        let (code, sites) = (self.code, self.sites);
        let c = &code[i];
        let span = c.span;
        let site = &sites[i];
        match &c.op {
            // All of an instruction's values are computed before any is
            // written (`Op::Defs`; the pre-evaluation's `register_step`):
            // where a later value reads a register an earlier one writes
            // (`setp.CMP.BOOL p|q, a, b, p`), through temporaries.
            Op::Defs(defs) => {
                let assign = |dest: &str, expr| {
                    stmt(
                        StmtKind::Assign {
                            dest: id(dest, span),
                            expr,
                        },
                        span,
                    )
                };
                if !overlapping_defs(defs) {
                    return (defs.iter())
                        .map(|(r, e)| assign(&self.reg_name(*r), self.expr(e, span)))
                        .collect();
                }
                let tmp = |k: usize| format!("%defs:{i}:{k}");
                let mut out: Vec<Stmt> = (defs.iter().enumerate())
                    .map(|(k, (_, e))| assign(&tmp(k), self.expr(e, span)))
                    .collect();
                for (k, (r, _)) in defs.iter().enumerate() {
                    out.push(assign(&self.reg_name(*r), ex(ExprKind::Name(tmp(k)), span)));
                }
                out
            }
            Op::Unknown(_) | Op::Nop => vec![],
            // A branch no thread took is left out: the pre-evaluation ran
            // every thread on the path the explorer follows (trace.rs), so
            // none takes it there either, and the explorer's analyses do
            // not see a loop that never runs (a poll's retry loop, whose
            // poll became a blocking wait).
            Op::Bra(_) if !site.executed => vec![],
            Op::Bra(l) => vec![stmt(StmtKind::Goto(id(l, span)), span)],
            Op::Exit => vec![stmt(StmtKind::Exit, span)],
            Op::Group { name, n } if site.executed => {
                let args = n.iter().map(|n| ex(ExprKind::Int(*n), span)).collect();
                vec![Self::instr_stmt(name, None, args, span)]
            }
            Op::Group { .. } => vec![],
            Op::Copy { .. } if !site.executed || site.copies.is_empty() => vec![],
            Op::Copy { dst, src, bulk, plain } => {
                let copies = &site.copies;
                let trace = self.trace;
                let mut leaf = |me: &mut Self, ix: usize| {
                    let ((_, _, bytes, _), c) = copies[ix];
                    // Each side is the pieces its bytes cover
                    // (`Trace::parts`): one location, or a list of them
                    // (docs/litmus.md, "Asynchronous copies"); a source
                    // the copy does not read is an empty list.
                    let side = |me: &mut Self, l: LocKey, n: u32| -> Arg {
                        let pieces = if n == 0 { Vec::new() } else { trace.parts(l, n) };
                        match pieces.as_slice() {
                            [one] => Arg::Expr(me.loc(*one, span)),
                            _ => Arg::List(pieces.iter().map(|&p| me.loc(p, span)).collect(), span),
                        }
                    };
                    let mut args = vec![side(me, c.dst, c.dst_bytes), side(me, c.src, c.src_bytes)];
                    let name = if bulk.is_some() {
                        args.push(Arg::Expr(ex(ExprKind::Int(bytes), span)));
                        args.extend(c.bar.map(|b| Arg::Expr(me.mbar(b, span))));
                        "cp.async.bulk"
                    } else {
                        "cp.async"
                    };
                    vec![stmt(
                        StmtKind::Instr {
                            dest: None,
                            name: id(name, span),
                            args,
                        },
                        span,
                    )]
                };
                if !site.place_varies && !site.place.is_empty() {
                    // Each thread makes one copy: chosen by its place.
                    let keys: Vec<(i64, i64)> = runs(site.place.iter().copied())
                        .into_iter()
                        .map(|(g, v)| (g as i64, v))
                        .collect();
                    let sel = self.place_expr(span);
                    self.choose(&sel, &keys, span, &mut |me, ix| leaf(me, ix as usize))
                } else {
                    // A copy per visit (a multistage pipeline's stages):
                    // chosen by the destination, then the source, then
                    // the size and the mbarrier where those differ.
                    let mut sels = vec![self.expr(dst, span), self.expr(src, span)];
                    if let Some((e, _)) = plain.as_ref().and_then(|p| p.src.operand()) {
                        // The operand that chose how many bytes are read.
                        sels.push(self.expr(e, span));
                    }
                    if let Some(b) = bulk {
                        sels.push(self.expr(&b.bytes, span));
                        sels.push(match &b.bar {
                            Some(a) => self.expr(a, span),
                            None => ex(ExprKind::Int(-1), span),
                        });
                    }
                    let all: Vec<usize> = (0..copies.len()).collect();
                    self.choose_copy(&sels, 0, &all, copies, span, &mut leaf)
                }
            }
            // A thread that reaches one made the kernel inconclusive.
            Op::Trap => vec![],
            // nvcc's grid sync (`trace::Grid`): its first block barrier is
            // the litmus `grid.sync`, which the rest stands for.
            // In the split form (`Trace::grid_split`) the block barriers
            // stay, the first followed by `grid.barrier_arrive`, the second
            // after `grid.barrier_wait` (the `Op::Bar` arm).
            _ if site.grid == Some(Grid::Begin) && !self.grid_split => {
                vec![Self::instr_stmt("grid.sync", None, vec![], span)]
            }
            _ if site.grid == Some(Grid::End) && !self.grid_split => vec![],
            _ if matches!(site.grid, Some(Grid::Arrival | Grid::Poll)) => vec![],
            Op::Fence { name, .. } => vec![Self::instr_stmt(name, None, vec![], span)],
            Op::Mem {
                kind,
                addr,
                dsts,
                ty,
                vals,
                rmw,
                esize,
                ..
            } => {
                // Only locations that can race, or that a spin loop polls,
                // are modelled (`Trace::racy`, `Trace::awaited`).
                let (racy, awaited, prune) = (self.racy, self.awaited, self.prune);
                let copied = self.copied;
                let keep = |l: &LocKey| !prune || racy.contains(l) || awaited.contains(l) || copied.contains(l);
                // A plain access is an access of each piece of memory it
                // covers (`Trace::parts`: one, its start, unless another
                // access overlaps it from another offset or with another
                // width); a polled location is never split (trace.rs
                // refuses a kernel that would need it).
                let trace = self.trace;
                let plain = matches!(kind, MemKind::Read | MemKind::Write);
                let esize = *esize;
                let parts = move |l: LocKey| -> Vec<LocKey> {
                    if plain && !awaited.contains(&l) {
                        trace.parts(l, esize)
                    } else {
                        vec![l]
                    }
                };
                if site.addrs.is_empty()
                    || site.dropped
                    || !site.addrs.values().flatten().any(|&l| parts(l).iter().any(keep))
                {
                    return vec![];
                }
                // The values written: one per element (or an atomic's
                // operands), as constants when every visit wrote the same.
                let values: Vec<Expr> = match site.vals.iter().collect::<Vec<_>>().as_slice() {
                    [one] if site.vals_unknown.is_none() => one.iter().map(|v| ex(ExprKind::Int(*v), span)).collect(),
                    _ => vals.iter().map(|e| self.expr(e, span)).collect(),
                };
                let zero = ex(ExprKind::Int(0), span);
                let (kind, ty, rmw) = (*kind, *ty, *rmw);
                let dst = dsts.first().map(|&r| id(&self.reg_name(r), span));
                let (poll, spin) = (site.poll, site.spin.clone());
                let mut leaf = |me: &mut Self, a: i64| {
                    let mut out = Vec::new();
                    let pieces = site.addrs[&a]
                        .iter()
                        .enumerate()
                        .flat_map(|(e, &l)| parts(l).into_iter().map(move |p| (e, p)));
                    for (e, l) in pieces {
                        if !keep(&l) {
                            continue;
                        }
                        let loc = me.loc(l, span);
                        let value = |k: usize| values.get(k).cloned().unwrap_or_else(|| zero.clone());
                        let valued = awaited.contains(&l);
                        match kind {
                            MemKind::Read => out.push(Self::instr_stmt("read", None, vec![loc], span)),
                            MemKind::Write if valued => {
                                // A plain write of a polled location: the
                                // access that can race, then its value.
                                out.push(Self::instr_stmt("write", None, vec![loc.clone()], span));
                                out.push(Self::instr_stmt("store", None, vec![loc, value(e)], span));
                            }
                            MemKind::Write => out.push(Self::instr_stmt("write", None, vec![loc], span)),
                            MemKind::Load => match (poll, &dst) {
                                (true, Some(d)) => {
                                    // A spin loop's poll (`Site::spin`).
                                    if let Some(cond) = &spin {
                                        let cond = me.expr_in(cond, span, Some(&loc));
                                        out.push(stmt(StmtKind::Await(cond), span));
                                    }
                                    out.push(Self::instr_stmt("load", Some(d.clone()), vec![loc], span));
                                    if !ty.float && !ty.pred && ty.bits < 64 {
                                        let r = PExpr::Reg(dsts[0]);
                                        out.push(stmt(
                                            StmtKind::Assign {
                                                dest: d.clone(),
                                                expr: me.expr(&crate::ops::norm(ty, r), span),
                                            },
                                            span,
                                        ));
                                    }
                                }
                                _ => out.push(Self::instr_stmt("load", None, vec![loc], span)),
                            },
                            MemKind::Store if valued => {
                                out.push(Self::instr_stmt("store", None, vec![loc, value(e)], span))
                            }
                            MemKind::Store => out.push(Self::instr_stmt("store", None, vec![loc, zero.clone()], span)),
                            // trace.rs checked the operation (`check_awaited`).
                            MemKind::Rmw if valued => out.push(match rmw {
                                Some("exch") => Self::instr_stmt("exch", None, vec![loc, value(0)], span),
                                Some("cas") => Self::instr_stmt("cas", None, vec![loc, value(0), value(1)], span),
                                _ => Self::instr_stmt("fetch_add", None, vec![loc, value(0)], span),
                            }),
                            MemKind::Rmw => {
                                out.push(Self::instr_stmt("fetch_add", None, vec![loc, zero.clone()], span))
                            }
                        }
                    }
                    out
                };
                if let Some(groups) = place_groups(site) {
                    // By the place, then by the address among the few
                    // that place uses (`place_groups`).
                    let place = self.place_expr(span);
                    let reg = self.expr(addr, span);
                    let keys: Vec<(i64, usize)> =
                        (groups.iter().enumerate()).map(|(i, (g, _))| (*g as i64, i)).collect();
                    return self.choose(&place, &keys, span, &mut |me, i| {
                        let ks: Vec<(i64, i64)> = groups[i].1.iter().map(|&a| (a, a)).collect();
                        me.choose(&reg, &ks, span, &mut leaf)
                    });
                }
                let (sel, keys) = self.selector(site, addr, site.addrs.keys().copied(), span);
                self.choose(&sel, &keys, span, &mut leaf)
            }
            Op::MBar {
                name,
                addr,
                args,
                dst,
                poll,
            } => {
                if !site.executed || site.addrs.is_empty() {
                    return vec![];
                }
                // `mbarrier.arrive` with a count of 1 (what libcu++'s
                // `cuda::barrier::arrive()` emits on sm_90) is the plain
                // arrive: one arrival either way (PTX ISA, mbarrier.arrive).
                let plain = name == "mbarrier.arrive" && site.counts.iter().eq([1].iter());
                let args: Vec<Expr> = args
                    .iter()
                    .filter(|_| !plain)
                    .map(|m| match m {
                        // One value over every thread and visit (an mbarrier
                        // instruction has at most one such operand): the
                        // constant, which the explorer's static analyses
                        // read (a count from `%ntid.x`, a fixed parity).
                        crate::ops::MArg::Value(_) if site.counts.len() == 1 => {
                            ex(ExprKind::Int(*site.counts.iter().next().expect("one")), span)
                        }
                        m => self.expr(m.expr(), span),
                    })
                    .collect();
                // The state `arrive_drop` returns is unknown (trace.rs).
                let dest = dst
                    .filter(|_| name != "mbarrier.arrive_drop")
                    .map(|r| id(&self.reg_name(r), span));
                let (poll, name) = (*poll, name.clone());
                let (sel, keys) = self.selector(site, addr, site.addrs.keys().copied(), span);
                self.choose(&sel, &keys, span, &mut |me, a| {
                    let b = me.mbar(site.addrs[&a][0], span);
                    let mut all = vec![b];
                    all.extend(args.iter().cloned());
                    if poll {
                        // A retry loop (`Site::blocking`): the blocking
                        // wait, after which the poll's answer is true.
                        let p = dest.clone().expect("a poll has a predicate");
                        vec![
                            Self::instr_stmt(&name, None, all, span),
                            stmt(
                                StmtKind::Assign {
                                    dest: p,
                                    expr: ex(ExprKind::Int(1), span),
                                },
                                span,
                            ),
                        ]
                    } else {
                        vec![Self::instr_stmt(&name, dest.clone(), all, span)]
                    }
                })
            }
            Op::Bar {
                name,
                sel,
                count,
                pred,
                dst,
                args,
                leader,
                ..
            } => {
                if !site.executed {
                    return vec![];
                }
                let count = count
                    .as_ref()
                    .map(|n| match site.counts.iter().collect::<Vec<_>>().as_slice() {
                        [one] => ex(ExprKind::Int(**one), span),
                        _ => self.expr(n, span),
                    });
                let pred = pred.as_ref().map(|p| self.expr(p, span));
                // An operand with one value wherever the site runs (a
                // shuffle's source lane or width, often a register nvcc
                // set to a constant) is written as that constant.
                let args: Vec<Expr> = (args.iter().enumerate())
                    .map(
                        |(i, (a, _))| match site.args.get(&i).map(|v| v.iter().collect::<Vec<_>>()) {
                            Some(one) if one.len() == 1 => ex(ExprKind::Int(*one[0]), span),
                            _ => self.expr(a, span),
                        },
                    )
                    .collect();
                let dest = dst.map(|r| id(&self.reg_name(r), span));
                let name = name.clone();
                let leaf = |s: Option<i64>| {
                    let mut all = Vec::new();
                    if let Some(s) = s {
                        // A `__syncwarp` mask is 32 bits.
                        all.push(ex(ExprKind::Int(s), span));
                    }
                    all.extend(count.clone());
                    all.extend(pred.clone());
                    all.extend(args.iter().cloned());
                    Self::instr_stmt(&name, dest.clone(), all, span)
                };
                let mut out = match sel {
                    None => vec![leaf(None)],
                    Some(sel) => {
                        let (sel, keys) = self.selector(site, sel, site.sels.iter().copied(), span);
                        self.choose(&sel, &keys, span, &mut |_, v| vec![leaf(Some(v))])
                    }
                };
                let token = || ex(ExprKind::Name(GRID_TOKEN.into()), span);
                match site.grid {
                    Some(Grid::Begin) => out.push(Self::instr_stmt(
                        "grid.barrier_arrive",
                        Some(id(GRID_TOKEN, span)),
                        vec![],
                        span,
                    )),
                    Some(Grid::End) => out.insert(0, Self::instr_stmt("grid.barrier_wait", None, vec![token()], span)),
                    _ => {}
                }
                // `elect.sync`'s predicate: whether this lane is the
                // leader whose lane id the intrinsic returned.
                if let (Some(p), Some(d)) = (leader, dst) {
                    let is_leader = PExpr::Bin(
                        bc_syntax::Op::Eq,
                        Box::new(PExpr::Reg(*d)),
                        Box::new(PExpr::Builtin("lane")),
                    );
                    out.push(stmt(
                        StmtKind::Assign {
                            dest: id(&self.reg_name(*p), span),
                            expr: self.expr(&is_leader, span),
                        },
                        span,
                    ));
                }
                out
            }
        }
    }

    /// The kernel's statements.
    pub fn stmts(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        for i in 0..=self.code.len() {
            let labels: Vec<Ident> = self.labels[i].iter().map(|(l, s)| id(l, *s)).collect();
            let mut body = if i < self.code.len() && self.sites[i].visited {
                self.body(i)
            } else {
                vec![]
            };
            if i < self.code.len() && !body.is_empty() && self.place_branch(i) {
                // A conditional branch every thread takes or skips by its
                // place alone: the condition over the place.
                let span = self.code[i].span;
                let site = &self.sites[i];
                let keys: Vec<(i64, i64)> = runs(site.place.iter().copied())
                    .into_iter()
                    .map(|(g, v)| (g as i64, v))
                    .collect();
                let sel = self.place_expr(span);
                let taken = body;
                body = self.choose(&sel, &keys, span, &mut |_, v| {
                    if v != 0 {
                        taken.clone()
                    } else {
                        vec![]
                    }
                });
                if body.is_empty() {
                    body.push(stmt(StmtKind::Nop, span));
                }
            } else if i < self.code.len() && !body.is_empty() {
                if let Some((neg, p)) = self.code[i].guard {
                    let span = self.code[i].span;
                    let r = self.expr(&PExpr::Reg(p), span);
                    let op = if neg { BOp::Eq } else { BOp::Ne };
                    let cond = ex(
                        ExprKind::Binary(op, Box::new(r), Box::new(ex(ExprKind::Int(0), span))),
                        span,
                    );
                    body = vec![stmt(
                        StmtKind::If {
                            cond,
                            then: body,
                            els: vec![],
                        },
                        span,
                    )];
                }
            }
            if body.is_empty() && !labels.is_empty() {
                let span = labels[0].span;
                body.push(stmt(StmtKind::Nop, span));
            }
            if let Some(first) = body.first_mut() {
                first.labels = labels;
            }
            out.extend(body);
        }
        out
    }

    /// Whether instruction `i` is a conditional branch that each thread
    /// reaching it took or skipped the same way every time (`Site::place`
    /// holds the answers, by thread): its condition is then written over
    /// the thread's place, a condition of builtins alone that the
    /// explorer's per-thread analyses (`bc_graph::classes::reachable_pcs`:
    /// which barriers a thread joins, its symmetry class, its group)
    /// resolve, where a register condition leaves every path open to every
    /// thread. The pre-evaluation ran each thread's path, so the two
    /// conditions agree on every thread.
    fn place_branch(&self, i: usize) -> bool {
        let site = &self.sites[i];
        matches!(self.code[i].op, Op::Bra(_))
            && self.code[i].guard.is_some()
            && !site.place_varies
            && !site.place.is_empty()
    }

    /// The whole test.
    pub fn litmus(
        mut self,
        name: Ident,
        blocks: u64,
        threads: u64,
        cluster: u64,
        cooperative: bool,
        span: Span,
    ) -> Litmus {
        let mut body = self.stmts();
        drop_dead_assignments(&mut body);
        let attr = |k: &str, v: u64| Attr {
            key: id(k, span),
            value: Some((v as i64, span)),
            name_value: None,
        };
        let vars = self
            .locs
            .iter()
            .map(|&l| {
                let r = &self.regions[l.0];
                VarDecl {
                    name: id(&self.loc_name(l), r.span),
                    init: r.initial(l.1).unwrap_or(0),
                    attrs: if r.shared { vec![block_scope(r.span)] } else { vec![] },
                    span: r.span,
                }
            })
            .collect();
        let barriers = self
            .mbars
            .iter()
            .map(|&l| {
                let r = &self.regions[l.0];
                BarrierDecl {
                    name: id(&self.loc_name(l), r.span),
                    len: None,
                    count: None,
                    attrs: vec![block_scope(r.span)],
                    span: r.span,
                }
            })
            .collect();
        Litmus {
            name: Some(name),
            barriers,
            vars,
            threads: vec![ThreadDecl {
                form: ThreadForm::Kernel,
                name: None,
                attrs: [
                    attr("blocks", blocks),
                    attr("threads", threads),
                    attr("cluster_size", cluster),
                ]
                .into_iter()
                .chain(cooperative.then(|| Attr {
                    key: id("cooperative", span),
                    value: None,
                    name_value: None,
                }))
                .collect(),
                body,
                span,
            }],
            ..Litmus::default()
        }
    }
}

/// The names an expression reads.
fn names_in(e: &Expr, out: &mut HashSet<String>) {
    match &e.kind {
        ExprKind::Name(n) => {
            out.insert(n.clone());
        }
        ExprKind::Index(_, x) | ExprKind::Unary(_, x) => names_in(x, out),
        ExprKind::Binary(_, a, b) => {
            names_in(a, out);
            names_in(b, out);
        }
        ExprKind::Int(_) | ExprKind::Qualified(..) => {}
    }
}

/// Leaves out every assignment to a register that no emitted statement
/// reads, directly or through assignments that are kept (flow-insensitive,
/// by name, so a register read anywhere keeps all its assignments): PTX
/// computes addresses and branch conditions from `%tid` in registers, and
/// once the emitter has written those as conditions over the place
/// (`Emitter::selector`, `Emitter::place_branch`), the registers only
/// differ from thread to thread, which splits every symmetry class and
/// every state. Nothing reads them, so no step and no verdict changes. A
/// statement that carries labels stays as a `Nop`.
fn drop_dead_assignments(body: &mut Vec<Stmt>) {
    fn collect(stmts: &[Stmt], live: &mut HashSet<String>, assigns: &mut Vec<(String, HashSet<String>)>) {
        for st in stmts {
            match &st.kind {
                StmtKind::Assign { dest, expr } => {
                    let mut r = HashSet::new();
                    names_in(expr, &mut r);
                    assigns.push((dest.name.clone(), r));
                }
                StmtKind::Instr { args, .. } => {
                    for a in args {
                        match a {
                            Arg::Expr(e) | Arg::Key(_, e) => names_in(e, live),
                            Arg::List(es, _) => es.iter().for_each(|e| names_in(e, live)),
                        }
                    }
                }
                StmtKind::Await(e) => names_in(e, live),
                StmtKind::If { cond, then, els } => {
                    names_in(cond, live);
                    collect(then, live, assigns);
                    collect(els, live, assigns);
                }
                StmtKind::Repeat { count: e, body } | StmtKind::While { cond: e, body } => {
                    names_in(e, live);
                    collect(body, live, assigns);
                }
                StmtKind::Goto(_) | StmtKind::Exit | StmtKind::Nop => {}
            }
        }
    }
    fn prune(stmts: &mut Vec<Stmt>, live: &HashSet<String>) {
        stmts.retain_mut(|st| {
            match &mut st.kind {
                StmtKind::Assign { dest, .. } if !live.contains(&dest.name) => {
                    if st.labels.is_empty() {
                        return false;
                    }
                    st.kind = StmtKind::Nop;
                }
                StmtKind::If { then, els, .. } => {
                    prune(then, live);
                    prune(els, live);
                }
                StmtKind::Repeat { body, .. } | StmtKind::While { body, .. } => prune(body, live),
                _ => {}
            }
            true
        });
    }
    let mut live = HashSet::new();
    let mut assigns = Vec::new();
    collect(body, &mut live, &mut assigns);
    loop {
        let mut changed = false;
        for (d, reads) in &assigns {
            if live.contains(d) {
                for r in reads {
                    changed |= live.insert(r.clone());
                }
            }
        }
        if !changed {
            break;
        }
    }
    prune(body, &live);
}
