//! The transition system's static side, computed once per program before
//! the search and shared read-only by every worker: a [`Choice`] (what
//! one step of the system picks) and the [`Analyses`] of the program that
//! the reductions and the steps consult. It holds no search state.

use crate::state::State;
use crate::{canon, compact, fuse, symmetry, Reductions};
use bc_graph::*;

/// A choice at one state: thread `thread` steps; for a wait, `phase` picks
/// the completed phase (index into the barrier's done list) it completes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) thread: u32,
    pub(crate) phase: Option<u32>,
}

/// What the explorer computes once per program, before the search, and
/// shares with its workers (read-only). The default (nothing computed)
/// stands in for analyses a limit stopped: the search then stops before
/// its first state.
#[derive(Default)]
pub(crate) struct Analyses {
    /// The aligned-barrier rule can fire (`symmetry::aligned_rule_live`):
    /// phase completions check it only then.
    pub(crate) aligned: bool,
    /// Barriers some parity wait uses: their last completed phase is kept
    /// while a parity wait may take it (`System::collect`).
    pub(crate) parity_barriers: Vec<bool>,
    /// Barriers every wait on which is a parity wait (through its
    /// declaration: no joined-group selector may reach the barrier), so
    /// that no wait can take a completed phase but the last.
    pub(crate) parity_only: Vec<bool>,
    /// Per code and pc: the barrier declarations a parity wait reachable
    /// from there waits on.
    pub(crate) reach_parity: compact::Reach,
    /// Per barrier instance, whether its phases are kept sorted (canon.rs).
    pub(crate) sortable: Vec<bool>,
    /// Sortable barriers no thread shares with another barrier (canon.rs):
    /// their phases sort without executes-before.
    pub(crate) isolated: Vec<bool>,
    /// Sortable barriers with transaction operations: only the runs of
    /// plain arrivals between the other members are sorted (canon.rs).
    pub(crate) segmented: Vec<bool>,
    /// Classes of interchangeable threads (symmetry.rs).
    pub(crate) sym_classes: Vec<Vec<usize>>,
    /// Barriers whose phase numbers matter (tokens, parity).
    pub(crate) token_barriers: Vec<bool>,
    /// Barriers of tokens: an arrive returns one, or a wait takes one
    /// (their phase numbers matter whole, not only their parity).
    pub(crate) tokens: Vec<bool>,
    /// Barriers whose history is never forgotten: token barriers when a
    /// token may reach memory (compact.rs).
    pub(crate) pinned: Vec<bool>,
    /// Barriers some thread waits on both with a token and by parity or
    /// plainly (`compact::mixed_waits`; pinned too).
    pub(crate) mixed_waits: Vec<bool>,
    /// Barriers some thread may drop: an explicit drop, or its end
    /// (arrive-then-drop can judge their arrives; compaction).
    pub(crate) droppable: Vec<bool>,
    /// Barriers whose completed waits may be fused (fuse.rs).
    pub(crate) lockstep: Vec<bool>,
    /// Barriers a thread inits: lockstep (wait fusion) only once no init
    /// can come (`System::init_pending`).
    pub(crate) inited: Vec<bool>,
    /// Barriers a thread inits whose phases are sorted once no init can
    /// come (`System::sorted_now`).
    pub(crate) sortable_after_init: Vec<bool>,
    /// Per code and pc: the barrier declarations an init reachable from
    /// there initializes.
    pub(crate) reach_inits: compact::Reach,
    /// Barriers whose arrives may be fused (fuse.rs, "Arrive fusion"):
    /// lockstep and sorted, no arrive returns isfirst, in a program whose
    /// every execution is finite.
    pub(crate) fused_arrives: Vec<bool>,
    /// Per code and pc: every run of local steps from there ends the
    /// thread (fuse.rs `must_end`).
    pub(crate) must_end: Vec<Vec<bool>>,
    /// Per code and pc: some run of local steps from there ends the
    /// thread (required.rs).
    pub(crate) may_end: Vec<Vec<bool>>,
    /// Per code and pc: the barrier declarations the thread may still
    /// operate on from there (history compaction).
    pub(crate) reach_barriers: compact::Reach,
    /// Per code and pc: the location declarations the thread may still
    /// access with a plain access from there (history compaction, access
    /// fusion).
    pub(crate) reach_accesses: compact::Reach,
    /// Per code and pc: the location declarations the thread may still
    /// write with a plain access from there (access fusion, fuse.rs).
    pub(crate) plain_writes: compact::Reach,
    /// Every thread's body ends (no `await`, no loop but `repeat`): every
    /// execution is finite, so the state graph has no cycle, there is no
    /// fair cycle to look for and no graph to record.
    pub(crate) finite: bool,
    /// Phase-counted barriers (`required.rs`), where partial-order
    /// reduction is on and every execution is finite; else none.
    pub(crate) phase_counted: Vec<bool>,
    /// Per thread, a number shared by the threads that walk alike from
    /// equal pcs and registers (`required.rs`): its symmetry class's
    /// first thread, or its own index.
    pub(crate) walk_class: Vec<usize>,
    /// Per thread, its independent group (`por.rs`), where the reduction
    /// applies (on, more than one group, and every execution finite or the
    /// state graph recorded); else empty.
    pub(crate) groups: Vec<u32>,
}

