//! The warps of a program with `.aligned` barrier arrives: per thread, the
//! lanes of its warp, for the warp's collective arrival
//! (`System::lane_mode`, docs/semantics.md, "The .aligned forms").
//!
//! PTX ISA, `barrier{.cta}`: a thread executing a barrier instruction
//! first waits for the non-exited threads of its warp, and the barrier
//! records the warp's arrival; the `.aligned` forms further require every
//! thread of the warp to execute that same instruction. So where a
//! program arrives through an `.aligned` form, the lanes of a warp reach
//! such an arrive one by one and arrive together, in one transition.

use bc_graph::*;

/// Per device thread, the lanes of its warp (itself included, in thread
/// order); empty lists everywhere when no instruction of the program
/// arrives through an `.aligned` form (then every arrive is a lane's own).
#[derive(Default)]
pub(crate) struct Warps {
    /// Per thread, the index of its warp in `lanes` (`u32::MAX`: none).
    pub(crate) of: Vec<u32>,
    /// Per warp, its threads in thread order.
    pub(crate) lanes: Vec<Vec<u32>>,
}

impl Warps {
    /// The lanes of thread `t`'s warp, none when arrivals are a lane's own.
    pub(crate) fn mates(&self, t: usize) -> &[u32] {
        match self.of.get(t) {
            Some(&w) if w != u32::MAX => &self.lanes[w as usize],
            _ => &[],
        }
    }
}

/// Whether some instruction of `p` arrives through a form its warp may
/// make together (`System::warp_arrive`): an `.aligned` form, or a
/// thread-counted arrive with a count (counted in whole warps when that
/// count is a multiple of the warp size).
pub(crate) fn has_aligned_arrive(p: &Program) -> bool {
    (p.codes.iter().flat_map(|c| &c.instrs))
        .any(|i| matches!(&i.kind, InstrKind::Barrier { op, .. } if op.warp_may_arrive_as_one()))
}

/// The warps of `p` that hold two lanes or more, when some instruction of
/// `p` arrives through an `.aligned` form (module doc).
pub(crate) fn aligned_warps(p: &Program) -> Warps {
    if !has_aligned_arrive(p) {
        return Warps::default();
    }
    let mut by_id: rustc_hash::FxHashMap<u32, Vec<u32>> = Default::default();
    for (t, info) in p.threads.iter().enumerate() {
        if info.kind == ThreadKind::Device && info.warp_id != u32::MAX {
            by_id.entry(info.warp_id).or_default().push(t as u32);
        }
    }
    let mut lanes: Vec<Vec<u32>> = by_id.into_values().filter(|l| l.len() > 1).collect();
    lanes.sort_unstable();
    let mut of = vec![u32::MAX; p.threads.len()];
    for (w, l) in lanes.iter().enumerate() {
        for &t in l {
            of[t as usize] = w as u32;
        }
    }
    Warps { of, lanes }
}
