//! The one replayer: witnesses are built only when a finding needs one,
//! by replaying the choices that reached it from the initial state (the
//! search tree's path for a finding of the search, the stem of a lasso for
//! the liveness analysis), saving and restoring the worker's bookkeeping
//! around it.

use crate::reductions;
use crate::search::Explorer;
use crate::state::answer::{Step, Stop};
use crate::state::Choice;
use crate::state::State;

impl<'p> Explorer<'p> {
    /// The steps from the initial state to state `id` of the search tree,
    /// then the choice `then` (the transition being expanded, up to where
    /// a finding came up), replayed (witnesses are built only when a
    /// finding needs one).
    pub(crate) fn replay_to(&mut self, id: u32, then: Option<Choice>) -> Vec<Step> {
        let mut chain = Vec::new();
        {
            let tree = self.tree.read().expect("tree lock");
            let mut at = id;
            while let (parent, Some(c)) = tree[at as usize] {
                chain.push(c);
                at = parent;
            }
        }
        chain.reverse();
        let replayed = self.replay(&chain, false, |e, mut s, mut steps| {
            if let Some(c) = then {
                steps.push(e.sys.step(&mut s, c, &mut e.worker));
                steps.extend(reductions::fused_steps(&e.sys, &mut s, &mut e.worker, None));
            }
            Ok(steps)
        });
        replayed.expect("a replay without the budget never stops")
    }

    /// The one replayer: replays `chain` from the initial state in
    /// declaration order (thread renaming starting from the identity),
    /// each choice with its fused steps and the reductions after it, then
    /// hands the state reached and the steps to `then`, still replaying
    /// (nothing is recorded unless `then` ends the replay). The path, the
    /// pending findings, the renaming and the step modes are saved before
    /// and restored after. `budgeted`: the budget is checked before each
    /// step (`Err` at a limit).
    pub(crate) fn replay<R>(
        &mut self,
        chain: &[Choice],
        budgeted: bool,
        then: impl FnOnce(&mut Self, State, Vec<Step>) -> Result<R, Stop>,
    ) -> Result<R, Stop> {
        let saved = (
            std::mem::take(&mut self.path),
            std::mem::take(&mut self.worker.pending),
            std::mem::replace(&mut self.worker.ident, (0..self.p.threads.len() as u32).collect()),
            self.replaying,
            self.worker.quiet,
        );
        self.replaying = true;
        self.worker.quiet = false;
        let run = || {
            let mut s = State::initial(self.p);
            for t in 0..self.p.threads.len() {
                self.sys.run_local(&mut s, t, &mut self.worker);
            }
            let mut steps = Vec::new();
            for &c in chain {
                if budgeted {
                    self.budget.go_on()?;
                }
                steps.push(self.sys.step(&mut s, c, &mut self.worker));
                steps.extend(reductions::fused_steps(&self.sys, &mut s, &mut self.worker, None));
                self.normalize(&mut s);
            }
            then(self, s, steps)
        };
        let r = run();
        (
            self.path,
            self.worker.pending,
            self.worker.ident,
            self.replaying,
            self.worker.quiet,
        ) = saved;
        r
    }

    /// Makes `self.path` the whole path from the initial state. While a
    /// worker expands a state, the path is not kept (steps are taken
    /// quietly, without their texts): it is replayed from the search tree
    /// to the expanded state, then the choice being taken.
    pub(crate) fn materialize_path(&mut self) {
        if let Some(id) = self.prefix.take() {
            let then = self.current.take();
            self.path = self.replay_to(id, then);
        }
    }
}
