//! Phase-counted barriers (`reductions/required.rs`, module doc: every
//! operation an init, an arrive counting one or a parity wait, reached
//! through its declaration alone, no end drops it, its phases sorted).

use bc_graph::*;

/// Per barrier instance, whether it is phase-counted (module text): every
/// operation on it an init, an arrive counting one or a parity wait,
/// reached through its declaration alone; no thread's end drops it; its
/// phases sorted.
pub(crate) fn phase_counted_barriers(p: &Program, sortable: &[bool]) -> Vec<bool> {
    let mut out: Vec<bool> = sortable.to_vec();
    for (i, b) in p.barriers.iter().enumerate() {
        if b.dropped_at_end_by_some(p.threads.len()) {
            out[i] = false;
        }
    }
    crate::analysis::ops::for_each_barrier_op(p, |op, result, sel, b| {
        let ok = matches!(sel, BarrierSel::Decl(_))
            && match op {
                BarrierOp::Init(_) => true,
                BarrierOp::Arrive(a) => {
                    a.set_count.is_none()
                        && a.tx.is_none()
                        && a.arrivals.is_none()
                        && !a.count_match
                        && a.mask.is_none()
                        && a.pred.is_none()
                        && !a.object
                        && !matches!(result, Some(BarrierResult::IsFirst(_) | BarrierResult::Reduce(_)))
                }
                BarrierOp::Wait(w) => w.parity.is_some() && w.token.is_none() && w.reduce.is_none() && !w.poll,
                _ => false,
            };
        if !ok {
            out[b.index()] = false;
        }
    });
    out
}
