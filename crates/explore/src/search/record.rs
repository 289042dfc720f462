//! Findings and their recording: the first finding of each kind in
//! search order wins (per worker, then across workers in [`absorb`]); end
//! states and stopped searches are judged by the rule checker (`bc-rules`),
//! then by the explorer's history rules (`rules.rs`, seen operationally
//! only), and the assertions.
//!
//! [`absorb`]: crate::search::record::Found::absorb

use crate::analysis::history::HistoryFindings;
use crate::search::outcomes;
use crate::search::Explorer;
use crate::semantics::{eval, witness};
use crate::state::answer::{Finding, Witness};
use crate::state::{State, Status};
use bc_graph::*;
use bc_syntax::{FindingKind, Quantifier};

impl<'p> Explorer<'p> {
    pub(crate) fn record(&mut self, kind: FindingKind, message: String, witness: Witness, judged: bool) {
        if self.replaying {
            return;
        }
        if judged {
            self.found.judged.insert(kind);
        } else {
            self.found.operational.insert(kind);
        }
        self.insert_finding(Finding { kind, message, witness });
    }

    /// The first finding of its kind (in this explorer's search order) stays.
    pub(crate) fn insert_finding(&mut self, f: Finding) {
        // `--fail-fast`: a kind the test does not allow ends the search.
        if self.opts.fail_fast.is_some_and(|allowed| !allowed.contains(f.kind)) {
            self.budget.halt(crate::state::answer::Stop::FailFast);
        }
        if !self.found.findings.contains_key(&f.kind) {
            if let Some(k) = &self.kinds {
                if k.seen.lock().is_ok_and(|mut seen| seen.insert(f.kind)) {
                    k.findings.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            self.found.keys.insert(f.kind, self.key);
            self.found.findings.insert(f.kind, f);
        }
    }

    /// Records the operational findings of the last step, with the path so
    /// far (and the `stuck` threads, blocked for good) as witness. A finding
    /// with no stuck wait to point at (a thread spinning forever) is placed
    /// at the statements the stuck threads are blocked on.
    pub(crate) fn flush_pending(&mut self, s: &State, stuck: &[usize]) {
        if self.replaying {
            self.worker.pending.clear();
            return;
        }
        for (kind, msg, objectless) in std::mem::take(&mut self.worker.pending) {
            if objectless {
                self.found.objectless.insert(kind);
            } else {
                self.found.operational.insert(kind);
            }
            if !self.found.findings.contains_key(&kind) {
                self.materialize_path();
                let mut w = self.witness(s, stuck, &[]);
                if w.spans.is_empty() {
                    w.spans = stuck
                        .iter()
                        .filter_map(|&t| self.p.instr(ThreadId(t as u32), s.threads[t].pc))
                        .map(|i| i.span)
                        .collect();
                }
                let message = self.relabel(msg, &w);
                self.insert_finding(Finding {
                    kind,
                    message,
                    witness: w,
                });
            }
        }
    }

    /// A state with no choice: every thread finished, or the rest are stuck.
    pub(crate) fn at_end(&mut self, s: &State) {
        self.found.executions += 1;
        let blocked: Vec<usize> = (0..s.threads.len())
            .filter(|&t| !matches!(s.threads[t].status, Status::Done | Status::NotLaunched))
            .collect();
        let stuck_waits: Vec<usize> = blocked.iter().copied().filter(|&t| self.sys.at_wait(s, t)).collect();
        if self.opts.outcomes && !self.replaying {
            let end = if blocked.is_empty() {
                outcomes::End::Final
            } else if stuck_waits.is_empty() {
                outcomes::End::Nontermination
            } else {
                outcomes::End::Deadlock
            };
            let config = outcomes::EndConfig::of(self.sys.p, s, end, &self.sys.an.sym_classes);
            let bytes = config.bytes();
            if self.found.ends.insert(config) {
                self.budget.charge(bytes);
            }
        }
        self.sys.divergent_barrier_stuck(s, &stuck_waits, &mut self.worker);
        if blocked.is_empty() {
            self.sys.copy_not_waited(s, &mut self.worker);
        }
        self.sys.syncwarp_left_open(s, &stuck_waits, &mut self.worker);
        if !blocked.is_empty() {
            let at = |ts: &[usize]| {
                let names: Vec<String> = ts
                    .iter()
                    .map(|&t| format!("{} at `{}`", self.name_of(t), self.sys.instr_text(s, t)))
                    .collect();
                names.join(", ")
            };
            if stuck_waits.is_empty() {
                let msg = format!("spins forever: {}", at(&blocked));
                self.worker.pending.push((FindingKind::Nontermination, msg, false));
            } else {
                let at = at(&stuck_waits);
                self.sys.wait_completes(at, &mut self.worker);
            }
        }
        // Only waits enter the execution as stuck events; the others
        // (spinning threads) still locate a nontermination finding.
        self.flush_pending(s, &blocked);
        // The rule checker judges the execution.
        let (mut exec, names) = self.execution(s, &stuck_waits);
        exec.finished = blocked.is_empty();
        self.judge(&exec, &names);
        self.judge_history(s);
        self.judge_finished(s, blocked.is_empty(), &exec, &names);
    }

    /// Waits stuck forever in `s` (at an end state, or throughout a fair
    /// cycle): the uniform-barrier check, then the rule checker judges the
    /// execution with them stuck.
    pub(crate) fn judge_stuck(&mut self, s: &State, stuck_waits: &[usize]) {
        self.sys.divergent_barrier_stuck(s, stuck_waits, &mut self.worker);
        self.sys.syncwarp_left_open(s, stuck_waits, &mut self.worker);
        self.flush_pending(s, stuck_waits);
        let (exec, names) = self.execution(s, stuck_waits);
        self.judge(&exec, &names);
        self.judge_history(s);
    }

    /// Assertions over an execution that ended (`finished`: every thread
    /// finished).
    pub(crate) fn judge_finished(&mut self, s: &State, finished: bool, exec: &Execution, names: &witness::ExecNames) {
        // Assertions over finished executions.
        if finished {
            for (i, a) in self.p.asserts.iter().enumerate() {
                let holds = eval::eval_final(self.p, s, &a.cond) != 0;
                let bad = match a.quantifier {
                    Quantifier::Always => !holds,
                    Quantifier::Never => holds,
                    Quantifier::Sometimes => {
                        self.found.sometimes_holds[i] |= holds;
                        false
                    }
                };
                if bad && !self.found.findings.contains_key(&FindingKind::Assertion) && !self.replaying {
                    self.materialize_path();
                    let what = if holds { "holds" } else { "does not hold" };
                    let msg = format!(
                        "`{}` {what} in this execution ({})",
                        a.text,
                        eval::describe_final(self.p, s, &a.cond)
                    );
                    let mut w = self.witness_with(exec, names, &[]);
                    w.spans = vec![a.span];
                    self.record(FindingKind::Assertion, msg, w, false);
                } else if bad {
                    self.found.operational.insert(FindingKind::Assertion);
                }
            }
        }
    }

    /// At a search limit, the rule checker still judges the execution that
    /// reached it, so a stopped search reports what it saw.
    pub(crate) fn judge_stopped(&mut self, s: &State) {
        let (mut exec, names) = self.execution(s, &[]);
        exec.partial = true;
        self.judge(&exec, &names);
        self.judge_history(s);
    }

    /// The rule checker judges an execution; its findings are recorded with
    /// the current path as witness.
    pub(crate) fn judge(&mut self, exec: &Execution, names: &witness::ExecNames) {
        self.judge_ordered(exec, None, names);
    }

    /// [`Explorer::judge`], with executes-before's closure of `exec` when
    /// the caller computed it already (`bc_rules::executes_before`).
    pub(crate) fn judge_ordered(
        &mut self,
        exec: &Execution,
        before: Option<Vec<bc_graph::bits::Bits>>,
        names: &witness::ExecNames,
    ) {
        if self.replaying {
            return;
        }
        let (rules, max_count) = (self.p.model.rules, self.p.model.max_count);
        for v in bc_rules::check_ordered(exec, before, rules, max_count, names) {
            match v.kind {
                None => {
                    if self.found.internal_errors.len() < 8 {
                        self.found.internal_errors.push(format!("{}: {}", v.rule, v.message));
                    }
                }
                Some(kind) => {
                    if !self.found.findings.contains_key(&kind) {
                        self.materialize_path();
                        let w = self.witness_with(exec, names, &v.events);
                        let message = self.relabel(v.message, &w);
                        self.record(kind, message, w, true);
                    } else {
                        self.found.judged.insert(kind);
                    }
                }
            }
        }
    }

    /// The rules the explorer judges over whole histories
    /// ([`System::history_rules`]), at each point the rule checker judges
    /// one (`judge` in `record.rs`; compaction hands back what it found
    /// before forgetting). Called after the rule checker, and recorded as
    /// seen operationally only, so the finding and witness reported stay
    /// the rule checker's; the corpus test compares the two sides.
    pub(crate) fn judge_history(&mut self, s: &State) {
        if !self.replaying {
            let found = self.sys.history_rules(s, &self.worker.ident);
            self.seen_operationally(found);
        }
    }

    /// Marks the kinds of `found` as seen by the explorer.
    pub(crate) fn seen_operationally(&mut self, found: HistoryFindings) {
        if !self.replaying {
            self.found.operational.extend(found.into_iter().map(|(kind, _)| kind));
        }
    }
}
