//! One execution for all (`Reductions::det`, docs/explorer.md,
//! "Reductions", item 10): the test that lets the search decide a
//! deterministic program (`analysis/determinism.rs`) on the one execution
//! it ran (`search/det.rs`).
//!
//! In a deterministic program each thread's operations are fixed by its
//! place; the interleaving decides only which phase of its barrier each
//! barrier modification (an arrive, a thread's end dropping the barrier)
//! falls in. [`phases_fixed`] holds, on a run whose history is whole,
//! when that was decided too: on every barrier, each modification of a
//! phase after the first executes after a wait that completed on the
//! phase before (barrier-executes-before, "Execution Model": program order
//! and barrier-participates-in), and the arrives of each phase agree on
//! the count and the expected-count update they carry. This is the
//! "barrier recycling" condition of WEFT (Sharma, Faust, Ogden, Ghosh,
//! Sorensen, Gopalakrishnan, PLDI 2015, on named barriers), read over this
//! model's phases.
//!
//! Why it is enough (every execution then fills every phase with the
//! modifications this run put there): take, in another execution, the
//! first modification `m` placed in another phase than here, say phase
//! `i` where this run had `j`. Every modification before `m` is where
//! this run put it, and so is every wait before it (a wait here takes the
//! phase of its own thread's arrive, `own_phase.rs`), so every
//! executes-before path this run has into `m` also runs before `m` there.
//! If `i < j`: `m` executes after a wait on phase `j - 1`, which completed
//! before `m`, with this run's members; so phases up to `j - 1` hold their
//! modifications, and `m` comes after them: `i >= j`. If `i > j`: phase
//! `j` completed before `m` with fewer members than here, `m` missing,
//! while every member of a later phase executes after that completion;
//! with one count per phase, and drops only in phases whose count they
//! lower (never in one whose arrives write their thread count, which no
//! drop completes: [`counted`]), a phase short of a member does not
//! complete. So `i = j`.
//! Executes-before is then the same in every execution, and with it every
//! rule's judgement, the race rule's included, and one that finishes
//! finishes in every order. An execution that ends stuck at waits ends
//! stuck in every order; one that ends with a lane held by its warp at an
//! `.aligned` barrier (blocked outside any phase, by where its warp mates
//! happen to be) does not, so the run leaves that to the search
//! (`search/det.rs`).
//!
//! The run reads the test step by step ([`Recycling`]), so that it may
//! compact its history as the search does; [`phases_fixed`] reads it over
//! a whole history, and the run holds the two against each other where it
//! kept its history whole (`SearchOptions::verify_encoding`).

use crate::analysis::history::ExecutesBefore;
use crate::state::{HKind, State, LAUNCH};
use bc_graph::Target;
use rustc_hash::FxHashMap;

/// Whether the phases of the whole history of `s` (nothing forgotten,
/// nothing renamed: a run from the initial state without normalizing)
/// are filled the same way by every execution of the program (module
/// text).
pub(crate) fn phases_fixed(s: &State) -> bool {
    let eb = ExecutesBefore::of(s);
    for (b, bmo) in s.bmo.iter().enumerate() {
        let cuts = &s.bars[b].cuts;
        // The phase of each bmo position: how many completions came at or
        // before it.
        let mut phase_of: FxHashMap<(u32, u32), usize> = FxHashMap::default();
        let mut phases: Vec<Vec<(u32, u32)>> = vec![Vec::new()];
        let mut seen: Vec<PhaseSeen> = vec![PhaseSeen::default()];
        let mut next_cut = 0;
        for i in 0..=bmo.len() {
            while next_cut < cuts.len() && cuts[next_cut].0 as usize <= i {
                next_cut += 1;
                phases.push(Vec::new());
                seen.push(PhaseSeen::default());
            }
            let Some(&m) = bmo.get(i) else { break };
            if m.0 == LAUNCH {
                if i != 0 {
                    return false;
                }
                continue;
            }
            let k = phases.len() - 1;
            if !seen[k].admit(&s.hist[m.0 as usize][m.1 as usize].kind) {
                return false;
            }
            phase_of.insert(m, k);
            phases[k].push(m);
        }
        if next_cut != cuts.len() {
            return false;
        }
        if phases.len() < 2 && phases[0].is_empty() {
            continue;
        }
        // The waits that completed on each phase.
        let target = Target::Barrier(bc_graph::BarrierId(b as u32));
        let mut waiters: Vec<Vec<(u32, u32)>> = vec![Vec::new(); phases.len()];
        for (u, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if ev.target != target {
                    continue;
                }
                if let HKind::Wait { participants, .. } = &ev.kind {
                    let Some(k) = participants.first().and_then(|m| phase_of.get(m)) else {
                        return false;
                    };
                    waiters[*k].push((u as u32, po as u32));
                }
            }
        }
        for k in 1..phases.len() {
            for &m in &phases[k] {
                if !waiters[k - 1].iter().any(|&w| eb.eb(w, m)) {
                    return false;
                }
            }
        }
    }
    true
}

