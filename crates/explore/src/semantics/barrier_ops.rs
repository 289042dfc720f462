//! One barrier operation, the part of a step that acts on a barrier
//! object: arrives, drops and inits as modifications of its bmo
//! (`modify`), waits completing on a completed phase they may take
//! (`wait_step`, `bind`), joins (`join`), each raising the operational
//! findings it meets into the stepping [`Worker`] (`rules.rs`).

use crate::semantics::choices::WaitPlan;
use crate::semantics::eval::eval;
use crate::semantics::rules::ExpectedCount;
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::token::encode_token;
use crate::state::{HEvent, HKind, JoinMask, LaneValue, Members, Phase, State};
use bc_graph::bits::Bits;
use bc_graph::*;
use bc_models::Rule;

/// How many participants a wait's step names in its effect text.
const SHOWN_PARTICIPANTS: usize = 8;

impl System<'_> {
    /// One barrier operation of thread `t`; returns the step's effect text.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn barrier_step(
        &self,
        s: &mut State,
        t: usize,
        pc: u32,
        op: BarrierOp,
        sel: BarrierSel,
        result: Option<BarrierResult>,
        phase: Option<u32>,
        w: &mut Worker,
    ) -> String {
        let Some(b) = self.resolve(s, t, sel) else {
            if matches!(op, BarrierOp::Drop) {
                self.drop_needs_join(s, t, None, w);
            }
            return "no joined barrier of its group: no effect".to_string();
        };
        self.barrier_on(s, t, pc, b, op, result, phase, w)
    }

    /// One barrier operation of thread `t` on barrier instance `b`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn barrier_on(
        &self,
        s: &mut State,
        t: usize,
        pc: u32,
        b: usize,
        op: BarrierOp,
        result: Option<BarrierResult>,
        phase: Option<u32>,
        w: &mut Worker,
    ) -> String {
        let target = Target::Barrier(BarrierId(b as u32));
        if let Some((rule, msg)) = self.neutral(s, t, b, &op, &w.ident) {
            if let Some(rule) = rule {
                if System::records_no_effect(rule) && self.p.model.rules.has(rule) {
                    // For the rule checker, which judges it on the execution.
                    s.hist[t].push(HEvent {
                        pc,
                        kind: HKind::NoEffect(op.op_name()),
                        target,
                    });
                }
                self.violated(rule, msg, w);
            }
            return format!("{}: no effect", self.bname(b));
        }
        let po = s.hist[t].len() as u32;
        let rules = self.p.model.rules;
        match op {
            BarrierOp::Init(k) => {
                let k = eval(self.p, s, t, &k);
                self.drop_not_negative(t, b, ExpectedCount::Init(k), w);
                self.count_overflow(t, b, k, w);
                let bar = &mut s.bars[b];
                bar.init = true;
                bar.invalid = false;
                bar.expected = k.max(0);
                bar.arrived = 0;
                bar.pending_drop = 0;
                bar.tx = 0;
                // The open phase is abandoned: its members participate in
                // no wait (a phase is an uninterrupted bmo interval from
                // arrive count zero, and the init resets the count). Phases
                // completed before stay completed. Numbers keep counting
                // (a token of a phase before the init still names that
                // phase; under the token-phase rule waiting on it is stale,
                // see `System::token_phase`); parity counts from here
                // ("Execution Model", barrier init and
                // barrier-participates-in).
                if self.an.token_barriers[b] {
                    if let Some(ph) = &bar.open {
                        bar.abandoned.push(ph.number);
                    }
                }
                bar.open = None;
                bar.epoch_start = bar.next_phase;
                s.bmo[b].push((t as u32, po));
                // A launch init standing for history up to here
                // (compaction) carries this init's count. No bmo prefix
                // ending before the init is forgotten alone.
                s.bars[b].after_completion = k.max(0);
                s.bars[b].cuts.clear();
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Init(k),
                    target,
                });
                format!("{}: expected count {}", self.bname(b), k.max(0))
            }
            BarrierOp::Join => {
                self.join(s, t, b);
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Join,
                    target,
                });
                format!("joins {}", self.bname(b))
            }
            BarrierOp::Drop => {
                self.drop_needs_join(s, t, Some(b), w);
                s.threads[t].joined.retain(|&x| x != b as u32);
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Drop,
                    target,
                });
                self.modify(s, t, b, po, Mod::Drop { at_end: false }, w).0
            }
            BarrierOp::Arrive(spec) => {
                // `mbarrier.arrive.expect_tx`: the expect-tx operation, then
                // the arrive-on operation, in one step (two events, next to
                // each other in the bmo; PTX ISA, mbarrier.arrive).
                // A warp counted in whole warps: its arriving lane counts
                // the lanes that do not arrive too (`System::absent_lanes`),
                // read before the step moves anything.
                let absent = if !w.following {
                    self.absent_lanes(s, t, b, &spec)
                } else {
                    0
                };
                let mut po = po;
                if let Some(n) = &spec.tx {
                    let delta = eval(self.p, s, t, n);
                    s.hist[t].push(HEvent {
                        pc,
                        kind: HKind::Tx(delta),
                        target,
                    });
                    self.modify(s, t, b, po, Mod::Tx(delta), w);
                    po += 1;
                }
                let mut set = spec.set_count.as_ref().map(|k| eval(self.p, s, t, k));
                // A counted arrive: that many arrivals in one step.
                let arrivals = spec
                    .arrivals
                    .as_ref()
                    .map_or(1, |n| eval(self.p, s, t, n).clamp(0, i64::from(u32::MAX)) as u32)
                    + absent;
                // A thread-counted arrive sets its phase's count: a surplus
                // one starts the next phase (count-mismatch judges a count
                // that differs), so only counted arrivals are held to the
                // pending count.
                if spec.arrivals.is_some() || !spec.count_match {
                    self.arrivals_overflow(s, t, b, arrivals, w);
                }
                // A thread-counted block barrier (`bar.sync ID[, COUNT]`,
                // `__syncthreads`): the operand is the phase's count, not an
                // expected-count update. Left out it is the whole block (the
                // "all threads" form, `barrier.sync` without a count);
                // written, whatever its value, it is the counted form
                // (`barrier.sync.cnt`), a rendezvous of exactly that many
                // arrivals ("Convergence Contract and Deadlock Conditions":
                // a count below the block size serves a sub-CTA
                // rendezvous). The two differ when threads exit: the
                // hardware releases the whole-block form for them and not
                // the counted one, even with a count equal to the block
                // size (an H100 hangs on bar-sync0-block-count-exit-hangs
                // and named-exit-no-release, docs/hardware.md).
                let mut count = None;
                if spec.count_match {
                    count = Some(match set.take() {
                        Some(k) => {
                            self.count_overflow(t, b, k, w);
                            ArriveCount::Threads(k)
                        }
                        None => ArriveCount::Block,
                    });
                }
                if let Some(k) = set {
                    self.count_overflow(t, b, k, w);
                    self.expected_count_update(s, t, b, k, w);
                }
                self.count_mismatch(s, t, b, count, w);
                self.arrive_twice(s, t, b, count, w);
                self.red_intermixed(s, t, b, &spec, w);
                if self.p.barriers[b].syncwarp.is_some() {
                    self.other_mask(s, t, b);
                }
                // arrive-before-wait: a `cuda::barrier` arrive (`object`)
                // breaks any debt on the barrier; every other arrive only a
                // cooperative-groups `barrier_arrive`'s.
                let abw = rules.has(Rule::ArriveBeforeWait);
                let owes_rule = spec.object && abw;
                if abw {
                    self.arrive_before_wait(s, t, b, spec.object, w);
                }
                if let Some(k) = set {
                    if s.bars[b].init {
                        s.bars[b].expected = k;
                    }
                }
                let number = System::current_phase(s, b);
                if self.an.token_barriers[b] {
                    s.bars[b].returned = s.bars[b].returned.max(number.saturating_add(1));
                }
                match result {
                    Some(BarrierResult::Token(r)) => s.threads[t].regs[r.index()] = encode_token(b, number),
                    Some(BarrierResult::IsFirst(r)) => s.threads[t].regs[r.index()] = (s.bars[b].arrived == 0) as i64,
                    _ => {}
                }
                let pred = spec.pred.as_ref().map(|p| eval(self.p, s, t, p) != 0);
                let value = spec.value.as_ref().map(|(v, form)| LaneValue {
                    thread: t as u32,
                    form: form.code(),
                    value: eval(self.p, s, t, v),
                });
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Arrive(set, count, arrivals),
                    target,
                });
                let site = (self.p.threads[t].code.0, pc);
                let arrive = Mod::Arrive {
                    count,
                    pred,
                    value,
                    site,
                    arrivals,
                };
                let (mut effect, completed) = self.modify(s, t, b, po, arrive, w);
                if absent > 0 && !w.quiet {
                    effect.push_str(&format!(
                        " (with {absent} lanes of its warp that do not arrive: {}",
                        crate::semantics::WHOLE_WARP_NOTE
                    ));
                }
                let debt = if spec.collective && abw {
                    Some(crate::state::COLLECTIVE_DEBT)
                } else {
                    (completed && owes_rule).then_some(number)
                };
                if let Some(n) = debt {
                    if !s.threads[t].owes.iter().any(|&(x, _)| x == b as u32) {
                        s.threads[t].owes.push((b as u32, n));
                        s.threads[t].owes.sort_unstable();
                    }
                }
                effect
            }
            BarrierOp::ArriveDrop { positive } => {
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::ArriveDrop(positive),
                    target,
                });
                self.modify(s, t, b, po, Mod::ArriveDrop { positive }, w).0
            }
            BarrierOp::ExpectTx(ref n) | BarrierOp::CompleteTx(ref n) => {
                let n = eval(self.p, s, t, n);
                let delta = if matches!(op, BarrierOp::ExpectTx(_)) {
                    n
                } else {
                    n.wrapping_neg()
                };
                // A completion (the rule checker reads the same: a
                // lowered transaction count).
                if matches!(op, BarrierOp::CompleteTx(_))
                    && delta <= 0
                    && self.p.proxy_events
                    && self.p.async_agent(bc_graph::ThreadId(t as u32))
                {
                    self.init_seen_by_async_proxy(s, t, b, w);
                }
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Tx(delta),
                    target,
                });
                self.modify(s, t, b, po, Mod::Tx(delta), w).0
            }
            BarrierOp::Inval => {
                s.bars[b].invalid = true;
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Inval,
                    target,
                });
                format!("{} invalidated", self.bname(b))
            }
            BarrierOp::Wait(spec) => {
                // A poll (`mbarrier.test_wait`, `r = mbarrier.try_wait`)
                // writes whether it completed: it completes exactly when
                // the blocking wait could, else does nothing (CUDA
                // programming guide, the TMA example's "Barrier wait":
                // try_wait answers true once the wait is over, false on a
                // time-out, and is retried in a loop). A wait that passes
                // with no effect counts as completed, as the blocking form
                // goes on past it.
                // The answer is written after the wait's step: the result
                // register may be the token register the wait reads.
                let poll = spec.poll;
                if poll && matches!(self.wait_plan(s, t, b, &spec, &w.ident), WaitPlan::Blocked) {
                    if let Some(BarrierResult::Poll(r)) = result {
                        s.threads[t].regs[r.index()] = 0;
                    }
                    return "does not complete yet: 0, no effect".into();
                }
                let effect = self.wait_step(s, t, b, pc, phase, spec, result, target, w);
                if let (true, Some(BarrierResult::Poll(r))) = (poll, result) {
                    s.threads[t].regs[r.index()] = 1;
                }
                effect
            }
        }
    }

    /// A wait's step (blocking, or a poll that completes).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn wait_step(
        &self,
        s: &mut State,
        t: usize,
        b: usize,
        pc: u32,
        phase: Option<u32>,
        spec: WaitSpec,
        result: Option<BarrierResult>,
        target: Target,
        w: &mut Worker,
    ) -> String {
        match self.wait_plan(s, t, b, &spec, &w.ident) {
            WaitPlan::NoJoin => {
                self.wait_needs_join(t, b, w);
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Wait {
                        participants: Members::default(),
                        token_phase: None,
                        parity: None,
                        took: None,
                    },
                    target,
                });
                "no joined-before join: the wait has no effect".into()
            }
            WaitPlan::NoOp(rule, msg, tp) => {
                self.violated(rule, msg, w);
                // The wait does nothing: an event with no participants,
                // naming what its token named, for the rule checker.
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Wait {
                        participants: Members::default(),
                        token_phase: Some(tp),
                        parity: None,
                        took: None,
                    },
                    target,
                });
                "no effect".into()
            }
            WaitPlan::Taken(tp) => {
                if let Some(why) = Self::token_phase(s, b, tp) {
                    self.violated(
                        Rule::TokenPhase,
                        format!(
                            "{} waits on {} with a token of a phase that is neither current nor previous: {why}",
                            self.thread_name(&w.ident, t),
                            self.bname(b)
                        ),
                        w,
                    );
                }
                // `took` marks the token used (`System::token_misuse`).
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Wait {
                        participants: Members::default(),
                        token_phase: Some(tp),
                        parity: None,
                        took: Some(tp),
                    },
                    target,
                });
                format!(
                    "phase {tp} of {} was taken already by an earlier wait of this thread: returns at once",
                    self.bname(b)
                )
            }
            WaitPlan::Phases(_, tp, stale) => {
                let i = phase.expect("an enabled wait has a phase");
                if let Some(why) = stale {
                    self.violated(
                        Rule::TokenPhase,
                        format!(
                            "{} waits on {} with a token of a phase that is neither current nor previous: {why}",
                            self.thread_name(&w.ident, t),
                            self.bname(b)
                        ),
                        w,
                    );
                }
                let with = tp.map_or(String::new(), |tp| format!(" with a token of phase {tp}"));
                let (effect, ph) = self.bind(s, t, b, i, &with, w);
                let took = (tp.is_none() && self.an.mixed_waits[b]).then_some(ph.number);
                let per_lane = spec.reduce.is_some_and(|r| r.per_lane()) || !ph.vals.is_empty();
                if per_lane {
                    // A warp intrinsic's result, or a finding when the
                    // phase's lanes did not all run this form.
                    match self.warp_intrinsic(s, t, &spec, &ph) {
                        Ok(v) => {
                            if let Some(BarrierResult::Reduce(r)) = result {
                                s.threads[t].regs[r.index()] = v;
                            }
                        }
                        Err(msg) => self.violated(Rule::SyncwarpMask, msg, w),
                    }
                } else if let (Some(BarrierResult::Reduce(r)), Some(red)) = (result, spec.reduce) {
                    s.threads[t].regs[r.index()] = match red {
                        bc_models::Reduce::Popc => ph.preds,
                        bc_models::Reduce::And => (ph.preds == ph.arrivals) as i64,
                        _ => (ph.preds > 0) as i64,
                    };
                }
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Wait {
                        participants: ph.members,
                        token_phase: tp,
                        parity: None,
                        took,
                    },
                    target,
                });
                self.aligned_wait_rule(s, t, false, w);
                self.collect(s, b);
                effect
            }
            WaitPlan::Parity(i, parity) => {
                let (effect, members, took) = match i {
                        Some(i) => {
                            let (effect, ph) = self.bind(s, t, b, i, &format!(" with parity {parity}"), w);
                            let took = self.an.mixed_waits[b].then_some(ph.number);
                            (effect, ph.members, took)
                        }
                        None => (
                            format!(
                                "no phase of {} to take with parity {parity} (the one before a fresh barrier's first, or one it waited on already): no participants",
                                self.bname(b)
                            ),
                            Members::default(),
                            None,
                        ),
                    };
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Wait {
                        participants: members,
                        token_phase: None,
                        parity: Some(parity),
                        took,
                    },
                    target,
                });
                self.aligned_wait_rule(s, t, false, w);
                self.collect(s, b);
                effect
            }
            WaitPlan::Blocked => unreachable!("a blocked wait is never chosen"),
        }
    }

    /// participates-in, recorded: thread `t`'s wait completes on completed
    /// phase `i` of barrier `b` (one [`System::participates_in`] offered),
    /// whose members become its participants. The effect says `with`
    /// after the barrier (the parity or token the wait used).
    pub(crate) fn bind(
        &self,
        s: &mut State,
        t: usize,
        b: usize,
        i: u32,
        with: &str,
        w: &mut Worker,
    ) -> (String, Phase) {
        let ph = &mut s.bars[b].done[i as usize];
        ph.bound.set(t);
        let ph = ph.clone();
        s.threads[t].jmask.union_with(&ph.mask);
        // arrive-before-wait: this thread's own wait pays its debt on `b`,
        // and a wait of any thread on this phase pays the debt of the
        // thread whose arrive completed it (the guide: a wait must observe
        // the completion before the barrier is reused, not the completing
        // thread's own wait; issue 32, point 3).
        let number = ph.number;
        s.threads[t].owes.retain(|&(x, _)| x != b as u32);
        for th in &mut s.threads {
            th.owes.retain(|&(x, n)| (x, n) != (b as u32, number));
        }
        if w.quiet {
            return (String::new(), ph);
        }
        // The first few participants by name; the witness's
        // participates-in lists them all (a phase of a 256-thread block
        // named 256 events in each of its 256 waits' steps: 28 MB of
        // steps in the witness of an 8-block kernel, and most of its
        // replay's time).
        let mut who: Vec<String> = (ph.members.iter().take(SHOWN_PARTICIPANTS))
            .map(|&(u, q)| self.label_of(s, u, q, &w.ident))
            .collect();
        if ph.members.len() > SHOWN_PARTICIPANTS {
            who.push(format!("and {} more", ph.members.len() - SHOWN_PARTICIPANTS));
        }
        let effect = format!(
            "completes on phase {} of {}{with} (participants: {})",
            ph.number,
            self.bname(b),
            who.join(", ")
        );
        (effect, ph)
    }

    /// Removes from the join masks of `s` (threads' and phases') every
    /// pair on a barrier whose waits are all parity waits
    /// (`Analyses::parity_only`): participates-in reads a mask only for a
    /// token or a plain wait ("Execution Model", barrier-participates-in:
    /// a parity wait takes the last completed phase), and the phases'
    /// retirement only there too, so those pairs are never read. Kept,
    /// they spread through every barrier a thread passes: the start
    /// barriers of `cp.async` agents (parity waits only), one isolated
    /// pair each, made a 128-thread pipeline's states 1.6 MB each, nearly
    /// all of it these pairs. Applied to the initial state; [`System::join`]
    /// adds none later.
    pub(crate) fn strip_unread_joins(&self, s: &mut State) {
        let nt = self.p.threads.len();
        if !self.an.parity_only.iter().any(|&x| x) {
            return;
        }
        let keep = |b: usize| !self.an.parity_only[b];
        for th in &mut s.threads {
            th.jmask.retain_barriers(nt, keep);
        }
        for bar in &mut s.bars {
            for ph in bar.open.iter_mut().chain(bar.done.iter_mut()) {
                ph.mask.retain_barriers(nt, keep);
            }
        }
    }

    /// A join of thread `t` on barrier `b`: later operations of `t` are
    /// executes-after it; nothing else is yet.
    pub(crate) fn join(&self, s: &mut State, t: usize, b: usize) {
        let bit = JoinMask::pair(self.p.threads.len(), t, b);
        for th in &mut s.threads {
            th.jmask.clear(bit);
        }
        for bar in &mut s.bars {
            for ph in bar.open.iter_mut().chain(bar.done.iter_mut()) {
                ph.mask.clear(bit);
            }
        }
        let th = &mut s.threads[t];
        // Only a token or plain wait reads a join (participates-in's
        // entitlement): on a barrier with parity waits alone no mask
        // holds one (`System::strip_unread_joins`).
        if !self.an.parity_only[b] {
            th.jmask.set(bit);
        }
        let me = BarrierId(b as u32);
        let exclusive: Vec<u32> = th
            .joined
            .iter()
            .copied()
            .filter(|&o| {
                o as usize == b
                    || self
                        .p
                        .mutually_exclusive
                        .iter()
                        .any(|&(x, y)| (x, y) == (me, BarrierId(o)) || (y, x) == (me, BarrierId(o)))
            })
            .collect();
        th.joined.retain(|o| !exclusive.contains(o));
        th.joined.push(b as u32);
        th.joined.sort_unstable();
        for i in 0..s.bars.len() {
            self.collect(s, i);
        }
    }

    /// A modification operation of thread `t` at program-order index `po`:
    /// joins the open phase and may complete it. Returns the effect text and
    /// whether it completed the phase.
    pub(crate) fn modify(
        &self,
        s: &mut State,
        t: usize,
        b: usize,
        po: u32,
        kind: Mod,
        w: &mut Worker,
    ) -> (String, bool) {
        let nt = self.p.threads.len();
        self.first_bmo_init(s, t, b, w);
        let mask = s.threads[t].jmask.clone();
        let code = self.p.threads[t].code.0;
        let bar = &mut s.bars[b];
        if bar.open.is_none() {
            bar.open = Some(Phase::new(bar.next_phase, Bits::new(nt)));
            bar.next_phase += 1;
        }
        let open = bar.open.as_mut().expect("just opened");
        std::sync::Arc::make_mut(&mut open.members).push((t as u32, po));
        open.mask.union_with(&mask);
        let number = open.number;
        let mut lowered = None;
        match kind {
            Mod::Arrive {
                count,
                pred,
                value,
                site,
                arrivals,
            } => {
                bar.arrived += i64::from(arrivals);
                open.arrivals += i64::from(arrivals);
                open.preds += pred.unwrap_or(false) as i64;
                if let Some(v) = value {
                    // Kept by thread: the order the lanes arrived in is
                    // nobody's to see.
                    let at = open.vals.partition_point(|x| x.thread < v.thread);
                    open.vals.insert(at, v);
                }
                open.count = count.or(open.count);
                match open.site {
                    None => open.site = Some(site),
                    Some((c, p)) => open.mixed_sites |= c == code && p != site.1,
                }
            }
            Mod::ArriveDrop { positive } => {
                bar.arrived += 1;
                bar.pending_drop += 1;
                open.arrivals += 1;
                if positive && bar.init {
                    lowered = Some(ExpectedCount::ArriveDrop(bar.expected - bar.pending_drop));
                }
            }
            Mod::Drop { at_end } => {
                open.exit_drop |= at_end;
                if bar.init {
                    lowered = Some(ExpectedCount::Drop(bar.expected));
                    bar.expected = (bar.expected - 1).max(0);
                }
            }
            Mod::Tx(delta) => bar.tx = bar.tx.wrapping_add(delta),
        }
        s.bmo[b].push((t as u32, po));
        let bar = &mut s.bars[b];
        let name = &self.p.barriers[b].name;
        let needed = bar.needed();
        // More arrivals than the phase still expects (count-overflow)
        // complete it: the surplus is lost (as the rule checker's replay).
        if matches!(kind, Mod::Arrive { arrivals, .. } if arrivals > 1) && bar.init && bar.arrived > needed {
            bar.arrived = needed;
        }
        let completed = bar.init && needed == bar.arrived && bar.tx == 0;
        let effect = if completed {
            let ph = bar.open.take().expect("open phase");
            bar.done.push(ph);
            bar.arrived = 0;
            bar.expected = (bar.expected - bar.pending_drop).max(0);
            bar.pending_drop = 0;
            bar.settled_len = s.bmo[b].len() as u32;
            bar.after_completion = bar.expected;
            if !self.an.mixed_waits[b] {
                bar.cuts.push((bar.settled_len, bar.expected, number));
            }
            if w.quiet {
                String::new()
            } else {
                format!("{name}: completes phase {number}")
            }
        } else if w.quiet {
            // Texts are for witnesses, which replay the step.
            String::new()
        } else if bar.init {
            let tx = if bar.tx != 0 {
                format!(", tx-count {}", bar.tx)
            } else {
                String::new()
            };
            format!("{name}: {} of {needed} arrived (phase {number}{tx})", bar.arrived)
        } else {
            format!("{name}: uninitialized")
        };
        if let Some(change) = lowered {
            self.drop_not_negative(t, b, change, w);
        }
        if completed {
            if let Some(ph) = s.bars[b].done.last() {
                self.divergent_barrier(b, ph, w);
                self.aligned_barrier(s, b, ph, w);
                if let Some(msg) = self.syncwarp_mask_stray(b, ph, &w.ident) {
                    self.violated(Rule::SyncwarpMask, msg, w);
                }
            }
        }
        self.collect(s, b);
        (effect, completed)
    }
}

