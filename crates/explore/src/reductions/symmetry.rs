//! Symmetry reduction over interchangeable threads (docs/explorer.md).
//!
//! Threads are interchangeable when they run the same body (the same code,
//! or for explicit threads an identical one) at the same place (block,
//! cluster, kernel, cooperative launch, barrier and location instances; the
//! lane too when the body uses a lane mask), their body observes the same
//! values of the builtins (`tid`, `lane`, `warp`, `bid`, `ntid`: the
//! thread classes of `bc_graph::classes`, so `if tid == 0` splits a block
//! into thread 0 and the rest instead of ending symmetry), and no
//! assertion names them.
//! After each step the threads of each such class are sorted by their own
//! state, and every reference to a thread index in the state (events,
//! participants, bmo, join masks, phase records, summary edges) is renamed
//! accordingly. Renaming interchangeable threads maps executions to
//! executions with the same verdict, so one representative per orbit is
//! enough. Witnesses name the representative's threads.

use crate::semantics::System;
use crate::state::budget::Budget;
use crate::state::Choice;
use crate::state::{JoinMask, MapLists, State, Status, TState, LAUNCH};
use bc_graph::bits::Bits;
use bc_graph::*;

/// Threads renamed between two checks of the budget.
const RENAME_CHECK: usize = 64;

/// The indices of the set bits of `m`, in increasing order.
fn ones(m: &Bits) -> impl Iterator<Item = usize> + '_ {
    m.as_words().iter().enumerate().flat_map(|(w, &word)| {
        let mut x = word;
        std::iter::from_fn(move || {
            (x != 0).then(|| {
                let i = w * 64 + x.trailing_zeros() as usize;
                x &= x - 1;
                i
            })
        })
    })
}

