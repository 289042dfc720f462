//! The transition system, unreduced and complete on its own: [`System`]
//! (the program, its [`Analyses`], the reductions in force), shared
//! read-only by every worker and holding no search state. Floor 3 of the
//! explorer (docs/ARCHITECTURE.md, "The explore crate"): the choices a
//! state offers (`choices.rs`), one step (`step.rs`), expression
//! evaluation (`eval.rs`), the rules the explorer decides as it steps
//! (`rules.rs`), histories as executions and witnesses (`witness.rs`),
//! and the stepping context (`worker.rs`). It imports the state and the
//! analyses, never a reduction or the search.

pub(crate) mod barrier_ops;
pub(crate) mod choices;
pub(crate) mod eval;
pub(crate) mod history_rules;
pub(crate) mod rules;
pub(crate) mod step;
pub(crate) mod warp_count;
pub(crate) mod witness;
pub(crate) mod worker;

/// How a witness step ends whose arrive counts its warp's absent lanes
/// (`System::absent_lanes`); a folded warp step keeps it.
pub(crate) const WHOLE_WARP_NOTE: &str = "the barrier counts whole warps)";

use crate::analysis::reach::Reach;
use crate::analysis::Analyses;
use crate::state::options::Reductions;
use crate::state::{State, Status};
use bc_graph::*;

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
        budget: &crate::state::budget::Budget,
    ) -> System<'p> {
        System {
            p,
            an: Analyses::new(p, &reductions, graph, budget).unwrap_or_default(),
            reductions,
        }
    }

    /// Whether thread `t` of `s` is at a (blocking) wait; a polling wait
    /// never blocks.
    /// A lane whose wait the first lane of its warp takes
    /// (`choices::Lane::Follows`) is not blocked. A lane held at an
    /// `.aligned` arrive by its warp (`choices::Lane::Held`) is not at a
    /// wait: the lane that holds it is, for good, or spins.
    pub(crate) fn at_wait(&self, s: &State, t: usize) -> bool {
        matches!(
            self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::Barrier {
                op: BarrierOp::Wait(w),
                ..
            }) if !w.poll
        ) && self.lane_mode(s, t) != choices::Lane::Follows
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

    /// Whether thread `u`, from `pc` on, may reach an instruction of
    /// `table` (a [`Reach`] over barrier declarations) on barrier `b`.
    pub(crate) fn may_reach_barrier(&self, table: &Reach, u: usize, pc: usize, b: BarrierId) -> bool {
        let info = &self.p.threads[u];
        table
            .at(info.code.index(), pc)
            .ones()
            .any(|d| info.barriers[d] == Some(b))
    }

    /// Whether thread `u`, from `pc` on, may reach an instruction of
    /// `table` (a [`Reach`] over location declarations) on location `l`.
    pub(crate) fn may_reach_loc(&self, table: &Reach, u: usize, pc: usize, l: LocId) -> bool {
        let row = table.at(self.p.threads[u].code.index(), pc);
        let decls = &self.an.loc_decls[u];
        let start = decls.partition_point(|&(m, _)| m < l);
        decls[start..]
            .iter()
            .take_while(|&&(m, _)| m == l)
            .any(|&(_, d)| row.get(d as usize))
    }

    /// Whether a launch may still start threads: some named kernel's
    /// thread is not launched yet (a copy agent not started yet does not
    /// count: it starts only through an issue that names what it touches).
    /// The required-step walks and access fusion hold back then.
    pub(crate) fn launch_pending(&self, s: &State) -> bool {
        (s.threads.iter().enumerate())
            .any(|(u, th)| th.status == Status::NotLaunched && self.p.threads[u].kind != ThreadKind::Copy)
    }

    /// Whether some thread may still init barrier `b`: one not finished
    /// that can reach an init of it from its pc (a thread not launched yet
    /// from its start).
    pub(crate) fn init_pending(&self, s: &State, b: usize) -> bool {
        (0..s.threads.len()).any(|u| {
            s.threads[u].status != Status::Done
                && (self.an.reach_inits)
                    .at(self.p.threads[u].code.index(), s.threads[u].pc as usize)
                    .ones()
                    .any(|d| self.p.threads[u].barriers[d] == Some(BarrierId(b as u32)))
        })
    }

    /// Whether barrier `b`'s phases are kept sorted in state `s`: it is
    /// sortable, or it is sortable once no thread can init it any more and
    /// none can (the phases after an init of the count every phase needs
    /// are a lockstep barrier's; fuse.rs).
    pub(crate) fn sorted_now(&self, s: &State, b: usize) -> bool {
        self.an.sortable[b] || (self.an.sortable_after_init[b] && !self.init_pending(s, b))
    }

    /// Whether the arrives of barrier `b` fuse in state `s` (fuse.rs,
    /// "Arrive fusion"): statically, or, for a barrier a thread inits,
    /// once no thread can init it any more (from then on it is a lockstep
    /// barrier with sorted phases, as [`System::sorted_now`] argues; an
    /// init still to come would not commute with an arrive).
    pub(crate) fn arrives_fuse(&self, s: &State, b: usize) -> bool {
        self.an.fused_arrives[b] || (self.an.fused_arrives_after_init[b] && !self.init_pending(s, b))
    }
}
