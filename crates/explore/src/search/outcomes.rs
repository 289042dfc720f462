//! Outcome sets (`check --outcomes`): every way an execution of the model
//! can end, as a program (or a GPU harness) observes it, with how many
//! distinct end configurations reach each.
//!
//! What is observed is [`Program::observables`] (one definition, shared
//! with the hardware harness). An execution ends in one of three classes:
//! - *final*: every thread finished (status done, or a kernel never
//!   launched, as the explorer's `at_end` reads an end state); the
//!   outcome is the observables' values;
//! - *deadlock*: an end state where some thread is stuck at a barrier wait
//!   forever, or a fair cycle in which one is ("Termination and forward
//!   progress" in docs/semantics.md);
//! - *nontermination*: an end state where threads are blocked forever but
//!   none at a wait (they spin), or a fair cycle with no wait stuck.
//!
//! **Counts.** A stored state also holds the execution so far in the
//! formal model's terms (events, bmo, participants), and every reduction
//! (history compaction, phase-order canonicalization, completed-wait
//! fusion, symmetry) changes which histories end states keep, so the
//! number of distinct end states (`stats.executions`) depends on the
//! reductions. What none of them changes is the *end configuration*: each
//! thread's registers (all of them, hidden counters and tokens included),
//! whether it finished or where it is blocked (its pc), and every
//! location's value. The count of an outcome is the number of distinct end
//! configurations with its values; for deadlock and nontermination, the
//! number of distinct end configurations (stuck threads and their pcs
//! included) showing it, and 1 when only fair cycles show it (the state
//! graph's components depend on the reductions, so they are not counted).
//!
//! **Symmetry.** With symmetry reduction one representative of each orbit
//! of interchangeable threads is stored. An end configuration is put in a
//! canonical form (the members of each class of interchangeable threads
//! sorted by their own configuration), so configurations of one orbit are
//! collected once, then expanded over the orbit: the distinct arrangements
//! of a class's members over its positions are exactly the distinct
//! configurations a search without symmetry reaches (it reaches every
//! renaming of a reachable configuration). Only the arrangements of the
//! members' *observed* values are enumerated (each is an outcome to list);
//! how many distinct configurations each stands for is a product of
//! multinomial coefficients.
//!
//! **Budget.** An orbit can be far larger than the search that found it
//! (`kernel threads=12 { r = fetch_add x, 1 }`: 13 states, 479,001,600
//! outcomes), so the expansion runs under the search's budget: each
//! outcome listed is charged (with what the report holds of it), and the
//! deadline and the memory bound are checked as arrangements are
//! enumerated. At a limit every end configuration the search stored still
//! lists its own arrangement, and the set is partial like that of any
//! stopped search.

use crate::state::answer::Stop;
use crate::state::budget::Budget;
use crate::state::{State, Status};
use bc_graph::{Observable, Program};
use std::collections::{BTreeMap, BTreeSet};

/// How an execution ends, as observed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OutcomeKind {
    /// Every thread finished: the observables' final values, aligned with
    /// [`Outcomes::observables`].
    Final(Vec<i64>),
    /// Some thread waits on a barrier forever.
    Deadlock,
    /// Some thread never finishes, none of them stuck at a wait.
    Nontermination,
}

/// One outcome and how many distinct end configurations reach it (see the
/// module documentation for what is counted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutcomeClass {
    pub kind: OutcomeKind,
    pub executions: u64,
}

/// The outcome set of a test: finals in lexicographic order of their
/// values, then deadlock, then nontermination. The same for any number of
/// jobs and any reductions. Partial when the search stopped at a limit
/// (the `Outcome`'s `stop`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcomes {
    /// The names of [`Program::observables`], in its order.
    pub observables: Vec<String>,
    pub classes: Vec<OutcomeClass>,
}

/// The class of an end state, before its values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum End {
    Final,
    Deadlock,
    Nontermination,
}

/// One thread at an end state, as a program can see it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct ThreadEnd {
    /// `None` when finished (done, or never launched), else the pc it is
    /// blocked at.
    at: Option<u32>,
    launched: bool,
    regs: Vec<i64>,
}

