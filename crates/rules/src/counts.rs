//! The rules on a barrier's counts, judged on the bmo replay
//! ([`crate::phases`]): what each modification does to the expected and
//! arrive counts, and which count a thread-counted phase uses.

use crate::facts::Facts;
use crate::Checker;
use bc_graph::{ArriveCount, BarrierId, EventKind};
use bc_models::Rule;

impl Checker<'_> {
    /// first-bmo-init ("AMDGPU Execution Synchronization", "Execution
    /// Model": the first element of every barrier-modification-order is an
    /// init, otherwise the behaviour is undefined; for CUDA, project notes
    /// section 3: init happens before every use).
    pub(crate) fn first_bmo_init(&mut self) {
        for (b, order) in self.exec.bmo.iter().enumerate() {
            let Some(&first) = order.first() else {
                continue;
            };
            if !matches!(self.exec.event(first).kind, EventKind::Init { .. }) {
                let msg = format!(
                    "the first operation on {} in bmo is {}, not an init",
                    self.barrier_name(BarrierId(b as u32)),
                    self.n(first)
                );
                self.report(Rule::FirstBmoInit, msg, vec![first]);
            }
        }
    }

    /// first-bmo-init as the async proxy sees it (docs/semantics.md, "The
    /// async proxy", barrier inits; the CUDA guide's TMA example, step 1b):
    /// a bulk copy's `complete_tx` on an mbarrier is ordered after the
    /// latest init before it in bmo only through a proxy fence
    /// (`fence.proxy.async`, `fence.mbarrier_init`) of the initializing
    /// thread, after the init, that executes before the `complete_tx`. A
    /// launch init (no thread) is visible to every proxy.
    pub(crate) fn init_seen_by_async_proxy(&mut self, f: &crate::facts::Ordered) {
        let exec = self.exec;
        if !self.rules.has(Rule::FirstBmoInit) {
            return;
        }
        for (b, order) in exec.bmo.iter().enumerate() {
            for (k, &x) in order.iter().enumerate() {
                let ev = exec.event(x);
                let async_tx = matches!(ev.kind, EventKind::Tx { delta, .. } if delta <= 0)
                    && ev.thread.is_some_and(|t| exec.thread(t).async_proxy);
                if !async_tx {
                    continue;
                }
                let Some(&init) = order[..k]
                    .iter()
                    .rev()
                    .find(|&&e| matches!(exec.event(e).kind, EventKind::Init { .. }))
                else {
                    continue;
                };
                let Some(u) = exec.event(init).thread else {
                    continue;
                };
                let po = &exec.program_order[u.index()];
                let at = po.iter().position(|&e| e == init).unwrap_or(po.len());
                let fenced = po.iter().skip(at + 1).any(|&e| {
                    matches!(exec.event(e).kind, EventKind::Fence { scope } if scope.publishes_inits()) && f.eb(e, x)
                });
                if !fenced {
                    let msg = format!(
                        "{} completes transactions on {} through the async proxy, which may not see its init {}: no fence.proxy.async (or fence.mbarrier_init) of that thread after the init is ordered before it",
                        self.n(x),
                        self.barrier_name(BarrierId(b as u32)),
                        self.n(init)
                    );
                    self.report(Rule::FirstBmoInit, msg, vec![x]);
                }
            }
        }
    }

    /// drop-not-negative ("Execution Model", barrier drop: a drop cannot
    /// make the expected count negative, otherwise the behaviour is
    /// undefined). We also judge an init with a count that is not positive
    /// ("Barrier init" takes a positive count), and an `arrive_drop` that
    /// brings the expected count to zero (mbarrier counts range over
    /// 1..2^20-1: PTX, mbarrier.init; project notes, section 3).
    pub(crate) fn drop_not_negative(&mut self, f: &Facts) {
        let exec = self.exec;
        for b in 0..exec.bmo.len() {
            for (e, c) in f.replay.bmo(exec, b) {
                let ev = exec.event(e);
                let msg = match ev.kind {
                    // Launch inits are checked where they are declared (and
                    // stand for forgotten history, whose count may have
                    // dropped to zero).
                    EventKind::Init { count } if count <= 0 && ev.thread.is_some() => {
                        format!("{} sets a non-positive expected count {count}", self.n(e))
                    }
                    EventKind::ArriveDrop { positive: true }
                        if c.expected.is_some_and(|x| x - (c.pending_drop + 1) <= 0) =>
                    {
                        format!(
                            "{} brings the expected count of {} to zero",
                            self.n(e),
                            self.barrier_name(BarrierId(b as u32))
                        )
                    }
                    EventKind::Drop if c.expected.is_some_and(|x| x <= 0) => format!(
                        "{} makes the expected count of {} negative",
                        self.n(e),
                        self.barrier_name(BarrierId(b as u32))
                    ),
                    _ => continue,
                };
                self.report(Rule::DropNotNegative, msg, vec![e]);
            }
        }
    }

    /// expected-count-update ("Execution Model", barrier arrive: an arrive
    /// that updates the expected count must set it above the arrive count,
    /// otherwise the behaviour is undefined). The arrive count compared is
    /// the one before this arrive is added.
    pub(crate) fn expected_count_update(&mut self, f: &Facts) {
        let exec = self.exec;
        for b in 0..exec.bmo.len() {
            for (e, c) in f.replay.bmo(exec, b) {
                let EventKind::Arrive { set_count: Some(k), .. } = exec.event(e).kind else {
                    continue;
                };
                if k <= c.arrived {
                    let msg = format!(
                        "{} sets the expected count to {k} with {} arrive(s) already counted",
                        self.n(e),
                        c.arrived
                    );
                    self.report(Rule::ExpectedCountUpdate, msg, vec![e]);
                }
            }
        }
    }

    /// count-mismatch (project notes, section 3, named barriers: arrivals
    /// of one phase of a thread-counted CUDA block barrier use one count).
    pub(crate) fn count_mismatch(&mut self, f: &Facts) {
        let exec = self.exec;
        for b in 0..exec.bmo.len() {
            for (e, c) in f.replay.bmo(exec, b) {
                let EventKind::Arrive { count: Some(count), .. } = exec.event(e).kind else {
                    continue;
                };
                if let Some(o) = c.phase_count.filter(|&o| o != count) {
                    let msg = format!(
                        "{} arrives with count {count:?} in a phase counted with {o:?}",
                        self.n(e)
                    );
                    self.report(Rule::CountMismatch, msg, vec![e]);
                }
            }
        }
    }

    /// arrive-twice (project notes, section 3, named barriers: a thread
    /// arrives at most once at a thread-counted barrier before it resets):
    /// a counted arrive whose phase already has an arrive of its thread.
    pub(crate) fn arrive_twice(&mut self, f: &Facts) {
        let exec = self.exec;
        for b in 0..exec.bmo.len() {
            for (e, c) in f.replay.bmo(exec, b) {
                let (EventKind::Arrive { count: Some(_), .. }, Some((pi, at))) = (&exec.event(e).kind, c.phase) else {
                    continue;
                };
                let thread = exec.event(e).thread;
                if let Some(&a) = f.replay.phases[pi].members[..at].iter().find(|&&a| {
                    a != e && exec.event(a).thread == thread && matches!(exec.event(a).kind, EventKind::Arrive { .. })
                }) {
                    let msg = format!("{} and {} arrive in one phase from one thread", self.n(a), self.n(e));
                    self.report(Rule::ArriveTwice, msg, vec![a, e]);
                }
            }
        }
    }
}