/// The transition system: the program, its analyses and the reductions in
/// force. Built once per search and shared read-only by every worker; it
/// holds no search state, so what its methods answer depends on the state
/// they are given alone.
pub(crate) struct System<'p> {
    pub(crate) p: &'p Program,
    pub(crate) an: Analyses,
    pub(crate) reductions: Reductions,
}

impl<'p> System<'p> {
    /// The system of `p` under `reductions`; `graph`: the search records
    /// its state graph where the program has loops.
    /// The analyses run under the search's `budget`: at its deadline or
    /// memory bound they stop, the budget is halted, and the search stops
    /// before its first state (docs/reliability.md, "Setup").
    pub(crate) fn new(
        p: &'p Program,
        reductions: Reductions,
        graph: bool,
        budget: &crate::budget::Budget,
    ) -> System<'p> {
        System {
            p,
            an: Analyses::new(p, &reductions, graph, budget).unwrap_or_default(),
            reductions,
        }
    }

    /// Whether thread `t` of `s` is at a (blocking) wait; a polling wait
    /// never blocks.
    pub(crate) fn at_wait(&self, s: &State, t: usize) -> bool {
        matches!(
            self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::Barrier {
                op: BarrierOp::Wait(w),
                ..
            }) if !w.poll
        )
    }

    /// The span and text of instruction `pc` in the body of the thread that
    /// index `t` stands for under the renaming `ident` (symmetry may map a
    /// thread onto another one's identical body).
    pub(crate) fn declared_site(&self, t: usize, pc: u32, ident: &[u32]) -> (bc_syntax::Span, String) {
        self.p
            .instr(ThreadId(ident[t]), pc)
            .map_or((bc_syntax::Span::default(), "...".to_string()), |i| {
                (i.span, i.text.clone())
            })
    }

    /// The text of thread `t`'s next instruction in `s` (`end` past its
    /// last one).
    pub(crate) fn instr_text(&self, s: &State, t: usize) -> String {
        self.p
            .instr(ThreadId(t as u32), s.threads[t].pc)
            .map_or_else(|| "end".into(), |i| i.text.clone())
    }
}