impl System<'_> {
    /// The result of thread `t`'s warp intrinsic wait `spec` on its
    /// completed phase `ph`, from the values the phase's lanes gave
    /// (docs/semantics.md, "Warp intrinsics"); the message of
    /// `ub(syncwarp-mask)` when the lanes did not all run this form (the
    /// guide: every named lane executes the same intrinsic with the same
    /// mask), or a shuffle reads a lane that is not in the phase (its
    /// value is undefined).
    fn warp_intrinsic(&self, s: &State, t: usize, spec: &WaitSpec, ph: &Phase) -> Result<i64, String> {
        use bc_models::{Reduce, ReduxOp, ShflMode};
        let me = self.p.threads[t].name.as_str();
        let Some(form) = spec.reduce.filter(|r| r.per_lane()) else {
            return Err(format!(
                "{me} executes __syncwarp in a phase whose other lanes execute a warp intrinsic with the same mask"
            ));
        };
        if ph.vals.len() as i64 != ph.arrivals || ph.vals.iter().any(|v| v.form != form.code()) {
            return Err(format!(
                "the lanes of {me}'s phase execute different warp intrinsics (or __syncwarp) with the same mask"
            ));
        }
        let lane_of = |v: &LaneValue| i64::from(self.p.threads[v.thread as usize].lane);
        let lane = i64::from(self.p.threads[t].lane);
        let of = |l: i64| ph.vals.iter().find(|v| lane_of(v) == l).map(|v| v.value);
        let own = of(lane).unwrap_or(0);
        let named = ph.vals.iter().fold(0i64, |m, v| m | 1 << lane_of(v));
        let all_alike = ph.vals.windows(2).all(|w| w[0].value == w[1].value);
        let truth = |v: &LaneValue| v.value != 0;
        Ok(match form {
            Reduce::Shfl(mode) => {
                // PTX: the source operand's low five bits (`b[4:0]`).
                let b = spec.lane.as_ref().map_or(0, |e| eval(self.p, s, t, e)) & 31;
                let width = spec.width.as_ref().map_or(32, |e| eval(self.p, s, t, e));
                if !(1..=32).contains(&width) || width & (width - 1) != 0 {
                    return Err(format!(
                        "{me}'s shuffle width {width} is not a power of two from 1 to 32"
                    ));
                }
                // PTX ISA, shfl.sync: lanes fall in segments of `width`;
                // a source outside the caller's segment (or below it, for
                // .up) leaves the caller its own value.
                let first = lane & !(width - 1);
                let last = first + width - 1;
                let j = match mode {
                    ShflMode::Idx => first + (b & (width - 1)),
                    ShflMode::Up => lane - b,
                    ShflMode::Down => lane + b,
                    ShflMode::Bfly => lane ^ b,
                };
                // `.up` reads no lane below its segment; the others none
                // above it (an xor may reach an earlier segment: the
                // guide's `__shfl_xor_sync`, and the ISA tests only
                // `j <= maxLane`).
                let inside = match mode {
                    ShflMode::Up => j >= first,
                    _ => j <= last,
                };
                if !inside {
                    own
                } else {
                    of(j).ok_or_else(|| {
                        format!("{me} shuffles from lane {j}, which does not take part in the phase: its value is undefined")
                    })?
                }
            }
            Reduce::Ballot => ph.vals.iter().filter(|v| truth(v)).fold(0, |m, v| m | 1 << lane_of(v)),
            Reduce::VoteAll => ph.vals.iter().all(truth) as i64,
            Reduce::VoteAny => ph.vals.iter().any(truth) as i64,
            Reduce::VoteUni => (ph.vals.iter().all(truth) || !ph.vals.iter().any(truth)) as i64,
            Reduce::MatchAny => ph
                .vals
                .iter()
                .filter(|v| v.value == own)
                .fold(0, |m, v| m | 1 << lane_of(v)),
            Reduce::MatchAll => {
                if all_alike {
                    named
                } else {
                    0
                }
            }
            // `redux.sync` works on 32-bit values: add, and, or and xor on
            // their bits (`.u32`/`.b32`, the result zero-extended), min
            // and max on signed ones (`__reduce_min_sync` takes an `int`;
            // a PTX `.u32` min or max differs from it only on values from
            // 2^31 on, and its result is data there: the PTX front end's
            // pre-evaluation knows no intrinsic's result, so none steers
            // a branch, an address or a barrier).
            Reduce::Redux(op) => {
                let bits = |x: i64| x & 0xffff_ffff;
                let signed = |x: i64| i64::from(x as i32);
                let it = ph.vals.iter().map(|v| v.value);
                match op {
                    ReduxOp::Add => bits(it.fold(0i64, |a, x| a.wrapping_add(bits(x)))),
                    ReduxOp::Min => it.map(signed).min().unwrap_or(0),
                    ReduxOp::Max => it.map(signed).max().unwrap_or(0),
                    ReduxOp::And => bits(it.fold(-1, |a, x| a & x)),
                    ReduxOp::Or => bits(it.fold(0, |a, x| a | x)),
                    ReduxOp::Xor => bits(it.fold(0, |a, x| a ^ x)),
                }
            }
            // PTX `elect.sync`: the lowest lane of the phase, the
            // non-exited lanes of the mask (what an H200 elects:
            // docs/hardware.md, session 39).
            Reduce::Elect => ph.vals.iter().map(lane_of).min().unwrap_or(0),
            Reduce::Popc | Reduce::And | Reduce::Or => unreachable!("not per lane"),
        })
    }
}

/// A modification operation's kind and extras.
pub(crate) enum Mod {
    Arrive {
        count: Option<ArriveCount>,
        pred: Option<bool>,
        /// A warp intrinsic's value (`ArriveSpec::value`).
        value: Option<LaneValue>,
        site: (u32, u32),
        /// How many arrivals it counts (`HKind::Arrive`'s third field).
        arrivals: u32,
    },
    ArriveDrop {
        positive: bool,
    },
    Drop {
        at_end: bool,
    },
    Tx(i64),
}