/// Whether a phase's arrives write their thread count (`bar.sync ID, N`):
/// such a phase completes at that many arrivals whatever drops join it,
/// so a thread's end that joins it completes nothing, yet orders the
/// thread's events before the phase's waits. Which phase an end falls in
/// then depends on the interleaving (an end that another order puts in
/// the next phase orders nothing here): a drop in a counted phase is not
/// fixed by the test of the module text, and the run leaves the program
/// to the search.
fn counted(carried: Option<(Option<i64>, Option<bc_graph::ArriveCount>)>) -> bool {
    matches!(carried, Some((_, Some(bc_graph::ArriveCount::Threads(_)))))
}

/// A barrier's phase as [`Recycling`] has seen it so far.
#[derive(Default)]
struct PhaseSeen {
    /// Its modifications seen.
    members: usize,
    /// The count and expected-count update of its arrives.
    carried: Option<(Option<i64>, Option<bc_graph::ArriveCount>)>,
    /// A thread's end (or a drop) joined it.
    dropped: bool,
    /// What its members knew when they joined it, joined.
    known: Known,
}

impl PhaseSeen {
    /// Adds a modification of kind `kind`; `false` where the phase is not
    /// one the test of the module text fixes: an event that is no arrive or
    /// drop, arrives that carry different counts or updates, or a drop in
    /// a counted phase.
    fn admit(&mut self, kind: &HKind) -> bool {
        match kind {
            HKind::Arrive(update, count, _) => match self.carried {
                None => self.carried = Some((*update, *count)),
                Some(c) if c == (*update, *count) => {}
                Some(_) => return false,
            },
            HKind::Drop => self.dropped = true,
            _ => return false,
        }
        self.members += 1;
        !(self.dropped && counted(self.carried))
    }
}

/// Per barrier instance, how many of its phases are known to have
/// completed (sorted by barrier, absent: none).
type Known = Vec<(u32, u32)>;

fn get(k: &Known, b: u32) -> Option<u32> {
    k.binary_search_by_key(&b, |x| x.0).ok().map(|i| k[i].1)
}

fn set(k: &mut Known, b: u32, n: u32) {
    match k.binary_search_by_key(&b, |x| x.0) {
        Ok(i) => k[i].1 = n,
        Err(i) => k.insert(i, (b, n)),
    }
}

fn known_of(k: &Known, b: u32) -> u32 {
    get(k, b).unwrap_or(0)
}

fn raise(k: &mut Known, b: u32, n: u32) {
    set(k, b, known_of(k, b).max(n));
}

fn join(k: &mut Known, other: &Known) {
    for &(b, n) in other {
        raise(k, b, n);
    }
}

