//! The bmo replay: each barrier's barrier-modification-order is played
//! forward with the object's counts ("AMDGPU Execution Synchronization",
//! "Execution Model": an init sets the expected count and clears the arrive
//! count, an arrive adds one, a drop lowers the expected count) and cut into
//! phases, each one completed when its arrive count reaches the expected
//! count. The replay reports nothing: it records the phases and, for every
//! bmo position, the counts just before it, and the rules read those.

use bc_graph::{ArriveCount, BarrierId, EventKind, Execution, Target};

/// One phase of a barrier: the bmo interval from arrive count zero to the
/// completing operation (or to the end of the bmo, or to an init that
/// abandons it).
#[derive(Clone, Debug)]
pub(crate) struct Phase {
    pub barrier: BarrierId,
    pub members: Vec<bc_graph::EventId>,
    pub completed: bool,
    /// Inits of the barrier before this phase.
    pub epoch: usize,
    /// The phase's number among all phases of the barrier (numbers keep
    /// counting across inits, so a token names one phase).
    pub number: usize,
    /// The number of the first phase after the latest init before this
    /// one: parity counts from it.
    pub epoch_start: usize,
}

/// The barrier's state just before one bmo position, as the replay saw it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counts {
    /// The expected count (`None` before any init).
    pub expected: Option<i64>,
    /// Arrivals counted in the open phase.
    pub arrived: i64,
    /// `arrive_drop`s of the open phase, which lower the expected count
    /// when it completes.
    pub pending_drop: i64,
    /// The thread count of the open phase of a thread-counted barrier: its
    /// latest counted arrival's.
    pub phase_count: Option<ArriveCount>,
    /// The phase the event joined and its index among the phase's members
    /// (`None` for an init, which belongs to no phase).
    pub phase: Option<(usize, usize)>,
}

impl Counts {
    /// The arrivals that complete the open phase (`None` before any
    /// init): a thread-counted phase's count, else the expected count.
    pub fn needed(&self) -> Option<i64> {
        self.expected.map(|x| self.phase_count.map_or(x, |c| c.needed(x)))
    }
}

/// What the replay of every bmo found.
#[derive(Clone, Debug)]
pub(crate) struct Replay {
    pub phases: Vec<Phase>,
    /// Each event's phase (an index into `phases`).
    pub phase_of: Vec<Option<usize>>,
    /// Per barrier, the number of inits (the epoch its latest phases
    /// belong to).
    pub epochs: Vec<usize>,
    /// Per barrier, the number of its current phase (the open one, or the
    /// next) counted from the latest init: its parity is what a parity
    /// wait compares (numbers after a launch init that stands for
    /// forgotten phases go on from its base).
    pub since_init: Vec<usize>,
    /// Per barrier and bmo position, the counts before that event; `None`
    /// where the bmo holds an event that is no modification of the barrier.
    pub counts: Vec<Vec<Option<Counts>>>,
}

