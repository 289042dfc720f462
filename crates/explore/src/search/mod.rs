//! The search and its liveness analysis: floor 5 of the explorer
//! (docs/ARCHITECTURE.md, "The explore crate"). The [`Explorer`] here is
//! the search's context: the shared transition system, search tree,
//! visited set and budget, what it found so far, and a worker's
//! bookkeeping and scratch. The merging thread's explorer drives the
//! search (`driver.rs`) and absorbs its workers' findings (`found.rs`);
//! each worker expands states (`expand.rs`) and records findings with
//! their witnesses (`record.rs`, `replay.rs`); after the search, the
//! fair-cycle analysis (`liveness.rs`, `fair.rs`) and the outcome sets
//! (`outcomes.rs`). It sees the transition system through `System` and
//! the reductions through `reductions.rs`'s one pipeline.

pub(crate) mod det;
pub(crate) mod driver;
pub(crate) mod expand;
pub(crate) mod fair;
pub(crate) mod found;
pub mod liveness;
pub(crate) mod outcomes;
pub(crate) mod record;
pub(crate) mod replay;

use crate::reductions;
use crate::search::found::Found;
use crate::semantics::witness::ExecNames;
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::answer::{Step, Witness};
use crate::state::options::SearchOptions;
use crate::state::{budget, par, Choice, State};
use bc_graph::*;
use bc_syntax::Span;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

/// Per state number: its parent's number, the choice that reached it
/// (`u32::MAX` and `None` for the initial state) and the chain taken after
/// it ([`Chain`]).
pub(crate) type SearchTree = Vec<TreeEntry>;

/// One entry of the [`SearchTree`].
pub(crate) type TreeEntry = (u32, Option<Choice>, Chain);

/// The choices a transition took after its first, one per state that was
/// not stored because its reduced choices were that one step
/// (`Reductions::chain`); `None` for none.
pub(crate) type Chain = Option<std::sync::Arc<[Choice]>>;

/// The heap bytes of a chain's choices.
pub(crate) fn chain_bytes(chain: &Chain) -> u64 {
    chain
        .as_ref()
        .map_or(0, |c| (16 + c.len() * std::mem::size_of::<Choice>()) as u64)
}

/// How many steps one chain takes at most: its states are not compacted,
/// so the history grows by a step's events each time until the state at
/// its end is stored (and compacted).
pub(crate) const CHAIN_MAX: usize = 64;

/// A worker's scratch: states and buffers reused from one expansion to
/// the next (`expand.rs`), and what they are charged to the
/// budget.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The state successors are built in.
    pub(crate) successor: Option<State>,
    /// The buffer successors are encoded in.
    pub(crate) words: Vec<u8>,
    /// The state expanded states are decoded into.
    pub(crate) parent: Option<State>,
    /// The bytes of working states this worker has charged to the budget.
    pub(crate) charged: u64,
}

/// The kinds a search's workers found so far (each worker keeps its own
/// findings until the search ends), so that a run's count of findings
/// counts a kind once per search, whichever worker finds it first.
pub(crate) struct KindsSeen {
    pub(crate) seen: std::sync::Mutex<std::collections::BTreeSet<bc_syntax::FindingKind>>,
    pub(crate) findings: std::sync::Arc<AtomicU64>,
}

/// `verify_encoding`'s costly checks (the whole compaction where nothing
/// may be forgotten, partial-order reduction's commutation) run on every
/// state of a search's first `VERIFY_ALL`, then on one state in
/// `VERIFY_EVERY`: on every state they were two thirds of the corpus
/// test's time. Of the corpus test's 3,522 runs with one or all
/// reductions off, 111 store more states than that (session 28).
pub(crate) const VERIFY_ALL: u32 = 2048;
/// The most passes of compaction on one new state ([`Explorer::normalize`]).
pub(crate) const COMPACT_PASSES: usize = 8;
/// A power of two.
pub(crate) const VERIFY_EVERY: u32 = 8;

