//! Barriers whose history compaction must keep whole: token barriers
//! whose tokens may travel through memory, and barriers some thread waits
//! on both with a token and by parity or plainly
//! (`reductions/compact.rs`).

use bc_graph::*;

/// Barriers whose history is never forgotten: when some store, exchange
/// or compare-and-swap writes a register value to memory (a token could
/// travel to another thread), those of tokens. (Barriers of parity waits
/// were pinned too, for their last completed phase; that phase now stays
/// in the barrier's record while a parity wait may take it,
/// `System::collect`, and compaction waits for it like for any pending
/// phase; their phase numbers keep counting, as tokens' do.)
pub(crate) fn pinned_barriers(p: &Program) -> Vec<bool> {
    fn reads_reg(e: &CExpr) -> bool {
        match e {
            CExpr::Reg(_) | CExpr::ThreadReg(..) => true,
            CExpr::Unary(_, x) => reads_reg(x),
            CExpr::Binary(_, a, b) => reads_reg(a) || reads_reg(b),
            _ => false,
        }
    }
    let escapes = p.codes.iter().flat_map(|c| &c.instrs).any(|i| match &i.kind {
        InstrKind::Store { value, .. } | InstrKind::Rmw { value, .. } => reads_reg(value),
        InstrKind::Cas { expected, new, .. } => reads_reg(expected) || reads_reg(new),
        _ => false,
    });
    let mut out = vec![false; p.barriers.len()];
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier { op, sel, result } = &ins.kind else {
                continue;
            };
            let decls = sel.decls(&p.groups);
            let token = matches!(op, BarrierOp::Wait(w) if w.token.is_some())
                || matches!(result, Some(BarrierResult::Token(_)));
            if token && escapes {
                for d in decls {
                    if let Some(b) = t.barriers[d as usize] {
                        out[b.index()] = true;
                    }
                }
            }
        }
    }
    // A token wait may return on a phase its thread took by another form
    // (`HKind::Wait::took`), which forgetting the phase would lose.
    for (o, m) in out.iter_mut().zip(mixed_waits(p)) {
        *o |= m;
    }
    out
}

/// Per barrier: some thread can reach both a token wait on it and a parity
/// or plain wait on it.
pub(crate) fn mixed_waits(p: &Program) -> Vec<bool> {
    let nb = p.barriers.len();
    let mut out = vec![false; nb];
    // Per barrier, the last thread (plus one) seen to reach a token wait
    // on it, and a wait of another form: marks of earlier threads are
    // stale, so no per-thread table of every barrier is cleared (that was
    // quadratic, issue 33).
    let (mut token, mut other) = (vec![0usize; nb], vec![0usize; nb]);
    for (i, t) in p.threads.iter().enumerate() {
        let mark = i + 1;
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier {
                op: BarrierOp::Wait(w),
                sel,
                ..
            } = &ins.kind
            else {
                continue;
            };
            for d in sel.decls(&p.groups) {
                if let Some(b) = t.barriers[d as usize] {
                    let b = b.index();
                    if w.token.is_some() {
                        token[b] = mark;
                    } else {
                        other[b] = mark;
                    }
                    out[b] |= token[b] == mark && other[b] == mark;
                }
            }
        }
    }
    out
}
