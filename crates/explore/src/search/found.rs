//! What an explorer found: per finding kind the first finding in search
//! order with its search key, and the merge of a worker's findings into
//! the merging thread's ([`Found::absorb`]), by key, so the answer does
//! not depend on which worker expanded which state.

use crate::search::outcomes;
use crate::state::answer::Finding;
use bc_syntax::FindingKind;
use std::collections::{BTreeMap, BTreeSet};

/// What an explorer found: per finding kind the first finding in its
/// search order and where it was found, the kinds each side saw, and what
/// the outcome set and the `sometimes` assertions need. The merging
/// thread's is the search's answer; each worker's is absorbed into it.
pub(crate) struct Found {
    pub(crate) findings: BTreeMap<FindingKind, Finding>,
    /// Per finding kind, where it was found in search order: (state
    /// number, 0 for the state itself or 1 + the choice index).
    pub(crate) keys: BTreeMap<FindingKind, (u32, u32)>,
    pub(crate) operational: BTreeSet<FindingKind>,
    pub(crate) judged: BTreeSet<FindingKind>,
    pub(crate) objectless: BTreeSet<FindingKind>,
    pub(crate) internal_errors: Vec<String>,
    /// Per assertion: a finished execution satisfied it (`sometimes`).
    pub(crate) sometimes_holds: Vec<bool>,
    /// Distinct executions that ended.
    pub(crate) executions: u64,
    /// The end configurations seen (when collecting outcomes).
    pub(crate) ends: rustc_hash::FxHashSet<outcomes::EndConfig>,
    /// The kinds fair cycles showed (when collecting outcomes).
    pub(crate) cycle_ends: BTreeSet<outcomes::End>,
}

impl Found {
    /// Nothing found yet, for a program with `asserts` assertions.
    pub(crate) fn new(asserts: usize) -> Found {
        Found {
            findings: BTreeMap::new(),
            keys: BTreeMap::new(),
            operational: BTreeSet::new(),
            judged: BTreeSet::new(),
            objectless: BTreeSet::new(),
            internal_errors: Vec::new(),
            sometimes_holds: vec![false; asserts],
            executions: 0,
            ends: Default::default(),
            cycle_ends: BTreeSet::new(),
        }
    }

    /// Takes in a worker's findings: for each kind, the one found first in
    /// search order (the smallest key) wins, so the answer does not depend
    /// on which worker expanded which state.
    pub(crate) fn absorb(&mut self, w: Found) {
        for (kind, f) in w.findings {
            let key = w.keys[&kind];
            if self.keys.get(&kind).is_none_or(|&k| key < k) {
                self.keys.insert(kind, key);
                self.findings.insert(kind, f);
            }
        }
        self.operational.extend(w.operational);
        self.judged.extend(w.judged);
        self.objectless.extend(w.objectless);
        self.internal_errors.extend(w.internal_errors);
        self.executions += w.executions;
        self.ends.extend(w.ends);
        for (mine, theirs) in self.sometimes_holds.iter_mut().zip(w.sometimes_holds) {
            *mine |= theirs;
        }
    }
}
