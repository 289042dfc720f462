//! The analyses: what the explorer computes once per program, before the
//! search, as pure functions of the [`Program`] (reach sets, lockstep and
//! sortable barriers, classes of interchangeable threads, must/may end,
//! pinned barriers, independent groups, phase-counted barriers), and the
//! history relations that several reductions and rules read
//! (`history.rs`: executes-before over a state's history). Nothing here
//! reads the search or a reduction; the reductions and the transition
//! system read these.

pub(crate) mod classes;
pub(crate) mod determinism;
pub(crate) mod groups;
pub(crate) mod history;
pub(crate) mod lockstep;
pub(crate) mod ops;
pub(crate) mod own_phase;
pub(crate) mod phase_counted;
pub(crate) mod pinned;
pub(crate) mod reach;
pub(crate) mod sortable;
pub(crate) mod warps;

use crate::state::answer::Stop;
use crate::state::budget::Budget;
use crate::state::options::Reductions;
use bc_graph::*;
use reach::Reach;

/// What the explorer computes once per program, before the search, and
/// shares with its workers (read-only). The default (nothing computed)
/// stands in for analyses a limit stopped: the search then stops before
/// its first state.
#[derive(Default)]
pub(crate) struct Analyses {
    /// The aligned-barrier rule can fire (`classes::aligned_rule_live`):
    /// phase completions check it only then.
    pub(crate) aligned: bool,
    /// Some wait is `.aligned` (`barrier.cluster.wait.aligned`) and the
    /// aligned-barrier rule is on: waits and ends check it only then
    /// (`System::aligned_wait_rule`).
    pub(crate) aligned_waits: bool,
    /// Barriers some parity wait uses: their last completed phase is kept
    /// while a parity wait may take it (`System::collect`).
    pub(crate) parity_barriers: Vec<bool>,
    /// Barriers every wait on which is a parity wait (through its
    /// declaration: no joined-group selector may reach the barrier), so
    /// that no wait can take a completed phase but the last.
    pub(crate) parity_only: Vec<bool>,
    /// Per code and pc: the barrier declarations a parity wait reachable
    /// from there waits on.
    pub(crate) reach_parity: Reach,
    /// Per barrier instance, whether its phases are kept sorted (canon.rs).
    pub(crate) sortable: Vec<bool>,
    /// Sortable barriers no thread shares with another barrier (canon.rs):
    /// their phases sort without executes-before.
    pub(crate) isolated: Vec<bool>,
    /// Sortable barriers with transaction operations: only the runs of
    /// plain arrivals between the other members are sorted (canon.rs).
    pub(crate) segmented: Vec<bool>,
    /// Barriers whose phases are ordered by their arrivals' thread counts
    /// (canon.rs, "Thread counts that differ"): not sortable only because
    /// their thread-counted arrives write different counts.
    pub(crate) count_keyed: Vec<bool>,
    /// Barriers whose every wait is the wait half of its thread's
    /// thread-counted arrive (`own_phase.rs`): a completed phase is kept
    /// only for members whose latest arrive it holds.
    pub(crate) own_phase_waits: Vec<bool>,
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
    /// plainly (`pinned::mixed_waits`; pinned too).
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
    pub(crate) reach_inits: Reach,
    /// Barriers whose arrives may be fused (fuse.rs, "Arrive fusion"):
    /// lockstep and sorted, no arrive returns isfirst, in a program whose
    /// every execution is finite.
    pub(crate) fused_arrives: Vec<bool>,
    /// Barriers a thread inits whose arrives fuse once no init can come
    /// (`System::arrives_fuse`).
    pub(crate) fused_arrives_after_init: Vec<bool>,
    /// Per code and pc: every run of local steps from there ends the
    /// thread (fuse.rs `must_end`).
    pub(crate) must_end: Vec<Vec<bool>>,
    /// Per code and pc: some run of local steps from there ends the
    /// thread (required.rs).
    pub(crate) may_end: Vec<Vec<bool>>,
    /// Per code and pc: the barrier declarations the thread may still
    /// operate on from there (history compaction).
    pub(crate) reach_barriers: Reach,
    /// Per code and pc: the location declarations the thread may still
    /// access with a plain access from there (history compaction, access
    /// fusion).
    pub(crate) reach_accesses: Reach,
    /// Per code and pc: the location declarations the thread may still
    /// write with a plain access from there (access fusion, fuse.rs).
    pub(crate) plain_writes: Reach,
    /// Per thread, the location declarations it can ever access
    /// ([`reach::live_loc_decls`]) by the instance they name, sorted:
    /// `(instance, declaration)`. `System::may_reach_loc` looks up the
    /// few declarations of one instance here rather than scanning every
    /// declaration (a kernel's address trees have thousands), and leaves
    /// out the other threads' leaves of trees over the place.
    pub(crate) loc_decls: Vec<Vec<(LocId, u32)>>,
    /// Per location instance, the threads (ascending) some declaration of
    /// which names it: the only ones that can ever access it (compaction's
    /// touchers scan these, not every live thread).
    pub(crate) loc_threads: Vec<Vec<usize>>,
    /// Per barrier instance, the threads (ascending) some declaration of
    /// which names it, or some `__syncwarp` mask of which names its lane
    /// (`Program::masks_naming`): the only ones that can ever join, operate
    /// on or drop it (compaction's touchers scan these: a pipeline of 128
    /// threads has 3,584 copy agents, each with a start barrier of its own
    /// that only it and its issuer touch).
    pub(crate) bar_threads: Vec<Vec<usize>>,
    /// Every thread's body ends (no `await`, no loop but `repeat`): every
    /// execution is finite, so the state graph has no cycle, there is no
    /// fair cycle to look for and no graph to record.
    pub(crate) finite: bool,
    /// Phase-counted barriers (`required.rs`), where partial-order
    /// reduction is on and every execution is finite; else none.
    pub(crate) phase_counted: Vec<bool>,
    /// Thread-counted barriers with their count (`required.rs`), under
    /// the same conditions; else none.
    pub(crate) thread_counted: Vec<Option<i64>>,
    /// Per thread, a number shared by the threads that walk alike from
    /// equal pcs and registers (`required.rs`): its symmetry class's
    /// first thread, or its own index.
    pub(crate) walk_class: Vec<usize>,
    /// Per thread, the barriers whose arrives fuse (statically or once no
    /// init can come) that it arrives on (`required.rs`, held barriers):
    /// filled where some barrier is phase-counted, else empty.
    pub(crate) fused_arrives_on: Vec<Vec<u32>>,
    /// Per thread, its independent group (`por.rs`), where the reduction
    /// applies (on, more than one group, and every execution finite or the
    /// state graph recorded); else empty.
    pub(crate) groups: Vec<u32>,
    /// The lanes of each warp that arrive together at `.aligned` barriers
    /// (`warps.rs`); empty without `.aligned` arrives.
    pub(crate) warps: warps::Warps,
    /// The program is deterministic (`determinism.rs`) and the reduction
    /// that decides it on one execution is on (`Reductions::det`).
    pub(crate) deterministic: bool,
}

