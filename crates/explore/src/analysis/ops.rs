//! Walks over every barrier instruction a thread can reach, with the
//! barrier instances its selector may name: the enumeration the other
//! analyses share.

use bc_graph::*;

/// Calls `f` with every barrier instruction of every thread and each
/// barrier instance its selector may reach (every member of a
/// joined-barrier group).
pub(crate) fn for_each_barrier_op(
    p: &Program,
    mut f: impl FnMut(&BarrierOp, &Option<BarrierResult>, BarrierSel, BarrierId),
) {
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            if let InstrKind::Barrier { op, sel, result } = &ins.kind {
                for b in sel.decls(&p.groups).into_iter().filter_map(|d| t.barriers[d as usize]) {
                    f(op, result, *sel, b);
                }
            }
        }
    }
}

/// Barrier instances some instruction of a thread applies `pred` to.
pub(crate) fn barriers_where(p: &Program, pred: impl Fn(&BarrierOp, &Option<BarrierResult>) -> bool) -> Vec<bool> {
    let mut out = vec![false; p.barriers.len()];
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            if let InstrKind::Barrier { op, sel, result } = &ins.kind {
                let decl = match sel {
                    BarrierSel::Decl(d) | BarrierSel::JoinedOr { decl: d, .. } => *d,
                    BarrierSel::Joined { .. } => continue,
                };
                if pred(op, result) {
                    if let Some(b) = t.barriers[decl as usize] {
                        out[b.index()] = true;
                    }
                }
            }
        }
    }
    out
}

/// Whether register `r` of the threads running `code` is ever read: by an
/// expression of the code, as a wait's token, or by an assertion (which
/// may read any thread's registers). A result written to a register never
/// read can tell no step, rule or assertion anything; only the final
/// register values of an outcome set show it.
pub(crate) fn reg_read(p: &Program, code: &Code, r: RegId) -> bool {
    fn reads(e: &CExpr, r: RegId) -> bool {
        match e {
            CExpr::Reg(x) | CExpr::ThreadReg(_, x) => *x == r,
            CExpr::Unary(_, x) => reads(x, r),
            CExpr::Binary(_, a, b) => reads(a, r) || reads(b, r),
            CExpr::Int(_) | CExpr::Builtin(_) | CExpr::Loc(_) | CExpr::LocInst(_) => false,
        }
    }
    code.instrs.iter().any(|i| {
        i.kind.exprs().into_iter().any(|e| reads(e, r))
            || matches!(&i.kind, InstrKind::Barrier { op: BarrierOp::Wait(w), .. } if w.token == Some(r))
    }) || p.asserts.iter().any(|a| reads(&a.cond, r))
}
