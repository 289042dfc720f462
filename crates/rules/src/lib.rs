//! The rule checker: judges one [`Execution`] against the rules of the AMDGPU
//! barrier execution model ("AMDGPU Execution Synchronization", section
//! "Execution Model"), by name, plus the race rule of `docs/semantics.md`.
//!
//! It is deliberately independent of the explorer: it recomputes the phases
//! of every barrier from its bmo, joined-before from program order, and
//! executes-before as a transitive closure, and it checks that the
//! participates-in relation the explorer chose is one the model allows. An
//! execution that breaks those structural constraints is reported as
//! [`Violation::inconsistent`] - a bug in whoever built it, never a user
//! finding.

use bc_graph::bits::Bits;
use bc_graph::{ArriveCount, BarrierId, EventId, EventKind, Execution, Target, ThreadId, NO_TOKEN_PHASE};
use bc_models::{Rule, RuleSet};
use bc_syntax::{FindingKind, UbKind};

/// One broken rule in one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The finding, or `None` when the execution itself is not a valid
    /// candidate (a structural constraint is broken).
    pub kind: Option<FindingKind>,
    /// The rule's name (as in `docs/semantics.md`).
    pub rule: &'static str,
    pub message: String,
    /// The events that show it, most important first.
    pub events: Vec<EventId>,
}

impl Violation {
    pub fn is_inconsistent(&self) -> bool {
        self.kind.is_none()
    }
}

/// The join that entitles a wait: a join event, or (for models without
/// the `joined-before` rule) the thread's implicit join at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Join {
    Event(EventId),
    Launch(ThreadId),
}

/// Where a modification event sits in its barrier's phase structure.
#[derive(Clone, Copy, Debug, Default)]
struct PhasePos {
    /// Index of the phase among the barrier's phases.
    phase: Option<usize>,
}

#[derive(Clone, Debug)]
struct Phase {
    barrier: BarrierId,
    members: Vec<EventId>,
    completed: bool,
    /// Inits of the barrier before this phase.
    epoch: usize,
    /// The phase's number among all phases of the barrier (numbers keep
    /// counting across inits, so a token names one phase).
    number: usize,
    /// The number of the first phase after the latest init before this
    /// one: parity counts from it.
    epoch_start: usize,
}

/// How messages name events and barrier objects (the checker has no program).
pub trait Names {
    fn event(&self, e: EventId) -> String;
    fn barrier(&self, b: BarrierId) -> String;
}

/// Names by number, for tests and hand-built executions.
pub struct Numbered;

impl Names for Numbered {
    fn event(&self, e: EventId) -> String {
        format!("event {}", e.0)
    }
    fn barrier(&self, b: BarrierId) -> String {
        format!("barrier {}", b.0)
    }
}

/// Judges `exec` against the enabled `rules`.
pub fn check(exec: &Execution, rules: RuleSet, name: &dyn Names) -> Vec<Violation> {
    let mut c = Checker {
        exec,
        rules,
        name,
        out: Vec::new(),
    };
    c.run();
    c.out
}

struct Checker<'a> {
    exec: &'a Execution,
    rules: RuleSet,
    name: &'a dyn Names,
    out: Vec<Violation>,
}

