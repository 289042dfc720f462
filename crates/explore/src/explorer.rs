//! One explorer: the program, its options and analyses, what it found so
//! far, and a worker's scratch. The merging thread's explorer drives the
//! search (`search.rs`) and absorbs its workers' findings; each worker
//! expands states (`expand.rs`). `run` is the whole check: the search,
//! then the liveness analysis (`fair.rs`), then the outcome.

use crate::search::{Search, SearchTree};
use crate::state::State;
use crate::system::System;
use crate::{budget, outcomes, par, Choice};
use crate::{Finding, Outcome, SearchOptions, Stats, Step, Stop, Witness};
use bc_graph::*;
use bc_syntax::{FindingKind, Quantifier, Span};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

pub(crate) struct Explorer<'p> {
    pub(crate) p: &'p Program,
    pub(crate) opts: SearchOptions,
    pub(crate) start: Instant,
    pub(crate) findings: BTreeMap<FindingKind, Finding>,
    pub(crate) operational: std::collections::BTreeSet<FindingKind>,
    pub(crate) judged: std::collections::BTreeSet<FindingKind>,
    pub(crate) internal_errors: Vec<String>,
    pub(crate) sometimes_holds: Vec<bool>,
    pub(crate) path: Vec<Step>,
    pub(crate) executions: u64,
    /// Findings raised while computing the current step (operational).
    /// (kind, message, objectless): objectless findings come from operations
    /// that act on no barrier object, so no execution can show them.
    pub(crate) pending: Vec<(FindingKind, String, bool)>,
    /// For the state being worked on: which declared thread each thread
    /// index stands for (symmetry renames threads; witnesses show the
    /// declared names along the path).
    pub(crate) ident: Vec<u32>,
    pub(crate) objectless: std::collections::BTreeSet<FindingKind>,
    /// Per finding kind, where it was found in search order: (state
    /// number, 0 for the state itself or 1 + the choice index).
    pub(crate) keys: BTreeMap<FindingKind, (u32, u32)>,
    /// The search position being worked on (the key of new findings).
    pub(crate) key: (u32, u32),
    /// While a worker expands a state, `path` holds only the current
    /// transition's steps; this is the state the path starts from.
    pub(crate) prefix: Option<u32>,
    /// The search tree: per state number, its parent and the choice that
    /// reached it (shared by the workers; written between levels).
    pub(crate) tree: std::sync::Arc<std::sync::RwLock<SearchTree>>,
    /// Replaying a path for a witness: record nothing.
    pub(crate) replaying: bool,
    /// The visited set of encoded states, shared by the workers.
    pub(crate) visited: std::sync::Arc<par::VisitedSet<par::Bytes>>,
    /// A worker's state to build successors in (`expand`).
    pub(crate) scratch: Option<State>,
    /// A worker's buffer to encode successors in.
    pub(crate) words: Vec<u8>,
    /// A worker's state to decode expanded states into.
    pub(crate) parent: Option<State>,
    /// A worker's state to try fusible waits on (`fuse.rs`).
    pub(crate) fuse_scratch: Option<State>,
    /// The transition system (the program, its analyses, the reductions),
    /// shared by the workers.
    pub(crate) sys: std::sync::Arc<System<'p>>,
    /// Where to count stored states for a progress display, if anywhere.
    pub(crate) counter: Option<std::sync::Arc<AtomicU64>>,
    /// The resource budget, shared by the workers.
    pub(crate) budget: std::sync::Arc<budget::Budget>,
    /// The bytes of working states this worker has charged to the budget.
    pub(crate) working: u64,
    /// The end configurations seen (when collecting outcomes).
    pub(crate) ends: rustc_hash::FxHashSet<outcomes::EndConfig>,
    /// The kinds fair cycles showed (when collecting outcomes).
    pub(crate) cycle_ends: std::collections::BTreeSet<outcomes::End>,
    /// Steps are being taken for the search, not for a witness: leave out
    /// their texts (a witness replays them).
    pub(crate) quiet: bool,
    /// The choice being expanded from the state `prefix` names.
    pub(crate) current: Option<Choice>,
    /// Testing aid: expanding the state with this number panics (a stand-in
    /// for any bug in a step), to check that a worker's panic ends the
    /// search instead of hanging it.
    #[cfg(test)]
    pub(crate) fault_at: Option<u32>,
}

impl<'p> Explorer<'p> {
    pub(crate) fn new(p: &'p Program, opts: SearchOptions) -> Explorer<'p> {
        let sys = std::sync::Arc::new(System::new(p, opts.reductions));
        Explorer::with(p, opts, sys, std::sync::Arc::new(par::VisitedSet::new(64)))
    }

    /// An explorer with nothing found yet, on given analyses and visited set.
    pub(crate) fn with(
        p: &'p Program,
        opts: SearchOptions,
        sys: std::sync::Arc<System<'p>>,
        visited: std::sync::Arc<par::VisitedSet<par::Bytes>>,
    ) -> Explorer<'p> {
        Explorer {
            p,
            opts,
            start: Instant::now(),
            findings: BTreeMap::new(),
            operational: Default::default(),
            judged: Default::default(),
            internal_errors: Vec::new(),
            sometimes_holds: vec![false; p.asserts.len()],
            path: Vec::new(),
            executions: 0,
            pending: Vec::new(),
            objectless: Default::default(),
            keys: BTreeMap::new(),
            key: (0, 0),
            prefix: None,
            tree: Default::default(),
            replaying: false,
            visited,
            scratch: None,
            words: Vec::new(),
            parent: None,
            fuse_scratch: None,
            quiet: false,
            current: None,
            ident: (0..p.threads.len() as u32).collect(),
            sys,
            counter: None,
            #[cfg(test)]
            fault_at: None,
            budget: std::sync::Arc::new(budget::Budget::new(&opts.limits, Instant::now())),
            working: 0,
            ends: Default::default(),
            cycle_ends: Default::default(),
        }
    }

