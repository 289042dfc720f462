//! The breadth-first search: drives the levels in batches, hands them to
//! the expanders (inline, or a pool of worker threads, `par.rs`), dedups
//! the successors in the shared visited set and merges the workers'
//! results in frontier order, so the numbering and the answer do not
//! depend on the number of jobs. It stops at a limit
//! ([`crate::state::options::Limits::limit_reached`]).

use crate::search::Explorer;
use crate::search::{liveness, SearchTree};
use crate::semantics::System;
use crate::state::answer::Stop;
use crate::state::options::Limits;
use crate::state::State;
use crate::state::{budget, encode, par, Choice};

/// Frontier states expanded between two merges.
pub(crate) const BATCH: usize = 256;

/// A batch of frontier states to expand: `items[start..end]`, in chunks
/// of `chunk` claimed from `queue` (set by the pool).
#[derive(Clone)]
pub(crate) struct Batch {
    /// Batches are numbered in submission order.
    pub(crate) seq: u64,
    pub(crate) items: std::sync::Arc<Vec<Item>>,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) chunk: usize,
    pub(crate) queue: std::sync::Arc<par::ChunkQueue>,
    /// When the state limit is reached already (the states numbered before
    /// this level, `Some(their count)`): see [`Explorer::expand`].
    pub(crate) spent: Option<u32>,
}

/// Expands batches: `submit` starts one, `collect` returns the expanded
/// states of the oldest batch not yet collected, in frontier order (at
/// most [`IN_FLIGHT`] batches are submitted and not collected).
pub(crate) trait Expander<'p> {
    fn submit(&mut self, batch: Batch);
    fn collect(&mut self) -> Vec<Part>;
    /// Batches submitted and not yet collected.
    fn in_flight(&self) -> usize;
}

/// Batches submitted ahead of the merge: with two, a worker that finishes
/// its share of one batch goes on with the next instead of waiting for the
/// slowest chunk of the batch and for the merge.
pub(crate) const IN_FLIGHT: usize = 2;

/// Expanded states of one chunk and their successors, in order (the
/// successors of `heads[0]` first): two allocations per chunk, not per
/// state.
#[derive(Default)]
pub(crate) struct Part {
    pub(crate) heads: Vec<Expanded>,
    pub(crate) succs: Vec<Succ>,
}

/// One job: the batch is expanded on this thread when collected.
pub(crate) struct Inline<'p> {
    pub(crate) worker: Explorer<'p>,
    pub(crate) batches: std::collections::VecDeque<Batch>,
}

impl<'p> Expander<'p> for Inline<'p> {
    fn submit(&mut self, batch: Batch) {
        self.batches.push_back(batch);
    }
    fn in_flight(&self) -> usize {
        self.batches.len()
    }
    fn collect(&mut self) -> Vec<Part> {
        let b = self.batches.pop_front().expect("a batch was submitted");
        let mut part = Part::default();
        for it in &b.items[b.start..b.end] {
            let head = self.worker.expand(it, &mut part.succs, b.spent);
            part.heads.push(head);
        }
        vec![part]
    }
}

/// What a worker hands back for a batch: its chunks, or the panic that
/// ended it (its claimed chunks are then lost, so the search cannot go on).
pub(crate) type WorkerResult = Result<Vec<(usize, Part)>, Box<dyn std::any::Any + Send>>;

/// The stack of each exploration worker. Parsing bounds every nesting
/// (`bc_syntax::MAX_NESTING`), so any program's walks fit well within
/// the default 2 MiB; an explicit size keeps the answer from depending on
/// the platform's default for spawned threads.
pub const WORKER_STACK: usize = 16 << 20;

