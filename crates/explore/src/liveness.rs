//! Liveness: fair cycles in the state graph.
//!
//! After an exhaustive search the explorer hands over its state graph. A
//! strongly connected component (Tarjan) in which some thread never ends is
//! an infinite execution; it counts when it is *fair* under the test's
//! progress model ("Forward progress" in the litmus spec; Sorensen et al.,
//! OOPSLA 2021, for `hsa`/`obe`/`lobe`; the CUDA execution-model rules for
//! `cuda`). Weak fairness: a fair thread that stays enabled is eventually
//! scheduled - a component admits a weakly fair cycle iff every fair thread
//! steps in it or is disabled somewhere in it (a cycle can then cover the
//! whole component). Strong fairness: a fair thread enabled infinitely often
//! steps infinitely often - states where an unserved thread is enabled are
//! removed and the rest is searched again (the usual Streett refinement).
//! A thread spinning in `await` on a false condition is enabled and steps
//! (its spin is a self-loop), so a spin never makes a cycle unfair.

use bc_graph::bits::Bits;
use bc_graph::{Program, ThreadKind};
use bc_models::Progress;

/// What the analysis needs of one state.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The DFS-tree parent and the choice that reached this state.
    pub parent: u32,
    pub via: Option<crate::Choice>,
    /// Threads with a step (an edge) out of this state.
    pub enabled: Bits,
    /// Threads spinning on a false `await` (enabled; their spin is a self-loop).
    pub spinning: Bits,
    /// Threads that have not finished.
    pub alive: Bits,
    /// Threads that have taken a step.
    pub started: Bits,
    /// Threads blocked in a barrier wait.
    pub at_wait: Bits,
    /// A host thread is blocked in `device_sync`.
    pub host_sync: bool,
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
    pub choice: crate::Choice,
}

/// A fair cycle found: the component's states, its entry state, and whether
/// a thread waits on a barrier forever in it (then it is a deadlock).
pub(crate) struct FairCycle {
    pub nodes: Vec<u32>,
    pub entry: u32,
    pub stuck_waiter: Option<u32>,
    /// Threads that must step in the witness cycle.
    pub must_step: Vec<u32>,
}

pub(crate) struct Analysis<'a> {
    pub p: &'a Program,
    pub progress: Progress,
    pub strong: bool,
    pub nodes: &'a [Node],
    pub edges: &'a [Edge],
    /// Outgoing edge indices per node.
    pub out: Vec<Vec<u32>>,
}

