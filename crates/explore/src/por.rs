//! Partial-order reduction by independent thread groups (docs/explorer.md,
//! "Reductions", item 7).
//!
//! Two threads are *connected* when both may operate on some barrier
//! instance or location instance - named by their bodies, or dropped at
//! their ends (an exited thread leaves the barriers it holds) - or both
//! take part in host launches (hosts and the threads of named kernels form
//! one group; where a host calls `device_sync`, which waits for every
//! device thread's end, every thread is in that group). The connected
//! components of that relation are the *groups*. A step of a thread reads
//! and writes only its own thread and the objects its body names, so steps
//! of threads of different groups commute and never enable or disable
//! each other: every transition of one group is independent of every
//! transition of every other group, statically.
//!
//! At a state, the enabled steps of the group of the first thread that has
//! one are then a *persistent set* (Godefroid, "Partial-Order Methods for
//! the Verification of Concurrent Systems", ch. 4): no step outside the
//! set can ever become dependent on it, because a thread of the group that
//! is disabled now can only be enabled by a step of its own group, and all
//! of those that are enabled are in the set. A search that takes only a
//! persistent set at every state reaches every terminal state, and for every
//! path to one it takes a path with the same steps up to the order of
//! independent ones - the same execution, so the same findings along it.
//!
//! Persistent sets alone may ignore a group forever on a cycle (the
//! *ignoring problem*), and fairness is about the steps a cycle leaves out;
//! so the reduction's answer stands only where the state graph is
//! acyclic: every maximal path then ends in a terminal state, and the
//! verdicts - findings along the way, deadlocks and assertions at the end,
//! outcome sets - are those of the terminal states and the executions that
//! reach them. Where every execution is finite
//! ([`crate::system::Analyses::finite`]) that holds statically. Otherwise
//! the search records its state graph (for the liveness analysis anyway),
//! and if the reduced graph has a cycle or a spinning `await`, the search
//! is repeated without the reduction ([`System::reduced_cycle`]). That
//! test is exact: if the full graph has a reachable cycle, some infinite
//! path leaves the initial state, and a persistent set at its first state
//! either holds a step the path takes (the first such step commutes to the
//! front) or holds a step independent of all of its steps (which can be
//! put in front); either way an infinite path starts with a persistent
//! step, and by induction the reduced graph, which is finite, has a
//! cycle.

use crate::state::State;
use crate::system::System;
use crate::worker::Worker;
use crate::Choice;
use bc_graph::classes::live_instrs;
use bc_graph::*;

/// Per thread, the number of its group: the index of the group's first
/// thread. Threads of one group share objects at least transitively.
pub(crate) fn groups(p: &Program) -> Vec<u32> {
    let n = p.threads.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    // A host's `device_sync` waits for every device thread to end
    // (`System::device_idle`): where one exists, each thread's end is an
    // operation on the host object.
    let device_sync = p.threads.iter().any(|t| {
        p.codes[t.code.index()]
            .instrs
            .iter()
            .any(|i| matches!(i.kind, InstrKind::DeviceSync))
    });
    // Per object, the first thread that names it.
    let mut owner: rustc_hash::FxHashMap<Object, usize> = Default::default();
    for (t, info) in p.threads.iter().enumerate() {
        let mut objs = objects(p, t, info);
        if device_sync {
            objs.push(Object::Host);
        }
        for o in objs {
            match owner.get(&o) {
                Some(&u) => {
                    let (a, b) = (root(&mut parent, u), root(&mut parent, t));
                    // The smaller index is the root: the group's number
                    // is its first thread.
                    let (lo, hi) = (a.min(b), a.max(b));
                    parent[hi] = lo;
                }
                None => {
                    owner.insert(o, t);
                }
            }
        }
    }
    (0..n).map(|t| root(&mut parent, t) as u32).collect()
}

