//! Forgetting a prefix of a barrier's completed phases (`BState::cuts`).
//!
//! `compact` forgets a barrier's history whole: every event on it outside
//! its open phase must be forgettable at once. On a barrier that is used
//! again before its earlier phases are closed (a named barrier two
//! warpgroups hand a turn over on, round after round), that whole moment
//! may come at one normalization and not at another: a state normalized
//! while only the first phase was complete forgot it, the same state
//! normalized after the second phase had begun kept both, and the two
//! stayed apart until the barrier was forgotten again. Which one the search
//! met depended on where chains happened to end, so equal states were
//! stored many times over (a FlashAttention-3-style mainloop: 14,274
//! states against 951 without compaction).
//!
//! Here, where the whole history cannot go, the longest prefix of completed
//! phases whose events are all forgettable goes, with the same test per
//! event. A prefix of completed phases is what a whole forget leaves
//! behind at the moment its last phase completed, so the result no longer
//! depends on when the search normalized: what is kept is the same
//! barrier history a whole forget would have left then, with the phases
//! completed since after it. Only before the earliest completed phase a
//! wait may still take (`BState::done`); not on a barrier a thread owes a
//! wait on (`TState::owes` names phases by number), nor on one of tokens
//! while an init abandoned a phase a register may name, nor in a model with
//! phase-with. The events on the barrier that belong to no phase of the
//! bmo (a wait that took none, an inval before the latest init) count as
//! inside every prefix. Phases after the cut are numbered as a whole forget
//! numbers them (`System::cut_bmo`). Soundness is the whole forget's
//! (docs/explorer.md, "History compaction"): each event forgotten passes
//! the same test, and everything before a forgotten event is closed.

use crate::semantics::System;
use crate::state::{BState, HKind, State, LAUNCH};
use rustc_hash::FxHashMap as HashMap;

/// An event's kept name after compaction (`None`: forgotten).
pub(super) type Rename<'a> = &'a dyn Fn(&(u32, u32)) -> Option<(u32, u32)>;
/// Whether an event may be forgotten with the events `inside` says go
/// with it.
pub(super) type Forgettable<'a> = &'a dyn Fn(usize, &dyn Fn(usize) -> bool) -> bool;

/// The bmo position of each modification of barrier `b`.
pub(super) fn bmo_positions(s: &State, b: usize) -> HashMap<(u32, u32), usize> {
    s.bmo[b].iter().enumerate().map(|(i, &k)| (k, i)).collect()
}

/// Where event `k` (thread, program-order index) of barrier `b`'s history
/// falls (`pos`: [`bmo_positions`]): the bmo position of its phase (a
/// modification's own position; a completed wait's, the position of its
/// phase's first member; a wait that took no phase of the bmo, such as a
/// parity wait on the phase before a fresh barrier's first, and an inval,
/// position 0, so that they go with any prefix, as they go with a whole
/// forget), `None` for an event outside every completed phase.
pub(super) fn phase_position(s: &State, pos: &HashMap<(u32, u32), usize>, k: (u32, u32)) -> Option<usize> {
    if let Some(&p) = pos.get(&k) {
        return Some(p);
    }
    match &s.hist[k.0 as usize][k.1 as usize].kind {
        // An inval of `b` comes before its latest init (an invalid barrier
        // is never forgotten), so before every cut: a cut waits for it to
        // be closed and forgets it, as a whole forget does. Kept while the
        // re-init went, it would make the launch init stand before it and
        // every later use look like a use after the inval.
        HKind::Inval => Some(0),
        HKind::Wait { participants, .. } => match participants.iter().find(|m| m.0 != LAUNCH) {
            Some(m) => pos.get(m).copied(),
            None => Some(0),
        },
        _ => None,
    }
}

/// [`phase_position`] of each of `events` (execution indices, named by
/// `by_id`) that has one.
pub(super) fn phase_positions(
    s: &State,
    b: usize,
    events: &[usize],
    by_id: &[Option<(u32, u32)>],
) -> HashMap<usize, usize> {
    let pos = bmo_positions(s, b);
    events
        .iter()
        .filter_map(|&e| by_id[e].and_then(|k| phase_position(s, &pos, k)).map(|p| (e, p)))
        .collect()
}

