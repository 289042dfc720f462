//! Classes of interchangeable threads (`reductions/symmetry.rs`, module
//! doc: the same body at the same place, observing the same builtins, named
//! by no assertion), and whether the aligned-barrier rule can fire at all.

use bc_graph::*;

/// Interchangeable thread classes (each with at least two threads).
pub(crate) fn classes(p: &Program) -> Vec<Vec<usize>> {
    fn names_thread(e: &CExpr, t: u32) -> bool {
        match e {
            CExpr::ThreadReg(x, _) => x.0 == t,
            CExpr::Unary(_, x) => names_thread(x, t),
            CExpr::Binary(_, a, b) => names_thread(a, t) || names_thread(b, t),
            _ => false,
        }
    }
    // A warp shuffle from a constant lane (a broadcast) reads that lane's
    // value: the source lane is told apart from the others, as a branch
    // on `lane == b` would tell it (its signature gains that bit).
    let signature: Vec<Vec<i64>> = (0..p.threads.len())
        .map(|t| {
            let mut sig = bc_graph::classes::builtin_signature(p, ThreadId(t as u32));
            let info = &p.threads[t];
            for ins in &p.codes[info.code.index()].instrs {
                if let Some(b) = broadcast_source(&ins.kind) {
                    sig.push(i64::from(i64::from(info.lane) == b & 31));
                }
            }
            sig
        })
        .collect();
    // The aligned-barrier rule compares the instruction sites of a warp's
    // threads: where it can fire, a class keeps to one warp and one code.
    let aligned = aligned_rule_live(p);
    // A lane mask names lanes: whether a mask names a thread decides
    // whether it may call it (syncwarp-mask), whether the mask's phase
    // waits for it, and whether its end drops the mask's barrier. Two
    // threads of one warp that every mask of their warp names alike are
    // interchangeable (the masks a thread uses are builtin expressions, in
    // its signature); a renaming within such a class maps each mask's
    // named lanes onto themselves. Otherwise a warp is only a place for
    // warp barrier instances, which `barriers` compares. Per thread, once:
    // every mask of the program names it or not, not only those it holds
    // (another lane's mask may name it: a mask that depends on the lane).
    let named_by: Vec<Vec<bc_graph::BarrierId>> = (0..p.threads.len())
        .map(|r| p.masks_naming(ThreadId(r as u32)).collect())
        .collect();
    let mut classes: Vec<(Vec<usize>, usize)> = Vec::new();
    // The classes whose representative agrees with a thread on the fields
    // `same` compares by equality, in the order they were opened: a
    // thread is compared with those only (a search of every class made
    // this quadratic in the threads, issue 33).
    type Key<'a> = (
        u32,
        u32,
        Option<u32>,
        bool,
        u64,
        &'a [i64],
        &'a [bc_graph::BarrierId],
        &'a [Option<bc_graph::BarrierId>],
        &'a [Option<bc_graph::LocId>],
    );
    let mut buckets: rustc_hash::FxHashMap<Key, Vec<usize>> = Default::default();
    for (t, info) in p.threads.iter().enumerate() {
        let code = &p.codes[info.code.index()];
        // A thread whose code reads builtins stays interchangeable with
        // those that observe the same values of them (its thread class,
        // `bc_graph::classes`).
        // A copy agent, or a thread that issues copies (its agents are its
        // own), is interchangeable with none.
        // A warp intrinsic whose result reads which lane gave which value
        // (a shuffle but a broadcast, a ballot, a match: its result
        // names lanes) makes its lanes interchangeable with none. Votes
        // and reductions read the values alone, and a broadcast
        // reads its source lane's, which the signature tells apart; the
        // phase keeps the values by thread (`Phase::vals`), renamed with
        // the threads.
        let per_lane = code.instrs.iter().any(|i| match &i.kind {
            InstrKind::Barrier {
                op: BarrierOp::Wait(w), ..
            } => w.reduce.is_some_and(|r| r.per_lane()) && !lane_blind(w),
            _ => false,
        });
        let eligible = info.kind == ThreadKind::Device
            && !per_lane
            && !p.asserts.iter().any(|a| names_thread(&a.cond, t as u32))
            && !p.copy_issuer(ThreadId(t as u32));
        if !eligible {
            continue;
        }
        // Explicit threads declared with the same body are interchangeable
        // too, unless a uniform barrier compares instruction sites (sites
        // name the body).
        let uniform = info
            .barriers
            .iter()
            .flatten()
            .any(|b| p.barriers[b.index()].props.uniform);
        let same = |r: usize| {
            let o = &p.threads[r];
            let same_code = o.code == info.code
                || (!uniform && {
                    let other = &p.codes[o.code.index()];
                    other.regs.len() == code.regs.len()
                        && other.instrs.len() == code.instrs.len()
                        && other.instrs.iter().zip(&code.instrs).all(|(x, y)| x.kind == y.kind)
                });
            same_code
                && (!aligned || (o.code == info.code && o.warp_id == info.warp_id))
                && signature[r] == signature[t]
                && o.block == info.block
                && o.cluster == info.cluster
                && o.warp_lanes == info.warp_lanes
                && named_by[r] == named_by[t]
                && o.kernel == info.kernel
                && o.cooperative == info.cooperative
                && o.barriers == info.barriers
                && o.locs == info.locs
        };
        let key: Key = (
            info.block,
            info.cluster,
            info.kernel,
            info.cooperative,
            info.warp_lanes,
            &signature[t],
            &named_by[t],
            &info.barriers,
            &info.locs,
        );
        let bucket = buckets.entry(key).or_default();
        match bucket.iter().find(|&&c| same(classes[c].1)) {
            Some(&c) => classes[c].0.push(t),
            None => {
                bucket.push(classes.len());
                classes.push((vec![t], t));
            }
        }
    }
    classes.into_iter().map(|(m, _)| m).filter(|m| m.len() > 1).collect()
}

