//! Phase-order canonicalization: the arrivals of one phase are kept sorted
//! by (thread, program order) instead of in the order they happened, so the
//! N! arrival orders of a phase meet in one state (docs/explorer.md).
//!
//! For barrier instances whose operations carry no expected-count update,
//! count (but one thread count written alike on every arrive of the
//! instance) or mask key, transaction count or token (tokens are fine on
//! a lockstep barrier, see fuse.rs; inits are fine: an init is no member
//! of a phase, and only a phase's contiguous stretch of the bmo is
//! permuted, so the count it set is met at the same member count; parity
//! waits read a phase's number and its members as a set), and that no thread reaches
//! through a joined-barrier group: then every order of a phase's members
//! gives the same counts and completes at the same member count (no proper
//! prefix of a phase completes it, whatever its order), and the rules read
//! the order of a phase's members only through executes-before.
//!
//! The order kept is the canonical one among the orders consistent with
//! executes-before: the least in (thread, program order) of the phase's
//! linear extensions. On an *isolated* instance - every thread that may
//! operate on it (its body names it, or its end may drop it) may operate
//! on no other barrier instance (a program's single barrier; each block's
//! `__syncthreads` barrier) - no member of a phase executes before another
//! member of another thread (that would need a wait, by a thread of the
//! barrier, so on the barrier itself, on a completed phase containing an
//! operation after the first member, and phases are contiguous in bmo), so
//! that order is the sorted one. On another instance (a producer/consumer
//! pair of named barriers) a member can execute before another through a
//! wait on the other barrier: executes-before over the history decides
//! (computed only when a phase is out of order). Any two interleavings of
//! a phase's arrivals that are consistent with executes-before meet in one
//! state.
//!
//! Thread counts that differ. A barrier whose thread-counted arrives write
//! different counts (`bar.arrive 1, 64` in one warp, `bar.sync 1, 32` in
//! another; each such phase is `ub(count-mismatch)`, and checking goes
//! on) is not sortable: an arrival sets its phase's count, the later
//! count wins, and a phase completes when its arrivals reach the count of
//! the latest one. So the order of a phase decides where it completes. It
//! decides nothing else: the count that holds after the phase's members
//! is the last member's, the rules read the members as a set (count
//! mismatch: two counts in one phase; arrive-twice: one thread twice) or
//! through executes-before, and the replay of the rule checker finds the
//! same phases in any order that completes at the same member. Such a
//! phase (one arrival per thread, every member a single thread-counted
//! arrival, its member count the arrivals recorded) is kept in the least
//! order, by (thread, program order), among those in which no proper
//! prefix completes it (position `p` holds no member of count `p`, the
//! last position of a completed phase aside) and whose last member has
//! the count of the phase's latest arrival, built greedily: at each
//! position the least member that may stand there and leaves the rest a
//! place each (each later position forbids one count, so Hall's condition
//! is that for every count some other member left has another), the
//! greatest member with the latest count kept last. The arrival order is
//! kept where no such order exists or it breaks
//! executes-before (checked on a barrier that is not isolated). The
//! orders of a phase's arrivals that reach the same members and count
//! then meet in one state: a phase of `a` arrivals of one count and `b`
//! of another, with the latest count, instead of every interleaving.

use crate::semantics::System;
use crate::state::{HKind, Members, Phase, State, LAUNCH};
use bc_graph::ArriveCount;