impl System<'_> {
    /// How many of barrier `b`'s cuts its history may be forgotten up to
    /// (module text), when it cannot be forgotten whole: those before its
    /// earliest completed phase a wait may still take; none where a thread
    /// owes a wait on `b` (debts name phases by number), on a barrier of
    /// tokens where an init abandoned a phase a register may name, or in a
    /// model with phase-with (a kept arrive of a later phase may execute
    /// before a forgotten wait, a pair that rule judges later: the whole
    /// forget keeps the barrier then, `open_phase_before_completed_wait`).
    pub(super) fn cuttable(&self, s: &State, b: usize) -> usize {
        let bar = &s.bars[b];
        if bar.cuts.is_empty()
            || self.p.model.rules.has(bc_models::Rule::PhaseWith)
            || self.an.mixed_waits[b]
            || (self.an.tokens[b] && !bar.abandoned.is_empty())
            || s.threads.iter().any(|th| th.owes.iter().any(|d| d.0 as usize == b))
        {
            return 0;
        }
        let first_kept = bar.done.iter().map(|ph| ph.number).min();
        bar.cuts
            .iter()
            .take_while(|c| first_kept.is_none_or(|n| c.2 < n))
            .count()
    }

    /// The longest prefix of `b`'s completed phases (an index into
    /// `BState::cuts`, below `cuttable`) whose events among `events` all
    /// pass `ok`, with those events; `None` if no prefix does or it holds
    /// no event. `at`: [`phase_positions`].
    pub(super) fn longest_cut(
        &self,
        s: &State,
        b: usize,
        cuttable: usize,
        events: &[usize],
        at: &HashMap<usize, usize>,
        ok: Forgettable<'_>,
    ) -> Option<(usize, Vec<usize>)> {
        let cuts = &s.bars[b].cuts;
        (0..cuttable).rev().find_map(|j| {
            let len = cuts[j].0 as usize;
            let inside = |e: usize| at.get(&e).is_some_and(|&p| p < len);
            let prefix: Vec<usize> = events.iter().copied().filter(|&e| inside(e)).collect();
            (!prefix.is_empty() && prefix.iter().all(|&e| ok(e, &inside))).then_some((j, prefix))
        })
    }

    /// Rewrites barrier `b`'s bmo `order` and state `bar` after its history
    /// up to cut `j` was forgotten: a launch init with the expected count
    /// right after that phase stands for it, and the phases after it keep
    /// their order. Their numbers are the whole forget's (`compact`): on a
    /// barrier of tokens they keep counting (`phase_base` is the first
    /// kept one); on one of parity waits the first kept one becomes 2 or
    /// 3, keeping every parity; elsewhere they count from 0. The cuts after
    /// `j` move with the bmo. `re` maps a kept event to its new name.
    pub(super) fn cut_bmo(&self, bar: &mut BState, order: &mut Vec<(u32, u32)>, b: usize, j: usize, re: Rename<'_>) {
        let (len, expected, number) = bar.cuts[j];
        // Nothing after the cut is forgotten (only the prefix's events and
        // events outside the bmo are), so old position `p` moves to
        // `1 + p - len` behind the launch init.
        let moved = |p: u32| 1 + p - len;
        let settled = moved(bar.settled_len);
        let first = number + 1;
        let renumber: Box<dyn Fn(u32) -> u32> = if self.an.tokens[b] {
            bar.phase_base = first;
            Box::new(|n| n)
        } else if self.an.token_barriers[b] {
            let p0 = 2 + first.wrapping_sub(bar.epoch_start) % 2;
            bar.phase_base = p0;
            bar.epoch_start = 0;
            Box::new(move |n: u32| n.wrapping_sub(first).wrapping_add(p0))
        } else {
            bar.epoch_start = 0;
            Box::new(move |n: u32| n.wrapping_sub(first))
        };
        let cuts: Vec<(u32, i64, u32)> = bar.cuts[j + 1..]
            .iter()
            .map(|&(l, x, n)| (moved(l), x, renumber(n)))
            .collect();
        let rest: Vec<(u32, u32)> = order[len as usize..].iter().filter_map(re).collect();
        assert_eq!(rest.len(), order.len() - len as usize, "a cut keeps the bmo after it");
        *order = std::iter::once((LAUNCH, b as u32)).chain(rest).collect();
        bar.base = Some(expected);
        bar.settled_len = settled;
        bar.cuts = cuts;
        for ph in bar.open.iter_mut().chain(bar.done.iter_mut()) {
            ph.number = renumber(ph.number);
        }
        bar.next_phase = renumber(bar.next_phase);
    }
}
