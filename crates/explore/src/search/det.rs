//! One execution for all (`Reductions::det`, docs/explorer.md,
//! "Reductions", item 10): on a deterministic program
//! (`analysis/determinism.rs`) the search runs a single execution, each
//! step the first choice of its state, without storing or normalizing a
//! state, and judges its end as any search judges an end state. When
//! every phase of that run could have been filled in no other way
//! (`reductions/det.rs`), every execution has its verdict and the search
//! is done; otherwise the caller searches as usual, without it.
//!
//! The run is one transition from the initial state (state 0 of the
//! search tree) whose steps are a chain, so a finding's witness is
//! replayed as any chain's (`replay.rs`).

use crate::reductions;
use crate::search::Explorer;
use crate::state::answer::Stop;
use crate::state::{budget, Choice};

/// What the run decided.
pub(crate) struct Decided {
    pub(crate) stop: Stop,
    /// The states the run passed through, the initial one included.
    pub(crate) states: u64,
}

impl Explorer<'_> {
    /// The run (module text); `None` where it does not decide the program:
    /// a state with two choices of one thread, a phase that another order
    /// could fill otherwise, or more states than the state limit allows.
    /// A budget limit (memory, time, an interruption) stops it as it stops
    /// a search, with what it found so far.
    pub(crate) fn det_run(&mut self) -> Option<Decided> {
        let mut s = match self.initial_state() {
            Ok(s) => s,
            Err(stop) => return Some(Decided { stop, states: 0 }),
        };
        self.tree.write().expect("tree lock").push((u32::MAX, None, None));
        let mut head: Option<Choice> = None;
        let mut taken = 0usize;
        let mut seen = vec![false; self.p.threads.len()];
        loop {
            if let Some(stop) = self.budget.check() {
                self.on_path(head);
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
            }
            let Some(&c) = choices.first() else { break };
            self.worker.quiet = true;
            match head {
                None => {
                    head = Some(c);
                    self.on_path(head);
                    self.take_step(&mut s, c, true);
                }
                Some(_) => {
                    self.on_path(head);
                    self.chained.push(c);
                    self.take_step(&mut s, c, false);
                }
            }
            self.worker.quiet = false;
            taken += 1;
            // A step of a warp adds an event per lane: the history is
            // weighed after every step.
            let working = budget::working_bytes(&s);
            if working > self.opts.limits.memory / 2 {
                // A history this long (the rule checker's closure over it
                // above all) does not fit: the search, which forgets
                // history, may.
                return None;
            }
            if working > self.work.charged {
                self.budget.charge(working - self.work.charged);
                self.work.charged = working;
            }
        }
        if !reductions::det::phases_fixed(&s) {
            return None;
        }
        self.on_path(head);
        self.at_end(&s);
        Some(Decided {
            // `--fail-fast` may have halted it at the end's finding.
            stop: self.budget.check().unwrap_or(Stop::Exhausted),
            states: taken as u64 + 1,
        })
    }

    /// The position findings are recorded at: the run so far, replayed
    /// from the initial state as a chain after `head`.
    fn on_path(&mut self, head: Option<Choice>) {
        self.key = (0, 1);
        self.prefix = Some(0);
        self.current = head;
        self.path.clear();
        self.whole = None;
    }
}
