//! What each thread may still reach from each pc: per code and pc, the
//! barrier and location declarations an instruction reachable from there
//! names ([`Reach`]); history compaction forgets only what no thread can
//! still reach, and access fusion reads the writes.

use bc_graph::bits::Bits;
use bc_graph::*;

/// Per code and pc, per declaration: whether some instruction reachable
/// from there names it ([`reachable_decls`]). Every pc of one strongly
/// connected part of a code's control flow (a loop body) reaches the same
/// declarations, so the table keeps one row per such part, and a part
/// that names nothing itself and has one successor shares its row: a
/// compiled kernel whose accesses are trees of one leaf per address
/// (docs/ptx.md, "The lowering") has tens of thousands of instructions
/// and declarations, and a dense row per pc (session 33's table) took
/// gigabytes and most of the analyses' time.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reach {
    codes: Vec<CodeReach>,
}

#[derive(Clone, Debug, Default)]
struct CodeReach {
    /// The row of each pc, and of the end (past the last instruction).
    row_of_pc: Vec<u32>,
    rows: Vec<Bits>,
}

/// One row of a [`Reach`]: the declarations reachable from one pc.
#[derive(Clone, Copy)]
pub(crate) struct Row<'a>(&'a Bits);

impl Row<'_> {
    /// Whether declaration `d` is reachable.
    pub(crate) fn get(&self, d: usize) -> bool {
        self.0.get(d)
    }
    /// The reachable declarations, ascending.
    pub(crate) fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.ones()
    }
}

impl Reach {
    /// The row of code `code` at `pc` (the end row past the last
    /// instruction).
    pub(crate) fn at(&self, code: usize, pc: usize) -> Row<'_> {
        let c = &self.codes[code];
        Row(&c.rows[c.row_of_pc[pc.min(c.row_of_pc.len() - 1)] as usize])
    }
}

/// Per code and pc, the declarations (of `n`) that some instruction
/// reachable from there names, as `own` lists them per instruction: over
/// the strongly connected parts of the control-flow graph (Tarjan's
/// algorithm, iteratively: a part comes out after every part it reaches),
/// each part's row the union of what its instructions name and the rows of
/// the parts it jumps to.
pub(crate) fn reachable_decls(p: &Program, n: usize, own: impl Fn(&InstrKind, &mut dyn FnMut(u32))) -> Reach {
    let own = with_agents(p, own);
    Reach {
        codes: p.codes.iter().map(|code| code_reach(code, n, &own)).collect(),
    }
}

/// What an instruction names as `own` says, and for a copy's issue also
/// what its agents' code names: the agents' start barriers (the issuer
/// holds their instances), the copy's barrier and its locations.
fn with_agents<'a>(
    p: &'a Program,
    own: impl Fn(&InstrKind, &mut dyn FnMut(u32)) + 'a,
) -> impl Fn(&InstrKind, &mut dyn FnMut(u32)) + 'a {
    move |kind: &InstrKind, acc: &mut dyn FnMut(u32)| {
        own(kind, acc);
        if let InstrKind::CopyIssue { site, .. } = kind {
            for k in 0..p.copy_site_agents(*site) {
                for i in &p.codes[p.copy_code(*site, k).index()].instrs {
                    own(&i.kind, acc);
                }
            }
        }
    }
}

/// What one instruction names, given to a callback (`reachable_decls`).
type Names<'a> = dyn Fn(&InstrKind, &mut dyn FnMut(u32)) + 'a;

fn code_reach(code: &Code, n: usize, own: &Names<'_>) -> CodeReach {
    let len = code.instrs.len();
    // Nodes 0..len are the instructions, `len` the end.
    let succ: Vec<Vec<u32>> = (0..=len).map(|pc| code.successors(pc as u32)).collect();
    const NONE: u32 = u32::MAX;
    let mut index = vec![NONE; len + 1];
    let mut low = vec![0u32; len + 1];
    let mut on_stack = vec![false; len + 1];
    let mut stack: Vec<u32> = Vec::new();
    let mut part_of = vec![NONE; len + 1];
    let mut rows: Vec<Bits> = Vec::new();
    let mut row_of_part: Vec<u32> = Vec::new();
    let mut next = 0u32;
    // The depth-first walk: (node, how many successors were taken).
    let mut walk: Vec<(u32, usize)> = Vec::new();
    for root in 0..=len as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        walk.push((root, 0));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&(v, k)) = walk.last() {
            let vs = v as usize;
            if let Some(&w) = succ[vs].get(k) {
                if let Some(top) = walk.last_mut() {
                    top.1 += 1;
                }
                let ws = w as usize;
                if index[ws] == NONE {
                    index[ws] = next;
                    low[ws] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[ws] = true;
                    walk.push((w, 0));
                } else if on_stack[ws] {
                    low[vs] = low[vs].min(index[ws]);
                }
                continue;
            }
            walk.pop();
            if let Some(&(u, _)) = walk.last() {
                low[u as usize] = low[u as usize].min(low[vs]);
            }
            if low[vs] != index[vs] {
                continue;
            }
            // `v` roots a part: its members are on the stack above it.
            let part = row_of_part.len() as u32;
            let mut members = Vec::new();
            loop {
                let w = stack.pop().expect("the root is on the stack");
                on_stack[w as usize] = false;
                part_of[w as usize] = part;
                members.push(w);
                if w == v {
                    break;
                }
            }
            let mut names = Vec::new();
            for &m in &members {
                if let Some(i) = code.instrs.get(m as usize) {
                    own(&i.kind, &mut |d| names.push(d));
                }
            }
            let mut below: Vec<u32> = (members.iter())
                .flat_map(|&m| succ[m as usize].iter().map(|&w| part_of[w as usize]))
                .filter(|&q| q != part)
                .map(|q| row_of_part[q as usize])
                .collect();
            below.sort_unstable();
            below.dedup();
            let row = match (names.is_empty(), below.as_slice()) {
                (true, &[r]) => r,
                _ => {
                    let mut bits = Bits::new(n);
                    for d in names {
                        bits.set(d as usize);
                    }
                    for &r in &below {
                        bits.union_with(&rows[r as usize]);
                    }
                    rows.push(bits);
                    rows.len() as u32 - 1
                }
            };
            row_of_part.push(row);
        }
    }
    CodeReach {
        row_of_pc: part_of.iter().map(|&q| row_of_part[q as usize]).collect(),
        rows,
    }
}

/// The barrier declarations a barrier instruction reachable from each pc
/// operates on (history compaction).
pub(crate) fn reachable_barriers(p: &Program) -> Reach {
    let nb = p.threads.first().map_or(0, |t| t.barriers.len());
    reachable_decls(p, nb, |kind, acc| {
        if let InstrKind::Barrier { sel, .. } = kind {
            for d in sel.decls(&p.groups) {
                acc(d);
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
                    acc(d);
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
        InstrKind::Write { decl } => acc(*decl),
        InstrKind::Read { decl } if !writes_only => acc(*decl),
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

/// The table [`reachable_decls`] computes, by the plain backward fixed
/// point over every pc (the reference the tests hold it against).
#[cfg(test)]
pub(crate) fn reachable_decls_by_fixed_point(
    p: &Program,
    n: usize,
    own: impl Fn(&InstrKind, &mut dyn FnMut(u32)),
) -> Vec<Vec<Vec<bool>>> {
    let own = with_agents(p, own);
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
                    own(&code.instrs[pc].kind, &mut |d| acc[d as usize] = true);
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
