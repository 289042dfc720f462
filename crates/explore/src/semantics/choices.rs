//! Transitions, the state's side: which choices a state offers
//! (`System::choices`), what a wait can do now (`System::wait_plan`, with
//! the phases it may participate in:
//! `System::participates_in`), operations that have no effect
//! (`System::neutral`), and the barrier a selector names. They read the
//! program, its analyses and the state alone; thread names in their
//! messages follow the renaming passed in.

use crate::semantics::eval::eval;
use crate::semantics::System;
use crate::state::Choice;
use crate::state::{HKind, JoinMask, Phase, State, Status};
use bc_graph::*;
use bc_models::Rule;

/// The form of a wait, for [`System::participates_in`].
#[derive(Clone, Copy)]
pub(crate) enum WaitForm {
    /// A wait with neither token nor parity.
    Plain,
    /// A token wait naming this phase.
    Token(u32),
    /// A parity wait.
    Parity,
}

/// What a wait can do now.
pub(crate) enum WaitPlan {
    /// No joined-before join: wait-needs-join is broken, and the wait has
    /// no effect.
    NoJoin,
    /// A token rule is broken (token-misuse, or token-phase for a token
    /// of a phase an init abandoned; this message), and the wait has no
    /// effect: an event with no participants that records the phase the
    /// token names ([`NO_TOKEN_PHASE`] for none).
    NoOp(Rule, String, u32),
    Blocked,
    /// Complete on one of these completed phases (indices into `done`);
    /// the token's phase; why the token is stale, if it is.
    Phases(Vec<u32>, Option<u32>, Option<&'static str>),
    /// A parity wait: the last completed phase (`None` when this thread
    /// already waited on it, or when it is the phase before a fresh
    /// barrier's first, which has no members) and the parity.
    Parity(Option<u32>, u8),
    /// A token wait on a phase (this number) that the thread took already
    /// by a parity or plain wait: it returns at once, taking nothing (the
    /// token is used once; docs/semantics.md, "cuda::barrier").
    Taken(u32),
}

/// How a lane at an `.aligned` arrive stands with its warp
/// ([`System::lane_mode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Its step is its own: not at an `.aligned` arrive, alone in its warp,
    /// or its warp diverged at the barrier: the live lanes are all at
    /// `.aligned` arrives but not at one site and barrier, or one of them
    /// arrived in the barrier's open phase on its own. Each lane then
    /// arrives on its own, and the aligned-barrier rule judges the phase.
    Alone,
    /// The first live lane of a warp whose live lanes are all at this
    /// `.aligned` arrive: its step is the warp's arrival, every lane's
    /// arrive in thread order ([`System::warp_followers`]).
    Leads,
    /// A later lane of such a warp: it arrives with the first.
    Follows,
    /// Some live lane of its warp is not at an `.aligned` arrive yet: it
    /// waits for that lane (PTX ISA, `barrier{.cta}`).
    Held,
}

/// Which lanes of one warp arrived in the open phase of one barrier, at
/// one state ([`System::lane_mode`]): per lane of the warp, in thread
/// order. Valid for one state only.
#[derive(Default)]
pub(crate) struct OpenLanes {
    /// The barrier instance read (`usize::MAX`: none); `None` before.
    barrier: Option<usize>,
    /// The warp's first lane.
    warp: u32,
    arrived: Vec<bool>,
}

