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