/// Whether the aligned-barrier rule can fire in `p`: the model has it and
/// some instruction arrives through an `.aligned` form.
pub(crate) fn aligned_rule_live(p: &Program) -> bool {
    p.model.rules.has(bc_models::Rule::AlignedBarrier) && super::warps::has_aligned_arrive(p)
}

/// Whether the aligned-barrier rule can fire on a wait: it is on and some
/// wait is `.aligned` (`WaitSpec::aligned`).
pub(crate) fn aligned_wait_rule_live(p: &Program) -> bool {
    p.model.rules.has(bc_models::Rule::AlignedBarrier)
        && (p.codes.iter().flat_map(|c| &c.instrs))
            .any(|i| matches!(&i.kind, InstrKind::Barrier { op: BarrierOp::Wait(w), .. } if w.aligned))
}

/// The constant source lane of a shuffle wait that broadcasts it (`idx`
/// mode, a constant lane, the whole warp as its segment).
fn broadcast_source(k: &InstrKind) -> Option<i64> {
    let InstrKind::Barrier {
        op: BarrierOp::Wait(w), ..
    } = k
    else {
        return None;
    };
    broadcast_lane(w)
}

fn broadcast_lane(w: &WaitSpec) -> Option<i64> {
    let whole = matches!(w.width, None | Some(CExpr::Int(32)));
    match (w.reduce, &w.lane) {
        (Some(bc_models::Reduce::Shfl(bc_models::ShflMode::Idx)), Some(CExpr::Int(b))) if whole => Some(*b),
        _ => None,
    }
}

/// Whether a warp intrinsic wait's result is the same whichever of the
/// lanes gave which value, or reads only a constant source lane (told
/// apart by the signature): votes, reductions, match-all, broadcasts.
fn lane_blind(w: &WaitSpec) -> bool {
    use bc_models::Reduce;
    match w.reduce {
        // Not match-all: its result is the mask of the phase's lanes,
        // which names the lanes (two that differ in which one exited
        // give different masks).
        Some(Reduce::VoteAll | Reduce::VoteAny | Reduce::VoteUni | Reduce::Redux(_)) => true,
        Some(Reduce::Shfl(_)) => broadcast_lane(w).is_some(),
        _ => false,
    }
}
