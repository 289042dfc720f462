//! Completed-wait fusion: a wait whose phase has completed is taken in the
//! same transition as the step that made that possible (docs/explorer.md,
//! "Completed-wait fusion").
//!
//! A wait of thread `u` qualifies when it can complete on exactly one
//! completed phase, with no finding, `u` has started, `u` does not end in
//! the local steps after it (an end may drop barriers or start the next
//! kernel of a stream), and its barrier is *lockstep* (below). Such a wait
//! is a persistent set on its own: it reads only a completed phase, which
//! no other step can change or take away (a completed phase stays until no
//! wait can still take it), and it writes only `u`'s registers, join mask
//! and history, which no other step reads. So taking it first reaches
//! every execution, deadlock and finding that delaying it reaches, and
//! removes only the interleavings that differ in when the wait ran. The
//! state graph's cycles keep their threads: a fused wait is taken, never
//! postponed.
//!
//! What a delayed wait could see differently is a *later* phase: a wait may
//! complete on any completed phase it is entitled to, and a token wait is
//! stale once the barrier is two phases on. Both need a later phase to
//! complete while `u` still sits at its wait. A barrier is lockstep when
//! that cannot happen: its launch count and the count of every init of it
//! (a constant; `mbarrier.init M, N` by one thread before a
//! `__syncthreads`) equal the number of threads that arrive on it, its
//! expected count never changes otherwise except by a thread's end (no
//! explicit drop, arrive-drop, count or mask operation; a transaction
//! count only holds a phase back), no parity wait, no operation through a joined-barrier
//! group), every thread waits on it between two arrives, every thread that
//! waits on it also arrives on it (a thread that only waits holds back no
//! phase, so later phases can complete while it sits at its wait), and no
//! thread whose end drops it can end after an arrive without a wait in
//! between.
//! Then, by induction over phases, every phase needs one arrive of every
//! thread that has not ended (a thread's end-drop falls in a phase after
//! the one it waited on last, where it no longer arrives), so no phase
//! after `u`'s can complete before `u` arrives again, which is after its
//! wait. Without the last condition a thread's arrive and its end-drop can
//! fall in one phase, which then completes one live arrive short.
//!
//! **Arrive fusion.** On a barrier whose arrives fuse
//! ([`arrive_fusible_barriers`]: lockstep, phases sorted by `canon.rs`, no
//! arrive returning isfirst or a reduction, every execution of the program
//! finite), an arrive of thread `u` into the open phase is a persistent set
//! on its own too. It changes only `u` and the open phase; the phase
//! cannot complete without it (lockstep: every live thread's arrive or end
//! is needed), so no wait it enables can run before it; any other arrive
//! or end-drop on the barrier commutes with it (the phase's members are
//! kept sorted, the counts add up the same and the phase completes at the
//! later of the two, in either order); steps on other objects are
//! independent. So a chain of such arrives, with the waits they complete,
//! is one transition. The arrive that opens a phase is not fused: the
//! state between two phases is stored, and there compaction forgets the
//! completed phase (it does so only while no completed phase is pending;
//! fusing across phases kept them, and symmetry then reordered a phase no
//! barrier record knew, which canonicalization could not sort back). A
//! fused wait may then also end its thread ([`System::end_fusible`]) when
//! its end drops only that barrier, which commutes as an arrive does. A
//! fused arrive, like a fused wait, is taken only when it raises no
//! finding; otherwise it is undone and left to the search. Without a state
//! graph (finite programs) no fairness question arises.
//!
//! **Access fusion.** In a finite program, a plain access of a started
//! thread to a location that no other thread can still access in conflict
//! (write for a read; any access for a write) is a persistent set on its
//! own: it appends only to its thread's history, plain accesses of two
//! threads commute, and executes-before into and out of it is fixed by its
//! thread's history when it becomes enabled. Its thread's end comes with
//! it when the end drops at most one barrier, one whose arrives fuse
//! ([`System::end_drop_fusible`]).

