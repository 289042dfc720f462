//! The facts every rule reads, computed once per execution: the bmo replay
//! ([`Replay`]), each event's index in its thread, the join that is
//! barrier-joined-before each event, the waits each operation participates
//! in, and (once it is known to be acyclic) barrier-executes-before as a
//! transitive closure ("AMDGPU Execution Synchronization", "Execution
//! Model").

use crate::joined::Join;
use crate::phases::Replay;
use bc_graph::bits::Bits;
use bc_graph::{EventId, EventKind, Execution};
use bc_models::RuleSet;
use std::ops::Deref;

/// What the rules read that does not need executes-before.
pub(crate) struct Facts<'a> {
    pub exec: &'a Execution,
    pub replay: Replay,
    /// Each event's index in its thread's program order.
    pub po_index: Vec<usize>,
    /// For each event, the join that is barrier-joined-before it, if any.
    pub joined: Vec<Option<Join>>,
    /// For each event, the waits it participates in: built when a rule
    /// first asks ([`Facts::waits_of`]; only drops after arrives and stuck
    /// waits do, and a phase of T threads has T^2 entries).
    waits_of: std::cell::OnceCell<Vec<Vec<EventId>>>,
}

impl<'a> Facts<'a> {
    pub fn new(exec: &'a Execution, rules: RuleSet) -> Facts<'a> {
        let n = exec.events.len();
        let mut po_index = vec![0usize; n];
        for evs in &exec.program_order {
            for (i, &e) in evs.iter().enumerate() {
                po_index[e.index()] = i;
            }
        }
        Facts {
            exec,
            replay: Replay::new(exec),
            po_index,
            joined: crate::joined::joined_before(exec, rules),
            waits_of: std::cell::OnceCell::new(),
        }
    }

    /// The waits event `x` participates in.
    pub fn waits_of(&self, x: EventId) -> &[EventId] {
        let all = self.waits_of.get_or_init(|| {
            let mut out = vec![Vec::new(); self.exec.events.len()];
            for w in self.exec.ids() {
                for &p in self.exec.participants(w) {
                    out[p.index()].push(w);
                }
            }
            out
        });
        &all[x.index()]
    }

    /// The events of `e`'s thread that precede it in program order.
    pub fn earlier(&self, e: EventId) -> &'a [EventId] {
        let t = self
            .exec
            .event(e)
            .thread
            .expect("only thread events have a program order");
        &self.exec.program_order[t.index()][..self.po_index[e.index()]]
    }

    /// The phase the first participant of wait `w` belongs to.
    pub fn phase_of_wait(&self, w: EventId) -> Option<usize> {
        self.exec
            .participants(w)
            .first()
            .and_then(|x| self.replay.phase_of[x.index()])
    }

    /// A thread-counted arrive (CUDA `bar.sync`, `__syncthreads`) binds its
    /// thread's next wait to its own phase: the hardware barrier resets at
    /// its count, so a surplus arrival waits for a new phase (project
    /// notes, section 3, counted named barriers). The latest arrive of
    /// wait `w`'s thread on its barrier before it, when that arrive is
    /// counted.
    pub fn own_counted_arrive(&self, w: EventId) -> Option<EventId> {
        let exec = self.exec;
        let target = exec.event(w).target;
        self.earlier(w)
            .iter()
            .rev()
            .find(|&&a| exec.event(a).target == target && matches!(exec.event(a).kind, EventKind::Arrive { .. }))
            .copied()
            .filter(|&a| matches!(exec.event(a).kind, EventKind::Arrive { count: Some(_), .. }))
    }
}

/// The facts with barrier-executes-before, which the rules after
/// `executes-before-consistent` read.
pub(crate) struct Ordered<'a> {
    pub facts: Facts<'a>,
    /// `before[e]` holds every event that executes before `e`.
    pub before: Vec<Bits>,
    /// `Execution::started_before` by thread: the entries that name the
    /// thread (so `entitles` reads one thread's lists, not every
    /// thread's).
    pub started: Vec<Vec<usize>>,
}

impl<'a> Deref for Ordered<'a> {
    type Target = Facts<'a>;
    fn deref(&self) -> &Facts<'a> {
        &self.facts
    }
}