/// One explorer: the merging thread's, or a worker's (`worker_explorer`).
/// What it shares with the others (the system, the search tree, the
/// visited set, the budget) sits behind `Arc`s; what it found is its
/// [`Found`]; the rest is its own bookkeeping for the state it works on
/// (position, path, and the [`Worker`] context it steps with: renaming,
/// step mode, pending findings) and scratch states reused between
/// expansions.
pub(crate) struct Explorer<'p> {
    // Shared with the other explorers of the search.
    pub(crate) p: &'p Program,
    pub(crate) opts: SearchOptions,
    /// The transition system (the program, its analyses, the reductions),
    /// shared by the workers.
    pub(crate) sys: std::sync::Arc<System<'p>>,
    pub(crate) start: Instant,
    /// The search tree: per state number, its parent and the choice that
    /// reached it (shared by the workers; written between levels).
    pub(crate) tree: std::sync::Arc<std::sync::RwLock<SearchTree>>,
    /// The visited set of encoded states, shared by the workers.
    pub(crate) visited: std::sync::Arc<par::VisitedSet<par::Bytes>>,
    /// The resource budget, shared by the workers.
    pub(crate) budget: std::sync::Arc<budget::Budget>,
    /// Where to count stored states for a progress display, if anywhere.
    pub(crate) counter: Option<std::sync::Arc<AtomicU64>>,
    /// The finding kinds this search's workers found so far, shared by
    /// them, and the run's count they add to (a progress display).
    pub(crate) kinds: Option<std::sync::Arc<KindsSeen>>,
    // What it found.
    /// What this explorer found (a worker's findings are absorbed into
    /// the merging thread's).
    pub(crate) found: Found,
    // Its bookkeeping for the state it works on.
    /// The search position being worked on (the key of new findings).
    pub(crate) key: (u32, u32),
    /// While a worker expands a state, `path` holds only the current
    /// transition's steps; this is the state the path starts from.
    pub(crate) prefix: Option<u32>,
    /// The choice being expanded from the state `prefix` names.
    pub(crate) current: Option<Choice>,
    /// The steps the current transition's chain took so far after
    /// `current` (`Reductions::chain`).
    pub(crate) chained: Vec<Choice>,
    pub(crate) path: Vec<Step>,
    /// What the transitions record into and read: the current step's
    /// findings, the thread renaming, the step mode, fusion's scratch.
    pub(crate) worker: Worker,
    /// Replaying a path for a witness: record nothing.
    pub(crate) replaying: bool,
    /// New states keep their thread names (no symmetry renaming): the
    /// one run (`det.rs`), which follows threads by index.
    pub(crate) keep_names: bool,
    /// The whole run of the latest replay (`replay.rs`), which witnesses
    /// of the state it reached are built from.
    pub(crate) whole: Option<replay::Whole>,
    /// Where the latest compaction moved the kept events (old place to
    /// new), for a replay's whole run to follow.
    pub(crate) forgot: Option<rustc_hash::FxHashMap<(u32, u32), (u32, u32)>>,
    // A worker's scratch.
    /// A worker's scratch states and buffers, reused between expansions.
    pub(crate) work: Scratch,
    /// Testing aid: expanding the state with this number panics (a stand-in
    /// for any bug in a step), to check that a worker's panic ends the
    /// search instead of hanging it.
    #[cfg(test)]
    pub(crate) fault_at: Option<u32>,
}

impl<'p> Explorer<'p> {
    pub(crate) fn new(p: &'p Program, opts: SearchOptions) -> Explorer<'p> {
        Explorer::new_at(p, opts, Instant::now())
    }

    /// [`Explorer::new`], its limits counted from `start`. The deadline
    /// counts from before the analyses, which run under the search's
    /// budget (a huge program once spent minutes there under `--timeout
    /// 1`, issue 33).
    pub(crate) fn new_at(p: &'p Program, opts: SearchOptions, start: Instant) -> Explorer<'p> {
        let budget = std::sync::Arc::new(budget::Budget::new(&opts.limits, start).cancelled_by(opts.cancel));
        let sys = std::sync::Arc::new(System::new(p, opts.reductions, opts.liveness, &budget));
        let mut e = Explorer::with(p, opts, sys, std::sync::Arc::new(par::VisitedSet::new(64)));
        e.start = start;
        e.budget = budget;
        e
    }

    /// [`Explorer::new_at`] on a transition system already built (its
    /// analyses kept), with a budget of its own counted from `start`.
    pub(crate) fn on_system(
        p: &'p Program,
        opts: SearchOptions,
        sys: std::sync::Arc<System<'p>>,
        start: Instant,
    ) -> Explorer<'p> {
        let mut e = Explorer::with(p, opts, sys, std::sync::Arc::new(par::VisitedSet::new(64)));
        e.start = start;
        e.budget = std::sync::Arc::new(budget::Budget::new(&opts.limits, start).cancelled_by(opts.cancel));
        e
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
            found: Found::new(p.asserts.len()),
            work: Scratch::default(),
            start: Instant::now(),
            path: Vec::new(),
            key: (0, 0),
            prefix: None,
            tree: Default::default(),
            replaying: false,
            keep_names: false,
            whole: None,
            forgot: None,
            visited,
            current: None,
            chained: Vec::new(),
            worker: Worker::new(p.threads.len()),
            sys,
            counter: None,
            kinds: None,
            #[cfg(test)]
            fault_at: None,
            budget: std::sync::Arc::new(budget::Budget::new(&opts.limits, Instant::now()).cancelled_by(opts.cancel)),
        }
    }

