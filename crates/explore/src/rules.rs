//! The rules the explorer decides as it steps, one function each, named as
//! `Rule::name()` prints the rule (`docs/ARCHITECTURE.md`, section "Rules",
//! lists them beside the rule checker's). A violation is recorded through
//! [`System::violated`] into the stepping worker's [`Worker`], by rule only: what it reports is the rule's
//! finding ([`Rule::finding`]), and nothing when the model disables the
//! rule. The functions on [`System`] read the state alone and return the
//! violation's message; the transitions (`step.rs`, `choices.rs`) call each
//! where the operation it judges happens, and report what they return.
//!
//! Three rules need the whole history rather than one operation:
//! phase-with, arrive-then-drop and race ([`System::history_rules`], over
//! [`ExecutesBefore`]). They judge a state where the rule checker judges
//! its execution (end states, stopped searches, and before compaction
//! forgets), after it, and only mark their kinds as seen operationally, so
//! the reported finding and witness stay the rule checker's while the
//! corpus test compares the two sides.

use crate::state::{HEvent, HKind, Phase, State, Status, LAUNCH, START};
use crate::step::decode_token;
use crate::system::System;
use crate::worker::Worker;
use bc_graph::*;
use bc_models::Rule;
use bc_syntax::FindingKind;
use rustc_hash::FxHashMap as HashMap;

/// What an operation does to a barrier's expected count, for
/// [`System::drop_not_negative`].
pub(crate) enum ExpectedCount {
    /// An init sets it to this count.
    Init(i64),
    /// A drop lowers it by one from this count.
    Drop(i64),
    /// A positive arrive_drop leaves this count after the phase completes.
    ArriveDrop(i64),
}