/// Every barrier instance thread `t` may operate on, sorted: those its
/// body names (each instruction its place lets it reach,
/// `bc_graph::classes::reachable_pcs`; every member of an
/// exclusion group a run-time selector may choose) and those its end may
/// drop (held since launch or joined; `BarrierInstance::dropped_at_end_by`).
pub(crate) fn barrier_instances(p: &Program, t: usize) -> Vec<BarrierId> {
    let (info, me) = (&p.threads[t], ThreadId(t as u32));
    // The `__syncwarp` masks naming its lane, held or not.
    let naming: Vec<BarrierId> = p.masks_naming(me).collect();
    // What its end may drop: the instances it holds, and the masks naming
    // its lane (joined at launch, `State::initial`).
    let mut out: Vec<BarrierId> = (info.barriers.iter().flatten().chain(&naming))
        .copied()
        .filter(|b| p.barriers[b.index()].dropped_at_end_by(me))
        .collect();
    let mut masked = false;
    for ins in live_instrs(p, me) {
        if let InstrKind::Barrier { op, sel, .. } = &ins.kind {
            masked |= matches!(op, BarrierOp::Arrive(a) if a.mask.is_some());
            out.extend(
                sel.decls(&p.groups)
                    .into_iter()
                    .filter_map(|d| info.barriers[d as usize]),
            );
        }
    }
    // A `__syncwarp` arrive marks its lane a stray in the open phases of
    // the warp's other masks that name it (`System::other_mask`): those
    // instances are objects of the thread too.
    if masked {
        out.extend(naming);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Something two threads' steps may both read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Object {
    Barrier(BarrierId),
    Loc(LocId),
    /// Kernel launches, streams and device synchronization.
    Host,
}

/// Every object thread `info` may operate on (an over-approximation: each
/// instruction of the body its place lets it reach, and every barrier instance
/// its end may drop, named by the body or joined at launch).
fn objects(p: &Program, t: usize, info: &ThreadInfo) -> Vec<Object> {
    let mut out: Vec<Object> = barrier_instances(p, t).into_iter().map(Object::Barrier).collect();
    if info.kernel.is_some() || info.kind == ThreadKind::Host {
        out.push(Object::Host);
    }
    // Location declarations: accessed as operands, or read by expressions.
    let mut decls = Vec::new();
    for ins in bc_graph::classes::live_instrs(p, ThreadId(t as u32)) {
        decls.extend(ins.kind.loc_decl());
        for e in ins.kind.exprs() {
            e.loc_decls(&mut decls);
        }
        if matches!(
            ins.kind,
            InstrKind::Launch { .. } | InstrKind::DeviceSync | InstrKind::StreamQuery { .. }
        ) {
            out.push(Object::Host);
        }
    }
    out.extend(
        decls
            .into_iter()
            .filter_map(|d| info.locs.get(d as usize).copied().flatten())
            .map(Object::Loc),
    );
    out
}

impl System<'_> {
    /// The persistent set of `choices` (a state's enabled steps, in thread
    /// order): the steps of the group of the first thread that has one;
    /// within it, the first arrive on a barrier whose arrives fuse alone
    /// (fuse.rs, "Arrive fusion"). Every choice where neither applies.
    pub(crate) fn persistent(&self, s: &State, mut choices: Vec<Choice>, ident: &[u32]) -> Vec<Choice> {
        let groups = &self.an.groups;
        if let Some(first) = choices.first().filter(|_| !groups.is_empty()) {
            let g = groups[first.thread as usize];
            choices.retain(|c| groups[c.thread as usize] == g);
        }
        // An arrive on a barrier whose arrives fuse is a persistent set on
        // its own, the one that opens a phase included (fuse.rs, "Arrive
        // fusion"): a phase's first arrive need not be tried for every
        // thread (a grid barrier's phase was opened once per block class
        // of threads, and each try normalized a state of all threads).
        // Not on a `cuda::barrier` object under arrive-before-wait: there
        // the thread whose arrive completes a phase owes a wait (`owes`),
        // so arrives of one phase leave different states in different
        // orders (no verdict differs - a lockstep barrier's threads wait
        // between arrives - but the states are not the same).
        if let Some(&c) = choices.iter().find(|c| {
            c.phase.is_none()
                && !self.owes_on_arrive(c.thread as usize, s)
                && self.arrive_on_fused(s, c.thread as usize, ident).is_some()
        }) {
            return vec![c];
        }
        // A step its phase cannot do without (required.rs).
        if let Some(c) = self.required_step(s, &choices, ident) {
            return vec![c];
        }
        choices
    }

    /// Testing aid (`SearchOptions::verify_encoding`): every step of `kept`
    /// (a persistent set) and every step of `all` outside it stay enabled
    /// after each other and reach one state in either order; panics
    /// otherwise. Checks a few pairs per state (the first four of each).
    /// Also checks the explorer's executes-before in topological order
    /// against the fixed point it replaced.
    pub(crate) fn check_independent(&self, s: &State, kept: &[Choice], all: &[Choice]) {
        crate::rules::ExecutesBefore::check_topological(s);
        let left: Vec<Choice> = all.iter().filter(|c| !kept.contains(c)).copied().collect();
        let mut w = Worker::new(s.threads.len());
        w.quiet = true;
        let ident: Vec<u32> = (0..s.threads.len() as u32).collect();
        for &a in kept.iter().take(4) {
            for &b in left.iter().take(4) {
                let mut ends = Vec::new();
                for (x, y) in [(a, b), (b, a)] {
                    let mut n = s.clone();
                    self.step(&mut n, x, &mut w);
                    assert!(
                        self.choices(&n, &ident).contains(&y),
                        "partial-order reduction: {y:?} is not enabled after {x:?}"
                    );
                    self.step(&mut n, y, &mut w);
                    // Arrives of one phase commute up to the order of its
                    // members, which canonicalization sorts.
                    self.canonicalize(&mut n);
                    self.retire_phases(&mut n);
                    ends.push(n);
                }
                assert!(
                    ends[0] == ends[1],
                    "partial-order reduction: {a:?} and {b:?} do not commute"
                );
                w.pending.clear();
            }
        }
    }

    /// Whether a search of a program with loops took persistent sets and
    /// its state graph (`edges` over `states` states) has a cycle - a
    /// spinning `await` counts as one. Then a group may have been ignored
    /// on it, and the search must be repeated without the reduction.
    pub(crate) fn reduced_cycle(&self, edges: &[crate::liveness::Edge], states: u32) -> bool {
        if self.an.groups.is_empty() || self.an.finite {
            return false;
        }
        if edges.iter().any(|e| e.spin) {
            return true;
        }
        // Kahn's algorithm: the graph is acyclic iff every state can be
        // removed once its predecessors are.
        let n = states as usize;
        let mut indegree = vec![0u32; n];
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for e in edges {
            indegree[e.to as usize] += 1;
            out[e.from as usize].push(e.to);
        }
        let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indegree[v as usize] == 0).collect();
        let mut removed = 0;
        while let Some(v) = ready.pop() {
            removed += 1;
            for &w in &out[v as usize] {
                indegree[w as usize] -= 1;
                if indegree[w as usize] == 0 {
                    ready.push(w);
                }
            }
        }
        removed < n
    }
}
