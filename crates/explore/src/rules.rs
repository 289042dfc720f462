//! The rules the explorer decides as it steps, one function each, named as
//! `Rule::name()` prints the rule (`docs/ARCHITECTURE.md`, section "Rules",
//! lists them beside the rule checker's). A violation is recorded through
//! [`Explorer::violated`], by rule only: what it reports is the rule's
//! finding ([`Rule::finding`]), and nothing when the model disables the
//! rule. The functions on [`System`] read the state alone and return the
//! violation's message; the transitions (`step.rs`, `choices.rs`) call each
//! where the operation it judges happens, and report what they return.

use crate::explorer::Explorer;
use crate::state::{HKind, Phase, State};
use crate::step::decode_token;
use crate::system::System;
use bc_graph::*;
use bc_models::Rule;

/// What an operation does to a barrier's expected count, for
/// [`Explorer::drop_not_negative`].
pub(crate) enum ExpectedCount {
    /// An init sets it to this count.
    Init(i64),
    /// A drop lowers it by one from this count.
    Drop(i64),
    /// A positive arrive_drop leaves this count after the phase completes.
    ArriveDrop(i64),
}

impl Explorer<'_> {
    /// Records a violation of `rule` found by the last step, unless the
    /// model disables the rule.
    pub(crate) fn violated(&mut self, rule: Rule, msg: String) {
        self.report(rule, msg, false);
    }

    /// As [`Explorer::violated`]; `objectless`: the operation named no
    /// barrier (the finding locates no barrier object).
    fn report(&mut self, rule: Rule, msg: String, objectless: bool) {
        if self.p.model.rules.has(rule) {
            let kind = rule.finding().expect("the explorer reports rules with a finding");
            self.pending.push((kind, msg, objectless));
        }
    }

    /// first-bmo-init: the first modification of a barrier is an init
    /// ("Execution Model": the first element of a bmo is an init; CUDA:
    /// project notes section 3, init before any use). Thread `t` modifies
    /// barrier `b`.
    pub(crate) fn first_bmo_init(&mut self, s: &State, t: usize, b: usize) {
        if !s.bars[b].init {
            let msg = format!("{} operates on {} before any init", self.tname(t), self.bname(b));
            self.violated(Rule::FirstBmoInit, msg);
        }
    }

    /// drop-needs-join: a drop needs a joined-before join ("Execution
    /// Model": for every barrier drop, a join of the same barrier before
    /// it). Thread `t` drops barrier `b`, or, for `None`, leaves a group in
    /// which it holds no joined barrier.
    pub(crate) fn drop_needs_join(&mut self, s: &State, t: usize, b: Option<usize>) {
        match b {
            None => {
                let msg = format!("{} leaves with no joined barrier", self.tname(t));
                self.report(Rule::DropNeedsJoin, msg, true);
            }
            Some(b) if !s.threads[t].joined.contains(&(b as u32)) => {
                let msg = format!("{} drops {} with no joined-before join", self.tname(t), self.bname(b));
                self.violated(Rule::DropNeedsJoin, msg);
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
    pub(crate) fn drop_not_negative(&mut self, t: usize, b: usize, change: ExpectedCount) {
        let msg = match change {
            ExpectedCount::Init(k) if k <= 0 => format!(
                "{} initializes {} with expected count {k}",
                self.tname(t),
                self.bname(b)
            ),
            ExpectedCount::Drop(e) if e <= 0 => format!(
                "{} drops {} below an expected count of zero",
                self.tname(t),
                self.bname(b)
            ),
            ExpectedCount::ArriveDrop(left) if left <= 0 => format!(
                "{}'s arrive_drop brings the expected count of {} to zero",
                self.tname(t),
                self.bname(b)
            ),
            _ => return,
        };
        self.violated(Rule::DropNotNegative, msg);
    }

    /// expected-count-update: an arrive that sets the expected count sets
    /// it above the arrive count of the open phase ("Execution Model",
    /// "Barrier arrive"). Thread `t` sets barrier `b`'s count to `k`.
    pub(crate) fn expected_count_update(&mut self, s: &State, t: usize, b: usize, k: i64) {
        let arrived = s.bars[b].arrived;
        if k <= arrived {
            let msg = format!(
                "{} sets the expected count of {} to {k} with {arrived} arrive(s) counted",
                self.tname(t),
                self.bname(b)
            );
            self.violated(Rule::ExpectedCountUpdate, msg);
        }
    }

    /// count-overflow: a count stays within the model's maximum
    /// (cuda-barrier-libcudacxx.txt, `cuda::barrier::max()`). Thread `t`
    /// gives barrier `b` the count `k`.
    pub(crate) fn count_overflow(&mut self, t: usize, b: usize, k: i64) {
        if let Some(max) = self.p.model.max_count {
            if k > max {
                let msg = format!(
                    "{} sets the count of {} to {k}, above the maximum {max}",
                    self.tname(t),
                    self.bname(b)
                );
                self.violated(Rule::CountOverflow, msg);
            }
        }
    }

    /// count-mismatch: the arrivals of one phase of a thread-counted
    /// barrier use one count (project notes section 3, named barriers: one
    /// count per phase). Thread `t` arrives on barrier `b` with `count`.
    pub(crate) fn count_mismatch(&mut self, s: &State, t: usize, b: usize, count: Option<ArriveCount>) {
        if let (Some(c), Some(open)) = (count, s.bars[b].open.as_ref().and_then(|p| p.count)) {
            if c != open {
                let msg = format!(
                    "{} arrives on {} with count {} in a phase counted with {}",
                    self.tname(t),
                    self.bname(b),
                    count_text(c),
                    count_text(open)
                );
                self.violated(Rule::CountMismatch, msg);
            }
        }
    }

    /// arrive-twice: a thread arrives at most once in one phase of a
    /// thread-counted barrier (project notes section 3, named barriers: one
    /// arrival per thread before the barrier resets). Thread `t` arrives on
    /// barrier `b` with `count` (`None`: the barrier is not thread-counted).
    pub(crate) fn arrive_twice(&mut self, s: &State, t: usize, b: usize, count: Option<ArriveCount>) {
        if count.is_some() && self.sys.arrived_in_open(s, t, b) {
            let msg = format!(
                "{} arrives on {} a second time in one phase",
                self.tname(t),
                self.bname(b)
            );
            self.violated(Rule::ArriveTwice, msg);
        }
    }

    /// arrive-before-wait: a thread whose arrive completed a phase of a
    /// `cuda::barrier` waits on that phase before it arrives again (project
    /// notes section 3, `cuda::barrier`; CUDA guide, "A Barrier's Phase:
    /// Arrival, Countdown, Completion, and Reset"). The thread's `owes` set
    /// holds the barriers it owes a wait on (kept by `barrier_step` and
    /// `bind`). Thread `t` arrives on barrier `b`.
    pub(crate) fn arrive_before_wait(&mut self, s: &State, t: usize, b: usize) {
        if s.threads[t].owes.contains(&(b as u32)) {
            let msg = format!(
                "{} arrives on {} again before waiting on the phase its arrive completed",
                self.tname(t),
                self.bname(b)
            );
            self.violated(Rule::ArriveBeforeWait, msg);
        }
    }

    /// wait-needs-join: a wait needs a joined-before join ("Execution
    /// Model": for every barrier wait, a join that executes before a
    /// participant). [`System::wait_plan`] decides it (a wait with no
    /// joined-before join is `WaitPlan::NoJoin`, and does nothing), and
    /// [`System::eligible`] offers only phases a member of which the join
    /// executes before. Thread `t` waits on barrier `b` with no join.
    pub(crate) fn wait_needs_join(&mut self, t: usize, b: usize) {
        let msg = format!(
            "{} waits on {} with no joined-before join",
            self.tname(t),
            self.bname(b)
        );
        self.violated(Rule::WaitNeedsJoin, msg);
    }

    /// divergent-barrier, at a phase's completion: a uniform (block-wide)
    /// barrier is reached from one instruction site by the whole scope
    /// (CUDA guide, "Synchronization Functions": `__syncthreads` in
    /// conditional code). `ph` is the phase of barrier `b` just completed.
    pub(crate) fn divergent_barrier(&mut self, b: usize, ph: &Phase) {
        if !(self.p.barriers[b].props.uniform && ph.is_block_wide() && (ph.mixed_sites || ph.exit_drop)) {
            return;
        }
        let why = if ph.mixed_sites {
            "different instruction sites"
        } else {
            "only some threads (others exited)"
        };
        let msg = format!("phase {} of {} is completed by {why}", ph.number, self.bname(b));
        self.violated(Rule::DivergentBarrier, msg);
    }

    /// divergent-barrier, for waits stuck for good (at an end state, or
    /// throughout a fair cycle): a uniform (block-wide) barrier that some
    /// threads of its scope reached while the others never will (CUDA
    /// guide, "Synchronization Functions").
    pub(crate) fn divergent_barrier_stuck(&mut self, s: &State, stuck_waits: &[usize]) {
        for &t in stuck_waits {
            if let Some(InstrKind::Barrier { sel, .. }) =
                self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind)
            {
                if let Some(b) = self.sys.resolve(s, t, *sel) {
                    if self.p.barriers[b].props.uniform && s.bars[b].open.as_ref().is_some_and(|p| p.is_block_wide()) {
                        let msg = format!(
                            "{} is reached by only some threads of its scope",
                            self.p.barriers[b].name
                        );
                        self.violated(Rule::DivergentBarrier, msg);
                    }
                }
            }
        }
    }

    /// wait-completes, at an end state: every wait completes
    /// ("Informational Notes": a wait that never completes is undefined;
    /// reported as `deadlock`). `at` names the threads whose waits never
    /// will, with their statements.
    pub(crate) fn wait_completes(&mut self, at: String) {
        self.violated(Rule::WaitCompletes, format!("stuck forever: {at}"));
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
                self.p.threads[t].lane,
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
            self.p.threads[u.index()].lane,
            w.mask,
            ph.number,
            self.bname(b)
        ))
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
        // the phase was forgotten (compaction forgets a phase only after
        // each arriving thread waited on it; numbers never repeat). A phase
        // not completed yet (the wait blocks) was waited on by nobody.
        let forgotten = tp < s.bars[b].phase_base;
        let used = forgotten
            || s.hist[t].iter().any(|e| {
                e.target == Target::Barrier(BarrierId(b as u32))
                    && matches!(&e.kind, HKind::Wait { token_phase: Some(p), participants, .. }
                        if *p == tp && !participants.is_empty())
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
