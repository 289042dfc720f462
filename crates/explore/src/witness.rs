//! Turning explorer history into an [`Execution`] for the rule checker, and
//! into the witness a finding carries. These answers depend on the state
//! alone, with threads named under the renaming passed in (`ident`: which
//! declared thread each thread index stands for) and, for a witness, the
//! path of steps that reached the state.

use crate::state::{HKind, State, AT_END, AT_LAUNCH, LAUNCH, START};
use crate::step::decode_token;
use crate::system::System;
use crate::{Step, Witness};
use bc_graph::*;
use std::collections::HashMap;

/// Event and barrier names for rule-checker messages and witnesses.
pub(crate) struct ExecNames {
    labels: Vec<String>,
    barriers: Vec<String>,
    /// Launch inits left out of the execution because no event of it is on
    /// their barrier (sorted by barrier): the witness still lists them in
    /// bmo, as the execution's state holds them.
    idle_launches: Vec<(usize, String)>,
}

impl bc_rules::Names for ExecNames {
    fn event(&self, e: EventId) -> String {
        self.labels[e.index()].clone()
    }
    fn barrier(&self, b: BarrierId) -> String {
        self.barriers[b.index()].clone()
    }
}

impl System<'_> {
    /// `T1#2 arrive B`: the thread, the event's place in its program order
    /// (1-based), the statement.
    pub(crate) fn label_of(&self, s: &State, t: u32, po: u32, ident: &[u32]) -> String {
        if t == LAUNCH {
            let b = &self.p.barriers[po as usize];
            return match s.bars[po as usize].base {
                Some(k) => format!("{}: earlier phases forgotten, expected count {k}", b.name),
                None => format!("launch: {} = {}", b.name, b.launch_count.unwrap_or(0)),
            };
        }
        let ev = &s.hist[t as usize][po as usize];
        let thread = self.thread_name(ident, t as usize);
        let implicit = |what: &str, when: &str| match ev.target {
            Target::Barrier(b) => format!(
                "{thread}#{} {what} {} ({when})",
                po + 1,
                self.p.barriers[b.index()].name
            ),
            Target::Loc(_) => format!("{thread}#{} {what} ({when})", po + 1),
        };
        match ev.pc {
            AT_LAUNCH => implicit("join", "at launch"),
            AT_END => implicit("drop", "at wave end"),
            pc => {
                let text = self.p.instr(ThreadId(t), pc).map_or("?", |i| i.text.as_str());
                format!("{thread}#{} {text}", po + 1)
            }
        }
    }

    /// The execution so far, with `stuck` threads blocked on their waits.
    pub(crate) fn execution(&self, s: &State, stuck: &[usize], ident: &[u32]) -> (Execution, ExecNames) {
        let (exec, names, _) = self.execution_ids(s, stuck, ident);
        (exec, names)
    }

    /// The execution, its names, and the id of each `(thread, po)` event.
    pub(crate) fn execution_ids(
        &self,
        s: &State,
        stuck: &[usize],
        ident: &[u32],
    ) -> (Execution, ExecNames, HashMap<(u32, u32), EventId>) {
        let p = self.p;
        let mut b = ExecutionBuilder::new(p.threads.len(), p.barriers.len());
        let mut labels = Vec::new();
        let mut ids: HashMap<(u32, u32), EventId> = HashMap::new();
        // The waits of the `stuck` threads, resolved first: their barriers
        // are operated on too.
        let stuck_waits: Vec<(usize, u32, EventKind, usize)> = stuck
            .iter()
            .filter_map(|&t| self.stuck_wait(s, t).map(|(pc, kind, bar)| (t, pc, kind, bar)))
            .collect();
        // The barrier instances some event of the execution operates on. A
        // launch init of any other instance is left out: a rule relates an
        // init only to events on its own barrier (its phases, bmo, waits),
        // and every thread's first event follows all launch events alike,
        // so it changes no verdict, while each one added an event to every
        // executes-before closure (quadratic in the declarations).
        let mut used = vec![false; p.barriers.len()];
        for ev in s.hist.iter().flatten() {
            if let Target::Barrier(x) = ev.target {
                used[x.index()] = true;
            }
        }
        for &(_, _, _, bar) in &stuck_waits {
            used[bar] = true;
        }
        let mut idle_launches = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            let facts = ThreadFacts {
                code: th.code.0,
                cooperative: th.cooperative,
            };
            b.thread(ThreadId(t as u32), facts);
        }
        for (i, bar) in p.barriers.iter().enumerate() {
            b.props(BarrierId(i as u32), bar.props);
            if let Some(w) = &bar.syncwarp {
                b.syncwarp(BarrierId(i as u32), w.clone());
            }
            // A launch init: at launch, or standing for forgotten phases.
            let launched = s.bmo[i].first() == Some(&(LAUNCH, i as u32));
            if !used[i] {
                if launched {
                    idle_launches.push((i, self.label_of(s, LAUNCH, i as u32, ident)));
                }
                continue;
            }
            if let Some(k) = s.bars[i].base.or(bar.launch_count).filter(|_| launched) {
                let id = b.event(
                    None,
                    0,
                    EventKind::Init { count: k },
                    Target::Barrier(BarrierId(i as u32)),
                );
                ids.insert((LAUNCH, i as u32), id);
                if s.bars[i].phase_base > 0 {
                    b.phase_base(BarrierId(i as u32), s.bars[i].phase_base);
                }
                labels.push(self.label_of(s, LAUNCH, i as u32, ident));
            }
        }
        let mut waits = Vec::new();
        for (t, evs) in s.hist.iter().enumerate() {
            for (po, ev) in evs.iter().enumerate() {
                let kind = match &ev.kind {
                    HKind::Init(k) => EventKind::Init { count: *k },
                    HKind::Join => EventKind::Join,
                    HKind::Drop => EventKind::Drop,
                    HKind::Arrive(k, c) => EventKind::Arrive {
                        set_count: *k,
                        count: *c,
                        object: matches!(
                            p.instr(ThreadId(t as u32), ev.pc).map(|i| &i.kind),
                            Some(InstrKind::Barrier {
                                op: BarrierOp::Arrive(spec),
                                ..
                            }) if spec.object
                        ),
                    },
                    HKind::ArriveDrop(positive) => EventKind::ArriveDrop { positive: *positive },
                    HKind::Wait {
                        token_phase, parity, ..
                    } => EventKind::Wait {
                        participants: vec![],
                        completed: true,
                        token_phase: *token_phase,
                        parity: *parity,
                    },
                    HKind::Tx(delta) => EventKind::Tx { delta: *delta },
                    HKind::Read => EventKind::Read,
                    HKind::Write => EventKind::Write,
                    HKind::Inval => EventKind::Inval,
                    HKind::NoEffect(op) => EventKind::NoEffect { op: *op },
                };
                let id = b.event(Some(ThreadId(t as u32)), ev.pc, kind, ev.target);
                ids.insert((t as u32, po as u32), id);
                labels.push(self.label_of(s, t as u32, po as u32, ident));
                if let HKind::Wait { participants, .. } = &ev.kind {
                    waits.push((id, participants.clone()));
                }
            }
        }
        for (t, pc, kind, bar) in stuck_waits {
            b.event(
                Some(ThreadId(t as u32)),
                pc,
                kind,
                Target::Barrier(BarrierId(bar as u32)),
            );
            let text = p.instr(ThreadId(t as u32), pc).map_or("?", |i| i.text.as_str());
            labels.push(format!(
                "{}#{} {}",
                self.thread_name(ident, t),
                s.hist[t].len() + 1,
                text
            ));
        }
        for (w, ps) in waits {
            let ps = ps.iter().filter_map(|k| ids.get(k).copied()).collect();
            b.set_participants(w, ps);
        }
        for order in &s.bmo {
            for k in order {
                if let Some(&id) = ids.get(k) {
                    b.bmo(id);
                }
            }
        }
        for &(x, y) in &p.mutually_exclusive {
            b.mutually_exclusive(x, y);
        }
        for (x, y) in &s.extra_sorted() {
            match (x.1 == START, ids.get(x), ids.get(y)) {
                (true, _, Some(&c)) => b.started_before(ThreadId(x.0), c),
                (false, Some(&a), Some(&c)) => b.extra_eb(a, c),
                _ => {}
            }
        }
        let names = ExecNames {
            labels,
            barriers: p.barriers.iter().map(|b| b.name.clone()).collect(),
            idle_launches,
        };
        (b.finish(), names, ids)
    }

    /// The wait thread `t` is stuck on in `s`: its pc, its event (not
    /// completed) and its barrier instance; `None` when it is not at a wait
    /// or the wait names no barrier.
    fn stuck_wait(&self, s: &State, t: usize) -> Option<(u32, EventKind, usize)> {
        let pc = s.threads[t].pc;
        let Some(InstrKind::Barrier {
            op: BarrierOp::Wait(spec),
            sel,
            ..
        }) = self.p.instr(ThreadId(t as u32), pc).map(|i| &i.kind)
        else {
            return None;
        };
        let bar = self.resolve(s, t, *sel)?;
        // A token that names no phase of this barrier (none, or another
        // barrier's) waits for a phase that never comes.
        let token_phase = spec.token.map(|r| {
            decode_token(s.threads[t].regs[r.index()])
                .filter(|&(tb, _)| tb == bar)
                .map_or(NO_TOKEN_PHASE, |(_, ph)| ph)
        });
        let parity = spec
            .parity
            .as_ref()
            .map(|p| (crate::eval::eval(self.p, s, t, p) & 1) as u8);
        let kind = EventKind::Wait {
            participants: vec![],
            completed: false,
            token_phase,
            parity,
        };
        Some((pc, kind, bar))
    }

    /// The witness of a finding at `s` (with `stuck` threads blocked on
    /// their waits, pointing at the `focus` events), reached by `path`.
    pub(crate) fn witness(
        &self,
        s: &State,
        stuck: &[usize],
        focus: &[EventId],
        ident: &[u32],
        path: &[Step],
    ) -> Witness {
        let (exec, names) = self.execution(s, stuck, ident);
        self.witness_with(&exec, &names, focus, path)
    }

    /// The witness of a finding in `exec`, reached by `path`.
    pub(crate) fn witness_with(
        &self,
        exec: &Execution,
        names: &ExecNames,
        focus: &[EventId],
        path: &[Step],
    ) -> Witness {
        let label = |e: EventId| names.labels[e.index()].clone();
        // Each barrier's bmo in barrier order; an idle barrier's holds only
        // its launch init, which the execution left out.
        let mut idle = names.idle_launches.iter().peekable();
        let mut bmo = Vec::new();
        for (b, o) in exec.bmo.iter().enumerate() {
            let name = || self.p.barriers[b].name.clone();
            if let Some((_, l)) = idle.next_if(|(i, _)| *i == b) {
                bmo.push((name(), vec![l.clone()]));
            } else if !o.is_empty() {
                bmo.push((name(), o.iter().map(|&e| label(e)).collect()));
            }
        }
        let mut participates_in = Vec::new();
        let mut stuck = Vec::new();
        let mut stuck_ids = Vec::new();
        for e in exec.ids() {
            if let EventKind::Wait {
                participants,
                completed,
                ..
            } = &exec.event(e).kind
            {
                if *completed {
                    participates_in.push((label(e), participants.iter().map(|&x| label(x)).collect()));
                } else {
                    stuck.push(label(e));
                    stuck_ids.push(e);
                }
            }
        }
        let span_of = |e: EventId| {
            let ev = exec.event(e);
            ev.thread.and_then(|t| self.p.instr(t, ev.pc)).map(|i| i.span)
        };
        let spans = if focus.is_empty() {
            stuck_ids.iter().filter_map(|&e| span_of(e)).collect()
        } else {
            focus.iter().filter_map(|&e| span_of(e)).collect()
        };
        Witness {
            steps: path.to_vec(),
            bmo,
            participates_in,
            stuck,
            focus: focus.iter().map(|&e| label(e)).collect(),
            cycle_start: None,
            spans,
        }
    }
}