impl Checker<'_> {
    /// count-overflow (cuda-barrier-libcudacxx.txt, `cuda::barrier::max()`:
    /// the largest expected count a barrier may have; the model's
    /// `max_count`): a count an operation gives a barrier - an init's, an
    /// arrive's new expected count, a thread-counted arrive's count - is at
    /// most the maximum. Launch inits are checked where they are declared
    /// (and may stand for forgotten history).
    pub(crate) fn count_overflow(&mut self, f: &Facts) {
        self.arrivals_overflow(f);
        let Some(max) = self.max_count else {
            return;
        };
        let exec = self.exec;
        for e in exec.ids() {
            let ev = exec.event(e);
            if ev.thread.is_none() {
                continue;
            }
            let k = match ev.kind {
                EventKind::Init { count } => count,
                EventKind::Arrive { set_count: Some(k), .. } => k,
                EventKind::Arrive {
                    count: Some(ArriveCount::Threads(k)),
                    ..
                } => k,
                _ => continue,
            };
            if k > max {
                let msg = format!("{} gives a count of {k}, above the maximum {max}", self.n(e));
                self.report(Rule::CountOverflow, msg, vec![e]);
            }
        }
    }

    /// count-overflow, every arrive (PTX `mbarrier.arrive` with or without
    /// a count, `cuda::barrier::arrive(n)`: the count may not exceed the
    /// arrivals the current phase still expects, C++
    /// [thread.barrier.class], `arrive(update)`'s precondition; the CUDA
    /// guide's `__mbarrier_arrive`: the pending count must not be zero):
    /// the counts before it, replayed from the bmo, leave fewer pending
    /// arrivals than it counts, or it counts none (a count below one). A
    /// plain arrive counts one: it breaks the rule only on a phase with no
    /// arrival pending that waits for transaction bytes.
    fn arrivals_overflow(&mut self, f: &Facts) {
        let exec = self.exec;
        let mut found = Vec::new();
        for b in 0..exec.bmo.len() {
            for (e, c) in f.replay.bmo(exec, b) {
                let EventKind::Arrive { arrivals, count, .. } = exec.event(e).kind else {
                    continue;
                };
                // A thread-counted arrive sets its phase's count (a surplus
                // one starts the next phase): only a count it gives in
                // arrivals is held to the pending ones.
                if arrivals == 1 && count.is_some() {
                    continue;
                }
                // A thread-counted arrive's own count is its phase's
                // (several arrivals in one: a warp counted whole, whose
                // first lane's arrive counts its absent lanes; PTX ISA,
                // `barrier{.cta}`).
                let own = match count {
                    Some(bc_graph::ArriveCount::Threads(k)) => c.expected.map(|_| k),
                    _ => None,
                };
                let Some(x) = own.or_else(|| c.needed()) else {
                    continue;
                };
                let pending = x - c.arrived;
                // A copy's hold raised the pending count in the hardware
                // (`BarrierProps::held`): one arrival may be that one.
                let held = arrivals == 1 && exec.props(BarrierId(b as u32)).held;
                if arrivals == 0 || (i64::from(arrivals) > pending && !held) {
                    found.push((e, arrivals, pending));
                }
            }
        }
        for (e, n, pending) in found {
            let msg = if n == 0 {
                format!("{} counts no arrival (a count below one)", self.n(e))
            } else {
                format!(
                    "{} counts {n} arrivals where the phase expects {pending} more",
                    self.n(e)
                )
            };
            self.report(Rule::CountOverflow, msg, vec![e]);
        }
    }
}
