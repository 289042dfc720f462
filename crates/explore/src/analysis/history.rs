//! barrier-executes-before over a state's history ("Execution Model":
//! the transitive closure of program order and barrier-participates-in),
//! as vector clocks ([`ExecutesBefore`]), computed at once or when first
//! asked ([`LazyEb`]). The history rules (`semantics/history_rules.rs`),
//! phase-order canonicalization, compaction and the partial-order
//! self-check read it; a pure function of a history.

use crate::state::{HKind, State, Status, LAUNCH, START};
use bc_graph::*;
use bc_syntax::FindingKind;
use rustc_hash::FxHashMap as HashMap;

/// [`ExecutesBefore`] over a state's history, computed when first asked
/// (event indices need only the history's lengths).
pub(crate) struct LazyEb<'s> {
    s: &'s State,
    /// Per thread, the index of its first event (then the event count).
    start: Vec<usize>,
    eb: std::cell::OnceCell<ExecutesBefore>,
}

impl<'s> LazyEb<'s> {
    pub(crate) fn new(s: &'s State) -> LazyEb<'s> {
        LazyEb {
            s,
            start: event_starts(s),
            eb: std::cell::OnceCell::new(),
        }
    }

    /// How many events the history has.
    pub(crate) fn len(&self) -> usize {
        self.start.last().copied().unwrap_or(0)
    }

    /// The index of event `(t, po)`.
    pub(crate) fn index(&self, (t, po): (u32, u32)) -> usize {
        self.start[t as usize] + po as usize
    }

    /// [`ExecutesBefore::eb`].
    pub(crate) fn eb(&self, a: (u32, u32), b: (u32, u32)) -> bool {
        self.eb.get_or_init(|| ExecutesBefore::of(self.s)).eb(a, b)
    }
}

/// Per thread of `s`, the index of its first history event when the
/// threads' histories are numbered one after the other; then the number of
/// events.
fn event_starts(s: &State) -> Vec<usize> {
    let mut start = Vec::with_capacity(s.hist.len() + 1);
    let mut n = 0;
    for h in &s.hist {
        start.push(n);
        n += h.len();
    }
    start.push(n);
    start
}

/// What the history rules found: per broken rule its finding and message.
pub(crate) type HistoryFindings = Vec<(FindingKind, String)>;

/// barrier-executes-before over a state's history ("Execution Model": the
/// transitive closure of program order and barrier-participates-in), with
/// the `extra` edges compaction left where a path ran through forgotten
/// events. Since program order is total within a thread, what executes
/// before an event is, per thread, a prefix of that thread's history; it is
/// kept as that prefix's length (a vector clock per event), computed to a
/// fixed point.
pub(crate) struct ExecutesBefore {
    /// Columns: the threads with events.
    width: usize,
    /// Per thread, its column (`u32::MAX` for one without events).
    col: Vec<u32>,
    /// Per thread, the index of its first event (then the event count).
    start: Vec<usize>,
    /// Per event index, per column (thread `u`): how many of `u`'s events
    /// execute before it.
    seen: Vec<u32>,
}

impl ExecutesBefore {
    /// Executes-before over the history of `s`.
    pub(crate) fn of(s: &State) -> ExecutesBefore {
        Self::build(s, true)
    }

