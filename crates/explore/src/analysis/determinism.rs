//! Deterministic programs: where one execution decides every other
//! (`search/det.rs`, docs/explorer.md, "Reductions", item 10). A program
//! is deterministic here when each thread's sequence of operations (its
//! path, the barriers it names with their counts, the locations it
//! accesses) is a function of its place alone, whatever the interleaving:
//!
//! - every thread is a device thread (no host, no copy agent);
//! - no value that depends on the interleaving (a loaded value, an
//!   atomic's or a poll's result, a barrier's result, a location read in
//!   an expression) reaches a branch, a barrier operand or a stream
//!   (registers are followed through assignments to a fixed point);
//! - no `await`, no launch, no async-group, no copy, no `choose`-like step;
//! - the only barrier operations are thread-counted arrives and the plain
//!   waits right after them (`own_phase.rs`: the hardware barriers of
//!   CUDA, `bar.sync`/`bar.arrive`/`__syncthreads`, whose wait takes the
//!   phase of its own arrive), on declared barriers, with no warp value
//!   (shuffles), no transaction count and no `__syncwarp` mask;
//! - the program has no assertion (their values depend on the
//!   interleaving) and every execution is finite.
//!
//! What is left to the interleaving is then which phase each arrival of a
//! barrier falls in; `reductions/det.rs` decides on one execution whether
//! that too is fixed.

use bc_graph::*;

/// Whether `p` is deterministic in the sense of the module text, given
/// the barriers whose waits take their own arrive's phase and whether
/// every execution is finite.
pub(crate) fn deterministic(p: &Program, own_phase_waits: &[bool], finite: bool) -> bool {
    if !finite || !p.asserts.is_empty() {
        return false;
    }
    if p.threads.iter().any(|t| t.kind != ThreadKind::Device) {
        return false;
    }
    if p.barriers.iter().any(|b| b.syncwarp.is_some()) {
        return false;
    }
    let mut own = true;
    super::ops::for_each_barrier_op(p, |_, _, _, b| own &= own_phase_waits[b.index()]);
    if !own {
        return false;
    }
    p.codes.iter().all(code_deterministic)
}

/// The per-code half of [`deterministic`]: the instructions it allows,
/// and no interleaving-dependent value reaching control.
fn code_deterministic(code: &Code) -> bool {
    let mut data = vec![false; code.regs.len()];
    // Sources: results the interleaving decides.
    let mark = |r: &Option<RegId>, data: &mut Vec<bool>| {
        if let Some(r) = r {
            if let Some(x) = data.get_mut(r.index()) {
                *x = true;
            }
        }
    };
    for ins in &code.instrs {
        match &ins.kind {
            InstrKind::Load { dest, .. }
            | InstrKind::Rmw { dest, .. }
            | InstrKind::Cas { dest, .. }
            | InstrKind::StreamQuery { dest, .. } => mark(dest, &mut data),
            InstrKind::Barrier { result: Some(res), .. } => {
                let r = match res {
                    BarrierResult::Token(r)
                    | BarrierResult::IsFirst(r)
                    | BarrierResult::Reduce(r)
                    | BarrierResult::Poll(r) => *r,
                };
                mark(&Some(r), &mut data);
            }
            _ => {}
        }
    }
    // Assignments carry it on, to a fixed point.
    loop {
        let mut changed = false;
        for ins in &code.instrs {
            if let InstrKind::Assign { dest, value } = &ins.kind {
                if !data[dest.index()] && reads(value, &data) {
                    data[dest.index()] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    code.instrs.iter().all(|ins| match &ins.kind {
        InstrKind::Branch { cond, .. } => !reads(cond, &data),
        InstrKind::Barrier { op, sel, .. } => {
            let allowed = match op {
                BarrierOp::Arrive(a) => a.value.is_none() && a.tx.is_none() && !a.collective && !a.object,
                BarrierOp::Wait(w) => {
                    w.token.is_none() && w.parity.is_none() && !w.poll && w.lane.is_none() && w.width.is_none()
                }
                _ => false,
            };
            allowed && matches!(sel, BarrierSel::Decl(_)) && ins.kind.exprs().iter().all(|e| !reads(e, &data))
        }
        InstrKind::Store { .. }
        | InstrKind::Load { .. }
        | InstrKind::Rmw { .. }
        | InstrKind::Cas { .. }
        | InstrKind::Read { .. }
        | InstrKind::Write { .. }
        | InstrKind::Assign { .. }
        | InstrKind::Jump(_)
        | InstrKind::Exit
        | InstrKind::Fence(_)
        | InstrKind::CoalescedSync => true,
        InstrKind::Await(_)
        | InstrKind::Launch { .. }
        | InstrKind::DeviceSync
        | InstrKind::StreamQuery { .. }
        | InstrKind::CopyIssue { .. }
        | InstrKind::AsyncGroup { .. } => false,
    })
}

/// Whether `e` reads a register marked in `data`, or memory.
fn reads(e: &CExpr, data: &[bool]) -> bool {
    match e {
        CExpr::Reg(r) => data.get(r.index()).copied().unwrap_or(true),
        CExpr::Loc(_) | CExpr::ThreadReg(..) | CExpr::LocInst(_) => true,
        CExpr::Int(_) | CExpr::Builtin(_) => false,
        CExpr::Unary(_, x) => reads(x, data),
        CExpr::Binary(_, a, b) => reads(a, data) || reads(b, data),
    }
}