impl Analyses {
    /// The analyses of `p`, for a search with `reductions`.
    /// `graph`: the search records its state graph where a program has
    /// loops (the liveness analysis is on).
    /// Checks `budget` between analyses (each is near-linear in the
    /// program: issue 33), and ends with the stop it reports.
    pub(crate) fn new(p: &Program, reductions: &Reductions, graph: bool, budget: &Budget) -> Result<Analyses, Stop> {
        budget.go_on()?;
        let (lockstep, inited) = lockstep::lockstep_barriers(p);
        budget.go_on()?;
        // Sorting and arrive fusion read lockstep statically: not for a
        // barrier a thread inits (wait fusion checks that no init can
        // still come, `System::init_pending`).
        let static_lockstep: Vec<bool> = lockstep.iter().zip(&inited).map(|(&l, &i)| l && !i).collect();
        let (sortable, isolated, mut segmented, count_keyed) = if reductions.canonical {
            let s = sortable::sortable_barriers(p, &static_lockstep);
            (s.sortable, s.isolated, s.segmented, s.count_keyed)
        } else {
            let none = vec![false; p.barriers.len()];
            (none.clone(), none.clone(), none.clone(), none)
        };
        // Sortable once no init can come: the phases after the last init
        // are those of a lockstep barrier (`System::sorted_now`).
        let sortable_after_init: Vec<bool> = if reductions.canonical && inited.iter().any(|&i| i) {
            let relaxed = sortable::sortable_barriers(p, &lockstep);
            let (relaxed, relaxed_segmented) = (relaxed.sortable, relaxed.segmented);
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
        let warps = warps::aligned_warps(p);
        let groups = if reductions.por && (finite || graph) {
            let g = groups::groups(p, &warps);
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
            lockstep::arrive_fusible_barriers(p, &static_lockstep, &plain_sorted, finite)
        } else {
            vec![false; p.barriers.len()]
        };
        let fused_arrives_after_init = if reductions.fuse && sortable_after_init.iter().any(|&x| x) {
            let plain: Vec<bool> = sortable_after_init
                .iter()
                .zip(&segmented)
                .map(|(&s, &g)| s && !g)
                .collect();
            lockstep::arrive_fusible_after_init(p, &lockstep, &plain, finite)
        } else {
            vec![false; p.barriers.len()]
        };
        budget.go_on()?;
        let (phase_counted, thread_counted) = if reductions.por && finite {
            (
                phase_counted::phase_counted_barriers(p, &sortable),
                phase_counted::thread_counted_barriers(p, &sortable),
            )
        } else {
            (vec![false; p.barriers.len()], vec![None; p.barriers.len()])
        };
        let counted = phase_counted.iter().any(|&x| x) || thread_counted.iter().any(Option::is_some);
        budget.go_on()?;
        let mut walk_class: Vec<usize> = (0..p.threads.len()).collect();
        if counted {
            for class in classes::classes(p) {
                for &t in &class {
                    walk_class[t] = class[0];
                }
            }
        }
        let mut fused_arrives_on: Vec<Vec<u32>> = Vec::new();
        if counted {
            for t in 0..p.threads.len() {
                let info = &p.threads[t];
                let mut on: Vec<u32> = Vec::new();
                for ins in bc_graph::classes::live_instrs(p, ThreadId(t as u32)) {
                    if let InstrKind::Barrier {
                        op: BarrierOp::Arrive(_),
                        sel: BarrierSel::Decl(d),
                        ..
                    } = &ins.kind
                    {
                        if let Some(b) = info.barriers[*d as usize] {
                            let c = b.index();
                            if (fused_arrives[c] || fused_arrives_after_init[c]) && !on.contains(&(c as u32)) {
                                on.push(c as u32);
                            }
                        }
                    }
                }
                fused_arrives_on.push(on);
            }
        }
        budget.go_on()?;
        let mut droppable: Vec<bool> = (p.barriers.iter())
            .map(|inst| inst.dropped_at_end_by_some(p.threads.len()))
            .collect();
        budget.go_on()?;
        let mut parity_only = vec![true; p.barriers.len()];
        ops::for_each_barrier_op(p, |op, _, sel, b| match op {
            BarrierOp::Drop => droppable[b.index()] = true,
            BarrierOp::Wait(w) if w.parity.is_none() || !matches!(sel, BarrierSel::Decl(_)) => {
                parity_only[b.index()] = false
            }
            _ => {}
        });
        budget.go_on()?;
        let parity_barriers = ops::barriers_where(p, |op, _| matches!(op, BarrierOp::Wait(w) if w.parity.is_some()));
        budget.go_on()?;
        let tokens = ops::barriers_where(p, |op, result| {
            matches!(op, BarrierOp::Wait(w) if w.token.is_some()) || matches!(result, Some(BarrierResult::Token(_)))
        });
        // Phase numbers matter to tokens, and their parity to parity waits.
        let token_barriers = tokens.iter().zip(&parity_barriers).map(|(&t, &p)| t || p).collect();
        budget.go_on()?;
        let must_end = lockstep::must_end(p);
        budget.go_on()?;
        let may_end = lockstep::may_end(p);
        budget.go_on()?;
        let reach_barriers = reach::reachable_barriers(p);
        budget.go_on()?;
        let reach_parity = reach::reachable_parity_waits(p);
        budget.go_on()?;
        let reach_accesses = reach::reachable_accesses(p, false);
        budget.go_on()?;
        let plain_writes = reach::reachable_accesses(p, true);
        budget.go_on()?;
        let mut loc_decls = Vec::with_capacity(p.threads.len());
        for (u, t) in p.threads.iter().enumerate() {
            budget.go_on()?;
            let mut v: Vec<(LocId, u32)> = (reach::live_loc_decls(p, ThreadId(u as u32)).into_iter())
                .filter_map(|d| Some((t.locs[d as usize]?, d)))
                .collect();
            v.sort_unstable();
            loc_decls.push(v);
        }
        let mut loc_threads: Vec<Vec<usize>> = vec![Vec::new(); p.locs.len()];
        for (t, decls) in loc_decls.iter().enumerate() {
            for &(l, _) in decls {
                let ts = &mut loc_threads[l.index()];
                if ts.last() != Some(&t) {
                    ts.push(t);
                }
            }
        }
        let mut bar_threads: Vec<Vec<usize>> = vec![Vec::new(); p.barriers.len()];
        for (t, info) in p.threads.iter().enumerate() {
            for b in info
                .barriers
                .iter()
                .flatten()
                .copied()
                .chain(p.masks_naming(ThreadId(t as u32)))
            {
                let ts = &mut bar_threads[b.index()];
                if ts.last() != Some(&t) {
                    ts.push(t);
                }
            }
        }
        let reach_inits = reach::reachable_decls(p, p.threads.first().map_or(0, |t| t.barriers.len()), |kind, acc| {
            if let InstrKind::Barrier {
                op: BarrierOp::Init(_),
                sel,
                ..
            } = kind
            {
                for d in sel.decls(&p.groups) {
                    acc(d);
                }
            }
        });
        budget.go_on()?;
        let pinned = pinned::pinned_barriers(p);
        budget.go_on()?;
        let mixed_waits = pinned::mixed_waits(p);
        budget.go_on()?;
        let own_phase_waits = own_phase::own_phase_waits(p);
        budget.go_on()?;
        // The liveness analysis reads the state graph per thread index,
        // and symmetry renames threads from state to state: a cycle
        // could then look fair (each index steps) where one thread
        // starves, or unfair where every thread steps. Where that
        // analysis runs (a program that may loop forever) only classes
        // of threads that cannot loop are kept (`cycle_free`): such a
        // thread's every step moves it on for good, so no cycle of the
        // state graph holds one, and along a cycle the class's own states
        // stay as they are, and so does their sorted order (docs/
        // explorer.md, item 3, "Under liveness").
        let sym_classes = if !reductions.symmetry {
            Vec::new()
        } else if finite || !graph {
            classes::classes(p)
        } else {
            let free: Vec<bool> = (0..p.threads.len()).map(|t| cycle_free(p, t)).collect();
            classes::classes(p)
                .into_iter()
                .filter(|c| c.iter().all(|&t| free[t]))
                .collect()
        };
        budget.go_on()?;
        Ok(Analyses {
            aligned: classes::aligned_rule_live(p),
            aligned_waits: classes::aligned_wait_rule_live(p),
            parity_only,
            droppable,
            phase_counted,
            thread_counted,
            walk_class,
            fused_arrives_on,
            must_end,
            may_end,
            fused_arrives,
            fused_arrives_after_init,
            groups,
            warps,
            parity_barriers,
            reach_barriers,
            reach_parity,
            reach_accesses,
            plain_writes,
            loc_decls,
            loc_threads,
            bar_threads,
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
            count_keyed,
            deterministic: reductions.det && determinism::deterministic(p, &own_phase_waits, finite),
            own_phase_waits,
            sym_classes,
            token_barriers,
            tokens,
        })
    }
}

/// Whether thread `t` cannot loop: no `await` and no backward jump that
/// closes anything but a counted loop on the instructions it can reach
/// (its branches on builtins resolved: `bc_graph::classes::reachable_pcs`).
/// Its every step then moves it on for good.
fn cycle_free(p: &Program, t: usize) -> bool {
    let tid = bc_graph::ThreadId(t as u32);
    let reach = bc_graph::classes::reachable_pcs(p, tid);
    p.code_of(tid)
        .terminates_where(&|pc| reach.get(pc).copied().unwrap_or(false))
}
