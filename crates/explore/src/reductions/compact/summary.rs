//! Compaction's summary edges (module doc of `compact`): executes-before
//! between kept events that ran through forgotten ones, found over the
//! execution's successor lists ([`Successors`], [`first_kept`]), and what a
//! thread's start executes before once its first event is forgotten
//! (`System::launch_starts`, in models without `joined-before`).

use crate::semantics::System;
use crate::state::State;
use bc_graph::bits::Bits;
use bc_graph::*;
use rustc_hash::FxHashMap as HashMap;

/// What a thread's start executes before once compaction forgets its
/// first event ([`System::launch_starts`]): kept events (ids of the
/// execution before compaction) and live threads' next event slots, none
/// of which another of them executes before. It may list the thread's own
/// events and slot, which no summary edge needs.
#[derive(Debug)]
pub(crate) struct Frontier {
    pub(crate) events: Vec<usize>,
    pub(crate) slots: Vec<usize>,
}

impl System<'_> {
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
    pub(crate) fn launch_starts(
        &self,
        s: &State,
        exec: &Execution,
        before: &[bc_graph::bits::Bits],
        succ: &Successors,
        lasts: &[Option<usize>],
        drop: &[bool],
        alive: &[usize],
        verify: bool,
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
        let mut within = Bits::new(n);
        for x in kept.iter().chain(dropped_last.iter().map(|(_, l)| l)).copied() {
            within.set(x);
        }
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
            // The events of a recorded set, and what each executes before,
            // among them: a union per recorded event (a copy agent's set is
            // its issue), where testing every kept event against the set's
            // predecessors cost a row per kept event per distinct set.
            let after_all = after.get_or_insert_with(|| succ.after_within(&within));
            let mut reach = reach_of
                .entry(rec)
                .or_insert_with_key(|rec| {
                    let mut r = Bits::new(n);
                    for y in rec.ones() {
                        if within.get(y) {
                            r.set(y);
                        }
                        r.union_with(&after_all[y]);
                    }
                    // Under `verify` (the corpus and reduction tests), the
                    // test of every kept event it replaced.
                    if verify {
                        for x in kept.iter().chain(dropped_last.iter().map(|(_, l)| l)).copied() {
                            assert_eq!(r.get(x), rec.get(x) || meets(rec, x), "a recorded set's reach");
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
                reach.union_with(&after_all[f]);
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
}

/// The executes-before edges of an execution as successor lists, with one
/// node per distinct participant list (a phase of T threads has T waits
/// of the same T participants: T + T edges through its node, not T^2),
/// and a topological order of the events.
pub(crate) struct Successors {
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

/// The events in an order where each comes after every event with an
/// edge into it (program order, summary edges, participant to wait through
/// its list), by Kahn's algorithm over the events and one node per list:
/// linear in the edges, where sorting by the size of each event's
/// predecessor set took a popcount of a closure row per event (8% of a
/// 160-thread run's time). `None` when the edges have a cycle. The passes
/// over the order ([`Successors::after_within`], [`first_kept`]) compute
/// each event's set from its successors' only, so any such order gives
/// the same sets.
fn topological(
    n: usize,
    po_next: &[Option<usize>],
    extra: &[Vec<usize>],
    lists_of: &[Vec<usize>],
    list_waits: &[Vec<usize>],
) -> Option<Vec<usize>> {
    let mut indeg = vec![0u32; n + list_waits.len()];
    for e in 0..n {
        for &s in po_next[e].iter().chain(&extra[e]) {
            indeg[s] += 1;
        }
        for &h in &lists_of[e] {
            indeg[n + h] += 1;
        }
    }
    for waits in list_waits {
        for &w in waits {
            indeg[w] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..n + list_waits.len()).rev().filter(|&x| indeg[x] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut release = |s: usize, ready: &mut Vec<usize>| {
        indeg[s] -= 1;
        if indeg[s] == 0 {
            ready.push(s);
        }
    };
    while let Some(x) = ready.pop() {
        if x < n {
            order.push(x);
            for &s in po_next[x].iter().chain(&extra[x]) {
                release(s, &mut ready);
            }
            for &h in &lists_of[x] {
                release(n + h, &mut ready);
            }
        } else {
            for &w in &list_waits[x - n] {
                release(w, &mut ready);
            }
        }
    }
    (order.len() == n).then_some(order)
}

impl Successors {
    pub(crate) fn of(exec: &Execution, before: &[Bits]) -> Successors {
        let n = exec.events.len();
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
        let order = topological(n, &po_next, &extra, &lists_of, &list_waits).unwrap_or_else(|| {
            // A cycle (an inconsistent execution, which its own rule
            // reports): by the size of each event's predecessor set.
            let mut order: Vec<usize> = (0..n).collect();
            let sizes: Vec<usize> = before.iter().map(Bits::count).collect();
            order.sort_by_key(|&e| sizes[e]);
            order
        });
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
    pub(crate) fn after_within(&self, within: &Bits) -> Vec<Bits> {
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
pub(crate) struct FirstKept {
    pub(crate) reached: Bits,
    pub(crate) direct: Bits,
}

/// For each event `a` of `wanted`: the kept events (`kept`) that some path
/// of executes-before edges (program order, participation, summary edges)
/// reaches from `a` with only forgotten events inside it. Every least kept
/// event `a` executes before is among them, so the least ones are those no
/// other one executes before (`before`, the closure).
///
/// One pass in reverse topological order ([`Successors`]): what the
/// forgotten events reach is a set per event, merged along each edge.
pub(crate) fn first_kept(succ: &Successors, kept: &[bool], wanted: &[bool]) -> Vec<Option<FirstKept>> {
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