impl System<'_> {
    /// Sorts each class of interchangeable threads by their own state;
    /// returns the renaming (new index -> old index) when it is not the
    /// identity. `budget`: checked while renaming (see [`System::rename`]);
    /// `None` when replaying a witness.
    pub(crate) fn symmetrize(&self, s: &mut State, budget: Option<&Budget>) -> Option<Vec<usize>> {
        if self.an.sym_classes.is_empty() {
            return None;
        }
        let nt = s.threads.len();
        // perm[new] = old
        let mut perm: Vec<usize> = (0..nt).collect();
        // Order threads by their own state, without references to other
        // threads (no allocation: this runs for every new state).
        let ev_key = |e: &crate::state::HEvent| {
            let target = match e.target {
                Target::Barrier(b) => b.0,
                Target::Loc(l) => l.0 | 1 << 31,
                Target::None => u32::MAX,
            };
            (e.pc, e.kind.tag(), target)
        };
        let cmp = |&a: &usize, &b: &usize| {
            let (x, y) = (&s.threads[a], &s.threads[b]);
            (x.pc, x.status as u8, x.started)
                .cmp(&(y.pc, y.status as u8, y.started))
                .then_with(|| x.regs.cmp(&y.regs))
                .then_with(|| x.joined.cmp(&y.joined))
                .then_with(|| x.owes.cmp(&y.owes))
                .then_with(|| s.hist[a].iter().map(ev_key).cmp(s.hist[b].iter().map(ev_key)))
        };
        // Threads the key above ties may still differ in where their
        // barrier events stand in bmo (which phase each arrive took, in
        // what order): two states that differ by a renaming of such
        // threads would otherwise stay two states. Their bmo positions,
        // computed only when such a tie occurs, break it (see
        // [`bmo_positions`]).
        let mut positions: Option<Vec<Vec<u32>>> = None;
        let mut changed = false;
        for class in &self.an.sym_classes {
            let mut sorted = class.clone();
            sorted.sort_by(cmp);
            let tied = sorted.windows(2).any(|w| {
                cmp(&w[0], &w[1]).is_eq() && s.hist[w[0]].iter().any(|e| matches!(e.target, Target::Barrier(_)))
            });
            if tied {
                let pos = positions.get_or_insert_with(|| bmo_positions(s));
                sorted.sort_by(|a, b| cmp(a, b).then_with(|| pos[*a].cmp(&pos[*b])));
            }
            for (slot, &old) in class.iter().zip(&sorted) {
                if perm[*slot] != old {
                    changed = true;
                }
                perm[*slot] = old;
            }
        }
        if !changed {
            return None;
        }
        self.rename(s, &perm, budget);
        Some(perm)
    }

    /// Renames every thread index in `s`: thread `perm[new]` becomes `new`.
    ///
    /// Renaming the join masks of thousands of threads takes long: during
    /// the search the `budget` is checked every [`RENAME_CHECK`] threads,
    /// and when it has halted the search the renaming stops part way (the
    /// state is then discarded). A witness replay passes no budget and
    /// always renames in full.
    fn rename(&self, s: &mut State, perm: &[usize], budget: Option<&Budget>) {
        let r = Renaming::new(perm);
        let mut old_threads = std::mem::take(&mut s.threads);
        s.threads = perm
            .iter()
            .map(|&o| std::mem::replace(&mut old_threads[o], empty_thread()))
            .collect();
        for (i, th) in s.threads.iter_mut().enumerate() {
            if i % RENAME_CHECK == RENAME_CHECK - 1 && budget.is_some_and(|b| b.check().is_some()) {
                return;
            }
            th.jmask = r.mask(&th.jmask);
        }
        r.rename_rest(s);
    }
    /// Choices of threads that are interchangeable *in this state* with a
    /// thread stepped already lead to the same states up to renaming: drops
    /// them. Returns the kept choices and, per kept choice, the threads
    /// whose choices it stands for (their edges in the state graph go where
    /// its edge goes, so fairness sees every thread).
    ///
    /// Threads of a symmetry class with equal own state form a group; the
    /// group is interchangeable when a transposition and a cycle of its
    /// members (which generate every permutation of it) leave the state
    /// unchanged up to the phase-order canonical form (`canonical`).
    ///
    /// `budget`: checked before each group; when it has halted the search
    /// the choices come back unpruned (the expansion stops).
    pub(crate) fn prune_symmetric(
        &self,
        s: &State,
        choices: Vec<Choice>,
        budget: &Budget,
        canonical: &dyn Fn(&mut State),
    ) -> (Vec<Choice>, Vec<Vec<u32>>) {
        let n = choices.len();
        if self.an.sym_classes.is_empty() || n < 2 {
            return (choices, vec![Vec::new(); n]);
        }
        // Representative thread of each thread (itself when not merged).
        let mut rep: Vec<usize> = (0..s.threads.len()).collect();
        for class in &self.an.sym_classes {
            let mut rest: Vec<usize> = class
                .iter()
                .copied()
                .filter(|&t| choices.iter().any(|c| c.thread as usize == t))
                .collect();
            while let Some(&first) = rest.first() {
                if budget.check().is_some() {
                    // The expansion stops: the choices do not matter.
                    return (choices, vec![Vec::new(); n]);
                }
                // (A partition, not `retain` with `contains`: T^2 a state.)
                let (group, others): (Vec<usize>, Vec<usize>) =
                    rest.iter().partition(|&&u| self.own_equal(s, first, u));
                rest = others;
                if group.len() < 2 || !self.group_symmetric(s, &group, budget, canonical) {
                    continue;
                }
                for &u in &group[1..] {
                    rep[u] = first;
                }
            }
        }
        let mut kept = Vec::new();
        let mut twins: Vec<Vec<u32>> = Vec::new();
        for c in &choices {
            let t = c.thread as usize;
            if rep[t] == t {
                kept.push(*c);
                twins.push(Vec::new());
            }
        }
        for c in &choices {
            let t = c.thread as usize;
            if rep[t] != t {
                if let Some(i) = kept
                    .iter()
                    .position(|k| k.thread as usize == rep[t] && k.phase == c.phase)
                {
                    twins[i].push(c.thread);
                } else {
                    kept.push(*c);
                    twins.push(Vec::new());
                }
            }
        }
        (kept, twins)
    }

    /// Threads `a` and `b` have equal own state (registers, pc, status,
    /// joins) and equal event kinds.
    fn own_equal(&self, s: &State, a: usize, b: usize) -> bool {
        let (x, y) = (&s.threads[a], &s.threads[b]);
        x.pc == y.pc
            && x.status == y.status
            && x.started == y.started
            && x.regs == y.regs
            && x.joined == y.joined
            && x.owes == y.owes
            && s.hist[a].len() == s.hist[b].len()
            && s.hist[a].iter().zip(&s.hist[b]).all(|(e, f)| {
                e.pc == f.pc
                    && e.target == f.target
                    && std::mem::discriminant(&e.kind) == std::mem::discriminant(&f.kind)
            })
    }

    /// Whether renaming the members of `group` among themselves leaves `s`
    /// unchanged up to the phase-order canonical form.
    ///
    /// The threads are compared in place ([`Renaming::threads_fixed`]: the
    /// group's own states are equal, and a join mask's bits change only at
    /// the moved threads, T masks of T bits each); the rest of the state
    /// is renamed and canonicalized on a copy without the threads, whose
    /// canonical form does not read them, and compared with `s`'s. This is
    /// exactly `canonicalize(rename(s)) == s` without copying the masks.
    fn group_symmetric(&self, s: &State, group: &[usize], budget: &Budget, canonical: &dyn Fn(&mut State)) -> bool {
        let nt = s.threads.len();
        let fixed = |perm: &[usize]| {
            let r = Renaming::new(perm);
            if !r.threads_fixed(s) || budget.check().is_some() {
                return false;
            }
            let mut c = State {
                threads: Vec::new(),
                mem: Vec::new(),
                bars: s.bars.clone(),
                hist: s.hist.clone(),
                bmo: s.bmo.clone(),
                launched: Vec::new(),
                streams: Vec::new(),
                extra: s.extra.clone(),
            };
            r.rename_rest(&mut c);
            canonical(&mut c);
            c.hist == s.hist && c.bars == s.bars && c.bmo == s.bmo && c.extra == s.extra
        };
        let mut swap: Vec<usize> = (0..nt).collect();
        swap.swap(group[0], group[1]);
        if !fixed(&swap) {
            return false;
        }
        if group.len() > 2 {
            let mut cycle: Vec<usize> = (0..nt).collect();
            for (i, &g) in group.iter().enumerate() {
                cycle[g] = group[(i + 1) % group.len()];
            }
            if !fixed(&cycle) {
                return false;
            }
        }
        true
    }
}

