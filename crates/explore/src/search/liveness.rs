//! Liveness: fair cycles in the state graph.
//!
//! After an exhaustive search the explorer hands over its state graph. A
//! strongly connected component (Tarjan) in which some thread never ends is
//! an infinite execution; it counts when it is *fair* under the test's
//! progress model ("Forward progress" in the litmus spec; Sorensen et al.,
//! OOPSLA 2021, for `hsa`/`obe`/`lobe`; the CUDA execution-model rules for
//! `cuda`).
//!
//! Weak fairness is about threads: a fair thread that stays enabled is
//! eventually scheduled - a component admits a weakly fair cycle iff every
//! fair thread steps in it or is disabled somewhere in it (a cycle can then
//! cover the whole component). A thread spinning in `await` on a false
//! condition is enabled and steps (once it has started, its spin is a
//! self-loop; its first spin is a step into the state where it has).
//!
//! Strong fairness is about the transitions of the state graph: an edge
//! enabled infinitely often is taken infinitely often (Sorensen et al.'s
//! `FreeFromStrongDeadlockLasso`: from every reachable state, termination
//! stays reachable by steps of fair threads). A strongly fair run stays,
//! from some point on, in a set of states that it visits infinitely often
//! and that every edge of a fair thread leaving one of them leads back
//! into. So a state of a component with an edge of a fair thread that
//! leaves the component cannot recur forever; such states are removed and
//! the sub-components searched again (the Streett / Emerson-Lei
//! refinement; each round removes states, so it ends). A nontrivial
//! component that keeps every fair edge of its states inside admits a
//! strongly fair cycle: one through every state and every edge. (A step
//! taken from one state does not serve the same step avoided from another:
//! the earlier reading by program-level step labels let the lasso
//! S1 -> S3 -> S1 -> S2 -> S1 look fair with a store taken only from S2.)
//!
//! The analysis runs under the search's budget (docs/reliability.md,
//! "Resource guarantees"): what it allocates is charged while it holds it,
//! and the deadline and the memory bound are checked per component, per
//! refinement round and every [`CHECK_EVERY`] states of a graph walk. At a
//! limit it ends with `Err(stop)`: the search then reports that stop, and
//! only the fair cycles it had already recorded (each with a lasso replayed
//! in full) are findings.

use crate::state::answer::Stop;
use crate::state::budget::{Budget, Held};
use bc_graph::bits::Bits;
use bc_graph::{Program, ThreadKind};
use bc_models::Progress;
use std::cell::RefCell;

/// A graph walk (components, witness paths) checks the budget every this
/// many states.
pub(crate) const CHECK_EVERY: usize = 1024;

/// The bytes a hash set of `n` state numbers holds (slots, control bytes,
/// spare capacity).
fn set_bytes(n: usize) -> u64 {
    n as u64 * 16
}

/// The bytes the components of a walk hold: their states and vectors.
fn comps_bytes(comps: &[Vec<u32>]) -> u64 {
    comps.iter().map(|c| 24 + c.capacity() as u64 * 4).sum()
}

/// What the analysis needs of one state.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The parent in the breadth-first search tree (the state that first
    /// reached this one) and the choice that reached it.
    pub parent: u32,
    pub via: Option<crate::state::Choice>,
    /// Threads with a step (an edge) out of this state.
    pub enabled: Bits,
    /// Threads that have not finished.
    pub alive: Bits,
    /// Threads that have taken a step.
    pub started: Bits,
    /// Threads blocked in a barrier wait.
    pub at_wait: Bits,
    /// A host thread is blocked in `device_sync`.
    pub host_sync: bool,
}

/// The choices from the initial state to state `id` along the search-tree
/// parents the nodes record (the stem of a lasso).
pub(crate) fn stem(nodes: &[Node], id: u32) -> Vec<crate::state::Choice> {
    let mut stem = Vec::new();
    let mut at = id;
    while let Some(c) = nodes[at as usize].via {
        stem.push(c);
        at = nodes[at as usize].parent;
    }
    stem.reverse();
    stem
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub from: u32,
    pub to: u32,
    pub thread: u32,
    /// The step is a `stream_query` call (repeated calls guarantee device progress).
    pub query: bool,
    /// An `await` spin (a self-loop), not a real step.
    pub spin: bool,
    pub choice: crate::state::Choice,
}

