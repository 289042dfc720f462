//! Transitions: what one choice does to a state (`step`, and the local
//! steps after it), calling the rules of `rules.rs` where the operations
//! they judge happen. Which choices a state offers is `choices.rs`. They
//! are the [`System`]'s, taking the stepping worker's [`Worker`] context
//! (the findings they raise, its thread renaming, its step mode).

use crate::semantics::barrier_ops::Mod;
use crate::semantics::eval::eval;
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::answer::Step;
use crate::state::Choice;
use crate::state::{HEvent, HKind, State, Status, AT_END};
use bc_graph::*;

/// Local steps one thread takes in a row, within one transition, before the
/// search stores the state it reached and goes on from there in a later
/// step of the thread (a *local continuation*). The loop counter is part of
/// that state, so a loop that runs forever without a visible operation
/// repeats a state (a cycle, judged by the liveness analysis), and a long
/// finite loop just takes several transitions: the bound is never a verdict.
pub(crate) const MAX_LOCAL_STEPS: u32 = 100_000;

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
                // fences, and a proxy fence one where some copy runs in
                // the async proxy. A fence right after a fence of its kind
                // adds nothing but scope (and a loop of fences must repeat
                // its state).
                InstrKind::Fence(scope) => {
                    let proxy = scope.is_proxy();
                    if (self.p.fence_events && !proxy) || (self.p.proxy_events && proxy) {
                        let pc = s.threads[t].pc;
                        match s.hist[t].last_mut() {
                            Some(HEvent {
                                kind: HKind::Fence(last),
                                ..
                            }) if (last.is_proxy() == proxy) && (!proxy || *last == *scope) => {
                                *last = (*last).max(*scope)
                            }
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
        self.aligned_wait_rule(s, t, true, w);
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

    /// Performs choice `c`: its thread's visible operation and the local
    /// steps after it, then, when it leads its warp's arrival at an
    /// `.aligned` barrier ([`System::warp_followers`]), every other live
    /// lane's arrive in thread order, one witness step each.
    pub(crate) fn step_warp(&self, s: &mut State, c: Choice, w: &mut Worker) -> Vec<Step> {
        let followers = self.warp_followers(s, c);
        if followers.is_empty() {
            return vec![self.step(s, c, w)];
        }
        // A wait's phase, by its members: taking it may retire earlier
        // phases and move its index.
        let members = self.traced(s, c).1;
        let mut steps = vec![self.step(s, c, w)];
        w.following = true;
        for u in followers {
            let phase = members
                .as_ref()
                .and_then(|m| self.completed_phase_index(s, u as usize, m));
            steps.push(self.step(s, Choice { thread: u, phase }, w));
        }
        w.following = false;
        steps
    }

    /// The index, among the completed phases of the barrier thread `t`'s
    /// wait names, of the phase with these members, in any order (a
    /// replay's renaming may list them in another).
    pub(crate) fn completed_phase_index(&self, s: &State, t: usize, members: &[(u32, u32)]) -> Option<u32> {
        let Some(InstrKind::Barrier { sel, .. }) = self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind)
        else {
            return None;
        };
        let b = self.resolve(s, t, *sel)?;
        let mut want = members.to_vec();
        want.sort_unstable();
        let same = |have: &[(u32, u32)]| {
            have == members
                || (have.len() == want.len() && {
                    let mut have = have.to_vec();
                    have.sort_unstable();
                    have == want
                })
        };
        (s.bars[b].done.iter())
            .position(|ph| same(ph.members.as_slice()))
            .map(|i| i as u32)
    }

    /// Performs one visible operation and the local steps after it: one
    /// lane's, whatever its warp (callers take choices through
    /// [`System::step_warp`]).
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
                events: Vec::new(),
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
                    events: Vec::new(),
                };
            }
        }
        if matches!(&ins.kind, InstrKind::Barrier { op: BarrierOp::Arrive(a), .. } if !a.aligned) {
            self.warp_split_rule(s, t, w);
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
            events: Vec::new(),
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
            eb.get_or_insert_with(|| crate::analysis::history::ExecutesBefore::of(s))
                .eb((a as u32, last as u32), (t as u32, mine as u32))
        });
        let Some(k) = free else {
            w.halt = Some(crate::state::answer::Stop::CopyLimit);
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
            bc_graph::CopySite::Bulk | bc_graph::CopySite::BulkGroup => format!("starts the copy of {n} bytes"),
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
}
