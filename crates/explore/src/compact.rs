//! Forgetting settled history, so that loops which synchronize repeat their
//! states (see docs/explorer.md, "History compaction").
//!
//! An event is *settled* when it executes before the current point of every
//! thread that can still act; it is *forgettable* when, in addition, every
//! event that executes before it is settled too, and it is not kept: each
//! live thread's last event and its latest join or drop on each barrier stay
//! (program order and joined-before need them). A barrier's whole bmo and its
//! waits are forgotten together, once all of them are forgettable, its phases
//! are complete and no wait can still take one; a launch init with the
//! current expected count then stands for them. On a barrier whose phase
//! numbers matter to tokens or parity waits the numbers keep counting (the
//! launch init records where); token barriers of programs that may store a
//! token to memory are never forgotten, and an
//! invalidated barrier (`mbarrier.inval`) keeps its history and its inval
//! until it is initialized again.
//!
//! Why no verdict changes: the rule checker judges the whole execution right
//! before anything is forgotten, and a settled event executes before every
//! future event, so it cannot race with one, a future drop follows every wait
//! its arrive took part in, no future wait can take its phase, and it cannot
//! sit between a participant and its wait of a phase that is still open:
//! a barrier keeps its completed phases while some operation of its open
//! phase executes before one of its completed waits (phase-with judges
//! such a pair only once a wait takes the open phase). Executes-before
//! between kept events that ran through forgotten ones is kept as explicit
//! edges. The explorer's own history
//! rules (`rules.rs`: phase-with, arrive-then-drop, race) judge the state
//! at the same point.

use crate::rules::{ExecutesBefore, HistoryFindings};
use crate::state::{HKind, MapLists, State, Status, LAUNCH, START};
use crate::system::System;
use crate::witness::ExecNames;
use bc_graph::bits::Bits;
use bc_graph::*;
use rustc_hash::FxHashMap as HashMap;

/// Compaction checks the budget every this many events of its quadratic
/// loops.
const CHECK_EVERY: usize = 64;

/// A participant list of the state and its waits (execution indices).
type ListWaits<'a> = (&'a [(u32, u32)], Vec<usize>);

/// Per code and pc, per declaration: whether some instruction reachable
/// from there names it ([`reachable_decls`]).
pub(crate) type Reach = Vec<Vec<Vec<bool>>>;

/// Whether an operation of the barrier's open phase executes before one
/// of `events`' completed waits. Phase-with ("Execution Model",
/// barrier-phase-with) then has a case it cannot judge yet: such an open
/// `X` between a participant `A` of the wait `W` and `W`, or such an open
/// `A` before a completed wait `X` of another phase and the future wait
/// `W` on `A`'s phase, is a violation only once a wait takes the open
/// phase. Both the rule checker and the explorer then need the completed
/// wait and its participants, so the barrier's completed phases are not
/// forgotten while this holds. (An open operation cannot execute before a
/// completed phase's arrive or drop: bmo orders them the other way.)
fn open_phase_before_completed_wait(
    exec: &Execution,
    before: &[Bits],
    events: &[usize],
    open: &[(u32, u32)],
    ids: &crate::witness::EventIds,
) -> bool {
    let open: Vec<usize> = open.iter().filter_map(|k| ids.get(k)).map(|x| x.index()).collect();
    !open.is_empty()
        && events.iter().any(|&w| {
            matches!(exec.events[w].kind, EventKind::Wait { completed: true, .. })
                && open.iter().any(|&x| before[w].get(x))
        })
}

/// Per code and pc, the declarations (of `n`) that some instruction
/// reachable from there names, as `own` lists them per instruction (a
/// backward fixed point over the control-flow graph).
pub(crate) fn reachable_decls(p: &Program, n: usize, own: impl Fn(&InstrKind, &mut Vec<bool>)) -> Reach {
    // A copy's issue names what its agents' code names: the agents'
    // start barriers (the issuer holds their instances), the copy's
    // barrier and its locations.
    let own = |kind: &InstrKind, acc: &mut Vec<bool>| {
        own(kind, acc);
        if let InstrKind::CopyIssue { site, .. } = kind {
            for k in 0..p.copy_site_agents(*site) {
                for i in &p.codes[p.copy_code(*site, k).index()].instrs {
                    own(&i.kind, acc);
                }
            }
        }
    };
    p.codes
        .iter()
        .map(|code| {
            let len = code.instrs.len();
            let mut out = vec![vec![false; n]; len + 1];
            let mut changed = true;
            while changed {
                changed = false;
                for pc in (0..len).rev() {
                    let mut acc = out[pc].clone();
                    own(&code.instrs[pc].kind, &mut acc);
                    for succ in code.successors(pc as u32) {
                        for (x, y) in acc.iter_mut().zip(&out[succ as usize]) {
                            *x |= *y;
                        }
                    }
                    if acc != out[pc] {
                        out[pc] = acc;
                        changed = true;
                    }
                }
            }
            out
        })
        .collect()
}

/// The barrier declarations a barrier instruction reachable from each pc
/// operates on (history compaction).
pub(crate) fn reachable_barriers(p: &Program) -> Reach {
    let nb = p.threads.first().map_or(0, |t| t.barriers.len());
    reachable_decls(p, nb, |kind, acc| {
        if let InstrKind::Barrier { sel, .. } = kind {
            for d in sel.decls(&p.groups) {
                acc[d as usize] = true;
            }
        }
    })
}

/// The barrier declarations a parity wait reachable from each pc waits on
/// (a barrier's last completed phase stays while one may still take it:
/// `System::collect`).
pub(crate) fn reachable_parity_waits(p: &Program) -> Reach {
    let nb = p.threads.first().map_or(0, |t| t.barriers.len());
    reachable_decls(p, nb, |kind, acc| {
        if let InstrKind::Barrier {
            op: BarrierOp::Wait(w),
            sel,
            ..
        } = kind
        {
            if w.parity.is_some() {
                for d in sel.decls(&p.groups) {
                    acc[d as usize] = true;
                }
            }
        }
    })
}

/// The location declarations a plain access (a `write` only, with
/// `writes_only`) reachable from each pc operates on (compaction forgets
/// no other location event; access fusion).
pub(crate) fn reachable_accesses(p: &Program, writes_only: bool) -> Reach {
    let nl = p.threads.first().map_or(0, |t| t.locs.len());
    reachable_decls(p, nl, |kind, acc| match kind {
        InstrKind::Write { decl } => acc[*decl as usize] = true,
        InstrKind::Read { decl } if !writes_only => acc[*decl as usize] = true,
        _ => {}
    })
}