impl<'a> Ordered<'a> {
    /// The facts ordered by `before` (barrier-executes-before).
    pub fn new(facts: Facts<'a>, before: Vec<Bits>) -> Self {
        let exec = facts.exec;
        let mut started = vec![Vec::new(); exec.program_order.len()];
        for (i, (ts, _)) in exec.started_before.iter().enumerate() {
            for t in ts {
                if let Some(entries) = started.get_mut(t.index()) {
                    entries.push(i);
                }
            }
        }
        Ordered { facts, before, started }
    }

    /// Does `a` barrier-execute-before `b`?
    pub fn eb(&self, a: EventId, b: EventId) -> bool {
        self.before[b.index()].get(a.index())
    }

    /// Does join `j` execute before event `x`?
    pub fn entitles(&self, j: Join, x: EventId) -> bool {
        let exec = self.exec;
        match j {
            Join::Event(j) => self.eb(j, x),
            // The join at launch executes before what the thread's start
            // does: its first event stands for the start, or, once an
            // explorer forgot that event, the recorded `started_before`.
            Join::Launch(t) => {
                exec.event(x).thread == Some(t)
                    || exec.program_order[t.index()].first().is_some_and(|&f| self.eb(f, x))
                    || self.started.get(t.index()).is_some_and(|entries| {
                        entries
                            .iter()
                            .flat_map(|&i| &exec.started_before[i].1)
                            .any(|&y| y == x || self.eb(y, x))
                    })
            }
        }
    }
}

/// executes-before as a transitive closure of program order (launch events
/// first), participates-in and the execution's extra edges: `before[e]`
/// holds every event that executes before `e`. `Err` lists the events on a
/// cycle.
pub fn executes_before(exec: &Execution) -> Result<Vec<Bits>, Vec<EventId>> {
    closure(exec, false)
}

/// The order the race rule reads where some barrier orders memory only
/// through fences (`BarrierProps::needs_fence`; docs/semantics.md,
/// "Barriers and memory"), or some arrive is relaxed: `mo[e]` holds the
/// events memory-ordered before `e`. Its edges are program order, the
/// launch, the summaries, the participants of waits on barriers that order
/// memory (but relaxed arrives), and one edge from
/// each fence to every event of another thread it executes before, where
/// the fence's scope holds both threads: a completed `membar` has performed
/// its thread's earlier accesses (and those memory-ordered before them:
/// the order is transitive, so fences are cumulative) for every thread of
/// its scope, and whatever executes after it sees them. A wait on a
/// barrier that orders memory only through fences adds nothing by itself.
pub fn memory_order(exec: &Execution) -> Result<Vec<Bits>, Vec<EventId>> {
    let eb = closure(exec, false)?;
    let n = exec.events.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let launch: Vec<EventId> = exec.ids().filter(|&e| exec.event(e).thread.is_none()).collect();
    for w in launch.windows(2) {
        preds[w[1].index()].push(w[0].index());
    }
    for evs in &exec.program_order {
        if let (Some(&first), Some(&l)) = (evs.first(), launch.last()) {
            preds[first.index()].push(l.index());
        }
        for w in evs.windows(2) {
            preds[w[1].index()].push(w[0].index());
        }
    }
    for w in exec.ids() {
        let ordering = match exec.event(w).target {
            bc_graph::Target::Barrier(b) => !exec.props(b).needs_fence,
            _ => true,
        };
        if ordering {
            // A relaxed arrive, or a thread's (relaxed) expect-tx, orders no
            // memory: only a fence before it. A thread's exit (its end
            // drop) orders memory as its phase's arrives do: none in a
            // phase of relaxed arrives (a warp intrinsic's, `elect.sync`'s:
            // review of session 39, a lane's write before its exit was
            // ordered before a read after the intrinsic).
            // (The phase's arrives are asked only where a drop takes part.)
            let parts = exec.participants(w);
            let relaxed = std::cell::OnceCell::new();
            let relaxed = || *relaxed.get_or_init(|| parts.iter().any(|&x| exec.event(x).kind.orders_no_memory()));
            preds[w.index()].extend(
                (parts.iter())
                    .filter(|&&x| {
                        let k = &exec.event(x).kind;
                        !(k.orders_no_memory() || (matches!(k, EventKind::Drop) && relaxed()))
                    })
                    .map(|x| x.index()),
            );
        }
    }
    for &(a, b) in &exec.extra_eb {
        preds[b.index()].push(a.index());
    }
    let fences: Vec<(usize, bc_graph::ThreadId, bc_graph::FenceScope)> = exec
        .ids()
        .filter_map(|e| match (&exec.event(e).kind, exec.event(e).thread) {
            (EventKind::Fence { scope }, Some(t)) => Some((e.index(), t, *scope)),
            _ => None,
        })
        .collect();
    // Executes-before contains every edge above, so an order by the number
    // of events executing before is topological for them.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&e| eb[e].count());
    let mut mo = vec![Bits::new(n); n];
    for e in order {
        let mut acc = Bits::new(n);
        let add = |acc: &mut Bits, p: usize, mo: &[Bits]| {
            acc.union_with(&mo[p]);
            acc.set(p);
        };
        for &p in &preds[e] {
            add(&mut acc, p, &mo);
        }
        if let Some(t) = exec.events[e].thread {
            let here = exec.thread(t);
            for &(f, u, scope) in &fences {
                if u != t && eb[e].get(f) && scope.covers(exec.thread(u).shared_scope(&here)) {
                    add(&mut acc, f, &mo);
                }
            }
        }
        mo[e] = acc;
    }
    Ok(mo)
}

