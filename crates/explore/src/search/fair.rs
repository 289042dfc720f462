//! After the search: the liveness analysis's findings. Fair cycles become
//! `nontermination` (or `deadlock`) with a lasso witness, and the states
//! the analysis points at are judged by the rule checker with their stuck
//! waits.

use crate::search::Explorer;
use crate::search::{liveness, outcomes};
use crate::state::answer::{Finding, Step, Stop, Witness};
use crate::state::Choice;
use bc_syntax::FindingKind;

impl<'p> Explorer<'p> {
    /// Looks for a fair cycle in which some thread never ends, and records
    /// it as `nontermination` (or `deadlock`, when a thread waits on a
    /// barrier throughout it) with a lasso witness.
    ///
    /// The analysis and the replays charge the search's budget; at a limit
    /// it ends with `Err` (the search's stop), keeping only the findings
    /// whose witnesses were replayed in full.
    pub(crate) fn liveness(&mut self, nodes: &[liveness::Node], edges: &[liveness::Edge]) -> Result<(), Stop> {
        let budget = self.budget.clone();
        let analysis = liveness::Analysis::new(
            self.p,
            self.p.progress.kind,
            self.p.progress.strong,
            nodes,
            edges,
            &budget,
        )?;
        let (cycles, bottoms) = analysis.find()?;
        for cycle in cycles {
            self.fair_cycle(&analysis, &cycle, nodes, edges)?;
        }
        for entry in bottoms {
            self.judge_at(nodes, entry, &[])?;
        }
        Ok(())
    }

    /// The rule checker judges the execution of state `id` with the waits
    /// of `stuck` stuck (the state replayed along the search tree; its steps
    /// are the witness path).
    pub(crate) fn judge_at(&mut self, nodes: &[liveness::Node], id: u32, stuck: &[usize]) -> Result<(), Stop> {
        let stem: Vec<_> = liveness::stem(nodes, id).into_iter().map(|c| (c, None)).collect();
        self.replay(&stem, true, |e, s, steps| {
            // The replay ends: the rule checker's findings are recorded,
            // with the replayed steps as the whole path.
            e.replaying = false;
            e.prefix = None;
            e.path = steps;
            e.judge_stuck(&s, stuck);
            Ok(())
        })
    }

    /// Records fair cycle `cycle` as `nontermination` (or `deadlock`, when
    /// a thread waits on a barrier throughout it) with a lasso witness.
    pub(crate) fn fair_cycle(
        &mut self,
        analysis: &liveness::Analysis,
        cycle: &liveness::FairCycle,
        nodes: &[liveness::Node],
        edges: &[liveness::Edge],
    ) -> Result<(), Stop> {
        let kind = if !cycle.stuck.is_empty() {
            FindingKind::Deadlock
        } else {
            FindingKind::Nontermination
        };
        if self.opts.outcomes {
            self.found.cycle_ends.insert(if kind == FindingKind::Deadlock {
                outcomes::End::Deadlock
            } else {
                outcomes::End::Nontermination
            });
        }
        let alive: Vec<String> = (0..self.p.threads.len())
            .filter(|&t| nodes[cycle.entry as usize].alive.get(t))
            .map(|t| self.name_of(t).to_string())
            .collect();
        let message = match cycle.stuck.first() {
            Some(&t) => format!(
                "{} waits on a barrier forever while others run on (a fair cycle under progress model `{}`)",
                self.name_of(t as usize),
                self.p.progress
            ),
            None => format!(
                "a fair infinite execution under progress model `{}` in which {} never finish",
                self.p.progress,
                alive.join(", ")
            ),
        };
        // The lasso: the stem along search-tree parents, then the cycle.
        let stem = liveness::stem(nodes, cycle.entry);
        if self.found.findings.contains_key(&kind) {
            self.found.operational.insert(kind);
        } else {
            let loop_edges: Vec<liveness::Edge> =
                analysis.cycle(cycle)?.into_iter().map(|e| edges[e as usize]).collect();
            let witness = self.lasso(&stem, &loop_edges)?;
            self.found.operational.insert(kind);
            self.insert_finding(Finding { kind, message, witness });
        }
        if !cycle.stuck.is_empty() {
            // Waits stuck throughout a fair cycle never complete: the rule
            // checker judges the execution with them stuck, as at an end
            // state (where a spinning `await` leaves them; its load-loop
            // form leaves them here).
            let stuck: Vec<usize> = cycle.stuck.iter().map(|&t| t as usize).collect();
            self.judge_at(nodes, cycle.entry, &stuck)?;
        }
        Ok(())
    }

    /// The lasso witness: `stem`, then `cycle` (`Err` when the budget ends
    /// the replay).
    pub(crate) fn lasso(&mut self, stem: &[Choice], cycle: &[liveness::Edge]) -> Result<Witness, Stop> {
        let stem: Vec<_> = stem.iter().map(|&c| (c, None)).collect();
        self.replay(&stem, true, |e, mut s, mut steps| {
            let entry = s.clone();
            let whole_entry = e.whole.as_ref().map(|w| w.snapshot());
            let cycle_start = steps.len();
            for edge in cycle {
                e.budget.go_on()?;
                if edge.spin {
                    let t = edge.thread as usize;
                    let (span, text) = e.declared_site(t, s.threads[t].pc);
                    let spin = Step {
                        thread: e.name_of(t).to_string(),
                        span,
                        text,
                        effect: "spins: the condition does not hold".into(),
                        events: Vec::new(),
                    };
                    if let Some(whole) = &mut e.whole {
                        whole.steps.push(spin.clone());
                    }
                    steps.push(spin);
                } else {
                    // A whole scan: the entry may be the initial state,
                    // and elsewhere it finds what the search's did.
                    steps.extend(e.replay_step(&mut s, edge.choice, true));
                    e.replay_normalize(&mut s);
                }
            }
            e.replaying = false;
            e.path = steps;
            // The witness shows the entry state's execution, with every
            // step of the lasso.
            e.whole = match (whole_entry, e.whole.take()) {
                (Some(mut entry), Some(end)) => {
                    entry.steps = end.steps;
                    entry.broken |= end.broken;
                    Some(entry)
                }
                _ => None,
            };
            let mut w = e.witness(&entry, &[], &[]);
            w.cycle_start = Some(cycle_start);
            Ok(w)
        })
    }
}