/// Barriers whose history is never forgotten: when some store, exchange
/// or compare-and-swap writes a register value to memory (a token could
/// travel to another thread), those of tokens. (Barriers of parity waits
/// were pinned too, for their last completed phase; that phase now stays
/// in the barrier's record while a parity wait may take it,
/// `System::collect`, and compaction waits for it like for any pending
/// phase; their phase numbers keep counting, as tokens' do.)
pub(crate) fn pinned_barriers(p: &Program) -> Vec<bool> {
    fn reads_reg(e: &CExpr) -> bool {
        match e {
            CExpr::Reg(_) | CExpr::ThreadReg(..) => true,
            CExpr::Unary(_, x) => reads_reg(x),
            CExpr::Binary(_, a, b) => reads_reg(a) || reads_reg(b),
            _ => false,
        }
    }
    let escapes = p.codes.iter().flat_map(|c| &c.instrs).any(|i| match &i.kind {
        InstrKind::Store { value, .. } | InstrKind::Rmw { value, .. } => reads_reg(value),
        InstrKind::Cas { expected, new, .. } => reads_reg(expected) || reads_reg(new),
        _ => false,
    });
    let mut out = vec![false; p.barriers.len()];
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier { op, sel, result } = &ins.kind else {
                continue;
            };
            let decls = sel.decls(&p.groups);
            let token = matches!(op, BarrierOp::Wait(w) if w.token.is_some())
                || matches!(result, Some(BarrierResult::Token(_)));
            if token && escapes {
                for d in decls {
                    if let Some(b) = t.barriers[d as usize] {
                        out[b.index()] = true;
                    }
                }
            }
        }
    }
    // A token wait may return on a phase its thread took by another form
    // (`HKind::Wait::took`), which forgetting the phase would lose.
    for (o, m) in out.iter_mut().zip(mixed_waits(p)) {
        *o |= m;
    }
    out
}

/// Per barrier: some thread can reach both a token wait on it and a parity
/// or plain wait on it.
pub(crate) fn mixed_waits(p: &Program) -> Vec<bool> {
    let nb = p.barriers.len();
    let mut out = vec![false; nb];
    // Per barrier, the last thread (plus one) seen to reach a token wait
    // on it, and a wait of another form: marks of earlier threads are
    // stale, so no per-thread table of every barrier is cleared (that was
    // quadratic, issue 33).
    let (mut token, mut other) = (vec![0usize; nb], vec![0usize; nb]);
    for (i, t) in p.threads.iter().enumerate() {
        let mark = i + 1;
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier {
                op: BarrierOp::Wait(w),
                sel,
                ..
            } = &ins.kind
            else {
                continue;
            };
            for d in sel.decls(&p.groups) {
                if let Some(b) = t.barriers[d as usize] {
                    let b = b.index();
                    if w.token.is_some() {
                        token[b] = mark;
                    } else {
                        other[b] = mark;
                    }
                    out[b] |= token[b] == mark && other[b] == mark;
                }
            }
        }
    }
    out
}

/// What [`System::compact`] leaves to its caller: the execution right
/// before compaction (with its names) for the rule checker, what the
/// explorer's history rules found in it, and where each kept event moved
/// (old position in its thread to new).
pub(crate) struct Compacted<'p> {
    pub exec: Execution,
    /// executes-before's closure of `exec` (`bc_rules::executes_before`).
    pub before: Vec<Bits>,
    pub names: ExecNames<'p>,
    pub found: HistoryFindings,
    pub remap: HashMap<(u32, u32), (u32, u32)>,
}

/// What a thread's start executes before once compaction forgets its
/// first event ([`System::launch_starts`]): kept events (ids of the
/// execution before compaction) and live threads' next event slots, none
/// of which another of them executes before. It may list the thread's own
/// events and slot, which no summary edge needs.
#[derive(Debug)]
struct Frontier {
    events: Vec<usize>,
    slots: Vec<usize>,
}

