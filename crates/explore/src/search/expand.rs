//! A worker's job: expanding one state of the frontier into its
//! successors (stepped, fused, normalized, encoded and interned), with the
//! state-graph record the liveness analysis needs.

use crate::reductions;
use crate::search::driver::{hash_of, Expanded, Item, Succ, STATE_OVERHEAD};
use crate::search::liveness;
use crate::search::{Explorer, CHAIN_MAX};
use crate::semantics::System;
use crate::state::{budget, encode, Choice};
use crate::state::{State, Status};
use bc_graph::bits::Bits;
use bc_graph::*;

impl<'p> Explorer<'p> {
    /// Expands one state of the frontier: its analysis record, whether it
    /// ends an execution (judged here), and its successors, normalized and
    /// hashed, in choice order.
    ///
    /// `spent`: the state limit is reached already, by the `Some(n)` states
    /// numbered before this level. The merge then stops at the first
    /// successor, in frontier order, not numbered before this level, so the
    /// expansion stops after its own first such successor (nothing after it
    /// is ever merged), and symmetric choices are not pruned (only the
    /// order up to that successor matters). Whether a successor was
    /// numbered before the level does not depend on the workers' timing.
    ///
    /// A budget limit (memory, deadline) stops the expansion at once; the
    /// partial result is never merged.
    pub(crate) fn expand(&mut self, it: &Item, succs: &mut Vec<Succ>, spent: Option<u32>) -> Expanded {
        let halted = Expanded {
            id: it.id,
            node: None,
            spin_edges: Vec::new(),
            nsuccs: 0,
        };
        #[cfg(test)]
        if self.fault_at == Some(it.id) {
            panic!("injected fault expanding state {}", it.id);
        }
        if self.budget.check().is_some() {
            return halted;
        }
        // SAFETY: the visited set is cleared only after the search.
        let key = unsafe { &it.state.get().key };
        let parent = match self.work.parent.take() {
            Some(mut p) => {
                encode::decode_into(key, &mut p);
                p
            }
            None => encode::decode(key),
        };
        if self.opts.verify_encoding {
            assert!(parent == encode::decode(key), "decoding into a used state");
        }
        self.charge_working(&parent);
        if self.budget.check().is_some() {
            self.work.parent = Some(parent);
            return halted;
        }
        let head = self.expand_decoded(it, &parent, succs, spent);
        self.work.parent = Some(parent);
        head
    }

    /// [`Explorer::expand`] on the decoded state `s`.
    pub(crate) fn expand_decoded(
        &mut self,
        it: &Item,
        s: &State,
        succs: &mut Vec<Succ>,
        spent: Option<u32>,
    ) -> Expanded {
        self.key = (it.id, 0);
        self.prefix = Some(it.id);
        self.path.clear();
        self.whole = None;
        self.set_ident(&it.ident);
        let choices = self.sys.choices(s, &self.worker.ident);
        let mut spin_edges = Vec::new();
        let node = self
            .graph()
            .then(|| self.node(s, &choices, it.parent, it.via, &mut spin_edges, it.id));
        let choices = self.persistent(s, choices);
        let (choices, twins) = if spent.is_some() {
            let n = choices.len();
            (choices, vec![Vec::new(); n])
        } else {
            reductions::prune_symmetric(&self.sys, s, choices, &self.budget)
        };
        if self.budget.check().is_some() {
            return Expanded {
                id: it.id,
                node: None,
                spin_edges: Vec::new(),
                nsuccs: 0,
            };
        }
        if choices.is_empty() {
            self.at_end(s);
        }
        // Chains start only from a state that has a single step itself:
        // the states right after a branch are stored, where the
        // interleavings of commuting steps meet again.
        let chains = self.chains() && choices.len() == 1;
        let mut nsuccs = 0;
        for (ci, (choice, twins)) in choices.into_iter().zip(twins).enumerate() {
            if self.budget.check().is_some() {
                break;
            }
            self.key = (it.id, ci as u32 + 1);
            self.prefix = Some(it.id);
            self.set_ident(&it.ident);
            self.path.clear();
            self.whole = None;
            self.current = Some(choice);
            self.chained.clear();
            self.worker.quiet = true;
            // The successor is built in the scratch state (its vectors
            // reused) and copied out only when it is new.
            let mut n = State::copy_in(&mut self.work.successor, s);
            self.take_step(&mut n, choice, it.id == 0);
            if chains {
                self.take_chain(&mut n, it.id, choice);
            }
            let chain: crate::search::Chain = (!self.chained.is_empty()).then(|| self.chained.as_slice().into());
            self.normalize(&mut n);
            self.worker.quiet = false;
            self.current = None;
            let query = self.sys.is_query(s, choice);
            if self.budget.halted().is_some() {
                // Normalizing stopped part way: the state is not whole.
                self.work.successor = Some(n);
                break;
            }
            let mut words = std::mem::take(&mut self.work.words);
            words.clear();
            encode::encode(&n, &mut words);
            if self.opts.verify_encoding {
                assert!(encode::decode(&words) == n, "a state decodes to itself");
            }
            let mut new = false;
            let slot = self.visited.intern_ref(hash_of(&words), &words[..], |w, arena| {
                new = true;
                arena.store(w)
            });
            if new {
                self.budget.charge(words.len() as u64 + STATE_OVERHEAD);
            }
            self.work.words = words;
            self.work.successor = Some(n);
            let succ = Succ {
                choice,
                chain,
                twins,
                slot,
                ident: self.ident_arc(),
                query,
            };
            self.budget.charge(succ.bytes());
            succs.push(succ);
            nsuccs += 1;
            // SAFETY: the visited set is cleared only after the search.
            let before_level = unsafe { slot.get() }.id().is_some_and(|id| Some(id) < spent);
            if spent.is_some() && !before_level {
                break;
            }
        }
        Expanded {
            id: it.id,
            node,
            spin_edges,
            nsuccs,
        }
    }

