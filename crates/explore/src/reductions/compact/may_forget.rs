//! Compaction's cheap pre-test ([`System::may_forget`]): whether
//! [`System::compact`] may forget anything of a state, over the explorer's
//! executes-before instead of the execution's closure.

use crate::analysis::history::ExecutesBefore;
use crate::semantics::System;
use crate::state::{HKind, State, LAUNCH};
use bc_graph::*;
use rustc_hash::FxHashMap as HashMap;

impl System<'_> {
    /// Whether [`System::compact`] may forget anything of `s`: a necessary
    /// condition, over the explorer's executes-before (`vc`, per event a
    /// prefix length per thread) instead of the execution's closure. In a
    /// warp-specialized pipeline 99% of the states have nothing to forget,
    /// and building the execution and its closure (quadratic in a history
    /// of a thousand events) to find that out was most of the time per
    /// state; this test is O(events x threads).
    ///
    /// It follows `compact`'s definitions: an event is settled when every
    /// live thread that may still touch its object (may write it, for a
    /// read) has a last event it executes before (its own thread's last
    /// event need not: program order), and closed when every event before
    /// it is settled too (per thread, the events before it are a prefix,
    /// which must lie before the thread's first unsettled event).
    /// Something may be forgotten only if some event has no effect, or a
    /// plain access, an inval of a barrier initialized since or a join is
    /// closed, or some barrier that `compact` would consider has all its
    /// events outside its open phase closed (a completed wait: everything
    /// before it settled), spent arrives admitted leniently (an arrive with
    /// everything before it settled; a wait with everything before it
    /// settled or an arrive on the barrier). Under `verify_encoding` the search checks that
    /// `compact` forgets nothing where this says so.
    pub(crate) fn may_forget(&self, s: &State, vc: &ExecutesBefore, alive: &[usize]) -> bool {
        if s.hist.iter().flatten().any(|e| matches!(e.kind, HKind::NoEffect(_))) {
            return true;
        }
        let nt = s.threads.len();
        let last = |u: usize| s.hist[u].len().checked_sub(1).map(|po| (u as u32, po as u32));
        let mut touchers: HashMap<(Target, bool), Vec<usize>> = HashMap::default();
        let mut settled: Vec<Vec<bool>> = Vec::with_capacity(nt);
        for (t, h) in s.hist.iter().enumerate() {
            let mut row = Vec::with_capacity(h.len());
            for (po, ev) in h.iter().enumerate() {
                let read = matches!(ev.kind, HKind::Read);
                let us = touchers
                    .entry((ev.target, read))
                    .or_insert_with(|| self.touchers(s, alive, ev.target, read));
                let e = (t as u32, po as u32);
                let own_last = last(t) == Some(e) && us.contains(&t);
                row.push(
                    us.iter()
                        .all(|&u| (own_last && u == t) || last(u).is_some_and(|l| vc.eb(e, l))),
                );
            }
            settled.push(row);
        }
        // Per thread, its first unsettled event (its event count if none).
        let first_unsettled: Vec<u32> = settled
            .iter()
            .map(|row| row.iter().position(|&x| !x).unwrap_or(row.len()) as u32)
            .collect();
        let with_events: Vec<usize> = (0..nt).filter(|&u| !s.hist[u].is_empty()).collect();
        let preds_settled = |e: (u32, u32)| with_events.iter().all(|&u| vc.prefix(e, u) <= first_unsettled[u]);
        let closed = |e: (u32, u32)| settled[e.0 as usize][e.1 as usize] && preds_settled(e);
        // As `compact`: a generic write an async-proxy access may still
        // follow stays until a settled proxy fence of its writer follows it.
        let proxy_held = |t: usize, po: usize, ev: &crate::state::HEvent| {
            let (true, HKind::Write, Target::Loc(l)) = (self.p.proxy_events, &ev.kind, ev.target) else {
                return false;
            };
            let tid = ThreadId(t as u32);
            if !self.p.async_loc(l) || self.p.async_agent(tid) {
                return false;
            }
            let fence = |e: &crate::state::HEvent| e.kind == HKind::Fence(FenceScope::ProxyAsync);
            if self.p.threads[t].kind == ThreadKind::Copy {
                return !s.hist.iter().enumerate().any(|(u, h)| {
                    (h.iter().enumerate())
                        .any(|(k, f)| fence(f) && settled[u][k] && vc.eb((t as u32, po as u32), (u as u32, k as u32)))
                });
            }
            !(po + 1..s.hist[t].len()).any(|k| fence(&s.hist[t][k]) && settled[t][k])
        };
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                let e = (t as u32, po as u32);
                let forgettable_kind = match ev.kind {
                    HKind::Write => !proxy_held(t, po, ev),
                    HKind::Read | HKind::Join => true,
                    HKind::Inval => !self.still_invalid(s, ev.target),
                    _ => false,
                };
                if forgettable_kind && closed(e) {
                    return true;
                }
            }
        }
        (0..self.p.barriers.len()).any(|b| {
            let bar = &s.bars[b];
            let start = (s.bmo[b].first() == Some(&(LAUNCH, b as u32))) as u32;
            if self.an.pinned[b] || bar.invalid || bar.settled_len <= start {
                return false;
            }
            let cuttable = self.cuttable(s, b);
            if !bar.done.is_empty() && cuttable == 0 {
                return false;
            }
            if self.init_unpublished(s, b, &|t, po| settled[t as usize][po as usize]) {
                return false;
            }
            let open: &[(u32, u32)] = bar.open.as_ref().map_or(&[], |p| &p.members[..]);
            let target = Target::Barrier(BarrierId(b as u32));
            // As `compact`'s spent arrives, leniently: an arrive with
            // everything before it settled, a wait with everything before
            // it settled or an arrive on `b`.
            let relax = self.spends_arrives(b);
            let arrive_on_b = |u: usize, k: usize| {
                let ev = &s.hist[u][k];
                ev.target == target && matches!(ev.kind, HKind::Arrive(..))
            };
            let wait_ok = |e: (u32, u32)| {
                preds_settled(e)
                    || (relax
                        && with_events
                            .iter()
                            .all(|&u| (first_unsettled[u]..vc.prefix(e, u)).all(|k| arrive_on_b(u, k as usize))))
            };
            // `inside`: the events asked about (all, or the first cut's).
            let forgettable = |inside: &dyn Fn((u32, u32)) -> bool| {
                let mut any = false;
                let all = s.hist.iter().enumerate().all(|(t, h)| {
                    h.iter().enumerate().all(|(po, ev)| {
                        let e = (t as u32, po as u32);
                        if ev.target != target || matches!(ev.kind, HKind::Join) || open.contains(&e) || !inside(e) {
                            return true;
                        }
                        any = true;
                        match ev.kind {
                            HKind::Wait { .. } => wait_ok(e),
                            HKind::Arrive(..) => closed(e) || (relax && preds_settled(e)),
                            _ => closed(e),
                        }
                    })
                });
                any && all
            };
            if bar.done.is_empty() && forgettable(&|_| true) {
                return true;
            }
            // As `compact`: the history up to a cut (`cuts.rs`); if the
            // shortest prefix cannot go, no longer one can.
            if cuttable == 0 {
                return false;
            }
            let len = bar.cuts[0].0 as usize;
            let pos = super::cuts::bmo_positions(s, b);
            forgettable(&|e| super::cuts::phase_position(s, &pos, e).is_some_and(|p| p < len))
        })
    }
}
