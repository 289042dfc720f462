//! Registers that hold the thread's place: `w = tid / 32` at the start of a
//! body, then `if w == 0 { ... }`. Such a register is written once, from
//! builtins and constants alone, before any branch; every later read of it
//! is the same function of the thread's place. Reading the expression in
//! place of the register makes the branches on it conditions of builtins,
//! which every static analysis resolves per thread ([`crate::classes`]:
//! reachable pcs, thread classes; the explorer's lockstep and symmetry),
//! as it already does for `if tid < 32`. The assignment stays (the register
//! keeps its value for assertions and witnesses).
//!
//! Sound because of where the write is: no instruction before it changes
//! control (no branch, jump or exit), so every run reaches a later pc only
//! through it, and nothing else writes the register, so every later read
//! sees the value it wrote (a jump back into the prefix writes the same
//! value again).

use crate::program::*;
use crate::RegId;

/// The registers each instruction writes (an exhaustive match: a new
/// instruction kind must say what it writes).
fn written(p: &Program, kind: &InstrKind, out: &mut [u32]) {
    let mut one = |r: RegId| {
        if let Some(n) = out.get_mut(r.index()) {
            *n = n.saturating_add(1);
        }
    };
    match kind {
        InstrKind::Barrier { result, .. } => match result {
            Some(
                BarrierResult::Token(r) | BarrierResult::IsFirst(r) | BarrierResult::Reduce(r) | BarrierResult::Poll(r),
            ) => one(*r),
            None => {}
        },
        InstrKind::Load { dest, .. }
        | InstrKind::Rmw { dest, .. }
        | InstrKind::Cas { dest, .. }
        | InstrKind::StreamQuery { dest, .. } => {
            if let Some(r) = dest {
                one(*r)
            }
        }
        InstrKind::Assign { dest, .. } => one(*dest),
        // An issue marks its agents' ages, registers `age .. age + agents`.
        InstrKind::CopyIssue { site, age, .. } => {
            if let Some(r) = age {
                for k in 0..p.copy_sites.get(*site as usize).map_or(0, |s| s.agents) {
                    one(RegId(r.0 + k));
                }
            }
        }
        InstrKind::Store { .. }
        | InstrKind::Await(_)
        | InstrKind::Read { .. }
        | InstrKind::Write { .. }
        | InstrKind::Launch { .. }
        | InstrKind::DeviceSync
        | InstrKind::Branch { .. }
        | InstrKind::Jump(_)
        | InstrKind::Exit
        | InstrKind::AsyncGroup { .. }
        | InstrKind::Fence(_)
        | InstrKind::CoalescedSync => {}
    }
}

/// `e` with every read of a register of `place` replaced by its value.
fn substitute(e: &mut CExpr, place: &[Option<CExpr>]) {
    match e {
        CExpr::Reg(r) => {
            if let Some(Some(v)) = place.get(r.index()) {
                *e = v.clone();
            }
        }
        CExpr::Unary(_, x) => substitute(x, place),
        CExpr::Binary(_, a, b) => {
            substitute(a, place);
            substitute(b, place);
        }
        CExpr::Int(_) | CExpr::Builtin(_) | CExpr::Loc(_) | CExpr::ThreadReg(..) | CExpr::LocInst(_) => {}
    }
}

/// Reads the place registers of every user code (not the copy agents'
/// codes, whose registers the explorer sets) as their values.
pub(crate) fn propagate_place_registers(mut p: Program) -> Program {
    let users = if p.copy_sites.is_empty() {
        p.codes.len()
    } else {
        p.copy_first_code as usize
    };
    for c in 0..users {
        let mut writes = vec![0u32; p.codes[c].regs.len()];
        for ins in &p.codes[c].instrs {
            written(&p, &ins.kind, &mut writes);
        }
        let code = &mut p.codes[c];
        // Each register's value, once its write is seen in the prefix;
        // `after[pc]`: the registers substituted from pc on.
        let mut place: Vec<Option<CExpr>> = vec![None; code.regs.len()];
        let mut start: Vec<Option<usize>> = vec![None; code.regs.len()];
        for (pc, ins) in code.instrs.iter().enumerate() {
            match &ins.kind {
                InstrKind::Branch { .. } | InstrKind::Jump(_) | InstrKind::Exit => break,
                InstrKind::Assign { dest, value } if writes[dest.index()] == 1 => {
                    // Through the place registers found so far (`r1 = tid;
                    // r2 = r1 >> 5`, the shape of compiled code).
                    let mut v = value.clone();
                    substitute(&mut v, &place);
                    if !v.reads_state() {
                        place[dest.index()] = Some(v);
                        start[dest.index()] = Some(pc + 1);
                    }
                }
                _ => {}
            }
        }
        if place.iter().all(Option::is_none) {
            continue;
        }
        for (pc, ins) in code.instrs.iter_mut().enumerate() {
            // Only the reads after the write (earlier ones see 0).
            let here: Vec<Option<CExpr>> = place
                .iter()
                .zip(&start)
                .map(|(v, s)| v.clone().filter(|_| s.is_some_and(|s| pc >= s)))
                .collect();
            if here.iter().all(Option::is_none) {
                continue;
            }
            for e in ins.kind.exprs_mut() {
                substitute(e, &here);
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    fn program(body: &str) -> crate::Program {
        let text = format!("litmus \"p\"\nmodel cuda-sm90\nvar x\nkernel blocks=1 threads=64 {{\n{body}\n}}\n");
        let (lit, diags) = bc_syntax::parse(&text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = crate::lower::resolve_model(&lit, None).unwrap();
        crate::lower(&lit, &text, model).unwrap()
    }

    fn branch_reads_state(p: &crate::Program) -> Vec<bool> {
        (p.codes[0].instrs.iter())
            .filter_map(|i| match &i.kind {
                crate::InstrKind::Branch { cond, .. } => Some(cond.reads_state()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_register_written_once_from_the_place_is_read_as_its_value() {
        let p = program("w = tid / 32\nif w == 0 { bar.sync 1, 32 } else { bar.sync 2, 32 }");
        assert_eq!(branch_reads_state(&p), [false]);
    }

    #[test]
    fn a_register_written_from_a_place_register_is_one_too() {
        let p = program("r1 = tid\nr2 = r1 / 32\nif r2 == 0 { bar.sync 1, 32 } else { bar.sync 2, 32 }");
        assert_eq!(branch_reads_state(&p), [false]);
    }

    #[test]
    fn a_register_written_twice_or_after_a_branch_or_from_state_stays() {
        // Written twice.
        let p = program("w = tid / 32\nw = w + 1\nif w == 1 { bar.sync 1, 32 }");
        assert_eq!(branch_reads_state(&p), [true]);
        // Written after a branch: a run may read it before (as 0).
        let p = program("if tid == 0 { __syncthreads }\nw = tid / 32\nif w == 0 { bar.sync 1, 32 }");
        assert_eq!(branch_reads_state(&p), [false, true]);
        // Written from a register of the execution.
        let p = program("r = load x\nw = r + tid\nif w == 1 { bar.sync 1, 64 }");
        assert_eq!(branch_reads_state(&p), [true]);
        // Written by a load.
        let p = program("w = load x\nif w == 1 { bar.sync 1, 64 }");
        assert_eq!(branch_reads_state(&p), [true]);
    }
}
