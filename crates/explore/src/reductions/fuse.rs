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
//! every barrier its end drops is one whose arrives fuse (that one, or a
//! lane's warp barrier beside it): each drop commutes as an arrive does. A
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
//! it when every barrier the end drops is one whose arrives fuse
//! ([`System::end_drops`]). With partial-order reduction on, the
//! conflict condition goes (required.rs: any plain access is persistent
//! alone in a finite program; a race it would raise makes the step not
//! quiet, and the search takes it).

use crate::semantics::choices::{Lane, WaitPlan};
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::answer::Step;
use crate::state::Choice;
use crate::state::{State, Status};
use bc_graph::*;

impl System<'_> {
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
        // A lane that its warp's first lane releases has no step of its
        // own; a leading lane's step releases the warp (`fuse_warp_wait`).
        // A lane's own wait may change its mates' steps
        // (`moves_warp_mates`).
        if self.lane_mode(s, t) == Lane::Follows || self.moves_warp_mates(s, t) {
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
    /// [`Analyses::fused_arrives`]: crate::semantics::Analyses::fused_arrives
    pub(crate) fn fusible_arrive(&self, s: &State, t: usize, ident: &[u32]) -> Option<(Choice, usize)> {
        // Only into a phase some arrive opened: a chain stops at each
        // phase's first arrive, so the state between two phases is stored
        // and normalized, where compaction forgets the completed phase
        // (it forgets only while no completed phase is pending).
        // A warp's arrival (`Lane::Leads`) is a step of several lanes,
        // which fusion's undo does not restore: the search takes it.
        self.arrive_on_fused(s, t, ident)
            .filter(|&(_, b)| s.bars[b].open.is_some() && self.lane_mode(s, t) == Lane::Alone)
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
    /// [`Analyses::fused_arrives`]: crate::semantics::Analyses::fused_arrives
    pub(crate) fn arrive_on_fused(&self, s: &State, t: usize, ident: &[u32]) -> Option<(Choice, usize)> {
        let (op @ BarrierOp::Arrive(_), b) = self.next_barrier_op(s, t)? else {
            return None;
        };
        if !self.arrives_fuse(s, b) || self.neutral(s, t, b, op, ident).is_some() {
            return None;
        }
        // A lane that waits for its warp, or arrives with the warp's first
        // lane, has no step of its own. A warp's arrival commutes with the
        // other arrives as one lane's does: it adds its lanes to the open
        // phase, which is sorted, and a lockstep phase needs every lane.
        if matches!(self.lane_mode(s, t), Lane::Held | Lane::Follows) || self.moves_warp_mates(s, t) {
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
    /// `b` ("Arrive fusion" in the module doc): `b`'s arrives fuse, and
    /// the end is fusible ([`System::end_drops`]): each barrier its end
    /// drops is `b` or another whose arrives fuse, where the drop commutes
    /// with the other members of the phase as an arrive does (sorted, and
    /// lockstep: the phase needs every live thread's arrive or end).
    pub(crate) fn end_fusible(&self, s: &State, t: usize, b: usize) -> bool {
        self.arrives_fuse(s, b) && self.end_drops(s, t).is_some()
    }

    /// The choice of thread `t`'s plain access, when it qualifies for
    /// access fusion (module doc, "Access fusion"): every execution is
    /// finite, and no other thread may still make a plain access to its
    /// location that conflicts with it (a write, or for a write any
    /// access). With it, what its end drops when the local steps after it
    /// end the thread: `None` when the end may not be fused, else the
    /// barriers it drops ([`System::end_drops`]).
    pub(crate) fn fusible_access(&self, s: &State, t: usize) -> Option<(Choice, Option<Vec<usize>>)> {
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
        // Its end may change a warp mate's step (`moves_warp_mates`).
        if self.moves_warp_mates(s, t) {
            return None;
        }
        let choice = Choice {
            thread: t as u32,
            phase: None,
        };
        // With partial-order reduction on, any plain access is a
        // persistent set on its own in a finite program, conflicts left
        // or not (required.rs, "a plain read or write"; docs/explorer.md
        // item 8 (iii)): it only appends to its thread's history, and the
        // race rule judges a conflicting pair by executes-before, which
        // the order they ran in does not change. A race it raises leaves
        // it to the search (`fused_steps` keeps quiet steps only), where
        // a race with a later access is found at that access. Without a
        // named kernel still to launch, as there.
        if self.reductions.por && !self.launch_pending(s) {
            return Some((choice, self.end_drops(s, t)));
        }
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
        Some((choice, self.end_drops(s, t)))
    }

    /// The barriers thread `t`'s end drops, when the end may be taken
    /// with a fused step: the thread belongs to no named kernel (whose
    /// last thread starts the next one), and the arrives of every barrier
    /// it drops fuse, where the drop commutes with the other members of
    /// the open phase as an arrive does ("Arrive fusion"; a lane that ran
    /// a warp intrinsic drops its warp's mask barrier beside the block's).
    /// `None` when the end may not be fused.
    pub(crate) fn end_drops(&self, s: &State, t: usize) -> Option<Vec<usize>> {
        if self.p.threads[t].kernel.is_some() {
            return None;
        }
        let dropped: Vec<usize> = (s.threads[t].joined.iter())
            .map(|&d| d as usize)
            .filter(|&d| self.p.barriers[d].dropped_at_end_by(ThreadId(t as u32)))
            .collect();
        dropped.iter().all(|&d| self.arrives_fuse(s, d)).then_some(dropped)
    }

    /// A leading lane's fusible wait `c` on barrier `b` (`Lane::Leads`):
    /// the warp's release, every live lane's wait in one step as
    /// `System::step_warp` takes it, with the lanes' traced steps. Taken
    /// under the conditions of a single wait (no finding, no bmo but
    /// `b`'s changed, and that only by the ends of lanes whose ends are
    /// fusible); undone otherwise, from a copy of the state (a warp's
    /// release is rarer than a lane's step, and touches many threads).
    fn fuse_warp_wait(&self, s: &mut State, c: Choice, b: usize, w: &mut Worker) -> Option<Vec<Step>> {
        let t = c.thread as usize;
        let lanes: Vec<usize> = std::iter::once(t)
            .chain(self.warp_followers(s, c).into_iter().map(|u| u as usize))
            .collect();
        let end_ok = lanes.iter().all(|&u| self.end_fusible(s, u, b));
        let traced: Vec<_> = if w.trace.is_some() {
            (lanes.iter())
                .map(|&u| {
                    self.traced(
                        s,
                        Choice {
                            thread: u as u32,
                            phase: c.phase,
                        },
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        let before = s.clone();
        let pending = w.pending.len();
        w.hold_end = !end_ok;
        w.held_end = false;
        let steps = self.step_warp(s, c, w);
        w.hold_end = false;
        let held = std::mem::take(&mut w.held_end);
        let ended = lanes.iter().filter(|&&u| s.threads[u].status == Status::Done).count();
        let bmo_same = s
            .bmo
            .iter()
            .zip(&before.bmo)
            .enumerate()
            .all(|(i, (n, o))| n.len() == o.len() || (i == b && n.len() <= o.len() + ended));
        let alive = lanes
            .iter()
            .all(|&u| s.threads[u].status == Status::Running || (end_ok && s.threads[u].status == Status::Done));
        if w.pending.len() == pending && bmo_same && !held && alive {
            if let Some(trace) = &mut w.trace {
                trace.extend(traced);
            }
            Some(steps)
        } else {
            w.pending.truncate(pending);
            *s = before;
            None
        }
    }

    /// Completed-wait and arrive fusion: takes every fusible wait and
    /// arrive of `s` (in thread order, until none is left) and returns
    /// their steps, and whether an arrive was fused: fused arrives join
    /// phases out of order, which the caller sorts
    /// (`reductions::fused_steps`). A step that raises a finding, changes a bmo other than
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
        budget: Option<&crate::state::budget::Budget>,
        stepped: Option<usize>,
    ) -> (Vec<Step>, bool) {
        let mut steps = Vec::new();
        if !self.reductions.fuse {
            return (steps, false);
        }
        // Only the stepped thread's independent group (`por.rs`), where
        // the state before the step had nothing left to fuse: a step of
        // one group changes nothing another group's fusion reads (its
        // barriers, locations and threads), so those had none before and
        // have none now. Each step of an 8-block kernel scanned its
        // 2,048 threads twice.
        // Not where a host launches kernels: access fusion reads whether
        // a launch is still to come (`System::launch_pending`), which a
        // host's step changes for every group (found in review).
        let groups = &self.an.groups;
        let group = stepped
            .filter(|_| !groups.is_empty() && self.p.kernels.is_empty())
            .map(|t| groups[t]);
        let mut changed = true;
        let mut arrived = false;
        while changed {
            changed = false;
            for t in 0..s.threads.len() {
                if t % 256 == 255 && budget.is_some_and(|b| b.check().is_some()) {
                    return (steps, false);
                }
                if group.is_some_and(|g| groups.get(t) != Some(&g)) {
                    continue;
                }
                // The choice, the barrier it may change (its own, or the
                // one an access's fused end drops), whether it is an
                // arrive, and whether its thread may end with it.
                // A warp's release at an `.aligned` barrier: all its
                // lanes' waits in one step, as the search takes it.
                if let Some((c, b)) = self
                    .fusible(s, t, &w.ident)
                    .filter(|_| self.lane_mode(s, t) == Lane::Leads)
                {
                    if let Some(warp) = self.fuse_warp_wait(s, c, b, w) {
                        steps.extend(warp);
                        changed = true;
                        arrived |= self.arrives_fuse(s, b) && s.threads[t].status == Status::Done;
                    }
                    continue;
                }
                // And the barriers its end drops, when it may end with
                // it ([`System::end_drops`]).
                let (c, b, arrive, end_ok, drops) = match self.fusible(s, t, &w.ident) {
                    Some((c, b)) => {
                        let drops = self.end_drops(s, t).filter(|_| self.arrives_fuse(s, b));
                        (c, Some(b), false, drops.is_some(), drops.unwrap_or_default())
                    }
                    None => match self.fusible_arrive(s, t, &w.ident) {
                        // An arrive's thread may end with it when the
                        // end drops no barrier (it then changes only the
                        // thread's status; a counted named barrier's
                        // arrivers end so).
                        Some((c, b)) => (
                            c,
                            Some(b),
                            true,
                            self.end_drops(s, t).is_some_and(|d| d.is_empty()),
                            Vec::new(),
                        ),
                        None => match self.fusible_access(s, t) {
                            Some((c, end)) => (c, None, false, end.is_some(), end.unwrap_or_default()),
                            None => continue,
                        },
                    },
                };
                // The barriers the end drops besides `b`: saved, for the
                // undo below.
                let others: Vec<(usize, crate::state::BState)> = (drops.iter())
                    .filter(|&&d| Some(d) != b)
                    .map(|&d| (d, s.bars[d].clone()))
                    .collect();
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
                let traced = w.trace.is_some().then(|| self.traced(s, c));
                let step = self.step(s, c, w);
                w.hold_end = false;
                let quiet = w.pending.len() == pending;
                let ended = s.threads[t].status == Status::Done;
                // A wait or an access leaves every bmo as it is but for its
                // thread's end-drop; an arrive adds itself to its
                // barrier's.
                let bmo_same = s.bmo.iter().map(Vec::len).enumerate().all(|(i, n)| {
                    let own = Some(i) == b;
                    let drop = ended && others.iter().any(|&(d, _)| d == i);
                    n == bmo_lens[i] + usize::from((arrive || ended) && own)
                        || (n == bmo_lens[i] && own)
                        || (drop && n <= bmo_lens[i] + 1)
                });
                if quiet && bmo_same && !w.held_end && (s.threads[t].status == Status::Running || (end_ok && ended)) {
                    steps.push(step);
                    if let (Some(trace), Some(traced)) = (&mut w.trace, traced) {
                        trace.push(traced);
                    }
                    changed = true;
                    arrived |= arrive || (ended && (b.is_some() || !others.is_empty()));
                } else {
                    w.pending.truncate(pending);
                    std::mem::swap(&mut s.threads[t], &mut thread);
                    if let (Some(b), Some(saved)) = (b, &mut bar) {
                        std::mem::swap(&mut s.bars[b], saved);
                    }
                    for (d, saved) in others {
                        s.bars[d] = saved;
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
        (steps, arrived)
    }
}