/// [`phases_fixed`] taken step by step, so that the run may compact its
/// history as the search does (the rule checker then judges it in the
/// pieces compaction forgets, not as one execution whose closure grows
/// with the square of its events). After every step, [`Recycling::observe`]
/// reads the events the step added: each thread carries what it knows of
/// every barrier (how many phases completed: a vector clock over phases,
/// joined through the phases it waited on, as executes-before joins
/// through participates-in), an arrive or drop must know that the phase
/// before its own completed, and the arrives of a phase must agree on
/// count and update. Phase numbers are read from the state right after the
/// step and kept absolute across compaction's renumbering
/// ([`Recycling::renumbered`]).
pub(crate) struct Recycling {
    /// Per thread, how many of its events were read.
    seen: Vec<usize>,
    /// Per thread, what it knows.
    known: Vec<Known>,
    /// Per thread, per barrier it modified, the absolute number of the
    /// phase its latest modification joined (a wait here takes that one:
    /// `own_phase.rs`).
    last: Vec<Vec<(u32, u32)>>,
    /// Per barrier, what to add to the state's phase numbers.
    base: Vec<u32>,
    /// Whether compaction ran (the whole history is gone).
    pub(crate) compacted: bool,
    /// Per (barrier, absolute phase number), what was seen of it.
    phases: rustc_hash::FxHashMap<(u32, u32), PhaseSeen>,
}

impl Recycling {
    /// Nothing read yet of `s`, the initial state.
    pub(crate) fn new(s: &State) -> Recycling {
        let nt = s.hist.len();
        Recycling {
            seen: vec![0; nt],
            known: vec![Vec::new(); nt],
            last: vec![Vec::new(); nt],
            base: vec![0; s.bars.len()],
            compacted: false,
            phases: Default::default(),
        }
    }

    /// Reads the events added since the last call; `false` as soon as a
    /// phase could be filled otherwise by another execution (or its
    /// number cannot be read: a phase retired in the step that completed
    /// it, which no wait can take).
    pub(crate) fn observe(&mut self, s: &State) -> bool {
        loop {
            let (mut progress, mut pending) = (false, false);
            for t in 0..s.hist.len() {
                while self.seen[t] < s.hist[t].len() {
                    let po = self.seen[t];
                    let ev = &s.hist[t][po];
                    let Target::Barrier(bid) = ev.target else {
                        self.seen[t] += 1;
                        progress = true;
                        continue;
                    };
                    let b = bid.0;
                    match &ev.kind {
                        HKind::Arrive(..) | HKind::Drop => {
                            let m = (t as u32, po as u32);
                            let bar = &s.bars[b as usize];
                            let local = (bar.open.iter().chain(&bar.done))
                                .find(|ph| ph.members.contains(&m))
                                .map(|ph| ph.number);
                            let Some(local) = local else { return false };
                            let abs = local + self.base[b as usize];
                            if known_of(&self.known[t], b) < abs {
                                return false;
                            }
                            let ph = self.phases.entry((b, abs)).or_default();
                            if !ph.admit(&ev.kind) {
                                return false;
                            }
                            join(&mut ph.known, &self.known[t]);
                            set(&mut self.last[t], b, abs);
                        }
                        HKind::Wait { participants, .. } => {
                            let Some(abs) = get(&self.last[t], b) else { return false };
                            let Some(ph) = self.phases.get(&(b, abs)) else {
                                return false;
                            };
                            if ph.members < participants.len() {
                                // A member's arrive of this step is read
                                // later in this pass.
                                pending = true;
                                break;
                            }
                            let k = ph.known.clone();
                            join(&mut self.known[t], &k);
                            raise(&mut self.known[t], b, abs + 1);
                        }
                        _ => return false,
                    }
                    self.seen[t] += 1;
                    progress = true;
                }
            }
            if !pending {
                return true;
            }
            if !progress {
                return false;
            }
        }
    }

    /// After compaction: every event left was read, and the phases were
    /// renumbered as `next_before` (each barrier's next phase number before
    /// it) and the state's now say.
    /// `false` where a barrier's numbers went up (never for the barriers
    /// of a deterministic program: no token or parity barrier).
    pub(crate) fn renumbered(&mut self, next_before: &[u32], s: &State) -> bool {
        self.compacted = true;
        for (t, h) in s.hist.iter().enumerate() {
            self.seen[t] = h.len();
        }
        for (b, bar) in s.bars.iter().enumerate() {
            let Some(shift) = next_before[b].checked_sub(bar.next_phase) else {
                return false;
            };
            self.base[b] += shift;
        }
        true
    }
}
