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
//! ([`crate::semantics::Analyses::finite`]) that holds statically. Otherwise
//! the search records its state graph (for the liveness analysis anyway),
//! and if the reduced graph has a cycle or a spinning `await`, the search
//! is repeated without the reduction (`reduced_cycle`, in the search). That
//! test is exact: if the full graph has a reachable cycle, some infinite
//! path leaves the initial state, and a persistent set at its first state
//! either holds a step the path takes (the first such step commutes to the
//! front) or holds a step independent of all of its steps (which can be
//! put in front); either way an infinite path starts with a persistent
//! step, and by induction the reduced graph, which is finite, has a
//! cycle.

use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::Choice;
use crate::state::State;

impl System<'_> {
    /// The persistent set of `choices` (a state's enabled steps, in thread
    /// order) by independent groups: the steps of the group of the first
    /// thread that has one (module doc). Every choice without groups.
    pub(crate) fn group_persistent(&self, mut choices: Vec<Choice>) -> Vec<Choice> {
        let groups = &self.an.groups;
        if let Some(first) = choices.first().filter(|_| !groups.is_empty()) {
            let g = groups[first.thread as usize];
            choices.retain(|c| groups[c.thread as usize] == g);
        }
        choices
    }

    /// Testing aid (`SearchOptions::verify_encoding`): every step of `kept`
    /// (a persistent set) and every step of `all` outside it stay enabled
    /// after each other and reach one state in either order (`canonical`
    /// puts a state in the form states are compared in); panics
    /// otherwise. Checks a few pairs per state (the first four of each).
    /// Also checks the explorer's executes-before in topological order
    /// against the fixed point it replaced.
    pub(crate) fn check_independent(&self, s: &State, kept: &[Choice], all: &[Choice], canonical: &dyn Fn(&mut State)) {
        crate::analysis::history::ExecutesBefore::check_topological(s);
        let left: Vec<Choice> = all.iter().filter(|c| !kept.contains(c)).copied().collect();
        let mut w = Worker::new(s.threads.len());
        w.quiet = true;
        let ident: Vec<u32> = (0..s.threads.len() as u32).collect();
        for &a in kept.iter().take(4) {
            for &b in left.iter().take(4) {
                let mut ends = Vec::new();
                for (x, y) in [(a, b), (b, a)] {
                    let mut n = s.clone();
                    self.step_warp(&mut n, x, &mut w);
                    assert!(
                        self.choices(&n, &ident).contains(&y),
                        "partial-order reduction: {y:?} is not enabled after {x:?}"
                    );
                    self.step_warp(&mut n, y, &mut w);
                    // Arrives of one phase commute up to the order of its
                    // members, which canonicalization sorts.
                    canonical(&mut n);
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
}