impl<'p> System<'p> {
    /// Forgets the forgettable history of `s` (threads named under the
    /// renaming `ident`). When it forgets anything, it returns the
    /// execution as it was right before, which the caller must have the
    /// rule checker judge (nothing it forgot can be judged later), and
    /// what the explorer's own history rules found in it
    /// ([`System::history_rules`]).
    ///
    /// `eb`: the explorer's executes-before of `s`, if computed (it is, if
    /// it is smaller than the execution's closure). `verify` (`SearchOptions::verify_encoding`): run the whole
    /// compaction even where [`System::may_forget`] says nothing can be
    /// forgotten, and check that nothing is.
    ///
    /// `budget` (during the search; none in a witness replay) is checked
    /// every [`CHECK_EVERY`] events of its quadratic loops: once it halts
    /// the search, compaction stops part way and returns `None`, and the
    /// caller discards the state (a kernel of a thousand threads and more
    /// spent tens of seconds here past a `--timeout`).
    pub(crate) fn compact(
        &self,
        s: &mut State,
        ident: &[u32],
        eb: &mut Option<ExecutesBefore>,
        budget: Option<&crate::budget::Budget>,
        verify: bool,
    ) -> Option<Compacted<'p>> {
        let over = || budget.is_some_and(|b| b.check().is_some());
        let halted = |i: usize| i % CHECK_EVERY == CHECK_EVERY - 1 && over();
        self.observe_copies(s, eb);
        // Cheap test first: a barrier with forgettable complete phases, or
        // plain accesses, invals or operations with no effect that might be
        // forgotten (a loop of them must still repeat its state).
        let barrier_ready = (0..self.p.barriers.len()).any(|b| {
            let start = (s.bmo[b].first() == Some(&(LAUNCH, b as u32))) as u32;
            !self.an.pinned[b] && !s.bars[b].invalid && s.bars[b].done.is_empty() && s.bars[b].settled_len > start
        });
        let others = s.hist.iter().flatten().any(|e| match e.kind {
            HKind::Read | HKind::Write | HKind::NoEffect(_) | HKind::Fence(_) => true,
            HKind::Inval => !self.still_invalid(s, e.target),
            _ => false,
        });
        if !barrier_ready && !others {
            return None;
        }
        let nt = s.threads.len();
        // A kernel not launched yet will start threads whose starts the
        // history must still order; a copy agent not started yet joins
        // nothing and starts only after an issue that names what it will
        // touch (`reachable_decls`).
        let copy = |t: usize| self.p.threads[t].kind == ThreadKind::Copy;
        if (0..nt).any(|t| s.threads[t].status == Status::NotLaunched && !copy(t)) {
            return None;
        }
        let alive: Vec<usize> = (0..nt).filter(|&t| s.threads[t].status == Status::Running).collect();
        // The explorer's executes-before holds a prefix length per event
        // and thread with events; the closure a bit per pair of events.
        // Where phase sorting did not compute it, it is computed where it
        // is small or smaller than the closure (not for a grid phase of
        // 4,096 threads: 8,192 events times 4,096 columns, 128 MiB,
        // against the closure's 8 MiB).
        let width = s.hist.iter().filter(|h| !h.is_empty()).count();
        let events: usize = s.hist.iter().map(Vec::len).sum();
        if eb.is_none() && (width * events <= 1 << 20 || width * 32 <= events) {
            *eb = Some(ExecutesBefore::of(s));
        }
        let may = eb.as_ref().is_none_or(|vc| self.may_forget(s, vc, &alive));
        if !may && !verify {
            return None;
        }
        let (mut exec, names, ids) = self.execution_ids(s, &[], ident);
        exec.partial = true;
        let Ok(before) = bc_rules::executes_before(&exec) else {
            return None;
        };
        // Where a barrier orders memory only through fences, a plain access
        // is settled once it is ordered by that weaker order before every
        // future access (what the race rule reads). Nothing after an
        // unsettled event is ever forgotten, so the order between the
        // accesses kept never runs through a forgotten event or a summary.
        let memory = if self.p.fence_events {
            match bc_rules::memory_order(&exec) {
                Ok(m) => Some(m),
                Err(_) => return None,
            }
        } else {
            None
        };
        let n = exec.events.len();
        let rows_for = |target: Target| match (&memory, target) {
            (Some(m), Target::Loc(_)) => m,
            _ => &before,
        };
        let thread_of = |e: usize| exec.events[e].thread;
        let next: Vec<u32> = (0..nt).map(|u| s.hist[u].len() as u32).collect();
        let lasts: Vec<Option<usize>> = (0..nt)
            .map(|u| {
                s.hist[u]
                    .len()
                    .checked_sub(1)
                    .map(|po| ids.at(u as u32, po as u32).index())
            })
            .collect();
        let last = |u: usize| lasts[u];
        // Settled: executes before every future event of every thread that
        // may still operate on the same barrier or location.
        let mut stop = false;
        // Per target, the live threads that may still operate on it (once
        // per target, not per event: a grid has thousands of live threads
        // and a few objects in its history).
        // A plain read interacts only with writes: for it, the threads
        // that may still write its location.
        let key = |ev: &bc_graph::Event| (ev.target, matches!(ev.kind, EventKind::Read));
        let mut touchers: HashMap<(Target, bool), Vec<usize>> = HashMap::default();
        for ev in exec.events.iter().filter(|ev| ev.thread.is_some()) {
            let (target, read) = key(ev);
            touchers
                .entry((target, read))
                .or_insert_with(|| self.touchers(s, &alive, target, read));
        }
        // Per target, the events before every toucher's last event (the
        // intersection of their predecessor sets, word by word; none when
        // a toucher has no event). An event of a toucher other than its
        // last is before that last by program order, so the intersection
        // answers for it too; a toucher's last event is asked one by one.
        let masks: HashMap<(Target, bool), Option<Vec<u64>>> = touchers
            .iter()
            .map(|(k, us)| {
                let lasts: Option<Vec<usize>> = us.iter().map(|&u| last(u)).collect();
                let rows = rows_for(k.0);
                let mask = lasts.map(|ls| {
                    let mut m = vec![!0u64; n.div_ceil(64).max(2)];
                    for l in ls {
                        for (x, &w) in m.iter_mut().zip(rows[l].as_words()) {
                            *x &= w;
                        }
                    }
                    m
                });
                (*k, mask)
            })
            .collect();
        // A copy's completion nothing of the program is ordered after yet
        // stays (copy-not-waited judges it at the end).
        let copy_rule = self.p.has_copies() && self.p.model.rules.has(bc_models::Rule::CopyNotWaited);
        let users: Vec<usize> = (0..nt)
            .filter(|&u| copy_rule && self.p.threads[u].kind != ThreadKind::Copy)
            .filter_map(|u| lasts[u])
            .collect();
        let unobserved = |e: usize, ev: &bc_graph::Event, t: ThreadId| {
            copy_rule
                && self.p.copy_performer(t)
                && match ev.kind {
                    EventKind::Arrive { .. } => true,
                    EventKind::Tx { delta } => delta <= 0,
                    _ => false,
                }
                && !users.iter().any(|&l| before[l].get(e))
        };
        let settled: Vec<bool> = (0..n)
            .map(|e| {
                stop |= halted(e);
                let ev = &exec.events[e];
                let Some(t) = ev.thread else { return false };
                if unobserved(e, ev, t) {
                    return false;
                }
                let us = &touchers[&key(ev)];
                if lasts[t.index()] == Some(e) && us.contains(&t.index()) {
                    let rows = rows_for(ev.target);
                    return us
                        .iter()
                        .all(|&u| u == t.index() || last(u).is_some_and(|l| rows[l].get(e)));
                }
                masks[&key(ev)].as_ref().is_some_and(|m| m[e / 64] >> (e % 64) & 1 == 1)
            })
            .collect();
        // Everything that executes before it is settled: no thread event
        // outside `settled` in its predecessor set (word by word, where a
        // test per pair was n^2 lookups: 67M for a grid phase of 4,096
        // threads).
        let mut unsettled = Bits::new(n);
        for p in (0..n).filter(|&p| !settled[p] && thread_of(p).is_some()) {
            unsettled.set(p);
        }
        let preds_settled: Vec<bool> = (0..n)
            .map(|e| {
                stop |= halted(e);
                !stop
                    && (before[e].as_words().iter())
                        .zip(unsettled.as_words())
                        .all(|(a, u)| a & u == 0)
            })
            .collect();
        if stop {
            return None;
        }
        let closed: Vec<bool> = (0..n).map(|e| settled[e] && preds_settled[e]).collect();
        let forget = |e: usize| closed[e];
        let mut by_id: Vec<Option<(u32, u32)>> = vec![None; n];
        for (k, v) in ids.iter() {
            by_id[v.index()] = Some(k);
        }
        // Per arrive: some wait on its phase is its own thread's or
        // executes before its thread's future (arrive-then-drop, below).
        // One pass over the waits' participants, not one per arrive (that
        // was T^3 on a phase of T threads).
        let mut waited = vec![false; n];
        // The waits of one phase share its member list (`state::Members`):
        // per distinct list, the threads of its waits and the set of them.
        let mut by_list: HashMap<*const Vec<(u32, u32)>, ListWaits> = HashMap::default();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if let HKind::Wait { participants, .. } = &ev.kind {
                    let w = ids.at(t as u32, po as u32).index();
                    (by_list.entry(std::sync::Arc::as_ptr(participants)))
                        .or_insert_with(|| (participants.as_slice(), Vec::new()))
                        .1
                        .push(w);
                }
            }
        }
        let mut lists: Vec<ListWaits> = by_list.into_values().collect();
        lists.sort_unstable_by_key(|(_, ws)| ws[0]);
        for (i, (list, ws)) in lists.iter().enumerate() {
            if halted(i) {
                return None;
            }
            let mut threads = Bits::new(nt);
            let mut set = Bits::new(n);
            for &w in ws {
                set.set(w);
                if let Some(t) = thread_of(w) {
                    threads.set(t.index());
                }
            }
            for &k in list.iter().filter(|k| k.0 != LAUNCH) {
                let Some(x) = ids.get(&k).map(|x| x.index()) else {
                    continue;
                };
                let t = k.0 as usize;
                if !waited[x] && (threads.get(t) || last(t).is_some_and(|l| before[l].meets(&set))) {
                    waited[x] = true;
                }
            }
        }
        let mut drop = vec![false; n];
        let mut forgotten = Vec::new();
        let phase_with = self.p.model.rules.has(bc_models::Rule::PhaseWith);
        for b in 0..self.p.barriers.len() {
            let bar = &s.bars[b];
            let start = (s.bmo[b].first() == Some(&(LAUNCH, b as u32))) as usize;
            // An invalidated barrier keeps its history (below).
            if self.an.pinned[b] || bar.invalid || !bar.done.is_empty() || (bar.settled_len as usize) <= start {
                continue;
            }
            // Everything on the barrier but joins and the open phase.
            let open: Vec<(u32, u32)> = bar.open.as_ref().map_or(Vec::new(), |p| p.members.to_vec());
            let target = Target::Barrier(BarrierId(b as u32));
            let events: Vec<usize> = (0..n)
                .filter(|&e| {
                    let ev = &exec.events[e];
                    ev.thread.is_some()
                        && ev.target == target
                        && !matches!(ev.kind, EventKind::Join)
                        && by_id[e].is_none_or(|k| !open.contains(&k))
                })
                .collect();
            // Completed waits need only their predecessors settled (they
            // are the last events of their threads); every arrive must have
            // a wait on its phase that precedes any future drop of its
            // thread (arrive-then-drop), where a thread can drop the
            // barrier at all (an mbarrier's producers arrive and never
            // wait on it, and no thread drops it).
            let droppable = self.an.droppable[b];
            if phase_with && open_phase_before_completed_wait(&exec, &before, &events, &open, &ids) {
                continue;
            }
            let ok = events.iter().all(|&e| match &exec.events[e].kind {
                EventKind::Wait { completed: true, .. } => preds_settled[e],
                EventKind::Arrive { .. } => closed[e] && (waited[e] || !droppable),
                _ => closed[e],
            });
            if !events.is_empty() && ok {
                for e in events {
                    drop[e] = true;
                }
                forgotten.push(b);
            }
        }
        for (e, d) in drop.iter_mut().enumerate().take(n) {
            // No phase, bmo or wait refers to these: forgotten alone, plain
            // accesses and invals once forgettable, an inval only once its
            // barrier is initialized again (before, the rule checker needs
            // it, and the bmo before it, to judge later uses: invalid-barrier;
            // an inval of an invalid barrier has no effect, so a barrier
            // keeps at most one). An operation with no
            // effect is forgotten at once: the rules that read it (usage.rs
            // of bc-rules) judge it alone or as the later event of a pair,
            // and it has no executes-before edge to another thread, so
            // program order through it stays between the kept events.
            let kind = &exec.events[e].kind;
            if matches!(kind, EventKind::NoEffect { .. })
                || (forget(e) && matches!(kind, EventKind::Read | EventKind::Write))
                || (forget(e) && matches!(kind, EventKind::Inval) && !self.still_invalid(s, exec.events[e].target))
            {
                *d = true;
            }
        }
        // A join stays while a kept event of its thread follows it on its
        // barrier or on one exclusive with it: joined-before reads it.
        for t in 0..nt {
            for (po, ev) in s.hist[t].iter().enumerate() {
                let e = ids.at(t as u32, po as u32).index();
                if !matches!(ev.kind, HKind::Join) || !forget(e) {
                    continue;
                }
                let Target::Barrier(b) = ev.target else { continue };
                // The thread's latest join or drop on `b`, if it is this join
                // and the thread lives on: its future operations need it.
                let latest = s.hist[t]
                    .iter()
                    .rposition(|l| l.target == ev.target && matches!(l.kind, HKind::Join | HKind::Drop));
                let alive_t = s.threads[t].status == Status::Running;
                let needed = (alive_t && latest == Some(po))
                    || s.hist[t][po + 1..].iter().enumerate().any(|(k, later)| {
                        let l = ids.at(t as u32, (po + 1 + k) as u32).index();
                        !drop[l]
                            && match later.target {
                                Target::Barrier(c) => c == b || exec.mutually_exclusive(b, c),
                                Target::Loc(_) | Target::None => false,
                            }
                    });
                if !needed {
                    drop[e] = true;
                }
            }
        }
        if !drop.iter().any(|&d| d) {
            return None;
        }
        assert!(may, "compaction forgets events where may_forget said it would not");
        // The explorer's history rules judge the history before it is
        // forgotten, as the rule checker does.
        if over() {
            return None;
        }
        let found = self.history_rules(s, ident);
        let succ = Successors::of(&exec, &before);
        let starts = self.launch_starts(s, &exec, &before, &succ, &lasts, &drop, &alive);
        let old_extra = std::mem::take(&mut s.extra);
        // The new history: kept events, renumbered per thread.
        let mut remap: HashMap<(u32, u32), (u32, u32)> = HashMap::default();
        for t in 0..nt {
            let mut kept = Vec::new();
            for (po, ev) in s.hist[t].iter().enumerate() {
                let e = ids.at(t as u32, po as u32).index();
                if !drop[e] {
                    remap.insert((t as u32, po as u32), (t as u32, kept.len() as u32));
                    kept.push(ev.clone());
                }
            }
            s.hist[t] = kept;
        }
        let re = |k: &(u32, u32)| if k.0 == LAUNCH { Some(*k) } else { remap.get(k).copied() };
        // Each shared participant list once (`state::Members`).
        let mut lists = MapLists::new(|l: &[(u32, u32)]| l.iter().filter_map(re).collect());
        for evs in &mut s.hist {
            for ev in evs {
                if let HKind::Wait { participants, .. } = &mut ev.kind {
                    lists.apply(participants);
                }
            }
        }
        // The tokens registers hold (barrier, phase), for `abandoned`.
        let held: Vec<(usize, u32)> = if s.bars.iter().any(|b| !b.abandoned.is_empty()) {
            s.threads
                .iter()
                .flat_map(|t| t.regs.iter())
                .filter_map(|&v| crate::step::decode_token(v))
                .collect()
        } else {
            Vec::new()
        };
        for (b, order) in s.bmo.iter_mut().enumerate() {
            if forgotten.contains(&b) {
                // A launch init stands for the forgotten complete phases.
                let bar = &mut s.bars[b];
                let rest: Vec<(u32, u32)> = order[bar.settled_len as usize..].iter().filter_map(re).collect();
                *order = std::iter::once((LAUNCH, b as u32)).chain(rest).collect();
                bar.base = Some(bar.after_completion);
                bar.settled_len = 1;
                if self.an.token_barriers[b] && !self.an.tokens[b] {
                    // Parity waits read the parity alone: number the
                    // current phase 2 or 3, keeping its parity, so that a
                    // loop repeats its state (not 0 or 1: a base above 0
                    // tells the rule checker that phases were forgotten,
                    // and a wait after 0 would take a fresh barrier's
                    // virtual phase).
                    let cur = bar.open.as_ref().map_or(bar.next_phase, |ph| ph.number);
                    let p = 2 + cur.wrapping_sub(bar.epoch_start) % 2;
                    match &mut bar.open {
                        Some(ph) => {
                            ph.number = p;
                            bar.next_phase = p + 1;
                        }
                        None => bar.next_phase = p,
                    }
                    bar.epoch_start = 0;
                    bar.phase_base = p;
                } else if self.an.token_barriers[b] {
                    // Tokens hold phase numbers: keep counting. An
                    // abandoned phase stays listed while a register may
                    // still hold a token of it (tokens that can travel
                    // through memory pin their barrier: `pinned_barriers`).
                    bar.phase_base = bar.open.as_ref().map_or(bar.next_phase, |ph| ph.number);
                    bar.abandoned.retain(|n| held.contains(&(b, *n)));
                } else {
                    match &mut bar.open {
                        Some(ph) => {
                            ph.number = 0;
                            bar.next_phase = 1;
                        }
                        None => bar.next_phase = 0,
                    }
                    bar.epoch_start = 0;
                }
            } else {
                *order = order.iter().filter_map(re).collect();
            }
        }
        // A debt of arrive-before-wait on a forgotten phase: no wait can take
        // that phase any more (a barrier is forgotten only with no completed
        // phase left to wait on), and its number may come again.
        for th in &mut s.threads {
            for debt in &mut th.owes {
                if forgotten.contains(&(debt.0 as usize)) && debt.1 != crate::state::COLLECTIVE_DEBT {
                    debt.1 = crate::state::FORGOTTEN_PHASE;
                }
            }
        }
        for bar in &mut s.bars {
            for ph in bar.open.iter_mut().chain(bar.done.iter_mut()) {
                lists.apply(&mut ph.members);
            }
        }
        // Executes-before between kept events through forgotten ones: only
        // a settled event can reach a kept event that way. A settled event
        // also executes before every future event of every live thread: an
        // anchor edge to each thread's next event slot.
        let kept_before = |u: usize, k: u32| -> u32 {
            (0..k.min(next[u]))
                .filter(|&po| !drop[ids.at(u as u32, po).index()])
                .count() as u32
                + k.saturating_sub(next[u])
        };
        let mut extra = crate::state::EdgeSets::new(s.hist.iter().map(|h| h.len() as u32 + 1));
        // Old summary edges stay where the new ones below cannot stand for
        // them: into a thread's next event slot it has not filled yet (no
        // event of the execution shows them), or from a source that is not
        // closed (none is: an edge's source was closed when it was made,
        // and stays so; kept for safety).
        for ((t, po), (u, k)) in old_extra.iter().flat_map(crate::state::Fan::edges) {
            let Some(x) = remap.get(&(t, po)) else { continue };
            let source_closed = ids.get(&(t, po)).is_some_and(|e| closed[e.index()]);
            if k >= next[u as usize] || !source_closed {
                extra.insert(*x, (u, kept_before(u as usize, k)));
            }
        }
        // From each kept closed event, edges to the least kept events it
        // executes before (a transitive reduction: the rest follow from
        // these, from program order and from participation, so
        // executes-before among kept events stays what it was; see
        // docs/explorer.md, "History compaction"). The least ones are
        // among the first kept events on each path ([`first_kept`]).
        let kept_event: Vec<bool> = (0..n).map(|e| !drop[e] && thread_of(e).is_some()).collect();
        let sources: Vec<bool> = (0..n).map(|a| kept_event[a] && closed[a]).collect();
        let firsts = first_kept(&succ, &kept_event, &sources);
        // Per live thread, the events that execute before its next event:
        // its last event, the sources of old summary edges into its next
        // slot (kept or forgotten now), and everything before those.
        let mut into_slot: Vec<Vec<usize>> = vec![Vec::new(); nt];
        for ((t, po), (u, k)) in old_extra.iter().flat_map(crate::state::Fan::edges) {
            if po != START && k >= next[u as usize] {
                if let Some(e) = ids.get(&(t, po)) {
                    into_slot[u as usize].push(e.index());
                }
            }
        }
        let before_slot: Vec<(usize, Bits)> = alive
            .iter()
            .map(|&u| {
                let mut set = Bits::new(n);
                for p in last(u).into_iter().chain(into_slot[u].iter().copied()) {
                    set.set(p);
                    set.union_with(&before[p]);
                }
                (u, set)
            })
            .collect();
        for (i, a) in (0..n).filter(|&a| sources[a]).enumerate() {
            if halted(i) {
                // The state is half rewritten; the caller discards it.
                return None;
            }
            let Some(x) = by_id[a].and_then(|k| re(&k)) else {
                continue;
            };
            let Some(first) = &firsts[a] else { continue };
            let least: Vec<usize> = first
                .reached
                .ones()
                .filter(|&c| !before[c].meets(&first.reached))
                .collect();
            for &c in &least {
                if thread_of(c) == thread_of(a) || first.direct.get(c) {
                    continue;
                }
                if let Some(y) = by_id[c].and_then(|k| re(&k)) {
                    extra.insert(x, y);
                }
            }
            // An anchor edge to the next event slot of each live thread
            // whose next event it executes before, unless a least kept
            // event does too (that one's edges, or program order, carry
            // the order).
            for (u, set) in &before_slot {
                if Some(ThreadId(*u as u32)) != thread_of(a) && set.get(a) && !least.iter().any(|&c| set.get(c)) {
                    extra.insert(x, (*u as u32, kept_before(*u, next[*u])));
                }
            }
        }
        // Each distinct frontier as new slots once.
        let mut slots_of: HashMap<*const Frontier, Bits> = HashMap::default();
        for (t, frontier) in &starts {
            let set = slots_of.entry(std::rc::Rc::as_ptr(frontier)).or_insert_with(|| {
                let events = (frontier.events.iter()).filter_map(|&c| by_id[c].and_then(|k| re(&k)));
                let slots = (frontier.slots.iter()).map(|&u| (u as u32, kept_before(u, next[u])));
                extra.slot_set(events.chain(slots))
            });
            extra.insert_set((*t as u32, START), set);
        }
        if over() {
            return None;
        }
        s.extra = extra.fans();
        // Everything is judged before any of it is forgotten: the caller
        // judges the execution as it was.
        Some(Compacted {
            exec,
            before,
            names,
            found,
            remap,
        })
    }

    /// Clears `COPY_PENDING_REG` of each copying agent whose latest
    /// completion now executes before the latest event of some thread that
    /// is not an agent: that copy was waited for, and compaction may forget
    /// what orders it (copy-not-waited reads the flag at the end). Run on
    /// every state compaction sees, before anything can return early, so
    /// that the flag is a function of the history: clearing it only where
    /// compaction went on to forget something let two paths reach one
    /// history with different flags (the GEMM mainloop had 90,652 states
    /// instead of 59,274).
    fn observe_copies(&self, s: &mut State, eb: &mut Option<ExecutesBefore>) {
        if !self.p.has_copies() || !self.p.model.rules.has(bc_models::Rule::CopyNotWaited) {
            return;
        }
        let pending: Vec<(usize, usize)> = self.pending_completions(s).collect();
        for (a, i) in pending {
            let vc = eb.get_or_insert_with(|| ExecutesBefore::of(s));
            if self.completion_observed(s, vc, a, i) {
                s.threads[a].regs[bc_graph::COPY_PENDING_REG.index()] = 0;
            }
        }
    }

    /// Whether [`System::compact`] may forget anything of `s`: a necessary
    /// condition, over the explorer's executes-before (`vc`, per event a
    /// prefix length per thread) instead of the execution's closure. In a
    /// warp-specialized pipeline 99% of the states have nothing to forget,
    /// and building the execution and its closure (quadratic in a history
    /// of a thousand events) to find that out was most of the time per
    /// state; this test is O(events x threads).
    ///
    /// It follows `compact`'s definitions: an event is settled when every
    /// live thread that may still touch its object (may write it, for a
    /// read) has a last event it executes before (its own thread's last
    /// event need not: program order), and closed when every event before
    /// it is settled too (per thread, the events before it are a prefix,
    /// which must lie before the thread's first unsettled event).
    /// Something may be forgotten only if some event has no effect, or a
    /// plain access, an inval of a barrier initialized since or a join is
    /// closed, or some barrier that `compact` would consider has all its
    /// events outside its open phase closed (a completed wait: everything
    /// before it settled). Under `verify_encoding` the search checks that
    /// `compact` forgets nothing where this says so.
    pub(crate) fn may_forget(&self, s: &State, vc: &ExecutesBefore, alive: &[usize]) -> bool {
        if s.hist.iter().flatten().any(|e| matches!(e.kind, HKind::NoEffect(_))) {
            return true;
        }
        let nt = s.threads.len();
        let last = |u: usize| s.hist[u].len().checked_sub(1).map(|po| (u as u32, po as u32));
        let mut touchers: HashMap<(Target, bool), Vec<usize>> = HashMap::default();
        let mut settled: Vec<Vec<bool>> = Vec::with_capacity(nt);
        for (t, h) in s.hist.iter().enumerate() {
            let mut row = Vec::with_capacity(h.len());
            for (po, ev) in h.iter().enumerate() {
                let read = matches!(ev.kind, HKind::Read);
                let us = touchers
                    .entry((ev.target, read))
                    .or_insert_with(|| self.touchers(s, alive, ev.target, read));
                let e = (t as u32, po as u32);
                let own_last = last(t) == Some(e) && us.contains(&t);
                row.push(
                    us.iter()
                        .all(|&u| (own_last && u == t) || last(u).is_some_and(|l| vc.eb(e, l))),
                );
            }
            settled.push(row);
        }
        // Per thread, its first unsettled event (its event count if none).
        let first_unsettled: Vec<u32> = settled
            .iter()
            .map(|row| row.iter().position(|&x| !x).unwrap_or(row.len()) as u32)
            .collect();
        let with_events: Vec<usize> = (0..nt).filter(|&u| !s.hist[u].is_empty()).collect();
        let preds_settled = |e: (u32, u32)| with_events.iter().all(|&u| vc.prefix(e, u) <= first_unsettled[u]);
        let closed = |e: (u32, u32)| settled[e.0 as usize][e.1 as usize] && preds_settled(e);
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                let e = (t as u32, po as u32);
                let forgettable_kind = match ev.kind {
                    HKind::Read | HKind::Write | HKind::Join => true,
                    HKind::Inval => !self.still_invalid(s, ev.target),
                    _ => false,
                };
                if forgettable_kind && closed(e) {
                    return true;
                }
            }
        }
        (0..self.p.barriers.len()).any(|b| {
            let bar = &s.bars[b];
            let start = (s.bmo[b].first() == Some(&(LAUNCH, b as u32))) as u32;
            if self.an.pinned[b] || bar.invalid || !bar.done.is_empty() || bar.settled_len <= start {
                return false;
            }
            let open: &[(u32, u32)] = bar.open.as_ref().map_or(&[], |p| &p.members[..]);
            let target = Target::Barrier(BarrierId(b as u32));
            let mut any = false;
            let all = s.hist.iter().enumerate().all(|(t, h)| {
                h.iter().enumerate().all(|(po, ev)| {
                    let e = (t as u32, po as u32);
                    if ev.target != target || matches!(ev.kind, HKind::Join) || open.contains(&e) {
                        return true;
                    }
                    any = true;
                    match ev.kind {
                        HKind::Wait { .. } => preds_settled(e),
                        _ => closed(e),
                    }
                })
            });
            any && all
        })
    }

    /// What each thread's start executes before, where the rule checker
    /// can no longer read it off the thread's first event after `drop`
    /// (models without `joined-before` join every thread at launch, and
    /// the rule checker takes that join to execute before whatever the
    /// thread's first event executes before: "No joins", docs/semantics.md).
    /// For each thread whose first event is forgotten now or was before,
    /// the kept events the start executes before that no other such kept
    /// event executes before, and the live threads whose next event it
    /// executes before with no kept event in between ([`Frontier`]).
    ///
    /// Threads share frontiers: on a phase of T threads every start reaches
    /// the same kept events, and computing each thread's frontier alone
    /// cost T^2 passes over the execution a compaction. The start of `t`
    /// reaches `x` when `x` is `t`'s, or `t`'s first event in the execution
    /// executes before `x`, or a recorded `started_before` event of `t` is
    /// `x` or executes before it. Only kept events and forgotten last
    /// events of live threads are asked about; what a recorded set reaches
    /// is computed once per distinct set (a phase's threads share theirs),
    /// the first event's part per thread (one bit per kept event), and the
    /// frontier once per distinct reached set. Each frontier may list
    /// `t`'s own events and slot; the caller leaves those out.
    #[allow(clippy::too_many_arguments)]
    fn launch_starts(
        &self,
        s: &State,
        exec: &Execution,
        before: &[bc_graph::bits::Bits],
        succ: &Successors,
        lasts: &[Option<usize>],
        drop: &[bool],
        alive: &[usize],
    ) -> Vec<(usize, std::rc::Rc<Frontier>)> {
        let mut out = Vec::new();
        if self.p.model.rules.has(bc_models::Rule::JoinedBefore) {
            return out;
        }
        let n = exec.events.len();
        // Whether some event of `set` executes before `x`.
        let meets = |set: &Bits, x: usize| before[x].as_words().iter().zip(set.as_words()).any(|(a, b)| a & b != 0);
        // The same, for an event of `set` other than `x` itself.
        let meets_other = |set: &Bits, x: usize| {
            before[x]
                .as_words()
                .iter()
                .zip(set.as_words())
                .enumerate()
                .any(|(i, (a, b))| {
                    let own = if i == x / 64 { !(1u64 << (x % 64)) } else { !0 };
                    a & b & own != 0
                })
        };
        // Per thread, the entries that record its start.
        let mut entries_of: Vec<Vec<usize>> = vec![Vec::new(); s.threads.len()];
        for (i, (ts, _)) in exec.started_before.iter().enumerate() {
            for u in ts {
                entries_of[u.index()].push(i);
            }
        }
        // Only these events' reach matters: kept thread events, and the
        // forgotten last events of live threads.
        let kept: Vec<usize> = (0..n)
            .filter(|&x| !drop[x] && exec.events[x].thread.is_some())
            .collect();
        let dropped_last: Vec<(usize, usize)> = alive
            .iter()
            .filter_map(|&u| lasts[u].filter(|&l| drop[l]).map(|l| (u, l)))
            .collect();
        // What a recorded set reaches among them, per distinct set (a
        // phase's threads share theirs), and the frontier of a reached set
        // of kept events, per distinct set.
        let mut reach_of: HashMap<Bits, Bits> = HashMap::default();
        // What each event executes before among them, once a thread asks.
        let mut after: Option<Vec<Bits>> = None;
        let mut frontier_of: HashMap<(Bits, Vec<usize>), std::rc::Rc<Frontier>> = HashMap::default();
        for (t, entries) in entries_of.iter().enumerate() {
            let first = exec.program_order[t].first().map(|f| f.index());
            if entries.is_empty() && first.is_none_or(|f| !drop[f]) {
                // The first event stays and is the real one.
                continue;
            }
            let mut rec = Bits::new(n);
            for &i in entries {
                for y in &exec.started_before[i].1 {
                    rec.set(y.index());
                }
            }
            let mut reach = reach_of
                .entry(rec)
                .or_insert_with_key(|rec| {
                    let mut r = Bits::new(n);
                    for x in kept.iter().chain(dropped_last.iter().map(|(_, l)| l)).copied() {
                        if rec.get(x) || meets(rec, x) {
                            r.set(x);
                        }
                    }
                    r
                })
                .clone();
            // The thread's own events, and what its first one executes
            // before (one thread's column: its first events differ).
            for e in &exec.program_order[t] {
                reach.set(e.index());
            }
            if let Some(f) = first {
                let after = after.get_or_insert_with(|| {
                    let mut within = Bits::new(n);
                    for x in kept.iter().chain(dropped_last.iter().map(|(_, l)| l)).copied() {
                        within.set(x);
                    }
                    succ.after_within(&within)
                });
                reach.union_with(&after[f]);
            }
            // The kept thread events reached, and the live threads whose
            // last event is reached but forgotten (a kept last event that
            // is reached is in the set).
            let mut kept_set = Bits::new(n);
            for &x in kept.iter().filter(|&&x| reach.get(x)) {
                kept_set.set(x);
            }
            let dropped_lasts: Vec<usize> = (dropped_last.iter())
                .filter(|&&(_, l)| reach.get(l))
                .map(|&(u, _)| u)
                .collect();
            let frontier = frontier_of
                .entry((kept_set, dropped_lasts))
                .or_insert_with_key(|(kept_set, dropped_lasts)| {
                    let events = (kept.iter().copied())
                        .filter(|&c| kept_set.get(c) && !meets_other(kept_set, c))
                        .collect();
                    let slots = (dropped_lasts.iter().copied())
                        .filter(|&u| lasts[u].is_some_and(|l| !meets(kept_set, l)))
                        .collect();
                    std::rc::Rc::new(Frontier { events, slots })
                })
                .clone();
            out.push((t, frontier));
        }
        out
    }

    /// Whether `target` is a barrier its latest inval left invalid (no init
    /// since).
    fn still_invalid(&self, s: &State, target: Target) -> bool {
        matches!(target, Target::Barrier(b) if s.bars[b.index()].invalid)
    }

    /// Whether thread `u` may still produce an event that interacts with
    /// an event on `target`: one on the same barrier or location.
    pub(crate) fn may_touch(&self, s: &State, u: usize, target: Target) -> bool {
        let th = &s.threads[u];
        if th.status != Status::Running {
            return false;
        }
        match target {
            Target::Barrier(b) => {
                self.may_reach_barrier(&self.an.reach_barriers, u, th.pc as usize, b)
                    || (self.p.barriers[b.index()].dropped_at_end_by(ThreadId(u as u32)) && th.joined.contains(&b.0))
            }
            Target::Loc(l) => self.may_reach_loc(&self.an.reach_accesses, u, th.pc as usize, l),
            // A fence orders what any thread may later read.
            Target::None => true,
        }
    }

    /// The live threads (of `alive`) that may still operate on `target`:
    /// for a plain read (`read`), those that may still write its location
    /// (a read interacts only with writes). Compaction's settled test.
    fn touchers(&self, s: &State, alive: &[usize], target: Target, read: bool) -> Vec<usize> {
        (alive.iter().copied())
            .filter(|&u| match (target, read) {
                (Target::Loc(l), true) => self.may_reach_loc(&self.an.plain_writes, u, s.threads[u].pc as usize, l),
                (target, _) => self.may_touch(s, u, target),
            })
            .collect()
    }

    /// Whether thread `u`, from `pc` on, may reach an instruction of
    /// `table` (a [`Reach`] over barrier declarations) on barrier `b`.
    pub(crate) fn may_reach_barrier(&self, table: &Reach, u: usize, pc: usize, b: BarrierId) -> bool {
        let info = &self.p.threads[u];
        reach_at(table, info.code.index(), pc)
            .iter()
            .enumerate()
            .any(|(d, &on)| on && info.barriers[d] == Some(b))
    }

    /// Whether thread `u`, from `pc` on, may reach an instruction of
    /// `table` (a [`Reach`] over location declarations) on location `l`.
    pub(crate) fn may_reach_loc(&self, table: &Reach, u: usize, pc: usize, l: LocId) -> bool {
        let info = &self.p.threads[u];
        reach_at(table, info.code.index(), pc)
            .iter()
            .enumerate()
            .any(|(d, &on)| on && info.locs[d] == Some(l))
    }
}

