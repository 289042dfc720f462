//! The search's resource budget, shared by the merging thread and the
//! workers (docs/reliability.md, "Resource guarantees").
//!
//! The merge decides the ordinary stops at a point that does not depend on
//! the workers' timing (the state limit, and the memory limit on the states
//! it has numbered, with a reserve for the work in flight). This budget is
//! the hard bound behind it: every byte a search holds is charged here as it
//! is built (new states in the visited set, successor records of batches in
//! flight, each worker's working states, the state graph), and the deadline
//! and the memory bound are checked while a state is expanded and while
//! threads are renamed, so a single huge expansion cannot run past them.
//! Once a limit trips, every worker stops at its next check and the search
//! ends with that stop.

use crate::state::answer::Stop;
use crate::state::options::Limits;
use crate::state::{HKind, State};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

/// The share of the memory budget kept back for the work in flight: the
/// merge stops (deterministically) when the states it numbered pass the
/// rest, so the hard bound trips only when the batches in flight are larger
/// than this (a few huge states).
pub(crate) const RESERVE_DIVISOR: u64 = 8;

/// The bytes the budget lets a search charge: three quarters of `max`.
/// The rest is the allocator's: freed memory it keeps for reuse, chunks
/// not filled yet, tables between two sizes (measured: the charges run
/// 10-25% below the resident size a search adds, docs/reliability.md).
pub(crate) fn hard_memory(max: u64) -> u64 {
    max - max / 4
}

/// The memory limit the merge stops at (deterministically): the hard bound
/// less a reserve for the work in flight.
pub(crate) fn soft_memory(max: u64) -> u64 {
    let hard = hard_memory(max);
    hard - hard / RESERVE_DIVISOR
}

/// How many copies of an expanded state a worker holds at once: the decoded
/// state, the scratch successor, the fusion scratch, and while threads are
/// renamed a copy under test (symmetry checks) and the threads before the
/// renaming, with one copy to spare for the allocator.
pub(crate) const WORKING_COPIES: u64 = 6;

pub(crate) struct Budget {
    /// Bytes charged so far.
    bytes: AtomicU64,
    /// 0 while the search may go on, else the code of the stop.
    halt: AtomicU8,
    start: Instant,
    /// The search's limits on time and memory, the memory limit being the
    /// hard bound ([`hard_memory`]); the state limit is the merge's.
    limits: Limits,
    /// Set by the caller to cancel the search (`SearchOptions::cancel`).
    cancel: Option<&'static AtomicBool>,
}

impl Budget {
    pub(crate) fn new(limits: &Limits, start: Instant) -> Budget {
        Budget {
            bytes: AtomicU64::new(0),
            halt: AtomicU8::new(0),
            start,
            limits: Limits {
                states: u64::MAX,
                memory: hard_memory(limits.memory),
                ..*limits
            },
            cancel: None,
        }
    }

    /// The budget, cancelled once `cancel` (if any) is set.
    pub(crate) fn cancelled_by(mut self, cancel: Option<&'static AtomicBool>) -> Budget {
        self.cancel = cancel;
        self
    }

    pub(crate) fn charge(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn release(&self, n: u64) {
        self.bytes.fetch_sub(n, Ordering::Relaxed);
    }

    /// Sets the bytes charged to `n`: what the search still holds once the
    /// visited set is freed (the state graph and the search tree), before
    /// the liveness analysis charges its own.
    pub(crate) fn set_held(&self, n: u64) {
        self.bytes.store(n, Ordering::Relaxed);
    }

    /// Charges `n` bytes until the returned guard drops.
    pub(crate) fn hold(&self, n: u64) -> Held<'_> {
        self.charge(n);
        Held { budget: self, n }
    }

    /// [`Budget::check`] as a `Result`, for analyses that end at a limit.
    pub(crate) fn go_on(&self) -> Result<(), Stop> {
        self.check().map_or(Ok(()), Err)
    }

    /// Why the search was halted, if it was.
    pub(crate) fn halted(&self) -> Option<Stop> {
        match self.halt.load(Ordering::SeqCst) {
            0 => None,
            1 => Some(Stop::MemoryLimit),
            3 => Some(Stop::CopyLimit),
            4 => Some(Stop::FailFast),
            5 => Some(Stop::Interrupted),
            _ => Some(Stop::Timeout),
        }
    }