impl System<'_> {
    /// Records a violation of `rule` found by the last step, unless the
    /// model disables the rule.
    pub(crate) fn violated(&self, rule: Rule, msg: String, w: &mut Worker) {
        self.report(rule, msg, false, w);
    }

    /// As [`System::violated`]; `objectless`: the operation named no
    /// barrier (the finding locates no barrier object).
    fn report(&self, rule: Rule, msg: String, objectless: bool, w: &mut Worker) {
        if self.p.model.rules.has(rule) {
            let kind = rule.finding().expect("the explorer reports rules with a finding");
            w.pending.push((kind, msg, objectless));
        }
    }

    /// first-bmo-init: the first modification of a barrier is an init
    /// ("Execution Model": the first element of a bmo is an init; CUDA:
    /// project notes section 3, init before any use). Thread `t` modifies
    /// barrier `b`.
    pub(crate) fn first_bmo_init(&self, s: &State, t: usize, b: usize, w: &mut Worker) {
        if !s.bars[b].init {
            let msg = format!(
                "{} operates on {} before any init",
                self.thread_name(&w.ident, t),
                self.bname(b)
            );
            self.violated(Rule::FirstBmoInit, msg, w);
        }
    }

    /// drop-needs-join: a drop needs a joined-before join ("Execution
    /// Model": for every barrier drop, a join of the same barrier before
    /// it). Thread `t` drops barrier `b`, or, for `None`, leaves a group in
    /// which it holds no joined barrier.
    pub(crate) fn drop_needs_join(&self, s: &State, t: usize, b: Option<usize>, w: &mut Worker) {
        match b {
            None => {
                let msg = format!("{} leaves with no joined barrier", self.thread_name(&w.ident, t));
                self.report(Rule::DropNeedsJoin, msg, true, w);
            }
            Some(b) if !s.threads[t].joined.contains(&(b as u32)) => {
                let msg = format!(
                    "{} drops {} with no joined-before join",
                    self.thread_name(&w.ident, t),
                    self.bname(b)
                );
                self.violated(Rule::DropNeedsJoin, msg, w);
            }
            Some(_) => {}
        }
    }

    /// drop-not-negative: the expected count never goes below zero
    /// ("Execution Model": a drop cannot make the expected count negative;
    /// "Barrier init": the count is positive; an `arrive_drop` that brings
    /// it to zero: project notes section 3, as mbarrier counts range over
    /// 1..2^20-1, PTX `mbarrier.init`). Thread `t` changes barrier `b`'s
    /// count as `change` says.
    pub(crate) fn drop_not_negative(&self, t: usize, b: usize, change: ExpectedCount, w: &mut Worker) {
        let msg = match change {
            ExpectedCount::Init(k) if k <= 0 => format!(
                "{} initializes {} with expected count {k}",
                self.thread_name(&w.ident, t),
                self.bname(b)
            ),
            ExpectedCount::Drop(e) if e <= 0 => format!(
                "{} drops {} below an expected count of zero",
                self.thread_name(&w.ident, t),
                self.bname(b)
            ),
            ExpectedCount::ArriveDrop(left) if left <= 0 => format!(
                "{}'s arrive_drop brings the expected count of {} to zero",
                self.thread_name(&w.ident, t),
                self.bname(b)
            ),
            _ => return,
        };
        self.violated(Rule::DropNotNegative, msg, w);
    }

    /// expected-count-update: an arrive that sets the expected count sets
    /// it above the arrive count of the open phase ("Execution Model",
    /// "Barrier arrive"). Thread `t` sets barrier `b`'s count to `k`.
    pub(crate) fn expected_count_update(&self, s: &State, t: usize, b: usize, k: i64, w: &mut Worker) {
        let arrived = s.bars[b].arrived;
        if k <= arrived {
            let msg = format!(
                "{} sets the expected count of {} to {k} with {arrived} arrive(s) counted",
                self.thread_name(&w.ident, t),
                self.bname(b)
            );
            self.violated(Rule::ExpectedCountUpdate, msg, w);
        }
    }

    /// count-overflow: a count stays within the model's maximum
    /// (cuda-barrier-libcudacxx.txt, `cuda::barrier::max()`). Thread `t`
    /// gives barrier `b` the count `k`.
    pub(crate) fn count_overflow(&self, t: usize, b: usize, k: i64, w: &mut Worker) {
        if let Some(max) = self.p.model.max_count {
            if k > max {
                let msg = format!(
                    "{} sets the count of {} to {k}, above the maximum {max}",
                    self.thread_name(&w.ident, t),
                    self.bname(b)
                );
                self.violated(Rule::CountOverflow, msg, w);
            }
        }
    }

    /// count-overflow, every arrive (PTX `mbarrier.arrive` with or without
    /// a count, `cuda::barrier::arrive(n)`, `barrier_arrive_tx`): it counts
    /// at least one arrival and no more than the open phase still expects
    /// (C++ [thread.barrier.class], `arrive(update)`'s precondition; CUDA
    /// guide, "A Barrier's Phase": an arrive must come while the
    /// barrier's counter is non-zero, and `__mbarrier_arrive`: the pending
    /// count must not be zero). A plain arrive counts one, so it breaks
    /// the rule only where no arrival is pending while the phase waits for
    /// transaction bytes (issue 32, point 4: it used to wait as a surplus
    /// arrival). Thread `t` arrives on barrier `b` counting `n`, before its
    /// arrive changes the counts.
    pub(crate) fn arrivals_overflow(&self, s: &State, t: usize, b: usize, n: u32, w: &mut Worker) {
        let bar = &s.bars[b];
        if !bar.init {
            return;
        }
        let pending = bar.needed() - bar.arrived;
        // A copy's hold raised the pending count in the hardware, where the
        // model counts a transaction: one arrival may be that one.
        let held = n == 1 && self.p.barriers[b].props.held;
        if n == 0 || (i64::from(n) > pending && !held) {
            let what = if n == 0 {
                "no arrival (a count below one)".to_string()
            } else {
                format!("{n} arrivals where the phase expects {pending} more")
            };
            let msg = format!(
                "{} arrives on {} counting {what}",
                self.thread_name(&w.ident, t),
                self.bname(b)
            );
            self.violated(Rule::CountOverflow, msg, w);
        }
    }

    /// count-mismatch: the arrivals of one phase of a thread-counted
    /// barrier use one count (project notes section 3, named barriers: one
    /// count per phase). Thread `t` arrives on barrier `b` with `count`.
    pub(crate) fn count_mismatch(&self, s: &State, t: usize, b: usize, count: Option<ArriveCount>, w: &mut Worker) {
        if let (Some(c), Some(open)) = (count, s.bars[b].open.as_ref().and_then(|p| p.count)) {
            if c != open {
                let msg = format!(
                    "{} arrives on {} with count {} in a phase counted with {}",
                    self.thread_name(&w.ident, t),
                    self.bname(b),
                    count_text(c),
                    count_text(open)
                );
                self.violated(Rule::CountMismatch, msg, w);
            }
        }
    }

    /// copy-not-waited, at an end state where every thread finished: the
    /// latest completion of each copying agent (an arrive, or its
    /// transactions completed, zero bytes included), unless already known
    /// observed (`COPY_PENDING_REG` clear), executes before the latest
    /// event of some thread that is not an agent. Compaction forgets
    /// nothing after a completion not observed yet, and clears the flag of
    /// one that is, on every state it sees (`System::observe_copies`).
    /// Earlier completions of an agent are observed: it is reused only
    /// once everything it did executes before its issuer. (CUDA guide,
    /// "Using TMA to transfer one-dimensional arrays": the kernel waits at
    /// its end for the copy to be done with shared memory.)
    pub(crate) fn copy_not_waited(&self, s: &State, w: &mut Worker) {
        if !self.p.model.rules.has(Rule::CopyNotWaited) || !self.p.has_copies() {
            return;
        }
        let mut eb = None;
        for (a, i) in self.pending_completions(s) {
            let eb = eb.get_or_insert_with(|| ExecutesBefore::of(s));
            if !self.completion_observed(s, eb, a, i) {
                let msg = format!(
                    "{} completes its copy (`{}`) and no thread waits for it: nothing of the program is ordered after it",
                    self.thread_name(&w.ident, a),
                    self.p.instr(bc_graph::ThreadId(a as u32), s.hist[a][i].pc).map_or("", |i| i.text.as_str())
                );
                self.violated(Rule::CopyNotWaited, msg, w);
                return;
            }
        }
    }

    /// The copying agents of `s` whose latest completion (an arrive, or a
    /// transaction count lowered) is not known observed yet
    /// (`COPY_PENDING_REG` set), with that completion's index in the
    /// agent's history. Only the latest completion can be unobserved: an
    /// agent is reused only once all it did executes before its issuer.
    pub(crate) fn pending_completions<'s>(&self, s: &'s State) -> impl Iterator<Item = (usize, usize)> + use<'s, '_> {
        let reg = bc_graph::COPY_PENDING_REG.index();
        (0..s.threads.len())
            .filter(move |&a| {
                self.p.copy_performer(bc_graph::ThreadId(a as u32)) && s.threads[a].regs.get(reg) == Some(&1)
            })
            .filter_map(move |a| {
                let i = s.hist[a].iter().rposition(|ev| match ev.kind {
                    HKind::Arrive(..) => true,
                    HKind::Tx(d) => d <= 0,
                    _ => false,
                })?;
                Some((a, i))
            })
    }

    /// Whether agent `a`'s event `i` executes before the latest event of
    /// some thread that is not an agent (the program waited for it).
    pub(crate) fn completion_observed(&self, s: &State, eb: &ExecutesBefore, a: usize, i: usize) -> bool {
        (0..s.threads.len()).any(|u| {
            self.p.threads[u].kind != bc_graph::ThreadKind::Copy
                && s.hist[u]
                    .len()
                    .checked_sub(1)
                    .is_some_and(|last| eb.eb((a as u32, i as u32), (u as u32, last as u32)))
        })
    }

    /// arrive-twice: a thread arrives at most once in one phase of a
    /// thread-counted barrier (project notes section 3, named barriers: one
    /// arrival per thread before the barrier resets). Thread `t` arrives on
    /// barrier `b` with `count` (`None`: the barrier is not thread-counted).
    pub(crate) fn arrive_twice(&self, s: &State, t: usize, b: usize, count: Option<ArriveCount>, w: &mut Worker) {
        if count.is_some() && self.arrived_in_open(s, t, b) {
            let msg = format!(
                "{} arrives on {} a second time in one phase",
                self.thread_name(&w.ident, t),
                self.bname(b)
            );
            self.violated(Rule::ArriveTwice, msg, w);
        }
    }

    /// arrive-before-wait: a thread whose arrive completed a phase of a
    /// `cuda::barrier` waits on that phase before it arrives again (project
    /// notes section 3, `cuda::barrier`; CUDA guide, "A Barrier's Phase:
    /// Arrival, Countdown, Completion, and Reset"). The thread's `owes` set
    /// holds the barriers it owes a wait on (kept by `barrier_step` and
    /// `bind`). Thread `t` arrives on barrier `b`; `object`: a
    /// `cuda::barrier` arrive, which any debt forbids (another arrive only a
    /// cooperative-groups `barrier_arrive`'s: CUDA guide, `barrier_arrive`
    /// and `barrier_wait`: any collective operation or another arrival
    /// with the group is undefined until the thread's `barrier_wait` has
    /// observed the phase).
    pub(crate) fn arrive_before_wait(&self, s: &State, t: usize, b: usize, object: bool, w: &mut Worker) {
        let debt = s.threads[t]
            .owes
            .iter()
            .find(|&&(x, n)| x == b as u32 && (object || n == crate::state::COLLECTIVE_DEBT));
        if let Some(&(_, n)) = debt {
            let what = if n == crate::state::COLLECTIVE_DEBT {
                "its barrier_wait observed the phase of its barrier_arrive"
            } else {
                "a wait observed the phase its arrive completed"
            };
            let msg = format!(
                "{} arrives on {} again before {what}",
                self.thread_name(&w.ident, t),
                self.bname(b)
            );
            self.violated(Rule::ArriveBeforeWait, msg, w);
        }
    }

    /// wait-needs-join: a wait needs a joined-before join ("Execution
    /// Model": for every barrier wait, a join that executes before a
    /// participant). [`System::wait_plan`] decides it (a wait with no
    /// joined-before join is `WaitPlan::NoJoin`, and does nothing), and
    /// [`System::participates_in`] offers only phases a member of which the join
    /// executes before. Thread `t` waits on barrier `b` with no join.
    pub(crate) fn wait_needs_join(&self, t: usize, b: usize, w: &mut Worker) {
        let msg = format!(
            "{} waits on {} with no joined-before join",
            self.thread_name(&w.ident, t),
            self.bname(b)
        );
        self.violated(Rule::WaitNeedsJoin, msg, w);
    }

    /// aligned-barrier, at a phase's completion (PTX ISA, `barrier{.cta}`,
    /// the `.aligned` modifier: all threads execute the one barrier
    /// instruction together; issue 18 reads it per warp): where a thread
    /// arrives through an `.aligned` instruction, every thread of its warp
    /// arrives in the phase through that site (an exit drop is no
    /// arrival). `ph` is the phase of barrier `b` just completed, all its
    /// members still in the history.
    pub(crate) fn aligned_barrier(&self, s: &State, b: usize, ph: &Phase, w: &mut Worker) {
        if !self.an.aligned {
            return;
        }
        // A member's site, whether it is an arrive, and whether through an
        // `.aligned` instruction.
        let of = |t: u32, po: u32| {
            let ev = &s.hist[t as usize][po as usize];
            let arrive = matches!(ev.kind, HKind::Arrive(..));
            let aligned = arrive
                && matches!(
                    self.p.instr(ThreadId(t), ev.pc).map(|i| &i.kind),
                    Some(InstrKind::Barrier { op: BarrierOp::Arrive(a), .. }) if a.aligned
                );
            ((self.p.threads[t as usize].code.0, ev.pc), arrive, aligned)
        };
        let mut warps: Vec<u32> = Vec::new();
        for &(t, po) in ph.members.iter() {
            let (site, _, true) = of(t, po) else {
                continue;
            };
            let warp = self.p.threads[t as usize].warp_id;
            if warps.contains(&warp) {
                continue;
            }
            warps.push(warp);
            for u in (0..self.p.threads.len()).filter(|&u| self.p.threads[u].warp_id == warp) {
                let mine: Vec<(u32, u32)> = ph.members.iter().copied().filter(|&(x, _)| x as usize == u).collect();
                let why = match mine
                    .iter()
                    .map(|&(x, q)| of(x, q))
                    .find(|&(st, arrive, _)| !arrive || st != site)
                {
                    _ if mine.is_empty() => "does not arrive in that phase",
                    Some((_, false, _)) => "leaves it by exiting",
                    Some(_) => "arrives through another instruction",
                    None => continue,
                };
                let msg = format!(
                    "{} arrives through an .aligned instruction in phase {} of {}, and {} of its warp {why}",
                    self.label_of(s, t, po, &w.ident),
                    ph.number,
                    self.bname(b),
                    self.thread_name(&w.ident, u)
                );
                self.violated(Rule::AlignedBarrier, msg, w);
                return;
            }
        }
    }

    /// divergent-barrier, at a phase's completion: a uniform (block-wide)
    /// barrier is reached from one instruction site by the whole scope
    /// (CUDA guide, "Synchronization Functions": `__syncthreads` in
    /// conditional code). `ph` is the phase of barrier `b` just completed.
    pub(crate) fn divergent_barrier(&self, b: usize, ph: &Phase, w: &mut Worker) {
        if !(self.p.barriers[b].props.uniform && ph.is_block_wide() && (ph.mixed_sites || ph.exit_drop)) {
            return;
        }
        let why = if ph.mixed_sites {
            "different instruction sites"
        } else {
            "only some threads (others exited)"
        };
        let msg = format!("phase {} of {} is completed by {why}", ph.number, self.bname(b));
        self.violated(Rule::DivergentBarrier, msg, w);
    }

    /// divergent-barrier, for waits stuck for good (at an end state, or
    /// throughout a fair cycle): a uniform (block-wide) barrier that some
    /// threads of its scope reached while the others never will (CUDA
    /// guide, "Synchronization Functions").
    pub(crate) fn divergent_barrier_stuck(&self, s: &State, stuck_waits: &[usize], w: &mut Worker) {
        for b in self.stuck_barriers(s, stuck_waits) {
            if self.p.barriers[b].props.uniform && s.bars[b].open.as_ref().is_some_and(|p| p.is_block_wide()) {
                let msg = format!(
                    "{} is reached by only some threads of its scope",
                    self.p.barriers[b].name
                );
                self.violated(Rule::DivergentBarrier, msg, w);
            }
        }
    }

    /// The barrier each of the waits `stuck_waits` (threads at a wait in
    /// `s`) waits on, in their order.
    fn stuck_barriers<'a>(&'a self, s: &'a State, stuck_waits: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
        stuck_waits.iter().filter_map(move |&t| {
            match self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind) {
                Some(InstrKind::Barrier { sel, .. }) => self.resolve(s, t, *sel),
                _ => None,
            }
        })
    }

    /// syncwarp-mask, for waits stuck for good (at an end state, or
    /// throughout a fair cycle): the open phase of a `__syncwarp` barrier
    /// such a wait waits on never completes, so a lane its mask names that
    /// executed another mask meanwhile never arrives in it (CUDA guide,
    /// "Synchronization Functions"). The open phase's strays are state,
    /// not history, so history compaction cannot hide them; only phases
    /// with a wait stuck on them are judged, because in a fair cycle any
    /// other open phase may still complete (issue 39).
    pub(crate) fn syncwarp_left_open(&self, s: &State, stuck_waits: &[usize], w: &mut Worker) {
        let mut bars: Vec<usize> = self.stuck_barriers(s, stuck_waits).collect();
        bars.sort_unstable();
        bars.dedup();
        for b in bars {
            if let Some(msg) = s.bars[b]
                .open
                .as_ref()
                .and_then(|ph| self.syncwarp_mask_stray(b, ph, &w.ident))
            {
                self.violated(Rule::SyncwarpMask, msg, w);
            }
        }
    }

    /// wait-completes, at an end state: every wait completes
    /// ("Informational Notes": a wait that never completes is undefined;
    /// reported as `deadlock`). `at` names the threads whose waits never
    /// will, with their statements.
    pub(crate) fn wait_completes(&self, at: String, w: &mut Worker) {
        self.violated(Rule::WaitCompletes, format!("stuck forever: {at}"), w);
    }
}