/// An end configuration in canonical form (each symmetry class sorted).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct EndConfig {
    end: End,
    threads: Vec<ThreadEnd>,
    mem: Vec<i64>,
}

impl EndConfig {
    /// The end configuration of end state `s`, its symmetry classes
    /// (`classes`, thread positions) sorted. What the hardware does for
    /// the user is left out: the copy agents' threads, and the issuers'
    /// async-group ages (which agent took which copy is the explorer's
    /// bookkeeping, not an outcome).
    pub(crate) fn of(p: &bc_graph::Program, s: &State, end: End, classes: &[Vec<usize>]) -> EndConfig {
        let mut threads: Vec<ThreadEnd> = s
            .threads
            .iter()
            .zip(&p.threads)
            .map(|(t, info)| {
                if info.kind == bc_graph::ThreadKind::Copy {
                    return ThreadEnd::default();
                }
                let names = &p.codes[info.code.index()].regs;
                ThreadEnd {
                    at: matches!(t.status, Status::Running).then_some(t.pc),
                    launched: !matches!(t.status, Status::NotLaunched),
                    regs: (t.regs.iter().zip(names))
                        .map(|(&v, n)| if n.starts_with("age@") { 0 } else { v })
                        .collect(),
                }
            })
            .collect();
        for class in classes {
            let mut members: Vec<ThreadEnd> = class.iter().map(|&t| std::mem::take(&mut threads[t])).collect();
            members.sort();
            for (&t, m) in class.iter().zip(members) {
                threads[t] = m;
            }
        }
        EndConfig {
            end,
            threads,
            mem: s.mem.clone(),
        }
    }

    /// Bytes it holds (for the memory budget).
    pub(crate) fn bytes(&self) -> u64 {
        (std::mem::size_of::<EndConfig>()
            + self.mem.len() * 8
            + self
                .threads
                .iter()
                .map(|t| std::mem::size_of::<ThreadEnd>() + t.regs.len() * 8)
                .sum::<usize>()) as u64
    }
}

/// The multinomial coefficient `(sum of counts)! / prod(count!)`,
/// saturating at `u64::MAX`.
fn multinomial(counts: impl IntoIterator<Item = usize>) -> u64 {
    let mut total: u128 = 1;
    let mut n: u128 = 0;
    for k in counts {
        // Multiply by binomial(n + k, k), one factor at a time (each
        // partial product is itself a binomial coefficient, so exact).
        for i in 1..=k as u128 {
            n += 1;
            total = total.saturating_mul(n) / i;
            if total > u64::MAX as u128 {
                return u64::MAX;
            }
        }
    }
    total as u64
}

/// How many times each distinct item occurs in a sorted slice.
fn runs<T: PartialEq>(sorted: &[T]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for (i, x) in sorted.iter().enumerate() {
        if i > 0 && sorted[i - 1] == *x {
            *out.last_mut().expect("a run started") += 1;
        } else {
            out.push(1);
        }
    }
    out
}

/// Rearranges `v` into the next permutation in lexicographic order;
/// false (and `v` sorted) after the last.
fn next_permutation(v: &mut [usize]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        v.reverse();
        return false;
    };
    let j = (i..v.len())
        .rev()
        .find(|&j| v[j] > v[i - 1])
        .expect("a larger element follows");
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// The bytes the report holds per observed value of an outcome, charged
/// with the outcome itself: the JSON wire form copies the observable's
/// name into each outcome (a `String` and its heap block) beside the
/// number, and either format renders the pair as text.
const REPORT_BYTES_PER_VALUE: u64 = 96;

/// The bytes an outcome with `n` values holds in the set: its map entry
/// (key, count and the tree's share of a node) and its values.
fn outcome_bytes(n: usize) -> u64 {
    (std::mem::size_of::<OutcomeKind>() + 8 + 16) as u64 + n as u64 * (8 + REPORT_BYTES_PER_VALUE)
}

/// How many arrangements are listed between two checks of the budget.
const CHECK_EVERY: u32 = 256;

