//! Phase-counted barriers (`reductions/required.rs`, module doc: every
//! operation an init, an arrive counting one, a transaction operation or
//! a parity wait, reached
//! through its declaration alone, no end drops it, its phases sorted; no
//! copy issue arrives on it or holds it), and thread-counted ones (the
//! same, with every arrive a thread-counted arrive of one constant count
//! and every wait a plain one: PTX's named `bar.sync`/`bar.arrive` pairs).

use bc_graph::*;

/// Per barrier instance, whether it is phase-counted (module text): every
/// operation on it an init, an arrive counting one (with or without
/// transaction bytes), a transaction operation or a parity wait,
/// reached through its declaration alone; no thread's end drops it; its
/// phases sorted.
pub(crate) fn phase_counted_barriers(p: &Program, sortable: &[bool]) -> Vec<bool> {
    let mut out = counted_candidates(p, sortable);
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

/// Per barrier instance, its count `K` when it is thread-counted
/// (`reductions/required.rs`, "Thread-counted barriers"): its phases
/// sorted, reached through its declaration alone, no end drops it, no copy
/// issue arrives on it or holds it; every arrive a thread-counted arrive
/// written with the constant count `K` (`bar.sync ID, K` and `bar.arrive
/// ID, K`: every phase completes at exactly `K` arrivals, and no arrival's
/// count disagrees with another's), carrying nothing else (no predicate,
/// value, mask, transaction or result: `bar.red` is left out); every wait
/// a plain one, which waits for the phase its thread's arrive joined
/// (`System::participates_in`); no init, drop or invalidation.
pub(crate) fn thread_counted_barriers(p: &Program, sortable: &[bool]) -> Vec<Option<i64>> {
    let ok = counted_candidates(p, sortable);
    let uniform = crate::analysis::lockstep::uniform_thread_counts(p);
    let mut out: Vec<Option<i64>> = (0..p.barriers.len()).map(|b| uniform[b].filter(|_| ok[b])).collect();
    crate::analysis::ops::for_each_barrier_op(p, |op, result, sel, b| {
        let ok = matches!(sel, BarrierSel::Decl(_))
            && result.is_none()
            && match op {
                BarrierOp::Arrive(a) => {
                    a.count_match
                        && a.arrivals.is_none()
                        && a.mask.is_none()
                        && a.pred.is_none()
                        && a.value.is_none()
                        && a.tx.is_none()
                        && !a.object
                        && !a.collective
                }
                BarrierOp::Wait(w) => w.parity.is_none() && w.token.is_none() && w.reduce.is_none() && !w.poll,
                _ => false,
            };
        if !ok {
            out[b.index()] = None;
        }
    });
    out
}

/// The barriers [`phase_counted_barriers`] and [`thread_counted_barriers`]
/// start from: sorted, no end drops them, no copy issue holds them or
/// starts its agent on them.
fn counted_candidates(p: &Program, sortable: &[bool]) -> Vec<bool> {
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
    out
}