impl<'a> Analysis<'a> {
    pub fn new(p: &'a Program, progress: Progress, strong: bool, nodes: &'a [Node], edges: &'a [Edge]) -> Analysis<'a> {
        let mut out = vec![Vec::new(); nodes.len()];
        for (i, e) in edges.iter().enumerate() {
            out[e.from as usize].push(i as u32);
        }
        Analysis {
            p,
            progress,
            strong,
            nodes,
            edges,
            out,
        }
    }

    /// The first fair cycle in which some thread never ends, in a
    /// deterministic order (components in Tarjan order).
    pub fn find(&self) -> Option<FairCycle> {
        let all: Vec<u32> = (0..self.nodes.len() as u32).collect();
        for scc in self.sccs(&all) {
            if let Some(c) = self.fair_in(&scc) {
                return Some(c);
            }
        }
        None
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
        match self.progress {
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
                    // under a cooperative launch) is fair.
                    threads.iter().enumerate().any(|(v, o)| {
                        o.kind == ThreadKind::Device
                            && o.code == t.code
                            && (o.cluster == t.cluster || t.cooperative)
                            && n.started.get(v)
                    })
                })
                .collect(),
        }
    }

    /// A fair cycle within component `scc`, if any.
    fn fair_in(&self, scc: &[u32]) -> Option<FairCycle> {
        let inside: std::collections::HashSet<u32> = scc.iter().copied().collect();
        let internal: Vec<&Edge> = scc
            .iter()
            .flat_map(|&n| self.out[n as usize].iter().map(|&e| &self.edges[e as usize]))
            .filter(|e| inside.contains(&e.to))
            .collect();
        if internal.is_empty() {
            return None;
        }
        let rep = &self.nodes[scc[0] as usize];
        if (0..self.nthreads()).all(|u| !rep.alive.get(u)) {
            return None;
        }
        let stepping: Vec<u32> = internal.iter().map(|e| e.thread).collect();
        let fair: Vec<u32> = self
            .fair_set(rep, &stepping)
            .into_iter()
            .filter(|&u| rep.alive.get(u as usize))
            .collect();
        // Weak fairness counts a spin as a step of an enabled thread;
        // strong fairness is about real steps: one enabled infinitely often
        // (a spin's exit when its condition holds) must be taken.
        let strong = self.strong;
        let steps = |u: u32| internal.iter().any(|e| e.thread == u && !(strong && e.spin));
        let real_enabled = |n: u32, u: u32| {
            let node = &self.nodes[n as usize];
            node.enabled.get(u as usize) && !node.spinning.get(u as usize)
        };
        // A fair thread that is enabled in some state of the component but
        // never steps in it.
        let unserved = fair.iter().copied().find(|&u| {
            !steps(u)
                && if strong {
                    scc.iter().any(|&n| real_enabled(n, u))
                } else {
                    scc.iter().all(|&n| self.nodes[n as usize].enabled.get(u as usize))
                }
        });
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
        let device_steps = internal
            .iter()
            .any(|e| self.p.threads[e.thread as usize].kind == ThreadKind::Device);
        match unserved {
            None if !needs_device || device_steps => {
                let stuck_waiter = (0..self.nthreads() as u32).find(|&u| {
                    rep.alive.get(u as usize) && scc.iter().all(|&n| self.nodes[n as usize].at_wait.get(u as usize))
                });
                let mut must_step: Vec<u32> = fair.iter().copied().filter(|&u| steps(u)).collect();
                if needs_device {
                    if let Some(e) = internal
                        .iter()
                        .find(|e| self.p.threads[e.thread as usize].kind == ThreadKind::Device)
                    {
                        must_step.push(e.thread);
                    }
                }
                if must_step.is_empty() {
                    must_step.push(internal[0].thread);
                }
                must_step.dedup();
                Some(FairCycle {
                    nodes: scc.to_vec(),
                    entry: scc[0],
                    stuck_waiter,
                    must_step,
                })
            }
            Some(u) if self.strong => {
                // Drop the states where `u` is enabled and search again.
                let rest: Vec<u32> = scc.iter().copied().filter(|&n| !real_enabled(n, u)).collect();
                self.sccs(&rest).into_iter().find_map(|sub| self.fair_in(&sub))
            }
            _ => None,
        }
    }

    /// Strongly connected components of the subgraph on `within`, in
    /// Tarjan order (iterative).
    fn sccs(&self, within: &[u32]) -> Vec<Vec<u32>> {
        let n = self.nodes.len();
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
        out
    }

    /// A cycle from `entry` back to itself inside `nodes` that takes a step
    /// of every thread in `must_step`: edge indices in order.
    pub fn cycle(&self, c: &FairCycle) -> Vec<u32> {
        let inside: std::collections::HashSet<u32> = c.nodes.iter().copied().collect();
        let mut path = Vec::new();
        let mut at = c.entry;
        for &u in &c.must_step {
            // Shortest path (BFS) from `at` to an edge of thread `u`.
            if let Some(p) = self.bfs(at, &inside, |e| e.thread == u) {
                at = self.edges[*p.last().expect("non-empty") as usize].to;
                path.extend(p);
            }
        }
        if at != c.entry || path.is_empty() {
            if let Some(p) = self.bfs(at, &inside, |e| e.to == c.entry) {
                path.extend(p);
            }
        }
        path
    }

    /// Edges of a shortest path from `from` inside `inside` ending with an
    /// edge that satisfies `goal`.
    fn bfs(
        &self,
        from: u32,
        inside: &std::collections::HashSet<u32>,
        goal: impl Fn(&Edge) -> bool,
    ) -> Option<Vec<u32>> {
        let mut prev: std::collections::HashMap<u32, (u32, u32)> = std::collections::HashMap::new();
        let mut queue = std::collections::VecDeque::from([from]);
        let mut seen = std::collections::HashSet::from([from]);
        while let Some(v) = queue.pop_front() {
            for &ei in &self.out[v as usize] {
                let e = &self.edges[ei as usize];
                if !inside.contains(&e.to) {
                    continue;
                }
                if goal(e) {
                    let mut path = vec![ei];
                    let mut cur = v;
                    while cur != from {
                        let (p, pe) = prev[&cur];
                        path.push(pe);
                        cur = p;
                    }
                    path.reverse();
                    return Some(path);
                }
                if seen.insert(e.to) {
                    prev.insert(e.to, (v, ei));
                    queue.push_back(e.to);
                }
            }
        }
        None
    }
}
