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
//! Strong fairness is about steps: a step enabled infinitely often is
//! eventually taken (the litmus spec's words). A step is a program-level
//! action - thread, instruction site and outcome class - named by an
//! interned [`Edge::label`] (see [`StepKey`]). A component is strongly fair
//! as a whole iff every label of a fair thread that is enabled in one of
//! its states is taken on one of its edges; otherwise the states where an
//! untaken label is enabled cannot recur forever, so they are removed and
//! the sub-components searched again (the Streett / Emerson-Lei
//! refinement; each round removes states, so it ends).
//!
//! The analysis runs under the search's budget (docs/reliability.md,
//! "Resource guarantees"): what it allocates is charged while it holds it,
//! and the deadline and the memory bound are checked per component, per
//! refinement round and every [`CHECK_EVERY`] states of a graph walk. At a
//! limit it ends with `Err(stop)`: the search then reports that stop, and
//! only the fair cycles it had already recorded (each with a lasso replayed
//! in full) are findings.

use crate::budget::{Budget, Held};
use crate::Stop;
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
    pub via: Option<crate::Choice>,
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
pub(crate) fn stem(nodes: &[Node], id: u32) -> Vec<crate::Choice> {
    let mut stem = Vec::new();
    let mut at = id;
    while let Some(c) = nodes[at as usize].via {
        stem.push(c);
        at = nodes[at as usize].parent;
    }
    stem.reverse();
    stem
}

/// A step's identity before interning: (thread, instruction site, the
/// completed phase a wait chose ([`NO_PHASE`] for other steps), outcome).
/// The outcome is the thread's control-flow continuation: the pc of its
/// next visible operation after the step and the local steps fused into it,
/// [`OUTCOME_END`] when the thread ends (an `await` spin stays at its own
/// pc). So `await x == 1` has two steps at its site (spin, exit), and its
/// load-loop form `L: r = load x; if r != 1 { goto L }` has the same two
/// (back to `L`, past the loop); two reads that go on the same way are one
/// step, whatever value they read (the value is in the register, so it is
/// in the state anyway).
pub(crate) type StepKey = (u32, u32, u32, u32);

pub(crate) const NO_PHASE: u32 = u32::MAX;
pub(crate) const OUTCOME_END: u32 = u32::MAX - 1;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub from: u32,
    pub to: u32,
    pub thread: u32,
    /// The step taken, as an interned [`StepKey`] (equal keys, equal
    /// labels; numbered in merge order, so the same for any `--jobs`).
    pub label: u32,
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
    /// Threads that wait on a barrier throughout it (then it is a deadlock).
    pub stuck: Vec<u32>,
    /// What the witness cycle must take: a step of each of these threads
    /// (weak fairness), or each of these step labels (strong fairness).
    pub must_take: Vec<Goal>,
}

/// One edge the witness cycle must take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Goal {
    Thread(u32),
    Label(u32),
}

impl Goal {
    fn hit(self, e: &Edge) -> bool {
        match self {
            Goal::Thread(u) => e.thread == u,
            Goal::Label(l) => e.label == l,
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
        // The internal edges, the threads stepping on them, the labels taken.
        held.add(internal.len() as u64 * 12 + set_bytes(internal.len()));
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
        let taken: std::collections::HashSet<u32> = internal.iter().map(|e| e.label).collect();
        // The steps of fair threads enabled in state `n` (its edges, the
        // ones leaving the component included).
        let fair_labels = |n: u32| {
            self.out[n as usize]
                .iter()
                .map(|&ei| &self.edges[ei as usize])
                .filter(|e| is_fair[e.thread as usize])
                .map(|e| e.label)
        };
        if self.strong {
            // States where a step enabled there is never taken in the
            // component cannot recur forever in a strongly fair run.
            let rest: Vec<u32> = scc
                .iter()
                .copied()
                .filter(|&n| fair_labels(n).all(|l| taken.contains(&l)))
                .collect();
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
        let mut must_take: Vec<Goal> = if self.strong {
            let mut labels: Vec<u32> = scc.iter().flat_map(|&n| fair_labels(n)).collect();
            labels.sort_unstable();
            labels.dedup();
            labels.into_iter().map(Goal::Label).collect()
        } else {
            fair.iter().copied().filter(|&u| steps(u)).map(Goal::Thread).collect()
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
        self.kept
            .borrow_mut()
            .add(std::mem::size_of::<FairCycle>() as u64 + scc.len() as u64 * 4 + must_take.len() as u64 * 8);
        found.push(FairCycle {
            nodes: scc.to_vec(),
            entry: scc[0],
            stuck,
            must_take,
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
    /// edge of every goal in `must_take`: edge indices in order.
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
            if let Some(p) = self.bfs(at, &inside, |e| g.hit(e))? {
                at = self.edges[*p.last().expect("non-empty") as usize].to;
                path.extend(p);
            }
        }
        if at != c.entry || path.is_empty() {
            if let Some(p) = self.bfs(at, &inside, |e| e.to == c.entry)? {
                path.extend(p);
            }
        }
        Ok(path)
    }

    /// Edges of a shortest path from `from` inside `inside` ending with an
    /// edge that satisfies `goal`.
    fn bfs(
        &self,
        from: u32,
        inside: &std::collections::HashSet<u32>,
        goal: impl Fn(&Edge) -> bool,
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
                if goal(e) {
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
    use crate::{Choice, Limits};
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
            label: i % 2,
            query: false,
            spin: false,
            choice: Choice {
                thread: i % 2,
                phase: None,
            },
        };
        ((0..n).map(node).collect(), (0..n).map(edge).collect())
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
