//! What each thread may still reach from each pc: per code and pc, the
//! barrier and location declarations an instruction reachable from there
//! names ([`Reach`]); history compaction forgets only what no thread can
//! still reach, and access fusion reads the writes.

use bc_graph::*;

/// Per code and pc, per declaration: whether some instruction reachable
/// from there names it ([`reachable_decls`]).
pub(crate) type Reach = Vec<Vec<Vec<bool>>>;

/// Per code and pc, the declarations (of `n`) that some instruction
/// reachable from there names, as `own` lists them per instruction (a
/// backward fixed point over the control-flow graph).
pub(crate) fn reachable_decls(p: &Program, n: usize, own: impl Fn(&InstrKind, &mut Vec<bool>)) -> Reach {
    // A copy's issue names what its agents' code names: the agents'
    // start barriers (the issuer holds their instances), the copy's
    // barrier and its locations.
    let own = |kind: &InstrKind, acc: &mut Vec<bool>| {
        own(kind, acc);
        if let InstrKind::CopyIssue { site, .. } = kind {
            for k in 0..p.copy_site_agents(*site) {
                for i in &p.codes[p.copy_code(*site, k).index()].instrs {
                    own(&i.kind, acc);
                }
            }
        }
    };
    p.codes
        .iter()
        .map(|code| {
            let len = code.instrs.len();
            let mut out = vec![vec![false; n]; len + 1];
            let mut changed = true;
            while changed {
                changed = false;
                for pc in (0..len).rev() {
                    let mut acc = out[pc].clone();
                    own(&code.instrs[pc].kind, &mut acc);
                    for succ in code.successors(pc as u32) {
                        for (x, y) in acc.iter_mut().zip(&out[succ as usize]) {
                            *x |= *y;
                        }
                    }
                    if acc != out[pc] {
                        out[pc] = acc;
                        changed = true;
                    }
                }
            }
            out
        })
        .collect()
}

/// The barrier declarations a barrier instruction reachable from each pc
/// operates on (history compaction).
pub(crate) fn reachable_barriers(p: &Program) -> Reach {
    let nb = p.threads.first().map_or(0, |t| t.barriers.len());
    reachable_decls(p, nb, |kind, acc| {
        if let InstrKind::Barrier { sel, .. } = kind {
            for d in sel.decls(&p.groups) {
                acc[d as usize] = true;
            }
        }
    })
}

/// The barrier declarations a parity wait reachable from each pc waits on
/// (a barrier's last completed phase stays while one may still take it:
/// `System::collect`).
pub(crate) fn reachable_parity_waits(p: &Program) -> Reach {
    let nb = p.threads.first().map_or(0, |t| t.barriers.len());
    reachable_decls(p, nb, |kind, acc| {
        if let InstrKind::Barrier {
            op: BarrierOp::Wait(w),
            sel,
            ..
        } = kind
        {
            if w.parity.is_some() {
                for d in sel.decls(&p.groups) {
                    acc[d as usize] = true;
                }
            }
        }
    })
}

/// The location declarations a plain access (a `write` only, with
/// `writes_only`) reachable from each pc operates on (compaction forgets
/// no other location event; access fusion).
pub(crate) fn reachable_accesses(p: &Program, writes_only: bool) -> Reach {
    let nl = p.threads.first().map_or(0, |t| t.locs.len());
    reachable_decls(p, nl, |kind, acc| match kind {
        InstrKind::Write { decl } => acc[*decl as usize] = true,
        InstrKind::Read { decl } if !writes_only => acc[*decl as usize] = true,
        _ => {}
    })
}

/// The location declarations thread `t` can ever access with a plain
/// access (ascending): those its live instructions name
/// ([`bc_graph::classes::live_instrs`]: a branch on its place alone
/// follows its own side), and those of the agents of the copies it can
/// issue. The [`Reach`] tables are per code, so in a kernel whose address
/// trees compare the thread's place every thread's row names every
/// thread's locations; `System::may_reach_loc` (semantics) asks
/// both (each is necessary for a thread to reach an access).
pub(crate) fn live_loc_decls(p: &Program, t: ThreadId) -> Vec<u32> {
    let mut out = Vec::new();
    let name = |kind: &InstrKind, out: &mut Vec<u32>| {
        if let InstrKind::Write { decl } | InstrKind::Read { decl } = kind {
            out.push(*decl);
        }
    };
    for i in bc_graph::classes::live_instrs(p, t) {
        name(&i.kind, &mut out);
        if let InstrKind::CopyIssue { site, .. } = i.kind {
            for k in 0..p.copy_site_agents(site) {
                for a in &p.codes[p.copy_code(site, k).index()].instrs {
                    name(&a.kind, &mut out);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The row of `table` for code `code` at `pc` (the end row past the last
/// instruction).
pub(crate) fn reach_at(table: &Reach, code: usize, pc: usize) -> &[bool] {
    let rows = &table[code];
    &rows[pc.min(rows.len() - 1)]
}