impl System<'_> {
    /// Sorts the arrivals of each phase of the sortable barriers, where
    /// sound (see above).
    pub(crate) fn canonicalize(&self, s: &mut State) {
        self.canonicalize_reusing(s, &mut None, None);
    }

    /// [`System::canonicalize`], with executes-before over the history
    /// kept in `cache` for a later call: computed once, when a phase of an
    /// instance that is not isolated is out of order, and reused by the
    /// next call on the same history, or on it renamed by `renamed` (new
    /// thread `k` is the cached history's thread `renamed[k]`; sorting
    /// leaves executes-before as it was). A caller that changes the
    /// history otherwise clears the cache.
    pub(crate) fn canonicalize_reusing(
        &self,
        s: &mut State,
        cache: &mut Option<crate::analysis::history::ExecutesBefore>,
        renamed: Option<&[usize]>,
    ) {
        let mut eb = Eb { cache, renamed };
        for b in 0..self.an.sortable.len() {
            if self.sorted_now(s, b) || self.an.count_keyed[b] {
                self.sort_phases(s, b, &mut eb);
            }
        }
    }

    /// Puts the arrivals of each phase of barrier `b` in canonical order
    /// (module text).
    fn sort_phases(&self, s: &mut State, b: usize, eb: &mut Eb) {
        let nphases = s.bars[b].open.iter().count() + s.bars[b].done.len();
        for i in 0..nphases {
            let is_open = i < s.bars[b].open.iter().count();
            let (members, arrivals) = {
                let bar = &s.bars[b];
                let ph = if is_open {
                    bar.open.as_ref()
                } else {
                    bar.done.get(i - bar.open.iter().count())
                };
                match ph {
                    Some(p) => (p.members.clone(), p.arrivals),
                    None => continue,
                }
            };
            // The phase record's instruction site: the least of its
            // arrives' (a drop sets none: a phase of a block's exit drops
            // had none in one order and the end pc in another), whatever
            // the order, one already sorted or in thread order too (the
            // first arrival's site would tell two orders apart: the
            // independence self-check caught it once a thread-counted
            // arrive was taken alone,
            // `cuda/named-phase-order-follows-executes-before`).
            let site = (members.iter())
                .filter(|&&(t, po)| t != LAUNCH && matches!(s.hist[t as usize][po as usize].kind, HKind::Arrive(..)))
                .map(|&(t, po)| (self.p.threads[t as usize].code.0, s.hist[t as usize][po as usize].pc))
                .min();
            if let Some(ph) = phase_mut(s, b, i) {
                ph.site = site;
            }
            // A sorted phase is in canonical order, except on a barrier of
            // counts that differ, where the least valid order may be
            // another (its last member's count is fixed).
            if members.len() < 2 || (!self.an.count_keyed[b] && members.windows(2).all(|w| w[0] <= w[1])) {
                continue;
            }
            let mut sorted = members.to_vec();
            sorted.sort_unstable();
            // The members sit in one contiguous run of bmo.
            let positions: Vec<usize> = s.bmo[b]
                .iter()
                .enumerate()
                .filter(|(_, k)| sorted.binary_search(k).is_ok())
                .map(|(j, _)| j)
                .collect();
            // In a phase order consistent with executes-before: the least
            // linear extension (by key, Kahn's algorithm taking the least
            // ready member each time). `sorted` stays the key-sorted set
            // for the lookups below; `order` is the order kept.
            let isolated = self.an.isolated[b];
            let mut extend = |run: &[(u32, u32)], s: &State| {
                let mut run = run.to_vec();
                run.sort_unstable();
                if isolated {
                    run
                } else {
                    let eb = eb.get(s);
                    least_extension(&run, |x, y| x.0 != y.0 && x.0 != LAUNCH && eb(x, y))
                }
            };
            let order = if self.an.count_keyed[b] {
                // Thread counts that differ (module text).
                let count = |k: (u32, u32)| match s.hist.get(k.0 as usize)?.get(k.1 as usize)?.kind {
                    HKind::Arrive(None, Some(ArriveCount::Threads(n)), 1) if k.0 != LAUNCH => Some(n),
                    _ => None,
                };
                if arrivals != members.len() as i64 {
                    continue;
                }
                let Some(order) = keyed_order(&members, count, is_open) else {
                    continue;
                };
                if !isolated {
                    let eb = eb.get(s);
                    let against =
                        (0..order.len()).any(|j| order[..j].iter().any(|&x| x.0 != order[j].0 && eb(order[j], x)));
                    if against {
                        continue;
                    }
                }
                order
            } else if self.an.segmented[b] {
                // A barrier with a transaction count: its transaction
                // operations, arrivals of `arrive.expect_tx` and anything
                // but a single plain arrival stay in place, and only the
                // runs of plain arrivals between them are sorted. Every
                // position of the phase then has the pending and
                // transaction counts it had, so the phase completes at
                // the same member, and executes-before between runs is as
                // it was.
                let movable = |k: &(u32, u32)| {
                    let h = &s.hist[k.0 as usize];
                    matches!(h[k.1 as usize].kind, HKind::Arrive(_, _, 1))
                        && !(k.1 > 0
                            && matches!(h[k.1 as usize - 1].kind, HKind::Tx(_))
                            && h[k.1 as usize - 1].pc == h[k.1 as usize].pc)
                };
                let mut order = Vec::with_capacity(members.len());
                let mut run: Vec<(u32, u32)> = Vec::new();
                for k in members.iter() {
                    if k.0 != LAUNCH && movable(k) {
                        run.push(*k);
                    } else {
                        order.extend(extend(&run, s));
                        run.clear();
                        order.push(*k);
                    }
                }
                order.extend(extend(&run, s));
                order
            } else {
                extend(&sorted, s)
            };
            if positions.len() != members.len() || positions.windows(2).any(|w| w[1] != w[0] + 1) {
                continue;
            }
            if order == members.to_vec() {
                continue;
            }
            for (j, k) in positions.iter().zip(&order) {
                s.bmo[b][*j] = *k;
            }
            let kept = Members::new(order);
            if let Some(ph) = phase_mut(s, b, i) {
                ph.members = kept.clone();
            }
            // Waits that took this phase list it sorted too, sharing the
            // record's list. A list that is the record's old one (shared,
            // or equal to it) is one; one whose first entry is no member is
            // none (the test in between sorts a copy).
            for evs in &mut s.hist {
                for ev in evs {
                    if let HKind::Wait { participants, .. } = &mut ev.kind {
                        if participants.len() != sorted.len() || sorted.binary_search(&participants[0]).is_err() {
                            continue;
                        }
                        let same = *participants == members || {
                            let mut p = participants.to_vec();
                            p.sort_unstable();
                            p == sorted
                        };
                        if same {
                            *participants = kept.clone();
                        }
                    }
                }
            }
        }
    }
}

