//! Phase-counted barriers (`reductions/required.rs`, module doc: every
//! operation an init, an arrive counting one, a transaction operation or
//! a parity wait, reached
//! through its declaration alone, no end drops it, its phases sorted; no
//! copy issue arrives on it or holds it).

use bc_graph::*;

/// Per barrier instance, whether it is phase-counted (module text): every
/// operation on it an init, an arrive counting one (with or without
/// transaction bytes), a transaction operation or a parity wait,
/// reached through its declaration alone; no thread's end drops it; its
/// phases sorted.
pub(crate) fn phase_counted_barriers(p: &Program, sortable: &[bool]) -> Vec<bool> {
    let mut out: Vec<bool> = sortable.to_vec();
    for (i, b) in p.barriers.iter().enumerate() {
        if b.dropped_at_end_by_some(p.threads.len()) {
            out[i] = false;
        }
    }
    // An issue arrives on its agent's start barrier inside its step, and
    // one that holds a barrier raises its pending count there: operations
    // no instruction shows (required.rs walks instructions).
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            if let InstrKind::CopyIssue { hold: Some(d), .. } = ins.kind {
                if let Some(b) = t.barriers[d as usize] {
                    out[b.index()] = false;
                }
            }
        }
    }
    for (i, o) in out.iter_mut().enumerate() {
        if p.is_copy_start(BarrierId(i as u32)) {
            *o = false;
        }
    }
    crate::analysis::ops::for_each_barrier_op(p, |op, result, sel, b| {
        let ok = matches!(sel, BarrierSel::Decl(_))
            && match op {
                BarrierOp::Init(_) => true,
                BarrierOp::Arrive(a) => {
                    // An `arrive.expect_tx` counts one too; its bytes
                    // only hold the phase back (required.rs).
                    a.set_count.is_none()
                        && a.arrivals.is_none()
                        && !a.count_match
                        && a.mask.is_none()
                        && a.pred.is_none()
                        && !a.object
                        && !matches!(result, Some(BarrierResult::IsFirst(_) | BarrierResult::Reduce(_)))
                }
                BarrierOp::Wait(w) => w.parity.is_some() && w.token.is_none() && w.reduce.is_none() && !w.poll,
                BarrierOp::ExpectTx(_) | BarrierOp::CompleteTx(_) => true,
                _ => false,
            };
        if !ok {
            out[b.index()] = false;
        }
    });
    out
}
