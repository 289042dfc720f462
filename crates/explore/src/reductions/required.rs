//! Partial-order reduction on phase-counted barriers: a step that the
//! phase it acts on cannot do without is a persistent set on its own
//! (docs/explorer.md, "Reductions", item 8).
//!
//! A *phase-counted* barrier (an `mbarrier` of a warp-specialized
//! pipeline) is one whose every operation, in every thread, is an
//! initialization, an arrive that counts one (no expected-count update,
//! thread count, mask, predicate, transaction count or `cuda::barrier`
//! owing), or a parity wait; no thread's end drops it, and its phases are
//! kept sorted (canon.rs). Its current phase completes exactly when its
//! arrivals reach the expected count ("Execution Model": a phase's
//! modifications complete it; the mbarrier's pending count in the CUDA
//! guide's "Asynchronous Barrier" section), and a parity wait passes
//! exactly when the current phase's parity, counted from the latest
//! init, differs from its operand (the H100 test_wait.parity table,
//! docs/semantics.md).
//!
//! **Which phases may complete without a thread.** Freeze thread `t` in
//! state `s` and ask which current phases of phase-counted barriers can
//! complete in some run from `s` in which `t` takes no step. The answer
//! is a greatest fixed point: assume that none can; walk each other
//! thread's code from its pc (registers it knows exactly, values read from
//! memory or returned by other threads' operations unknown, both ways at
//! a branch on an unknown value) until it ends or reaches a parity wait on
//! a barrier assumed stuck that waits for the current phase (it cannot
//! pass while that phase is open); count the arrives each barrier could
//! get that way; a barrier whose count could reach its pending count, or
//! that a walk could initialize, may complete: drop the assumption and
//! walk again. What stays assumed is sound: in a run where the first of
//! them completed, every thread before that point followed one of its
//! walks (every parity wait it passed on an assumed barrier waited for a
//! phase already complete, since none of theirs had completed yet, and
//! no init had reset one), so that phase got at most its walks' count of
//! arrivals, fewer than it needs.
//!
//! **Held barriers.** The walks also stop where the frozen thread holds
//! another thread back. A barrier whose arrives fuse is lockstep (fuse.rs:
//! every phase needs one arrive, or the end, of every live thread that
//! arrives on it), so with `t` frozen (alive, taking no step) no phase of
//! such a barrier that `t` arrives on completes from the first one `t`
//! has not arrived in: the open phase if `t` has not arrived there, else
//! the next. A walk counts its own arrives on such a barrier from where
//! its thread's latest arrive stands (in the open phase, or in a
//! completed one) and stops at a wait for a phase that needs `t`. In a
//! run from `s` in which `t` takes no step no thread passes such a wait,
//! so the walks still cover every run up to the first completion of an
//! assumed phase. This is what a warp-specialized TMA kernel needs: its
//! consumer lanes wait on `full[s]`, meet at `__syncwarp`, and one lane
//! releases `empty[s]`; a lane frozen before the `__syncwarp` keeps that
//! release, and so the producer's next arrive on `full[s]`, out of every
//! walk, and each lane's parity wait is taken alone (a 64-lane kernel of
//! two stages and four iterations: 509 states, where it stopped at the
//! time limit past 100,000).
//!
//! **Persistent steps.** Thread `t`'s next step `x` on phase-counted
//! barrier `b` is a persistent set on its own when `b`'s current phase
//! cannot complete without `t` and no walk initializes `b`:
//! - `x` an arrive: in a run from `s` without `x`, every other step on `b`
//!   is an arrive into the same phase (it commutes with `x` up to the
//!   sorted order of the phase's members) or a parity wait, which `x`
//!   enables or disables only by completing the phase; so when `x` may be
//!   the completing arrive (the others could bring the pending count down
//!   to one) no walk may reach a parity wait on `b` that passes now.
//!   Steps on other objects are independent of it.
//! - `x` a parity wait that passes now: it reads the last completed phase
//!   and the current phase's number, which no step can change before `x`
//!   (that takes a completion, or an init), and marks the phase waited by
//!   `t`, which commutes with every other wait.
//!
//! - `x` a plain read or write, in any finite program (phase-counted
//!   barriers or not), whatever other threads may still do to its
//!   location: it only appends an event to its thread's history (no
//!   memory value, register or barrier changes), which no other thread's
//!   step reads, so it commutes with every step of every other thread and
//!   enables or disables none. A conflicting access `y` of another thread
//!   still comes later on the path, and the race rule asks whether
//!   executes-before orders `x` and `y`, which program order and the
//!   barriers fix, not the order the two ran in: the race is found all
//!   the same (its witness may show the other order). Access fusion
//!   (fuse.rs) asks more, no conflicting access left, because it takes
//!   the access inside another thread's transition. A lane-level
//!   `__syncthreads` kernel then takes each thread's accesses between two
//!   barriers one thread at a time instead of in every order (a 256-lane
//!   tiled sum: 1,057 states, where every order of the first stores
//!   stopped at the time limit from 16 lanes on).
//!
//! **Copy completions.** The completion of a `cp.async` (its agent's
//! arrive on its own start barrier, `bc_graph::copies`), in any finite
//! program, is a persistent set on its own. Only three kinds of step
//! touch that barrier: the issues of the agent's site, which start only
//! a free agent (`step.rs`: not running, all it did executing before the
//! issue), and the agent stays running in every run without its
//! completion, so none of them starts it; the agent's own steps, none of
//! which comes before the completion; and parity waits for the
//! completion phase (the issuer's `cp.async.wait_group`/`wait_all`, an
//! arrive agent's wait for the copies it tracks), which the open
//! completion phase blocks until the completion enables them. The copy's
//! read and write are plain accesses, events of its history only (see
//! above); copy-not-waited judges executes-before at the end. So no step
//! of another thread depends on when the completion runs, and a
//! multistage pipeline's copies complete one at a time instead of in
//! every order against every thread's steps.
//!
//! So is the issuer's parity wait on such a start barrier (an
//! async-group wait: a choice only when it passes), for any copy kind:
//! it reads the barrier's current phase number, which only the agent's
//! own arrives (all made once the wait passes: the completion, or a bulk
//! group's end of reading) and the issuer's next issue on that agent
//! (the waiting thread's own later step) change, and it adds to the
//! issuer's history alone. An arrive agent's wait for a copy it tracks
//! is not: the issuer's next issue may restart the copy's agent.
//!
//! And so is a `cp.async` issue that holds no barrier, in a program with
//! no `cp.async.mbarrier.arrive`: it arrives on the start barrier of a
//! free agent of the issuer (one not running whose events all execute
//! before the issuer's latest, which only the issuer's own steps can
//! bring about: a completion alone leaves the agent busy until the
//! issuer waits for it), starts it, and runs the agent's first steps (its
//! wait for the issue's phase, the plain read and write); no other
//! thread operates on that barrier or reads the issuer's ages. (With
//! arrive agents, a running one's steps decide which agents an issue may
//! reuse, so issues stay in every order there.)
//!
//! **Thread-counted barriers.** A named barrier whose every arrive is a
//! thread-counted one of one constant count `K` (`bar.sync ID, K`,
//! `bar.arrive ID, K`) and whose every wait is plain, with no init, drop or
//! end dropping it (analysis/phase_counted.rs), completes each phase at
//! exactly `K` arrivals, and a plain wait waits for the phase its own
//! arrive joined (`System::participates_in`; the PTX ISA's `bar` section:
//! the barrier resets once its count is reached, and `bar.sync` waits for
//! the instance it arrived on). The walks count its arrives as they count
//! a phase-counted barrier's, and stop at a plain wait on it, while it is
//! assumed stuck, where the walker's latest arrive on it lies in the open
//! phase (arrived there at `s`, or during the walk). Its phase then
//! cannot complete without thread `t` when the walks' arrives fall short
//! of its pending count `K - arrived`. Thread `t`'s next step `x` on it is
//! a persistent set on its own:
//! - `x` an arrive of `L` lanes (one thread, or a warp that arrives
//!   together at an `.aligned` arrive, whose other lanes are frozen with
//!   the leading one: they have no step of their own until it arrives),
//!   when the walks of the unfrozen threads can make at most
//!   `K - arrived - L` arrives. In a run from `s` without `x` the open phase stays
//!   open, every other step on the barrier is an arrive into it or a wait
//!   on a completed phase; an arrive commutes with `x` up to the sorted
//!   order of the phase's members, and a wait on another phase reads
//!   nothing `x` writes. `x` completes the phase only once every arrive
//!   the walks allow has been made, so no arrive of another thread can
//!   come after `x` into the next phase in one order and before it into
//!   this one in the other; nor can the warp's arrival split across two
//!   phases.
//! - `x` a plain wait (it is a choice only when its phase has completed),
//!   the thread's only choice, on a phase that holds its own arrive: it
//!   takes that one completed phase, which no step of another thread
//!   changes.
//!
//! A warp-specialized CudaDMA kernel (WEFT's `saxpy`): the compute warps'
//! `bar.arrive`s on the DMA warps' buffers are taken one warp at a time
//! instead of in every subset.
//!
//! The transition runs the thread's local steps after `x`, and its end if
//! they reach it: allowed only where the end drops nothing but barriers
//! whose arrives fuse (a phase needs every live thread's arrive or end, so
//! the drop commutes with the other members), and not for a named
//! kernel's thread.
//!
//! Where every execution is finite (no cycle to ignore a thread on) a
//! search that takes such a step alone reaches every terminal state and
//! execution up to the order of independent steps, as item 7 argues
//! (Godefroid's persistent sets). Off with `--no-por`. A warp-specialized
//! pipeline then runs each thread until it blocks instead of
//! interleaving every thread's every step.