/// Several jobs: every worker thread gets the batch and claims chunks.
pub(crate) struct Pool<'p> {
    /// Expands, on the merging thread, a batch of at most [`LOCAL`] states
    /// submitted while none is in flight ([`Inline`]'s way): a narrow
    /// search (a pipeline's levels hold a state or two) otherwise handed
    /// each level to a worker and waited for it, and ran slower with two
    /// jobs than with one.
    pub(crate) local: Inline<'p>,
    pub(crate) jobs: Vec<std::sync::mpsc::Sender<Batch>>,
    /// Each worker's chunks of a batch, tagged with the batch's number, or
    /// the payload of the panic that ended the worker.
    pub(crate) results: std::sync::mpsc::Receiver<(u64, WorkerResult)>,
    /// Submitted batches not yet collected: number, chunk count, and how
    /// many workers were sent it (the first ones; none for a batch
    /// expanded on this thread).
    pub(crate) pending: std::collections::VecDeque<(u64, usize, usize)>,
    /// Results of later batches that arrived while collecting an earlier one.
    pub(crate) early: Vec<(u64, Vec<(usize, Part)>)>,
}

/// The most states of a batch that [`Pool`] expands on its own thread.
const LOCAL: usize = 2;

impl<'p> Expander<'p> for Pool<'p> {
    fn submit(&mut self, mut batch: Batch) {
        let len = batch.end - batch.start;
        if self.pending.is_empty() && len <= LOCAL {
            self.pending.push_back((batch.seq, 0, 0));
            self.local.submit(batch);
            return;
        }
        batch.chunk = (len / (self.jobs.len() * 8)).clamp(1, 64);
        let nchunks = len.div_ceil(batch.chunk);
        batch.queue = std::sync::Arc::new(par::ChunkQueue::new(nchunks));
        // A batch of fewer chunks than workers goes to as many workers as
        // it has chunks, the first ones: a narrow search (a pipeline's
        // levels hold one state or two) otherwise woke every worker, and
        // waited for each one's empty answer, at every level.
        let receivers = nchunks.min(self.jobs.len());
        self.pending.push_back((batch.seq, nchunks, receivers));
        for tx in &self.jobs[..receivers] {
            // A worker that panicked has stopped listening; its panic is
            // waiting in `results`, where `collect` raises it.
            let _ = tx.send(batch.clone());
        }
    }
    fn collect(&mut self) -> Vec<Part> {
        let (seq, nchunks, receivers) = self.pending.pop_front().expect("a batch was submitted");
        if receivers == 0 {
            return self.local.collect();
        }
        let mut parts = Vec::with_capacity(receivers);
        self.early.retain_mut(|(s, p)| {
            if *s == seq {
                parts.push(std::mem::take(p));
            }
            *s != seq
        });
        while parts.len() < receivers {
            let (s, p) = self.results.recv().expect("an exploration worker stopped");
            // A worker panicked: its chunks are lost. Panic on this thread
            // with its payload; unwinding drops the pool (the job channels
            // close), so the other workers finish their batch and end, the
            // scope joins them, and the panic reaches the caller instead
            // of this thread waiting for the lost chunks forever.
            let p = p.unwrap_or_else(|payload| std::panic::resume_unwind(payload));
            if s == seq {
                parts.push(p);
            } else {
                self.early.push((s, p));
            }
        }
        par::merge(parts, nchunks)
    }
    fn in_flight(&self) -> usize {
        self.pending.len()
    }
}

impl Search {
    /// The states visited: numbered, or passed through by a chain.
    pub(crate) fn visited(&self) -> u64 {
        self.count as u64 + self.passed
    }
}

/// The merging thread's side of the search.
#[derive(Default)]
pub(crate) struct Search {
    /// States numbered so far (numbers are given in the order found).
    pub(crate) count: u32,
    /// States that chains passed through without storing them
    /// (`Reductions::chain`) on their way to a state numbered here: with
    /// `count` they are the states visited, which the state limit bounds
    /// and `Stats::states` reports.
    pub(crate) passed: u64,
    /// The state graph for the liveness analysis (when it runs).
    pub(crate) nodes: Vec<liveness::Node>,
    pub(crate) edges: Vec<liveness::Edge>,
    /// New states: the next level.
    pub(crate) next: Vec<Item>,
    /// Search-tree entries of this merge, appended to the tree at its end.
    pub(crate) tree_tail: SearchTree,
    pub(crate) stored_bytes: u64,
    /// The state graph's bytes as last charged to the budget.
    pub(crate) graph_bytes: u64,
    /// The heap bytes of the state graph's nodes (their large sets).
    pub(crate) node_heap: u64,
}