    /// The chain after a transition's first step (`Reductions::chain`,
    /// docs/explorer.md, "Reductions", item 9), from a state whose
    /// reduced choices are that one step (`expand_decoded`): while the state reached
    /// has a single choice left by the reductions, that step is taken in
    /// the same transition, without storing the state before it, up to
    /// [`CHAIN_MAX`] steps. Each step is taken as the search takes any
    /// (fused steps, findings recorded with the transition's path so far);
    /// the states in between are not normalized (phases sorted and
    /// retired, history compacted, threads renamed: each only makes equal
    /// states meet, and a chain's states are never compared), and the one
    /// at the end is. Only where every execution is finite
    /// ([`Explorer::chains`]). `from`: the state being expanded, `head`
    /// the transition's first choice.
    fn take_chain(&mut self, n: &mut State, from: u32, head: Choice) {
        while self.chained.len() < CHAIN_MAX && self.budget.check().is_none() {
            let choices = self.sys.choices(n, &self.worker.ident);
            let choices = self.persistent(n, choices);
            let [c] = choices[..] else { break };
            // A finding in this step replays the transition up to here.
            self.prefix = Some(from);
            self.current = Some(head);
            self.path.clear();
            self.whole = None;
            self.chained.push(c);
            self.take_step(n, c, false);
            // The state grows along the chain (nothing is compacted): what
            // working on it takes is charged as for the expanded state.
            self.charge_working(n);
        }
    }

    /// The persistent set of `s` among `choices` (with the independence
    /// self-check where `verifying`).
    fn persistent(&self, s: &State, choices: Vec<Choice>) -> Vec<Choice> {
        if self.verifying() {
            let kept = reductions::persistent(&self.sys, s, choices.clone(), &self.worker.ident);
            reductions::check_independent(&self.sys, s, &kept, &choices);
            kept
        } else {
            reductions::persistent(&self.sys, s, choices, &self.worker.ident)
        }
    }

    /// One step of the search on `n`: choice `c` and the steps fused after
    /// it, onto the path, with a halt passed to the budget and the
    /// step's findings recorded.
    /// `initial`: `n` is the initial state, which is not fused (every
    /// other state has nothing left to fuse but in the stepped thread's
    /// group: `reductions::fused_steps`).
    pub(crate) fn take_step(&mut self, n: &mut State, c: Choice, initial: bool) {
        let steps = self.sys.step_warp(n, c, &mut self.worker);
        if let Some(why) = self.worker.halt.take() {
            self.budget.halt(why);
        }
        self.path.extend(steps);
        let stepped = (!initial).then_some(c.thread as usize);
        let fused = reductions::fused_steps(&self.sys, n, &mut self.worker, Some(&self.budget), stepped);
        self.path.extend(fused);
        self.flush_pending(n, &[]);
    }

    /// Charges what this worker holds while it works on `s`
    /// (`budget::working_bytes`) beyond what it has charged already.
    fn charge_working(&mut self, s: &State) {
        let working = budget::working_bytes(s);
        if working > self.work.charged {
            self.budget.charge(working - self.work.charged);
            self.work.charged = working;
        }
    }

    /// The analysis record of a new state, and the self-loops of its spins.
    pub(crate) fn node(
        &self,
        s: &State,
        choices: &[Choice],
        parent: u32,
        via: Option<Choice>,
        edges: &mut Vec<liveness::Edge>,
        me: u32,
    ) -> liveness::Node {
        let n = self.p.threads.len();
        let mut node = liveness::Node {
            parent,
            via,
            enabled: Bits::new(n),
            alive: Bits::new(n),
            started: Bits::new(n),
            at_wait: Bits::new(n),
            host_sync: false,
        };
        for c in choices {
            node.enabled.set(c.thread as usize);
        }
        for (t, th) in s.threads.iter().enumerate() {
            if !matches!(th.status, Status::Done | Status::NotLaunched) {
                node.alive.set(t);
            }
            if th.started {
                node.started.set(t);
            }
            if node.enabled.get(t) || matches!(th.status, Status::Done | Status::NotLaunched) {
                continue;
            }
            let ins = self.p.instr(ThreadId(t as u32), th.pc).map(|i| &i.kind);
            let spins = matches!(ins, Some(InstrKind::Await(_)));
            if spins {
                node.enabled.set(t);
                let choice = Choice {
                    thread: t as u32,
                    phase: None,
                };
                let edge = liveness::Edge {
                    from: me,
                    to: me,
                    thread: t as u32,
                    query: false,
                    spin: true,
                    choice,
                };
                edges.push(edge);
            } else if self.sys.at_wait(s, t) {
                node.at_wait.set(t);
            } else if matches!(ins, Some(InstrKind::DeviceSync)) && self.p.threads[t].kind == ThreadKind::Host {
                node.host_sync = true;
            }
        }
        node
    }
}

impl System<'_> {
    /// Whether thread `c.thread`'s next step in `s` is a `stream_query`.
    pub(crate) fn is_query(&self, s: &State, c: Choice) -> bool {
        let t = c.thread as usize;
        matches!(
            self.p.instr(ThreadId(c.thread), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::StreamQuery { .. })
        )
    }
}