    /// Halts the search (the first reason stays).
    pub(crate) fn halt(&self, why: Stop) {
        let code = match why {
            Stop::MemoryLimit => 1,
            Stop::CopyLimit => 3,
            Stop::FailFast => 4,
            Stop::Interrupted => 5,
            _ => 2,
        };
        let _ = self.halt.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The time left before the deadline (zero once passed), if there is one.
    pub(crate) fn time_left(&self) -> Option<std::time::Duration> {
        self.limits.time.map(|t| t.saturating_sub(self.start.elapsed()))
    }

    /// Checks the memory bound and the deadline, halting the search on the
    /// first one passed; returns why the search is halted, if it is.
    pub(crate) fn check(&self) -> Option<Stop> {
        if let Some(why) = self.halted() {
            return Some(why);
        }
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            self.halt(Stop::Interrupted);
            return self.halted();
        }
        let bytes = self.bytes.load(Ordering::Relaxed);
        let elapsed = self.limits.time.map(|_| self.start.elapsed());
        if let Some(why) = self.limits.limit_reached(None, Some(bytes), elapsed) {
            self.halt(why);
        }
        self.halted()
    }
}

/// Bytes charged to a budget while the guard lives (released on drop, also
/// when an analysis ends early at a limit).
pub(crate) struct Held<'b> {
    budget: &'b Budget,
    n: u64,
}

impl Held<'_> {
    /// Charges `n` more bytes, released with the rest.
    pub(crate) fn add(&mut self, n: u64) {
        self.budget.charge(n);
        self.n += n;
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.budget.release(self.n);
    }
}

/// The heap bytes a decoded state holds (an estimate from the lengths of its
/// vectors and sets; the allocator rounds up a little).
/// What a worker holds while it expands state `s` (charged before the
/// expansion, and again as a chain grows the state: `expand.rs`): its
/// [`WORKING_COPIES`], and the structures the normalization and the rules
/// build over its history and drop again, which no state holds: two sets
/// of executes-before rows at once (per event, a prefix length per thread
/// with events: `ExecutesBefore`) and the rule checker's closure (a bit
/// per pair of events). A history that compaction cannot shorten (a
/// 1,024-thread pipeline keeps 14,000 events) makes these the largest
/// part: 57 MB of rows each, uncharged until session 30.
pub(crate) fn working_bytes(s: &State) -> u64 {
    let events = s.hist.iter().map(Vec::len).sum::<usize>() as u64;
    let width = s.hist.iter().filter(|h| !h.is_empty()).count() as u64;
    WORKING_COPIES * state_bytes(s) + 2 * 4 * events * width + events * events / 8
}

pub(crate) fn state_bytes(s: &State) -> u64 {
    use std::mem::size_of;
    let phase = |p: &crate::state::Phase, list: &mut dyn FnMut(&crate::state::Members) -> usize| {
        size_of::<crate::state::Phase>() + list(&p.members) + p.mask.bytes() + p.bound.bytes() + p.strays.bytes()
    };
    let mut n = size_of::<State>();
    for t in &s.threads {
        n += size_of::<crate::state::TState>()
            + t.regs.len() * 8
            + t.jmask.bytes()
            + (t.joined.len() + 2 * t.owes.len()) * 4;
    }
    // Member lists are shared by a phase and its waits: each counts once.
    // (By pointer: the fast hasher; this runs once per state.)
    let mut lists = rustc_hash::FxHashSet::default();
    let mut list = |l: &crate::state::Members| {
        if lists.insert(std::sync::Arc::as_ptr(l)) {
            l.len() * 8
        } else {
            0
        }
    };
    for h in &s.hist {
        n += size_of::<Vec<crate::state::HEvent>>() + h.len() * size_of::<crate::state::HEvent>();
        for e in h {
            if let HKind::Wait { participants, .. } = &e.kind {
                n += list(participants);
            }
        }
    }
    for b in &s.bars {
        n += size_of::<crate::state::BState>();
        for p in b.open.iter().chain(&b.done) {
            n += phase(p, &mut list);
        }
    }
    n += s.bmo.iter().map(|o| 24 + o.len() * 8).sum::<usize>();
    n += s.mem.len() * 8 + s.launched.len();
    n += s
        .extra
        .iter()
        .map(|f| size_of::<crate::state::Fan>() + (f.sources.len() + f.targets.len()) * 8)
        .sum::<usize>();
    n += s.streams.iter().map(|(_, k)| 40 + k.len() * 4).sum::<usize>();
    n as u64
}
