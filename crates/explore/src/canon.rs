//! Phase-order canonicalization: the arrivals of one phase are kept sorted
//! by (thread, program order) instead of in the order they happened, so the
//! N! arrival orders of a phase meet in one state (docs/explorer.md).
//!
//! Only for *isolated* barrier instances - every thread that may operate on
//! one (its body names it, or its end may drop it) may operate on no other
//! barrier instance (a program's single barrier; each block's
//! `__syncthreads` barrier in a kernel of several blocks) -
//! whose operations carry no expected-count update, count (but one thread
//! count written alike on every arrive of the instance) or mask key,
//! transaction count, init or token (tokens are fine on a lockstep
//! barrier, see fuse.rs): then every order of a phase's members gives the
//! same counts and completes at the same member count, and no member of a
//! phase executes before another member of another thread (that would need
//! a wait, by a thread of the barrier, so on the barrier itself, on a
//! completed phase containing an operation after the first member, and
//! phases are contiguous in bmo), so the sorted bmo is consistent with
//! executes-before.

use crate::state::{HKind, Members, State};
use crate::system::System;
use bc_graph::*;

/// Per barrier instance, whether its phases may be sorted.
pub(crate) fn sortable_barriers(p: &Program, lockstep: &[bool]) -> Vec<bool> {
    let mut out = vec![true; p.barriers.len()];
    let uniform = crate::fuse::uniform_thread_counts(p);
    for (i, t) in p.threads.iter().enumerate() {
        let named: Vec<usize> = crate::por::barrier_instances(p, i).iter().map(|b| b.index()).collect();
        if named.len() > 1 {
            for &b in &named {
                out[b] = false;
            }
            continue;
        }
        let Some(&b) = named.first() else { continue };
        if !sortable_ops(p, t, lockstep[b], uniform[b].is_some()) {
            out[b] = false;
        }
    }
    out
}

/// Whether every barrier operation of thread `t`'s body is plain enough
/// for sorting (see the module text); `tokens_ok` on a lockstep barrier;
/// `counted_ok` where every arrive writes the same constant thread count
/// (`fuse::uniform_thread_counts`: every order completes at that count).
fn sortable_ops(p: &Program, t: &ThreadInfo, tokens_ok: bool, counted_ok: bool) -> bool {
    for ins in &p.codes[t.code.index()].instrs {
        if let InstrKind::Barrier { op, result, .. } = &ins.kind {
            let plain = match op {
                // A thread-counted arrive without a count (`__syncthreads`)
                // always counts the whole block: a plain arrive.
                BarrierOp::Arrive(a) => (a.set_count.is_none() || (a.count_match && counted_ok)) && a.mask.is_none(),
                BarrierOp::Wait(w) => (tokens_ok || w.token.is_none()) && w.parity.is_none(),
                BarrierOp::Join | BarrierOp::Drop | BarrierOp::ArriveDrop { .. } => true,
                BarrierOp::Init(_) | BarrierOp::ExpectTx(_) | BarrierOp::CompleteTx(_) | BarrierOp::Inval => false,
            };
            if !plain || (!tokens_ok && matches!(result, Some(BarrierResult::Token(_)))) {
                return false;
            }
        }
    }
    true
}

impl System<'_> {
    /// Sorts the arrivals of each phase of the sortable barriers, where
    /// sound (see above).
    pub(crate) fn canonicalize(&self, s: &mut State) {
        for (b, &sortable) in self.an.sortable.iter().enumerate() {
            if sortable {
                self.sort_phases(s, b);
            }
        }
    }

    /// Sorts the arrivals of each phase of barrier `b`.
    fn sort_phases(&self, s: &mut State, b: usize) {
        let nphases = s.bars[b].open.iter().count() + s.bars[b].done.len();
        for i in 0..nphases {
            let members = {
                let bar = &s.bars[b];
                let ph = if i < bar.open.iter().count() {
                    bar.open.as_ref()
                } else {
                    bar.done.get(i - bar.open.iter().count())
                };
                match ph {
                    Some(p) => p.members.clone(),
                    None => continue,
                }
            };
            if members.len() < 2 || members.windows(2).all(|w| w[0] <= w[1]) {
                continue;
            }
            let mut sorted = members.to_vec();
            sorted.sort_unstable();
            // The members sit in one contiguous run of bmo.
            let positions: Vec<usize> = s.bmo[b]
                .iter()
                .enumerate()
                .filter(|(_, k)| sorted.binary_search(k).is_ok())
                .map(|(j, _)| j)
                .collect();
            if positions.len() != members.len() || positions.windows(2).any(|w| w[1] != w[0] + 1) {
                continue;
            }
            for (j, k) in positions.iter().zip(&sorted) {
                s.bmo[b][*j] = *k;
            }
            // The phase record: members, and the first instruction site.
            let site = sorted
                .iter()
                .map(|&(t, po)| (self.p.threads[t as usize].code.0, s.hist[t as usize][po as usize].pc))
                .min();
            let sorted = Members::new(sorted);
            let bar = &mut s.bars[b];
            let open_n = bar.open.iter().count();
            let ph = if i < open_n {
                bar.open.as_mut()
            } else {
                bar.done.get_mut(i - open_n)
            };
            if let Some(ph) = ph {
                ph.members = sorted.clone();
                ph.site = site;
            }
            // Waits that took this phase list it sorted too, sharing the
            // record's list. A list that is the record's old one (shared,
            // or equal to it) is one; one whose first entry is no member is
            // none (the test in between sorts a copy).
            for evs in &mut s.hist {
                for ev in evs {
                    if let HKind::Wait { participants, .. } = &mut ev.kind {
                        if participants.len() != sorted.len() || sorted.binary_search(&participants[0]).is_err() {
                            continue;
                        }
                        let same = *participants == members || {
                            let mut p = participants.to_vec();
                            p.sort_unstable();
                            p == *sorted
                        };
                        if same {
                            *participants = sorted.clone();
                        }
                    }
                }
            }
        }
    }
}