use crate::choices::WaitPlan;
use crate::state::{State, Status};
use crate::system::System;
use crate::worker::Worker;
use crate::{Choice, Step};
use bc_graph::*;
use std::collections::HashMap;

impl System<'_> {
    /// Whether some thread may still init barrier `b`: one not finished
    /// that can reach an init of it from its pc (a thread not launched yet
    /// from its start).
    pub(crate) fn init_pending(&self, s: &State, b: usize) -> bool {
        (0..s.threads.len()).any(|u| {
            s.threads[u].status != Status::Done
                && crate::compact::reach_at(
                    &self.an.reach_inits,
                    self.p.threads[u].code.index(),
                    s.threads[u].pc as usize,
                )
                .iter()
                .enumerate()
                .any(|(d, &on)| on && self.p.threads[u].barriers[d] == Some(BarrierId(b as u32)))
        })
    }

    /// The choice of thread `t`'s wait and its barrier, when it qualifies
    /// for fusion (threads named under the renaming `ident`).
    pub(crate) fn fusible(&self, s: &State, t: usize, ident: &[u32]) -> Option<(Choice, usize)> {
        let th = &s.threads[t];
        if !th.started {
            return None;
        }
        let (op @ BarrierOp::Wait(spec), b) = self.next_barrier_op(s, t)? else {
            return None;
        };
        if spec.parity.is_some() || spec.poll || !self.an.lockstep[b] {
            return None;
        }
        if self.an.inited[b] && self.init_pending(s, b) {
            return None;
        }
        if self.an.must_end[self.p.threads[t].code.index()][th.pc as usize + 1] && !self.end_fusible(s, t, b) {
            return None;
        }
        if self.neutral(s, t, b, op, ident).is_some() {
            return None;
        }
        match self.wait_plan(s, t, b, spec, ident) {
            WaitPlan::Phases(idx, _, None) if idx.len() == 1 => Some((
                Choice {
                    thread: t as u32,
                    phase: Some(idx[0]),
                },
                b,
            )),
            _ => None,
        }
    }

    /// The choice of thread `t`'s arrive and its barrier, when it
    /// qualifies for arrive fusion: an arrive into the open phase of a
    /// barrier of [`Analyses::fused_arrives`] (whose arrives carry no count
    /// or mask, `lockstep_barriers`, and return no isfirst or reduction,
    /// [`arrive_fusible_barriers`]) that has an effect. Such an arrive is a persistent set on its own (module doc,
    /// "Arrive fusion").
    ///
    /// [`Analyses::fused_arrives`]: crate::system::Analyses::fused_arrives
    pub(crate) fn fusible_arrive(&self, s: &State, t: usize, ident: &[u32]) -> Option<(Choice, usize)> {
        // Only into a phase some arrive opened: a chain stops at each
        // phase's first arrive, so the state between two phases is stored
        // and normalized, where compaction forgets the completed phase
        // (it forgets only while no completed phase is pending).
        self.arrive_on_fused(s, t, ident)
            .filter(|&(_, b)| s.bars[b].open.is_some())
    }

    /// The choice of thread `t`'s arrive and its barrier, when it is an
    /// arrive with an effect on a barrier of [`Analyses::fused_arrives`],
    /// into the open phase or opening one. Either way it is a persistent
    /// set on its own (module doc, "Arrive fusion"; an arrive that opens a
    /// phase commutes with the other opening arrives as one into an open
    /// phase does: the phase's members are sorted): fusion takes the ones
    /// into an open phase, and the search takes an opening one as the only
    /// successor of its state ([`System::persistent`]).
    ///
    /// [`Analyses::fused_arrives`]: crate::system::Analyses::fused_arrives
    pub(crate) fn arrive_on_fused(&self, s: &State, t: usize, ident: &[u32]) -> Option<(Choice, usize)> {
        let (op @ BarrierOp::Arrive(_), b) = self.next_barrier_op(s, t)? else {
            return None;
        };
        if !self.an.fused_arrives[b] || self.neutral(s, t, b, op, ident).is_some() {
            return None;
        }
        Some((
            Choice {
                thread: t as u32,
                phase: None,
            },
            b,
        ))
    }

    /// Whether thread `t`'s next instruction is an arrive on a
    /// `cuda::barrier` object or a cooperative-groups `barrier_arrive`,
    /// where arrive-before-wait is judged (the arrive that completes a
    /// phase, or any group arrival, leaves its thread owing a wait).
    pub(crate) fn owes_on_arrive(&self, t: usize, s: &State) -> bool {
        matches!(self.next_barrier_op(s, t), Some((BarrierOp::Arrive(spec), _)) if spec.object || spec.collective)
            && self.p.model.rules.has(bc_models::Rule::ArriveBeforeWait)
    }

    /// The barrier operation running thread `t` is at, with the barrier
    /// instance it acts on (none when its selector names none).
    fn next_barrier_op(&self, s: &State, t: usize) -> Option<(&BarrierOp, usize)> {
        let th = &s.threads[t];
        if th.status != Status::Running {
            return None;
        }
        let InstrKind::Barrier { op, sel, .. } = &self.p.instr(ThreadId(t as u32), th.pc)?.kind else {
            return None;
        };
        Some((op, self.resolve(s, t, *sel)?))
    }

    /// Whether thread `t`'s end may be taken with a fused wait on barrier
    /// `b` ("Arrive fusion" in the module doc): `b`'s arrives fuse, the
    /// thread belongs to no named kernel (whose last thread starts the
    /// next one), and the only barrier its end drops is `b`, where its
    /// drop commutes with the other members of the phase as an arrive does
    /// (sorted, and lockstep: the phase needs every live thread's arrive or
    /// end).
    pub(crate) fn end_fusible(&self, s: &State, t: usize, b: usize) -> bool {
        self.an.fused_arrives[b]
            && self.p.threads[t].kernel.is_none()
            && s.threads[t]
                .joined
                .iter()
                .all(|&d| d as usize == b || !self.p.barriers[d as usize].dropped_at_end_by(ThreadId(t as u32)))
    }

    /// The choice of thread `t`'s plain access, when it qualifies for
    /// access fusion (module doc, "Access fusion"): every execution is
    /// finite, and no other thread may still make a plain access to its
    /// location that conflicts with it (a write, or for a write any
    /// access). With it, what its end drops when the local steps after it
    /// end the thread: `None` when the end may not be fused, else the one
    /// barrier it drops, if any ([`System::end_drop_fusible`]).
    pub(crate) fn fusible_access(&self, s: &State, t: usize) -> Option<(Choice, Option<Option<usize>>)> {
        let th = &s.threads[t];
        if !self.an.finite || th.status != Status::Running || !th.started {
            return None;
        }
        let info = &self.p.threads[t];
        let (decl, write) = match self.p.instr(ThreadId(t as u32), th.pc)?.kind {
            InstrKind::Read { decl } => (decl, false),
            InstrKind::Write { decl } => (decl, true),
            _ => return None,
        };
        let l = System::loc(info, decl);
        let conflicts = (0..s.threads.len()).filter(|&u| u != t).any(|u| {
            let pc = match s.threads[u].status {
                Status::Done => return false,
                Status::NotLaunched => 0,
                Status::Running => s.threads[u].pc as usize,
            };
            let table = if write {
                &self.an.reach_accesses
            } else {
                &self.an.plain_writes
            };
            self.may_reach_loc(table, u, pc, l)
        });
        if conflicts {
            return None;
        }
        Some((
            Choice {
                thread: t as u32,
                phase: None,
            },
            self.end_drop_fusible(s, t),
        ))
    }

    /// Whether thread `t`'s end may be taken with a fused access: the
    /// thread belongs to no named kernel (whose last thread starts the
    /// next one), and its end drops at most one barrier, one whose arrives
    /// fuse, where the drop commutes with the other members of the open
    /// phase as an arrive does ("Arrive fusion"). The barrier dropped, if
    /// any; `None` when the end may not be fused.
    pub(crate) fn end_drop_fusible(&self, s: &State, t: usize) -> Option<Option<usize>> {
        if self.p.threads[t].kernel.is_some() {
            return None;
        }
        let mut dropped = s.threads[t]
            .joined
            .iter()
            .map(|&d| d as usize)
            .filter(|&d| self.p.barriers[d].dropped_at_end_by(ThreadId(t as u32)));
        match (dropped.next(), dropped.next()) {
            (None, _) => Some(None),
            (Some(b), None) if self.an.fused_arrives[b] => Some(Some(b)),
            _ => None,
        }
    }

    /// Completed-wait and arrive fusion: takes every fusible wait and
    /// arrive of `s` (in thread order, until none is left) and returns
    /// their steps. A step that raises a finding, changes a bmo other than
    /// its own (an arrive's) or its end-drop's, or ends its thread where
    /// the end is not fusible ([`System::end_fusible`]) is not taken.
    ///
    /// A step is tried on `s` itself, not on a copy (a copy of a state of
    /// T threads copies T histories and masks, once per fused step). A
    /// fusible step changes only its own thread (registers, pc, join mask,
    /// history) and its barrier (`bind`, `collect`, the open phase), and
    /// the local steps after it only its thread, unless the thread ends: a
    /// step whose end is not fusible is taken with the end held back
    /// (`Worker::hold_end`), and a step that is not taken is undone by
    /// putting back the saved thread and barrier and shortening the
    /// thread's history and the bmos.
    ///
    /// `budget` (during the search; none in a replay) is checked every 256
    /// threads tried: once it halts the search, fusion stops part way (the
    /// caller discards the state).
    pub(crate) fn fused_steps(
        &self,
        s: &mut State,
        w: &mut Worker,
        budget: Option<&crate::budget::Budget>,
    ) -> Vec<Step> {
        let mut steps = Vec::new();
        if !self.reductions.fuse {
            return steps;
        }
        let mut changed = true;
        let mut arrived = false;
        while changed {
            changed = false;
            for t in 0..s.threads.len() {
                if t % 256 == 255 && budget.is_some_and(|b| b.check().is_some()) {
                    return steps;
                }
                // The choice, the barrier it may change (its own, or the
                // one an access's fused end drops), whether it is an
                // arrive, and whether its thread may end with it.
                let (c, b, arrive, end_ok) = match self.fusible(s, t, &w.ident) {
                    Some((c, b)) => (c, Some(b), false, self.end_fusible(s, t, b)),
                    None => match self.fusible_arrive(s, t, &w.ident) {
                        // An arrive's thread may end with it when the
                        // end drops no barrier (it then changes only the
                        // thread's status; a counted named barrier's
                        // arrivers end so).
                        Some((c, b)) => (c, Some(b), true, self.end_drop_fusible(s, t) == Some(None)),
                        None => match self.fusible_access(s, t) {
                            Some((c, end)) => (c, end.flatten(), false, end.is_some()),
                            None => continue,
                        },
                    },
                };
                let pending = w.pending.len();
                // Saved in reused scratch, so their vectors keep their
                // allocations.
                let (mut thread, mut bar) = w.fuse.take().unwrap_or_else(|| (s.threads[t].clone(), None));
                thread.clone_from(&s.threads[t]);
                if let Some(b) = b {
                    match &mut bar {
                        Some(saved) => saved.clone_from(&s.bars[b]),
                        None => bar = Some(s.bars[b].clone()),
                    }
                }
                let (hist_len, bmo_lens): (usize, Vec<usize>) = (s.hist[t].len(), s.bmo.iter().map(Vec::len).collect());
                #[cfg(debug_assertions)]
                let before = s.clone();
                w.hold_end = !end_ok;
                w.held_end = false;
                let step = self.step(s, c, w);
                w.hold_end = false;
                let quiet = w.pending.len() == pending;
                let ended = s.threads[t].status == Status::Done;
                // A wait or an access leaves every bmo as it is but for its
                // thread's end-drop; an arrive adds itself to its
                // barrier's.
                let bmo_same = s.bmo.iter().map(Vec::len).enumerate().all(|(i, n)| {
                    let own = Some(i) == b;
                    n == bmo_lens[i] + usize::from((arrive || ended) && own) || (n == bmo_lens[i] && own)
                });
                if quiet && bmo_same && !w.held_end && (s.threads[t].status == Status::Running || (end_ok && ended)) {
                    steps.push(step);
                    changed = true;
                    arrived |= arrive || b.is_some_and(|b| ended && self.an.fused_arrives[b]);
                } else {
                    w.pending.truncate(pending);
                    std::mem::swap(&mut s.threads[t], &mut thread);
                    if let (Some(b), Some(saved)) = (b, &mut bar) {
                        std::mem::swap(&mut s.bars[b], saved);
                    }
                    s.hist[t].truncate(hist_len);
                    for (o, &n) in s.bmo.iter_mut().zip(&bmo_lens) {
                        o.truncate(n);
                    }
                    #[cfg(debug_assertions)]
                    assert!(*s == before, "a fused step changed more than its thread and barrier");
                }
                w.held_end = false;
                w.fuse = Some((thread, bar));
            }
        }
        if arrived {
            // Fused arrives joined phases out of order; compaction, next,
            // must see them sorted, as after single steps.
            self.canonicalize(s);
        }
        steps
    }
}