/// A placeholder thread (moved out while renaming).
/// Per thread, the bmo positions of its barrier events in program order
/// (each as the barrier and the index of the entry in its bmo). A renaming
/// of threads leaves every entry where it is, so the positions are a key
/// that moves with the thread: sorting tied threads by it puts two states
/// that differ only by a renaming of them into one order. Within a phase
/// that phase-order canonicalization keeps sorted by thread, the order of
/// the positions is the threads' own order, which the sort keeps, so the
/// phases stay sorted.
fn bmo_positions(s: &State) -> Vec<Vec<u32>> {
    let mut at: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); s.threads.len()];
    for (b, list) in s.bmo.iter().enumerate() {
        for (i, &(t, po)) in list.iter().enumerate() {
            if let Some(v) = at.get_mut(t as usize) {
                v.push((po, b as u32, i as u32));
            }
        }
    }
    at.into_iter()
        .map(|mut v| {
            v.sort_unstable();
            v.into_iter().flat_map(|(_, b, i)| [b, i]).collect()
        })
        .collect()
}

fn empty_thread() -> TState {
    TState {
        pc: 0,
        status: Status::Done,
        regs: Vec::new(),
        jmask: JoinMask::default(),
        joined: Vec::new(),
        owes: Vec::new(),
        started: false,
    }
}

/// A renaming of threads: thread `perm[new]` becomes `new`.
struct Renaming {
    perm: Vec<usize>,
    /// `inv[old] = new`.
    inv: Vec<usize>,
    nt: usize,
    /// The threads it moves, as sorted maximal runs of thread indices (a
    /// renaming within a class of a block's threads moves one run).
    moved: Vec<(u32, u32)>,
    /// How many threads it moves.
    nmoved: u32,
}

impl Renaming {
    fn new(perm: &[usize]) -> Renaming {
        let nt = perm.len();
        let mut inv = vec![0usize; nt];
        for (new, &old) in perm.iter().enumerate() {
            inv[old] = new;
        }
        let mut moved: Vec<(u32, u32)> = Vec::new();
        for u in (0..nt).filter(|&u| inv[u] != u) {
            let u = u as u32;
            match moved.last_mut() {
                Some(last) if last.1 == u => last.1 = u + 1,
                _ => moved.push((u, u + 1)),
            }
        }
        let nmoved = moved.iter().map(|&(s, e)| e - s).sum();
        Renaming {
            perm: perm.to_vec(),
            inv,
            nt,
            moved,
            nmoved,
        }
    }

    fn thread(&self, t: u32) -> u32 {
        if t == LAUNCH {
            LAUNCH
        } else {
            self.inv[t as usize] as u32
        }
    }

    fn key(&self, k: (u32, u32)) -> (u32, u32) {
        if k.0 == LAUNCH {
            k
        } else {
            (self.thread(k.0), k.1)
        }
    }

