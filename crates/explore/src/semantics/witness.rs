//! Turning explorer history into an [`Execution`] for the rule checker, and
//! into the witness a finding carries. These answers depend on the state
//! alone, with threads named under the renaming passed in (`ident`: which
//! declared thread each thread index stands for) and, for a witness, the
//! path of steps that reached the state.

use crate::semantics::System;
use crate::state::answer::{Step, Witness};
use crate::state::token::decode_token;
use crate::state::{Choice, HKind, State, AT_END, AT_LAUNCH, LAUNCH, START};
use bc_graph::*;

/// The event id of each `(thread, po)` history entry and `(LAUNCH, barrier)`
/// launch init of an execution built from a state: a thread's events are
/// numbered consecutively, so a lookup is an index, not a hash (compaction
/// looks up about T^2 keys on a phase of T threads).
#[derive(Default)]
pub(crate) struct EventIds {
    /// Per barrier instance, its launch init's id, if the execution has one.
    launch: Vec<Option<EventId>>,
    /// Per thread, the id of its first history entry and how many it has.
    threads: Vec<(u32, u32)>,
}

impl EventIds {
    /// The id of history entry `k` (`(t, po)` or `(LAUNCH, barrier)`), if
    /// the execution has it.
    pub(crate) fn get(&self, k: &(u32, u32)) -> Option<EventId> {
        if k.0 == LAUNCH {
            return self.launch.get(k.1 as usize).copied().flatten();
        }
        let &(first, len) = self.threads.get(k.0 as usize)?;
        (k.1 < len).then(|| EventId(first + k.1))
    }

    /// The id of thread `t`'s history entry `po`, which the execution has.
    pub(crate) fn at(&self, t: u32, po: u32) -> EventId {
        self.get(&(t, po)).expect("an entry of the execution's history")
    }

    /// Every key with its id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = ((u32, u32), EventId)> + '_ {
        let launch = (self.launch.iter().enumerate()).filter_map(|(b, id)| id.map(|id| ((LAUNCH, b as u32), id)));
        let threads = (self.threads.iter().enumerate())
            .flat_map(|(t, &(first, len))| (0..len).map(move |po| ((t as u32, po), EventId(first + po))));
        launch.chain(threads)
    }
}

/// Event and barrier names for rule-checker messages and witnesses. An
/// event's label is written only when asked for: every compaction builds
/// an execution of a thousand events and more for the rule checker, which
/// names one only in a finding (formatting them all took a tenth of a
/// pipeline's search).
pub(crate) struct ExecNames<'p> {
    p: &'p Program,
    /// Per thread of the execution, the name of the thread it stands for.
    threads: Vec<String>,
    labels: Vec<Label>,
    barriers: Vec<String>,
    /// Launch inits left out of the execution because no event of it is on
    /// their barrier (sorted by barrier): the witness still lists them in
    /// bmo, as the execution's state holds them.
    idle_launches: Vec<(usize, String)>,
}

/// What an event's label is made of ([`ExecNames`]).
enum Label {
    /// A launch event's, written out (one per barrier).
    Text(String),
    /// A thread event's: the thread's index in the state, the thread it
    /// stands for (its name), its place in program order, its pc and
    /// target.
    Event {
        t: u32,
        named: u32,
        po: u32,
        pc: u32,
        target: Target,
    },
}

impl ExecNames<'_> {
    /// `T1#2 arrive B`: the thread, the event's place in its program order
    /// (from 1) and the instruction's text; an implicit join or drop names
    /// its barrier and when it happened.
    pub(crate) fn label(&self, e: EventId) -> String {
        match &self.labels[e.index()] {
            Label::Text(s) => s.clone(),
            Label::Event {
                t,
                named,
                po,
                pc,
                target,
            } => event_label(self.p, *t, *named, *po, *pc, *target),
        }
    }
}

/// `T1#2 arrive B`: the thread (`named`, the one thread `t` of the state
/// stands for), the event's place in its program order (from 1) and the
/// statement; an implicit join or drop names its barrier and when it
/// happened.
fn event_label(p: &Program, t: u32, named: u32, po: u32, pc: u32, target: Target) -> String {
    let thread = &p.threads[named as usize].name;
    let implicit = |what: &str, when: &str| match target {
        Target::Barrier(b) => format!("{thread}#{} {what} {} ({when})", po + 1, p.barriers[b.index()].name),
        Target::Loc(_) | Target::None => format!("{thread}#{} {what} ({when})", po + 1),
    };
    match pc {
        AT_LAUNCH => implicit("join", "at launch"),
        AT_END => implicit("drop", &format!("at {}", p.model.end_word())),
        pc => {
            let text = p.instr(ThreadId(t), pc).map_or("?", |i| i.text.as_str());
            format!("{thread}#{} {text}", po + 1)
        }
    }
}