impl System<'_> {
    /// privileged-barrier: trap barriers are for privileged mode only
    /// ("Barrier Implementations on AMDGPU Targets", GFX12). The message
    /// when thread `t` uses barrier `b` and it is one.
    pub(crate) fn privileged_barrier(&self, t: usize, b: usize, ident: &[u32]) -> Option<String> {
        self.p.barriers[b].props.privileged.then(|| {
            format!(
                "{} uses the privileged barrier {}",
                self.thread_name(ident, t),
                self.bname(b)
            )
        })
    }

    /// uncooperative-grid-sync: a grid-wide barrier needs a cooperative
    /// launch (CUDA guide, "Grid Synchronization"). The message when thread
    /// `t`, launched otherwise, uses the grid barrier `b`.
    pub(crate) fn uncooperative_grid_sync(&self, t: usize, b: usize, ident: &[u32]) -> Option<String> {
        (self.p.barriers[b].props.cooperative && !self.p.threads[t].cooperative).then(|| {
            format!(
                "{} uses {} in a kernel not launched cooperatively",
                self.thread_name(ident, t),
                self.bname(b)
            )
        })
    }

    /// syncwarp-mask, the caller's own lane: the calling lane is in its
    /// `__syncwarp` mask (CUDA guide, "Synchronization Functions"). The
    /// message when thread `t` calls the `__syncwarp` barrier `b` from a
    /// lane outside its mask (the call then does nothing, its wait too).
    pub(crate) fn syncwarp_mask(&self, t: usize, b: usize, ident: &[u32]) -> Option<String> {
        let w = self.p.barriers[b].syncwarp.as_ref()?;
        (!w.named.contains(&ThreadId(t as u32))).then(|| {
            format!(
                "{} (lane {}) is not in its own mask {:#x}",
                self.thread_name(ident, t),
                self.p.threads[ident[t] as usize].lane,
                w.mask
            )
        })
    }

    /// syncwarp-mask, the lanes a mask names: each non-exited lane a mask
    /// names executes a `__syncwarp` with that mask (CUDA guide,
    /// "Synchronization Functions"). The message for phase `ph` of the
    /// `__syncwarp` barrier `b`, if a lane its mask names executed a
    /// `__syncwarp` with a different mask while the phase was open and
    /// never arrived in it (it exited, completing the phase, or never
    /// will). [`System::other_mask`] keeps the phase's strays.
    pub(crate) fn syncwarp_mask_stray(&self, b: usize, ph: &Phase, ident: &[u32]) -> Option<String> {
        let w = self.p.barriers[b].syncwarp.as_ref()?;
        if ph.arrivals == 0 {
            return None;
        }
        let u = w.named.iter().find(|u| ph.strays.get(u.index()))?;
        Some(format!(
            "{} (lane {}) is named by mask {:#x} of phase {} of {} but executes a __syncwarp with a different mask instead",
            self.thread_name(ident, u.index()),
            self.p.threads[ident[u.index()] as usize].lane,
            w.mask,
            ph.number,
            self.bname(b)
        ))
    }

    /// wait-after-init: a wait or poll comes after an init of its barrier
    /// (CUDA guide, "Initialization": before any thread participates the
    /// barrier must be initialized; an mbarrier poll reads state only an
    /// init defines). The message when thread `t` is at wait `op` on
    /// barrier `b`, which no init has reached yet: the wait may run now,
    /// and then does nothing (a poll answers nothing either), so the
    /// interleaving that runs it before the init is explored even where
    /// the wait could not complete.
    pub(crate) fn wait_before_init(
        &self,
        s: &State,
        t: usize,
        b: usize,
        op: &BarrierOp,
        ident: &[u32],
    ) -> Option<String> {
        (matches!(op, BarrierOp::Wait(_)) && !s.bars[b].init && self.p.model.rules.has(Rule::WaitAfterInit)).then(
            || {
                format!(
                    "{} waits on {} before any init of it",
                    self.thread_name(ident, t),
                    self.bname(b)
                )
            },
        )
    }

    /// invalid-barrier: no use of a barrier after `inval` but a new init
    /// (CUDA guide, "Memory Barrier Primitives API", `__mbarrier_inval`).
    /// The message when thread `t`'s operation `op` uses the invalidated
    /// barrier `b`.
    pub(crate) fn invalid_barrier(
        &self,
        s: &State,
        t: usize,
        b: usize,
        op: &BarrierOp,
        ident: &[u32],
    ) -> Option<String> {
        (s.bars[b].invalid && !matches!(op, BarrierOp::Init(_))).then(|| {
            format!(
                "{} uses {} after it was invalidated",
                self.thread_name(ident, t),
                self.bname(b)
            )
        })
    }

    /// invalid-barrier, an array index out of range: a barrier array has
    /// only the elements it declares (CUDA guide, "Memory Barrier
    /// Primitives API": an operation on a barrier object needs a valid,
    /// initialized one; an index past the array names none). The message
    /// when thread `t` uses the hidden out-of-range element `b`.
    pub(crate) fn out_of_range(&self, t: usize, b: usize, ident: &[u32]) -> Option<String> {
        self.p.barriers[b].props.out_of_range.then(|| {
            format!(
                "{} indexes {} out of range",
                self.thread_name(ident, t),
                self.p.barriers[b].decl_name.trim_end_matches("[?]")
            )
        })
    }

    /// token-phase: whether a token naming phase `tp` of barrier `b` is
    /// stale, i.e. names neither the barrier's current phase nor the one
    /// just before it (CUDA guide, "Memory Barrier Primitives API",
    /// `__mbarrier_test_wait`: the token must belong to the immediately
    /// preceding or the current phase). Two ways: the barrier is two or
    /// more phases on, or an init came after the token's phase - an init
    /// restarts the barrier at phase 0 (`__mbarrier_init`: it sets the
    /// counts of the current and the next phase), so a token from before
    /// it names a phase of the barrier's earlier life, neither current nor
    /// preceding (on an H100 such a wait hangs: docs/hardware.md). Reported
    /// by `barrier_step`, for models with the `token-phase` rule.
    pub(crate) fn token_phase(s: &State, b: usize, tp: u32) -> Option<&'static str> {
        if tp < s.bars[b].epoch_start {
            Some("the barrier was initialized again after that phase")
        } else if Self::current_phase(s, b) >= tp + 2 {
            Some("the barrier is two phases past it")
        } else {
            None
        }
    }

    /// token-misuse: a wait takes a token of its own barrier, once
    /// (cuda-barrier-libcudacxx.txt, the [thread.barrier.class] semantics
    /// it modifies; project notes, section 3; docs/semantics.md "Forged
    /// tokens"). The phase the register value `v` names when thread `t`'s
    /// wait on barrier `b` may take it; otherwise the misuse's message and
    /// the phase the token names ([`NO_TOKEN_PHASE`] for none).
    ///
    /// Tokens are plain integers here, so we define which ones are real: a
    /// value an arrive on this barrier instance has returned so far: it
    /// names this barrier and a phase number no larger than the largest
    /// one an arrive returned (over all its inits; numbers only grow
    /// between inits, so every smaller one was current once). Anything
    /// else - arithmetic on a token, a plain integer, a phase not reached
    /// yet - is forged.
    pub(crate) fn token_misuse(
        &self,
        s: &State,
        t: usize,
        b: usize,
        v: i64,
        ident: &[u32],
    ) -> Result<u32, (String, u32)> {
        let nb = self.p.barriers.len();
        let tp = match decode_token(v) {
            Some((tb, tp)) if tb == b => tp,
            Some((tb, _)) if tb < nb => {
                let msg = format!(
                    "{} waits on {} with a token of {}",
                    self.thread_name(ident, t),
                    self.bname(b),
                    self.bname(tb)
                );
                return Err((msg, NO_TOKEN_PHASE));
            }
            _ => {
                let msg = format!(
                    "{} waits on {} with {v}, which is no token",
                    self.thread_name(ident, t),
                    self.bname(b)
                );
                return Err((msg, NO_TOKEN_PHASE));
            }
        };
        if tp >= s.bars[b].returned {
            let msg = format!(
                "{} waits on {} with {v}, naming phase {tp}, which no arrive of it has returned",
                self.thread_name(ident, t),
                self.bname(b)
            );
            return Err((msg, tp));
        }
        // Waited on already: this thread's history has a wait for it, or
        // the phase was forgotten (compaction forgets a completed phase
        // only after each arriving thread waited on it; numbers never
        // repeat). A phase not completed yet (the wait blocks) was waited
        // on by nobody, nor was one an init abandoned (`abandoned`: it
        // falls below `phase_base` once forgotten, yet never completed).
        let forgotten = tp < s.bars[b].phase_base && !s.bars[b].abandoned.contains(&tp);
        // A token wait that returned on a phase taken by another form
        // (`WaitPlan::Taken`, marked `took`) used the token too.
        let used = forgotten
            || s.hist[t].iter().any(|e| {
                e.target == Target::Barrier(BarrierId(b as u32))
                    && matches!(&e.kind, HKind::Wait { token_phase: Some(p), participants, took, .. }
                        if *p == tp && (!participants.is_empty() || *took == Some(tp)))
            });
        if used {
            let msg = format!(
                "{} waits twice with one token of {}",
                self.thread_name(ident, t),
                self.bname(b)
            );
            return Err((msg, tp));
        }
        Ok(tp)
    }
}

