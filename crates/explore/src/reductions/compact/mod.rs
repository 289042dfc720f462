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
//! edges.
//!
//! Spent arrives (docs/explorer.md, "Spent arrives and own-phase waits"):
//! in a model without phase-with, in a program without fence events
//! (where the race rule's order would run through a forgotten event), on
//! a barrier no token or parity wait reads, an arrive of a completed phase whose predecessors are all
//! settled and whose thread has ended or waited on that phase itself goes
//! with its barrier's history though it is not settled (the warp that
//! only `bar.arrive`s never executes before the other warp's later
//! members), and a completed wait goes with them when everything before
//! it is closed or such an arrive. No future rule reads such an arrive
//! (no wait can take its phase; its thread's own rules are judged; it is
//! no access), and every kept event before a forgotten one is still
//! closed, so the summary edges stand for the paths through them.
//! `may_forget` admits them too, leniently. The explorer's own history
//! rules (`rules.rs`: phase-with, arrive-then-drop, race) judge the state
//! at the same point.

mod cuts;
mod may_forget;
mod summary;

use crate::analysis::history::{ExecutesBefore, HistoryFindings};
use crate::semantics::witness::ExecNames;
use crate::semantics::System;
use crate::state::{HKind, MapLists, State, Status, LAUNCH, START};
use bc_graph::bits::Bits;
use bc_graph::*;
use rustc_hash::FxHashMap as HashMap;
use summary::{first_kept, Frontier, Successors};

/// Compaction checks the budget every this many events of its quadratic
/// loops.
const CHECK_EVERY: usize = 64;