/// Per barrier instance, the thread count `K` when every arrive on it is a
/// thread-counted arrive written with the same constant count (`bar.sync
/// 1, K` and `bar.arrive 1, K` alike; CUDA's counted named barrier): then
/// every phase completes at `K` arrivals whatever their order, and no
/// arrival's count can disagree with another's (count-mismatch), so the
/// count is no more order-sensitive than a plain arrive's. `None` for an
/// instance with another arrive (an expected-count update, the whole-block
/// form, another count) or none.
pub(crate) fn uniform_thread_counts(p: &Program) -> Vec<Option<i64>> {
    // Per instance: not seen yet, one count so far, or mixed.
    let mut seen: Vec<Option<Option<i64>>> = vec![None; p.barriers.len()];
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier {
                op: BarrierOp::Arrive(a),
                sel,
                ..
            } = &ins.kind
            else {
                continue;
            };
            let k = match (a.count_match, &a.set_count, &a.mask) {
                (true, Some(CExpr::Int(k)), None) => Some(*k),
                _ => None,
            };
            for d in sel.decls(&p.groups) {
                if let Some(b) = t.barriers[d as usize] {
                    let slot = &mut seen[b.index()];
                    *slot = match *slot {
                        None => Some(k),
                        Some(prev) if prev == k => Some(k),
                        Some(_) => Some(None),
                    };
                }
            }
        }
    }
    seen.into_iter().map(Option::flatten).collect()
}

