//! How a warp's arrival at an `.aligned` arrive counts (PTX ISA,
//! `barrier{.cta}`: a thread at a barrier instruction waits for the
//! non-exited threads of its warp, and the barrier records the warp's
//! arrival): whether the warp's lanes land in one phase
//! ([`System::warp_fits`]), and where the count is a multiple of the warp
//! size, the warp size it weighs whatever its live lanes
//! ([`System::warp_counted`], [`System::absent_lanes`]; docs/semantics.md,
//! "A warp counts whole").

use crate::semantics::choices::Lane;
use crate::semantics::eval::eval;
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::{State, Status};
use bc_graph::*;
use bc_models::Rule;

/// What barrier instruction a lane's next arrive is
/// ([`System::arrive_kind`]): on the device, a sync (`BAR.SYNC`), an
/// arrive alone (`BAR.ARV`) and a reduction (`BAR.RED`) are three
/// instructions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ArriveKind {
    /// An `.aligned` form.
    pub(crate) aligned: bool,
    /// A sync's arrive: its wait follows, from the same statement.
    pub(crate) syncs: bool,
    /// A reduction's (`bar.red`, `__syncthreads_count`): it carries a
    /// predicate.
    pub(crate) red: bool,
}

impl ArriveKind {
    /// Whether the two are one barrier instruction, `.aligned` aside.
    pub(crate) fn same_kind(self, other: ArriveKind) -> bool {
        self.syncs == other.syncs && self.red == other.red
    }
}

