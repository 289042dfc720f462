//! Join masks: sets of (thread, barrier) pairs, each standing for that
//! thread's current join on that barrier (a thread's mask: the joins that
//! execute before its current point; a phase's: those that execute before
//! one of its members). participates-in reads them: a wait is entitled to
//! a phase whose mask holds its own thread's join (docs/semantics.md).
//!
//! A pair is the number `barrier * threads + thread`, and a mask is the
//! sorted list of maximal runs of consecutive numbers it holds. Threads
//! are numbered block by block, so the joins of a block's threads on the
//! block's barrier - what a mask holds after a `__syncthreads` - are one
//! run, whatever the number of blocks and barriers: a mask costs what it
//! holds in runs, not threads x barriers bits (a kernel of 64 blocks of 64
//! threads with a barrier per block held 4,096 x 64 bits per thread, 128 MiB
//! a state). Runs are maximal, so equal sets have equal lists.

/// A set of (thread, barrier) pairs as sorted, disjoint, non-adjacent
/// half-open runs of pair numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JoinMask {
    runs: Vec<(u32, u32)>,
}

impl JoinMask {
    /// The number of the pair (thread `u`, barrier `b`) among `nt` threads.
    pub fn pair(nt: usize, u: usize, b: usize) -> u32 {
        (b * nt + u) as u32
    }

    /// The mask with these runs (as [`JoinMask::runs`] gave them).
    pub fn from_runs(runs: Vec<(u32, u32)>) -> JoinMask {
        debug_assert!(runs.iter().all(|&(s, e)| s < e));
        debug_assert!(runs.windows(2).all(|w| w[0].1 < w[1].0));
        JoinMask { runs }
    }

    /// The maximal runs, sorted.
    pub fn runs(&self) -> &[(u32, u32)] {
        &self.runs
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The index of the first run that ends after `i`.
    fn after(&self, i: u32) -> usize {
        self.runs.partition_point(|&(_, e)| e <= i)
    }

    pub fn get(&self, i: u32) -> bool {
        self.runs.get(self.after(i)).is_some_and(|&(s, _)| s <= i)
    }

    pub fn set(&mut self, i: u32) {
        let k = self.after(i);
        if self.runs.get(k).is_some_and(|&(s, _)| s <= i) {
            return;
        }
        let joins_prev = k > 0 && self.runs[k - 1].1 == i;
        let joins_next = self.runs.get(k).is_some_and(|&(s, _)| s == i + 1);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.runs[k - 1].1 = self.runs[k].1;
                self.runs.remove(k);
            }
            (true, false) => self.runs[k - 1].1 = i + 1,
            (false, true) => self.runs[k].0 = i,
            (false, false) => self.runs.insert(k, (i, i + 1)),
        }
    }

    pub fn clear(&mut self, i: u32) {
        let k = self.after(i);
        let Some(&(s, e)) = self.runs.get(k) else { return };
        if s > i {
            return;
        }
        match (s == i, e == i + 1) {
            (true, true) => {
                self.runs.remove(k);
            }
            (true, false) => self.runs[k].0 = i + 1,
            (false, true) => self.runs[k].1 = i,
            (false, false) => {
                self.runs[k].1 = i;
                self.runs.insert(k + 1, (i + 1, e));
            }
        }
    }

    /// Keeps only the pairs on barriers `keep` accepts, among `nt` threads
    /// (a barrier's pairs are consecutive: one pass over the runs, each
    /// cut at the barriers it spans).
    pub fn retain_barriers(&mut self, nt: usize, keep: impl Fn(usize) -> bool) {
        if self.runs.is_empty() || nt == 0 {
            return;
        }
        let nt = nt as u32;
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(self.runs.len());
        for &(s, e) in &self.runs {
            let mut at = s;
            while at < e {
                let b = at / nt;
                let end = e.min((b + 1) * nt);
                if keep(b as usize) {
                    match out.last_mut() {
                        Some(last) if last.1 == at => last.1 = end,
                        _ => out.push((at, end)),
                    }
                }
                at = end;
            }
        }
        self.runs = out;
    }

    /// Adds every pair of `o`.
    pub fn union_with(&mut self, o: &JoinMask) {
        if o.runs.is_empty() || o.runs == self.runs {
            return;
        }
        if self.runs.is_empty() {
            self.runs.clone_from(&o.runs);
            return;
        }
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(self.runs.len() + o.runs.len());
        let (mut a, mut b) = (self.runs.iter().peekable(), o.runs.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) => {
                    if x.0 <= y.0 {
                        a.next();
                        x
                    } else {
                        b.next();
                        y
                    }
                }
                (Some(&&x), None) => {
                    a.next();
                    x
                }
                (None, Some(&&y)) => {
                    b.next();
                    y
                }
                (None, None) => break,
            };
            match out.last_mut() {
                Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
                _ => out.push(next),
            }
        }
        self.runs = out;
    }

    /// Every pair, in order.
    pub fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(s, e)| s..e)
    }

    /// The heap bytes it holds.
    pub fn bytes(&self) -> usize {
        self.runs.capacity() * std::mem::size_of::<(u32, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use super::JoinMask;
    use std::collections::BTreeSet;

    /// Against a `BTreeSet` on a fixed pseudo-random sequence of
    /// operations: the same answers, and runs that stay maximal.
    #[test]
    fn a_mask_is_the_set_of_its_pairs() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as u32
        };
        for _ in 0..200 {
            let (mut m, mut o) = (JoinMask::default(), JoinMask::default());
            let (mut ms, mut os) = (BTreeSet::new(), BTreeSet::new());
            for _ in 0..60 {
                let i = next(48);
                match next(6) {
                    0 | 1 => {
                        m.set(i);
                        ms.insert(i);
                    }
                    2 => {
                        m.clear(i);
                        ms.remove(&i);
                    }
                    3 => {
                        o.set(i);
                        os.insert(i);
                    }
                    4 => {
                        m.union_with(&o);
                        ms.extend(os.iter().copied());
                    }
                    _ => {
                        // Barriers of 5 threads' pairs; drop those `k` divides.
                        let k = next(3) as usize + 2;
                        m.retain_barriers(5, |b| b % k != 0);
                        ms.retain(|&i| !(i as usize / 5).is_multiple_of(k));
                    }
                }
                assert_eq!(m.ones().collect::<BTreeSet<_>>(), ms);
                for i in 0..50 {
                    assert_eq!(m.get(i), ms.contains(&i));
                }
                let rebuilt = JoinMask::from_runs(m.runs().to_vec());
                assert_eq!(rebuilt, m);
                assert!(m.runs().windows(2).all(|w| w[0].1 < w[1].0), "{:?}", m.runs());
                assert!(m.runs().iter().all(|&(s, e)| s < e));
            }
        }
    }
}
