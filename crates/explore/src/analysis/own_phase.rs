//! Barriers whose every wait is the wait half of its own thread's
//! thread-counted arrive (`bar.sync ID[, N]`, `__syncthreads`, `bar.red`:
//! "arrive ... match; wait" in the models). Such a wait takes only the
//! phase holding its thread's latest arrive (`System::participates_in`: the
//! hardware barrier resets at its count and a thread waits for the phase
//! it arrived in), and a thread's next wait comes after its next arrive.
//! So a completed phase can be taken only by a member whose latest arrive
//! it holds, and `System::collect` retires it once none is left: before,
//! every live thread that had not waited on a phase kept it, a thread not
//! yet arrived included, and compaction, which waits for no completed
//! phase to be left, kept every phase of a barrier whose arrivals of one
//! warp complete many phases for another (docs/explorer.md, "History
//! compaction", "Own-phase waits").

use bc_graph::*;

/// Per barrier instance: every operation on it, in every thread's live
/// code, through its declaration, is a thread-counted arrive or a plain
/// wait right after one on the same declaration that no jump or branch
/// enters (module text).
pub(crate) fn own_phase_waits(p: &Program) -> Vec<bool> {
    let nb = p.barriers.len();
    let mut ok = vec![true; nb];
    for (i, t) in p.threads.iter().enumerate() {
        let code = &p.codes[t.code.index()];
        let live = bc_graph::classes::reachable_pcs(p, ThreadId(i as u32));
        let mut entered = vec![false; code.instrs.len() + 1];
        for ins in &code.instrs {
            match ins.kind {
                InstrKind::Jump(x) => entered[x as usize] = true,
                InstrKind::Branch { then, els, .. } => {
                    entered[then as usize] = true;
                    entered[els as usize] = true;
                }
                _ => {}
            }
        }
        for (pc, ins) in code.instrs.iter().enumerate() {
            let InstrKind::Barrier { op, sel, .. } = &ins.kind else {
                continue;
            };
            if !live[pc] {
                continue;
            }
            let fine = matches!(sel, BarrierSel::Decl(_))
                && match op {
                    BarrierOp::Arrive(a) => a.count_match,
                    BarrierOp::Wait(w) => {
                        w.token.is_none()
                            && w.parity.is_none()
                            && !w.poll
                            && pc > 0
                            && !entered[pc]
                            && matches!(
                                &code.instrs[pc - 1].kind,
                                InstrKind::Barrier { op: BarrierOp::Arrive(a), sel: before, .. }
                                    if a.count_match && before == sel
                            )
                    }
                    _ => false,
                };
            if !fine {
                for b in sel.decls(&p.groups).into_iter().filter_map(|d| t.barriers[d as usize]) {
                    ok[b.index()] = false;
                }
            }
        }
    }
    ok
}
