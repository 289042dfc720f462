//! Transitions: what one choice does to a state (`step`, and the local
//! steps after it), calling the rules of `rules.rs` where the operations
//! they judge happen. Which choices a state offers is `choices.rs`. They
//! are the [`System`]'s, taking the stepping worker's [`Worker`] context
//! (the findings they raise, its thread renaming, its step mode).

use crate::choices::WaitPlan;
use crate::eval::eval;
use crate::rules::ExpectedCount;
use crate::state::{HEvent, HKind, JoinMask, Members, Phase, State, Status, AT_END};
use crate::system::System;
use crate::worker::Worker;
use crate::{Choice, Step};
use bc_graph::bits::Bits;
use bc_graph::*;
use bc_models::Rule;

/// Local steps one thread takes in a row, within one transition, before the
/// search stores the state it reached and goes on from there in a later
/// step of the thread (a *local continuation*). The loop counter is part of
/// that state, so a loop that runs forever without a visible operation
/// repeats a state (a cycle, judged by the liveness analysis), and a long
/// finite loop just takes several transitions: the bound is never a verdict.
pub(crate) const MAX_LOCAL_STEPS: u32 = 100_000;

/// A phase token as a register value: the phase number and the barrier.
pub fn encode_token(barrier: usize, phase: u32) -> i64 {
    ((phase as i64) << 20) | (barrier as i64 + 1)
}

/// The barrier and phase a register value names, when it has the shape of a
/// token: any integer is accepted (tokens travel through registers and
/// memory and can be changed by arithmetic), and only a value that
/// [`encode_token`] gives back exactly decodes. The barrier index is not
/// checked against the program: callers must (see [`System::wait_plan`]).
pub fn decode_token(v: i64) -> Option<(usize, u32)> {
    let b = (v & 0xfffff) - 1;
    if v <= 0 || b < 0 {
        return None;
    }
    let phase = u32::try_from(v >> 20).ok()?;
    (encode_token(b as usize, phase) == v).then_some((b as usize, phase))
}

