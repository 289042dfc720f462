//! Lockstep barriers and what wait, arrive and end fusion read of the
//! program: which barriers are lockstep (`reductions/fuse.rs`, module doc:
//! every phase needs one arrive of every live thread), whose arrives fuse,
//! the counted named barriers whose count is uniform, the `__syncwarp`
//! masks no other mask overlaps, and per pc whether every or some run of
//! local steps ends the thread.

use bc_graph::*;
use std::collections::HashMap;

/// Per barrier instance, whether it is lockstep (see the module doc), and
/// whether a thread inits it (then it is lockstep only once no thread can
/// init it any more: [`System::init_pending`]).
pub(crate) fn lockstep_barriers(p: &Program) -> (Vec<bool>, Vec<bool>) {
    let nb = p.barriers.len();
    let uniform = uniform_thread_counts(p);
    let lone = lone_masks(p);
    let mut ok = vec![true; nb];
    // The constant counts of the inits of each instance (`None` once one
    // is not a constant).
    let mut inits: Vec<Option<Vec<i64>>> = vec![Some(Vec::new()); nb];
    let mut arrivers = vec![0i64; nb];
    // Per instance, the last thread (plus one) that arrives on it and that
    // waits on it, and the instances the current thread touches: no table
    // of every instance per thread (quadratic, issue 33).
    let (mut arrives_on, mut waits_on) = (vec![0usize; nb], vec![0usize; nb]);
    let mut touched: Vec<usize> = Vec::new();
    // Per (code, declarations), the declarations the alternation analysis
    // below rejects: computed once per code, not per thread.
    let mut alternation: HashMap<(usize, usize), (Vec<usize>, Vec<usize>)> = HashMap::new();
    // Per instance, whether an `.aligned` arrive acts on it; per (instance,
    // warp) its arrivers; per instance whether an arriver's code exits.
    let mut aligned_on = vec![false; nb];
    let mut warp_arrivers: HashMap<(usize, u32), u32> = HashMap::new();
    let mut exits = vec![false; nb];
    for (ti, t) in p.threads.iter().enumerate() {
        let code = &p.codes[t.code.index()];
        let mark = ti + 1;
        touched.clear();
        for ins in bc_graph::classes::live_instrs(p, ThreadId(ti as u32)) {
            let InstrKind::Barrier { op, sel, .. } = &ins.kind else {
                continue;
            };
            let d = match sel {
                BarrierSel::Decl(d) => *d,
                BarrierSel::JoinedOr { group, decl } => {
                    for g in p.groups[*group as usize].iter().chain([decl]) {
                        if let Some(b) = t.barriers[*g as usize] {
                            ok[b.index()] = false;
                        }
                    }
                    continue;
                }
                BarrierSel::Joined { group } => {
                    for &g in &p.groups[*group as usize] {
                        if let Some(b) = t.barriers[g as usize] {
                            ok[b.index()] = false;
                        }
                    }
                    continue;
                }
            };
            let Some(b) = t.barriers[d as usize].map(|b| b.index()) else {
                continue;
            };
            if matches!(op, BarrierOp::Arrive(_) | BarrierOp::Wait(_)) && arrives_on[b] != mark && waits_on[b] != mark {
                touched.push(b);
            }
            match op {
                BarrierOp::Arrive(a) => {
                    arrives_on[b] = mark;
                    // Arrives a warp makes together (`System::warp_arrive`):
                    // `.aligned`, or thread-counted (whole warps when the
                    // count is a multiple of the warp size, below).
                    aligned_on[b] |= op.warp_may_arrive_as_one();
                    // A thread-counted arrive without a count
                    // (`__syncthreads`) counts the whole block, like a
                    // plain arrive; with one it sets the phase's count,
                    // which is lockstep when every arrive on the barrier
                    // writes the same constant count and that count is the
                    // number of threads that arrive on it (below).
                    if (a.set_count.is_some() && uniform[b].is_none())
                        || (a.mask.is_some() && !lone[b])
                        || a.arrivals.is_some()
                    {
                        ok[b] = false;
                    }
                }
                BarrierOp::Wait(w) => {
                    waits_on[b] = mark;
                    if w.parity.is_some() || w.poll {
                        ok[b] = false;
                    }
                }
                BarrierOp::Join => {}
                // An init sets the count every phase after it needs: with
                // the number of arrivers, as a launch count does, every
                // phase after the last init needs one arrive of each
                // (checked below). Before that an init may abandon an
                // open phase, moving the phase numbers on without a
                // waiting thread's arrive (its token goes stale): such a
                // barrier is lockstep only once no init can come.
                BarrierOp::Init(k) => match (k, &mut inits[b]) {
                    (CExpr::Int(k), Some(v)) => v.push(*k),
                    _ => inits[b] = None,
                },
                // A transaction count only holds a phase back: it
                // still needs every arriver (phase sorting, which reads
                // completion points, keeps away from it: canon.rs).
                BarrierOp::ExpectTx(_) | BarrierOp::CompleteTx(_) => {}
                BarrierOp::Drop | BarrierOp::ArriveDrop { .. } | BarrierOp::Inval => ok[b] = false,
            }
        }
        let exits_here = code.instrs.iter().any(|i| matches!(i.kind, InstrKind::Exit));
        for &b in &touched {
            if arrives_on[b] == mark {
                arrivers[b] += 1;
                *warp_arrivers.entry((b, t.warp_id)).or_default() += 1;
                exits[b] |= exits_here;
            } else if waits_on[b] == mark {
                // A waiter that never arrives: phases do not wait for it.
                ok[b] = false;
            }
        }
        let nd = t.barriers.len();
        let (rearmed, armed_at_end) = alternation
            .entry((t.code.index(), nd))
            .or_insert_with(|| alternation_of(code, nd));
        for &d in rearmed.iter() {
            if let Some(b) = t.barriers[d] {
                ok[b.index()] = false;
            }
        }
        // An end reachable from an arrive with no wait in between: when the
        // end drops the barrier, that drop falls in the arrive's phase (or a
        // later one the thread never waits on), so the phase completes with
        // an arrive *and* a drop of one thread and one live thread short,
        // and a later phase can complete while another thread still sits at
        // its wait (gfx1250 `s_barrier_signal -1` at a wave's end).
        for &d in armed_at_end.iter() {
            if let Some(b) = t.barriers[d] {
                if p.barriers[b.index()].dropped_at_end_by(ThreadId(ti as u32)) {
                    ok[b.index()] = false;
                }
            }
        }
    }
    for (b, inst) in p.barriers.iter().enumerate() {
        // A uniform count stands for the expected count: every phase
        // completes at that many arrivals (a thread's end does not lower
        // it), one per arriving thread.
        let counts: Vec<i64> = (uniform[b].or(inst.launch_count).into_iter())
            .chain(inits[b].iter().flatten().copied())
            .collect();
        if inits[b].is_none() || counts.is_empty() || counts.iter().any(|&k| k != arrivers[b]) {
            ok[b] = false;
        }
        // A warp counted whole (`System::warp_counted`: a thread count
        // that is a multiple of the warp size) weighs the warp size where
        // the phase still needs that many, and one per lane otherwise: a
        // warp with fewer arrivers than lanes (a partial warp, lanes that
        // skip the barrier or exit) then completes a phase without the
        // other arrivers, depending on the order, so its arrives do not
        // commute as one per arriving thread (review of session 38:
        // arrive fusion answered ok where the search finds a deadlock).
        let ws = i64::from(p.model.warp_size);
        let whole = aligned_on[b] && uniform[b].is_some_and(|k| p.model.counts_whole_warps(k));
        if whole
            && (exits[b] || (warp_arrivers.iter()).any(|(&(c, w), &n)| c == b && (w == u32::MAX || i64::from(n) < ws)))
        {
            ok[b] = false;
        }
    }
    let inited = inits.iter().map(|v| v.as_ref().is_none_or(|v| !v.is_empty())).collect();
    (ok, inited)
}