/// The row of `table` for code `code` at `pc` (the end row past the last
/// instruction).
pub(crate) fn reach_at(table: &Reach, code: usize, pc: usize) -> &[bool] {
    let rows = &table[code];
    &rows[pc.min(rows.len() - 1)]
}

/// The executes-before edges of an execution as successor lists, with one
/// node per distinct participant list (a phase of T threads has T waits
/// of the same T participants: T + T edges through its node, not T^2),
/// and a topological order of the events.
struct Successors {
    /// Per event, the next event of its thread.
    po_next: Vec<Option<usize>>,
    /// Per event, the targets of summary edges from it.
    extra: Vec<Vec<usize>>,
    /// Per event, the participant lists it is on; per list, its waits.
    lists_of: Vec<Vec<usize>>,
    list_waits: Vec<Vec<usize>>,
    /// The events, each after every event that executes before it (a
    /// larger predecessor set in `before` comes later).
    order: Vec<usize>,
}

impl Successors {
    fn of(exec: &Execution, before: &[Bits]) -> Successors {
        let n = exec.events.len();
        let mut order: Vec<usize> = (0..n).collect();
        let sizes: Vec<usize> = before.iter().map(Bits::count).collect();
        order.sort_by_key(|&e| sizes[e]);
        let mut po_next: Vec<Option<usize>> = vec![None; n];
        for evs in &exec.program_order {
            for w in evs.windows(2) {
                po_next[w[0].index()] = Some(w[1].index());
            }
        }
        let mut extra: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in &exec.extra_eb {
            extra[a.index()].push(b.index());
        }
        let mut lists: rustc_hash::FxHashMap<*const [EventId], usize> = Default::default();
        let mut list_waits: Vec<Vec<usize>> = Vec::new();
        let mut lists_of: Vec<Vec<usize>> = vec![Vec::new(); n];
        for w in exec.ids() {
            let ps = exec.participants(w);
            if ps.is_empty() {
                continue;
            }
            let h = *lists.entry(std::ptr::from_ref(ps)).or_insert_with(|| {
                list_waits.push(Vec::new());
                for x in ps {
                    lists_of[x.index()].push(list_waits.len() - 1);
                }
                list_waits.len() - 1
            });
            list_waits[h].push(w.index());
        }
        Successors {
            po_next,
            extra,
            lists_of,
            list_waits,
            order,
        }
    }