/// A fair cycle found: the component's states, its entry state, and whether
/// a thread waits on a barrier forever in it (then it is a deadlock).
pub(crate) struct FairCycle {
    pub nodes: Vec<u32>,
    pub entry: u32,
    /// Threads that wait on a barrier throughout it (then it is a deadlock).
    pub stuck: Vec<u32>,
    /// What the witness cycle must take: a step of each of these threads
    /// (weak fairness; a device thread's under a host that waits for one).
    pub must_take: Vec<Goal>,
    /// Strong fairness: the fair threads, every edge of which out of a
    /// state the witness cycle visits it must take (empty under weak
    /// fairness).
    pub closed: Vec<u32>,
}

/// One edge the witness cycle must take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Goal {
    Thread(u32),
}

impl Goal {
    fn hit(self, e: &Edge) -> bool {
        match self {
            Goal::Thread(u) => e.thread == u,
        }
    }
}

pub(crate) struct Analysis<'a> {
    pub p: &'a Program,
    pub progress: Progress,
    pub strong: bool,
    pub nodes: &'a [Node],
    pub edges: &'a [Edge],
    /// Outgoing edge indices per node.
    pub out: Vec<Vec<u32>>,
    budget: &'a Budget,
    /// What the analysis holds for as long as it lives (its edge lists,
    /// the fair cycles found).
    kept: RefCell<Held<'a>>,
}