/// [`ExecutesBefore`] over a state's history, computed when first asked
/// (event indices need only the history's lengths).
pub(crate) struct LazyEb<'s> {
    s: &'s State,
    /// Per thread, the index of its first event (then the event count).
    start: Vec<usize>,
    eb: std::cell::OnceCell<ExecutesBefore>,
}

impl<'s> LazyEb<'s> {
    pub(crate) fn new(s: &'s State) -> LazyEb<'s> {
        LazyEb {
            s,
            start: event_starts(s),
            eb: std::cell::OnceCell::new(),
        }
    }

    /// How many events the history has.
    fn len(&self) -> usize {
        self.start.last().copied().unwrap_or(0)
    }

    /// The index of event `(t, po)`.
    fn index(&self, (t, po): (u32, u32)) -> usize {
        self.start[t as usize] + po as usize
    }

    /// [`ExecutesBefore::eb`].
    fn eb(&self, a: (u32, u32), b: (u32, u32)) -> bool {
        self.eb.get_or_init(|| ExecutesBefore::of(self.s)).eb(a, b)
    }
}

/// Per thread of `s`, the index of its first history event when the
/// threads' histories are numbered one after the other; then the number of
/// events.
fn event_starts(s: &State) -> Vec<usize> {
    let mut start = Vec::with_capacity(s.hist.len() + 1);
    let mut n = 0;
    for h in &s.hist {
        start.push(n);
        n += h.len();
    }
    start.push(n);
    start
}

/// A phase count as messages name it.
fn count_text(c: ArriveCount) -> String {
    match c {
        ArriveCount::Block => "the whole block".into(),
        ArriveCount::Threads(k) => k.to_string(),
    }
}

/// What the history rules found: per broken rule its finding and message.
pub(crate) type HistoryFindings = Vec<(FindingKind, String)>;

/// barrier-executes-before over a state's history ("Execution Model": the
/// transitive closure of program order and barrier-participates-in), with
/// the `extra` edges compaction left where a path ran through forgotten
/// events. Since program order is total within a thread, what executes
/// before an event is, per thread, a prefix of that thread's history; it is
/// kept as that prefix's length (a vector clock per event), computed to a
/// fixed point.
pub(crate) struct ExecutesBefore {
    /// Columns: the threads with events.
    width: usize,
    /// Per thread, its column (`u32::MAX` for one without events).
    col: Vec<u32>,
    /// Per thread, the index of its first event (then the event count).
    start: Vec<usize>,
    /// Per event index, per column (thread `u`): how many of `u`'s events
    /// execute before it.
    seen: Vec<u32>,
}

impl ExecutesBefore {
    /// Executes-before over the history of `s`.
    pub(crate) fn of(s: &State) -> ExecutesBefore {
        Self::build(s, true)
    }

