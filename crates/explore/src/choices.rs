//! Transitions, the state's side: which choices a state offers
//! (`System::choices`), what a wait can do now (`System::wait_plan`, with
//! the phases it is eligible for), operations that have no effect
//! (`System::neutral`), and the barrier a selector names. They read the
//! program, its analyses and the state alone; thread names in their
//! messages follow the renaming passed in.

use crate::eval::eval;
use crate::state::{HKind, Phase, State, Status};
use crate::step::decode_token;
use crate::system::System;
use crate::Choice;
use bc_graph::*;
use bc_models::Rule;
use bc_syntax::UbKind;

/// What a wait can do now.
pub(crate) enum WaitPlan {
    /// No joined-before join: `ub(wait-without-join)`, then no effect.
    NoJoin,
    /// Token misuse, then no effect: an event with no participants that
    /// records the phase the token names ([`NO_TOKEN_PHASE`] for none).
    NoOp(UbKind, String, u32),
    Blocked,
    /// Complete on one of these completed phases (indices into `done`);
    /// the token's phase; why the token is stale, if it is.
    Phases(Vec<u32>, Option<u32>, Option<&'static str>),
    /// A parity wait: the last completed phase (`None` when this thread
    /// already waited on it, or when it is the phase before a fresh
    /// barrier's first, which has no members) and the parity.
    Parity(Option<u32>, u8),
}

impl System<'_> {
    /// The declared name of thread index `t` under the renaming `ident`
    /// (symmetry renames threads; names follow the declared ones).
    pub(crate) fn thread_name<'a>(&'a self, ident: &[u32], t: usize) -> &'a str {
        &self.p.threads[ident[t] as usize].name
    }

    pub(crate) fn bname(&self, b: usize) -> &str {
        &self.p.barriers[b].name
    }

    /// Why an operation of thread `t` on barrier `b` has no effect, if it
    /// has none: a privileged barrier, the NULL barrier, a grid barrier
    /// outside a cooperative launch, an invalidated barrier.
    pub(crate) fn neutral(
        &self,
        s: &State,
        t: usize,
        b: usize,
        op: &BarrierOp,
        ident: &[u32],
    ) -> Option<(Option<UbKind>, String)> {
        let props = self.p.barriers[b].props;
        let name = self.bname(b);
        if props.privileged {
            return Some((
                Some(UbKind::PrivilegedBarrier),
                format!("{} uses the privileged barrier {name}", self.thread_name(ident, t)),
            ));
        }
        if props.noop && !matches!(op, BarrierOp::Join) {
            return Some((None, String::new()));
        }
        if props.cooperative && !self.p.threads[t].cooperative {
            let msg = format!(
                "{} uses {name} in a kernel not launched cooperatively",
                self.thread_name(ident, t)
            );
            return Some((Some(UbKind::UncooperativeGridSync), msg));
        }
        // `__syncwarp`: the calling lane must be in its own mask
        // ("Synchronization Functions"); otherwise UB, and the call does
        // nothing (its wait too).
        if let Some(w) = &self.p.barriers[b].syncwarp {
            if !w.named.contains(&ThreadId(t as u32)) {
                let lane = self.p.threads[t].lane;
                let ub = matches!(op, BarrierOp::Arrive(_)).then_some(UbKind::SyncwarpMask);
                let msg = format!(
                    "{} (lane {lane}) is not in its own mask {:#x}",
                    self.thread_name(ident, t),
                    w.mask
                );
                return Some((ub, msg));
            }
        }
        if s.bars[b].invalid && !matches!(op, BarrierOp::Init(_)) {
            return Some((
                Some(UbKind::InvalidBarrier),
                format!("{} uses {name} after it was invalidated", self.thread_name(ident, t)),
            ));
        }
        None
    }

    /// The token-phase rule: whether a token naming phase `tp` of barrier
    /// `b` is stale, i.e. names neither the barrier's current phase nor the
    /// one just before it ("Memory Barrier Primitives API",
    /// `__mbarrier_test_wait`: the token must belong to the immediately
    /// preceding or the current phase). Two ways: the barrier is two or
    /// more phases on, or an init came after the token's phase - an init
    /// restarts the barrier at phase 0 (`__mbarrier_init`: it sets the
    /// counts of the current and the next phase), so a token from before
    /// it names a phase of the barrier's earlier life, neither current nor
    /// preceding (on an H100 such a wait hangs: docs/hardware.md). Only
    /// models with the `token-phase` rule report it (`Explorer::ub`).
    fn token_phase_stale(s: &State, b: usize, tp: u32) -> Option<&'static str> {
        if tp < s.bars[b].epoch_start {
            Some("the barrier was initialized again after that phase")
        } else if Self::current_phase(s, b) >= tp + 2 {
            Some("the barrier is two phases past it")
        } else {
            None
        }
    }

    /// What a wait of thread `t` on barrier `b` can do in state `s`.
    pub(crate) fn wait_plan(&self, s: &State, t: usize, b: usize, spec: &WaitSpec, ident: &[u32]) -> WaitPlan {
        let rules = self.p.model.rules;
        let misuse = |msg: String, phase: u32| {
            if rules.has(Rule::TokenMisuse) {
                WaitPlan::NoOp(UbKind::TokenMisuse, msg, phase)
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
            // Project notes, section 3 (mbarrier, the H100 test_wait.parity
            // table); `mbarrier.init` clears the parity
            // (cuda-barrier-builtins-lowering.txt, the mbarrier table).
            // The phase just before the current one, if it happened: on a
            // fresh (or re-initialized) barrier the "phase before phase 0"
            // counts as completed but has no members, so a wait on parity
            // 1 passes and orders nothing. Numbers keep counting across
            // inits, so the phase before this epoch's first is not its own.
            let last = (since_init > 0).then(|| cur - 1).and_then(|n| {
                s.bars[b]
                    .done
                    .iter()
                    .rposition(|ph| ph.number == n)
                    .filter(|&i| !s.bars[b].done[i].bound.get(t))
            });
            return WaitPlan::Parity(last.map(|i| i as u32), parity);
        }
        // A wait with no joined-before join does nothing, whatever its token.
        let joined = s.threads[t].joined.contains(&(b as u32));
        if !joined {
            return WaitPlan::NoJoin;
        }
        if let Some(r) = spec.token {
            let v = s.threads[t].regs[r.index()];
            let nb = self.p.barriers.len();
            let cur = System::current_phase(s, b);
            let tp = match decode_token(v) {
                Some((tb, tp)) if tb == b => tp,
                Some((tb, _)) if tb < nb => {
                    return misuse(
                        format!(
                            "{} waits on {} with a token of {}",
                            self.thread_name(ident, t),
                            self.bname(b),
                            self.bname(tb)
                        ),
                        NO_TOKEN_PHASE,
                    )
                }
                _ => {
                    return misuse(
                        format!(
                            "{} waits on {} with {v}, which is no token",
                            self.thread_name(ident, t),
                            self.bname(b)
                        ),
                        NO_TOKEN_PHASE,
                    )
                }
            };
            // A wait takes an arrival token of its own barrier
            // (cuda-barrier-libcudacxx.txt, the [thread.barrier.class]
            // semantics it modifies; project notes, section 3). Tokens are
            // plain integers here, so we define which ones are real: a
            // value an arrive on this barrier instance has returned so far: it names this barrier and a phase number no
            // larger than the largest one an arrive returned (over all its
            // inits; numbers only grow between inits, so every smaller one
            // was current once). Anything else - arithmetic on a token, a
            // plain integer, a phase not reached yet - is forged.
            if tp >= s.bars[b].returned {
                return misuse(
                    format!(
                        "{} waits on {} with {v}, naming phase {tp}, which no arrive of it has returned",
                        self.thread_name(ident, t),
                        self.bname(b)
                    ),
                    tp,
                );
            }
            if tp >= cur {
                return WaitPlan::Blocked;
            }
            // Waited on already: this thread's history has a wait for it,
            // or the phase was forgotten (compaction forgets a phase only
            // after each arriving thread waited on it; numbers never repeat).
            let forgotten = tp < s.bars[b].phase_base;
            let used = forgotten
                || s.hist[t].iter().any(|e| {
                    e.target == Target::Barrier(BarrierId(b as u32))
                        && matches!(&e.kind, HKind::Wait { token_phase: Some(p), participants, .. }
                            if *p == tp && !participants.is_empty())
                });
            if used {
                return misuse(
                    format!(
                        "{} waits twice with one token of {}",
                        self.thread_name(ident, t),
                        self.bname(b)
                    ),
                    tp,
                );
            }
            return match s.bars[b].done.iter().position(|ph| ph.number == tp) {
                Some(i) if s.bars[b].done[i].mask.get(t * nb + b) && !s.bars[b].done[i].bound.get(t) => {
                    WaitPlan::Phases(vec![i as u32], Some(tp), Self::token_phase_stale(s, b, tp))
                }
                // Not entitled, or a phase an init abandoned: it never completes.
                _ => WaitPlan::Blocked,
            };
        }
        let idx = self.eligible(s, t, b, None);
        if idx.is_empty() {
            WaitPlan::Blocked
        } else {
            WaitPlan::Phases(idx, None, None)
        }
    }

    pub(crate) fn choices(&self, s: &State, ident: &[u32]) -> Vec<Choice> {
        let mut out = Vec::new();
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
                    let Some(b) = self.resolve(s, t, *sel) else {
                        out.push(one);
                        continue;
                    };
                    if self.neutral(s, t, b, op, ident).is_some() {
                        out.push(one);
                        continue;
                    }
                    match self.wait_plan(s, t, b, spec, ident) {
                        WaitPlan::Blocked => {}
                        WaitPlan::Phases(idx, _, _) => out.extend(idx.into_iter().map(|i| Choice {
                            thread: t as u32,
                            phase: Some(i),
                        })),
                        WaitPlan::NoJoin | WaitPlan::NoOp(..) | WaitPlan::Parity(..) => out.push(one),
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
                _ => out.push(one),
            }
        }
        out
    }

    /// The `ub(syncwarp-mask)` message for phase `ph` of the `__syncwarp`
    /// barrier `b`, if a lane its mask names executed a `__syncwarp` with a
    /// different mask while the phase was open and never arrived in it
    /// (it exited, completing the phase, or never will).
    pub(crate) fn stray_message(&self, b: usize, ph: &Phase, ident: &[u32]) -> Option<String> {
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

    /// Completed phases of barrier `b` that thread `t`'s wait may complete
    /// on: its join executes before a member, it has not completed a wait
    /// on the phase already, a token wait names it, and when the thread's
    /// latest arrive on `b` is thread-counted (CUDA `bar.sync`,
    /// `__syncthreads`), the phase holds that arrive: the hardware barrier
    /// resets when its count is reached and a thread waits for the phase it
    /// arrived in, so a surplus arrival waits for a new phase (project
    /// notes, section 3, counted named barriers; docs/semantics.md, "Named
    /// barriers").
    pub(crate) fn eligible(&self, s: &State, t: usize, b: usize, token_phase: Option<u32>) -> Vec<u32> {
        let nb = self.p.barriers.len();
        let target = Target::Barrier(BarrierId(b as u32));
        let own = s.hist[t]
            .iter()
            .rposition(|e| e.target == target && matches!(e.kind, HKind::Arrive(..)))
            .filter(|&po| matches!(s.hist[t][po].kind, HKind::Arrive(_, Some(_))))
            .map(|po| (t as u32, po as u32));
        s.bars[b]
            .done
            .iter()
            .enumerate()
            .filter(|(_, ph)| {
                ph.mask.get(t * nb + b)
                    && !ph.bound.get(t)
                    && token_phase.is_none_or(|n| n == ph.number)
                    && own.is_none_or(|k| ph.members.contains(&k))
            })
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// The number of the phase barrier `b` is in now (the count of phases
    /// begun before it).
    pub(crate) fn current_phase(s: &State, b: usize) -> u32 {
        s.bars[b].open.as_ref().map_or(s.bars[b].next_phase, |p| p.number)
    }

    /// Whether thread `t` already arrived in the open phase of barrier `b`.
    pub(crate) fn arrived_in_open(&self, s: &State, t: usize, b: usize) -> bool {
        s.bars[b].open.as_ref().is_some_and(|ph| {
            ph.members.iter().any(|&(u, po)| {
                u as usize == t && matches!(s.hist[t].get(po as usize).map(|e| &e.kind), Some(HKind::Arrive(..)))
            })
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
    /// them), except the last one, which parity waits may still take.
    pub(crate) fn collect(&self, s: &mut State, b: usize) {
        let nt = self.p.threads.len();
        let nb = self.p.barriers.len();
        let last = s.bars[b]
            .done
            .iter()
            .map(|ph| ph.number)
            .max()
            .filter(|_| self.an.parity_barriers[b]);
        s.bars[b]
            .done
            .retain(|ph| Some(ph.number) == last || (0..nt).any(|u| ph.mask.get(u * nb + b) && !ph.bound.get(u)));
    }
}
