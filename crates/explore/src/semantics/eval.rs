//! Expression evaluation. Arithmetic wraps; division or remainder by zero
//! gives 0 (documented in docs/semantics.md), so evaluation never panics.

use crate::state::State;
use bc_graph::{CExpr, Program, ThreadInfo};

use bc_graph::eval_with as go;

/// Evaluates an expression in thread `t`'s context.
pub fn eval(p: &Program, s: &State, t: usize, e: &CExpr) -> i64 {
    let info: &ThreadInfo = &p.threads[t];
    go(e, &|leaf| match leaf {
        CExpr::Reg(r) => s.threads[t].regs[r.index()],
        CExpr::Builtin(b) => bc_graph::classes::builtin_value(info, *b),
        // Lowering rejects a location a thread holds no instance of.
        CExpr::Loc(d) => info.locs[*d as usize].map_or(0, |l| s.mem[l.index()]),
        _ => 0,
    })
}

/// Evaluates an assertion over final values.
pub fn eval_final(_p: &Program, s: &State, e: &CExpr) -> i64 {
    go(e, &|leaf| match leaf {
        CExpr::ThreadReg(t, r) => s.threads[t.index()].regs[r.index()],
        CExpr::LocInst(l) => s.mem[l.index()],
        _ => 0,
    })
}

/// The final values an assertion reads, e.g. `T0:r = 1, x = 0`.
pub fn describe_final(p: &Program, s: &State, e: &CExpr) -> String {
    let mut out = Vec::new();
    fn walk(p: &Program, s: &State, e: &CExpr, out: &mut Vec<String>) {
        match e {
            CExpr::ThreadReg(t, r) => {
                let th = &p.threads[t.index()];
                let name = &p.codes[th.code.index()].regs[r.index()];
                out.push(format!(
                    "{}:{} = {}",
                    th.name,
                    name,
                    s.threads[t.index()].regs[r.index()]
                ));
            }
            CExpr::LocInst(l) => out.push(format!("{} = {}", p.locs[l.index()].name, s.mem[l.index()])),
            CExpr::Unary(_, x) => walk(p, s, x, out),
            CExpr::Binary(_, a, b) => {
                walk(p, s, a, out);
                walk(p, s, b, out);
            }
            _ => {}
        }
    }
    walk(p, s, e, &mut out);
    out.dedup();
    out.join(", ")
}
