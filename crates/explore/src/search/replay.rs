//! The one replayer: witnesses are built only when a finding needs one,
//! by replaying the choices that reached it from the initial state (the
//! search tree's path for a finding of the search, the stem of a lasso for
//! the liveness analysis), saving and restoring the worker's bookkeeping
//! around it.
//!
//! A replay takes every step twice: on the state the search stores
//! (compacted, its threads renamed by symmetry), whose events a finding
//! names, and on the [`Whole`] execution: the same run with nothing
//! forgotten and every thread under its declared index. Witnesses are
//! built from the whole one (docs/explorer.md, "Witnesses"), so that `T#n`
//! is the n-th event of thread `T` from its start and phases count from
//! the launch, whatever the reductions.

use crate::reductions;
use crate::search::Chain;
use crate::search::Explorer;
use crate::semantics::worker::{Traced, Worker};
use crate::semantics::System;
use crate::state::answer::{Step, Stop};
use crate::state::{Choice, State, LAUNCH};
use bc_graph::*;
use rustc_hash::FxHashMap as HashMap;

/// A replay's run with nothing forgotten (no compaction) and threads under
/// their declared indices (no symmetry renaming), taking the steps the
/// replayed state takes; and where each event of the replayed state sits
/// in it.
pub(crate) struct Whole {
    /// The whole execution's state: thread `d` is declared thread `d`.
    pub(crate) state: State,
    /// What its steps record into (identity renaming; findings dropped).
    worker: Worker,
    /// Its steps, as the witness shows them.
    pub(crate) steps: Vec<Step>,
    /// Per declared thread: for each event the replayed state holds of it
    /// (in program order), the event's place in the whole history.
    map: Vec<Vec<u32>>,
    /// Per declared thread: how many whole events `map` accounts for; the
    /// replayed state's events past `map` are the whole history's from
    /// here on, in order.
    consumed: Vec<u32>,
    /// The replayed state's renaming (which declared thread each of its
    /// thread indices stands for).
    pub(crate) ident: Vec<u32>,
    /// The two runs parted (a step the whole run could not take alike):
    /// witnesses fall back to the replayed state.
    pub(crate) broken: bool,
}

impl Whole {
    /// The initial state, before any step.
    fn new(sys: &System) -> Whole {
        let n = sys.p.threads.len();
        let mut worker = Worker::new(n);
        let mut state = State::initial(sys.p);
        sys.strip_unread_joins(&mut state);
        for t in 0..n {
            sys.run_local(&mut state, t, &mut worker);
        }
        worker.pending.clear();
        Whole {
            state,
            worker,
            steps: Vec::new(),
            map: vec![Vec::new(); n],
            consumed: vec![0; n],
            ident: (0..n as u32).collect(),
            broken: false,
        }
    }

    /// A copy (the lasso's entry state), its steps left out.
    pub(crate) fn snapshot(&self) -> Whole {
        let mut worker = Worker::new(self.ident.len());
        worker.pending.clear();
        Whole {
            state: self.state.clone(),
            worker,
            steps: Vec::new(),
            map: self.map.clone(),
            consumed: self.consumed.clone(),
            ident: self.ident.clone(),
            broken: self.broken,
        }
    }

    /// The whole event `(declared thread, place)` of the replayed state's
    /// event `(t, po)` (a launch init stays itself).
    pub(crate) fn key(&self, (t, po): (u32, u32)) -> Option<(u32, u32)> {
        if t == LAUNCH {
            return Some((t, po));
        }
        let d = *self.ident.get(t as usize)?;
        Some((d, self.place(d as usize, po)))
    }

    /// The place in the whole history of declared thread `d`'s event `po`
    /// of the replayed state.
    fn place(&self, d: usize, po: u32) -> u32 {
        let kept = &self.map[d];
        match kept.get(po as usize) {
            Some(&x) => x,
            None => self.consumed[d] + po - kept.len() as u32,
        }
    }