/// Per barrier instance, whether an arrive on it with a lane mask is as
/// order-free as a plain arrive: the instance is not a `__syncwarp`
/// barrier, or no other mask of its warp names a lane its mask names
/// (one mask per warp, or disjoint ones such as cooperative-groups
/// tiles). An arrive on a mask barrier marks the lanes it names as strays
/// in the open phases of the warp's other masks that name them
/// (`System::other_mask`, for the syncwarp-mask rule): with overlapping
/// masks the order of that arrive and another mask's phase completion is
/// observable, so those instances are neither sorted nor fused.
pub(crate) fn lone_masks(p: &Program) -> Vec<bool> {
    // The mask barriers of each warp: a mask is compared with its warp's
    // others only (comparing every pair of instances was quadratic in the
    // program, issue 33).
    let mut by_warp: HashMap<u32, Vec<usize>> = HashMap::new();
    for (b, inst) in p.barriers.iter().enumerate() {
        if let Some(w) = &inst.syncwarp {
            by_warp.entry(w.warp).or_default().push(b);
        }
    }
    p.barriers
        .iter()
        .enumerate()
        .map(|(b, inst)| {
            let Some(w) = &inst.syncwarp else {
                return true;
            };
            !by_warp[&w.warp].iter().any(|&o| {
                o != b
                    && p.barriers[o]
                        .syncwarp
                        .as_ref()
                        .is_some_and(|x| x.named.iter().any(|t| w.named.contains(t)))
            })
        })
        .collect()
}