    /// Per event, the events of `within` it executes before (the column
    /// of `before`, restricted): one pass in reverse topological order,
    /// one union per edge, where reading each event's column off `before`
    /// cost a bit lookup per pair (T^2 on a phase of T threads).
    fn after_within(&self, within: &Bits) -> Vec<Bits> {
        let n = self.po_next.len();
        let mut after: Vec<Bits> = vec![Bits::default(); n];
        let mut list_after: Vec<Option<Bits>> = vec![None; self.list_waits.len()];
        for &e in self.order.iter().rev() {
            let mut acc = Bits::new(n);
            let step = |acc: &mut Bits, after: &[Bits], s: usize| {
                if within.get(s) {
                    acc.set(s);
                }
                acc.union_with(&after[s]);
            };
            for s in self.po_next[e].iter().chain(&self.extra[e]) {
                step(&mut acc, &after, *s);
            }
            for &h in &self.lists_of[e] {
                let r = list_after[h].get_or_insert_with(|| {
                    let mut r = Bits::new(n);
                    for &w in &self.list_waits[h] {
                        step(&mut r, &after, w);
                    }
                    r
                });
                acc.union_with(r);
            }
            after[e] = acc;
        }
        after
    }
}

/// What [`first_kept`] finds for one kept event `a`: the kept events at
/// the end of the first step of each executes-before path from `a` that
/// leaves the forgotten events (`reached`), and of those the waits `a`
/// participates in (`direct`: their participation edge stays).
struct FirstKept {
    reached: Bits,
    direct: Bits,
}