impl Checker<'_> {
    fn report(&mut self, rule: Rule, kind: FindingKind, message: String, events: Vec<EventId>) {
        if self.rules.has(rule) {
            self.out.push(Violation {
                kind: Some(kind),
                rule: rule.name(),
                message,
                events,
            });
        }
    }
    fn inconsistent(&mut self, rule: &'static str, message: String, events: Vec<EventId>) {
        self.out.push(Violation {
            kind: None,
            rule,
            message,
            events,
        });
    }
    fn n(&self, e: EventId) -> String {
        self.name.event(e)
    }

    fn run(&mut self) {
        let exec = self.exec;
        let (phases, pos, epochs) = self.phases();
        // Program-order predecessor of every event, and each event's index
        // in its thread.
        let n = exec.events.len();
        let mut po_index = vec![0usize; n];
        for evs in &exec.program_order {
            for (i, &e) in evs.iter().enumerate() {
                po_index[e.index()] = i;
            }
        }
        self.participates_in(&phases, &pos, &po_index);
        let Some(before) = self.executes_before() else {
            return;
        };
        let eb = |a: EventId, b: EventId| before[b.index()].get(a.index());
        // executes-before is consistent with every bmo.
        for order in &exec.bmo {
            for (i, &a) in order.iter().enumerate() {
                for &b in &order[i + 1..] {
                    if eb(b, a) {
                        let msg = format!("{} executes before {} but follows it in bmo", self.n(b), self.n(a));
                        self.inconsistent("executes-before-consistent", msg, vec![a, b]);
                    }
                }
            }
        }

        let jb = self.joined_before();
        // Does join `j` execute before event `x`?
        let entitles = |j: Join, x: EventId| match j {
            Join::Event(j) => eb(j, x),
            // The join at launch executes before what the thread's start
            // does: its first event stands for the start, or, once an
            // explorer forgot that event, the recorded `started_before`.
            Join::Launch(t) => {
                exec.event(x).thread == Some(t)
                    || exec.program_order[t.index()].first().is_some_and(|&f| eb(f, x))
                    || exec.started_before.iter().any(|&(u, y)| u == t && (y == x || eb(y, x)))
            }
        };
        let names = self.name;
        let join_name = |j: Join| match j {
            Join::Event(j) => names.event(j),
            Join::Launch(_) => "its join at launch".to_string(),
        };
        let join_events = |j: Join| match j {
            Join::Event(j) => vec![j],
            Join::Launch(_) => vec![],
        };
        // Waits on each (thread, phase): which waits each event participates in.
        let mut waits_of = vec![Vec::new(); n];
        for w in exec.ids() {
            for &x in exec.participants(w) {
                waits_of[x.index()].push(w);
            }
        }

        for e in exec.ids() {
            let ev = exec.event(e);
            let Target::Barrier(b) = ev.target else {
                continue;
            };
            match &ev.kind {
                EventKind::Drop => {
                    if jb[e.index()].is_none() {
                        let msg = format!(
                            "{} drops {} with no joined-before join",
                            self.n(e),
                            self.barrier_name(b)
                        );
                        self.report(
                            Rule::DropNeedsJoin,
                            FindingKind::Ub(UbKind::DropWithoutJoin),
                            msg,
                            vec![e],
                        );
                    }
                    // arrive-then-drop: every earlier arrive of this thread
                    // that participates in a wait must complete first. An
                    // arrive with a thread count (`bar.arrive 0, N`) is
                    // exempt: its phase completes at N arrivals, which a
                    // drop (an exit lowering the block's count) never
                    // changes.
                    let t = ev.thread.expect("drops belong to threads");
                    for &a in &exec.program_order[t.index()][..po_index[e.index()]] {
                        let ea = exec.event(a);
                        if ea.target != ev.target
                            || !matches!(ea.kind, EventKind::Arrive { .. })
                            || matches!(
                                ea.kind,
                                EventKind::Arrive {
                                    count: Some(ArriveCount::Threads(_)),
                                    ..
                                }
                            )
                        {
                            continue;
                        }
                        let ws = &waits_of[a.index()];
                        if !ws.is_empty() && !ws.iter().any(|&w| eb(w, e)) {
                            let msg = format!(
                                "{} arrives, then {} drops before any wait its arrive participates in has completed (e.g. {})",
                                self.n(a),
                                self.n(e),
                                self.n(ws[0])
                            );
                            self.report(
                                Rule::ArriveThenDrop,
                                FindingKind::Ub(UbKind::ArriveThenDrop),
                                msg,
                                vec![a, e, ws[0]],
                            );
                        }
                    }
                }
                EventKind::Wait {
                    participants,
                    completed,
                    token_phase,
                    parity,
                } => {
                    if let Some(p) = parity {
                        // A parity wait completes on the last completed phase
                        // once the current phase's parity differs from p
                        // (project notes, section 3, mbarrier: on a fresh
                        // barrier parity 1 counts as completed).
                        if *completed && participants.is_empty() {
                            // Nothing to take: the phase "before" phase 0 of
                            // an epoch (odd), or a phase of parity p this
                            // thread waited on already.
                            let t = ev.thread.expect("waits belong to threads");
                            let again = exec.program_order[t.index()][..po_index[e.index()]].iter().any(|&w| {
                                exec.event(w).target == ev.target
                                    && exec.participants(w).first().is_some_and(|x| {
                                        pos[x.index()].phase.is_some_and(|pi| {
                                            (phases[pi].number - phases[pi].epoch_start) % 2 == *p as usize
                                        })
                                    })
                            });
                            if *p != 1 && !again {
                                let msg = format!(
                                    "{} completes with no participants although parity {p} names no virtual phase",
                                    self.n(e)
                                );
                                self.inconsistent("participates-in", msg, vec![e]);
                            }
                        }
                        if !completed {
                            let epoch = Some(epochs[b.index()]);
                            let mine: Vec<&Phase> = phases
                                .iter()
                                .filter(|ph| ph.barrier == b && Some(ph.epoch) == epoch)
                                .collect();
                            let current = mine.iter().filter(|ph| ph.completed).count();
                            let ended = mine.last().is_none_or(|ph| ph.completed);
                            let current = if ended { current } else { mine.len() - 1 };
                            if current % 2 != *p as usize {
                                let msg = format!("{} is stuck although its parity phase completed", self.n(e));
                                self.inconsistent("wait-completes", msg, vec![e]);
                            } else {
                                let msg = format!("{} on {} never sees its parity", self.n(e), self.barrier_name(b));
                                self.report(Rule::WaitCompletes, FindingKind::Deadlock, msg, vec![e]);
                            }
                        }
                        continue;
                    }
                    if let (true, true, Some(tp)) = (*completed, participants.is_empty(), token_phase) {
                        self.token_misuse(e, b, *tp, &phases, &po_index, &before);
                        continue;
                    }
                    if let (true, Some(pi), true) = (
                        *completed && token_phase.is_some(),
                        participants.first().and_then(|x| pos[x.index()].phase),
                        self.rules.has(Rule::TokenPhase),
                    ) {
                        self.token_phase(e, b, pi, &phases, &before);
                    }
                    // A thread-counted arrive (CUDA `bar.sync`,
                    // `__syncthreads`) binds its thread's next wait to its
                    // own phase: the hardware barrier resets at its count,
                    // so a surplus arrival waits for a new phase (project
                    // notes, section 3, counted named barriers).
                    let t = ev.thread.expect("waits belong to threads");
                    let own = exec.program_order[t.index()][..po_index[e.index()]]
                        .iter()
                        .rev()
                        .find(|&&a| {
                            exec.event(a).target == ev.target && matches!(exec.event(a).kind, EventKind::Arrive { .. })
                        })
                        .copied()
                        .filter(|&a| matches!(exec.event(a).kind, EventKind::Arrive { count: Some(_), .. }));
                    if let (true, Some(a)) = (*completed && !participants.is_empty(), own) {
                        if !participants.contains(&a) {
                            let msg = format!(
                                "{} completes on a phase without its thread's counted arrive {}",
                                self.n(e),
                                self.n(a)
                            );
                            self.inconsistent("participates-in", msg, vec![e, a]);
                        }
                    }
                    let Some(j) = jb[e.index()] else {
                        let msg = format!(
                            "{} waits on {} with no joined-before join",
                            self.n(e),
                            self.barrier_name(b)
                        );
                        self.report(
                            Rule::WaitNeedsJoin,
                            FindingKind::Ub(UbKind::WaitWithoutJoin),
                            msg,
                            vec![e],
                        );
                        continue;
                    };
                    if *completed {
                        if participants.is_empty() {
                            self.inconsistent(
                                "participates-in",
                                format!("{} completes with no participant", self.n(e)),
                                vec![e],
                            );
                        } else if !participants.iter().any(|&x| entitles(j, x)) {
                            let msg = format!(
                                "{} completes on a phase that {} does not execute before",
                                self.n(e),
                                join_name(j)
                            );
                            let mut evs = vec![e];
                            evs.extend(join_events(j));
                            self.report(Rule::WaitNeedsJoin, FindingKind::Ub(UbKind::WaitWithoutJoin), msg, evs);
                        }
                        continue;
                    }
                    // A wait stuck forever: deadlock, unless the execution
                    // was cut short while a phase it could take existed.
                    let eligible = phases.iter().enumerate().find(|(pi, p)| {
                        p.barrier == b
                            && p.completed
                            && own.is_none_or(|a| p.members.contains(&a))
                            && token_phase.is_none_or(|tp| tp as usize == self.phase_number(&phases, *pi))
                            && p.members.iter().any(|&x| entitles(j, x))
                            && !p
                                .members
                                .iter()
                                .any(|&x| waits_of[x.index()].iter().any(|&w| exec.event(w).thread == Some(t)))
                    });
                    if let Some((_, p)) = eligible {
                        let msg = format!(
                            "{} is stuck although a completed phase (first op {}) could complete it",
                            self.n(e),
                            self.n(p.members[0])
                        );
                        self.inconsistent("wait-completes", msg, vec![e, p.members[0]]);
                    } else {
                        let msg = format!("{} on {} never completes", self.n(e), self.barrier_name(b));
                        let mut evs = vec![e];
                        evs.extend(join_events(j));
                        self.report(Rule::WaitCompletes, FindingKind::Deadlock, msg, evs);
                    }
                }
                _ => {}
            }
        }

        // phase-with: no op of another phase between a participant and its wait.
        if self.rules.has(Rule::PhaseWith) {
            let class = self.phase_classes();
            'waits: for w in exec.ids() {
                let ev = exec.event(w);
                let EventKind::Wait {
                    participants,
                    completed: true,
                    ..
                } = &ev.kind
                else {
                    continue;
                };
                for &a in participants {
                    for x in exec.ids() {
                        let ex = exec.event(x);
                        if x == a
                            || x == w
                            || ex.target != ev.target
                            || class[x.index()].1 < 2
                            || class[x.index()].0 == class[w.index()].0
                        {
                            continue;
                        }
                        if eb(a, x) && eb(x, w) {
                            let msg = format!(
                                "{} participates in {}, but {} of another phase executes between them",
                                self.n(a),
                                self.n(w),
                                self.n(x)
                            );
                            self.report(Rule::PhaseWith, FindingKind::Ub(UbKind::StalePhase), msg, vec![w, a, x]);
                            continue 'waits;
                        }
                    }
                }
            }
        }

        if self.rules.has(Rule::SyncwarpMask) && exec.syncwarp.iter().any(Option::is_some) {
            self.syncwarp_masks(&phases);
        }

        // Races: plain accesses of one location from different threads, one
        // a write, unordered by executes-before.
        let plain: Vec<EventId> = exec
            .ids()
            .filter(|&e| matches!(exec.event(e).kind, EventKind::Read | EventKind::Write))
            .collect();
        for (i, &a) in plain.iter().enumerate() {
            for &b in &plain[i + 1..] {
                let (ea, ebv) = (exec.event(a), exec.event(b));
                if ea.target != ebv.target || ea.thread == ebv.thread {
                    continue;
                }
                if !matches!(ea.kind, EventKind::Write) && !matches!(ebv.kind, EventKind::Write) {
                    continue;
                }
                if !eb(a, b) && !eb(b, a) {
                    let msg = format!("{} and {} are not ordered by executes-before", self.n(a), self.n(b));
                    self.out.push(Violation {
                        kind: Some(FindingKind::Race),
                        rule: "race",
                        message: msg,
                        events: vec![a, b],
                    });
                }
            }
        }
    }

    fn barrier_name(&self, b: BarrierId) -> String {
        self.name.barrier(b)
    }

    /// token-phase ("Memory Barrier Primitives API", `__mbarrier_test_wait`:
    /// a token must belong to the barrier's current or immediately
    /// preceding phase): token wait `e` completed on phase `pi`, so it is
    /// stale when, in every interleaving, the barrier had already left
    /// that window when `e` ran - something executes before `e` that
    /// completes phase `pi + 1` or belongs to a later phase, or an init of
    /// the barrier bmo-after the phase (`__mbarrier_init` restarts the
    /// barrier at phase 0, so the token names a phase of its earlier
    /// life). When executes-before does not fix it, only the interleaving
    /// decides, and that is the explorer's to judge.
    fn token_phase(&mut self, e: EventId, b: BarrierId, pi: usize, phases: &[Phase], before: &[Bits]) {
        let exec = self.exec;
        let eb = |a: EventId| before[e.index()].get(a.index());
        let tp = phases[pi].number;
        let on = phases.iter().filter(|ph| ph.barrier == b).any(|ph| {
            (ph.number >= tp + 2 && ph.members.iter().any(|&x| eb(x)))
                || (ph.number == tp + 1 && ph.completed && ph.members.last().is_some_and(|&x| eb(x)))
        });
        let last = *phases[pi].members.last().expect("a completed phase has members");
        let order = &exec.bmo[b.index()];
        let after = order.iter().position(|&x| x == last).map_or(order.len(), |i| i + 1);
        let reinit = order[after..]
            .iter()
            .any(|&x| exec.event(x).thread.is_some() && matches!(exec.event(x).kind, EventKind::Init { .. }) && eb(x));
        if on || reinit {
            let why = if reinit {
                "the barrier was initialized again after that phase"
            } else {
                "the barrier is two phases past it"
            };
            let msg = format!(
                "{} waits on {} with a token of phase {tp}, which is neither current nor previous: {why}",
                self.n(e),
                self.barrier_name(b)
            );
            self.report(
                Rule::TokenPhase,
                FindingKind::Ub(UbKind::StalePhase),
                msg,
                vec![e, last],
            );
        }
    }

    /// token-misuse ("Forged tokens" in `docs/semantics.md`, CUDA section;
    /// cuda-barrier-libcudacxx.txt: a wait takes an arrival token of its own
    /// barrier): token wait `e` on barrier `b` did nothing, so the explorer
    /// found its token misused. The execution alone shows it when the token
    /// names no phase of `b`, names a phase this thread already waited on,
    /// or names phase number `tp` while no arrive of a phase numbered `tp`
    /// or more (in any epoch: a token is any value an arrive returned, and
    /// the numbers below the largest returned one were all current once)
    /// executes before the wait - each executes after it, or there is
    /// none. Otherwise only the interleaving (which arrives had happened
    /// when the wait ran) decides, and that is the explorer's to judge.
    fn token_misuse(
        &mut self,
        e: EventId,
        b: BarrierId,
        tp: u32,
        phases: &[Phase],
        po_index: &[usize],
        before: &[Bits],
    ) {
        let exec = self.exec;
        let eb = |a: EventId, x: EventId| before[x.index()].get(a.index());
        let ev = exec.event(e);
        let t = ev.thread.expect("waits belong to threads");
        let twice = exec.program_order[t.index()][..po_index[e.index()]].iter().any(|&w| {
            exec.event(w).target == ev.target
                && matches!(&exec.event(w).kind, EventKind::Wait { token_phase: Some(p), participants, .. }
                    if *p == tp && !participants.is_empty())
        });
        let arrivals: Vec<EventId> = phases
            .iter()
            .filter(|ph| ph.barrier == b && ph.number >= tp as usize)
            .flat_map(|ph| ph.members.iter().copied())
            .filter(|&x| matches!(exec.event(x).kind, EventKind::Arrive { .. }))
            .collect();
        let why = if tp == NO_TOKEN_PHASE {
            "a value that is no token of it"
        } else if twice {
            "a token it waited on already"
        } else if arrivals.iter().all(|&a| eb(e, a)) {
            "a token of a phase no arrive has returned before it"
        } else {
            return;
        };
        let msg = format!("{} waits on {} with {why}", self.n(e), self.barrier_name(b));
        self.report(Rule::TokenMisuse, FindingKind::Ub(UbKind::TokenMisuse), msg, vec![e]);
    }

    /// `__syncwarp` masks ("Synchronization Functions": the non-exited
    /// lanes a mask names must execute a `__syncwarp` with the same mask).
    /// For a phase of a mask's barrier with an arrive, and a lane the mask
    /// names that does not arrive in it: an arrive of that lane on another
    /// mask's barrier of the same warp that some interleaving of this
    /// execution places while the phase is open (after its first member,
    /// before its last when it completed) is `ub(syncwarp-mask)`. An
    /// interleaving follows program order, participates-in and every bmo,
    /// so the arrive must not precede the first member in that order, nor
    /// follow the last.
    fn syncwarp_masks(&mut self, phases: &[Phase]) {
        let exec = self.exec;
        let Ok(order) = closure(exec, true) else {
            return;
        };
        let before = |a: EventId, b: EventId| order[b.index()].get(a.index());
        let info = |b: BarrierId| exec.syncwarp.get(b.index()).and_then(Option::as_ref);
        for p in phases {
            let Some(w) = info(p.barrier) else {
                continue;
            };
            let arrivers: Vec<Option<ThreadId>> = p
                .members
                .iter()
                .filter(|&&x| matches!(exec.event(x).kind, EventKind::Arrive { .. }))
                .map(|&x| exec.event(x).thread)
                .collect();
            let (Some(&first), false) = (p.members.first(), arrivers.is_empty()) else {
                continue;
            };
            let last = p.members.last().copied().filter(|_| p.completed);
            for &l in &w.named {
                if arrivers.contains(&Some(l)) {
                    continue;
                }
                let stray = exec.program_order[l.index()].iter().copied().find(|&a| {
                    let ev = exec.event(a);
                    matches!(ev.kind, EventKind::Arrive { .. })
                        && ev
                            .barrier()
                            .is_some_and(|o| o != p.barrier && info(o).is_some_and(|ow| ow.warp == w.warp))
                        && !before(a, first)
                        && last.is_none_or(|z| !before(z, a))
                });
                if let Some(a) = stray {
                    let msg = format!(
                        "{} executes a __syncwarp with another mask while a phase of {} (mask {:#x}), which names its thread, is open, and never arrives in that phase",
                        self.n(a),
                        self.barrier_name(p.barrier),
                        w.mask
                    );
                    self.report(
                        Rule::SyncwarpMask,
                        FindingKind::Ub(UbKind::SyncwarpMask),
                        msg,
                        vec![a, first],
                    );
                }
            }
        }
    }

    /// The number of phase `pi` among its barrier's phases (0 = the first).
    fn phase_number(&self, phases: &[Phase], pi: usize) -> usize {
        phases[pi].number
    }

    /// Replays every bmo: the phases, each event's phase, and per barrier
    /// the number of inits (the epoch its latest phases belong to).
    fn phases(&mut self) -> (Vec<Phase>, Vec<PhasePos>, Vec<usize>) {
        let exec = self.exec;
        let mut phases: Vec<Phase> = Vec::new();
        let mut pos = vec![PhasePos::default(); exec.events.len()];
        let mut epochs = vec![0usize; exec.bmo.len()];
        for (b, order) in exec.bmo.iter().enumerate() {
            let b = BarrierId(b as u32);
            let mut expected: Option<i64> = None;
            let mut arrived = 0i64;
            let mut pending_drop = 0i64;
            let mut tx = 0i64;
            let mut current: Option<usize> = None;
            // The count of the current phase of a thread-counted barrier:
            // its latest counted arrival's.
            let mut phase_count: Option<ArriveCount> = None;
            let mut epoch = 0usize;
            // Phases after a launch init count from its base (the phases
            // it stands for), otherwise from 0.
            let base = match order.first() {
                Some(&f) if exec.event(f).thread.is_none() => {
                    exec.phase_base.get(b.index()).copied().unwrap_or(0) as usize
                }
                _ => 0,
            };
            let mut epoch_start = base;
            if let Some(&first) = order.first() {
                if !matches!(exec.event(first).kind, EventKind::Init { .. }) {
                    let msg = format!(
                        "the first operation on {} in bmo is {}, not an init",
                        self.barrier_name(b),
                        self.n(first)
                    );
                    self.report(
                        Rule::FirstBmoInit,
                        FindingKind::Ub(UbKind::UninitializedBarrier),
                        msg,
                        vec![first],
                    );
                }
            }
            for &e in order {
                let ev = exec.event(e);
                if !ev.kind.is_modification() || ev.target != Target::Barrier(b) {
                    self.inconsistent(
                        "bmo",
                        format!("{} is in the bmo of {}", self.n(e), self.barrier_name(b)),
                        vec![e],
                    );
                    continue;
                }
                if let EventKind::Init { count } = ev.kind {
                    // Launch inits are checked where they are declared (and stand for
                    // forgotten history, whose count may have dropped to zero).
                    if count <= 0 && ev.thread.is_some() {
                        let msg = format!("{} sets a non-positive expected count {count}", self.n(e));
                        self.report(
                            Rule::DropNotNegative,
                            FindingKind::Ub(UbKind::NegativeExpectedCount),
                            msg,
                            vec![e],
                        );
                    }
                    expected = Some(count.max(0));
                    // An init abandons the open phase: its members stay in
                    // a phase that never completes ("Execution Model":
                    // participants are an uninterrupted bmo interval that
                    // starts at arrive count zero).
                    if ev.thread.is_some() {
                        epoch_start = base + phases.iter().filter(|p| p.barrier == b).count();
                    }
                    epoch += 1;
                    epochs[b.index()] = epoch;
                    arrived = 0;
                    pending_drop = 0;
                    tx = 0;
                    current = None;
                    phase_count = None;
                    continue;
                }
                let pi = *current.get_or_insert_with(|| {
                    let number = base + phases.iter().filter(|p| p.barrier == b).count();
                    phases.push(Phase {
                        barrier: b,
                        members: Vec::new(),
                        completed: false,
                        epoch,
                        number,
                        epoch_start,
                    });
                    phases.len() - 1
                });
                phases[pi].members.push(e);
                pos[e.index()].phase = Some(pi);
                match ev.kind {
                    EventKind::Arrive { set_count, count } => {
                        if let Some(k) = set_count {
                            if k <= arrived {
                                let msg = format!(
                                    "{} sets the expected count to {k} with {arrived} arrive(s) already counted",
                                    self.n(e)
                                );
                                self.report(
                                    Rule::ExpectedCountUpdate,
                                    FindingKind::Ub(UbKind::ExpectedCountTooSmall),
                                    msg,
                                    vec![e],
                                );
                            }
                            if expected.is_some() {
                                expected = Some(k);
                            }
                        }
                        if let Some(c) = count {
                            self.counted_arrival(e, c, phase_count, &phases[pi].members);
                            phase_count = Some(c);
                        }
                        arrived += 1;
                    }
                    EventKind::ArriveDrop { positive } => {
                        arrived += 1;
                        pending_drop += 1;
                        // mbarrier counts range over 1..2^20-1 (PTX,
                        // mbarrier.init; project notes, section 3).
                        if positive && expected.is_some_and(|x| x - pending_drop <= 0) {
                            let msg = format!(
                                "{} brings the expected count of {} to zero",
                                self.n(e),
                                self.barrier_name(b)
                            );
                            self.report(
                                Rule::DropNotNegative,
                                FindingKind::Ub(UbKind::NegativeExpectedCount),
                                msg,
                                vec![e],
                            );
                        }
                    }
                    EventKind::Drop => {
                        if let Some(x) = expected {
                            if x <= 0 {
                                let msg = format!(
                                    "{} makes the expected count of {} negative",
                                    self.n(e),
                                    self.barrier_name(b)
                                );
                                self.report(
                                    Rule::DropNotNegative,
                                    FindingKind::Ub(UbKind::NegativeExpectedCount),
                                    msg,
                                    vec![e],
                                );
                            }
                            expected = Some((x - 1).max(0));
                        }
                    }
                    EventKind::Tx { delta } => tx = tx.wrapping_add(delta),
                    _ => unreachable!("modification events only"),
                }
                // A phase counted with a thread count completes at that
                // many arrivals, whatever the barrier's own count says.
                let needed = expected.map(|x| phase_count.map_or(x, |c| c.needed(x)));
                if needed == Some(arrived) && tx == 0 {
                    phases[pi].completed = true;
                    current = None;
                    phase_count = None;
                    arrived = 0;
                    expected = expected.map(|x| (x - pending_drop).max(0));
                    pending_drop = 0;
                }
            }
        }
        (phases, pos, epochs)
    }

    /// An arrival `e` on a thread-counted CUDA block barrier whose phase so
    /// far has `members` (before `e`) and count `open`: arrivals of one
    /// phase use one count (`count-mismatch`), and a thread arrives at
    /// most once before the barrier resets (`arrive-twice`; project notes,
    /// section 3, named barriers).
    fn counted_arrival(&mut self, e: EventId, count: ArriveCount, open: Option<ArriveCount>, members: &[EventId]) {
        let exec = self.exec;
        if let Some(o) = open.filter(|&o| o != count) {
            let msg = format!(
                "{} arrives with count {count:?} in a phase counted with {o:?}",
                self.n(e)
            );
            self.report(
                Rule::CountMismatch,
                FindingKind::Ub(UbKind::CountMismatch),
                msg,
                vec![e],
            );
        }
        let thread = exec.event(e).thread;
        if let Some(&a) = members.iter().find(|&&a| {
            a != e && exec.event(a).thread == thread && matches!(exec.event(a).kind, EventKind::Arrive { .. })
        }) {
            let msg = format!("{} and {} arrive in one phase from one thread", self.n(a), self.n(e));
            self.report(Rule::ArriveTwice, FindingKind::Ub(UbKind::ArriveTwice), msg, vec![a, e]);
        }
    }

    /// The structural constraints on barrier-participates-in.
    fn participates_in(&mut self, phases: &[Phase], pos: &[PhasePos], po_index: &[usize]) {
        let exec = self.exec;
        let mut used: std::collections::HashSet<(ThreadId, EventId)> = Default::default();
        for w in exec.ids() {
            let ev = exec.event(w);
            let EventKind::Wait {
                participants,
                completed,
                token_phase,
                parity,
            } = &ev.kind
            else {
                continue;
            };
            if participants.is_empty() {
                continue;
            }
            if !completed {
                self.inconsistent(
                    "participates-in",
                    format!("stuck {} has participants", self.n(w)),
                    vec![w],
                );
                continue;
            }
            let t = ev.thread.expect("waits belong to threads");
            let phase = pos[participants[0].index()].phase;
            let ok_members = participants.iter().all(|&x| {
                let ex = exec.event(x);
                ex.target == ev.target
                    && matches!(
                        ex.kind,
                        EventKind::Arrive { .. }
                            | EventKind::Drop
                            | EventKind::ArriveDrop { .. }
                            | EventKind::Tx { .. }
                    )
            });
            let whole_phase = phase.is_some_and(|pi| {
                let mut a = phases[pi].members.clone();
                let mut b = participants.clone();
                a.sort();
                b.sort();
                phases[pi].completed && a == b
            });
            if !ok_members || !whole_phase {
                let msg = format!(
                    "the participants of {} are not exactly one completed phase of its barrier",
                    self.n(w)
                );
                self.inconsistent("participates-in", msg, vec![w]);
                continue;
            }
            if let (Some(p), Some(pi)) = (parity, phase) {
                let since_init = phases[pi].number - phases[pi].epoch_start;
                if since_init % 2 != *p as usize {
                    let msg = format!("{} completes on a phase of the other parity", self.n(w));
                    self.inconsistent("participates-in", msg, vec![w]);
                }
            }
            if let (Some(tp), Some(pi)) = (token_phase, phase) {
                if self.phase_number(phases, pi) != *tp as usize {
                    self.inconsistent(
                        "participates-in",
                        format!("{} completes on another phase than its token names", self.n(w)),
                        vec![w],
                    );
                }
            }
            for &x in participants {
                let ex = exec.event(x);
                if ex.thread == Some(t) && po_index[x.index()] > po_index[w.index()] {
                    self.inconsistent(
                        "participates-in",
                        format!("{} participates in the earlier {}", self.n(x), self.n(w)),
                        vec![w, x],
                    );
                }
                if !used.insert((t, x)) {
                    let msg = format!("{} participates in two waits of one thread", self.n(x));
                    self.inconsistent("participates-in", msg, vec![w, x]);
                }
            }
        }
    }

    /// executes-before; reports a cycle as an inconsistency.
    fn executes_before(&mut self) -> Option<Vec<Bits>> {
        match executes_before(self.exec) {
            Ok(before) => Some(before),
            Err(stuck) => {
                self.inconsistent(
                    "executes-before-consistent",
                    "executes-before has a cycle".into(),
                    stuck,
                );
                None
            }
        }
    }

    /// For each event, the join that is barrier-joined-before it, if any.
    /// A model without the `joined-before` rule joins every thread to every
    /// barrier at launch.
    fn joined_before(&self) -> Vec<Option<Join>> {
        let exec = self.exec;
        let mut jb = vec![None; exec.events.len()];
        if !self.rules.has(Rule::JoinedBefore) {
            for (t, evs) in exec.program_order.iter().enumerate() {
                for &e in evs {
                    jb[e.index()] = Some(Join::Launch(ThreadId(t as u32)));
                }
            }
            return jb;
        }
        for evs in &exec.program_order {
            let mut joined: Vec<(BarrierId, EventId)> = Vec::new();
            for &e in evs {
                let ev = exec.event(e);
                let Target::Barrier(b) = ev.target else {
                    continue;
                };
                match ev.kind {
                    EventKind::Join => {
                        joined.retain(|&(o, _)| o != b && !exec.mutually_exclusive(o, b));
                        joined.push((b, e));
                    }
                    EventKind::Drop => {
                        jb[e.index()] = joined.iter().find(|&&(o, _)| o == b).map(|&(_, j)| Join::Event(j));
                        joined.retain(|&(o, _)| o != b);
                    }
                    _ => jb[e.index()] = joined.iter().find(|&&(o, _)| o == b).map(|&(_, j)| Join::Event(j)),
                }
            }
        }
        jb
    }

    /// Union-find over participates-in: (class representative, class size).
    fn phase_classes(&self) -> Vec<(usize, usize)> {
        let exec = self.exec;
        let n = exec.events.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for w in exec.ids() {
            for &x in exec.participants(w) {
                let (a, b) = (find(&mut parent, w.index()), find(&mut parent, x.index()));
                parent[a] = b;
            }
        }
        let roots: Vec<usize> = (0..n).map(|x| find(&mut parent, x)).collect();
        let mut size = vec![0usize; n];
        for &r in &roots {
            size[r] += 1;
        }
        roots.iter().map(|&r| (r, size[r])).collect()
    }
}

