//! Transitions: which choices a state offers and what one choice does.

use crate::eval::eval;
use crate::state::{HEvent, HKind, Phase, State, Status, AT_END};
use crate::{Choice, Explorer, Step};
use bc_graph::bits::Bits;
use bc_graph::*;
use bc_models::Rule;
use bc_syntax::{FindingKind, UbKind};

/// Local steps one thread may take in a row before it counts as looping
/// forever without a visible operation.
const MAX_LOCAL_STEPS: u32 = 100_000;

/// A phase token as a register value: the phase number and the barrier.
pub fn encode_token(barrier: usize, phase: u32) -> i64 {
    ((phase as i64) << 20) | (barrier as i64 + 1)
}

pub fn decode_token(v: i64) -> Option<(usize, u32)> {
    let b = (v & 0xfffff) - 1;
    if v <= 0 || b < 0 {
        return None;
    }
    Some((b as usize, (v >> 20) as u32))
}

impl Explorer<'_> {
    /// Records an operational finding, unless the model data disables the
    /// rule behind it.
    fn ub(&mut self, kind: UbKind, msg: String) {
        let rule = match kind {
            UbKind::UninitializedBarrier => Rule::FirstBmoInit,
            UbKind::DropWithoutJoin => Rule::DropNeedsJoin,
            UbKind::NegativeExpectedCount => Rule::DropNotNegative,
            UbKind::ExpectedCountTooSmall => Rule::ExpectedCountUpdate,
            UbKind::WaitWithoutJoin => Rule::WaitNeedsJoin,
            UbKind::PrivilegedBarrier => Rule::PrivilegedBarrier,
            _ => return self.pending.push((FindingKind::Ub(kind), msg, false)),
        };
        if self.p.model.rules.has(rule) {
            self.pending.push((FindingKind::Ub(kind), msg, false));
        }
    }

    fn tname(&self, t: usize) -> &str {
        &self.p.threads[t].name
    }

    fn bname(&self, b: usize) -> &str {
        &self.p.barriers[b].name
    }

    /// Runs thread `t`'s local instructions (assignments, branches, jumps,
    /// exit) until its next visible operation.
    pub(crate) fn run_local(&mut self, s: &mut State, t: usize) {
        let tid = ThreadId(t as u32);
        let mut n = 0;
        loop {
            let th = &s.threads[t];
            if th.status != Status::Running {
                return;
            }
            let Some(ins) = self.p.instr(tid, th.pc) else {
                return self.finish(s, t);
            };
            n += 1;
            if n > MAX_LOCAL_STEPS {
                s.threads[t].status = Status::Diverged;
                return;
            }
            match &ins.kind {
                InstrKind::Exit => return self.finish(s, t),
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
                _ => return,
            }
        }
    }

    /// Thread `t` ends: it drops every barrier it holds a join on whose
    /// model data says so (the workgroup barrier drop at wave end).
    fn finish(&mut self, s: &mut State, t: usize) {
        s.threads[t].status = Status::Done;
        let mut held: Vec<u32> = s.threads[t].joined.clone();
        held.retain(|&b| self.p.barriers[b as usize].props.drop_at_end);
        for b in held {
            let b = b as usize;
            let po = s.hist[t].len() as u32;
            s.threads[t].joined.retain(|&x| x != b as u32);
            s.hist[t].push(HEvent {
                pc: AT_END,
                kind: HKind::Drop,
                target: Target::Barrier(BarrierId(b as u32)),
            });
            self.modify(s, t, b, po, HKind::Drop);
        }
    }

    /// The barrier instance a barrier instruction acts on for thread `t`, if any.
    pub(crate) fn resolve(&self, s: &State, t: usize, sel: BarrierSel) -> Option<usize> {
        let info = &self.p.threads[t];
        let joined_in = |group: u32| {
            self.p.groups[group as usize]
                .iter()
                .map(|&d| info.barriers[d as usize].0)
                .find(|b| s.threads[t].joined.contains(b))
                .map(|b| b as usize)
        };
        match sel {
            BarrierSel::Decl(d) => Some(info.barriers[d as usize].index()),
            BarrierSel::Joined { group } => joined_in(group),
            BarrierSel::JoinedOr { group, decl } => joined_in(group).or(Some(info.barriers[decl as usize].index())),
        }
    }

    /// Completed phases of barrier `b` that thread `t`'s wait may complete
    /// on: its join executes before a member, it has not completed a wait
    /// on the phase already, and a token wait names it.
    fn eligible(&self, s: &State, t: usize, b: usize, token_phase: Option<u32>) -> Vec<u32> {
        let nb = self.p.barriers.len();
        s.bars[b]
            .done
            .iter()
            .enumerate()
            .filter(|(_, ph)| ph.mask.get(t * nb + b) && !ph.bound.get(t) && token_phase.is_none_or(|n| n == ph.number))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// What a wait of thread `t` waits for: `Err(())` when it has no
    /// joined-before join (it acts as a no-op), else the token phase.
    fn wait_target(&self, s: &State, t: usize, b: usize, token: Option<RegId>) -> Result<Option<u32>, ()> {
        if !s.threads[t].joined.contains(&(b as u32)) {
            return Err(());
        }
        Ok(match token {
            Some(r) => match decode_token(s.threads[t].regs[r.index()]) {
                Some((tb, phase)) if tb == b => Some(phase),
                _ => Some(u32::MAX),
            },
            None => None,
        })
    }

    pub(crate) fn choices(&self, s: &State) -> Vec<Choice> {
        let mut out = Vec::new();
        for t in 0..s.threads.len() {
            let th = &s.threads[t];
            if th.status != Status::Running {
                continue;
            }
            let Some(ins) = self.p.instr(ThreadId(t as u32), th.pc) else {
                continue;
            };
            match &ins.kind {
                InstrKind::Barrier {
                    op: BarrierOp::Wait(token),
                    sel,
                    ..
                } => {
                    let b = match self.resolve(s, t, *sel) {
                        Some(b) if !self.p.barriers[b].props.privileged && !self.p.barriers[b].props.noop => b,
                        _ => {
                            out.push(Choice {
                                thread: t as u32,
                                phase: None,
                            });
                            continue;
                        }
                    };
                    match self.wait_target(s, t, b, *token) {
                        Err(()) => out.push(Choice {
                            thread: t as u32,
                            phase: None,
                        }),
                        Ok(tp) => out.extend(self.eligible(s, t, b, tp).into_iter().map(|i| Choice {
                            thread: t as u32,
                            phase: Some(i),
                        })),
                    }
                }
                InstrKind::Await(cond) => {
                    if eval(self.p, s, t, cond) != 0 {
                        out.push(Choice {
                            thread: t as u32,
                            phase: None,
                        });
                    }
                }
                _ => out.push(Choice {
                    thread: t as u32,
                    phase: None,
                }),
            }
        }
        out
    }

    /// Performs one visible operation and the local steps after it.
    pub(crate) fn step(&mut self, s: &mut State, c: Choice) -> Step {
        let t = c.thread as usize;
        let tid = ThreadId(c.thread);
        let ins = self
            .p
            .instr(tid, s.threads[t].pc)
            .expect("choices point at instructions");
        let (span, text) = (ins.span, ins.text.clone());
        let pc = s.threads[t].pc;
        let info = &self.p.threads[t];
        let po = s.hist[t].len() as u32;
        let next_pc = pc + 1;
        let effect = match ins.kind.clone() {
            InstrKind::Barrier { op, sel, result } => 'bar: {
                let Some(b) = self.resolve(s, t, sel) else {
                    if matches!(op, BarrierOp::Drop) {
                        let before = self.pending.len();
                        self.ub(
                            UbKind::DropWithoutJoin,
                            format!("{} leaves with no joined barrier", self.tname(t)),
                        );
                        if let Some(p) = self.pending.get_mut(before) {
                            p.2 = true;
                        }
                    }
                    break 'bar "no joined barrier of its group: no effect".to_string();
                };
                let props = self.p.barriers[b].props;
                if props.privileged {
                    self.ub(
                        UbKind::PrivilegedBarrier,
                        format!("{} uses the privileged barrier {}", self.tname(t), self.bname(b)),
                    );
                    break 'bar format!("{} is privileged: no effect", self.bname(b));
                }
                if props.noop && !matches!(op, BarrierOp::Join) {
                    break 'bar format!("{}: no effect", self.bname(b));
                }
                let target = Target::Barrier(BarrierId(b as u32));
                match op {
                    BarrierOp::Init(k) => {
                        let k = eval(self.p, s, t, &k);
                        if k <= 0 {
                            self.ub(
                                UbKind::NegativeExpectedCount,
                                format!(
                                    "{} initializes {} with expected count {k}",
                                    self.tname(t),
                                    self.bname(b)
                                ),
                            );
                        }
                        let bar = &mut s.bars[b];
                        bar.init = true;
                        bar.expected = k.max(0);
                        bar.arrived = 0;
                        bar.pending_drop = 0;
                        bar.open = None;
                        s.bmo[b].push((c.thread, po));
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
                        if !s.threads[t].joined.contains(&(b as u32)) {
                            self.ub(
                                UbKind::DropWithoutJoin,
                                format!("{} drops {} with no joined-before join", self.tname(t), self.bname(b)),
                            );
                        }
                        s.threads[t].joined.retain(|&x| x != b as u32);
                        s.hist[t].push(HEvent {
                            pc,
                            kind: HKind::Drop,
                            target,
                        });
                        self.modify(s, t, b, po, HKind::Drop)
                    }
                    BarrierOp::Arrive(set) => {
                        let set = set.map(|k| eval(self.p, s, t, &k));
                        if let Some(k) = set {
                            let arrived = s.bars[b].arrived;
                            if k <= arrived {
                                self.ub(
                                    UbKind::ExpectedCountTooSmall,
                                    format!(
                                        "{} sets the expected count of {} to {k} with {arrived} arrive(s) counted",
                                        self.tname(t),
                                        self.bname(b)
                                    ),
                                );
                            }
                            if s.bars[b].init {
                                s.bars[b].expected = k;
                            }
                        }
                        let phase = s.bars[b].open.as_ref().map_or(s.bars[b].next_phase, |p| p.number);
                        match result {
                            Some(BarrierResult::Token(r)) => s.threads[t].regs[r.index()] = encode_token(b, phase),
                            Some(BarrierResult::IsFirst(r)) => {
                                s.threads[t].regs[r.index()] = (s.bars[b].arrived == 0) as i64
                            }
                            None => {}
                        }
                        s.hist[t].push(HEvent {
                            pc,
                            kind: HKind::Arrive(set),
                            target,
                        });
                        self.modify(s, t, b, po, HKind::Arrive(set))
                    }
                    BarrierOp::ArriveDrop => {
                        s.hist[t].push(HEvent {
                            pc,
                            kind: HKind::ArriveDrop,
                            target,
                        });
                        self.modify(s, t, b, po, HKind::ArriveDrop)
                    }
                    BarrierOp::Wait(token) => match (self.wait_target(s, t, b, token), c.phase) {
                        (Err(()), _) => {
                            self.ub(
                                UbKind::WaitWithoutJoin,
                                format!(
                                    "{} waits on {} with no joined-before join",
                                    self.tname(t),
                                    self.bname(b)
                                ),
                            );
                            s.hist[t].push(HEvent {
                                pc,
                                kind: HKind::Wait {
                                    participants: vec![],
                                    token_phase: None,
                                },
                                target,
                            });
                            "no joined-before join: the wait has no effect".into()
                        }
                        (Ok(tp), Some(i)) => {
                            let ph = &mut s.bars[b].done[i as usize];
                            ph.bound.set(t);
                            let (number, members, mask) = (ph.number, ph.members.clone(), ph.mask.clone());
                            s.threads[t].jmask.union_with(&mask);
                            let who: Vec<String> = members.iter().map(|&(u, q)| self.label_of(s, u, q)).collect();
                            s.hist[t].push(HEvent {
                                pc,
                                kind: HKind::Wait {
                                    participants: members,
                                    token_phase: tp,
                                },
                                target,
                            });
                            self.collect(s, b);
                            format!(
                                "completes on phase {number} of {} (participants: {})",
                                self.bname(b),
                                who.join(", ")
                            )
                        }
                        (Ok(_), None) => unreachable!("an enabled wait has a phase"),
                    },
                }
            }
            InstrKind::Store { decl, value } => {
                let v = eval(self.p, s, t, &value);
                let l = info.locs[decl as usize].index();
                s.mem[l] = v;
                format!("{} = {v}", self.p.locs[l].name)
            }
            InstrKind::Load { decl, dest } => {
                let l = info.locs[decl as usize].index();
                let v = s.mem[l];
                self.set(s, t, dest, v);
                format!("reads {} = {v}", self.p.locs[l].name)
            }
            InstrKind::Rmw { rmw, decl, value, dest } => {
                let v = eval(self.p, s, t, &value);
                let l = info.locs[decl as usize].index();
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
                let l = info.locs[decl as usize].index();
                let old = s.mem[l];
                if old == e {
                    s.mem[l] = n;
                }
                self.set(s, t, dest, old);
                format!("{}: {old} -> {}", self.p.locs[l].name, s.mem[l])
            }
            InstrKind::Await(_) => "condition holds".into(),
            InstrKind::Read { decl } | InstrKind::Write { decl } => {
                let l = info.locs[decl as usize];
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
            InstrKind::Assign { .. } | InstrKind::Branch { .. } | InstrKind::Jump(_) | InstrKind::Exit => {
                unreachable!("local instructions never wait for a choice")
            }
        };
        s.threads[t].pc = next_pc;
        self.run_local(s, t);
        Step {
            thread: self.p.threads[t].name.clone(),
            span,
            text,
            effect,
        }
    }

    fn set(&self, s: &mut State, t: usize, dest: Option<RegId>, v: i64) {
        if let Some(d) = dest {
            s.threads[t].regs[d.index()] = v;
        }
    }

    /// A join of thread `t` on barrier `b`: later operations of `t` are
    /// executes-after it; nothing else is yet.
    fn join(&mut self, s: &mut State, t: usize, b: usize) {
        let nb = self.p.barriers.len();
        let bit = t * nb + b;
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

    /// A modification operation (arrive, drop, arrive_drop) of thread `t`
    /// at program-order index `po`: joins the open phase and may complete it.
    fn modify(&mut self, s: &mut State, t: usize, b: usize, po: u32, kind: HKind) -> String {
        let nt = self.p.threads.len();
        let nb = self.p.barriers.len();
        if !s.bars[b].init {
            self.ub(
                UbKind::UninitializedBarrier,
                format!("{} operates on {} before any init", self.tname(t), self.bname(b)),
            );
        }
        let mask = s.threads[t].jmask.clone();
        let bar = &mut s.bars[b];
        if bar.open.is_none() {
            bar.open = Some(Phase {
                number: bar.next_phase,
                members: Vec::new(),
                mask: Bits::new(nt * nb),
                bound: Bits::new(nt),
            });
            bar.next_phase += 1;
        }
        let open = bar.open.as_mut().expect("just opened");
        open.members.push((t as u32, po));
        open.mask.union_with(&mask);
        let number = open.number;
        let mut negative = false;
        match kind {
            HKind::Arrive(_) => bar.arrived += 1,
            HKind::ArriveDrop => {
                bar.arrived += 1;
                bar.pending_drop += 1;
            }
            HKind::Drop => {
                if bar.init {
                    negative = bar.expected <= 0;
                    bar.expected = (bar.expected - 1).max(0);
                }
            }
            _ => unreachable!("modification operations only"),
        }
        s.bmo[b].push((t as u32, po));
        let bar = &mut s.bars[b];
        let effect = if bar.init && bar.expected == bar.arrived {
            let ph = bar.open.take().expect("open phase");
            bar.done.push(ph);
            bar.arrived = 0;
            bar.expected = (bar.expected - bar.pending_drop).max(0);
            bar.pending_drop = 0;
            format!("{}: completes phase {number}", self.p.barriers[b].name)
        } else if bar.init {
            format!(
                "{}: {} of {} arrived (phase {number})",
                self.p.barriers[b].name, bar.arrived, bar.expected
            )
        } else {
            format!("{}: uninitialized", self.p.barriers[b].name)
        };
        if negative {
            self.ub(
                UbKind::NegativeExpectedCount,
                format!(
                    "{} drops {} below an expected count of zero",
                    self.tname(t),
                    self.bname(b)
                ),
            );
        }
        self.collect(s, b);
        effect
    }

    /// Forgets completed phases of barrier `b` that no wait can complete on
    /// any more (every thread whose join executes before them has used them).
    fn collect(&self, s: &mut State, b: usize) {
        let nt = self.p.threads.len();
        let nb = self.p.barriers.len();
        s.bars[b]
            .done
            .retain(|ph| (0..nt).any(|u| ph.mask.get(u * nb + b) && !ph.bound.get(u)));
    }
}