use crate::semantics::System;
use crate::state::Choice;
use crate::state::{State, Status};
use bc_graph::*;
use rustc_hash::FxHashMap as HashMap;

/// Abstract steps one walk may take before the analysis gives up (and the
/// state keeps every choice).
const WALK_BUDGET: usize = 4096;

/// A step [`System::required_step`] asks about.
#[derive(Clone, Copy)]
enum Needed<'a> {
    /// An operation on a phase-counted barrier.
    Barrier(usize, &'a BarrierOp),
    /// An arrive of this many lanes on a thread-counted barrier.
    Counted(usize, u64),
}

/// Candidates that walk alike (walk class, pc, registers, lanes, and
/// where the thread stands in the thread-counted barriers' open phases):
/// one answer per state.
type TriedKey = (usize, u32, Vec<i64>, u64, Vec<bool>);

/// A barrier the walks stop at (module text, "Held barriers" and
/// "Thread-counted barriers").
struct Held {
    bar: usize,
    /// How many of its phases, from the open one on, may complete with
    /// the frozen threads taking no step.
    free: i64,
    /// A thread-counted barrier: held only while assumed stuck.
    counted: bool,
    /// Per thread, whether its latest arrive on it lies in the open phase.
    in_open: Vec<bool>,
}

/// Threads that walk alike: walk class, pc, registers, and where the
/// thread stands in the held barriers' phases.
type WalkKey<'a> = (usize, u32, &'a [i64], Vec<i64>);