/// Alternation (for [`lockstep_barriers`]): no arrive on a declaration is
/// reachable from an arrive on it without a wait on it in between (a
/// forward may-analysis of "arrived since the last wait" per declaration,
/// over `code` with `nd` declarations). Returns the declarations an arrive
/// reaches again with no wait between, and those an end (an `exit` or the
/// end of the code) is reached on with an arrive not waited for.
fn alternation_of(code: &Code, nd: usize) -> (Vec<usize>, Vec<usize>) {
    let len = code.instrs.len();
    let mut armed = vec![vec![false; nd]; len + 1];
    let mut rearmed = vec![false; nd];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in 0..len {
            let mut out = armed[pc].clone();
            if let InstrKind::Barrier {
                op,
                sel: BarrierSel::Decl(d),
                ..
            } = &code.instrs[pc].kind
            {
                let d = *d as usize;
                match op {
                    BarrierOp::Arrive(_) => {
                        rearmed[d] |= out[d];
                        out[d] = true;
                    }
                    BarrierOp::Wait(_) => out[d] = false,
                    _ => {}
                }
            }
            for succ in code.successors(pc as u32) {
                let target = &mut armed[succ as usize];
                for (x, y) in target.iter_mut().zip(&out) {
                    if *y && !*x {
                        *x = true;
                        changed = true;
                    }
                }
            }
        }
    }
    let mut at_end = vec![false; nd];
    for (pc, at) in armed.iter().enumerate() {
        if pc < len && !matches!(code.instrs[pc].kind, InstrKind::Exit) {
            continue;
        }
        for (e, &on) in at_end.iter_mut().zip(at) {
            *e |= on;
        }
    }
    let list = |v: Vec<bool>| v.iter().enumerate().filter(|(_, &x)| x).map(|(d, _)| d).collect();
    (list(rearmed), list(at_end))
}