    /// The whole check of the program: the search, the liveness analysis
    /// after it, the `sometimes` assertions, then the outcome.
    pub(crate) fn run(mut self) -> Outcome {
        let (stop, search, workers) = self.search();
        let Search {
            count,
            nodes,
            edges,
            graph_bytes,
            ..
        } = search;
        let states = count as u64;
        for w in workers {
            self.absorb(w);
        }
        self.prefix = None;
        self.path.clear();
        self.key = (u32::MAX, 0);
        let searched = stop;
        let mut stop = stop;
        if stop == Stop::Exhausted && self.graph() {
            // The visited set is freed: the search holds its state graph
            // and its tree; the analysis charges what it builds on top.
            let tree = self.tree.read().expect("tree lock").capacity() as u64 * 16;
            self.budget.set_held(graph_bytes + tree);
            if let Err(why) = self.liveness(&nodes, &edges) {
                stop = why;
            }
        }
        // `sometimes` assertions fail when no finished execution satisfies
        // them (the search saw every one, even if the liveness analysis
        // stopped at a limit).
        if searched == Stop::Exhausted {
            for (i, a) in self.p.asserts.iter().enumerate() {
                if a.quantifier == Quantifier::Sometimes && !self.sometimes_holds[i] {
                    let msg = format!(
                        "`{}`: no execution that ends with every thread finished satisfies it",
                        a.text
                    );
                    let w = Witness {
                        spans: vec![a.span],
                        ..Witness::default()
                    };
                    self.record(FindingKind::Assertion, msg, w, false);
                }
            }
        }
        self.internal_errors.sort();
        self.internal_errors.dedup();
        self.internal_errors.truncate(8);
        let outcomes = self
            .opts
            .outcomes
            .then(|| outcomes::outcome_set(self.p, &self.sys.an.sym_classes, &self.ends, &self.cycle_ends));
        Outcome {
            findings: self.findings.into_values().collect(),
            stats: Stats {
                states,
                executions: self.executions,
                elapsed: self.start.elapsed(),
            },
            stop,
            operational: self.operational,
            judged: self.judged,
            objectless: self.objectless,
            internal_errors: self.internal_errors,
            outcomes,
        }
    }

    /// Whether the search records the state graph, for the liveness
    /// analysis after it.
    pub(crate) fn graph(&self) -> bool {
        self.opts.liveness && !self.sys.an.finite
    }

    /// A worker: this explorer's configuration, with nothing found yet.
    pub(crate) fn worker(&self) -> Explorer<'p> {
        let mut w = Explorer::with(self.p, self.opts, self.sys.clone(), self.visited.clone());
        w.start = self.start;
        w.tree = self.tree.clone();
        #[cfg(test)]
        {
            w.fault_at = self.fault_at;
        }
        w.budget = self.budget.clone();
        w
    }

    /// The reductions applied to every new state, in order. Renames
    /// `self.ident` along with the threads.
    pub(crate) fn normalize(&mut self, s: &mut State) {
        if self.sys.reductions.compact {
            self.compact(s);
        }
        self.sys.canonicalize(s);
        if let Some(perm) = self.symmetrize(s) {
            self.ident = perm.iter().map(|&old| self.ident[old]).collect();
            // The renaming may leave a phase's arrivals out of order.
            self.sys.canonicalize(s);
        }
    }

    /// The span and text of instruction `pc` in the body of the thread that
    /// index `t` stands for (symmetry may map a thread onto another one's
    /// identical body).
    pub(crate) fn declared_site(&self, t: usize, pc: u32) -> (Span, String) {
        self.p
            .instr(ThreadId(self.ident[t]), pc)
            .map_or((Span::default(), "...".to_string()), |i| (i.span, i.text.clone()))
    }

    /// `self.ident` to keep with a state: `None` for the identity (no
    /// allocation in the common case).
    pub(crate) fn ident_arc(&self) -> Option<std::sync::Arc<[u32]>> {
        let identity = self.ident.iter().enumerate().all(|(i, &t)| i as u32 == t);
        (!identity).then(|| self.ident.as_slice().into())
    }

    /// Sets `self.ident` from a state's kept renaming.
    pub(crate) fn set_ident(&mut self, ident: &Option<std::sync::Arc<[u32]>>) {
        self.ident.clear();
        match ident {
            Some(v) => self.ident.extend_from_slice(v),
            None => self.ident.extend(0..self.p.threads.len() as u32),
        }
    }

    /// The declared name of thread index `t` in the current state.
    pub(crate) fn name_of(&self, t: usize) -> &str {
        &self.p.threads[self.ident[t] as usize].name
    }
}

impl System<'_> {
    pub(crate) fn at_wait(&self, s: &State, t: usize) -> bool {
        matches!(
            self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::Barrier {
                op: BarrierOp::Wait(_),
                ..
            })
        )
    }

    pub(crate) fn instr_text(&self, s: &State, t: usize) -> String {
        self.p
            .instr(ThreadId(t as u32), s.threads[t].pc)
            .map_or_else(|| "end".into(), |i| i.text.clone())
    }
}