impl System<'_> {
    /// How thread `t` stands with its warp when it is at an `.aligned`
    /// arrive (PTX ISA, `barrier{.cta}`: a thread at a barrier instruction
    /// waits for every non-exited thread of its warp, and the barrier
    /// records the warp's arrival; `.aligned`: all of them through that
    /// one instruction). A lane is live when it has not ended. The
    /// arrive's site is its code and pc, and its barrier the instance its
    /// selector names now.
    pub(crate) fn lane_mode(&self, s: &State, t: usize) -> Lane {
        self.lane_mode_with(s, t, &mut OpenLanes::default())
    }

    /// [`System::lane_mode`], with which lanes of `t`'s warp arrived in the
    /// open phase of its barrier read from `open` where it holds that
    /// barrier's, else read and kept there: the lanes of one warp at one
    /// state share it (`moves_warp_mates` asks for each mate; a scan of a
    /// large phase's members per mate was a sixth of a 160-lane run).
    pub(crate) fn lane_mode_with(&self, s: &State, t: usize, open: &mut OpenLanes) -> Lane {
        let mates = self.an.warps.mates(t);
        if mates.is_empty() {
            return Lane::Alone;
        }
        let Some(here) = self.aligned_arrive(s, t) else {
            return match self.aligned_wait(s, t) {
                Some(b) => self.wait_lane_mode(s, t, b, mates),
                None => Lane::Alone,
            };
        };
        let code = self.p.threads[t].code;
        // What kind of arrive a lane is at: whether it is an `.aligned`
        // form, and whether it is a sync's (its wait follows, from the same
        // statement) rather than an arrive alone. A warp arrives as one
        // through one `.aligned` instruction, or through the non-`.aligned`
        // forms at any of their instructions on the same barrier (PTX ISA,
        // `barrier{.cta}`: the thread waits for the warp's non-exited
        // threads, at whichever barrier instruction) of one kind. A warp
        // split between kinds or barriers is undefined
        // ([`System::warp_split`]); its lanes arrive on their own.
        let kind = |u: usize| self.arrive_kind(s, u);
        let t_kind = kind(t);
        // The lanes of the warp that arrived in the barrier's open phase,
        // read once (a mate-by-mate scan of the phase's members made this
        // call quadratic in a warp of a large phase).
        if open.barrier != Some(here) || open.warp != mates[0] {
            open.barrier = Some(here);
            open.warp = mates[0];
            open.arrived.clear();
            open.arrived.resize(mates.len(), false);
            if let Some(ph) = (here != usize::MAX).then(|| s.bars[here].open.as_ref()).flatten() {
                for u in Self::arrivers(s, ph) {
                    if let Ok(i) = mates.binary_search(&(u as u32)) {
                        open.arrived[i] = true;
                    }
                }
            }
        }
        let open = &*open;
        let arrived = |u: usize| mates.binary_search(&(u as u32)).is_ok_and(|i| open.arrived[i]);
        // Whether `t` arrived in the barrier's open phase already (its
        // warp arrives a second time in one phase: `ub(arrive-twice)`).
        let again = arrived(t);
        let (mut same, mut first, mut held, mut split) = (true, true, false, false);
        let mut lanes = 1;
        for &u in mates {
            let u = u as usize;
            if u == t {
                continue;
            }
            match s.threads[u].status {
                // A lane that arrived in the open phase on its own and
                // then ended split the warp all the same (its arrival
                // stays in the phase): the others still arrive alone.
                Status::Done => {
                    split |= !again && arrived(u);
                    continue;
                }
                Status::NotLaunched => held = true,
                Status::Running => match self.aligned_arrive(s, u) {
                    Some(b) => {
                        // One instruction (same code and pc), or for the
                        // non-`.aligned` forms any of one kind, in any code:
                        // explicit threads placed in one warp are its lanes
                        // (an H200 counts them whole: review of session 40).
                        let one = self.p.threads[u].code == code && s.threads[u].pc == s.threads[t].pc;
                        let u_kind = (!one).then(|| kind(u));
                        same &=
                            b == here && u_kind.is_none_or(|k| !(t_kind.aligned || k.aligned) && t_kind.same_kind(k));
                        first &= u > t;
                        lanes += 1;
                    }
                    // A lane that arrived in the barrier's open phase
                    // on its own: the warp is split already (it reached
                    // the barrier through different instructions), and
                    // its lanes arrive on their own. Not when `t` arrived
                    // in that phase too: the warp arrived there together
                    // and comes again (`ub(arrive-twice)`), as a warp.
                    None if !again && arrived(u) => split = true,
                    // A lane inside a sync of another barrier or kind, at
                    // its wait: the warp is split (`System::warp_split`),
                    // and its lanes arrive on their own.
                    None if !t_kind.aligned
                        && self
                            .stance(s, u)
                            .is_some_and(|(b, k)| b != here || !t_kind.same_kind(k)) =>
                    {
                        split = true
                    }
                    None => held = true,
                },
            }
        }
        // A count that would complete the phase before the warp's last
        // lane (not a multiple of the warp, which PTX forbids) splits the
        // warp: its lanes arrive on their own, which lane lands in which
        // phase is the search's to choose, and the aligned-barrier rule
        // judges the split.
        let same = same && self.warp_fits(s, t, here, lanes);
        match (split, held, same, first) {
            (true, ..) | (false, false, false, _) => Lane::Alone,
            (false, true, ..) => Lane::Held,
            (false, false, true, true) => Lane::Leads,
            (false, false, true, false) => Lane::Follows,
        }
    }

    /// How thread `t`, at the wait of an `.aligned` sync on barrier `b`
    /// ([`System::aligned_wait`]), stands with its warp `mates`: the
    /// barrier releases a warp together, so where every live lane waits
    /// there and all can take the same completed phases, the first lane's
    /// step takes every lane's wait ([`Lane::Leads`], [`Lane::Follows`]);
    /// otherwise (a phase not complete yet, or a warp split across
    /// phases) each lane waits on its own.
    fn wait_lane_mode(&self, s: &State, t: usize, b: usize, mates: &[u32]) -> Lane {
        let mine = self.participates_in(s, t, b, WaitForm::Plain);
        if mine.is_empty() {
            return Lane::Alone;
        }
        // Lanes of a non-`.aligned` sync wait together at any of its
        // instructions (as they arrived: `lane_mode`), those of an
        // `.aligned` one at that one instruction.
        let plain = |u: usize| {
            let th = &s.threads[u];
            th.pc > 0
                && matches!(self.p.instr(ThreadId(u as u32), th.pc - 1).map(|i| &i.kind),
                    Some(InstrKind::Barrier { op: BarrierOp::Arrive(a), .. }) if !a.aligned)
        };
        let t_plain = plain(t);
        let mut first = true;
        for &u in mates {
            let u = u as usize;
            if u == t || s.threads[u].status == Status::Done {
                continue;
            }
            let together = s.threads[u].status == Status::Running
                && ((self.p.threads[u].code == self.p.threads[t].code && s.threads[u].pc == s.threads[t].pc)
                    || (t_plain && plain(u)))
                && self.aligned_wait(s, u) == Some(b)
                && self.participates_in(s, u, b, WaitForm::Plain) == mine;
            if !together {
                return Lane::Alone;
            }
            first &= u > t;
        }
        if first {
            Lane::Leads
        } else {
            Lane::Follows
        }
    }

    /// The barrier instance of running thread `t`'s next instruction when
    /// it is the plain wait of an `.aligned` sync (`barrier.sync.aligned`
    /// and PTX's `bar.sync`: the wait lowered from the statement whose
    /// arrive is the instruction before it, `.aligned`).
    pub(crate) fn aligned_wait(&self, s: &State, t: usize) -> Option<usize> {
        let th = &s.threads[t];
        if th.status != Status::Running || th.pc == 0 {
            return None;
        }
        let tid = ThreadId(t as u32);
        let ins = self.p.instr(tid, th.pc)?;
        let InstrKind::Barrier {
            op: BarrierOp::Wait(w),
            sel,
            ..
        } = &ins.kind
        else {
            return None;
        };
        if w.poll || w.token.is_some() || w.parity.is_some() {
            return None;
        }
        let prev = self.p.instr(tid, th.pc - 1)?;
        match &prev.kind {
            InstrKind::Barrier {
                op: BarrierOp::Arrive(a),
                sel: psel,
                ..
            } if self.warp_arrive(s, t, a) && psel == sel && prev.span == ins.span => self.resolve(s, t, *sel),
            _ => None,
        }
    }

    /// The barrier instance of running thread `t`'s next instruction when
    /// it arrives through an `.aligned` form (`usize::MAX` when its
    /// selector names none).
    pub(crate) fn aligned_arrive(&self, s: &State, t: usize) -> Option<usize> {
        let th = &s.threads[t];
        if th.status != Status::Running {
            return None;
        }
        match &self.p.instr(ThreadId(t as u32), th.pc)?.kind {
            InstrKind::Barrier {
                op: BarrierOp::Arrive(a),
                sel,
                ..
            } if self.warp_arrive(s, t, a) => Some(self.resolve(s, t, *sel).unwrap_or(usize::MAX)),
            _ => None,
        }
    }

    /// Whether a step of thread `t` may change what a warp mate's step
    /// is: some live mate stands alone ([`Lane::Alone`]) at an `.aligned`
    /// arrive or wait. That mate's mode reads where `t` is: `t` ending, or
    /// reaching the mate's instruction, may make it lead its warp (its
    /// step then takes every lane) or follow (no step of its own). A step
    /// of `t` that leaves such a mate is then no persistent set on its
    /// own (`required.rs`, `fuse.rs`). A held mate (`Lane::Held`) has no
    /// step a step of `t` could change, only enable.
    /// A mate at an `.aligned` wait decides for the whole warp: its lanes
    /// stand together there only when every live lane waits at that one
    /// wait on the same phases ([`System::wait_lane_mode`]), so the first
    /// such mate's mode is every waiting mate's (asking each mate, each
    /// comparing its phases with every other's, was a tenth of a
    /// 320-lane run).
    pub(crate) fn moves_warp_mates(&self, s: &State, t: usize) -> bool {
        let mates = self.an.warps.mates(t);
        let mut open = OpenLanes::default();
        for u in mates.iter().map(|&u| u as usize) {
            if u == t || s.threads[u].status != Status::Running {
                continue;
            }
            if self.aligned_arrive(s, u).is_some() {
                if self.lane_mode_with(s, u, &mut open) == Lane::Alone {
                    return true;
                }
            } else if let Some(b) = self.aligned_wait(s, u) {
                return self.wait_lane_mode(s, u, b, mates) == Lane::Alone;
            }
        }
        false
    }

    /// Whether thread `t`, at a wait, is a lane its warp's first lane
    /// releases ([`Lane::Follows`]), with whether its warp stands
    /// together at the wait decided once per warp in `together` (keyed by
    /// the warp's first lane): [`System::wait_lane_mode`] gives every
    /// lane of a warp the same answer to that, so within one state the
    /// first lane's is every lane's.
    fn follows_at_wait(&self, s: &State, t: usize, together: &mut rustc_hash::FxHashMap<u32, bool>) -> bool {
        let mates = self.an.warps.mates(t);
        let Some(&key) = mates.first() else {
            return false;
        };
        let Some(b) = self.aligned_wait(s, t) else {
            return false;
        };
        let all = *together
            .entry(key)
            .or_insert_with(|| self.wait_lane_mode(s, t, b, mates) != Lane::Alone);
        all && (mates.iter().map(|&u| u as usize)).any(|u| u < t && s.threads[u].status != Status::Done)
    }

    /// Whether running thread `t` stands alone ([`Lane::Alone`]) at an
    /// `.aligned` arrive or wait while a mate of its warp is still running:
    /// its warp diverged at the barrier, and whether a mate is later held
    /// there for good depends on which lane steps first (the one run
    /// leaves such a program to the search: `search/det.rs`).
    pub(crate) fn alone_with_mates(&self, s: &State, t: usize) -> bool {
        (self.aligned_arrive(s, t).is_some() || self.aligned_wait(s, t).is_some())
            && (self.an.warps.mates(t).iter().map(|&u| u as usize))
                .any(|u| u != t && s.threads[u].status == Status::Running)
            && self.lane_mode(s, t) == Lane::Alone
    }

    /// The other lanes that arrive in choice `c`'s step, in thread order:
    /// the live lanes of its warp when its thread leads the warp's
    /// arrival ([`Lane::Leads`]); none otherwise.
    /// A leading wait's lanes take the phase it takes.
    pub(crate) fn warp_followers(&self, s: &State, c: Choice) -> Vec<u32> {
        let t = c.thread as usize;
        if self.lane_mode(s, t) != Lane::Leads {
            return Vec::new();
        }
        (self.an.warps.mates(t).iter().copied())
            .filter(|&u| u as usize != t && s.threads[u as usize].status == Status::Running)
            .collect()
    }

    /// The declared name of thread index `t` under the renaming `ident`
    /// (symmetry renames threads; names follow the declared ones).
    pub(crate) fn thread_name<'a>(&'a self, ident: &[u32], t: usize) -> &'a str {
        &self.p.threads[ident[t] as usize].name
    }

    pub(crate) fn bname(&self, b: usize) -> &str {
        &self.p.barriers[b].name
    }

    /// Why an operation of thread `t` on barrier `b` has no effect, if it
    /// has none: the rule it breaks, if any, and the message. A privileged
    /// barrier, the NULL barrier, a grid barrier outside a cooperative
    /// launch, a `__syncwarp` from a lane outside its mask, an invalidated
    /// barrier (the rules are in `rules.rs`).
    pub(crate) fn neutral(
        &self,
        s: &State,
        t: usize,
        b: usize,
        op: &BarrierOp,
        ident: &[u32],
    ) -> Option<(Option<Rule>, String)> {
        if let Some(msg) = self.privileged_barrier(t, b, ident) {
            return Some((Some(Rule::PrivilegedBarrier), msg));
        }
        if self.p.barriers[b].props.noop && !matches!(op, BarrierOp::Join) {
            return Some((None, String::new()));
        }
        if let Some(msg) = self.uncooperative_grid_sync(t, b, ident) {
            return Some((Some(Rule::CooperativeGridSync), msg));
        }
        // Only an arrive breaks the rule; the wait does nothing.
        if let Some(msg) = self.syncwarp_mask(t, b, ident) {
            let rule = matches!(op, BarrierOp::Arrive(_)).then_some(Rule::SyncwarpMask);
            return Some((rule, msg));
        }
        if let Some(msg) = self.invalid_barrier(s, t, b, op, ident) {
            return Some((Some(Rule::InvalidBarrier), msg));
        }
        if let Some(msg) = self.out_of_range(t, b, ident) {
            return Some((Some(Rule::InvalidBarrier), msg));
        }
        if let Some(msg) = self.wait_before_init(s, t, b, op, ident) {
            return Some((Some(Rule::WaitAfterInit), msg));
        }
        None
    }

    /// The rules of [`System::neutral`] whose offending operation leaves an
    /// event in the history ([`HKind::NoEffect`]), so that the rule checker
    /// judges them too: whether the operation may be used at all does not
    /// depend on the interleaving (privileged-barrier,
    /// uncooperative-grid-sync) or follows from the recorded invals and
    /// inits (invalid-barrier, wait-after-init).
    pub(crate) fn records_no_effect(rule: Rule) -> bool {
        matches!(
            rule,
            Rule::PrivilegedBarrier | Rule::CooperativeGridSync | Rule::InvalidBarrier | Rule::WaitAfterInit
        )
    }

    /// What a wait of thread `t` on barrier `b` can do in state `s`.
    pub(crate) fn wait_plan(&self, s: &State, t: usize, b: usize, spec: &WaitSpec, ident: &[u32]) -> WaitPlan {
        let rules = self.p.model.rules;
        let misuse = |msg: String, phase: u32| {
            if rules.has(Rule::TokenMisuse) {
                WaitPlan::NoOp(Rule::TokenMisuse, msg, phase)
            } else {
                WaitPlan::Blocked
            }
        };
        if let Some(p) = &spec.parity {
            let parity = (eval(self.p, s, t, p) & 1) as u8;
            let cur = System::current_phase(s, b);
            // Parity counts from the latest init.
            let since_init = cur.saturating_sub(s.bars[b].epoch_start);
            if since_init % 2 == parity as u32 {
                return WaitPlan::Blocked;
            }
            return WaitPlan::Parity(self.participates_in(s, t, b, WaitForm::Parity).first().copied(), parity);
        }
        // A wait with no joined-before join does nothing, whatever its
        // token (wait-needs-join, reported by `System::wait_needs_join`).
        let joined = s.threads[t].joined.contains(&(b as u32));
        if !joined {
            return WaitPlan::NoJoin;
        }
        if let Some(r) = spec.token {
            let v = s.threads[t].regs[r.index()];
            let tp = match self.token_misuse(s, t, b, v, ident) {
                Ok(tp) => tp,
                Err((msg, phase)) => return misuse(msg, phase),
            };
            if tp >= System::current_phase(s, b) {
                return WaitPlan::Blocked;
            }
            let idx = self.participates_in(s, t, b, WaitForm::Token(tp));
            let target = Target::Barrier(BarrierId(b as u32));
            let taken = || {
                self.an.mixed_waits[b]
                    && s.hist[t].iter().any(|e| {
                        e.target == target
                            && matches!(e.kind, HKind::Wait { token_phase: None, took: Some(n), .. } if n == tp)
                    })
            };
            // No phase to take: not entitled, or a phase an init abandoned,
            // which never completes. Under token-phase (CUDA) a token of
            // the barrier's earlier life names neither its current nor its
            // previous phase ("Memory Barrier Primitives API",
            // `__mbarrier_test_wait`): UB, after which the wait does
            // nothing. A GPU's token is a parity snapshot, so the wait may
            // pass or hang; blocking for ever claimed the hang (issue 32,
            // point 2; an H200 passes). A completed phase of the earlier
            // life is judged where it is taken (`Phases`, `Taken`).
            let earlier_life = tp < s.bars[b].epoch_start && rules.has(Rule::TokenPhase);
            return if idx.is_empty() && taken() {
                WaitPlan::Taken(tp)
            } else if idx.is_empty() && earlier_life {
                let msg = format!(
                    "{} waits on {} with a token of phase {tp}, from before the latest init: it is neither current nor previous",
                    self.thread_name(ident, t),
                    self.bname(b)
                );
                WaitPlan::NoOp(Rule::TokenPhase, msg, tp)
            } else if idx.is_empty() {
                WaitPlan::Blocked
            } else {
                WaitPlan::Phases(idx, Some(tp), Self::token_phase(s, b, tp))
            };
        }
        let idx = self.participates_in(s, t, b, WaitForm::Plain);
        if idx.is_empty() {
            WaitPlan::Blocked
        } else {
            WaitPlan::Phases(idx, None, None)
        }
    }

    pub(crate) fn choices(&self, s: &State, ident: &[u32]) -> Vec<Choice> {
        let mut out = Vec::new();
        let mut together = rustc_hash::FxHashMap::default();
        let mut open = OpenLanes::default();
        for t in 0..s.threads.len() {
            let th = &s.threads[t];
            if th.status != Status::Running {
                continue;
            }
            let Some(ins) = self.p.instr(ThreadId(t as u32), th.pc) else {
                continue;
            };
            let one = Choice {
                thread: t as u32,
                phase: None,
            };
            match &ins.kind {
                InstrKind::Barrier {
                    op: op @ BarrierOp::Wait(spec),
                    sel,
                    ..
                } => {
                    // A lane that the first lane of its warp releases.
                    if self.follows_at_wait(s, t, &mut together) {
                        debug_assert_eq!(self.lane_mode(s, t), Lane::Follows);
                        continue;
                    }
                    let Some(b) = self.resolve(s, t, *sel) else {
                        out.push(one);
                        continue;
                    };
                    if self.neutral(s, t, b, op, ident).is_some() {
                        out.push(one);
                        continue;
                    }
                    match self.wait_plan(s, t, b, spec, ident) {
                        // A poll that cannot complete returns 0.
                        WaitPlan::Blocked if spec.poll => out.push(one),
                        WaitPlan::Blocked => {}
                        WaitPlan::Phases(idx, _, _) => out.extend(idx.into_iter().map(|i| Choice {
                            thread: t as u32,
                            phase: Some(i),
                        })),
                        WaitPlan::NoJoin | WaitPlan::NoOp(..) | WaitPlan::Parity(..) | WaitPlan::Taken(_) => {
                            out.push(one)
                        }
                    }
                }
                InstrKind::Await(cond) => {
                    // A spin is a step: the first one starts the thread
                    // (a state of its own, as the first read of the
                    // equivalent load loop is); later ones are self-loops
                    // (the liveness graph records them).
                    if eval(self.p, s, t, cond) != 0 || !th.started {
                        out.push(one);
                    }
                }
                InstrKind::DeviceSync => {
                    if self.device_idle(s) {
                        out.push(one);
                    }
                }
                // A lane of a warp that arrives together: the first lane's
                // step is the warp's; a held lane waits for its warp.
                InstrKind::Barrier {
                    op: BarrierOp::Arrive(a),
                    ..
                } if self.warp_arrive(s, t, a) => {
                    if matches!(self.lane_mode_with(s, t, &mut open), Lane::Alone | Lane::Leads) {
                        out.push(one);
                    }
                }
                _ => out.push(one),
            }
        }
        out
    }

    /// No device thread that has started is still running.
    pub(crate) fn device_idle(&self, s: &State) -> bool {
        self.p
            .threads
            .iter()
            .zip(&s.threads)
            .all(|(info, th)| info.kind == ThreadKind::Host || matches!(th.status, Status::Done | Status::NotLaunched))
    }

    /// The instance of location declaration `decl` thread `info` touches
    /// (lowering rejects a location whose scope does not hold the thread).
    pub(crate) fn loc(info: &ThreadInfo, decl: u32) -> LocId {
        info.locs[decl as usize].expect("lowering gives every location a thread names an instance")
    }

    /// The barrier instance a barrier instruction acts on for thread `t`, if any.
    pub(crate) fn resolve(&self, s: &State, t: usize, sel: BarrierSel) -> Option<usize> {
        let info = &self.p.threads[t];
        let joined_in = |group: u32| {
            self.p.groups[group as usize]
                .iter()
                .filter_map(|&d| info.barriers[d as usize].map(|b| b.0))
                .find(|b| s.threads[t].joined.contains(b))
                .map(|b| b as usize)
        };
        match sel {
            BarrierSel::Decl(d) => info.barriers[d as usize].map(|b| b.index()),
            BarrierSel::Joined { group } => joined_in(group),
            BarrierSel::JoinedOr { group, decl } => {
                joined_in(group).or(info.barriers[decl as usize].map(|b| b.index()))
            }
        }
    }

    /// participates-in: the completed phases of barrier `b` whose members a
    /// wait of thread `t` of this form may take as its participants (indices
    /// into `done`; [`System::bind`] records the one chosen as the wait's
    /// participants). "Execution Model" (barrier-participates-in: the
    /// modifications of one phase interval, with the waiting thread's join
    /// executing before one of them); parity, token and counted waits:
    /// project notes, section 3. By form:
    /// - a plain wait: every completed phase it has not completed a wait on,
    ///   whose members its join executes before; when the thread's latest
    ///   arrive on `b` is thread-counted (CUDA `bar.sync`, `__syncthreads`),
    ///   only the phase holding that arrive: the hardware barrier resets at
    ///   its count and a thread waits for the phase it arrived in, so a
    ///   surplus arrival waits for a new phase (docs/semantics.md, "Named
    ///   barriers");
    /// - a token wait: the phase its token names, on the same conditions
    ///   but the counted one (a phase an init abandoned is not there: the
    ///   wait never completes);
    /// - a parity wait: the last completed phase, if the thread has not
    ///   waited on it already and it happened (the H100 test_wait.parity
    ///   table; `mbarrier.init` clears the parity,
    ///   cuda-barrier-builtins-lowering.txt, the mbarrier table). The
    ///   "phase before phase 0" of a fresh or re-initialized barrier counts
    ///   as completed but has no members, so a parity-1 wait right after an
    ///   init passes with no participants; numbers keep counting across
    ///   inits, so the phase before this epoch's first is not its own.
    pub(crate) fn participates_in(&self, s: &State, t: usize, b: usize, form: WaitForm) -> Vec<u32> {
        let nt = self.p.threads.len();
        let done = &s.bars[b].done;
        let entitled = |ph: &Phase| ph.mask.get(JoinMask::pair(nt, t, b)) && !ph.bound.get(t);
        match form {
            WaitForm::Parity => {
                let cur = System::current_phase(s, b);
                let since_init = cur.saturating_sub(s.bars[b].epoch_start);
                (since_init > 0)
                    .then(|| cur - 1)
                    .and_then(|n| done.iter().rposition(|ph| ph.number == n))
                    .filter(|&i| !done[i].bound.get(t))
                    .map(|i| i as u32)
                    .into_iter()
                    .collect()
            }
            WaitForm::Token(tp) => done
                .iter()
                .position(|ph| ph.number == tp)
                .filter(|&i| entitled(&done[i]))
                .map(|i| i as u32)
                .into_iter()
                .collect(),
            WaitForm::Plain => {
                let target = Target::Barrier(BarrierId(b as u32));
                let own = s.hist[t]
                    .iter()
                    .rposition(|e| e.target == target && matches!(e.kind, HKind::Arrive(..)))
                    .filter(|&po| matches!(s.hist[t][po].kind, HKind::Arrive(_, Some(_), _)))
                    .map(|po| (t as u32, po as u32));
                match own {
                    // The wait takes the phase its own arrive fell in: an
                    // event is a member of one phase, found newest first
                    // (a scan of every done phase's members per call was
                    // a sixth of a 320-lane run).
                    Some(k) => (done.iter().rposition(|ph| ph.members.contains(&k)))
                        .filter(|&i| entitled(&done[i]))
                        .map(|i| i as u32)
                        .into_iter()
                        .collect(),
                    None => (done.iter().enumerate())
                        .filter(|(_, ph)| entitled(ph))
                        .map(|(i, _)| i as u32)
                        .collect(),
                }
            }
        }
    }

    /// The number of the phase barrier `b` is in now (the count of phases
    /// begun before it).
    pub(crate) fn current_phase(s: &State, b: usize) -> u32 {
        s.bars[b].open.as_ref().map_or(s.bars[b].next_phase, |p| p.number)
    }

    /// Whether thread `t` already arrived in the open phase of barrier `b`.
    pub(crate) fn arrived_in_open(&self, s: &State, t: usize, b: usize) -> bool {
        s.bars[b]
            .open
            .as_ref()
            .is_some_and(|ph| Self::arrivers(s, ph).any(|u| u == t))
    }

    /// The threads of phase `ph`'s members that arrived in it (not those
    /// that only dropped it).
    pub(crate) fn arrivers<'a>(s: &'a State, ph: &'a Phase) -> impl Iterator<Item = usize> + 'a {
        ph.members.iter().filter_map(|&(u, po)| {
            let arrive = matches!(
                s.hist.get(u as usize).and_then(|h| h.get(po as usize)).map(|e| &e.kind),
                Some(HKind::Arrive(..))
            );
            arrive.then_some(u as usize)
        })
    }

    pub(crate) fn set(&self, s: &mut State, t: usize, dest: Option<RegId>, v: i64) {
        if let Some(d) = dest {
            s.threads[t].regs[d.index()] = v;
        }
    }

    /// Thread `t` arrives on the `__syncwarp` barrier `b`. In every open
    /// phase of another mask of its warp whose mask names `t`, it is now a
    /// lane that executes a `__syncwarp` with a different mask; in `b`'s
    /// own phase it is no longer one ("Synchronization Functions": the
    /// non-exited lanes named in a mask must execute a `__syncwarp` with
    /// that mask).
    pub(crate) fn other_mask(&self, s: &mut State, t: usize, b: usize) {
        let Some(mine) = &self.p.barriers[b].syncwarp else {
            return;
        };
        let me = ThreadId(t as u32);
        for (o, inst) in self.p.barriers.iter().enumerate() {
            let Some(w) = &inst.syncwarp else {
                continue;
            };
            let Some(open) = s.bars[o].open.as_mut() else {
                continue;
            };
            if o == b {
                open.strays.clear(t);
            } else if w.warp == mine.warp && w.named.contains(&me) {
                open.strays.set(t);
            }
        }
    }

    /// Forgets completed phases of barrier `b` that no wait can complete on
    /// any more (every thread whose join executes before them has used
    /// them or has ended), except the last one while a parity wait may
    /// still take it: some thread that has not waited on it and has not
    /// ended may still reach a parity wait on `b` (a parity wait needs no
    /// join). (Ended threads kept the last phase of every finished
    /// block's barrier, and with it, since compaction forgets a barrier's
    /// history only once no completed phase is pending, that block's whole
    /// last phase: a grid of B blocks kept B phases of history. Parity
    /// barriers kept their last phase for good, and so their whole
    /// history: an mbarrier pipeline never repeated a state.)
    pub(crate) fn collect(&self, s: &mut State, b: usize) {
        // A sortable barrier's phases are retired once the new state's
        // phases are sorted ([`System::retire_phases`]): a phase retired
        // here would leave its stretch of the bmo in arrival order, and
        // two orders of one phase's last members different states.
        if self.sorted_now(s, b) || self.an.count_keyed[b] {
            return;
        }
        self.retire(s, b);
    }

    /// [`System::collect`] now, whatever the barrier.
    fn retire(&self, s: &mut State, b: usize) {
        let nt = self.p.threads.len();
        let last = s.bars[b]
            .done
            .iter()
            .map(|ph| ph.number)
            .max()
            .filter(|_| self.an.parity_barriers[b]);
        let mut done = std::mem::take(&mut s.bars[b].done);
        // Only parity waits on `b`: no wait can take a phase but the last.
        let entitled = !self.an.parity_only[b];
        // Only a thread that names `b` can hold a join on it or wait on it.
        let named = &self.an.bar_threads[b];
        // Own-phase waits (`analysis/own_phase.rs`): a thread can take only
        // the phase holding its latest arrive on `b` (none: its next wait
        // follows an arrive still to come).
        let own_only = self.an.own_phase_waits[b];
        let target = Target::Barrier(BarrierId(b as u32));
        let latest: Vec<Option<(u32, u32)>> = if own_only {
            named
                .iter()
                .map(|&u| {
                    (s.hist[u].iter())
                        .rposition(|e| e.target == target && matches!(e.kind, HKind::Arrive(..)))
                        .map(|po| (u as u32, po as u32))
                })
                .collect()
        } else {
            Vec::new()
        };
        done.retain(|ph| {
            named.iter().enumerate().any(|(i, &u)| {
                s.threads[u].status != Status::Done
                    && !ph.bound.get(u)
                    && ((entitled
                        && ph.mask.get(JoinMask::pair(nt, u, b))
                        && (!own_only || latest[i].is_some_and(|k| ph.members.contains(&k))))
                        || (Some(ph.number) == last && self.may_wait_parity(s, u, b)))
            })
        });
        s.bars[b].done = done;
    }

    /// [`System::collect`] on every barrier with a completed phase, after
    /// the new state's phases are sorted (`Explorer::normalize`): a
    /// sortable barrier's phases go only here, and a parity barrier's last
    /// one once no thread can still take it (a thread that moves past its
    /// last parity wait does not step the barrier). A function of the
    /// state alone, so steps that commute still reach one state.
    pub(crate) fn retire_phases(&self, s: &mut State) {
        for b in 0..self.p.barriers.len() {
            if !s.bars[b].done.is_empty() {
                self.retire(s, b);
            }
        }
    }

    /// Whether thread `u` may still reach a parity wait on barrier `b`
    /// (from pc 0 when it has not been launched).
    pub(crate) fn may_wait_parity(&self, s: &State, u: usize, b: usize) -> bool {
        let pc = match s.threads[u].status {
            Status::Done => return false,
            Status::NotLaunched => 0,
            Status::Running => s.threads[u].pc as usize,
        };
        self.may_reach_barrier(&self.an.reach_parity, u, pc, BarrierId(b as u32))
    }
}