#[cfg(test)]
mod tests;

/// executes-before as a transitive closure of program order (launch events
/// first), participates-in and the execution's extra edges: `before[e]`
/// holds every event that executes before `e`. `Err` lists the events on a
/// cycle.
pub fn executes_before(exec: &Execution) -> Result<Vec<Bits>, Vec<EventId>> {
    closure(exec, false)
}

/// The transitive closure of executes-before's edges, with every bmo's
/// order too when `bmo` is set (the order every interleaving of the
/// execution follows).
fn closure(exec: &Execution, bmo: bool) -> Result<Vec<Bits>, Vec<EventId>> {
    let n = exec.events.len();
    let launch: Vec<EventId> = exec.ids().filter(|&e| exec.event(e).thread.is_none()).collect();
    let mut preds: Vec<Vec<EventId>> = vec![Vec::new(); n];
    for w in launch.windows(2) {
        preds[w[1].index()].push(w[0]);
    }
    for evs in &exec.program_order {
        if let (Some(&first), Some(&l)) = (evs.first(), launch.last()) {
            preds[first.index()].push(l);
        }
        for w in evs.windows(2) {
            preds[w[1].index()].push(w[0]);
        }
    }
    for w in exec.ids() {
        for &x in exec.participants(w) {
            preds[w.index()].push(x);
        }
    }
    for &(a, b) in &exec.extra_eb {
        preds[b.index()].push(a);
    }
    if bmo {
        for o in &exec.bmo {
            for w in o.windows(2) {
                preds[w[1].index()].push(w[0]);
            }
        }
    }
    // Kahn's algorithm for a topological order.
    let mut indeg: Vec<usize> = preds.iter().map(|p| p.len()).collect();
    let mut succs: Vec<Vec<EventId>> = vec![Vec::new(); n];
    for (e, ps) in preds.iter().enumerate() {
        for p in ps {
            succs[p.index()].push(EventId(e as u32));
        }
    }
    let mut ready: Vec<EventId> = exec.ids().filter(|e| indeg[e.index()] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(n);
    while let Some(e) = ready.pop() {
        order.push(e);
        for &s in &succs[e.index()] {
            indeg[s.index()] -= 1;
            if indeg[s.index()] == 0 {
                ready.push(s);
            }
        }
    }
    if order.len() != n {
        return Err(exec.ids().filter(|e| indeg[e.index()] > 0).collect());
    }
    let mut before = vec![Bits::new(n); n];
    for e in order {
        let mut acc = Bits::new(n);
        for &p in &preds[e.index()] {
            acc.union_with(&before[p.index()]);
            acc.set(p.index());
        }
        before[e.index()] = acc;
    }
    Ok(before)
}