/// For each event `a` of `wanted`: the kept events (`kept`) that some path
/// of executes-before edges (program order, participation, summary edges)
/// reaches from `a` with only forgotten events inside it. Every least kept
/// event `a` executes before is among them, so the least ones are those no
/// other one executes before (`before`, the closure).
///
/// One pass in reverse topological order ([`Successors`]): what the
/// forgotten events reach is a set per event, merged along each edge.
fn first_kept(succ: &Successors, kept: &[bool], wanted: &[bool]) -> Vec<Option<FirstKept>> {
    let n = succ.po_next.len();
    // What a step into `s` contributes: `s` itself when it is kept, else
    // what `s` reaches.
    let mut reach: Vec<Option<Bits>> = vec![None; n];
    let mut list_reach: Vec<Option<Bits>> = vec![None; succ.list_waits.len()];
    let mut out: Vec<Option<FirstKept>> = (0..n).map(|_| None).collect();
    let step = |reach: &[Option<Bits>], acc: &mut Bits, s: usize| {
        if kept[s] {
            acc.set(s);
        } else if let Some(r) = &reach[s] {
            acc.union_with(r);
        }
    };
    for &e in succ.order.iter().rev() {
        if kept[e] && !wanted[e] {
            continue;
        }
        let mut acc = Bits::new(n);
        for s in succ.po_next[e].iter().chain(&succ.extra[e]) {
            step(&reach, &mut acc, *s);
        }
        let mut direct = Bits::new(n);
        for &h in &succ.lists_of[e] {
            if list_reach[h].is_none() {
                let mut r = Bits::new(n);
                for &w in &succ.list_waits[h] {
                    step(&reach, &mut r, w);
                }
                list_reach[h] = Some(r);
            }
            if let Some(r) = &list_reach[h] {
                acc.union_with(r);
            }
            if kept[e] {
                for &w in succ.list_waits[h].iter().filter(|&&w| kept[w]) {
                    direct.set(w);
                }
            }
        }
        if kept[e] {
            out[e] = Some(FirstKept { reached: acc, direct });
        } else {
            reach[e] = Some(acc);
        }
    }
    out
}