/// A participant list of the state and its waits (execution indices).
type ListWaits<'a> = (&'a [(u32, u32)], Vec<usize>);

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
    ids: &crate::semantics::witness::EventIds,
) -> bool {
    let open: Vec<usize> = open.iter().filter_map(|k| ids.get(k)).map(|x| x.index()).collect();
    !open.is_empty()
        && events.iter().any(|&w| {
            matches!(exec.events[w].kind, EventKind::Wait { completed: true, .. })
                && open.iter().any(|&x| before[w].get(x))
        })
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
    /// Whether a barrier's history went (whole or up to a cut): then a
    /// completed phase may retire and another pass forget more.
    pub barriers: bool,
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
        budget: Option<&crate::state::budget::Budget>,
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
            !self.an.pinned[b]
                && !s.bars[b].invalid
                && (s.bars[b].done.is_empty() || !s.bars[b].cuts.is_empty())
                && s.bars[b].settled_len > start
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
                    EventKind::Arrive { .. } => match ev.target {
                        Target::Barrier(b) => !exec.props(b).copy_written,
                        _ => true,
                    },
                    EventKind::Tx { delta, .. } => delta <= 0,
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
        // A generic write that an async-proxy access may still follow stays
        // until a proxy fence of its writer after it is settled (then every
        // future access executes after that fence): the race rule asks for
        // the fence (docs/semantics.md, "The async proxy"). Fence events
        // are never forgotten.
        let proxy_fence = |e: usize| {
            matches!(
                exec.events[e].kind,
                EventKind::Fence {
                    scope: FenceScope::ProxyAsync
                }
            )
        };
        let proxy_held = |e: usize| {
            let ev = &exec.events[e];
            let (true, EventKind::Write, Target::Loc(l), Some(t)) =
                (self.p.proxy_events, &ev.kind, ev.target, ev.thread)
            else {
                return false;
            };
            if !self.p.async_loc(l) || self.p.async_agent(t) {
                return false;
            }
            if self.p.threads[t.index()].kind == ThreadKind::Copy {
                return !(0..n).any(|f| proxy_fence(f) && settled[f] && before[f].get(e));
            }
            let po = &exec.program_order[t.index()];
            let at = po.iter().position(|x| x.index() == e).unwrap_or(po.len());
            !po.iter()
                .skip(at + 1)
                .any(|f| proxy_fence(f.index()) && settled[f.index()])
        };
        let mut by_id: Vec<Option<(u32, u32)>> = vec![None; n];
        for (k, v) in ids.iter() {
            by_id[v.index()] = Some(k);
        }
        // Per arrive: some wait on its phase is its own thread's or
        // executes before its thread's future (arrive-then-drop, below).
        // One pass over the waits' participants, not one per arrive (that
        // was T^3 on a phase of T threads).
        let mut waited = vec![false; n];
        // Per arrive: a wait of its own thread took its phase.
        let mut own_waited = vec![false; n];
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
                own_waited[x] |= threads.get(t);
                if !waited[x] && (threads.get(t) || last(t).is_some_and(|l| before[l].meets(&set))) {
                    waited[x] = true;
                }
            }
        }
        let mut drop = vec![false; n];
        let mut forgotten = Vec::new();
        // Barriers forgotten up to a cut (`cuts.rs`): (barrier, cut index).
        let mut cut: Vec<(usize, usize)> = Vec::new();
        let phase_with = self.p.model.rules.has(bc_models::Rule::PhaseWith);
        for b in 0..self.p.barriers.len() {
            let bar = &s.bars[b];
            let start = (s.bmo[b].first() == Some(&(LAUNCH, b as u32))) as usize;
            // An invalidated barrier keeps its history (below). One with a
            // completed phase a wait may still take is forgotten only up
            // to a cut before it (`cuts.rs`).
            if self.an.pinned[b] || bar.invalid || (bar.settled_len as usize) <= start {
                continue;
            }
            let cuttable = self.cuttable(s, b);
            if !bar.done.is_empty() && cuttable == 0 {
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
            // An init the async proxy may not see yet stays, with its
            // barrier's history: a launch init standing for it would be
            // visible to every proxy.
            if self.init_unpublished(s, b, &|t, po| settled[ids.at(t, po).index()]) {
                continue;
            }
            // Spent arrives on `b` (module text): everything before them
            // settled, their thread ended or waited on their phase itself.
            let relax = self.spends_arrives(b);
            let mut spent = vec![false; if relax { n } else { 0 }];
            for &e in events.iter().filter(|_| relax) {
                let ev = &exec.events[e];
                spent[e] = matches!(ev.kind, EventKind::Arrive { .. })
                    && preds_settled[e]
                    && ev.thread.is_some_and(|t| {
                        !unobserved(e, ev, t) && (s.threads[t.index()].status == Status::Done || own_waited[e])
                    });
            }
            // `inside`: the events forgotten with `e` (all of them, or a
            // prefix of completed phases: `cuts.rs`).
            let ok = |e: usize, inside: &dyn Fn(usize) -> bool| match &exec.events[e].kind {
                // Everything before it closed, or a spent arrive on `b`
                // (forgotten with it).
                EventKind::Wait { completed: true, .. } => {
                    preds_settled[e]
                        || (relax
                            && before[e]
                                .ones()
                                .all(|p| thread_of(p).is_none() || closed[p] || (spent[p] && inside(p))))
                }
                EventKind::Arrive { .. } => (closed[e] && (waited[e] || !droppable)) || (relax && spent[e]),
                _ => closed[e],
            };
            if bar.done.is_empty() && !events.is_empty() && events.iter().all(|&e| ok(e, &|_| true)) {
                for e in events {
                    drop[e] = true;
                }
                forgotten.push(b);
            } else if cuttable > 0 {
                let at = cuts::phase_positions(s, b, &events, &by_id);
                if let Some((j, prefix)) = self.longest_cut(s, b, cuttable, &events, &at, &ok) {
                    for e in prefix {
                        drop[e] = true;
                    }
                    cut.push((b, j));
                }
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
                || (forget(e) && matches!(kind, EventKind::Read | EventKind::Write) && !proxy_held(e))
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
        let starts = self.launch_starts(s, &exec, &before, &succ, &lasts, &drop, &alive, verify);
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
                .filter_map(|&v| crate::state::token::decode_token(v))
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
                bar.cuts.clear();
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
            } else if let Some(&(_, j)) = cut.iter().find(|c| c.0 == b) {
                self.cut_bmo(&mut s.bars[b], order, b, j, &re);
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
            barriers: !forgotten.is_empty() || !cut.is_empty(),
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

    /// Whether compaction may forget spent arrives of barrier `b` (module
    /// text): in a model without phase-with, in a program without fence
    /// events, on a barrier whose phase numbers nothing reads (no token or
    /// parity wait).
    fn spends_arrives(&self, b: usize) -> bool {
        !self.p.model.rules.has(bc_models::Rule::PhaseWith) && !self.an.token_barriers[b] && !self.p.fence_events
    }

    /// Whether the latest init of barrier `b` (not a launch init), which an
    /// async-proxy agent may complete transactions on, has no proxy fence
    /// of its thread after it that is `settled` (then every future bulk
    /// copy executes after that fence and sees the init: docs/semantics.md,
    /// "The async proxy", barrier inits). Compaction keeps such a
    /// barrier's history.
    fn init_unpublished(&self, s: &State, b: usize, settled: &dyn Fn(u32, u32) -> bool) -> bool {
        if !self.p.proxy_events || !self.p.async_barrier(BarrierId(b as u32)) {
            return false;
        }
        let latest = s.bmo[b].iter().rev().find(|&&(u, po)| {
            u != LAUNCH
                && matches!(
                    s.hist[u as usize].get(po as usize).map(|e| &e.kind),
                    Some(HKind::Init(_))
                )
        });
        let Some(&(u, i)) = latest else {
            return false;
        };
        let h = &s.hist[u as usize];
        !(i as usize + 1..h.len())
            .any(|k| matches!(h[k].kind, HKind::Fence(f) if f.publishes_inits()) && settled(u, k as u32))
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
        let may = |&u: &usize| match (target, read) {
            (Target::Loc(l), true) => self.may_reach_loc(&self.an.plain_writes, u, s.threads[u].pc as usize, l),
            _ => self.may_touch(s, u, target),
        };
        // Only the threads whose declarations name a location or a
        // barrier can touch it (both lists ascend; an object has few such
        // threads, a kernel hundreds of live ones).
        let named = match target {
            Target::Loc(l) => &self.an.loc_threads[l.index()],
            Target::Barrier(b) => &self.an.bar_threads[b.index()],
            Target::None => return alive.iter().copied().filter(may).collect(),
        };
        (named.iter().copied())
            .filter(|u| alive.binary_search(u).is_ok())
            .filter(may)
            .collect()
    }
}