    /// The order the race rule reads where some barrier orders memory only
    /// through fences (`BarrierProps::needs_fence`; `bc_rules::memory_order`
    /// is the rule checker's, and docs/semantics.md "Barriers and memory"
    /// the reading): its `eb` answers "memory-ordered before". Rows as
    /// [`ExecutesBefore::of`]'s, from program order, the summaries, the
    /// participants of waits on barriers that order memory (but relaxed
    /// arrives), and, into each
    /// event, the rows of the latest fence of each other thread that
    /// executes before it and whose scope holds both threads.
    pub(crate) fn memory(s: &State, p: &Program) -> ExecutesBefore {
        let e = Self::of(s);
        let (width, nt) = (e.width, s.hist.len());
        let n = e.start[nt];
        let c = |u: u32| e.col[u as usize] as usize;
        let exists = |(t, po): (u32, u32)| (t as usize) < nt && (po as usize) < s.hist[t as usize].len();
        let mut from: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for fan in &s.extra {
            for &x in fan.sources.iter().filter(|x| x.1 != START && exists(**x)) {
                for &(u, k) in fan.targets.iter().filter(|y| y.0 != x.0 && exists(**y)) {
                    from[e.start[u as usize] + k as usize].push(x);
                }
            }
        }
        let mut thread_of = vec![0u32; n];
        let mut fences: Vec<Vec<(u32, bc_graph::FenceScope)>> = vec![Vec::new(); nt];
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                thread_of[e.start[t] + po] = t as u32;
                if let HKind::Fence(f) = ev.kind {
                    fences[t].push((po as u32, f));
                }
            }
        }
        // Executes-before contains every edge used here, and its rows grow
        // strictly along it: ordering by row sum is topological.
        let row = |v: usize| &e.seen[v * width..(v + 1) * width];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&v| row(v).iter().map(|&x| x as u64).sum::<u64>());
        let mut seen = vec![0u32; n * width];
        let mut acc = vec![0u32; width];
        let join = |acc: &mut Vec<u32>, seen: &[u32], (u, k): (u32, u32)| {
            let x = e.start[u as usize] + k as usize;
            for (a, &b) in acc.iter_mut().zip(&seen[x * width..(x + 1) * width]) {
                *a = (*a).max(b);
            }
            acc[c(u)] = acc[c(u)].max(k + 1);
        };
        for v in order {
            let t = thread_of[v];
            let po = (v - e.start[t as usize]) as u32;
            acc.iter_mut().for_each(|a| *a = 0);
            acc[c(t)] = po;
            if po > 0 {
                join(&mut acc, &seen, (t, po - 1));
            }
            for &x in &from[v] {
                join(&mut acc, &seen, x);
            }
            let ev = &s.hist[t as usize][po as usize];
            if let (HKind::Wait { participants, .. }, Target::Barrier(b)) = (&ev.kind, ev.target) {
                if !p.barriers[b.index()].props.needs_fence {
                    // A relaxed arrive orders no memory: only a fence
                    // before it does (the fence rows below).
                    // A thread's own expect-tx is relaxed too
                    // (`EventKind::Tx::relaxed`).
                    let relaxed = |(u, k): (u32, u32)| {
                        matches!(
                            p.instr(ThreadId(u), s.hist[u as usize][k as usize].pc).map(|i| &i.kind),
                            Some(InstrKind::Barrier { op, .. }) if op.orders_no_memory()
                        )
                    };
                    // A thread's exit (its end drop) orders memory as the
                    // phase's arrives do: none where they are relaxed
                    // (`bc_rules` facts, the same reading).
                    // Asked only where a drop takes part (an exit: rare),
                    // so that a large phase is not scanned twice.
                    let relaxed_phase = std::cell::OnceCell::new();
                    let drop = |(u, k): (u32, u32)| matches!(s.hist[u as usize][k as usize].kind, HKind::Drop);
                    let relaxed_drop = |x| {
                        drop(x) && *relaxed_phase.get_or_init(|| participants.iter().any(|&y| exists(y) && relaxed(y)))
                    };
                    for &x in participants
                        .iter()
                        .filter(|&&x| exists(x) && !relaxed(x) && !relaxed_drop(x))
                    {
                        join(&mut acc, &seen, x);
                    }
                }
            }
            let here = &p.threads[t as usize];
            for u in (0..nt as u32).filter(|&u| u != t && e.col[u as usize] != u32::MAX) {
                let before = row(v)[c(u)];
                let there = &p.threads[u as usize];
                let scope =
                    bc_graph::shared_scope((there.block_id, there.cluster_id), (here.block_id, here.cluster_id));
                let f = fences[u as usize]
                    .iter()
                    .rev()
                    .find(|&&(fpo, f)| fpo < before && f.covers(scope));
                if let Some(&(fpo, _)) = f {
                    join(&mut acc, &seen, (u, fpo));
                }
            }
            seen[v * width..(v + 1) * width].copy_from_slice(&acc);
        }
        ExecutesBefore {
            width,
            col: e.col,
            start: e.start,
            seen,
        }
    }

    /// Testing aid (`SearchOptions::verify_encoding`, in
    /// `System::check_independent`): the one-pass rows in topological
    /// order equal the fixed point's.
    pub(crate) fn check_topological(s: &State) {
        assert!(
            Self::build(s, true).seen == Self::build(s, false).seen,
            "executes-before in topological order differs from the fixed point"
        );
    }

    /// Testing aid (`SearchOptions::verify_encoding`, after history
    /// compaction): executes-before between the events compaction kept
    /// (`remap`: old position to new), and from each kept event to each
    /// running thread's next event, is what it was before. Histories of
    /// more than `LIMIT` kept events are left out (the check is quadratic).
    pub(crate) fn check_compaction(old: &State, new: &State, remap: &HashMap<(u32, u32), (u32, u32)>) {
        const LIMIT: usize = 600;
        if remap.len() > LIMIT {
            return;
        }
        let (a, b) = (Self::of(old), Self::of(new));
        let mut kept: Vec<((u32, u32), (u32, u32))> = remap.iter().map(|(&o, &n)| (o, n)).collect();
        kept.sort_unstable();
        for &(x, x2) in &kept {
            for &(y, y2) in kept.iter().filter(|(y, _)| y.0 != x.0) {
                assert_eq!(
                    a.eb(x, y),
                    b.eb(x2, y2),
                    "compaction changed executes-before from {x:?} to {y:?} (now {x2:?} to {y2:?})"
                );
            }
        }
        // What executes before thread `u`'s next event: its last event and
        // the summary edges into its next slot.
        fn before_next(s: &State, eb: &ExecutesBefore, x: (u32, u32), u: usize) -> bool {
            let next = s.hist[u].len() as u32;
            let slot = (u as u32, next);
            let last = next.checked_sub(1).map(|po| (u as u32, po));
            let into = s
                .extra
                .iter()
                .filter(|f| f.targets.contains(&slot))
                .flat_map(|f| f.sources.iter().copied().filter(|p| p.1 != START && p.0 != u as u32));
            last.into_iter().chain(into).any(|p| p == x || eb.eb(x, p))
        }
        for u in (0..old.threads.len()).filter(|&u| old.threads[u].status == Status::Running) {
            for &(x, x2) in kept.iter().filter(|(x, _)| x.0 != u as u32) {
                assert_eq!(
                    before_next(old, &a, x, u),
                    before_next(new, &b, x2, u),
                    "compaction changed whether {x:?} (now {x2:?}) executes before thread {u}'s next event\nold {:?}\nnew {:?}\nold extra {:?}\nnew extra {:?}",
                    old.hist, new.hist, old.extra, new.extra
                );
            }
        }
    }

    /// [`ExecutesBefore::of`], in topological order where `topological`
    /// (and the edges have no cycle), else as a fixed point.
    fn build(s: &State, topological: bool) -> ExecutesBefore {
        let nt = s.hist.len();
        let start = event_starts(s);
        let n = start[nt];
        // Columns only for threads with events (a grid of thousands of
        // threads has a few blocks' worth of history at a time).
        let mut col = vec![u32::MAX; nt];
        let mut width = 0usize;
        for (t, h) in s.hist.iter().enumerate() {
            if !h.is_empty() {
                col[t] = width as u32;
                width += 1;
            }
        }
        let c = |u: u32| col[u as usize] as usize;
        let exists = |(t, po): (u32, u32)| (t as usize) < nt && (po as usize) < s.hist[t as usize].len();
        // The edges into each event from other threads: its participants
        // (a wait), and the extra edges (their source `START` is no event,
        // their target past a thread's history a future event). The waits
        // of one phase share its member list (`state::Members`): each
        // distinct list is kept once, and the join of its members' rows is
        // computed once a pass (T waits of T participants with rows of T
        // threads would cost T^3 a pass). Any order of these monotone
        // updates from zero reaches the same least fixed point, and a pass
        // that changes nothing used up-to-date joins.
        let mut from: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut lists: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut list_of: Vec<Option<usize>> = vec![None; n];
        let mut by_addr: HashMap<*const Vec<(u32, u32)>, usize> = Default::default();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if let HKind::Wait { participants, .. } = &ev.kind {
                    let i = *by_addr.entry(std::sync::Arc::as_ptr(participants)).or_insert_with(|| {
                        lists.push(participants.iter().copied().filter(|&x| exists(x)).collect());
                        lists.len() - 1
                    });
                    list_of[start[t] + po] = Some(i);
                }
            }
        }
        for fan in &s.extra {
            for &x in fan.sources.iter().filter(|x| x.1 != START && exists(**x)) {
                for &(u, k) in fan.targets.iter().filter(|y| y.0 != x.0 && exists(**y)) {
                    from[start[u as usize] + k as usize].push(x);
                }
            }
        }
        if let Some(seen) = (topological)
            .then(|| Self::in_topological_order(s, &start, &col, width, &from, &lists, &list_of))
            .flatten()
        {
            return ExecutesBefore {
                width,
                col,
                start,
                seen,
            };
        }
        let mut seen = vec![0u32; n * width];
        let mut row = vec![0u32; width];
        // Per distinct list, the join of its members' rows (and each
        // member's own position), and the pass it was computed in.
        let mut joins: Vec<(usize, Vec<u32>)> = vec![(0, Vec::new()); lists.len()];
        let mut pass = 0;
        let mut changed = true;
        while changed {
            changed = false;
            pass += 1;
            for t in 0..nt {
                for po in 0..s.hist[t].len() {
                    let e = start[t] + po;
                    row.copy_from_slice(&seen[e * width..(e + 1) * width]);
                    row[c(t as u32)] = row[c(t as u32)].max(po as u32);
                    let preds = (po > 0).then(|| (t as u32, po as u32 - 1));
                    for &(u, k) in preds.iter().chain(&from[e]) {
                        let p = start[u as usize] + k as usize;
                        for (r, &x) in row.iter_mut().zip(&seen[p * width..(p + 1) * width]) {
                            *r = (*r).max(x);
                        }
                        row[c(u)] = row[c(u)].max(k + 1);
                    }
                    if let Some(i) = list_of[e] {
                        if joins[i].0 != pass {
                            let mut j = vec![0u32; width];
                            for &(u, k) in &lists[i] {
                                let p = start[u as usize] + k as usize;
                                for (r, &x) in j.iter_mut().zip(&seen[p * width..(p + 1) * width]) {
                                    *r = (*r).max(x);
                                }
                                j[c(u)] = j[c(u)].max(k + 1);
                            }
                            joins[i] = (pass, j);
                        }
                        for (r, &x) in row.iter_mut().zip(&joins[i].1) {
                            *r = (*r).max(x);
                        }
                    }
                    if row[..] != seen[e * width..(e + 1) * width] {
                        seen[e * width..(e + 1) * width].copy_from_slice(&row);
                        changed = true;
                    }
                }
            }
        }
        ExecutesBefore {
            width,
            col,
            start,
            seen,
        }
    }

    /// The rows of [`ExecutesBefore::of`] in one pass over the events in
    /// a topological order of their edges (program order, `from`, and
    /// each wait's participant list, a node of its own whose row is the
    /// join of its members'), found by Kahn's algorithm. The fixed point
    /// took a pass per cross-thread link of the longest chain running
    /// against thread order: a pipeline's history of a thousand events
    /// took tens of passes. `None` if the edges have a cycle (a history
    /// the search built has none; the fixed point then decides).
    #[allow(clippy::too_many_arguments)]
    fn in_topological_order(
        s: &State,
        start: &[usize],
        col: &[u32],
        width: usize,
        from: &[Vec<(u32, u32)>],
        lists: &[Vec<(u32, u32)>],
        list_of: &[Option<usize>],
    ) -> Option<Vec<u32>> {
        let nt = s.hist.len();
        let n = start[nt];
        let nodes = n + lists.len();
        let idx = |(u, k): (u32, u32)| start[u as usize] + k as usize;
        let mut indeg = vec![0u32; nodes];
        let mut succs: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        let mut thread_of = vec![0u32; n];
        for (t, h) in s.hist.iter().enumerate() {
            for po in 0..h.len() {
                let e = start[t] + po;
                thread_of[e] = t as u32;
                if po > 0 {
                    succs[e - 1].push(e as u32);
                    indeg[e] += 1;
                }
                for &x in &from[e] {
                    succs[idx(x)].push(e as u32);
                    indeg[e] += 1;
                }
                if let Some(i) = list_of[e] {
                    succs[n + i].push(e as u32);
                    indeg[e] += 1;
                }
            }
        }
        for (i, list) in lists.iter().enumerate() {
            for &x in list {
                succs[idx(x)].push((n + i) as u32);
                indeg[n + i] += 1;
            }
        }
        let mut rows = vec![0u32; nodes * width];
        let mut ready: Vec<usize> = (0..nodes).filter(|&v| indeg[v] == 0).collect();
        let mut done = 0;
        while let Some(v) = ready.pop() {
            done += 1;
            // An event counts itself in its own column: what follows it
            // sees one more of its thread's events.
            let mut own = None;
            if v < n {
                let t = thread_of[v] as usize;
                let c = col[t] as usize;
                let po = (v - start[t]) as u32;
                rows[v * width + c] = rows[v * width + c].max(po);
                own = Some((c, po + 1));
            }
            for &w in &succs[v] {
                let w = w as usize;
                let (head, tail) = rows.split_at_mut(w.max(v) * width);
                let (src, dst) = if v < w {
                    (&head[v * width..(v + 1) * width], &mut tail[..width])
                } else {
                    (&tail[..width], &mut head[w * width..(w + 1) * width])
                };
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d = (*d).max(x);
                }
                if let Some((c, k)) = own {
                    dst[c] = dst[c].max(k);
                }
                indeg[w] -= 1;
                if indeg[w] == 0 {
                    ready.push(w);
                }
            }
        }
        if done < nodes {
            return None;
        }
        rows.truncate(n * width);
        Some(rows)
    }

    /// The index of event `(t, po)`.
    fn index(&self, (t, po): (u32, u32)) -> usize {
        self.start[t as usize] + po as usize
    }

    /// How many events of thread `u` execute before event `e` (they are a
    /// prefix of `u`'s history; for `e`'s own thread, the events before
    /// it).
    pub(crate) fn prefix(&self, e: (u32, u32), u: usize) -> u32 {
        match self.col[u] {
            u32::MAX => 0,
            c => self.seen[self.index(e) * self.width + c as usize],
        }
    }

    /// Does `a` execute before `b`? A launch event executes before every
    /// event of a thread.
    pub(crate) fn eb(&self, a: (u32, u32), b: (u32, u32)) -> bool {
        a.0 == LAUNCH || a.1 < self.seen[self.index(b) * self.width + self.col[a.0 as usize] as usize]
    }
}