    /// Whether the renaming leaves join mask `m` as it is: on each
    /// barrier, `m` holds the joins of all of the moved threads or of none
    /// (the renaming maps the moved threads onto themselves). The join
    /// masks after a barrier phase hold every thread of the block, and
    /// visiting their pairs each would cost T^2 a state.
    fn keeps(&self, m: &JoinMask) -> bool {
        if self.nmoved == 0 || m.is_empty() {
            return true;
        }
        let nt = self.nt as u32;
        // Per barrier segment [b * nt, (b + 1) * nt) the mask touches, the
        // moved threads it holds.
        let mut seg = u32::MAX;
        let mut held = 0u32;
        let mut ok = true;
        let close = |held: u32| held == 0 || held == self.nmoved;
        for &(s, e) in m.runs() {
            let mut at = s;
            while at < e {
                let b = at / nt;
                let end = e.min((b + 1) * nt);
                if b != seg {
                    if seg != u32::MAX {
                        ok &= close(held);
                    }
                    seg = b;
                    held = 0;
                }
                let (lo, hi) = (at - b * nt, end - b * nt);
                for &(ms, me) in &self.moved {
                    let (x, y) = (ms.max(lo), me.min(hi));
                    if x < y {
                        held += y - x;
                    }
                }
                at = end;
            }
            if !ok {
                return false;
            }
        }
        ok && close(held)
    }

    /// A join mask renamed: pair (`u`, `b`) becomes (`inv[u]`, `b`).
    fn mask(&self, m: &JoinMask) -> JoinMask {
        if self.keeps(m) {
            return m.clone();
        }
        let nt = self.nt as u32;
        let mut out = JoinMask::default();
        for i in m.ones() {
            let (b, u) = (i / nt, i % nt);
            out.set(b * nt + self.inv[u as usize] as u32);
        }
        out
    }

    /// Whether `self.mask(m) == *n` (`same`: `m` and `n` are one mask).
    fn mask_maps_to(&self, m: &JoinMask, n: &JoinMask, same: bool) -> bool {
        if self.keeps(m) {
            return same || m == n;
        }
        self.mask(m) == *n
    }

    /// Whether renaming leaves the threads as they are: thread `new` gets
    /// `perm[new]`'s own state, which must equal its own, and its renamed
    /// join mask.
    fn threads_fixed(&self, s: &State) -> bool {
        (0..self.nt).all(|u| {
            let o = self.perm[u];
            let (x, y) = (&s.threads[o], &s.threads[u]);
            (o == u
                || (x.pc == y.pc
                    && x.status == y.status
                    && x.started == y.started
                    && x.regs == y.regs
                    && x.joined == y.joined
                    && x.owes == y.owes))
                && self.mask_maps_to(&x.jmask, &y.jmask, o == u)
        })
    }

    /// A set of threads renamed (`Phase::bound`, `Phase::strays`).
    fn bound(&self, m: &Bits) -> Bits {
        let mut out = Bits::new(self.nt);
        for u in ones(m).take_while(|&u| u < self.nt) {
            out.set(self.inv[u]);
        }
        out
    }

    /// Renames everything but the threads: histories (moved, and their
    /// participant lists), bmo, phase records and summary edges.
    fn rename_rest(&self, s: &mut State) {
        let mut old_hist = std::mem::take(&mut s.hist);
        s.hist = self.perm.iter().map(|&o| std::mem::take(&mut old_hist[o])).collect();
        // Each shared participant list once (`state::Members`).
        let mut lists = MapLists::new(|l: &[(u32, u32)]| l.iter().map(|&k| self.key(k)).collect());
        for evs in &mut s.hist {
            for ev in evs {
                if let crate::state::HKind::Wait { participants, .. } = &mut ev.kind {
                    lists.apply(participants);
                }
            }
        }
        for order in &mut s.bmo {
            for k in order.iter_mut() {
                *k = self.key(*k);
            }
        }
        for bar in &mut s.bars {
            for ph in bar.open.iter_mut().chain(bar.done.iter_mut()) {
                lists.apply(&mut ph.members);
                ph.mask = self.mask(&ph.mask);
                ph.bound = self.bound(&ph.bound);
                ph.strays = self.bound(&ph.strays);
                if !ph.vals.is_empty() {
                    for v in &mut ph.vals {
                        v.thread = self.thread(v.thread);
                    }
                    ph.vals.sort_unstable_by_key(|v| v.thread);
                }
            }
        }
        for f in &mut s.extra {
            for k in f.sources.iter_mut().chain(f.targets.iter_mut()) {
                *k = self.key(*k);
            }
            f.sources.sort_unstable();
            f.targets.sort_unstable();
        }
        // Fans commute with renaming (`state::fans`): sorted again, they
        // are the canonical fans of the renamed edges.
        s.extra.sort_unstable_by(|a, b| a.sources.cmp(&b.sources));
    }
}