    /// The order the race rule reads where some barrier orders memory only
    /// through fences (`BarrierProps::needs_fence`; `bc_rules::memory_order`
    /// is the rule checker's, and docs/semantics.md "Barriers and memory"
    /// the reading): its `eb` answers "memory-ordered before". Rows as
    /// [`ExecutesBefore::of`]'s, from program order, the summaries, the
    /// participants of waits on barriers that order memory (but relaxed
    /// arrives), and, into each
    /// event, the rows of the latest fence of each other thread that
    /// executes before it and whose scope holds both threads.
    pub(crate) fn memory(s: &State, p: &Program) -> ExecutesBefore {
        let e = Self::of(s);
        let (width, nt) = (e.width, s.hist.len());
        let n = e.start[nt];
        let c = |u: u32| e.col[u as usize] as usize;
        let exists = |(t, po): (u32, u32)| (t as usize) < nt && (po as usize) < s.hist[t as usize].len();
        let mut from: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for fan in &s.extra {
            for &x in fan.sources.iter().filter(|x| x.1 != START && exists(**x)) {
                for &(u, k) in fan.targets.iter().filter(|y| y.0 != x.0 && exists(**y)) {
                    from[e.start[u as usize] + k as usize].push(x);
                }
            }
        }
        let mut thread_of = vec![0u32; n];
        let mut fences: Vec<Vec<(u32, bc_graph::FenceScope)>> = vec![Vec::new(); nt];
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                thread_of[e.start[t] + po] = t as u32;
                if let HKind::Fence(f) = ev.kind {
                    fences[t].push((po as u32, f));
                }
            }
        }
        // Executes-before contains every edge used here, and its rows grow
        // strictly along it: ordering by row sum is topological.
        let row = |v: usize| &e.seen[v * width..(v + 1) * width];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&v| row(v).iter().map(|&x| x as u64).sum::<u64>());
        let mut seen = vec![0u32; n * width];
        let mut acc = vec![0u32; width];
        let join = |acc: &mut Vec<u32>, seen: &[u32], (u, k): (u32, u32)| {
            let x = e.start[u as usize] + k as usize;
            for (a, &b) in acc.iter_mut().zip(&seen[x * width..(x + 1) * width]) {
                *a = (*a).max(b);
            }
            acc[c(u)] = acc[c(u)].max(k + 1);
        };
        for v in order {
            let t = thread_of[v];
            let po = (v - e.start[t as usize]) as u32;
            acc.iter_mut().for_each(|a| *a = 0);
            acc[c(t)] = po;
            if po > 0 {
                join(&mut acc, &seen, (t, po - 1));
            }
            for &x in &from[v] {
                join(&mut acc, &seen, x);
            }
            let ev = &s.hist[t as usize][po as usize];
            if let (HKind::Wait { participants, .. }, Target::Barrier(b)) = (&ev.kind, ev.target) {
                if !p.barriers[b.index()].props.needs_fence {
                    // A relaxed arrive orders no memory: only a fence
                    // before it does (the fence rows below).
                    let relaxed = |(u, k): (u32, u32)| {
                        matches!(
                            p.instr(ThreadId(u), s.hist[u as usize][k as usize].pc).map(|i| &i.kind),
                            Some(InstrKind::Barrier { op: BarrierOp::Arrive(spec), .. }) if spec.relaxed
                        )
                    };
                    for &x in participants.iter().filter(|&&x| exists(x) && !relaxed(x)) {
                        join(&mut acc, &seen, x);
                    }
                }
            }
            let here = &p.threads[t as usize];
            for u in (0..nt as u32).filter(|&u| u != t && e.col[u as usize] != u32::MAX) {
                let before = row(v)[c(u)];
                let there = &p.threads[u as usize];
                let scope =
                    bc_graph::shared_scope((there.block_id, there.cluster_id), (here.block_id, here.cluster_id));
                let f = fences[u as usize]
                    .iter()
                    .rev()
                    .find(|&&(fpo, f)| fpo < before && f.covers(scope));
                if let Some(&(fpo, _)) = f {
                    join(&mut acc, &seen, (u, fpo));
                }
            }
            seen[v * width..(v + 1) * width].copy_from_slice(&acc);
        }
        ExecutesBefore {
            width,
            col: e.col,
            start: e.start,
            seen,
        }
    }

    /// Testing aid (`SearchOptions::verify_encoding`, in
    /// `System::check_independent`): the one-pass rows in topological
    /// order equal the fixed point's.
    pub(crate) fn check_topological(s: &State) {
        assert!(
            Self::build(s, true).seen == Self::build(s, false).seen,
            "executes-before in topological order differs from the fixed point"
        );
    }

    /// Testing aid (`SearchOptions::verify_encoding`, after history
    /// compaction): executes-before between the events compaction kept
    /// (`remap`: old position to new), and from each kept event to each
    /// running thread's next event, is what it was before. Histories of
    /// more than `LIMIT` kept events are left out (the check is quadratic).
    pub(crate) fn check_compaction(old: &State, new: &State, remap: &HashMap<(u32, u32), (u32, u32)>) {
        const LIMIT: usize = 600;
        if remap.len() > LIMIT {
            return;
        }
        let (a, b) = (Self::of(old), Self::of(new));
        let mut kept: Vec<((u32, u32), (u32, u32))> = remap.iter().map(|(&o, &n)| (o, n)).collect();
        kept.sort_unstable();
        for &(x, x2) in &kept {
            for &(y, y2) in kept.iter().filter(|(y, _)| y.0 != x.0) {
                assert_eq!(
                    a.eb(x, y),
                    b.eb(x2, y2),
                    "compaction changed executes-before from {x:?} to {y:?} (now {x2:?} to {y2:?})"
                );
            }
        }
        // What executes before thread `u`'s next event: its last event and
        // the summary edges into its next slot.
        fn before_next(s: &State, eb: &ExecutesBefore, x: (u32, u32), u: usize) -> bool {
            let next = s.hist[u].len() as u32;
            let slot = (u as u32, next);
            let last = next.checked_sub(1).map(|po| (u as u32, po));
            let into = s
                .extra
                .iter()
                .filter(|f| f.targets.contains(&slot))
                .flat_map(|f| f.sources.iter().copied().filter(|p| p.1 != START && p.0 != u as u32));
            last.into_iter().chain(into).any(|p| p == x || eb.eb(x, p))
        }
        for u in (0..old.threads.len()).filter(|&u| old.threads[u].status == Status::Running) {
            for &(x, x2) in kept.iter().filter(|(x, _)| x.0 != u as u32) {
                assert_eq!(
                    before_next(old, &a, x, u),
                    before_next(new, &b, x2, u),
                    "compaction changed whether {x:?} (now {x2:?}) executes before thread {u}'s next event\nold {:?}\nnew {:?}\nold extra {:?}\nnew extra {:?}",
                    old.hist, new.hist, old.extra, new.extra
                );
            }
        }
    }

    /// [`ExecutesBefore::of`], in topological order where `topological`
    /// (and the edges have no cycle), else as a fixed point.
    fn build(s: &State, topological: bool) -> ExecutesBefore {
        let nt = s.hist.len();
        let start = event_starts(s);
        let n = start[nt];
        // Columns only for threads with events (a grid of thousands of
        // threads has a few blocks' worth of history at a time).
        let mut col = vec![u32::MAX; nt];
        let mut width = 0usize;
        for (t, h) in s.hist.iter().enumerate() {
            if !h.is_empty() {
                col[t] = width as u32;
                width += 1;
            }
        }
        let c = |u: u32| col[u as usize] as usize;
        let exists = |(t, po): (u32, u32)| (t as usize) < nt && (po as usize) < s.hist[t as usize].len();
        // The edges into each event from other threads: its participants
        // (a wait), and the extra edges (their source `START` is no event,
        // their target past a thread's history a future event). The waits
        // of one phase share its member list (`state::Members`): each
        // distinct list is kept once, and the join of its members' rows is
        // computed once a pass (T waits of T participants with rows of T
        // threads would cost T^3 a pass). Any order of these monotone
        // updates from zero reaches the same least fixed point, and a pass
        // that changes nothing used up-to-date joins.
        let mut from: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut lists: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut list_of: Vec<Option<usize>> = vec![None; n];
        let mut by_addr: HashMap<*const Vec<(u32, u32)>, usize> = Default::default();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if let HKind::Wait { participants, .. } = &ev.kind {
                    let i = *by_addr.entry(std::sync::Arc::as_ptr(participants)).or_insert_with(|| {
                        lists.push(participants.iter().copied().filter(|&x| exists(x)).collect());
                        lists.len() - 1
                    });
                    list_of[start[t] + po] = Some(i);
                }
            }
        }
        for fan in &s.extra {
            for &x in fan.sources.iter().filter(|x| x.1 != START && exists(**x)) {
                for &(u, k) in fan.targets.iter().filter(|y| y.0 != x.0 && exists(**y)) {
                    from[start[u as usize] + k as usize].push(x);
                }
            }
        }
        if let Some(seen) = (topological)
            .then(|| Self::in_topological_order(s, &start, &col, width, &from, &lists, &list_of))
            .flatten()
        {
            return ExecutesBefore {
                width,
                col,
                start,
                seen,
            };
        }
        let mut seen = vec![0u32; n * width];
        let mut row = vec![0u32; width];
        // Per distinct list, the join of its members' rows (and each
        // member's own position), and the pass it was computed in.
        let mut joins: Vec<(usize, Vec<u32>)> = vec![(0, Vec::new()); lists.len()];
        let mut pass = 0;
        let mut changed = true;
        while changed {
            changed = false;
            pass += 1;
            for t in 0..nt {
                for po in 0..s.hist[t].len() {
                    let e = start[t] + po;
                    row.copy_from_slice(&seen[e * width..(e + 1) * width]);
                    row[c(t as u32)] = row[c(t as u32)].max(po as u32);
                    let preds = (po > 0).then(|| (t as u32, po as u32 - 1));
                    for &(u, k) in preds.iter().chain(&from[e]) {
                        let p = start[u as usize] + k as usize;
                        for (r, &x) in row.iter_mut().zip(&seen[p * width..(p + 1) * width]) {
                            *r = (*r).max(x);
                        }
                        row[c(u)] = row[c(u)].max(k + 1);
                    }
                    if let Some(i) = list_of[e] {
                        if joins[i].0 != pass {
                            let mut j = vec![0u32; width];
                            for &(u, k) in &lists[i] {
                                let p = start[u as usize] + k as usize;
                                for (r, &x) in j.iter_mut().zip(&seen[p * width..(p + 1) * width]) {
                                    *r = (*r).max(x);
                                }
                                j[c(u)] = j[c(u)].max(k + 1);
                            }
                            joins[i] = (pass, j);
                        }
                        for (r, &x) in row.iter_mut().zip(&joins[i].1) {
                            *r = (*r).max(x);
                        }
                    }
                    if row[..] != seen[e * width..(e + 1) * width] {
                        seen[e * width..(e + 1) * width].copy_from_slice(&row);
                        changed = true;
                    }
                }
            }
        }
        ExecutesBefore {
            width,
            col,
            start,
            seen,
        }
    }

    /// The rows of [`ExecutesBefore::of`] in one pass over the events in
    /// a topological order of their edges (program order, `from`, and
    /// each wait's participant list, a node of its own whose row is the
    /// join of its members'), found by Kahn's algorithm. The fixed point
    /// took a pass per cross-thread link of the longest chain running
    /// against thread order: a pipeline's history of a thousand events
    /// took tens of passes. `None` if the edges have a cycle (a history
    /// the search built has none; the fixed point then decides).
    #[allow(clippy::too_many_arguments)]
    fn in_topological_order(
        s: &State,
        start: &[usize],
        col: &[u32],
        width: usize,
        from: &[Vec<(u32, u32)>],
        lists: &[Vec<(u32, u32)>],
        list_of: &[Option<usize>],
    ) -> Option<Vec<u32>> {
        let nt = s.hist.len();
        let n = start[nt];
        let nodes = n + lists.len();
        let idx = |(u, k): (u32, u32)| start[u as usize] + k as usize;
        let mut indeg = vec![0u32; nodes];
        let mut succs: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        let mut thread_of = vec![0u32; n];
        for (t, h) in s.hist.iter().enumerate() {
            for po in 0..h.len() {
                let e = start[t] + po;
                thread_of[e] = t as u32;
                if po > 0 {
                    succs[e - 1].push(e as u32);
                    indeg[e] += 1;
                }
                for &x in &from[e] {
                    succs[idx(x)].push(e as u32);
                    indeg[e] += 1;
                }
                if let Some(i) = list_of[e] {
                    succs[n + i].push(e as u32);
                    indeg[e] += 1;
                }
            }
        }
        for (i, list) in lists.iter().enumerate() {
            for &x in list {
                succs[idx(x)].push((n + i) as u32);
                indeg[n + i] += 1;
            }
        }
        let mut rows = vec![0u32; nodes * width];
        let mut ready: Vec<usize> = (0..nodes).filter(|&v| indeg[v] == 0).collect();
        let mut done = 0;
        while let Some(v) = ready.pop() {
            done += 1;
            // An event counts itself in its own column: what follows it
            // sees one more of its thread's events.
            let mut own = None;
            if v < n {
                let t = thread_of[v] as usize;
                let c = col[t] as usize;
                let po = (v - start[t]) as u32;
                rows[v * width + c] = rows[v * width + c].max(po);
                own = Some((c, po + 1));
            }
            for &w in &succs[v] {
                let w = w as usize;
                let (head, tail) = rows.split_at_mut(w.max(v) * width);
                let (src, dst) = if v < w {
                    (&head[v * width..(v + 1) * width], &mut tail[..width])
                } else {
                    (&tail[..width], &mut head[w * width..(w + 1) * width])
                };
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d = (*d).max(x);
                }
                if let Some((c, k)) = own {
                    dst[c] = dst[c].max(k);
                }
                indeg[w] -= 1;
                if indeg[w] == 0 {
                    ready.push(w);
                }
            }
        }
        if done < nodes {
            return None;
        }
        rows.truncate(n * width);
        Some(rows)
    }

    /// The index of event `(t, po)`.
    fn index(&self, (t, po): (u32, u32)) -> usize {
        self.start[t as usize] + po as usize
    }

    /// How many events of thread `u` execute before event `e` (they are a
    /// prefix of `u`'s history; for `e`'s own thread, the events before
    /// it).
    pub(crate) fn prefix(&self, e: (u32, u32), u: usize) -> u32 {
        match self.col[u] {
            u32::MAX => 0,
            c => self.seen[self.index(e) * self.width + c as usize],
        }
    }

    /// Does `a` execute before `b`? A launch event executes before every
    /// event of a thread.
    pub(crate) fn eb(&self, a: (u32, u32), b: (u32, u32)) -> bool {
        a.0 == LAUNCH || a.1 < self.seen[self.index(b) * self.width + self.col[a.0 as usize] as usize]
    }
}

