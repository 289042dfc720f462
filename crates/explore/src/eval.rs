//! Expression evaluation. Arithmetic wraps; division or remainder by zero
//! gives 0 (documented in docs/semantics.md), so evaluation never panics.

use crate::state::State;
use bc_graph::{Builtin, CExpr, Program, ThreadInfo};
use bc_syntax::Op;

fn apply(op: Op, a: i64, b: i64) -> i64 {
    match op {
        Op::Add => a.wrapping_add(b),
        Op::Sub => a.wrapping_sub(b),
        Op::Mul => a.wrapping_mul(b),
        Op::Div => a.checked_div(b).unwrap_or(0),
        Op::Rem => a.checked_rem(b).unwrap_or(0),
        Op::Eq => (a == b) as i64,
        Op::Ne => (a != b) as i64,
        Op::Lt => (a < b) as i64,
        Op::Le => (a <= b) as i64,
        Op::Gt => (a > b) as i64,
        Op::Ge => (a >= b) as i64,
        Op::And => (a != 0 && b != 0) as i64,
        Op::Or => (a != 0 || b != 0) as i64,
        Op::Not => (b == 0) as i64,
    }
}

fn go(e: &CExpr, leaf: &dyn Fn(&CExpr) -> i64) -> i64 {
    match e {
        CExpr::Int(v) => *v,
        CExpr::Unary(Op::Not, x) => (go(x, leaf) == 0) as i64,
        CExpr::Unary(_, x) => go(x, leaf).wrapping_neg(),
        CExpr::Binary(op, a, b) => apply(*op, go(a, leaf), go(b, leaf)),
        other => leaf(other),
    }
}

/// Evaluates an expression in thread `t`'s context.
pub fn eval(p: &Program, s: &State, t: usize, e: &CExpr) -> i64 {
    let info: &ThreadInfo = &p.threads[t];
    go(e, &|leaf| match leaf {
        CExpr::Reg(r) => s.threads[t].regs[r.index()],
        CExpr::Builtin(b) => match b {
            Builtin::Tid => info.tid as i64,
            Builtin::Bid => info.block as i64,
            Builtin::Warp => info.warp as i64,
            Builtin::Lane => info.lane as i64,
            Builtin::Ntid => info.ntid as i64,
        },
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