/// Per barrier instance, whether it is lockstep (see the module doc), and
/// whether a thread inits it (then it is lockstep only once no thread can
/// init it any more: [`System::init_pending`]).
pub(crate) fn lockstep_barriers(p: &Program) -> (Vec<bool>, Vec<bool>) {
    let nb = p.barriers.len();
    let uniform = uniform_thread_counts(p);
    let lone = lone_masks(p);
    let mut ok = vec![true; nb];
    // The constant counts of the inits of each instance (`None` once one
    // is not a constant).
    let mut inits: Vec<Option<Vec<i64>>> = vec![Some(Vec::new()); nb];
    let mut arrivers = vec![0i64; nb];
    // Per instance, the last thread (plus one) that arrives on it and that
    // waits on it, and the instances the current thread touches: no table
    // of every instance per thread (quadratic, issue 33).
    let (mut arrives_on, mut waits_on) = (vec![0usize; nb], vec![0usize; nb]);
    let mut touched: Vec<usize> = Vec::new();
    // Per (code, declarations), the declarations the alternation analysis
    // below rejects: computed once per code, not per thread.
    let mut alternation: HashMap<(usize, usize), (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (ti, t) in p.threads.iter().enumerate() {
        let code = &p.codes[t.code.index()];
        let mark = ti + 1;
        touched.clear();
        for ins in bc_graph::classes::live_instrs(p, ThreadId(ti as u32)) {
            let InstrKind::Barrier { op, sel, .. } = &ins.kind else {
                continue;
            };
            let d = match sel {
                BarrierSel::Decl(d) => *d,
                BarrierSel::JoinedOr { group, decl } => {
                    for g in p.groups[*group as usize].iter().chain([decl]) {
                        if let Some(b) = t.barriers[*g as usize] {
                            ok[b.index()] = false;
                        }
                    }
                    continue;
                }
                BarrierSel::Joined { group } => {
                    for &g in &p.groups[*group as usize] {
                        if let Some(b) = t.barriers[g as usize] {
                            ok[b.index()] = false;
                        }
                    }
                    continue;
                }
            };
            let Some(b) = t.barriers[d as usize].map(|b| b.index()) else {
                continue;
            };
            if matches!(op, BarrierOp::Arrive(_) | BarrierOp::Wait(_)) && arrives_on[b] != mark && waits_on[b] != mark {
                touched.push(b);
            }
            match op {
                BarrierOp::Arrive(a) => {
                    arrives_on[b] = mark;
                    // A thread-counted arrive without a count
                    // (`__syncthreads`) counts the whole block, like a
                    // plain arrive; with one it sets the phase's count,
                    // which is lockstep when every arrive on the barrier
                    // writes the same constant count and that count is the
                    // number of threads that arrive on it (below).
                    if (a.set_count.is_some() && uniform[b].is_none())
                        || (a.mask.is_some() && !lone[b])
                        || a.arrivals.is_some()
                    {
                        ok[b] = false;
                    }
                }
                BarrierOp::Wait(w) => {
                    waits_on[b] = mark;
                    if w.parity.is_some() || w.poll {
                        ok[b] = false;
                    }
                }
                BarrierOp::Join => {}
                // An init sets the count every phase after it needs: with
                // the number of arrivers, as a launch count does, every
                // phase after the last init needs one arrive of each
                // (checked below). Before that an init may abandon an
                // open phase, moving the phase numbers on without a
                // waiting thread's arrive (its token goes stale): such a
                // barrier is lockstep only once no init can come.
                BarrierOp::Init(k) => match (k, &mut inits[b]) {
                    (CExpr::Int(k), Some(v)) => v.push(*k),
                    _ => inits[b] = None,
                },
                // A transaction count only holds a phase back: it
                // still needs every arriver (phase sorting, which reads
                // completion points, keeps away from it: canon.rs).
                BarrierOp::ExpectTx(_) | BarrierOp::CompleteTx(_) => {}
                BarrierOp::Drop | BarrierOp::ArriveDrop { .. } | BarrierOp::Inval => ok[b] = false,
            }
        }
        for &b in &touched {
            if arrives_on[b] == mark {
                arrivers[b] += 1;
            } else if waits_on[b] == mark {
                // A waiter that never arrives: phases do not wait for it.
                ok[b] = false;
            }
        }
        let nd = t.barriers.len();
        let (rearmed, armed_at_end) = alternation
            .entry((t.code.index(), nd))
            .or_insert_with(|| alternation_of(code, nd));
        for &d in rearmed.iter() {
            if let Some(b) = t.barriers[d] {
                ok[b.index()] = false;
            }
        }
        // An end reachable from an arrive with no wait in between: when the
        // end drops the barrier, that drop falls in the arrive's phase (or a
        // later one the thread never waits on), so the phase completes with
        // an arrive *and* a drop of one thread and one live thread short,
        // and a later phase can complete while another thread still sits at
        // its wait (gfx1250 `s_barrier_signal -1` at a wave's end).
        for &d in armed_at_end.iter() {
            if let Some(b) = t.barriers[d] {
                if p.barriers[b.index()].dropped_at_end_by(ThreadId(ti as u32)) {
                    ok[b.index()] = false;
                }
            }
        }
    }
    for (b, inst) in p.barriers.iter().enumerate() {
        // A uniform count stands for the expected count: every phase
        // completes at that many arrivals (a thread's end does not lower
        // it), one per arriving thread.
        let counts: Vec<i64> = (uniform[b].or(inst.launch_count).into_iter())
            .chain(inits[b].iter().flatten().copied())
            .collect();
        if inits[b].is_none() || counts.is_empty() || counts.iter().any(|&k| k != arrivers[b]) {
            ok[b] = false;
        }
    }
    let inited = inits.iter().map(|v| v.as_ref().is_none_or(|v| !v.is_empty())).collect();
    (ok, inited)
}

/// Alternation (for [`lockstep_barriers`]): no arrive on a declaration is
/// reachable from an arrive on it without a wait on it in between (a
/// forward may-analysis of "arrived since the last wait" per declaration,
/// over `code` with `nd` declarations). Returns the declarations an arrive
/// reaches again with no wait between, and those an end (an `exit` or the
/// end of the code) is reached on with an arrive not waited for.
fn alternation_of(code: &Code, nd: usize) -> (Vec<usize>, Vec<usize>) {
    let len = code.instrs.len();
    let mut armed = vec![vec![false; nd]; len + 1];
    let mut rearmed = vec![false; nd];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in 0..len {
            let mut out = armed[pc].clone();
            if let InstrKind::Barrier {
                op,
                sel: BarrierSel::Decl(d),
                ..
            } = &code.instrs[pc].kind
            {
                let d = *d as usize;
                match op {
                    BarrierOp::Arrive(_) => {
                        rearmed[d] |= out[d];
                        out[d] = true;
                    }
                    BarrierOp::Wait(_) => out[d] = false,
                    _ => {}
                }
            }
            for succ in code.successors(pc as u32) {
                let target = &mut armed[succ as usize];
                for (x, y) in target.iter_mut().zip(&out) {
                    if *y && !*x {
                        *x = true;
                        changed = true;
                    }
                }
            }
        }
    }
    let mut at_end = vec![false; nd];
    for (pc, at) in armed.iter().enumerate() {
        if pc < len && !matches!(code.instrs[pc].kind, InstrKind::Exit) {
            continue;
        }
        for (e, &on) in at_end.iter_mut().zip(at) {
            *e |= on;
        }
    }
    let list = |v: Vec<bool>| v.iter().enumerate().filter(|(_, &x)| x).map(|(d, _)| d).collect();
    (list(rearmed), list(at_end))
}