/// Per barrier instance, the thread count `K` when every arrive on it is a
/// thread-counted arrive written with the same constant count (`bar.sync
/// 1, K` and `bar.arrive 1, K` alike; CUDA's counted named barrier): then
/// every phase completes at `K` arrivals whatever their order, and no
/// arrival's count can disagree with another's (count-mismatch), so the
/// count is no more order-sensitive than a plain arrive's. `None` for an
/// instance with another arrive (an expected-count update, the whole-block
/// form, another count) or none.
pub(crate) fn uniform_thread_counts(p: &Program) -> Vec<Option<i64>> {
    // Per instance: not seen yet, one count so far, or mixed.
    let mut seen: Vec<Option<Option<i64>>> = vec![None; p.barriers.len()];
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            let InstrKind::Barrier {
                op: BarrierOp::Arrive(a),
                sel,
                ..
            } = &ins.kind
            else {
                continue;
            };
            let k = match (a.count_match, &a.set_count, &a.mask) {
                (true, Some(CExpr::Int(k)), None) => Some(*k),
                _ => None,
            };
            for d in sel.decls(&p.groups) {
                if let Some(b) = t.barriers[d as usize] {
                    let slot = &mut seen[b.index()];
                    *slot = match *slot {
                        None => Some(k),
                        Some(prev) if prev == k => Some(k),
                        Some(_) => Some(None),
                    };
                }
            }
        }
    }
    seen.into_iter().map(Option::flatten).collect()
}

/// Per barrier instance, whether an arrive on it with a lane mask is as
/// order-free as a plain arrive: the instance is not a `__syncwarp`
/// barrier, or no other mask of its warp names a lane its mask names
/// (one mask per warp, or disjoint ones such as cooperative-groups
/// tiles). An arrive on a mask barrier marks the lanes it names as strays
/// in the open phases of the warp's other masks that name them
/// (`System::other_mask`, for the syncwarp-mask rule): with overlapping
/// masks the order of that arrive and another mask's phase completion is
/// observable, so those instances are neither sorted nor fused.
pub(crate) fn lone_masks(p: &Program) -> Vec<bool> {
    // The mask barriers of each warp: a mask is compared with its warp's
    // others only (comparing every pair of instances was quadratic in the
    // program, issue 33).
    let mut by_warp: HashMap<u32, Vec<usize>> = HashMap::new();
    for (b, inst) in p.barriers.iter().enumerate() {
        if let Some(w) = &inst.syncwarp {
            by_warp.entry(w.warp).or_default().push(b);
        }
    }
    p.barriers
        .iter()
        .enumerate()
        .map(|(b, inst)| {
            let Some(w) = &inst.syncwarp else {
                return true;
            };
            !by_warp[&w.warp].iter().any(|&o| {
                o != b
                    && p.barriers[o]
                        .syncwarp
                        .as_ref()
                        .is_some_and(|x| x.named.iter().any(|t| w.named.contains(t)))
            })
        })
        .collect()
}

