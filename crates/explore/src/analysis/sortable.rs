//! Which barrier instances keep their phases' members sorted
//! (`reductions/canon.rs`, module doc: no order-sensitive operation), which
//! of them are isolated (no thread shares them with another barrier), which
//! are sorted by segments (transaction operations) and which are ordered by
//! their arrivals' thread counts (`bar.sync ID, N` with different `N`:
//! canon.rs, "Thread counts that differ").

use bc_graph::*;

/// Per barrier instance, whether its phases may be sorted, whether it is
/// isolated, whether it is sorted by segments (it has transaction
/// operations: see [`System::sort_phases`]), and whether it is ordered by
/// thread counts instead (not sortable only because its thread-counted
/// arrives write different counts) (see the module text).
pub(crate) fn sortable_barriers(p: &Program, lockstep: &[bool]) -> Sortable {
    let nb = p.barriers.len();
    let mut sortable = vec![true; nb];
    let mut tx = vec![false; nb];
    let mut isolated = vec![true; nb];
    let mut grouped = vec![false; nb];
    // Thread-counted arrives with counts that differ, and barriers with
    // another operation that keeps them unsorted.
    let mut keyed = vec![false; nb];
    let mut unkeyed = vec![false; nb];
    let uniform = crate::analysis::lockstep::uniform_thread_counts(p);
    let lone = crate::analysis::lockstep::lone_masks(p);
    for (i, t) in p.threads.iter().enumerate() {
        let named: Vec<usize> = crate::analysis::groups::barrier_instances(p, i)
            .iter()
            .map(|b| b.index())
            .collect();
        if named.len() > 1 {
            for &b in &named {
                isolated[b] = false;
            }
        }
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier { op, sel, result } = &ins.kind else {
                continue;
            };
            let group = !matches!(sel, BarrierSel::Decl(_));
            for b in sel.decls(&p.groups).into_iter().filter_map(|d| t.barriers[d as usize]) {
                let b = b.index();
                let (tokens_ok, counted_ok) = (lockstep[b], uniform[b].is_some());
                let mut keyed_arrive = false;
                let plain = match op {
                    // A thread-counted arrive without a count
                    // (`__syncthreads`) always counts the whole block: a
                    // plain arrive.
                    BarrierOp::Arrive(a) => {
                        tx[b] |= a.tx.is_some();
                        let shape = (a.mask.is_none() || lone[b]) && a.arrivals.is_none();
                        keyed_arrive = shape && a.count_match && a.set_count.is_some() && !counted_ok;
                        (a.set_count.is_none() || (a.count_match && counted_ok)) && shape
                    }
                    BarrierOp::Wait(w) => (tokens_ok || w.token.is_none()) && !w.poll,
                    BarrierOp::Join | BarrierOp::Drop | BarrierOp::ArriveDrop { .. } | BarrierOp::Init(_) => true,
                    // Sorted by segments: a transaction operation stays
                    // where it is.
                    BarrierOp::ExpectTx(_) | BarrierOp::CompleteTx(_) => {
                        tx[b] = true;
                        true
                    }
                    BarrierOp::Inval => false,
                };
                // A token no instruction or assertion reads leaves the
                // phase numbers to the final registers alone, which
                // sorting a phase's members does not change.
                let code = &p.codes[t.code.index()];
                let token =
                    matches!(result, Some(BarrierResult::Token(r)) if crate::analysis::ops::reg_read(p, code, *r));
                grouped[b] |= group;
                if !plain || (!tokens_ok && token) {
                    sortable[b] = false;
                }
                keyed[b] |= keyed_arrive;
                if (!plain && !keyed_arrive) || (!tokens_ok && token) {
                    unkeyed[b] = true;
                }
            }
        }
    }
    // A group selector may reach any instance of its group: where that is
    // not the thread's only instance, the instance stays unsorted.
    for b in 0..nb {
        if grouped[b] && !isolated[b] {
            sortable[b] = false;
        }
    }
    let segmented = (0..nb).map(|b| sortable[b] && tx[b]).collect();
    let count_keyed = (0..nb)
        .map(|b| keyed[b] && !unkeyed[b] && !sortable[b] && !tx[b] && (!grouped[b] || isolated[b]))
        .collect();
    Sortable {
        sortable,
        isolated,
        segmented,
        count_keyed,
    }
}

/// What [`sortable_barriers`] finds, per barrier instance.
pub(crate) struct Sortable {
    /// Its phases may be sorted.
    pub(crate) sortable: Vec<bool>,
    /// No thread that operates on it operates on another barrier.
    pub(crate) isolated: Vec<bool>,
    /// Sortable, with transaction operations (sorted by segments).
    pub(crate) segmented: Vec<bool>,
    /// Not sortable only because its thread-counted arrives write
    /// different counts: its phases are put in the least order that
    /// keeps each prefix's count (canon.rs, "Thread counts that differ").
    pub(crate) count_keyed: Vec<bool>,
}
