//! The observable final values of a test: what an outcome lists (`check
//! --outcomes`) and what a hardware harness copies out after a run.
//!
//! An outcome names the final value of every user register of every thread
//! (`b0t1:r`, `T0:r`, as in assertions) and of every location instance that
//! an atomic operation touches (`x`, `s@b1`). Left out, because their final
//! value is not a number a program could compare across machines:
//! - hidden registers of the lowering (a `repeat` counter, named with `@`);
//! - locations only touched by plain `read`/`write` (the model gives plain
//!   accesses no values: they exist for race checking);
//! - phase tokens (`t = arrive B`), and every register or location a token
//!   value flows into: the model numbers phases, a GPU returns an opaque
//!   64-bit state word, so the two never compare.

use crate::ids::{LocId, RegId, ThreadId};
use crate::program::{BarrierResult, CExpr, InstrKind, Program};

/// One observable final value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Observable {
    /// Register `RegId` of thread `ThreadId`.
    Reg(ThreadId, RegId),
    /// A location instance.
    Loc(LocId),
}

impl Program {
    /// The observable final values, in a fixed order (threads in program
    /// order and their registers in order of first use, then locations in
    /// declaration order), each with its name.
    pub fn observables(&self) -> Vec<(Observable, String)> {
        let taint = TokenTaint::of(self);
        let mut out = Vec::new();
        for (t, th) in self.threads.iter().enumerate() {
            let code = &self.codes[th.code.index()];
            for (r, name) in code.regs.iter().enumerate() {
                if name.contains('@') || taint.regs[th.code.index()][r] {
                    continue;
                }
                out.push((
                    Observable::Reg(ThreadId(t as u32), RegId(r as u32)),
                    format!("{}:{name}", th.name),
                ));
            }
        }
        for (l, loc) in self.locs.iter().enumerate() {
            if taint.atomic_locs[l] && !taint.locs[l] {
                out.push((Observable::Loc(LocId(l as u32)), loc.name.clone()));
            }
        }
        out
    }
}

/// Which registers (per code) and locations can hold a phase token, and
/// which locations atomics touch: a flow-insensitive fixpoint over every
/// thread's code.
struct TokenTaint {
    regs: Vec<Vec<bool>>,
    locs: Vec<bool>,
    atomic_locs: Vec<bool>,
}

impl TokenTaint {
    fn of(p: &Program) -> TokenTaint {
        let mut regs: Vec<Vec<bool>> = p.codes.iter().map(|c| vec![false; c.regs.len()]).collect();
        let mut locs = vec![false; p.locs.len()];
        let mut atomic_locs = vec![false; p.locs.len()];
        let mut changed = true;
        // Sets a flag, noting that the fixpoint moved.
        fn set(flag: &mut bool, v: bool, changed: &mut bool) {
            if v && !*flag {
                *flag = true;
                *changed = true;
            }
        }
        while changed {
            changed = false;
            for th in &p.threads {
                let c = th.code.index();
                let loc = |d: u32| th.locs.get(d as usize).copied().flatten();
                for i in &p.codes[c].instrs {
                    let reads = |e: &CExpr, regs: &[Vec<bool>], locs: &[bool]| expr_reads(e, &regs[c], locs, &loc);
                    // (value written to the location is a token, the location, the register given its old value)
                    let (value_tainted, decl, dest) = match &i.kind {
                        InstrKind::Barrier {
                            result: Some(BarrierResult::Token(r)),
                            ..
                        } => {
                            set(&mut regs[c][r.index()], true, &mut changed);
                            continue;
                        }
                        InstrKind::Assign { dest, value } => {
                            let v = reads(value, &regs, &locs);
                            set(&mut regs[c][dest.index()], v, &mut changed);
                            continue;
                        }
                        InstrKind::Await(cond) => {
                            mark_await_locs(cond, &mut atomic_locs, &loc);
                            continue;
                        }
                        InstrKind::Load { decl, dest } => (false, *decl, *dest),
                        InstrKind::Store { decl, value } => (reads(value, &regs, &locs), *decl, None),
                        InstrKind::Rmw { decl, value, dest, .. } => (reads(value, &regs, &locs), *decl, *dest),
                        InstrKind::Cas {
                            decl,
                            expected,
                            new,
                            dest,
                        } => (reads(new, &regs, &locs) || reads(expected, &regs, &locs), *decl, *dest),
                        _ => continue,
                    };
                    let Some(l) = loc(decl) else { continue };
                    atomic_locs[l.index()] = true;
                    set(&mut locs[l.index()], value_tainted, &mut changed);
                    if let Some(r) = dest {
                        let old = locs[l.index()];
                        set(&mut regs[c][r.index()], old, &mut changed);
                    }
                }
            }
        }
        TokenTaint {
            regs,
            locs,
            atomic_locs,
        }
    }
}

/// Whether `e` reads a tainted register or location.
fn expr_reads(e: &CExpr, regs: &[bool], locs: &[bool], loc: &dyn Fn(u32) -> Option<LocId>) -> bool {
    match e {
        CExpr::Reg(r) => regs[r.index()],
        CExpr::Loc(d) => loc(*d).is_some_and(|l| locs[l.index()]),
        CExpr::LocInst(l) => locs[l.index()],
        CExpr::Int(_) | CExpr::Builtin(_) | CExpr::ThreadReg(..) => false,
        CExpr::Unary(_, x) => expr_reads(x, regs, locs, loc),
        CExpr::Binary(_, a, b) => expr_reads(a, regs, locs, loc) || expr_reads(b, regs, locs, loc),
    }
}

/// An `await` reads its locations atomically.
fn mark_await_locs(e: &CExpr, atomic: &mut [bool], loc: &dyn Fn(u32) -> Option<LocId>) {
    match e {
        CExpr::Loc(d) => {
            if let Some(l) = loc(*d) {
                atomic[l.index()] = true;
            }
        }
        CExpr::Unary(_, x) => mark_await_locs(x, atomic, loc),
        CExpr::Binary(_, a, b) => {
            mark_await_locs(a, atomic, loc);
            mark_await_locs(b, atomic, loc);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    fn names(text: &str) -> Vec<String> {
        let (lit, diags) = bc_syntax::parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = crate::lower::resolve_model(&lit, None).expect("model");
        let p = crate::lower::lower(&lit, text, model).expect("lowers");
        p.observables().into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn registers_and_atomic_locations_are_observable() {
        let t = "litmus \"t\"\nmodel cuda-sm80\nvar x\nvar s scope=block\n\
                 kernel blocks=1 threads=2 { repeat 2 { r = fetch_add x, 1 }; write s; q = tid }\n";
        assert_eq!(names(t), ["b0t0:r", "b0t0:q", "b0t1:r", "b0t1:q", "x"]);
    }

    #[test]
    fn tokens_and_what_they_flow_into_are_not() {
        let t = "litmus \"t\"\nmodel cuda-sm80\nbarrier B = 2\nvar x\nvar y\n\
                 kernel blocks=1 threads=2 { t = arrive B; u = t + 1; store x, u; v = load x; wait B, t; store y, 1 }\n";
        assert_eq!(names(t), ["y"]);
    }
}