impl System<'_> {
    /// The rules the explorer judges over a whole history, where the rule
    /// checker judges an execution (`judge` in `record.rs`: at end states,
    /// stopped searches, and before compaction forgets): the findings of
    /// those `s` breaks that the model judges.
    pub(crate) fn history_rules(&self, s: &State, ident: &[u32]) -> HistoryFindings {
        // Computed at the first question: a history with one phase per
        // barrier and no plain accesses asks none (a block of a thousand
        // threads after compaction).
        let eb = LazyEb::new(s);
        let mut out = Vec::new();
        let rules = self.p.model.rules;
        for (rule, msg) in [
            (Rule::PhaseWith, self.phase_with(s, &eb, ident)),
            (Rule::ArriveThenDrop, self.arrive_then_drop(s, &eb, ident)),
        ] {
            if let (true, Some(msg), Some(kind)) = (rules.has(rule), msg, rule.finding()) {
                out.push((kind, msg));
            }
        }
        if let Some(msg) = self.race(s, &eb, ident) {
            out.push((FindingKind::Race, msg));
        }
        out
    }

    /// The waits each of `events` participates in, by participant (only
    /// those: every participant of a phase of T threads would be T^2
    /// entries).
    fn waits_of(s: &State, events: &[(u32, u32)]) -> HashMap<(u32, u32), Vec<(u32, u32)>> {
        let mut out: HashMap<(u32, u32), Vec<(u32, u32)>> = events.iter().map(|&a| (a, Vec::new())).collect();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if let HKind::Wait { participants, .. } = &ev.kind {
                    for x in participants.iter() {
                        if let Some(ws) = out.get_mut(x) {
                            ws.push((t as u32, po as u32));
                        }
                    }
                }
            }
        }
        out
    }

    /// phase-with ("Execution Model", barrier-phase-with): between an
    /// operation A that participates in a wait W and W itself, in
    /// executes-before, lies no operation X on W's barrier that is linked
    /// by participates-in (either way, transitively) to some operation
    /// while not to W: such an X belongs to another phase. The message for
    /// the first such A, X and W of `s`. Compaction keeps a barrier's
    /// completed phases while an operation of its open phase executes
    /// before one of its completed waits, so a forgotten X cannot lie
    /// between a kept participant and its wait.
    pub(crate) fn phase_with(&self, s: &State, eb: &LazyEb, ident: &[u32]) -> Option<String> {
        // The phase-with classes, by union-find over event indices (a
        // launch participant has no index and links nothing).
        let n = eb.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let waits: Vec<(u32, u32)> = (0..s.hist.len())
            .flat_map(|t| (0..s.hist[t].len()).map(move |po| (t as u32, po as u32)))
            .filter(|&(t, po)| matches!(&s.hist[t as usize][po as usize].kind, HKind::Wait { participants, .. } if !participants.is_empty()))
            .collect();
        let participants = |(t, po): (u32, u32)| match &s.hist[t as usize][po as usize].kind {
            HKind::Wait { participants, .. } => Some(participants),
            _ => None,
        };
        // The waits of one phase share its member list (`state::Members`):
        // each distinct list's members are linked once, and each wait to
        // the list's first member, which gives the classes linking each
        // wait to each member did (T waits of T members cost T^2 unions).
        let mut first_of: HashMap<*const Vec<(u32, u32)>, Option<usize>> = HashMap::default();
        for &w in &waits {
            let Some(list) = participants(w) else { continue };
            let first = *first_of.entry(std::sync::Arc::as_ptr(list)).or_insert_with(|| {
                let mut members = list.iter().filter(|x| x.0 != LAUNCH).map(|&x| eb.index(x));
                let first = members.next();
                if let Some(f) = first {
                    for x in members {
                        let (a, b) = (root(&mut parent, x), root(&mut parent, f));
                        parent[a] = b;
                    }
                }
                first
            });
            if let Some(f) = first {
                let (a, b) = (root(&mut parent, eb.index(w)), root(&mut parent, f));
                parent[a] = b;
            }
        }
        let roots: Vec<usize> = (0..n).map(|x| root(&mut parent, x)).collect();
        let mut size = vec![0usize; n];
        for &r in &roots {
            size[r] += 1;
        }
        // Per target, the classes of two or more events on it: a wait
        // whose target holds its own class alone has nothing of another
        // phase to look for (after compaction, a barrier holds one phase).
        let mut classes: HashMap<Target, Vec<usize>> = HashMap::default();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                let r = roots[eb.index((t as u32, po as u32))];
                if size[r] >= 2 {
                    let c = classes.entry(ev.target).or_default();
                    if !c.contains(&r) {
                        c.push(r);
                    }
                }
            }
        }
        for &w in &waits {
            let target = s.hist[w.0 as usize][w.1 as usize].target;
            let phase = roots[eb.index(w)];
            if classes.get(&target).is_none_or(|c| c.iter().all(|&r| r == phase)) {
                continue;
            }
            // The events of another phase that execute before `w`, in
            // history order; found once per wait rather than once per
            // participant (T waits of T participants over 2T events cost
            // T^3 at every compaction).
            let between: Vec<(u32, u32)> = s
                .hist
                .iter()
                .enumerate()
                .flat_map(|(u, h)| h.iter().enumerate().map(move |(k, ev)| ((u as u32, k as u32), ev)))
                .filter(|&(x, ev)| {
                    let i = eb.index(x);
                    ev.target == target && x != w && size[roots[i]] >= 2 && roots[i] != phase && eb.eb(x, w)
                })
                .map(|(x, _)| x)
                .collect();
            if between.is_empty() {
                continue;
            }
            for &a in participants(w).map_or(&[][..], |l| l.as_slice()) {
                for &x in &between {
                    if x != a && eb.eb(a, x) {
                        return Some(format!(
                            "{} participates in {}, but {} of another phase executes between them",
                            self.label_of(s, a.0, a.1, ident),
                            self.label_of(s, w.0, w.1, ident),
                            self.label_of(s, x.0, x.1, ident)
                        ));
                    }
                }
            }
        }
        None
    }

    /// arrive-then-drop ("Execution Model", an arrive A and a later drop D
    /// of one thread on one barrier: A participates in no wait, or in one
    /// that executes before D; "Informational Notes": no drop after an
    /// arrive before the barrier completes). A thread-counted arrive is
    /// exempt (docs/semantics.md: its phase completes at its count, which
    /// a drop does not change), and an `arrive_drop` is one operation, no
    /// arrive followed by a drop. The message for the first such pair of
    /// `s`. Compaction forgets an arrive only once a wait on its phase
    /// precedes every later drop of its thread.
    pub(crate) fn arrive_then_drop(&self, s: &State, eb: &LazyEb, ident: &[u32]) -> Option<String> {
        // The pairs to judge: an arrive, then a drop of its thread on
        // its barrier.
        let mut pairs = Vec::new();
        for (t, h) in s.hist.iter().enumerate() {
            for (d, drop) in h.iter().enumerate().filter(|(_, e)| matches!(e.kind, HKind::Drop)) {
                for (a, _) in h[..d].iter().enumerate().filter(|(_, e)| {
                    e.target == drop.target
                        && matches!(e.kind, HKind::Arrive(_, c, _) if !matches!(c, Some(ArriveCount::Threads(_))))
                }) {
                    pairs.push(((t as u32, a as u32), (t as u32, d as u32)));
                }
            }
        }
        // A wait of the arriving thread itself, between the arrive and the
        // drop, that the arrive participates in executes before the drop
        // (program order): such a pair is fine, and listing every wait of
        // every arrive (a block of 1,024 threads: a million entries) is
        // left to the rest.
        pairs.retain(|&((t, a), (_, d))| {
            !s.hist[t as usize][a as usize + 1..d as usize].iter().any(|e| {
                e.target == s.hist[t as usize][a as usize].target
                    && matches!(&e.kind, HKind::Wait { participants, .. } if participants.contains(&(t, a)))
            })
        });
        if pairs.is_empty() {
            return None;
        }
        let arrives: Vec<(u32, u32)> = pairs.iter().map(|&(a, _)| a).collect();
        let waits_of = Self::waits_of(s, &arrives);
        for (a, d) in pairs {
            let Some(ws) = waits_of.get(&a).filter(|ws| !ws.is_empty()) else {
                continue;
            };
            if !ws.iter().any(|&w| eb.eb(w, d)) {
                return Some(format!(
                    "{} arrives, then {} drops before any wait its arrive participates in has completed (e.g. {})",
                    self.label_of(s, a.0, a.1, ident),
                    self.label_of(s, d.0, d.1, ident),
                    self.label_of(s, ws[0].0, ws[0].1, ident)
                ));
            }
        }
        None
    }

    /// race (`docs/semantics.md`, "The rules, by name"; project notes
    /// section 6): two plain accesses of one location by different
    /// threads, one a write, that executes-before orders neither way
    /// (barriers order execution only: "Execution Model", its note on
    /// memory). The message for the first such pair of `s`. Compaction
    /// forgets an access only once it executes before every future access.
    ///
    /// Where some barrier orders memory only through fences
    /// ([`Program::fence_events`]), "ordered" is
    /// [`ExecutesBefore::memory`]'s order instead.
    pub(crate) fn race(&self, s: &State, eb: &LazyEb, ident: &[u32]) -> Option<String> {
        let plain: Vec<((u32, u32), &HEvent)> = s
            .hist
            .iter()
            .enumerate()
            .flat_map(|(t, h)| h.iter().enumerate().map(move |(po, e)| ((t as u32, po as u32), e)))
            .filter(|(_, e)| matches!(e.kind, HKind::Read | HKind::Write))
            .collect();
        let memory = std::cell::OnceCell::new();
        let ordered = |x, y| {
            if self.p.fence_events {
                memory.get_or_init(|| ExecutesBefore::memory(s, self.p)).eb(x, y)
            } else {
                eb.eb(x, y)
            }
        };
        let order = if self.p.fence_events {
            "executes-before through fences"
        } else {
            "executes-before"
        };
        for (i, &(x, ex)) in plain.iter().enumerate() {
            for &(y, ey) in &plain[i + 1..] {
                if x.0 == y.0 || ex.target != ey.target || !(ex.kind == HKind::Write || ey.kind == HKind::Write) {
                    continue;
                }
                if !ordered(x, y) && !ordered(y, x) {
                    return Some(format!(
                        "{} and {} are not ordered by {order}",
                        self.label_of(s, x.0, x.1, ident),
                        self.label_of(s, y.0, y.1, ident)
                    ));
                }
            }
        }
        None
    }
}
