//! Thread classes: what a thread's code can observe of its own place.
//!
//! A device thread reads its place only through the builtins (`tid`,
//! `warp`, `lane`, `bid`, `ntid`). Every expression of its code is a
//! function of its *maximal builtin-only subexpressions* (the largest
//! subtrees whose leaves are builtins and constants, holding at least one
//! builtin) and of registers and memory. So a thread's [`builtin_signature`],
//! the values of those subexpressions for it in code order, is all its
//! code can tell of its place: two threads running one code with equal
//! signatures compute the same values from the same registers and memory,
//! whatever their `tid`. `if tid < 128` splits a block into two classes,
//! `if warp == 0` into the producer warp and the rest, `if tid == 0` into
//! thread 0 and the rest; `r = tid` (a stored place) gives every thread a
//! class of its own. The symmetry reduction uses this to merge threads
//! within a class instead of giving up on every thread whose code reads a
//! builtin (docs/explorer.md, "Symmetry").

use crate::program::{Builtin, CExpr, Program, ThreadInfo};
use crate::ThreadId;

/// The value of builtin `b` for a thread.
pub fn builtin_value(info: &ThreadInfo, b: Builtin) -> i64 {
    match b {
        Builtin::Tid => info.tid as i64,
        Builtin::Bid => info.block as i64,
        Builtin::Warp => info.warp as i64,
        Builtin::Lane => info.lane as i64,
        Builtin::Ntid => info.ntid as i64,
    }
}

/// The values of the maximal builtin-only subexpressions of `e` for the
/// thread `info`, appended to `out` in evaluation order.
fn observe(e: &CExpr, info: &ThreadInfo, out: &mut Vec<i64>) {
    if !e.reads_builtin() {
        return;
    }
    if !e.reads_state() {
        out.push(crate::program::eval_with(e, &|leaf| match leaf {
            CExpr::Builtin(b) => builtin_value(info, *b),
            _ => 0,
        }));
        return;
    }
    match e {
        CExpr::Unary(_, x) => observe(x, info, out),
        CExpr::Binary(_, a, b) => {
            observe(a, info, out);
            observe(b, info, out);
        }
        _ => {}
    }
}

/// What thread `t`'s code can observe of its place (module doc): the
/// values of the maximal builtin-only subexpressions of the instructions
/// it can execute ([`reachable_pcs`]), in code order, each instruction's
/// values after its pc. Empty when it reads no builtin.
///
/// Only the live instructions count: an instruction no run of `t`
/// reaches tells nothing of what `t` does. Two threads of one code with
/// equal signatures have equal live instructions: the first branch on
/// their place where they would part is live in both and observed, with
/// different values. The pcs keep the reading unambiguous (the number of
/// values an instruction gives follows from the code alone). A compiled
/// kernel's address trees compare the place at every access
/// (docs/ptx.md, "The lowering"): the live part of such a tree is one
/// path, where reading every instruction made the classes quadratic in
/// the launch.
pub fn builtin_signature(p: &Program, t: ThreadId) -> Vec<i64> {
    let info = p.thread(t);
    let live = reachable_pcs(p, t);
    let mut out = Vec::new();
    for (pc, ins) in p.code_of(t).instrs.iter().enumerate() {
        let exprs = ins.kind.exprs();
        if !live[pc] || !exprs.iter().any(|e| e.reads_builtin()) {
            continue;
        }
        out.push(pc as i64);
        for e in exprs {
            observe(e, info, &mut out);
        }
    }
    out
}

/// The pcs of thread `t`'s code it can ever execute: from pc 0 along the
/// control flow, where a branch on a condition of builtins and constants
/// alone (`if warp == 0`, `if tid < 128`) follows only the side the
/// thread's own place selects. Every other branch, and every jump, is
/// followed to all its targets, so the set over-approximates every run;
/// what it leaves out no run of `t` reaches. A warp-specialized body's
/// producer branch is then no instruction of a consumer thread.
pub fn reachable_pcs(p: &Program, t: ThreadId) -> Vec<bool> {
    reachable_in(p.thread(t), p.code_of(t))
}