/// What the walks of the other threads found, for one frozen thread.
struct Frozen {
    /// Phase-counted barriers whose current phase may complete.
    may_complete: Vec<bool>,
    /// Per barrier, the arrives the walks could make on it.
    arrives: Vec<u64>,
    /// Per barrier, whether a walk reaches a transaction operation on it.
    tx: Vec<bool>,
    /// Per barrier, whether a walk reaches a parity wait on it that passes
    /// while its current phase is open.
    passing_wait: Vec<bool>,
    /// Per barrier, whether a walk reaches an init of it.
    init: Vec<bool>,
}

/// One walk's findings ([`Frozen`], per thread).
#[derive(Clone)]
struct Walk {
    arrives: Vec<u64>,
    /// A transaction operation (`expect_tx`, `complete_tx`, an arrive
    /// with bytes).
    tx: Vec<bool>,
    passing_wait: Vec<bool>,
    init: Vec<bool>,
}

impl Walk {
    fn new(nb: usize) -> Walk {
        Walk {
            arrives: vec![0; nb],
            tx: vec![false; nb],
            passing_wait: vec![false; nb],
            init: vec![false; nb],
        }
    }

    /// Adds `times` walks like `w` (threads that walk alike walk once,
    /// and are added once: adding per thread cost threads x barriers, a
    /// fifth of a 2,048-thread kernel's time).
    fn add(&mut self, w: &Walk, times: u64) {
        for (x, y) in self.arrives.iter_mut().zip(&w.arrives) {
            *x = x.saturating_add(y.saturating_mul(times));
        }
        for (x, y) in (self.passing_wait.iter_mut().chain(&mut self.tx).chain(&mut self.init))
            .zip(w.passing_wait.iter().chain(&w.tx).chain(&w.init))
        {
            *x |= *y;
        }
    }
}