impl Analyses {
    /// The analyses of `p`, for a search with `reductions`.
    /// `graph`: the search records its state graph where a program has
    /// loops (the liveness analysis is on).
    /// Checks `budget` between analyses (each is near-linear in the
    /// program: issue 33), and ends with the stop it reports.
    pub(crate) fn new(
        p: &Program,
        reductions: &Reductions,
        graph: bool,
        budget: &crate::budget::Budget,
    ) -> Result<Analyses, crate::Stop> {
        budget.go_on()?;
        let (lockstep, inited) = fuse::lockstep_barriers(p);
        budget.go_on()?;
        // Sorting and arrive fusion read lockstep statically: not for a
        // barrier a thread inits (wait fusion checks that no init can
        // still come, `System::init_pending`).
        let static_lockstep: Vec<bool> = lockstep.iter().zip(&inited).map(|(&l, &i)| l && !i).collect();
        let (sortable, isolated, mut segmented) = if reductions.canonical {
            canon::sortable_barriers(p, &static_lockstep)
        } else {
            let none = vec![false; p.barriers.len()];
            (none.clone(), none.clone(), none)
        };
        // Sortable once no init can come: the phases after the last init
        // are those of a lockstep barrier (`System::sorted_now`).
        let sortable_after_init: Vec<bool> = if reductions.canonical && inited.iter().any(|&i| i) {
            let (relaxed, _, relaxed_segmented) = canon::sortable_barriers(p, &lockstep);
            for (g, r) in segmented.iter_mut().zip(&relaxed_segmented) {
                *g |= *r;
            }
            (0..p.barriers.len())
                .map(|b| inited[b] && relaxed[b] && !sortable[b])
                .collect()
        } else {
            vec![false; p.barriers.len()]
        };
        budget.go_on()?;
        let finite = p.threads.iter().all(|t| p.codes[t.code.index()].terminates());
        // A program with loops needs its state graph to tell whether the
        // reduced search met a cycle (`por.rs`): no reduction without it.
        budget.go_on()?;
        let groups = if reductions.por && (finite || graph) {
            let g = crate::por::groups(p);
            if g.iter().any(|&x| x != g[0]) {
                g
            } else {
                Vec::new()
            }
        } else {
            Vec::new()
        };
        budget.go_on()?;
        let fused_arrives = if reductions.fuse {
            // Not where a transaction count decides which member
            // completes a phase (an arrive and a complete_tx do not
            // commute).
            let plain_sorted: Vec<bool> = sortable.iter().zip(&segmented).map(|(&s, &g)| s && !g).collect();
            fuse::arrive_fusible_barriers(p, &static_lockstep, &plain_sorted, finite)
        } else {
            vec![false; p.barriers.len()]
        };
        budget.go_on()?;
        let phase_counted = if reductions.por && finite {
            crate::required::phase_counted_barriers(p, &sortable)
        } else {
            vec![false; p.barriers.len()]
        };
        budget.go_on()?;
        let mut walk_class: Vec<usize> = (0..p.threads.len()).collect();
        if phase_counted.iter().any(|&x| x) {
            for class in symmetry::classes(p) {
                for &t in &class {
                    walk_class[t] = class[0];
                }
            }
        }
        budget.go_on()?;
        let mut droppable: Vec<bool> = (p.barriers.iter())
            .map(|inst| inst.dropped_at_end_by_some(p.threads.len()))
            .collect();
        budget.go_on()?;
        let mut parity_only = vec![true; p.barriers.len()];
        Self::for_each_barrier_op(p, |op, _, sel, b| match op {
            BarrierOp::Drop => droppable[b.index()] = true,
            BarrierOp::Wait(w) if w.parity.is_none() || !matches!(sel, BarrierSel::Decl(_)) => {
                parity_only[b.index()] = false
            }
            _ => {}
        });
        budget.go_on()?;
        let parity_barriers = Self::barriers_where(p, |op, _| matches!(op, BarrierOp::Wait(w) if w.parity.is_some()));
        budget.go_on()?;
        let tokens = Self::barriers_where(p, |op, result| {
            matches!(op, BarrierOp::Wait(w) if w.token.is_some()) || matches!(result, Some(BarrierResult::Token(_)))
        });
        // Phase numbers matter to tokens, and their parity to parity waits.
        let token_barriers = tokens.iter().zip(&parity_barriers).map(|(&t, &p)| t || p).collect();
        budget.go_on()?;
        let must_end = fuse::must_end(p);
        budget.go_on()?;
        let may_end = fuse::may_end(p);
        budget.go_on()?;
        let reach_barriers = compact::reachable_barriers(p);
        budget.go_on()?;
        let reach_parity = compact::reachable_parity_waits(p);
        budget.go_on()?;
        let reach_accesses = compact::reachable_accesses(p, false);
        budget.go_on()?;
        let plain_writes = compact::reachable_accesses(p, true);
        budget.go_on()?;
        let reach_inits =
            compact::reachable_decls(p, p.threads.first().map_or(0, |t| t.barriers.len()), |kind, acc| {
                if let InstrKind::Barrier {
                    op: BarrierOp::Init(_),
                    sel,
                    ..
                } = kind
                {
                    for d in sel.decls(&p.groups) {
                        acc[d as usize] = true;
                    }
                }
            });
        budget.go_on()?;
        let pinned = compact::pinned_barriers(p);
        budget.go_on()?;
        let mixed_waits = compact::mixed_waits(p);
        budget.go_on()?;
        // The liveness analysis reads the state graph per thread index,
        // and symmetry renames threads from state to state: a cycle
        // could then look fair (each index steps) where one thread
        // starves, or unfair where every thread steps. Off wherever
        // that analysis runs (a program that may loop forever).
        let sym_classes = if reductions.symmetry && (finite || !graph) {
            symmetry::classes(p)
        } else {
            Vec::new()
        };
        budget.go_on()?;
        Ok(Analyses {
            aligned: symmetry::aligned_rule_live(p),
            parity_only,
            droppable,
            phase_counted,
            walk_class,
            must_end,
            may_end,
            fused_arrives,
            groups,
            parity_barriers,
            reach_barriers,
            reach_parity,
            reach_accesses,
            plain_writes,
            finite,
            lockstep,
            inited,
            sortable_after_init,
            reach_inits,
            pinned,
            mixed_waits,
            sortable,
            isolated,
            segmented,
            sym_classes,
            token_barriers,
            tokens,
        })
    }

    /// Calls `f` with every barrier instruction of every thread and each
    /// barrier instance its selector may reach (every member of a
    /// joined-barrier group).
    pub(crate) fn for_each_barrier_op(
        p: &Program,
        mut f: impl FnMut(&BarrierOp, &Option<BarrierResult>, BarrierSel, BarrierId),
    ) {
        for (i, t) in p.threads.iter().enumerate() {
            for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
                if let InstrKind::Barrier { op, sel, result } = &ins.kind {
                    for b in sel.decls(&p.groups).into_iter().filter_map(|d| t.barriers[d as usize]) {
                        f(op, result, *sel, b);
                    }
                }
            }
        }
    }

    /// Barrier instances some instruction of a thread applies `pred` to.
    pub(crate) fn barriers_where(p: &Program, pred: impl Fn(&BarrierOp, &Option<BarrierResult>) -> bool) -> Vec<bool> {
        let mut out = vec![false; p.barriers.len()];
        for (i, t) in p.threads.iter().enumerate() {
            for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
                if let InstrKind::Barrier { op, sel, result } = &ins.kind {
                    let decl = match sel {
                        BarrierSel::Decl(d) | BarrierSel::JoinedOr { decl: d, .. } => *d,
                        BarrierSel::Joined { .. } => continue,
                    };
                    if pred(op, result) {
                        if let Some(b) = t.barriers[decl as usize] {
                            out[b.index()] = true;
                        }
                    }
                }
            }
        }
        out
    }
}