/// [`reachable_pcs`] for a thread `info` running `code`, before the
/// program is assembled (lowering's own analyses use it, so that every
/// analysis sees the same instructions of a thread).
pub fn reachable_in(info: &ThreadInfo, code: &crate::program::Code) -> Vec<bool> {
    use crate::program::InstrKind;
    let mut seen = vec![false; code.instrs.len()];
    let mut todo = vec![0u32];
    while let Some(pc) = todo.pop() {
        let Some(slot) = seen.get_mut(pc as usize) else {
            continue;
        };
        if *slot {
            continue;
        }
        *slot = true;
        match &code.instrs[pc as usize].kind {
            InstrKind::Branch { cond, then, els } if !cond.reads_state() => {
                let v = crate::program::eval_with(cond, &|leaf| match leaf {
                    CExpr::Builtin(b) => builtin_value(info, *b),
                    _ => 0,
                });
                todo.push(if v != 0 { *then } else { *els });
            }
            _ => todo.extend(code.successors(pc)),
        }
    }
    seen
}

/// The instructions of thread `t`'s code it can ever execute
/// ([`reachable_pcs`]).
pub fn live_instrs(p: &Program, t: ThreadId) -> impl Iterator<Item = &crate::program::Instr> {
    let live = reachable_pcs(p, t);
    p.code_of(t)
        .instrs
        .iter()
        .enumerate()
        .filter(move |(pc, _)| live[*pc])
        .map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        let (lit, diags) = bc_syntax::parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = crate::lower::resolve_model(&lit, None).unwrap();
        crate::lower(&lit, text, model).unwrap()
    }

    /// How many distinct signatures the threads of `body` have, in a block
    /// of `threads` threads.
    fn classes(body: &str, threads: u32) -> usize {
        let p = program(&format!(
            "litmus \"c\"\nmodel cuda-sm80\nvar s scope=block\nkernel blocks=2 threads={threads} {{ {body} }}\n"
        ));
        let sigs: std::collections::BTreeSet<Vec<i64>> = (0..p.threads.len())
            .map(|t| builtin_signature(&p, ThreadId(t as u32)))
            .collect();
        sigs.len()
    }

    #[test]
    fn branches_on_the_place_split_threads_into_classes() {
        // No builtin: one class (blocks differ by place, not by signature).
        assert_eq!(classes("__syncthreads", 64), 1);
        assert_eq!(classes("if tid == 0 { write s }; __syncthreads; read s", 64), 2);
        assert_eq!(
            classes("if tid < 32 { bar.sync 1, 64 } else { bar.arrive 1, 64 }", 64),
            2
        );
        assert_eq!(classes("if warp == 0 { write s }", 96), 2);
        // Both tests in one code: their values combine.
        assert_eq!(classes("if tid < 32 { write s }; if tid == 0 { read s }", 64), 3);
        // `bid` separates the blocks.
        assert_eq!(classes("if bid == 0 { write s }", 4), 2);
        // A stored place tells every thread of a block apart.
        assert_eq!(classes("r = tid", 8), 8);
    }

    #[test]
    fn builtins_mixed_with_registers_observe_their_builtin_parts() {
        // `tid < 2` is the builtin-only part of `r + (tid < 2)` (`r` read
        // from memory: a register of the place would be read as its value,
        // `place_regs`).
        assert_eq!(classes("r = load s; if r + (tid < 2) == 2 { write s }", 8), 2);
        // `tid` alone beside a register: every thread apart.
        assert_eq!(classes("r = load s; if r + tid == 2 { write s }", 8), 8);
        // A register of the place is its expression: `r = 1` adds nothing.
        assert_eq!(classes("r = 1; if r + (tid < 2) == 2 { write s }", 8), 2);
    }
}