/// The share of the time left that the expansion may take: the report of
/// the outcomes listed takes 5 (text) to 10 (JSON) times as long to render
/// as listing them (measured on `kernel threads=10 { r = fetch_add x, 1 }`),
/// and the command should end near its deadline, not ten deadlines later.
const EXPANSION_SHARE: u32 = 12;

/// The outcome set of a search: its end configurations (canonical, each
/// once) expanded over the symmetry `classes`, and the kinds fair cycles
/// showed. The expansion is charged to `budget` and ends at its limits
/// (see the module documentation): then the set is partial and the stop
/// is returned with it.
pub(crate) fn outcome_set<'a>(
    p: &Program,
    classes: &[Vec<usize>],
    configs: impl IntoIterator<Item = &'a EndConfig>,
    cycles: &BTreeSet<End>,
    budget: &Budget,
) -> (Outcomes, Option<Stop>) {
    let observables = p.observables();
    let mut counts: BTreeMap<OutcomeKind, u64> = BTreeMap::new();
    // What the listed outcomes hold, released when the set is handed on
    // (the caller's report holds it from there).
    let mut held = budget.hold(0);
    let mut add = |kind: OutcomeKind, n: u64| {
        let c = match counts.entry(kind) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                held.add(outcome_bytes(match e.key() {
                    OutcomeKind::Final(v) => v.len(),
                    _ => 0,
                }));
                e.insert(0)
            }
        };
        *c = c.saturating_add(n);
    };
    let mut stopped: Option<Stop> = None;
    let mut since_check = 0u32;
    let until = budget
        .time_left()
        .map(|left| std::time::Instant::now() + left / EXPANSION_SHARE);
    let check = || {
        if until.is_some_and(|u| std::time::Instant::now() >= u) {
            budget.halt(Stop::Timeout);
        }
        budget.check()
    };
    // Per thread position: its class and its place in it.
    let mut class_of: Vec<Option<(usize, usize)>> = vec![None; p.threads.len()];
    for (ci, class) in classes.iter().enumerate() {
        for (k, &t) in class.iter().enumerate() {
            class_of[t] = Some((ci, k));
        }
    }
    // Per class: the observed registers of its members (identical bodies
    // have the same ones), in register order.
    let class_regs: Vec<Vec<usize>> = classes
        .iter()
        .map(|class| {
            observables
                .iter()
                .filter_map(|(o, _)| match o {
                    Observable::Reg(t, r) if t.index() == class[0] => Some(r.index()),
                    _ => None,
                })
                .collect()
        })
        .collect();
    // Where each observable's value comes from: a register of a thread in
    // no class, the `j`-th observed register of class member `k`, memory.
    enum Src {
        Fixed(usize, usize),
        Member(usize, usize, usize),
        Mem(usize),
    }
    let srcs: Vec<Src> = observables
        .iter()
        .map(|(o, _)| match *o {
            Observable::Loc(l) => Src::Mem(l.index()),
            Observable::Reg(t, r) => match class_of[t.index()] {
                None => Src::Fixed(t.index(), r.index()),
                Some((ci, k)) => {
                    let j = class_regs[ci]
                        .iter()
                        .position(|&x| x == r.index())
                        .expect("a class member's observed register");
                    Src::Member(ci, k, j)
                }
            },
        })
        .collect();
    for c in configs {
        let orbit = |c: &EndConfig| -> u64 {
            classes.iter().fold(1u64, |acc, class| {
                let mut members: Vec<&ThreadEnd> = class.iter().map(|&t| &c.threads[t]).collect();
                members.sort();
                acc.saturating_mul(multinomial(runs(&members)))
            })
        };
        match c.end {
            End::Deadlock => add(OutcomeKind::Deadlock, orbit(c)),
            End::Nontermination => add(OutcomeKind::Nontermination, orbit(c)),
            End::Final => {
                // Per class: its members grouped by observed values, each
                // group's weight (distinct configurations per arrangement)
                // and its observed values.
                let mut weight = 1u64;
                let mut groups: Vec<Vec<Vec<i64>>> = Vec::new();
                let mut initial: Vec<Vec<usize>> = Vec::new();
                for (ci, class) in classes.iter().enumerate() {
                    let mut members: Vec<(Vec<i64>, &ThreadEnd)> = class
                        .iter()
                        .map(|&t| {
                            let th = &c.threads[t];
                            (class_regs[ci].iter().map(|&r| th.regs[r]).collect(), th)
                        })
                        .collect();
                    members.sort();
                    let mut seen: Vec<Vec<i64>> = Vec::new();
                    let mut arrangement = Vec::new();
                    let mut start = 0;
                    while start < members.len() {
                        let end = (start..members.len())
                            .find(|&i| members[i].0 != members[start].0)
                            .unwrap_or(members.len());
                        let fulls: Vec<&ThreadEnd> = members[start..end].iter().map(|m| m.1).collect();
                        weight = weight.saturating_mul(multinomial(runs(&fulls)));
                        arrangement.extend(std::iter::repeat_n(seen.len(), end - start));
                        seen.push(members[start].0.clone());
                        start = end;
                    }
                    groups.push(seen);
                    initial.push(arrangement);
                }
                // Enumerate every class's distinct arrangements (odometer
                // over the classes, each stepping through its permutations).
                let mut arrangements = initial;
                loop {
                    let values: Vec<i64> = srcs
                        .iter()
                        .map(|src| match *src {
                            Src::Mem(l) => c.mem[l],
                            Src::Fixed(t, r) => c.threads[t].regs[r],
                            Src::Member(ci, k, j) => groups[ci][arrangements[ci][k]][j],
                        })
                        .collect();
                    add(OutcomeKind::Final(values), weight);
                    // At a limit, each configuration lists only its own
                    // arrangement (the first).
                    since_check += 1;
                    if stopped.is_none() && since_check >= CHECK_EVERY {
                        since_check = 0;
                        stopped = check();
                    }
                    if stopped.is_some() {
                        break;
                    }
                    // The next combination: the first class that has a next
                    // arrangement steps, the ones before it start over.
                    let mut stepped = false;
                    for a in arrangements.iter_mut() {
                        if next_permutation(a) {
                            stepped = true;
                            break;
                        }
                    }
                    if !stepped {
                        break;
                    }
                }
            }
        }
    }
    // A class only fair cycles show counts one (a spinning end state is
    // also a cycle of spins: counted as the end configuration it is).
    for end in cycles {
        let kind = match end {
            End::Deadlock => OutcomeKind::Deadlock,
            End::Nontermination => OutcomeKind::Nontermination,
            End::Final => continue,
        };
        counts.entry(kind).or_insert(1);
    }
    let set = Outcomes {
        observables: observables.into_iter().map(|(_, n)| n).collect(),
        classes: counts
            .into_iter()
            .map(|(kind, executions)| OutcomeClass { kind, executions })
            .collect(),
    };
    (set, stopped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multinomials() {
        assert_eq!(multinomial([]), 1);
        assert_eq!(multinomial([3]), 1);
        assert_eq!(multinomial([1, 1, 1]), 6);
        assert_eq!(multinomial([2, 1]), 3);
        assert_eq!(multinomial([2, 2]), 6);
        assert_eq!(multinomial([1; 30]), u64::MAX);
        assert_eq!(multinomial([1; 20]), 2_432_902_008_176_640_000);
    }

    #[test]
    fn permutations_of_a_multiset_are_each_listed_once() {
        let mut v = vec![0, 0, 1, 2];
        let mut seen = vec![v.clone()];
        while next_permutation(&mut v) {
            seen.push(v.clone());
        }
        assert_eq!(seen.len(), 12);
        assert_eq!(v, [0, 0, 1, 2]);
        let mut dedup = seen.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup, seen);
    }

    #[test]
    fn runs_count_equal_neighbours() {
        assert_eq!(runs::<u8>(&[]), Vec::<usize>::new());
        assert_eq!(runs(&[1, 1, 2, 3, 3, 3]), [2, 1, 3]);
    }
}