impl bc_rules::Names for ExecNames<'_> {
    fn event(&self, e: EventId) -> String {
        self.label(e)
    }
    fn barrier(&self, b: BarrierId) -> String {
        self.barriers[b.index()].clone()
    }
    fn thread(&self, t: ThreadId) -> String {
        self.threads
            .get(t.index())
            .cloned()
            .unwrap_or_else(|| format!("thread {}", t.0))
    }
}

impl<'p> System<'p> {
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
        event_label(self.p, t, ident[t as usize], po, ev.pc, ev.target)
    }

    /// Choice `c` at `s` as a witness replay traces it
    /// ([`crate::semantics::worker::Traced`]): with the members of the
    /// completed phase a wait chose.
    pub(crate) fn traced(&self, s: &State, c: Choice) -> crate::semantics::worker::Traced {
        let t = c.thread as usize;
        let members = c.phase.and_then(|i| {
            let Some(InstrKind::Barrier { sel, .. }) =
                self.p.instr(ThreadId(c.thread), s.threads[t].pc).map(|i| &i.kind)
            else {
                return None;
            };
            let b = self.resolve(s, t, *sel)?;
            s.bars[b].done.get(i as usize).map(|ph| ph.members.to_vec())
        });
        (c, members)
    }

    /// The execution so far, with `stuck` threads blocked on their waits.
    pub(crate) fn execution(&self, s: &State, stuck: &[usize], ident: &[u32]) -> (Execution, ExecNames<'p>) {
        let (exec, names, _) = self.execution_ids(s, stuck, ident);
        (exec, names)
    }

    /// The execution, its names, and the id of each `(thread, po)` event.
    pub(crate) fn execution_ids(
        &self,
        s: &State,
        stuck: &[usize],
        ident: &[u32],
    ) -> (Execution, ExecNames<'p>, EventIds) {
        let p = self.p;
        let mut b = ExecutionBuilder::new(p.threads.len(), p.barriers.len());
        let mut labels = Vec::new();
        let mut ids = EventIds {
            launch: vec![None; p.barriers.len()],
            threads: Vec::with_capacity(s.hist.len()),
        };
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
                warp: th.warp_id,
                block: th.block_id,
                cluster: th.cluster_id,
                agent: th.kind == bc_graph::ThreadKind::Copy,
                copies: p.copy_performer(ThreadId(t as u32))
                    && s.threads[t].regs.get(bc_graph::COPY_PENDING_REG.index()) == Some(&1),
                async_proxy: p.async_agent(ThreadId(t as u32)),
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
                ids.launch[i] = Some(id);
                if s.bars[i].phase_base > 0 {
                    b.phase_base(BarrierId(i as u32), s.bars[i].phase_base);
                }
                if s.bars[i].epoch_start < s.bars[i].phase_base && s.bars[i].base.is_some() {
                    b.epoch_base(BarrierId(i as u32), s.bars[i].epoch_start);
                }
                labels.push(Label::Text(self.label_of(s, LAUNCH, i as u32, ident)));
            }
        }
        let mut waits = Vec::new();
        for (t, evs) in s.hist.iter().enumerate() {
            ids.threads.push((0, 0));
            for (po, ev) in evs.iter().enumerate() {
                let kind = match &ev.kind {
                    HKind::Init(k) => EventKind::Init { count: *k },
                    HKind::Join => EventKind::Join,
                    HKind::Drop => EventKind::Drop,
                    HKind::Arrive(k, c, n) => {
                        let spec = match p.instr(ThreadId(t as u32), ev.pc).map(|i| &i.kind) {
                            Some(InstrKind::Barrier {
                                op: BarrierOp::Arrive(spec),
                                ..
                            }) => Some(spec),
                            _ => None,
                        };
                        EventKind::Arrive {
                            set_count: *k,
                            count: *c,
                            arrivals: *n,
                            object: spec.is_some_and(|s| s.object),
                            collective: spec.is_some_and(|s| s.collective),
                            relaxed: spec.is_some_and(|s| s.relaxed),
                            aligned: spec.is_some_and(|s| s.aligned),
                            syncs: p.sync_arrive(ThreadId(t as u32), ev.pc),
                            red: spec.is_some_and(|s| s.pred.is_some()),
                            whole: spec.is_some_and(|a| {
                                p.counted_in_whole_warps(ThreadId(t as u32), a, || match c {
                                    Some(ArriveCount::Threads(k)) => Some(*k),
                                    _ => None,
                                })
                            }),
                        }
                    }
                    HKind::ArriveDrop(positive) => EventKind::ArriveDrop { positive: *positive },
                    HKind::Wait {
                        token_phase, parity, ..
                    } => EventKind::Wait {
                        participants: Default::default(),
                        completed: true,
                        token_phase: *token_phase,
                        parity: *parity,
                        aligned: matches!(
                            p.instr(ThreadId(t as u32), ev.pc).map(|i| &i.kind),
                            Some(InstrKind::Barrier { op: BarrierOp::Wait(w), .. }) if w.aligned
                        ),
                    },
                    HKind::Tx(delta) => EventKind::Tx {
                        delta: *delta,
                        relaxed: matches!(
                            p.instr(ThreadId(t as u32), ev.pc).map(|i| &i.kind),
                            Some(InstrKind::Barrier { op, .. }) if op.orders_no_memory()
                        ),
                    },
                    HKind::Read => EventKind::Read,
                    HKind::Write => EventKind::Write,
                    HKind::Inval => EventKind::Inval,
                    HKind::NoEffect(op) => EventKind::NoEffect { op: *op },
                    HKind::Fence(scope) => EventKind::Fence { scope: *scope },
                };
                let id = b.event(Some(ThreadId(t as u32)), ev.pc, kind, ev.target);
                let entry = &mut ids.threads[t];
                if po == 0 {
                    entry.0 = id.0;
                }
                debug_assert_eq!(
                    id.0,
                    entry.0 + po as u32,
                    "a thread's events are numbered consecutively"
                );
                entry.1 += 1;
                labels.push(Label::Event {
                    t: t as u32,
                    named: ident[t],
                    po: po as u32,
                    pc: ev.pc,
                    target: ev.target,
                });
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
            labels.push(Label::Event {
                t: t as u32,
                named: ident[t],
                po: s.hist[t].len() as u32,
                pc,
                target: Target::Barrier(BarrierId(bar as u32)),
            });
        }
        // The waits of a phase share its list here as in the state.
        let mut shared: rustc_hash::FxHashMap<*const Vec<(u32, u32)>, Participants> = Default::default();
        for (w, ps) in waits {
            let list = shared
                .entry(std::sync::Arc::as_ptr(&ps))
                .or_insert_with(|| ps.iter().filter_map(|k| ids.get(k)).collect::<Vec<_>>().into());
            b.set_participants(w, list.clone());
        }
        for order in &s.bmo {
            for k in order {
                if let Some(id) = ids.get(k) {
                    b.bmo(id);
                }
            }
        }
        for &(x, y) in &p.mutually_exclusive {
            b.mutually_exclusive(x, y);
        }
        // Summary edges fan by fan: thread starts as factored
        // `started_before` entries, event sources as edges (sorted).
        let mut extra = Vec::new();
        for fan in &s.extra {
            let (starts, events): (Vec<&(u32, u32)>, Vec<_>) = fan.sources.iter().partition(|x| x.1 == START);
            let targets = || fan.targets.iter().filter_map(|y| ids.get(y).map(|c| (y.0, c)));
            b.starts_before(
                starts.iter().map(|x| ThreadId(x.0)).collect(),
                targets().map(|(_, c)| c).collect(),
            );
            for x in events {
                if let Some(a) = ids.get(x) {
                    extra.extend(targets().filter(|&(u, _)| u != x.0).map(|(_, c)| (a, c)));
                }
            }
        }
        extra.sort_unstable();
        for (a, c) in extra {
            b.extra_eb(a, c);
        }
        let names = ExecNames {
            p,
            threads: ident.iter().map(|&n| p.threads[n as usize].name.clone()).collect(),
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
            .map(|p| (crate::semantics::eval::eval(self.p, s, t, p) & 1) as u8);
        let kind = EventKind::Wait {
            participants: Default::default(),
            completed: false,
            token_phase,
            parity,
            aligned: spec.aligned,
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
        // Each event's label formatted once: a phase of a lane-level kernel
        // names every lane's event in every wait's participants.
        let labels: Vec<String> = exec.ids().map(|e| names.label(e)).collect();
        let label = |e: EventId| labels[e.index()].clone();
        // Each barrier's bmo in barrier order; an idle barrier's holds only
        // its launch init, which the execution left out.
        let mut idle = names.idle_launches.iter().peekable();
        let mut bmo = Vec::new();
        for (b, o) in exec.bmo.iter().enumerate() {
            let name = || self.p.barriers[b].name.clone();
            if let Some((_, l)) = idle.next_if(|(i, _)| *i == b) {
                // The start barrier of a copy agent that never started
                // tells nothing.
                if !self.p.is_copy_start(BarrierId(b as u32)) {
                    bmo.push((name(), vec![l.clone()]));
                }
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