/// Per barrier instance, whether its arrives may be fused (see
/// [`System::fusible_arrive`]): lockstep (every phase needs one arrive of
/// every thread that arrives on it), sorted (`canon.rs`: the order of a
/// phase's arrivals leaves no trace in the state), no arrive returns
/// isfirst or a reduction (which would record the order in a register),
/// and every execution of the program is finite (no state graph: a fused
/// arrive is not an edge of its own thread for the fairness analysis).
/// And no thread inits the instance (its count is set at launch): an
/// arrive and an init do not commute (before the init the arrive is
/// undefined, after an init that abandons its phase it counts for
/// nothing), so an arrive is no persistent set alone while an init may
/// still come.
pub(crate) fn arrive_fusible_barriers(p: &Program, lockstep: &[bool], sortable: &[bool], finite: bool) -> Vec<bool> {
    let mut ok: Vec<bool> = (0..p.barriers.len())
        .map(|b| finite && lockstep[b] && sortable[b])
        .collect();
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            if let InstrKind::Barrier {
                op: BarrierOp::Init(_),
                sel,
                ..
            } = &ins.kind
            {
                for d in sel.decls(&p.groups) {
                    if let Some(b) = t.barriers[d as usize] {
                        ok[b.index()] = false;
                    }
                }
            }
            if let InstrKind::Barrier {
                op: BarrierOp::Arrive(_),
                sel,
                result: Some(BarrierResult::IsFirst(_) | BarrierResult::Reduce(_)),
            } = &ins.kind
            {
                for d in sel.decls(&p.groups) {
                    if let Some(b) = t.barriers[d as usize] {
                        ok[b.index()] = false;
                    }
                }
            }
        }
    }
    ok
}

