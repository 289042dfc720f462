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

use crate::analysis::history::ExecutesBefore;
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::token::decode_token;
use crate::state::{HKind, Phase, State, Status};
use bc_graph::*;
use bc_models::Rule;

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

/// A completed wait with participants, as the aligned-wait rule reads it:
/// (po, barrier, sorted participants, site, whether `.aligned`).
type SeenWait = (u32, Target, Vec<(u32, u32)>, (u32, u32), bool);

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

    /// first-bmo-init as the async proxy sees it (docs/semantics.md, "The
    /// async proxy", barrier inits): agent `t` of a bulk copy completes
    /// transactions on mbarrier `b` through the async proxy, which sees
    /// the latest init of `b` only through a proxy fence
    /// (`fence.proxy.async`, `fence.mbarrier_init`) of the initializing
    /// thread after the init that executes before the copy (the CUDA
    /// guide's TMA example, step 1b: make the initialized barrier visible
    /// in the async proxy). A launch init is visible to every proxy.
    pub(crate) fn init_seen_by_async_proxy(&self, s: &State, t: usize, b: usize, w: &mut Worker) {
        if !self.p.model.rules.has(Rule::FirstBmoInit) {
            return;
        }
        let latest = s.bmo[b].iter().rev().find(|&&(u, po)| {
            u == crate::state::LAUNCH
                || matches!(
                    s.hist[u as usize].get(po as usize).map(|e| &e.kind),
                    Some(HKind::Init(_))
                )
        });
        let Some(&(u, i)) = latest.filter(|&&(u, _)| u != crate::state::LAUNCH) else {
            return;
        };
        let Some(last) = s.hist[t].len().checked_sub(1) else {
            return;
        };
        // Executes-before only where a candidate fence exists (most inits
        // have none after them by the time the copy completes, or one).
        let eb = std::cell::OnceCell::new();
        let h = &s.hist[u as usize];
        let fenced = (i as usize + 1..h.len()).any(|k| {
            matches!(h[k].kind, HKind::Fence(f) if f.publishes_inits())
                && eb
                    .get_or_init(|| crate::analysis::history::ExecutesBefore::of(s))
                    .eb((u, k as u32), (t as u32, last as u32))
        });
        if !fenced {
            let msg = format!(
                "{} completes transactions on {} through the async proxy, which may not see its init by {}: no fence.proxy.async (or fence.mbarrier_init) of that thread after the init is ordered before the copy",
                self.thread_name(&w.ident, t),
                self.bname(b),
                self.thread_name(&w.ident, u as usize)
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
                let i = s.hist[a].iter().rposition(|ev| match (&ev.kind, ev.target) {
                    (HKind::Arrive(..), Target::Barrier(b)) => !self.p.barriers[b.index()].props.copy_written,
                    (HKind::Arrive(..), _) => true,
                    (HKind::Tx(d), _) => *d <= 0,
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
        let mut seen = Vec::new();
        for &(t, po) in ph.members.iter() {
            let (site, _, true) = of(t, po) else {
                continue;
            };
            let warp = self.p.threads[t as usize].warp_id;
            if seen.contains(&(warp, site)) {
                continue;
            }
            seen.push((warp, site));
            // A warp that runs two `.aligned` arrives in one phase runs
            // each together: a lane's other arrivals are no divergence.
            // A copy agent carries its issuer's place but is no lane.
            let lanes = (0..self.p.threads.len())
                .filter(|&u| self.p.threads[u].warp_id == warp && self.p.threads[u].kind != ThreadKind::Copy);
            for u in lanes {
                let mine: Vec<(u32, u32)> = ph.members.iter().copied().filter(|&(x, _)| x as usize == u).collect();
                let kinds: Vec<_> = mine.iter().map(|&(x, q)| of(x, q)).collect();
                if kinds.iter().any(|&(st, arrive, _)| arrive && st == site) {
                    continue;
                }
                let why = if mine.is_empty() {
                    "does not arrive in that phase"
                } else if kinds.iter().any(|&(_, arrive, _)| !arrive) {
                    "leaves it by exiting"
                } else {
                    "arrives through another instruction"
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

    /// aligned-barrier for the wait of a split `.aligned` barrier, as the
    /// rule checker's `aligned_wait` judges it: where a lane waits on a
    /// phase through an `.aligned` wait (`barrier.cluster.wait.aligned`),
    /// no lane of its warp waits on that phase through another
    /// instruction, and none ends (dropping the barrier) without waiting
    /// on it. Each fact is made by a wait or an end, so it is judged at
    /// thread `t`'s wait just recorded (`at_end` false: its last event)
    /// or at its end (`at_end`: its end drops are its last events).
    pub(crate) fn aligned_wait_rule(&self, s: &State, t: usize, at_end: bool, w: &mut Worker) {
        if !self.an.aligned_waits {
            return;
        }
        let aligned_at = |u: usize, pc: u32| {
            matches!(
                self.p.instr(ThreadId(u as u32), pc).map(|i| &i.kind),
                Some(InstrKind::Barrier { op: BarrierOp::Wait(x), .. }) if x.aligned
            )
        };
        // Thread `u`'s completed waits with participants: (po, barrier,
        // sorted participants, site, aligned).
        let waits = |u: usize| -> Vec<SeenWait> {
            (s.hist[u].iter().enumerate())
                .filter_map(|(po, ev)| match &ev.kind {
                    HKind::Wait { participants, .. } if !participants.is_empty() => {
                        let mut ph = participants.to_vec();
                        ph.sort_unstable();
                        let site = (self.p.threads[u].code.0, ev.pc);
                        Some((po as u32, ev.target, ph, site, aligned_at(u, ev.pc)))
                    }
                    _ => None,
                })
                .collect()
        };
        let ends_on = |u: usize, b: Target| {
            s.threads[u].status == Status::Done
                && s.hist[u]
                    .iter()
                    .any(|ev| ev.pc == AT_END && ev.target == b && matches!(ev.kind, HKind::Drop))
        };
        let warp = self.p.threads[t].warp_id;
        let mates: Vec<usize> = (0..self.p.threads.len())
            .filter(|&u| u != t && self.p.threads[u].warp_id == warp && self.p.threads[u].kind != ThreadKind::Copy)
            .collect();
        let mine = waits(t);
        let report = |x: usize, po: u32, u: usize, why: &str, w: &mut Worker| {
            let b = match s.hist[x][po as usize].target {
                Target::Barrier(b) => self.bname(b.index()).to_string(),
                _ => String::new(),
            };
            let msg = format!(
                "{} waits through an .aligned instruction on a phase of {b}, and {} of its warp {why}",
                self.label_of(s, x as u32, po, &w.ident),
                self.thread_name(&w.ident, u)
            );
            self.violated(Rule::AlignedBarrier, msg, w);
        };
        if at_end {
            for &u in &mates {
                for (po, b, ph, _, aligned) in waits(u) {
                    if aligned && ends_on(t, b) && !mine.iter().any(|m| m.1 == b && m.2 == ph) {
                        report(u, po, t, "exits without waiting on that phase", w);
                        return;
                    }
                }
            }
            return;
        }
        let Some((po, b, ph, site, aligned)) = mine.last().cloned() else {
            return;
        };
        if po as usize + 1 != s.hist[t].len() {
            return;
        }
        for &u in &mates {
            let theirs: Vec<_> = waits(u).into_iter().filter(|x| x.1 == b && x.2 == ph).collect();
            if let Some(x) = theirs.iter().find(|x| x.3 != site && (aligned || x.4)) {
                if aligned {
                    report(t, po, u, "waits on that phase through another instruction", w);
                } else {
                    report(u, x.0, t, "waits on that phase through another instruction", w);
                }
                return;
            }
            if aligned && theirs.is_empty() && ends_on(u, b) {
                report(t, po, u, "exits without waiting on that phase", w);
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

/// A phase count as messages name it.
fn count_text(c: ArriveCount) -> String {
    match c {
        ArriveCount::Block => "the whole block".into(),
        ArriveCount::Threads(k) => k.to_string(),
    }
}