    /// `text` (a finding's message, which names events of the replayed
    /// state `T#n`, by declared thread names) with each event named as in
    /// the whole run.
    pub(crate) fn relabel(&self, p: &Program, text: &str) -> String {
        let threads: HashMap<&str, usize> = (p.threads.iter().enumerate())
            .map(|(d, th)| (th.name.as_str(), d))
            .collect();
        let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('#') {
            let start = rest[..at].rfind(|c: char| !name_char(c)).map_or(0, |i| i + 1);
            let digits = rest[at + 1..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len() - at - 1);
            let n: Option<u32> = rest[at + 1..at + 1 + digits].parse().ok();
            match (threads.get(&rest[start..at]), n) {
                (Some(&d), Some(n)) if n >= 1 => {
                    out.push_str(&rest[..at + 1]);
                    out.push_str(&(self.place(d, n - 1) + 1).to_string());
                    rest = &rest[at + 1 + digits..];
                }
                _ => {
                    out.push_str(&rest[..at + 1]);
                    rest = &rest[at + 1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// Takes the traced steps of the replayed state on the whole one; the
    /// first `lanes` of them are one warp's arrival, shown as one step
    /// ([`fold_warp`]).
    fn follow(&mut self, sys: &System, trace: Vec<Traced>, lanes: usize) {
        let start = self.steps.len();
        self.follow_each(sys, trace, lanes);
        if !self.broken && lanes > 1 && self.steps.len() >= start + lanes {
            let warp: Vec<Step> = self.steps.drain(start..start + lanes).collect();
            let folded = fold_warp(warp);
            self.steps.splice(start..start, folded);
        }
    }

    /// The first `lanes` steps of `trace` are one warp's arrival: the
    /// ones after its first lane's follow it (`Worker::following`).
    fn follow_each(&mut self, sys: &System, trace: Vec<Traced>, lanes: usize) {
        for (i, (c, members)) in trace.into_iter().enumerate() {
            self.worker.following = i > 0 && i < lanes;
            if self.broken {
                return;
            }
            let d = self.ident[c.thread as usize];
            let phase = match members {
                None => None,
                Some(members) => match self.phase_of(sys, d, &members) {
                    Some(i) => Some(i),
                    None => {
                        self.broken = true;
                        return;
                    }
                },
            };
            // The events it adds: its thread's, and those of the copy
            // agents an issue starts.
            let before: Vec<usize> = self.state.hist.iter().map(Vec::len).collect();
            let mut step = sys.step(&mut self.state, Choice { thread: d, phase }, &mut self.worker);
            self.worker.following = false;
            self.worker.pending.clear();
            self.worker.halt = None;
            let order = std::iter::once(d as usize).chain((0..before.len()).filter(|&u| u != d as usize));
            for u in order {
                let name = &sys.p.threads[u].name;
                let added = before[u]..self.state.hist[u].len();
                step.events.extend(added.map(|n| format!("{name}#{}", n + 1)));
            }
            self.steps.push(step);
        }
    }

    /// The index, in the record of the barrier declared thread `d`'s wait
    /// names, of the completed phase whose members are the replayed
    /// state's `members`.
    fn phase_of(&self, sys: &System, d: u32, members: &[(u32, u32)]) -> Option<u32> {
        let want: Vec<(u32, u32)> = members.iter().map(|&k| self.key(k)).collect::<Option<_>>()?;
        sys.completed_phase_index(&self.state, d as usize, &want)
    }

    /// After the steps, before the replayed state `s` is normalized: its
    /// new events are the whole run's new events (checked).
    fn account(&mut self, s: &State) {
        for (t, h) in s.hist.iter().enumerate() {
            let d = self.ident[t] as usize;
            let new = h.len() - self.map[d].len().min(h.len());
            let whole = self.state.hist[d].len() as u32;
            if h.len() < self.map[d].len() || self.consumed[d] + new as u32 != whole {
                self.broken = true;
                return;
            }
            self.map[d].extend(self.consumed[d]..whole);
            self.consumed[d] = whole;
        }
    }

    /// After the replayed state `s` was normalized: compaction moved its
    /// kept events (`remap`, old place to new, under the renaming before),
    /// symmetry renamed its threads (`ident` now). Checks that the two
    /// runs' threads still agree.
    fn normalized(&mut self, sys: &System, s: &State, remap: Option<HashMap<(u32, u32), (u32, u32)>>, ident: &[u32]) {
        if let Some(remap) = remap {
            let mut map: Vec<Vec<u32>> = vec![Vec::new(); self.map.len()];
            for (t, h) in s.hist.iter().enumerate() {
                map[ident[t] as usize] = vec![u32::MAX; h.len()];
            }
            for (&(t, po), &(_, new)) in &remap {
                let d = self.ident[t as usize] as usize;
                match (self.map[d].get(po as usize), map[d].get_mut(new as usize)) {
                    (Some(&x), Some(slot)) => *slot = x,
                    _ => self.broken = true,
                }
            }
            if map.iter().flatten().any(|&x| x == u32::MAX) {
                self.broken = true;
            }
            self.map = map;
        }
        self.ident.clear();
        self.ident.extend_from_slice(ident);
        // Phases retired as the transition system does; not sorted, so
        // that bmo and participants keep the order of the steps.
        sys.retire_phases(&mut self.state);
        // The threads agree (a copy agent's pending flag aside, which
        // compaction clears once the copy is observed).
        let pending = bc_graph::COPY_PENDING_REG.index();
        for (t, x) in s.threads.iter().enumerate() {
            let d = ident[t] as usize;
            let y = &self.state.threads[d];
            let regs = x.regs.len() == y.regs.len()
                && (x.regs.iter().zip(&y.regs).enumerate())
                    .all(|(i, (a, b))| a == b || (i == pending && sys.p.copy_performer(ThreadId(d as u32))));
            if x.pc != y.pc || x.status != y.status || !regs || self.map[d].len() != s.hist[t].len() {
                self.broken = true;
            }
        }
    }
}

impl<'p> Explorer<'p> {
    /// The steps from the initial state to state `id` of the search tree,
    /// then the choice `then` and the steps of its chain `chained` (the
    /// transition being expanded, up to where a finding came up), replayed
    /// (witnesses are built only when a finding needs one). The whole run
    /// is left in `self.whole`.
    pub(crate) fn replay_to(&mut self, id: u32, then: Option<Choice>, chained: &[Choice]) -> Vec<Step> {
        let mut moves = Vec::new();
        {
            let tree = self.tree.read().expect("tree lock");
            let mut at = id;
            while let (parent, Some(c), chain) = &tree[at as usize] {
                moves.push((*c, chain.clone()));
                at = *parent;
            }
        }
        moves.reverse();
        let initial = moves.is_empty();
        let replayed = self.replay(&moves, false, |e, mut s, mut steps| {
            if let Some(c) = then {
                steps.extend(e.replay_move(&mut s, c, chained, initial));
            }
            Ok(steps)
        });
        replayed.expect("a replay without the budget never stops")
    }

    /// One step of a replay: choice `c` with its fused steps, on the
    /// replayed state `s` and on the whole run.
    /// `initial`: `s` is the initial state (see `Explorer::take_step`).
    pub(crate) fn replay_step(&mut self, s: &mut State, c: Choice, initial: bool) -> Vec<Step> {
        let mut trace = vec![self.sys.traced(s, c)];
        // A warp's arrival: the other lanes' arrives, each a step of its
        // own on the whole run.
        let lanes = self.sys.warp_followers(s, c);
        let warp = 1 + lanes.len();
        trace.extend(lanes.into_iter().map(|u| {
            self.sys.traced(
                s,
                Choice {
                    thread: u,
                    phase: c.phase,
                },
            )
        }));
        let mut steps = fold_warp(self.sys.step_warp(s, c, &mut self.worker));
        self.worker.trace = Some(std::mem::take(&mut trace));
        let stepped = (!initial).then_some(c.thread as usize);
        steps.extend(reductions::fused_steps(&self.sys, s, &mut self.worker, None, stepped));
        trace.extend(self.worker.trace.take().unwrap_or_default());
        if let Some(whole) = &mut self.whole {
            whole.follow(&self.sys, trace, warp);
            whole.account(s);
        }
        steps
    }

    /// A transition in a replay: choice `c`, then the steps of its chain
    /// (`expand.rs`), with nothing normalized in between, as the search
    /// took them.
    /// `initial`: `s` is the initial state.
    pub(crate) fn replay_move(&mut self, s: &mut State, c: Choice, chain: &[Choice], initial: bool) -> Vec<Step> {
        let mut steps = self.replay_step(s, c, initial);
        for &c in chain {
            steps.extend(self.replay_step(s, c, false));
        }
        steps
    }

    /// [`Explorer::normalize`] in a replay, followed on the whole run.
    pub(crate) fn replay_normalize(&mut self, s: &mut State) {
        self.forgot = None;
        self.normalize(s);
        let remap = self.forgot.take();
        if let Some(whole) = &mut self.whole {
            whole.normalized(&self.sys, s, remap, &self.worker.ident);
        }
    }

    /// The one replayer: replays `moves` from the initial state in
    /// declaration order (thread renaming starting from the identity),
    /// each choice with its fused steps and its chain, and the reductions
    /// after it, then
    /// hands the state reached and the steps to `then`, still replaying
    /// (nothing is recorded unless `then` ends the replay). The path, the
    /// pending findings, the renaming and the step modes are saved before
    /// and restored after; the whole run (`self.whole`) is left for the
    /// witness. `budgeted`: the budget is checked before each step (`Err`
    /// at a limit).
    pub(crate) fn replay<R>(
        &mut self,
        moves: &[(Choice, Chain)],
        budgeted: bool,
        then: impl FnOnce(&mut Self, State, Vec<Step>) -> Result<R, Stop>,
    ) -> Result<R, Stop> {
        let saved = (
            std::mem::take(&mut self.path),
            std::mem::take(&mut self.worker.pending),
            std::mem::replace(&mut self.worker.ident, (0..self.p.threads.len() as u32).collect()),
            self.replaying,
            self.worker.quiet,
        );
        self.replaying = true;
        self.worker.quiet = false;
        self.whole = Some(Whole::new(&self.sys));
        let run = || {
            let mut s = State::initial(self.p);
            self.sys.strip_unread_joins(&mut s);
            for t in 0..self.p.threads.len() {
                self.sys.run_local(&mut s, t, &mut self.worker);
            }
            let mut steps = Vec::new();
            for (i, (c, chain)) in moves.iter().enumerate() {
                if budgeted {
                    self.budget.go_on()?;
                }
                let chain = chain.as_deref().unwrap_or(&[]);
                steps.extend(self.replay_move(&mut s, *c, chain, i == 0));
                self.replay_normalize(&mut s);
            }
            then(self, s, steps)
        };
        let r = run();
        (
            self.path,
            self.worker.pending,
            self.worker.ident,
            self.replaying,
            self.worker.quiet,
        ) = saved;
        r
    }

    /// Makes `self.path` the whole path from the initial state. While a
    /// worker expands a state, the path is not kept (steps are taken
    /// quietly, without their texts): it is replayed from the search tree
    /// to the expanded state, then the choice being taken.
    pub(crate) fn materialize_path(&mut self) {
        if let Some(id) = self.prefix.take() {
            let then = self.current.take();
            let chained = std::mem::take(&mut self.chained);
            self.path = self.replay_to(id, then, &chained);
            self.chained = chained;
        }
    }
}

impl Whole {
    /// Whether the replayed state it follows holds `lens[t]` events of
    /// each thread `t`.
    pub(crate) fn fits(&self, lens: &[usize]) -> bool {
        lens.len() == self.ident.len()
            && (lens.iter().enumerate()).all(|(t, &n)| self.map[self.ident[t] as usize].len() == n)
    }
}

/// Each event of `exec` (an execution built from a state) as the state's
/// key: `(thread, place in its program order)`, a stuck wait at the place
/// after the thread's last event, a launch init `(LAUNCH, barrier)`.
pub(crate) fn event_keys(exec: &Execution) -> Vec<(u32, u32)> {
    let mut next = vec![0u32; exec.threads.len().max(1)];
    (exec.ids())
        .map(|e| {
            let ev = exec.event(e);
            match (ev.thread, ev.target) {
                (Some(t), _) => {
                    if next.len() <= t.index() {
                        next.resize(t.index() + 1, 0);
                    }
                    next[t.index()] += 1;
                    (t.0, next[t.index()] - 1)
                }
                (None, Target::Barrier(b)) => (LAUNCH, b.0),
                (None, _) => (LAUNCH, u32::MAX),
            }
        })
        .collect()
}

/// A warp's arrival (or release) as one witness step: the lanes' steps of
/// one transition ([`crate::semantics::System::step_warp`]) are one
/// instruction run by the warp together, so the witness shows it once,
/// named `FIRST..LAST` after its lanes, with every lane's events and the
/// barrier as the last lane left it (`32 of 64 arrived`), rather than a
/// step per lane.
fn fold_warp(mut steps: Vec<Step>) -> Vec<Step> {
    if steps.len() < 2 {
        return steps;
    }
    let last = steps.pop().expect("two steps or more");
    let mut first = steps.remove(0);
    first.thread = format!("{}..{}", first.thread, last.thread);
    // The warp's lanes that do not arrive count with its first lane's
    // arrive (`System::absent_lanes`): its note stays with the effect.
    let note = (first.effect.ends_with(crate::semantics::WHOLE_WARP_NOTE))
        .then(|| first.effect.rfind(" (with ").map(|i| first.effect[i..].to_string()))
        .flatten();
    first.effect = last.effect + note.as_deref().unwrap_or("");
    for s in steps {
        first.events.extend(s.events);
    }
    first.events.extend(last.events);
    vec![first]
}