impl System<'_> {
    /// A choice of `choices` that is a persistent set on its own because
    /// the phase it acts on needs it (module text), if any.
    pub(crate) fn required_step(&self, s: &State, choices: &[Choice], ident: &[u32]) -> Option<Choice> {
        // Plain accesses are persistent alone in any finite program
        // (module text); barrier steps need phase-counted barriers, which
        // exist only there (`Analyses::phase_counted`).
        if !(self.reductions.por && self.an.finite) {
            return None;
        }
        let counted = self.an.phase_counted.iter().any(|&x| x) || self.an.thread_counted.iter().any(Option::is_some);
        // A thread a launch may start (a named kernel's) is not walked;
        // a copy agent not started is, through the issues that start it
        // (`walk`).
        if self.launch_pending(s) {
            return None;
        }
        let mut tried: HashMap<TriedKey, bool> = HashMap::default();
        for &c in choices {
            let t = c.thread as usize;
            let th = &s.threads[t];
            let Some(kind) = self.p.instr(ThreadId(t as u32), th.pc).map(|i| &i.kind) else {
                continue;
            };
            // A warp's arrival (several lanes' arrives) is weighed against
            // a thread-counted barrier's count only.
            let leads = self.lane_mode(s, t) == crate::semantics::choices::Lane::Leads;
            // Nor a step that may change a warp mate's (its end may make
            // a mate that stands alone at an `.aligned` barrier lead or
            // follow its warp).
            if self.moves_warp_mates(s, t) {
                continue;
            }
            // A `cp.async` agent's completion (module text, "Copy
            // completions").
            if self.plain_copy_completion(s, t, kind) || self.own_copy_wait(s, t, kind) || self.plain_copy_issue(kind) {
                if self.end_commutes(s, t) {
                    return Some(c);
                }
                continue;
            }
            // A plain wait on a thread-counted barrier or one of own-phase
            // waits (module text, "Thread-counted barriers", "Own-phase
            // waits"; the latter whatever its counts): its one completed
            // phase, the thread's only choice, and a phase its own arrive
            // is in (a wait of a thread with no arrive there may take any
            // completed phase, and a later one is a choice it may not have
            // yet).
            if let InstrKind::Barrier {
                op: op @ BarrierOp::Wait(_),
                sel,
                ..
            } = kind
            {
                if let Some(b) = self.resolve(s, t, *sel) {
                    if (self.an.own_phase_waits[b] || self.an.thread_counted[b].is_some())
                        && self.neutral(s, t, b, op, ident).is_none()
                        && choices.iter().filter(|x| x.thread == c.thread).count() == 1
                        && c.phase.is_some_and(|i| self.arrived_in_done(s, t, b, i as usize))
                    {
                        if self.end_commutes(s, t) {
                            return Some(c);
                        }
                        continue;
                    }
                }
            }
            let step = match kind {
                InstrKind::Barrier { op, sel, .. } if counted => {
                    let Some(b) = self.resolve(s, t, *sel) else { continue };
                    if self.neutral(s, t, b, op, ident).is_some() {
                        continue;
                    }
                    if self.an.thread_counted[b].is_some() {
                        match op {
                            // (Its plain wait: above.)
                            BarrierOp::Arrive(a) => {
                                // A warp counted whole adds the warp size.
                                let absent = self.absent_lanes(s, t, b, a);
                                let lanes = 1 + self.warp_followers(s, c).len() as u64 + u64::from(absent);
                                Needed::Counted(b, lanes)
                            }
                            _ => continue,
                        }
                    } else {
                        if leads || !self.an.phase_counted[b] {
                            continue;
                        }
                        // An arrive with bytes, or a transaction operation,
                        // decides with the others which step completes the
                        // phase: never taken alone.
                        if !matches!(op, BarrierOp::Arrive(a) if a.tx.is_none()) && !matches!(op, BarrierOp::Wait(_)) {
                            continue;
                        }
                        Needed::Barrier(b, op)
                    }
                }
                // Any plain access, a thread's first step too (`started`
                // matters only to the liveness analysis and spins, which a
                // finite program does not have); its end, if the local
                // steps after it reach it, must commute too.
                InstrKind::Read { decl } | InstrKind::Write { decl } if !leads => {
                    if self.p.threads[t].locs[*decl as usize].is_some() && self.end_commutes(s, t) {
                        return Some(c);
                    }
                    continue;
                }
                _ => continue,
            };
            // The transition runs the thread's local steps after it, and
            // its end if they reach it: the end's drops must commute too.
            if !self.end_commutes(s, t) {
                continue;
            }
            let lanes = match step {
                Needed::Counted(_, l) => l,
                Needed::Barrier(..) => 1,
            };
            // Where the thread stands in the thread-counted barriers'
            // open phases: two threads alike but for that walk apart.
            let standing = (self.an.thread_counted.iter().enumerate())
                .filter(|(_, k)| k.is_some())
                .map(|(b, _)| self.arrived_in_open(s, t, b))
                .collect();
            let key = (self.an.walk_class[t], th.pc, th.regs.clone(), lanes, standing);
            if let Some(&ok) = tried.get(&key) {
                if ok {
                    return Some(c);
                }
                continue;
            }
            let ok = self.needs(s, c, step);
            tried.insert(key, ok);
            if ok {
                return Some(c);
            }
        }
        None
    }

    /// The copy start barrier thread `t`'s next step `kind` operates on:
    /// the operation, the agent's pool and the agent.
    fn on_copy_start<'k>(&self, s: &State, t: usize, kind: &'k InstrKind) -> Option<(&'k BarrierOp, &CopyPool, usize)> {
        let InstrKind::Barrier { op, sel, .. } = kind else {
            return None;
        };
        let b = self.resolve(s, t, *sel)?;
        let (pool, agent) = self.p.copy_start_owner(BarrierId(b as u32))?;
        Some((op, pool, agent.index()))
    }

    /// Whether thread `t`'s next step `kind` is the completion of a
    /// running `cp.async` agent: its arrive on its own start barrier
    /// (`bc_graph::copies`, "plain").
    fn plain_copy_completion(&self, s: &State, t: usize, kind: &InstrKind) -> bool {
        if self.p.threads[t].kind != ThreadKind::Copy || s.threads[t].status != Status::Running {
            return false;
        }
        self.on_copy_start(s, t, kind).is_some_and(|(op, pool, agent)| {
            matches!(op, BarrierOp::Arrive(_))
                && agent == t
                && matches!(self.p.copy_sites[pool.site as usize].kind, CopySite::Plain)
        })
    }

    /// Whether `kind` is the issue of a `cp.async` that holds no barrier,
    /// in a program without `cp.async.mbarrier.arrive` (whose running
    /// agents decide which agents an issue may reuse).
    fn plain_copy_issue(&self, kind: &InstrKind) -> bool {
        let InstrKind::CopyIssue { site, hold: None, .. } = kind else {
            return false;
        };
        matches!(self.p.copy_sites[*site as usize].kind, CopySite::Plain)
            && !(self.p.copy_sites.iter()).any(|c| matches!(c.kind, CopySite::Arrive { .. }))
    }

    /// Whether thread `t`'s next step `kind` is a parity wait on the start
    /// barrier of an agent `t` issues to (an async-group wait: it is a
    /// choice only when it passes).
    fn own_copy_wait(&self, s: &State, t: usize, kind: &InstrKind) -> bool {
        self.on_copy_start(s, t, kind).is_some_and(|(op, pool, _)| {
            matches!(op, BarrierOp::Wait(w) if w.parity.is_some() && w.token.is_none() && w.reduce.is_none() && !w.poll)
                && pool.issuer.index() == t
        })
    }

    /// Whether completed phase `i` of barrier `b` (an index into `done`)
    /// holds an arrive of thread `t`.
    fn arrived_in_done(&self, s: &State, t: usize, b: usize, i: usize) -> bool {
        (s.bars[b].done.get(i)).is_some_and(|ph| Self::arrivers(s, ph).any(|u| u == t))
    }

    /// Whether thread `t`'s end, if the local steps after its next
    /// instruction may reach it, drops only barriers whose arrives fuse
    /// (lockstep and sorted, fuse.rs: a phase needs every live thread's
    /// arrive or end, so the drop commutes with the other members as an
    /// arrive into the open phase does), and `t` is no named kernel's
    /// thread (whose last thread starts the next kernel).
    fn end_commutes(&self, s: &State, t: usize) -> bool {
        let code = self.p.threads[t].code.index();
        let next = s.threads[t].pc as usize + 1;
        let rows = &self.an.may_end[code];
        if !rows[next.min(rows.len() - 1)] {
            return true;
        }
        self.p.threads[t].kernel.is_none()
            && s.threads[t].joined.iter().all(|&d| {
                self.arrives_fuse(s, d as usize) || !self.p.barriers[d as usize].dropped_at_end_by(ThreadId(t as u32))
            })
    }

    /// Whether choice `c` (thread `t`'s operation on a phase-counted or
    /// thread-counted barrier) is a persistent set on its own (module
    /// text).
    fn needs(&self, s: &State, c: Choice, step: Needed) -> bool {
        let t = c.thread as usize;
        match step {
            Needed::Barrier(b, op) => {
                let Some(pending) = self.pending(s, b) else {
                    return false;
                };
                let Some(f) = self.frozen(s, &[t]) else {
                    return false;
                };
                if f.may_complete[b] || f.init[b] {
                    return false;
                }
                match op {
                    // May it complete the phase? Only if the others can
                    // bring the pending count down to one. A transaction
                    // operation of another thread would not commute with
                    // it (either may be the step that completes).
                    BarrierOp::Arrive(_) => !f.tx[b] && (f.arrives[b] + 1 < pending || !f.passing_wait[b]),
                    BarrierOp::Wait(_) => true,
                    _ => false,
                }
            }
            Needed::Counted(b, lanes) => {
                let Some(pending) = self.pending(s, b) else {
                    return false;
                };
                if lanes > pending {
                    return false;
                }
                let mut frozen = vec![t];
                frozen.extend(self.warp_followers(s, c).into_iter().map(|u| u as usize));
                let Some(f) = self.frozen(s, &frozen) else {
                    return false;
                };
                !f.may_complete[b] && !f.init[b] && f.arrives[b].saturating_add(lanes) <= pending
            }
        }
    }

    /// The arrivals barrier `b`'s current phase still needs, when it
    /// cannot complete without them: a phase-counted barrier initialized,
    /// valid, with no pending drop, short of its count (transaction bytes
    /// only hold a phase back once its arrivals are in); a thread-counted
    /// one short of its count.
    fn pending(&self, s: &State, b: usize) -> Option<u64> {
        let bar = &s.bars[b];
        let needed = self.an.thread_counted[b].unwrap_or(bar.expected);
        (bar.init && !bar.invalid && bar.pending_drop == 0 && bar.arrived < needed)
            .then(|| (needed - bar.arrived) as u64)
    }

    /// Whether barrier `b` is phase-counted or thread-counted.
    fn counted(&self, b: usize) -> bool {
        self.an.phase_counted[b] || self.an.thread_counted[b].is_some()
    }

    /// On a barrier counted in whole warps (`System::warp_counted`: an
    /// `.aligned` thread count that is a multiple of the warp size), a
    /// warp's arrival counts the warp size whatever its live lanes, so
    /// the lanes' arrives summed may fall short of what the warps add.
    /// There each warp counts the warp size times the most arrives one of
    /// its lanes walks: the same sum for a full warp whose lanes walk
    /// alike, an upper bound always (a warp arrives at most as often as
    /// its busiest lane, and a split warp's lanes count one each).
    fn whole_warp_arrives(&self, total: &mut Walk, walks: &[(Walk, u64)], walk_of: &[(usize, usize)]) {
        let ws = u64::from(self.p.model.warp_size);
        if ws < 2 || self.an.warps.of.is_empty() {
            return;
        }
        for (b, k) in self.an.thread_counted.iter().enumerate() {
            if !k.is_some_and(|k| self.p.model.counts_whole_warps(k)) {
                continue;
            }
            let mut per_warp: HashMap<u32, u64> = HashMap::default();
            let mut sum = 0u64;
            for &(u, i) in walk_of {
                let a = walks[i].0.arrives[b];
                match self.p.threads[u].warp_id {
                    u32::MAX => sum = sum.saturating_add(a),
                    wid => {
                        let e = per_warp.entry(wid).or_default();
                        *e = (*e).max(a);
                    }
                }
            }
            for a in per_warp.values() {
                sum = sum.saturating_add(a.saturating_mul(ws));
            }
            total.arrives[b] = total.arrives[b].max(sum);
        }
    }

    /// The greatest fixed point of the module text with the threads of
    /// `frozen` (the first the one whose step is asked about) taking no
    /// step; `None` when a walk ran past its budget.
    fn frozen(&self, s: &State, frozen: &[usize]) -> Option<Frozen> {
        let nb = self.p.barriers.len();
        // Barriers whose completion is not decided by arrivals alone may
        // complete for all the analysis knows.
        let mut may_complete: Vec<bool> = (0..nb)
            .map(|c| !self.counted(c) || self.pending(s, c).is_none())
            .collect();
        let held = self.held(s, frozen[0]);
        // Only the frozen thread's independent group (`por.rs`) is
        // walked: the other groups' threads operate on none of its
        // barriers, so their walks count no arrive there and stop at no
        // wait of its, and whether their barriers may complete decides
        // nothing about its own (an 8-block kernel walked 2,048 threads
        // for each step of one block's 256).
        let groups = &self.an.groups;
        let same_group = |u: usize| groups.is_empty() || groups[u] == groups[frozen[0]];
        loop {
            // Threads that walk alike (same class, pc and registers, and
            // where they stand in the held barriers' phases) walk once.
            // Each distinct walk with the number of threads that walk it,
            // in the order first met.
            let mut cache: HashMap<WalkKey, usize> = HashMap::default();
            let mut walks: Vec<(Walk, u64)> = Vec::new();
            // Per thread walked, its walk's index (for the warps below).
            let mut walk_of: Vec<(usize, usize)> = Vec::new();
            // A copy agent's walk (from its start, registers unknown) is
            // the same at every issue that may start it in this round.
            let mut agents: HashMap<usize, Walk> = HashMap::default();
            for (u, th) in s.threads.iter().enumerate() {
                if th.status != Status::Running || frozen.contains(&u) || !same_group(u) {
                    continue;
                }
                let offsets = Self::held_offsets(u, &held);
                let key = (self.an.walk_class[u], th.pc, th.regs.as_slice(), offsets.clone());
                match cache.get(&key) {
                    Some(&i) => {
                        walks[i].1 += 1;
                        walk_of.push((u, i));
                    }
                    None => {
                        let w = self.walk(s, u, &may_complete, &held, offsets, frozen, &mut agents)?;
                        cache.insert(key, walks.len());
                        walk_of.push((u, walks.len()));
                        walks.push((w, 1));
                    }
                }
            }
            let mut total = Walk::new(nb);
            for (w, times) in &walks {
                total.add(w, *times);
            }
            self.whole_warp_arrives(&mut total, &walks, &walk_of);
            let mut changed = false;
            for (c, may) in may_complete.iter_mut().enumerate() {
                if !*may && (total.init[c] || self.pending(s, c).is_none_or(|r| total.arrives[c] >= r)) {
                    *may = true;
                    changed = true;
                }
            }
            if !changed {
                return Some(Frozen {
                    may_complete,
                    arrives: total.arrives,
                    tx: total.tx,
                    passing_wait: total.passing_wait,
                    init: total.init,
                });
            }
        }
    }

    /// The barriers the walks stop at with thread `t` frozen (module text):
    /// the lockstep barriers `t` holds back, each with the number of its
    /// phases, from the open one on, that may complete without `t` (1 when
    /// `t` has arrived in the open phase, else 0); then every other
    /// thread-counted barrier, none of whose phases may complete while it
    /// is assumed stuck.
    fn held(&self, s: &State, t: usize) -> Vec<Held> {
        let nt = s.threads.len();
        let in_open = |c: usize| {
            let mut v = vec![false; nt];
            for u in s.bars[c].open.iter().flat_map(|ph| Self::arrivers(s, ph)) {
                v[u] = true;
            }
            v
        };
        let mut out: Vec<Held> = Vec::new();
        if let Some(on) = self.an.fused_arrives_on.get(t) {
            for c in on.iter().map(|&c| c as usize).filter(|&c| self.arrives_fuse(s, c)) {
                let in_open = in_open(c);
                out.push(Held {
                    bar: c,
                    free: i64::from(in_open[t]),
                    counted: false,
                    in_open,
                });
            }
        }
        for (c, k) in self.an.thread_counted.iter().enumerate() {
            if k.is_some() && !out.iter().any(|h| h.bar == c) {
                out.push(Held {
                    bar: c,
                    free: 0,
                    counted: true,
                    in_open: in_open(c),
                });
            }
        }
        out
    }

    /// Where thread `u`'s latest arrive on each held barrier stands: 0 in
    /// the open phase, -1 in a completed one (or none yet).
    fn held_offsets(u: usize, held: &[Held]) -> Vec<i64> {
        held.iter().map(|h| i64::from(h.in_open[u]) - 1).collect()
    }

    /// Thread `u`'s walk from its pc (module text), with the barriers of
    /// `may_complete` free to complete and the `held` ones held back from
    /// `offsets` (its place in their phases) on, in a run where the
    /// `frozen` threads take no step; `None` past the budget.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        s: &State,
        u: usize,
        may_complete: &[bool],
        held: &[Held],
        offsets: Vec<i64>,
        frozen: &[usize],
        agents: &mut HashMap<usize, Walk>,
    ) -> Option<Walk> {
        let th = &s.threads[u];
        let regs: Vec<Option<i64>> = th.regs.iter().map(|&v| Some(v)).collect();
        self.walk_from(s, u, th.pc, regs, may_complete, held, offsets, frozen, agents)
    }

    /// [`System::walk`] of thread `u` from `pc` with registers `regs`. A
    /// copy issue on the way may start any agent of its site, which runs
    /// from its start with its registers unknown (what the issue sets):
    /// its walk is added. Not a frozen agent's that is running: an issue
    /// starts only a free agent (`step.rs`: not running, its last event
    /// executing before the issue), and a running agent that takes no
    /// step stays running, so no issue of the run starts it again. (Its
    /// completion would otherwise count as an arrive any issue could
    /// bring on its start barrier, and a `cp.async`'s completion, which
    /// only its agent makes, would never be taken alone.) Each agent is
    /// walked once per round of [`System::frozen`] (`agents`) and added
    /// once, times the issues on the way that may start it (a producer's
    /// walk through 32 loads issued each agent's walk 32 times).
    #[allow(clippy::too_many_arguments)]
    fn walk_from(
        &self,
        s: &State,
        u: usize,
        pc: u32,
        regs: Vec<Option<i64>>,
        may_complete: &[bool],
        held: &[Held],
        offsets: Vec<i64>,
        frozen: &[usize],
        agents: &mut HashMap<usize, Walk>,
    ) -> Option<Walk> {
        let nb = self.p.barriers.len();
        let info = &self.p.threads[u];
        let code = &self.p.codes[info.code.index()];
        let mut out = Walk::new(nb);
        // The agents the issues on the way may start, with how many
        // issues may start each, in the order first met.
        let mut started: Vec<(usize, u64)> = Vec::new();
        let mut stack = vec![(pc, regs, offsets)];
        let mut steps = 0usize;
        while let Some((pc, mut regs, mut offsets)) = stack.pop() {
            steps += 1;
            if steps > WALK_BUDGET {
                return None;
            }
            let Some(ins) = code.instrs.get(pc as usize) else {
                continue;
            };
            let value = |e: &CExpr, regs: &[Option<i64>]| known(e, info, regs);
            let next = pc + 1;
            match &ins.kind {
                InstrKind::Exit => continue,
                InstrKind::Jump(to) => stack.push((*to, regs, offsets)),
                InstrKind::Branch { cond, then, els } => match value(cond, &regs) {
                    Some(v) => stack.push((if v != 0 { *then } else { *els }, regs, offsets)),
                    None => {
                        stack.push((*els, regs.clone(), offsets.clone()));
                        stack.push((*then, regs, offsets));
                    }
                },
                InstrKind::Assign { dest, value: e } => {
                    regs[dest.index()] = value(e, &regs);
                    stack.push((next, regs, offsets));
                }
                InstrKind::Load { dest, .. }
                | InstrKind::Rmw { dest, .. }
                | InstrKind::Cas { dest, .. }
                | InstrKind::StreamQuery { dest, .. } => {
                    if let Some(d) = dest {
                        regs[d.index()] = None;
                    }
                    stack.push((next, regs, offsets));
                }
                InstrKind::Barrier { op, sel, result } => {
                    if let Some(
                        BarrierResult::Token(r)
                        | BarrierResult::IsFirst(r)
                        | BarrierResult::Reduce(r)
                        | BarrierResult::Poll(r),
                    ) = result
                    {
                        regs[r.index()] = None;
                    }
                    // A held barrier: each arrive moves the walker on a
                    // phase; a wait for a phase that needs the frozen
                    // threads' arrives blocks the walk (a thread-counted
                    // one's, while it is assumed stuck).
                    let bar = self.resolve(s, u, *sel);
                    if let Some(i) = bar.and_then(|c| held.iter().position(|h| h.bar == c)) {
                        let h = &held[i];
                        match op {
                            BarrierOp::Arrive(_) => offsets[i] += 1,
                            BarrierOp::Wait(_) if offsets[i] >= h.free && !(h.counted && may_complete[h.bar]) => {
                                continue
                            }
                            _ => {}
                        }
                    }
                    if let Some(c) = bar.filter(|&c| self.an.thread_counted[c].is_some()) {
                        if let BarrierOp::Arrive(_) = op {
                            out.arrives[c] = out.arrives[c].saturating_add(1);
                        }
                    }
                    let c = bar.filter(|&c| self.an.phase_counted[c]);
                    if let Some(c) = c {
                        match op {
                            BarrierOp::Init(_) => out.init[c] = true,
                            BarrierOp::Arrive(a) => {
                                out.arrives[c] = out.arrives[c].saturating_add(1);
                                out.tx[c] |= a.tx.is_some();
                            }
                            BarrierOp::ExpectTx(_) | BarrierOp::CompleteTx(_) => out.tx[c] = true,
                            BarrierOp::Wait(w) => {
                                let parity = w.parity.as_ref().and_then(|e| value(e, &regs)).map(|v| v & 1);
                                if !may_complete[c] {
                                    let bar = &s.bars[c];
                                    let cur = Self::current_phase(s, c).saturating_sub(bar.epoch_start) as i64 & 1;
                                    if parity == Some(cur) {
                                        // Waits for the current phase,
                                        // which stays open: blocked here.
                                        continue;
                                    }
                                    out.passing_wait[c] = true;
                                }
                            }
                            _ => {}
                        }
                    }
                    stack.push((next, regs, offsets));
                }
                InstrKind::CopyIssue { site, .. } => {
                    for &(a, _) in self.p.copy_agents(ThreadId(u as u32), *site) {
                        if frozen.contains(&a.index()) && s.threads[a.index()].status == Status::Running {
                            continue;
                        }
                        match started.iter_mut().find(|(x, _)| *x == a.index()) {
                            Some((_, n)) => *n += 1,
                            None => started.push((a.index(), 1)),
                        }
                    }
                    stack.push((next, regs, offsets));
                }
                _ => stack.push((next, regs, offsets)),
            }
        }
        for (a, times) in started {
            if !agents.contains_key(&a) {
                let unknown = vec![None; s.threads[a].regs.len()];
                let offsets = Self::held_offsets(a, held);
                let w = self.walk_from(s, a, 0, unknown, may_complete, held, offsets, frozen, agents)?;
                agents.insert(a, w);
            }
            out.add(&agents[&a], times);
        }
        Some(out)
    }
}

/// The value of `e` for a thread whose registers are `regs` (`None`:
/// unknown), if every leaf is known: memory is not.
fn known(e: &CExpr, info: &ThreadInfo, regs: &[Option<i64>]) -> Option<i64> {
    fn leaves_known(e: &CExpr, regs: &[Option<i64>]) -> bool {
        match e {
            CExpr::Int(_) | CExpr::Builtin(_) => true,
            CExpr::Reg(r) => regs[r.index()].is_some(),
            CExpr::Unary(_, x) => leaves_known(x, regs),
            CExpr::Binary(_, a, b) => leaves_known(a, regs) && leaves_known(b, regs),
            CExpr::Loc(_) | CExpr::ThreadReg(..) | CExpr::LocInst(_) => false,
        }
    }
    leaves_known(e, regs).then(|| {
        eval_with(e, &|leaf| match leaf {
            CExpr::Reg(r) => regs[r.index()].unwrap_or(0),
            CExpr::Builtin(b) => bc_graph::classes::builtin_value(info, *b),
            _ => 0,
        })
    })
}