/// Executes-before for [`System::canonicalize_reusing`]: the cache, and
/// the renaming from the cached history's threads.
struct Eb<'a, 'r> {
    cache: &'a mut Option<crate::analysis::history::ExecutesBefore>,
    renamed: Option<&'r [usize]>,
}

impl Eb<'_, '_> {
    /// Executes-before over `s`'s history, as a relation on its event
    /// keys.
    fn get(&mut self, s: &State) -> impl Fn((u32, u32), (u32, u32)) -> bool + '_ {
        if self.cache.is_none() {
            *self.cache = Some(crate::analysis::history::ExecutesBefore::of(s));
            self.renamed = None;
        }
        let eb = self.cache.as_ref().expect("just computed");
        let renamed = self.renamed;
        move |x: (u32, u32), y: (u32, u32)| {
            let old = |k: (u32, u32)| renamed.map_or(k, |r| (r[k.0 as usize] as u32, k.1));
            eb.eb(old(x), old(y))
        }
    }
}

/// The order kept for a phase of a barrier whose thread-counted arrives
/// write different counts (module text, "Thread counts that differ"):
/// `members` in the order they arrived, `count` each one's thread count
/// (`None` for any other member: the phase is left as it is), `open`
/// whether the phase is still open. `None` where no order is kept.
fn keyed_order(
    members: &[(u32, u32)],
    count: impl Fn((u32, u32)) -> Option<i64>,
    open: bool,
) -> Option<Vec<(u32, u32)>> {
    let n = members.len();
    let mut sorted = members.to_vec();
    sorted.sort_unstable();
    // One arrival per thread (two are `arrive-twice`, and would also need
    // their program order kept).
    if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    let ks: Vec<i64> = sorted.iter().map(|&k| count(k)).collect::<Option<_>>()?;
    // The phase's count is its latest arrival's: the member kept last has
    // that count.
    let last_k = count(*members.last()?)?;
    // Position `pos` (1-based) may hold a member of count `k` unless that
    // completes the phase there: only the last position of a completed
    // phase may.
    let allowed = |k: i64, pos: usize| k != pos as i64 || (!open && pos == n);
    let fits = |order: &[usize]| order.iter().enumerate().all(|(p, &i)| allowed(ks[i], p + 1));
    let arrived: Vec<usize> = members
        .iter()
        .map(|k| sorted.binary_search(k).expect("a member"))
        .collect();
    if !fits(&arrived) {
        // Not a phase the replay forms (compaction left part of it, say).
        return None;
    }
    // The greatest member with that count, so that a sorted order that
    // is valid stays as it is.
    let last = (0..n).rev().find(|&i| ks[i] == last_k)?;
    let mut left: Vec<usize> = (0..n).filter(|&i| i != last).collect();
    // The distinct counts, with how many members left have each.
    let mut tally: Vec<(i64, usize)> = Vec::new();
    for &i in &left {
        match tally.iter_mut().find(|(k, _)| *k == ks[i]) {
            Some((_, c)) => *c += 1,
            None => tally.push((ks[i], 1)),
        }
    }
    let mut order = Vec::with_capacity(n);
    for pos in 1..n {
        // The least member that may stand here and leaves the others a
        // place each: positions `pos + 1 .. n - 1` forbid one count each
        // (their own), so they can be filled exactly when, for every such
        // count, some other member left has another count (Hall's
        // condition: two or more positions are next to every member).
        let rest = left.len() - 1;
        let j = (0..left.len()).find(|&j| {
            let kj = ks[left[j]];
            allowed(kj, pos)
                && tally
                    .iter()
                    .filter(|&&(f, _)| f > pos as i64 && f < n as i64)
                    .all(|&(f, c)| {
                        let same = c - usize::from(kj == f);
                        rest > same
                    })
        })?;
        let i = left.remove(j);
        if let Some(t) = tally.iter_mut().find(|(k, _)| *k == ks[i]) {
            t.1 -= 1;
        }
        order.push(i);
    }
    order.push(last);
    if !fits(&order) {
        return None;
    }
    Some(order.into_iter().map(|i| sorted[i]).collect())
}