/// Per barrier instance, whether its arrives may be fused (see
/// [`System::fusible_arrive`]): lockstep (every phase needs one arrive of
/// every thread that arrives on it), sorted (`canon.rs`: the order of a
/// phase's arrivals leaves no trace in the state), no arrive returns
/// isfirst or a reduction (which would record the order in a register),
/// and every execution of the program is finite (no state graph: a fused
/// arrive is not an edge of its own thread for the fairness analysis).
/// And no thread inits the instance (its count is set at launch): an
/// arrive and an init do not commute (before the init the arrive is
/// undefined, after an init that abandons its phase it counts for
/// nothing), so an arrive is no persistent set alone while an init may
/// still come.
pub(crate) fn arrive_fusible_barriers(p: &Program, lockstep: &[bool], sortable: &[bool], finite: bool) -> Vec<bool> {
    fusible(p, lockstep, sortable, finite, false)
}

/// The barriers whose arrives fuse once no thread can init them any more
/// (`System::arrives_fuse`): as [`arrive_fusible_barriers`], over the
/// lockstep and sortable-after-init analyses, inits allowed. After the
/// last init a lockstep barrier's phases each need the init's count, which
/// is every arriving thread, and are kept sorted (`System::sorted_now`),
/// as a launch-initialized lockstep barrier's are.
pub(crate) fn arrive_fusible_after_init(p: &Program, lockstep: &[bool], sortable: &[bool], finite: bool) -> Vec<bool> {
    fusible(p, lockstep, sortable, finite, true)
}

fn fusible(p: &Program, lockstep: &[bool], sortable: &[bool], finite: bool, inits: bool) -> Vec<bool> {
    let mut ok: Vec<bool> = (0..p.barriers.len())
        .map(|b| finite && lockstep[b] && sortable[b])
        .collect();
    for (i, t) in p.threads.iter().enumerate() {
        for ins in bc_graph::classes::live_instrs(p, ThreadId(i as u32)) {
            if let InstrKind::Barrier {
                op: BarrierOp::Init(_),
                sel,
                ..
            } = &ins.kind
            {
                if inits {
                    continue;
                }
                for d in sel.decls(&p.groups) {
                    if let Some(b) = t.barriers[d as usize] {
                        ok[b.index()] = false;
                    }
                }
            }
            if let InstrKind::Barrier {
                op: BarrierOp::Arrive(_),
                sel,
                result: Some(BarrierResult::IsFirst(_) | BarrierResult::Reduce(_)),
            } = &ins.kind
            {
                for d in sel.decls(&p.groups) {
                    if let Some(b) = t.barriers[d as usize] {
                        ok[b.index()] = false;
                    }
                }
            }
        }
    }
    ok
}

/// Per code and pc, whether every run of local steps from there reaches
/// the thread's end (an `exit` or past the last instruction) before any
/// visible operation: a wait or arrive right before such a pc would end
/// its thread, so fusion does not try it (it would be taken back).
pub(crate) fn must_end(p: &Program) -> Vec<Vec<bool>> {
    end_table(p, true)
}

/// Per code and pc: some run of local steps from there ends the thread
/// (the end pc included).
pub(crate) fn may_end(p: &Program) -> Vec<Vec<bool>> {
    end_table(p, false)
}

/// [`must_end`] (`all`) or [`may_end`]: a backward fixed point over the
/// local instructions.
fn end_table(p: &Program, all: bool) -> Vec<Vec<bool>> {
    p.codes
        .iter()
        .map(|code| {
            let len = code.instrs.len();
            let mut out = vec![false; len + 1];
            out[len] = true;
            let mut changed = true;
            while changed {
                changed = false;
                for pc in (0..len).rev() {
                    if out[pc] {
                        continue;
                    }
                    let kind = &code.instrs[pc].kind;
                    let succs = code.successors(pc as u32);
                    let next_end = if all {
                        succs.iter().all(|&n| out[n as usize])
                    } else {
                        succs.iter().any(|&n| out[n as usize])
                    };
                    let ends = matches!(kind, InstrKind::Exit) || (kind.is_local() && next_end);
                    if ends {
                        out[pc] = true;
                        changed = true;
                    }
                }
            }
            out
        })
        .collect()
}