impl Replay {
    /// Replays every bmo of `exec`.
    pub fn new(exec: &Execution) -> Replay {
        let mut phases: Vec<Phase> = Vec::new();
        let mut phase_of = vec![None; exec.events.len()];
        let mut epochs = vec![0usize; exec.bmo.len()];
        let mut counts = Vec::with_capacity(exec.bmo.len());
        let mut since_init = Vec::with_capacity(exec.bmo.len());
        for (b, order) in exec.bmo.iter().enumerate() {
            let b = BarrierId(b as u32);
            let mut seen = Vec::with_capacity(order.len());
            let mut expected: Option<i64> = None;
            let mut arrived = 0i64;
            let mut pending_drop = 0i64;
            let mut tx = 0i64;
            let mut current: Option<usize> = None;
            let mut phase_count: Option<ArriveCount> = None;
            let mut epoch = 0usize;
            // Phases after a launch init count from its base (the phases
            // it stands for), otherwise from 0; parity from its epoch base
            // where the latest init was forgotten too, else from the base.
            let launch = order.first().is_some_and(|&f| exec.event(f).thread.is_none());
            let base = if launch {
                exec.phase_base.get(b.index()).copied().unwrap_or(0) as usize
            } else {
                0
            };
            let mut epoch_start = (exec.epoch_base.get(b.index()).copied())
                .filter(|&e| launch && e != u32::MAX)
                .map_or(base, |e| e as usize);
            for &e in order {
                let ev = exec.event(e);
                if !ev.kind.is_modification() || ev.target != Target::Barrier(b) {
                    seen.push(None);
                    continue;
                }
                let mut before = Counts {
                    expected,
                    arrived,
                    pending_drop,
                    phase_count,
                    phase: None,
                };
                if let EventKind::Init { count } = ev.kind {
                    seen.push(Some(before));
                    expected = Some(count.max(0));
                    // An init abandons the open phase: its members stay in
                    // a phase that never completes ("Execution Model":
                    // participants are an uninterrupted bmo interval that
                    // starts at arrive count zero).
                    if ev.thread.is_some() {
                        epoch_start = base + phases.iter().filter(|p| p.barrier == b).count();
                    }
                    epoch += 1;
                    epochs[b.index()] = epoch;
                    arrived = 0;
                    pending_drop = 0;
                    tx = 0;
                    current = None;
                    phase_count = None;
                    continue;
                }
                let pi = *current.get_or_insert_with(|| {
                    let number = base + phases.iter().filter(|p| p.barrier == b).count();
                    phases.push(Phase {
                        barrier: b,
                        members: Vec::new(),
                        completed: false,
                        epoch,
                        number,
                        epoch_start,
                    });
                    phases.len() - 1
                });
                before.phase = Some((pi, phases[pi].members.len()));
                seen.push(Some(before));
                phases[pi].members.push(e);
                phase_of[e.index()] = Some(pi);
                // An arrive that counts several arrivals.
                let mut several = false;
                match ev.kind {
                    EventKind::Arrive {
                        set_count,
                        count,
                        arrivals,
                        ..
                    } => {
                        if let (Some(k), true) = (set_count, expected.is_some()) {
                            expected = Some(k);
                        }
                        if count.is_some() {
                            phase_count = count;
                        }
                        arrived += i64::from(arrivals);
                        several = arrivals > 1;
                    }
                    EventKind::ArriveDrop { .. } => {
                        arrived += 1;
                        pending_drop += 1;
                    }
                    EventKind::Drop => expected = expected.map(|x| (x - 1).max(0)),
                    EventKind::Tx { delta, .. } => tx = tx.wrapping_add(delta),
                    _ => unreachable!("modification events only"),
                }
                // A phase counted with a thread count completes at that
                // many arrivals, whatever the barrier's own count says.
                let needed = expected.map(|x| phase_count.map_or(x, |c| c.needed(x)));
                // More arrivals than the phase still expects (count-overflow)
                // complete it: the surplus is lost.
                if let Some(x) = needed.filter(|&x| several && arrived > x) {
                    arrived = x;
                }
                if needed == Some(arrived) && tx == 0 {
                    phases[pi].completed = true;
                    current = None;
                    phase_count = None;
                    arrived = 0;
                    expected = expected.map(|x| (x - pending_drop).max(0));
                    pending_drop = 0;
                }
            }
            counts.push(seen);
            let numbered = phases.iter().filter(|p| p.barrier == b).count();
            since_init.push((base + numbered - current.is_some() as usize).saturating_sub(epoch_start));
        }
        Replay {
            phases,
            phase_of,
            epochs,
            since_init,
            counts,
        }
    }

    /// The modification events of barrier `b`'s bmo with the counts before
    /// each, in bmo order.
    pub fn bmo<'a>(&'a self, exec: &'a Execution, b: usize) -> impl Iterator<Item = (bc_graph::EventId, Counts)> + 'a {
        exec.bmo[b]
            .iter()
            .zip(&self.counts[b])
            .filter_map(|(&e, c)| c.map(|c| (e, c)))
    }
}
