//! One execution for all (`Reductions::det`, docs/explorer.md,
//! "Reductions", item 10): on a deterministic program
//! (`analysis/determinism.rs`) the search runs a single execution, each
//! step the first choice of its state, and judges its end as any search
//! judges an end state. When every phase of that run could have been
//! filled in no other way (`reductions/det.rs`, read step by step by
//! `Recycling`), every execution has its verdict and the search is done;
//! otherwise the caller searches as usual, without it.
//!
//! The run is a path of the search tree: from the initial state (state 0)
//! each stretch is one chain (item 9), and at its end (`CHAIN_MAX` steps,
//! or [`STORE_EVENTS`] events more) the state is stored as the search
//! stores a chain's end: compacted, what compaction forgets judged by the
//! rule checker, with a tree entry, so that a finding's witness is
//! replayed as any (`replay.rs`). Threads are never renamed
//! (`Explorer::keep_names`): the run follows them by index.

use crate::reductions;
use crate::reductions::det::Recycling;
use crate::search::{Chain, Explorer, CHAIN_MAX};
use crate::state::answer::Stop;
use crate::state::{budget, Choice, Status};

/// Events a stretch of the run may add before its state is stored
/// (compacted), besides the `CHAIN_MAX` steps a chain takes at most: a
/// step of a warp adds an event per lane.
const STORE_EVENTS: usize = 4096;

/// What the run decided.
pub(crate) struct Decided {
    pub(crate) stop: Stop,
    /// The states the run passed through, the initial one included.
    pub(crate) states: u64,
}

impl Explorer<'_> {
    /// The run (module text); `None` where it does not decide the program:
    /// a state with two choices of one thread, a phase that another order
    /// could fill otherwise, more states than the state limit allows, or
    /// a history past half the memory budget.
    /// A budget limit (memory, time, an interruption) stops it as it stops
    /// a search, with what it found so far.
    pub(crate) fn det_run(&mut self) -> Option<Decided> {
        let mut s = match self.initial_state() {
            Ok(s) => s,
            Err(stop) => return Some(Decided { stop, states: 0 }),
        };
        self.keep_names = true;
        self.tree.write().expect("tree lock").push((u32::MAX, None, None));
        let mut recycling = Recycling::new(&s);
        if !recycling.observe(&s) {
            return None;
        }
        // The stretch since the last stored state: its number, the first
        // step after it (`head`) and the rest (`self.chained`).
        let mut at = 0u32;
        let mut head: Option<Choice> = None;
        let mut taken = 0usize;
        let mut seen = vec![false; self.p.threads.len()];
        // The events the state held when it was last stored.
        let mut kept: usize = s.hist.iter().map(Vec::len).sum();
        loop {
            if let Some(stop) = self.budget.check() {
                self.on_path(at, head);
                self.judge_stopped(&s);
                return Some(Decided {
                    stop,
                    states: taken as u64 + 1,
                });
            }
            if taken as u64 + 1 >= self.opts.limits.states {
                return None;
            }
            let choices = self.sys.choices(&s, &self.worker.ident);
            seen.iter_mut().for_each(|x| *x = false);
            for c in &choices {
                if std::mem::replace(&mut seen[c.thread as usize], true) {
                    return None;
                }
                // A lane alone at an `.aligned` barrier beside a running
                // mate: which lane steps first decides whether the other
                // is held there for good (a deadlock in one order, none
                // in another: `one-run-aligned-lanes-apart-deadlock`).
                if self.sys.alone_with_mates(&s, c.thread as usize) {
                    return None;
                }
            }
            let Some(&c) = choices.first() else { break };
            // The stretch's first step is its head (the initial state's,
            // not fused: `take_step`), the rest its chain.
            let first = head.is_none();
            if first {
                head = Some(c);
            } else {
                self.chained.push(c);
            }
            self.on_path(at, head);
            self.worker.quiet = true;
            self.take_step(&mut s, c, first && at == 0);
            self.worker.quiet = false;
            taken += 1;
            if !recycling.observe(&s) {
                return None;
            }
            let events: usize = s.hist.iter().map(Vec::len).sum();
            if self.chained.len() + 1 >= CHAIN_MAX || events >= kept + STORE_EVENTS {
                // Stored, as the search stores a chain's end: compacted
                // (what it forgets judged by the rule checker), not
                // renamed.
                let next: Vec<u32> = s.bars.iter().map(|b| b.next_phase).collect();
                self.on_path(at, head);
                self.worker.quiet = true;
                self.normalize(&mut s);
                self.worker.quiet = false;
                if self.budget.halted().is_some() {
                    continue;
                }
                if !recycling.renumbered(&next, &s) {
                    return None;
                }
                let chain: Chain = (!self.chained.is_empty()).then(|| self.chained.as_slice().into());
                let mut tree = self.tree.write().expect("tree lock");
                tree.push((at, head, chain));
                at = tree.len() as u32 - 1;
                head = None;
                self.chained.clear();
                kept = s.hist.iter().map(Vec::len).sum();
            }
            // A step of a warp adds an event per lane: the history is
            // weighed after every step.
            let working = budget::working_bytes(&s);
            if working > self.opts.limits.memory / 2 {
                // A history this long (the rule checker's closure over it
                // above all) does not fit: the search may.
                return None;
            }
            if working > self.work.charged {
                self.budget.charge(working - self.work.charged);
            } else {
                self.budget.release(self.work.charged - working);
            }
            self.work.charged = working;
        }
        // A thread blocked but not at a wait: a lane held by its warp at an
        // `.aligned` barrier, which another order may let arrive
        // (`reductions/det.rs`): the search decides.
        let held = (0..s.threads.len())
            .any(|t| !matches!(s.threads[t].status, Status::Done | Status::NotLaunched) && !self.sys.at_wait(&s, t));
        if held {
            return None;
        }
        // The test taken step by step against the one over the whole
        // history, where the run kept it whole.
        if self.opts.verify_encoding && !recycling.compacted {
            assert!(
                reductions::det::phases_fixed(&s),
                "the phases of a run read as fixed step by step are not"
            );
        }
        self.on_path(at, head);
        self.at_end(&s);
        Some(Decided {
            // `--fail-fast` may have halted it at the end's finding.
            stop: self.budget.check().unwrap_or(Stop::Exhausted),
            states: taken as u64 + 1,
        })
    }

    /// The position findings are recorded at: the stored state `at` and
    /// the steps since, replayed as a chain after `head`.
    fn on_path(&mut self, at: u32, head: Option<Choice>) {
        self.key = (0, 1);
        self.prefix = Some(at);
        self.current = head;
        self.path.clear();
        self.whole = None;
    }
}