/// The least linear extension of `before` over `sorted` (sorted keys): at
/// each step the least member that no remaining member precedes.
fn least_extension(sorted: &[(u32, u32)], before: impl Fn((u32, u32), (u32, u32)) -> bool) -> Vec<(u32, u32)> {
    let k = sorted.len();
    let mut preds = vec![0usize; k];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (i, &x) in sorted.iter().enumerate() {
        for (j, &y) in sorted.iter().enumerate() {
            if i != j && before(x, y) {
                preds[j] += 1;
                succs[i].push(j);
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..k).filter(|&i| preds[i] == 0).collect();
    let mut out = Vec::with_capacity(k);
    while let Some(i) = ready.pop_first() {
        out.push(sorted[i]);
        for &j in &succs[i] {
            preds[j] -= 1;
            if preds[j] == 0 {
                ready.insert(j);
            }
        }
    }
    // A cycle cannot happen (executes-before is acyclic on a history the
    // search built); keep the members whole if it did.
    if out.len() != k {
        return sorted.to_vec();
    }
    out
}

/// Phase `i` of barrier `b` of `s`, counting the open one first, then the
/// completed ones kept.
fn phase_mut(s: &mut State, b: usize, i: usize) -> Option<&mut Phase> {
    let bar = &mut s.bars[b];
    let open_n = bar.open.iter().count();
    if i < open_n {
        bar.open.as_mut()
    } else {
        bar.done.get_mut(i - open_n)
    }
}
