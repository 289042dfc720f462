//! The whole check of one program, the facade's one entry: the search,
//! then the liveness analysis after it (`search/fair.rs`), the `sometimes`
//! assertions, then the [`Outcome`].

use crate::search::driver::{reduced_cycle, Search};
use crate::search::outcomes;
use crate::search::Explorer;
use crate::state::answer::{Stop, Witness};
use crate::{Outcome, Stats};
use bc_syntax::{FindingKind, Quantifier};

impl Explorer<'_> {
    /// The whole check of the program: the search, the liveness analysis
    /// after it, the `sometimes` assertions, then the outcome.
    pub(crate) fn run(mut self) -> Outcome {
        if self.sys.an.deterministic && self.opts.reductions.det && !self.opts.outcomes {
            match self.det_run() {
                Some(decided) => return self.det_outcome(decided),
                None => {
                    // The one run did not decide the program: search it,
                    // within the same limits counted from the same start.
                    // The analyses are the same with the one run off
                    // (only `deterministic` reads the switch): kept.
                    let (p, start, counter, kinds) = (self.p, self.start, self.counter.take(), self.kinds.take());
                    let mut opts = self.opts;
                    opts.reductions.det = false;
                    let prior = std::mem::replace(&mut self.found, crate::search::found::Found::new(0));
                    let sys = self.sys.clone();
                    drop(self);
                    let mut again = Explorer::on_system(p, opts, sys, start);
                    again.counter = counter;
                    again.kinds = kinds;
                    let mut o = again.run();
                    keep_prior(&mut o, prior);
                    return o;
                }
            }
        }
        let (stop, search, workers) = self.search();
        if stop == Stop::Exhausted && reduced_cycle(&self.sys, &search.edges, search.count) {
            // Partial-order reduction may have ignored a group on a cycle
            // (`por.rs`): search again without it, within the same limits
            // counted from the same start.
            let (p, start, counter) = (self.p, self.start, self.counter.take());
            let mut opts = self.opts;
            opts.reductions.por = false;
            drop((search, workers, self));
            let mut again = Explorer::new_at(p, opts, start);
            again.counter = counter;
            return again.run();
        }
        let visited = search.visited();
        let Search {
            count,
            nodes,
            edges,
            graph_bytes,
            ..
        } = search;
        let (states, stored) = (visited, count as u64);
        for w in workers {
            self.found.absorb(w.found);
        }
        self.prefix = None;
        self.path.clear();
        self.whole = None;
        self.key = (u32::MAX, 0);
        let searched = stop;
        let mut stop = stop;
        if stop == Stop::Exhausted && self.graph() {
            // The visited set is freed: the search holds its state graph
            // and its tree; the analysis charges what it builds on top.
            let entry = std::mem::size_of::<crate::search::TreeEntry>() as u64;
            let tree = self.tree.read().expect("tree lock").capacity() as u64 * entry;
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
                if a.quantifier == Quantifier::Sometimes && !self.found.sometimes_holds[i] {
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
        self.found.internal_errors.sort();
        self.found.internal_errors.dedup();
        self.found.internal_errors.truncate(8);
        let outcomes = self.opts.outcomes.then(|| {
            let (set, why) = outcomes::outcome_set(
                self.p,
                &self.sys.an.sym_classes,
                &self.found.ends,
                &self.found.cycle_ends,
                &self.budget,
            );
            // An expansion stopped at a limit is a stopped check: the set
            // is partial (a search stopped earlier keeps its own stop).
            if let (Some(why), Stop::Exhausted) = (why, stop) {
                stop = why;
            }
            set
        });
        Outcome {
            findings: self.found.findings.into_values().collect(),
            stats: Stats {
                states,
                stored,
                executions: self.found.executions,
                elapsed: self.start.elapsed(),
                one_run: false,
            },
            stop,
            operational: self.found.operational,
            judged: self.found.judged,
            objectless: self.found.objectless,
            internal_errors: self.found.internal_errors,
            outcomes,
        }
    }

    /// The outcome of a program the one run decided (`search/det.rs`).
    fn det_outcome(mut self, decided: crate::search::det::Decided) -> Outcome {
        self.found.internal_errors.sort();
        self.found.internal_errors.dedup();
        self.found.internal_errors.truncate(8);
        Outcome {
            findings: self.found.findings.into_values().collect(),
            stats: Stats {
                states: decided.states,
                stored: self.tree.read().expect("tree lock").len() as u64,
                executions: self.found.executions,
                elapsed: self.start.elapsed(),
                one_run: true,
            },
            stop: decided.stop,
            operational: self.found.operational,
            judged: self.found.judged,
            objectless: self.found.objectless,
            internal_errors: self.found.internal_errors,
            outcomes: None,
        }
    }
}

/// What the one run found in an execution of the program before it handed
/// the program to the search (`search/det.rs`): where the search stopped
/// at a limit, the kinds it did not reach are still reported, with the
/// run's witnesses (each a real execution's); an exhausted search found
/// every kind already, with witnesses in search order. The rule checker's
/// rejections of the run are kept either way.
fn keep_prior(o: &mut Outcome, prior: crate::search::found::Found) {
    o.internal_errors.extend(prior.internal_errors);
    o.internal_errors.sort();
    o.internal_errors.dedup();
    o.internal_errors.truncate(8);
    if o.stop == Stop::Exhausted {
        return;
    }
    for (kind, f) in prior.findings {
        if !o.findings.iter().any(|g| g.kind == kind) {
            o.findings.push(f);
        }
    }
    o.findings.sort_by_key(|f| f.kind);
    o.operational.extend(prior.operational);
    o.judged.extend(prior.judged);
    o.objectless.extend(prior.objectless);
}