/// A state of the current search level, with its number, its parent's
/// and the choice that reached it.
pub(crate) struct Item {
    pub(crate) id: u32,
    pub(crate) parent: u32,
    pub(crate) via: Option<Choice>,
    pub(crate) state: par::SlotRef<par::Bytes>,
    /// `Explorer::ident` for this state (`None`: the identity).
    pub(crate) ident: Option<std::sync::Arc<[u32]>>,
}

/// A state expanded by a worker (its successors follow in its `Part`).
pub(crate) struct Expanded {
    pub(crate) id: u32,
    pub(crate) node: Option<liveness::Node>,
    /// The self-loops of its `await` spins.
    pub(crate) spin_edges: Vec<liveness::Edge>,
    pub(crate) nsuccs: u32,
}

/// One successor: the choice, the twins it stands for, the normalized
/// state, and the renaming.
pub(crate) struct Succ {
    pub(crate) choice: Choice,
    /// The steps taken after `choice` in the same transition.
    pub(crate) chain: crate::search::Chain,
    pub(crate) twins: Vec<u32>,
    /// The successor in the visited set (equal states share a slot).
    pub(crate) slot: par::SlotRef<par::Bytes>,
    pub(crate) ident: Option<std::sync::Arc<[u32]>>,
    pub(crate) query: bool,
}

impl Succ {
    /// The bytes the record holds until it is merged.
    pub(crate) fn bytes(&self) -> u64 {
        (std::mem::size_of::<Succ>() + self.twins.capacity() * 4 + self.ident.as_ref().map_or(0, |i| 16 + i.len() * 4))
            as u64
            + crate::search::chain_bytes(&self.chain)
    }
}

/// The heap bytes of a state-graph node (its sets of more than 128 threads).
pub(crate) fn node_heap(n: &liveness::Node) -> u64 {
    (n.enabled.bytes() + n.alive.bytes() + n.started.bytes() + n.at_wait.bytes()) as u64
}

/// The hash of an encoded state (computed once, by the worker that made it).
pub(crate) fn hash_of(words: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(words)
}

/// What a stored state costs besides its encoding: its slot and table
/// entry (64), its search-tree entry (its chain's choices are charged
/// apart), and what comes with them as allocated: arena and table spare
/// capacity, and the frontier entry while the state waits for expansion
/// (96, measured: at a 300 MiB budget the 13-thread barrier test peaks at
/// 290-300 MiB resident beyond the process's own). The state graph is
/// counted apart.
pub(crate) const STATE_OVERHEAD: u64 = 64 + std::mem::size_of::<crate::search::TreeEntry>() as u64 + 96;

impl<'p> Explorer<'p> {
    /// The initial state: every thread's local steps up to its first
    /// step with an effect taken, their findings recorded; or the limit
    /// the budget met on the way.
    pub(crate) fn initial_state(&mut self) -> Result<State, Stop> {
        let mut init = State::initial(self.p);
        self.sys.strip_unread_joins(&mut init);
        for t in 0..self.p.threads.len() {
            if t % 64 == 63 {
                if let Some(why) = self.budget.check() {
                    return Err(why);
                }
            }
            self.sys.run_local(&mut init, t, &mut self.worker);
        }
        self.flush_pending(&init, &[]);
        Ok(init)
    }