/// The transitive closure of executes-before's edges, with every bmo's
/// order too when `bmo` is set (the order every interleaving of the
/// execution follows).
pub(crate) fn closure(exec: &Execution, bmo: bool) -> Result<Vec<Bits>, Vec<EventId>> {
    let n = exec.events.len();
    let launch: Vec<EventId> = exec.ids().filter(|&e| exec.event(e).thread.is_none()).collect();
    // Nodes: the events, then one per distinct participant list (by
    // address: `Participants`). The waits of one phase share their
    // participants (T waits of T participants each on a phase of T
    // threads): each list's union is taken once, at its node, and each of
    // its waits reads the node (which is no event, so it sets no bit).
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for w in launch.windows(2) {
        preds[w[1].index()].push(w[0].0);
    }
    for evs in &exec.program_order {
        if let (Some(&first), Some(&l)) = (evs.first(), launch.last()) {
            preds[first.index()].push(l.0);
        }
        for w in evs.windows(2) {
            preds[w[1].index()].push(w[0].0);
        }
    }
    let mut lists: rustc_hash::FxHashMap<*const [EventId], u32> = Default::default();
    for w in exec.ids() {
        let ps = exec.participants(w);
        if ps.is_empty() {
            continue;
        }
        let node = *lists.entry(std::ptr::from_ref(ps)).or_insert_with(|| {
            preds.push(ps.iter().map(|x| x.0).collect());
            (preds.len() - 1) as u32
        });
        preds[w.index()].push(node);
    }
    for &(a, b) in &exec.extra_eb {
        preds[b.index()].push(a.0);
    }
    if bmo {
        for o in &exec.bmo {
            for w in o.windows(2) {
                preds[w[1].index()].push(w[0].0);
            }
        }
    }
    // Kahn's algorithm for a topological order.
    let nodes = preds.len();
    let mut indeg: Vec<usize> = preds.iter().map(|p| p.len()).collect();
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    for (e, ps) in preds.iter().enumerate() {
        for &p in ps {
            succs[p as usize].push(e as u32);
        }
    }
    let mut ready: Vec<u32> = (0..nodes as u32).filter(|&e| indeg[e as usize] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(nodes);
    while let Some(e) = ready.pop() {
        order.push(e);
        for &s in &succs[e as usize] {
            indeg[s as usize] -= 1;
            if indeg[s as usize] == 0 {
                ready.push(s);
            }
        }
    }
    if order.len() != nodes {
        return Err(exec.ids().filter(|e| indeg[e.index()] > 0).collect());
    }
    // Every row is written once, in topological order, before any row
    // reads it: the rows start empty (no allocation) rather than zeroed.
    let mut before = vec![Bits::default(); nodes];
    for e in order {
        let mut acc = Bits::new(n);
        for &p in &preds[e as usize] {
            acc.union_with(&before[p as usize]);
            if (p as usize) < n {
                acc.set(p as usize);
            }
        }
        before[e as usize] = acc;
    }
    before.truncate(n);
    Ok(before)
}