/// Per code and pc, whether every run of local steps from there reaches
/// the thread's end (an `exit` or past the last instruction) before any
/// visible operation: a wait or arrive right before such a pc would end
/// its thread, so fusion does not try it (it would be taken back).
pub(crate) fn must_end(p: &Program) -> Vec<Vec<bool>> {
    end_table(p, true)
}

/// Per code and pc: some run of local steps from there ends the thread
/// (the end pc included).
pub(crate) fn may_end(p: &Program) -> Vec<Vec<bool>> {
    end_table(p, false)
}

/// [`must_end`] (`all`) or [`may_end`]: a backward fixed point over the
/// local instructions.
fn end_table(p: &Program, all: bool) -> Vec<Vec<bool>> {
    p.codes
        .iter()
        .map(|code| {
            let len = code.instrs.len();
            let mut out = vec![false; len + 1];
            out[len] = true;
            let mut changed = true;
            while changed {
                changed = false;
                for pc in (0..len).rev() {
                    if out[pc] {
                        continue;
                    }
                    let kind = &code.instrs[pc].kind;
                    let succs = code.successors(pc as u32);
                    let next_end = if all {
                        succs.iter().all(|&n| out[n as usize])
                    } else {
                        succs.iter().any(|&n| out[n as usize])
                    };
                    let ends = matches!(kind, InstrKind::Exit) || (kind.is_local() && next_end);
                    if ends {
                        out[pc] = true;
                        changed = true;
                    }
                }
            }
            out
        })
        .collect()
}