impl System<'_> {
    /// The thread a step names: empty while searching quietly (witnesses
    /// replay the step and name it then).
    fn step_thread(&self, t: usize, w: &Worker) -> String {
        if w.quiet {
            String::new()
        } else {
            self.thread_name(&w.ident, t).to_string()
        }
    }

    /// Runs thread `t`'s local instructions (assignments, branches, jumps,
    /// exit) until its next visible operation, or for [`MAX_LOCAL_STEPS`]
    /// steps: then the thread stops at a local instruction, and its next
    /// step (a choice like any other) continues the run.
    pub(crate) fn run_local(&self, s: &mut State, t: usize, w: &mut Worker) {
        let tid = ThreadId(t as u32);
        let mut n = 0;
        loop {
            let th = &s.threads[t];
            if th.status != Status::Running {
                return;
            }
            let Some(ins) = self.p.instr(tid, th.pc) else {
                return self.finish_or_hold(s, t, w);
            };
            n += 1;
            if n > MAX_LOCAL_STEPS && ins.kind.is_local() {
                return;
            }
            match &ins.kind {
                InstrKind::Exit => return self.finish_or_hold(s, t, w),
                InstrKind::Assign { dest, value } => {
                    let v = eval(self.p, s, t, value);
                    s.threads[t].regs[dest.index()] = v;
                    s.threads[t].pc += 1;
                }
                InstrKind::Branch { cond, then, els } => {
                    let c = eval(self.p, s, t, cond);
                    s.threads[t].pc = if c != 0 { *then } else { *els };
                }
                InstrKind::Jump(to) => s.threads[t].pc = *to,
                // No effect under the ISA's reading (`InstrKind::Fence`);
                // an event where some barrier orders memory only through
                // fences. A fence right after a fence adds nothing but
                // scope (and a loop of fences must repeat its state).
                InstrKind::Fence(scope) => {
                    if self.p.fence_events && *scope != FenceScope::ProxyAsync {
                        let pc = s.threads[t].pc;
                        match s.hist[t].last_mut() {
                            Some(HEvent {
                                kind: HKind::Fence(last),
                                ..
                            }) => *last = (*last).max(*scope),
                            _ => s.hist[t].push(HEvent {
                                pc,
                                kind: HKind::Fence(*scope),
                                target: Target::None,
                            }),
                        }
                    }
                    s.threads[t].pc += 1
                }
                // Orders nothing and waits for nothing (`InstrKind::CoalescedSync`);
                // an async-group marker: its expansion follows.
                InstrKind::CoalescedSync | InstrKind::AsyncGroup { .. } => s.threads[t].pc += 1,
                _ => return,
            }
        }
    }

    /// Thread `t` ends ([`System::finish`]), unless fusion is trying a
    /// wait (`Worker::hold_end`): then it stops before its end, and fusion
    /// takes the wait back (a fused wait never ends its thread).
    fn finish_or_hold(&self, s: &mut State, t: usize, w: &mut Worker) {
        if w.hold_end {
            w.held_end = true;
            return;
        }
        self.finish(s, t, w);
    }

    /// Thread `t` ends: it drops every barrier it holds a join on whose
    /// model data says so (the workgroup barrier drop at wave end).
    fn finish(&self, s: &mut State, t: usize, w: &mut Worker) {
        s.threads[t].status = Status::Done;
        let mut held: Vec<u32> = s.threads[t].joined.clone();
        held.retain(|&b| self.p.barriers[b as usize].dropped_at_end_by(ThreadId(t as u32)));
        for b in held {
            let b = b as usize;
            let po = s.hist[t].len() as u32;
            s.threads[t].joined.retain(|&x| x != b as u32);
            s.hist[t].push(HEvent {
                pc: AT_END,
                kind: HKind::Drop,
                target: Target::Barrier(BarrierId(b as u32)),
            });
            self.modify(s, t, b, po, Mod::Drop { at_end: true }, w);
        }
        // The last thread of a named kernel ends it: the next kernel of
        // its stream starts.
        if let Some(k) = self.p.threads[t].kernel {
            let done = self.p.kernels[k as usize]
                .threads
                .iter()
                .all(|u| s.threads[u.index()].status == Status::Done);
            if done {
                if let Some(q) = s.streams.iter_mut().find(|(_, q)| q.first() == Some(&k)) {
                    q.1.remove(0);
                    if let Some(&next) = q.1.first() {
                        self.start_kernel(s, next, w);
                    }
                }
            }
        }
    }

    /// Kernel `k` starts: its threads run their first local steps.
    fn start_kernel(&self, s: &mut State, k: u32, w: &mut Worker) {
        let threads = self.p.kernels[k as usize].threads.clone();
        for &t in &threads {
            s.threads[t.index()].status = Status::Running;
        }
        for t in threads {
            self.run_local(s, t.index(), w);
        }
    }

    /// Performs one visible operation and the local steps after it.
    pub(crate) fn step(&self, s: &mut State, c: Choice, w: &mut Worker) -> Step {
        let t = c.thread as usize;
        let tid = ThreadId(c.thread);
        let ins = self
            .p
            .instr(tid, s.threads[t].pc)
            .expect("choices point at instructions");
        let (span, text) = if w.quiet {
            (bc_syntax::Span::default(), String::new())
        } else {
            self.declared_site(t, s.threads[t].pc, &w.ident)
        };
        let pc = s.threads[t].pc;
        if ins.kind.is_local() {
            // A local continuation: the thread's previous run of local
            // steps reached the bound; it runs on from here.
            s.threads[t].started = true;
            self.run_local(s, t, w);
            return Step {
                thread: self.step_thread(t, w),
                span,
                text,
                effect: format!("runs on: {MAX_LOCAL_STEPS} local steps without a visible operation"),
            };
        }
        if let InstrKind::Await(cond) = &ins.kind {
            if eval(self.p, s, t, cond) == 0 {
                // The first spin of a thread that has not started.
                s.threads[t].started = true;
                return Step {
                    thread: self.step_thread(t, w),
                    span,
                    text,
                    effect: "spins: the condition does not hold".into(),
                };
            }
        }
        let info = &self.p.threads[t];
        let effect = match ins.kind.clone() {
            InstrKind::Barrier { op, sel, result } => self.barrier_step(s, t, pc, op, sel, result, c.phase, w),
            InstrKind::CopyIssue { site, bytes, hold, age } => self.copy_issue(s, t, pc, site, &bytes, hold, age, w),
            InstrKind::Store { decl, value } => {
                let v = eval(self.p, s, t, &value);
                let l = System::loc(info, decl).index();
                s.mem[l] = v;
                format!("{} = {v}", self.p.locs[l].name)
            }
            InstrKind::Load { decl, dest } => {
                let l = System::loc(info, decl).index();
                let v = s.mem[l];
                self.set(s, t, dest, v);
                format!("reads {} = {v}", self.p.locs[l].name)
            }
            InstrKind::Rmw { rmw, decl, value, dest } => {
                let v = eval(self.p, s, t, &value);
                let l = System::loc(info, decl).index();
                let old = s.mem[l];
                s.mem[l] = match rmw {
                    Rmw::Exch => v,
                    Rmw::FetchAdd => old.wrapping_add(v),
                };
                self.set(s, t, dest, old);
                format!("{}: {old} -> {}", self.p.locs[l].name, s.mem[l])
            }
            InstrKind::Cas {
                decl,
                expected,
                new,
                dest,
            } => {
                let e = eval(self.p, s, t, &expected);
                let n = eval(self.p, s, t, &new);
                let l = System::loc(info, decl).index();
                let old = s.mem[l];
                if old == e {
                    s.mem[l] = n;
                }
                self.set(s, t, dest, old);
                format!("{}: {old} -> {}", self.p.locs[l].name, s.mem[l])
            }
            InstrKind::Await(_) => "condition holds".into(),
            InstrKind::Launch { kernel, stream } => {
                let k = kernel as usize;
                let name = self.p.kernels[k].name.clone();
                if s.launched[k] {
                    format!("{name} was launched already: no effect")
                } else {
                    s.launched[k] = true;
                    let id = eval(self.p, s, t, &stream);
                    let pos = s.streams.partition_point(|(x, _)| *x < id);
                    if s.streams.get(pos).is_none_or(|(x, _)| *x != id) {
                        s.streams.insert(pos, (id, Vec::new()));
                    }
                    s.streams[pos].1.push(kernel);
                    if s.streams[pos].1.len() == 1 {
                        self.start_kernel(s, kernel, w);
                        format!("{name} starts in stream {id}")
                    } else {
                        format!("{name} queued in stream {id} behind earlier kernels")
                    }
                }
            }
            InstrKind::DeviceSync => "the device is idle".into(),
            InstrKind::StreamQuery { stream, dest } => {
                let id = eval(self.p, s, t, &stream);
                let idle = s
                    .streams
                    .iter()
                    .find(|(x, _)| *x == id)
                    .is_none_or(|(_, q)| q.is_empty());
                self.set(s, t, dest, idle as i64);
                format!("stream {id} {}", if idle { "is idle" } else { "is busy" })
            }
            InstrKind::Read { decl } | InstrKind::Write { decl } => {
                let l = System::loc(info, decl);
                let kind = if matches!(ins.kind, InstrKind::Read { .. }) {
                    HKind::Read
                } else {
                    HKind::Write
                };
                s.hist[t].push(HEvent {
                    pc,
                    kind,
                    target: Target::Loc(l),
                });
                String::new()
            }
            InstrKind::Assign { .. }
            | InstrKind::Branch { .. }
            | InstrKind::Jump(_)
            | InstrKind::Fence(_)
            | InstrKind::CoalescedSync
            | InstrKind::AsyncGroup { .. }
            | InstrKind::Exit => {
                unreachable!("local instructions never wait for a choice")
            }
        };
        s.threads[t].pc = pc + 1;
        s.threads[t].started = true;
        self.run_local(s, t, w);
        Step {
            thread: self.step_thread(t, w),
            span,
            text,
            effect,
        }
    }

    /// Thread `t` issues copy `site` ([`bc_graph::CopyPool`]): the first of
    /// its agents for the site that is free starts, after `t` arrives on
    /// the agent's start barrier (so everything before the issue executes
    /// before the copy). An agent is free when it is not running, all it
    /// did executes before `t`'s latest event (then what the agent did
    /// before is ordered before the new copy anyway), and, for a `cp.async`
    /// agent, no running arrive agent of `t` still has to wait for its
    /// completion (its parity wait would otherwise see the next copy's).
    /// With none free the search halts (`copy-limit`). A `cp.async` issue
    /// marks the agent's copy as not committed (its age register); a
    /// `cp.async.mbarrier.arrive` issue flags every `cp.async` agent of
    /// `t` that ever started, for the arrive agent to wait for.
    #[allow(clippy::too_many_arguments)]
    fn copy_issue(
        &self,
        s: &mut State,
        t: usize,
        pc: u32,
        site: u32,
        bytes: &CExpr,
        hold: Option<u32>,
        age: Option<RegId>,
        w: &mut Worker,
    ) -> String {
        let n = eval(self.p, s, t, bytes);
        let me = ThreadId(w.ident[t]);
        let agents = self.p.copy_agents(me, site);
        let plain = self.p.copy_sites[site as usize].kind == bc_graph::CopySite::Plain;
        // The agents of this site some running arrive agent of `t` waits for.
        let mut awaited = vec![false; agents.len()];
        if plain {
            for (i, c) in self.p.copy_sites.iter().enumerate() {
                if !matches!(c.kind, bc_graph::CopySite::Arrive { .. }) {
                    continue;
                }
                let flags = self.p.copy_flags(i as u32);
                for &(arriver, _) in self.p.copy_agents(me, i as u32) {
                    let a = &s.threads[arriver.index()];
                    if a.status != Status::Running {
                        continue;
                    }
                    for &(fs, k, r) in &flags {
                        if fs == site && a.regs[r.index()] != 0 {
                            awaited[k] = true;
                        }
                    }
                }
            }
        }
        let mut eb = None;
        let free = agents.iter().enumerate().position(|(k, &(a, _))| {
            let a = a.index();
            if s.threads[a].status == Status::Running || awaited[k] {
                return false;
            }
            let Some(last) = s.hist[a].len().checked_sub(1) else {
                return true;
            };
            let Some(mine) = s.hist[t].len().checked_sub(1) else {
                return false;
            };
            eb.get_or_insert_with(|| crate::rules::ExecutesBefore::of(s))
                .eb((a as u32, last as u32), (t as u32, mine as u32))
        });
        let Some(k) = free else {
            w.halt = Some(crate::Stop::CopyLimit);
            return format!(
                "every agent of this copy site is still busy ({} in flight): the search stops",
                agents.len()
            );
        };
        let (a, start) = agents[k];
        let a = a.index();
        // `memcpy_async`, `cp.async.mbarrier.arrive`: hold the barrier's
        // current phase for the copy or the arrive.
        let held = match hold.and_then(|d| self.resolve(s, t, BarrierSel::Decl(d))) {
            Some(b) => format!(
                "{}; ",
                self.barrier_on(s, t, pc, b, BarrierOp::ExpectTx(CExpr::Int(1)), None, None, w)
            ),
            None => String::new(),
        };
        let arrive = BarrierOp::Arrive(bc_graph::ArriveSpec::default());
        let effect = held + &self.barrier_on(s, t, pc, start.index(), arrive, None, None, w);
        if let Some(r) = age {
            s.threads[t].regs[r.index() + k] = 1;
        }
        let flags = self.p.copy_flags(site);
        for (fs, j, r) in flags {
            let Some(&(copy, _)) = self.p.copy_agents(me, fs).get(j) else {
                continue;
            };
            let started = s.threads[copy.index()].status != Status::NotLaunched;
            s.threads[a].regs[r.index()] = started as i64;
        }
        let agent = &mut s.threads[a];
        agent.status = Status::Running;
        agent.pc = 0;
        agent.regs[bc_graph::COPY_BYTES_REG.index()] = n;
        self.run_copy_start(s, a, w);
        let what = match &self.p.copy_sites[site as usize].kind {
            bc_graph::CopySite::Bulk => format!("starts the copy of {n} bytes"),
            bc_graph::CopySite::Plain => "starts the copy".to_string(),
            bc_graph::CopySite::Arrive { .. } => "starts the arrive after the copies issued before".to_string(),
        };
        format!("{} {what} ({effect})", self.thread_name(&w.ident, a))
    }

    /// Agent `a`, just started, takes its first steps in the issue's
    /// transition: its wait for the issue's phase, and the read of the
    /// source and the write of the destination that follow it. Where they
    /// fall among other threads' steps changes nothing of the execution:
    /// the wait can only take the issue's phase (the start barrier moves
    /// on only at the agent's own completion or at the next issue, which
    /// waits for the agent to be free), and plain accesses are not in any
    /// barrier's modification order and give no values, so the race rule
    /// sees the same executes-before either way. What remains a step of
    /// its own is what orders the copy with others: its completion, and an
    /// arrive agent's waits for the copies it tracks. (Interleaving these
    /// steps took every copy's four steps through every order, 400,000
    /// states and more for two threads with three copies each.)
    fn run_copy_start(&self, s: &mut State, a: usize, w: &mut Worker) {
        let tid = ThreadId(a as u32);
        loop {
            let th = &s.threads[a];
            if th.status != Status::Running {
                return;
            }
            let Some(ins) = self.p.instr(tid, th.pc) else { return };
            let eager = th.pc == 0 || matches!(ins.kind, InstrKind::Read { .. } | InstrKind::Write { .. });
            if !eager {
                return;
            }
            let Some(c) = self.choices(s, &w.ident).into_iter().find(|c| c.thread as usize == a) else {
                return;
            };
            self.step(s, c, w);
        }
    }

    /// One barrier operation of thread `t`; returns the step's effect text.
    #[allow(clippy::too_many_arguments)]
    fn barrier_step(
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
    fn barrier_on(
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
                // (compaction) carries this init's count.
                s.bars[b].after_completion = k.max(0);
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
                    .map_or(1, |n| eval(self.p, s, t, n).clamp(0, i64::from(u32::MAX)) as u32);
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
                s.hist[t].push(HEvent {
                    pc,
                    kind: HKind::Arrive(set, count, arrivals),
                    target,
                });
                let site = (self.p.threads[t].code.0, pc);
                let arrive = Mod::Arrive {
                    count,
                    pred,
                    site,
                    arrivals,
                };
                let (effect, completed) = self.modify(s, t, b, po, arrive, w);
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
    fn wait_step(
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
                format!("phase {tp} was taken already by an earlier wait of this thread: returns at once")
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
                let (effect, ph) = self.bind(s, t, b, i, w);
                let took = (tp.is_none() && self.an.mixed_waits[b]).then_some(ph.number);
                if let (Some(BarrierResult::Reduce(r)), Some(red)) = (result, spec.reduce) {
                    s.threads[t].regs[r.index()] = match red {
                        bc_models::Reduce::Popc => ph.preds,
                        bc_models::Reduce::And => (ph.preds == ph.arrivals) as i64,
                        bc_models::Reduce::Or => (ph.preds > 0) as i64,
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
                self.collect(s, b);
                effect
            }
            WaitPlan::Parity(i, parity) => {
                let (effect, members, took) = match i {
                        Some(i) => {
                            let (effect, ph) = self.bind(s, t, b, i, w);
                            let took = self.an.mixed_waits[b].then_some(ph.number);
                            (effect, ph.members, took)
                        }
                        None => (
                            "no phase to take (the one before a fresh barrier's first, or one it waited on already): no participants".to_string(),
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
                self.collect(s, b);
                effect
            }
            WaitPlan::Blocked => unreachable!("a blocked wait is never chosen"),
        }
    }

    /// participates-in, recorded: thread `t`'s wait completes on completed
    /// phase `i` of barrier `b` (one [`System::participates_in`] offered),
    /// whose members become its participants.
    fn bind(&self, s: &mut State, t: usize, b: usize, i: u32, w: &mut Worker) -> (String, Phase) {
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
        let who: Vec<String> = ph
            .members
            .iter()
            .map(|&(u, q)| self.label_of(s, u, q, &w.ident))
            .collect();
        let effect = format!(
            "completes on phase {} of {} (participants: {})",
            ph.number,
            self.bname(b),
            who.join(", ")
        );
        (effect, ph)
    }

    /// A join of thread `t` on barrier `b`: later operations of `t` are
    /// executes-after it; nothing else is yet.
    fn join(&self, s: &mut State, t: usize, b: usize) {
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
        th.jmask.set(bit);
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
    fn modify(&self, s: &mut State, t: usize, b: usize, po: u32, kind: Mod, w: &mut Worker) -> (String, bool) {
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
                site,
                arrivals,
            } => {
                bar.arrived += i64::from(arrivals);
                open.arrivals += i64::from(arrivals);
                open.preds += pred.unwrap_or(false) as i64;
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

/// A modification operation's kind and extras.
pub(crate) enum Mod {
    Arrive {
        count: Option<ArriveCount>,
        pred: Option<bool>,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Any integer decodes without a panic; only what `encode_token` gives
    /// decodes to a token.
    #[test]
    fn decode_token_takes_any_integer() {
        for v in [i64::MIN, i64::MIN + 1, -1, 0, 1 << 20, i64::MAX, 0xfffff, (1 << 52) | 1] {
            if let Some((b, p)) = decode_token(v) {
                assert_eq!(encode_token(b, p), v);
            }
        }
        assert_eq!(decode_token(0), None);
        assert_eq!(decode_token(-1), None);
        assert_eq!(decode_token(i64::MIN), None);
        assert_eq!(decode_token(1 << 20), None);
        // A phase number above u32::MAX is no token (it used to truncate).
        assert_eq!(decode_token((1 << 52) | 1), None);
        for (b, p) in [(0, 0), (3, 7), (0xffffe, u32::MAX)] {
            assert_eq!(decode_token(encode_token(b, p)), Some((b, p)));
        }
    }
}