    /// The search from the initial state: its stop, the merging side's
    /// record (the state count and the state graph) and the workers, whose
    /// findings the caller absorbs.
    pub(crate) fn search(&mut self) -> (Stop, Search, Vec<Explorer<'p>>) {
        // A limit the analyses met (`System::new`) stops the search before
        // its first state; building that state is checked too.
        if let Some(why) = self.budget.check() {
            return (why, Search::default(), Vec::new());
        }
        let init = match self.initial_state() {
            Ok(init) => init,
            Err(why) => return (why, Search::default(), Vec::new()),
        };
        let jobs = self.opts.jobs.max(1);
        let mut search = Search {
            count: 1,
            ..Search::default()
        };
        let mut words = Vec::new();
        encode::encode(&init, &mut words);
        // The decoded initial state is not kept (workers decode it again).
        drop(init);
        self.budget.charge(words.len() as u64 + STATE_OVERHEAD);
        let init = self
            .visited
            .intern_ref(hash_of(&words), &words[..], |w, arena| arena.store(w));
        // SAFETY: the visited set is cleared only after the search.
        unsafe { init.get() }.set_id(0);
        if let Some(c) = &self.counter {
            c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.tree.write().expect("tree lock").push((u32::MAX, None, None));
        let frontier = vec![Item {
            id: 0,
            parent: u32::MAX,
            via: None,
            state: init,
            ident: self.ident_arc(),
        }];
        let (stop, workers) = if jobs == 1 {
            let mut inline = Inline {
                worker: self.worker_explorer(),
                batches: std::collections::VecDeque::new(),
            };
            let stop = self.levels(frontier, &mut search, &mut inline);
            // Free the visited states now, as the workers of a pool do
            // (nothing after the search reads them).
            // SAFETY: the search is over; nothing reads a slot after it.
            unsafe { self.visited.clear(0, 1) };
            (stop, vec![inline.worker])
        } else {
            // A pool of workers for the whole search: each expands the
            // chunks it claims of every batch it is sent, and hands its
            // explorer back at the end.
            // Every batch was merged: the workers may free the set.
            let finished = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                let (result_tx, result_rx) = std::sync::mpsc::channel();
                let mut job_txs = Vec::new();
                let mut handles = Vec::new();
                let finished = &finished;
                for part in 0..jobs {
                    let (job_tx, job_rx) = std::sync::mpsc::channel::<Batch>();
                    job_txs.push(job_tx);
                    let result_tx = result_tx.clone();
                    let mut w = self.worker_explorer();
                    let spawned = std::thread::Builder::new()
                        .name(format!("explore-{part}"))
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(scope, move || {
                            for batch in job_rx {
                                // A panic while expanding is caught here and
                                // handed to the merging thread, which stops
                                // the search (see `Pool::collect`).
                                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    let b = &batch.items[batch.start..batch.end];
                                    let chunk = batch.chunk;
                                    par::drain(&batch.queue, |c| {
                                        let mut part = Part::default();
                                        for it in &b[c * chunk..((c + 1) * chunk).min(b.len())] {
                                            let head = w.expand(it, &mut part.succs, batch.spent);
                                            part.heads.push(head);
                                        }
                                        part
                                    })
                                }));
                                let failed = done.is_err();
                                if result_tx.send((batch.seq, done)).is_err() || failed {
                                    break;
                                }
                            }
                            // The search is over: free the visited states in
                            // parallel (nothing after the search reads them).
                            // Not after a panic: other workers may still be
                            // expanding then, and the set is freed when its
                            // last handle drops.
                            if finished.load(std::sync::atomic::Ordering::SeqCst) {
                                // SAFETY: `finished` is set only after the
                                // last merge, when every batch was collected
                                // (so every worker is done with every slot);
                                // nothing reads a slot after.
                                unsafe { w.visited.clear(part, jobs) };
                            }
                            w
                        });
                    handles.push(spawned.expect("spawning an exploration worker"));
                }
                drop(result_tx);
                let mut pool = Pool {
                    local: Inline {
                        worker: self.worker_explorer(),
                        batches: std::collections::VecDeque::new(),
                    },
                    jobs: job_txs,
                    results: result_rx,
                    pending: std::collections::VecDeque::new(),
                    early: Vec::new(),
                };
                let stop = self.levels(frontier, &mut search, &mut pool);
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
                let local = pool.local.worker;
                drop(pool.jobs);
                let mut workers: Vec<Explorer<'p>> = handles
                    .into_iter()
                    .map(|h| h.join().expect("an exploration worker panicked"))
                    .collect();
                workers.push(local);
                (stop, workers)
            })
        };
        (stop, search, workers)
    }

    /// The breadth-first search, level by level in batches: while the
    /// expander works on the next [`IN_FLIGHT`] batches, this thread merges
    /// the one before. Merges happen in frontier order, so numbering does
    /// not depend on the expander. On a stop, the batches in flight are
    /// still expanded (so the findings seen do not depend on it either).
    pub(crate) fn levels(&mut self, frontier: Vec<Item>, search: &mut Search, expander: &mut dyn Expander<'p>) -> Stop {
        let mut frontier = std::sync::Arc::new(frontier);
        let mut seq = 0u64;
        while !frontier.is_empty() {
            let n = frontier.len();
            let mut start = 0;
            // Every state numbered from here on reaches the state limit.
            let spent = self
                .opts
                .limits
                .limit_reached(Some(search.visited()), None, None)
                .map(|_| search.count);
            // Submits batches of this level until IN_FLIGHT are out.
            let mut fill = |expander: &mut dyn Expander<'p>| {
                while expander.in_flight() < IN_FLIGHT && start < n {
                    let end = (start + BATCH).min(n);
                    expander.submit(Batch {
                        seq,
                        items: frontier.clone(),
                        start,
                        end,
                        chunk: 0,
                        queue: std::sync::Arc::new(par::ChunkQueue::new(0)),
                        spent,
                    });
                    seq += 1;
                    start = end;
                }
            };
            let drain = |expander: &mut dyn Expander<'p>| {
                while expander.in_flight() > 0 {
                    expander.collect();
                }
            };
            loop {
                if let Some(why) = self.budget.check() {
                    drain(expander);
                    return why;
                }
                fill(expander);
                if expander.in_flight() == 0 {
                    break;
                }
                let ex = expander.collect();
                // A batch expanded in part (a worker stopped at a limit) is
                // not merged.
                if let Some(why) = self.budget.halted() {
                    drain(expander);
                    return why;
                }
                // Keep the workers busy while this batch merges.
                fill(expander);
                if let Some(why) = self.merge(ex, search) {
                    drain(expander);
                    return why;
                }
            }
            frontier = std::sync::Arc::new(std::mem::take(&mut search.next));
        }
        Stop::Exhausted
    }

    /// Merges expanded states into the search, in their order: numbers new
    /// successors, records the state graph and the search tree, and queues
    /// the new states for the next level. Returns why the search must stop,
    /// if a limit was reached (the rule checker then judges the state that
    /// reached it).
    pub(crate) fn merge(&mut self, parts: Vec<Part>, search: &mut Search) -> Option<Stop> {
        let before = search.visited();
        let stop = self.merge_parts(parts, search);
        let graph = Self::graph_bytes(search);
        if graph > search.graph_bytes {
            self.budget.charge(graph - search.graph_bytes);
            search.graph_bytes = graph;
        }
        if let Some(c) = &self.counter {
            c.fetch_add(search.visited() - before, std::sync::atomic::Ordering::Relaxed);
        }
        // The search tree grows once per merge (workers read it only to
        // replay witnesses).
        self.tree.write().expect("tree lock").append(&mut search.tree_tail);
        stop
    }

    /// The state graph's bytes as allocated (vector capacities and the
    /// nodes' large sets).
    pub(crate) fn graph_bytes(search: &Search) -> u64 {
        (search.nodes.capacity() * std::mem::size_of::<liveness::Node>()
            + search.edges.capacity() * std::mem::size_of::<liveness::Edge>()) as u64
            + search.node_heap
    }

    pub(crate) fn merge_parts(&mut self, parts: Vec<Part>, search: &mut Search) -> Option<Stop> {
        let record = self.graph();
        // The merge stops at the memory limit less a reserve for the
        // batches in flight (the budget itself is the hard bound).
        let limits = Limits {
            memory: budget::soft_memory(self.opts.limits.memory),
            ..self.opts.limits
        };
        for part in parts {
            // The successor records are merged now.
            self.budget.release(part.succs.iter().map(Succ::bytes).sum());
            let mut succs = part.succs.into_iter();
            for ex in part.heads {
                if let Some(node) = ex.node {
                    search.node_heap += node_heap(&node);
                    search.nodes.push(node);
                    search.edges.extend(ex.spin_edges);
                }
                for ci in 0..ex.nsuccs {
                    let succ = succs.next().expect("a part holds its states' successors");
                    // SAFETY: the visited set is cleared only after the search.
                    let slot = unsafe { succ.slot.get() };
                    let seen = slot.id();
                    let to = seen.unwrap_or(search.count);
                    if record {
                        let c = succ.choice;
                        search.edges.push(liveness::Edge {
                            from: ex.id,
                            to,
                            thread: c.thread,
                            query: succ.query,
                            spin: false,
                            choice: c,
                        });
                        // A twin's step leads to this state up to renaming: its
                        // edge counts for its thread (fairness) and replays as
                        // the representative's choice (witnesses).
                        for &u in &succ.twins {
                            search.edges.push(liveness::Edge {
                                from: ex.id,
                                to,
                                thread: u,
                                query: succ.query,
                                spin: false,
                                choice: c,
                            });
                        }
                    }
                    if seen.is_some() {
                        continue;
                    }
                    // Every stored state carries its threads and its execution
                    // so far: bound their estimated total size.
                    search.stored_bytes += slot.key.len() as u64 + STATE_OVERHEAD;
                    // Its renaming stays with it in the frontier (counted
                    // for good: a conservative bound).
                    let ident = succ.ident.as_ref().map_or(0, |i| 16 + 4 * i.len() as u64);
                    search.stored_bytes += ident;
                    self.budget.charge(ident);
                    let graph = Self::graph_bytes(search);
                    // The clock is read every 1024 states.
                    let elapsed =
                        (search.count.is_multiple_of(1024) && limits.time.is_some()).then(|| self.start.elapsed());
                    // The states its chain passed through count with it
                    // (and only with a new state: a transition into a state
                    // numbered before ends where the search has been), so
                    // the limit is never passed.
                    let passed = succ.chain.as_ref().map_or(0, |c| c.len() as u64);
                    let limit = limits.limit_reached(
                        Some(search.visited() + passed),
                        Some(search.stored_bytes + graph),
                        elapsed,
                    );
                    let chain = crate::search::chain_bytes(&succ.chain);
                    search.stored_bytes += chain;
                    self.budget.charge(chain);
                    search.tree_tail.push((ex.id, Some(succ.choice), succ.chain.clone()));
                    if let Some(why) = limit {
                        self.tree.write().expect("tree lock").append(&mut search.tree_tail);
                        self.key = (ex.id, ci + 1);
                        self.prefix = Some(to);
                        self.path.clear();
                        self.whole = None;
                        self.set_ident(&succ.ident);
                        self.judge_stopped(&encode::decode(&slot.key));
                        return Some(why);
                    }
                    slot.set_id(to);
                    search.count += 1;
                    search.passed += passed;
                    search.next.push(Item {
                        id: to,
                        parent: ex.id,
                        via: Some(succ.choice),
                        state: succ.slot,
                        ident: succ.ident,
                    });
                }
            }
        }
        None
    }
}

/// Whether a search of a program with loops took persistent sets and
/// its state graph (`edges` over `states` states) has a cycle - a
/// spinning `await` counts as one. Then a group may have been ignored
/// on it, and the search must be repeated without the reduction
/// (`reductions/por.rs`, module doc).
pub(crate) fn reduced_cycle(sys: &System, edges: &[liveness::Edge], states: u32) -> bool {
    if sys.an.groups.is_empty() || sys.an.finite {
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
