//! Independent thread groups (`reductions/por.rs`, module doc): the
//! connected components of "may operate on a common barrier or location
//! instance, or on the host", and the barrier instances a thread may
//! operate on.

use bc_graph::classes::live_instrs;
use bc_graph::*;

/// Per thread, the number of its group: the index of the group's first
/// thread. Threads of one group share objects at least transitively.
pub(crate) fn groups(p: &Program, warps: &super::warps::Warps) -> Vec<u32> {
    let n = p.threads.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    // The smaller index is the root: the group's number is its first
    // thread.
    fn union(parent: &mut [usize], x: usize, y: usize) {
        let (a, b) = (root(parent, x), root(parent, y));
        parent[a.max(b)] = a.min(b);
    }
    // A host's `device_sync` waits for every device thread to end
    // (`System::device_idle`): where one exists, each thread's end is an
    // operation on the host object.
    let device_sync = p.threads.iter().any(|t| {
        p.codes[t.code.index()]
            .instrs
            .iter()
            .any(|i| matches!(i.kind, InstrKind::DeviceSync))
    });
    // Per object, the first thread that names it.
    let mut owner: rustc_hash::FxHashMap<Object, usize> = Default::default();
    for (t, info) in p.threads.iter().enumerate() {
        let mut objs = objects(p, t, info);
        if device_sync {
            objs.push(Object::Host);
        }
        for o in objs {
            match owner.get(&o) {
                Some(&u) => union(&mut parent, u, t),
                None => {
                    owner.insert(o, t);
                }
            }
        }
    }
    // An issue launches one of its site's agents and reads the others'
    // states (`System::copy_issue`): an issuer and its agents are one
    // group.
    for t in 0..n {
        for ins in live_instrs(p, ThreadId(t as u32)) {
            if let InstrKind::CopyIssue { site, .. } = ins.kind {
                for &(a, _) in p.copy_agents(ThreadId(t as u32), site) {
                    union(&mut parent, t, a.index());
                }
            }
        }
    }
    // A lane at an `.aligned` arrive waits for the other lanes of its
    // warp (`System::lane_mode`): whatever they operate on, a step of one
    // may enable another's, so a warp is one group.
    for lanes in &warps.lanes {
        for &u in &lanes[1..] {
            union(&mut parent, lanes[0] as usize, u as usize);
        }
    }
    (0..n).map(|t| root(&mut parent, t) as u32).collect()
}

/// Every barrier instance thread `t` may operate on, sorted: those its
/// body names (each instruction its place lets it reach,
/// `bc_graph::classes::reachable_pcs`; every member of an
/// exclusion group a run-time selector may choose) and those its end may
/// drop (held since launch or joined; `BarrierInstance::dropped_at_end_by`).
pub(crate) fn barrier_instances(p: &Program, t: usize) -> Vec<BarrierId> {
    let (info, me) = (&p.threads[t], ThreadId(t as u32));
    // The `__syncwarp` masks naming its lane, held or not.
    let naming: Vec<BarrierId> = p.masks_naming(me).collect();
    // What its end may drop: the instances it holds, and the masks naming
    // its lane (joined at launch, `State::initial`).
    let mut out: Vec<BarrierId> = (info.barriers.iter().flatten().chain(&naming))
        .copied()
        .filter(|b| p.barriers[b.index()].dropped_at_end_by(me))
        .collect();
    let mut masked = false;
    for ins in live_instrs(p, me) {
        if let InstrKind::Barrier { op, sel, .. } = &ins.kind {
            masked |= matches!(op, BarrierOp::Arrive(a) if a.mask.is_some());
            out.extend(
                sel.decls(&p.groups)
                    .into_iter()
                    .filter_map(|d| info.barriers[d as usize]),
            );
        }
    }
    // A `__syncwarp` arrive marks its lane a stray in the open phases of
    // the warp's other masks that name it (`System::other_mask`): those
    // instances are objects of the thread too.
    if masked {
        out.extend(naming);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Something two threads' steps may both read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Object {
    Barrier(BarrierId),
    Loc(LocId),
    /// Kernel launches, streams and device synchronization.
    Host,
}

/// Every object thread `info` may operate on (an over-approximation: each
/// instruction of the body its place lets it reach, and every barrier instance
/// its end may drop, named by the body or joined at launch).
fn objects(p: &Program, t: usize, info: &ThreadInfo) -> Vec<Object> {
    let mut out: Vec<Object> = barrier_instances(p, t).into_iter().map(Object::Barrier).collect();
    if info.kernel.is_some() || info.kind == ThreadKind::Host {
        out.push(Object::Host);
    }
    // Location declarations: accessed as operands, or read by expressions.
    let mut decls = Vec::new();
    for ins in bc_graph::classes::live_instrs(p, ThreadId(t as u32)) {
        decls.extend(ins.kind.loc_decl());
        for e in ins.kind.exprs() {
            e.loc_decls(&mut decls);
        }
        if matches!(
            ins.kind,
            InstrKind::Launch { .. } | InstrKind::DeviceSync | InstrKind::StreamQuery { .. }
        ) {
            out.push(Object::Host);
        }
    }
    out.extend(
        decls
            .into_iter()
            .filter_map(|d| info.locs.get(d as usize).copied().flatten())
            .map(Object::Loc),
    );
    out
}