impl<'a> Analysis<'a> {
    /// The analysis of a state graph, its edge lists charged to `budget`
    /// as they are built (`Err` at a limit).
    pub fn new(
        p: &'a Program,
        progress: Progress,
        strong: bool,
        nodes: &'a [Node],
        edges: &'a [Edge],
        budget: &'a Budget,
    ) -> Result<Analysis<'a>, Stop> {
        // A vector per state (its header, and an allocation of at least
        // 16 bytes once it has an edge), four bytes per edge.
        let kept = budget.hold(nodes.len() as u64 * 40 + edges.len() as u64 * 4);
        budget.go_on()?;
        let mut out = vec![Vec::new(); nodes.len()];
        for (i, e) in edges.iter().enumerate() {
            out[e.from as usize].push(i as u32);
            if i % (CHECK_EVERY * 16) == 0 {
                budget.go_on()?;
            }
        }
        Ok(Analysis {
            p,
            progress,
            strong,
            nodes,
            edges,
            out,
            budget,
            kept: RefCell::new(kept),
        })
    }

    /// Fair cycles in which some thread never ends, in a deterministic
    /// order (components in Tarjan order): every one in which threads wait
    /// on a barrier throughout (deadlocks: each stuck execution is judged,
    /// as each end state is), and the first without (nontermination).
    ///
    /// Also returns a state of each *bottom* component (no edge leaves it)
    /// that is not a lone end state with spins and has no thread waiting
    /// throughout: an execution that enters one never ends, so no end
    /// state judges it; its history is in every state of the component
    /// (what a step adds must be forgotten to come back, and history
    /// compaction judges before it forgets), so the rule checker judges it
    /// there. (Components with waits stuck throughout are fair cycles,
    /// judged with the waits stuck.)
    pub fn find(&self) -> Result<(Vec<FairCycle>, Vec<u32>), Stop> {
        let _all_held = self.budget.hold(self.nodes.len() as u64 * 4);
        let all: Vec<u32> = (0..self.nodes.len() as u32).collect();
        let mut found = Vec::new();
        let mut bottoms = Vec::new();
        let comps = self.sccs(&all)?;
        let _comps_held = self.budget.hold(comps_bytes(&comps));
        for scc in comps {
            self.budget.go_on()?;
            self.fair_in(&scc, &mut found)?;
            let inside = |n: u32| scc.binary_search(&n).is_ok();
            let edges = || {
                scc.iter()
                    .flat_map(|&n| self.out[n as usize].iter().map(|&e| &self.edges[e as usize]))
            };
            let bottom = edges().all(|e| inside(e.to));
            let stuck = (0..self.nthreads()).any(|u| scc.iter().all(|&n| self.nodes[n as usize].at_wait.get(u)));
            if bottom && !stuck && edges().any(|e| !e.spin) {
                bottoms.push(scc[0]);
                self.kept.borrow_mut().add(4);
            }
        }
        Ok((found, bottoms))
    }

    fn nthreads(&self) -> usize {
        self.p.threads.len()
    }

    /// The fair threads of a component whose states look like `n`
    /// (finishing and starting are monotone) and in which the threads of
    /// `stepping` take steps (so they have started, spins included).
    fn fair_set(&self, n: &Node, stepping: &[u32]) -> Vec<u32> {
        let threads = &self.p.threads;
        let mut n = n.clone();
        for &u in stepping {
            n.started.set(u as usize);
        }
        let n = &n;
        let all = 0..self.nthreads() as u32;
        let block_started = |b: u32| {
            threads
                .iter()
                .enumerate()
                .any(|(u, t)| t.block == b && n.started.get(u))
        };
        let block_live = |b: u32| threads.iter().enumerate().any(|(u, t)| t.block == b && n.alive.get(u));
        let lowest_live = threads
            .iter()
            .enumerate()
            .filter(|(u, _)| n.alive.get(*u))
            .map(|(_, t)| t.block)
            .min();
        let max_started = threads
            .iter()
            .enumerate()
            .filter(|(u, _)| n.started.get(*u))
            .map(|(_, t)| t.block)
            .max();
        let hsa = |u: u32| Some(threads[u as usize].block) == lowest_live && block_live(threads[u as usize].block);
        let obe = |u: u32| block_started(threads[u as usize].block);
        // A copy agent is the hardware's: it finishes whatever the
        // progress model says of threads.
        let agent = |u: u32| threads[u as usize].kind == ThreadKind::Copy;
        let mut fair: Vec<u32> = match self.progress {
            Progress::Unfair => vec![],
            Progress::Fair => all.collect(),
            Progress::Hsa => all.filter(|&u| hsa(u)).collect(),
            Progress::Obe => all.filter(|&u| obe(u)).collect(),
            Progress::Lobe => all
                .filter(|&u| max_started.is_some_and(|m| threads[u as usize].block <= m))
                .collect(),
            Progress::HsaObe => all.filter(|&u| hsa(u) || obe(u)).collect(),
            Progress::Cuda => all
                .filter(|&u| {
                    let t = &threads[u as usize];
                    if t.kind == ThreadKind::Host {
                        return true;
                    }
                    // Once a device thread has run, its cluster (its grid
                    // under a cooperative launch) is fair: the execution
                    // model's guarantee is for the device threads of the
                    // cluster, whatever code they run, so explicit
                    // `thread`s of one block share it (issue 32, point
                    // 7; they used to count only when running one body).
                    // `cluster_id` numbers clusters across grids; only a
                    // kernel is launched cooperatively, and its threads
                    // share its code.
                    threads.iter().enumerate().any(|(v, o)| {
                        o.kind == ThreadKind::Device
                            && (o.cluster_id == t.cluster_id || (t.cooperative && o.code == t.code))
                            && n.started.get(v)
                    })
                })
                .collect(),
        };
        fair.extend((0..self.nthreads() as u32).filter(|&u| agent(u)));
        fair.sort_unstable();
        fair.dedup();
        fair
    }

    /// Adds to `found` the fair cycles within component `scc` that
    /// [`Analysis::find`] reports.
    fn fair_in(&self, scc: &[u32], found: &mut Vec<FairCycle>) -> Result<(), Stop> {
        self.budget.go_on()?;
        let mut held = self.budget.hold(set_bytes(scc.len()));
        let inside: std::collections::HashSet<u32> = scc.iter().copied().collect();
        let internal: Vec<&Edge> = scc
            .iter()
            .flat_map(|&n| self.out[n as usize].iter().map(|&e| &self.edges[e as usize]))
            .filter(|e| inside.contains(&e.to))
            .collect();
        if internal.is_empty() {
            return Ok(());
        }
        // The internal edges and the threads stepping on them.
        held.add(internal.len() as u64 * 12);
        self.budget.go_on()?;
        let rep = &self.nodes[scc[0] as usize];
        if (0..self.nthreads()).all(|u| !rep.alive.get(u)) {
            return Ok(());
        }
        let stepping: Vec<u32> = internal.iter().map(|e| e.thread).collect();
        let fair: Vec<u32> = self
            .fair_set(rep, &stepping)
            .into_iter()
            .filter(|&u| rep.alive.get(u as usize))
            .collect();
        let mut is_fair = vec![false; self.nthreads()];
        for &u in &fair {
            is_fair[u as usize] = true;
        }
        let steps = |u: u32| internal.iter().any(|e| e.thread == u);
        if self.strong {
            // A state with an edge of a fair thread that leaves the
            // component cannot recur forever in a strongly fair run: that
            // edge would be taken infinitely often, and the run would
            // leave. (Starting and ending are monotone, so the fair set is
            // the same in every state of a component.)
            let escapes = |n: u32| {
                self.out[n as usize].iter().any(|&ei| {
                    let e = &self.edges[ei as usize];
                    is_fair[e.thread as usize] && !inside.contains(&e.to)
                })
            };
            let rest: Vec<u32> = scc.iter().copied().filter(|&n| !escapes(n)).collect();
            if rest.len() < scc.len() {
                held.add(rest.len() as u64 * 4);
                let comps = self.sccs(&rest)?;
                let _comps_held = self.budget.hold(comps_bytes(&comps));
                for sub in comps {
                    self.fair_in(&sub, found)?;
                }
                return Ok(());
            }
        } else {
            // A fair thread that is enabled in every state of the
            // component but never steps in it.
            let unserved = fair
                .iter()
                .any(|&u| !steps(u) && scc.iter().all(|&n| self.nodes[n as usize].enabled.get(u as usize)));
            if unserved {
                return Ok(());
            }
        }
        // CUDA: a host in device_sync, or a host calling stream_query in the
        // cycle, guarantees that some device thread progresses.
        let needs_device = self.progress == Progress::Cuda
            && (scc.iter().any(|&n| self.nodes[n as usize].host_sync) || internal.iter().any(|e| e.query))
            && self
                .p
                .threads
                .iter()
                .enumerate()
                .any(|(u, t)| t.kind == ThreadKind::Device && rep.alive.get(u));
        let device_step = internal
            .iter()
            .find(|e| self.p.threads[e.thread as usize].kind == ThreadKind::Device);
        if needs_device && device_step.is_none() {
            return Ok(());
        }
        let stuck: Vec<u32> = (0..self.nthreads() as u32)
            .filter(|&u| {
                rep.alive.get(u as usize) && scc.iter().all(|&n| self.nodes[n as usize].at_wait.get(u as usize))
            })
            .collect();
        if stuck.is_empty() && found.iter().any(|c| c.stuck.is_empty()) {
            return Ok(());
        }
        // Under strong fairness the witness takes every fair edge of the
        // states it visits (`closed`), which serves every fair thread that
        // steps; under weak fairness, a step of each.
        let (mut must_take, closed): (Vec<Goal>, Vec<u32>) = if self.strong {
            (Vec::new(), fair.clone())
        } else {
            (
                fair.iter().copied().filter(|&u| steps(u)).map(Goal::Thread).collect(),
                Vec::new(),
            )
        };
        if needs_device {
            if let Some(e) = device_step {
                must_take.push(Goal::Thread(e.thread));
            }
        }
        if must_take.is_empty() {
            must_take.push(Goal::Thread(internal[0].thread));
        }
        must_take.dedup();
        self.kept.borrow_mut().add(
            std::mem::size_of::<FairCycle>() as u64
                + scc.len() as u64 * 4
                + must_take.len() as u64 * 8
                + closed.len() as u64 * 4,
        );
        found.push(FairCycle {
            nodes: scc.to_vec(),
            entry: scc[0],
            stuck,
            must_take,
            closed,
        });
        Ok(())
    }

    /// Strongly connected components of the subgraph on `within`, in
    /// Tarjan order (iterative).
    fn sccs(&self, within: &[u32]) -> Result<Vec<Vec<u32>>, Stop> {
        let n = self.nodes.len();
        // Membership, index, low link and stack flag per state of the
        // graph; the stacks per state walked.
        let _held = self.budget.hold(n as u64 * 10 + within.len() as u64 * 24);
        self.budget.go_on()?;
        let mut member = vec![false; n];
        for &v in within {
            member[v as usize] = true;
        }
        let mut index = vec![u32::MAX; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut out = Vec::new();
        let mut next = 0u32;
        for &root in within {
            if index[root as usize] != u32::MAX {
                continue;
            }
            // (node, next outgoing edge position)
            let mut work: Vec<(u32, usize)> = vec![(root, 0)];
            index[root as usize] = next;
            low[root as usize] = next;
            next += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            while let Some(&mut (v, ref mut pos)) = work.last_mut() {
                let outs = &self.out[v as usize];
                if *pos < outs.len() {
                    let w = self.edges[outs[*pos] as usize].to;
                    *pos += 1;
                    if !member[w as usize] {
                        continue;
                    }
                    if index[w as usize] == u32::MAX {
                        if (next as usize).is_multiple_of(CHECK_EVERY) {
                            self.budget.go_on()?;
                        }
                        index[w as usize] = next;
                        low[w as usize] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w as usize] = true;
                        work.push((w, 0));
                    } else if on_stack[w as usize] {
                        low[v as usize] = low[v as usize].min(index[w as usize]);
                    }
                } else {
                    work.pop();
                    if let Some(&(parent, _)) = work.last() {
                        low[parent as usize] = low[parent as usize].min(low[v as usize]);
                    }
                    if low[v as usize] == index[v as usize] {
                        let mut comp = Vec::new();
                        loop {
                            let w = stack.pop().expect("tarjan stack");
                            on_stack[w as usize] = false;
                            comp.push(w);
                            if w == v {
                                break;
                            }
                        }
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
        Ok(out)
    }

    /// A cycle from `entry` back to itself inside `nodes` that takes an
    /// edge of every goal in `must_take` and, under strong fairness, every
    /// edge of a thread of `closed` out of every state it visits: edge
    /// indices in order.
    pub fn cycle(&self, c: &FairCycle) -> Result<Vec<u32>, Stop> {
        // The component's set, and each walk's queue, seen set and links.
        let _held = self
            .budget
            .hold(set_bytes(c.nodes.len()) * 3 + c.nodes.len() as u64 * 16);
        self.budget.go_on()?;
        let inside: std::collections::HashSet<u32> = c.nodes.iter().copied().collect();
        let mut path = Vec::new();
        let mut at = c.entry;
        for &g in &c.must_take {
            // Shortest path (BFS) from `at` to an edge that meets `g`.
            if let Some(p) = self.bfs(at, &inside, |_, e| g.hit(e))? {
                at = self.edges[*p.last().expect("non-empty") as usize].to;
                path.extend(p);
            }
        }
        if !c.closed.is_empty() {
            return self.closed_cycle(c, &inside, path, at);
        }
        if at != c.entry || path.is_empty() {
            if let Some(p) = self.bfs(at, &inside, |_, e| e.to == c.entry)? {
                path.extend(p);
            }
        }
        Ok(path)
    }

    /// Strong fairness: extends `path` (from `c.entry` to `at`) to a cycle
    /// back to `c.entry` that takes every edge of a thread of `c.closed`
    /// out of every state it visits. Greedy: the nearest such edge not
    /// taken yet, until none is left, then back to the entry (and again,
    /// for the states that way visits). Each round takes a pending edge or
    /// returns to the entry, and the component keeps every fair edge of
    /// its states inside, so it ends.
    fn closed_cycle(
        &self,
        c: &FairCycle,
        inside: &std::collections::HashSet<u32>,
        mut path: Vec<u32>,
        mut at: u32,
    ) -> Result<Vec<u32>, Stop> {
        let edges: usize = c.nodes.iter().map(|&n| self.out[n as usize].len()).sum();
        let _held = self.budget.hold(set_bytes(edges) * 2 + set_bytes(c.nodes.len()));
        self.budget.go_on()?;
        let mut fair = vec![false; self.nthreads()];
        for &u in &c.closed {
            fair[u as usize] = true;
        }
        let mut visited = std::collections::HashSet::new();
        let mut taken: std::collections::HashSet<u32> = path.iter().copied().collect();
        let mut pending = std::collections::HashSet::new();
        let mut visit =
            |n: u32, taken: &std::collections::HashSet<u32>, pending: &mut std::collections::HashSet<u32>| {
                if visited.insert(n) {
                    for &ei in &self.out[n as usize] {
                        if fair[self.edges[ei as usize].thread as usize] && !taken.contains(&ei) {
                            pending.insert(ei);
                        }
                    }
                }
            };
        visit(c.entry, &taken, &mut pending);
        for &ei in &path {
            visit(self.edges[ei as usize].to, &taken, &mut pending);
        }
        loop {
            let next = if !pending.is_empty() {
                self.bfs(at, inside, |ei, _| pending.contains(&ei))?
            } else if at != c.entry || path.is_empty() {
                self.bfs(at, inside, |_, e| e.to == c.entry)?
            } else {
                break;
            };
            let Some(p) = next else {
                break;
            };
            for &ei in &p {
                taken.insert(ei);
                pending.remove(&ei);
                visit(self.edges[ei as usize].to, &taken, &mut pending);
            }
            at = self.edges[*p.last().expect("non-empty") as usize].to;
            path.extend(p);
        }
        Ok(path)
    }

    /// Edges of a shortest path from `from` inside `inside` ending with an
    /// edge that satisfies `goal`.
    fn bfs(
        &self,
        from: u32,
        inside: &std::collections::HashSet<u32>,
        goal: impl Fn(u32, &Edge) -> bool,
    ) -> Result<Option<Vec<u32>>, Stop> {
        let mut prev: std::collections::HashMap<u32, (u32, u32)> = std::collections::HashMap::new();
        let mut queue = std::collections::VecDeque::from([from]);
        let mut seen = std::collections::HashSet::from([from]);
        let mut popped = 0usize;
        while let Some(v) = queue.pop_front() {
            popped += 1;
            if popped.is_multiple_of(CHECK_EVERY) {
                self.budget.go_on()?;
            }
            for &ei in &self.out[v as usize] {
                let e = &self.edges[ei as usize];
                if !inside.contains(&e.to) {
                    continue;
                }
                if goal(ei, e) {
                    let mut path = vec![ei];
                    let mut cur = v;
                    while cur != from {
                        let (p, pe) = prev[&cur];
                        path.push(pe);
                        cur = p;
                    }
                    path.reverse();
                    return Ok(Some(path));
                }
                if seen.insert(e.to) {
                    prev.insert(e.to, (v, ei));
                    queue.push_back(e.to);
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::options::Limits;
    use crate::state::Choice;
    use std::time::{Duration, Instant};

    /// Two threads spinning on a flag nobody sets, under weak fairness.
    fn program() -> Program {
        let text = "litmus \"spin\"\nmodel amdgpu\nprogress fair\nvar x = 0\nthread A { L: r = load x; if r == 0 { goto L } }\nthread B { L: q = load x; if q == 0 { goto L } }\n";
        let (lit, diags) = bc_syntax::parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = bc_graph::lower::resolve_model(&lit, None).unwrap();
        bc_graph::lower(&lit, text, model).unwrap()
    }

    /// A ring of `n` states, both threads alive and enabled everywhere,
    /// the threads taking turns: one component, a fair cycle.
    fn ring(n: u32) -> (Vec<Node>, Vec<Edge>) {
        let mut all = Bits::new(2);
        all.set(0);
        all.set(1);
        let node = |i: u32| Node {
            parent: i.wrapping_sub(1),
            via: (i > 0).then_some(Choice {
                thread: (i - 1) % 2,
                phase: None,
            }),
            enabled: all.clone(),
            alive: all.clone(),
            started: all.clone(),
            at_wait: Bits::new(2),
            host_sync: false,
        };
        let edge = |i: u32| Edge {
            from: i,
            to: (i + 1) % n,
            thread: i % 2,
            query: false,
            spin: false,
            choice: Choice {
                thread: i % 2,
                phase: None,
            },
        };
        ((0..n).map(node).collect(), (0..n).map(edge).collect())
    }

    /// A graph of `n` states, both threads alive and started everywhere,
    /// with the edges `(from, to, thread)`.
    fn graph(n: u32, edges: &[(u32, u32, u32)]) -> (Vec<Node>, Vec<Edge>) {
        let mut all = Bits::new(2);
        all.set(0);
        all.set(1);
        let nodes = (0..n)
            .map(|i| {
                let mut enabled = Bits::new(2);
                for &(_, _, u) in edges.iter().filter(|e| e.0 == i) {
                    enabled.set(u as usize);
                }
                Node {
                    parent: 0,
                    via: None,
                    enabled,
                    alive: all.clone(),
                    started: all.clone(),
                    at_wait: Bits::new(2),
                    host_sync: false,
                }
            })
            .collect();
        let edges = edges
            .iter()
            .map(|&(from, to, thread)| Edge {
                from,
                to,
                thread,
                query: false,
                spin: false,
                choice: Choice { thread, phase: None },
            })
            .collect();
        (nodes, edges)
    }

    /// Whether some set of states is strongly connected by its own edges
    /// (one at least), and keeps inside every edge leaving one of its
    /// states: a strongly fair run (every thread fair) can stay in it
    /// forever. Brute force over the subsets.
    fn strongly_fair_by_subsets(n: u32, edges: &[(u32, u32, u32)]) -> bool {
        (1u32..1 << n).any(|set| {
            let inside = |v: u32| set >> v & 1 == 1;
            let closed = edges.iter().all(|&(f, t, _)| !inside(f) || inside(t));
            if !closed || !edges.iter().any(|&(f, _, _)| inside(f)) {
                return false;
            }
            // Every member reaches every member (within the set).
            (0..n).filter(|&v| inside(v)).all(|v| {
                let mut seen = 1u32 << v;
                loop {
                    let more = edges
                        .iter()
                        .filter(|&&(f, t, _)| seen >> f & 1 == 1 && inside(t))
                        .fold(seen, |acc, &(_, t, _)| acc | 1 << t);
                    if more == seen {
                        break;
                    }
                    seen = more;
                }
                seen & set == set
            })
        })
    }

    /// Checks the analysis against the brute force, and its witness: a
    /// cycle from the entry back to it that takes every edge out of every
    /// state it visits.
    fn check_strong(n: u32, edges: &[(u32, u32, u32)]) -> bool {
        let p = program();
        let (nodes, es) = graph(n, edges);
        let b = budget(None, 1 << 30);
        let a = Analysis::new(&p, Progress::Fair, true, &nodes, &es, &b).unwrap();
        let (cycles, _) = a.find().unwrap();
        assert_eq!(
            !cycles.is_empty(),
            strongly_fair_by_subsets(n, edges),
            "strong fairness on {edges:?}"
        );
        for c in &cycles {
            let path = a.cycle(c).unwrap();
            assert!(!path.is_empty());
            let mut at = c.entry;
            for &e in &path {
                assert_eq!(es[e as usize].from, at, "a path: {path:?} on {edges:?}");
                at = es[e as usize].to;
            }
            assert_eq!(at, c.entry, "a cycle: {path:?} on {edges:?}");
            for &e in &path {
                let from = es[e as usize].from;
                for (i, _) in es.iter().enumerate().filter(|(_, x)| x.from == from) {
                    assert!(path.contains(&(i as u32)), "edge {i} not taken: {path:?} on {edges:?}");
                }
            }
        }
        !cycles.is_empty()
    }

    /// Issue 32, point 8: strong fairness is per transition. Thread 0
    /// toggles S1 -> S3 -> S1; thread 1 goes S1 -> S2 and stores back
    /// S2 -> S1. The store is enabled in S3 too, where it leads to S4 and
    /// on to the end (S5). The lasso S1 -> S3 -> S1 -> S2 -> S1 takes the
    /// store from S2 but never from S3: per program-level step it looked
    /// fair; per transition S3 cannot recur forever, then S1 cannot (its
    /// edge to S3), and no fair cycle is left. Without the way out from S3
    /// (the store from S3 back to S1) it is fair.
    #[test]
    fn strong_fairness_is_per_transition() {
        let (s1, s2, s3, s4, s5) = (0, 1, 2, 3, 4);
        let escape = [
            (s1, s3, 0),
            (s3, s1, 0),
            (s1, s2, 1),
            (s2, s1, 1),
            (s3, s4, 1),
            (s4, s5, 0),
        ];
        assert!(!check_strong(5, &escape));
        let back = [(s1, s3, 0), (s3, s1, 0), (s1, s2, 1), (s2, s1, 1), (s3, s1, 1)];
        assert!(check_strong(3, &back));
        // Weak fairness stays per thread: both threads step on the lasso.
        let p = program();
        let (nodes, es) = graph(5, &escape);
        let b = budget(None, 1 << 30);
        let a = Analysis::new(&p, Progress::Fair, false, &nodes, &es, &b).unwrap();
        assert_eq!(a.find().unwrap().0.len(), 1);
    }

    /// Random graphs of up to 7 states: the refinement finds a strongly
    /// fair cycle exactly when some set of states is closed and strongly
    /// connected, and its witness takes every edge out of every state it
    /// visits.
    #[test]
    fn strong_fairness_agrees_with_brute_force() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |k: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % k
        };
        let mut fair = 0;
        for _ in 0..3000 {
            let n = 2 + next(6) as u32;
            let m = next(3 * n as u64) as usize;
            let edges: Vec<(u32, u32, u32)> = (0..m)
                .map(|_| (next(n as u64) as u32, next(n as u64) as u32, next(2) as u32))
                .collect();
            fair += check_strong(n, &edges) as u32;
        }
        // Both answers are exercised.
        assert!(fair > 100 && fair < 2900, "{fair} of 3000 fair");
    }

    fn budget(timeout: Option<Duration>, max_memory: u64) -> Budget {
        let limits = Limits {
            time: timeout,
            memory: max_memory,
            ..Limits::default()
        };
        Budget::new(&limits, Instant::now())
    }

    const N: u32 = 100_000;

    #[test]
    fn the_analysis_finds_the_ring_within_its_budget() {
        let p = program();
        let (nodes, edges) = ring(N);
        let b = budget(None, 1 << 30);
        let a = Analysis::new(&p, Progress::Fair, false, &nodes, &edges, &b).unwrap();
        let (cycles, _) = a.find().unwrap();
        assert_eq!(cycles.len(), 1);
        assert_eq!(a.cycle(&cycles[0]).unwrap().len(), N as usize);
    }

    /// A deadline that has passed ends the analysis with `timeout`, and a
    /// memory bound the analysis passes ends it with `memory-limit`: at
    /// building the edge lists, or later, while components are walked.
    #[test]
    fn the_analysis_stops_at_the_budget() {
        let p = program();
        let (nodes, edges) = ring(N);
        let late = budget(Some(Duration::ZERO), 1 << 30);
        assert_eq!(
            Analysis::new(&p, Progress::Fair, false, &nodes, &edges, &late).err(),
            Some(Stop::Timeout)
        );
        // 3/4 of the budget is charged: 1 MiB holds no edge lists of 100,000 states.
        let small = budget(None, 1 << 20);
        assert_eq!(
            Analysis::new(&p, Progress::Fair, false, &nodes, &edges, &small).err(),
            Some(Stop::MemoryLimit)
        );
        // 4.4 MB of edge lists fit in 6 MiB (4.5 charged), the walk's
        // further 1.4 MB do not.
        let mid = budget(None, 6 << 20);
        let a = Analysis::new(&p, Progress::Fair, false, &nodes, &edges, &mid).unwrap();
        assert_eq!(a.find().err(), Some(Stop::MemoryLimit));
    }
}