    /// Whether the search records the state graph, for the liveness
    /// analysis after it.
    pub(crate) fn graph(&self) -> bool {
        self.opts.liveness && !self.sys.an.finite
    }

    /// Whether transitions take chains (`Reductions::chain`): only where
    /// every execution is finite, so a chain cannot go round a cycle.
    pub(crate) fn chains(&self) -> bool {
        self.sys.reductions.chain && self.sys.an.finite
    }

    /// A worker: this explorer's configuration, with nothing found yet.
    pub(crate) fn worker_explorer(&self) -> Explorer<'p> {
        let mut w = Explorer::with(self.p, self.opts, self.sys.clone(), self.visited.clone());
        w.start = self.start;
        w.tree = self.tree.clone();
        #[cfg(test)]
        {
            w.fault_at = self.fault_at;
        }
        w.budget = self.budget.clone();
        w.kinds = self.kinds.clone();
        w
    }

    /// Whether the costly self-checks of `verify_encoding` run on the
    /// state being worked on ([`SearchOptions::verify_encoding`]): every
    /// state of the first [`VERIFY_ALL`] a search numbers, then every
    /// [`VERIFY_EVERY`]-th. A state's encoding round trip is checked on
    /// every state.
    pub(crate) fn verifying(&self) -> bool {
        self.opts.verify_encoding && (self.key.0 < VERIFY_ALL || self.key.0 & (VERIFY_EVERY - 1) == 0)
    }

    /// The reductions applied to every new state, in the order
    /// `reductions.rs` states (steps 2-4): the rule checker judges the
    /// history compaction forgets; renames `self.worker.ident` along with
    /// the threads.
    pub(crate) fn normalize(&mut self, s: &mut State) {
        let mut n = reductions::Normalizer::default();
        self.forgot = None;
        // Compaction again while it forgets a barrier's history (at most
        // `COMPACT_PASSES` times): once a barrier's phases are gone, a
        // completed phase may retire and more be forgotten, and a state
        // left between passes would differ from the same state reached
        // through more normalizations.
        for _ in 0..COMPACT_PASSES {
            let budget = (!self.replaying).then_some(&*self.budget);
            let Some(c) = n.compact(&self.sys, s, &self.worker.ident, budget, self.verifying()) else {
                break;
            };
            let again = c.barriers;
            // A halted search discards `s`: nothing to judge.
            if self.replaying || self.budget.check().is_none() {
                self.judge_ordered(&c.exec, Some(c.before), &c.names);
                self.seen_operationally(c.found);
            }
            self.forgot = Some(match self.forgot.take() {
                // Old names through both passes; what the second forgot
                // is gone.
                Some(first) => first
                    .into_iter()
                    .filter_map(|(k, v)| c.remap.get(&v).map(|&w| (k, w)))
                    .collect(),
                None => c.remap,
            });
            if !again || self.budget.halted().is_some() {
                break;
            }
        }
        if self.sys.reductions.compact && !self.replaying && self.budget.halted().is_some() {
            // Compaction stopped part way: the caller discards `s`.
            return;
        }
        if self.keep_names {
            return;
        }
        let budget = (!self.replaying).then_some(&*self.budget);
        n.symmetrize(&self.sys, s, &mut self.worker.ident, budget);
    }

    /// The span and text of instruction `pc` in the body of the thread that
    /// index `t` stands for (symmetry may map a thread onto another one's
    /// identical body).
    pub(crate) fn declared_site(&self, t: usize, pc: u32) -> (Span, String) {
        self.sys.declared_site(t, pc, &self.worker.ident)
    }

    /// `self.worker.ident` to keep with a state: `None` for the identity (no
    /// allocation in the common case).
    pub(crate) fn ident_arc(&self) -> Option<std::sync::Arc<[u32]>> {
        let identity = self.worker.ident.iter().enumerate().all(|(i, &t)| i as u32 == t);
        (!identity).then(|| self.worker.ident.as_slice().into())
    }

    /// Sets `self.worker.ident` from a state's kept renaming.
    pub(crate) fn set_ident(&mut self, ident: &Option<std::sync::Arc<[u32]>>) {
        self.worker.ident.clear();
        match ident {
            Some(v) => self.worker.ident.extend_from_slice(v),
            None => self.worker.ident.extend(0..self.p.threads.len() as u32),
        }
    }

    /// The declared name of thread index `t` in the current state.
    pub(crate) fn name_of(&self, t: usize) -> &str {
        self.sys.thread_name(&self.worker.ident, t)
    }

    /// [`System::execution`] under the current renaming.
    pub(crate) fn execution(&self, s: &State, stuck: &[usize]) -> (Execution, ExecNames<'p>) {
        self.sys.execution(s, stuck, &self.worker.ident)
    }

    /// The witness of a finding at `s` (with `stuck` threads blocked on
    /// their waits, pointing at the `focus` events of `s`'s execution),
    /// along the current path: built from the replay's whole run
    /// ([`replay::Whole`]), else from `s` under the current renaming.
    pub(crate) fn witness(&self, s: &State, stuck: &[usize], focus: &[EventId]) -> Witness {
        let lens: Vec<usize> = s.hist.iter().map(Vec::len).collect();
        match self.whole_of(&lens) {
            Some(whole) if focus.is_empty() => self.whole_witness(whole, stuck, None),
            Some(whole) => {
                let (exec, _) = self.execution(s, stuck);
                self.whole_witness(whole, stuck, Some((&exec, focus)))
            }
            None => self.sys.witness(s, stuck, focus, &self.worker.ident, &self.path),
        }
    }

    /// The witness of a finding in `exec` (an execution of the current
    /// state), pointing at its `focus` events, along the current path: as
    /// [`Explorer::witness`].
    pub(crate) fn witness_with(&self, exec: &Execution, names: &ExecNames, focus: &[EventId]) -> Witness {
        let mut lens = vec![0; self.p.threads.len()];
        let mut stuck = Vec::new();
        for e in exec.ids() {
            let ev = exec.event(e);
            match (&ev.kind, ev.thread) {
                (EventKind::Wait { completed: false, .. }, Some(t)) => stuck.push(t.index()),
                (_, Some(t)) => lens[t.index()] += 1,
                (_, None) => {}
            }
        }
        match self.whole_of(&lens) {
            Some(whole) => self.whole_witness(whole, &stuck, Some((exec, focus))),
            None => self.sys.witness_with(exec, names, focus, &self.path),
        }
    }

    /// A finding's message, which names events of the current state
    /// (`T#n`), with the events named as the witness names them (the
    /// replay's whole run, when the witness was built from it).
    pub(crate) fn relabel(&self, message: String, witness: &Witness) -> String {
        match &self.whole {
            Some(whole) if !whole.broken && witness.steps == whole.steps => whole.relabel(self.p, &message),
            _ => message,
        }
    }

    /// The replay's whole run, if it reached the current state (whose
    /// threads hold `lens` events) under the current renaming and did
    /// not part from it.
    fn whole_of(&self, lens: &[usize]) -> Option<&replay::Whole> {
        let whole = self.whole.as_ref()?;
        let fits = !whole.broken && whole.ident == self.worker.ident && whole.fits(lens);
        // The corpus and property tests hold that the two runs never part.
        assert!(
            fits || !self.opts.verify_encoding,
            "a witness replay's whole run parted from the replayed state"
        );
        fits.then_some(whole)
    }

    /// A witness built from the whole run `whole` (its events, bmo,
    /// participates-in and steps), with the `stuck` threads of the
    /// current state blocked on their waits and the `focus` events of an
    /// execution of the current state mapped onto it.
    fn whole_witness(
        &self,
        whole: &replay::Whole,
        stuck: &[usize],
        focus: Option<(&Execution, &[EventId])>,
    ) -> Witness {
        let mut stuck: Vec<usize> = stuck.iter().map(|&t| whole.ident[t] as usize).collect();
        stuck.sort_unstable();
        let identity: Vec<u32> = (0..self.p.threads.len() as u32).collect();
        let (whole_exec, names) = self.sys.execution(&whole.state, &stuck, &identity);
        let focus: Vec<EventId> = match focus {
            Some((exec, focus)) if !focus.is_empty() => {
                let at: rustc_hash::FxHashMap<(u32, u32), EventId> = (replay::event_keys(&whole_exec).into_iter())
                    .zip(whole_exec.ids())
                    .collect();
                let keys = replay::event_keys(exec);
                (focus.iter())
                    .filter_map(|e| whole.key(keys[e.index()]).and_then(|k| at.get(&k).copied()))
                    .collect()
            }
            _ => Vec::new(),
        };
        self.sys.witness_with(&whole_exec, &names, &focus, &whole.steps)
    }
}