impl System<'_> {
    /// Whether `lanes` arrives like thread `t`'s next one (an arrive its
    /// warp makes together, [`System::warp_arrive`], on barrier instance
    /// `b`) land in one phase: the phase they
    /// join does not complete before the last of them. Its count is the
    /// one the arrive gives it (a thread count, or the whole block), else
    /// the barrier's; a counted or transaction arrive never goes as a warp.
    /// A warp counted in whole warps ([`System::warp_counted`]) arrives with the weight of the warp size
    /// whatever its live lanes, and fits only where the phase still
    /// expects that many.
    pub(crate) fn warp_fits(&self, s: &State, t: usize, b: usize, lanes: i64) -> bool {
        let Some(InstrKind::Barrier {
            op: BarrierOp::Arrive(a),
            ..
        }) = self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind)
        else {
            return false;
        };
        if b == usize::MAX || a.arrivals.is_some() || a.tx.is_some() {
            return false;
        }
        let Some(pending) = self.arrive_pending(s, t, b, a) else {
            return true;
        };
        // Counted whole, the warp fits where the phase still needs the
        // warp size. A phase that needs none by this arrive's count (a
        // count mismatch) takes the lanes one each, as before.
        if pending > 0 && self.warp_counted(s, t, a) {
            return pending >= i64::from(self.p.model.warp_size);
        }
        !(1..lanes).contains(&pending)
    }

    /// The arrivals the phase thread `t`'s arrive `a` joins on barrier
    /// instance `b` still needs by the arrive's count (a thread count,
    /// or the whole block), else the barrier's; `None` on a barrier not
    /// initialized.
    fn arrive_pending(&self, s: &State, t: usize, b: usize, a: &ArriveSpec) -> Option<i64> {
        let bar = &s.bars[b];
        if !bar.init {
            return None;
        }
        let needed = if a.count_match {
            match &a.set_count {
                Some(k) => ArriveCount::Threads(eval(self.p, s, t, k)),
                None => ArriveCount::Block,
            }
            .needed(bar.expected)
        } else {
            bar.needed()
        };
        let arrived = if bar.open.is_some() { bar.arrived } else { 0 };
        Some(needed - arrived)
    }

    /// Whether thread `t`'s arrive `a` is counted in whole warps: a
    /// thread-counted arrive (`bar.sync ID, K`, `bar.arrive ID, K`,
    /// `.aligned` or not) whose count `K` is a positive multiple of the
    /// warp size, by a device lane with a warp. The ISA gives the warp's
    /// arrival to both forms: without `.aligned` too, the thread waits for
    /// the non-exited threads of its warp and the barrier marks the warp's
    /// arrival; an H200 completes `barrier.sync 1, 64` with 63 of 64
    /// threads when the 64th exited (docs/hardware.md, session 39). PTX ISA, `barrier{.cta}`:
    /// the count is in threads but a multiple of the warp size, a thread
    /// first waits for the non-exited threads of its warp, and the barrier
    /// records the warp's arrival; older editions of the ISA say outright
    /// that the count grows by the warp size, not by the warp's active
    /// threads. So a warp with exited lanes, or the partial last warp of a
    /// block, counts as a whole warp: a 48-thread block completes
    /// `bar.sync 1, 64` on an H200 (docs/hardware.md). A count that is not
    /// such a multiple (litmus tests may use small counts; PTX forbids
    /// them) counts each lane, as the format's counts do
    /// (docs/semantics.md, "A warp arrives as one"). The whole-block form
    /// (no count) counts each lane: its expected count is the block's
    /// threads, lowered as they end, which comes to the same completion.
    pub(crate) fn warp_counted(&self, s: &State, t: usize, a: &ArriveSpec) -> bool {
        self.p.counted_in_whole_warps(ThreadId(t as u32), a, || {
            a.set_count.as_ref().map(|k| eval(self.p, s, t, k))
        })
    }

    /// Whether thread `t`'s arrive `a` is one its warp makes together (the
    /// lanes wait for their live mates and arrive as one: docs/semantics.md,
    /// "A warp arrives as one"): an `.aligned` form, or an arrive counted in
    /// whole warps ([`System::warp_counted`]), which waits for the warp's
    /// non-exited lanes as well (PTX ISA, `barrier{.cta}`). Only the
    /// `.aligned` forms add the aligned-barrier rule.
    pub(crate) fn warp_arrive(&self, s: &State, t: usize, a: &ArriveSpec) -> bool {
        a.aligned || self.warp_counted(s, t, a)
    }

    /// The arrivals thread `t`'s arrive `a` on barrier instance
    /// `b` adds for the lanes of its warp that do not arrive (exited, or
    /// not in the block), when the arrive is counted in whole warps
    /// ([`System::warp_counted`]) and `t` arrives for its warp: it leads
    /// the warp's arrival ([`Lane::Leads`]), or is its warp's only lane.
    /// The warp's arrival then counts the warp size. Zero otherwise.
    pub(crate) fn absent_lanes(&self, s: &State, t: usize, b: usize, a: &ArriveSpec) -> u32 {
        if !self.warp_counted(s, t, a) {
            return 0;
        }
        // Only where the phase still needs a whole warp (`warp_fits`).
        if self
            .arrive_pending(s, t, b, a)
            .is_none_or(|n| n < i64::from(self.p.model.warp_size))
        {
            return 0;
        }
        let mates = self.an.warps.mates(t);
        let running = (mates.iter())
            .filter(|&&u| u as usize == t || s.threads[u as usize].status == Status::Running)
            .count() as u32;
        // A warp whose every lane runs has none absent, whatever its mode
        // (the common case: no lane mode asked for it).
        if running >= self.p.model.warp_size {
            return 0;
        }
        let live = if mates.is_empty() {
            if !self.warp_fits(s, t, b, 1) {
                return 0;
            }
            1
        } else {
            if self.lane_mode(s, t) != Lane::Leads {
                return 0;
            }
            running
        };
        self.p.model.warp_size.saturating_sub(live)
    }

    /// What kind of arrive thread `t`'s next instruction is
    /// ([`ArriveKind`]; all false where it is no arrive).
    pub(crate) fn arrive_kind(&self, s: &State, t: usize) -> ArriveKind {
        let (tid, pc) = (ThreadId(t as u32), s.threads[t].pc);
        let Some(InstrKind::Barrier {
            op: BarrierOp::Arrive(a),
            ..
        }) = self.p.instr(tid, pc).map(|i| &i.kind)
        else {
            return ArriveKind {
                aligned: false,
                syncs: false,
                red: false,
            };
        };
        let syncs = self.p.sync_arrive(tid, pc);
        ArriveKind {
            aligned: a.aligned,
            syncs,
            red: a.pred.is_some(),
        }
    }

    /// A warp split at a barrier counted in whole warps: thread `t` is at
    /// a non-`.aligned` arrive its warp makes together
    /// ([`System::warp_arrive`]), every other live lane of its warp is at
    /// such an arrive too, and some lane's is another kind of barrier
    /// instruction ([`ArriveKind`]) or names another barrier. Returns
    /// that lane.
    ///
    /// The ISA's `barrier{.cta}` marks a warp's arrival once per barrier
    /// instruction and says nothing of a warp whose lanes execute two of
    /// them; the device does not agree with any one count
    /// (docs/hardware.md, session 40): halves of a warp converged at one
    /// `bar.arrive` and one `bar.sync` hang, one lane per site completes,
    /// and halves at two barrier ids fault (illegal instruction). So the
    /// model reads it as undefined, `ub(divergent-barrier)` by the
    /// barrier-forms rule ([`System::warp_split_rule`]), and the lanes
    /// arrive on their own (one each), as before session 40.
    pub(crate) fn warp_split(&self, s: &State, t: usize) -> Option<usize> {
        let here = self.aligned_arrive(s, t)?;
        let mine = self.arrive_kind(s, t);
        if mine.aligned {
            return None;
        }
        let mut other = None;
        for u in self.an.warps.mates(t).iter().map(|&u| u as usize) {
            if u == t {
                continue;
            }
            match s.threads[u].status {
                Status::Done => {}
                Status::Running => {
                    // A lane elsewhere: the warp waits for it.
                    let (b, k) = self.stance(s, u)?;
                    if !k.aligned && (b != here || !k.same_kind(mine)) {
                        other.get_or_insert(u);
                    }
                }
                _ => return None,
            }
        }
        other
    }

    /// The barrier-forms rule for a warp split at a barrier counted in
    /// whole warps ([`System::warp_split`]), judged as thread `t` takes its
    /// arrive.
    pub(crate) fn warp_split_rule(&self, s: &State, t: usize, w: &mut Worker) {
        if w.following || !self.p.model.rules.has(Rule::BarrierForms) {
            return;
        }
        let Some(u) = self.warp_split(s, t) else {
            return;
        };
        let msg = format!(
            "{} arrives through `{}` while {} of its warp stands at `{}`: the lanes of a warp reach a barrier counted in whole warps through different barrier instructions, or on different barriers (undefined: docs/semantics.md, \"Barrier forms in one phase\")",
            self.thread_name(&w.ident, t),
            self.instr_text(s, t),
            self.thread_name(&w.ident, u),
            self.instr_text(s, u),
        );
        self.violated(Rule::BarrierForms, msg, w);
    }

    /// The barrier-forms rule for a reduction mixed into a phase (PTX ISA,
    /// `barrier{.cta}`: `bar.red` is not to be intermixed with `bar.sync`
    /// or `bar.arrive` on the same active barrier, whose execution is then
    /// unpredictable): thread `t`'s arrive `a` on barrier instance `b`
    /// carries a predicate (a reduction) where the open phase's first
    /// arrival does not, or the other way round. An H200 faults on it
    /// (illegal instruction: review of session 40).
    pub(crate) fn red_intermixed(&self, s: &State, t: usize, b: usize, a: &ArriveSpec, w: &mut Worker) {
        if w.following || !self.p.model.rules.has(Rule::BarrierForms) {
            return;
        }
        let Some((code, pc)) = s.bars[b].open.as_ref().and_then(|ph| ph.site) else {
            return;
        };
        let Some(InstrKind::Barrier {
            op: BarrierOp::Arrive(first),
            ..
        }) = self
            .p
            .codes
            .get(code as usize)
            .and_then(|c| c.instrs.get(pc as usize))
            .map(|i| &i.kind)
        else {
            return;
        };
        if first.pred.is_some() == a.pred.is_some() {
            return;
        }
        let msg = format!(
            "{} arrives on {} through `{}` in a phase whose first arrival was {}: a reduction (bar.red) is intermixed with a sync or an arrive on one active barrier (PTX ISA, barrier{{.cta}}: unpredictable)",
            self.thread_name(&w.ident, t),
            self.bname(b),
            self.instr_text(s, t),
            if first.pred.is_some() { "a reduction" } else { "a sync or an arrive" },
        );
        self.violated(Rule::BarrierForms, msg, w);
    }

    /// The barrier instruction running thread `t` stands in, for
    /// [`System::warp_split`]: an arrive its warp makes as one
    /// ([`System::warp_arrive`]), with its barrier instance and kind; or
    /// the wait of a non-`.aligned` sync whose arrive it made (on the
    /// device it is still inside that `BAR.SYNC`), as that sync's arrive.
    pub(crate) fn stance(&self, s: &State, t: usize) -> Option<(usize, ArriveKind)> {
        if let Some(b) = self.aligned_arrive(s, t) {
            return Some((b, self.arrive_kind(s, t)));
        }
        let b = self.aligned_wait(s, t)?;
        let Some(InstrKind::Barrier {
            op: BarrierOp::Arrive(a),
            ..
        }) = self.p.instr(ThreadId(t as u32), s.threads[t].pc - 1).map(|i| &i.kind)
        else {
            return None;
        };
        (!a.aligned).then_some((
            b,
            ArriveKind {
                aligned: false,
                syncs: true,
                red: a.pred.is_some(),
            },
        ))
    }
}
